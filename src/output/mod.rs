//! Every output format, written once: findings and comparisons (`render --check`,
//! `diff`) go through the same emitter per format, as ruff's `message/*.rs` do.
//!
//! Emitters write to a `dyn Write` and return its errors: what to do with a failed
//! write (a closed pipe, a full disk) is the command line's decision, not theirs.
//! User text (messages, paths, golden lines) is escaped here, before any colour.

pub mod brief;
pub mod comparison;
pub mod github;
pub mod gitlab;
pub mod human;
pub mod json;
pub mod junit;
pub mod krm;
pub mod rule_page;
pub mod sarif;

use std::io::{self, Write};

use clap::ValueEnum;

use crate::diagnostics::Findings;
use crate::diagnostics::source::Sources;
use crate::golden::Comparison;
use comparison::Labels;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rustc-style text with the offending line.
    Human,
    /// One line per finding (or per changed file).
    Brief,
    /// One JSON document with every finding.
    Json,
    /// GitHub Actions annotations (`::error file=…,line=…::…`).
    Github,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers (findings only).
    Sarif,
    /// JUnit XML, one test case per file checked (findings only).
    Junit,
    /// GitLab Code Quality JSON (findings only).
    Gitlab,
    /// CSV of the data a command reads (nccl-log: every nccl-tests row); findings go to
    /// stderr, one line each. Other commands refuse it.
    Csv,
}

impl Format {
    /// Formats a program reads: no prose (summaries, "error: …") beside them.
    pub fn is_machine_read(self) -> bool {
        !matches!(self, Format::Human | Format::Brief)
    }

    /// Whether the format can report a comparison (`diff`, `render --check`). SARIF,
    /// JUnit and GitLab Code Quality describe findings of rules; a changed golden file
    /// is not one, and a report that left differences out would read as clean.
    pub fn reports_comparisons(self) -> bool {
        !matches!(
            self,
            Format::Sarif | Format::Junit | Format::Gitlab | Format::Csv
        )
    }

    /// The word `--format` takes for this format.
    pub fn name(self) -> String {
        self.to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_owned())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal, as NO_COLOR, CLICOLOR, CLICOLOR_FORCE and
    /// TERM=dumb say.
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour output going to a stream that is (or is not) a terminal.
    pub fn colored(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => auto_color(
                is_terminal,
                anstyle_query::no_color(),
                anstyle_query::clicolor_force(),
                anstyle_query::clicolor(),
                anstyle_query::term_supports_color(),
            ),
        }
    }
}

/// `--color auto` as clap's own output (anstream) decides it: NO_COLOR turns colour
/// off, CLICOLOR_FORCE on even into a pipe, CLICOLOR=0 off; otherwise a terminal gets
/// colour unless TERM is unset or `dumb` (CLICOLOR=1 overrides TERM).
fn auto_color(
    is_terminal: bool,
    no_color: bool,
    force: bool,
    clicolor: Option<bool>,
    term_supports_color: bool,
) -> bool {
    if no_color {
        false
    } else if force {
        true
    } else if clicolor == Some(false) {
        false
    } else {
        is_terminal && (term_supports_color || clicolor == Some(true))
    }
}

/// Write the findings in `format` (only human output is ever coloured): every format,
/// for every command, writes the same capped list ([`Findings::shown`]), so each says
/// "and N more" where findings were left out, and counts them all.
pub fn findings(
    w: &mut dyn Write,
    findings: &Findings,
    sources: &Sources,
    format: Format,
    color: bool,
) -> io::Result<()> {
    let findings = &findings.shown();
    match format {
        Format::Human => human::findings(w, findings, sources, color),
        Format::Brief => brief::findings(w, findings),
        Format::Json => json::findings(w, findings),
        Format::Github => github::findings(w, findings),
        Format::Sarif => sarif::findings(w, findings),
        Format::Junit => junit::findings(w, findings, sources),
        Format::Gitlab => gitlab::findings(w, findings),
        // The data is the document; the findings beside it are one line each.
        Format::Csv => brief::findings(w, findings),
    }
}

/// The document a machine format writes on stdout in place of its report when an
/// error ends the run, so that a program reading it finds the error rather than an
/// empty file or a report that reads as clean. Human, brief and GitHub output have
/// none: their errors are lines on stderr.
pub fn error_document(w: &mut dyn Write, format: Format, message: &str) -> Option<io::Result<()>> {
    Some(match format {
        Format::Json => json::error(w, message),
        Format::Sarif => sarif::error(w, message),
        Format::Junit => junit::error(w, message),
        Format::Gitlab => gitlab::error(w, message),
        Format::Human | Format::Brief | Format::Github | Format::Csv => return None,
    })
}

/// Write a comparison in `format`; `semantic` adds the structural summary to human
/// output.
pub fn comparison(
    w: &mut dyn Write,
    cmp: &Comparison,
    labels: &Labels<'_>,
    format: Format,
    semantic: bool,
    color: bool,
) -> io::Result<()> {
    match format {
        Format::Human => human::comparison(w, cmp, labels, semantic, color),
        Format::Brief => brief::comparison(w, cmp, labels),
        Format::Json => json::comparison(w, cmp, labels),
        Format::Github => github::comparison(w, cmp, labels),
        // The command line refuses these before comparing (`reports_comparisons`).
        Format::Sarif | Format::Junit | Format::Gitlab | Format::Csv => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("--format {} cannot report differences", format.name()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::auto_color;

    #[test]
    fn auto_colour_follows_the_terminal_and_the_conventional_variables() {
        // (terminal, NO_COLOR, CLICOLOR_FORCE, CLICOLOR, TERM supports colour) → colour
        let cases = [
            ((true, false, false, None, true), true),
            ((false, false, false, None, true), false),
            ((true, false, false, None, false), false), // TERM=dumb or unset
            ((true, false, false, Some(true), false), true), // CLICOLOR=1 beats TERM
            ((true, false, false, Some(false), true), false), // CLICOLOR=0
            ((false, false, true, None, false), true),  // CLICOLOR_FORCE into a pipe
            ((true, true, true, Some(true), true), false), // NO_COLOR wins
        ];
        for ((terminal, no, force, cli, term), want) in cases {
            assert_eq!(
                auto_color(terminal, no, force, cli, term),
                want,
                "{terminal} {no} {force} {cli:?} {term}"
            );
        }
    }
}
