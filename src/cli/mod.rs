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
mod krm;
mod lint;
mod man;
mod nccl_log;
mod output_args;
mod present;
mod render;
mod rule_args;
mod rules;
mod schema;
mod settings;
mod smoke_test;
mod std_stream;
mod validate;

use std::cell::Cell;
use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::error::Error;
use crate::output::Format;
use exit::Ended;
pub use settings::Settings;
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
    /// Print no summary or progress lines on stderr (`3 job(s) checked: ...`,
    /// `rendered to DIR: ...`, waiting for a lock); findings, errors, warnings and the
    /// exit status are the same.
    #[arg(short, long, global = true)]
    pub quiet: bool,
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
    /// Lint as a kustomize KRM function: read a ResourceList on stdin, write it back
    /// with a result per finding (exit 1 when one is an error).
    Krm(krm::KrmArgs),
    /// Compare two manifest files or directories, line by line and structurally.
    Diff(diff::DiffArgs),
    /// Write a Pool from what a node says (show_gids, ibstat, ibv_devinfo, rdma link, dpkg -l,
    /// nvidia-smi topo -m, lsmod).
    Detect(Box<detect::DetectArgs>),
    /// List the rule catalogue.
    Rules(rules::RulesArgs),
    /// Explain one rule: what it checks, why, and where the fact comes from.
    Explain(rules::ExplainArgs),
    /// Print the JSON Schema of an input kind (job, pool, inputs: both), of rendered PyTorchJobs, of what nccl-log --format json writes, or of the configuration file.
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

/// Whether stdout and stderr are terminals (false in tests), and which CI the run is
/// on: what [`main`] detects once, for [`Settings`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal {
    pub stdout: bool,
    pub stderr: bool,
    /// `GITHUB_ACTIONS=true`: the runner reads workflow commands from the output.
    pub github_actions: bool,
    /// `CI` set to anything but empty, `0`, `false`, `no` or `off` (CI services set
    /// `CI=true`; a user turning it off writes one of those): `render -o DIR` then
    /// compares rather than writes.
    pub ci: bool,
}

/// Whether `CI` says this is a CI run (see [`Terminal::ci`]).
fn ci_is_set() -> bool {
    std::env::var("CI").is_ok_and(|v| {
        let v = v.trim().to_ascii_lowercase();
        !matches!(v.as_str(), "" | "0" | "false" | "no" | "off")
    })
}

/// Parse `args`, run the command, print to the process's stdout/stderr; the exit code.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let terminal = Terminal {
        stdout: stdout.is_terminal(),
        stderr: stderr.is_terminal(),
        github_actions: std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true"),
        ci: ci_is_set(),
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
        quiet: false,
        sink: std::io::sink(),
    };
    let mut args = args.into_iter().peekable();
    let parsed = Cli::command()
        .bin_name(bin_name(args.peek()))
        .try_get_matches_from(args)
        .and_then(|matches| Ok((Cli::from_arg_matches(&matches)?, matches)));
    let inert = |command: &Command, format: Option<Format>| {
        let (out, err) = command.prose_streams(format);
        prose_out.set(terminal.github_actions && out);
        prose_err.set(terminal.github_actions && err);
    };
    let ended = match parsed {
        Ok((cli, matches)) => {
            // Until the configuration is read, the command line's format.
            let format = cli.command.output_args().map(|print| print.format);
            inert(&cli.command, format);
            crate::files::set_max_file_size(cli.max_file_size);
            io.quiet = cli.quiet;
            let globals = settings::Globals {
                config: cli.config.as_deref(),
                no_config: cli.no_config,
            };
            match Settings::load(&cli.command, globals, &matches, terminal) {
                Ok(settings) => {
                    let format = settings.format(&cli.command);
                    inert(&cli.command, format);
                    let ended = run_command(&cli, &settings, &mut io);
                    // What stdout holds goes before the verdict on stderr, as it would
                    // unbuffered, for a log that reads both. A failure here comes back
                    // from `finish` below and is told there.
                    let _ = io.out.flush();
                    exit::tell(Ended::Ran(ended), &mut io, cli.command.report(format))
                }
                Err(unresolved) => {
                    let report = cli.command.report(format);
                    let ended = match unresolved {
                        settings::Unresolved::Io(file, e) => Err(Error::io(&file, e)),
                        settings::Unresolved::Invalid(invalid) => {
                            config::present_invalid(&invalid, format, &mut io)
                        }
                    };
                    exit::tell(Ended::Ran(ended), &mut io, report)
                }
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
                quiet: false,
                sink: std::io::sink(),
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

/// The name rdmagen goes by when installed as a kubectl plugin: kubectl runs the
/// executable `kubectl-NAME` on PATH for `kubectl NAME ...`, with the words after NAME
/// as its arguments (k8s.io/kubectl@v0.34.3 pkg/cmd/cmd.go:259-277
/// `HandlePluginCommand`, pkg/cmd/plugin/plugin.go:63 the `kubectl` prefix).
pub const KUBECTL_PLUGIN: &str = "kubectl-rdmagen";

/// What usage lines and help call the program: `kubectl rdmagen` when it was run as
/// [`KUBECTL_PLUGIN`] (by kubectl or by that name), else `rdmagen`.
fn bin_name(argv0: Option<&OsString>) -> &'static str {
    let stem = argv0.and_then(|a| Path::new(a).file_stem());
    match stem.is_some_and(|s| s == KUBECTL_PLUGIN) {
        true => "kubectl rdmagen",
        false => "rdmagen",
    }
}

impl Command {
    /// Whether stdout and stderr carry text for people, which on GitHub Actions is made
    /// inert ([`ci_log`]). A stream is data when it carries a manifest, a Dockerfile,
    /// a schema, a script or a machine format: those writers escape workflow commands
    /// as the same data, and `--format github` writes commands on purpose (their text
    /// percent-encoded).
    fn prose_streams(&self, format: Option<Format>) -> (bool, bool) {
        let machine = format.is_some_and(Format::is_machine_read);
        let stdout_is_data = machine
            || match self {
                // Without -o the product is YAML; with it, stdout says what was done.
                Command::Render(a) => a.output.is_none(),
                Command::SmokeTest(a) => a.output.is_none(),
                // A post-renderer's and a KRM function's stdout is what the
                // renderer reads back.
                Command::Lint(a) => a.post_renderer,
                Command::Krm(_)
                | Command::Detect(_)
                | Command::Dockerfile(_)
                | Command::Schema(_)
                | Command::Completions(_)
                | Command::Man(_) => true,
                _ => false,
            };
        // An error that ends a run goes to stderr as an `::error` annotation with
        // --format github, and as the report's own document beside a product.
        let stderr_is_data = machine
            && (format == Some(Format::Github) || self.report(format).is_some_and(|r| r.on_stderr));
        (!stdout_is_data, !stderr_is_data)
    }

    /// How and where a command reports its findings in `format`, for the commands
    /// that take one.
    fn report(&self, format: Option<Format>) -> Option<exit::Report> {
        let on_stderr = match self {
            Command::Lint(a) => a.post_renderer,
            Command::Render(_)
            | Command::SmokeTest(_)
            | Command::Detect(_)
            | Command::Dockerfile(_)
            | Command::Krm(_) => true,
            _ => false,
        };
        format
            .filter(|_| self.takes_format())
            .map(|format| exit::Report { format, on_stderr })
    }

    /// Whether the command prints findings in a format (`--format`).
    fn takes_format(&self) -> bool {
        self.output_args().is_some()
    }

    /// The output options as given on the command line.
    fn output_args(&self) -> Option<&output_args::OutputArgs> {
        self.shared().print
    }

    /// The rule options of the commands that run rules, as given.
    fn rule_args(&self) -> Option<&rule_args::RuleArgs> {
        self.shared().rules
    }

    /// `--pools` as given (none for the commands without it).
    fn pools(&self) -> &[PathBuf] {
        self.shared().pools
    }

    /// The options several commands share, as given: one match, so that a command
    /// gaining `--format` or a rule flag is wired in one line.
    fn shared(&self) -> Shared<'_> {
        let none = Shared::default();
        match self {
            Command::Render(a) => Shared::new(&a.print, Some(&a.rules), &a.pools),
            Command::Validate(a) => Shared::new(&a.print, Some(&a.rules), &a.pools),
            Command::SmokeTest(a) => Shared::new(&a.print, Some(&a.rules), &a.pools),
            Command::NcclLog(a) => Shared::new(&a.print, Some(&a.rules), &a.pools),
            Command::Lint(a) => Shared::new(&a.print, Some(&a.rules), &[]),
            Command::Krm(a) => Shared::new(&a.print, Some(&a.rules), &[]),
            Command::Detect(a) => Shared::new(&a.print, Some(&a.rules), &[]),
            Command::Dockerfile(a) => Shared::new(&a.print, Some(&a.rules), &[]),
            Command::ImageCheck(a) => Shared::new(&a.print, Some(&a.rules), &[]),
            Command::Diff(a) => Shared::new(&a.print, None, &[]),
            Command::Config(a) => Shared {
                rules: Some(&a.rules),
                ..none
            },
            Command::Rules(_)
            | Command::Explain(_)
            | Command::Schema(_)
            | Command::Completions(_)
            | Command::Man(_) => none,
        }
    }

    /// Whether the configured pools are this command's default: nccl-log judges a
    /// pool only with --pool, and then looks for it there.
    fn reads_configured_pools(&self) -> bool {
        match self {
            Command::Render(_) | Command::Validate(_) | Command::SmokeTest(_) => true,
            Command::NcclLog(a) => a.pool.is_some(),
            _ => false,
        }
    }
}

/// What [`Command::shared`] finds in a command's arguments.
#[derive(Default, Clone, Copy)]
struct Shared<'a> {
    print: Option<&'a output_args::OutputArgs>,
    rules: Option<&'a rule_args::RuleArgs>,
    pools: &'a [PathBuf],
}

impl<'a> Shared<'a> {
    fn new(
        print: &'a output_args::OutputArgs,
        rules: Option<&'a rule_args::RuleArgs>,
        pools: &'a [PathBuf],
    ) -> Self {
        Shared {
            print: Some(print),
            rules,
            pools,
        }
    }
}

/// Run the parsed command.
fn run_command(cli: &Cli, settings: &Settings, streams: &mut Streams<'_>) -> Result<(), Error> {
    let s = settings;
    if s.print.format == Format::Csv && !matches!(cli.command, Command::NcclLog(_)) {
        return Err(Error::Usage(
            "--format csv writes nccl-log's table; this command reports findings: choose another format".to_owned(),
        ));
    }
    match &cli.command {
        Command::Render(args) => render::run(args, s, streams),
        Command::Validate(args) => validate::run(args, s, streams),
        Command::SmokeTest(args) => smoke_test::run(args, s, streams),
        Command::Lint(args) => lint::run(args, s, streams),
        Command::Krm(args) => krm::run(args, s, streams),
        Command::Diff(args) => diff::run(args, s, streams),
        Command::Detect(args) => detect::run(args, s, streams),
        Command::Rules(args) => rules::list(args, streams),
        Command::Explain(args) => rules::explain(args, streams),
        Command::Schema(args) => schema::run(args, streams),
        Command::Dockerfile(args) => dockerfile::run(args, s, streams),
        Command::ImageCheck(args) => dockerfile::image_check(args, s, streams),
        Command::NcclLog(args) => nccl_log::run(args, s, streams),
        Command::Config(_) => config::show(s, streams),
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
    /// `--quiet`: summary and progress lines go nowhere.
    pub quiet: bool,
    sink: std::io::Sink,
}

impl Streams<'_> {
    /// Where a summary or progress line goes: stderr, or nowhere under `--quiet`.
    /// Findings, errors and warnings are written to `err` itself.
    pub fn notes(&mut self) -> &mut dyn Write {
        if self.quiet {
            &mut self.sink
        } else {
            &mut *self.err
        }
    }
}

/// A write to stdout that failed, as the error that ends the command.
fn stdout(e: std::io::Error) -> Error {
    Error::io(Path::new("<stdout>"), e)
}

/// A write to stderr that failed, as the error that ends the command.
fn stderr(e: std::io::Error) -> Error {
    Error::io(Path::new("<stderr>"), e)
}
