//! Findings: a rule, the message for this occurrence and where it happened.

use crate::diagnostics::rule::{Rule, Severity};
use crate::diagnostics::source::Location;

#[derive(Clone, Debug)]
pub struct Finding {
    pub rule: Rule,
    pub message: String,
    pub location: Option<Location>,
}

impl Finding {
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
        self.items.push(Finding {
            rule,
            message: message.into(),
            location,
        });
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
