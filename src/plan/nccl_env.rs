//! The container's environment: NCCL variables from the pool (minus what the platform
//! presets), then the job's own `env`, checked against the rules.

use std::collections::BTreeMap;

use crate::diagnostics::{Rule, Severity};
use crate::model::job::EnvValue;
use crate::model::pool::{Fabric, GidIndex, NcclNet};
use crate::nccl::{self, EnvFacts};
use crate::plan::EnvVar;
use crate::plan::attachment;
use crate::plan::ctx::Ctx;
use crate::plan::defaults::Origin;
use crate::plan::rdma::Rdma;
use crate::yaml::tree::Seg;

pub fn decide(ctx: &mut Ctx<'_>, rdma: &Rdma, hcas: Option<&str>) -> Vec<EnvVar> {
    let net = ctx.pool.value.spec.network.clone();
    let fabric = net.fabric;
    let mut from_pool: Vec<(&'static str, Option<String>, String)> = Vec::new();
    // NCCL_IB_DISABLE defaults to 0 (src/transport/net_ib/init.cc:27), so `=0` would
    // change nothing; `=1` is written when RDMA is off so that NCCL does not pick up a
    // device that happens to be visible (hostNetwork, a node-wide plugin).
    if !rdma.on {
        from_pool.push((
            "NCCL_IB_DISABLE",
            Some("1".to_owned()),
            "RDMA is off: NCCL uses sockets, stated explicitly".to_owned(),
        ));
    }
    let shape = ctx.shape();
    let shape_reason = shape.map(|s| ctx.shape_reason(s)).unwrap_or_default();
    // A pool's own value wins; then the shape's, where the platform documents one.
    let from_shape = |name: &str| shape.and_then(|s| s.value(name)).map(str::to_owned);
    let socket = match (
        &net.socket_ifname,
        from_shape("NCCL_SOCKET_IFNAME"),
        ctx.profile.socket_ifname,
        attachment::default_socket_ifname(net.attachment),
    ) {
        (Some(name), ..) => Some((name.clone(), "the pool's bootstrap interface".to_owned())),
        (None, Some(name), ..) => Some((name, shape_reason.clone())),
        (None, None, Some((name, why)), _) => Some((name.to_owned(), why.to_owned())),
        (None, None, None, Some((name, why))) => Some((name.to_owned(), why.to_owned())),
        (None, None, None, None) => None,
    };
    from_pool.push((
        "NCCL_SOCKET_IFNAME",
        socket.as_ref().map(|(name, _)| name.clone()),
        socket.map(|(_, why)| why).unwrap_or_default(),
    ));
    if rdma.on {
        from_pool.push((
            "NCCL_IB_HCA",
            hcas.map(str::to_owned),
            "the data NICs chosen for this job".to_owned(),
        ));
        let number = |v: Option<u32>| v.map(|n| n.to_string());
        let or_shape = |name: &'static str, pool: Option<String>, why: &str| match pool {
            Some(value) => (name, Some(value), why.to_owned()),
            None => (name, from_shape(name), shape_reason.clone()),
        };
        from_pool.push(match (fabric, net.gid_index) {
            (Fabric::Roce, Some(GidIndex::Index(i))) => or_shape(
                "NCCL_IB_GID_INDEX",
                Some(i.to_string()),
                "the pool's RoCE GID index",
            ),
            // `gidIndex: auto` is the pool's own decision: no shape value over it.
            (Fabric::Roce, None) => or_shape("NCCL_IB_GID_INDEX", None, ""),
            _ => ("NCCL_IB_GID_INDEX", None, String::new()),
        });
        from_pool.push(or_shape(
            "NCCL_IB_TIMEOUT",
            number(net.ib_timeout),
            "the pool's ibTimeout",
        ));
        from_pool.push(or_shape(
            "NCCL_IB_QPS_PER_CONNECTION",
            number(net.qps_per_connection),
            "the pool's qpsPerConnection",
        ));
        from_pool.push(or_shape(
            "NCCL_CROSS_NIC",
            number(net.cross_nic),
            "the pool's crossNic",
        ));
        // A platform that owns QoS gets neither (check_pool reports the fields).
        if !ctx.profile.owns_qos {
            from_pool.push(or_shape(
                "NCCL_IB_TC",
                number(net.traffic_class),
                "the pool's trafficClass: the fabric's lossless QoS class",
            ));
            from_pool.push(or_shape(
                "NCCL_IB_SL",
                number(net.service_level),
                "the pool's serviceLevel",
            ));
        }
        // The shape's other tuning, which no pool field holds (OCI: NCCL_CUMEM_ENABLE,
        // NCCL_IGNORE_CPU_AFFINITY, NCCL_IB_SPLIT_DATA_ON_QPS).
        for (name, value) in shape.map_or(&[][..], |s| s.nccl) {
            if !from_pool.iter().any(|(n, ..)| n == name) {
                from_pool.push((name, Some((*value).to_owned()), shape_reason.clone()));
            }
        }
    }
    if let Some((name, why)) = net_pin(ctx, rdma) {
        from_pool.push(("NCCL_NET", Some(name), why));
    }
    let gid_preset = ctx.profile.presets(fabric, rdma.on, "NCCL_IB_GID_INDEX");
    if rdma.on && fabric == Fabric::Roce && !gid_preset {
        let nccl = ctx.target_nccl();
        let why = match net.gid_index {
            Some(GidIndex::Index(_)) => None,
            None if from_shape("NCCL_IB_GID_INDEX").is_some() => None,
            Some(GidIndex::Auto) => Some(format!(
                "gidIndex: auto leaves the GID to NCCL's dynamic selection (RoCE v2, IPv4), which needs NCCL 2.21 or later; {nccl}"
            )),
            None => Some(format!(
                "the pool makes no GID decision: NCCL's default is dynamic selection from 2.21 and index 0 before; {nccl}"
            )),
        };
        if let Some(why) = why {
            ctx.decisions
                .record("env NCCL_IB_GID_INDEX", "(unset)", why);
        }
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

    let job_env = ctx.inputs.env.clone();
    let facts = EnvFacts {
        rdma_on: rdma.on,
        nccl: ctx.target.nccl,
        fabric: Some(fabric),
        profile: Some(ctx.profile),
        management_nic: Some(net.management_device()),
        management_nic_in_pod: net.management_device() != "none"
            && net.attachment.is_none_or(|mode| mode.host_device_names()),
        trainer: ctx.target.trainer().is_some(),
    };
    let mut env: BTreeMap<String, EnvValue> = env
        .into_iter()
        .map(|(name, value)| (name, EnvValue::Text(value)))
        .collect();
    for (name, sourced) in job_env {
        let origin = sourced.origin;
        let mut at = origin.path("env");
        at.push(Seg::Key(&name));
        if !crate::kubernetes::names::is_env_var_name(&name) {
            ctx.report_from(
                origin,
                Rule::InvalidEnvName,
                format!(
                    "{} is not a variable name the API server accepts (printable ASCII other than `=`, not empty)",
                    crate::diagnostics::escape::quoted_ascii(&name, 80)
                ),
                &at,
            );
            continue;
        }
        let shown = match &sourced.value {
            EnvValue::Text(value) => value.clone(),
            EnvValue::From(source) => {
                if let Some(problem) = value_from_problem(source) {
                    ctx.report_from(
                        origin,
                        Rule::EnvValueFrom,
                        format!("{name}: {problem}"),
                        &at,
                    );
                    continue;
                }
                format!("valueFrom {source}")
            }
        };
        // A value with an error stops the job, unless the user turned the rule off
        // (`.rdmagen.yaml`); then it is written as given, never dropped without a word.
        let mut fatal = false;
        if let EnvValue::Text(value) = &sourced.value {
            let problems = nccl::check(&name, value, &facts);
            fatal = problems.iter().any(|f| f.severity() == Severity::Error);
            for problem in problems {
                ctx.report_from(origin, problem.rule, problem.message, &at);
            }
        }
        if fatal {
            // The error says all there is to say about it.
        } else if ctx.profile.presets(fabric, rdma.on, &name) {
            let platform = ctx.profile.name;
            ctx.report_from(
                origin,
                Rule::OverridesPlatformPreset,
                format!("{name} is preset by the {platform} platform; the job's value `{shown}` replaces it"),
                &at,
            );
        } else if let Some(EnvValue::Text(derived)) =
            env.get(&name).filter(|d| **d != sourced.value)
        {
            ctx.report_from(
                origin,
                Rule::OverridesPoolValue,
                format!("{name} would be `{derived}` from the pool; the job's `{shown}` is used"),
                &at,
            );
        }
        let by = match origin {
            Origin::Job => "set by the job".to_owned(),
            Origin::Pool => format!("pool `{}` (spec.jobDefaults)", ctx.pool.value.metadata.name),
        };
        ctx.decisions.record(format!("env {name}"), shown, by);
        env.insert(name, sourced.value);
    }
    algo_at_scale(ctx, &env);
    env.into_iter()
        .map(|(name, value)| EnvVar { name, value })
        .collect()
}

/// The node count from which a job is "very large" (seed 000, which gives no number):
/// 256 GPUs at 8 a node. RDG260 says why the advice is given there.
pub const ALGO_ADVICE_NODES: u32 = 32;

/// RDG260: seed 000's advice to try NCCL_ALGO=Ring (or Tree) on a very large job, as
/// an info finding and the NCCL_ALGO line of `--explain`, where neither the job nor
/// its pool's defaults set NCCL_ALGO. rdmagen never sets it: NCCL's tuner may be
/// right, and only a measurement on the cluster says which wins.
fn algo_at_scale(ctx: &mut Ctx<'_>, env: &BTreeMap<String, EnvValue>) {
    let nodes = ctx.job.value.spec.nodes;
    if nodes < ALGO_ADVICE_NODES || env.contains_key("NCCL_ALGO") {
        return;
    }
    let advice = format!(
        "a {nodes}-node job (very large: {ALGO_ADVICE_NODES} nodes or more): seed 000 suggests trying NCCL_ALGO=Ring or Tree by hand; NCCL picks per message size and can pick wrong at scale (NVIDIA/nccl#1368: ring 190 GB/s, NCCL's tree 150), so measure both with nccl-tests and set NCCL_ALGO in env only if one wins"
    );
    ctx.report(
        Rule::NcclAlgoAtScale,
        advice,
        &[Seg::Key("spec"), Seg::Key("nodes")],
    );
    ctx.decisions.record(
        "env NCCL_ALGO",
        "(unset)",
        format!("NCCL's tuner chooses per size; on {nodes} nodes try Ring and Tree by hand (seed 000, RDG260)"),
    );
}

/// NCCL_NET and why: on a job that runs RDMA across nodes, the one network NCCL may
/// use, so that a fabric it cannot use fails communicator init at the start instead
/// of carrying the job over TCP sockets at a tenth of the speed (nccl::net_selects).
/// The job's `ncclNet` wins over the pool's `network.ncclNet`; `IB` when neither
/// names one. Inside one node NCCL moves nothing over the network, so no pin there.
fn net_pin(ctx: &mut Ctx<'_>, rdma: &Rdma) -> Option<(String, String)> {
    let pool_name = ctx.pool.value.metadata.name.clone();
    let (chosen, origin, by) = match (
        ctx.job.value.spec.nccl_net.clone(),
        ctx.pool.value.spec.network.nccl_net.clone(),
    ) {
        (Some(net), _) => (Some(net), Origin::Job, "the job's ncclNet".to_owned()),
        (None, net) => (
            net,
            Origin::Pool,
            format!("pool `{pool_name}`'s network.ncclNet"),
        ),
    };
    let at: &[Seg<'_>] = match origin {
        Origin::Job => &[Seg::Key("spec"), Seg::Key("ncclNet")],
        Origin::Pool => &[Seg::Key("spec"), Seg::Key("network"), Seg::Key("ncclNet")],
    };
    let nodes = ctx.job.value.spec.nodes;
    if !rdma.on || nodes < 2 {
        if let Some(NcclNet::Name(name)) = &chosen {
            let why = if rdma.on {
                "a one-node job: NCCL moves nothing over the network, and a pin would only fail init where the RDMA device is not usable"
            } else {
                "RDMA is off: NCCL_IB_DISABLE=1 already keeps NCCL to sockets"
            };
            ctx.decisions.record(
                "env NCCL_NET",
                "(unset)",
                format!("{by} `{name}` is not written: {why}"),
            );
        }
        return None;
    }
    let fallback = "NCCL uses this network or fails at init, never TCP sockets in silence (nccl v2.30.7-1 src/plugin/net.cc:319-350)";
    match chosen {
        Some(NcclNet::Off) => {
            ctx.decisions.record(
                "env NCCL_NET",
                "(unset)",
                format!("{by} is off: NCCL tries its net plugins, IB, then sockets, and a fabric it cannot use slows the job to socket speed with only a log line to say so"),
            );
            None
        }
        Some(NcclNet::Name(name)) => {
            let facts = EnvFacts {
                rdma_on: true,
                ..EnvFacts::default()
            };
            let problems = nccl::check("NCCL_NET", &name, &facts);
            if problems.is_empty() {
                Some((name, format!("fail closed, {by}: {fallback}")))
            } else {
                for problem in problems {
                    ctx.report_from(origin, problem.rule, problem.message, at);
                }
                None
            }
        }
        None => Some((
            nccl::NET_IB.to_owned(),
            format!(
                "fail closed on a {nodes}-node RDMA job: {fallback}; a net plugin in the image (IBext_vN, gIB) goes unused unless the pool's network.ncclNet names it; ncclNet: off for no pin"
            ),
        )),
    }
}

/// The sources an EnvVarSource may name; Kubernetes takes exactly one
/// (core/v1 validation: "may not have more than one field specified at a time").
const VALUE_SOURCES: &[&str] = &[
    "configMapKeyRef",
    "fieldRef",
    "resourceFieldRef",
    "secretKeyRef",
];

/// What is wrong with a `valueFrom`, if anything.
fn value_from_problem(source: &serde_json::Value) -> Option<String> {
    let given: Vec<&str> = VALUE_SOURCES
        .iter()
        .copied()
        .filter(|key| source.get(key).is_some())
        .collect();
    match given.as_slice() {
        [_] => None,
        [] => Some(format!(
            "valueFrom names no source; give one of {}",
            VALUE_SOURCES.join(", ")
        )),
        many => Some(format!(
            "valueFrom names {} sources ({}); Kubernetes takes exactly one",
            many.len(),
            many.join(", ")
        )),
    }
}
