//! GitLab Code Quality: the JSON array of issues GitLab shows in merge requests
//! (`artifacts:reports:codequality`). GitLab reads `description`, `check_name`,
//! `fingerprint`, `severity` and `location.path` / `location.lines.begin`; the
//! fingerprint is the rule's, the file's, the object's and the field's, not the line's.
//!
//! The top level is an array, so the report has no room for rdmagen's
//! `schemaVersion`; its fields are GitLab's, which version them.

use std::collections::HashMap;
use std::hash::Hasher;
use std::io::{self, Write};

use fnv::FnvHasher;

use serde_json::{Value, json};

use crate::diagnostics::{Finding, Findings, Severity};

/// The path of an issue that points at no file: the repository's root.
const NO_FILE: &str = ".";

pub fn findings(w: &mut dyn Write, findings: &Findings) -> io::Result<()> {
    // The n-th finding of one rule at one field of one file stands for the n-th
    // object there that has it: counted, not located by line, so that an edit above
    // a finding leaves its fingerprint alone, and two objects of one file keep apart.
    let mut seen: HashMap<[String; 4], usize> = HashMap::new();
    let issues: Vec<Value> = findings
        .iter()
        .map(|f| {
            let key = identity(f);
            let ordinal = seen.entry(key.clone()).or_default();
            *ordinal += 1;
            issue(f, &key, *ordinal)
        })
        .collect();
    super::json::document(w, &Value::Array(issues))
}

/// The report of a run an error ended: one blocker issue, so that the report never
/// reads as clean.
pub fn error(w: &mut dyn Write, message: &str) -> io::Result<()> {
    let fingerprint = fingerprint(&["rdmagen", NO_FILE, message]);
    let issue = issue_at("rdmagen", "blocker", message, NO_FILE, 1, &fingerprint);
    super::json::document(w, &json!([issue]))
}

/// What identifies a finding across pipelines: its rule, file, field (the JSON
/// Pointer in its object, where the check judged a value) and message, never its line.
fn identity(f: &Finding) -> [String; 4] {
    let path = f.location.as_ref().map_or(NO_FILE, |at| &*at.file);
    [
        f.rule.info().id.to_owned(),
        path.to_owned(),
        f.pointer.clone().unwrap_or_default(),
        f.message.clone(),
    ]
}

fn issue(f: &Finding, identity: &[String; 4], ordinal: usize) -> Value {
    let info = f.rule.info();
    let (path, line) = f
        .location
        .as_ref()
        .map_or((NO_FILE, 1), |at| (&*at.file, at.line));
    let description = format!("{}: {}", info.id, f.message);
    let [rule, file, field, message] = identity;
    let fingerprint = fingerprint(&[rule, file, field, message, &ordinal.to_string()]);
    issue_at(
        info.id,
        severity(f.severity()),
        &description,
        path,
        line,
        &fingerprint,
    )
}

fn issue_at(
    check: &str,
    severity: &str,
    description: &str,
    path: &str,
    line: usize,
    fingerprint: &str,
) -> Value {
    json!({
        "description": description,
        "check_name": check,
        "fingerprint": fingerprint,
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

/// 64-bit FNV-1a (the `fnv` crate, as the ownership record's) of the parts, each
/// ended by a NUL, in hex. GitLab matches issues across pipelines by fingerprint, so
/// it must be the same on every machine and every run: std's hashers are seeded per
/// process (RandomState) or unspecified across releases (DefaultHasher).
pub fn fingerprint(parts: &[&str]) -> String {
    let mut hash = FnvHasher::default();
    for part in parts {
        hash.write(part.as_bytes());
        hash.write_u8(0);
    }
    format!("{:016x}", hash.finish())
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
