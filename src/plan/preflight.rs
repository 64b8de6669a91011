//! The in-pod preflight (issue 28): whether a job runs `templates/preflight/preflight.sh`
//! before its command, and the facts the script checks the pod against. The script
//! decides nothing: every value it reads is decided here, recorded with its reason,
//! and handed to it as an `RDMAGEN_PREFLIGHT_*` variable of the training container.
//!
//! It travels as the smoke test's scripts do: a ConfigMap beside the job
//! (`templates/preflight/configmap.yaml.j2`), mounted read-only as volume [`VOLUME`]
//! at [`DIR`], and the container's command becomes `sh <DIR>/preflight.sh <command>`.
//! The script execs the command, so PID 1 is the launcher again once the checks pass.

use serde::Serialize;

use crate::diagnostics::Rule;
use crate::model::job::{EnvValue, Volume};
use crate::model::pool::{Fabric, GidIndex};
use crate::nccl::DYNAMIC_GID_NCCL;
use crate::plan::EnvVar;
use crate::plan::ctx::Ctx;
use crate::plan::defaults::{Origin, Sourced};
use crate::plan::rdma::Rdma;
use crate::yaml::tree::Seg;

/// The script, embedded in the binary.
pub const SCRIPT: &str = include_str!("../../templates/preflight/preflight.sh");
/// Its file name in the ConfigMap, and so below [`DIR`].
pub const SCRIPT_FILE: &str = "preflight.sh";
/// The volume that holds the script, and where it is mounted.
pub const VOLUME: &str = "rdmagen-preflight";
pub const DIR: &str = "/rdmagen-preflight";
/// The prefix of the variables that hand the script its facts.
pub const ENV_PREFIX: &str = "RDMAGEN_PREFLIGHT_";

/// The memlock floor, in KiB, below which the script fails a process without
/// CAP_IPC_LOCK. NCCL's docs ask for `unlimited`; 1 GiB is far above the container
/// runtime's 8 MiB default (containerd's LimitMEMLOCK, network-operator.md §6) and
/// below any limit a node sets on purpose for RDMA, so it catches the default and
/// hand-set limits of its order without failing a deliberate large one.
pub const MEMLOCK_FLOOR_KIB: u64 = 1 << 20;

/// What the pod gets when the preflight is on.
#[derive(Debug, Serialize)]
pub struct PreflightPlan {
    /// The ConfigMap's name: `<job>-preflight`.
    pub config_map: String,
    /// The script's file name and text, for the ConfigMap's template.
    pub script_file: &'static str,
    pub script: &'static str,
    /// The `RDMAGEN_PREFLIGHT_*` variables, in the order they are written.
    #[serde(skip)]
    pub env: Vec<EnvVar>,
}

impl PreflightPlan {
    /// `command` run after the checks: the script execs it.
    pub fn wrap(&self, command: Vec<String>) -> Vec<String> {
        ["sh".to_owned(), format!("{DIR}/{SCRIPT_FILE}")]
            .into_iter()
            .chain(command)
            .collect()
    }

    /// The container's `command` and, under mpirun, each rank's `program`, with the
    /// preflight run first where the RDMA device is: before the training command, or
    /// before each rank's program on the workers (the launcher has none). Its variables
    /// join `env`.
    pub(super) fn apply(
        &self,
        ctx: &mut Ctx<'_>,
        env: &mut Vec<EnvVar>,
        command: Vec<String>,
        program: Option<Vec<String>>,
    ) -> (Vec<String>, Option<Vec<String>>) {
        env.extend(self.env.iter().cloned());
        let (topic, command, program) = match program {
            Some(program) => ("preflight rank program", command, Some(self.wrap(program))),
            None => ("preflight command", self.wrap(command), None),
        };
        let shown = program.as_ref().unwrap_or(&command).join(" ");
        ctx.decisions.record(
            topic,
            shown,
            "the preflight runs first and execs the command it is given",
        );
        (command, program)
    }
}

/// Whether the preflight runs, and with which facts. `hcas` is the NCCL_IB_HCA the
/// plan chose (None when it writes none), `env` the container's environment so far.
/// On, the ConfigMap's volume joins the job's volumes.
pub(super) fn decide(
    ctx: &mut Ctx<'_>,
    rdma: &Rdma,
    hcas: Option<&str>,
    env: &[EnvVar],
) -> Option<PreflightPlan> {
    let pool_name = ctx.pool.value.metadata.name.clone();
    let (asked, by) = match (
        ctx.job.value.spec.preflight,
        ctx.pool.value.spec.network.preflight,
    ) {
        (Some(on), _) => (on, "the job's preflight".to_owned()),
        (None, Some(on)) => (on, format!("pool `{pool_name}`'s network.preflight")),
        (None, None) => return None,
    };
    if !asked {
        gid_without_preflight(ctx, rdma);
        ctx.decisions.record(
            "preflight",
            "off",
            format!("{by} is false: the job starts its command with no in-pod check"),
        );
        return None;
    }
    if !rdma.on {
        ctx.decisions.record(
            "preflight",
            "off",
            format!("{by} asks for it, but the job runs no RDMA: nothing for the preflight to check (NCCL uses sockets by design)"),
        );
        return None;
    }
    let taken = ctx
        .inputs
        .volumes
        .iter()
        .find(|v| v.value.name == VOLUME || v.value.mount_path == DIR)
        .map(|v| {
            (
                v.origin,
                v.index,
                v.value.name.clone(),
                v.value.mount_path.clone(),
            )
        });
    if let Some((origin, index, name, path)) = taken {
        let mut at = origin.path("volumes");
        at.push(Seg::Index(index));
        ctx.report_from(
            origin,
            Rule::VolumeClash,
            format!("volume `{name}` at `{path}` takes the preflight's name or mount path ({VOLUME} at {DIR}), and {by} turns the preflight on"),
            &at,
        );
        return None;
    }
    let config_map = format!("{}-preflight", ctx.job.value.metadata.name);
    let mpirun = super::mpi::wanted(ctx);
    ctx.decisions.record(
        "preflight",
        "on",
        format!(
            "{by}: {DIR}/{SCRIPT_FILE} (ConfigMap {config_map}, volume {VOLUME}) runs {} and execs it once the RDMA device, ports, GID, memlock, GPUDirect and NCCL_SOCKET_IFNAME pass; a problem fails the pod at start with one line and its own exit code (README, \"The in-pod preflight\")",
            if mpirun {
                "before each rank's program, on the workers (mpirun starts it there: the launcher holds no RDMA device)"
            } else {
                "before the training command, in the training container"
            }
        ),
    );

    let mut out = Vec::new();
    // Each fact is a variable of the container and a line of --explain.
    fn put(ctx: &mut Ctx<'_>, out: &mut Vec<EnvVar>, name: &str, value: String, reason: String) {
        ctx.decisions
            .record(format!("preflight {name}"), &value, reason);
        out.push(EnvVar::text(name, value));
    }

    // Which devices must be there: the exact names NCCL is given, else how many rail
    // devices the pod holds (a VF keeps the name its host gave it), else any one.
    let named: Vec<&str> = match hcas {
        Some(list) if !list.starts_with('^') => list
            .trim_start_matches('=')
            .split(',')
            .filter(|n| !n.is_empty())
            .collect(),
        _ => Vec::new(),
    };
    if named.is_empty() {
        let rails = rdma.networks.len();
        let (count, why) = if rails > 0 {
            (
                rails,
                format!(
                    "no HCA names are known (each rail's VF keeps the name the host gave it): the pod's {rails} rail device(s), each with an ACTIVE port"
                ),
            )
        } else {
            (
                1,
                match hcas {
                    Some(list) => format!(
                        "NCCL_IB_HCA is `{list}`, an exclusion: at least one device with an ACTIVE port"
                    ),
                    None => {
                        "the pool names no HCAs: at least one device with an ACTIVE port".to_owned()
                    }
                },
            )
        };
        put(
            ctx,
            &mut out,
            "RDMAGEN_PREFLIGHT_HCA_COUNT",
            count.to_string(),
            why,
        );
    } else {
        put(
            ctx,
            &mut out,
            "RDMAGEN_PREFLIGHT_HCAS",
            named.join(" "),
            "the HCAs NCCL_IB_HCA names: each must be in /sys/class/infiniband with an ACTIVE port"
                .to_owned(),
        );
    }

    let fabric = ctx.fabric();
    // sysfs's words (ports/N/link_layer); RoCE runs over Ethernet.
    let link = match fabric {
        Fabric::Ib => "InfiniBand",
        Fabric::Roce | Fabric::Tcp => "Ethernet",
    };
    put(
        ctx,
        &mut out,
        "RDMAGEN_PREFLIGHT_LINK_LAYER",
        link.to_owned(),
        format!(
            "the pool's fabric is {}: the active port's link_layer must read {link}",
            fabric_name(fabric)
        ),
    );

    if fabric == Fabric::Roce {
        let fixed = env.iter().find_map(|v| match (&v.name[..], &v.value) {
            ("NCCL_IB_GID_INDEX", EnvValue::Text(index)) => Some(index.clone()),
            _ => None,
        });
        match fixed {
            Some(index) => put(ctx, &mut out,
                "RDMAGEN_PREFLIGHT_GID_INDEX",
                index,
                "the pod's NCCL_IB_GID_INDEX: that index must be RoCE v2 on an IPv4 address of the pod".to_owned(),
            ),
            None => {
                put(ctx, &mut out,
                    "RDMAGEN_PREFLIGHT_GID_INDEX",
                    "auto".to_owned(),
                    "the plan writes no NCCL_IB_GID_INDEX: the script finds the lowest index that is RoCE v2 on an IPv4 address of the pod (NCCL_IB_GID_INDEX set at run time, by a platform, is checked instead)".to_owned(),
                );
                let (export, why) = match ctx.target.nccl {
                    Some(v) if v >= DYNAMIC_GID_NCCL => (
                        "0",
                        format!("the pool's images have NCCL {v}, which selects the GID itself from 2.21 (nccl::DYNAMIC_GID_NCCL): the script checks that one exists and exports nothing"),
                    ),
                    Some(v) => (
                        "1",
                        format!("the pool's images have NCCL {v}, which takes index 0 unless told (dynamic selection is 2.21's): the script exports NCCL_IB_GID_INDEX as found"),
                    ),
                    None => (
                        "1",
                        "the pool does not say which NCCL its images have, and before 2.21 NCCL takes index 0 unless told: the script exports NCCL_IB_GID_INDEX as found (the index 2.21's own selection would take)".to_owned(),
                    ),
                };
                put(ctx, &mut out, "RDMAGEN_PREFLIGHT_EXPORT_GID", export.to_owned(), why);
            }
        }
    } else {
        put(
            ctx,
            &mut out,
            "RDMAGEN_PREFLIGHT_GID_INDEX",
            "none".to_owned(),
            "InfiniBand addresses ports by LID: no GID index to check".to_owned(),
        );
    }

    let gdr_off = env.iter().any(|v| {
        v.name == "NCCL_NET_GDR_LEVEL"
            && matches!(&v.value, EnvValue::Text(level) if level == "LOC" || level == "0")
    });
    let (gdr, why) = if gdr_off {
        (
            "0",
            "NCCL_NET_GDR_LEVEL is LOC: the job turns GPUDirect RDMA off, so it is not checked",
        )
    } else {
        (
            "1",
            "NCCL uses GPUDirect RDMA where the NIC and GPU are close enough, and without nvidia_peermem or dma-buf it stages every transfer through host memory with only an INFO line to say so; NCCL_NET_GDR_LEVEL=LOC in the job's env turns the check off",
        )
    };
    put(
        ctx,
        &mut out,
        "RDMAGEN_PREFLIGHT_GPUDIRECT",
        gdr.to_owned(),
        why.to_owned(),
    );

    put(ctx, &mut out,
        "RDMAGEN_PREFLIGHT_MEMLOCK_MIN_KIB",
        MEMLOCK_FLOOR_KIB.to_string(),
        "ulimit -l must be unlimited or at least 1 GiB, unless the process holds CAP_IPC_LOCK (which lifts the limit for root): registered memory is pinned, and the container runtime's default is 8 MiB (LimitMEMLOCK)".to_owned(),
    );

    let socket = env.iter().find(|v| v.name == "NCCL_SOCKET_IFNAME");
    let socket_note = match socket.map(|v| &v.value) {
        Some(EnvValue::Text(names)) => {
            format!("`{names}`: at least one interface it names must be up (or `unknown`)")
        }
        Some(EnvValue::From(_)) => {
            "set from a source at run time: checked as the pod sees it".to_owned()
        }
        None => "not written by the plan: checked only if the pod sets it at run time".to_owned(),
    };
    ctx.decisions.record(
        "preflight NCCL_SOCKET_IFNAME",
        "(read by the script)",
        socket_note,
    );

    let volume = Volume {
        name: VOLUME.to_owned(),
        mount_path: DIR.to_owned(),
        sub_path: None,
        read_only: true,
        config_map: Some(config_map.clone()),
        secret: None,
        host_path: None,
        empty_dir: None,
        claim: None,
        nfs: None,
        csi: None,
        persistent_volume: None,
    };
    // rdmagen's, not the job's: last, its name and path checked above against the
    // job's and the pool's (pod.rs checks it against /dev/shm's like any other).
    ctx.inputs.volumes.push(Sourced {
        value: volume,
        origin: Origin::Job,
        index: 0,
    });
    Some(PreflightPlan {
        config_map,
        script_file: SCRIPT_FILE,
        script: SCRIPT,
        env: out,
    })
}

fn fabric_name(fabric: Fabric) -> &'static str {
    match fabric {
        Fabric::Ib => "InfiniBand",
        Fabric::Roce => "RoCE",
        Fabric::Tcp => "TCP",
    }
}

/// RDG048 for a job that turns off the preflight its pool relies on: the pool's
/// `gidIndex: auto` passes `check_pool` on an NCCL before 2.21 (or an unknown one) only
/// because the preflight exports the index; without it NCCL takes index 0.
fn gid_without_preflight(ctx: &mut Ctx<'_>, rdma: &Rdma) {
    let net = &ctx.pool.value.spec.network;
    let relies = net.preflight == Some(true)
        && net.gid_index == Some(GidIndex::Auto)
        && net.fabric == Fabric::Roce
        && ctx.job.value.spec.preflight == Some(false)
        && rdma.on
        && ctx.target.nccl.is_none_or(|v| v < DYNAMIC_GID_NCCL);
    if !relies || ctx.profile.presets(Fabric::Roce, true, "NCCL_IB_GID_INDEX") {
        return;
    }
    let pool = ctx.pool.value.metadata.name.clone();
    let nccl = ctx.target_nccl();
    ctx.report(
        Rule::GidNeedsNewerNccl,
        format!("preflight: false, but pool `{pool}` has gidIndex: auto, which only its preflight turns into an index before NCCL 2.21 ({nccl}): NCCL would use GID index 0, usually the link-local GID; keep the preflight or set the index"),
        &[Seg::Key("spec"), Seg::Key("preflight")],
    );
}
