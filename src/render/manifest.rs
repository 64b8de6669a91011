//! The direct path from plan to bytes: each built-in manifest built as a value from the
//! plan, in the layout of its embedded template, and written by [`text`]. Verify checks
//! the value itself, so rendered output is not parsed back to be trusted (issue 23:
//! templating and the parse-back were 45 % of a job's CPU).
//!
//! The embedded templates stay the documented layout and the starting point of
//! `--templates`: a test renders every example through both and compares the bytes
//! (tests/cli/direct_path.rs), and [`text`] is proven to read back as the value it
//! writes (block.rs's tests). Like the templates, nothing here decides anything: each
//! field comes from the plan as it is.

use serde_json::{Map, Value};

use crate::plan::mpi::MpiJobPlan;
use crate::plan::{Plan, RunPolicyPlan, TrainJobPlan};
use crate::render::block;

/// The PyTorchJob of `plan`, as templates/pytorchjob.yaml.j2 lays it out.
pub fn pytorchjob(plan: &Plan) -> Value {
    let mut spec = Map::new();
    if let Some(nproc) = &plan.nproc_per_node {
        spec.insert("nprocPerNode".into(), nproc.as_str().into());
    }
    spec.insert("runPolicy".into(), run_policy(&plan.run_policy));
    let restart = enum_text(&plan.restart_policy);
    let replicas: Map<String, Value> = plan
        .replicas
        .iter()
        .map(|replica| {
            let template = object([
                ("metadata", plan.pod.template["metadata"].clone()),
                ("spec", plan.pod.template["spec"].clone()),
            ]);
            let spec = object([
                ("replicas", replica.count.into()),
                ("restartPolicy", restart.clone()),
                ("template", template),
            ]);
            (replica.role.to_owned(), spec)
        })
        .collect();
    spec.insert("pytorchReplicaSpecs".into(), replicas.into());
    object([
        ("apiVersion", "kubeflow.org/v1".into()),
        ("kind", "PyTorchJob".into()),
        ("metadata", metadata(plan, &plan.labels, &plan.annotations)),
        ("spec", spec.into()),
    ])
}

/// The MPIJob of `plan`, as templates/mpijob.yaml.j2 lays it out: the Launcher's pod
/// as the plan made it, the Worker's the pod a PyTorchJob replica gets.
pub fn mpijob(plan: &Plan, mpi: &MpiJobPlan) -> Value {
    let restart = enum_text(&plan.restart_policy);
    let replica = |count: u32, template: &Value| {
        let template = object([
            ("metadata", template["metadata"].clone()),
            ("spec", template["spec"].clone()),
        ]);
        object([
            ("replicas", count.into()),
            ("restartPolicy", restart.clone()),
            ("template", template),
        ])
    };
    let replicas = object([
        (
            crate::kubeflow::mpi::LAUNCHER,
            replica(mpi.launcher_replicas, &mpi.launcher_template),
        ),
        (
            crate::kubeflow::mpi::WORKER,
            replica(mpi.worker_replicas, &plan.pod.template),
        ),
    ]);
    let mut spec = object([
        ("slotsPerWorker", mpi.slots_per_worker.into()),
        ("sshAuthMountPath", mpi.ssh_auth_mount_path.as_str().into()),
        ("mpiImplementation", mpi.implementation.into()),
    ]);
    if mpi.launcher_as_worker {
        spec["runLauncherAsWorker"] = true.into();
    }
    spec["runPolicy"] = run_policy(&plan.run_policy);
    spec["mpiReplicaSpecs"] = replicas;
    object([
        ("apiVersion", crate::kubeflow::mpi::API_VERSION.into()),
        ("kind", crate::kubeflow::mpi::KIND.into()),
        ("metadata", metadata(plan, &plan.labels, &plan.annotations)),
        ("spec", spec),
    ])
}

/// An object of `entries`, in their order. Not `json!`, which serialises each value it
/// is given into a new one: a copy of the pod template, twice for each replica, that
/// was 6 % of `validate`'s CPU at 10 000 jobs (perf, 2026-12-02).
fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
    Value::Object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

/// The TrainJob of `plan`, as templates/trainjob.yaml.j2 lays it out.
pub fn trainjob(plan: &Plan, train_job: &TrainJobPlan) -> Value {
    object([
        ("apiVersion", "trainer.kubeflow.org/v1alpha1".into()),
        ("kind", "TrainJob".into()),
        (
            "metadata",
            metadata(plan, &train_job.labels, &train_job.annotations),
        ),
        ("spec", train_job.spec.clone()),
    ])
}

/// A manifest's text: block YAML, every string through the YAML-safe scalar writer.
pub fn text(manifest: &Value) -> String {
    let mut out = String::with_capacity(4096);
    block::write(&mut out, manifest, 0);
    out
}

/// `name`, then `namespace`, `labels` and `annotations` when set.
fn metadata(
    plan: &Plan,
    labels: &std::collections::BTreeMap<String, String>,
    annotations: &std::collections::BTreeMap<String, String>,
) -> Value {
    let mut metadata = Map::new();
    metadata.insert("name".into(), plan.name.as_str().into());
    if let Some(namespace) = &plan.namespace {
        metadata.insert("namespace".into(), namespace.as_str().into());
    }
    for (key, map) in [("labels", labels), ("annotations", annotations)] {
        if !map.is_empty() {
            let entries: Map<String, Value> = map
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().into()))
                .collect();
            metadata.insert(key.into(), entries.into());
        }
    }
    metadata.into()
}

/// `runPolicy`, its fields in the template's order; `{}` when none is set.
fn run_policy(policy: &RunPolicyPlan) -> Value {
    let mut out = Map::new();
    if let Some(clean) = &policy.clean_pod_policy {
        out.insert("cleanPodPolicy".into(), enum_text(clean));
    }
    let numbers = [
        ("backoffLimit", policy.backoff_limit.map(u64::from)),
        (
            "ttlSecondsAfterFinished",
            policy.ttl_seconds_after_finished.map(u64::from),
        ),
        ("activeDeadlineSeconds", policy.active_deadline_seconds),
    ];
    for (key, number) in numbers {
        if let Some(n) = number {
            out.insert(key.into(), n.into());
        }
    }
    if let Some(suspend) = policy.suspend {
        out.insert("suspend".into(), suspend.into());
    }
    if let Some(by) = &policy.managed_by {
        out.insert("managedBy".into(), by.as_str().into());
    }
    if let Some(scheduling) = &policy.scheduling_policy {
        let mut sp = Map::new();
        if let Some(n) = scheduling.min_available {
            sp.insert("minAvailable".into(), n.into());
        }
        if let Some(queue) = &scheduling.queue {
            sp.insert("queue".into(), queue.as_str().into());
        }
        if let Some(class) = &scheduling.priority_class {
            sp.insert("priorityClass".into(), class.as_str().into());
        }
        out.insert("schedulingPolicy".into(), sp.into());
    }
    out.into()
}

/// A unit enum as the template prints it: its serialised name.
fn enum_text(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
