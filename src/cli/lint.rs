//! `rdmagen lint`.

use std::path::PathBuf;

use clap::Args;

use super::Streams;
use super::output::{Format, OutputArgs, summary, write_findings};
use crate::check::lint;
use crate::error::Error;

#[derive(Debug, Args)]
pub struct LintArgs {
    /// PyTorchJob manifests: files, or directories walked for *.yaml and *.yml.
    #[arg(required = true, value_name = "MANIFEST")]
    pub manifests: Vec<PathBuf>,
    #[command(flatten)]
    pub report: OutputArgs,
}

pub fn run(args: &LintArgs, io: &mut Streams<'_>) -> Result<(), Error> {
    let report = lint::lint(&args.manifests)?;
    let color = args.report.colored(io.terminal.stdout);
    write_findings(
        io.out,
        &report.findings,
        &report.sources,
        args.report.format,
        color,
    );
    if args.report.format == Format::Human {
        let _ = writeln!(
            io.err,
            "{} PyTorchJob(s) in {} file(s) linted: {}",
            report.jobs,
            report.files,
            summary(&report.findings)
        );
    }
    super::verdict(&report.findings, &args.report, "")
}
