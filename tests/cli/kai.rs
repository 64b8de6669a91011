//! NVIDIA's KAI scheduler as it reads a rendered job (issue 26), transcribed from
//! NVIDIA/KAI-Scheduler at v0.13.0: the PodGroup its pod grouper makes of a job's pods
//! (queue, topology, priority, minimum), and which pods it groups at all.

use serde_json::Value;

use crate::support::{rdmagen, root, text, tree};

const SCHEDULER: &str = "kai-scheduler";
const QUEUE_LABEL: &str = "kai.scheduler/queue";
const TOPOLOGY: &str = "kai.scheduler/topology";
const REQUIRED: &str = "kai.scheduler/topology-required-placement";
const PREFERRED: &str = "kai.scheduler/topology-preferred-placement";
const VOLCANO_QUEUE: &str = "scheduling.volcano.sh/queue-name";

/// What KAI's grouper decides for one pod of a job.
#[derive(Debug, PartialEq)]
struct PodGroup {
    queue: String,
    topology: Option<String>,
    required: Option<String>,
    preferred: Option<String>,
    priority_class: Option<String>,
    min_available: u64,
}

fn label<'a>(object: &'a Value, key: &str) -> Option<&'a str> {
    object["metadata"]["labels"][key].as_str()
}

fn annotation(object: &Value, key: &str) -> Option<String> {
    object["metadata"]["annotations"][key]
        .as_str()
        .map(str::to_owned)
}

/// default_grouper.go:60-92 for `owner` (the top owner: the PyTorchJob, or the JobSet
/// carrying a TrainJob's labels and annotations, skiptopowner.go:64-96) and a pod made
/// from `pod`, with `min_available` the kind's own count:
/// - the queue: the owner's queue label, else the pod's, else (no `project` label)
///   `default-queue` (:134-147);
/// - the topology: the owner's three annotations (:86-89);
/// - the priority class: the owner's `priorityClassName` label, the pod's, then the
///   pod's spec.priorityClassName (:275-283).
fn pod_group(owner: &Value, pod: &Value, min_available: u64) -> PodGroup {
    let queue = label(owner, QUEUE_LABEL)
        .or(label(pod, QUEUE_LABEL))
        .unwrap_or("default-queue")
        .to_owned();
    let priority_class = label(owner, "priorityClassName")
        .or(label(pod, "priorityClassName"))
        .or(pod["spec"]["priorityClassName"].as_str())
        .map(str::to_owned);
    PodGroup {
        queue,
        topology: annotation(owner, TOPOLOGY),
        required: annotation(owner, REQUIRED),
        preferred: annotation(owner, PREFERRED),
        priority_class,
        min_available,
    }
}

/// kubeflow/distributed_common.go:29-53 and pytorch_grouper.go:44-69: the
/// minimum is runPolicy.schedulingPolicy.minAvailable when set, else every replica's
/// pods (calcJobNumOfPods, :59-89).
fn pytorchjob_min_available(job: &Value) -> u64 {
    if let Some(n) = job["spec"]["runPolicy"]["schedulingPolicy"]["minAvailable"].as_u64() {
        return n;
    }
    job["spec"]["pytorchReplicaSpecs"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| r["replicas"].as_u64().unwrap_or(1))
        .sum()
}

/// pod_controller.go:89-91: KAI groups only pods whose schedulerName is its own.
fn grouped_by_kai(pod: &Value) -> bool {
    pod["spec"]["schedulerName"] == SCHEDULER
}

fn doc(path: &str) -> Value {
    rdmagen::verify::parse(&std::fs::read_to_string(root().join(path)).unwrap())
        .unwrap()
        .remove(0)
}

/// Every pod of examples/kai-topology's PyTorchJob is grouped by KAI into one PodGroup
/// of all four pods, in queue team-a, with the pool's topology and the job's priority
/// class; nothing is written where only Volcano reads it.
#[test]
fn each_rendered_pytorchjob_is_one_kai_gang_in_the_pools_queue_and_topology() {
    let job = doc("golden/kai-topology/llama-kai/pytorchjob.yaml");
    let expected = PodGroup {
        queue: "team-a".into(),
        topology: Some("fabric".into()),
        required: Some("cloud.provider.com/topology-block".into()),
        preferred: None,
        priority_class: Some("training-high".into()),
        min_available: 4,
    };
    let replicas = job["spec"]["pytorchReplicaSpecs"].as_object().unwrap();
    assert_eq!(replicas.len(), 2);
    for (kind, replica) in replicas {
        let pod = &replica["template"];
        assert!(grouped_by_kai(pod), "{kind}: {pod}");
        assert_eq!(
            pod_group(&job, pod, pytorchjob_min_available(&job)),
            expected,
            "{kind}"
        );
        assert_eq!(annotation(pod, VOLCANO_QUEUE), None, "{kind}");
    }
    assert!(
        job["spec"]["runPolicy"]["schedulingPolicy"]["queue"].is_null(),
        "{}",
        job["spec"]["runPolicy"]
    );
}

/// A TrainJob's pods are grouped by its JobSet, which carries the TrainJob's labels and
/// annotations as KAI copies them down (skiptopowner.go:64-96, hub.go:315-320); the
/// runtime's pod template names KAI's scheduler and no Volcano queue.
#[test]
fn a_rendered_trainjob_carries_the_kai_queue_and_topology_to_its_jobset() {
    let train_job = doc("golden/kai-topology/llama-kai-v2/trainjob.yaml");
    let runtime = doc("golden/kai-topology/runtimes/h100-kai-trainer.yaml");
    let jobs = runtime["spec"]["template"]["spec"]["replicatedJobs"]
        .as_array()
        .unwrap();
    let node = jobs.iter().find(|j| j["name"] == "node").unwrap();
    let pod = &node["template"]["spec"]["template"];
    assert!(grouped_by_kai(pod), "{pod}");
    assert_eq!(annotation(pod, VOLCANO_QUEUE), None);
    assert_eq!(
        annotation(&runtime["spec"]["template"], VOLCANO_QUEUE),
        None
    );
    // The JobSet's own labels and annotations are the runtime template's; the
    // TrainJob's are copied onto it where it has none of that key.
    let mut jobset = runtime["spec"]["template"].clone();
    for field in ["labels", "annotations"] {
        let own = jobset["metadata"][field]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let mut merged = train_job["metadata"][field]
            .as_object()
            .cloned()
            .unwrap_or_default();
        merged.extend(own);
        jobset["metadata"][field] = Value::Object(merged);
    }
    let nodes = train_job["spec"]["trainer"]["numNodes"].as_u64().unwrap();
    assert_eq!(
        pod_group(&jobset, pod, nodes),
        PodGroup {
            queue: "team-a".into(),
            topology: Some("fabric".into()),
            required: None,
            preferred: Some("cloud.provider.com/topology-block".into()),
            priority_class: None,
            min_available: 4,
        }
    );
}

/// No golden pod that KAI does not schedule carries its queue label, and no golden
/// pod that KAI schedules carries a Volcano queue annotation.
#[test]
fn kai_labels_only_where_kai_reads_them() {
    let mut kai_pods = 0;
    for (path, bytes) in tree(&root().join("golden")) {
        if !path.ends_with(".yaml") {
            continue;
        }
        for doc in rdmagen::verify::parse(&String::from_utf8(bytes).unwrap()).unwrap() {
            let kai_object = label(&doc, QUEUE_LABEL).is_some();
            let replicas = doc["spec"]["pytorchReplicaSpecs"]
                .as_object()
                .or(doc["spec"]["mpiReplicaSpecs"].as_object())
                .cloned()
                .unwrap_or_default();
            for replica in replicas.values() {
                let pod = &replica["template"];
                assert_eq!(kai_object, grouped_by_kai(pod), "golden/{path}");
                if grouped_by_kai(pod) {
                    assert_eq!(annotation(pod, VOLCANO_QUEUE), None, "golden/{path}");
                    kai_pods += 1;
                }
            }
        }
    }
    assert_eq!(kai_pods, 2);
}

/// KAI with the operator's Volcano gang scheduling is an error at the pool's
/// gangScheduling; a topology without the KAI Topology's name is refused at its level,
/// and Kueue refuses a Topology name (it takes the Topology from the ResourceFlavor).
#[test]
fn kai_pool_setups_that_cannot_work_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let job = "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec: {pool: p, image: img:1, nodes: 2, gpusPerNode: 8, script: t.py}\n---\n";
    let pool = |scheduler: &str| {
        format!(
            "{job}apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {{name: p}}\nspec:\n  target: {{operator: \"1.9\", gangScheduling: false}}\n  gpu: {{perNode: 8}}\n  network: {{fabric: roce, hcas: [mlx5_1], socketIfname: eth0, gidIndex: 3}}\n  scheduler: {scheduler}\n"
        )
    };
    for (scheduler, rule, message) in [
        (
            "{name: kai-scheduler, topology: {required: block}}",
            "RDG004",
            "scheduler.topology.name is needed on KAI",
        ),
        (
            "{name: kai-scheduler, topology: {name: t, required: block, preferred: rack}}",
            "RDG004",
            "takes one of `required` and `preferred`",
        ),
        (
            "{name: kueue, jobIntegration: true, topology: {name: t, required: block}}",
            "RDG004",
            "scheduler.topology.name is KAI's",
        ),
    ] {
        let file = dir.path().join("in.yaml");
        std::fs::write(&file, pool(scheduler)).unwrap();
        let out = rdmagen(&["validate", "--format", "json", file.to_str().unwrap()]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{scheduler}: {}",
            text(&out.stderr)
        );
        let stdout = text(&out.stdout);
        let findings: Value = serde_json::from_str(&stdout).unwrap();
        let found = findings["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["rule"] == rule && f["message"].as_str().unwrap().contains(message));
        assert!(found, "{scheduler}: {stdout}");
    }
}
