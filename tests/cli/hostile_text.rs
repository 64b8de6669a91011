//! User text that tries to take over the log: control characters, workflow commands
//! and very long lines in inputs and golden files (issue 10, defects 8 and 11).

use crate::support::{rdmagen, rdmagen_in, text};

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
        "1 job(s) checked: 1 error, 0 warnings, 0 infos\nerror: 1 finding fails the run\n"
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
  local rank = (what the launcher passes): torchrun passes the script no local-rank argument, only the LOCAL_RANK variable; the job does not say which form its script reads (`localRank`)
  command = torchrun --nproc_per_node=4 --nnodes=$(WORLD_SIZE) --node_rank=$(RANK) --master_addr=$(MASTER_ADDR) --master_port=$(MASTER_PORT) t.py\u{1b}[2J\n::add-mask::x: the target operator's version is unknown: with nprocPerNode unset, every generation sets WORLD_SIZE to the pod count and RANK to the pod index, so these flags are right on all of them; Kubernetes expands $(VAR) from the container's env; nprocPerNode unset; exec form, no shell in between
  env NCCL_IB_DISABLE = 1: RDMA is off: NCCL uses sockets, stated explicitly
  env NCCL_SOCKET_IFNAME = eth0: the pool's bootstrap interface
  /dev/shm = emptyDir medium Memory, sizeLimit none: NCCL and data loaders share memory through /dev/shm; the container default of 64 MiB makes NCCL fail
  replicas = Master 1, Worker 0: 1 node(s): the operator requires exactly one Master; the others are Workers (none here)
  annotations = rdmagen.io/platform=generic: what the manifest was written for, on its metadata: `rdmagen lint` judges it by these where no --platform, --operator or --trainer says otherwise
"
    );
}

/// The pool the name reproducers below render on.
const NAMES_POOL: &str = "apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: p}
spec:
  gpu: {perNode: 8}
  network: {fabric: roce, hcas: [mlx5_1, mlx5_2], socketIfname: eth0, gidIndex: 3}
";

/// A job on NAMES_POOL with `metadata` after its name and `spec` at the end of its spec.
fn names_job(metadata: &str, spec: &str) -> String {
    format!(
        "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {{name: j{metadata}}}
spec:
  pool: p
  image: img:1
  nodes: 2
  gpusPerNode: 8
  script: t.py
{spec}"
    )
}

/// Issue 22 item 7: a label value, a volume name, a claim name, a serviceAccountName
/// and an env name that the API server refuses (or, for the claim, that no object can
/// have). Each passed `validate` and `render` with exit 0; each is now an error at the
/// line of the job that wrote it, once per replica whose pod holds it (the label also
/// on the PyTorchJob itself), and `render -o` writes nothing.
#[test]
fn names_the_api_server_refuses_stop_validate_and_render() {
    // (case, job metadata, job spec, (rule, line, column) of each finding, the first
    // finding's message).
    type Case = (
        &'static str,
        &'static str,
        &'static str,
        Vec<(&'static str, u64, u64)>,
        &'static str,
    );
    let cases: [Case; 5] = [
        (
            "label",
            r#", labels: {team: "a: b\nc"}"#,
            "",
            vec![("RDG166", 3, 30); 3],
            r#"rendered pytorchjob.yaml: /metadata/labels/team: label "team" has the value "a: b\nc", which is not a label value (empty, or at most 63 letters, digits, `-`, `_`, `.`, starting and ending with a letter or digit); the API server refuses it"#,
        ),
        (
            "volume",
            "",
            r#"  volumes: [{name: "*Alias_Vol", mountPath: /data, claim: data}]"#,
            vec![("RDG168", 10, 20); 2],
            r#"rendered pytorchjob.yaml: /spec/pytorchReplicaSpecs/Master/template/spec/volumes/1/name: volume name "*Alias_Vol" is not a DNS-1123 label (at most 63 lowercase letters, digits and `-`, starting and ending with a letter or digit); the API server refuses the pod"#,
        ),
        (
            "claim",
            "",
            r#"  volumes: [{name: data, mountPath: /data, claim: "Not A Claim!"}]"#,
            vec![("RDG171", 10, 51); 2],
            r#"rendered pytorchjob.yaml: /spec/pytorchReplicaSpecs/Master/template/spec/volumes/1/persistentVolumeClaim/claimName: persistentVolumeClaim.claimName "Not A Claim!" is no PersistentVolumeClaim name (a DNS-1123 subdomain: at most 253 lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit); the API server accepts the pod, which then waits forever for a PersistentVolumeClaim that cannot exist"#,
        ),
        (
            "service account",
            "",
            r#"  serviceAccountName: "yes no""#,
            vec![("RDG171", 10, 23); 2],
            r#"rendered pytorchjob.yaml: /spec/pytorchReplicaSpecs/Master/template/spec/serviceAccountName: serviceAccountName "yes no" is no ServiceAccount name (a DNS-1123 subdomain: at most 253 lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit); the API server refuses the pod"#,
        ),
        (
            "env",
            "",
            r#"  env: {"A\u2028B": "1"}"#,
            vec![("RDG114", 10, 9)],
            r#""A\u{2028}B" is not a variable name the API server accepts (printable ASCII other than `=`, not empty)"#,
        ),
    ];
    for (case, metadata, spec, expected, first_message) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("job.yaml"), names_job(metadata, spec)).unwrap();
        std::fs::write(dir.path().join("pool.yaml"), NAMES_POOL).unwrap();
        let out = rdmagen_in(
            dir.path(),
            &["validate", "job.yaml", "pool.yaml", "--format", "json"],
        );
        assert_eq!(out.status.code(), Some(1), "{case}: {}", text(&out.stderr));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let findings = doc["findings"].as_array().unwrap();
        let found: Vec<(&str, u64, u64)> = findings
            .iter()
            .map(|f| {
                assert_eq!(f["file"], "job.yaml", "{case}");
                (
                    f["rule"].as_str().unwrap(),
                    f["line"].as_u64().unwrap(),
                    f["column"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(found, expected, "{case}");
        assert_eq!(findings[0]["message"], first_message, "{case}");
        let out = rdmagen_in(
            dir.path(),
            &["render", "job.yaml", "pool.yaml", "-o", "out"],
        );
        assert_eq!(out.status.code(), Some(1), "{case}");
        assert!(out.stdout.is_empty(), "{case}");
        assert!(!dir.path().join("out").exists(), "{case}: render wrote");
    }
}

/// A PyTorchJob manifest whose metadata, pod spec, container and volumes end with the
/// given lines (each indented already).
fn names_manifest(metadata: &str, pod: &str, container: &str, volumes: &str) -> String {
    format!(
        "apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: j
{metadata}spec:
  runPolicy: {{}}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      restartPolicy: OnFailure
      template:
        spec:
{pod}          containers:
            - name: pytorch
              image: img:1
              command: [python, t.py]
{container}              volumeMounts: [{{name: dshm, mountPath: /dev/shm}}]
          volumes:
            - {{name: dshm, emptyDir: {{medium: Memory}}}}
{volumes}"
    )
}

/// The same five names in a manifest `lint` reads: each passed with exit 0, and each is
/// now one error at the manifest line that holds it (the whole output compared).
#[test]
fn names_the_api_server_refuses_fail_lint() {
    let cases = [
        (
            names_manifest("  labels: {team: \"a: b\\nc\"}\n", "", "", ""),
            r#"m.yaml:5:12: error[RDG166]: label "team" has the value "a: b\nc", which is not a label value (empty, or at most 63 letters, digits, `-`, `_`, `.`, starting and ending with a letter or digit); the API server refuses it"#,
        ),
        (
            names_manifest(
                "",
                "",
                "",
                "            - {name: \"*Alias_Vol\", emptyDir: {}}\n",
            ),
            r#"m.yaml:20:16: error[RDG168]: volume name "*Alias_Vol" is not a DNS-1123 label (at most 63 lowercase letters, digits and `-`, starting and ending with a letter or digit); the API server refuses the pod"#,
        ),
        (
            names_manifest(
                "",
                "",
                "",
                "            - {name: data, persistentVolumeClaim: {claimName: \"Not A Claim!\"}}\n",
            ),
            r#"m.yaml:20:52: error[RDG171]: persistentVolumeClaim.claimName "Not A Claim!" is no PersistentVolumeClaim name (a DNS-1123 subdomain: at most 253 lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit); the API server accepts the pod, which then waits forever for a PersistentVolumeClaim that cannot exist"#,
        ),
        (
            names_manifest("", "          serviceAccountName: \"yes no\"\n", "", ""),
            r#"m.yaml:13:11: error[RDG171]: serviceAccountName "yes no" is no ServiceAccount name (a DNS-1123 subdomain: at most 253 lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit); the API server refuses the pod"#,
        ),
        (
            names_manifest(
                "",
                "",
                "              env: [{name: \"A\\u2028B\", value: \"1\"}]\n",
                "",
            ),
            r#"m.yaml:17:22: error[RDG114]: env name "A\u{2028}B" is not a variable name the API server accepts (printable ASCII other than `=`, not empty); it refuses the pod"#,
        ),
    ];
    for (manifest, expected) in cases {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("m.yaml"), &manifest).unwrap();
        let out = rdmagen_in(dir.path(), &["lint", "m.yaml", "--format", "brief"]);
        assert_eq!(text(&out.stdout), format!("{expected}\n"), "{manifest}");
        assert_eq!(text(&out.stderr), "error: 1 finding fails the run\n");
        assert_eq!(out.status.code(), Some(1));
    }
}

/// A name from the pool's jobDefaults or a podTemplate overlay is placed in the file
/// and at the line that wrote it, not at the job's first line.
#[test]
fn a_bad_name_is_placed_where_the_pool_or_overlay_wrote_it() {
    let dir = tempfile::tempdir().unwrap();
    let pool = format!("{NAMES_POOL}  jobDefaults:\n    labels: {{\"bad key!\": x}}\n");
    std::fs::write(dir.path().join("pool.yaml"), pool).unwrap();
    let overlay = "  podTemplate:
    spec:
      containers:
        - {name: Side_Car, image: x}
";
    std::fs::write(dir.path().join("job.yaml"), names_job("", overlay)).unwrap();
    let out = rdmagen_in(
        dir.path(),
        &["validate", "job.yaml", "pool.yaml", "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<(&str, &str, u64, u64)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap(),
                f["file"].as_str().unwrap(),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut expected = vec![("RDG169", "job.yaml", 13, 18); 2];
    expected.extend([("RDG166", "pool.yaml", 8, 14); 3]);
    assert_eq!(found, expected);
}

// ------------------------------------------------- the CI log is the runner's (issue 22)

/// Where a stream of a run goes: a pipe (what the runner, `| tee` or `| kubectl`
/// reads) or a regular file (`> report.txt`).
#[derive(Clone, Copy, Debug)]
enum To {
    Pipe,
    File,
}

/// Run `args` in `dir` with `GITHUB_ACTIONS=true`, stdout and stderr sent as `to`
/// says; the exit code and both streams' text.
fn on_actions(dir: &std::path::Path, args: &[&str], to: (To, To)) -> (Option<i32>, String, String) {
    use std::process::Stdio;
    let file = |name: &str, to: To| match to {
        To::Pipe => Stdio::piped(),
        To::File => Stdio::from(std::fs::File::create(dir.join(name)).unwrap()),
    };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rdmagen"))
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .env("GITHUB_ACTIONS", "true")
        .stdin(Stdio::null())
        .stdout(file("stdout.txt", to.0))
        .stderr(file("stderr.txt", to.1))
        .output()
        .unwrap();
    let read = |bytes: &[u8], name: &str, to: To| match to {
        To::Pipe => text(bytes),
        To::File => std::fs::read_to_string(dir.join(name)).unwrap(),
    };
    (
        out.status.code(),
        read(&out.stdout, "stdout.txt", to.0),
        read(&out.stderr, "stderr.txt", to.1),
    )
}

/// Every way the two streams can go.
const ROUTES: [(To, To); 4] = [
    (To::Pipe, To::Pipe),
    (To::File, To::Pipe),
    (To::Pipe, To::File),
    (To::File, To::File),
];

/// No workflow command in `text` as the runner finds them: `##[` anywhere, `::` at a
/// line's start after white space (the runner trims any; counted generously here).
fn assert_inert(text: &str, what: &str) {
    assert!(
        !text.contains("##["),
        "{what}: `##[` reached the log:\n{text}"
    );
    for line in text.split(['\n', '\r']) {
        let start = line.trim_start_matches(|c: char| !c.is_ascii_graphic());
        assert!(
            !start.starts_with("::"),
            "{what}: a command line reached the log: {line:?}"
        );
    }
}

/// `nccl-log` echoes an HCA name from the log on stdout; on Actions it reached the
/// runner unframed whenever stderr was a file (issue 22, item 4).
#[test]
fn nccl_log_on_actions_prints_no_workflow_command_from_the_log() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("run.log"),
        "NCCL version 2.21.5+cuda12.4\n\
         node-a:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0##[error]x:1/IB [RO]; OOB eth0:10.0.0.1<0>\n\
         node-a:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n",
    )
    .unwrap();
    for route in ROUTES {
        let (code, stdout, stderr) = on_actions(dir.path(), &["nccl-log", "run.log"], route);
        assert_eq!(code, Some(0), "{route:?}: {stderr}");
        assert_eq!(
            stdout,
            "NCCL log verdict
  transport    ib; NCCL network IB
  RDMA         yes
  GPUDirect    yes
  NCCL         2.21.5+cuda12.4
  HCAs         mlx5_0#\\u{23}[error]x
  errors       0 kind(s) of error line
",
            "{route:?}"
        );
        assert_eq!(
            stderr,
            "1 file(s), 3 lines read: 0 errors, 0 warnings, 0 infos\n"
        );
    }
}

/// `render --check` and `diff` print a golden file's lines on stdout: a `##[` in one,
/// and a `::error::` line kept as context (` ::error::…` after the diff's space).
#[test]
fn diffs_on_actions_print_no_workflow_command_from_a_golden_file() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    for file in ["job.yaml", "pool.yaml"] {
        std::fs::copy(
            crate::support::root()
                .join("examples/single-node")
                .join(file),
            repo.join(file),
        )
        .unwrap();
    }
    let render =
        crate::support::rdmagen_in(repo, &["render", "job.yaml", "pool.yaml", "-o", "out"]);
    assert!(render.status.success(), "{}", text(&render.stderr));
    let golden = repo.join("out/debug-run/pytorchjob.yaml");
    let rendered = std::fs::read_to_string(&golden).unwrap();
    let hostile = format!("::error::pwned\n{rendered}# ##[add-mask]x\n");
    std::fs::write(&golden, &hostile).unwrap();
    std::fs::write(repo.join("a.yaml"), "  ::warning::context\na: 1\n").unwrap();
    std::fs::write(
        repo.join("b.yaml"),
        "  ::warning::context\na: 2\n##[error]b\n",
    )
    .unwrap();
    for route in ROUTES {
        let check = ["render", "job.yaml", "pool.yaml", "-o", "out", "--check"];
        let (code, stdout, stderr) = on_actions(repo, &check, route);
        assert_eq!(code, Some(1), "{route:?}: {stderr}");
        assert_inert(&stdout, "render --check stdout");
        assert_inert(&stderr, "render --check stderr");
        // A removed line starts with `-`, so only its `##[` needs rewriting.
        assert!(
            stdout.contains("\n-::error::pwned\n"),
            "{route:?}: {stdout}"
        );
        assert!(
            stdout.ends_with("\n-# #\\u{23}[add-mask]x\n"),
            "{route:?}: {stdout}"
        );

        let (code, stdout, stderr) = on_actions(repo, &["diff", "a.yaml", "b.yaml"], route);
        assert_eq!(code, Some(1), "{route:?}: {stderr}");
        assert_eq!(
            stdout,
            "--- a.yaml
+++ b.yaml
@@ -1,2 +1,3 @@
   \\u{3a}:warning::context
-a: 1
+a: 2
+#\\u{23}[error]b
",
            "{route:?}"
        );
        assert_eq!(
            stderr, "1 checked, 1 differ, 0 missing, 0 stale\n",
            "{route:?}"
        );
    }
}

/// A data stream is not rewritten but written so that it holds no command and reads
/// back the same: YAML and JSON escape the `#` of `##[` (`\u0023`), so a manifest
/// piped to kubectl, or printed into the log, carries exactly the job's value.
#[test]
fn data_streams_escape_workflow_commands_as_the_same_data() {
    let dir = tempfile::tempdir().unwrap();
    let job = "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {name: job-a, annotations: {note: \"##[error]x\"}}
spec:
  pool: a100-roce-dev
  image: img:1
  nodes: 1
  gpusPerNode: 4
  script: train.py
  env: {NOTE: \"::error::y\"}
";
    std::fs::write(dir.path().join("job.yaml"), job).unwrap();
    std::fs::copy(
        crate::support::root().join(POOL),
        dir.path().join("pool.yaml"),
    )
    .unwrap();
    for route in ROUTES {
        let (code, stdout, stderr) =
            on_actions(dir.path(), &["render", "job.yaml", "pool.yaml"], route);
        assert_eq!(code, Some(0), "{route:?}: {stderr}");
        assert_inert(&stdout, "render stdout");
        assert!(
            stdout.contains("    note: \"#\\u0023[error]x\"\n"),
            "{stdout}"
        );
        assert!(stdout.contains("value: \"::error::y\"\n"), "{stdout}");
        // The manifest reads back with the job's values.
        std::fs::write(dir.path().join("rendered.yaml"), &stdout).unwrap();
        let lint =
            crate::support::rdmagen_in(dir.path(), &["lint", "rendered.yaml", "--format", "json"]);
        assert!(lint.status.success(), "{}", text(&lint.stdout));
    }
    // A finding that quotes the value, as JSON: the same string, escaped.
    let bad = job.replace("name: job-a", "name: \"##[error]x\"");
    std::fs::write(dir.path().join("job.yaml"), bad).unwrap();
    let (code, stdout, _) = on_actions(
        dir.path(),
        &["validate", "job.yaml", "pool.yaml", "--format", "json"],
        (To::Pipe, To::Pipe),
    );
    assert_eq!(code, Some(1));
    assert_inert(&stdout, "validate --format json");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        doc["findings"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with("`##[error]x` is not a DNS-1035 label"),
        "{doc:#}"
    );
}

/// U+202E (right-to-left override) and the other bidirectional controls reorder what
/// a reader sees; in a job name or an HCA name they reach no output raw, in any format.
#[test]
fn bidi_controls_reach_no_output_raw() {
    const BIDI: [char; 12] = [
        '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}', '\u{200e}', '\u{200f}', '\u{61c}',
    ];
    let raw = |text: &str| text.chars().any(|c| BIDI.contains(&c));
    let name: String = std::iter::once('j')
        .chain(BIDI)
        .chain("lmay".chars())
        .collect();
    let job = INJECTING_JOB.replace(
        r#"name: "a\e[31mRED\n::error ::pwned\r\0x""#,
        &format!("name: \"{name}\""),
    );
    assert!(raw(&job));
    for format in [
        "human", "brief", "github", "json", "sarif", "junit", "gitlab",
    ] {
        let (out, _) = validate(&job, format);
        assert_eq!(out.status.code(), Some(1), "{format}");
        assert!(!raw(&text(&out.stdout)), "{format}: {}", text(&out.stdout));
        assert!(!raw(&text(&out.stderr)), "{format}: {}", text(&out.stderr));
    }
    let (out, _) = validate(&job, "human");
    assert!(
        text(&out.stdout).starts_with(
            "error[RDG007]: `j\\u{202a}\\u{202b}\\u{202c}\\u{202d}\\u{202e}\\u{2066}\\u{2067}\\u{2068}\\u{2069}\\u{200e}\\u{200f}\\u{61c}lmay` is not a DNS-1035 label"
        ),
        "{}",
        text(&out.stdout)
    );
    // JSON says the same string, escaped.
    let (out, _) = validate(&job, "json");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        doc["findings"][0]["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("`{name}`")),
        "{doc:#}"
    );

    // An HCA name from an NCCL log, in every format of nccl-log.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("run.log"),
        "NCCL version 2.21.5+cuda12.4\n\
         node-a:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5\u{202e}_0:1/IB [RO]; OOB eth0:10.0.0.1<0>\n\
         node-a:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n",
    )
    .unwrap();
    for format in [
        "human", "brief", "github", "json", "sarif", "junit", "gitlab",
    ] {
        let out =
            crate::support::rdmagen_in(dir.path(), &["nccl-log", "run.log", "--format", format]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{format}: {}",
            text(&out.stderr)
        );
        assert!(!raw(&text(&out.stdout)), "{format}: {}", text(&out.stdout));
        assert!(!raw(&text(&out.stderr)), "{format}: {}", text(&out.stderr));
    }
}
