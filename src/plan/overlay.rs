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
//! One deviation from `kubectl patch --type strategic`: the training container's
//! `securityContext.capabilities.add` is an atomic list there, so an overlay that adds
//! one capability would replace the list and lose IPC_LOCK. Here the overlay's
//! capabilities are added to the list the pod already has (a union).

mod judge;

use serde_json::Value;

use crate::diagnostics::{Rule, Severity};
use crate::kubernetes::definitions::POD_TEMPLATE_SPEC;
use crate::kubernetes::merge::{PATCH_DIRECTIVE, Step, unsupported_directives};
use crate::kubernetes::strategic_merge;
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
        "merged last, strategic merge (containers, env, volumes and mounts by name); the training container's capabilities.add is added to, not replaced",
    );
    let patch = with_capabilities_union(&overlay.value, template, ctx.target.training_container());
    strategic_merge(template, &patch, POD_TEMPLATE_SPEC);
}

/// `overlay` with the training container's `capabilities.add` made the union of the
/// pod's list and its own (see the module comment).
fn with_capabilities_union(overlay: &Value, pod: &Value, name: &str) -> Value {
    let mut patch = overlay.clone();
    let have = training(pod, name)
        .and_then(|c| c.pointer("/securityContext/capabilities/add"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if have.is_empty() {
        return patch;
    }
    let Some(Value::Array(containers)) = patch.pointer_mut("/spec/containers") else {
        return patch;
    };
    for c in containers.iter_mut() {
        if c.get("name").and_then(Value::as_str) != Some(name) {
            continue;
        }
        if let Some(Value::Array(add)) = c.pointer_mut("/securityContext/capabilities/add") {
            let mut union = have.clone();
            for cap in add.iter() {
                if !union.iter().any(|h| same_capability(h, cap)) {
                    union.push(cap.clone());
                }
            }
            *add = union;
        }
    }
    patch
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
            &with_capabilities_union(&overlay, &pod, "pytorch"),
            POD_TEMPLATE_SPEC,
        );
        let caps = |pod: &Value, i: usize| {
            pod["spec"]["containers"][i]["securityContext"]["capabilities"]["add"].clone()
        };
        assert_eq!(caps(&merged, 0), json!(["IPC_LOCK", "SYS_PTRACE"]));
        // Other containers keep Kubernetes' semantics: the atomic list is replaced.
        assert_eq!(caps(&merged, 1), json!(["NET_RAW"]));
        let mut plain = pod;
        strategic_merge(&mut plain, &overlay, POD_TEMPLATE_SPEC);
        assert_eq!(caps(&plain, 0), json!(["SYS_PTRACE", "ipc_lock"]));
    }
}
