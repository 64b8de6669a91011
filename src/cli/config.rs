//! The configuration file: `.rdmagen.yaml`, found from the working directory upward,
//! or `--config FILE`. It gives rule levels (`rules`, per-path `overrides`), the floor
//! (`minSeverity`), and defaults for `--pools`, `-o` and `--format`. A flag given on
//! the command line always wins; `rdmagen config` prints what is in effect and where
//! each value came from.
//!
//! A pull request can change this file like any other: the paths it names must stay
//! inside the directory that holds it, so a configuration can never make rdmagen
//! read or write outside the repository.

use std::fmt::Write as _;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use clap::ValueEnum;

use crate::diagnostics::escape::{cut, printable};
use crate::diagnostics::policy::{Level, Levels, PathOverride, parse_severity};
use crate::diagnostics::suggest::closest;
use crate::diagnostics::{Findings, Location, Policy, Rule, RuleInfo, Severity, Sources};
use crate::output::Format;
use crate::yaml::tree::{Node, NodeKind, parse_documents};

/// The file name looked for in the working directory and each directory above it.
pub const FILE_NAME: &str = ".rdmagen.yaml";

/// The keys of the file, in the order `rdmagen config` prints them.
const KEYS: [&str; 6] = [
    "rules",
    "overrides",
    "minSeverity",
    "pools",
    "output",
    "format",
];

/// A value and where it was set (`FILE:LINE`).
#[derive(Clone, Debug)]
pub struct Set<T> {
    pub value: T,
    pub origin: String,
}

/// What the configuration file says; everything absent when there is none.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The file read, as it is shown; None when there is none.
    pub file: Option<PathBuf>,
    /// How the file was found: `--config`, or the search upward from the working directory.
    pub found: String,
    /// The directory paths in the file are relative to.
    dir: PathBuf,
    pub rules: Levels,
    pub overrides: Vec<PathOverride>,
    pub min_severity: Option<Set<Severity>>,
    pub pools: Option<Set<Vec<PathBuf>>>,
    pub output: Option<Set<PathBuf>>,
    pub format: Option<Set<Format>>,
}

/// Why the configuration could not be used: its findings and its text.
pub struct Invalid {
    pub findings: Findings,
    pub sources: Sources,
}

/// Which configuration to read: `--config FILE`, none (`--no-config`), or the one
/// found from the working directory upward.
pub enum Choice<'a> {
    Named(&'a Path),
    None,
    Search,
}

/// Read the configuration the choice names. A named file that cannot be read is an
/// I/O error; a file that is not a valid configuration, its findings.
pub fn load(choice: Choice<'_>) -> Result<Result<Config, Invalid>, (PathBuf, std::io::Error)> {
    let (file, found) = match choice {
        Choice::None => {
            return Ok(Ok(Config {
                found: "none (--no-config)".to_owned(),
                ..Config::default()
            }));
        }
        Choice::Named(path) => (path.to_path_buf(), "--config".to_owned()),
        Choice::Search => match search() {
            Some(found) => found,
            None => {
                return Ok(Ok(Config {
                    found: format!(
                        "none: no {FILE_NAME} in the working directory or above it (up to the repository's root)"
                    ),
                    ..Config::default()
                }));
            }
        },
    };
    let bytes = crate::files::read_regular(&file).map_err(|e| (file.clone(), e))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(parse(&file, found, &text)),
        Err(e) => Ok(Err(not_utf8(&file, e))),
    }
}

/// A file that is not UTF-8, as a finding at its first byte that is not.
fn not_utf8(file: &Path, e: std::string::FromUtf8Error) -> Invalid {
    let bytes = e.as_bytes();
    let valid = &bytes[..e.utf8_error().valid_up_to()];
    let line_start = valid.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    // The bytes up to the bad one are UTF-8, so this never replaces anything.
    let column = String::from_utf8_lossy(&valid[line_start..])
        .chars()
        .count()
        + 1;
    let name: Arc<str> = Arc::from(file.to_string_lossy().replace('\\', "/"));
    let at = Location {
        file: name.clone(),
        line: valid.iter().filter(|b| **b == b'\n').count() + 1,
        column,
    };
    let mut findings = Findings::default();
    findings.at(
        Rule::ConfigInvalid,
        "the file is not valid UTF-8 text from here",
        at,
    );
    let mut sources = Sources::default();
    sources.add(name, Arc::from(String::from_utf8_lossy(bytes).as_ref()));
    Invalid { findings, sources }
}

/// `.rdmagen.yaml` in the working directory or the nearest directory above it, as a
/// relative path (`../../.rdmagen.yaml`), so that findings name files as the user
/// does. The search stops at the repository's root (a directory holding `.git`): a
/// file above it belongs to no repository this run checks. Outside a repository only
/// the working directory is looked at: anyone may write a `/tmp/.rdmagen.yaml`.
fn search() -> Option<(PathBuf, String)> {
    let cwd = std::env::current_dir().ok()?;
    let exists = |path: &Path| crate::files::kind_of(path).ok().flatten().is_some();
    let mut up = PathBuf::new();
    let mut nearest = None;
    for dir in cwd.ancestors() {
        if nearest.is_none() && exists(&dir.join(FILE_NAME)) {
            let how = if up.as_os_str().is_empty() {
                "found in the working directory".to_owned()
            } else {
                format!("found in {}", dir.display())
            };
            nearest = Some((up.join(FILE_NAME), how));
        }
        if exists(&dir.join(".git")) {
            return nearest;
        }
        up.push("..");
    }
    // No repository: only a file in the working directory itself.
    nearest.filter(|(path, _)| path == Path::new(FILE_NAME))
}

/// Parse the text of a configuration file; every problem is a finding at its place.
fn parse(file: &Path, found: String, text: &str) -> Result<Config, Invalid> {
    let name: Arc<str> = Arc::from(file.to_string_lossy().replace('\\', "/"));
    let mut findings = Findings::default();
    let dir = file.parent().unwrap_or(Path::new("")).to_path_buf();
    let mut config = Config {
        file: Some(file.to_path_buf()),
        found,
        dir,
        ..Config::default()
    };
    let mut reader = Reader {
        file: name.clone(),
        findings: &mut findings,
    };
    match parse_documents(&name, text) {
        Err(e) => e.report(name.clone(), reader.findings),
        Ok(docs) if docs.len() > 1 => {
            let at = reader.at(&docs[1].root);
            reader.problem(
                at,
                "a configuration is one YAML document; this file has several",
            );
        }
        Ok(docs) => {
            if let Some(doc) = docs.first() {
                reader.read(&doc.root, &mut config);
            }
        }
    }
    if findings.is_empty() {
        return Ok(config);
    }
    let mut sources = Sources::default();
    sources.add(name, Arc::from(text));
    Err(Invalid { findings, sources })
}

/// Reads the tree of a configuration file into a [`Config`], noting every problem.
struct Reader<'a> {
    file: Arc<str>,
    findings: &'a mut Findings,
}

impl Reader<'_> {
    fn at(&self, node: &Node) -> Location {
        Location {
            file: self.file.clone(),
            line: node.line,
            column: node.column,
        }
    }

    fn origin(&self, node: &Node) -> String {
        format!("{}:{}", self.file, node.line)
    }

    fn problem(&mut self, at: Location, message: impl Into<String>) {
        self.findings.at(Rule::ConfigInvalid, message, at);
    }

    /// The entries of a mapping, or a problem naming `what` when it is not one.
    fn mapping<'n>(&mut self, node: &'n Node, what: &str) -> &'n [(Node, Node)] {
        match &node.kind {
            NodeKind::Mapping(entries) => entries,
            NodeKind::Scalar { plain: true, text }
                if text.is_empty() || text == "~" || text == "null" =>
            {
                &[]
            }
            _ => {
                let at = self.at(node);
                self.problem(at, format!("{what} must be a mapping"));
                &[]
            }
        }
    }

    fn text<'n>(&mut self, node: &'n Node, what: &str) -> Option<&'n str> {
        match &node.kind {
            NodeKind::Scalar { text, .. } => Some(text),
            _ => {
                let at = self.at(node);
                self.problem(at, format!("{what} must be text"));
                None
            }
        }
    }

    fn read(&mut self, root: &Node, config: &mut Config) {
        for (key, value) in self.mapping(root, "the configuration") {
            let Some(name) = self.text(key, "a key") else {
                continue;
            };
            match name {
                "rules" => config.rules = self.levels(value),
                "overrides" => config.overrides = self.overrides(value),
                "minSeverity" => {
                    config.min_severity = self.severity(value).map(|s| Set {
                        value: s,
                        origin: self.origin(value),
                    });
                }
                "pools" => {
                    let paths = self.paths(value, &config.dir);
                    config.pools = Some(Set {
                        value: paths,
                        origin: self.origin(value),
                    });
                }
                "output" => {
                    let path = self.output(value, &config.dir);
                    config.output = path.map(|p| Set {
                        value: p,
                        origin: self.origin(value),
                    });
                }
                "format" => config.format = self.format(value),
                other => {
                    let hint = match closest(other, KEYS) {
                        Some(near) => format!("; did you mean {near}?"),
                        None => format!("; the keys are {}", KEYS.join(", ")),
                    };
                    let at = self.at(key);
                    self.problem(at, format!("unknown key `{other}`{hint}"));
                }
            }
        }
    }

    /// `{RDG020: off, RDG013: error}`.
    fn levels(&mut self, node: &Node) -> Levels {
        let mut levels = Levels::default();
        for (key, value) in self.mapping(node, "rules") {
            let Some(id) = self.text(key, "a rule ID") else {
                continue;
            };
            let rule = match RuleInfo::by_id(id) {
                Some(info) if info.syntax => {
                    let at = self.at(key);
                    let why = crate::diagnostics::policy::FIXED;
                    self.problem(at, format!("{} cannot be configured: {why}", info.id));
                    continue;
                }
                Some(info) => info.rule,
                None => {
                    let at = self.at(key);
                    self.problem(at, format!("no rule `{id}`; `rdmagen rules` lists them"));
                    continue;
                }
            };
            if levels.get(rule).is_some() {
                let at = self.at(key);
                let id = rule.info().id;
                self.problem(
                    at,
                    format!("{id} is set twice (IDs are read without regard to case)"),
                );
                continue;
            }
            let Some(word) = self.text(value, "a level") else {
                continue;
            };
            match Level::parse(word) {
                Some(level) => levels.set(rule, level, self.origin(value)),
                None => {
                    let at = self.at(value);
                    self.problem(
                        at,
                        format!(
                            "`{word}` is not a level: write one of {}",
                            Level::NAMES.join(", ")
                        ),
                    );
                }
            }
        }
        levels
    }

    /// `[{files: GLOB or [GLOB...], rules: {...}}]`.
    fn overrides(&mut self, node: &Node) -> Vec<PathOverride> {
        let NodeKind::Sequence(items) = &node.kind else {
            let at = self.at(node);
            self.problem(
                at,
                "overrides must be a list of {files: GLOB, rules: {...}}",
            );
            return Vec::new();
        };
        let mut overrides = Vec::new();
        for item in items {
            let (mut patterns, mut levels) = (Vec::new(), Levels::default());
            let (mut has_files, mut has_rules) = (false, false);
            for (key, value) in self.mapping(item, "an override") {
                match key.as_str() {
                    Some("files") => {
                        has_files = true;
                        patterns = self.texts(value, "files");
                        if patterns.is_empty() {
                            let at = self.at(value);
                            self.problem(
                                at,
                                "`files` names no pattern: the override would apply nowhere",
                            );
                        }
                    }
                    Some("rules") => {
                        has_rules = true;
                        levels = self.levels(value);
                    }
                    _ => {
                        let at = self.at(key);
                        self.problem(at, "an override takes `files` and `rules`");
                    }
                }
            }
            if !has_files {
                let at = self.at(item);
                self.problem(
                    at,
                    "an override needs `files`: the glob patterns it applies to",
                );
            }
            if !has_rules {
                let at = self.at(item);
                self.problem(at, "an override needs `rules`: the levels it sets");
            }
            for (node, pattern) in patterns {
                match PathOverride::new(&pattern, levels.clone()) {
                    Ok(o) => overrides.push(o),
                    Err(why) => {
                        let at = self.at(node);
                        self.problem(
                            at,
                            format!("`{}` is not a glob pattern: {why}", cut(&pattern, 80)),
                        );
                    }
                }
            }
        }
        overrides
    }

    /// One text or a list of them.
    fn texts<'n>(&mut self, node: &'n Node, what: &str) -> Vec<(&'n Node, String)> {
        match &node.kind {
            NodeKind::Sequence(items) => items
                .iter()
                .filter_map(|n| self.text(n, what).map(|t| (n, t.to_owned())))
                .collect(),
            _ => self
                .text(node, what)
                .map(|t| (node, t.to_owned()))
                .into_iter()
                .collect(),
        }
    }

    /// The output directory: a path inside the file's directory, never that directory
    /// itself (rendering swaps the whole directory) and never in `.git`.
    fn output(&mut self, node: &Node, dir: &Path) -> Option<PathBuf> {
        let text = self.text(node, "output")?;
        let path = self.path(node, text, dir)?;
        let mut parts = Path::new(text)
            .components()
            .filter(|c| !matches!(c, Component::CurDir));
        let refused = match parts.next() {
            None => {
                Some("is the configuration's own directory, which rendering would replace whole")
            }
            Some(first) if first.as_os_str() == ".git" => Some("is inside .git"),
            Some(_) => None,
        };
        if let Some(why) = refused {
            let at = self.at(node);
            self.problem(
                at,
                format!("output `{text}` {why}: name a directory of its own, e.g. rendered/"),
            );
            return None;
        }
        Some(path)
    }

    fn paths(&mut self, node: &Node, dir: &Path) -> Vec<PathBuf> {
        self.texts(node, "pools")
            .into_iter()
            .filter_map(|(n, t)| self.path(n, &t, dir))
            .collect()
    }

    /// A path in the file: relative, inside the file's directory, taken from it.
    fn path(&mut self, node: &Node, text: &str, dir: &Path) -> Option<PathBuf> {
        let path = Path::new(text);
        let inside = !text.is_empty()
            && path
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !inside {
            let at = self.at(node);
            self.problem(at, format!("`{text}` must be a relative path inside the configuration's directory (no `..`, not absolute)"));
            return None;
        }
        Some(dir.join(path))
    }

    fn severity(&mut self, node: &Node) -> Option<Severity> {
        let word = self.text(node, "minSeverity")?;
        let severity = parse_severity(word);
        if severity.is_none() {
            let at = self.at(node);
            self.problem(
                at,
                format!("`{word}` is not a severity: write info, warning or error"),
            );
        }
        severity
    }

    fn format(&mut self, node: &Node) -> Option<Set<Format>> {
        let word = self.text(node, "format")?;
        match Format::from_str(word, false) {
            Ok(value) => Some(Set {
                value,
                origin: self.origin(node),
            }),
            Err(_) => {
                let names: Vec<String> = Format::value_variants()
                    .iter()
                    .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_owned()))
                    .collect();
                let at = self.at(node);
                self.problem(
                    at,
                    format!(
                        "`{word}` is not a format: write one of {}",
                        names.join(", ")
                    ),
                );
                None
            }
        }
    }
}

impl Config {
    /// The rule levels of this file, on which the command line's go.
    pub fn policy(&self) -> Policy {
        let mut policy = Policy::default().with_root(&self.dir);
        policy.config = self.rules.clone();
        policy.overrides = self.overrides.clone();
        if let Some(floor) = &self.min_severity {
            policy.min_severity = floor.value;
            policy.floor_from_config = true;
        }
        policy.config_name = self
            .file
            .as_ref()
            .and_then(|file| file.file_name())
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        policy
    }

    /// The effective configuration, each value with where it came from, for
    /// `rdmagen config`; `policy` includes the command line's rule flags.
    pub fn describe(&self, policy: &Policy) -> String {
        let mut out = String::new();
        // Paths, patterns and origins come from the file or the file system: each is
        // escaped, so that none can start a line of its own.
        let esc = |text: &str| printable(text).into_owned();
        let file = match &self.file {
            Some(file) => format!(
                "{} ({})",
                esc(&file.display().to_string()),
                esc(&self.found)
            ),
            None => self.found.clone(),
        };
        let _ = writeln!(out, "# configuration file: {file}");
        let default = |what: &str| format!("default ({what})");
        let shown = |paths: &[PathBuf]| {
            let paths: Vec<String> = paths
                .iter()
                .map(|p| esc(&p.display().to_string()))
                .collect();
            format!("[{}]", paths.join(", "))
        };
        let (format, origin) = match &self.format {
            Some(set) => (format_name(set.value), esc(&set.origin)),
            None => ("human".to_owned(), default("--format")),
        };
        let _ = writeln!(out, "format: {format}  # {origin}");
        match &self.pools {
            Some(set) => {
                let _ = writeln!(out, "pools: {}  # {}", shown(&set.value), esc(&set.origin));
            }
            None => {
                let _ = writeln!(
                    out,
                    "pools: []  # {}",
                    default("--pools: the inputs' own pools")
                );
            }
        }
        match &self.output {
            Some(set) => {
                let _ = writeln!(
                    out,
                    "output: {}  # {}",
                    esc(&set.value.display().to_string()),
                    esc(&set.origin)
                );
            }
            None => {
                let _ = writeln!(out, "output: ~  # {}", default("-o: stdout"));
            }
        }
        let floor = self
            .min_severity
            .as_ref()
            .map_or_else(|| default("--min-severity"), |set| esc(&set.origin));
        let _ = writeln!(out, "minSeverity: {}  # {floor}", policy.min_severity);
        let mut rules: Vec<(Rule, Level, &str)> = self.rules.iter().collect();
        for (rule, level, origin) in policy.command_line.iter() {
            rules.retain(|(r, ..)| *r != rule);
            rules.push((rule, level, origin));
        }
        rules.sort_by_key(|(rule, ..)| rule.info().id);
        if rules.is_empty() {
            let _ = writeln!(
                out,
                "rules: {{}}  # every rule at its catalogue level (rdmagen rules)"
            );
        } else {
            let _ = writeln!(out, "rules:");
            for (rule, level, origin) in rules {
                let _ = writeln!(out, "  {}: {level}  # {}", rule.info().id, esc(origin));
            }
        }
        if self.overrides.is_empty() {
            let _ = writeln!(out, "overrides: []");
        } else {
            let _ = writeln!(out, "overrides:");
            for o in &self.overrides {
                let _ = writeln!(out, "  - files: {}", esc(&o.pattern));
                let _ = writeln!(out, "    rules:");
                for (rule, level, origin) in o.levels.iter() {
                    let _ = writeln!(out, "      {}: {level}  # {}", rule.info().id, esc(origin));
                }
            }
        }
        out
    }
}

fn format_name(format: Format) -> String {
    format
        .to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_owned())
}

/// `rdmagen config`: the configuration in effect.
#[derive(Debug, clap::Args)]
pub struct ConfigArgs {
    #[command(flatten)]
    pub rules: super::rule_args::RuleArgs,
    /// The configuration read, filled in after parsing.
    #[arg(skip)]
    pub config: Option<Config>,
}

pub fn show(args: &ConfigArgs, io: &mut super::Streams<'_>) -> Result<(), crate::error::Error> {
    let config = args.config.clone().unwrap_or_default();
    let text = config.describe(&args.rules.reporting_policy());
    // Paths and patterns come from the file: one escaped line each.
    for line in text.lines() {
        writeln!(io.out, "{}", crate::diagnostics::escape::printable(line))
            .map_err(super::stdout)?;
    }
    Ok(())
}

/// Print why the configuration cannot be used, in the command's format, on stderr
/// (stdout is the command's product); the run ends with exit 2, having run nothing.
pub fn present_invalid(
    invalid: &Invalid,
    format: Option<Format>,
    io: &mut super::Streams<'_>,
) -> Result<(), crate::error::Error> {
    let format = format.unwrap_or(Format::Human);
    let color = crate::output::ColorChoice::Auto.colored(io.terminal.stderr);
    crate::output::findings(io.err, &invalid.findings, &invalid.sources, format, color)
        .map_err(super::stderr)?;
    Err(crate::error::Error::Findings {
        errors: invalid.findings.errors(),
        code: 2,
        consequence: ": the configuration is not valid, nothing was run",
        hidden: Vec::new(),
        quiet: format.is_machine_read(),
    })
}
