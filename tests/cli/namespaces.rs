//! Jobs with one name in several namespaces: each is written to `DIR/<job>.<namespace>/`
//! (one without a namespace keeps `DIR/<job>/`); a job whose name no other job has
//! keeps `DIR/<job>/`; one name twice in one namespace is still RDG006.

use std::path::Path;

use crate::support::{rdmagen, root, text, tree};

const EX: &str = "examples/two-namespaces";

const POOL: &str = "apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: p}
spec:
  gpu: {perNode: 8}
  network: {fabric: roce, hcas: [mlx5_1, mlx5_2], socketIfname: eth0, gidIndex: 3}
";

/// A Job document named `name`, in `namespace` when given.
fn job(name: &str, namespace: Option<&str>) -> String {
    let meta = match namespace {
        Some(ns) => format!("{{name: {name}, namespace: {ns}}}"),
        None => format!("{{name: {name}}}"),
    };
    format!(
        "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {meta}
spec:
  pool: p
  image: img:1
  nodes: 2
  gpusPerNode: 8
  script: train.py
---
"
    )
}

/// Write `jobs` and the pool into `dir/jobs.yaml`; return its path.
fn inputs(dir: &Path, jobs: &[(&str, Option<&str>)]) -> String {
    let mut body: String = jobs.iter().map(|(n, ns)| job(n, *ns)).collect();
    body.push_str(POOL);
    let path = dir.join("jobs.yaml");
    std::fs::write(&path, body).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The relative paths of the files below `dir`, in walk order (`train/` before
/// `train.team-a/`).
fn files(dir: &Path) -> Vec<String> {
    tree(dir).into_iter().map(|(path, _)| path).collect()
}

fn read(dir: &Path, rel: &str) -> String {
    std::fs::read_to_string(dir.join(rel)).unwrap()
}

#[test]
fn jobs_sharing_a_name_across_namespaces_are_written_to_name_dot_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let run = rdmagen(&["render", EX, "-o", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(
        text(&run.stderr),
        format!(
            "3 job(s) rendered to {}: 4 created, 0 updated, 0 unchanged\n",
            out.display()
        )
    );
    assert_eq!(
        files(&out),
        [
            ".rdmagen-owned",
            "eval/pytorchjob.yaml",
            "train.team-a/pytorchjob.yaml",
            "train.team-b/Dockerfile",
            "train.team-b/pytorchjob.yaml",
        ]
    );
    assert_eq!(
        read(&out, ".rdmagen-owned")
            .lines()
            .filter(|line| !line.starts_with('#'))
            .filter_map(|line| line.split_once("\tfnv1a64:").map(|(path, _)| path))
            .collect::<Vec<_>>(),
        [
            "eval/pytorchjob.yaml",
            "train.team-a/pytorchjob.yaml",
            "train.team-b/Dockerfile",
            "train.team-b/pytorchjob.yaml",
        ]
    );
    for (rel, namespace) in [
        ("train.team-a/pytorchjob.yaml", "team-a"),
        ("train.team-b/pytorchjob.yaml", "team-b"),
        ("eval/pytorchjob.yaml", "team-a"),
    ] {
        let manifest = read(&out, rel);
        assert!(
            manifest.contains(&format!("  namespace: {namespace}\n")),
            "{rel}:\n{manifest}"
        );
    }
    // Without -o both jobs are in the stream, in input order, as written to the files.
    let stdout = rdmagen(&["render", EX]);
    assert!(stdout.status.success());
    let stream = [
        "train.team-a/pytorchjob.yaml",
        "train.team-b/pytorchjob.yaml",
        "eval/pytorchjob.yaml",
    ]
    .map(|rel| read(&out, rel))
    .join("---\n");
    assert_eq!(text(&stdout.stdout), stream);
}

#[test]
fn a_job_without_a_namespace_keeps_its_directory_beside_its_namesakes() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(
        dir.path(),
        &[
            ("train", Some("team-a")),
            ("train", None),
            ("solo", Some("team-a")),
        ],
    );
    let out = dir.path().join("out");
    let run = rdmagen(&["render", &input, "-o", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(
        files(&out),
        [
            ".rdmagen-owned",
            "solo/pytorchjob.yaml",
            "train/pytorchjob.yaml",
            "train.team-a/pytorchjob.yaml",
        ]
    );
    assert!(!read(&out, "train/pytorchjob.yaml").contains("namespace:"));
    assert!(read(&out, "train.team-a/pytorchjob.yaml").contains("  namespace: team-a\n"));
}

#[test]
fn one_name_twice_in_one_namespace_is_still_an_error_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let input = inputs(
        dir.path(),
        &[
            ("train", Some("team-a")),
            ("train", Some("team-b")),
            ("train", Some("team-a")),
        ],
    );
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("keep.txt"), "ours\n").unwrap();
    // An output directory (it has a record), so that each mode gets as far as the
    // inputs; one with files and no record is refused before (output_safety).
    std::fs::write(out.join(".rdmagen-owned"), "# none yet\n").unwrap();
    let before = tree(&out);
    let d = out.to_str().unwrap();
    let validate = rdmagen(&["validate", &input, "--format", "brief"]);
    assert_eq!(validate.status.code(), Some(1));
    assert_eq!(
        text(&validate.stdout),
        format!(
            "{input}:23:12: error[RDG006]: job `train` is defined more than once in namespace `team-a`\n"
        )
    );
    for (mode, code) in [
        (&[][..], 1),
        (&["--bless", "--prune"], 1),
        (&["--check"], 2),
    ] {
        let mut args = vec!["render", input.as_str(), "-o", d, "--format", "brief"];
        args.extend_from_slice(mode);
        let run = rdmagen(&args);
        assert_eq!(run.status.code(), Some(code), "{mode:?}");
        let stderr = text(&run.stderr);
        assert!(
            stderr.starts_with(&format!("{input}:23:12: error[RDG006]: ")),
            "{mode:?}: {stderr}"
        );
        assert!(run.stdout.is_empty(), "{mode:?}");
        assert_eq!(tree(&out), before, "{mode:?}: the directory changed");
    }
}

#[test]
fn check_and_prune_follow_a_name_that_becomes_shared_and_unique_again() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let d = out.to_str().unwrap();
    let render = |jobs: &[(&str, Option<&str>)], mode: &[&str]| {
        let input = inputs(dir.path(), jobs);
        let mut args = vec!["render", input.as_str(), "-o", d, "--format", "brief"];
        args.extend_from_slice(mode);
        rdmagen(&args)
    };
    let unique = [("train", Some("team-a")), ("eval", Some("team-a"))];
    let shared = [
        ("train", Some("team-a")),
        ("eval", Some("team-a")),
        ("train", Some("team-b")),
    ];
    assert!(render(&unique, &[]).status.success());
    assert_eq!(
        files(&out),
        [
            ".rdmagen-owned",
            "eval/pytorchjob.yaml",
            "train/pytorchjob.yaml"
        ]
    );

    // A second `train` in another namespace moves the first one's directory.
    let check = render(&shared, &["--check"]);
    assert_eq!(check.status.code(), Some(1));
    assert_eq!(
        text(&check.stdout),
        format!(
            "A {d}/train.team-a/pytorchjob.yaml\nA {d}/train.team-b/pytorchjob.yaml\nD {d}/train/pytorchjob.yaml\n"
        )
    );
    assert_eq!(
        text(&check.stderr),
        "3 checked, 0 differ, 2 missing, 1 stale\n"
    );
    let bless = render(&shared, &["--bless", "--prune"]);
    assert!(bless.status.success(), "{}", text(&bless.stderr));
    assert_eq!(
        text(&bless.stderr),
        format!(
            "created: {d}/train.team-a/pytorchjob.yaml\ncreated: {d}/train.team-b/pytorchjob.yaml\ndeleted: {d}/train/pytorchjob.yaml\nblessed {d}: 2 created, 0 updated, 1 unchanged, 1 deleted, 0 stale kept\n"
        )
    );
    assert_eq!(
        files(&out),
        [
            ".rdmagen-owned",
            "eval/pytorchjob.yaml",
            "train.team-a/pytorchjob.yaml",
            "train.team-b/pytorchjob.yaml",
        ]
    );
    assert_eq!(render(&shared, &["--check"]).status.code(), Some(0));

    // Unique again: back to DIR/train/; the user's file in train.team-a/ stays.
    std::fs::write(out.join("train.team-a/notes.md"), "ours\n").unwrap();
    let bless = render(&unique, &["--bless", "--prune"]);
    assert!(bless.status.success(), "{}", text(&bless.stderr));
    assert_eq!(
        files(&out),
        [
            ".rdmagen-owned",
            "eval/pytorchjob.yaml",
            "train/pytorchjob.yaml",
            "train.team-a/notes.md",
        ]
    );
    assert!(
        text(&bless.stderr)
            .ends_with("1 created, 0 updated, 1 unchanged, 2 deleted, 1 stale kept\n"),
        "{}",
        text(&bless.stderr)
    );
}

#[test]
fn diff_and_explain_name_a_job_by_its_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    for d in [&old, &new] {
        assert!(
            rdmagen(&["render", EX, "-o", d.to_str().unwrap()])
                .status
                .success()
        );
    }
    let manifest = new.join("train.team-b/pytorchjob.yaml");
    let body = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        body.replace("vit-pretrain:0.9", "vit-pretrain:1.0"),
    )
    .unwrap();
    let (o, n) = (old.to_str().unwrap(), new.to_str().unwrap());
    let diff = rdmagen(&["diff", o, n, "--format", "brief"]);
    assert_eq!(diff.status.code(), Some(1));
    assert_eq!(
        text(&diff.stdout),
        format!("M {o}/train.team-b/pytorchjob.yaml\n")
    );
    let diff = rdmagen(&["diff", o, n, "--semantic"]);
    let image = "\"registry.example.com/team-b/vit-pretrain:0.9\" → \"registry.example.com/team-b/vit-pretrain:1.0\"";
    assert!(
        text(&diff.stdout).starts_with(&format!(
            "{o}/train.team-b/pytorchjob.yaml\n  ± spec.pytorchReplicaSpecs.Master.template.spec.containers[pytorch].image: {image}\n  ± spec.pytorchReplicaSpecs.Worker.template.spec.containers[pytorch].image: {image}\n\n"
        )),
        "{}",
        text(&diff.stdout)
    );

    let explain = rdmagen(&["render", EX, "--explain"]);
    let stderr = text(&explain.stderr);
    let jobs: Vec<&str> = stderr.lines().filter(|l| !l.starts_with(' ')).collect();
    assert_eq!(
        jobs,
        [
            "train.team-a (pool h100-roce):",
            "train.team-b (pool h100-roce):",
            "eval (pool h100-roce):"
        ]
    );
}

#[test]
fn the_example_is_blessed_with_a_directory_per_namespace() {
    let golden: Vec<String> = files(&root().join("golden/two-namespaces"));
    assert_eq!(
        golden,
        [
            ".rdmagen-owned",
            "eval/pytorchjob.yaml",
            "train.team-a/pytorchjob.yaml",
            "train.team-b/Dockerfile",
            "train.team-b/pytorchjob.yaml",
        ]
    );
}
