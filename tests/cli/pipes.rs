//! A reader that closes stdout early (`rdmagen lint x | head -1`) is a normal end:
//! no panic, no "Broken pipe", and the exit code the run would have had had the
//! reader read to the end (README "Exit codes").

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{rdmagen_in, root, text};

/// Run `rdmagen args` in `dir` with stdout a pipe whose reader takes one line and
/// closes it; the exit code and stderr.
fn first_line_only(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmagen"))
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rdmagen runs");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(!first.is_empty(), "{args:?} printed nothing");
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (child.wait().unwrap().code(), stderr)
}

/// Far more than a pipe holds (64 KiB on Linux), so the writer meets the closed end.
const PLENTY: usize = 512 * 1024;

fn assert_quiet_end(args: &[&str], dir: &Path, expected_code: i32) {
    let whole = rdmagen_in(dir, args);
    assert_eq!(
        whole.status.code(),
        Some(expected_code),
        "{}",
        text(&whole.stderr)
    );
    assert!(
        whole.stdout.len() > PLENTY,
        "{args:?}: only {} bytes, not enough to fill a pipe",
        whole.stdout.len()
    );
    let (code, stderr) = first_line_only(dir, args);
    assert!(
        !stderr.contains("panick") && !stderr.to_lowercase().contains("broken pipe"),
        "{args:?}: {stderr}"
    );
    assert!(
        !stderr.contains("error:") || text(&whole.stderr).contains("error:"),
        "{args:?}: {stderr}"
    );
    assert_eq!(code, Some(expected_code), "{args:?}: {stderr}");
}

#[test]
fn lint_into_a_closed_pipe_ends_quietly_with_its_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let seed = std::fs::read_to_string(root().join("tests/lint/seed-swin.yaml")).unwrap();
    for n in 0..300 {
        std::fs::write(dir.path().join(format!("job-{n:03}.yaml")), &seed).unwrap();
    }
    // Findings that fail the run: 1, whether or not the reader read them all.
    assert_quiet_end(&["lint", "."], dir.path(), 1);
    // Nothing is said after stdout closed: no summary, no "error: … fail the run".
    let (_, stderr) = first_line_only(dir.path(), &["lint", "."]);
    assert_eq!(stderr, "");
}

#[test]
fn render_into_a_closed_pipe_ends_quietly_with_success() {
    let dir = tempfile::tempdir().unwrap();
    let example = root().join("examples/seed-swin-roce");
    std::fs::copy(example.join("pool.yaml"), dir.path().join("pool.yaml")).unwrap();
    let job = std::fs::read_to_string(example.join("job.yaml")).unwrap();
    assert!(job.contains("name: swin-large,"));
    let jobs: Vec<String> = (0..200)
        .map(|n| job.replace("name: swin-large,", &format!("name: swin-{n:03},")))
        .collect();
    std::fs::write(dir.path().join("jobs.yaml"), jobs.join("\n---\n")).unwrap();
    assert_quiet_end(
        &["render", "jobs.yaml", "--pools", "pool.yaml"],
        dir.path(),
        0,
    );
}
