//! `--format sarif|junit|gitlab` and the version field of every machine format, read
//! as the programs that consume them do: SARIF against the official schema (and
//! Microsoft's SARIF multitool when it is installed), JUnit with an XML parser,
//! GitLab Code Quality as JSON with GitLab's fields.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use crate::support::{rdmagen, rdmagen_in, root, text};

/// A manifest with an error finding (its name is too long).
const LONG_NAME: &str = "tests/lint/long-name.yaml";
/// A manifest with warnings, no error.
const WARNED: &str = "tests/rules/RDG033.yaml";
const CLEAN: &str = "golden/seed-swin-roce/swin-large/pytorchjob.yaml";
const POOL: &str = "examples/single-node/pool.yaml";

/// A job whose name holds markup, quotes, ESC, LF, CR and NUL, in a file whose name
/// needs percent-encoding: every format must carry it without breaking.
const HOSTILE_JOB: &str = r#"apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {name: "a<b>&'\"]]>\e[31m\n::error ::x\r\0y"}
spec:
  pool: a100-roce-dev
  image: img
  nodes: 1
  gpusPerNode: 4
  script: train.py
"#;
const HOSTILE_FILE: &str = "job #1: 100% <ü>.yaml";

fn hostile_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(HOSTILE_FILE), HOSTILE_JOB).unwrap();
    std::fs::copy(root().join(POOL), dir.path().join("pool.yaml")).unwrap();
    dir
}

/// `validate` of the hostile job, run from its directory so paths are relative.
fn hostile(format: &str) -> Output {
    let dir = hostile_dir();
    rdmagen_in(
        dir.path(),
        &["validate", HOSTILE_FILE, "pool.yaml", "--format", format],
    )
}

/// Runs whose stdout is a report in `format`, with their exit codes: findings,
/// hostile text, zero findings, an error that ends the run, and `nccl-log`'s findings
/// at the lines of a log.
fn reports(format: &str) -> Vec<(&'static str, i32, String)> {
    let mut out = Vec::new();
    for (name, args) in [
        ("findings", vec!["lint", LONG_NAME]),
        ("clean", vec!["lint", CLEAN]),
        ("missing-file", vec!["lint", "no/such/file.yaml"]),
    ] {
        let mut args = args;
        args.extend(["--format", format]);
        let run = rdmagen(&args);
        out.push((name, run.status.code().unwrap(), text(&run.stdout)));
    }
    let run = hostile(format);
    out.push(("hostile", run.status.code().unwrap(), text(&run.stdout)));
    // nccl-log's report: findings at log lines (its verdict goes to stderr).
    let run = rdmagen(&["nccl-log", NCCL_LOG, "--format", format]);
    out.push(("nccl-log", run.status.code().unwrap(), text(&run.stdout)));
    out
}

const NCCL_LOG: &str = "tests/nccl_logs/samples/11-socket-ib-disabled-by-env.log";

fn sarif_validator() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("schemas/external/sarif-schema-2.1.0.json")).unwrap(),
    )
    .unwrap();
    jsonschema::validator_for(&schema).expect("the SARIF schema compiles")
}

#[test]
fn sarif_reports_are_valid_against_the_sarif_2_1_0_schema() {
    let validator = sarif_validator();
    for (name, code, stdout) in reports("sarif") {
        let log: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{name}: {e}"));
        let errors: Vec<String> = validator.iter_errors(&log).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{name}: {errors:#?}\n{stdout}");
        assert_eq!(log["version"], "2.1.0", "{name}");
        let results = log["runs"][0]["results"].as_array().unwrap();
        match name {
            "clean" => assert_eq!((code, results.len()), (0, 0)),
            "missing-file" => {
                assert_eq!((code, results.len()), (2, 0));
                let invocation = &log["runs"][0]["invocations"][0];
                assert_eq!(invocation["executionSuccessful"], false);
                let said = invocation["toolExecutionNotifications"][0]["message"]["text"]
                    .as_str()
                    .unwrap();
                assert!(said.starts_with("no/such/file.yaml: "), "{said}");
            }
            _ => assert!(!results.is_empty(), "{name}"),
        }
    }
}

/// Every result names a rule of the driver by ID and index, with a location the
/// viewer can open; the driver names the tool, its version and every rule's help.
#[test]
fn sarif_results_point_at_their_rule_and_their_file() {
    let dir = hostile_dir();
    let run = rdmagen_in(
        dir.path(),
        &["validate", HOSTILE_FILE, "pool.yaml", "--format", "sarif"],
    );
    assert_eq!(run.status.code(), Some(1));
    assert_eq!(text(&run.stderr), "", "no prose beside a machine format");
    let log: Value = serde_json::from_slice(&run.stdout).unwrap();
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "rdmagen");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(driver["informationUri"], env!("CARGO_PKG_REPOSITORY"));
    let rules = driver["rules"].as_array().unwrap();
    // helpUri is the rule's page in this repository; the upstream fact stays in
    // properties.source, as an address (a path here on the main branch).
    let repository = env!("CARGO_PKG_REPOSITORY");
    let rdg007 = rules.iter().find(|r| r["id"] == "RDG007").unwrap();
    assert_eq!(
        rdg007["helpUri"],
        format!("{repository}/blob/main/docs/rules/RDG007.md")
    );
    assert_eq!(
        rdg007["properties"]["source"],
        "https://github.com/kubeflow/training-operator/blob/v1.9.0/pkg/webhooks/pytorch/pytorchjob_webhook.go"
    );
    assert_eq!(rdg007["defaultConfiguration"]["level"], "error");
    let rdg003 = rules.iter().find(|r| r["id"] == "RDG003").unwrap();
    assert_eq!(
        rdg003["properties"]["source"],
        format!("{repository}/blob/main/schemas/job.schema.json")
    );
    // Every page a helpUri names is committed.
    for rule in rules {
        let uri = rule["helpUri"].as_str().unwrap();
        let path = uri
            .strip_prefix(&format!("{repository}/blob/main/"))
            .unwrap();
        assert!(
            crate::support::root().join(path).is_file(),
            "{uri}: no such page"
        );
    }
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "RDG007");
    let index = result["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(rules[index]["id"], "RDG007");
    assert_eq!(result["level"], "error");
    let message = result["message"]["text"].as_str().unwrap();
    assert!(
        message.contains("a<b>&'\"]]>\u{1b}[31m\n::error ::x\r\u{0}y"),
        "JSON escaping carries the name exactly: {message:?}"
    );
    let physical = &result["locations"][0]["physicalLocation"];
    assert_eq!(
        physical["artifactLocation"]["uri"],
        "job%20%231%3A%20100%25%20%3C%C3%BC%3E.yaml"
    );
    assert_eq!(physical["region"]["startLine"], 3);
    assert_eq!(physical["region"]["startColumn"], 12);
}

/// The official validator, Microsoft's SARIF multitool. CI installs it (.ci/run sets
/// RDMAGEN_SARIF_MULTITOOL); elsewhere the test is skipped.
#[test]
fn sarif_reports_pass_the_sarif_multitool() {
    let Some(multitool) = std::env::var_os("RDMAGEN_SARIF_MULTITOOL").map(PathBuf::from) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "the SARIF multitool must be installed in CI (RDMAGEN_SARIF_MULTITOOL)"
        );
        eprintln!("skipped: set RDMAGEN_SARIF_MULTITOOL to Sarif.Multitool to run it");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (name, _, stdout) in reports("sarif") {
        let path = dir.path().join(format!("{name}.sarif"));
        std::fs::write(&path, stdout).unwrap();
        files.push(path);
    }
    for file in &files {
        let checked = multitool_validate(&multitool, file, dir.path());
        assert!(checked.is_empty(), "{}: {checked:#?}", file.display());
    }
}

/// Runs `Sarif.Multitool validate FILE --output OUT` and returns the problems it
/// reports at level error or warning (its notes are advice on optional fields).
fn multitool_validate(multitool: &Path, file: &Path, dir: &Path) -> Vec<String> {
    let out = dir.join("validation.sarif");
    let _ = std::fs::remove_file(&out);
    let run = Command::new(multitool)
        .arg("validate")
        .arg(file)
        .arg("--output")
        .arg(&out)
        .output()
        .expect("the SARIF multitool runs");
    assert!(
        run.status.success(),
        "{}{}",
        text(&run.stdout),
        text(&run.stderr)
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    report["runs"][0]["results"]
        .as_array()
        .into_iter()
        .flatten()
        // SARIF's default level is warning.
        .filter(|r| matches!(r["level"].as_str(), None | Some("error" | "warning")))
        .map(|r| format!("{}: {}", r["ruleId"], r["message"]))
        .collect()
}

#[test]
fn junit_reports_parse_and_list_every_file_checked() {
    for (name, code, stdout) in reports("junit") {
        let doc =
            roxmltree::Document::parse(&stdout).unwrap_or_else(|e| panic!("{name}: {e}\n{stdout}"));
        let suites = doc.root_element();
        assert_eq!(suites.tag_name().name(), "testsuites", "{name}");
        let suite = suites.first_element_child().unwrap();
        let version = suite
            .descendants()
            .find(|n| n.attribute("name") == Some("rdmagen.schemaVersion"))
            .and_then(|n| n.attribute("value"));
        assert_eq!(version, Some("1"), "{name}");
        let cases: Vec<_> = suite
            .children()
            .filter(|n| n.has_tag_name("testcase"))
            .collect();
        let failures = |case: &roxmltree::Node| {
            case.children()
                .filter(|n| n.has_tag_name("failure"))
                .count()
        };
        match name {
            "clean" => {
                assert_eq!(code, 0);
                assert_eq!(cases.len(), 1);
                assert_eq!(cases[0].attribute("name"), Some(CLEAN));
                assert_eq!(failures(&cases[0]), 0);
                assert_eq!(suite.attribute("failures"), Some("0"));
            }
            "findings" => {
                assert_eq!(code, 1);
                assert_eq!(cases.len(), 1);
                assert!(failures(&cases[0]) > 0);
                assert_eq!(suite.attribute("failures"), Some("1"));
            }
            "nccl-log" => {
                assert_eq!(code, 1);
                let names: Vec<_> = cases.iter().map(|c| c.attribute("name").unwrap()).collect();
                assert_eq!(names, [NCCL_LOG]);
                assert_eq!(failures(&cases[0]), 2, "RDG141 and RDG140");
            }
            "missing-file" => {
                assert_eq!(code, 2);
                let error = cases[0].first_element_child().unwrap();
                assert_eq!(error.tag_name().name(), "error");
                assert!(
                    error
                        .attribute("message")
                        .unwrap()
                        .starts_with("no/such/file.yaml: ")
                );
            }
            _ => {
                // The hostile job and the clean pool file: both checked.
                let names: Vec<_> = cases.iter().map(|c| c.attribute("name").unwrap()).collect();
                assert_eq!(names, [HOSTILE_FILE, "pool.yaml"]);
                let failure = cases[0].first_element_child().unwrap();
                assert_eq!(failure.attribute("type"), Some("RDG007"));
                let message = failure.attribute("message").unwrap();
                assert!(
                    message.contains("a<b>&'\"]]>\\u{1b}[31m\n::error ::x\r\\u{0}y"),
                    "markup and line breaks are carried, other control characters escaped: {message:?}"
                );
                assert!(
                    failure
                        .text()
                        .unwrap()
                        .starts_with(&format!("{HOSTILE_FILE}:3:12: error[RDG007]: "))
                );
                assert_eq!(failures(&cases[1]), 0);
            }
        }
    }
}

/// Warnings do not fail a run by default: they are the test case's output, not a
/// failure.
#[test]
fn junit_lists_warnings_as_output_of_a_passing_case() {
    let run = rdmagen(&["lint", WARNED, "--format", "junit"]);
    let stdout = text(&run.stdout);
    let doc = roxmltree::Document::parse(&stdout).unwrap();
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase"))
        .unwrap();
    let lint = rdmagen(&["lint", WARNED, "--format", "json"]);
    let json: Value = serde_json::from_slice(&lint.stdout).unwrap();
    assert_eq!(json["errors"], 0, "the fixture has warnings only: {json}");
    assert!(json["warnings"].as_u64().unwrap() > 0);
    assert_eq!(run.status.code(), Some(0));
    assert!(!case.children().any(|n| n.has_tag_name("failure")));
    let out = case
        .children()
        .find(|n| n.has_tag_name("system-out"))
        .and_then(|n| n.text())
        .unwrap();
    assert!(out.contains(": warning[RDG"), "{out}");
}

#[test]
fn gitlab_reports_carry_gitlabs_fields_and_stable_fingerprints() {
    let first = reports("gitlab");
    for (name, code, stdout) in &first {
        let issues: Value = serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{name}: {e}"));
        let issues = issues.as_array().unwrap();
        match *name {
            "clean" => assert!(issues.is_empty()),
            "missing-file" => {
                assert_eq!(*code, 2);
                assert_eq!(issues[0]["severity"], "blocker");
            }
            _ => assert!(!issues.is_empty(), "{name}"),
        }
        for issue in issues {
            for field in ["description", "check_name", "fingerprint", "severity"] {
                assert!(issue[field].is_string(), "{name}: {field} in {issue}");
            }
            assert!(
                ["info", "minor", "major", "critical", "blocker"]
                    .contains(&issue["severity"].as_str().unwrap())
            );
            assert!(issue["location"]["path"].is_string());
            assert!(issue["location"]["lines"]["begin"].as_u64().unwrap() >= 1);
        }
    }
    let hostile: Value = serde_json::from_str(&first[3].2).unwrap();
    assert_eq!(hostile[0]["check_name"], "RDG007");
    assert_eq!(hostile[0]["severity"], "critical");
    assert_eq!(hostile[0]["location"]["path"], HOSTILE_FILE);
    assert_eq!(hostile[0]["location"]["lines"]["begin"], 3);
    // The same findings in another process (the hostile file in another temporary
    // directory, named relatively): the same
    // fingerprints.
    let again = reports("gitlab");
    assert_eq!(first, again);
    let fingerprints: Vec<&str> = hostile
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap())
        .collect();
    assert!(fingerprints.iter().all(|f| f.len() == 16));
}

#[test]
fn json_documents_carry_a_schema_version() {
    let run = rdmagen(&["lint", LONG_NAME, "--format", "json"]);
    let doc: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(doc["schemaVersion"], 1);
    let run = rdmagen(&["diff", CLEAN, CLEAN, "--format", "json"]);
    let doc: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(
        (doc["schemaVersion"].clone(), doc["checked"].clone()),
        (1.into(), 1.into())
    );
}

/// An error that ends the run comes out in the format asked for: a JSON document on
/// stdout (with the `error:` line for people on stderr), a GitHub annotation.
#[test]
fn run_ending_errors_follow_the_format() {
    let run = rdmagen(&["lint", "no/such/file.yaml", "--format", "json"]);
    assert_eq!(run.status.code(), Some(2));
    let doc: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(doc["schemaVersion"], 1);
    let message = doc["error"].as_str().unwrap();
    assert!(message.starts_with("no/such/file.yaml: "), "{message}");
    assert_eq!(text(&run.stderr), format!("error: {message}\n"));

    let run = rdmagen(&["diff", "a\n::x::", "b", "--format", "github"]);
    assert_eq!(run.status.code(), Some(2));
    assert_eq!(text(&run.stdout), "");
    assert_eq!(
        text(&run.stderr),
        "::error title=rdmagen::a%0A::x::: does not exist\n"
    );

    // render's findings go to stderr beside the manifests: so does its error
    // document, in place of the `error:` line, and stdout stays empty.
    let run = rdmagen(&["render", "no/such/job.yaml", "--format", "sarif"]);
    assert_eq!(run.status.code(), Some(2));
    assert_eq!(text(&run.stdout), "");
    let log: Value = serde_json::from_slice(&run.stderr).unwrap();
    let errors: Vec<String> = sarif_validator()
        .iter_errors(&log)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );

    let run = rdmagen(&["lint", "no/such/file.yaml", "--format", "brief"]);
    assert_eq!(text(&run.stdout), "");
    assert!(text(&run.stderr).starts_with("error: no/such/file.yaml: "));
}

/// SARIF, JUnit and GitLab describe findings; a comparison has none, so asking for
/// them there is refused before any work, never answered with an empty report.
#[test]
fn comparisons_refuse_findings_only_formats() {
    for format in ["sarif", "junit", "gitlab"] {
        let run = rdmagen(&["diff", CLEAN, CLEAN, "--format", format]);
        assert_eq!(run.status.code(), Some(2), "{format}");
        let said = text(&run.stderr);
        assert!(
            said.ends_with(&format!(
                "error: --format {format} reports findings, not differences: `diff` prints differences as human, brief, json or github\n"
            )),
            "{said}"
        );
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().to_str().unwrap();
        let run = rdmagen(&[
            "render",
            "examples/seed-swin-roce",
            "-o",
            out,
            "--check",
            "--format",
            format,
        ]);
        assert_eq!(run.status.code(), Some(2), "{format}");
        assert!(text(&run.stderr).contains("`render --check` prints differences"));
    }
}

#[test]
fn rules_accepts_only_the_formats_it_has() {
    for format in ["brief", "github", "sarif", "junit", "gitlab"] {
        let run = rdmagen(&["rules", "--format", format]);
        assert_eq!(run.status.code(), Some(2), "{format}");
        assert!(
            text(&run.stderr).contains("[possible values: human, json]"),
            "{}",
            text(&run.stderr)
        );
    }
    assert_eq!(
        rdmagen(&["rules", "--format", "json"]).status.code(),
        Some(0)
    );
}

/// A GitLab fingerprint is the finding's rule, file, object and field, not its line:
/// lines added above every finding move each `lines.begin` and leave every
/// fingerprint as it was, so a merge request shows no finding as fixed and new. Two
/// findings of one rule at one field of two objects in a file keep apart.
#[test]
fn gitlab_fingerprints_survive_shifted_lines() {
    let source = std::fs::read_to_string(crate::support::root().join(LONG_NAME)).unwrap();
    // Two objects with the same findings, the second renamed.
    let twice = format!(
        "{source}\n---\n{}",
        source.replacen("name: ", "name: other-", 1)
    );
    let report = |text: &str| {
        let dir = tempfile::tempdir().unwrap();
        crate::support::write(dir.path(), "deploy.yaml", text);
        let run =
            crate::support::rdmagen_in(dir.path(), &["lint", "deploy.yaml", "--format", "gitlab"]);
        let issues: Value = serde_json::from_slice(&run.stdout).unwrap();
        issues
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["fingerprint"].as_str().unwrap().to_owned(),
                    i["location"]["lines"]["begin"].as_u64().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let before = report(&twice);
    let after = report(&format!("# a comment\n# another\n{twice}"));
    assert!(before.len() >= 2, "{before:?}");
    assert_eq!(before.len(), after.len());
    for ((fp, line), (fp_after, line_after)) in before.iter().zip(&after) {
        assert_eq!(fp, fp_after);
        assert_eq!(line + 2, *line_after);
    }
    let mut unique: Vec<&String> = before.iter().map(|(fp, _)| fp).collect();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), before.len(), "{before:?}");
}
