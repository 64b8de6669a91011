//! An MPIJob must carry what its plan decided: the name, the counts, slots, ssh mount
//! and MPI implementation, the launcher's pod as planned (its mpirun command and the
//! variables it forwards among it), and the workers' pod, the plan's own pod template.
//! Without this, a `--templates` override that dropped a worker's RDMA resource, or a
//! variable mpirun forwards, would render and pass.

use serde_json::Value;

use crate::diagnostics::message::quoted;
use crate::diagnostics::{Finding, Rule};
use crate::kubeflow::mpi::{LAUNCHER, WORKER};
use crate::plan::Plan;
use crate::plan::mpi::MpiJobPlan;
use crate::plan::trainer::{Difference, differences};

fn mismatch(what: &str, found: &Value) -> Finding {
    Finding::new(
        Rule::RenderedFidelity,
        format!("{what} reads back as {}", quoted(found)),
        None,
    )
}

/// Every way `doc` does not carry what `plan` and its MPIJob `mpi` decided.
pub fn fidelity(doc: &Value, plan: &Plan, mpi: &MpiJobPlan) -> Vec<Finding> {
    let mut out = Vec::new();
    let spec = &doc["spec"];
    let clean = serde_json::to_value(plan.run_policy.clean_pod_policy).unwrap_or_default();
    let expected: [(&str, &Value, Value); 5] = [
        (
            "spec.runPolicy.cleanPodPolicy",
            &spec["runPolicy"]["cleanPodPolicy"],
            clean,
        ),
        (
            "metadata.name",
            &doc["metadata"]["name"],
            plan.name.as_str().into(),
        ),
        (
            "spec.slotsPerWorker",
            &spec["slotsPerWorker"],
            mpi.slots_per_worker.into(),
        ),
        (
            "spec.sshAuthMountPath",
            &spec["sshAuthMountPath"],
            mpi.ssh_auth_mount_path.as_str().into(),
        ),
        (
            "spec.mpiImplementation",
            &spec["mpiImplementation"],
            mpi.implementation.into(),
        ),
    ];
    for (what, found, want) in expected {
        if *found != want {
            out.push(mismatch(what, found));
        }
    }
    let replicas = [
        (LAUNCHER, mpi.launcher_replicas, &mpi.launcher_template),
        (WORKER, mpi.worker_replicas, &plan.pod.template),
    ];
    for (role, count, planned) in replicas {
        let replica = &spec["mpiReplicaSpecs"][role];
        if replica["replicas"] != count {
            out.push(mismatch(&format!("{role} replicas"), &replica["replicas"]));
        }
        for difference in differences(planned, &replica["template"]) {
            if let Difference::Lost { path, want } = difference {
                out.push(Finding::new(
                    Rule::RenderedFidelity,
                    format!(
                        "{role} pod template: {path} does not read back as the plan's {}",
                        quoted(&want)
                    ),
                    None,
                ));
            }
        }
    }
    out
}
