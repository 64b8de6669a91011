//! User text that tries to take over the log: control characters, workflow commands
//! and very long lines in inputs and golden files (issue 10, defects 8 and 11).

use crate::support::{rdmagen, text};

/// A job whose name decodes to ESC, LF, CR and NUL: a raw print would colour the
/// terminal and start a `::error` workflow command on a line of its own.
const INJECTING_JOB: &str = r#"apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {name: "a\e[31mRED\n::error ::pwned\r\0x"}
spec:
  pool: a100-roce-dev
  image: img
  nodes: 1
  gpusPerNode: 4
  script: train.py
"#;

const POOL: &str = "examples/single-node/pool.yaml";

const ESCAPED_NAME: &str = r"`a\u{1b}[31mRED\n::error ::pwned\r\u{0}x`";

fn validate(body: &str, format: &str) -> (std::process::Output, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.yaml");
    std::fs::write(&path, body).unwrap();
    let job = path.to_str().unwrap().to_owned();
    let out = rdmagen(&["validate", &job, POOL, "--format", format]);
    (out, job)
}

#[test]
fn human_findings_escape_control_characters_in_messages() {
    let (out, job) = validate(INJECTING_JOB, "human");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stdout),
        format!(
            "error[RDG007]: {ESCAPED_NAME} is not a DNS-1035 label (lowercase letters, digits and '-', starting with a letter)
 --> {job}:3:12
  |
3 | metadata: {{name: \"a\\e[31mRED\\n::error ::pwned\\r\\0x\"}}
  |            ^
  = RDG007: the job name is not a valid PyTorchJob name (source: https://github.com/kubeflow/training-operator/blob/v1.9.0/pkg/webhooks/pytorch/pytorchjob_webhook.go)

"
        )
    );
    assert_eq!(
        text(&out.stderr),
        "0 job(s) checked: 1 error, 0 warnings, 0 infos\nerror: 1 finding fail the run\n"
    );
}

#[test]
fn brief_findings_escape_control_characters() {
    let (out, job) = validate(INJECTING_JOB, "brief");
    assert_eq!(
        text(&out.stdout),
        format!(
            "{job}:3:12: error[RDG007]: {ESCAPED_NAME} is not a DNS-1035 label (lowercase letters, digits and '-', starting with a letter)\n"
        )
    );
}

#[test]
fn github_annotations_percent_encode_line_breaks_and_escape_other_controls() {
    let (out, job) = validate(INJECTING_JOB, "github");
    let file = job.replace(':', "%3A").replace(',', "%2C");
    assert_eq!(
        text(&out.stdout),
        format!(
            "::error file={file},line=3,col=12,title=RDG007 the job name is not a valid PyTorchJob name::`a\\u{{1b}}[31mRED%0A::error ::pwned%0D\\u{{0}}x` is not a DNS-1035 label (lowercase letters, digits and '-', starting with a letter)\n"
        )
    );
}

#[test]
fn json_findings_stay_valid_json_and_keep_the_exact_message() {
    let (out, _) = validate(INJECTING_JOB, "json");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(
        doc["findings"][0]["message"],
        "`a\u{1b}[31mRED\n::error ::pwned\r\0x` is not a DNS-1035 label (lowercase letters, digits and '-', starting with a letter)"
    );
}

#[test]
fn raw_control_characters_in_an_echoed_line_are_escaped() {
    let body = "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: \"x\u{1b}[2J\r::add-mask::y\"}\n";
    let (out, job) = validate(body, "human");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stdout),
        format!(
            "error[RDG001]: unexpected character: `\\u{{1b}}'
 --> {job}:3:20
  |
3 | metadata: {{name: \"x\\u{{1b}}[2J\\r::add-mask::y\"}}
  |                    ^
  = RDG001: the file is not valid YAML (source: https://yaml.org/spec/1.2.2/)

"
        )
    );
}

#[test]
fn a_path_with_a_line_break_cannot_start_a_workflow_command() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("x\n::error ::y.yaml");
    let out = rdmagen(&["validate", missing.to_str().unwrap(), POOL]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}/x\\n::error ::y.yaml: No such file or directory (os error 2)\n",
            dir.path().display()
        )
    );
}

#[test]
fn a_long_line_is_echoed_around_the_column_with_the_caret_in_place() {
    let body = format!(
        "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {{name: ok}}\nspec:\n  script: \"{}\u{1}{}\"\n",
        "a".repeat(300),
        "b".repeat(300)
    );
    let (out, job) = validate(&body, "human");
    let (a, b) = ("a".repeat(80), "b".repeat(79));
    let pad = " ".repeat(2 + 80);
    assert_eq!(
        text(&out.stdout),
        format!(
            "error[RDG001]: unexpected character: `\\u{{1}}'
 --> {job}:5:312
  |
5 | … {a}\\u{{1}}{b} … 222 bytes more
  | {pad}^
  = RDG001: the file is not valid YAML (source: https://yaml.org/spec/1.2.2/)

"
        )
    );
}

#[test]
fn diffs_escape_control_characters_in_golden_files() {
    let old = tempfile::tempdir().unwrap();
    let new = tempfile::tempdir().unwrap();
    std::fs::write(
        old.path().join("m.yaml"),
        "a: 1\nb: \"\u{1b}[2J\u{0}x\"\n::add-mask::z\u{1b}]0;t\u{7}\n",
    )
    .unwrap();
    std::fs::write(new.path().join("m.yaml"), "a: 1\n").unwrap();
    let (old, new) = (old.path().to_str().unwrap(), new.path().to_str().unwrap());
    let out = rdmagen(&["diff", old, new]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stdout),
        format!(
            "--- {old}/m.yaml
+++ {new}/m.yaml
@@ -1,3 +1 @@
 a: 1
-b: \"\\u{{1b}}[2J\\u{{0}}x\"
-::add-mask::z\\u{{1b}}]0;t\\u{{7}}
"
        )
    );
}

#[test]
fn structural_diff_summaries_escape_control_characters_in_paths() {
    let root = tempfile::tempdir().unwrap();
    let old = root.path().join("o\n::error ::x");
    let new = root.path().join("n");
    std::fs::create_dir(&old).unwrap();
    std::fs::create_dir(&new).unwrap();
    std::fs::write(old.join("m.yaml"), "a: 1\nb: 1\n").unwrap();
    std::fs::write(new.join("m.yaml"), "a: 1\nb: 2\n").unwrap();
    let (old, new) = (old.to_str().unwrap(), new.to_str().unwrap());
    let out = rdmagen(&["diff", "--semantic", old, new]);
    let old = old.replace('\n', "\\n");
    assert_eq!(
        text(&out.stdout),
        format!(
            "{old}/m.yaml
  ± b: 1 → 2

--- {old}/m.yaml
+++ {new}/m.yaml
@@ -1,2 +1,2 @@
 a: 1
-b: 1
+b: 2
"
        )
    );
}

#[test]
fn explain_escapes_values_quoted_from_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("job.yaml");
    std::fs::write(
        &job,
        r#"apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {name: ok}
spec:
  pool: a100-roce-dev
  image: img
  nodes: 1
  gpusPerNode: 4
  script: "t.py\e[2J\n::add-mask::x"
"#,
    )
    .unwrap();
    let out = rdmagen(&["render", "--explain", job.to_str().unwrap(), POOL]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        r"ok (pool a100-roce-dev):
  platform = generic: pool `a100-roce-dev`: self-built cluster: no platform injects NCCL variables (seed 001, 'may not apply to self-built K8s clusters')
  target operator = unknown: pool `a100-roce-dev` sets no target.operator and the generic platform has no default; the launcher uses the form both operator generations run
  target nccl = unknown: pool `a100-roce-dev` sets no target.nccl
  rdma = off: rdma: auto and the job is one node: NCCL keeps its traffic inside the node, and RDMA training needs at least 2 nodes (seed 001); `rdma: on` forces it
  command = torchrun --nproc_per_node=4 --nnodes=$(WORLD_SIZE) --node_rank=$(RANK) --master_addr=$(MASTER_ADDR) --master_port=$(MASTER_PORT) t.py\u{1b}[2J\n::add-mask::x: the target operator's version is unknown: with nprocPerNode unset, every generation sets WORLD_SIZE to the pod count and RANK to the pod index, so these flags are right on all of them; Kubernetes expands $(VAR) from the container's env; nprocPerNode unset; exec form, no shell in between
  env NCCL_IB_DISABLE = 1: RDMA is off: NCCL uses sockets, stated explicitly
  env NCCL_SOCKET_IFNAME = eth0: the pool's bootstrap interface
  /dev/shm = emptyDir medium Memory, sizeLimit none: NCCL and data loaders share memory through /dev/shm; the container default of 64 MiB makes NCCL fail
  replicas = Master 1, Worker 0: 1 node(s): the operator requires exactly one Master; the others are Workers (none here)
"
    );
}
