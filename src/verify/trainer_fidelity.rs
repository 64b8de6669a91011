//! Rendered Kubeflow Trainer v2 objects read back against their plan: the runtime's
//! `node` pod template must be the one planned, and the pod Trainer would make of that
//! runtime and a rendered TrainJob (`kubeflow::trainer::effective_pod`) must be the pod the
//! job's plan holds. A template or quoting mistake that changes an image, a command, an
//! env value, a resource or a patch is caught here, whatever the template looks like.

use serde_json::Value;

use crate::diagnostics::{Finding, Rule};
use crate::kubeflow::trainer::mpi::{Policy, effective_pods};
use crate::kubeflow::trainer::{NODE as NODE_JOB, Release, effective_pod};
use crate::plan::TrainJobPlan;
use crate::plan::trainer::{RuntimePlan, differences};

/// Where a runtime keeps the `node` pod template, as a JSON pointer, if it has one.
pub fn node_pod_pointer(doc: &Value) -> Option<String> {
    let jobs = doc
        .pointer("/spec/template/spec/replicatedJobs")?
        .as_array()?;
    let i = jobs.iter().position(|j| j["name"] == NODE_JOB)?;
    Some(format!(
        "/spec/template/spec/replicatedJobs/{i}/template/spec/template"
    ))
}

/// Where a runtime keeps each replicated job's pod template, as JSON pointers.
pub fn pod_pointers(doc: &Value) -> Vec<String> {
    let count = doc
        .pointer("/spec/template/spec/replicatedJobs")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    (0..count)
        .map(|i| format!("/spec/template/spec/replicatedJobs/{i}/template/spec/template"))
        .collect()
}

/// The rendered runtime `doc` against its plan.
pub fn runtime_fidelity(doc: &Value, plan: &RuntimePlan) -> Vec<Finding> {
    let mut out = Vec::new();
    for (field, want) in [
        ("/kind", Value::from(plan.kind)),
        ("/metadata/name", Value::from(plan.name.as_str())),
    ] {
        if doc.pointer(field) != Some(&want) {
            out.push(mismatch(field, &want));
        }
    }
    match node_pod_pointer(doc).and_then(|p| doc.pointer(&p)) {
        Some(pod) => out.extend(pod_mismatches(&plan.pod, pod, "the runtime's node pod")),
        None => out.push(Finding::new(
            Rule::RenderedFidelity,
            "the runtime has no replicated job `node`",
            None,
        )),
    }
    if let Some(mpi) = &plan.mpi {
        let launcher = doc
            .pointer("/spec/template/spec/replicatedJobs")
            .and_then(Value::as_array)
            .and_then(|jobs| jobs.iter().find(|j| j["name"] == mpi.launcher_job));
        match launcher {
            Some(job) => out.extend(pod_mismatches(
                &mpi.launcher_pod,
                &job["template"]["spec"]["template"],
                "the runtime's launcher pod",
            )),
            None => out.push(Finding::new(
                Rule::RenderedFidelity,
                "the MPI runtime has no replicated job `launcher`",
                None,
            )),
        }
        let policy = Policy::of(doc);
        let planned = Policy {
            num_proc_per_node: mpi.num_proc_per_node,
            ssh_auth_mount_path: mpi.ssh_auth_mount_path.clone(),
            run_launcher_as_node: mpi.run_launcher_as_node,
        };
        if policy.as_ref() != Some(&planned) {
            out.push(Finding::at_pointer(
                Rule::RenderedFidelity,
                format!("/spec/mlPolicy/mpi is {policy:?}, not the plan's {planned:?}"),
                "/spec/mlPolicy/mpi".to_owned(),
            ));
        }
    }
    out
}

/// The pods Trainer makes of a job's MPI runtime (as rendered) and the rendered
/// TrainJob `doc`: the function the plan computed `effective_pods` with.
pub fn mpi_pods_trainer_makes(doc: &Value, plan: &TrainJobPlan) -> Vec<(String, Value)> {
    let name = doc["metadata"]["name"].as_str().unwrap_or_default();
    effective_pods(&plan.runtime_doc, name, &doc["spec"], plan.target.release)
}

/// The rendered TrainJob `doc` of job `name` on its MPI runtime against its plan;
/// `made` is [`mpi_pods_trainer_makes`]' answer.
pub fn mpi_train_job_fidelity(
    doc: &Value,
    made: &[(String, Value)],
    name: &str,
    plan: &TrainJobPlan,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if doc.pointer("/metadata/name") != Some(&Value::from(name)) {
        out.push(mismatch("/metadata/name", &Value::from(name)));
    }
    for (job, want) in &plan.effective_pods {
        match made.iter().find(|(j, _)| j == job) {
            Some((_, got)) => out.extend(pod_mismatches(
                want,
                got,
                &format!("the `{job}` pod Trainer makes of the runtime and this TrainJob"),
            )),
            None => out.push(Finding::new(
                Rule::RenderedFidelity,
                format!("Trainer makes no `{job}` pod of the runtime and this TrainJob"),
                None,
            )),
        }
    }
    out
}

/// The pod Trainer makes of the runtime's `node` pod template `runtime_pod` and the
/// rendered TrainJob `doc` on `release`: the one function `lint` judges a TrainJob's
/// pods by too (`rules::trainer::trainer_pods`).
pub fn pod_trainer_makes(runtime_pod: &Value, doc: &Value, release: Release) -> Value {
    effective_pod(NODE_JOB, runtime_pod, &doc["spec"], release)
}

/// The rendered TrainJob `doc` of job `name` against its plan; `made` is the pod
/// Trainer makes of the runtime and `doc` ([`pod_trainer_makes`]).
pub fn train_job_fidelity(
    doc: &Value,
    made: &Value,
    name: &str,
    plan: &TrainJobPlan,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if doc.pointer("/metadata/name") != Some(&Value::from(name)) {
        out.push(mismatch("/metadata/name", &Value::from(name)));
    }
    out.extend(pod_mismatches(
        &plan.effective_pod,
        made,
        "the pod Trainer makes of the runtime and this TrainJob",
    ));
    out
}

fn pod_mismatches(want: &Value, got: &Value, what: &str) -> Vec<Finding> {
    // The usual case, and a cheap one to tell.
    if want == got {
        return Vec::new();
    }
    differences(want, got)
        .into_iter()
        .map(|d| {
            Finding::new(
                Rule::RenderedFidelity,
                format!("{what} differs from the plan: {d:?}"),
                None,
            )
        })
        .collect()
}

fn mismatch(pointer: &str, want: &Value) -> Finding {
    Finding::at_pointer(
        Rule::RenderedFidelity,
        format!("{pointer} is not the plan's {want}"),
        pointer.to_owned(),
    )
}
