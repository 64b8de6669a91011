//! The bad-input corpus: every file in tests/bad/ must fail with the rule, line and
//! exit code its header announces (`# run: render` then `# expect: RDG010 at 12 exit
//! 1`, the format tests/rules/ uses too), and must leave the output directory
//! untouched.

use crate::support::{fixture, rdmagen, root, text};

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
        let want = fixture(&source, &rel);
        let (Some(rule), Some(line), Some(exit)) = (&want.rule, want.line, want.exit) else {
            panic!("{rel}: a bad input names its rule, line and exit code");
        };

        let out_dir = tempfile::tempdir().unwrap();
        let target = out_dir.path().join("out");
        let mut args: Vec<&str> = want.args.iter().map(String::as_str).collect();
        args.extend([rel.as_str(), "-o", target.to_str().unwrap()]);
        let out = rdmagen(&args);
        let stderr = text(&out.stderr);

        assert_eq!(out.status.code(), Some(exit), "{rel}: exit code\n{stderr}");
        let header = format!("[{rule}]:");
        let pointer = format!("--> {rel}:{line}:");
        let found = stderr
            .split("\n\n")
            .any(|block| block.contains(&header) && block.contains(&pointer));
        assert!(found, "{rel}: expected {rule} at line {line}\n{stderr}");
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
    // An output directory (it has a record), so that the run gets as far as the
    // input; one with files and no record is refused before (output_safety).
    std::fs::write(out_dir.path().join(".rdmagen-owned"), "# none yet\n").unwrap();
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
    assert!(text(&out.stderr).contains("no *.yaml or *.yml file in examples/dockerfile"));
    assert!(
        !target.exists(),
        "no output directory, no staging directory"
    );
}
