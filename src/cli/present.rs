//! How a command's findings or comparison reach the streams and become its verdict.

use super::output_args::OutputArgs;
use super::{Streams, exit, stderr, stdout};
use crate::diagnostics::Findings;
use crate::diagnostics::escape::printable;
use crate::diagnostics::source::Sources;
use crate::error::Error;
use crate::golden::Comparison;
use crate::output::comparison::Labels;
use crate::output::{self, Format};

/// For commands whose product is their findings (validate, lint, image-check):
/// findings on stdout, a human summary line (`what: 0 errors, ...`) on stderr, then
/// the verdict.
pub fn findings_as_product(
    io: &mut Streams<'_>,
    findings: &Findings,
    sources: &Sources,
    args: &OutputArgs,
    what: &str,
) -> Result<(), Error> {
    let color = args.color.colored(io.terminal.stdout);
    output::findings(io.out, findings, sources, args.format, color).map_err(stdout)?;
    if args.format == Format::Human {
        let mut summary = output::human::summary(findings);
        // What the configuration file hid counts under --deny-warnings: say so here,
        // where "0 warnings" would otherwise read as a clean run.
        if args.deny_warnings {
            for hidden in findings.hidden_by_config() {
                summary.push_str("; ");
                summary.push_str(&hidden);
            }
        }
        writeln!(io.notes(), "{what}: {}", printable(&summary)).map_err(stderr)?;
    }
    exit::verdict(findings, args, "", false)
}

/// For commands whose product is something else (render, detect, dockerfile):
/// findings on stderr.
pub fn findings_beside(
    io: &mut Streams<'_>,
    findings: &Findings,
    sources: &Sources,
    args: &OutputArgs,
) -> Result<(), Error> {
    let color = args.color.colored(io.terminal.stderr);
    output::findings(io.err, findings, sources, args.format, color).map_err(stderr)
}

/// Refuse, before any work, a format that cannot report differences (SARIF, JUnit,
/// GitLab): printing nothing, or only findings, would let differences pass unseen.
pub fn refuse_for_comparisons(args: &OutputArgs, command: &str) -> Result<(), Error> {
    if args.format.reports_comparisons() {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "--format {} reports findings, not differences: `{command}` prints differences as human, brief, json or github",
        args.format.name()
    )))
}

/// Print a comparison in the chosen format (the structural summary with --semantic or
/// on a terminal); differences become the run's outcome (exit 1).
pub fn comparison(
    io: &mut Streams<'_>,
    cmp: &Comparison,
    labels: &Labels<'_>,
    args: &OutputArgs,
    semantic: bool,
) -> Result<(), Error> {
    let semantic = semantic || io.terminal.stdout;
    let color = args.color.colored(io.terminal.stdout);
    output::comparison(io.out, cmp, labels, args.format, semantic, color).map_err(stdout)?;
    if cmp.is_clean() {
        writeln!(io.notes(), "{}", cmp.summary()).map_err(stderr)?;
        Ok(())
    } else {
        Err(Error::Differences {
            summary: cmp.summary(),
        })
    }
}
