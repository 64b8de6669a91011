//! RDMA on or off, and which device-plugin resource to request.

use crate::diagnostics::Rule;
use crate::model::pool::{Attachment, Fabric};
use crate::model::rdma_request::{RdmaRequest, RdmaRequestError};
use crate::multus::Selection;
use crate::plan::attachment;
use crate::plan::ctx::Ctx;
use crate::platform::AutoRdma;
use crate::yaml::tree::Seg;

#[derive(Debug, Clone)]
pub struct Rdma {
    pub on: bool,
    /// Extended resources and their counts, when RDMA is on: the one RDMA resource, or
    /// the pool's rails of this pod.
    pub resources: Vec<(String, u32)>,
    /// The Multus networks that attach the rails, in rail order (none without rails).
    pub networks: Vec<Selection>,
}

const AT: [Seg<'static>; 2] = [Seg::Key("spec"), Seg::Key("rdma")];

pub fn decide(ctx: &mut Ctx<'_>) -> Rdma {
    let spec = &ctx.job.value.spec;
    let fabric = ctx.fabric();
    let pool_name = ctx.pool.value.metadata.name.clone();
    let (gpus, per_node) = (spec.gpus_per_node, ctx.pool.value.spec.gpu.per_node);
    let off = Rdma {
        on: false,
        resources: Vec::new(),
        networks: Vec::new(),
    };
    let request = match RdmaRequest::parse(&spec.rdma) {
        Ok(r) => r,
        Err(e) => {
            let (rule, message) = match e {
                RdmaRequestError::UnknownType(t) => (
                    Rule::RdmaUnknownType,
                    format!(
                        "`{}` names RDMA type `{t}`; CubeStudio knows `roce` and `ib` (and would silently request nothing)",
                        spec.rdma
                    ),
                ),
                RdmaRequestError::Malformed => (
                    Rule::RdmaRequestSyntax,
                    format!(
                        "`{}` is not auto, on, off, a count such as `1`, or `N(type)` such as `1(roce)`",
                        spec.rdma
                    ),
                ),
            };
            ctx.report(rule, message, &AT);
            return off;
        }
    };

    let profile = ctx.profile;
    let nodes = spec.nodes;
    let (on, count, reason) = match request {
        RdmaRequest::Off => (false, 0, format!("the job sets rdma: {}", spec.rdma.trim())),
        RdmaRequest::Auto if !fabric.is_rdma() => (
            false,
            0,
            format!("rdma: auto and pool `{pool_name}` has no RDMA fabric (tcp)"),
        ),
        RdmaRequest::Auto if nodes == 1 => (
            false,
            0,
            "rdma: auto and the job is one node: NCCL keeps its traffic inside the node, and RDMA training needs at least 2 nodes (seed 001); `rdma: on` forces it".to_owned(),
        ),
        RdmaRequest::Auto if gpus < profile.auto_rdma.on_from(per_node) => {
            let from = profile.auto_rdma.on_from(per_node);
            ctx.report(
                Rule::PlatformSocketsPartialNode,
                format!(
                    "the job spans {nodes} nodes on {gpus} of {per_node} GPUs each, and {} turns RDMA off below {from} GPUs: NCCL goes over sockets (TCP) between the nodes; `rdma: on` forces RDMA, which the platform warns can cause communication problems over RoCE",
                    profile.title
                ),
                &[Seg::Key("spec"), Seg::Key("gpusPerNode")],
            );
            (
                false,
                0,
                format!(
                    "rdma: auto and the job takes {gpus} of {per_node} GPUs per node; {} turns RDMA on from {from} GPUs per pod, off below (seed 000: on at 8, off below 8; a whole node where a node has fewer)",
                    profile.title
                ),
            )
        }
        RdmaRequest::Auto => (
            true,
            1,
            format!(
                "rdma: auto, pool `{pool_name}` has a {} fabric and the job spans {nodes} nodes{}",
                fabric.name(),
                match profile.auto_rdma {
                    AutoRdma::WholeNodes => format!(
                        " on {gpus} of {per_node} GPUs each ({} turns RDMA on from {} GPUs per pod: seed 000, on at 8, off below 8)",
                        profile.title,
                        profile.auto_rdma.on_from(per_node)
                    ),
                    AutoRdma::MultiNode => format!(
                        " ({} platform: on for every multi-node job on an RDMA fabric)",
                        profile.name
                    ),
                }
            ),
        ),
        RdmaRequest::On | RdmaRequest::Count(_) | RdmaRequest::Typed { .. }
            if !fabric.is_rdma() =>
        {
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
        RdmaRequest::Count(count) => (
            true,
            count,
            format!("the job asks for `{}`: {count} RDMA device(s)", spec.rdma.trim()),
        ),
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

    if on
        && fabric == Fabric::Roce
        && profile.auto_rdma == AutoRdma::WholeNodes
        && gpus < profile.auto_rdma.on_from(per_node)
    {
        ctx.report(
            Rule::RocePartialNode,
            format!(
                "RDMA is forced on over RoCE for {gpus} of {per_node} GPUs per node; {} turns it off below {} GPUs and warns this can cause communication problems",
                profile.title,
                profile.auto_rdma.on_from(per_node)
            ),
            &AT,
        );
    }
    ctx.decisions
        .record("rdma", if on { "on" } else { "off" }, reason);
    if !on {
        return off;
    }
    if !ctx.pool.value.spec.network.rails.is_empty() {
        if let RdmaRequest::Count(_) | RdmaRequest::Typed { .. } = request {
            ctx.report(
                Rule::AttachmentShape,
                format!(
                    "`{}` asks for a number of RDMA devices, but pool `{pool_name}` lists its rails: a pod gets the rails of its GPUs; write `rdma: on` or `auto`",
                    spec.rdma.trim()
                ),
                &AT,
            );
        }
        let rails = attachment::for_job(ctx);
        return Rdma {
            on: true,
            resources: rails.resources,
            networks: rails.networks,
        };
    }
    let attachment = ctx.pool.value.spec.network.attachment;
    // The platform's name for the shared device plugin's resource (AKS: rdma/shared_ib)
    // before the Network Operator's example name.
    let platform_shared = match (attachment, profile.shared_resource) {
        (Some(Attachment::Shared | Attachment::Ipoib), Some(shared)) => Some(shared),
        _ => None,
    };
    let mode_default = attachment.and_then(|a| a.default_resource().map(|name| (a, name)));

    let resource = match (
        &ctx.pool.value.spec.network.rdma_resource,
        platform_shared,
        mode_default,
    ) {
        (Some(name), ..) => {
            ctx.decisions.record(
                "rdma resource",
                format!("{name}: {count}"),
                format!("named by pool `{pool_name}`"),
            );
            name.clone()
        }
        (None, Some((name, why)), _) => {
            ctx.decisions.record(
                "rdma resource",
                format!("{name}: {count}"),
                format!("{why}; the pool names no rdmaResource"),
            );
            name.to_owned()
        }
        (None, None, Some((mode, name))) => {
            ctx.decisions.record(
                "rdma resource",
                format!("{name}: {count}"),
                format!(
                    "the Network Operator's resource for attachment: {} (the pool names no rdmaResource; example NicClusterPolicy and pods, network-operator@v26.4.1 example/)",
                    mode.name()
                ),
            );
            name.to_owned()
        }
        (None, None, None) => {
            let typed = matches!(request, RdmaRequest::Typed { .. });
            let name = if typed {
                (profile.typed_rdma_resource)(fabric)
            } else {
                (profile.rdma_resource)(fabric)
            };
            ctx.decisions.record(
                "rdma resource",
                format!("{name}: {count}"),
                format!(
                    "the {} platform's resource for {} {} (the pool names no rdmaResource)",
                    profile.name,
                    if typed {
                        "a typed request on"
                    } else {
                        "an untyped request on"
                    },
                    fabric.name()
                ),
            );
            name.to_owned()
        }
    };
    if count > 1
        && let Some(mode @ (Attachment::Shared | Attachment::Ipoib)) = attachment
    {
        ctx.report(
            Rule::SharedSlotCount,
            format!(
                "`{}` asks for {count} of `{resource}`, the shared device plugin's resource on pool `{pool_name}` (attachment: {}): one is a pod slot that already gives the pod every HCA, and the others only take slots from other pods; write `rdma: on`",
                spec.rdma.trim(),
                mode.name()
            ),
            &AT,
        );
    }
    Rdma {
        on: true,
        resources: vec![(resource, count)],
        networks: Vec::new(),
    }
}
