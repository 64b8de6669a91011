//! Everything rdmagen checks: the rule catalogue, findings, and verification of
//! rendered manifests.

pub mod escape;
pub mod finding;
pub mod job_name;
pub mod lint;
pub mod manifest;
pub mod namespace;
pub mod nccl_vars;
pub mod report;
pub mod rule;
pub mod storage;
pub mod suggest;
pub mod verify;

pub use finding::{Finding, Findings};
pub use rule::{Rule, RuleInfo, Severity};
