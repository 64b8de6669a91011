//! The command line: argument definitions and the one place that writes to the
//! terminal. Library code returns data; these modules print it.

mod detect;
mod diff;
mod diff_output;
mod dockerfile;
mod lint;
mod output;
mod render;
mod rules;
mod schema;
mod validate;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};

use clap::{Parser, Subcommand};

use crate::diagnostics::Findings;
use crate::diagnostics::escape::printable;
use crate::error::Error;

/// Turns job + pool descriptions into validated PyTorchJob YAML for multi-node GPU
/// training over RDMA (RoCE / InfiniBand), explains every decision, and checks
/// existing manifests.
///
/// Exit codes: 0 success; 1 findings fail the run (rule errors, or warnings with
/// --deny-warnings), or `render --check` / `diff` found differences; 2 usage, I/O or
/// YAML syntax errors, and input errors under `render --check`.
#[derive(Debug, Parser)]
#[command(name = "rdmagen", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// The largest file rdmagen reads (inputs, templates, golden files, captures), in
    /// bytes; a larger one is an error, never a partial read.
    #[arg(long, global = true, value_name = "BYTES", default_value_t = crate::files::DEFAULT_MAX_FILE_SIZE)]
    pub max_file_size: u64,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render Jobs into PyTorchJob manifests (stdout, or one directory per job with -o).
    Render(render::RenderArgs),
    /// Load, resolve, render and verify Jobs without writing anything; print every finding.
    Validate(validate::ValidateArgs),
    /// Check existing PyTorchJob manifests against every rule a manifest alone can show.
    Lint(lint::LintArgs),
    /// Compare two manifest files or directories, line by line and structurally.
    Diff(diff::DiffArgs),
    /// Write a Pool from what a node says (show_gids, ibstat, ibv_devinfo, rdma link, dpkg -l).
    Detect(detect::DetectArgs),
    /// List the rule catalogue.
    Rules(rules::RulesArgs),
    /// Explain one rule: what it checks, why, and where the fact comes from.
    Explain(rules::ExplainArgs),
    /// Print the JSON Schema of an input kind (job, pool) or of rendered PyTorchJobs.
    Schema(schema::SchemaArgs),
    /// Print a Dockerfile snippet that installs and verifies the RDMA user space.
    Dockerfile(dockerfile::DockerfileArgs),
    /// Check Dockerfiles (and a captured dpkg -l) for missing RDMA packages and baked-in NCCL variables.
    ImageCheck(dockerfile::ImageCheckArgs),
}

/// Whether stdout and stderr are terminals (false in tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal {
    pub stdout: bool,
    pub stderr: bool,
}

/// Parse `args`, run the command, print to the process's stdout/stderr, return the exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> i32 {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let terminal = Terminal {
        stdout: stdout.is_terminal(),
        stderr: stderr.is_terminal(),
    };
    run(args, &mut stdout.lock(), &mut stderr.lock(), terminal)
}

/// Like [`main`], writing to the given streams.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminal: Terminal,
) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let rendered = e.render();
            if e.use_stderr() {
                let _ = write!(err, "{rendered}");
                return 2;
            }
            let _ = write!(out, "{rendered}");
            return 0;
        }
    };
    crate::files::set_max_file_size(cli.max_file_size);
    let paused = pause_workflow_commands(&cli.command, err);
    let code = run_command(&cli, &mut Streams { out, err, terminal });
    if let Some(token) = paused {
        // Everything printed goes before the runner reads commands again.
        let _ = out.flush();
        let _ = writeln!(err, "::{token}::");
    }
    code
}

/// GitHub Actions runs the workflow commands it finds in a step's output: `::cmd::`
/// at the start of a line (after any spaces) and the older `##[cmd]` anywhere. What
/// rdmagen prints quotes the repository (a golden file's lines in a diff, file names,
/// values), which escaping control characters alone cannot make inert. So on Actions
/// (`GITHUB_ACTIONS=true`) the run's output is framed by `::stop-commands::TOKEN` and
/// `::TOKEN::`, GitHub's own way to print untrusted text, on stderr (never a data
/// stream), with a token nobody can guess. `--format github` is left alone: its
/// annotations are meant to be read, and their text is percent-encoded.
fn pause_workflow_commands(command: &Command, err: &mut dyn Write) -> Option<String> {
    use std::hash::{BuildHasher, Hasher};
    let on_actions = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    if !on_actions || command.format() == Some(output::Format::Github) {
        return None;
    }
    // RandomState is keyed from the OS's random source, once per process.
    let random = std::collections::hash_map::RandomState::new();
    let token: String = (0..2u64)
        .map(|i| {
            let mut h = random.build_hasher();
            h.write_u64(i);
            format!("{:016x}", h.finish())
        })
        .collect();
    writeln!(err, "::stop-commands::{token}").ok()?;
    Some(token)
}

impl Command {
    /// The findings format a command was given, for the commands that take one.
    fn format(&self) -> Option<output::Format> {
        match self {
            Command::Render(a) => Some(a.report.format),
            Command::Validate(a) => Some(a.report.format),
            Command::Lint(a) => Some(a.report.format),
            Command::Diff(a) => Some(a.report.format),
            Command::Detect(a) => Some(a.report.format),
            Command::Dockerfile(a) => Some(a.report.format),
            Command::ImageCheck(a) => Some(a.report.format),
            Command::Rules(_) | Command::Explain(_) | Command::Schema(_) => None,
        }
    }
}

/// Run the parsed command; its exit code.
fn run_command(cli: &Cli, streams: &mut Streams<'_>) -> i32 {
    let result = match &cli.command {
        Command::Render(args) => render::run(args, streams),
        Command::Validate(args) => validate::run(args, streams),
        Command::Lint(args) => lint::run(args, streams),
        Command::Diff(args) => diff::run(args, streams),
        Command::Detect(args) => detect::run(args, streams),
        Command::Rules(args) => rules::list(args, streams),
        Command::Explain(args) => rules::explain(args, streams),
        Command::Schema(args) => schema::run(args, streams),
        Command::Dockerfile(args) => dockerfile::run(args, streams),
        Command::ImageCheck(args) => dockerfile::image_check(args, streams),
    };
    match result {
        Ok(()) => 0,
        // Differences are an outcome, not a failure: their summary is the message.
        Err(Error::Differences { summary }) => {
            let _ = writeln!(streams.err, "{}", printable(&summary));
            1
        }
        Err(e @ Error::Findings { quiet: true, .. }) => e.code(),
        // Messages name paths and quote values from the inputs: one line, escaped.
        Err(e) => {
            let _ = writeln!(streams.err, "error: {}", printable(&e.to_string()));
            e.code()
        }
    }
}

/// Where a command writes.
pub struct Streams<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    pub terminal: Terminal,
}

/// For commands whose product is their findings (validate, lint, image-check):
/// findings on stdout, a human summary line (`what: 0 errors, ...`) on stderr, then
/// the verdict.
fn report_findings(
    io: &mut Streams<'_>,
    findings: &Findings,
    sources: &crate::diagnostics::source::Sources,
    args: &output::OutputArgs,
    what: &str,
) -> Result<(), Error> {
    let color = args.colored(io.terminal.stdout);
    output::write_findings(io.out, findings, sources, args.format, color);
    if args.format == output::Format::Human {
        let _ = writeln!(io.err, "{what}: {}", output::summary(findings));
    }
    verdict(findings, args, "")
}

/// The error findings call for under the output options, if any.
fn verdict(
    findings: &Findings,
    output: &output::OutputArgs,
    consequence: &'static str,
) -> Result<(), Error> {
    verdict_with(findings, output, consequence, 1)
}

/// Like [`verdict`], with the exit code for failing findings that are not syntax errors.
fn verdict_with(
    findings: &Findings,
    output: &output::OutputArgs,
    consequence: &'static str,
    code: i32,
) -> Result<(), Error> {
    if !output.failed(findings) {
        return Ok(());
    }
    let warnings = if output.deny_warnings {
        findings.count(crate::diagnostics::Severity::Warning)
    } else {
        0
    };
    Err(Error::Findings {
        errors: findings.errors() + warnings,
        code: if findings.has_syntax_errors() {
            2
        } else {
            code
        },
        consequence,
        quiet: matches!(output.format, output::Format::Json | output::Format::Github),
    })
}
