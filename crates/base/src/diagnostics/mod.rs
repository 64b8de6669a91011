//! The diagnostics vocabulary, at the bottom of the crate: the rule catalogue, severities,
//! findings and where they point, suggestions, escaping of echoed text and the snippet
//! renderer. Imports nothing else from the crate, so every layer can report.

pub mod escape;
pub mod finding;
pub mod message;
pub mod pointer;
pub mod policy;
pub mod rule;
pub mod snippet;
pub mod source;
pub mod suggest;

pub use finding::{Finding, Findings};
pub use policy::{Policy, Suppressions};
pub use rule::{Rule, RuleInfo, Severity};
pub use source::{Location, Sources};
