//! The container's environment: NCCL variables from the pool (minus what the platform
//! presets), then the job's own `env`, checked against the rules.

use std::collections::BTreeMap;

use crate::check::Rule;
use crate::plan::EnvVar;
use crate::plan::rdma::Rdma;
use crate::plan::resolve::Ctx;
use crate::spec::pool::{Fabric, GidIndex};
use crate::spec::tree::Seg;

/// Variables the training operator appends to every container (envvar.go).
const OPERATOR_MANAGED: &[&str] = &["MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"];

fn operator_managed(name: &str) -> bool {
    OPERATOR_MANAGED.contains(&name) || name.starts_with("PET_")
}

pub fn decide(ctx: &mut Ctx<'_>, rdma: &Rdma, hcas: Option<&str>) -> Vec<EnvVar> {
    let net = ctx.pool.value.spec.network.clone();
    let fabric = net.fabric;
    let mut from_pool: Vec<(&'static str, Option<String>, &'static str)> = vec![(
        "NCCL_IB_DISABLE",
        Some(if rdma.on { "0" } else { "1" }.to_owned()),
        if rdma.on {
            "RDMA is on: use the IB/RoCE verbs transport"
        } else {
            "RDMA is off: NCCL uses sockets, stated explicitly"
        },
    )];
    from_pool.push((
        "NCCL_SOCKET_IFNAME",
        net.socket_ifname.clone(),
        "the pool's bootstrap interface",
    ));
    if rdma.on {
        from_pool.push((
            "NCCL_IB_HCA",
            hcas.map(str::to_owned),
            "the data NICs chosen for this job",
        ));
        let gid = match (fabric, net.gid_index) {
            (Fabric::Roce, Some(GidIndex::Index(i))) => Some(i.to_string()),
            _ => None,
        };
        from_pool.push(("NCCL_IB_GID_INDEX", gid, "the pool's RoCE GID index"));
        let number = |v: Option<u32>| v.map(|n| n.to_string());
        from_pool.push((
            "NCCL_IB_TIMEOUT",
            number(net.ib_timeout),
            "the pool's ibTimeout",
        ));
        from_pool.push((
            "NCCL_IB_QPS_PER_CONNECTION",
            number(net.qps_per_connection),
            "the pool's qpsPerConnection",
        ));
        from_pool.push((
            "NCCL_CROSS_NIC",
            number(net.cross_nic),
            "the pool's crossNic",
        ));
    }
    if rdma.on && fabric == Fabric::Roce && net.gid_index == Some(GidIndex::Auto) {
        ctx.decisions.record(
            "env NCCL_IB_GID_INDEX",
            "(unset)",
            "gidIndex: auto leaves the GID to NCCL's dynamic selection (RoCE v2, IPv4)",
        );
    }

    let mut env: BTreeMap<String, String> = BTreeMap::new();
    for (name, value, why) in from_pool {
        let Some(value) = value else { continue };
        if ctx.profile.presets(fabric, rdma.on, name) {
            ctx.decisions.record(
                format!("env {name}"),
                "(left to the platform)",
                format!("the {} platform presets it", ctx.profile.name),
            );
            continue;
        }
        ctx.decisions.record(format!("env {name}"), &value, why);
        env.insert(name.to_owned(), value);
    }

    let job_env = ctx.job.value.spec.env.clone();
    for (name, value) in job_env {
        let at = [Seg::Key("spec"), Seg::Key("env"), Seg::Key(&name)];
        if name.is_empty() || name.contains('=') {
            ctx.report(
                Rule::InvalidValue,
                format!("`{name}` is not a valid variable name"),
                &at,
            );
            continue;
        }
        if name == "NCCL_IB_TC" {
            ctx.report(
                Rule::IbTcSet,
                "NCCL_IB_TC must match the switches' QoS setup; AIStudio: no need to set it, do not change it",
                &at,
            );
            continue;
        }
        if operator_managed(&name) {
            ctx.report(
                Rule::OperatorManagedEnv,
                format!("{name} is set by the training operator for every pod; remove it"),
                &at,
            );
            continue;
        }
        if name == "NCCL_IB_DISABLE" && value.trim() == "1" && rdma.on {
            ctx.report(
                Rule::IbDisableWithRdma,
                "NCCL_IB_DISABLE=1 turns RDMA off inside NCCL while the pod holds an RDMA device; use rdma: off instead",
                &at,
            );
            continue;
        }
        if ctx.profile.presets(fabric, rdma.on, &name) {
            let platform = ctx.profile.name;
            ctx.report(
                Rule::OverridesPlatformPreset,
                format!("{name} is preset by the {platform} platform; the job's value `{value}` replaces it"),
                &at,
            );
        } else if let Some(derived) = env.get(&name).filter(|d| **d != value) {
            ctx.report(
                Rule::OverridesPoolValue,
                format!("{name} would be `{derived}` from the pool; the job's `{value}` is used"),
                &at,
            );
        }
        ctx.decisions
            .record(format!("env {name}"), &value, "set by the job");
        env.insert(name, value);
    }
    env.into_iter()
        .map(|(name, value)| EnvVar { name, value })
        .collect()
}
