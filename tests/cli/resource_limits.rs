//! Requests and limits the API server would refuse (crates/rules/src/resources.rs): render
//! refuses the job and writes nothing, whichever API the pool targets and whether the
//! job is the user's or the smoke test's.

use crate::support::{rdmagen, text, write};

/// The measured problem: the pool's podTemplate requests 100 CPUs of the training
/// container, and the job's `resources: {cpu: "8"}` become its limit.
const POOL_OVERLAY: &str = r#"apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: p}
spec:
  gpu: {perNode: 8}
  network: {fabric: roce, hcas: [mlx5_1, mlx5_2], socketIfname: eth0, gidIndex: 3}
  target: {nccl: "2.21"}
  jobDefaults:
    podTemplate:
      spec:
        tolerations: [{key: pool-taint, operator: Exists}]
        containers:
        - name: pytorch
          resources:
            requests: {cpu: "100"}
"#;

const JOB: &str = r#"---
apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {name: j}
spec:
  pool: p
  image: img:1
  nodes: 2
  gpusPerNode: 8
  script: t.py
  tolerations: [{key: job-taint, operator: Exists}]
  resources: {cpu: "8"}
"#;

/// `args` (with `-o <tmp>/out` appended) exits 1 with exactly `expected` RDG160
/// findings in its JSON report on stderr, and creates no output directory.
fn assert_refused(args: &[&str], expected: &[&str]) {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--format", "json", "-o", out_dir.to_str().unwrap()]);
    let run = rdmagen(&all);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert!(!out_dir.exists(), "something was written: {stderr}");
    let start = stderr
        .find('{')
        .unwrap_or_else(|| panic!("no JSON: {stderr}"));
    let end = stderr.rfind('}').unwrap() + 1;
    let report: serde_json::Value = serde_json::from_str(&stderr[start..end]).unwrap();
    let messages: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(f["rule"], "RDG160", "{f}");
            f["message"].as_str().unwrap()
        })
        .collect();
    assert_eq!(messages, expected);
}

#[test]
fn a_pool_overlay_request_above_the_jobs_limit_is_refused_and_nothing_written() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "t.yaml", &format!("{POOL_OVERLAY}{JOB}"));
    let message = |role: &str| {
        format!(
            "rendered pytorchjob.yaml: /spec/pytorchReplicaSpecs/{role}/template/spec/containers/0/resources/requests/cpu: \
             container `pytorch` requests cpu \"100\", above its limit \"8\" (the API server: \
             \"must be less than or equal to cpu limit\"), so the pod is refused"
        )
    };
    assert_refused(
        &["render", &input],
        &[&message("Master"), &message("Worker")],
    );
    // validate says the same, on stdout, and writes nothing either way.
    let run = rdmagen(&["validate", &input, "--format", "brief"]);
    assert_eq!(run.status.code(), Some(1));
    // Both at the pool's overlay, which wrote the request (line 15, at `cpu`).
    let stdout = text(&run.stdout);
    let at = format!("{input}:15:24: error[RDG160]");
    assert_eq!(stdout.matches(&at).count(), 2, "{stdout}");
    // A request the job's own podTemplate writes is reported there, before the pool's.
    let job_overlay = JOB.replace(
        r#"resources: {cpu: "8"}"#,
        r#"resources: {cpu: "8"}
  podTemplate:
    spec:
      containers: [{name: pytorch, resources: {requests: {cpu: "9"}}}]"#,
    );
    let both = write(
        dir.path(),
        "both.yaml",
        &format!("{POOL_OVERLAY}{job_overlay}"),
    );
    let run = rdmagen(&["validate", &both, "--format", "brief"]);
    let stdout = text(&run.stdout);
    assert_eq!(run.status.code(), Some(1), "{stdout}");
    let at = format!("{both}:30:59: error[RDG160]");
    assert_eq!(stdout.matches(&at).count(), 2, "{stdout}");
    assert!(stdout.contains(r#"requests cpu "9""#), "{stdout}");
    // Within the limit it renders.
    let fixed = write(
        dir.path(),
        "ok.yaml",
        &format!("{POOL_OVERLAY}{JOB}")
            .replace(r#"requests: {cpu: "100"}"#, r#"requests: {cpu: "7500m"}"#),
    );
    let run = rdmagen(&["render", &fixed]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert!(
        text(&run.stdout).contains("cpu: \"7500m\""),
        "{}",
        text(&run.stdout)
    );
}

#[test]
fn a_trainer_pool_is_judged_on_the_pod_its_train_job_gets() {
    let dir = tempfile::tempdir().unwrap();
    // On a Trainer v2 pool the training container is `node`, and the job's resources
    // travel in the TrainJob's resourcesPerNode.
    let pool = POOL_OVERLAY
        .replace(
            r#"target: {nccl: "2.21"}"#,
            r#"target: {api: trainer.kubeflow.org/v1alpha1, trainer: "2.3", nccl: "2.21"}"#,
        )
        .replace("- name: pytorch", "- name: node");
    let input = write(dir.path(), "t.yaml", &format!("{pool}{JOB}"));
    assert_refused(
        &["render", &input],
        &[
            "rendered trainjob.yaml: /spec/trainer/resourcesPerNode: in the pods this TrainJob gets from \
           TrainingRuntime `p`: container `node` requests cpu \"100\", above its limit \"8\" (the API server: \
           \"must be less than or equal to cpu limit\"), so the pod is refused",
        ],
    );
}

#[test]
fn the_smoke_test_job_is_checked_like_any_job() {
    let dir = tempfile::tempdir().unwrap();
    let pool = POOL_OVERLAY.replace(
        r#"requests: {cpu: "100"}"#,
        r#"requests: {cpu: "2"}
            limits: {cpu: "1"}"#,
    );
    let pools = write(dir.path(), "pool.yaml", &pool);
    let message = |role: &str| {
        format!(
            "rendered pytorchjob.yaml: /spec/pytorchReplicaSpecs/{role}/template/spec/containers/0/resources/requests/cpu: \
             container `pytorch` requests cpu \"2\", above its limit \"1\" (the API server: \
             \"must be less than or equal to cpu limit\"), so the pod is refused"
        )
    };
    assert_refused(
        &["smoke-test", "--pool", "p", "--pools", &pools],
        &[&message("Master"), &message("Worker")],
    );
}
