//! What a run reads besides a command's own arguments, resolved once (ripgrep's
//! `HiArgs`, crates/core/flags/hiargs.rs): the command line, `.rdmagen.yaml` and the
//! environment (terminals, `GITHUB_ACTIONS`, `CI`) become one [`Settings`] before the
//! command runs, and no command reads a flag, the file or the environment again.
//!
//! Precedence, for every setting: a flag given on the command line, then the
//! configuration file, then the built-in default.
//!
//! | setting       | flag                                   | file          | default              |
//! |---------------|----------------------------------------|---------------|----------------------|
//! | findings format | `--format`                           | `format`      | human                |
//! | pools         | `--pools`                              | `pools`       | the inputs' own      |
//! | render's DIR  | `-o DIR` (`-o -`: stdout)              | `output`, only with --check, --bless, --write | stdout |
//! | rule levels   | `--disable`, `--severity`              | `rules`, `overrides` | the catalogue's |
//! | floor         | `--min-severity`                       | `minSeverity` | info                 |
//!
//! A configured format that cannot show differences (SARIF, JUnit, GitLab) is not
//! the default of a comparison (`diff`, `render --check`): there it stays human
//! rather than refusing the run; the flag still refuses.

use std::path::{Path, PathBuf};

use clap::ArgMatches;
use clap::parser::ValueSource;

use super::config::{self, Config};
use super::output_args::OutputArgs;
use super::rule_args::RuleArgs;
use super::{Command, Terminal};
use crate::diagnostics::Policy;
use crate::error::Error;
use crate::output::Format;

/// The resolved value every command reads.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The streams' terminals and the CI the run is on, detected once in `main`.
    pub terminal: Terminal,
    /// The configuration file read (none for the commands that run no rules).
    pub config: Config,
    /// How findings are printed: the format after precedence, colour, --deny-warnings.
    pub print: OutputArgs,
    /// The pools the inputs are resolved against.
    pub pools: Vec<PathBuf>,
    /// `render`'s directory; None: stdout.
    pub output: Option<PathBuf>,
    /// The command line's rule options, which go on the file's levels.
    rules: RuleArgs,
    /// The file's rule levels and floor.
    file_policy: Policy,
}

/// Why the settings could not be resolved: the file cannot be read, or is invalid.
pub enum Unresolved {
    Io(PathBuf, std::io::Error),
    Invalid(config::Invalid),
}

impl Settings {
    /// Read the configuration the command line names (none for a command that runs
    /// no rules and prints no findings: a broken file must not stop `rules`, `man`,
    /// `detect --print-commands`), then resolve.
    pub fn load(
        command: &Command,
        global: Globals<'_>,
        matches: &ArgMatches,
        terminal: Terminal,
    ) -> Result<Settings, Unresolved> {
        let reads_config = command.takes_format() || command.rule_args().is_some();
        let runs_no_rules = matches!(command, Command::Detect(a) if a.print_commands);
        let config = if reads_config && !runs_no_rules {
            let choice = match (global.config, global.no_config) {
                (_, true) => config::Choice::None,
                (Some(file), _) => config::Choice::Named(file),
                (None, false) => config::Choice::Search,
            };
            match config::load(choice) {
                Ok(Ok(config)) => config,
                Ok(Err(invalid)) => return Err(Unresolved::Invalid(invalid)),
                Err((file, e)) => return Err(Unresolved::Io(file, e)),
            }
        } else {
            Config::default()
        };
        Ok(Settings::resolve(command, matches, config, terminal))
    }

    /// The settings from the parsed command line, the configuration read and the
    /// environment: no I/O, so every precedence is a unit test.
    pub fn resolve(
        command: &Command,
        matches: &ArgMatches,
        config: Config,
        terminal: Terminal,
    ) -> Settings {
        let sub = matches.subcommand().map(|(_, sub)| sub);
        // Whether the command has argument `id` and it was given on the command line.
        let given = |id: &str| {
            sub.is_some_and(|sub| {
                sub.try_contains_id(id).unwrap_or(false)
                    && sub.value_source(id) == Some(ValueSource::CommandLine)
            })
        };
        let flag_pools = command.pools();
        let pools = match &config.pools {
            Some(set) if !given("pools") && command.reads_configured_pools() => set.value.clone(),
            _ => flag_pools.to_vec(),
        };
        let output = match command {
            Command::Render(args) => {
                // The configured output is where --check, --bless and --write work;
                // a bare render is a preview and prints, whatever the file says (a
                // configuration found in a parent directory once turned it into a
                // write).
                let golden_mode = args.check || args.bless || args.write;
                match (&args.output, &config.output) {
                    (Some(dir), _) if dir == Path::new("-") => None,
                    (Some(dir), _) => Some(dir.clone()),
                    (None, Some(set)) if golden_mode => Some(set.value.clone()),
                    (None, _) => None,
                }
            }
            _ => None,
        };
        let compares = match command {
            Command::Diff(_) => true,
            Command::Render(args) => output.is_some() && args.mode(terminal.ci).compares(),
            _ => false,
        };
        let mut print = command.output_args().cloned().unwrap_or_default();
        if let Some(format) = &config.format
            && !given("format")
            && command.takes_format()
            && (format.value.reports_comparisons() || !compares)
        {
            print.format = format.value;
        }
        Settings {
            terminal,
            file_policy: config.policy(),
            config,
            print,
            pools,
            output,
            rules: command.rule_args().cloned().unwrap_or_default(),
        }
    }

    /// The levels for a run that writes output (render, validate, smoke-test,
    /// detect, dockerfile): see [`RuleArgs::rendering_policy`].
    pub fn rendering_policy(&self) -> Result<Policy, Error> {
        self.rules.rendering_policy(&self.file_policy)
    }

    /// The levels for a run that only reports (lint, image-check, nccl-log, config).
    pub fn reporting_policy(&self) -> Policy {
        self.rules.reporting_policy(&self.file_policy)
    }

    /// The findings format, for the commands that take one.
    pub fn format(&self, command: &Command) -> Option<Format> {
        command.takes_format().then_some(self.print.format)
    }
}

/// The global options that choose the configuration file.
#[derive(Clone, Copy)]
pub struct Globals<'a> {
    pub config: Option<&'a Path>,
    pub no_config: bool,
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, FromArgMatches, Parser};

    use super::*;
    use crate::cli::Cli;
    use crate::diagnostics::policy::Level;
    use crate::diagnostics::{RuleInfo, Severity};

    /// `argv` parsed, resolved with `file` as the configuration (`.rdmagen.yaml` in
    /// the working directory) or none.
    fn settings(argv: &str, file: Option<&str>, terminal: Terminal) -> Settings {
        let matches = Cli::command()
            .try_get_matches_from(std::iter::once("rdmagen").chain(argv.split_whitespace()))
            .unwrap();
        let cli = Cli::from_arg_matches(&matches).unwrap();
        let config = match file {
            Some(text) => config::parse_text(Path::new(config::FILE_NAME), text)
                .unwrap_or_else(|_| panic!("{text} is a valid configuration")),
            None => Config::default(),
        };
        Settings::resolve(&cli.command, &matches, config, terminal)
    }

    const FILE: &str = "format: json\npools: from-file\noutput: rendered\nminSeverity: error\nrules: {RDG020: off, RDG047: error}\n";

    #[test]
    fn format_flag_over_file_over_default() {
        let t = Terminal::default();
        assert_eq!(
            settings("validate j --format brief", Some(FILE), t)
                .print
                .format,
            Format::Brief
        );
        assert_eq!(
            settings("validate j", Some(FILE), t).print.format,
            Format::Json
        );
        assert_eq!(settings("validate j", None, t).print.format, Format::Human);
        // Given explicitly as the default, the flag still wins.
        assert_eq!(
            settings("validate j --format human", Some(FILE), t)
                .print
                .format,
            Format::Human
        );
        // A comparison keeps human for a configured format that cannot show differences.
        let sarif = "format: sarif\n";
        assert_eq!(
            settings("diff a b", Some(sarif), t).print.format,
            Format::Human
        );
        assert_eq!(
            settings("diff a b", Some(FILE), t).print.format,
            Format::Json
        );
        assert_eq!(
            settings("validate j", Some(sarif), t).print.format,
            Format::Sarif
        );
        // Commands that print no findings take none.
        let s = settings("schema job", Some(FILE), t);
        assert_eq!(
            s.format(
                &Cli::try_parse_from(["rdmagen", "schema", "job"])
                    .unwrap()
                    .command
            ),
            None
        );
    }

    #[test]
    fn pools_flag_over_file_over_default() {
        let t = Terminal::default();
        assert_eq!(
            settings("validate j --pools p", Some(FILE), t).pools,
            [PathBuf::from("p")]
        );
        assert_eq!(
            settings("validate j", Some(FILE), t).pools,
            [PathBuf::from("from-file")]
        );
        assert!(settings("validate j", None, t).pools.is_empty());
        assert_eq!(
            settings("render j", Some(FILE), t).pools,
            [PathBuf::from("from-file")]
        );
        assert_eq!(
            settings("smoke-test --pool p", Some(FILE), t).pools,
            [PathBuf::from("from-file")]
        );
        // nccl-log looks in the configured pools only when asked to judge one.
        assert!(settings("nccl-log l", Some(FILE), t).pools.is_empty());
        assert_eq!(
            settings("nccl-log l --pool x", Some(FILE), t).pools,
            [PathBuf::from("from-file")]
        );
    }

    #[test]
    fn output_flag_over_file_over_default() {
        let t = Terminal::default();
        let out = |argv: &str, file| settings(argv, file, t).output;
        assert_eq!(
            out("render j -o mine --check", Some(FILE)),
            Some(PathBuf::from("mine"))
        );
        assert_eq!(out("render j -o - --check", Some(FILE)), None);
        assert_eq!(
            out("render j --check", Some(FILE)),
            Some(PathBuf::from("rendered"))
        );
        assert_eq!(
            out("render j --bless", Some(FILE)),
            Some(PathBuf::from("rendered"))
        );
        assert_eq!(
            out("render j --write", Some(FILE)),
            Some(PathBuf::from("rendered"))
        );
        // A bare render previews on stdout whatever the file says.
        assert_eq!(out("render j", Some(FILE)), None);
        assert_eq!(out("render j --check", None), None);
    }

    #[test]
    fn rule_levels_and_floor_flag_over_file_over_default() {
        let t = Terminal::default();
        let rdg020 = RuleInfo::by_id("RDG020").unwrap();
        let level = |argv: &str, file| {
            settings(argv, file, t)
                .reporting_policy()
                .level(rdg020.rule, None)
        };
        let warning = Level::On(Severity::Warning);
        assert_eq!(
            level("lint m --severity RDG020=warning", Some(FILE)),
            warning
        );
        assert_eq!(
            level("lint m --disable RDG020", Some("rules: {RDG020: error}\n")),
            Level::Off
        );
        assert_eq!(level("lint m", Some(FILE)), Level::Off);
        assert_eq!(level("lint m", None), Level::On(rdg020.severity));
        let floor = |argv: &str, file| settings(argv, file, t).reporting_policy().min_severity;
        assert_eq!(
            floor("lint m --min-severity warning", Some(FILE)),
            Severity::Warning
        );
        assert_eq!(floor("lint m", Some(FILE)), Severity::Error);
        assert_eq!(floor("lint m", None), Severity::Info);
    }

    #[test]
    fn ci_turns_a_plain_render_into_a_comparison() {
        let ci = Terminal {
            ci: true,
            ..Terminal::default()
        };
        let sarif = "format: sarif\noutput: rendered\n";
        // `render -o DIR` compares under CI: the configured SARIF stays off it.
        assert_eq!(
            settings("render j -o d", Some(sarif), ci).print.format,
            Format::Human
        );
        assert_eq!(
            settings("render j -o d", Some(sarif), Terminal::default())
                .print
                .format,
            Format::Sarif
        );
    }
}
