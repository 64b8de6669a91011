//! The bad-input corpus: every file in tests/bad/ must fail with the rule, line and
//! exit code its first line announces (`# expect: RDG010 at 12 exit 1`), and must
//! leave the output directory untouched.

use crate::support::{rdmagen, root, text};

struct Expectation {
    rule: String,
    line: usize,
    exit: i32,
    /// Extra flags, e.g. `--deny-warnings` for a warning that must stop the run.
    flags: Vec<String>,
}

fn expectation(first_line: &str) -> Expectation {
    let words: Vec<&str> = first_line.split_whitespace().collect();
    match words.as_slice() {
        ["#", "expect:", rule, "at", line, "exit", exit, flags @ ..] => Expectation {
            rule: (*rule).to_owned(),
            line: line.parse().expect("line number"),
            exit: exit.parse().expect("exit code"),
            flags: flags.iter().map(|f| (*f).to_owned()).collect(),
        },
        _ => panic!("malformed expectation line: {first_line}"),
    }
}

#[test]
fn every_bad_input_fails_with_its_rule_line_and_exit_code() {
    let mut files: Vec<_> = std::fs::read_dir(root().join("tests/bad"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "the corpus has {} files", files.len());
    for path in files {
        let rel = path
            .strip_prefix(root())
            .unwrap()
            .to_str()
            .unwrap()
            .replace('\\', "/");
        let source = std::fs::read_to_string(&path).unwrap();
        let want = expectation(source.lines().next().unwrap());

        let out_dir = tempfile::tempdir().unwrap();
        let target = out_dir.path().join("out");
        let mut args = vec!["render", rel.as_str(), "-o", target.to_str().unwrap()];
        args.extend(want.flags.iter().map(String::as_str));
        let out = rdmagen(&args);
        let stderr = text(&out.stderr);

        assert_eq!(
            out.status.code(),
            Some(want.exit),
            "{rel}: exit code\n{stderr}"
        );
        let header = format!("[{}]:", want.rule);
        let pointer = format!("--> {rel}:{}:", want.line);
        let found = stderr
            .split("\n\n")
            .any(|block| block.contains(&header) && block.contains(&pointer));
        assert!(
            found,
            "{rel}: expected {} at line {}\n{stderr}",
            want.rule, want.line
        );
        assert!(stderr.contains("nothing was written"), "{rel}: {stderr}");
        assert!(out.stdout.is_empty(), "{rel}: wrote to stdout");
        assert!(!target.exists(), "{rel}: created the output directory");
    }
}

#[test]
fn an_existing_output_directory_is_left_untouched() {
    let out_dir = tempfile::tempdir().unwrap();
    let keep = out_dir.path().join("keep.txt");
    std::fs::write(&keep, "untouched").unwrap();
    let before = crate::support::tree(out_dir.path());
    let out = rdmagen(&[
        "render",
        "tests/bad/ib-tc.yaml",
        "-o",
        out_dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(crate::support::tree(out_dir.path()), before);
}

#[test]
fn missing_input_file_is_an_io_error() {
    let out = rdmagen(&["render", "no/such/file.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no/such/file.yaml"));
}

#[test]
fn usage_errors_exit_2() {
    let out = rdmagen(&["render"]);
    assert_eq!(out.status.code(), Some(2));
    let out = rdmagen(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn no_jobs_is_a_usage_error_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out");
    let out = rdmagen(&[
        "render",
        "examples/dockerfile",
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no Job documents in examples/dockerfile"));
    assert!(
        !target.exists(),
        "no output directory, no staging directory"
    );
}
