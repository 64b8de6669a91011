//! RDMA on or off, and which device-plugin resource to request.

use crate::check::Rule;
use crate::plan::resolve::Ctx;
use crate::spec::pool::Fabric;
use crate::spec::rdma_request::{RdmaRequest, RdmaRequestError};
use crate::spec::tree::Seg;

pub struct Rdma {
    pub on: bool,
    /// Extended resource name and count, when RDMA is on.
    pub resource: Option<(String, u32)>,
}

const AT: [Seg<'static>; 2] = [Seg::Key("spec"), Seg::Key("rdma")];

pub fn decide(ctx: &mut Ctx<'_>) -> Rdma {
    let spec = &ctx.job.value.spec;
    let fabric = ctx.fabric();
    let pool_name = ctx.pool.value.metadata.name.clone();
    let (gpus, per_node) = (spec.gpus_per_node, ctx.pool.value.spec.gpu.per_node);
    let off = Rdma {
        on: false,
        resource: None,
    };
    let request = match RdmaRequest::parse(&spec.rdma) {
        Ok(r) => r,
        Err(e) => {
            let message = match e {
                RdmaRequestError::UnknownType(t) => format!(
                    "`{}` names RDMA type `{t}`; CubeStudio knows `roce` and `ib` (and would silently request nothing)",
                    spec.rdma
                ),
                RdmaRequestError::Malformed => format!(
                    "`{}` is not auto, on, off or `N(type)` such as `1(roce)`",
                    spec.rdma
                ),
            };
            ctx.report(Rule::RdmaUnknownType, message, &AT);
            return off;
        }
    };

    let (on, count, reason) = match request {
        RdmaRequest::Off => (false, 0, "the job sets rdma: off".to_owned()),
        RdmaRequest::Auto if !fabric.is_rdma() => (
            false,
            0,
            format!("rdma: auto and pool `{pool_name}` has no RDMA fabric (tcp)"),
        ),
        RdmaRequest::Auto if gpus < per_node => (
            false,
            0,
            format!(
                "rdma: auto and the job takes {gpus} of {per_node} GPUs per node; RDMA is on only for whole nodes (AIStudio: on at 8 GPUs, off below)"
            ),
        ),
        RdmaRequest::Auto => (
            true,
            1,
            format!(
                "rdma: auto, pool `{pool_name}` has a {} fabric and the job takes whole nodes ({gpus} of {per_node} GPUs)",
                fabric.name()
            ),
        ),
        RdmaRequest::On | RdmaRequest::Typed { .. } if !fabric.is_rdma() => {
            ctx.report(
                Rule::RdmaOnTcpPool,
                format!(
                    "rdma is `{}` but pool `{pool_name}` has fabric tcp",
                    spec.rdma
                ),
                &AT,
            );
            return off;
        }
        RdmaRequest::Typed { fabric: asked, .. } if asked != fabric => {
            ctx.report(
                Rule::RdmaTypeMismatch,
                format!(
                    "`{}` asks for {} but pool `{pool_name}` is {}",
                    spec.rdma,
                    asked.name(),
                    fabric.name()
                ),
                &AT,
            );
            return off;
        }
        RdmaRequest::On => (true, 1, "the job sets rdma: on".to_owned()),
        RdmaRequest::Typed { count, .. } => (
            true,
            count,
            format!(
                "the job asks for `{}`: {count} {} device(s)",
                spec.rdma,
                fabric.name()
            ),
        ),
    };

    if on && fabric == Fabric::Roce && gpus < per_node {
        ctx.report(
            Rule::RocePartialNode,
            format!(
                "RDMA is forced on over RoCE for {gpus} of {per_node} GPUs per node; AIStudio warns this can cause communication problems"
            ),
            &AT,
        );
    }
    ctx.decisions
        .record("rdma", if on { "on" } else { "off" }, reason);
    if !on {
        return off;
    }

    let resource = match &ctx.pool.value.spec.network.rdma_resource {
        Some(name) => {
            ctx.decisions.record(
                "rdma resource",
                format!("{name}: {count}"),
                format!("named by pool `{pool_name}`"),
            );
            name.clone()
        }
        None => {
            let name = (ctx.profile.rdma_resource)(fabric);
            ctx.decisions.record(
                "rdma resource",
                format!("{name}: {count}"),
                format!(
                    "{} platform default for {} (the pool names no rdmaResource)",
                    ctx.profile.name,
                    fabric.name()
                ),
            );
            name.to_owned()
        }
    };
    Rdma {
        on: true,
        resource: Some((resource, count)),
    }
}
