//! What `diff` and `render --check` print about differences: headers a patch tool
//! accepts, each side under its own name, every change annotated, line endings named
//! apart, and values in JSON as JSON.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::{rdmagen, rdmagen_in, root, text, tree};

const OLD: &str = "tests/snapshots/inputs/old.yaml";
const NEW: &str = "tests/snapshots/inputs/new.yaml";

#[test]
fn two_files_are_each_named_in_the_headers() {
    let run = rdmagen(&["diff", OLD, NEW]);
    assert_eq!(run.status.code(), Some(1));
    let stdout = text(&run.stdout);
    assert!(
        stdout.starts_with(&format!("--- {OLD}\n+++ {NEW}\n@@ ")),
        "{stdout}"
    );
}

#[test]
fn a_missing_path_is_named_as_missing() {
    for args in [[OLD, "no/such.yaml"], ["no/such.yaml", OLD]] {
        let run = rdmagen(&["diff", args[0], args[1]]);
        assert_eq!(run.status.code(), Some(2));
        assert_eq!(text(&run.stderr), "error: no/such.yaml: does not exist\n");
    }
    let run = rdmagen(&["diff", OLD, "golden"]);
    assert_eq!(
        text(&run.stderr),
        format!(
            "error: {OLD}: is not a directory while golden is; compare two files or two directories\n"
        )
    );
}

/// `checked` counts every file compared, the same ones too.
#[test]
fn json_counts_every_file_and_writes_values_as_json() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for side in [&a, &b] {
        std::fs::create_dir(side).unwrap();
        std::fs::copy(root().join(OLD), side.join("same.yaml")).unwrap();
    }
    std::fs::copy(root().join(OLD), a.join("changed.yaml")).unwrap();
    std::fs::copy(root().join(NEW), b.join("changed.yaml")).unwrap();
    let run = rdmagen(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let doc: Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(doc["checked"], 2, "{doc}");
    assert_eq!(doc["differ"], 1);
    let changes = &doc["files"][0]["changes"];
    assert_eq!(changes[0]["old"], 1, "a number stays a number: {changes}");
    assert_eq!(changes[0]["new"], 3);
    assert_eq!(
        changes[1]["old"], "3",
        "a string is one JSON string: {changes}"
    );
    assert_eq!(changes[1]["new"], "5");
    assert_eq!(
        text(&run.stderr),
        "2 checked, 1 differ, 0 missing, 0 stale\n"
    );
}

/// Each hunk is an annotation at its own line, not only the first change.
#[test]
fn github_annotates_every_change() {
    let run = rdmagen(&["diff", OLD, NEW, "--format", "github"]);
    let stdout = text(&run.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with(&format!(
            "::error file={NEW},line=12,title=rdmagen golden::differs from {OLD} (change 1 of 2)%0A"
        )),
        "{stdout}"
    );
    assert!(
        lines[1].starts_with(&format!(
            "::error file={NEW},line=47,title=rdmagen golden::differs from {OLD} (change 2 of 2)%0A@@ -44,7 +44,7 @@"
        )),
        "{stdout}"
    );
}

/// A new file written with CRLF is compared line by line, and the changed line
/// endings are said once rather than shown as every line rewritten.
#[test]
fn a_crlf_new_file_is_not_a_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let new = std::fs::read_to_string(root().join(NEW)).unwrap();
    let crlf = dir.path().join("crlf.yaml");
    std::fs::write(&crlf, new.replace('\n', "\r\n")).unwrap();
    let run = rdmagen(&["diff", OLD, crlf.to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(1));
    let stdout = text(&run.stdout);
    let changed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with(['-', '+']) && !l.starts_with("---") && !l.starts_with("+++"))
        .collect();
    assert_eq!(
        changed,
        [
            "-      replicas: 1",
            "+      replicas: 3",
            "-                  value: \"3\"",
            "+                  value: \"5\""
        ],
        "{stdout}"
    );
    assert!(
        stdout.starts_with(&format!(
            "{}: line endings changed: the new file uses CRLF (\\r\\n), the old one LF; lines compared without them\n",
            crlf.display()
        )),
        "{stdout}"
    );
}

fn git(dir: &Path, args: &[&str], stdin: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("git runs");
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

/// `render --check` prints a patch git accepts: applied to the golden tree it makes
/// the tree what the inputs render, for changed, missing and stale files alike.
#[test]
fn render_check_prints_a_patch_git_applies() {
    let work = tempfile::tempdir().unwrap();
    let golden = work.path().join("golden");
    for (path, bytes) in tree(&root().join("golden/two-namespaces")) {
        let target = golden.join(&path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, bytes).unwrap();
    }
    let fresh = tree(&golden);
    // Changed, missing and stale.
    let changed = golden.join("eval/pytorchjob.yaml");
    let text_before = std::fs::read_to_string(&changed).unwrap();
    std::fs::write(&changed, text_before.replacen("name: ", "name: x", 1)).unwrap();
    std::fs::remove_file(golden.join("train.team-b/Dockerfile")).unwrap();
    std::fs::write(golden.join("eval/left-over.yaml"), "a: 1\nb: 2\n").unwrap();

    let input = root().join("examples/two-namespaces");
    let check = |format: &str| {
        rdmagen_in(
            work.path(),
            &[
                "render",
                input.to_str().unwrap(),
                "-o",
                "golden",
                "--check",
                "--format",
                format,
            ],
        )
    };
    let run = check("human");
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    let patch = run.stdout;
    let shown = text(&patch);
    assert!(
        shown.contains("--- a/golden/eval/pytorchjob.yaml\n+++ b/golden/eval/pytorchjob.yaml\n"),
        "{shown}"
    );
    assert!(
        shown.contains("--- /dev/null\n+++ b/golden/train.team-b/Dockerfile\n"),
        "{shown}"
    );
    assert!(
        shown.contains("--- a/golden/eval/left-over.yaml\n+++ /dev/null\n"),
        "{shown}"
    );

    let checked = git(work.path(), &["apply", "--check", "-"], &patch);
    assert!(
        checked.status.success(),
        "{}\n{shown}",
        text(&checked.stderr)
    );
    let applied = git(work.path(), &["apply", "-"], &patch);
    assert!(applied.status.success(), "{}", text(&applied.stderr));
    assert_eq!(tree(&golden), fresh, "the patched tree is the render");
    assert_eq!(check("human").status.code(), Some(0));
}
