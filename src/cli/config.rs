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

use crate::diagnostics::escape::{printable, shown};
use crate::diagnostics::policy::{Level, Levels, PathOverride, parse_severity};
use crate::diagnostics::{Findings, Location, Policy, Rule, RuleInfo, Severity, Sources};
use crate::output::Format;
use crate::yaml::tree::{Node, NodeKind, parse_documents};
use crate::yaml::tree_de::{self, Located};
use serde::Deserialize;
use serde::de::{MapAccess, SeqAccess, Visitor};

/// The file name looked for in the working directory and each directory above it.
pub const FILE_NAME: &str = ".rdmagen.yaml";
/// The names the file is found by, as kube-linter and hadolint accept both
/// extensions; both in one directory is an error.
pub const FILE_NAMES: [&str; 2] = [FILE_NAME, ".rdmagen.yml"];

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
        Choice::Search => match search()? {
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
fn search() -> Result<Option<(PathBuf, String)>, (PathBuf, std::io::Error)> {
    let Ok(cwd) = std::env::current_dir() else {
        return Ok(None);
    };
    let exists = |path: &Path| crate::files::kind_of(path).ok().flatten().is_some();
    let mut up = PathBuf::new();
    let mut nearest = None;
    for dir in cwd.ancestors() {
        if nearest.is_none() {
            // Both spellings in one directory: which one rules is no guess to make.
            let here: Vec<&str> = FILE_NAMES
                .into_iter()
                .filter(|name| exists(&dir.join(name)))
                .collect();
            if let [_, other] = here[..] {
                return Err((
                    up.join(other),
                    std::io::Error::other(format!(
                        "both {} and {other} are here; keep one",
                        FILE_NAMES[0]
                    )),
                ));
            }
            if let Some(name) = here.first() {
                let how = if up.as_os_str().is_empty() {
                    "found in the working directory".to_owned()
                } else {
                    format!("found in {}", dir.display())
                };
                nearest = Some((up.join(name), how));
            }
        }
        if exists(&dir.join(".git")) {
            return Ok(nearest);
        }
        up.push("..");
    }
    // No repository: only a file in the working directory itself.
    Ok(nearest.filter(|(path, _)| path.parent() == Some(Path::new(""))))
}

/// The file as written: its shape, read by serde from the located tree the inputs
/// are read from, unknown keys refused. What the values mean is checked after, by
/// [`Checker`], so that every problem in the file is reported at once. The same
/// declaration is the file's JSON Schema ([`schema`]), each field's schema written
/// beside it, so that the schema names exactly the keys the reader takes.
#[derive(Deserialize, Default, schemars::JsonSchema)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    expecting = "a mapping of rules, overrides, minSeverity, pools, output and format"
)]
#[schemars(
    title = "rdmagen configuration",
    description = "The configuration file `.rdmagen.yaml` (or `.rdmagen.yml`): rule levels, per-path overrides, and defaults for --min-severity, --pools, -o and --format. Flags given on the command line win."
)]
struct FileShape {
    /// A level per rule: off, info, warning or error (IDs in any case).
    #[serde(default)]
    #[schemars(schema_with = "levels_schema")]
    rules: Option<Located<Entries>>,
    /// Levels for the paths a glob matches; the last match wins.
    #[serde(default)]
    #[schemars(with = "Vec<OverrideShape>")]
    overrides: Option<Located<Vec<Located<OverrideShape>>>>,
    /// Report nothing below this severity (default: info).
    #[serde(default)]
    #[schemars(schema_with = "severity_schema")]
    min_severity: Option<Located<String>>,
    /// The default --pools: a path or a list of paths, relative to this file's
    /// directory and inside it.
    #[serde(default)]
    #[schemars(schema_with = "texts_schema")]
    pools: Option<Located<Texts>>,
    /// The -o of render --check, --bless and --write: a directory relative to this
    /// file's directory and inside it.
    #[serde(default)]
    #[schemars(with = "String")]
    output: Option<Located<String>>,
    /// The default --format.
    #[serde(default)]
    #[schemars(schema_with = "format_schema")]
    format: Option<Located<String>>,
}

/// `{files: GLOB or [GLOB...], rules: {...}}`.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "an override: a mapping of `files` and `rules`"
)]
struct OverrideShape {
    /// The glob patterns the override applies to, relative to this file's directory
    /// (`*` within a directory, `**` across any number).
    #[schemars(schema_with = "texts_schema")]
    files: Option<Located<Texts>>,
    /// A level per rule for those paths.
    #[schemars(schema_with = "levels_schema")]
    rules: Option<Located<Entries>>,
}

/// The address of the committed schema on the main branch, its `$id`.
pub fn schema_id() -> String {
    format!(
        "{}/raw/main/schemas/config.schema.json",
        env!("CARGO_PKG_REPOSITORY")
    )
}

/// The configuration file's JSON Schema (draft-07, the draft yaml-language-server
/// reads), as `rdmagen schema config` prints it and schemas/config.schema.json holds.
pub fn schema() -> String {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let root = generator.into_root_schema_for::<FileShape>();
    let mut schema = serde_json::Map::new();
    let body = serde_json::to_value(root).expect("schemas serialise");
    schema.insert("$schema".to_owned(), body["$schema"].clone());
    schema.insert("$id".to_owned(), serde_json::json!(schema_id()));
    if let serde_json::Value::Object(rest) = body {
        schema.extend(rest.into_iter().filter(|(k, _)| k != "$schema"));
    }
    let mut text = serde_json::to_string_pretty(&schema).expect("schemas serialise");
    text.push('\n');
    text
}

/// `rules:`: every rule the file may set, with its summary for an editor to show; an
/// ID in another case is read too, and a rule of a file that cannot be read never is.
fn levels_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let levels = serde_json::json!({ "enum": Level::NAMES });
    let mut known = serde_json::Map::new();
    for rule in crate::diagnostics::rule::CATALOGUE
        .iter()
        .filter(|r| !r.syntax)
    {
        known.insert(
            rule.id.to_owned(),
            serde_json::json!({ "description": rule.summary, "enum": Level::NAMES }),
        );
    }
    let fixed: Vec<&str> = crate::diagnostics::rule::CATALOGUE
        .iter()
        .filter(|r| r.syntax)
        .map(|r| r.id)
        .collect();
    schemars::json_schema!({
        "type": ["object", "null"],
        "properties": known,
        "propertyNames": {
            "pattern": "^[Rr][Dd][Gg][0-9]{3}$",
            "not": { "enum": fixed },
        },
        "additionalProperties": levels,
    })
}

fn severity_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "enum": ["info", "warning", "error"] })
}

/// One text or a list of texts, as [`Texts`] reads them.
fn texts_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "anyOf": [
            { "type": "string" },
            { "type": "array", "items": { "type": "string" } },
        ],
    })
}

fn format_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "enum": format_names() })
}

/// The names `format:` takes, as `--format` does.
fn format_names() -> Vec<String> {
    Format::value_variants()
        .iter()
        .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_owned()))
        .collect()
}

/// A mapping of texts to texts (rule IDs to levels), in file order, each with its
/// place; empty when null.
#[derive(Default)]
struct Entries(Vec<(Located<String>, Located<String>)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a mapping of rule IDs to levels")
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Entries, E> {
                Ok(Entries::default())
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Entries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// One text or a list of them (`pools: pools`, `files: ["a/**", "b/**"]`).
enum Texts {
    One(String),
    Many(Vec<Located<String>>),
}

impl<'de> Deserialize<'de> for Texts {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> Visitor<'de> for Visit {
            type Value = Texts;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a text or a list of texts")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Texts, E> {
                Ok(Texts::One(text.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Texts, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Texts::Many(items))
            }
        }
        // A scalar comes as text (`pools: 1` is the path "1"), a list as a list.
        deserializer.deserialize_str(Visit)
    }
}

/// Each text with its place (a lone text is at the node's).
fn texts_with_places(texts: Located<Texts>) -> Vec<Located<String>> {
    let (line, column) = (texts.line, texts.column);
    match texts.value {
        Texts::One(value) => vec![Located {
            value,
            line,
            column,
        }],
        Texts::Many(items) => items,
    }
}

/// A configuration file's text read as `file` (the unit tests' way in).
#[cfg(test)]
pub(super) fn parse_text(file: &Path, text: &str) -> Result<Config, Invalid> {
    parse(file, "given".to_owned(), text)
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
    let mut checker = Checker {
        file: name.clone(),
        findings: &mut findings,
    };
    match parse_documents(&name, text) {
        Err(e) => e.report(name.clone(), checker.findings),
        Ok(docs) if docs.len() > 1 => {
            let at = checker.at(docs[1].root.line, docs[1].root.column);
            checker.problem(
                at,
                "a configuration is one YAML document; this file has several",
            );
        }
        Ok(mut docs) => {
            if let Some(doc) = docs.pop() {
                let shape = checker.shape(doc.root);
                checker.read(shape, &mut config);
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

/// Remove from `node` the outermost mapping entry or list item written at `at` (its
/// key or its value starts there), so that deserialising again gets past a problem
/// already reported. False when nothing below `node` is there.
fn prune(node: &mut Node, at: (usize, usize)) -> bool {
    let starts = |n: &Node| (n.line, n.column) == at;
    let within = |n: &Node| (n.line, n.column) <= at && at <= n.end;
    match &mut node.kind {
        NodeKind::Scalar { .. } => false,
        NodeKind::Sequence(items) => {
            if let Some(i) = items.iter().position(starts) {
                items.remove(i);
                return true;
            }
            items.iter_mut().filter(|n| within(n)).any(|n| prune(n, at))
        }
        NodeKind::Mapping(entries) => {
            if let Some(i) = entries.iter().position(|(k, v)| starts(k) || starts(v)) {
                entries.remove(i);
                return true;
            }
            entries
                .iter_mut()
                .filter(|(_, v)| within(v))
                .any(|(_, v)| prune(v, at))
        }
    }
}

/// Reads a configuration file's tree into a [`Config`], noting every problem.
struct Checker<'a> {
    file: Arc<str>,
    findings: &'a mut Findings,
}

impl Checker<'_> {
    fn at(&self, line: usize, column: usize) -> Location {
        Location {
            file: self.file.clone(),
            line,
            column,
        }
    }

    fn at_value<T>(&self, value: &Located<T>) -> Location {
        self.at(value.line, value.column)
    }

    fn origin<T>(&self, value: &Located<T>) -> String {
        format!("{}:{}", self.file, value.line)
    }

    fn problem(&mut self, at: Location, message: impl Into<String>) {
        self.findings.at(Rule::ConfigInvalid, message, at);
    }

    /// The file's shape. serde stops at the first problem: each is reported where
    /// it is, the entry holding it left out, and the rest read again, so that one
    /// run names every problem (a file holds a few dozen entries at most).
    fn shape(&mut self, mut root: Node) -> FileShape {
        // serde's derive would take a list as the fields in order.
        if let NodeKind::Sequence(_) = root.kind {
            let at = self.at(root.line, root.column);
            let message = "invalid type: sequence, expected a mapping of rules, overrides, minSeverity, pools, output and format";
            self.problem(at, message);
            return FileShape::default();
        }
        loop {
            match tree_de::from_node::<Option<FileShape>>(&root) {
                Ok(shape) => return shape.unwrap_or_default(),
                Err(e) => {
                    let (line, column) = e.at.unwrap_or((root.line, root.column));
                    let at = self.at(line, column);
                    self.problem(at, e.message);
                    if !prune(&mut root, (line, column)) {
                        return FileShape::default();
                    }
                }
            }
        }
    }

    fn read(&mut self, shape: FileShape, config: &mut Config) {
        if let Some(rules) = shape.rules {
            config.rules = self.levels(rules.value);
        }
        if let Some(overrides) = shape.overrides {
            config.overrides = self.overrides(overrides.value);
        }
        if let Some(word) = shape.min_severity {
            config.min_severity = self.severity(&word).map(|value| Set {
                value,
                origin: self.origin(&word),
            });
        }
        if let Some(pools) = shape.pools {
            let origin = self.origin(&pools);
            let value = texts_with_places(pools)
                .iter()
                .filter_map(|text| self.path(text, &config.dir))
                .collect();
            config.pools = Some(Set { value, origin });
        }
        if let Some(output) = shape.output {
            config.output = self.output(&output, &config.dir).map(|value| Set {
                value,
                origin: self.origin(&output),
            });
        }
        if let Some(word) = shape.format {
            config.format = self.format(&word);
        }
    }

    /// `{RDG020: off, RDG013: error}`.
    fn levels(&mut self, entries: Entries) -> Levels {
        let mut levels = Levels::default();
        for (id, word) in entries.0 {
            let rule = match RuleInfo::by_id(&id.value) {
                Some(info) if info.syntax => {
                    let why = crate::diagnostics::policy::FIXED;
                    let at = self.at_value(&id);
                    self.problem(at, format!("{} cannot be configured: {why}", info.id));
                    continue;
                }
                Some(info) => info.rule,
                None => {
                    let at = self.at_value(&id);
                    let message = format!("no rule `{}`; `rdmagen rules` lists them", id.value);
                    self.problem(at, message);
                    continue;
                }
            };
            if levels.get(rule).is_some() {
                let at = self.at_value(&id);
                let id = rule.info().id;
                self.problem(
                    at,
                    format!("{id} is set twice (IDs are read without regard to case)"),
                );
                continue;
            }
            match Level::parse(&word.value) {
                Some(level) => levels.set(rule, level, self.origin(&word)),
                None => {
                    let at = self.at_value(&word);
                    let message = format!(
                        "`{}` is not a level: write one of {}",
                        word.value,
                        Level::NAMES.join(", ")
                    );
                    self.problem(at, message);
                }
            }
        }
        levels
    }

    /// `[{files: GLOB or [GLOB...], rules: {...}}]`.
    fn overrides(&mut self, items: Vec<Located<OverrideShape>>) -> Vec<PathOverride> {
        let mut overrides = Vec::new();
        for item in items {
            let at = self.at_value(&item);
            let OverrideShape { files, rules } = item.value;
            let patterns = match files {
                Some(files) => {
                    let at = self.at_value(&files);
                    let patterns = texts_with_places(files);
                    if patterns.is_empty() {
                        self.problem(
                            at,
                            "`files` names no pattern: the override would apply nowhere",
                        );
                    }
                    patterns
                }
                None => {
                    self.problem(
                        at.clone(),
                        "an override needs `files`: the glob patterns it applies to",
                    );
                    Vec::new()
                }
            };
            let levels = match rules {
                Some(rules) => self.levels(rules.value),
                None => {
                    self.problem(at, "an override needs `rules`: the levels it sets");
                    Levels::default()
                }
            };
            for pattern in patterns {
                match PathOverride::new(&pattern.value, levels.clone()) {
                    Ok(o) => overrides.push(o),
                    Err(why) => {
                        let at = self.at_value(&pattern);
                        let message =
                            format!("`{}` is not a glob pattern: {why}", shown(&pattern.value));
                        self.problem(at, message);
                    }
                }
            }
        }
        overrides
    }

    /// The output directory: a path inside the file's directory, never that directory
    /// itself (rendering swaps the whole directory) and never in `.git`.
    fn output(&mut self, text: &Located<String>, dir: &Path) -> Option<PathBuf> {
        let path = self.path(text, dir)?;
        let mut parts = Path::new(&text.value)
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
            let at = self.at_value(text);
            let message = format!(
                "output `{}` {why}: name a directory of its own, e.g. rendered/",
                text.value
            );
            self.problem(at, message);
            return None;
        }
        Some(path)
    }

    /// A path in the file: relative, inside the file's directory, taken from it.
    fn path(&mut self, text: &Located<String>, dir: &Path) -> Option<PathBuf> {
        let path = Path::new(&text.value);
        let inside = !text.value.is_empty()
            && path
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !inside {
            let at = self.at_value(text);
            let message = format!(
                "`{}` must be a relative path inside the configuration's directory (no `..`, not absolute)",
                text.value
            );
            self.problem(at, message);
            return None;
        }
        Some(dir.join(path))
    }

    fn severity(&mut self, word: &Located<String>) -> Option<Severity> {
        let severity = parse_severity(&word.value);
        if severity.is_none() {
            let at = self.at_value(word);
            let message = format!(
                "`{}` is not a severity: write info, warning or error",
                word.value
            );
            self.problem(at, message);
        }
        severity
    }

    fn format(&mut self, word: &Located<String>) -> Option<Set<Format>> {
        match Format::from_str(&word.value, false) {
            Ok(value) => Some(Set {
                value,
                origin: self.origin(word),
            }),
            Err(_) => {
                let names = format_names();
                let at = self.at_value(word);
                let message = format!(
                    "`{}` is not a format: write one of {}",
                    word.value,
                    names.join(", ")
                );
                self.problem(at, message);
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
}

pub fn show(
    settings: &super::Settings,
    io: &mut super::Streams<'_>,
) -> Result<(), crate::error::Error> {
    let text = settings.config.describe(&settings.reporting_policy());
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each problem of `text` as `LINE:COLUMN message`, in the order found.
    fn problems(text: &str) -> Vec<String> {
        let Err(invalid) = parse_text(Path::new(FILE_NAME), text) else {
            return Vec::new();
        };
        invalid
            .findings
            .iter()
            .map(|f| {
                let at = f.location.as_ref().expect("every problem is located");
                assert_eq!(&*at.file, FILE_NAME);
                format!("{}:{} {}", at.line, at.column, f.message)
            })
            .collect()
    }

    #[test]
    fn shape_errors_are_serdes_at_their_key_or_value() {
        assert_eq!(
            problems("rules: {}\nminseverity: error\n"),
            ["2:1 unknown key `minseverity`; did you mean minSeverity?"]
        );
        assert_eq!(
            problems("colour: never\n"),
            [
                "1:1 unknown key `colour`; the keys are rules, overrides, minSeverity, pools, output, format"
            ]
        );
        assert_eq!(
            problems("rules: [RDG020]\n"),
            ["1:8 invalid type: sequence, expected a mapping of rule IDs to levels"]
        );
        assert_eq!(
            problems("format: {json: yes}\n"),
            ["1:9 invalid type: map, expected a string"]
        );
        assert_eq!(
            problems("overrides:\n  - files: x\n    rule: {RDG020: off}\n"),
            [
                "3:5 unknown key `rule`; did you mean rules?",
                "2:5 an override needs `rules`: the levels it sets",
            ]
        );
        assert_eq!(
            problems("- rules\n"),
            [
                "1:1 invalid type: sequence, expected a mapping of rules, overrides, minSeverity, pools, output and format"
            ]
        );
    }

    #[test]
    fn every_problem_of_a_file_is_reported_at_once() {
        let text = "rules:\n  RDG020: of\n  RDG998: off\nformats: json\noutput: ../elsewhere\npools: [a, /etc]\nminSeverity: loud\n";
        assert_eq!(
            problems(text),
            [
                "4:1 unknown key `formats`; did you mean format?",
                "2:11 `of` is not a level: write one of off, info, warning, error",
                "3:3 no rule `RDG998`; `rdmagen rules` lists them",
                "7:14 `loud` is not a severity: write info, warning or error",
                "6:12 `/etc` must be a relative path inside the configuration's directory (no `..`, not absolute)",
                "5:9 `../elsewhere` must be a relative path inside the configuration's directory (no `..`, not absolute)",
            ]
        );
        assert_eq!(
            problems("overrides:\n  - files: []\n  - rules: {rdg020: off, RDG020: error}\n"),
            [
                "2:12 `files` names no pattern: the override would apply nowhere",
                "2:5 an override needs `rules`: the levels it sets",
                "3:5 an override needs `files`: the glob patterns it applies to",
                "3:26 RDG020 is set twice (IDs are read without regard to case)",
            ]
        );
        assert_eq!(
            problems("rules: {}\n---\nrules: {}\n"),
            ["3:1 a configuration is one YAML document; this file has several"]
        );
    }

    #[test]
    fn values_keep_where_they_were_set() {
        let text = "# rules\n\nformat: brief\npools:\n  - a\n  - b\noutput: out\nminSeverity: warning\nrules: {RDG020: off}\n";
        let config = parse_text(Path::new("repo/.rdmagen.yaml"), text).unwrap_or_else(|_| panic!());
        let format = config.format.unwrap();
        assert_eq!(
            (format.value, format.origin.as_str()),
            (Format::Brief, "repo/.rdmagen.yaml:3")
        );
        let pools = config.pools.unwrap();
        assert_eq!(
            pools.value,
            [PathBuf::from("repo/a"), PathBuf::from("repo/b")]
        );
        assert_eq!(pools.origin, "repo/.rdmagen.yaml:5");
        assert_eq!(config.output.unwrap().value, PathBuf::from("repo/out"));
        assert_eq!(config.min_severity.unwrap().value, Severity::Warning);
        let rules: Vec<_> = config
            .rules
            .iter()
            .map(|(r, l, o)| (r.info().id, l, o.to_owned()))
            .collect();
        assert_eq!(
            rules,
            [("RDG020", Level::Off, "repo/.rdmagen.yaml:9".to_owned())]
        );
        // Empty, null and comment-only files configure nothing.
        for text in ["", "~\n", "# nothing\n", "rules:\noverrides:\n"] {
            assert!(problems(text).is_empty(), "{text:?}");
        }
    }
}
