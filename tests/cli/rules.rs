//! Every rule in the catalogue has a test that triggers it and one that shows it
//! silent on the corrected input.
//!
//! tests/rules/<ID>.<ext> triggers the rule; tests/rules/<ID>.ok.<ext> is the same input
//! with the mistake fixed (<ext> is yaml, Dockerfile, pins, txt or j2, whatever the
//! command reads). Each file starts with
//!
//! ```text
//! # run: <command> [arguments that come before the file]
//! # expect: at <line>        (trigger files only: the line the finding points at)
//! ```
//!
//! (the header tests/bad/ uses too, read by [`crate::support::fixture`]).

use rdmagen::diagnostics::rule::CATALOGUE;
use serde_json::Value;

use crate::support::{Fixture, fixture, rdmagen, root, text};

/// Run the file's command with `--format json`; return (exit code, findings).
fn findings(file: &str) -> (i32, Vec<Value>, Fixture) {
    let source =
        std::fs::read_to_string(root().join(file)).unwrap_or_else(|_| panic!("{file} is missing"));
    let h = fixture(&source, file);
    let mut args: Vec<&str> = h.args.iter().map(String::as_str).collect();
    args.extend([file, "--format", "json"]);
    let out = rdmagen(&args);
    // Commands whose stdout is their product print findings on stderr.
    let to_stderr = matches!(h.args[0].as_str(), "render" | "dockerfile" | "detect");
    let stream = if to_stderr { &out.stderr } else { &out.stdout };
    let body = text(stream);
    let start = body
        .find('{')
        .unwrap_or_else(|| panic!("{file}: no JSON in output:\n{body}\n{}", text(&out.stderr)));
    let end = body.rfind('}').unwrap() + 1;
    let doc: Value =
        serde_json::from_str(&body[start..end]).unwrap_or_else(|e| panic!("{file}: {e}\n{body}"));
    let list = doc["findings"].as_array().cloned().unwrap_or_default();
    (out.status.code().unwrap_or(-1), list, h)
}

#[test]
fn every_rule_triggers_and_stays_silent_when_fixed() {
    let files: Vec<String> = std::fs::read_dir(root().join("tests/rules"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let find = |stem: &str| {
        files
            .iter()
            .find(|f| f.rsplit_once('.').is_some_and(|(s, _)| s == stem))
            .map(|f| format!("tests/rules/{f}"))
    };
    let mut missing = Vec::new();
    for rule in CATALOGUE {
        let (Some(bad), Some(good)) = (find(rule.id), find(&format!("{}.ok", rule.id))) else {
            missing.push(rule.id);
            continue;
        };
        let (code, found, h) = findings(&bad);
        let hit = found.iter().find(|f| f["rule"] == rule.id);
        let hit = hit.unwrap_or_else(|| panic!("{bad}: {} not reported; got {found:#?}", rule.id));
        assert_eq!(
            hit["file"],
            bad.as_str(),
            "{bad}: finding points at another file"
        );
        if let Some(named) = &h.rule {
            assert_eq!(named, rule.id, "{bad}: the header names another rule");
        }
        if let Some(line) = h.line {
            assert_eq!(hit["line"], line, "{bad}: {} at the wrong line", rule.id);
        }
        let expected_code = match rule.severity {
            rdmagen::diagnostics::Severity::Error if rule.syntax => 2,
            rdmagen::diagnostics::Severity::Error => 1,
            _ => 0,
        };
        assert_eq!(code, expected_code, "{bad}: exit code");

        let (code, found, _) = findings(&good);
        assert!(
            found.iter().all(|f| f["rule"] != rule.id),
            "{good}: {} still reported: {found:#?}",
            rule.id
        );
        let errors = found.iter().filter(|f| f["severity"] == "error").count();
        assert_eq!(
            code,
            i32::from(errors > 0),
            "{good}: exit code with {errors} error(s)"
        );
    }
    assert!(
        missing.is_empty(),
        "rules without a trigger/fixed pair: {missing:?}"
    );
}

/// The templates tests/rules/templates/ hands to `--templates` are copies of the
/// built-in one with one deliberate change each, below a comment that says which. A
/// copy left behind when the built-in template changes would test a template nobody
/// writes (and fail for another reason than its rule's).
#[test]
fn rule_test_templates_are_the_built_in_one_with_one_change() {
    let builtin = std::fs::read_to_string(root().join("templates/pytorchjob.yaml.j2")).unwrap();
    let mut checked = 0;
    for entry in std::fs::read_dir(root().join("tests/rules/templates")).unwrap() {
        let dir = entry.unwrap().path();
        let copy = std::fs::read_to_string(dir.join("pytorchjob.yaml.j2")).unwrap();
        let (header, body) = copy
            .split_once("-#}\n")
            .unwrap_or_else(|| panic!("{}: no header comment", dir.display()));
        assert!(
            header.starts_with("{#- Test template for RDG"),
            "{}: the header names no rule",
            dir.display()
        );
        let changed = similar::TextDiff::from_lines(builtin.as_str(), body)
            .iter_all_changes()
            .filter(|c| c.tag() != similar::ChangeTag::Equal)
            .count();
        assert!(
            (1..=4).contains(&changed),
            "{}: {changed} lines differ from templates/pytorchjob.yaml.j2; copy it afresh and make the one change",
            dir.display()
        );
        checked += 1;
    }
    assert!(checked >= 5, "{checked} templates checked");
}

/// `rules` and `explain` print each rule's source; a reader must be able to open it
/// from the repository alone: an http(s) URL, or a path in the repository, with a
/// `#heading` that exists when the path is a Markdown file (docs/sources.md quotes the
/// facts that have no public page).
#[test]
fn every_rule_source_is_a_url_or_a_repository_path() {
    let mut unresolved = Vec::new();
    for rule in CATALOGUE {
        let source = rule.source;
        let ok = if let Some(rest) = source
            .strip_prefix("https://")
            .or_else(|| source.strip_prefix("http://"))
        {
            rest.contains('/') && !rest.contains(char::is_whitespace)
        } else {
            let (path, anchor) = source.split_once('#').unwrap_or((source, ""));
            let file = root().join(path);
            let exists = !path.is_empty() && !path.starts_with('/') && file.exists();
            exists
                && (anchor.is_empty()
                    || std::fs::read_to_string(&file)
                        .is_ok_and(|text| text.lines().any(|l| l == format!("## {anchor}"))))
        };
        if !ok {
            unresolved.push(format!("{}: {source}", rule.id));
        }
    }
    assert_eq!(unresolved, Vec::<String>::new(), "sources nobody can open");
}
