//! Kubeflow Trainer v2.3 and v2.1 for real (issue 25): each release's controller
//! manager, the JobSet controller it drives (v0.12.0 and v0.10.1, the releases their
//! go.mod files require) and the Job controller of kube-controller-manager run against
//! the test API server, each with its own webhooks. Every golden TrainJob written for
//! the release is created with its runtime, and the pods that come of it are compared with
//! `kubeflow::trainer::effective_pod`, the one model of Trainer's merge that `render`
//! and `lint` use: every field of the effective pod must be in the real pod, unchanged,
//! the node container's resources exactly, its env in the same order.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rdmagen::kubeflow::trainer::effective::effective_pod;
use rdmagen::kubeflow::trainer::release::Release;
use rdmagen::version::Version;
use serde_json::{Value, json};

use super::{binary, config, register_webhooks, upstream};
use crate::cluster::{
    Cluster, Controller, Golden, golden_objects, lost, root, take_default_tolerations,
};

const JOBSET_WEBHOOK_PORT: u16 = 26447;
const JOBSET_HEALTH_PORT: u16 = 26448;
const TRAINER_WEBHOOK_PORT: u16 = 26449;
const TRAINER_HEALTH_PORT: u16 = 26450;

/// A Trainer release with the JobSet release it drives, as `.ci/controlplane/build`
/// names their binaries and upstream files.
struct Pair {
    /// The `rdmagen.io/trainer` annotation of the golden objects written for it.
    trainer: &'static str,
    minor: u32,
    /// `trainer-v2.3`: the binary, its webhook file and its log.
    trainer_tag: &'static str,
    trainer_binary: &'static str,
    jobset_tag: &'static str,
    jobset_binary: &'static str,
    /// Where the release's vendored CRDs are, under tests/upstream/trainer-v2/crds.
    crds: &'static str,
}

const V2_3: Pair = Pair {
    trainer: "2.3",
    minor: 3,
    trainer_tag: "trainer-v2.3",
    trainer_binary: "RDMAGEN_TRAINER_2_3",
    jobset_tag: "jobset-v0.12",
    jobset_binary: "RDMAGEN_JOBSET",
    crds: "v2.3.0",
};

const V2_1: Pair = Pair {
    trainer: "2.1",
    minor: 1,
    trainer_tag: "trainer-v2.1",
    trainer_binary: "RDMAGEN_TRAINER_2_1",
    jobset_tag: "jobset-v0.10",
    jobset_binary: "RDMAGEN_JOBSET_0_10",
    crds: "v2.1.0",
};

/// kube-controller-manager with the Job controller alone: JobSet's Jobs become pods.
fn job_controller(cluster: &Cluster) -> Controller<'_> {
    let kubeconfig = cluster.kubeconfig().display().to_string();
    cluster.start(
        "kube-controller-manager",
        &binary("RDMAGEN_KUBE_CONTROLLER_MANAGER"),
        &[
            format!("--kubeconfig={kubeconfig}"),
            "--controllers=job".to_owned(),
            "--leader-elect=false".to_owned(),
            "--bind-address=127.0.0.1".to_owned(),
            "--secure-port=0".to_owned(),
        ],
        &[],
    )
}

/// The JobSet controller as its Deployment runs it (config/components/manager), with
/// its certificates given (internalCertManagement off) and its webhooks at 127.0.0.1.
fn jobset<'a>(cluster: &'a Cluster, pair: &Pair) -> Controller<'a> {
    let certs = cluster.dir().join("jobset-certs");
    cluster.webhook_certificates(&certs);
    let file = config(
        cluster,
        pair.jobset_tag,
        &json!({
            "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
            "kind": "Configuration",
            "webhook": {"port": JOBSET_WEBHOOK_PORT, "host": "127.0.0.1", "certDir": certs},
            "metrics": {"bindAddress": "0"},
            "health": {"healthProbeBindAddress": format!("127.0.0.1:{JOBSET_HEALTH_PORT}")},
            "leaderElection": {"leaderElect": false},
            "internalCertManagement": {"enable": false},
        }),
    );
    let mut controller = cluster.start(
        pair.jobset_tag,
        &binary(pair.jobset_binary),
        &[format!("--config={file}")],
        &[],
    );
    controller.wait_ready(pair.jobset_tag, JOBSET_HEALTH_PORT, "/readyz");
    register_webhooks(
        cluster,
        &mut controller,
        &upstream(&format!("{}-webhooks.yaml", pair.jobset_tag)),
        "jobset",
        JOBSET_WEBHOOK_PORT,
        |_| true,
    );
    controller
}

/// Trainer's controller manager (manifests/base/manager), certificates given, its
/// webhooks at 127.0.0.1. Its webhook server reads controller-runtime's default
/// certificate directory.
fn trainer<'a>(cluster: &'a Cluster, pair: &Pair) -> Controller<'a> {
    cluster.webhook_certificates(Path::new("/tmp/k8s-webhook-server/serving-certs"));
    let file = config(
        cluster,
        pair.trainer_tag,
        &json!({
            "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
            "kind": "Configuration",
            "webhook": {"port": TRAINER_WEBHOOK_PORT, "host": "127.0.0.1"},
            "metrics": {"bindAddress": "0"},
            "health": {
                "healthProbeBindAddress": format!("127.0.0.1:{TRAINER_HEALTH_PORT}"),
                "readinessEndpointName": "readyz",
                "livenessEndpointName": "healthz",
            },
            "leaderElection": {"leaderElect": false},
            "certManagement": {"enable": false},
        }),
    );
    let mut controller = cluster.start(
        pair.trainer_tag,
        &binary(pair.trainer_binary),
        &[format!("--config={file}")],
        &[],
    );
    controller.wait_ready(pair.trainer_tag, TRAINER_HEALTH_PORT, "/readyz");
    register_webhooks(
        cluster,
        &mut controller,
        &upstream(&format!("{}-webhooks.yaml", pair.trainer_tag)),
        "trainer",
        TRAINER_WEBHOOK_PORT,
        |_| true,
    );
    controller
}

/// What Trainer's torch plugin adds to the `node` container beyond the effective pod
/// (T@v2.3.0 pkg/runtime/framework/plugins/torch/torch.go:145-203): the PET_* variables
/// (pkg/constants/constants.go:190-203), upserted into its env, and the trainer port
/// 29500; v2.1.0 adds the same (torch.go:132-185, constants.go:123-135). rdmagen
/// writes neither (effective.rs says so), so they are checked to be
/// Trainer's and removed; the rest must then be the effective pod's.
fn take_torch_plugin_additions(pod: &mut Value, effective: &Value) {
    const PET: [&str; 5] = [
        "PET_NNODES",
        "PET_NPROC_PER_NODE",
        "PET_NODE_RANK",
        "PET_MASTER_ADDR",
        "PET_MASTER_PORT",
    ];
    let node = |pod: &Value| -> Option<usize> {
        pod["spec"]["containers"]
            .as_array()?
            .iter()
            .position(|c| c["name"] == "node")
    };
    let (Some(at), Some(want)) = (node(pod), node(effective)) else {
        return;
    };
    let written = &effective["spec"]["containers"][want];
    let container = &mut pod["spec"]["containers"][at];
    if let Some(env) = container.get_mut("env").and_then(Value::as_array_mut) {
        env.retain(|e| {
            let name = e["name"].as_str().unwrap_or_default();
            !PET.contains(&name) || written["env"].as_array().is_some_and(|w| w.contains(e))
        });
    }
    if let Some(ports) = container.get_mut("ports").and_then(Value::as_array_mut) {
        ports.retain(|p| {
            p["containerPort"] != 29500
                || written["ports"].as_array().is_some_and(|w| w.contains(p))
        });
        if ports.is_empty() {
            container.as_object_mut().unwrap().remove("ports");
        }
    }
}

/// The variable the Job controller adds to every container of an Indexed Job's pods
/// that does not define it (addCompletionIndexEnvVariables,
/// pkg/controller/job/indexed_job_utils.go:455-475, Kubernetes v1.34.3): JobSet's
/// Jobs are Indexed. Checked to be the Job controller's and removed.
fn take_completion_index(pod: &mut Value, effective: &Value) {
    for list in ["containers", "initContainers"] {
        let Some(containers) = pod["spec"].get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers {
            let written = effective["spec"][list]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["name"] == container["name"]))
                .and_then(|c| c["env"].as_array())
                .is_some_and(|env| env.iter().any(|e| e["name"] == "JOB_COMPLETION_INDEX"));
            let Some(env) = container.get_mut("env").and_then(Value::as_array_mut) else {
                continue;
            };
            if !written {
                let index = env.iter().position(|e| e["name"] == "JOB_COMPLETION_INDEX");
                let index = index.expect("the Job controller's JOB_COMPLETION_INDEX");
                let added = env.remove(index);
                assert_eq!(
                    added["valueFrom"]["fieldRef"]["fieldPath"],
                    "metadata.labels['batch.kubernetes.io/job-completion-index']"
                );
            }
            if env.is_empty() {
                container.as_object_mut().unwrap().remove("env");
            }
        }
    }
}

/// The runtime a TrainJob names, among the golden objects.
pub(super) fn runtime_of<'a>(objects: &'a [Golden], job: &Golden) -> &'a Golden {
    let reference = &job.doc["spec"]["runtimeRef"];
    let kind = reference["kind"]
        .as_str()
        .unwrap_or("ClusterTrainingRuntime");
    objects
        .iter()
        .find(|o| {
            o.kind() == kind
                && o.doc["metadata"]["name"] == reference["name"]
                && (kind == "ClusterTrainingRuntime" || o.namespace() == job.namespace())
        })
        .unwrap_or_else(|| panic!("{}: no golden runtime {reference}", job.file))
}

/// The node pods the TrainJob needs: its numNodes, or its runtime's.
fn nodes(job: &Value, runtime: &Golden) -> usize {
    let n = job["spec"]["trainer"]["numNodes"]
        .as_u64()
        .or_else(|| runtime.doc["spec"]["mlPolicy"]["numNodes"].as_u64())
        .unwrap_or(1);
    usize::try_from(n).unwrap()
}

/// Deletes TrainJob `name` and, as no garbage collector runs, what Trainer, JobSet and
/// the Job controller made of it: its JobSet, Jobs, pods and Service, and the runtime
/// snapshot ConfigMap Trainer v2.3 keeps (`<name>-runtime-snapshot`, which a TrainJob
/// of the same name later refuses as another's).
fn remove(cluster: &Cluster, name: &str, namespace: &str) {
    let owned = format!("jobset.sigs.k8s.io/jobset-name={name}");
    let snapshot = format!("{name}-runtime-snapshot");
    for (kind, object) in [
        ("trainjob", name),
        ("jobset", name),
        ("configmap", &snapshot),
    ] {
        cluster.ok(
            &[
                "delete",
                kind,
                object,
                "-n",
                namespace,
                "--ignore-not-found",
            ],
            None,
        );
    }
    cluster.ok(
        &[
            "delete",
            "jobs,pods,services",
            "-n",
            namespace,
            "-l",
            &owned,
        ],
        None,
    );
}

/// The pod the model says Trainer makes of `job` on `runtime`: the runtime's `node`
/// job's template with the TrainJob merged in.
fn effective_pod_of(job: &Golden, runtime: &Golden, release: Release) -> Value {
    let (_, node) = rdmagen::kubeflow::trainer::effective::trainer_job(&runtime.doc)
        .or_else(|| {
            rdmagen::kubeflow::trainer::effective::items(
                &runtime.doc["spec"]["template"]["spec"]["replicatedJobs"],
            )
            .find(|(_, j)| j["name"] == "node")
        })
        .unwrap();
    let template = &node["template"]["spec"]["template"];
    effective_pod("node", template, &job.doc["spec"], release)
}

/// The pods the model says Trainer makes of `job` on `runtime`, by replicated job, with
/// how many of each: the `node` job's effective pod on a torch runtime; on an MPI runtime
/// (`mlPolicy.mpi`) each replicated job's, the `launcher` and the `node`
/// (`kubeflow::trainer::mpi::effective_pods`).
fn expected_pods(job: &Golden, runtime: &Golden, release: Release) -> Vec<(String, Value, usize)> {
    let name = job.doc["metadata"]["name"].as_str().unwrap();
    let mpi = rdmagen::kubeflow::trainer::mpi::effective_pods(
        &runtime.doc,
        name,
        &job.doc["spec"],
        release,
    );
    if mpi.is_empty() {
        let effective = effective_pod_of(job, runtime, release);
        return vec![("node".to_owned(), effective, nodes(&job.doc, runtime))];
    }
    mpi.into_iter()
        .map(|(replicated, pod)| {
            let count = if replicated == "node" {
                nodes(&job.doc, runtime)
            } else {
                1
            };
            (replicated, pod, count)
        })
        .collect()
}

/// `effective` with each container's `env[].value: ""` left out: a pod is a Go struct,
/// whose EnvVar.Value is `omitempty` (k8s.io/api core/v1 types.go), so the controller's
/// pod stores an empty value as none. The same meaning: the variable set, empty.
fn without_empty_env_values(effective: &Value) -> Value {
    let mut out = effective.clone();
    for containers in ["containers", "initContainers"] {
        // `get_mut`, not an index: an index would add the missing key as null.
        let Some(list) = out
            .get_mut("spec")
            .and_then(|s| s.get_mut(containers))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for container in list {
            for var in container["env"].as_array_mut().into_iter().flatten() {
                if var["value"] == "" {
                    var.as_object_mut().unwrap().remove("value");
                }
            }
        }
    }
    out
}

/// Creates TrainJob `doc` on `runtime`, waits for the pods Trainer, JobSet and the Job
/// controller make of it for each replicated job `expected` names (with its count),
/// and returns each pod's name with the paths where it differs from that job's
/// effective pod once what those controllers add is checked and taken out. What it
/// made is removed again.
fn made_pods(
    cluster: &Cluster,
    doc: &Value,
    runtime: &Golden,
    expected: &[(String, Value, usize)],
) -> Vec<(String, Vec<String>)> {
    let name = doc["metadata"]["name"].as_str().unwrap();
    let namespace = doc["metadata"]["namespace"].as_str().unwrap_or("default");
    let id = format!("TrainJob {namespace}/{name}");
    cluster.ok(
        &["apply", "--server-side", "--force-conflicts", "-f", "-"],
        Some(&runtime.doc.to_string()),
    );
    remove(cluster, name, namespace);
    cluster.ok(&["create", "-f", "-"], Some(&doc.to_string()));
    let logs = cluster.dir().display().to_string();
    let mut judged = Vec::new();
    for (replicated, effective, want) in expected {
        let effective = &without_empty_env_values(effective);
        let selector = format!(
            "jobset.sigs.k8s.io/jobset-name={name},jobset.sigs.k8s.io/replicatedjob-name={replicated}"
        );
        let mut pods = cluster.wait_for_items(
            &format!("{want} {replicated} pods of {id} (logs in {logs})"),
            "pods",
            namespace,
            &selector,
            *want,
        );
        judged.extend(pods.iter_mut().map(|pod| {
            let pod_name = pod["metadata"]["name"].as_str().unwrap().to_owned();
            take_default_tolerations(pod, effective);
            take_torch_plugin_additions(pod, effective);
            take_completion_index(pod, effective);
            let mut changed = Vec::new();
            lost(&effective["spec"], &pod["spec"], "/spec", &mut changed);
            lost(
                &effective["metadata"],
                &pod["metadata"],
                "/metadata",
                &mut changed,
            );
            (pod_name, changed)
        }));
    }
    remove(cluster, name, namespace);
    judged
}

#[test]
fn the_real_trainer_2_3_makes_the_pods_of_the_effective_pod_model() {
    judge(&V2_3, 5, 10);
}

#[test]
fn the_real_trainer_2_1_makes_the_pods_of_the_effective_pod_model() {
    judge(&V2_1, 4, 7);
}

/// Every golden TrainJob written for `pair`'s Trainer, made into pods by it: at least
/// `min_jobs` jobs and `min_pods` pods, each the effective pod; and the control.
fn judge(pair: &Pair, min_jobs: usize, min_pods: usize) {
    let test = format!("Kubeflow {} against the effective pod", pair.trainer_tag);
    let Some(cluster) = Cluster::get(&test) else {
        return;
    };
    let crds: Vec<PathBuf> = [
        "trainer.kubeflow.org_trainjobs.yaml",
        "trainer.kubeflow.org_trainingruntimes.yaml",
        "trainer.kubeflow.org_clustertrainingruntimes.yaml",
    ]
    .iter()
    .map(|f| {
        root()
            .join("tests/upstream/trainer-v2/crds")
            .join(pair.crds)
            .join(f)
    })
    .chain([
        upstream(&format!("{}-crd.yaml", pair.jobset_tag)),
        // Trainer's volcano plugin makes a PodGroup for runtimes with a Volcano
        // podGroupPolicy; without the CRD the TrainJob never gets its JobSet.
        root().join("tests/upstream/crds/volcano-podgroups-v1.15.1.yaml"),
    ])
    .collect();
    cluster.install_crds(&crds);
    let objects = golden_objects();
    let written_for = |o: &&Golden| o.annotation("rdmagen.io/trainer") == Some(pair.trainer);
    let jobs: Vec<&Golden> = objects
        .iter()
        .filter(|o| o.kind() == "TrainJob")
        .filter(written_for)
        .collect();
    let namespaces: BTreeSet<&str> = jobs.iter().filter_map(|j| j.namespace()).collect();
    cluster.namespaces(namespaces);

    let _jobs = job_controller(&cluster);
    let _jobset = jobset(&cluster, pair);
    let _trainer = trainer(&cluster, pair);
    let release = Release::new(Version::new(2, pair.minor));

    let mut pods_compared = 0;
    for job in &jobs {
        let runtime = runtime_of(&objects, job);
        let expected = expected_pods(job, runtime, release);
        for (pod_name, changed) in made_pods(&cluster, &job.doc, runtime, &expected) {
            assert!(
                changed.is_empty(),
                "{} ({}): {pod_name} differs from the effective pod: {changed:#?}",
                job.file,
                job.id()
            );
            pods_compared += 1;
        }
    }

    // The control: a golden TrainJob whose variable was changed after rendering makes
    // pods the model of the unchanged job no longer predicts, and the test says where.
    let job = jobs
        .iter()
        .find(|j| {
            let torch =
                rdmagen::kubeflow::trainer::mpi::Policy::of(&runtime_of(&objects, j).doc).is_none();
            torch
                && j.doc["spec"]["trainer"]["env"]
                    .as_array()
                    .is_some_and(|e| !e.is_empty())
        })
        .expect("a golden TrainJob with trainer.env");
    let runtime = runtime_of(&objects, job);
    let effective = effective_pod_of(job, runtime, release);
    let mut broken = job.doc.clone();
    broken["spec"]["trainer"]["env"][0]["value"] = "changed-after-rendering".into();
    let variable = broken["spec"]["trainer"]["env"][0]["name"].clone();
    let node = effective["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["name"] == "node")
        .unwrap();
    let at = effective["spec"]["containers"][node]["env"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e["name"] == variable)
        .unwrap();
    let expected = [(
        "node".to_owned(),
        effective.clone(),
        nodes(&job.doc, runtime),
    )];
    for (pod_name, changed) in made_pods(&cluster, &broken, runtime, &expected) {
        assert_eq!(
            changed,
            [format!(
                "/spec/containers/{node}/env/{at}/value: {} became \"changed-after-rendering\"",
                effective["spec"]["containers"][node]["env"][at]["value"]
            )],
            "{}: {pod_name} of the changed TrainJob",
            job.file
        );
    }
    eprintln!(
        "{} TrainJobs, {pods_compared} pods: {} made the effective pod",
        jobs.len(),
        pair.trainer_tag
    );
    assert!(
        jobs.len() >= min_jobs && pods_compared >= min_pods,
        "{} jobs, {pods_compared} pods",
        jobs.len()
    );
}
