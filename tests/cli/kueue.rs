//! Kueue as it reads a rendered job (issue 26), transcribed from kubernetes-sigs/kueue
//! at v0.19.2: the workload a PyTorchJob, MPIJob or TrainJob becomes (its pod sets and their
//! topology requests) and whether Kueue's pod webhook would queue a pod on its own.
//! The fast test; `tests/cli/control_plane/kueue.rs` runs the real Kueue v0.19.2 on the
//! same golden jobs (and variants) and requires the pod sets predicted here.

use serde_json::Value;

use crate::support::{rdmagen, root, text, tree};

pub(crate) const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
pub(crate) const REQUIRED: &str = "kueue.x-k8s.io/podset-required-topology";
pub(crate) const PREFERRED: &str = "kueue.x-k8s.io/podset-preferred-topology";

/// A Kueue pod set: its name, pod count and topology request (required or preferred
/// level), as the job integration builds it.
#[derive(Debug, PartialEq)]
pub(crate) struct PodSet {
    pub(crate) name: String,
    pub(crate) count: u64,
    pub(crate) topology: Option<(&'static str, String)>,
}

/// The queue a job object is in: its QueueLabel (constants.go:23).
fn queue(object: &Value) -> Option<&str> {
    object["metadata"]["labels"][QUEUE_LABEL].as_str()
}

/// The topology request of a pod template (jobframework's PodSetTopologyRequest
/// builder reads the template's annotations; topology_types.go:28-39).
fn topology(template: &Value) -> Option<(&'static str, String)> {
    let annotations = &template["metadata"]["annotations"];
    [REQUIRED, PREFERRED]
        .into_iter()
        .find_map(|key| Some((key, annotations[key].as_str()?.to_owned())))
}

/// kubeflowjob_controller.go:112-132 with pytorchjob_controller.go:120-122: one pod
/// set per replica type, in the order Master, Worker (a type the job lacks is skipped by
/// the job's ReplicaSpecs), Count = replicas, defaulting to 1 (podsCount, :234-236), the
/// topology request from the replica's template.
pub(crate) fn pytorchjob_pod_sets(job: &Value) -> Vec<PodSet> {
    let specs = &job["spec"]["pytorchReplicaSpecs"];
    ["Master", "Worker"]
        .into_iter()
        .filter(|t| specs.get(*t).is_some())
        .map(|t| PodSet {
            name: t.to_lowercase(),
            count: specs[t]["replicas"].as_u64().unwrap_or(1),
            topology: topology(&specs[t]["template"]),
        })
        .collect()
}

/// mpijob_controller.go:113-133, 231-244: one pod set per replica type, in the order
/// Launcher, Worker (a type the job lacks is skipped), named by the type in lower case,
/// Count = replicas, defaulting to 1, the topology request from the replica's template.
pub(crate) fn mpijob_pod_sets(job: &Value) -> Vec<PodSet> {
    let specs = &job["spec"]["mpiReplicaSpecs"];
    ["Launcher", "Worker"]
        .into_iter()
        .filter(|t| specs.get(*t).is_some())
        .map(|t| PodSet {
            name: t.to_lowercase(),
            count: specs[t]["replicas"].as_u64().unwrap_or(1),
            topology: topology(&specs[t]["template"]),
        })
        .collect()
}

/// trainjob_controller.go:146-240 and jobset_controller.go:115-128: one pod set per
/// replicated job of the JobSet the runtime builds, its template the replicated job's
/// pod template; the torch runtime's `node` job runs numNodes pods.
pub(crate) fn trainjob_pod_sets(train_job: &Value, runtime: &Value) -> Vec<PodSet> {
    runtime["spec"]["template"]["spec"]["replicatedJobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| PodSet {
            name: j["name"].as_str().unwrap().to_owned(),
            count: if j["name"] == "node" {
                train_job["spec"]["trainer"]["numNodes"]
                    .as_u64()
                    .unwrap_or(1)
            } else {
                1
            },
            topology: topology(&j["template"]["spec"]["template"]),
        })
        .collect()
}

/// pod_webhook.go:145-162: a pod whose owner Kueue manages is left to that job's
/// workload; otherwise it is queued on its own when it carries a queue name (or the
/// namespace has a `default` LocalQueue, which labels it). With the job integration
/// off, the PyTorchJob does not count as a managed owner (reconciler.go:884-913).
fn pod_queued_alone(template: &Value, owner_managed: bool, default_local_queue: bool) -> bool {
    !owner_managed
        && (template["metadata"]["labels"][QUEUE_LABEL].is_string() || default_local_queue)
}

fn docs(path: &str) -> Vec<Value> {
    rdmagen::verify::parse(&std::fs::read_to_string(root().join(path)).unwrap()).unwrap()
}

/// Each golden job of examples/kueue-topology is admitted as one workload in the pool's
/// LocalQueue, with one pod set per replica type and the pool's topology request on
/// each, and no rendered pod carries the queue label: with the job integration on, no
/// pod is queued on its own, even in a namespace with a `default` LocalQueue.
#[test]
fn each_rendered_job_is_one_kueue_workload_with_a_pod_set_per_replica_type() {
    let job = docs("golden/kueue-topology/llama-kueue/pytorchjob.yaml").remove(0);
    assert_eq!(queue(&job), Some("team-a"));
    let level = "cloud.provider.com/topology-block".to_owned();
    assert_eq!(
        pytorchjob_pod_sets(&job),
        [
            PodSet {
                name: "master".into(),
                count: 1,
                topology: Some((REQUIRED, level.clone())),
            },
            PodSet {
                name: "worker".into(),
                count: 3,
                topology: Some((REQUIRED, level.clone())),
            },
        ]
    );
    let train_job = docs("golden/kueue-topology/llama-kueue-v2/trainjob.yaml").remove(0);
    let runtime = docs("golden/kueue-topology/runtimes/h100-kueue-trainer.yaml").remove(0);
    assert_eq!(queue(&train_job), Some("team-a"));
    assert_eq!(queue(&runtime), None, "the runtime is no job: no queue");
    assert_eq!(
        trainjob_pod_sets(&train_job, &runtime),
        [PodSet {
            name: "node".into(),
            count: 4,
            topology: Some((PREFERRED, level.clone())),
        }]
    );

    let mpi_job = docs("golden/kueue-topology/nccl-kueue/mpijob.yaml").remove(0);
    assert_eq!(queue(&mpi_job), Some("team-a"));
    assert_eq!(
        mpijob_pod_sets(&mpi_job),
        [
            PodSet {
                name: "launcher".into(),
                count: 1,
                topology: Some((REQUIRED, level.clone())),
            },
            PodSet {
                name: "worker".into(),
                count: 4,
                topology: Some((REQUIRED, level)),
            },
        ]
    );

    // No rendered pod template anywhere carries the queue label.
    let mut templates = 0;
    for (path, bytes) in tree(&root().join("golden")) {
        if !path.ends_with(".yaml") {
            continue;
        }
        for doc in rdmagen::verify::parse(&String::from_utf8(bytes).unwrap()).unwrap() {
            let replicas = doc["spec"]["pytorchReplicaSpecs"]
                .as_object()
                .or(doc["spec"]["mpiReplicaSpecs"].as_object())
                .cloned();
            let jobs = doc["spec"]["template"]["spec"]["replicatedJobs"]
                .as_array()
                .cloned();
            let pods: Vec<Value> = replicas
                .into_iter()
                .flat_map(|r| r.into_values().map(|r| r["template"].clone()))
                .chain(
                    jobs.into_iter()
                        .flatten()
                        .map(|j| j["template"]["spec"]["template"].clone()),
                )
                .collect();
            for pod in pods {
                assert!(!pod_queued_alone(&pod, true, true), "golden/{path}");
                assert!(
                    !pod_queued_alone(&pod, false, false),
                    "golden/{path}: a pod with the queue label"
                );
                templates += 1;
            }
        }
    }
    assert!(templates > 50, "{templates}");
}

/// A queue label the job itself sets stays on the job object and is taken off its pods;
/// Kueue with the operator's Volcano gang is an error; a Kueue pool that does not say
/// the PyTorchJob integration is on is warned (Kueue v0.19 ships it off).
#[test]
fn kueue_pools_keep_the_queue_off_the_pods_and_say_what_they_need() {
    let dir = tempfile::tempdir().unwrap();
    let pool = |target: &str, integration: &str| {
        format!(
            "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {{name: p}}\nspec:\n  gpu: {{perNode: 8}}\n  network: {{fabric: roce, hcas: [mlx5_1], socketIfname: eth0, gidIndex: 3}}\n  target: {{operator: \"1.9\"{target}}}\n  scheduler: {{name: kueue, queue: lq{integration}}}\n"
        )
    };
    let job = "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: j, labels: {kueue.x-k8s.io/queue-name: own}}\nspec: {pool: p, image: img:1, nodes: 2, gpusPerNode: 8, script: t.py}\n";
    std::fs::write(dir.path().join("job.yaml"), job).unwrap();
    let run = |pool_text: String| {
        std::fs::write(dir.path().join("pool.yaml"), pool_text).unwrap();
        rdmagen(&["render", dir.path().to_str().unwrap()])
    };
    let out = run(pool("", ", jobIntegration: true"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rendered = rdmagen::verify::parse(&text(&out.stdout))
        .unwrap()
        .remove(0);
    assert_eq!(queue(&rendered), Some("own"));
    for replica in rendered["spec"]["pytorchReplicaSpecs"]
        .as_object()
        .unwrap()
        .values()
    {
        assert!(replica["template"]["metadata"]["labels"][QUEUE_LABEL].is_null());
        assert!(replica["template"]["spec"]["schedulerName"].is_null());
    }
    assert!(rendered["spec"]["runPolicy"]["schedulingPolicy"].is_null());

    let out = run(pool(", gangScheduling: true", ", jobIntegration: true"));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("error[RDG188]"),
        "{}",
        text(&out.stderr)
    );

    for integration in ["", ", jobIntegration: false"] {
        let out = run(pool("", integration));
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains("warning[RDG189]")
                && stderr.contains("`kubeflow.org/pytorchjob` integration"),
            "{integration}: {stderr}"
        );
    }
}

/// An MPIJob on a Kueue pool: the queue label on the MPIJob alone (Launcher and Worker
/// templates without it), suspend and MultiKueue's managedBy in its runPolicy, and the
/// integration warning only for a framework the pool's jobs need that is off:
/// `kubeflow.org/mpijob` is on in Kueue v0.19's shipped config, the PyTorchJob one is
/// not.
#[test]
fn mpijobs_on_kueue_pools_are_queued_whole() {
    let dir = tempfile::tempdir().unwrap();
    let pool = |target: &str, integration: &str| {
        format!(
            "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {{name: p}}\nspec:\n  gpu: {{perNode: 8}}\n  network: {{fabric: roce, hcas: [mlx5_1], socketIfname: eth0, gidIndex: 3}}\n  target: {{mpiOperator: \"0.8\"{target}}}\n  scheduler: {{name: kueue, queue: lq{integration}}}\n"
        )
    };
    let job = "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec: {pool: p, image: img:1, nodes: 2, gpusPerNode: 8, launcher: mpirun, command: [all_reduce_perf], runPolicy: {suspend: true, managedBy: kueue.x-k8s.io/multikueue}}\n";
    std::fs::write(dir.path().join("job.yaml"), job).unwrap();
    let run = |pool_text: String| {
        std::fs::write(dir.path().join("pool.yaml"), pool_text).unwrap();
        rdmagen(&["render", dir.path().to_str().unwrap()])
    };

    let out = run(pool("", ""));
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("RDG189"), "{stderr}");
    let rendered = rdmagen::verify::parse(&text(&out.stdout))
        .unwrap()
        .remove(0);
    assert_eq!(rendered["kind"], "MPIJob");
    assert_eq!(queue(&rendered), Some("lq"));
    let replicas = rendered["spec"]["mpiReplicaSpecs"].as_object().unwrap();
    assert_eq!(replicas.keys().collect::<Vec<_>>(), ["Launcher", "Worker"]);
    for replica in replicas.values() {
        assert!(replica["template"]["metadata"]["labels"][QUEUE_LABEL].is_null());
        assert!(replica["template"]["spec"]["schedulerName"].is_null());
    }
    assert_eq!(rendered["spec"]["runPolicy"]["suspend"], true);
    assert_eq!(
        rendered["spec"]["runPolicy"]["managedBy"],
        "kueue.x-k8s.io/multikueue"
    );
    let found = rdmagen::kubeflow::mpi::crd::check(&rendered);
    assert!(
        found.is_empty(),
        "{:?}",
        found.iter().map(|f| &f.message).collect::<Vec<_>>()
    );

    let out = run(pool("", ", jobIntegration: false"));
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning[RDG189]") && stderr.contains("`kubeflow.org/mpijob` integration"),
        "{stderr}"
    );

    // A pool with both operators: its PyTorchJobs need the integration v0.19 ships off.
    let out = run(pool(", operator: \"1.9\"", ""));
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("`kubeflow.org/pytorchjob` integration")
            && !stderr.contains("`kubeflow.org/mpijob` integration"),
        "{stderr}"
    );
}

/// A job may commit itself suspended, or hand itself to MultiKueue (GitOps): the
/// PyTorchJob's `runPolicy.suspend` / `managedBy`, a TrainJob's `spec.suspend` /
/// `spec.managedBy`. managedBy is not in the PyTorchJob CRD before training-operator 1.9
/// (the API server would prune it) and takes only the CRD's values: RDG190.
#[test]
fn suspend_and_managed_by_are_written_where_the_release_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let render = |target: &str, managed_by: &str| {
        let text = format!(
            "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {{name: p}}\nspec:\n  gpu: {{perNode: 8}}\n  network: {{fabric: roce, hcas: [mlx5_1], socketIfname: eth0, gidIndex: 3}}\n  target: {target}\n  scheduler: {{name: kueue, queue: lq, jobIntegration: true}}\n---\napiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {{name: j}}\nspec:\n  pool: p\n  image: img:1\n  nodes: 2\n  gpusPerNode: 8\n  script: t.py\n  runPolicy: {{suspend: true, managedBy: {managed_by}}}\n"
        );
        std::fs::write(dir.path().join("in.yaml"), text).unwrap();
        rdmagen(&["render", dir.path().to_str().unwrap()])
    };
    let multikueue = "kueue.x-k8s.io/multikueue";
    let out = render("{operator: \"1.9\"}", multikueue);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let job = rdmagen::verify::parse(&text(&out.stdout))
        .unwrap()
        .remove(0);
    assert_eq!(job["spec"]["runPolicy"]["suspend"], true);
    assert_eq!(job["spec"]["runPolicy"]["managedBy"], multikueue);

    let out = render("{operator: \"1.8\"}", multikueue);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("error[RDG190]: runPolicy.managedBy is not in the PyTorchJob CRD of training-operator 1.8"),
        "{}",
        text(&out.stderr)
    );
    let out = render("{operator: \"1.9\"}", "someone-else");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("error[RDG190]: runPolicy.managedBy is `someone-else`"));

    let trainer = "{api: trainer.kubeflow.org/v1alpha1, trainer: \"2.3\", clusterScoped: true}";
    let out = render(trainer, multikueue);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let docs = rdmagen::verify::parse(&text(&out.stdout)).unwrap();
    let train_job = docs.iter().find(|d| d["kind"] == "TrainJob").unwrap();
    assert_eq!(train_job["spec"]["suspend"], true);
    assert_eq!(train_job["spec"]["managedBy"], multikueue);
    // The v2.3.0 TrainJob CRD takes both fields.
    let found =
        rdmagen::kubeflow::trainer::crd::check(train_job, rdmagen::version::Version::new(2, 3));
    assert!(
        found.is_empty(),
        "{:?}",
        found.iter().map(|f| &f.message).collect::<Vec<_>>()
    );
}
