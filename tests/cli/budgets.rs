//! Bounded work per file (issue 22): a budget on YAML documents and nodes with a
//! located finding, a cap on findings per rule and file with an "and N more" in every
//! format, and the duplicate-HCA check at scale. What these cost is measured in
//! bench/ (`bench/hostile 22`), never here.

use crate::support::{rdmagen_in, text, write};

/// `n` documents of `a: 1`; document k starts at line 2k - 1.
fn flood(n: usize) -> String {
    "---\na: 1\n".repeat(n)
}

/// `actual` is `expected`; on failure only the start of `actual` is printed (before
/// the budgets, a flood printed a line per document).
fn assert_output(actual: &[u8], expected: &str) {
    let actual = text(actual);
    let start: String = actual.chars().take(2000).collect();
    assert!(
        actual == expected,
        "expected {expected:?}, got {} bytes: {start}",
        actual.len()
    );
}

const PAST_DOCUMENTS: &str = "flood.yaml:200001:1: error[RDG176]: this file holds more than 100000 YAML documents, the most rdmagen reads from one file; this is the first past that: split the file\n";

#[test]
fn a_flood_of_tiny_documents_is_refused_at_the_first_past_the_budget_by_lint() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "flood.yaml", &flood(120_000));
    let out = rdmagen_in(dir.path(), &["lint", "flood.yaml", "--format", "brief"]);
    assert_output(&out.stdout, PAST_DOCUMENTS);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_flood_of_tiny_documents_is_refused_by_validate_and_render() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "flood.yaml", &flood(120_000));
    let out = rdmagen_in(dir.path(), &["validate", "flood.yaml", "--format", "brief"]);
    assert_output(&out.stdout, PAST_DOCUMENTS);
    assert_eq!(out.status.code(), Some(2));
    let out = rdmagen_in(dir.path(), &["render", "flood.yaml", "--format", "brief"]);
    assert_output(&out.stdout, "");
    assert_output(
        &out.stderr,
        &format!("{PAST_DOCUMENTS}error: 1 finding fails the run; nothing was written\n"),
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_flood_of_tiny_documents_is_named_by_diff_semantic() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "old.yaml", "a: 1\n");
    write(dir.path(), "flood.yaml", &flood(120_000));
    let out = rdmagen_in(
        dir.path(),
        &["diff", "--semantic", "old.yaml", "flood.yaml"],
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("flood.yaml: not compared structurally (line 200001, column 1: this file holds more than 100000 YAML documents, the most rdmagen reads from one file; this is the first past that: split the file)\n\n--- old.yaml\n+++ flood.yaml\n@@ -1 +1,240000 @@\n"),
        "{}",
        &stdout[..stdout.len().min(2000)]
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_document_of_too_many_nodes_is_refused_at_the_first_past_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    // A sequence and 3 000 000 scalars: the 3 000 000th scalar is node 3 000 001.
    let mut items = String::from("[");
    items.push_str(&"a,".repeat(3_000_000));
    items.push_str("a]\n");
    write(dir.path(), "items.yaml", &items);
    let out = rdmagen_in(dir.path(), &["lint", "items.yaml", "--format", "brief"]);
    assert_output(
        &out.stdout,
        "items.yaml:1:6000000: error[RDG176]: this file holds more than 3000000 YAML nodes (scalars, sequences and mappings), the most rdmagen reads from one file; this is the first past that: split the file\n",
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn documents_within_the_budget_are_read() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "flood.yaml", &flood(100_000));
    let out = rdmagen_in(dir.path(), &["lint", "flood.yaml", "--format", "brief"]);
    assert_output(&out.stdout, "");
    // Read, and found to hold no manifest: "nothing to lint", not a budget.
    assert!(text(&out.stderr).starts_with("error: nothing to lint: no PyTorchJob"));
    assert_eq!(out.status.code(), Some(2));
}

/// A Dockerfile that sets `n` NCCL variables in the image: a warning each.
fn env_dockerfile(n: usize) -> String {
    let mut text = String::from("FROM ubuntu:22.04\n");
    for i in 0..n {
        text.push_str(&format!("ENV NCCL_IB_HCA{i}=x\n"));
    }
    text
}

/// The message every format shows in place of the 50 warnings past the cap.
const FIFTY_MORE: &str = "and 50 more RDG080 findings in Dockerfile, not shown: rdmagen shows the first 100 of each rule in each file";

#[test]
fn findings_past_the_cap_are_one_and_n_more_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "Dockerfile", &env_dockerfile(150));
    let run = |format: &str| {
        let out = rdmagen_in(
            dir.path(),
            &["image-check", "Dockerfile", "--format", format],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        (text(&out.stdout), text(&out.stderr))
    };

    // RDG081 (no RDMA packages) at line 1, RDG080 at lines 2-101, then the rest in one.
    let (brief, _) = run("brief");
    let lines: Vec<&str> = brief.lines().collect();
    assert_eq!(lines.len(), 102, "{brief}");
    assert_eq!(
        lines[100],
        "Dockerfile:101:1: warning[RDG080]: the image bakes in NCCL_IB_HCA99=x; env in the pod overrides it, but where the pod leaves NCCL_IB_HCA99 unset (rdmagen does on purpose, e.g. for a platform preset, `gidIndex: auto` or an NCCL default) the image's value stands"
    );
    assert_eq!(
        lines[101],
        format!("Dockerfile:102:1: warning[RDG080]: {FIFTY_MORE}")
    );

    // The human report shows the first line not shown, and counts every finding.
    let (human, summary) = run("human");
    assert!(human.ends_with(&format!(
        "warning[RDG080]: {FIFTY_MORE}\n   --> Dockerfile:102:1\n    |\n102 | ENV NCCL_IB_HCA100=x\n    | ^\n    = RDG080: the image sets an NCCL variable with ENV (source: docs/sources.md#seed-000-aistudio-rdma-network-page)\n\n"
    )), "{human}");
    assert_eq!(
        summary,
        "1 Dockerfile(s) checked: 0 errors, 151 warnings, 0 infos\n"
    );

    let (json, _) = run("json");
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let findings = json["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 102);
    assert_eq!(findings[101]["message"], FIFTY_MORE);
    assert_eq!(findings[101]["line"], 102);
    assert_eq!(json["warnings"], 151);

    let (sarif, _) = run("sarif");
    let sarif: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 102);
    assert_eq!(results[101]["message"]["text"], FIFTY_MORE);

    let (junit, _) = run("junit");
    assert_eq!(junit.matches("warning[RDG080]").count(), 101, "{junit}");
    assert!(junit.contains(&format!(
        "Dockerfile:102:1: warning[RDG080]: {FIFTY_MORE}\n</system-out>"
    )));

    let (github, _) = run("github");
    assert_eq!(github.lines().count(), 102);
    assert_eq!(
        github.lines().last().unwrap(),
        format!(
            "::warning file=Dockerfile,line=102,col=1,title=RDG080 the image sets an NCCL variable with ENV::{FIFTY_MORE}"
        )
    );
}

#[test]
fn findings_at_the_cap_are_all_shown() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "Dockerfile", &env_dockerfile(100));
    let out = rdmagen_in(
        dir.path(),
        &["image-check", "Dockerfile", "--format", "brief"],
    );
    let brief = text(&out.stdout);
    assert_eq!(brief.lines().count(), 101, "{brief}");
    assert!(!brief.contains("more RDG080"));
}

/// The duplicate-HCA check is a set lookup now (it was `hcas[..i].contains`, 71 % of
/// `detect` over 100 000 GID rows): a pool of 10 000 HCAs still gets the one
/// duplicate, at its own item.
#[test]
fn a_duplicate_among_ten_thousand_hcas_is_found_at_its_item() {
    let dir = tempfile::tempdir().unwrap();
    let hcas: String = (0..10_000).map(|i| format!("      - mlx5_{i}\n")).collect();
    let pool = format!(
        "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {{name: big}}\nspec:\n  gpu: {{perNode: 8}}\n  network:\n    fabric: roce\n    hcas:\n{hcas}      - mlx5_17\n    socketIfname: eth0\n    gidIndex: 3\n"
    );
    write(dir.path(), "pool.yaml", &pool);
    write(
        dir.path(),
        "job.yaml",
        "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n  pool: big\n  image: registry.example.com/x:1\n  nodes: 2\n  gpusPerNode: 8\n  script: train.py\n",
    );
    let out = rdmagen_in(
        dir.path(),
        &["validate", "job.yaml", "pool.yaml", "--format", "brief"],
    );
    assert_output(
        &out.stdout,
        "pool.yaml:9:9: warning[RDG043]: `mlx5_0` is the management NIC (set `managementNic` if these nodes use another one)\npool.yaml:10009:9: error[RDG042]: `mlx5_17` is listed twice\n",
    );
    assert_eq!(out.status.code(), Some(1));
}
