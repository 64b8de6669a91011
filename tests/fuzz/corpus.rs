//! The real samples each target mutates, read once from the repository.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// Samples of one input kind: (path relative to the project, text).
pub type Samples = Vec<(String, String)>;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `dir` (relative to the project) whose name ends with one of
/// `suffixes`, sorted.
fn files(dir: &str, suffixes: &[&str]) -> Samples {
    let base = root();
    let mut out = Samples::new();
    for entry in walkdir::WalkDir::new(base.join(dir)).sort_by_file_name() {
        let entry = entry.expect("the sample tree is readable");
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file() && suffixes.iter().any(|s| name.ends_with(s)) {
            let rel = entry.path().strip_prefix(&base).expect("below the root");
            out.push((rel.display().to_string(), read(entry.path())));
        }
    }
    out
}

fn read(path: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(path).expect("samples are readable")).into_owned()
}

fn gather(parts: &[(&str, &[&str])]) -> Samples {
    let all: Samples = parts
        .iter()
        .flat_map(|(dir, suffixes)| files(dir, suffixes))
        .collect();
    assert!(!all.is_empty(), "no samples in {parts:?}");
    all
}

/// Jobs, Pools, rendered manifests and broken inputs.
pub static YAML: LazyLock<Samples> = LazyLock::new(|| {
    gather(&[
        ("examples", &[".yaml"]),
        ("golden", &[".yaml"]),
        ("tests/bad", &[".yaml"]),
        ("tests/lint", &[".yaml"]),
        ("tests/rules", &[".yaml"]),
    ])
});

/// Node captures: the project's tests/diag (with the public samples in
/// tests/diag/reference) and rule fixtures.
pub static CAPTURES: LazyLock<Samples> =
    LazyLock::new(|| gather(&[("tests/diag", &[".txt"]), ("tests/rules", &[".txt"])]));

pub static DOCKERFILES: LazyLock<Samples> = LazyLock::new(|| {
    gather(&[
        ("golden", &["Dockerfile"]),
        ("tests/rules", &[".Dockerfile"]),
    ])
});

/// Pin files and Dockerfile templates.
pub static PINS: LazyLock<Samples> = LazyLock::new(|| {
    gather(&[
        ("examples/dockerfile", &[".pins"]),
        ("tests/rules", &[".pins"]),
    ])
});

pub static TEMPLATES: LazyLock<Samples> =
    LazyLock::new(|| gather(&[("examples/dockerfile", &[".j2"]), ("tests/rules", &[".j2"])]));

/// One example Job and its Pool, as a single two-document stream.
pub static JOB_AND_POOL: LazyLock<Samples> = LazyLock::new(|| {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples/ exists")
        .map(|e| e.expect("readable").path())
        .filter(|dir| dir.join("pool.yaml").is_file())
        .collect();
    dirs.sort();
    dirs.into_iter()
        .flat_map(|dir| {
            let pool = read(&dir.join("pool.yaml"));
            files(
                &format!("examples/{}", dir.file_name().unwrap().to_string_lossy()),
                &["job.yaml", "jobs.yaml"],
            )
            .into_iter()
            .map(move |(name, job)| (name, format!("{job}\n---\n{pool}")))
        })
        .collect()
});

/// NCCL logs, nccl-tests and perftest output: the vendored samples and rule fixtures.
pub static NCCL_LOGS: LazyLock<Samples> = LazyLock::new(|| {
    gather(&[
        ("tests/nccl_logs", &[".log", ".txt"]),
        ("tests/rules", &[".log"]),
    ])
});
