//! Findings: a rule, the message for this occurrence and where it happened. Every
//! check reports one: input checks at a file span, checks of a rendered or linted
//! object at a JSON Pointer into it (and, once the object is placed, a file span too),
//! capture readers at a line (a span at column 1).

use crate::diagnostics::rule::{Rule, Severity};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use crate::diagnostics::source::Location;

#[derive(Clone, Debug)]
pub struct Finding {
    pub rule: Rule,
    pub message: String,
    pub location: Option<Location>,
    /// Where in a rendered or linted object (RFC 6901 JSON Pointer, "" for the whole
    /// object), for checks that judge a value rather than a file. Human messages still
    /// spell it out where they always have, so output is unchanged.
    pub pointer: Option<String>,
    /// The rule's severity, unless the configuration re-grades it (`policy`).
    pub(super) severity: Severity,
    /// For the "and N more" finding that [`Findings::shown`] writes in place of those
    /// over [`SHOWN_PER_RULE_AND_FILE`]: how many it stands for. 0 for any other.
    not_shown: usize,
}

/// How many findings of one rule in one file are shown; the rest become one "and N
/// more" finding at the first of them. A 10 MB Dockerfile of `ENV NCCL_IB_HCA<i>=x`
/// lines made 500 001 warnings and 228 MB of output (issue 22): no reader gets past
/// the first hundred of one rule, and the count still says how far the problem goes.
pub const SHOWN_PER_RULE_AND_FILE: usize = 100;

/// The longest message a finding keeps, in characters. Messages quote what inputs
/// wrote, and an input may hold a megabyte on one line; the checks that quote cut
/// their quotes shorter, this is the bound whatever a check forgets.
pub const MAX_MESSAGE: usize = 2000;

impl Finding {
    pub fn new(rule: Rule, message: impl Into<String>, location: Option<Location>) -> Self {
        let mut message = message.into();
        if let Some((cut, _)) = message.char_indices().nth(MAX_MESSAGE) {
            message.truncate(cut);
            message.push('…');
        }
        Finding {
            rule,
            message,
            location,
            pointer: None,
            severity: rule.info().severity,
            not_shown: 0,
        }
    }

    /// A finding at `pointer` inside an object that has no file position yet.
    pub fn at_pointer(rule: Rule, message: impl Into<String>, pointer: impl Into<String>) -> Self {
        Finding {
            pointer: Some(pointer.into()),
            ..Finding::new(rule, message, None)
        }
    }

    pub fn severity(&self) -> Severity {
        self.severity
    }

    /// How many findings this one counts for: 1, or for an "and N more" finding, N.
    fn weight(&self) -> usize {
        self.not_shown.max(1)
    }
}

/// Findings collected over a whole run, in the order they were made, and which
/// suppressions they met (so that one that suppresses nothing can be reported).
#[derive(Debug, Default)]
pub struct Findings {
    items: Vec<Finding>,
    pub(super) used_suppressions: BTreeSet<(Location, Rule)>,
    /// Findings the catalogue or the command line grades warning or error that the
    /// configuration file hid or graded info, by that grade and how (`turned off by
    /// .rdmagen.yaml`): `--deny-warnings` still counts them.
    hidden: BTreeMap<(Severity, String), usize>,
}

impl Findings {
    pub fn push(&mut self, rule: Rule, message: impl Into<String>, location: Option<Location>) {
        self.items.push(Finding::new(rule, message, location));
    }

    /// A finding made elsewhere, e.g. by a check that returns its own list.
    pub fn add(&mut self, finding: Finding) {
        self.items.push(finding);
    }

    pub fn at(&mut self, rule: Rule, message: impl Into<String>, location: Location) {
        self.push(rule, message, Some(location));
    }

    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    /// Findings of `severity`, counting those an "and N more" finding stands for.
    pub fn count(&self, severity: Severity) -> usize {
        self.items
            .iter()
            .filter(|f| f.severity() == severity)
            .map(Finding::weight)
            .sum()
    }

    /// Errors among the findings from index `from` on.
    pub fn errors_from(&self, from: usize) -> usize {
        self.items
            .iter()
            .skip(from)
            .filter(|f| f.severity() == Severity::Error)
            .map(Finding::weight)
            .sum()
    }

    pub fn has_syntax_errors(&self) -> bool {
        self.items.iter().any(|f| f.rule.info().syntax)
    }

    pub fn iter(&self) -> impl Iterator<Item = &Finding> {
        self.items.iter()
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// No finding, and nothing the policy noted (used suppressions, hidden findings):
    /// dropping it loses nothing.
    pub fn is_blank(&self) -> bool {
        self.items.is_empty() && self.used_suppressions.is_empty() && self.hidden.is_empty()
    }

    pub fn extend(&mut self, other: Findings) {
        self.items.extend(other.items);
        self.used_suppressions.extend(other.used_suppressions);
        for (key, count) in other.hidden {
            *self.hidden.entry(key).or_default() += count;
        }
    }

    /// Note one finding graded `severity` (by the catalogue or the command line) that
    /// the configuration file hid, and `how`.
    pub(super) fn hide(&mut self, severity: Severity, how: String) {
        *self.hidden.entry((severity, how)).or_default() += 1;
    }

    /// How many findings the configuration file hid or graded info (see `hidden`).
    pub fn hidden(&self) -> usize {
        self.hidden.values().sum()
    }

    /// What the configuration file hid, one entry per grade and way, with its count.
    pub fn hidden_counts(&self) -> impl Iterator<Item = (Severity, &str, usize)> {
        self.hidden
            .iter()
            .map(|((severity, how), count)| (*severity, how.as_str(), *count))
    }

    /// What the configuration file hid, one entry per grade and way:
    /// `1 warning below minSeverity, not shown`.
    pub fn hidden_by_config(&self) -> Vec<String> {
        self.hidden_counts()
            .map(|(severity, how, count)| {
                let plural = if count == 1 { "" } else { "s" };
                format!("{count} {severity}{plural} {how}")
            })
            .collect()
    }

    /// Count the suppressions `other` met as met here too (its findings stay there).
    pub fn note_used(&mut self, other: &Findings) {
        self.used_suppressions
            .extend(other.used_suppressions.iter().cloned());
    }

    /// Keep the findings from index `from` on that `keep` says to keep; earlier ones
    /// are left alone.
    pub fn retain_from(&mut self, from: usize, mut keep: impl FnMut(&mut Finding) -> bool) {
        let mut index = 0;
        self.items.retain_mut(|f| {
            index += 1;
            index <= from || keep(f)
        });
    }

    /// The findings to write: the first [`SHOWN_PER_RULE_AND_FILE`] of each rule in each
    /// file, in order, and in place of the rest one finding of the same rule and
    /// severity, at the first not shown, that says how many there are. Every format
    /// writes this one list, and [`Findings::count`] gives the same totals for it as
    /// for all. Within one rule and file every finding has one severity: the policy
    /// grades a rule by file.
    pub fn shown(&self) -> Findings {
        let mut seen: HashMap<(Option<&Arc<str>>, Rule), usize> = HashMap::new();
        // For each group over the cap, the index of its "and N more" finding in `items`.
        let mut more: HashMap<(Option<&Arc<str>>, Rule), usize> = HashMap::new();
        let mut items = Vec::with_capacity(self.items.len().min(1 << 16));
        for f in &self.items {
            let key = (f.location.as_ref().map(|at| &at.file), f.rule);
            let count = seen.entry(key).or_default();
            *count += 1;
            if *count <= SHOWN_PER_RULE_AND_FILE {
                items.push(f.clone());
                continue;
            }
            let index = *more.entry(key).or_insert_with(|| {
                items.push(Finding {
                    rule: f.rule,
                    message: String::new(),
                    location: f.location.clone(),
                    pointer: None,
                    severity: f.severity,
                    not_shown: 0,
                });
                items.len() - 1
            });
            items[index].not_shown += 1;
        }
        for ((file, rule), index) in more {
            let item = &mut items[index];
            let n = item.not_shown;
            let place = file.map_or(String::new(), |file| format!(" in {file}"));
            item.message = format!(
                "and {n} more {} finding{}{place}, not shown: rdmagen shows the first {SHOWN_PER_RULE_AND_FILE} of each rule in each file",
                rule.info().id,
                if n == 1 { "" } else { "s" },
            );
        }
        Findings {
            items,
            used_suppressions: BTreeSet::new(),
            hidden: self.hidden.clone(),
        }
    }

    /// Sorted by file and position, so output never depends on processing order.
    pub fn sort(&mut self) {
        self.items
            .sort_by(|a, b| a.location.cmp(&b.location).then(a.rule.cmp(&b.rule)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::source::Location;

    #[test]
    fn findings_over_the_cap_become_one_that_counts_them() {
        let mut findings = Findings::default();
        let at = |file: &str, line| Location {
            file: Arc::from(file),
            line,
            column: 1,
        };
        for line in 1..=SHOWN_PER_RULE_AND_FILE + 3 {
            findings.at(Rule::InvalidJobName, "name", at("a.yaml", line));
        }
        findings.at(Rule::InvalidJobName, "name", at("b.yaml", 1));
        findings.at(Rule::DuplicateName, "dup", at("a.yaml", 1));
        let shown = findings.shown();
        assert_eq!(shown.len(), SHOWN_PER_RULE_AND_FILE + 3);
        let more = shown.iter().nth(SHOWN_PER_RULE_AND_FILE).unwrap();
        assert_eq!(
            more.message,
            "and 3 more RDG007 findings in a.yaml, not shown: rdmagen shows the first 100 of each rule in each file"
        );
        assert_eq!(
            more.location,
            Some(at("a.yaml", SHOWN_PER_RULE_AND_FILE + 1))
        );
        assert_eq!(shown.errors(), findings.errors());
        assert_eq!(shown.errors(), SHOWN_PER_RULE_AND_FILE + 5);
    }

    #[test]
    fn a_long_message_is_cut_on_a_character_boundary() {
        let short = Finding::new(Rule::InvalidJobName, "é".repeat(MAX_MESSAGE), None);
        assert_eq!(short.message.chars().count(), MAX_MESSAGE);
        let long = Finding::new(Rule::InvalidJobName, "é".repeat(MAX_MESSAGE + 1), None);
        assert_eq!(long.message.chars().count(), MAX_MESSAGE + 1);
        assert!(long.message.ends_with("é…"));
    }
}
