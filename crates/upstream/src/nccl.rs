//! What is wrong with one environment variable, judged from its name and value and
//! what is known about the pod (RDMA on, fabric, platform). Used for a job's `env`
//! at resolve time and for container env in `lint`.
//!
//! Facts from the NCCL user guide (env.rst, NCCL 2.30) unless noted.

use crate::diagnostics::escape::shown;
use crate::diagnostics::{Finding, Rule};
use crate::platform::Profile;
use crate::platform::{DEFAULT_MANAGEMENT_NIC, Fabric};
use crate::version::Version;

/// The first NCCL release with dynamic GID selection (NCCL_IB_GID_INDEX defaults to -1;
/// v2.21.5-1 src/transport/net_ib.cc:80; 0 before).
pub const DYNAMIC_GID_NCCL: Version = Version::new(2, 21);

/// The first NCCL that reads NCCL_IB_TC=-1 as "not set" (its default there, then the
/// communicator's traffic class or 0: v2.26.2-1 src/transport/net_ib.cc:102, 1344).
/// Before, the default is 0 (v2.25.1-1 net_ib.cc:96) and the value goes as it is into
/// the 8-bit GRH traffic class (:1103): -1 is class 255.
pub const TC_UNSET_NCCL: Version = Version::new(2, 26);

/// The queue pairs one connection keeps, whatever it merges: NCCL_IB_MAX_QPS
/// (v2.30.7-1 src/transport/net_ib/common.h:172, the arrays at :344, 347).
pub const MAX_QPS: i64 = 128;

/// How many devices NCCL merges at most into one NIC (NCCL_IB_MAX_DEVS_PER_NIC),
/// each with NCCL_IB_QPS_PER_CONNECTION queue pairs (v2.30.7-1 connect.cc:885-887):
/// no merging before 2.20 (v2.19.3-1 net_ib.cc:650, nqps = the setting), 2 from 2.20
/// (v2.20.5-1 net_ib.cc:45), 4 from 2.24 (v2.24.3-1 net_ib.cc:45), 8 from 2.30
/// (v2.30.7-1 common.h:58 = NCCL_NET_MAX_DEVS_PER_NIC_V12, net_v12.h:11).
pub fn max_merged_devices(nccl: Version) -> i64 {
    if nccl >= Version::new(2, 30) {
        8
    } else if nccl >= Version::new(2, 24) {
        4
    } else if nccl >= Version::new(2, 20) {
        2
    } else {
        1
    }
}

/// The first NCCL with the PAT algorithm (env.rst, NCCL_ALGO); an older NCCL
/// refuses the `PAT` token at init.
pub const PAT_NCCL: Version = Version::new(2, 23);
/// The first NCCL that reads NCCL_ALGO and NCCL_PROTO as `;`-separated
/// `function:list` items (env.rst, NCCL_ALGO); an older NCCL refuses that form at
/// init.
pub const PER_FUNCTION_SELECTION_NCCL: Version = Version::new(2, 24);

/// NCCL's own networks as `NCCL_NET` names them: the verbs transport (InfiniBand and
/// RoCE alike) and the socket transport (v2.30.7-1 src/transport/net_ib/common.cc:193-194,
/// src/transport/net_socket.cc:803-804). A net plugin goes by its own name (the
/// SHARP plugin's `IBext_v8`, Google's `gIB`), which `IB` does not select.
pub const NET_IB: &str = "IB";
pub const NET_SOCKET: &str = "Socket";

/// Whether `NCCL_NET=pin` selects the network called `name`: NCCL compares the two
/// with strcasecmp, whole (no prefix, nothing trimmed), and a pin that selects no
/// network that initialised makes communicator init fail ("Failed to initialize any
/// NET plugin" from 2.27, "network %s not found" before) instead of falling back to
/// sockets (v2.30.7-1 src/plugin/net.cc:319-350; v2.21.5-1 src/net.cc:560, 578-581).
pub fn net_selects(pin: &str, name: &str) -> bool {
    pin.eq_ignore_ascii_case(name)
}

/// What is known about the pod a variable is set in.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnvFacts<'a> {
    /// Whether the pod holds an RDMA device.
    pub rdma_on: bool,
    /// The pool's fabric, when known (not in `lint`).
    pub fabric: Option<Fabric>,
    /// The platform, when known; decides which debugging variables are recommended.
    pub profile: Option<&'static Profile>,
    /// The management NIC, never a data NIC (seed 001: usually mlx5_0).
    pub management_nic: Option<&'a str>,
    /// The pool says the pod sees its management NIC under the host's name (a pool,
    /// not `lint`; not a pod that has only its rails' devices): then a prefix that
    /// matches it selects it.
    pub management_nic_in_pod: bool,
    /// The oldest NCCL the pool's images have (`target.nccl`), when known (not in
    /// `lint`): a form newer than it fails on the images that have only that one.
    pub nccl: Option<Version>,
    /// The pod is a Kubeflow Trainer v2 pod, whose torch plugin sets only
    /// [`TRAINER_RESERVED`], and refuses a TrainJob that sets one.
    pub trainer: bool,
}

/// Variables the training operator appends to every container (envvar.go).
const OPERATOR_MANAGED: &[&str] = &["MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"];

/// Variables the NCCL docs file under "Debugging": not for production or scripts.
/// NCCL_IB_QPS_PER_CONNECTION is filed there too (env.rst:1011) but is left out: seed
/// 001's key-parameter table recommends 8 for self-built clusters, and CCE injects it
/// into every RDMA pod, so it is a production setting on the clusters rdmagen targets.
pub const DEBUG_ONLY: &[&str] = &[
    "NCCL_IB_DISABLE",
    "NCCL_IB_SPLIT_DATA_ON_QPS",
    "NCCL_IB_PCI_RELAXED_ORDERING",
    "NCCL_IB_ADAPTIVE_ROUTING",
    "NCCL_IB_ECE_ENABLE",
    "NCCL_IB_MERGE_NICS",
    "NCCL_NET_GDR_LEVEL",
    "NCCL_NET_GDR_READ",
    "NCCL_ALGO",
    "NCCL_PROTO",
    "NCCL_P2P_DISABLE",
    "NCCL_P2P_LEVEL",
    "NCCL_SHM_DISABLE",
    "NCCL_BUFFSIZE",
    "NCCL_NTHREADS",
    "NCCL_NVLS_ENABLE",
];

/// What Kubeflow Trainer's torch plugin sets in the `node` container, and refuses in a
/// TrainJob's env ("must not have reserved envs", T@v2.3.0
/// pkg/runtime/framework/plugins/torch/torch.go:66-77, pkg/constants/constants.go:299-300).
const TRAINER_RESERVED: &[&str] = &[
    "PET_NNODES",
    "PET_NPROC_PER_NODE",
    "PET_NODE_RANK",
    "PET_MASTER_ADDR",
    "PET_MASTER_PORT",
];

pub fn is_operator_managed(name: &str) -> bool {
    OPERATOR_MANAGED.contains(&name) || name.starts_with("PET_")
}

/// The integer variables NCCL reads, with the range it accepts: the one table both
/// the env check and the Pool's network fields are held against. Timeout, retry count,
/// traffic class and service level are InfiniBand verbs fields of 5, 3, 8 and 4 bits;
/// for the traffic class and the service level NCCL reads -1 as "unset", its default
/// (NCCL_IB_TC: `connect.cc:20`), and for the GID index as "pick one" (2.21+); QPs per connection and cross-NIC as NCCL's env page gives them.
const INTEGER_RANGES: &[(&str, i64, i64)] = &[
    ("NCCL_IB_TIMEOUT", 0, 31),
    ("NCCL_IB_RETRY_CNT", 0, 7),
    ("NCCL_IB_TC", -1, 255),
    ("NCCL_IB_SL", -1, 15),
    ("NCCL_IB_GID_INDEX", -1, 255),
    ("NCCL_IB_QPS_PER_CONNECTION", 1, 128),
    ("NCCL_CROSS_NIC", 0, 2),
];

/// The range of integers NCCL accepts for `name`, if it is an integer variable.
pub fn integer_range(name: &str) -> Option<(i64, i64)> {
    INTEGER_RANGES
        .iter()
        .find(|(n, ..)| *n == name)
        .map(|&(_, min, max)| (min, max))
}

/// Every problem with `name=value`, as findings with no location yet: the caller
/// knows where the variable was set.
pub fn check(name: &str, value: &str, facts: &EnvFacts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    let v = value.trim();
    // Only a platform that owns the fabric's QoS forbids these (AIStudio, seed 000);
    // on a self-built lossless fabric they are required (OCI's RoCE uses TC 41).
    if let Some(profile) = facts.profile.filter(|p| p.owns_qos)
        && matches!(name, "NCCL_IB_TC" | "NCCL_IB_SL")
    {
        out.push(problem(
            Rule::IbTcSet,
            format!(
                "{name} must match the switches' QoS setup, which {} owns: no need to set it, do not change it",
                profile.title
            ),
        ));
    }
    if facts.trainer {
        if TRAINER_RESERVED.contains(&name) {
            out.push(problem(
                Rule::OperatorManagedEnv,
                format!(
                    "{name} is set by Kubeflow Trainer's torch plugin for every pod, and a TrainJob that sets it is refused; remove it"
                ),
            ));
        }
    } else if is_operator_managed(name) {
        out.push(problem(
            Rule::OperatorManagedEnv,
            format!("{name} is set by the training operator for every pod; remove it"),
        ));
    }
    if name == "NCCL_IB_DISABLE" && v == "1" && facts.rdma_on {
        out.push(problem(
            Rule::IbDisableWithRdma,
            "NCCL_IB_DISABLE=1 turns RDMA off inside NCCL while the pod holds an RDMA device"
                .to_owned(),
        ));
    }
    if name == "NCCL_NET" && facts.rdma_on && net_selects(value, NET_SOCKET) {
        out.push(problem(
            Rule::NcclNetSocket,
            "NCCL_NET=Socket pins NCCL to TCP sockets while the pod holds an RDMA device: the job runs at socket speed; pin IB (or the name of the image's net plugin), or turn RDMA off".to_owned(),
        ));
    }
    if name == "NCCL_IB_GID_INDEX" && facts.fabric == Some(Fabric::Ib) {
        out.push(problem(
            Rule::GidIndexOnIb,
            "NCCL_IB_GID_INDEX is ignored on InfiniBand; it only matters on RoCE".to_owned(),
        ));
    }
    if let Some((min, max)) = integer_range(name) {
        match v.parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => {
                if name == "NCCL_IB_TIMEOUT" && n == 0 {
                    out.push(problem(
                        Rule::IbTimeoutInfinite,
                        "NCCL_IB_TIMEOUT=0 waits forever: a lost link hangs the job instead of failing it".to_owned(),
                    ));
                }
            }
            _ => out.push(problem(
                Rule::NcclValueRange,
                format!(
                    "{name}=`{}`; NCCL accepts an integer from {min} to {max}",
                    shown(value)
                ),
            )),
        }
    }
    let syntax = match name {
        "NCCL_DEBUG" => debug_level(v),
        "NCCL_ALGO" => selection(value, ALGORITHMS, "algorithm"),
        "NCCL_PROTO" => selection(value, PROTOCOLS, "protocol"),
        "NCCL_SOCKET_IFNAME" => interface_list(v),
        "NCCL_IB_HCA" => hca_list(v),
        "NCCL_NET" => net_name(value),
        _ => None,
    };
    if let Some(floor) = facts.nccl {
        out.extend(newer_than(name, v, floor));
    }
    if let Some(mistake) = syntax {
        out.push(problem(
            Rule::NcclSyntax,
            format!("{name}=`{}`: {mistake}", shown(value)),
        ));
    }
    if name == "NCCL_IB_HCA" {
        out.extend(hca_hazards(v, facts));
    }
    // NCCL_IB_DISABLE=1 in a pod with no RDMA device is a deliberate statement that the
    // job runs over TCP (rdmagen writes it so for RDMA off): not a debugging leftover.
    let tcp_statement = name == "NCCL_IB_DISABLE" && v == "1" && !facts.rdma_on;
    if DEBUG_ONLY.contains(&name)
        && !tcp_statement
        && !facts.profile.is_some_and(|p| p.recommends.contains(&name))
    {
        out.push(problem(
            Rule::DebugOnlyVariable,
            format!("{name} is a debugging variable in the NCCL docs: not for production, may cause sub-optimal behaviour, crashes or hangs"),
        ));
    }
    out
}

/// What `name=v` needs of NCCL that the pool's oldest NCCL, `floor`, lacks.
fn newer_than(name: &str, v: &str, floor: Version) -> Vec<Finding> {
    let mut out = Vec::new();
    let images = format!("the pool's images have NCCL {floor} or later");
    if matches!(name, "NCCL_ALGO" | "NCCL_PROTO")
        && v.contains([';', ':'])
        && floor < PER_FUNCTION_SELECTION_NCCL
    {
        out.push(problem(
            Rule::NcclNewerThanImages,
            format!(
                "{name}=`{}` is the per-function form (`function:list`, `;` between items), which NCCL reads from 2.24; {images}, and one before 2.24 refuses the value at init",
                shown(v)
            ),
        ));
    }
    if name == "NCCL_ALGO"
        && floor < PAT_NCCL
        && v.split([',', ';', ':', '^'])
            .any(|token| token.eq_ignore_ascii_case("PAT"))
    {
        out.push(problem(
            Rule::NcclNewerThanImages,
            format!(
                "NCCL_ALGO names PAT, an algorithm NCCL has from 2.23; {images}, and one before 2.23 refuses the token at init"
            ),
        ));
    }
    // An error, not a warning: 2.20 hands -1 to ibv_query_gid as the index
    // (v2.20.5-1 src/transport/net_ib.cc:838, 1028, under NCCLCHECK), which fails, and
    // so does every connection the job makes.
    if name == "NCCL_IB_GID_INDEX" && v == "-1" && floor < DYNAMIC_GID_NCCL {
        out.push(problem(
            Rule::GidNeedsNewerNccl,
            format!(
                "NCCL_IB_GID_INDEX=-1 asks for dynamic GID selection, which NCCL has from 2.21 (its default there, v2.21.5-1 src/transport/net_ib.cc:80); {images}, and one before 2.21 passes -1 to ibv_query_gid as the index (v2.20.5-1 net_ib.cc:838), so connection setup fails; set the RoCE v2 IPv4 index (`rdmagen detect` finds it)"
            ),
        ));
    }
    if name == "NCCL_IB_TC" && v == "-1" && floor < TC_UNSET_NCCL {
        out.push(problem(
            Rule::NcclTcUnsetBefore226,
            format!(
                "NCCL_IB_TC=-1 means \"not set\" only from NCCL 2.26 (v2.26.2-1 src/transport/net_ib.cc:102); {images}, and one before 2.26 writes it into the 8-bit traffic class (v2.25.1-1 net_ib.cc:1103): class 255, DSCP 63; leave NCCL_IB_TC out or give the class the switches expect"
            ),
        ));
    }
    if name == "NCCL_IB_QPS_PER_CONNECTION"
        && let Ok(qps) = v.parse::<i64>()
    {
        let devices = max_merged_devices(floor);
        if qps * devices > MAX_QPS && qps <= MAX_QPS {
            out.push(problem(
                Rule::NcclQpsOverflow,
                format!(
                    "NCCL_IB_QPS_PER_CONNECTION={qps}: NCCL {floor} merges up to {devices} devices into one NIC and opens {qps} queue pairs on each, {} in all, into arrays of {MAX_QPS} (v2.30.7-1 src/transport/net_ib/connect.cc:885-887, common.h:172) with no check; {images}; at most {} fits every NIC it can merge",
                    qps * devices,
                    MAX_QPS / devices
                ),
            ));
        }
    }
    out
}

/// A finding whose place the caller fills in.
fn problem(rule: Rule, message: impl Into<String>) -> Finding {
    Finding::new(rule, message, None)
}

fn debug_level(v: &str) -> Option<String> {
    const LEVELS: &[&str] = &["VERSION", "WARN", "INFO", "TRACE", "ABORT"];
    (!LEVELS.iter().any(|l| l.eq_ignore_ascii_case(v)))
        .then(|| format!("expected one of {}", LEVELS.join(", ")))
}

/// The tokens current NCCL accepts (src/init.cc:53-54); anything else makes it return
/// ncclInvalidUsage (src/graph/tuning.cc:108-111). Matched without regard to case.
const ALGORITHMS: &[&str] = &[
    "Tree",
    "Ring",
    "CollNetDirect",
    "CollNetChain",
    "NVLS",
    "NVLSTree",
    "PAT",
];
const PROTOCOLS: &[&str] = &["LL", "LL128", "Simple"];
/// Collectives that NCCL >= 2.24 accepts in `func:list` items.
const COLLECTIVES: &[&str] = &[
    "allreduce",
    "allgather",
    "reducescatter",
    "broadcast",
    "reduce",
];

/// NCCL_ALGO / NCCL_PROTO: a comma list with optional leading `^` (all versions), or
/// since 2.24 `;`-separated `[func:]list` items, e.g. `ring;allreduce:^tree`.
fn selection(v: &str, allowed: &[&str], what: &str) -> Option<String> {
    // NCCL splits with strtok_r, which skips empty tokens (`ring,` and `ring;` are
    // fine), and compares with strcasecmp, which trims nothing (`ring, tree` fails):
    // src/graph/tuning.cc parseList.
    if v.is_empty() {
        return Some(format!("an empty list names no {what}"));
    }
    for (i, item) in v.split(';').filter(|item| !item.is_empty()).enumerate() {
        let list = match item.split_once(':') {
            Some((func, list)) => {
                if !COLLECTIVES.iter().any(|c| c.eq_ignore_ascii_case(func)) {
                    return Some(format!(
                        "`{}` is not a collective ({}; NCCL trims no spaces)",
                        shown(func),
                        COLLECTIVES.join(", ")
                    ));
                }
                list
            }
            None if i > 0 => {
                return Some("only the first `;` item may omit `function:`".to_owned());
            }
            None => item,
        };
        let list = list.strip_prefix('^').unwrap_or(list);
        for token in list.split(',').filter(|token| !token.is_empty()) {
            if allowed == ALGORITHMS && token.eq_ignore_ascii_case("collnet") {
                return Some(format!(
                    "`{token}` is gone since NCCL 2.14 (env.rst: valid 2.5-2.13); write CollNetDirect or CollNetChain"
                ));
            }
            if !allowed.iter().any(|a| a.eq_ignore_ascii_case(token)) {
                return Some(format!(
                    "`{}` is not a known {what} ({}; NCCL trims no spaces)",
                    shown(token),
                    allowed.join(", ")
                ));
            }
        }
    }
    None
}

/// NCCL_NET: one network's name, compared whole (net_selects), so a space around it
/// or an empty value selects nothing and init fails.
fn net_name(value: &str) -> Option<String> {
    if value.trim().is_empty() {
        Some("an empty value names no network; NCCL finds none and fails at init".to_owned())
    } else if value.trim() != value {
        Some(
            "NCCL compares the name whole, spaces included: this names no network and init fails"
                .to_owned(),
        )
    } else {
        None
    }
}

/// `[^][=]name[,name...]`
fn interface_list(v: &str) -> Option<String> {
    let list = v.strip_prefix('^').unwrap_or(v);
    let list = list.strip_prefix('=').unwrap_or(list);
    list.split(',')
        .find(|n| n.is_empty() || n.chars().any(char::is_whitespace))
        .map(|n| format!("`{}` is not an interface name or prefix", shown(n)))
}

/// `[^][=]hca[:port[:rail[:plane]]][,...]`, at most 32 devices.
fn hca_list(v: &str) -> Option<String> {
    let list = v.strip_prefix('^').unwrap_or(v);
    let list = list.strip_prefix('=').unwrap_or(list);
    let items: Vec<&str> = list.split(',').collect();
    if items.len() > 32 {
        return Some(format!("{} devices; NCCL takes at most 32", items.len()));
    }
    for item in items {
        let mut parts = item.split(':');
        let name = parts.next().unwrap_or_default();
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        let numbers: Vec<&str> = parts.collect();
        let numbers_ok = numbers.len() <= 3
            && numbers.iter().enumerate().all(|(i, n)| {
                n.chars().all(|c| c.is_ascii_digit())
                    && (!n.is_empty() || i == 0 && numbers.len() > 1)
            });
        if !plain || !numbers_ok {
            return Some(format!(
                "`{}` is not `device[:port[:rail[:plane]]]`",
                shown(item)
            ));
        }
    }
    None
}

/// Device names in an NCCL_IB_HCA value, without `^`, `=` and ports.
pub fn hca_names(v: &str) -> (bool, bool, Vec<&str>) {
    let exclude = v.starts_with('^');
    let list = v.strip_prefix('^').unwrap_or(v);
    let exact = list.starts_with('=');
    let list = list.strip_prefix('=').unwrap_or(list);
    let names = list
        .split(',')
        .map(|i| i.split(':').next().unwrap_or_default())
        .filter(|n| !n.is_empty())
        .collect();
    (exclude, exact, names)
}

fn hca_hazards(v: &str, facts: &EnvFacts<'_>) -> Vec<Finding> {
    let (exclude, exact, names) = hca_names(v);
    let mut out = Vec::new();
    if exclude {
        return out;
    }
    let management = facts.management_nic.unwrap_or(DEFAULT_MANAGEMENT_NIC);
    // A list the platform documents for a machine shape names data NICs, whatever
    // their numbers (OCI's BM.GPU.H100.8 list starts at mlx5_0).
    // Such a list is recognised whichever platform lint was told.
    let documented = crate::platform::documented_hca_list(v).is_some();
    if names.contains(&management) && !documented {
        out.push(problem(
            Rule::HcaManagementNic,
            format!(
                "NCCL_IB_HCA includes {management}, which is usually the management (TCP) NIC, not an RDMA data NIC; \
                 where it carries data, say so: `managementNic` in the Pool, or the annotation \
                 `rdmagen.io/management-nic: none` (or the real management NIC) on a manifest"
            ),
        ));
    } else if !exact
        && facts.management_nic_in_pod
        && let Some(prefix) = facts
            .management_nic
            .and_then(|nic| names.iter().find(|n| nic.starts_with(**n) && **n != nic))
    {
        // A bare driver name (`mlx5`) is meant as every `mlx5_<k>`, which on a node
        // whose management NIC is an mlx5 device includes it (seed 001: mlx5_0 is the
        // TCP NIC). Only said where the pool names the management NIC: in lint, or in
        // a pod that sees only its own VFs, nothing says mlx5_0 is there.
        out.push(problem(
            Rule::HcaManagementNic,
            format!(
                "NCCL_IB_HCA=`{}`: NCCL matches `{}` as a prefix, so it also selects {}, the pool's management (TCP) NIC; list the data NICs with `=`",
                shown(v),
                shown(prefix),
                shown(management)
            ),
        ));
    }
    // NCCL compares names as prefixes (src/misc/utils.cc:218-222): without `=`, a
    // name ending in a digit also selects the devices whose names continue it
    // (mlx5_1: mlx5_10..mlx5_19), listed or not. env.rst: always add the `=`.
    if !exact {
        let listed = names
            .iter()
            .flat_map(|a| names.iter().map(move |b| (*a, *b)))
            .find(|(a, b)| a != b && b.starts_with(a));
        // A bare Mellanox driver name (`mlx5`) is the prefix itself: the driver's
        // devices are all `mlx5_<k>`, and it is the value for a pod whose VF names are
        // not predictable (network-operator.md §3; SkyPilot's oci_nccl.py).
        let open = names
            .iter()
            .filter(|n| !matches!(**n, "mlx4" | "mlx5"))
            .find(|n| n.ends_with(|c: char| c.is_ascii_digit()));
        let also = match (listed, open) {
            (Some((short, long)), _) => {
                Some(format!("`{}` also matches {}", shown(short), shown(long)))
            }
            (None, Some(name)) => {
                let name = shown(name);
                Some(format!(
                    "`{name}` also selects {name}0..{name}9 and longer names if the node has them, a storage NIC say"
                ))
            }
            (None, None) => None,
        };
        if let Some(also) = also {
            out.push(problem(
                Rule::HcaPrefixAmbiguous,
                format!(
                    "{also} (NCCL matches prefixes); write `={}` for exact names",
                    shown(&names.join(","))
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(name: &str, value: &str) -> Vec<Rule> {
        check(name, value, &EnvFacts::default())
            .into_iter()
            .map(|f| f.rule)
            .collect()
    }

    #[test]
    fn ranges() {
        assert!(rules("NCCL_IB_TIMEOUT", "22").is_empty());
        assert_eq!(rules("NCCL_IB_TIMEOUT", "32"), [Rule::NcclValueRange]);
        assert_eq!(rules("NCCL_IB_TIMEOUT", "0"), [Rule::IbTimeoutInfinite]);
        assert_eq!(rules("NCCL_CROSS_NIC", "3"), [Rule::NcclValueRange]);
        assert_eq!(rules("NCCL_CROSS_NIC", "x"), [Rule::NcclValueRange]);
        assert!(rules("NCCL_IB_GID_INDEX", "-1").is_empty());
        assert!(rules("NCCL_IB_SL", "15").is_empty());
        assert_eq!(rules("NCCL_IB_SL", "16"), [Rule::NcclValueRange]);
        assert_eq!(rules("NCCL_IB_TC", "256"), [Rule::NcclValueRange]);
        assert!(
            rules("NCCL_IB_TC", "-1").is_empty(),
            "NCCL's own default: unset"
        );
        assert_eq!(rules("NCCL_IB_RETRY_CNT", "8"), [Rule::NcclValueRange]);
    }

    /// The names NCCL's networks report, as its source and the plugins' sources give
    /// them (reference/nccl-bandwidth.md §6): what a pin selects among them.
    #[test]
    fn a_pin_selects_one_network_by_its_whole_name() {
        // v2.30.7-1: net_ib/common.cc:193-194, net_socket.cc:803-804, the stubs of a
        // build without verbs (net_ib_stub.cc:99, net_socket_stub.cc:97-98); the SHARP
        // plugin's names (nccl-rdma-sharp-plugins v2.1.0 ib_plugin.c:727, main
        // ib_plugin.c:2202-2318) and Google's gIB.
        let networks = [
            "IB",
            "Socket",
            "IB (stub)",
            "Socket (stub)",
            "IBext",
            "IBext_v8",
            "gIB",
        ];
        let selected = |pin: &str| -> Vec<&str> {
            networks
                .iter()
                .copied()
                .filter(|n| net_selects(pin, n))
                .collect()
        };
        assert_eq!(selected(NET_IB), ["IB"], "IB is not a prefix of IBext_v8");
        assert_eq!(selected("ib"), ["IB"], "strcasecmp: case aside");
        assert_eq!(selected(NET_SOCKET), ["Socket"]);
        assert_eq!(selected("IBext_v8"), ["IBext_v8"]);
        assert_eq!(selected("gib"), ["gIB"]);
        assert!(selected(" IB").is_empty(), "nothing is trimmed");
    }

    #[test]
    fn nccl_net_socket_on_rdma_and_names_that_select_nothing() {
        let rdma = EnvFacts {
            rdma_on: true,
            ..EnvFacts::default()
        };
        let on_rdma = |value: &str| -> Vec<Rule> {
            check("NCCL_NET", value, &rdma)
                .into_iter()
                .map(|f| f.rule)
                .collect()
        };
        assert_eq!(on_rdma("socket"), [Rule::NcclNetSocket]);
        assert!(on_rdma("IB").is_empty());
        assert!(on_rdma("IBext_v8").is_empty());
        assert!(
            on_rdma("AWS Libfabric").is_empty(),
            "a plugin's name may hold a space"
        );
        assert!(
            rules("NCCL_NET", "Socket").is_empty(),
            "without RDMA sockets are the job's choice"
        );
        assert_eq!(rules("NCCL_NET", "IB "), [Rule::NcclSyntax]);
        assert_eq!(rules("NCCL_NET", ""), [Rule::NcclSyntax]);
    }

    #[test]
    fn forms_newer_than_the_pools_nccl_are_named() {
        let on = |nccl: (u32, u32), name: &str, value: &str| -> Vec<Rule> {
            let facts = EnvFacts {
                nccl: Some(Version::new(nccl.0, nccl.1)),
                ..EnvFacts::default()
            };
            check(name, value, &facts)
                .into_iter()
                .map(|f| f.rule)
                .filter(|r| *r != Rule::DebugOnlyVariable)
                .collect()
        };
        assert_eq!(
            on((2, 21), "NCCL_ALGO", "Ring,PAT"),
            [Rule::NcclNewerThanImages]
        );
        assert!(on((2, 23), "NCCL_ALGO", "Ring,PAT").is_empty());
        assert_eq!(
            on((2, 23), "NCCL_ALGO", "ring;allreduce:tree"),
            [Rule::NcclNewerThanImages]
        );
        assert_eq!(
            on((2, 23), "NCCL_PROTO", "allreduce:^LL128"),
            [Rule::NcclNewerThanImages]
        );
        assert!(on((2, 24), "NCCL_ALGO", "ring;allreduce:tree").is_empty());
        assert_eq!(
            on((2, 19), "NCCL_IB_GID_INDEX", "-1"),
            [Rule::GidNeedsNewerNccl]
        );
        assert!(on((2, 21), "NCCL_IB_GID_INDEX", "-1").is_empty());
        assert!(on((2, 19), "NCCL_IB_GID_INDEX", "3").is_empty());
        // NCCL_ALGO is a debugging variable, which is its own (unrelated) finding.
        assert_eq!(
            rules("NCCL_ALGO", "PAT"),
            [Rule::DebugOnlyVariable],
            "no floor known: nothing to hold it to"
        );
    }

    /// Issue 29, item 6: each version-aware rule against the release it turns on, and
    /// as today where no version is known.
    #[test]
    fn traffic_class_and_queue_pairs_by_version() {
        let on = |nccl: Option<(u32, u32)>, name: &str, value: &str| -> Vec<Rule> {
            let facts = EnvFacts {
                nccl: nccl.map(|(a, b)| Version::new(a, b)),
                ..EnvFacts::default()
            };
            check(name, value, &facts)
                .into_iter()
                .map(|f| f.rule)
                .collect()
        };
        // -1 is class 255 before 2.26 (v2.25.1-1 net_ib.cc:96, 1103), unset from it.
        assert_eq!(
            on(Some((2, 25)), "NCCL_IB_TC", "-1"),
            [Rule::NcclTcUnsetBefore226]
        );
        assert!(on(Some((2, 26)), "NCCL_IB_TC", "-1").is_empty());
        assert!(on(None, "NCCL_IB_TC", "-1").is_empty(), "as today");
        assert!(on(Some((2, 19)), "NCCL_IB_TC", "106").is_empty());
        // QPs × merged devices ≤ 128: 1, 2, 4, 8 devices from 2.19, 2.20, 2.24, 2.30.
        for (nccl, fits, overflows) in [
            ((2, 19), "128", None),
            ((2, 20), "64", Some("65")),
            ((2, 23), "64", Some("65")),
            ((2, 24), "32", Some("33")),
            ((2, 30), "16", Some("17")),
        ] {
            let q = "NCCL_IB_QPS_PER_CONNECTION";
            assert!(on(Some(nccl), q, fits).is_empty(), "{nccl:?} {fits}");
            if let Some(v) = overflows {
                assert_eq!(on(Some(nccl), q, v), [Rule::NcclQpsOverflow], "{nccl:?}");
            }
        }
        assert!(
            on(None, "NCCL_IB_QPS_PER_CONNECTION", "128").is_empty(),
            "as today"
        );
        assert_eq!(
            on(Some((2, 30)), "NCCL_IB_QPS_PER_CONNECTION", "129"),
            [Rule::NcclValueRange],
            "out of range is the range's finding alone"
        );
        // Seed 001's 8 fits every release.
        assert!(on(Some((2, 30)), "NCCL_IB_QPS_PER_CONNECTION", "8").is_empty());
    }

    /// `NCCL_IB_HCA=mlx5` never warns about `mlx50..mlx59` (no such device); where the
    /// pool says the pod sees its management NIC, the prefix selects it too.
    #[test]
    fn a_driver_prefix_selects_the_pools_management_nic() {
        let pool = EnvFacts {
            management_nic: Some("mlx5_0"),
            management_nic_in_pod: true,
            ..EnvFacts::default()
        };
        let found = check("NCCL_IB_HCA", "mlx5", &pool);
        let found: Vec<_> = found.iter().map(|f| (f.rule, f.message.as_str())).collect();
        assert_eq!(
            found,
            [(
                Rule::HcaManagementNic,
                "NCCL_IB_HCA=`mlx5`: NCCL matches `mlx5` as a prefix, so it also selects mlx5_0, the pool's management (TCP) NIC; list the data NICs with `=`"
            )]
        );
        assert!(rules("NCCL_IB_HCA", "mlx5").is_empty(), "lint: no pool");
        let vfs_only = EnvFacts {
            management_nic_in_pod: false,
            ..pool
        };
        assert!(check("NCCL_IB_HCA", "mlx5", &vfs_only).is_empty());
        assert!(check("NCCL_IB_HCA", "=mlx5_1,mlx5_2", &pool).is_empty());
        assert!(check("NCCL_IB_HCA", "^mlx5", &pool).is_empty());
    }

    #[test]
    fn algo_and_proto_in_both_syntaxes() {
        for ok in [
            "Ring",
            "ring,tree",
            "^tree",
            "ring;allreduce:tree,collnetdirect;broadcast:ring",
            "allreduce:^tree",
            "Ring,",
            "Ring;",
            "ring,,tree",
        ] {
            assert!(selection(ok, ALGORITHMS, "algorithm").is_none(), "{ok}");
        }
        for bad in [
            "rings",
            "ring;tree",
            "allreduce:rng",
            "scatter:ring",
            "",
            "Ring, Tree",
            " Ring",
            "allreduce: tree",
        ] {
            assert!(selection(bad, ALGORITHMS, "algorithm").is_some(), "{bad}");
        }
        assert!(selection("LL128,Simple", PROTOCOLS, "protocol").is_none());
        assert!(selection("LL256", PROTOCOLS, "protocol").is_some());
    }

    #[test]
    fn hca_syntax_and_hazards() {
        for ok in [
            "mlx5_1",
            "=mlx5_1,mlx5_10",
            "^=mlx5_0",
            "mlx5_0:1",
            "mlx5_0::0:0",
            "mlx5",
        ] {
            assert!(hca_list(ok).is_none(), "{ok}");
        }
        for bad in ["", "mlx5_1,,mlx5_2", "mlx5 1", "mlx5_0:x", "mlx5_0:1:2:3:4"] {
            assert!(hca_list(bad).is_some(), "{bad}");
        }
        assert_eq!(
            rules("NCCL_IB_HCA", "mlx5_1,mlx5_10"),
            [Rule::HcaPrefixAmbiguous]
        );
        assert!(rules("NCCL_IB_HCA", "=mlx5_1,mlx5_10").is_empty());
        // The driver's prefix names every one of its devices, as meant.
        assert!(rules("NCCL_IB_HCA", "mlx5").is_empty());
        assert_eq!(
            rules("NCCL_IB_HCA", "=mlx5_0,mlx5_1"),
            [Rule::HcaManagementNic]
        );
        assert!(rules("NCCL_IB_HCA", "^mlx5_0").is_empty());
        // Issue 11: without `=`, mlx5_1 also selects mlx5_10..19 the list never names.
        assert_eq!(
            rules("NCCL_IB_HCA", "mlx5_1,mlx5_2"),
            [Rule::HcaPrefixAmbiguous]
        );
        assert!(rules("NCCL_IB_HCA", "=mlx5_1,mlx5_2").is_empty());
    }

    #[test]
    fn socket_ifname_and_debug() {
        assert!(interface_list("^docker,lo").is_none());
        assert!(interface_list("=eth0").is_none());
        assert!(interface_list("eth0,").is_some());
        assert!(rules("NCCL_DEBUG", "info").is_empty());
        assert_eq!(rules("NCCL_DEBUG", "VERBOSE"), [Rule::NcclSyntax]);
    }

    fn on(platform: crate::platform::Platform) -> EnvFacts<'static> {
        EnvFacts {
            profile: Some(crate::platform::profile(platform)),
            ..EnvFacts::default()
        }
    }

    #[test]
    fn collnet_alone_is_gone_since_2_14() {
        let problem = selection("Ring,collnet", ALGORITHMS, "algorithm").unwrap();
        assert_eq!(
            problem,
            "`collnet` is gone since NCCL 2.14 (env.rst: valid 2.5-2.13); write CollNetDirect or CollNetChain"
        );
        for ok in ["CollNetDirect", "collnetchain", "NVLS,NVLSTree", "PAT"] {
            assert!(selection(ok, ALGORITHMS, "algorithm").is_none(), "{ok}");
        }
    }

    #[test]
    fn traffic_class_is_an_error_only_where_the_platform_owns_qos() {
        use crate::platform::Platform;
        // OCI's RoCE uses traffic class 41; a service level is 4 bits.
        for (name, value) in [("NCCL_IB_TC", "41"), ("NCCL_IB_SL", "3")] {
            assert!(rules(name, value).is_empty(), "{name} with no platform");
            let generic = check(name, value, &on(Platform::Generic));
            assert!(generic.is_empty(), "{name} on generic: {generic:?}");
            let ai: Vec<_> = check(name, value, &on(Platform::Aistudio))
                .into_iter()
                .map(|f| (f.rule, f.message))
                .collect();
            assert_eq!(
                ai,
                [(
                    Rule::IbTcSet,
                    format!(
                        "{name} must match the switches' QoS setup, which AIStudio owns: no need to set it, do not change it"
                    )
                )]
            );
        }
    }

    #[test]
    fn tcp_statement_and_qps_are_not_debugging_leftovers() {
        assert!(rules("NCCL_IB_DISABLE", "1").is_empty());
        let rdma = EnvFacts {
            rdma_on: true,
            ..EnvFacts::default()
        };
        let with_rdma: Vec<Rule> = check("NCCL_IB_DISABLE", "1", &rdma)
            .into_iter()
            .map(|f| f.rule)
            .collect();
        assert_eq!(
            with_rdma,
            [Rule::IbDisableWithRdma, Rule::DebugOnlyVariable]
        );
        assert_eq!(rules("NCCL_IB_DISABLE", "0"), [Rule::DebugOnlyVariable]);
        assert!(rules("NCCL_IB_QPS_PER_CONNECTION", "8").is_empty());
    }

    #[test]
    fn debugging_variables_unless_recommended() {
        assert_eq!(rules("NCCL_ALGO", "Ring"), [Rule::DebugOnlyVariable]);
        let facts = EnvFacts {
            profile: Some(crate::platform::profile(
                crate::platform::Platform::Aistudio,
            )),
            ..EnvFacts::default()
        };
        assert!(check("NCCL_ALGO", "Ring", &facts).is_empty());
    }

    #[test]
    fn a_long_value_is_quoted_cut_in_every_message() {
        let long = format!("Ring;{}", "x".repeat(500));
        let facts = EnvFacts {
            nccl: Some(Version::new(2, 18)),
            ..EnvFacts::default()
        };
        let found = check("NCCL_ALGO", &long, &facts);
        let quoting: Vec<_> = found
            .iter()
            .filter(|f| f.message.contains("NCCL_ALGO=`"))
            .collect();
        // The syntax finding and RDG200's per-function one both quote the value.
        assert_eq!(quoting.len(), 2, "{found:?}");
        for f in quoting {
            assert!(f.message.contains("xxx…`"), "{}", f.message);
            assert!(!f.message.contains(&"x".repeat(100)), "{}", f.message);
        }
        let range = check("NCCL_IB_TIMEOUT", &"9".repeat(300), &EnvFacts::default());
        let out_of_range: Vec<_> = range
            .iter()
            .filter(|f| f.rule == Rule::NcclValueRange)
            .collect();
        assert_eq!(out_of_range.len(), 1, "{range:?}");
        assert!(out_of_range[0].message.contains("999…`"), "{range:?}");
        assert!(out_of_range[0].message.len() < 200, "{range:?}");
        // The pieces of a value the syntax checks name are cut too: a collective, an
        // algorithm, an interface, an HCA item and the prefix hazard's names.
        let x = "x".repeat(500);
        for (name, value) in [
            ("NCCL_ALGO", format!("{x}:ring")),
            ("NCCL_ALGO", format!("ring,{x}")),
            ("NCCL_SOCKET_IFNAME", format!("eth0,{x} y")),
            ("NCCL_IB_HCA", format!("mlx5_1,{x}!")),
            ("NCCL_IB_HCA", format!("{x}1,{x}12")),
        ] {
            let found = check(name, &value, &EnvFacts::default());
            let quoting: Vec<_> = found.iter().filter(|f| f.message.contains("xxx")).collect();
            assert!(
                !quoting.is_empty(),
                "{name}={value}: nothing quotes it: {found:?}"
            );
            for f in quoting {
                assert!(
                    !f.message.contains(&"x".repeat(100)) && f.message.contains("xxx…"),
                    "{name}: {}",
                    f.message
                );
            }
        }
    }
}
