//! `podTemplate` overlays: a partial PodTemplateSpec merged last over the pod
//! rdmagen built, with Kubernetes' strategic-merge semantics.
//!
//! Each overlay is judged before it is merged. It may add to the pod; what rdmagen
//! decided from the job and the pool (the GPU and RDMA resources, IPC_LOCK, the
//! environment, the image, the launcher, /dev/shm, hostNetwork, dnsPolicy,
//! schedulerName, the Volcano queue) it may not change or remove (RDG055). What it adds
//! to those decisions is merged with an info (RDG056). An overlay with an error is
//! not merged. Decisions are judged against the pod as rdmagen built it, before any
//! overlay: what the pool's overlay added is the job's to override.
//!
//! The input schema (strict Kubernetes definitions) refuses null values and `$` keys in
//! an overlay (RDG004), so from a file an overlay can only set and add. The merge
//! implements null and `$patch: delete` all the same, and the judge treats them as the
//! removals they are; any other directive is refused here too rather than ignored or
//! copied into the pod as a field.
//!
//! Two deviations from `kubectl patch --type strategic`, for lists Kubernetes merges
//! whole (no patch merge key) where the pod already holds what the job and the pool
//! asked for. An overlay's items are added to the pod's (a union: the pod's first, then
//! the overlay's new ones, an identical item kept once):
//!
//! - the training container's `securityContext.capabilities.add`: replaced, it would
//!   lose IPC_LOCK;
//! - the pod's `tolerations` and the training container's `envFrom`: replaced, they
//!   would lose the job's and the pool's (`tolerations` and `envFrom` of a job and its
//!   pool's `jobDefaults` add up, so an overlay adds up too). Pods that lose a
//!   toleration stay Pending, or land on nodes the job did not choose.
//!
//! Any other list the merge replaces whole (affinity terms, a sidecar's command, a
//! securityContext's `capabilities.drop`, ...) is replaced as Kubernetes does, because
//! there adding items changes what the list means (node selector terms are ORed, a
//! command is a sequence); where that drops items the pod had, a warning names them
//! (RDG164).
//!
//! And a third, in order (`ListOrder::AddedLast`): in a list merged by name the
//! overlay's new items follow the pod's, where the API server would put them first,
//! so a sidecar never takes the training container's place as the first container
//! (`kubectl logs` and `exec` pick it).

mod judge;

use serde_json::Value;

use crate::diagnostics::{Rule, Severity};
use crate::kubernetes::definitions::POD_TEMPLATE_SPEC;
use crate::kubernetes::merge::{PATCH_DIRECTIVE, Step, unsupported_directives};
use crate::kubernetes::{ListOrder, strategic_merge};
use crate::plan::ctx::Ctx;
use crate::plan::defaults::{Origin, Sourced};
use crate::plan::pod_parts::{same_capability, training};
use crate::yaml::tree::Seg;

pub(super) use judge::Owned;
use judge::{Verdict, judge};

/// Judge `overlay` and merge it into `template` when nothing it does is an error.
pub(super) fn apply(
    ctx: &mut Ctx<'_>,
    template: &mut Value,
    overlay: &Sourced<Value>,
    owned: &Owned,
) {
    let whose = match overlay.origin {
        Origin::Job => "the job's".to_owned(),
        Origin::Pool => format!("pool `{}`'s", ctx.pool.value.metadata.name),
    };
    let mut verdicts: Vec<Verdict> = unsupported_directives(&overlay.value, POD_TEMPLATE_SPEC)
        .into_iter()
        .map(|(at, directive)| Verdict {
            rule: Rule::InputShape,
            at,
            message: format!(
                "{whose} podTemplate uses `{directive}`, a strategic-merge directive rdmagen does not implement: an overlay sets and adds fields, and only `{PATCH_DIRECTIVE}: delete` on an item of a list merged by name removes one"
            ),
        })
        .collect();
    verdicts.extend(judge(owned, &overlay.value, &whose));
    let refused = verdicts
        .iter()
        .any(|v| v.rule.info().severity == Severity::Error);
    for v in &verdicts {
        let mut path = overlay.origin.path("podTemplate");
        path.extend(v.at.iter().map(|step| match step {
            Step::Key(key) => Seg::Key(key),
            Step::Index(i) => Seg::Index(*i),
        }));
        ctx.report_from(overlay.origin, v.rule, v.message.clone(), &path);
    }
    if refused {
        ctx.decisions.record(
            "podTemplate",
            format!("{whose} overlay"),
            "not merged: see its errors",
        );
        return;
    }
    ctx.decisions.record(
        "podTemplate",
        format!("{whose} overlay"),
        "merged last, strategic merge (containers, env, volumes and mounts by name); tolerations and the training container's envFrom and capabilities.add are added to, not replaced",
    );
    let patch = with_unions(&overlay.value, template, ctx.target.training_container());
    strategic_merge(template, &patch, POD_TEMPLATE_SPEC, ListOrder::AddedLast);
}

/// `overlay` with the lists rdmagen adds to rather than replaces (see the module
/// comment) made the union of `pod`'s list and its own; `name` is the training
/// container's.
fn with_unions(overlay: &Value, pod: &Value, name: &str) -> Value {
    let mut patch = overlay.clone();
    add_to(
        &mut patch,
        "/spec/tolerations",
        pod.pointer("/spec/tolerations"),
        Value::eq,
    );
    let Some(Value::Array(containers)) = patch.pointer_mut("/spec/containers") else {
        return patch;
    };
    let have = training(pod, name);
    for c in containers
        .iter_mut()
        .filter(|c| c.get("name").and_then(Value::as_str) == Some(name))
    {
        add_to(
            c,
            "/envFrom",
            have.and_then(|h| h.get("envFrom")),
            Value::eq,
        );
        add_to(
            c,
            "/securityContext/capabilities/add",
            have.and_then(|h| h.pointer("/securityContext/capabilities/add")),
            same_capability,
        );
    }
    patch
}

/// Replace the list at `pointer` in `patch`, if it has one, with `have` followed by its
/// items that `have` lacks (`same` says which are the same item).
fn add_to(
    patch: &mut Value,
    pointer: &str,
    have: Option<&Value>,
    same: impl Fn(&Value, &Value) -> bool,
) {
    let Some(Value::Array(have)) = have else {
        return;
    };
    let Some(Value::Array(theirs)) = patch.pointer_mut(pointer) else {
        return;
    };
    let mut union = have.clone();
    for item in theirs.iter() {
        if !union.iter().any(|h| same(h, item)) {
            union.push(item.clone());
        }
    }
    *theirs = union;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn capabilities_add_of_the_training_container_is_a_union() {
        let pod = json!({"spec": {"containers": [
            {"name": "pytorch", "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}}},
            {"name": "side", "securityContext": {"capabilities": {"add": ["CHOWN"]}}}]}});
        let overlay = json!({"spec": {"containers": [
            {"name": "pytorch",
             "securityContext": {"capabilities": {"add": ["SYS_PTRACE", "ipc_lock"]}}},
            {"name": "side", "securityContext": {"capabilities": {"add": ["NET_RAW"]}}}]}});

        let mut merged = pod.clone();
        strategic_merge(
            &mut merged,
            &with_unions(&overlay, &pod, "pytorch"),
            POD_TEMPLATE_SPEC,
            ListOrder::AddedLast,
        );
        let caps = |pod: &Value, i: usize| {
            pod["spec"]["containers"][i]["securityContext"]["capabilities"]["add"].clone()
        };
        assert_eq!(caps(&merged, 0), json!(["IPC_LOCK", "SYS_PTRACE"]));
        // Other containers keep Kubernetes' semantics: the atomic list is replaced.
        assert_eq!(caps(&merged, 1), json!(["NET_RAW"]));
        let mut plain = pod;
        strategic_merge(
            &mut plain,
            &overlay,
            POD_TEMPLATE_SPEC,
            ListOrder::AddedLast,
        );
        assert_eq!(caps(&plain, 0), json!(["SYS_PTRACE", "ipc_lock"]));
    }

    #[test]
    fn tolerations_and_training_env_from_are_a_union_in_order() {
        let pod = json!({"spec": {
            "tolerations": [{"key": "job-taint", "operator": "Exists"},
                            {"key": "pool-taint", "operator": "Exists"}],
            "containers": [
                {"name": "pytorch", "envFrom": [{"configMapRef": {"name": "a"}}]},
                {"name": "side", "envFrom": [{"configMapRef": {"name": "a"}}]}]}});
        let overlay = json!({"spec": {
            "tolerations": [{"operator": "Exists", "key": "pool-taint"},
                            {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
                            {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
            "containers": [
                {"name": "pytorch", "envFrom": [{"secretRef": {"name": "s"}},
                                                {"configMapRef": {"name": "a"}}]},
                {"name": "side", "envFrom": [{"secretRef": {"name": "s"}}]}]}});
        let mut merged = pod.clone();
        strategic_merge(
            &mut merged,
            &with_unions(&overlay, &pod, "pytorch"),
            POD_TEMPLATE_SPEC,
            ListOrder::AddedLast,
        );
        // The pod's first, then the overlay's new ones; an identical item (whatever the
        // order of its keys) once.
        assert_eq!(
            merged["spec"]["tolerations"],
            json!([{"key": "job-taint", "operator": "Exists"},
                   {"key": "pool-taint", "operator": "Exists"},
                   {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}])
        );
        assert_eq!(
            merged["spec"]["containers"][0]["envFrom"],
            json!([{"configMapRef": {"name": "a"}}, {"secretRef": {"name": "s"}}])
        );
        // Another container's envFrom was not built from the job: Kubernetes' semantics.
        assert_eq!(
            merged["spec"]["containers"][1]["envFrom"],
            json!([{"secretRef": {"name": "s"}}])
        );
    }

    #[test]
    fn a_pod_without_tolerations_takes_the_overlays_as_given() {
        let pod = json!({"spec": {"containers": [{"name": "pytorch"}]}});
        let overlay = json!({"spec": {"tolerations": [{"key": "t", "operator": "Exists"}]}});
        assert_eq!(with_unions(&overlay, &pod, "pytorch"), overlay);
    }
}
