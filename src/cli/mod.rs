//! The command line: argument definitions and the one place that writes to the terminal.

mod render;

use std::ffi::OsString;
use std::io::Write;

use clap::{Parser, Subcommand};

use crate::check::report;
use crate::error::Error;
use crate::pipeline::Outcome;

/// Turns job + pool descriptions into validated PyTorchJob YAML for multi-node GPU
/// training over RDMA (RoCE / InfiniBand).
///
/// Exit codes: 0 success; 1 inputs are invalid (rule errors); 2 usage, I/O or YAML
/// syntax errors.
#[derive(Debug, Parser)]
#[command(name = "rdmagen", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render Jobs into PyTorchJob manifests (stdout, or one directory per job with -o).
    Render(render::RenderArgs),
}

/// Parse `args`, run the command, print to the process's stdout/stderr, return the exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run(args, &mut stdout.lock(), &mut stderr.lock())
}

/// Like [`main`], writing to the given streams (used by tests).
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = write!(err, "{}", e.render());
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let result = match cli.command {
        Command::Render(args) => render::run(&args, out, err),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "error: {e}");
            e.code()
        }
    }
}

/// Print every finding to stderr, then turn errors among them into the run's error.
fn report_findings(outcome: &Outcome, err: &mut dyn Write) -> Result<(), Error> {
    for finding in outcome.findings.iter() {
        let _ = writeln!(err, "{}", report::human(finding, &outcome.sources));
    }
    match outcome.failure() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
