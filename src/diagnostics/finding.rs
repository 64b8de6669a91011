//! Findings: a rule, the message for this occurrence and where it happened. Every
//! check reports one: input checks at a file span, checks of a rendered or linted
//! object at a JSON Pointer into it (and, once the object is placed, a file span too),
//! capture readers at a line (a span at column 1).

use crate::diagnostics::rule::{Rule, Severity};
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
}

impl Finding {
    pub fn new(rule: Rule, message: impl Into<String>, location: Option<Location>) -> Self {
        Finding {
            rule,
            message: message.into(),
            location,
            pointer: None,
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
        self.rule.info().severity
    }
}

/// Findings collected over a whole run, in the order they were made.
#[derive(Debug, Default)]
pub struct Findings {
    items: Vec<Finding>,
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

    pub fn count(&self, severity: Severity) -> usize {
        self.items
            .iter()
            .filter(|f| f.severity() == severity)
            .count()
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

    pub fn extend(&mut self, other: Findings) {
        self.items.extend(other.items);
    }

    /// Sorted by file and position, so output never depends on processing order.
    pub fn sort(&mut self) {
        self.items
            .sort_by(|a, b| a.location.cmp(&b.location).then(a.rule.cmp(&b.rule)));
    }
}
