//! What the user says about rules: a level per rule (the config file, its per-path
//! overrides, the command line), a floor (`--min-severity`), and suppressions written
//! beside what they suppress (a `# rdmagen: ignore=` comment, an `rdmagen.io/ignore`
//! annotation). Every finding is judged here, and nowhere else is one re-graded or
//! dropped. Findings that say a file cannot be read at all (`RuleInfo::syntax`) are
//! never judged: they decide the exit code 2 and cannot be turned off.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::diagnostics::finding::{Finding, Findings};
use crate::diagnostics::rule::{Rule, RuleInfo, Severity};
use crate::diagnostics::source::Location;

/// Why a rule that is not [`RuleInfo::configurable`] is not.
pub const FIXED: &str = "it says a file could not be read, or what rdmagen cannot do as written, and turning it off would change the output without a word";

/// The annotation that suppresses rules for the object whose `metadata` carries it.
pub const IGNORE_ANNOTATION: &str = "rdmagen.io/ignore";

/// What a rule is set to: off, or reported at a severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Off,
    On(Severity),
}

impl Level {
    /// The words a level is written with, in the config file and on the command line.
    pub const NAMES: [&'static str; 4] = ["off", "info", "warning", "error"];

    pub fn parse(text: &str) -> Option<Level> {
        Some(match text {
            "off" => Level::Off,
            "info" => Level::On(Severity::Info),
            "warning" => Level::On(Severity::Warning),
            "error" => Level::On(Severity::Error),
            _ => return None,
        })
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Level::Off => f.write_str("off"),
            Level::On(severity) => severity.fmt(f),
        }
    }
}

/// A severity written as `info`, `warning` or `error` (`--min-severity`).
pub fn parse_severity(text: &str) -> Option<Severity> {
    match Level::parse(text)? {
        Level::On(severity) => Some(severity),
        Level::Off => None,
    }
}

/// Levels by rule, each with where it was set (`rdmagen config` prints it).
#[derive(Clone, Debug, Default)]
pub struct Levels {
    by_rule: BTreeMap<Rule, (Level, String)>,
}

impl Levels {
    /// Set `rule` to `level`; a later setting of the same rule wins.
    pub fn set(&mut self, rule: Rule, level: Level, origin: impl Into<String>) {
        self.by_rule.insert(rule, (level, origin.into()));
    }

    pub fn get(&self, rule: Rule) -> Option<Level> {
        self.by_rule.get(&rule).map(|(level, _)| *level)
    }

    /// Every rule set, in catalogue order, with its level and origin.
    pub fn iter(&self) -> impl Iterator<Item = (Rule, Level, &str)> {
        self.by_rule
            .iter()
            .map(|(rule, (level, origin))| (*rule, *level, origin.as_str()))
    }
}

/// A path pattern as rdmagen reads one (`--exclude`, the configuration's overrides):
/// `*` and `?` stay within one directory, `**` crosses any number, `\` escapes.
pub fn path_glob(pattern: &str) -> Result<globset::Glob, String> {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| e.kind().to_string())
}

/// Rule levels for the files a glob matches.
#[derive(Clone, Debug)]
pub struct PathOverride {
    pub pattern: String,
    matcher: globset::GlobSet,
    pub levels: Levels,
}

/// The longest override pattern: a path glob is short, and each compiles to a regex
/// whose size grows with it (a 400 KB pattern made globset give up).
pub const MAX_PATTERN: usize = 1024;

impl PathOverride {
    /// `pattern` is matched against a path relative to the config file's directory,
    /// written with `/`; `*` stays within one directory, `**` crosses any number.
    pub fn new(pattern: &str, levels: Levels) -> Result<PathOverride, String> {
        if pattern.len() > MAX_PATTERN {
            return Err(format!("it is longer than {MAX_PATTERN} bytes"));
        }
        if pattern.starts_with('/') || pattern.split('/').any(|part| part == "..") {
            return Err("it must be relative to the configuration's directory, without `..`: it would never match".to_owned());
        }
        let glob = path_glob(pattern)?;
        // A set's build reports what a lone matcher's compile would panic on.
        let matcher = globset::GlobSetBuilder::new()
            .add(glob)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(PathOverride {
            pattern: pattern.to_owned(),
            matcher,
            levels,
        })
    }
}

/// Every level the user set, and the floor below which findings are not shown.
#[derive(Clone, Debug)]
pub struct Policy {
    /// The directory override patterns are relative to (the config file's), absolute.
    root: PathBuf,
    /// The working directory, to place a finding's relative file name.
    cwd: PathBuf,
    pub config: Levels,
    pub overrides: Vec<PathOverride>,
    pub command_line: Levels,
    pub min_severity: Severity,
    /// Whether `min_severity` is the configuration file's (`minSeverity`), not the
    /// command line's: a pull request may have written it.
    pub floor_from_config: bool,
    /// The configuration file's name, to say what it hid (`.rdmagen.yaml`).
    pub config_name: String,
    /// Whether the run writes output that waiving an error could change (render,
    /// validate, detect, dockerfile): then the rules `RuleInfo::configurable` refuses
    /// keep their level. lint and image-check only report, so there every rule but a
    /// file that cannot be read may be waived.
    pub renders: bool,
}

impl Default for Policy {
    fn default() -> Self {
        let cwd = std::env::current_dir().unwrap_or_default();
        Policy {
            root: cwd.clone(),
            cwd,
            config: Levels::default(),
            overrides: Vec::new(),
            command_line: Levels::default(),
            min_severity: Severity::Info,
            floor_from_config: false,
            config_name: String::new(),
            renders: true,
        }
    }
}

impl Policy {
    /// Overrides' patterns are relative to `root` (a relative `root` is taken from the
    /// working directory).
    pub fn with_root(mut self, root: &Path) -> Policy {
        self.root = normalize(&self.cwd.join(root));
        self
    }

    /// Whether `rule` keeps its catalogue level in this run, whatever is configured.
    pub fn fixed(&self, rule: Rule) -> bool {
        let info = rule.info();
        info.syntax || (self.renders && !info.configurable())
    }

    /// Every configured level this run must refuse (a rule [`Policy::fixed`] here),
    /// as `RULE (where it was set)`.
    pub fn refused(&self) -> Vec<String> {
        let all = self
            .config
            .iter()
            .chain(self.overrides.iter().flat_map(|o| o.levels.iter()))
            .chain(self.command_line.iter());
        all.filter(|(rule, ..)| self.fixed(*rule))
            .map(|(rule, _, origin)| format!("{} ({origin})", rule.info().id))
            .collect()
    }

    /// The level of `rule` in `file`: the command line over the overrides (the last
    /// matching one first) over the config file's `rules` over the catalogue.
    pub fn level(&self, rule: Rule, file: Option<&str>) -> Level {
        if let Some(level) = self.command_line.get(rule) {
            return level;
        }
        let file = file.filter(|_| !self.overrides.is_empty());
        if let Some(relative) = file.and_then(|f| self.relative(f)) {
            let set = self
                .overrides
                .iter()
                .rev()
                .filter(|o| o.matcher.is_match(&relative))
                .find_map(|o| o.levels.get(rule));
            if let Some(level) = set {
                return level;
            }
        }
        self.config
            .get(rule)
            .unwrap_or(Level::On(rule.info().severity))
    }

    /// The grade of `rule` before the configuration file has its say (the command
    /// line's level, else the catalogue's), when that grade is warning or error: what
    /// `--deny-warnings` judges, whatever the file hides.
    fn graded_before_config(&self, rule: Rule) -> Option<Severity> {
        let level = self
            .command_line
            .get(rule)
            .unwrap_or(Level::On(rule.info().severity));
        match level {
            Level::On(severity) if severity <= Severity::Warning => Some(severity),
            _ => None,
        }
    }

    /// `file` (as findings name it: relative to the working directory, or absolute)
    /// relative to the root, or None when it is outside it.
    fn relative(&self, file: &str) -> Option<String> {
        let absolute = normalize(&self.cwd.join(file));
        let relative = absolute.strip_prefix(&self.root).ok()?;
        Some(relative.to_string_lossy().replace('\\', "/"))
    }

    /// Judge the findings from index `from` on: drop those whose rule is off, those
    /// below the floor and those a suppression covers (noting it was used); re-grade the
    /// rest. Judging a finding twice changes nothing more. Returns the suppressions
    /// used here, each with the rule it suppressed.
    ///
    /// A warning or error (by the catalogue or the command line) that the
    /// configuration file turns off, grades info or puts below its `minSeverity` is
    /// also counted as hidden (`Findings::hidden`): the file may be a pull request's,
    /// and `--deny-warnings` is CI's. A suppression at the line is not counted: it
    /// sits in the diff beside what it waives, with its reason.
    pub fn apply(
        &self,
        findings: &mut Findings,
        from: usize,
        suppressions: &[&Suppressions],
    ) -> BTreeSet<(Location, Rule)> {
        let mut used = BTreeSet::new();
        let mut hidden = Vec::new();
        let by_config = |how: &str| format!("{how} by {}", self.config_name);
        findings.retain_from(from, |f| {
            if self.fixed(f.rule) {
                return true;
            }
            let file = f.location.as_ref().map(|at| &*at.file);
            let judged = self.graded_before_config(f.rule);
            let graded_info = match self.level(f.rule, file) {
                Level::Off => {
                    hidden.extend(judged.map(|s| (s, by_config("turned off"))));
                    return false;
                }
                Level::On(severity) => {
                    // Only the first judging grades a finding info, so it is counted once.
                    let graded = judged.is_some()
                        && severity == Severity::Info
                        && f.severity != Severity::Info;
                    f.severity = severity;
                    graded
                }
            };
            // A suppression is used whether or not the floor would hide the finding.
            if let Some(by) = suppressions.iter().find_map(|s| s.covering(f)) {
                used.insert((by.clone(), f.rule));
                return false;
            }
            // Severity orders Error < Warning < Info.
            let shown = f.severity <= self.min_severity;
            if let Some(severity) = judged {
                if graded_info {
                    hidden.push((severity, by_config("graded info")));
                } else if !shown && self.floor_from_config {
                    hidden.push((severity, "below minSeverity, not shown".to_owned()));
                }
            }
            shown
        });
        findings.used_suppressions.extend(used.iter().cloned());
        for (severity, how) in hidden {
            findings.hide(severity, how);
        }
        used
    }

    /// After every finding of a run is judged: what is wrong with the suppressions
    /// themselves (one that suppresses nothing, one with no reason, an unknown rule),
    /// judged by level and floor like any finding.
    pub fn finish(&self, findings: &mut Findings, suppressions: &Suppressions) {
        let from = findings.len();
        for problem in &suppressions.problems {
            findings.add(problem.clone());
        }
        for s in suppressions.iter() {
            let (fixed, waivable): (Vec<Rule>, Vec<Rule>) =
                s.rules.iter().partition(|rule| self.fixed(**rule));
            for rule in fixed {
                let message = format!("{} cannot be suppressed here: {FIXED}", rule.info().id);
                findings.at(Rule::SuppressionUnknownRule, message, s.at.clone());
            }
            let unused: Vec<&str> = waivable
                .iter()
                .filter(|rule| !findings.used_suppressions.contains(&(s.at.clone(), **rule)))
                .map(|rule| rule.info().id)
                .collect();
            if !unused.is_empty() {
                let message = format!(
                    "this suppression of {} suppresses nothing: no such finding here; remove it",
                    unused.join(", ")
                );
                findings.at(Rule::UnusedSuppression, message, s.at.clone());
            }
            if !s.has_reason {
                findings.at(
                    Rule::SuppressionWithoutReason,
                    "a suppression without a reason: say why after the rule IDs",
                    s.at.clone(),
                );
            }
        }
        self.apply(findings, from, &[]);
    }
}

/// `path` with `.` dropped and `..` taken lexically, as the user means it (symlinks are
/// not resolved: a finding's file is named as it was given).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// One suppression: which rules, for which findings, and where it is written.
#[derive(Clone, Debug)]
pub struct Suppression {
    pub at: Location,
    pub rules: Vec<Rule>,
    pub has_reason: bool,
    scope: Scope,
}

/// Which findings a suppression covers.
#[derive(Clone, Debug)]
enum Scope {
    /// Findings in `file` from line `first` to `last`: a comment's own line and the
    /// next, or the lines of the object an annotation sits on.
    Lines {
        file: Arc<str>,
        first: usize,
        last: usize,
    },
    /// Every finding judged with it: a job's annotation, for what rendering the job
    /// finds wherever it points (a value from the pool points into the pool's file).
    Everything,
}

/// The suppressions of a run, and the problems found in them.
#[derive(Clone, Debug, Default)]
pub struct Suppressions {
    /// By the file whose lines they cover: a run may hold thousands, and each
    /// finding looks only at its own file's.
    by_file: BTreeMap<Arc<str>, Vec<Suppression>>,
    /// Those that cover every finding judged with them.
    everywhere: Vec<Suppression>,
    problems: Vec<Finding>,
}

impl Suppressions {
    pub fn is_empty(&self) -> bool {
        self.by_file.is_empty() && self.everywhere.is_empty() && self.problems.is_empty()
    }

    /// The `# rdmagen: ignore=RDG080,RDG081 reason` comments of a YAML file (YAML
    /// inputs, manifests): a `#` at the start of a line or after a space or tab, as in
    /// YAML, and never one inside a quoted or block scalar, which is data.
    /// `rdmagen ignore=` without the colon is accepted too.
    pub fn comments(&mut self, file: &Arc<str>, text: &str) {
        // Most files have none: look for the word before looking at lines.
        if !text.contains("ignore=") {
            return;
        }
        self.add_comments(file, yaml_comments(text));
    }

    /// The suppression comments of a Dockerfile: Docker's comments are whole lines
    /// (a `#` later in a line is part of the instruction).
    pub fn dockerfile_comments(&mut self, file: &Arc<str>, text: &str) {
        if !text.contains("ignore=") {
            return;
        }
        let comments = lines(text).enumerate().filter_map(|(index, line)| {
            let hash = line.len() - line.trim_start().len();
            line[hash..].starts_with('#').then_some((index, hash, line))
        });
        self.add_comments(file, comments.collect());
    }

    /// `comments`: (line index, byte offset of the `#`, the line).
    fn add_comments(&mut self, file: &Arc<str>, comments: Vec<(usize, usize, &str)>) {
        for (index, hash, line) in comments {
            let Some(list) = ignore_list(&line[hash + 1..]) else {
                continue;
            };
            let column = line[..hash].chars().count() + 1;
            let at = Location {
                file: file.clone(),
                line: index + 1,
                column,
            };
            let scope = Scope::Lines {
                file: file.clone(),
                first: index + 1,
                last: index + 2,
            };
            self.add(list, at, scope);
        }
    }

    /// An `rdmagen.io/ignore` annotation's `value`, written at `at`, covering the lines
    /// `first..=last` of `at`'s file (the annotated object).
    pub fn annotation(&mut self, value: &str, at: Location, first: usize, last: usize) {
        let scope = Scope::Lines {
            file: at.file.clone(),
            first,
            last,
        };
        self.add(value, at, scope);
    }

    /// A job's annotation, covering every finding judged with it. Problems in it are
    /// not recorded: the same annotation is also read as an object's
    /// ([`Suppressions::annotation`]), and reported there.
    pub fn everything(value: &str, at: Location) -> Suppressions {
        let mut own = Suppressions::default();
        own.add(value, at, Scope::Everything);
        own.problems.clear();
        own
    }

    /// The suppressions `used` (where written, and the rule) again, covering every
    /// finding judged with them: a job's rendered manifest is checked again by the
    /// rules its input was, and what the user suppressed there stays suppressed.
    pub fn carried(used: &BTreeSet<(Location, Rule)>) -> Suppressions {
        let everywhere = used
            .iter()
            .map(|(at, rule)| Suppression {
                at: at.clone(),
                rules: vec![*rule],
                has_reason: true,
                scope: Scope::Everything,
            })
            .collect();
        Suppressions {
            everywhere,
            ..Suppressions::default()
        }
    }

    pub fn extend(&mut self, other: Suppressions) {
        for (file, items) in other.by_file {
            self.by_file.entry(file).or_default().extend(items);
        }
        self.everywhere.extend(other.everywhere);
        self.problems.extend(other.problems);
    }

    /// `list` is `RDG031,RDG047 reason…`: rule IDs separated by commas (spaces after a
    /// comma allowed), then the reason.
    fn add(&mut self, list: &str, at: Location, scope: Scope) {
        let (ids, reason) = split_ids(list);
        let names_none = ids.is_empty();
        let mut rules = Vec::new();
        for id in ids {
            match RuleInfo::by_id(id) {
                Some(info) if !info.syntax => rules.push(info.rule),
                Some(info) => self.problems.push(Finding::new(
                    Rule::SuppressionUnknownRule,
                    format!("{} cannot be suppressed: {}", info.id, FIXED),
                    Some(at.clone()),
                )),
                None => self.problems.push(Finding::new(
                    Rule::SuppressionUnknownRule,
                    format!("no rule `{id}` to suppress; `rdmagen rules` lists them"),
                    Some(at.clone()),
                )),
            }
        }
        let first_word = reason.split_whitespace().next().unwrap_or("");
        // `get`: the word may start with a multi-byte character.
        if first_word.len() > 3
            && first_word
                .get(..3)
                .is_some_and(|p| p.eq_ignore_ascii_case("RDG"))
        {
            self.problems.push(Finding::new(
                Rule::SuppressionUnknownRule,
                format!("`{first_word}` is read as the reason: separate rule IDs with commas"),
                Some(at.clone()),
            ));
        }
        if names_none {
            self.problems.push(Finding::new(
                Rule::SuppressionUnknownRule,
                "a suppression names no rule: write `ignore=RDG080` (IDs separated by commas)",
                Some(at.clone()),
            ));
        }
        let suppression = Suppression {
            at,
            rules,
            has_reason: !reason.is_empty(),
            scope,
        };
        match &suppression.scope {
            Scope::Lines { file, .. } => self
                .by_file
                .entry(file.clone())
                .or_default()
                .push(suppression),
            Scope::Everything => self.everywhere.push(suppression),
        }
    }

    /// The suppression that covers `finding`, by where it is written.
    fn covering(&self, finding: &Finding) -> Option<&Location> {
        let in_file = finding
            .location
            .as_ref()
            .and_then(|at| self.by_file.get(&at.file))
            .into_iter()
            .flatten();
        self.everywhere
            .iter()
            .chain(in_file)
            .find(|s| s.rules.contains(&finding.rule) && s.covers(finding))
            .map(|s| &s.at)
    }

    /// Every suppression, in file order.
    fn iter(&self) -> impl Iterator<Item = &Suppression> {
        self.by_file.values().flatten().chain(&self.everywhere)
    }
}

impl Suppression {
    fn covers(&self, finding: &Finding) -> bool {
        match &self.scope {
            Scope::Everything => true,
            Scope::Lines { file, first, last } => finding
                .location
                .as_ref()
                .is_some_and(|at| at.file == *file && (*first..=*last).contains(&at.line)),
        }
    }
}

/// The text after `ignore=` when a comment's text (after its `#`) is a suppression.
fn ignore_list(comment: &str) -> Option<&str> {
    let rest = comment.trim_start().strip_prefix("rdmagen")?;
    let rest = rest.strip_prefix(':').unwrap_or(rest).trim_start();
    rest.strip_prefix("ignore=")
}

/// The lines of `text`, broken at LF, CRLF or a lone CR (YAML's line breaks).
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = match &rest.as_bytes()[end..] {
            [b'\r', b'\n', ..] => 2,
            [] => 0,
            _ => 1,
        };
        rest = &rest[end + skip..];
        Some(line)
    })
}

/// The comments of a YAML text: (line index, byte offset of the `#`, the line). A
/// `#` starts one at the start of a line or after a space or tab, outside quotes, and
/// not in a block scalar's lines (`key: |` and the lines indented deeper below it).
fn yaml_comments(text: &str) -> Vec<(usize, usize, &str)> {
    let mut comments = Vec::new();
    let mut quote: Option<u8> = None;
    // The indentation of the line that opened the block scalar being read.
    let mut block: Option<usize> = None;
    for (index, line) in lines(text).enumerate() {
        let indent = line.len() - line.trim_start_matches(' ').len();
        if let Some(parent) = block {
            if line.trim().is_empty() || indent > parent {
                continue;
            }
            block = None;
        }
        let bytes = line.as_bytes();
        let mut comment = None;
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            let after_space = i == 0 || matches!(bytes[i - 1], b' ' | b'\t');
            match quote {
                Some(b'"') if c == b'\\' => i += 1,
                Some(b'\'') if c == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 1,
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None if c == b'#' && after_space => {
                    comment = Some(i);
                    break;
                }
                None if (c == b'"' || c == b'\'')
                    && (after_space || matches!(bytes[i - 1], b'[' | b'{' | b',' | b':')) =>
                {
                    quote = Some(c);
                }
                None => {}
            }
            i += 1;
        }
        let content = &line[..comment.unwrap_or(line.len())];
        if quote.is_none() && opens_block_scalar(content) {
            block = Some(indent);
        }
        if let Some(hash) = comment {
            comments.push((index, hash, line));
        }
    }
    comments
}

/// Whether a line's content ends with a block scalar's header: `|` or `>`, with an
/// optional chomping and indentation indicator, after `: `, `- ` or alone.
fn opens_block_scalar(content: &str) -> bool {
    let content = content.trim_end();
    let header = content.trim_end_matches(['-', '+', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    let Some(before) = header
        .strip_suffix('|')
        .or_else(|| header.strip_suffix('>'))
    else {
        return false;
    };
    let before = before.trim_end();
    before.is_empty() || before.ends_with(':') || before.ends_with('-')
}

/// The rule IDs at the start of `list` and the reason after them.
fn split_ids(list: &str) -> (Vec<&str>, &str) {
    let mut ids = Vec::new();
    let mut rest = list.trim_start().trim_start_matches([',', ' ', '\t']);
    loop {
        let end = rest
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(rest.len());
        let (id, after) = rest.split_at(end);
        if id.is_empty() {
            break;
        }
        ids.push(id);
        let after_comma = after.trim_start().strip_prefix(',');
        match after_comma {
            Some(next) => rest = next.trim_start_matches([',', ' ', '\t']),
            None => {
                rest = after;
                break;
            }
        }
    }
    (ids, rest.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: usize) -> Location {
        Location {
            file: Arc::from("job.yaml"),
            line,
            column: 5,
        }
    }

    #[test]
    fn ids_and_reason_are_split() {
        assert_eq!(
            split_ids("RDG031,RDG047 the operator is patched"),
            (vec!["RDG031", "RDG047"], "the operator is patched")
        );
        assert_eq!(split_ids("RDG031, RDG047"), (vec!["RDG031", "RDG047"], ""));
        assert_eq!(
            split_ids("RDG020,,RDG021 x"),
            (vec!["RDG020", "RDG021"], "x")
        );
        assert_eq!(split_ids("RDG080"), (vec!["RDG080"], ""));
        assert_eq!(split_ids(""), (vec![], ""));
    }

    /// The suppressions `comments` finds in `text`: (line, column, list).
    fn found(text: &str) -> Vec<(usize, usize, String)> {
        yaml_comments(text)
            .into_iter()
            .filter_map(|(index, hash, line)| {
                let list = ignore_list(&line[hash + 1..])?;
                Some((index + 1, line[..hash].chars().count() + 1, list.to_owned()))
            })
            .collect()
    }

    #[test]
    fn a_comment_starts_at_a_hash_after_space_or_at_the_start() {
        assert_eq!(
            found("  NCCL_IB_TC: \"106\" # rdmagen: ignore=RDG020 QoS is ours"),
            [(1, 21, "RDG020 QoS is ours".to_owned())]
        );
        assert_eq!(
            found("# rdmagen ignore=RDG080"),
            [(1, 1, "RDG080".to_owned())]
        );
        // Inside a word it is not a comment (YAML: `a#b` is one scalar).
        assert!(found("value: a#rdmagen: ignore=RDG020").is_empty());
        assert!(found("# rdmagen is great").is_empty());
    }

    #[test]
    fn quoted_and_block_scalars_are_data_not_comments() {
        let text = "command: [\"bash\", \"-c\", \"echo hi # rdmagen: ignore=RDG020 x\"]\n\
                    other: 'it''s # rdmagen: ignore=RDG020 x'\n\
                    script: |\n  # rdmagen: ignore=RDG020 in the script\n  echo\n\
                    multi: \"one\n  # rdmagen: ignore=RDG020 still quoted\"\n\
                    # rdmagen: ignore=RDG047 a real one\n\
                    plain: a # rdmagen: ignore=RDG071 and this\n";
        assert_eq!(
            found(text),
            [
                (8, 1, "RDG047 a real one".to_owned()),
                (9, 10, "RDG071 and this".to_owned())
            ]
        );
        // A lone CR breaks lines, as YAML says.
        assert_eq!(
            found("a: 1\r# rdmagen: ignore=RDG047 x\r"),
            [(2, 1, "RDG047 x".to_owned())]
        );
    }

    #[test]
    fn dockerfile_comments_are_whole_lines() {
        let mut s = Suppressions::default();
        let file: Arc<str> = Arc::from("Dockerfile");
        s.dockerfile_comments(
            &file,
            "RUN echo \"x # rdmagen: ignore=RDG080 in a string\"\n  # rdmagen: ignore=RDG081 real\n",
        );
        let lines: Vec<usize> = s.iter().map(|x| x.at.line).collect();
        assert_eq!(lines, [2]);
    }

    #[test]
    fn a_comment_covers_its_line_and_the_next() {
        let mut s = Suppressions::default();
        let file: Arc<str> = Arc::from("job.yaml");
        s.comments(&file, "a: 1\n# rdmagen: ignore=RDG020 why\nb: 2\nc: 3\n");
        let finding = |line| Finding::new(Rule::IbTcSet, "m", Some(at(line)));
        assert!(s.covering(&finding(2)).is_some());
        assert!(s.covering(&finding(3)).is_some());
        assert!(s.covering(&finding(1)).is_none());
        assert!(s.covering(&finding(4)).is_none());
        assert!(
            s.covering(&Finding::new(Rule::ImageNcclEnv, "m", Some(at(3))))
                .is_none()
        );
    }

    #[test]
    fn levels_come_from_the_command_line_then_overrides_then_config() {
        let mut policy = Policy::default().with_root(Path::new("/repo"));
        policy.cwd = PathBuf::from("/repo");
        policy.config.set(Rule::IbTcSet, Level::Off, "config");
        let mut legacy = Levels::default();
        legacy.set(Rule::IbTcSet, Level::On(Severity::Warning), "override");
        policy
            .overrides
            .push(PathOverride::new("legacy/**", legacy).unwrap());
        assert_eq!(policy.level(Rule::IbTcSet, Some("jobs/a.yaml")), Level::Off);
        assert_eq!(
            policy.level(Rule::IbTcSet, Some("./legacy/x/a.yaml")),
            Level::On(Severity::Warning)
        );
        assert_eq!(
            policy.level(Rule::IbTcSet, Some("/elsewhere/legacy/a.yaml")),
            Level::Off
        );
        policy
            .command_line
            .set(Rule::IbTcSet, Level::On(Severity::Error), "--severity");
        assert_eq!(
            policy.level(Rule::IbTcSet, Some("legacy/a.yaml")),
            Level::On(Severity::Error)
        );
    }

    #[test]
    fn judging_drops_regrades_and_records_suppressions() {
        let mut policy = Policy::default();
        policy
            .config
            .set(Rule::ImageNcclEnv, Level::On(Severity::Error), "config");
        policy.config.set(Rule::NoRunPolicy, Level::Off, "config");
        let mut suppressions = Suppressions::default();
        suppressions.comments(
            &Arc::from("job.yaml"),
            "# rdmagen: ignore=RDG020,RDG013\nx: 1\n",
        );
        let mut findings = Findings::default();
        findings.push(Rule::ImageNcclEnv, "env", Some(at(9)));
        findings.push(Rule::NoRunPolicy, "runPolicy", Some(at(9)));
        findings.push(Rule::IbTcSet, "tc", Some(at(2)));
        findings.push(Rule::YamlSyntax, "syntax", Some(at(2)));
        policy.apply(&mut findings, 0, &[&suppressions]);
        let left: Vec<(Rule, Severity)> = findings.iter().map(|f| (f.rule, f.severity())).collect();
        assert_eq!(
            left,
            [
                (Rule::ImageNcclEnv, Severity::Error),
                (Rule::YamlSyntax, Severity::Error)
            ]
        );
        policy.finish(&mut findings, &suppressions);
        let added: Vec<Rule> = findings.iter().skip(2).map(|f| f.rule).collect();
        assert_eq!(
            added,
            [Rule::UnusedSuppression, Rule::SuppressionWithoutReason]
        );
        assert!(findings.iter().nth(2).unwrap().message.contains("RDG013"));
        assert!(!findings.iter().nth(2).unwrap().message.contains("RDG020"));
    }

    #[test]
    fn the_floor_drops_what_is_below_it() {
        let policy = Policy {
            min_severity: Severity::Warning,
            ..Policy::default()
        };
        let mut findings = Findings::default();
        findings.push(Rule::GidIndexInPod, "info", None);
        findings.push(Rule::ImageNcclEnv, "warning", None);
        policy.apply(&mut findings, 0, &[]);
        assert_eq!(findings.len(), 1);
    }

    #[test]
    fn unknown_and_syntax_ids_are_problems() {
        let mut s = Suppressions::default();
        s.comments(
            &Arc::from("a.yaml"),
            "# rdmagen: ignore=RDG999,RDG001 x\n# rdmagen: ignore=\n",
        );
        let messages: Vec<&str> = s.problems.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        assert!(messages[0].contains("RDG999"));
        assert!(messages[1].contains("RDG001 cannot be suppressed"));
        assert!(messages[2].contains("names no rule"));
    }

    /// A reason may start with any character (the lint fuzzer panicked on `th混合e`,
    /// whose third byte is inside a character); only `RDG…` words are flagged.
    #[test]
    fn a_reason_starting_with_a_multi_byte_character_is_a_reason() {
        let mut s = Suppressions::default();
        s.comments(
            &Arc::from("a.yaml"),
            "# rdmagen: ignore=RDG047 th混合e vendor asked\n# rdmagen: ignore=RDG047 混合\n# rdmagen: ignore=RDG047 rdg020 too\n",
        );
        let messages: Vec<&str> = s.problems.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages,
            ["`rdg020` is read as the reason: separate rule IDs with commas"]
        );
    }
}
