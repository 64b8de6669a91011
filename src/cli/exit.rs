//! How a run ends: what is said last, and the exit code, decided in [`code`] for
//! every command.

use std::process::ExitCode;

use super::output_args::OutputArgs;
use super::{Streams, stderr, stdout};
use crate::diagnostics::escape::printable;
use crate::diagnostics::{Findings, Severity};
use crate::error::Error;
use crate::output::{self, Format};

/// How a run ended.
pub enum Ended {
    /// clap refused the arguments, or printed --help or --version.
    Arguments(clap::Error),
    /// A command ran: `Err` is what stopped it, or what its findings or differences
    /// call for.
    Ran(Result<(), Error>),
}

/// The process's exit code; every run ends through here.
///
/// - 0: the command did its job and nothing fails the run (also --help, --version).
/// - 1: findings fail the run (rule errors, or warnings under --deny-warnings), or a
///   comparison (`diff`, `render --check`) found differences.
/// - 2: the command could not do its job: usage, I/O (a write to stdout or stderr
///   included), a file that does not parse; and under `render --check`, failing
///   findings of any kind, so that 1 there always means "differences".
///
/// A reader that closes stdout early (`| head`) does not change the code: the run
/// ends with the one it reached (see `StdStream`).
pub fn code(ended: &Ended) -> ExitCode {
    let code = match ended {
        Ended::Arguments(e) if !e.use_stderr() => 0,
        Ended::Arguments(_) => 2,
        Ended::Ran(Ok(())) => 0,
        Ended::Ran(Err(e)) => e.code(),
    };
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}

/// Whether findings fail the run, and how: `Err(Error::Findings)` with the code
/// [`code`] documents (2 for a file that does not parse, or under `render --check`,
/// `checking`; else 1). `consequence` says what was not done, e.g. "; nothing was
/// written".
pub fn verdict(
    findings: &Findings,
    args: &OutputArgs,
    consequence: &'static str,
    checking: bool,
) -> Result<(), Error> {
    // Under --deny-warnings every warning and error counts, whatever the configuration
    // file hid or graded info: the flag is CI's, the file may be a pull request's.
    let hidden = if args.deny_warnings {
        findings.hidden()
    } else {
        0
    };
    let warnings = findings.count(Severity::Warning) + hidden;
    if findings.errors() == 0 && !(args.deny_warnings && warnings > 0) {
        return Ok(());
    }
    let denied = if args.deny_warnings { warnings } else { 0 };
    Err(Error::Findings {
        errors: findings.errors() + denied,
        hidden: if hidden > 0 {
            findings.hidden_by_config()
        } else {
            Vec::new()
        },
        code: if findings.has_syntax_errors() || checking {
            2
        } else {
            1
        },
        consequence,
        quiet: args.format.is_machine_read(),
    })
}

/// Where a command's findings go, in which format: what an error that ends its run
/// is written as.
#[derive(Debug, Clone, Copy)]
pub struct Report {
    pub format: Format,
    /// Findings go to stderr, beside the command's product on stdout (render,
    /// detect, dockerfile); else they are the product, on stdout.
    pub on_stderr: bool,
}

/// Say how the run ended: clap's text (help on stdout, an error on stderr), or one
/// `error: …` line on stderr. A write that fails here ends the run as an I/O error.
///
/// An error that ends a run given a machine format is said in that format where its
/// reader looks for the report. JSON, SARIF, JUnit and GitLab write their error
/// document on stdout, beside the `error:` line for people on stderr (nothing more
/// on stdout when writing it is what failed); for a command whose report goes to
/// stderr the document takes that line's place there. GitHub writes an `::error`
/// annotation on stderr in place of the line.
pub fn tell(ended: Ended, io: &mut Streams<'_>, report: Option<Report>) -> Ended {
    let written = match &ended {
        Ended::Arguments(e) if e.use_stderr() => write!(io.err, "{}", e.render()).map_err(stderr),
        Ended::Arguments(e) => write!(io.out, "{}", e.render()).map_err(stdout),
        Ended::Ran(Ok(())) | Ended::Ran(Err(Error::Findings { quiet: true, .. })) => Ok(()),
        // Differences are an outcome, not a failure: their summary is the message.
        Ended::Ran(Err(Error::Differences { summary })) => {
            writeln!(io.err, "{}", printable(summary)).map_err(stderr)
        }
        Ended::Ran(Err(e)) => tell_error(e, io, report),
    };
    match written {
        Ok(()) => ended,
        Err(e) => Ended::Ran(Err(e)),
    }
}

/// An error that ended the run, as `report` says. Messages name paths and quote
/// values from the inputs: one line, escaped.
fn tell_error(e: &Error, io: &mut Streams<'_>, report: Option<Report>) -> Result<(), Error> {
    let message = e.to_string();
    let human_line = |err: &mut dyn std::io::Write| {
        writeln!(err, "error: {}", printable(&message)).map_err(stderr)
    };
    let Some(Report { format, on_stderr }) = report else {
        return human_line(io.err);
    };
    if format == Format::Github {
        return writeln!(
            io.err,
            "::error title=rdmagen::{}",
            output::github::escape_data(&message)
        )
        .map_err(stderr);
    }
    if on_stderr {
        return match output::error_document(io.err, format, &message) {
            Some(written) => written.map_err(stderr),
            None => human_line(io.err),
        };
    }
    let stdout_failed = matches!(e, Error::Io { path, .. } if path.as_os_str() == "<stdout>");
    if !stdout_failed && let Some(written) = output::error_document(io.out, format, &message) {
        written.map_err(stdout)?;
    }
    human_line(io.err)
}
