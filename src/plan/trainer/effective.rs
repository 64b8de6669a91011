//! What Kubeflow Trainer's controller makes of a runtime's pod template and a
//! TrainJob: the pod template its `node` pods really get. rdmagen uses it twice: to find
//! what a release cannot carry from a job into its TrainJob (a finding, never a silent
//! drop), and in verify, to check that the rendered runtime and TrainJob give the pod
//! the plan decided.
//!
//! Transcribed from kubeflow/trainer (T@tag:path:line):
//! - patches are strategic merge patches of the pod template: v2.1's
//!   `podTemplateOverrides` against `corev1.PodTemplateSpec` for each targeted job
//!   (T@v2.1.0 pkg/runtime/core/trainingruntime.go `mergePodTemplateOverrides`), v2.2+'s
//!   `runtimePatches` against the JobSet spec, whose `replicatedJobs` merge by name, so
//!   the pod template of the `node` job gets the same merge
//!   (T@v2.3.0 pkg/runtime/core/trainingruntime.go:251-290);
//! - `trainer.resourcesPerNode` replaces the `node` container's resources up to v2.2
//!   (T@v2.2.0 pkg/runtime/core/trainingruntime.go:178-186) and merges into them key by
//!   key from v2.3 (T@v2.3.0 pkg/runtime/core/trainingruntime.go:199-238,
//!   pkg/util/trainingruntime/trainingruntime.go:37-65);
//! - `trainer.image`, `command` and `args` replace the container's, and `trainer.env`
//!   is upserted by name into its env (T@v2.3.0
//!   pkg/runtime/framework/plugins/jobset/builder.go:113-150, `apply.UpsertEnvVars`).
//!
//! Trainer merges with Kubernetes' strategic merge and nothing else: a list without a
//! patch merge key, `tolerations` among them, in a TrainJob's patch replaces the
//! runtime's whole (the Go struct `corev1.PodSpec.Tolerations` has no patchStrategy;
//! no plugin adds tolerations, T@v2.3.0 pkg/runtime). rdmagen's own overlays add
//! tolerations up (plan::overlay); that is rdmagen's choice, not Trainer's, so
//! plan::trainer writes the pod's whole list into the TrainJob whenever it is not the
//! runtime's, and the merge here stays Kubernetes'.
//!
//! The PET_* variables and port 29500 the torch plugin adds are left out: rdmagen
//! neither sets nor compares them.

use serde_json::{Map, Value};

use crate::kubernetes::definitions::POD_TEMPLATE_SPEC;
use crate::kubernetes::strategic_merge;
use crate::plan::pod_parts::TRAINER_CONTAINER;
use crate::plan::target::TrainerTarget;

/// The replicated job, and container, that Trainer's torch plugin trains in.
pub const NODE_JOB: &str = "node";

/// The `node` pod template that `runtime_pod` (a runtime's replicated job `node`,
/// `{metadata, spec}`) and `train_job_spec` (a TrainJob's `spec`) give on `target`.
pub fn effective_pod(runtime_pod: &Value, train_job_spec: &Value, target: TrainerTarget) -> Value {
    let mut pod = runtime_pod.clone();
    for patch in pod_patches(train_job_spec, target) {
        strategic_merge(&mut pod, &patch, POD_TEMPLATE_SPEC);
    }
    let trainer = &train_job_spec["trainer"];
    let Some(container) = node_container_mut(&mut pod) else {
        return pod;
    };
    if let Some(asked) = trainer.get("resourcesPerNode") {
        let resources = container
            .entry("resources")
            .or_insert_with(|| Value::Object(Map::new()));
        if target.merges_resources() {
            for section in ["limits", "requests"] {
                let Some(Value::Object(keys)) = asked.get(section) else {
                    continue;
                };
                let merged = &mut resources[section];
                if !merged.is_object() {
                    *merged = Value::Object(Map::new());
                }
                for (name, quantity) in keys {
                    merged[name] = quantity.clone();
                }
            }
        } else {
            *resources = asked.clone();
        }
    }
    for field in ["image", "command", "args"] {
        if let Some(value) = trainer.get(field) {
            container.insert(field.to_owned(), value.clone());
        }
    }
    if let Some(Value::Array(asked)) = trainer.get("env") {
        let env = container
            .entry("env")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(env) = env {
            for var in asked {
                match env.iter_mut().find(|e| e.get("name") == var.get("name")) {
                    Some(slot) => *slot = var.clone(),
                    None => env.push(var.clone()),
                }
            }
        }
    }
    pod
}

/// The pod-template patches of a TrainJob's spec for the `node` job, in order.
fn pod_patches(spec: &Value, target: TrainerTarget) -> Vec<Value> {
    if target.has_runtime_patches() {
        let patches = spec["runtimePatches"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        patches
            .iter()
            .filter_map(|p| {
                p.pointer("/trainingRuntimeSpec/template/spec/replicatedJobs")?
                    .as_array()?
                    .iter()
                    .find(|j| j["name"] == NODE_JOB)?
                    .pointer("/template/spec/template")
                    .cloned()
            })
            .collect()
    } else {
        let overrides = spec["podTemplateOverrides"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        overrides
            .iter()
            .filter(|o| {
                o["targetJobs"]
                    .as_array()
                    .is_some_and(|jobs| jobs.iter().any(|j| j["name"] == NODE_JOB))
            })
            .map(|o| {
                let mut patch = Map::new();
                for field in ["metadata", "spec"] {
                    if let Some(v) = o.get(field) {
                        patch.insert(field.to_owned(), v.clone());
                    }
                }
                Value::Object(patch)
            })
            .collect()
    }
}

/// The `node` container of a pod template, to change in place.
pub(super) fn node_container_mut(pod: &mut Value) -> Option<&mut Map<String, Value>> {
    pod.pointer_mut("/spec/containers")?
        .as_array_mut()?
        .iter_mut()
        .find(|c| c["name"] == TRAINER_CONTAINER)?
        .as_object_mut()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::target::Version;

    fn runtime() -> Value {
        json!({"metadata": {"annotations": {"a": "1"}}, "spec": {
            "containers": [{"name": "node",
                "env": [{"name": "NCCL_IB_HCA", "value": "=mlx5_1"}],
                "resources": {"limits": {"nvidia.com/gpu": "8", "rdma/hca": "1"},
                              "requests": {"nvidia.com/gpu": "8", "rdma/hca": "1"}},
                "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}})
    }

    fn target(minor: u32) -> TrainerTarget {
        TrainerTarget {
            release: Version::new(2, minor),
            cluster_scoped: false,
        }
    }

    #[test]
    fn resources_per_node_replace_before_2_3_and_merge_from_it() {
        let spec = json!({"trainer": {"resourcesPerNode": {"limits": {"nvidia.com/gpu": "4"}}}});
        let old = effective_pod(&runtime(), &spec, target(2));
        assert_eq!(
            old["spec"]["containers"][0]["resources"],
            json!({"limits": {"nvidia.com/gpu": "4"}}),
            "v2.2 drops the runtime's RDMA resource"
        );
        let new = effective_pod(&runtime(), &spec, target(3));
        assert_eq!(
            new["spec"]["containers"][0]["resources"]["limits"],
            json!({"nvidia.com/gpu": "4", "rdma/hca": "1"})
        );
    }

    #[test]
    fn env_is_upserted_by_name_and_image_and_command_replaced() {
        let spec = json!({"trainer": {"image": "img:1", "command": ["torchrun", "t.py"],
            "env": [{"name": "NCCL_IB_HCA", "value": "=mlx5_2"}, {"name": "X", "value": "y"}]}});
        let pod = effective_pod(&runtime(), &spec, target(3));
        let c = &pod["spec"]["containers"][0];
        assert_eq!(c["image"], "img:1");
        assert_eq!(c["command"], json!(["torchrun", "t.py"]));
        assert_eq!(
            c["env"],
            json!([{"name": "NCCL_IB_HCA", "value": "=mlx5_2"}, {"name": "X", "value": "y"}])
        );
    }

    #[test]
    fn patches_follow_the_release() {
        let pod_patch = json!({"metadata": {"labels": {"l": "v"}},
            "spec": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "c"}}]}});
        let patches = json!({"runtimePatches": [{"manager": "rdmagen.io/cli",
            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                {"name": "node", "template": {"spec": {"template": pod_patch.clone()}}}]}}}}]});
        let overrides = json!({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
            "metadata": pod_patch["metadata"].clone(), "spec": pod_patch["spec"].clone()}]});
        for (spec, minor) in [(&patches, 3), (&overrides, 1)] {
            let pod = effective_pod(&runtime(), spec, target(minor));
            assert_eq!(pod["metadata"]["labels"]["l"], "v", "2.{minor}");
            assert_eq!(pod["metadata"]["annotations"]["a"], "1", "2.{minor}");
            let names: Vec<&Value> = pod["spec"]["volumes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| &v["name"])
                .collect();
            assert_eq!(names, [&json!("dshm"), &json!("data")], "2.{minor}");
        }
        // Each release ignores the other's field.
        let pod = effective_pod(&runtime(), &patches, target(1));
        assert_eq!(pod, runtime());
        let pod = effective_pod(&runtime(), &overrides, target(3));
        assert_eq!(pod, runtime());
    }

    #[test]
    fn a_train_jobs_tolerations_replace_the_runtimes_on_every_release() {
        let mut base = runtime();
        base["spec"]["tolerations"] = json!([{"key": "pool-taint", "operator": "Exists"}]);
        let tolerations = json!([{"key": "pool-taint", "operator": "Exists"},
                                 {"key": "job-taint", "operator": "Exists"}]);
        let patches = json!({"runtimePatches": [{"manager": "rdmagen.io/cli",
            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                {"name": "node", "template": {"spec": {"template":
                    {"spec": {"tolerations": [{"key": "job-taint", "operator": "Exists"}]}}}}}]}}}}]});
        let overrides = json!({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
            "spec": {"tolerations": tolerations.clone()}}]});
        // Only the job's: the runtime's is gone, as StrategicMergePatch leaves it.
        let pod = effective_pod(&base, &patches, target(3));
        assert_eq!(
            pod["spec"]["tolerations"],
            json!([{"key": "job-taint", "operator": "Exists"}])
        );
        // The whole list, as plan::trainer writes it: the pod gets all of it.
        let pod = effective_pod(&base, &overrides, target(1));
        assert_eq!(pod["spec"]["tolerations"], tolerations);
    }
}
