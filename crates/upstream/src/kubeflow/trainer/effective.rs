//! What Kubeflow Trainer's controller makes of a runtime's trainer pod template and a
//! TrainJob: the pod template its `node` pods really get. The plan uses it to find
//! what a release cannot carry from a job into its TrainJob, `render` to check that
//! the rendered runtime and TrainJob give the pod the plan decided, and `lint` to
//! judge the pods a foreign TrainJob gets.
//!
//! Transcribed from kubeflow/trainer (T@tag:path:line):
//! - patches are strategic merge patches of the pod template: v2.1's
//!   `podTemplateOverrides` against `corev1.PodTemplateSpec` for each targeted job
//!   (T@v2.1.0 pkg/runtime/core/trainingruntime.go `mergePodTemplateOverrides`), v2.2+'s
//!   `runtimePatches` against the JobSet spec, whose `replicatedJobs` merge by name, so
//!   the pod template of the targeted job gets the same merge
//!   (T@v2.3.0 pkg/runtime/core/trainingruntime.go:251-290);
//! - `trainer.resourcesPerNode` replaces the `node` container's resources up to v2.2
//!   (T@v2.2.0 pkg/runtime/core/trainingruntime.go:178-186) and merges into them key by
//!   key from v2.3 (T@v2.3.0 pkg/runtime/core/trainingruntime.go:199-238,
//!   pkg/util/trainingruntime/trainingruntime.go:37-65);
//! - `trainer.image`, `command` and `args` replace the container's, and `trainer.env`
//!   is upserted by name into its env (T@v2.3.0
//!   pkg/runtime/framework/plugins/jobset/builder.go:113-150, `apply.UpsertEnvVars`).
//!   Each is a Go pointer or slice, so a field written `null` is a field not written.
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

use super::release::{Release, ResourcesPerNode};
use super::{ANCESTOR_LABEL, NODE};
use crate::kubernetes::definitions::POD_TEMPLATE_SPEC;
use crate::kubernetes::{ListOrder, strategic_merge};

pub use super::release::PatchField;

/// One patch a TrainJob writes for the pods of some of its runtime's replicated jobs,
/// in either release's field.
#[derive(Debug)]
pub struct PodPatch<'a> {
    pub field: PatchField,
    /// Where the patch's pod template is in the TrainJob's `spec` (a JSON Pointer; the
    /// patch's `metadata` and `spec` are under it).
    pub at: String,
    /// The replicated jobs it patches: (where the name is written, the name; "" when
    /// none is).
    pub targets: Vec<(String, &'a str)>,
    pub metadata: &'a Value,
    pub spec: &'a Value,
}

impl PodPatch<'_> {
    pub fn targets(&self, job: &str) -> bool {
        self.targets.iter().any(|(_, name)| *name == job)
    }

    /// The patch as a partial pod template; parts that are not objects are the CRD's
    /// to refuse, and patch nothing.
    fn template(&self) -> Value {
        let mut template = Map::new();
        for (field, value) in [("metadata", self.metadata), ("spec", self.spec)] {
            if value.is_object() {
                template.insert(field.to_owned(), value.clone());
            }
        }
        Value::Object(template)
    }
}

/// The items of a list with their indexes; none for anything else (the CRD's finding).
pub fn items(value: &Value) -> impl Iterator<Item = (usize, &Value)> {
    value
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .enumerate()
}

/// Every pod patch of a TrainJob's `spec`, in the order written: `runtimePatches`'
/// first, then `podTemplateOverrides`'. Each release reads only its own field
/// ([`Release::patch_field`]); the other is not in its CRD.
pub fn pod_patches(spec: &Value) -> Vec<PodPatch<'_>> {
    let mut out = Vec::new();
    for (i, patch) in items(&spec["runtimePatches"]) {
        let base = format!("/runtimePatches/{i}/trainingRuntimeSpec/template/spec/replicatedJobs");
        let jobs = &patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"];
        for (j, job) in items(jobs) {
            let template = &job["template"]["spec"]["template"];
            out.push(PodPatch {
                field: PatchField::RuntimePatches,
                at: format!("{base}/{j}/template/spec/template"),
                targets: vec![(
                    format!("{base}/{j}/name"),
                    job["name"].as_str().unwrap_or_default(),
                )],
                metadata: &template["metadata"],
                spec: &template["spec"],
            });
        }
    }
    for (i, patch) in items(&spec["podTemplateOverrides"]) {
        let targets = items(&patch["targetJobs"])
            .map(|(t, target)| {
                (
                    format!("/podTemplateOverrides/{i}/targetJobs/{t}/name"),
                    target["name"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        out.push(PodPatch {
            field: PatchField::PodTemplateOverrides,
            at: format!("/podTemplateOverrides/{i}"),
            targets,
            metadata: &patch["metadata"],
            spec: &patch["spec"],
        });
    }
    out
}

/// The replicated job Trainer runs the trainer in, with its index: the one whose Job
/// template is labelled [`ANCESTOR_LABEL`]`: trainer`.
pub fn trainer_job(runtime: &Value) -> Option<(usize, &Value)> {
    items(&runtime["spec"]["template"]["spec"]["replicatedJobs"])
        .find(|(_, j)| j["template"]["metadata"]["labels"][ANCESTOR_LABEL] == "trainer")
}

/// The pod template that replicated job `job`, whose pod template in the runtime is
/// `runtime_pod` (`{metadata, spec}`), gets from a TrainJob's `train_job_spec` on
/// `release`: its patches for `job`, then the `trainer` fields on the `node`
/// container. The caller says which job is the trainer's ([`trainer_job`], or
/// [`NODE`] for the runtimes rdmagen writes).
pub fn effective_pod(
    job: &str,
    runtime_pod: &Value,
    train_job_spec: &Value,
    release: Release,
) -> Value {
    let mut pod = patched_pod(job, runtime_pod, train_job_spec, release);
    let trainer = &train_job_spec["trainer"];
    if let Some(container) = node_container_mut(&mut pod) {
        apply_resources(container, trainer, release);
        apply_image(container, trainer);
        apply_env(container, trainer);
    }
    pod
}

/// `runtime_pod`, the pod template of replicated job `job`, with the TrainJob's
/// patches for that job on `release` merged in.
pub fn patched_pod(
    job: &str,
    runtime_pod: &Value,
    train_job_spec: &Value,
    release: Release,
) -> Value {
    let mut pod = runtime_pod.clone();
    let field = release.patch_field();
    for patch in pod_patches(train_job_spec) {
        if patch.field == field && patch.targets(job) {
            strategic_merge(
                &mut pod,
                &patch.template(),
                POD_TEMPLATE_SPEC,
                ListOrder::AsTheApiServer,
            );
        }
    }
    pod
}

/// A field of the TrainJob's `trainer` that is written: a Go pointer or slice, so a
/// field written `null` is a field not written.
fn given<'a>(trainer: &'a Value, field: &str) -> Option<&'a Value> {
    trainer.get(field).filter(|v| !v.is_null())
}

/// `trainer.resourcesPerNode` on the `node` container, as `release` applies it.
pub fn apply_resources(container: &mut Map<String, Value>, trainer: &Value, release: Release) {
    let Some(asked) = given(trainer, "resourcesPerNode") else {
        return;
    };
    match release.resources_per_node() {
        ResourcesPerNode::Replaces => {
            container.insert("resources".to_owned(), asked.clone());
        }
        ResourcesPerNode::Merges => {
            let mut resources = match container.remove("resources") {
                Some(Value::Object(map)) => map,
                _ => Map::new(),
            };
            for section in ["limits", "requests"] {
                let Some(Value::Object(keys)) = asked.get(section) else {
                    continue;
                };
                let merged = resources
                    .entry(section)
                    .or_insert_with(|| Value::Object(Map::new()));
                if !merged.is_object() {
                    *merged = Value::Object(Map::new());
                }
                if let Value::Object(merged) = merged {
                    for (name, quantity) in keys {
                        merged.insert(name.clone(), quantity.clone());
                    }
                }
            }
            container.insert("resources".to_owned(), Value::Object(resources));
        }
    }
}

/// `trainer.image`, `command` and `args`, each replacing the container's.
pub fn apply_image(container: &mut Map<String, Value>, trainer: &Value) {
    for field in ["image", "command", "args"] {
        if let Some(value) = given(trainer, field) {
            container.insert(field.to_owned(), value.clone());
        }
    }
}

/// `trainer.env`, upserted by name into the container's env.
pub fn apply_env(container: &mut Map<String, Value>, trainer: &Value) {
    if let Some(Value::Array(asked)) = given(trainer, "env") {
        upsert_env(container, asked);
    }
}

/// `vars` upserted by name into the container's env (`apply.UpsertEnvVars`: a
/// variable of the same name is replaced in place, a new one appended).
pub fn upsert_env(container: &mut Map<String, Value>, vars: &[Value]) {
    upsert(container, "env", vars, "name");
}

/// `items` upserted into list `field` of `object` by `key`, in place or appended
/// (T@v2.3.0 pkg/apply/apply.go:37-59: env and volumes by name, mounts by mount path).
pub fn upsert(object: &mut Map<String, Value>, field: &str, items: &[Value], key: &str) {
    let list = object
        .entry(field)
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    if let Value::Array(list) = list {
        for item in items {
            match list.iter_mut().find(|e| e.get(key) == item.get(key)) {
                Some(slot) => *slot = item.clone(),
                None => list.push(item.clone()),
            }
        }
    }
}

/// The `node` container of a pod template, to change in place.
pub fn node_container_mut(pod: &mut Value) -> Option<&mut Map<String, Value>> {
    pod.pointer_mut("/spec/containers")?
        .as_array_mut()?
        .iter_mut()
        .find(|c| c["name"] == NODE)?
        .as_object_mut()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::version::Version;

    fn runtime() -> Value {
        json!({"metadata": {"annotations": {"a": "1"}}, "spec": {
            "containers": [{"name": "node",
                "env": [{"name": "NCCL_IB_HCA", "value": "=mlx5_1"}],
                "resources": {"limits": {"nvidia.com/gpu": "8", "rdma/hca": "1"},
                              "requests": {"nvidia.com/gpu": "8", "rdma/hca": "1"}},
                "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}})
    }

    fn target(minor: u32) -> Release {
        Release::new(Version::new(2, minor))
    }

    fn patch(pod_patch: Value) -> Value {
        json!({"runtimePatches": [{"manager": "rdmagen.io/cli",
            "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [
                {"name": "node", "template": {"spec": {"template": pod_patch}}}]}}}}]})
    }

    #[test]
    fn resources_per_node_replace_before_2_3_and_merge_from_it() {
        let spec = json!({"trainer": {"resourcesPerNode": {"limits": {"nvidia.com/gpu": "4"}}}});
        for minor in [1, 2] {
            let old = effective_pod(NODE, &runtime(), &spec, target(minor));
            assert_eq!(
                old["spec"]["containers"][0]["resources"],
                json!({"limits": {"nvidia.com/gpu": "4"}}),
                "v2.{minor} drops the runtime's RDMA resource"
            );
        }
        let new = effective_pod(NODE, &runtime(), &spec, target(3));
        assert_eq!(
            new["spec"]["containers"][0]["resources"],
            json!({"limits": {"nvidia.com/gpu": "4", "rdma/hca": "1"},
                   "requests": {"nvidia.com/gpu": "8", "rdma/hca": "1"}})
        );
        // An empty block is a non-nil pointer in Go: it replaces too; null is no block.
        let empty = json!({"trainer": {"resourcesPerNode": {}}});
        let pod = effective_pod(NODE, &runtime(), &empty, target(2));
        assert_eq!(pod["spec"]["containers"][0]["resources"], json!({}));
        let null = json!({"trainer": {"resourcesPerNode": null}});
        assert_eq!(effective_pod(NODE, &runtime(), &null, target(2)), runtime());
    }

    #[test]
    fn env_is_upserted_by_name_and_image_and_command_replaced() {
        let spec = json!({"trainer": {"image": "img:1", "command": ["torchrun", "t.py"],
            "args": null,
            "env": [{"name": "NCCL_IB_HCA", "value": "=mlx5_2"}, {"name": "X", "value": "y"}]}});
        let pod = effective_pod(NODE, &runtime(), &spec, target(3));
        let c = &pod["spec"]["containers"][0];
        assert_eq!(c["image"], "img:1");
        assert_eq!(c["command"], json!(["torchrun", "t.py"]));
        assert!(c.get("args").is_none(), "a null field is not written");
        assert_eq!(
            c["env"],
            json!([{"name": "NCCL_IB_HCA", "value": "=mlx5_2"}, {"name": "X", "value": "y"}])
        );
    }

    #[test]
    fn patch_lists_merge_by_their_key_and_other_lists_are_replaced() {
        let pod = effective_pod(
            NODE,
            &runtime(),
            &patch(json!({"spec": {
                "containers": [{"name": "node",
                    "env": [{"name": "NCCL_IB_HCA", "value": "=mlx5_3"}],
                    "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                    "securityContext": {"capabilities": {"add": ["SYS_PTRACE"]}}}],
                "volumes": [{"name": "data", "emptyDir": {}}]}})),
            target(3),
        );
        let c = &pod["spec"]["containers"][0];
        assert_eq!(
            c["env"],
            json!([{"name": "NCCL_IB_HCA", "value": "=mlx5_3"}])
        );
        // The mount the patch adds first: the API server's merge order.
        assert_eq!(
            c["volumeMounts"],
            json!([{"name": "data", "mountPath": "/data"}, {"name": "dshm", "mountPath": "/dev/shm"}])
        );
        // capabilities.add has no merge strategy: the patch's list is the list.
        assert_eq!(
            c["securityContext"]["capabilities"]["add"],
            json!(["SYS_PTRACE"])
        );
        assert_eq!(
            c["resources"],
            runtime()["spec"]["containers"][0]["resources"]
        );
        let volumes: Vec<&Value> = items(&pod["spec"]["volumes"])
            .map(|(_, v)| &v["name"])
            .collect();
        assert_eq!(volumes, [&json!("data"), &json!("dshm")]);
    }

    #[test]
    fn patches_follow_the_release_and_the_job_they_name() {
        let pod_patch = json!({"metadata": {"labels": {"l": "v"}},
            "spec": {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "c"}}]}});
        let patches = patch(pod_patch.clone());
        let overrides = json!({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
            "metadata": pod_patch["metadata"].clone(), "spec": pod_patch["spec"].clone()}]});
        for (spec, minor) in [(&patches, 3), (&patches, 2), (&overrides, 1)] {
            let pod = effective_pod(NODE, &runtime(), spec, target(minor));
            assert_eq!(pod["metadata"]["labels"]["l"], "v", "2.{minor}");
            assert_eq!(pod["metadata"]["annotations"]["a"], "1", "2.{minor}");
            let names: Vec<&Value> = items(&pod["spec"]["volumes"])
                .map(|(_, v)| &v["name"])
                .collect();
            assert_eq!(names, [&json!("data"), &json!("dshm")], "2.{minor}");
        }
        // Each release ignores the other's field, and a patch for another job is not
        // this one's.
        assert_eq!(
            effective_pod(NODE, &runtime(), &patches, target(1)),
            runtime()
        );
        assert_eq!(
            effective_pod(NODE, &runtime(), &overrides, target(3)),
            runtime()
        );
        assert_eq!(
            effective_pod("launcher", &runtime(), &patches, target(3)),
            runtime()
        );
        let mut at: Vec<(PatchField, String)> = Vec::new();
        for spec in [&patches, &overrides] {
            at.extend(pod_patches(spec).into_iter().map(|p| (p.field, p.at)));
        }
        assert_eq!(
            at,
            [
                (
                    PatchField::RuntimePatches,
                    "/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/template".to_owned()
                ),
                (PatchField::PodTemplateOverrides, "/podTemplateOverrides/0".to_owned()),
            ]
        );
    }

    #[test]
    fn a_train_jobs_tolerations_replace_the_runtimes_on_every_release() {
        let mut base = runtime();
        base["spec"]["tolerations"] = json!([{"key": "pool-taint", "operator": "Exists"}]);
        let tolerations = json!([{"key": "pool-taint", "operator": "Exists"},
                                 {"key": "job-taint", "operator": "Exists"}]);
        let patches =
            patch(json!({"spec": {"tolerations": [{"key": "job-taint", "operator": "Exists"}]}}));
        let overrides = json!({"podTemplateOverrides": [{"targetJobs": [{"name": "node"}],
            "spec": {"tolerations": tolerations.clone()}}]});
        // Only the job's: the runtime's is gone, as StrategicMergePatch leaves it.
        let pod = effective_pod(NODE, &base, &patches, target(3));
        assert_eq!(
            pod["spec"]["tolerations"],
            json!([{"key": "job-taint", "operator": "Exists"}])
        );
        // The whole list, as plan::trainer writes it: the pod gets all of it.
        let pod = effective_pod(NODE, &base, &overrides, target(1));
        assert_eq!(pod["spec"]["tolerations"], tolerations);
    }

    #[test]
    fn the_trainer_job_is_the_one_labelled_so() {
        let runtime = json!({"spec": {"template": {"spec": {"replicatedJobs": [
            {"name": "launcher"},
            {"name": "node", "template": {"metadata": {"labels": {ANCESTOR_LABEL: "trainer"}}}}]}}}});
        assert_eq!(
            trainer_job(&runtime).map(|(i, j)| (i, &j["name"])),
            Some((1, &json!("node")))
        );
        assert_eq!(trainer_job(&json!({"spec": "x"})), None);
    }
}
