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
        .filter(|(path, _)| path != ".rdmagen-owned")
        .map(|(_, bytes)| String::from_utf8(bytes).unwrap())
        .collect();
    assert_eq!(files.len(), 2, "pytorchjob.yaml and storage.yaml");
    assert_eq!(String::from_utf8(stdout).unwrap(), files.join("---\n"));
}

/// Many files on several threads, a pool defined twice with different content, jobs
/// that come before their pool: the findings are the same on every run.
#[test]
fn findings_do_not_depend_on_thread_timing() {
    let dir = tempfile::tempdir().unwrap();
    let pool = |fabric: &str| {
        format!(
            "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {{name: p}}\nspec:\n  platform: aistudio\n  gpu: {{perNode: 8}}\n  network: {{fabric: {fabric}, hcas: [mlx5_1], socketIfname: eth0, ibTimeout: 40}}\n"
        )
    };
    std::fs::write(dir.path().join("a-pool.yaml"), pool("roce")).unwrap();
    std::fs::write(dir.path().join("z-pool.yaml"), pool("tcp")).unwrap();
    for i in 0..200 {
        let job = format!(
            "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {{name: j{i}}}\nspec:\n  pool: {}\n  image: img:1\n  nodes: 2\n  gpusPerNode: 8\n  rdma: \"on\"\n  script: t.py\n  env: {{NCCL_IB_TC: \"1\"}}\n",
            if i % 2 == 0 { "p" } else { "q" }
        );
        std::fs::write(dir.path().join(format!("job-{i:03}.yaml")), job).unwrap();
    }
    std::fs::write(
        dir.path().join("q.yaml"),
        pool("ib").replace("name: p", "name: q"),
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    let first = rdmagen(&["validate", d, "--format", "json"]);
    assert_eq!(first.status.code(), Some(1));
    for _ in 0..4 {
        let again = rdmagen(&["validate", d, "--format", "json"]);
        assert_eq!(again.stdout, first.stdout, "findings changed between runs");
    }
    let findings: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let rules: Vec<&str> = findings["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    // One for the second definition of p, one for each of the 100 jobs on p.
    assert_eq!(
        rules.iter().filter(|r| **r == "RDG006").count(),
        101,
        "one duplicate pool, and each job on it"
    );
    assert_eq!(
        rules.iter().filter(|r| **r == "RDG020").count(),
        100,
        "jobs on q keep their findings"
    );
}

/// A job on a pool name defined twice is not rendered against either definition: it
/// says so once, after the duplicate's own error, naming where each definition is.
#[test]
fn a_job_on_a_pool_defined_twice_names_both_definitions() {
    let dir = tempfile::tempdir().unwrap();
    let pool = "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {name: p}\nspec:\n  gpu: {perNode: 8}\n  network: {fabric: tcp, socketIfname: eth0}\n";
    std::fs::write(dir.path().join("a-pool.yaml"), pool).unwrap();
    std::fs::write(dir.path().join("b-pool.yaml"), pool).unwrap();
    std::fs::write(
        dir.path().join("job.yaml"),
        "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n  pool: p\n  image: img:1\n  nodes: 2\n  gpusPerNode: 8\n  script: t.py\n",
    )
    .unwrap();
    let out = crate::support::rdmagen_in(dir.path(), &["validate", ".", "--format", "brief"]);
    assert_eq!(
        crate::support::text(&out.stdout),
        "./b-pool.yaml:3:12: error[RDG006]: pool `p` is defined more than once\n\
         ./job.yaml:5:3: error[RDG006]: pool `p` is defined more than once (./a-pool.yaml:3:12, ./b-pool.yaml:3:12); job not rendered\n"
    );
    assert_eq!(
        crate::support::text(&out.stderr),
        "error: 2 findings fail the run\n"
    );
    assert_eq!(out.status.code(), Some(1));
}
