//! One verdict for the run, from everything its lines said, and the findings that
//! explain what is wrong with it.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::Expectation;
use super::calibration::{self, GpuGeneration, Health};
use super::evidence::{ErrorLine, Evidence, GidKind, Loc, Seen};
use super::formats::{self, NetKind, net_kind};
use super::rate::{self, round};
use super::sweep::{self, Plateau, Sweep};
use super::tables::{Row, Tables};
use super::version::{Range, Version};
use crate::diagnostics::escape::cut;
use crate::diagnostics::{Findings, Location, Rule};
use crate::model::pool::{Fabric, GidIndex};

/// What carried the inter-node data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// RDMA over InfiniBand, or NCCL's IB transport over a link layer the log does
    /// not show (`linkLayer` is then null).
    Ib,
    /// RDMA over Converged Ethernet.
    Roce,
    /// TCP: NCCL's Socket transport, or a TCP plugin.
    Socket,
    Unknown,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Ib => "ib",
            Transport::Roce => "roce",
            Transport::Socket => "socket",
            Transport::Unknown => "unknown",
        }
    }
}

/// One kind of error line, as the verdict lists it.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorReport {
    pub rule: &'static str,
    pub title: String,
    pub cause: String,
    /// The first such line's message.
    pub text: String,
    pub host: Option<String>,
    pub file: String,
    pub line: usize,
    /// How many lines said it.
    pub count: u64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HostVersion {
    pub host: Option<String>,
    /// As printed (`2.19.3+cuda12.3`).
    pub version: Option<String>,
    /// The versions whose formats the host's lines use, when none is printed.
    pub range: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Bandwidth {
    /// The plateau, GB/s (nccl-tests' bus bandwidth) or Gb/s (perftest): the higher of
    /// the flat stretch's top and the best of the largest sizes.
    pub value: f64,
    pub at_bytes: u64,
    /// The largest message size of the table.
    pub largest_bytes: u64,
    pub file: String,
    pub line: usize,
    /// Whether the value is judged: a healthy or high value always is; a low one only
    /// when the table reaches the sizes where even a healthy fabric is at its rate
    /// (256 MiB; 64 KiB for perftest), or sits on one node.
    pub judged: bool,
    /// The line rate, in the value's unit.
    pub line_rate: Option<f64>,
    /// From here the run is healthy: the calibration row's healthy share of the line
    /// rate (perftest: 0.96 of one NIC).
    pub expected: Option<f64>,
    /// Below this it is a finding: the row's plausible share (perftest: 0.8).
    pub plausible: Option<f64>,
    /// The value's share of the line rate.
    pub ratio: Option<f64>,
    /// Where the line rate came from.
    pub rate_source: Option<String>,
    /// The flat stretch of the curve, when it has one.
    pub plateau: Option<Plateau>,
    /// What the value reads as against the calibration row (nccl-tests only).
    pub health: Option<Health>,
    /// The expectation the value was judged against (nccl-tests with a line rate).
    pub calibration: Option<CalibrationReport>,
}

/// The row of [`calibration::ROWS`] a bandwidth was judged against, and why that row.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CalibrationReport {
    /// The row's id (`3plus`, `2node-hopper`, ...).
    pub row: &'static str,
    /// The published runs behind the row.
    pub source: &'static str,
    pub healthy_share: f64,
    pub plausible_share: f64,
    /// Above this share the line rate is wrong.
    pub ceiling_share: f64,
    /// From this share GPUDirect RDMA is inferred.
    pub gdr_share: f64,
    /// The GPU generation, and where it was read (`pool`: the pool's `gpu.model`;
    /// `log`: nccl-tests' `# Rank ... device` lines); null when neither says.
    pub gpu: Option<GpuGeneration>,
    pub gpu_from: Option<&'static str>,
    pub nodes: Option<u32>,
    /// `all_reduce`, ..., and where it was read (`log`: `Collective test starting`;
    /// `rows`: the rows' shape, size = count × type size with a reduction).
    pub collective: Option<String>,
    pub collective_from: Option<&'static str>,
    /// NCCL_ALGO as the log echoes it.
    pub algorithm: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PerftestReport {
    pub test: Option<String>,
    pub device: Option<String>,
    pub link_type: Option<String>,
    pub gid_index: Option<u32>,
    pub cuda: bool,
    /// Average bandwidth plateau, Gb/s, against one NIC's rate.
    pub bandwidth: Option<Bandwidth>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct InputStats {
    pub files: usize,
    pub lines: u64,
    pub bytes: u64,
    /// Lines longer than the per-line cap, read only up to it.
    pub long_lines: u64,
}

/// What a verdict on RDMA or GPUDirect rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// NCCL's channel lines (`via NET/IB/0/GDRDMA`, `via NET/Socket/0`), or its choice
    /// of the Socket network (`Using network Socket`).
    Channels,
    /// `Connected all rings, use ring PXN 0 GDR 1` and the per GPU/NIC GPUDirect lines.
    Rings,
    /// The per-HCA GPUDirect capability line (`GPU Direct RDMA Disabled for HCA`).
    Capability,
    /// perftest's result table (and its `--use_cuda` buffers).
    Perftest,
    /// nccl-tests' bus bandwidth: above what sockets reach (RDMA), or at a share of
    /// the line rate staging through host memory does not reach (GPUDirect); or, with
    /// no other line, below a tenth of it (sockets, or a broken fabric).
    Bandwidth,
    /// An error line: the IB transport did not start, or its queue pairs did not connect.
    Errors,
}

/// The run's verdict. The first nine fields are the contract of issue 15; the rest
/// say where they come from.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Verdict {
    /// The transport NCCL used, or chose when no line shows it carrying data (then
    /// `rdma` is null and `rdmaSelected` true).
    pub transport: Transport,
    /// Whether RDMA carried the inter-node data; null when the log does not show it.
    pub rdma: Option<bool>,
    /// Whether GPUDirect RDMA was used (NIC reading and writing GPU memory).
    pub gdr: Option<bool>,
    pub nccl_version: Option<String>,
    pub hcas: Vec<String>,
    pub gid_index: Option<u32>,
    pub errors: Vec<ErrorReport>,
    #[serde(rename = "busbwGBps")]
    pub busbw_gbps: Option<f64>,
    #[serde(rename = "expectedGBps")]
    pub expected_gbps: Option<f64>,
    /// What `rdma` rests on; `bandwidth` is an inference from the numbers alone.
    pub rdma_inferred_from: Option<Basis>,
    /// NCCL chose an RDMA network at init (`Using network IB`, `IBext_v8`, ...), whether
    /// or not a line shows data crossing it.
    pub rdma_selected: bool,
    /// What `gdr` rests on.
    pub gdr_inferred_from: Option<Basis>,
    /// `IB`, `RoCE`, `IB+RoCE`, or null when no line shows it.
    pub link_layer: Option<String>,
    /// Network plugins NCCL chose (`Using network X`) or sent data through (`via NET/X`).
    pub networks: Vec<String>,
    /// Interfaces of NCCL's Socket transport (an `ib*` one is TCP over IPoIB).
    pub socket_interfaces: Vec<String>,
    pub nodes: Option<u32>,
    pub single_node: bool,
    pub nccl_versions: Vec<HostVersion>,
    /// The versions the lines' formats allow, when none is printed.
    pub nccl_version_inferred: Option<String>,
    pub mixed_versions: bool,
    /// Every GID index the log shows, when it shows more than one.
    pub gid_indexes: Vec<u32>,
    pub bandwidth: Option<Bandwidth>,
    /// nccl-tests' tables, every row as printed, one entry per table.
    pub sweeps: Vec<Sweep>,
    /// Tables beyond the number kept, counted.
    pub sweeps_not_listed: u64,
    pub perftest: Option<PerftestReport>,
    /// How the verdict was reached, in words.
    pub notes: Vec<String>,
    /// Error lines beyond the number kept (counted, not listed).
    pub errors_not_listed: u64,
    pub input: InputStats,
}

/// Everything the verdict is decided from.
pub struct Inputs<'a> {
    pub ev: &'a Evidence,
    pub tables: &'a Tables,
    pub expect: Option<&'a Expectation>,
    /// The first file read: where a finding about the whole log points.
    pub first_file: Option<std::sync::Arc<str>>,
    pub stats: InputStats,
}

fn location(at: &Loc) -> Location {
    Location {
        file: at.0.clone(),
        line: at.1,
        column: 1,
    }
}

/// Decide, and report what is wrong.
pub fn decide(input: &Inputs<'_>, findings: &mut Findings) -> Verdict {
    let Inputs {
        ev, tables, expect, ..
    } = *input;
    let mut notes = Vec::new();
    let tcp_pool = expect.is_some_and(|e| e.fabric == Fabric::Tcp);

    // What the networks and channels say.
    let by_kind = |kind: NetKind| -> Option<&Seen> {
        let chosen = ev.networks.iter().filter(|(n, _)| net_kind(n) == kind);
        let sent = ev
            .channels
            .iter()
            .filter(|(n, _)| net_kind(n) == kind)
            .map(|(n, c)| (n, &c.all));
        sent.chain(chosen).map(|(_, s)| s).next()
    };
    let channels_of = |kind: NetKind| ev.channels.iter().filter(move |(n, _)| net_kind(n) == kind);
    let socket = by_kind(NetKind::Socket);
    let tcp_plugin = by_kind(NetKind::Tcp);
    let verbs = by_kind(NetKind::Verbs);
    let other_plugin = by_kind(NetKind::Other);
    let has_errors = |rules: &[Rule]| ev.errors.values().any(|e| rules.contains(&e.rule));
    let connect_failed = has_errors(&[Rule::NcclQpConnect, Rule::NcclVerbsResources]);
    let ib_unavailable = has_errors(&[Rule::NcclIbUnavailable]);
    let perftest_data = !tables.perftest.rows.is_empty();
    let perf_link = tables.perftest.link_type.as_deref();

    // Nodes: NCCL's `nNodes`, else the hosts of nccl-tests' rank lines or of NCCL's
    // own lines (a pod or a machine each), whichever is more.
    let count = |n: usize| (n > 0).then_some(n as u32);
    let nodes =
        ev.nnodes.keys().max().copied().or_else(|| {
            count(tables.hosts.len()).max(count(ev.log_hosts.len()).filter(|n| *n > 1))
        });
    let single_node = ev.channels.is_empty()
        && ev.log_hosts.len() <= 1
        && ((!ev.nnodes.is_empty() && ev.nnodes.keys().all(|n| *n == 1))
            || (ev.nnodes.is_empty() && tables.hosts.len() == 1));

    // Link layer.
    let ib_devices = ev.devices.values().filter(|d| d.link == "IB").count();
    let roce_devices = ev.devices.values().filter(|d| d.link == "RoCE").count();
    let ib = ib_devices > 0 || ev.qp_ib.is_some() || perf_link == Some("IB");
    let roce = roce_devices > 0 || ev.qp_roce.is_some() || perf_link == Some("Ethernet");
    let link_layer = match (ib, roce) {
        (true, true) => Some("IB+RoCE".to_owned()),
        (true, false) => Some("IB".to_owned()),
        (false, true) => Some("RoCE".to_owned()),
        (false, false) => None,
    };
    let verbs_transport = if roce && (!ib || roce_devices > ib_devices) {
        Transport::Roce
    } else {
        Transport::Ib
    };

    let tcp_only = tcp_plugin.is_some() && verbs.is_none();
    let socket_used = !single_node && (socket.is_some() || tcp_only);
    let verbs_channels: Vec<_> = channels_of(NetKind::Verbs).collect();
    let rdma_selected = ev.networks.keys().any(|n| net_kind(n) == NetKind::Verbs);
    let mut transport = if socket_used {
        Transport::Socket
    } else if verbs.is_some() || perftest_data || perf_link.is_some() {
        verbs_transport
    } else {
        Transport::Unknown
    };
    // RDMA is shown carrying data by its channel lines or a perftest table; `Using
    // network IB` is only the choice NCCL made at init (three real logs of failed runs
    // read so), so alone it leaves the verdict open for the bandwidth to decide.
    let (mut rdma, mut rdma_from) = if single_node {
        (None, None)
    } else if socket_used {
        (Some(false), Some(Basis::Channels))
    } else if verbs.is_some() && connect_failed {
        (Some(false), Some(Basis::Errors))
    } else if !verbs_channels.is_empty() {
        (Some(true), Some(Basis::Channels))
    } else if perftest_data {
        (Some(true), Some(Basis::Perftest))
    } else if ib_unavailable {
        (Some(false), Some(Basis::Errors))
    } else {
        (None, None)
    };
    if rdma == Some(false) && connect_failed && !socket_used {
        notes.push(
            "NCCL chose RDMA but could not connect its queue pairs: no data moved over it".into(),
        );
    }
    if other_plugin.is_some() && rdma.is_none() {
        let names: Vec<&str> = ev
            .networks
            .keys()
            .chain(ev.channels.keys())
            .map(String::as_str)
            .filter(|n| net_kind(n) == NetKind::Other)
            .collect();
        notes.push(format!(
            "network plugin {}: rdmagen does not judge plugins other than IB, IBext and Socket",
            names.join(", ")
        ));
    }

    // GPUDirect RDMA.
    let (mut gdr, mut gdr_from) = if single_node {
        (None, None)
    } else if socket_used {
        (Some(false), Some(Basis::Channels))
    } else if !verbs_channels.is_empty() {
        (
            Some(verbs_channels.iter().all(|(_, c)| c.without_gdr.is_none())),
            Some(Basis::Channels),
        )
    } else if ev.rings_gdr_off.is_some() || ev.gdr_gpu_off.is_some() {
        (Some(false), Some(Basis::Rings))
    } else if ev.rings_gdr_on.is_some() || ev.gdr_gpu_on.is_some() {
        (Some(true), Some(Basis::Rings))
    } else if ev.gdr_hca_off.is_some() {
        (Some(false), Some(Basis::Capability))
    } else if perftest_data && tables.perftest.cuda {
        (Some(true), Some(Basis::Perftest))
    } else {
        (None, None)
    };

    // Line rate and bandwidth.
    let line = line_rate(ev, expect);
    let tcp_path = tcp_pool || tcp_plugin.is_some();
    let run = calibration_run(ev, tables, expect, nodes, link_layer.as_deref());
    let mut bandwidth = tables
        .rows
        .last_key_value()
        .map(|_| nccl_bandwidth(tables, line.as_ref(), &run.0, &run.1));
    if let Some(b) = bandwidth.as_mut() {
        if single_node || nodes == Some(1) {
            b.judged = false;
            b.health = None;
            notes.push("the nccl-tests table ran on one node: its bus bandwidth is NVLink/PCIe, not the network".into());
        } else if !b.judged {
            notes.push(format!(
                "the table stops at {} bytes, below {} MiB, and its value is not high: a short sweep withholds a low verdict (sweep to 8 GiB: -e 8G)",
                b.largest_bytes,
                rate::PLATEAU_MIN_BYTES >> 20
            ));
        }
        match (b.health, &b.calibration) {
            (Some(Health::AboveLineRate), Some(c)) => notes.push(format!(
                "the bus bandwidth is {:.2} of the line rate, above the {:.2} calibration row `{}` allows: the line rate is wrong (the pool's label understates the NICs), or NCCL's tree or NVLS went past the network (force NCCL_ALGO=Ring to measure it)",
                b.ratio.unwrap_or(0.0),
                c.ceiling_share,
                c.row
            )),
            (Some(Health::BelowHealthy), Some(c)) => notes.push(format!(
                "the bus bandwidth is {:.2} of the line rate: RDMA works, short of the {:.2} a healthy fabric reaches (calibration row `{}`)",
                b.ratio.unwrap_or(0.0),
                c.healthy_share,
                c.row
            )),
            _ => {}
        }
        if let Some(p) = &b.plateau
            && let Some((size, value, share)) = sweep::fall_after(&tables.rows, p)
        {
            notes.push(format!(
                "the bus bandwidth falls after its plateau ({:.2} GB/s at most, {} to {} bytes): {value:.2} GB/s at {size} bytes, {:.0}% lower. A healthy sweep holds its plateau to the largest size; a fall there comes under sustained load: congestion (PFC pauses or ECN marks on RoCE, a shared uplink) or the tuner changing algorithm or protocol at that size (run again with NCCL_ALGO and NCCL_PROTO fixed to compare). The plateau is what is judged",
                p.max_gbps,
                p.from_bytes,
                p.to_bytes,
                share * 100.0
            ));
        }
    }
    let evidence = bandwidth
        .as_ref()
        .filter(|_| !single_node && nodes != Some(1));
    // Bandwidth no socket reaches is RDMA, whatever lines the log lacks; bandwidth
    // staging through host memory cannot reach is GPUDirect.
    let socket_bound = rate::SOCKET_CEILING_GBPS
        * if nodes.is_some_and(|n| n >= 3) {
            1.0
        } else {
            2.0
        };
    let peak = tables.rows.values().map(|r| r.value).fold(0.0, f64::max);
    if let Some(b) = evidence
        && !tcp_path
    {
        if peak > socket_bound && rdma.is_none() {
            rdma = Some(true);
            rdma_from = Some(Basis::Bandwidth);
            if transport == Transport::Unknown {
                transport = match expect.map(|e| e.fabric) {
                    Some(Fabric::Roce) => Transport::Roce,
                    Some(Fabric::Ib) => Transport::Ib,
                    _ => Transport::Unknown,
                };
            }
            notes.push(format!(
                "RDMA inferred from the bandwidth: {} GB/s bus bandwidth is above the {} GB/s NCCL's socket transport reaches{}",
                round(peak),
                socket_bound,
                if rdma_selected {
                    " (NCCL chose an RDMA network; no channel line shows it)"
                } else {
                    " (the log has no NET line)"
                }
            ));
        } else if b.judged
            && b.ratio.is_some_and(|r| r < rate::SOCKET_SHARE)
            && peak <= socket_bound
            && transport == Transport::Unknown
            && rdma.is_none()
        {
            rdma = Some(false);
            rdma_from = Some(Basis::Bandwidth);
            transport = Transport::Socket;
            notes.push("no NET line in the log: sockets inferred from the bandwidth, below a tenth of the line rate at every size (or a fabric so broken that RDMA crawls)".into());
        }
        if gdr.is_none()
            && rdma == Some(true)
            && let (Some(ratio), Some(c)) = (b.ratio, &b.calibration)
            && ratio >= c.gdr_share
        {
            gdr = Some(true);
            gdr_from = Some(Basis::Bandwidth);
            notes.push(format!(
                "GPUDirect RDMA inferred from the bandwidth: {ratio:.2} of the line rate, where staging through host memory gives about 2/3 (NVIDIA/nccl#412)"
            ));
        }
    }
    if rdma.is_none() && rdma_selected && !single_node {
        notes.push("NCCL selected an RDMA network at init (`Using network`), but no channel line (`via NET/IB/...`) shows it carrying data".into());
    }
    let perf_rate = line.as_ref().map(|l| (l.nic_gbps, l.source.clone()));
    let perftest = (tables.perftest.first.is_some() || perftest_data).then(|| PerftestReport {
        test: tables.perftest.test.clone(),
        device: tables.perftest.device.clone(),
        link_type: tables.perftest.link_type.clone(),
        gid_index: tables.perftest.gid_index,
        cuda: tables.perftest.cuda,
        bandwidth: tables
            .perftest
            .rows
            .last_key_value()
            .map(|_| plateau(&tables.perftest.rows, rate::PERFTEST_MIN_BYTES, perf_rate)),
    });

    // Versions.
    let versions = versions(ev);
    // Status 12 on RoCE reads differently (formats::wc_status_cause_roce).
    let roce = transport == Transport::Roce
        || link_layer.as_deref() == Some("RoCE")
        || expect.is_some_and(|e| e.fabric == Fabric::Roce);

    // Devices and GIDs.
    let mut hcas: Vec<String> = ev.devices.keys().cloned().collect();
    if let Some(d) = &tables.perftest.device
        && !hcas.contains(d)
    {
        hcas.push(d.clone());
    }
    hcas.sort_by(|a, b| natural(a, b));
    let gid_indexes: Vec<u32> = ev.gids.keys().copied().collect();
    let env_gid: Vec<u32> = ev
        .env
        .get("NCCL_IB_GID_INDEX")
        .map(|v| v.keys().filter_map(|s| s.parse().ok()).collect())
        .unwrap_or_default();
    let gid_index = match (gid_indexes.as_slice(), env_gid.as_slice()) {
        ([one], _) => Some(*one),
        ([], [one]) => Some(*one),
        ([], []) => tables.perftest.gid_index,
        _ => None,
    };

    let verdict = Verdict {
        transport,
        rdma,
        gdr,
        nccl_version: (versions.printed.len() == 1)
            .then(|| versions.printed.values().next().cloned())
            .flatten(),
        hcas,
        gid_index,
        errors: ev
            .errors
            .iter()
            .map(|(key, e)| report(key, e, roce))
            .collect(),
        busbw_gbps: bandwidth.as_ref().map(|b| b.value),
        expected_gbps: bandwidth.as_ref().and_then(|b| b.expected),
        rdma_inferred_from: rdma_from,
        rdma_selected,
        gdr_inferred_from: gdr_from,
        link_layer,
        networks: ev
            .networks
            .keys()
            .chain(ev.channels.keys())
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        socket_interfaces: ev.socket_interfaces.keys().cloned().collect(),
        nodes,
        single_node,
        nccl_versions: versions.list.clone(),
        nccl_version_inferred: versions.inferred.map(|r| r.to_string()),
        mixed_versions: versions.mixed.is_some(),
        gid_indexes: if gid_indexes.len() > 1 {
            gid_indexes.clone()
        } else {
            Vec::new()
        },
        bandwidth: bandwidth.clone(),
        sweeps: tables.sweeps.clone(),
        sweeps_not_listed: tables.sweeps_not_listed,
        perftest: perftest.clone(),
        notes,
        errors_not_listed: ev.errors_dropped,
        input: input.stats.clone(),
    };

    // Findings.
    // A finding about the log as a whole points at its start: SARIF consumers such as
    // GitHub code scanning refuse a result without a file.
    let start = input.first_file.clone().map(|file| Location {
        file,
        line: 1,
        column: 1,
    });
    report_errors(ev, tcp_pool, roce, start.clone(), findings);
    if transport == Transport::Socket && socket_used && !tcp_pool {
        let at = channels_of(NetKind::Socket)
            .map(|(_, c)| &c.all)
            .chain(socket)
            .chain(tcp_plugin)
            .next();
        findings.push(
            Rule::NcclSocketTransport,
            socket_message(ev, verbs.is_some()),
            at.map(|s| location(&s.first)),
        );
    }
    if gdr == Some(false) && !socket_used {
        let (at, what) = no_gdr_evidence(ev, &verbs_channels);
        findings.push(Rule::NcclNoGdr, format!("{what}: the NIC does not read and write GPU memory directly, so data is staged through host memory (about 2/3 of the bandwidth, sjeaugey in NVIDIA/nccl#412). Usually nvidia-peermem (or dma-buf support) is missing on the node, PCIe ACS redirects peer traffic, the NIC is far from the GPU, or NCCL_NET_GDR_LEVEL limits it; the GPU Operator loads nvidia-peermem with driver.rdma.enabled=true"), at.as_ref().map(location));
    }
    gid_findings(ev, tables, expect, findings);
    if let Some(b) = &bandwidth {
        nccl_bandwidth_finding(b, tcp_pool, findings);
    }
    if let Some(b) = perftest.as_ref().and_then(|p| p.bandwidth.as_ref()) {
        bandwidth_finding(
            b,
            "ib_write_bw's average bandwidth on one NIC",
            "Gb/s",
            tcp_pool,
            findings,
        );
    }
    if let Some((at, message)) = &versions.mixed {
        findings.push(
            Rule::NcclVersionMismatch,
            message.clone(),
            Some(location(at)),
        );
    }
    if ev.errors.is_empty()
        && let Some((msg, at)) = &ev.unwound
    {
        findings.push(
            Rule::NcclOtherError,
            format!("NCCL returned an error (`{msg}`) and the log holds no WARN line saying why: NCCL_DEBUG=WARN or INFO prints it"),
            Some(location(at)),
        );
    }
    if single_node {
        let at = ev
            .nnodes
            .get(&1)
            .map(|s| location(&s.first))
            .or(start.clone());
        findings.push(Rule::NcclUndetermined, "the run was on a single node (nNodes 1): no data crossed the network, so it shows nothing about RDMA; run across at least two nodes".to_owned(), at);
    } else if verdict.rdma.is_none() {
        let (message, at) = if let Some(s) = other_plugin {
            (
                format!(
                    "NCCL used the network plugin `{}`, which rdmagen does not judge: whether it is RDMA depends on the plugin",
                    ev.networks
                        .iter()
                        .chain(ev.channels.iter().map(|(n, c)| (n, &c.all)))
                        .find(|(n, _)| net_kind(n) == NetKind::Other)
                        .map_or("?", |(n, _)| n.as_str())
                ),
                Some(location(&s.first)),
            )
        } else if let Some(at) = &tables.perftest.first {
            ("perftest's output has no result table: the test did not run to the end, so it shows nothing about the data path".to_owned(), Some(location(at)))
        } else if let Some((name, s)) = ev
            .networks
            .iter()
            .find(|(n, _)| net_kind(n) == NetKind::Verbs)
        {
            (
                format!(
                    "NCCL selected the RDMA network `{}` at init (`Using network`), but no channel line (`via NET/{}/...`) shows data crossing it, and no bandwidth shows it either: the choice is made before any connection, so failed runs print it too; run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET to log the channels, or give the nccl-tests table",
                    cut(name, 40),
                    cut(name, 40)
                ),
                Some(location(&s.first)),
            )
        } else {
            // Nothing shows it: the finding is about the log as a whole.
            ("the log does not say which network carried the data: no `Using network`, `via NET/` or `NET/IB` line (a run without NCCL_DEBUG=INFO says nothing about it, which is not a fallback either); run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV".to_owned(), start)
        };
        findings.push(Rule::NcclUndetermined, message, at);
    }
    verdict
}

/// A NIC rate to judge bandwidth against.
struct LineRate {
    total_gbps: f64,
    nic_gbps: f64,
    source: String,
}

/// From the pool's label, else the slowest host's NIC speeds in the log (2.27+).
fn line_rate(ev: &Evidence, expect: Option<&Expectation>) -> Option<LineRate> {
    if let Some(e) = expect
        && let Some(label) = &e.label
        && let Some(nics) = rate::nics(label)
    {
        return Some(LineRate {
            total_gbps: nics.iter().sum(),
            nic_gbps: nics.iter().copied().fold(0.0, f64::max),
            source: format!("pool `{}`'s network label `{label}`", e.pool),
        });
    }
    let per_host = ev.hosts.values().filter(|h| !h.speeds.is_empty()).map(|h| {
        (
            h.speeds.values().sum::<u64>(),
            h.speeds.values().copied().max().unwrap_or(0),
        )
    });
    let (total, nic) = per_host.min_by_key(|(total, _)| *total)?;
    Some(LineRate {
        total_gbps: total as f64 / 1000.0,
        nic_gbps: nic as f64 / 1000.0,
        source: "the NIC speeds the log's `NET/IB: [n] ... speed=` lines give".into(),
    })
}

/// The best value among the rows within [`rate::PLATEAU_SPAN`] of the largest size.
fn plateau(
    rows: &BTreeMap<u64, Row>,
    min_bytes: u64,
    line_rate: Option<(f64, String)>,
) -> Bandwidth {
    let largest = rows.last_key_value().map_or(0, |(k, _)| *k);
    let (at_bytes, best) = rows
        .range(largest / rate::PLATEAU_SPAN..)
        .max_by(|a, b| a.1.value.total_cmp(&b.1.value))
        .map(|(k, r)| (*k, r.clone()))
        .unwrap_or((
            largest,
            Row {
                value: 0.0,
                at: (std::sync::Arc::from(""), 0),
            },
        ));
    let (line_rate, source) = match line_rate {
        Some((r, s)) if r > 0.0 => (Some(r), Some(s)),
        _ => (None, None),
    };
    Bandwidth {
        value: round(best.value),
        at_bytes,
        largest_bytes: largest,
        file: best.at.0.to_string(),
        line: best.at.1,
        judged: largest >= min_bytes,
        line_rate: line_rate.map(round),
        expected: line_rate.map(|r| round(r * rate::PEAK_SHARE)),
        plausible: line_rate.map(|r| round(r * rate::PLAUSIBLE_SHARE)),
        ratio: line_rate.map(|r| (best.value / r * 1000.0).round() / 1000.0),
        rate_source: source,
        plateau: None,
        health: None,
        calibration: None,
    }
}

/// What the calibration row is chosen by, and where each fact was read.
fn calibration_run(
    ev: &Evidence,
    tables: &Tables,
    expect: Option<&Expectation>,
    nodes: Option<u32>,
    link_layer: Option<&str>,
) -> (calibration::Run, CalibrationReport) {
    let from_pool = expect
        .and_then(|e| e.gpu_model.as_deref())
        .and_then(GpuGeneration::of);
    let from_log = tables.gpus.iter().find_map(|g| GpuGeneration::of(g));
    let (gpu, gpu_from) = match (from_pool, from_log) {
        (Some(g), _) => (Some(g), Some("pool")),
        (None, Some(g)) => (Some(g), Some("log")),
        _ => (None, None),
    };
    let (collective, collective_from) = match &tables.collective {
        Some(c) => (Some(c.clone()), Some("log")),
        None if looks_like_all_reduce(&tables.sweeps) => {
            (Some("all_reduce".to_owned()), Some("rows"))
        }
        None => (None, None),
    };
    let algorithm = ev
        .env
        .get("NCCL_ALGO")
        .filter(|v| v.len() == 1)
        .and_then(|v| v.keys().next())
        .map(|a| a.to_ascii_lowercase());
    let fabric = expect
        .map(|e| e.fabric)
        .filter(|f| f.is_rdma())
        .or(match link_layer {
            Some("IB") => Some(Fabric::Ib),
            Some("RoCE") => Some(Fabric::Roce),
            _ => None,
        });
    let run = calibration::Run {
        fabric,
        gpu,
        nodes,
        collective: collective.clone(),
        algorithm: algorithm.clone(),
        nics: expect
            .and_then(|e| e.label.as_deref())
            .and_then(rate::nics)
            .map(|n| n.len()),
    };
    let row = calibration::row_for(&run);
    let report = CalibrationReport {
        row: row.id,
        source: row.source,
        healthy_share: row.healthy,
        plausible_share: row.plausible,
        ceiling_share: row.ceiling,
        gdr_share: row.gdr,
        gpu,
        gpu_from,
        nodes,
        collective,
        collective_from,
        algorithm,
    };
    (run, report)
}

/// All-reduce's rows: a reduction, no root, and size = count × the type's size (an
/// all_gather's or reduce_scatter's size is count × type × ranks; NT@src/all_reduce.cu).
fn looks_like_all_reduce(sweeps: &[Sweep]) -> bool {
    let width = |t: &str| match t {
        "int8" | "uint8" | "char" => Some(1),
        "half" | "bfloat16" | "fp16" | "bf16" => Some(2),
        "float" | "int32" | "uint32" | "int" => Some(4),
        "double" | "int64" | "uint64" => Some(8),
        _ => None,
    };
    let rows: Vec<_> = sweeps.iter().flat_map(|s| &s.rows).collect();
    !rows.is_empty()
        && rows.iter().all(|r| {
            r.redop.as_deref().is_some_and(|o| o != "none")
                && r.root.is_none_or(|root| root == -1)
                && r.data_type
                    .as_deref()
                    .and_then(width)
                    .zip(r.count)
                    .is_some_and(|(w, c)| c * w == r.size)
        })
}

/// nccl-tests' bus bandwidth: the flat stretch (or the best of the largest sizes),
/// read against the calibration row for the run.
fn nccl_bandwidth(
    tables: &Tables,
    line: Option<&LineRate>,
    run: &calibration::Run,
    report: &CalibrationReport,
) -> Bandwidth {
    let rows = &tables.rows;
    let mut b = plateau(rows, rate::PLATEAU_MIN_BYTES, None);
    let flat = sweep::plateau(rows);
    if let Some(p) = &flat
        && p.max_gbps > b.value
        && let Some((size, row)) = rows
            .range(p.from_bytes..=p.to_bytes)
            .max_by(|a, b| a.1.value.total_cmp(&b.1.value))
    {
        b.value = round(row.value);
        b.at_bytes = *size;
        b.file = row.at.0.to_string();
        b.line = row.at.1;
    }
    b.plateau = flat;
    let full_sweep = b.judged;
    if let Some(l) = line.filter(|l| l.total_gbps > 0.0) {
        let line_rate = l.total_gbps / 8.0;
        let row = calibration::row_for(run);
        let ratio = (b.value / line_rate * 1000.0).round() / 1000.0;
        let health = calibration::health(row, b.value / line_rate, full_sweep);
        b.line_rate = Some(round(line_rate));
        b.expected = Some(round(line_rate * row.healthy));
        b.plausible = Some(round(line_rate * row.plausible));
        b.ratio = Some(ratio);
        b.rate_source = Some(l.source.clone());
        b.health = Some(health);
        b.judged = full_sweep || health != Health::NotJudged;
        b.calibration = Some(report.clone());
    } else {
        b.judged = full_sweep;
    }
    b
}

/// RDG146 for a degraded or broken nccl-tests plateau, naming the calibration row.
fn nccl_bandwidth_finding(b: &Bandwidth, tcp_pool: bool, findings: &mut Findings) {
    let (Some(ratio), Some(line_rate), Some(health), Some(c)) =
        (b.ratio, b.line_rate, b.health, &b.calibration)
    else {
        return;
    };
    if tcp_pool || !b.judged || !matches!(health, Health::Degraded | Health::Broken) {
        return;
    }
    let why = if health == Health::Broken {
        "below a tenth of the line rate: TCP sockets rather than RDMA, or a fabric so broken that RDMA crawls (NCCL over IPoIB reached 3.15 of 200 GB/s on the nodes that reach 187 over RDMA)"
    } else if ratio >= 0.5 {
        "short of what the fabric reaches: typically no GPUDirect RDMA (about 0.64 of line rate), fewer NICs in use than the pool has, GPUs and NICs on different PCIe switches or NUMA nodes, or a congested RoCE fabric"
    } else {
        "far below what the fabric reaches: NICs missing or down, RDMA on part of the ranks only, or a badly congested or misconfigured fabric"
    };
    let source = b.rate_source.as_deref().unwrap_or("the line rate");
    findings.at(
        Rule::NcclLowBandwidth,
        format!(
            "the bus bandwidth plateau is {} GB/s at {} bytes, {:.0}% of the {} GB/s line rate ({source}); calibration row `{}` (healthy from {:.0}%, a finding below {:.0}%; {}): {why}",
            b.value,
            b.at_bytes,
            ratio * 100.0,
            line_rate,
            c.row,
            c.healthy_share * 100.0,
            c.plausible_share * 100.0,
            c.source,
        ),
        Location {
            file: b.file.as_str().into(),
            line: b.line,
            column: 1,
        },
    );
}

fn bandwidth_finding(
    b: &Bandwidth,
    what: &str,
    unit: &str,
    tcp_pool: bool,
    findings: &mut Findings,
) {
    let (Some(ratio), Some(line_rate), Some(plausible), true) =
        (b.ratio, b.line_rate, b.plausible, b.judged)
    else {
        return;
    };
    if tcp_pool || ratio >= rate::PLAUSIBLE_SHARE {
        return;
    }
    let why = if ratio < rate::SOCKET_SHARE {
        "below a tenth of the line rate: almost certainly TCP sockets, not RDMA (NCCL over IPoIB reached 3.15 of 200 GB/s on the same nodes that reach 187 over RDMA)"
    } else if ratio >= 0.5 {
        "short of what the fabric reaches: typically no GPUDirect RDMA (about 0.64 of line rate), fewer NICs in use than the pool has, GPUs and NICs on different PCIe switches or NUMA nodes, or a congested RoCE fabric"
    } else {
        "far below what the fabric reaches: NICs missing or down, RDMA on part of the ranks only, or a badly congested or misconfigured fabric"
    };
    let source = b.rate_source.as_deref().unwrap_or("the line rate");
    findings.at(
        Rule::NcclLowBandwidth,
        format!(
            "{what} is {} {unit} at {} bytes, {:.0}% of the {} {unit} line rate ({source}); a healthy fabric reaches about {:.0}% and below {} {unit} ({:.0}%) is not plausible: {why}",
            b.value,
            b.at_bytes,
            ratio * 100.0,
            line_rate,
            rate::PEAK_SHARE * 100.0,
            plausible,
            rate::PLAUSIBLE_SHARE * 100.0,
        ),
        Location {
            file: b.file.as_str().into(),
            line: b.line,
            column: 1,
        },
    );
}

fn report(key: &str, e: &ErrorLine, roce: bool) -> ErrorReport {
    ErrorReport {
        rule: e.rule.info().id,
        title: e.title.clone(),
        cause: cause(key, e, roce),
        text: e.text.clone(),
        host: e.host.clone(),
        file: e.first.0.to_string(),
        line: e.first.1,
        count: e.count,
    }
}

/// An error's cause, in the order the maintainers find them: a completion with status
/// 12 (RETRY_EXC_ERR) on RoCE is first a GID index or RoCE version the peers cannot
/// route (NVIDIA/nccl#426), and only then a lossy fabric or a short timeout.
fn cause(key: &str, e: &ErrorLine, roce: bool) -> String {
    if roce && (key == "completion:Some(12)" || key == "perftest-completion:Some(12)") {
        formats::wc_status_cause_roce(12).to_owned()
    } else {
        e.cause.clone()
    }
}

/// Every kind of error line, once, at its first line. On a pool whose fabric is tcp
/// an IB transport that did not start is what the pool says, not an error.
fn report_errors(
    ev: &Evidence,
    tcp_pool: bool,
    roce: bool,
    start: Option<Location>,
    findings: &mut Findings,
) {
    for (key, e) in &ev.errors {
        if tcp_pool && e.rule == Rule::NcclIbUnavailable {
            continue;
        }
        let count = if e.count > 1 {
            format!(" ({} lines like it)", e.count)
        } else {
            String::new()
        };
        let host = e
            .host
            .as_deref()
            .map(|h| format!(" on {h}"))
            .unwrap_or_default();
        findings.at(
            e.rule,
            format!("{}{host}{count}: {}", e.title, cause(key, e, roce)),
            location(&e.first),
        );
    }
    if ev.errors_dropped > 0 {
        findings.push(
            Rule::NcclOtherError,
            format!(
                "{} more error lines of other kinds than the {} listed were counted, not listed",
                ev.errors_dropped,
                super::evidence::MAX_ERRORS
            ),
            start,
        );
    }
}

/// `partly`: other ranks did use RDMA.
fn socket_message(ev: &Evidence, partly: bool) -> String {
    let mut why = Vec::new();
    for (key, what) in [
        ("ib-disable", "NCCL_IB_DISABLE turned the IB transport off"),
        ("libibverbs", "the image has no libibverbs"),
        ("ib-no-device", "the IB transport found no device"),
        ("open-device", "the IB transport could not open a device"),
    ] {
        if let Some(e) = ev.errors.get(key) {
            why.push(format!("{what} ({}:{})", e.first.0, e.first.1));
        }
    }
    let ipoib: Vec<&str> = ev
        .socket_interfaces
        .keys()
        .map(String::as_str)
        .filter(|n| n.starts_with("ib"))
        .collect();
    let mut message = if partly {
        "some ranks sent their inter-node data over TCP sockets while others used RDMA, so the whole collective runs at the sockets' pace".to_owned()
    } else {
        "NCCL carried the inter-node data over TCP sockets, not RDMA".to_owned()
    };
    if !ipoib.is_empty() {
        message += &format!(
            " (over IPoIB: {}, InfiniBand hardware but TCP)",
            ipoib.join(", ")
        );
    }
    if why.is_empty() {
        message += ": the log shows no reason; check that the pod requests the pool's RDMA resource, that the image has the RDMA user space (`rdmagen image-check`), and that NCCL_IB_HCA matches the node's devices";
    } else {
        message += &format!(" because {}", why.join(", and "));
    }
    message
}

/// Where GPUDirect RDMA shows as off, and how.
fn no_gdr_evidence(
    ev: &Evidence,
    channels: &[(&String, &super::evidence::Channels)],
) -> (Option<Loc>, String) {
    let total: u64 = channels.iter().map(|(_, c)| c.all.count).sum();
    let without: u64 = channels
        .iter()
        .map(|(_, c)| c.without_gdr.as_ref().map_or(0, |s| s.count))
        .sum();
    if let Some(first) = channels.iter().find_map(|(_, c)| c.without_gdr.as_ref()) {
        return (
            Some(first.first.clone()),
            format!("{without} of {total} NET channel lines lack /GDRDMA"),
        );
    }
    if let Some(s) = &ev.rings_gdr_off {
        return (
            Some(s.first.clone()),
            "NCCL reports `GDR 0` for its rings".into(),
        );
    }
    if let Some(s) = &ev.gdr_gpu_off {
        return (
            Some(s.first.clone()),
            "NCCL disabled GPU Direct RDMA between GPUs and their NICs".into(),
        );
    }
    if let Some(s) = &ev.gdr_hca_off {
        let names: Vec<&str> = ev.gdr_hca_off_names.iter().map(String::as_str).collect();
        return (
            Some(s.first.clone()),
            format!("GPU Direct RDMA is disabled for HCA {}", names.join(", ")),
        );
    }
    (None, "GPUDirect RDMA was not used".into())
}

/// RoCE GIDs that cannot be routed, and GID indexes that differ from the pool's.
fn gid_findings(
    ev: &Evidence,
    tables: &Tables,
    expect: Option<&Expectation>,
    findings: &mut Findings,
) {
    for (index, g) in &ev.gids {
        if g.kind == GidKind::LinkLocal {
            findings.at(
                Rule::NcclQpConnect,
                format!("the RoCE queue pairs use GID index {index}, a link-local GID (fe80::/64): it reaches only the local L2 segment and RoCE v2 cannot route it, so connections across subnets fail (NCCL before 2.21 uses NCCL_IB_GID_INDEX, default 0); set the pool's `gidIndex` to the RoCE v2 IPv4 index `show_gids` lists (`rdmagen detect`), or `auto` on NCCL 2.21 and later"),
                location(&g.seen.first),
            );
        }
    }
    if let Some(at) = &tables.perftest.link_local_gid {
        findings.at(
            Rule::NcclQpConnect,
            "ib_write_bw uses a link-local GID (fe80::): it does not route across subnets; give -x the RoCE v2 IPv4 GID index `show_gids` lists".to_owned(),
            location(at),
        );
    }
    let Some(Expectation {
        gid_index: Some(GidIndex::Index(want)),
        pool,
        fabric: Fabric::Roce,
        ..
    }) = expect
    else {
        return;
    };
    let shown = ev
        .gids
        .iter()
        .map(|(i, g)| (*i, g.seen.first.clone(), "the queue pairs use"))
        .chain(ev.env.get("NCCL_IB_GID_INDEX").into_iter().flat_map(|v| {
            v.iter().filter_map(|(s, at)| {
                Some((s.parse::<u32>().ok()?, at.clone(), "NCCL_IB_GID_INDEX is"))
            })
        }))
        .chain(
            tables
                .perftest
                .gid_index
                .zip(tables.perftest.first.clone())
                .map(|(i, at)| (i, at, "ib_write_bw uses")),
        );
    for (index, at, what) in shown {
        if index != *want {
            findings.at(
                Rule::NcclQpConnect,
                format!("{what} GID index {index}, but pool `{pool}` says `gidIndex: {want}`: the job did not get the pool's NCCL_IB_GID_INDEX (an image ENV or the platform sets another), or the pool is wrong for these nodes (`rdmagen detect` reads the GID table)"),
                location(&at),
            );
            break;
        }
    }
}

/// What the versions say.
struct Versions {
    /// Distinct printed versions → their text.
    printed: BTreeMap<Version, String>,
    list: Vec<HostVersion>,
    inferred: Option<Range>,
    /// Where hosts disagree, and the finding's message.
    mixed: Option<(Loc, String)>,
}

fn versions(ev: &Evidence) -> Versions {
    let mut printed = BTreeMap::new();
    let mut list = Vec::new();
    // Each host's claim: its printed version, or the range its formats allow.
    let mut claims: Vec<(Range, String, Loc)> = Vec::new();
    for (host, h) in &ev.hosts {
        for (v, (text, _)) in &h.printed {
            printed.entry(*v).or_insert_with(|| text.clone());
        }
        let range = h.range.as_ref().filter(|_| !h.conflict);
        if h.printed.is_empty() && range.is_none() {
            continue;
        }
        if list.len() < 64 {
            list.push(HostVersion {
                host: Some(host.clone()),
                version: h.printed.values().next().map(|(t, _)| t.clone()),
                range: range
                    .filter(|_| h.printed.is_empty())
                    .map(|(r, _, _)| r.to_string()),
            });
        }
        for (v, (text, at)) in &h.printed {
            claims.push((
                Range::point(*v),
                format!("{host} runs {text} ({}:{})", at.0, at.1),
                at.clone(),
            ));
        }
        if h.printed.is_empty()
            && let Some((r, at, source)) = range
        {
            claims.push((
                *r,
                format!(
                    "{host}'s lines are in the format of NCCL {r} ({source}; {}:{})",
                    at.0, at.1
                ),
                at.clone(),
            ));
        }
    }
    for (v, (text, at)) in &ev.unattributed {
        printed.entry(*v).or_insert_with(|| text.clone());
        list.push(HostVersion {
            host: None,
            version: Some(text.clone()),
            range: None,
        });
        claims.push((
            Range::point(*v),
            format!("a process prints NCCL {text} ({}:{})", at.0, at.1),
            at.clone(),
        ));
    }
    // Hosts that claim the same are one claim: the pairs below are among few.
    let mut distinct = BTreeSet::new();
    claims.retain(|(r, _, _)| distinct.insert((r.lo, r.hi)));
    let mut mixed = None;
    'pairs: for (i, (a, what_a, _)) in claims.iter().enumerate() {
        for (b, what_b, at_b) in &claims[i + 1..] {
            let differ = if a.lo == a.hi && b.lo == b.hi {
                a.lo != b.lo
            } else {
                !a.overlaps_series(*b)
            };
            if differ {
                mixed = Some((
                    at_b.clone(),
                    format!(
                        "the nodes run different NCCL versions: {what_a}, but {what_b}. NCCL's wire protocol changes between releases, so mixed versions fail to connect or hang; build every node's image from one base (one NCCL), and say the oldest in the pool's `target.nccl`"
                    ),
                ));
                break 'pairs;
            }
        }
    }
    let inferred = if printed.is_empty() {
        claims
            .iter()
            .try_fold(Range::ANY, |acc, (r, _, _)| acc.intersect(*r))
            .filter(|r| *r != Range::ANY)
    } else {
        None
    };
    Versions {
        printed,
        list,
        inferred,
        mixed,
    }
}

/// `mlx5_2` before `mlx5_10`.
fn natural(a: &str, b: &str) -> std::cmp::Ordering {
    let split = |s: &str| {
        let digits = s.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (stem, n) = s.split_at(s.len() - digits);
        (stem.to_owned(), n.parse::<u64>().unwrap_or(0), s.to_owned())
    };
    split(a).cmp(&split(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nccl_log::read_texts;

    fn row(value: f64) -> Row {
        Row {
            value,
            at: (std::sync::Arc::from("t"), 1),
        }
    }

    #[test]
    fn the_plateau_is_the_best_large_row_not_the_last() {
        let rows: BTreeMap<u64, Row> = [
            (1 << 20, row(10.0)),
            (1 << 30, row(185.0)),
            (4 << 30, row(190.0)),
            (8 << 30, row(150.0)),
        ]
        .into_iter()
        .collect();
        let b = plateau(&rows, rate::PLATEAU_MIN_BYTES, Some((200.0, "x".into())));
        assert_eq!((b.value, b.at_bytes, b.judged), (190.0, 4 << 30, true));
        assert_eq!(b.expected, Some(192.0));
        assert_eq!(b.plausible, Some(160.0));
        let small: BTreeMap<u64, Row> = [(32 << 20, row(41.0))].into_iter().collect();
        assert!(!plateau(&small, rate::PLATEAU_MIN_BYTES, None).judged);
    }

    #[test]
    fn devices_sort_naturally() {
        let mut names = vec!["mlx5_10", "mlx5_2", "mlx5_1", "ib0"];
        names.sort_by(|a, b| natural(a, b));
        assert_eq!(names, ["ib0", "mlx5_1", "mlx5_2", "mlx5_10"]);
    }

    #[test]
    fn a_printed_version_and_a_format_range_that_agree_are_not_mixed() {
        let log = "a:1:2 [0] NCCL INFO NCCL version 2.18.5+cuda12.2\n\
                   b:1:2 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : x\n";
        let v = read_texts(&[("l", log)], None).verdict;
        assert!(!v.mixed_versions, "{v:#?}");
        let log = "a:1:2 [0] NCCL INFO NCCL version 2.19.3+cuda12.2\n\
                   b:1:2 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : x\n";
        assert!(read_texts(&[("l", log)], None).verdict.mixed_versions);
    }

    #[test]
    fn channels_decide_gpudirect_before_the_capability_lines() {
        let log = "a:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n\
                   a:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n";
        let v = read_texts(&[("l", log)], None).verdict;
        assert_eq!((v.rdma, v.gdr), (Some(true), Some(true)));
    }
}
