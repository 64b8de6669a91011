//! SARIF 2.1.0, the format GitHub code scanning and most static-analysis dashboards
//! read: one run, every catalogue rule as a `reportingDescriptor` (so `ruleIndex` is
//! the rule's place in the catalogue, and a viewer can show any rule's help), one
//! result per finding. A rule's `helpUri` is its page (`docs/rules/RDGnnn.md`), and
//! `properties.source` the upstream source of its fact.
//!
//! A finding without a file position (a check of a rendered object that was never
//! placed in a file) has no `physicalLocation`: SARIF allows that. Its JSON Pointer,
//! when it has one, is a `logicalLocation` and `properties.jsonPointer`.

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::diagnostics::rule::{CATALOGUE, RuleInfo};
use crate::diagnostics::{Finding, Findings, Severity};

const SCHEMA: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The project's repository, from Cargo.toml.
pub const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

pub fn findings(w: &mut dyn Write, findings: &Findings) -> io::Result<()> {
    let results: Vec<Value> = findings.iter().map(result).collect();
    super::json::document(w, &log(json!({ "results": results })))
}

/// The log of a run that an error ended before it could report: no results, and the
/// error as a tool notification of an unsuccessful invocation.
pub fn error(w: &mut dyn Write, message: &str) -> io::Result<()> {
    let run = json!({
        "invocations": [{
            "executionSuccessful": false,
            "toolExecutionNotifications": [{
                "level": "error",
                "message": { "text": message },
            }],
        }],
        "results": [],
    });
    super::json::document(w, &log(run))
}

/// A log of one run of rdmagen with `fields` after the tool.
fn log(fields: Value) -> Value {
    let mut run = json!({ "tool": { "driver": driver() } });
    if let (Some(run), Value::Object(fields)) = (run.as_object_mut(), fields) {
        run.extend(fields);
    }
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [run],
    })
}

fn driver() -> Value {
    let rules: Vec<Value> = CATALOGUE.iter().map(rule).collect();
    json!({
        "name": "rdmagen",
        "version": env!("CARGO_PKG_VERSION"),
        "informationUri": REPOSITORY,
        "rules": rules,
    })
}

fn rule(r: &RuleInfo) -> Value {
    json!({
        "id": r.id,
        "name": name(r),
        "shortDescription": { "text": r.summary },
        "fullDescription": { "text": r.explanation },
        "help": { "text": format!("{}\n\nSource: {}", r.explanation, r.source) },
        "helpUri": super::rule_page::page_uri(r.id),
        "defaultConfiguration": { "level": level(r.severity) },
        // Where the fact comes from, beside rdmagen's page about the rule.
        "properties": { "source": help_uri(r.source) },
    })
}

/// The rule's name in SARIF's sense (an identifier a person can read): its variant.
fn name(r: &RuleInfo) -> String {
    format!("{:?}", r.rule)
}

/// A rule's source as an address: a URL as it is, a path in this repository as its
/// page on the repository's main branch.
pub fn help_uri(source: &str) -> String {
    if source.starts_with("https://") || source.starts_with("http://") {
        source.to_owned()
    } else {
        format!("{REPOSITORY}/blob/main/{source}")
    }
}

pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn result(f: &Finding) -> Value {
    let info = f.rule.info();
    let mut result = json!({
        "ruleId": info.id,
        "ruleIndex": f.rule as usize,
        "level": level(f.severity()),
        "message": { "text": f.message },
    });
    let mut location = serde_json::Map::new();
    if let Some(at) = &f.location {
        location.insert(
            "physicalLocation".to_owned(),
            json!({
                "artifactLocation": { "uri": uri_reference(&at.file) },
                "region": { "startLine": at.line, "startColumn": at.column },
            }),
        );
    }
    if let Some(pointer) = &f.pointer {
        location.insert(
            "logicalLocations".to_owned(),
            json!([{ "fullyQualifiedName": pointer }]),
        );
        result["properties"] = json!({ "jsonPointer": pointer });
    }
    if !location.is_empty() {
        result["locations"] = json!([location]);
    }
    result
}

/// A path as a URI reference (RFC 3986): relative paths stay relative (code scanning
/// resolves them against the repository), absolute ones become `file://` URIs, and
/// every byte outside the unreserved and path characters is percent-encoded, `:`
/// included so that a first segment is never read as a scheme.
pub fn uri_reference(path: &str) -> String {
    let mut out = String::new();
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for b in path.bytes() {
        let keep = b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=@".contains(&b);
        if keep {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_uri_references() {
        assert_eq!(uri_reference("jobs/a b.yaml"), "jobs/a%20b.yaml");
        assert_eq!(uri_reference("c:x%#?.yaml"), "c%3Ax%25%23%3F.yaml");
        assert_eq!(uri_reference("/tmp/ü.yaml"), "file:///tmp/%C3%BC.yaml");
        assert_eq!(uri_reference("a\\b\n"), "a%5Cb%0A");
    }

    /// Results with a file, with only a JSON Pointer, with neither, and none at all,
    /// against the official schema (the CLI tests validate whole runs).
    #[test]
    fn logs_are_valid_sarif_with_and_without_locations() {
        use crate::diagnostics::source::Location;
        use crate::diagnostics::{Finding, Rule};
        let schema: Value = serde_json::from_str(include_str!(
            "../../schemas/external/sarif-schema-2.1.0.json"
        ))
        .unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let mut all = Findings::default();
        all.add(Finding::new(
            Rule::IbTcSet,
            "x\u{1b}\u{0}\"<",
            Some(Location {
                file: "a b/c.yaml".into(),
                line: 2,
                column: 3,
            }),
        ));
        all.add(Finding::at_pointer(
            Rule::IbTcSet,
            "at a pointer",
            "/spec/x~1y",
        ));
        all.add(Finding::new(Rule::IbTcSet, "nowhere", None));
        for findings_ in [all, Findings::default()] {
            let mut out = Vec::new();
            findings(&mut out, &findings_).unwrap();
            let log: Value = serde_json::from_slice(&out).unwrap();
            let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{errors:#?}");
            let results = log["runs"][0]["results"].as_array().unwrap();
            if let [file, pointer, nowhere] = results.as_slice() {
                let at = &file["locations"][0]["physicalLocation"];
                assert_eq!(at["artifactLocation"]["uri"], "a%20b/c.yaml");
                assert_eq!(at["region"]["startLine"], 2);
                let logical = &pointer["locations"][0]["logicalLocations"][0];
                assert_eq!(logical["fullyQualifiedName"], "/spec/x~1y");
                assert_eq!(pointer["properties"]["jsonPointer"], "/spec/x~1y");
                assert!(pointer["locations"][0].get("physicalLocation").is_none());
                assert!(nowhere.get("locations").is_none());
            } else {
                assert!(results.is_empty());
            }
        }
    }

    #[test]
    fn help_points_at_the_page_and_properties_at_the_source() {
        let rule = rule(crate::diagnostics::Rule::IbTcSet.info());
        assert_eq!(
            rule["helpUri"],
            format!("{REPOSITORY}/blob/main/docs/rules/RDG020.md")
        );
        assert_eq!(
            rule["properties"]["source"],
            format!("{REPOSITORY}/blob/main/docs/sources.md#seed-000-aistudio-rdma-network-page")
        );
    }

    #[test]
    fn sources_become_addresses() {
        assert_eq!(help_uri("https://x.org/a"), "https://x.org/a");
        assert_eq!(
            help_uri("docs/sources.md#capture-formats"),
            format!("{REPOSITORY}/blob/main/docs/sources.md#capture-formats")
        );
    }
}
