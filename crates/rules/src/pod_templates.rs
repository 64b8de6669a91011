//! Every pod template of an object, with where it sits: the one place that knows where
//! each kind keeps its pods, so that each pod rule is written once and run on all of
//! them (a PyTorchJob's replicas, a Trainer runtime's replicated jobs; the pod a
//! TrainJob gets is made by `kubeflow::trainer::effective_pod` and judged by the same
//! rules in `rules/trainer.rs`).

use serde_json::Value;

use crate::diagnostics::message::pointer_segment;
use crate::kubeflow::trainer::effective::items;

/// One pod template of an object.
pub struct PodTemplate<'a> {
    /// The replica type (`Master`, `Worker`) or the replicated job's name.
    pub name: &'a str,
    /// The object that holds the template: a PyTorchJob replica spec, or a replicated
    /// job of a runtime.
    pub holder: &'a Value,
    /// The template itself: `{metadata, spec}`.
    pub template: &'a Value,
    /// JSON Pointer of the template in the object.
    pub at: String,
}

impl<'a> PodTemplate<'a> {
    /// The pod spec.
    pub fn spec(&self) -> &'a Value {
        &self.template["spec"]
    }

    /// JSON Pointer of the pod spec.
    pub fn spec_at(&self) -> String {
        format!("{}/spec", self.at)
    }
}

/// The pod templates of a PyTorchJob's replicas, in the order the manifest has them.
pub fn of_pytorchjob(doc: &Value) -> Vec<PodTemplate<'_>> {
    of_replica_specs(doc, "pytorchReplicaSpecs")
}

/// The pod templates of an MPIJob's replicas (`Launcher`, `Worker`), in the order the
/// manifest has them.
pub fn of_mpijob(doc: &Value) -> Vec<PodTemplate<'_>> {
    of_replica_specs(doc, "mpiReplicaSpecs")
}

/// The pod template of each replica of `spec.<field>`, a map of role to replica spec
/// (the Kubeflow v1 and mpi-operator layout), in the manifest's order.
fn of_replica_specs<'a>(doc: &'a Value, field: &str) -> Vec<PodTemplate<'a>> {
    doc["spec"][field]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(role, replica)| PodTemplate {
            name: role,
            holder: replica,
            template: &replica["template"],
            at: format!("/spec/{field}/{}/template", pointer_segment(role)),
        })
        .collect()
}

/// The pod templates of a (Cluster)TrainingRuntime's replicated jobs (each job's
/// `template.spec.template`), in order.
pub fn of_runtime(doc: &Value) -> Vec<PodTemplate<'_>> {
    items(&doc["spec"]["template"]["spec"]["replicatedJobs"])
        .map(|(i, job)| PodTemplate {
            name: job["name"].as_str().unwrap_or_default(),
            holder: job,
            template: &job["template"]["spec"]["template"],
            at: format!("/spec/template/spec/replicatedJobs/{i}/template/spec/template"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn templates_are_found_where_each_kind_keeps_them() {
        let job = json!({"spec": {"pytorchReplicaSpecs": {
            "Master": {"template": {"spec": {"containers": []}}},
            "Wor/ker": {"template": {"spec": {}}},
        }}});
        let found = of_pytorchjob(&job);
        let at: Vec<String> = found.iter().map(PodTemplate::spec_at).collect();
        assert_eq!(
            at,
            [
                "/spec/pytorchReplicaSpecs/Master/template/spec",
                "/spec/pytorchReplicaSpecs/Wor~1ker/template/spec"
            ]
        );
        assert!(
            found
                .iter()
                .all(|t| job.pointer(&t.spec_at()) == Some(t.spec()))
        );

        let mpi = json!({"spec": {"mpiReplicaSpecs": {
            "Launcher": {"template": {"spec": {"containers": []}}},
            "Worker": {"template": {"spec": {"containers": []}}},
        }}});
        let found = of_mpijob(&mpi);
        let names: Vec<&str> = found.iter().map(|t| t.name).collect();
        assert_eq!(names, ["Launcher", "Worker"]);
        assert!(
            found
                .iter()
                .all(|t| mpi.pointer(&t.spec_at()) == Some(t.spec()))
        );

        let runtime = json!({"spec": {"template": {"spec": {"replicatedJobs": [
            {"name": "node", "template": {"spec": {"template": {"spec": {"containers": []}}}}},
        ]}}}});
        let found = of_runtime(&runtime);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name, "node");
        assert_eq!(runtime.pointer(&found[0].spec_at()), Some(found[0].spec()));
        assert!(of_runtime(&json!({"spec": 3})).is_empty());
    }
}
