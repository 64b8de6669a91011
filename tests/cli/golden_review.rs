//! `render --check/--bless` and `diff`: what a reviewer and a CI job see.

use std::path::Path;
use std::time::SystemTime;

use crate::support::{rdmagen, root, text, tree};

const EX: &str = "examples/seed-swin-roce";
const FILE: &str = "swin-large/pytorchjob.yaml";

/// A copy of the example's golden tree in a temporary directory.
fn golden_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, bytes) in tree(&root().join("golden/seed-swin-roce")) {
        let target = dir.path().join(&path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, bytes).unwrap();
    }
    dir
}

fn check(dir: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["render", EX, "-o", dir.to_str().unwrap(), "--check"];
    args.extend_from_slice(extra);
    let out = rdmagen(&args);
    (
        out.status.code().unwrap(),
        text(&out.stdout),
        text(&out.stderr),
    )
}

fn edit(dir: &Path, f: impl Fn(String) -> String) {
    let path = dir.join(FILE);
    let old = std::fs::read_to_string(&path).unwrap();
    let new = f(old.clone());
    assert_ne!(old, new, "the edit changes nothing");
    std::fs::write(path, new).unwrap();
}

fn mtimes(dir: &Path) -> Vec<SystemTime> {
    tree(dir)
        .iter()
        .map(|(p, _)| std::fs::metadata(dir.join(p)).unwrap().modified().unwrap())
        .collect()
}

#[test]
fn identical_trees_pass_and_nothing_is_touched() {
    let dir = golden_copy();
    let (before, times) = (tree(dir.path()), mtimes(dir.path()));
    std::thread::sleep(std::time::Duration::from_millis(20));
    let (code, stdout, stderr) = check(dir.path(), &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.is_empty());
    assert_eq!(stderr.trim(), "1 checked, 0 differ, 0 missing, 0 stale");
    assert_eq!(tree(dir.path()), before);
    assert_eq!(mtimes(dir.path()), times, "timestamps untouched");
}

#[test]
fn a_changed_value_shows_its_diff_and_path() {
    let dir = golden_copy();
    edit(dir.path(), |t| {
        t.replacen("value: \"3\"", "value: \"5\"", 2)
    });
    let (code, stdout, stderr) = check(dir.path(), &["--semantic"]);
    assert_eq!(code, 1);
    let golden = format!("{}/{FILE}", dir.path().display());
    let golden = golden.trim_start_matches('/');
    assert!(
        stdout.contains(&format!("--- a/{golden}\n+++ b/{golden}\n")),
        "{stdout}"
    );
    assert!(
        stdout.contains("-                  value: \"5\"\n+                  value: \"3\"\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "± spec.pytorchReplicaSpecs.Worker.template.spec.containers[pytorch].env[NCCL_IB_GID_INDEX].value: \"5\" → \"3\""
        ),
        "{stdout}"
    );
    assert_eq!(stderr.trim(), "1 checked, 1 differ, 0 missing, 0 stale");
    assert!(!stdout.contains('\x1b'), "piped output is plain");
}

#[test]
fn the_same_change_in_many_files_is_grouped() {
    let dir = tempfile::tempdir().unwrap();
    let golden = dir.path().join("golden");
    let out = rdmagen(&["render", "examples", "-o", golden.to_str().unwrap()]);
    assert!(out.status.success());
    let changed = dir.path().join("changed");
    for (path, bytes) in tree(&golden) {
        let target = changed.join(&path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        let body = String::from_utf8(bytes).unwrap().replace(
            "sidecar.istio.io/inject: \"false\"",
            "sidecar.istio.io/inject: \"true\"",
        );
        std::fs::write(target, body).unwrap();
    }
    let out = rdmagen(&[
        "diff",
        golden.to_str().unwrap(),
        changed.to_str().unwrap(),
        "--semantic",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    // Thirty-four jobs have a Master and a Worker; the two single-node jobs only a Master.
    assert!(stdout.contains("same change in 34 files: "), "{stdout}");
    assert!(stdout.contains("and 31 more\n"), "{stdout}");
    assert!(stdout.contains("  ± spec.pytorchReplicaSpecs.Worker.template.metadata.annotations[\"sidecar.istio.io/inject\"]: \"false\" → \"true\"\n"), "{stdout}");
}

#[test]
fn a_missing_golden_file_is_a_difference() {
    let dir = golden_copy();
    std::fs::remove_file(dir.path().join(FILE)).unwrap();
    let (code, stdout, stderr) = check(dir.path(), &["--format", "brief"]);
    assert_eq!(code, 1);
    assert_eq!(stdout, format!("A {}/{FILE}\n", dir.path().display()));
    assert_eq!(stderr.trim(), "1 checked, 0 differ, 1 missing, 0 stale");
    assert!(!dir.path().join(FILE).exists(), "--check writes nothing");
}

#[test]
fn stale_files_are_reported_and_pruned_only_when_asked() {
    let dir = golden_copy();
    let stale = dir.path().join("old-job/pytorchjob.yaml");
    std::fs::create_dir_all(stale.parent().unwrap()).unwrap();
    std::fs::write(&stale, "kind: Old\n").unwrap();
    // A job rdmagen rendered once (its record says so) and no input renders now.
    let record = dir.path().join(".rdmagen-owned");
    let listed = std::fs::read_to_string(&record).unwrap();
    let mut fnv = fnv::FnvHasher::default();
    std::hash::Hasher::write(&mut fnv, b"kind: Old\n");
    let fingerprint = std::hash::Hasher::finish(&fnv);
    std::fs::write(
        &record,
        format!("{listed}old-job/pytorchjob.yaml\tfnv1a64:{fingerprint:016x}\n"),
    )
    .unwrap();
    let (code, stdout, _) = check(dir.path(), &["--format", "brief"]);
    assert_eq!(code, 1);
    assert!(stdout.contains("D "), "{stdout}");
    let d = dir.path().to_str().unwrap();
    let out = rdmagen(&["render", EX, "-o", d, "--bless"]);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("stale (kept; --prune deletes it)"));
    assert!(stale.exists());
    let out = rdmagen(&["render", EX, "-o", d, "--bless", "--prune"]);
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("deleted: "),
        "{}",
        text(&out.stderr)
    );
    assert!(!stale.exists() && !dir.path().join("old-job").exists());
    assert_eq!(check(dir.path(), &[]).0, 0);
}

#[test]
fn reordered_env_is_a_reorder_not_removal_plus_addition() {
    let dir = golden_copy();
    let debug = "                - name: NCCL_DEBUG\n                  value: INFO\n";
    let gid = "                - name: NCCL_IB_GID_INDEX\n                  value: \"3\"\n";
    edit(dir.path(), |t| {
        t.replace(&format!("{debug}{gid}"), &format!("{gid}{debug}"))
    });
    let (code, stdout, _) = check(dir.path(), &["--semantic"]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("⇆ spec.pytorchReplicaSpecs.Master.template.spec.containers[pytorch].env: [\"NCCL_IB_GID_INDEX\",\"NCCL_DEBUG\""),
        "{stdout}"
    );
    assert!(
        !stdout.contains("- spec.pytorchReplicaSpecs"),
        "no removal reported:\n{stdout}"
    );
    assert!(
        !stdout.contains("+ spec.pytorchReplicaSpecs"),
        "no addition reported:\n{stdout}"
    );
}

#[test]
fn bless_is_idempotent() {
    let dir = golden_copy();
    edit(dir.path(), |t| t.replace("queue: default", "queue: other"));
    let d = dir.path().to_str().unwrap();
    // A golden file edited by hand is not rdmagen's to overwrite unasked.
    let out = rdmagen(&["render", EX, "-o", d, "--bless"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("(edited since rdmagen wrote it"),
        "{}",
        text(&out.stderr)
    );
    let out = rdmagen(&["render", EX, "-o", d, "--bless", "--force"]);
    assert!(out.status.success());
    assert!(
        text(&out.stderr).contains("updated: "),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(check(dir.path(), &[]).0, 0);
    let times = mtimes(dir.path());
    let out = rdmagen(&["render", EX, "-o", d, "--bless"]);
    assert!(
        text(&out.stderr).contains("0 created, 0 updated, 1 unchanged"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(mtimes(dir.path()), times);
}

#[test]
fn crlf_and_a_missing_final_newline_are_named() {
    let dir = golden_copy();
    edit(dir.path(), |t| t.replace('\n', "\r\n"));
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("only line endings differ: the old file uses CRLF"),
        "{stdout}"
    );
    assert!(
        stdout.lines().count() < 5,
        "not shown as a whole-file rewrite:\n{stdout}"
    );

    let dir = golden_copy();
    edit(dir.path(), |t| t.trim_end_matches('\n').to_owned());
    let (code, stdout, _) = check(dir.path(), &[]);
    assert_eq!(code, 1);
    assert!(
        stdout.contains("the old file lacks the final newline"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .filter(|l| l.starts_with('-') && !l.starts_with("---"))
            .count()
            == 1,
        "{stdout}"
    );
}

#[test]
fn input_errors_during_check_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = rdmagen(&[
        "render",
        "tests/bad/ib-tc.yaml",
        "-o",
        dir.path().to_str().unwrap(),
        "--check",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = rdmagen(&[
        "render",
        "tests/bad/syntax-error.yaml",
        "-o",
        dir.path().to_str().unwrap(),
        "--check",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn check_and_bless_are_exclusive_and_need_an_output() {
    assert_eq!(rdmagen(&["render", EX, "--check"]).status.code(), Some(2));
    let out = rdmagen(&["render", EX, "-o", "x", "--check", "--bless"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        rdmagen(&["render", EX, "-o", "x", "--prune"]).status.code(),
        Some(2)
    );
}

#[test]
fn in_ci_nothing_is_written_without_bless() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out");
    let run = |extra: &[&str]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rdmagen"));
        cmd.args(["render", EX, "-o", target.to_str().unwrap()])
            .args(extra)
            .current_dir(root())
            .env("CI", "true");
        cmd.output().unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2), "a missing DIR is not compared");
    assert!(
        text(&out.stderr).contains("does not exist: pass --write to render into it"),
        "{}",
        text(&out.stderr)
    );
    assert!(!target.exists());
    assert!(run(&["--bless"]).status.success());
    assert!(target.join(FILE).exists());
    let out = run(&[]);
    assert!(out.status.success());
    assert!(text(&out.stderr).contains("CI is set: comparing"));
}

#[test]
fn a_deploy_pipeline_writes_with_write_and_ci_false_is_not_ci() {
    for (ci, extra) in [
        ("true", &["--write"][..]),
        ("false", &[]),
        ("0", &[]),
        ("", &[]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("fresh");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_rdmagen"))
            .args(["render", EX, "-o", target.to_str().unwrap()])
            .args(extra)
            .current_dir(root())
            .env("CI", ci)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "CI={ci:?} {extra:?}: {}",
            text(&out.stderr)
        );
        assert!(target.join(FILE).exists(), "CI={ci:?} {extra:?}");
    }
}

#[test]
fn json_and_github_formats() {
    let dir = golden_copy();
    edit(dir.path(), |t| {
        t.replacen("value: \"3\"", "value: \"5\"", 1)
    });
    let (_, stdout, _) = check(dir.path(), &["--format", "json"]);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["differ"], 1);
    assert_eq!(doc["files"][0]["status"], "differs");
    assert_eq!(doc["files"][0]["changes"][0]["kind"], "modified");
    let (_, stdout, _) = check(dir.path(), &["--format", "github"]);
    assert!(
        stdout.starts_with(&format!(
            "::error file={}/{FILE},line=53,",
            dir.path().display()
        )),
        "{stdout}"
    );
}

/// On a terminal (a pseudo-terminal from script(1)) --color auto colours the diff.
#[test]
fn colour_on_a_terminal() {
    let dir = golden_copy();
    edit(dir.path(), |t| {
        t.replacen("value: \"3\"", "value: \"5\"", 1)
    });
    let command = format!(
        "{} render {EX} -o {} --check",
        env!("CARGO_BIN_EXE_rdmagen"),
        dir.path().display()
    );
    let Ok(out) = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(root())
        .env_remove("NO_COLOR")
        .env_remove("CI")
        .output()
    else {
        eprintln!("skipped: script(1) not available");
        return;
    };
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("\x1b[31m-"),
        "coloured removal on a tty:\n{stdout:?}"
    );
    assert!(
        stdout.contains("± spec"),
        "semantic summary by default on a tty"
    );
    let with_no_color = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("CI")
        .output()
        .unwrap();
    assert!(
        !text(&with_no_color.stdout).contains("\x1b[31m"),
        "NO_COLOR disables colour"
    );
}
