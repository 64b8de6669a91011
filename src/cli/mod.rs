//! The command line: argument definitions and the one place that writes to the
//! terminal. Library code returns data; these modules print it.

mod ci_log;
mod completions;
mod config;
mod detect;
mod diff;
mod dockerfile;
mod exit;
mod input_args;
mod lint;
mod man;
mod nccl_log;
mod output_args;
mod present;
mod render;
mod rule_args;
mod rules;
mod schema;
mod smoke_test;
mod std_stream;
mod validate;

use std::cell::Cell;
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::error::Error;
use crate::output::Format;
use exit::Ended;
use std_stream::StdStream;

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
    /// The configuration file; default: .rdmagen.yaml in the working directory or the
    /// nearest directory above it, up to the repository's root.
    #[arg(
        long,
        global = true,
        value_name = "FILE",
        help_heading = "Configuration"
    )]
    pub config: Option<std::path::PathBuf>,
    /// Read no configuration file.
    #[arg(
        long,
        global = true,
        conflicts_with = "config",
        help_heading = "Configuration"
    )]
    pub no_config: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render Jobs into PyTorchJob manifests (stdout, or one directory per job with -o).
    Render(render::RenderArgs),
    /// Load, resolve, render and verify Jobs without writing anything; print every finding.
    Validate(validate::ValidateArgs),
    /// Render a job that tests the network of a pool (an NCCL all-reduce sweep or
    /// ib_write_bw) with the pod shape of a real job on it, plus the ConfigMap holding
    /// its script.
    SmokeTest(smoke_test::SmokeTestArgs),
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
    /// Print the JSON Schema of an input kind (job, pool, inputs: both) or of rendered PyTorchJobs.
    Schema(schema::SchemaArgs),
    /// Print a Dockerfile snippet that installs and verifies the RDMA user space.
    Dockerfile(dockerfile::DockerfileArgs),
    /// Check Dockerfiles (and a captured dpkg -l) for missing RDMA packages and baked-in NCCL variables.
    ImageCheck(dockerfile::ImageCheckArgs),
    /// Say whether a run used RDMA, from its NCCL_DEBUG logs, nccl-tests or perftest output.
    NcclLog(nccl_log::NcclLogArgs),
    /// Print the configuration in effect (.rdmagen.yaml and rule flags), and where each value comes from.
    Config(config::ConfigArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Print the manual page, or write every page into a directory.
    Man(man::ManArgs),
}

/// Whether stdout and stderr are terminals (false in tests), and whether the run is
/// on GitHub Actions.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal {
    pub stdout: bool,
    pub stderr: bool,
    /// `GITHUB_ACTIONS=true`: the runner reads workflow commands from the output.
    pub github_actions: bool,
}

/// Parse `args`, run the command, print to the process's stdout/stderr; the exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let terminal = Terminal {
        stdout: stdout.is_terminal(),
        stderr: stderr.is_terminal(),
        github_actions: std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
    };
    // A terminal sees each line as it is written; a pipe or file gets 64 KiB blocks,
    // not one write(2) a line (half the time of a 50 MB diff went to those calls).
    // `run` flushes it before the exit code is told, so nothing printed is lost.
    let mut lock = stdout.lock();
    let mut blocks;
    let out: &mut dyn Write = if terminal.stdout {
        &mut lock
    } else {
        blocks = std::io::BufWriter::with_capacity(1 << 16, lock);
        &mut blocks
    };
    run(args, out, &mut stderr.lock(), terminal)
}

/// Like [`main`], writing to the given streams (tests run the CLI in-process so).
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminal: Terminal,
) -> ExitCode {
    let stdout_gone = Cell::new(false);
    let mut std_out = StdStream::stdout(out, &stdout_gone);
    let mut std_err = StdStream::stderr(err, &stdout_gone);
    // Until the command is known, both streams carry prose (clap's messages).
    let prose_out = Cell::new(terminal.github_actions);
    let prose_err = Cell::new(terminal.github_actions);
    let mut out = ci_log::Inert::new(&mut std_out, &prose_out);
    let mut err = ci_log::Inert::new(&mut std_err, &prose_err);
    let mut io = Streams {
        out: &mut out,
        err: &mut err,
        terminal,
    };
    let parsed = Cli::command()
        .try_get_matches_from(args)
        .and_then(|matches| Ok((Cli::from_arg_matches(&matches)?, matches)));
    let inert = |command: &Command| {
        let (out, err) = command.prose_streams();
        prose_out.set(terminal.github_actions && out);
        prose_err.set(terminal.github_actions && err);
    };
    let ended = match parsed {
        Ok((mut cli, matches)) => {
            inert(&cli.command);
            match configure(&mut cli, &matches, &mut io) {
                Ok(()) => {
                    // The configuration may have changed the format.
                    inert(&cli.command);
                    let ended = run_command(&cli, &mut io);
                    // What stdout holds goes before the verdict on stderr, as it would
                    // unbuffered, for a log that reads both. A failure here comes back
                    // from `finish` below and is told there.
                    let _ = io.out.flush();
                    exit::tell(Ended::Ran(ended), &mut io, cli.command.report())
                }
                Err(ended) => ended,
            }
        }
        Err(e) => exit::tell(Ended::Arguments(e), &mut io, None),
    };
    let ended = match out.finish() {
        Ok(()) => ended,
        Err(e) => {
            let mut io = Streams {
                out: &mut out,
                err: &mut err,
                terminal,
            };
            exit::tell(Ended::Ran(Err(stdout(e))), &mut io, None)
        }
    };
    let ended = match err.finish() {
        Ok(()) => ended,
        Err(e) => Ended::Ran(Err(stderr(e))),
    };
    exit::code(&ended)
}

/// Read the configuration file and fill in what it gives and the command line does
/// not: rule levels, `--format`, `--pools`, `-o`. `-o -` means stdout, over a
/// configured output directory.
fn configure(cli: &mut Cli, matches: &ArgMatches, io: &mut Streams<'_>) -> Result<(), Ended> {
    crate::files::set_max_file_size(cli.max_file_size);
    // Commands that run no rules and print no findings (rules, schema, man, ...) read
    // no configuration: a broken one must not stop them.
    let runs_no_rules = matches!(&cli.command, Command::Detect(a) if a.print_commands);
    if runs_no_rules || (cli.command.print_mut().is_none() && cli.command.rules_mut().is_none()) {
        return Ok(());
    }
    let choice = match (&cli.config, cli.no_config) {
        (_, true) => config::Choice::None,
        (Some(file), _) => config::Choice::Named(file),
        (None, false) => config::Choice::Search,
    };
    let loaded = match config::load(choice) {
        Ok(loaded) => loaded,
        Err((file, e)) => {
            let ended = Ended::Ran(Err(Error::io(&file, e)));
            return Err(exit::tell(ended, io, cli.command.report()));
        }
    };
    let config = match loaded {
        Ok(config) => config,
        Err(invalid) => {
            let shown = config::present_invalid(&invalid, cli.command.format(), io);
            return Err(exit::tell(Ended::Ran(shown), io, cli.command.report()));
        }
    };
    let Some((_, sub)) = matches.subcommand() else {
        return Ok(());
    };
    // Whether the command has argument `id` and it was given on the command line.
    let given = |id: &str| {
        sub.try_contains_id(id).unwrap_or(false)
            && sub.value_source(id) == Some(ValueSource::CommandLine)
    };
    if let Some(rules) = cli.command.rules_mut() {
        rules.config = config.policy();
    }
    let pools = config.pools.as_ref().filter(|_| !given("pools"));
    match &mut cli.command {
        Command::Render(args) => {
            if let Some(pools) = pools {
                args.pools = pools.value.clone();
            }
            // The configured output is where --check, --bless and --write work; a
            // bare render is a preview and prints, whatever the file says (a
            // configuration found in a parent directory once turned it into a write).
            let golden_mode = args.check || args.bless || args.write;
            match (&config.output, given("output")) {
                (_, true) if args.output.as_deref() == Some(Path::new("-")) => args.output = None,
                (Some(output), false) if golden_mode => args.output = Some(output.value.clone()),
                _ => {}
            }
        }
        Command::Validate(args) => {
            if let Some(pools) = pools {
                args.pools = pools.value.clone();
            }
        }
        Command::SmokeTest(args) => {
            if let Some(pools) = pools {
                args.pools = pools.value.clone();
            }
        }
        // The configured pools are where --pool looks; without --pool, nccl-log
        // judges no pool.
        Command::NcclLog(args) if args.pool.is_some() => {
            if let Some(pools) = pools {
                args.pools = pools.value.clone();
            }
        }
        Command::Config(args) => args.config = Some(config.clone()),
        _ => {}
    }
    // The configured format is the default for findings. A comparison cannot be
    // SARIF, JUnit or GitLab (they have no room for differences), so there the
    // default stays human rather than refusing the run; a flag still refuses.
    let compares = match &cli.command {
        Command::Diff(_) => true,
        Command::Render(args) => args.output.is_some() && args.compares(),
        _ => false,
    };
    if let Some(format) = &config.format
        && !given("format")
        && (format.value.reports_comparisons() || !compares)
        && let Some(print) = cli.command.print_mut()
    {
        print.format = format.value;
    }
    Ok(())
}

impl Command {
    /// Whether stdout and stderr carry text for people, which on GitHub Actions is made
    /// inert ([`ci_log`]). A stream is data when it carries a manifest, a Dockerfile,
    /// a schema, a script or a machine format: those writers escape workflow commands
    /// as the same data, and `--format github` writes commands on purpose (their text
    /// percent-encoded).
    fn prose_streams(&self) -> (bool, bool) {
        let machine = self.format().is_some_and(Format::is_machine_read);
        let stdout_is_data = machine
            || match self {
                // Without -o the product is YAML; with it, stdout says what was done.
                Command::Render(a) => a.output.is_none(),
                Command::SmokeTest(a) => a.output.is_none(),
                Command::Detect(_)
                | Command::Dockerfile(_)
                | Command::Schema(_)
                | Command::Completions(_)
                | Command::Man(_) => true,
                _ => false,
            };
        // An error that ends a run goes to stderr as an `::error` annotation with
        // --format github, and as the report's own document beside a product.
        let stderr_is_data = machine
            && (self.format() == Some(Format::Github)
                || self.report().is_some_and(|r| r.on_stderr));
        (!stdout_is_data, !stderr_is_data)
    }

    /// How and where a command reports its findings, for the commands that take a
    /// format.
    fn report(&self) -> Option<exit::Report> {
        let on_stderr = matches!(
            self,
            Command::Render(_)
                | Command::SmokeTest(_)
                | Command::Detect(_)
                | Command::Dockerfile(_)
        );
        self.format()
            .map(|format| exit::Report { format, on_stderr })
    }

    /// The findings format a command was given, for the commands that take one.
    fn format(&self) -> Option<Format> {
        match self {
            Command::Render(a) => Some(a.print.format),
            Command::Validate(a) => Some(a.print.format),
            Command::SmokeTest(a) => Some(a.print.format),
            Command::Lint(a) => Some(a.print.format),
            Command::Diff(a) => Some(a.print.format),
            Command::Detect(a) => Some(a.print.format),
            Command::Dockerfile(a) => Some(a.print.format),
            Command::ImageCheck(a) => Some(a.print.format),
            Command::NcclLog(a) => Some(a.print.format),
            _ => None,
        }
    }

    fn print_mut(&mut self) -> Option<&mut output_args::OutputArgs> {
        match self {
            Command::Render(a) => Some(&mut a.print),
            Command::Validate(a) => Some(&mut a.print),
            Command::SmokeTest(a) => Some(&mut a.print),
            Command::Lint(a) => Some(&mut a.print),
            Command::Diff(a) => Some(&mut a.print),
            Command::Detect(a) => Some(&mut a.print),
            Command::Dockerfile(a) => Some(&mut a.print),
            Command::ImageCheck(a) => Some(&mut a.print),
            Command::NcclLog(a) => Some(&mut a.print),
            _ => None,
        }
    }

    /// The rule options of the commands that run rules.
    fn rules_mut(&mut self) -> Option<&mut rule_args::RuleArgs> {
        match self {
            Command::Render(a) => Some(&mut a.rules),
            Command::Validate(a) => Some(&mut a.rules),
            Command::SmokeTest(a) => Some(&mut a.rules),
            Command::Lint(a) => Some(&mut a.rules),
            Command::Detect(a) => Some(&mut a.rules),
            Command::Dockerfile(a) => Some(&mut a.rules),
            Command::ImageCheck(a) => Some(&mut a.rules),
            Command::NcclLog(a) => Some(&mut a.rules),
            Command::Config(a) => Some(&mut a.rules),
            _ => None,
        }
    }
}

/// Run the parsed command.
fn run_command(cli: &Cli, streams: &mut Streams<'_>) -> Result<(), Error> {
    match &cli.command {
        Command::Render(args) => render::run(args, streams),
        Command::Validate(args) => validate::run(args, streams),
        Command::SmokeTest(args) => smoke_test::run(args, streams),
        Command::Lint(args) => lint::run(args, streams),
        Command::Diff(args) => diff::run(args, streams),
        Command::Detect(args) => detect::run(args, streams),
        Command::Rules(args) => rules::list(args, streams),
        Command::Explain(args) => rules::explain(args, streams),
        Command::Schema(args) => schema::run(args, streams),
        Command::Dockerfile(args) => dockerfile::run(args, streams),
        Command::ImageCheck(args) => dockerfile::image_check(args, streams),
        Command::NcclLog(args) => nccl_log::run(args, streams),
        Command::Config(args) => config::show(args, streams),
        Command::Completions(args) => completions::run(args, streams),
        Command::Man(args) => man::run(args, streams),
    }
}

/// Where a command writes. Writes return their errors; a reader that has gone is
/// not one (see [`StdStream`]).
pub struct Streams<'a> {
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
    pub terminal: Terminal,
}

/// A write to stdout that failed, as the error that ends the command.
fn stdout(e: std::io::Error) -> Error {
    Error::io(Path::new("<stdout>"), e)
}

/// A write to stderr that failed, as the error that ends the command.
fn stderr(e: std::io::Error) -> Error {
    Error::io(Path::new("<stderr>"), e)
}
