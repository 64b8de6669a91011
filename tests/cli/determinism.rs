//! The same inputs give byte-identical output, to stdout and to a directory.

use crate::support::{examples, rdmagen, tree};

#[test]
fn two_runs_are_byte_identical() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    for example in examples() {
        let ex = example.to_str().unwrap();
        let a = rdmagen(&["render", ex]);
        let b = rdmagen(&["render", ex]);
        assert!(a.status.success(), "{ex}");
        assert!(!a.stdout.is_empty());
        assert_eq!(a.stdout, b.stdout, "{ex}: stdout differs between runs");
        for dir in [&first, &second] {
            let out = rdmagen(&["render", ex, "-o", dir.path().to_str().unwrap()]);
            assert!(out.status.success(), "{ex}");
        }
    }
    let (a, b) = (tree(first.path()), tree(second.path()));
    assert!(a.len() >= 10);
    assert_eq!(a, b);
}

#[test]
fn stdout_stream_equals_the_files_written() {
    let dir = tempfile::tempdir().unwrap();
    let ex = "examples/pv-pvc";
    let stdout = rdmagen(&["render", ex]).stdout;
    assert!(
        rdmagen(&["render", ex, "-o", dir.path().to_str().unwrap()])
            .status
            .success()
    );
    let files: Vec<String> = tree(dir.path())
        .into_iter()
        .map(|(_, bytes)| String::from_utf8(bytes).unwrap())
        .collect();
    assert_eq!(files.len(), 2, "pytorchjob.yaml and storage.yaml");
    assert_eq!(String::from_utf8(stdout).unwrap(), files.join("---\n"));
}
