//! GitLab Code Quality: the JSON array of issues GitLab shows in merge requests
//! (`artifacts:reports:codequality`). GitLab reads `description`, `check_name`,
//! `fingerprint`, `severity` and `location.path` / `location.lines.begin`.
//!
//! The top level is an array, so the report has no room for rdmagen's
//! `schemaVersion`; its fields are GitLab's, which version them.

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::diagnostics::{Finding, Findings, Severity};

/// The path of an issue that points at no file: the repository's root.
const NO_FILE: &str = ".";

pub fn findings(w: &mut dyn Write, findings: &Findings) -> io::Result<()> {
    let issues: Vec<Value> = findings.iter().map(issue).collect();
    super::json::document(w, &Value::Array(issues))
}

/// The report of a run an error ended: one blocker issue, so that the report never
/// reads as clean.
pub fn error(w: &mut dyn Write, message: &str) -> io::Result<()> {
    let issue = issue_at("rdmagen", "blocker", message, NO_FILE, 1);
    super::json::document(w, &json!([issue]))
}

fn issue(f: &Finding) -> Value {
    let info = f.rule.info();
    let (path, line) = f
        .location
        .as_ref()
        .map_or((NO_FILE, 1), |at| (&*at.file, at.line));
    let description = format!("{}: {}", info.id, f.message);
    issue_at(info.id, severity(f.severity()), &description, path, line)
}

fn issue_at(check: &str, severity: &str, description: &str, path: &str, line: usize) -> Value {
    json!({
        "description": description,
        "check_name": check,
        "fingerprint": fingerprint(&[check, path, &line.to_string(), description]),
        "severity": severity,
        "location": { "path": path, "lines": { "begin": line } },
    })
}

/// GitLab's five levels: errors fail the run (critical), warnings may (minor).
fn severity(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "critical",
        Severity::Warning => "minor",
        Severity::Info => "info",
    }
}

/// 64-bit FNV-1a of the parts, each ended by a NUL, in hex. GitLab matches issues
/// across pipelines by fingerprint, so it must be the same on every machine and
/// every run: std's hashers are seeded per process (RandomState) or unspecified
/// across releases (DefaultHasher).
pub fn fingerprint(parts: &[&str]) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    for part in parts {
        for &b in part.as_bytes().iter().chain(&[0]) {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(PRIME);
        }
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Rule;

    #[test]
    fn a_finding_without_a_file_points_at_the_repository_root() {
        let mut all = Findings::default();
        all.push(Rule::IbTcSet, "nowhere", None);
        let mut out = Vec::new();
        findings(&mut out, &all).unwrap();
        let issues: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            issues[0]["location"],
            json!({"path": ".", "lines": {"begin": 1}})
        );
        assert_eq!(issues[0]["severity"], "critical");
        assert_eq!(issues[0]["description"], "RDG020: nowhere");
    }

    #[test]
    fn fingerprints_are_fixed_and_separate_their_parts() {
        // FNV-1a of "a\0": fixed by the algorithm, not by this process.
        assert_eq!(fingerprint(&["a"]), "089be207b544f1e4");
        assert_ne!(fingerprint(&["ab", "c"]), fingerprint(&["a", "bc"]));
    }
}
