//! `podTemplate` overlays: what they may add (with an info), what they may not change
//! (RDG055, in the file that wrote the overlay), and what the input schema refuses.

use serde_json::{Value, json};

use crate::support::{rdmagen, text, write};

const POOL: &str = "apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: p}
spec:
  gpu: {perNode: 8}
  network: {fabric: roce, hcas: [mlx5_1, mlx5_2], socketIfname: eth0, gidIndex: 3}
";

/// A job on POOL whose `spec.podTemplate` is `overlay` (indented under it).
fn job(overlay: &str) -> String {
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
  podTemplate:
{overlay}---
{POOL}"
    )
}

/// (rule, line, column, message) of every finding `validate` reports on `file`.
fn findings(file: &str, extra: &[&str]) -> (i32, Vec<(String, u64, u64, String)>) {
    let mut args = vec!["validate", file, "--format", "json"];
    args.extend(extra);
    let out = rdmagen(&args);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    let list = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
                f["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (out.status.code().unwrap(), list)
}

fn finding(rule: &str, line: u64, column: u64, message: &str) -> (String, u64, u64, String) {
    (rule.to_owned(), line, column, message.to_owned())
}

#[test]
fn an_extra_capability_and_env_var_are_merged_with_infos() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(
        dir.path(),
        "job.yaml",
        &job("    spec:
      containers:
        - name: pytorch
          securityContext:
            capabilities: {add: [SYS_PTRACE]}
          env:
            - {name: EXTRA_FLAG, value: \"1\"}
"),
    );
    let out = rdmagen(&["render", &input, "--explain"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let source = "= RDG056: a podTemplate overlay adds to what rdmagen decided (source: https://github.com/kubernetes/kubernetes/issues/51980)";
    let infos = format!(
        "info[RDG056]: the job's podTemplate adds capability SYS_PTRACE to container `pytorch`, kept beside IPC_LOCK: rdmagen adds to `capabilities.add`, where a strategic merge would replace it
  --> {input}:15:28
   |
15 |             capabilities: {{add: [SYS_PTRACE]}}
   |                            ^
   {source}

info[RDG056]: the job's podTemplate adds env EXTRA_FLAG to container `pytorch`; the variables rdmagen sets are unchanged
  --> {input}:16:11
   |
16 |           env:
   |           ^
   {source}

j (pool p):
"
    );
    assert!(stderr.starts_with(&infos), "{stderr}");
    assert!(
        stderr.lines().any(|l| l
            == "  podTemplate = the job's overlay: merged last, strategic merge (containers, env, volumes and mounts by name); tolerations and the training container's envFrom and capabilities.add are added to, not replaced"),
        "{stderr}"
    );

    let manifest: Value = serde_saphyr::from_str(&text(&out.stdout)).unwrap();
    for role in ["Master", "Worker"] {
        let container =
            &manifest["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["containers"][0];
        assert_eq!(
            container["securityContext"],
            json!({"capabilities": {"add": ["IPC_LOCK", "SYS_PTRACE"]}}),
            "{role}"
        );
        let env: Vec<&str> = container["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            env,
            [
                "NCCL_IB_GID_INDEX",
                "NCCL_IB_HCA",
                "NCCL_NET",
                "NCCL_SOCKET_IFNAME",
                "EXTRA_FLAG"
            ],
            "{role}"
        );
    }
}

#[test]
fn the_acceptance_overrides_name_the_field_and_the_decision() {
    let cases = [
        (
            "tests/bad/podtemplate-rdma-resource.yaml",
            finding(
                "RDG055",
                18,
                22,
                "the job's podTemplate sets `resources.limits.rdma/hca` of container `pytorch` to `2`, which would break rdmagen's decision `rdma resource = rdma/hca: 1`; ask for a count with `spec.rdma`",
            ),
        ),
        (
            "tests/bad/podtemplate-drop-ipc-lock.yaml",
            finding(
                "RDG055",
                19,
                22,
                "the job's podTemplate drops IPC_LOCK from container `pytorch`, which would break rdmagen's decision `capabilities = IPC_LOCK`; leave it out of `capabilities.drop` (`drop: [ALL]` keeps it)",
            ),
        ),
        (
            "tests/bad/podtemplate-nccl-env.yaml",
            finding(
                "RDG055",
                19,
                15,
                "the job's podTemplate sets env `NCCL_IB_HCA` of container `pytorch` to `mlx5_1`, which would break rdmagen's decision `env NCCL_IB_HCA = =mlx5_1,mlx5_2`; set it in the job's `spec.env`, where rdmagen checks it",
            ),
        ),
    ];
    for (file, want) in cases {
        assert_eq!(findings(file, &[]), (1, vec![want]), "{file}");
    }
}

#[test]
fn a_pool_overlay_is_reported_in_the_pool_file() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "job.yaml",
        "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {name: j}
spec:
  pool: p
  image: img:1
  nodes: 2
  gpusPerNode: 8
  script: t.py
  env: {LOG_LEVEL: info}
",
    );
    let pool = write(
        dir.path(),
        "pool.yaml",
        &format!(
            "{POOL}  jobDefaults:
    podTemplate:
      spec:
        containers:
          - name: pytorch
            env:
              - {{name: LOG_LEVEL, value: debug}}
"
        ),
    );
    let target = dir.path().join("out");
    let out = rdmagen(&[
        "render",
        &job,
        "--pools",
        &pool,
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with(&format!(
            "error[RDG055]: pool `p`'s podTemplate sets env `LOG_LEVEL` of container `pytorch` to `debug`, which would break the job's `spec.env.LOG_LEVEL`; change it there
  --> {pool}:13:35
"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("nothing was written"), "{stderr}");
    assert!(!target.exists());
}

#[test]
fn directives_and_nameless_containers_are_refused_by_the_input_schema() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(
        dir.path(),
        "job.yaml",
        &job("    spec:
      $retainKeys: [containers]
      $setElementOrder/containers: [{name: pytorch}]
      containers:
        - name: pytorch
          $patch: replace
          $deleteFromPrimitiveList/args: [x]
        - image: sidecar:1
"),
    );
    let (code, found) = findings(&input, &[]);
    assert_eq!(code, 1);
    let got: Vec<(&str, u64, &str)> = found
        .iter()
        .map(|(rule, line, _, message)| {
            let head = message.split(';').next().unwrap();
            (rule.as_str(), *line, head)
        })
        .collect();
    assert_eq!(
        got,
        [
            ("RDG004", 12, "unknown field `$retainKeys`"),
            ("RDG004", 13, "unknown field `$setElementOrder/containers`"),
            ("RDG004", 16, "unknown field `$patch`"),
            (
                "RDG004",
                17,
                "unknown field `$deleteFromPrimitiveList/args`"
            ),
            (
                "RDG004",
                18,
                "spec.podTemplate.spec.containers.1: missing field `name`"
            ),
        ]
    );
}

#[test]
fn affinity_through_a_pod_template_renders() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(
        dir.path(),
        "job.yaml",
        &job("    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            - labelSelector: {matchLabels: {app: j}}
              topologyKey: kubernetes.io/hostname
"),
    );
    let out = rdmagen(&["render", &input]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "");
    let manifest: Value = serde_saphyr::from_str(&text(&out.stdout)).unwrap();
    for role in ["Master", "Worker"] {
        assert_eq!(
            manifest["spec"]["pytorchReplicaSpecs"][role]["template"]["spec"]["affinity"],
            json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "j"}},
                 "topologyKey": "kubernetes.io/hostname"}]}}),
            "{role}"
        );
    }
}

/// The reported case (/tmp/he/t.yaml, without its cpu request, which is another
/// check's): the pool's overlay tolerates `pool-taint`, the job's typed field
/// `job-taint`. Kubernetes' strategic merge would keep only the overlay's list.
fn tolerations_case(target: &str) -> String {
    format!(
        "apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {{name: p}}
spec:
  gpu: {{perNode: 8}}
  network: {{fabric: roce, hcas: [mlx5_1, mlx5_2], socketIfname: eth0, gidIndex: 3}}
  target: {target}
  jobDefaults:
    podTemplate:
      spec:
        tolerations: [{{key: pool-taint, operator: Exists}}]
---
apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {{name: j}}
spec:
  pool: p
  image: img:1
  nodes: 2
  gpusPerNode: 8
  script: t.py
  tolerations: [{{key: job-taint, operator: Exists}}]
"
    )
}

fn tolerations_of(pod: &Value) -> Vec<&str> {
    pod["spec"]["tolerations"]
        .as_array()
        .unwrap_or_else(|| panic!("no tolerations: {pod}"))
        .iter()
        .map(|t| t["key"].as_str().unwrap())
        .collect()
}

#[test]
fn an_overlays_tolerations_are_added_to_the_jobs_in_every_replica() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "t.yaml", &tolerations_case("{nccl: \"2.21\"}"));
    let out = rdmagen(&["render", &input]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let manifest: Value = serde_saphyr::from_str(&text(&out.stdout)).unwrap();
    for role in ["Master", "Worker"] {
        let pod = &manifest["spec"]["pytorchReplicaSpecs"][role]["template"];
        assert_eq!(tolerations_of(pod), ["job-taint", "pool-taint"], "{role}");
    }
    // Nothing is lost, so nothing is said.
    let (code, found) = findings(&input, &[]);
    assert_eq!((code, found), (0, vec![]));
}

#[test]
fn a_trainjob_gives_its_pods_the_jobs_and_the_overlays_tolerations() {
    use rdmagen::kubeflow::trainer::effective_pod;
    use rdmagen::kubeflow::trainer::{NODE, Release};
    use rdmagen::version::Version;

    for minor in [1, 3] {
        let dir = tempfile::tempdir().unwrap();
        let target = format!(
            "{{api: trainer.kubeflow.org/v1alpha1, trainer: \"2.{minor}\", nccl: \"2.21\"}}"
        );
        let input = write(dir.path(), "t.yaml", &tolerations_case(&target));
        let out = rdmagen(&["render", &input]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "2.{minor}: {}",
            text(&out.stderr)
        );
        let docs = rdmagen::verify::parse(&text(&out.stdout)).unwrap();
        let runtime = docs
            .iter()
            .find(|d| d["kind"] == "TrainingRuntime")
            .unwrap();
        let train_job = docs.iter().find(|d| d["kind"] == "TrainJob").unwrap();
        let runtime_pod = runtime["spec"]["template"]["spec"]["replicatedJobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["name"] == "node")
            .unwrap()["template"]["spec"]["template"]
            .clone();
        // The runtime is the pool's: its overlay's toleration only.
        assert_eq!(tolerations_of(&runtime_pod), ["pool-taint"], "2.{minor}");
        // Trainer replaces the runtime's list with the TrainJob's (strategic merge),
        // so the TrainJob carries both.
        let target = Release::new(Version::new(2, minor));
        let pod = effective_pod(NODE, &runtime_pod, &train_job["spec"], target);
        assert_eq!(
            tolerations_of(&pod),
            ["job-taint", "pool-taint"],
            "2.{minor}: {train_job}"
        );
    }
}

#[test]
fn an_overlay_that_replaces_the_jobs_node_selector_terms_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(
        dir.path(),
        "job.yaml",
        &job("    spec:
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
              - matchExpressions: [{key: rack, operator: Exists}]
")
        .replace(
            "  script: t.py\n",
            "  script: t.py
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions: [{key: zone, operator: In, values: [a]}]
",
        ),
    );
    let (code, found) = findings(&input, &[]);
    let terms = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
    assert_eq!(
        (code, found),
        (
            0,
            vec![finding(
                "RDG164",
                20,
                13,
                &format!(
                    "the job's podTemplate replaces `{terms}`, a list Kubernetes merges whole, and drops 1 item the job's or pool's fields put there: `{{\"matchExpressions\":[{{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\"]}}]}}`; repeat them in the overlay's list to keep them, or change the job or pool field instead"
                )
            )]
        )
    );
    // A warning: the overlay is merged as Kubernetes would, the job's term gone.
    let out = rdmagen(&["render", &input]);
    let manifest: Value = serde_saphyr::from_str(&text(&out.stdout)).unwrap();
    let terms = &manifest["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["affinity"]
        ["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    assert_eq!(
        terms,
        &json!([{"matchExpressions": [{"key": "rack", "operator": "Exists"}]}])
    );
}

/// Tolerations the API server refuses (the attack's three), in the job's overlay and
/// the job's own list: each is RDG165 at the item that wrote it, in every replica, and
/// nothing is rendered.
#[test]
fn tolerations_the_api_server_refuses_are_named_where_they_were_written() {
    let dir = tempfile::tempdir().unwrap();
    let text_of = job("    spec:
      tolerations:
        - {key: a, operator: Exists, value: x}
        - {operator: Equal, value: y}
")
    .replace(
        "  script: t.py\n",
        "  script: t.py\n  tolerations: [{key: b, effect: NoSchedule, tolerationSeconds: 5}]\n",
    );
    let input = write(dir.path(), "t.yaml", &text_of);
    let (code, found) = findings(&input, &[]);
    assert_eq!(code, 1);
    let at: Vec<(&str, u64, u64)> = found
        .iter()
        .map(|(rule, line, column, _)| (rule.as_str(), *line, *column))
        .collect();
    assert_eq!(
        at,
        [
            // The job's own list (line 10), at `effect`.
            ("RDG165", 10, 26),
            ("RDG165", 10, 26),
            // The overlay's items (lines 14 and 15), at `value` and `operator`.
            ("RDG165", 14, 38),
            ("RDG165", 14, 38),
            ("RDG165", 15, 12),
            ("RDG165", 15, 12),
        ],
        "{found:#?}"
    );
    let out = rdmagen(&[
        "render",
        &input,
        "-o",
        dir.path().join("out").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.path().join("out").exists());
}
