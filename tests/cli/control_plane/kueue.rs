//! Kueue v0.19.2 for real (issue 25): its controller manager, with the PyTorchJob,
//! MPIJob and TrainJob integrations on and its webhooks at 127.0.0.1, runs against the test API
//! server. Every golden job that names a Kueue queue is created, and the Workload Kueue
//! makes of it is read back: its pod sets (name, count, topology request) must be what
//! the transcription in `tests/cli/kueue.rs` says, which is the fast test the rest of
//! the suite relies on. Variants of the PyTorchJob (other replica counts, a preferred
//! topology, none) are judged the same way, so the transcription is checked on more
//! than the one shape the golden file has, and a wrong prediction fails.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::{binary, config, register_webhooks, upstream};
use crate::cluster::{Cluster, Controller, Golden, golden_objects, root};
use crate::kueue::{
    PREFERRED, PodSet, QUEUE_LABEL, REQUIRED, mpijob_pod_sets, pytorchjob_pod_sets,
};

const KUEUE_WEBHOOK_PORT: u16 = 26451;
const KUEUE_HEALTH_PORT: u16 = 26452;

/// Kueue's controller manager as its Deployment runs it (config/components/manager),
/// certificates given (internalCertManagement off), leader election and the
/// visibility API server off, the two Kubeflow integrations rdmagen writes for on.
/// Only the webhooks of Kueue's own kinds and of those two integrations are
/// registered: the others would answer for kinds no test creates.
fn kueue(cluster: &Cluster) -> Controller<'_> {
    let certs = cluster.dir().join("kueue-certs");
    cluster.webhook_certificates(&certs);
    // With its own certificate management off, Kueue reads a metrics certificate from a
    // fixed path (cmd/kueue/main.go:216-228) even with the metrics server off.
    cluster.webhook_certificates(std::path::Path::new("/etc/kueue/metrics/certs"));
    let file = config(
        cluster,
        "kueue-v0.19",
        &json!({
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "namespace": "kueue-system",
            "webhook": {"port": KUEUE_WEBHOOK_PORT, "host": "127.0.0.1", "certDir": certs},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": format!("127.0.0.1:{KUEUE_HEALTH_PORT}")},
            "leaderElection": {"leaderElect": false},
            "internalCertManagement": {"enable": false},
            "integrations": {
                "frameworks": [
                    "kubeflow.org/pytorchjob",
                    "kubeflow.org/mpijob",
                    "trainer.kubeflow.org/trainjob",
                ],
            },
            "featureGates": {"VisibilityOnDemand": false},
        }),
    );
    let mut controller = cluster.start(
        "kueue-v0.19",
        &binary("RDMAGEN_KUEUE_0_19"),
        &[format!("--config={file}")],
        &[],
    );
    controller.wait_ready("kueue-v0.19", KUEUE_HEALTH_PORT, "/readyz");
    register_webhooks(
        cluster,
        &mut controller,
        &upstream("kueue-v0.19-webhooks.yaml"),
        "kueue",
        KUEUE_WEBHOOK_PORT,
        |path| {
            ["kueue-x-k8s-io", "pytorchjob", "mpijob", "trainjob"]
                .iter()
                .any(|k| path.contains(k))
        },
    );
    controller
}

/// A flavor on a two-level topology, a ClusterQueue with room for every golden job,
/// and the LocalQueue of each namespace `queues` names: what a Kueue pool's cluster
/// holds. Pods stay Pending (no nodes), so no Workload is admitted; what is judged is
/// the Workload Kueue makes.
fn queues(cluster: &Cluster, level: &str, local: &BTreeSet<(String, String)>) {
    let quota = |name: &str, quota: &str| json!({"name": name, "nominalQuota": quota});
    let mut objects = vec![
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Topology",
               "metadata": {"name": "rdmagen"},
               "spec": {"levels": [{"nodeLabel": level},
                                   {"nodeLabel": "kubernetes.io/hostname"}]}}),
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
               "metadata": {"name": "h100"},
               "spec": {"nodeLabels": {"rdmagen.test/flavor": "h100"}, "topologyName": "rdmagen"}}),
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
               "metadata": {"name": "rdmagen"},
               "spec": {"namespaceSelector": {}, "resourceGroups": [{
                   "coveredResources": ["cpu", "memory", "nvidia.com/gpu",
                                        "rdma/rdma_shared_device_a"],
                   "flavors": [{"name": "h100", "resources": [
                       quota("cpu", "10k"), quota("memory", "100Ti"),
                       quota("nvidia.com/gpu", "1k"),
                       quota("rdma/rdma_shared_device_a", "1k")]}]}]}}),
    ];
    for (namespace, name) in local {
        objects.push(
            json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
               "metadata": {"name": name, "namespace": namespace},
               "spec": {"clusterQueue": "rdmagen"}}),
        );
    }
    for object in objects {
        cluster.ok(
            &["apply", "--server-side", "--force-conflicts", "-f", "-"],
            Some(&object.to_string()),
        );
    }
}

/// The Workload Kueue made of the job `kind/name` (found by the job-uid label Kueue
/// puts on it, constants.go:41-43), waited for.
fn workload_of(cluster: &Cluster, kind: &str, name: &str, namespace: &str) -> Value {
    let uid = cluster.ok(
        &[
            "get",
            kind,
            name,
            "-n",
            namespace,
            "-o",
            "jsonpath={.metadata.uid}",
        ],
        None,
    );
    let selector = format!("kueue.x-k8s.io/job-uid={uid}");
    let log = cluster.dir().join("kueue-v0.19.log");
    let what = format!(
        "the Workload of {kind} {namespace}/{name} (log: {})",
        log.display()
    );
    let mut found =
        cluster.wait_for_items(&what, "workloads.kueue.x-k8s.io", namespace, &selector, 1);
    found.remove(0)
}

/// A Workload's pod sets as the transcription writes them.
fn pod_sets(workload: &Value) -> Vec<PodSet> {
    workload["spec"]["podSets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|set| {
            let request = &set["topologyRequest"];
            let topology = [(REQUIRED, "required"), (PREFERRED, "preferred")]
                .into_iter()
                .find_map(|(key, field)| Some((key, request[field].as_str()?.to_owned())));
            PodSet {
                name: set["name"].as_str().unwrap().to_owned(),
                count: set["count"].as_u64().unwrap(),
                topology,
            }
        })
        .collect()
}

/// Variants of a Kueue PyTorchJob, each under its own name: fewer workers, a preferred
/// topology in place of the required one, no topology, a job without a Master.
fn variants(job: &Value) -> Vec<Value> {
    let renamed = |suffix: &str, change: &dyn Fn(&mut Value)| {
        let mut v = job.clone();
        let name = format!("{}-{suffix}", v["metadata"]["name"].as_str().unwrap());
        v["metadata"]["name"] = name.into();
        change(&mut v);
        v
    };
    let each_template = |v: &mut Value, change: &dyn Fn(&mut serde_json::Map<String, Value>)| {
        for (_, spec) in v["spec"]["pytorchReplicaSpecs"].as_object_mut().unwrap() {
            change(
                spec["template"]["metadata"]["annotations"]
                    .as_object_mut()
                    .unwrap(),
            );
        }
    };
    vec![
        renamed("one-worker", &|v| {
            v["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = 1.into()
        }),
        renamed("preferred", &|v| {
            each_template(v, &|a| {
                if let Some(level) = a.remove(REQUIRED) {
                    a.insert(PREFERRED.to_owned(), level);
                }
            });
        }),
        renamed("no-topology", &|v| {
            each_template(v, &|a| {
                a.remove(REQUIRED);
                a.remove(PREFERRED);
            });
        }),
        renamed("workers-only", &|v| {
            v["spec"]["pytorchReplicaSpecs"]
                .as_object_mut()
                .unwrap()
                .remove("Master");
        }),
    ]
}

/// Variants of a Kueue MPIJob: one worker, and no topology request on the launcher
/// (which holds no GPU and need not share the workers' block).
fn mpi_variants(job: &Value) -> Vec<Value> {
    let renamed = |suffix: &str, change: &dyn Fn(&mut Value)| {
        let mut v = job.clone();
        let name = format!("{}-{suffix}", v["metadata"]["name"].as_str().unwrap());
        v["metadata"]["name"] = name.into();
        change(&mut v);
        v
    };
    vec![
        renamed("one-worker", &|v| {
            v["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = 1.into()
        }),
        renamed("free-launcher", &|v| {
            let launcher = &mut v["spec"]["mpiReplicaSpecs"]["Launcher"]["template"];
            let annotations = launcher["metadata"]["annotations"].as_object_mut().unwrap();
            annotations.remove(REQUIRED);
        }),
    ]
}

fn delete(cluster: &Cluster, kind: &str, name: &str, namespace: &str) {
    cluster.ok(
        &[
            "delete",
            kind,
            name,
            "-n",
            namespace,
            "--ignore-not-found",
            "--wait=false",
        ],
        None,
    );
    // No garbage collector runs, so the Workload does not go with its job; the test
    // judges one job at a time, so the namespace's Workloads are that job's.
    cluster.ok(
        &[
            "delete",
            "workloads.kueue.x-k8s.io",
            "-n",
            namespace,
            "--all",
            "--wait=false",
        ],
        None,
    );
}

#[test]
fn the_real_kueue_makes_the_workloads_the_transcription_predicts() {
    let Some(cluster) = Cluster::get("Kueue v0.19 against the pod-set transcription") else {
        return;
    };
    let objects = golden_objects();
    let queued: Vec<&Golden> = objects
        .iter()
        .filter(|o| ["PyTorchJob", "MPIJob", "TrainJob"].contains(&o.kind()))
        .filter(|o| o.doc["metadata"]["labels"][QUEUE_LABEL].is_string())
        .collect();
    let kueue_crds = upstream("kueue-v0.19-crds");
    let mut crds: Vec<PathBuf> = std::fs::read_dir(&kueue_crds)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    crds.sort();
    crds.extend(
        [
            "tests/upstream/crds/pytorchjob-v1.9.0.yaml",
            "tests/upstream/mpi-operator/crds/v0.8.0/kubeflow.org_mpijobs.yaml",
            "tests/upstream/trainer-v2/crds/v2.3.0/trainer.kubeflow.org_trainjobs.yaml",
            "tests/upstream/trainer-v2/crds/v2.3.0/trainer.kubeflow.org_trainingruntimes.yaml",
            "tests/upstream/trainer-v2/crds/v2.3.0/trainer.kubeflow.org_clustertrainingruntimes.yaml",
        ]
        .map(|f| root().join(f)),
    );
    crds.push(upstream("jobset-v0.12-crd.yaml"));
    cluster.install_crds(&crds);

    let local: BTreeSet<(String, String)> = queued
        .iter()
        .map(|j| {
            let queue = j.doc["metadata"]["labels"][QUEUE_LABEL].as_str().unwrap();
            (
                j.namespace().unwrap_or("default").to_owned(),
                queue.to_owned(),
            )
        })
        .collect();
    cluster.namespaces(
        local
            .iter()
            .map(|(ns, _)| ns.as_str())
            .chain(["kueue-system"]),
    );
    let level = "cloud.provider.com/topology-block";
    let kueue = kueue(&cluster);
    queues(&cluster, level, &local);

    let mut judged = Vec::new();
    for job in &queued {
        let namespace = job.namespace().unwrap_or("default");
        let (kind, want, variants) = match job.kind() {
            "PyTorchJob" => (
                "pytorchjob",
                pytorchjob_pod_sets(&job.doc),
                variants(&job.doc),
            ),
            "MPIJob" => ("mpijob", mpijob_pod_sets(&job.doc), mpi_variants(&job.doc)),
            _ => {
                let runtime = super::trainer::runtime_of(&objects, job);
                cluster.ok(
                    &["apply", "--server-side", "--force-conflicts", "-f", "-"],
                    Some(&runtime.doc.to_string()),
                );
                let want = crate::kueue::trainjob_pod_sets(&job.doc, &runtime.doc);
                ("trainjob", want, Vec::new())
            }
        };
        for (doc, want) in
            std::iter::once((job.doc.clone(), want)).chain(variants.into_iter().map(|v| {
                let want = match kind {
                    "mpijob" => mpijob_pod_sets(&v),
                    _ => pytorchjob_pod_sets(&v),
                };
                (v, want)
            }))
        {
            let name = doc["metadata"]["name"].as_str().unwrap().to_owned();
            delete(&cluster, kind, &name, namespace);
            cluster.ok(&["create", "-f", "-"], Some(&doc.to_string()));
            // Kueue's webhook suspends a job it queues until the Workload is admitted.
            let suspend = match kind {
                "pytorchjob" | "mpijob" => "jsonpath={.spec.runPolicy.suspend}",
                _ => "jsonpath={.spec.suspend}",
            };
            let suspended = cluster.ok(&["get", kind, &name, "-n", namespace, "-o", suspend], None);
            assert_eq!(
                suspended, "true",
                "{} ({name}): Kueue did not suspend it",
                job.file
            );
            let workload = workload_of(&cluster, kind, &name, namespace);
            assert_eq!(
                pod_sets(&workload),
                want,
                "{} ({name}): Kueue's Workload and the transcription differ",
                job.file
            );
            assert_eq!(
                workload["spec"]["queueName"], job.doc["metadata"]["labels"][QUEUE_LABEL],
                "{} ({name})",
                job.file
            );
            delete(&cluster, kind, &name, namespace);
            judged.push(want);
        }
    }
    // RDG201's premise: a queued PyTorchJob written without runPolicy is stored with
    // one, Kueue's webhook having suspended it, so the Python SDK reads it.
    let job = queued
        .iter()
        .find(|j| j.kind() == "PyTorchJob")
        .expect("a golden Kueue PyTorchJob");
    let namespace = job.namespace().unwrap_or("default");
    let mut bare = job.doc.clone();
    let name = format!(
        "{}-no-run-policy",
        bare["metadata"]["name"].as_str().unwrap()
    );
    bare["metadata"]["name"] = name.clone().into();
    bare["spec"].as_object_mut().unwrap().remove("runPolicy");
    delete(&cluster, "pytorchjob", &name, namespace);
    cluster.ok(&["create", "-f", "-"], Some(&bare.to_string()));
    let stored = cluster.ok(
        &[
            "get",
            "pytorchjob",
            &name,
            "-n",
            namespace,
            "-o",
            "jsonpath={.spec.runPolicy}",
        ],
        None,
    );
    assert_eq!(
        serde_json::from_str::<Value>(&stored).unwrap(),
        json!({"suspend": true}),
        "{}: a queued PyTorchJob without runPolicy is stored with Kueue's",
        job.file
    );
    delete(&cluster, "pytorchjob", &name, namespace);
    // Gone while Kueue runs, which takes its finalizers off.
    for kind in [
        "localqueues",
        "clusterqueues",
        "resourceflavors",
        "topologies",
    ] {
        cluster.ok(
            &["delete", &format!("{kind}.kueue.x-k8s.io"), "-A", "--all"],
            None,
        );
    }
    drop(kueue);
    // The variants are what makes this a test of the transcription: each predicts
    // other pod sets than the golden job, and Kueue agreed with each.
    let distinct: BTreeSet<String> = judged.iter().map(|w| format!("{w:?}")).collect();
    eprintln!(
        "{} Kueue jobs, {} Workloads: Kueue v0.19.2 made the pod sets the transcription predicts",
        queued.len(),
        judged.len()
    );
    assert_eq!(distinct.len(), judged.len(), "{judged:#?}");
    assert!(
        ["PyTorchJob", "MPIJob", "TrainJob"]
            .iter()
            .all(|kind| queued.iter().any(|j| j.kind() == *kind)),
        "the golden files hold a Kueue PyTorchJob, MPIJob and TrainJob"
    );
}
