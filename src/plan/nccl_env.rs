//! The container's environment: NCCL variables from the pool (minus what the platform
//! presets), then the job's own `env`, checked against the rules.

use std::collections::BTreeMap;

use crate::check::nccl_vars::{self, EnvFacts};
use crate::check::{Rule, Severity};
use crate::plan::EnvVar;
use crate::plan::rdma::Rdma;
use crate::plan::resolve::Ctx;
use crate::spec::pool::{DEFAULT_MANAGEMENT_NIC, Fabric, GidIndex};
use crate::spec::tree::Seg;

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
    let facts = EnvFacts {
        rdma_on: rdma.on,
        fabric: Some(fabric),
        profile: Some(ctx.profile),
        management_nic: Some(
            net.management_nic
                .as_deref()
                .unwrap_or(DEFAULT_MANAGEMENT_NIC),
        ),
    };
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
        let problems = nccl_vars::check(&name, &value, &facts);
        let fatal = problems
            .iter()
            .any(|(rule, _)| rule.info().severity == Severity::Error);
        for (rule, message) in problems {
            ctx.report(rule, message, &at);
        }
        if fatal {
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
