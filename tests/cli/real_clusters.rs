//! Issue 11: what rdmagen wrote mis-ran on clusters unlike the seeds'. One test per
//! reproduced item of "What is wrong today"; each failed before the target and the
//! platform rules were made explicit. Facts: ../shared/reference/real-clusters.md.

use serde_json::Value;

use crate::support::{rdmagen, root, text, tree};

const JOB: &str = "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {name: j}
spec:
  pool: p
  image: img:1
";

/// Render one Job (spec lines after pool/image) on one Pool (spec lines); the
/// manifests as JSON, and stderr.
fn render(job_spec: &str, pool_spec: &str, extra: &[&str]) -> (Vec<Value>, String, Option<i32>) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.yaml");
    let input = format!(
        "{JOB}{job_spec}---\napiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {{name: p}}\nspec:\n{pool_spec}"
    );
    std::fs::write(&file, input).unwrap();
    let mut args = vec!["render", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = rdmagen(&args);
    let docs = manifests(&text(&out.stdout));
    (docs, text(&out.stderr), out.status.code())
}

fn manifests(yaml: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(yaml).expect("rendered output parses")
}

fn pytorchjob(docs: &[Value]) -> &Value {
    docs.iter()
        .find(|d| d["kind"] == "PyTorchJob")
        .expect("a PyTorchJob was rendered")
}

fn pods(job: &Value) -> Vec<&Value> {
    ["Master", "Worker"]
        .iter()
        .filter_map(|r| job["spec"]["pytorchReplicaSpecs"].get(*r))
        .map(|r| &r["template"])
        .collect()
}

fn container(pod: &Value) -> &Value {
    &pod["spec"]["containers"][0]
}

fn env(pod: &Value, name: &str) -> Option<String> {
    container(pod)["env"]
        .as_array()?
        .iter()
        .find(|v| v["name"] == name)
        .and_then(|v| v["value"].as_str().map(str::to_owned))
}

fn command(pod: &Value) -> Vec<String> {
    container(pod)["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect()
}

const ROCE_8: &str = "  gpu: {perNode: 8}
  network: {fabric: roce, hcas: [mlx5_1, mlx5_2, mlx5_3, mlx5_4, mlx5_5, mlx5_6, mlx5_7, mlx5_8], socketIfname: eth0, gidIndex: 3}
";

const WHOLE_NODES: &str = "  nodes: 2\n  gpusPerNode: 8\n  script: train.py\n";

/// Item 1: CubeStudio installs an operator before 1.7: no nprocPerNode (pruned there), and
/// the launcher's flags come from the variables that operator does set.
#[test]
fn cubestudio_targets_its_pre_1_7_operator() {
    let pool = format!("  platform: cubestudio\n{ROCE_8}");
    let (docs, stderr, code) = render(WHOLE_NODES, &pool, &["--explain"]);
    assert_eq!(code, Some(0), "{stderr}");
    let job = pytorchjob(&docs);
    assert!(job["spec"].get("nprocPerNode").is_none(), "{job}");
    for pod in pods(job) {
        let cmd = command(pod).join(" ");
        for flag in [
            "--nnodes=$(WORLD_SIZE)",
            "--node_rank=$(RANK)",
            "--nproc_per_node=8",
            "--master_addr=$(MASTER_ADDR)",
            "--master_port=$(MASTER_PORT)",
        ] {
            assert!(cmd.contains(flag), "{cmd}");
        }
    }
    assert!(
        stderr.contains("target operator = 1.6 (before 1.7"),
        "{stderr}"
    );
    assert!(stderr.contains("v1-8a066f9"), "{stderr}");

    // A command of the job's own that relies on PET_* is stopped, not rendered.
    let own = "  nodes: 2\n  gpusPerNode: 8\n  launcher: none\n  command: [torchrun, train.py]\n";
    let (_, stderr, code) = render(own, &pool, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("error[RDG037]"), "{stderr}");

    // The same pool saying it runs 1.9 gets the PET_* form.
    let pool = format!("  platform: cubestudio\n  target: {{operator: \"1.9\"}}\n{ROCE_8}");
    let (docs, _, _) = render(WHOLE_NODES, &pool, &[]);
    let job = pytorchjob(&docs);
    assert_eq!(job["spec"]["nprocPerNode"], "8");
    assert_eq!(command(pods(job)[0]), ["torchrun", "train.py"]);
}

/// A bare `1.10` in YAML is the version 1.10, not the float 1.1.
#[test]
fn operator_versions_are_read_as_text() {
    let pool = format!("  target: {{operator: 1.10}}\n{ROCE_8}");
    let (_, stderr, code) = render(WHOLE_NODES, &pool, &["--explain"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("target operator = 1.10 (1.7 or later"),
        "{stderr}"
    );
    let pool = format!("  target: {{operator: v1-8a066f9}}\n{ROCE_8}");
    let (_, stderr, code) = render(WHOLE_NODES, &pool, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("invalid version `v1-8a066f9`"), "{stderr}");
}

/// Item 2: Without gang scheduling, Volcano reads the queue only from the pod annotation.
#[test]
fn the_queue_is_also_a_pod_annotation() {
    let pool = format!(
        "  target: {{gangScheduling: false}}\n{ROCE_8}  scheduler: {{name: volcano, queue: research}}\n"
    );
    let (docs, stderr, code) = render(WHOLE_NODES, &pool, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let job = pytorchjob(&docs);
    for pod in pods(job) {
        assert_eq!(
            pod["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"],
            "research"
        );
    }
    assert_eq!(
        job["spec"]["runPolicy"]["schedulingPolicy"]["queue"],
        "research"
    );
    // minAvailable means nothing to an operator that does not gang-schedule.
    let job_spec = format!("{WHOLE_NODES}  runPolicy: {{schedulingPolicy: {{minAvailable: 2}}}}\n");
    let (_, stderr, _) = render(&job_spec, &pool, &[]);
    assert!(stderr.contains("warning[RDG054]"), "{stderr}");
}

/// Item 3: The Python SDK cannot read a PyTorchJob without spec.runPolicy.
#[test]
fn every_golden_manifest_has_a_run_policy() {
    let mut seen = 0;
    for (path, bytes) in tree(&root().join("golden")) {
        if path.ends_with("pytorchjob.yaml") {
            let doc = &manifests(&text(&bytes))[0];
            assert!(doc["spec"]["runPolicy"].is_object(), "{path}");
            seen += 1;
        }
    }
    assert!(seen >= 15, "{seen} golden manifests");
    let (docs, _, _) = render(WHOLE_NODES, ROCE_8, &[]);
    assert_eq!(
        pytorchjob(&docs)["spec"]["runPolicy"],
        serde_json::json!({})
    );
}

/// The kubeflow-training 1.9.4 install RDMAGEN_KUBEFLOW_SDK names (.ci/run sets it);
/// None, with a message, where it is not set, which CI does not allow.
fn kubeflow_sdk() -> Option<std::ffi::OsString> {
    let sdk = std::env::var_os("RDMAGEN_KUBEFLOW_SDK");
    if sdk.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "the Kubeflow SDK must be installed in CI"
        );
        eprintln!("skipped: set RDMAGEN_KUBEFLOW_SDK to a kubeflow-training 1.9.4 install");
    }
    sdk
}

/// Item 3, against the consumer itself: the Kubeflow Python SDK (kubeflow-training
/// 1.9.4, installed by .ci/run) reads every golden manifest, and refuses one without
/// runPolicy. Elsewhere the test is skipped unless RDMAGEN_KUBEFLOW_SDK names it.
#[test]
fn the_python_sdk_reads_every_golden_manifest() {
    let Some(sdk) = kubeflow_sdk() else {
        return;
    };
    let mut files: Vec<String> = tree(&root().join("golden"))
        .into_iter()
        .filter(|(path, _)| path.ends_with("pytorchjob.yaml"))
        .map(|(path, _)| format!("golden/{path}"))
        .collect();
    assert!(files.len() >= 15);
    // The rule fixture for RDG071 is a manifest without runPolicy.
    files.push("tests/rules/RDG071.yaml".to_owned());
    let out = std::process::Command::new("python3")
        .arg("tests/sdk/read_pytorchjob.py")
        .args(&files)
        .current_dir(root())
        .env("PYTHONPATH", sdk)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), files.len(), "{stdout}");
    for (file, line) in files.iter().zip(&lines) {
        if file.starts_with("golden/") {
            assert_eq!(*line, format!("ok {file}"), "{stdout}");
        } else {
            assert!(
                line.starts_with(&format!("fail {file}: ValueError"))
                    && line.contains("run_policy"),
                "{stdout}"
            );
        }
    }
}

/// RDG251 against the consumer itself (issue 30, item 8): the Kubeflow Python SDK
/// (kubeflow-training 1.9.4) fails to read a PyTorchJob whose elasticPolicy lists a
/// metric, runPolicy present, and reads the same job without one. Skipped unless
/// RDMAGEN_KUBEFLOW_SDK names the install (.ci/run sets it).
#[test]
fn the_python_sdk_fails_on_elastic_metrics_and_reads_the_fixed_job() {
    let Some(sdk) = kubeflow_sdk() else {
        return;
    };
    let (bad, good) = ("tests/rules/RDG251.yaml", "tests/rules/RDG251.ok.yaml");
    let out = std::process::Command::new("python3")
        .args(["tests/sdk/read_pytorchjob.py", bad, good])
        .current_dir(root())
        .env("PYTHONPATH", sdk)
        .output()
        .expect("python3 runs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "fail {bad}: AttributeError: module 'kubeflow.training.models' has no attribute 'K8sIoApiAutoscalingV2MetricSpec'\nok {good}\n"
        )
    );
}

/// Item 4: NCCL matches NCCL_IB_HCA names as prefixes; rdmagen always writes `=`, or
/// `^=` (exclude these exact names: the management NIC of a hostNetwork pool that
/// lists no data NICs).
#[test]
fn nccl_ib_hca_is_always_exact() {
    let mut seen = 0;
    for (path, bytes) in tree(&root().join("golden")) {
        if !path.ends_with("pytorchjob.yaml") {
            continue;
        }
        let doc = &manifests(&text(&bytes))[0];
        for pod in pods(doc) {
            if let Some(value) = env(pod, "NCCL_IB_HCA") {
                assert!(
                    value.starts_with('=') || value.starts_with("^="),
                    "{path}: {value}"
                );
                seen += 1;
            }
            // 8. NCCL_IB_DISABLE=0 is NCCL's default: never written.
            assert_ne!(env(pod, "NCCL_IB_DISABLE").as_deref(), Some("0"), "{path}");
        }
    }
    assert!(seen > 0);
}

/// Item 5: GID: a RoCE pool without a GID decision warns; `auto` on an unknown NCCL warns;
/// `auto` on NCCL < 2.21 is an error (tests/bad/gid-auto-old-nccl.yaml).
#[test]
fn gid_decisions_follow_the_nccl_version() {
    let roce = |gid: &str, target: &str| {
        format!(
            "{target}  gpu: {{perNode: 8}}\n  network: {{fabric: roce, hcas: [mlx5_1], socketIfname: eth0{gid}}}\n"
        )
    };
    let (_, stderr, code) = render(WHOLE_NODES, &roce("", ""), &[]);
    assert_eq!(code, Some(0));
    assert!(stderr.contains("warning[RDG052]"), "{stderr}");
    let (_, stderr, _) = render(WHOLE_NODES, &roce(", gidIndex: auto", ""), &[]);
    assert!(stderr.contains("warning[RDG049]"), "{stderr}");
    let new = "  target: {nccl: \"2.21\"}\n";
    let (_, stderr, code) = render(WHOLE_NODES, &roce(", gidIndex: auto", new), &[]);
    assert_eq!(code, Some(0));
    assert!(!stderr.contains("RDG04"), "{stderr}");
    let old = "  target: {nccl: \"2.20\"}\n";
    let (_, stderr, code) = render(WHOLE_NODES, &roce("", old), &[]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("error[RDG048]"), "{stderr}");
    let (_, stderr, code) = render(WHOLE_NODES, &roce(", gidIndex: 3", old), &[]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// Item 6: `auto` on a self-built cluster turns RDMA on for any multi-node job; only
/// AIStudio's page turns it off below a whole node.
#[test]
fn auto_rdma_follows_the_platform() {
    let ib =
        "  gpu: {perNode: 8}\n  network: {fabric: ib, hcas: [mlx5_1, mlx5_2, mlx5_3, mlx5_4]}\n";
    let half = "  nodes: 16\n  gpusPerNode: 4\n  script: train.py\n";
    let (docs, stderr, code) = render(half, ib, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let pod = pods(pytorchjob(&docs))[0];
    assert_eq!(container(pod)["resources"]["limits"]["rdma/hca"], "1");
    assert_eq!(env(pod, "NCCL_IB_DISABLE"), None);
    assert!(stderr.contains("info[RDG016]"), "{stderr}");
    assert!(!stderr.contains("AIStudio"), "{stderr}");

    let ai = format!("  platform: aistudio\n{ib}");
    let (docs, _, _) = render(half, &ai, &[]);
    let pod = pods(pytorchjob(&docs))[0];
    assert_eq!(env(pod, "NCCL_IB_DISABLE").as_deref(), Some("1"));
}

/// Item 6: A traffic class is the pool's on self-built RoCE, and an error only where the
/// platform owns QoS; messages name a platform only on its own pools.
#[test]
fn traffic_class_is_a_pool_field_off_aistudio() {
    let pool = "  gpu: {perNode: 8}\n  network: {fabric: roce, hcas: [mlx5_1], socketIfname: eth0, gidIndex: 3, trafficClass: 41, serviceLevel: 0}\n";
    let (docs, stderr, code) = render(WHOLE_NODES, pool, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    let pod = pods(pytorchjob(&docs))[0];
    assert_eq!(env(pod, "NCCL_IB_TC").as_deref(), Some("41"));
    assert_eq!(env(pod, "NCCL_IB_SL").as_deref(), Some("0"));

    let job_tc = format!("{WHOLE_NODES}  env: {{NCCL_IB_TC: \"41\"}}\n");
    let (_, stderr, code) = render(&job_tc, ROCE_8, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!stderr.contains("AIStudio"), "{stderr}");

    let ai = format!("  platform: aistudio\n{ROCE_8}");
    let (_, stderr, code) = render(&job_tc, &ai, &[]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.contains("error[RDG020]") && stderr.contains("AIStudio"),
        "{stderr}"
    );

    // Forcing RDMA on part of a node warns in AIStudio's words only on AIStudio.
    let forced = "  nodes: 2\n  gpusPerNode: 4\n  rdma: on\n  script: train.py\n";
    let (_, stderr, _) = render(forced, ROCE_8, &[]);
    assert!(
        !stderr.contains("RDG013") && !stderr.contains("AIStudio"),
        "{stderr}"
    );
    let (_, stderr, _) = render(forced, &ai, &[]);
    assert!(
        stderr.contains("warning[RDG013]") && stderr.contains("AIStudio"),
        "{stderr}"
    );
}

/// Item 7: Seed fidelity: CubeStudio's counts and default resource, RDMA off on one node,
/// AIStudio's NCCL_SOCKET_IFNAME=eth0.
#[test]
fn the_seeds_read_right() {
    let cube = format!("  platform: cubestudio\n{ROCE_8}");
    for (rdma, resource) in [
        ("auto", Some("1")),
        ("on", Some("1")),
        ("\"10\"", Some("10")),
        ("1", Some("1")),
        ("0", None),
    ] {
        let job_spec = format!("{WHOLE_NODES}  rdma: {rdma}\n");
        let (docs, stderr, code) = render(&job_spec, &cube, &[]);
        assert_eq!(code, Some(0), "rdma: {rdma}: {stderr}");
        let limits = &container(pods(pytorchjob(&docs))[0])["resources"]["limits"];
        assert_eq!(limits["rdma/hca"].as_str(), resource, "rdma: {rdma}");
        assert!(limits.get("rdma/shared").is_none(), "rdma: {rdma}");
    }
    let typed = format!("{WHOLE_NODES}  rdma: 1(roce)\n");
    let (docs, _, _) = render(&typed, &cube, &[]);
    let limits = &container(pods(pytorchjob(&docs))[0])["resources"]["limits"];
    assert_eq!(limits["rdma/shared"], "1");

    let one_node = "  nodes: 1\n  gpusPerNode: 8\n  script: train.py\n";
    let (docs, _, _) = render(one_node, ROCE_8, &[]);
    let pod = pods(pytorchjob(&docs))[0];
    assert!(container(pod)["securityContext"].is_null(), "{pod}");
    assert_eq!(env(pod, "NCCL_IB_DISABLE").as_deref(), Some("1"));
    let forced = "  nodes: 1\n  gpusPerNode: 8\n  rdma: on\n  script: train.py\n";
    let (docs, _, _) = render(forced, ROCE_8, &[]);
    let pod = pods(pytorchjob(&docs))[0];
    assert_eq!(container(pod)["resources"]["limits"]["rdma/shared"], "1");

    let ai_ib =
        "  platform: aistudio\n  gpu: {perNode: 8}\n  network: {fabric: ib, hcas: [mlx5_1]}\n";
    let (docs, _, _) = render(WHOLE_NODES, ai_ib, &[]);
    assert_eq!(
        env(pods(pytorchjob(&docs))[0], "NCCL_SOCKET_IFNAME").as_deref(),
        Some("eth0")
    );
}
