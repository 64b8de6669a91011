//! `podTemplate` overlays: a partial PodTemplateSpec merged last over the pod
//! rdmagen built, with Kubernetes' strategic-merge semantics.

use serde_json::Value;

use crate::kubernetes::definitions::POD_TEMPLATE_SPEC;
use crate::kubernetes::strategic_merge;
use crate::plan::defaults::{Origin, Sourced};
use crate::plan::resolve::Ctx;

/// Merge one overlay into `template`.
pub fn apply(ctx: &mut Ctx<'_>, template: &mut Value, overlay: &Sourced<Value>) {
    let whose = match overlay.origin {
        Origin::Job => "the job's".to_owned(),
        Origin::Pool => format!("pool `{}`'s", ctx.pool.value.metadata.name),
    };
    ctx.decisions.record(
        "podTemplate",
        format!("{whose} overlay"),
        "merged last, strategic merge (containers, env, volumes and mounts by name)",
    );
    strategic_merge(template, &overlay.value, POD_TEMPLATE_SPEC);
}
