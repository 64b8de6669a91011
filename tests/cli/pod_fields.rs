//! Issue 12: the pod fields real jobs need, pool defaults and where each value came
//! from. The examples' golden files show the manifests; these tests pin what the
//! goldens cannot: provenance in --explain, where findings point, and errors.

use serde_json::Value;

use crate::support::{rdmagen, text, write};

const POOL: &str = "apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: p}
spec:
  gpu: {perNode: 8}
  network: {fabric: roce, hcas: [mlx5_1, mlx5_2], socketIfname: eth0, gidIndex: 3}
";

fn job(extra: &str) -> String {
    format!(
        "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {{name: j}}
spec:
  pool: p
  image: img:1
  nodes: 2
  gpusPerNode: 8
  script: t.py
{extra}"
    )
}

/// The rendered PyTorchJob of a single-job run on stdout.
fn rendered(stdout: &[u8]) -> Value {
    let docs = rdmagen::verify::parse(&text(stdout)).unwrap();
    docs.into_iter()
        .find(|d| d["kind"] == "PyTorchJob")
        .expect("a PyTorchJob")
}

#[test]
fn explain_names_the_pool_or_the_job_for_each_default() {
    let out = rdmagen(&["render", "examples/pool-defaults", "--explain"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let finetune = stderr
        .split("\n\n")
        .find(|block| block.contains("finetune"))
        .expect("finetune's decisions");
    for line in [
        "  nodeSelector gpu.example.com/model = h100-sxm5: pool `h100-shared` (spec.jobDefaults)",
        "  priorityClassName = training-low: the job's, over pool `h100-shared`'s default `training-normal`",
        "  env HF_HOME = /home/alice/hf-cache: the job's, over pool `h100-shared`'s default `/datasets/hf-cache`",
        "  volume datasets = the pool's: pool `h100-shared` (spec.jobDefaults)",
        "  sidecars = initContainers with restartPolicy: Always: Kubernetes native sidecars (GA in 1.33) stop when the training container ends; a plain extra container would keep the pod, and so the job, running",
    ] {
        assert!(
            finetune.lines().any(|l| l == line),
            "missing `{line}` in:\n{finetune}"
        );
    }
}

#[test]
fn pool_defaults_reach_both_jobs_and_the_job_wins() {
    let out = rdmagen(&["render", "examples/pool-defaults"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let docs = rdmagen::verify::parse(&text(&out.stdout)).unwrap();
    let jobs: Vec<&Value> = docs.iter().filter(|d| d["kind"] == "PyTorchJob").collect();
    assert_eq!(jobs.len(), 2);
    for doc in jobs {
        let name = doc["metadata"]["name"].as_str().unwrap();
        assert_eq!(
            doc["metadata"]["labels"]["cost-center"], "ml-platform",
            "{name}"
        );
        let pod = &doc["spec"]["pytorchReplicaSpecs"]["Master"]["template"];
        let spec = &pod["spec"];
        assert_eq!(
            spec["nodeSelector"],
            serde_json::json!({"gpu.example.com/model": "h100-sxm5"}),
            "{name}"
        );
        assert_eq!(
            spec["imagePullSecrets"],
            serde_json::json!([{"name": "regcred"}])
        );
        let volumes: Vec<&str> = spec["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v["name"].as_str().unwrap())
            .collect();
        assert!(volumes.contains(&"datasets"), "{name}: {volumes:?}");
        let env = &spec["containers"][0]["env"];
        let hf_home = env
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "HF_HOME")
            .unwrap();
        let priority = spec["priorityClassName"].as_str().unwrap();
        match name {
            "pretrain" => {
                assert_eq!(hf_home["value"], "/datasets/hf-cache");
                assert_eq!(priority, "training-normal");
            }
            "finetune" => {
                assert_eq!(hf_home["value"], "/home/alice/hf-cache");
                assert_eq!(priority, "training-low");
                assert_eq!(pod["metadata"]["labels"]["user"], "alice");
                let sidecar = &spec["initContainers"][1];
                assert_eq!(sidecar["name"], "log-shipper");
                assert_eq!(sidecar["restartPolicy"], "Always");
            }
            other => panic!("unexpected job {other}"),
        }
    }
}

#[test]
fn env_from_secrets_and_config_maps_is_written_as_kubernetes_reads_it() {
    let out = rdmagen(&["render", "examples/private-registry"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = rendered(&out.stdout);
    let container =
        &doc["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0];
    let env = container["env"].as_array().unwrap();
    let token = env.iter().find(|e| e["name"] == "HF_TOKEN").unwrap();
    assert_eq!(
        token,
        &serde_json::json!({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token"}}})
    );
    assert_eq!(
        container["envFrom"],
        serde_json::json!([{"configMapRef": {"name": "training-defaults"}}])
    );
}

#[test]
fn a_problem_in_a_pool_default_points_at_the_pool_file() {
    let dir = tempfile::tempdir().unwrap();
    let pool = format!(
        "{POOL}  jobDefaults:
    env: {{NCCL_IB_TIMEOUT: \"99\"}}
"
    );
    let pools = write(dir.path(), "pools.yaml", &pool);
    let jobs = write(dir.path(), "jobs.yaml", &job(""));
    let out = rdmagen(&["render", &jobs, "--pools", &pools, "--format", "brief"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with(&format!("{pools}:8:")) && l.contains("NCCL_IB_TIMEOUT")),
        "{stderr}"
    );
}

#[test]
fn labels_under_spec_say_where_they_moved() {
    let dir = tempfile::tempdir().unwrap();
    let jobs = write(
        dir.path(),
        "jobs.yaml",
        &format!("{}---\n{POOL}", job("  labels: {team: a}\n")),
    );
    let out = rdmagen(&["render", &jobs, "--format", "brief"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr).lines().next().unwrap(),
        format!(
            "{jobs}:10:3: error[RDG004]: unknown field `labels`; it moved to `metadata.labels`, where Kubernetes keeps it"
        )
    );
}

#[test]
fn job_metadata_lands_on_the_pytorchjob_and_its_pods() {
    let dir = tempfile::tempdir().unwrap();
    let body = job("").replace(
        "metadata: {name: j}",
        "metadata: {name: j, labels: {team: a}, annotations: {example.com/owner: b}}",
    );
    let jobs = write(dir.path(), "jobs.yaml", &format!("{body}---\n{POOL}"));
    let out = rdmagen(&["render", &jobs]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = rendered(&out.stdout);
    assert_eq!(doc["metadata"]["labels"]["team"], "a");
    assert_eq!(doc["metadata"]["annotations"]["example.com/owner"], "b");
    for role in ["Master", "Worker"] {
        let meta = &doc["spec"]["pytorchReplicaSpecs"][role]["template"]["metadata"];
        assert_eq!(meta["labels"]["team"], "a");
        assert_eq!(meta["annotations"]["example.com/owner"], "b");
    }
}

/// IPC_LOCK, which rdmagen adds to every RDMA pod, is inert under a non-root user: the
/// rendered pod is judged as lint judges it (RDG182), once for Master and Worker, at
/// the input that set the user.
#[test]
fn a_non_root_user_beside_ipc_lock_is_warned_on_render() {
    let dir = tempfile::tempdir().unwrap();
    let findings = |pool: &str, job: &str| -> Vec<(String, String, u64)> {
        let pool = write(dir.path(), "pool.yaml", pool);
        let input = write(dir.path(), "job.yaml", job);
        let out = rdmagen(&["render", &input, &pool, "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let doc: Value = serde_json::from_str(&text(&out.stderr)).unwrap();
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let file = f["file"].as_str().unwrap();
                let file = file.rsplit('/').next().unwrap().to_owned();
                (
                    f["rule"].as_str().unwrap().to_owned(),
                    file,
                    f["line"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let found = findings(POOL, &job("  securityContext: {runAsUser: 1000}\n"));
    assert_eq!(found, [("RDG182".to_owned(), "job.yaml".to_owned(), 10)]);
    let pool = format!(
        "{POOL}  jobDefaults:\n    podTemplate:\n      spec:\n        securityContext: {{runAsNonRoot: true}}\n"
    );
    let found = findings(&pool, &job(""));
    assert_eq!(found, [("RDG182".to_owned(), "pool.yaml".to_owned(), 10)]);
    // Root in the container is what IPC_LOCK needs.
    let found = findings(&pool, &job("  securityContext: {runAsUser: 0}\n"));
    assert_eq!(found, []);
}

/// The same on Kubeflow Trainer: the user reaches the pods through the TrainJob's
/// runtime patch, and the finding is placed at the job's field that set it.
#[test]
fn a_non_root_user_beside_ipc_lock_is_warned_on_a_trainer_render() {
    let dir = tempfile::tempdir().unwrap();
    let jobs =
        std::fs::read_to_string(crate::support::root().join("examples/trainer-v2-roce/jobs.yaml"))
            .unwrap()
            .replacen(
                "  gpusPerNode: 8\n",
                "  gpusPerNode: 8\n  securityContext: {runAsUser: 1000}\n",
                1,
            );
    let jobs = write(dir.path(), "jobs.yaml", &jobs);
    let pool = crate::support::root().join("examples/trainer-v2-roce/pool.yaml");
    let out = rdmagen(&["render", &jobs, pool.to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc: Value = serde_json::from_str(&text(&out.stderr)).unwrap();
    let found: Vec<(&str, u64)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "RDG182")
        .map(|f| (f["file"].as_str().unwrap(), f["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(found, [(jobs.as_str(), 17)]);
}
