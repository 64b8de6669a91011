//! Every rule in the catalogue has a test that triggers it and one that shows it
//! silent on the corrected input.
//!
//! tests/rules/<ID>.yaml triggers the rule; tests/rules/<ID>.ok.yaml is the same input
//! with the mistake fixed. Each file starts with
//!
//! ```text
//! # run: validate|lint|render [extra arguments]
//! # expect: at <line>        (trigger files only: the line the finding points at)
//! ```

use rdmagen::check::rule::CATALOGUE;
use serde_json::Value;

use crate::support::{rdmagen, root, text};

struct Header {
    args: Vec<String>,
    line: Option<u64>,
}

fn header(source: &str, file: &str) -> Header {
    let mut lines = source.lines();
    let run = lines
        .next()
        .and_then(|l| l.strip_prefix("# run: "))
        .unwrap_or_else(|| panic!("{file}: first line must be `# run: ...`"));
    let line = lines
        .next()
        .and_then(|l| l.strip_prefix("# expect: at "))
        .map(|n| n.trim().parse().expect("line number"));
    Header {
        args: run.split_whitespace().map(str::to_owned).collect(),
        line,
    }
}

/// Run the file's command with `--format json`; return (exit code, findings).
fn findings(file: &str) -> (i32, Vec<Value>, Header) {
    let source =
        std::fs::read_to_string(root().join(file)).unwrap_or_else(|_| panic!("{file} is missing"));
    let h = header(&source, file);
    let mut args: Vec<&str> = h.args.iter().map(String::as_str).collect();
    args.extend(["--format", "json", file]);
    let out = rdmagen(&args);
    // validate and lint print findings on stdout; render on stderr.
    let stream = if h.args[0] == "render" {
        &out.stderr
    } else {
        &out.stdout
    };
    let body = text(stream);
    let start = body
        .find('{')
        .unwrap_or_else(|| panic!("{file}: no JSON in output:\n{body}"));
    let end = body.rfind('}').unwrap() + 1;
    let doc: Value =
        serde_json::from_str(&body[start..end]).unwrap_or_else(|e| panic!("{file}: {e}\n{body}"));
    let list = doc["findings"].as_array().cloned().unwrap_or_default();
    (out.status.code().unwrap_or(-1), list, h)
}

#[test]
fn every_rule_triggers_and_stays_silent_when_fixed() {
    let mut missing = Vec::new();
    for rule in CATALOGUE {
        let bad = format!("tests/rules/{}.yaml", rule.id);
        let good = format!("tests/rules/{}.ok.yaml", rule.id);
        if !root().join(&bad).exists() || !root().join(&good).exists() {
            missing.push(rule.id);
            continue;
        }
        let (code, found, h) = findings(&bad);
        let hit = found.iter().find(|f| f["rule"] == rule.id);
        let hit = hit.unwrap_or_else(|| panic!("{bad}: {} not reported; got {found:#?}", rule.id));
        assert_eq!(
            hit["file"],
            bad.as_str(),
            "{bad}: finding points at another file"
        );
        if let Some(line) = h.line {
            assert_eq!(hit["line"], line, "{bad}: {} at the wrong line", rule.id);
        }
        let expected_code = match rule.severity {
            rdmagen::check::Severity::Error if rule.syntax => 2,
            rdmagen::check::Severity::Error => 1,
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
