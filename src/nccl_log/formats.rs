//! NCCL's log formats as data: which NCCL versions print each line shape, which
//! network plugin names are RDMA, and what each error says about its cause.
//!
//! Every version range is the first and last tag of github.com/NVIDIA/nccl (v2.5.6-1
//! to v2.30.7-1) whose sources hold the format string, read with `git grep -F` per
//! tag; a range open at one end is written `..` there. `N@tag:path:line` cites one
//! of them.

use super::version::{Range, Version};

const fn v(major: u16, minor: u16, patch: u16) -> Version {
    Version(major, minor, patch)
}

/// Which kind of NCCL line a fingerprint reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Either,
}

/// A line shape that only some NCCL versions print: a host that prints it runs one
/// of them.
pub struct Fingerprint {
    pub level: Level,
    /// The message (after ` NCCL INFO ` / ` NCCL WARN `) starts with this.
    pub starts: &'static str,
    /// ... contains all of these ...
    pub all: &'static [&'static str],
    /// ... and none of these.
    pub none: &'static [&'static str],
    pub range: Range,
    /// Where the format is printed, in the last version that has it.
    pub source: &'static str,
}

impl Fingerprint {
    pub fn matches(&self, level: Level, msg: &str) -> bool {
        (self.level == Level::Either || self.level == level)
            && msg.starts_with(self.starts)
            && self.all.iter().all(|s| msg.contains(s))
            && !self.none.iter().any(|s| msg.contains(s))
    }
}

const fn fp(
    level: Level,
    starts: &'static str,
    all: &'static [&'static str],
    none: &'static [&'static str],
    lo: Version,
    hi: Version,
    source: &'static str,
) -> Fingerprint {
    Fingerprint {
        level,
        starts,
        all,
        none,
        range: Range::new(lo, hi),
        source,
    }
}

const MIN: Version = Version::MIN;
const MAX: Version = Version::MAX;
use Level::{Either, Info, Warn};

/// Message shapes by version. The channel lines' shapes are in [`CHANNEL_ERAS`].
#[rustfmt::skip]
pub static FINGERPRINTS: &[Fingerprint] = &[
    // Network plugin loading (samples 05, 11, 12, 13, 17).
    fp(Info, "NET/Plugin : No plugin found (", &[], &[], MIN, v(2, 16, 5), "N@v2.16.5-1:src/net.cc:183"),
    fp(Info, "NET/Plugin : Plugin load (", &[], &[], v(2, 17, 1), v(2, 18, 6), "N@v2.18.6-1:src/net.cc:179"),
    fp(Info, "NET/Plugin : No plugin found, using internal implementation", &[], &[], v(2, 17, 1), v(2, 18, 6), "N@v2.18.6-1:src/net.cc:180"),
    fp(Info, "NET/Plugin : dlerror=", &[], &[], v(2, 19, 1), v(2, 20, 5), "N@v2.20.5-1:src/net.cc:357"),
    fp(Info, "Using non-device net plugin version", &[], &[], v(2, 19, 1), v(2, 21, 5), "N@v2.21.5-1:src/net.cc:518"),
    fp(Info, "NET/Plugin: Using internal network plugin.", &[], &[], v(2, 21, 5), v(2, 25, 1), "N@v2.25.1-1:src/net.cc"),
    fp(Info, "NET/Plugin: Could not find:", &[], &[], v(2, 22, 3), MAX, "N@v2.30.7-1:src/plugin/plugin_open.cc:124"),
    fp(Info, "PROFILER/Plugin: Could not find:", &[], &[], v(2, 23, 4), MAX, "N@v2.30.7-1:src/plugin/plugin_open.cc:124"),
    // Bootstrap interface (samples 01b, 05, 11, 13).
    fp(Info, "Bootstrap : Using", &[], &[], MIN, v(2, 23, 4), "N@v2.23.4-1:src/bootstrap.cc:119"),
    fp(Info, "Bootstrap: Using", &[], &[], v(2, 24, 3), MAX, "N@v2.30.7-1:src/bootstrap.cc:133"),
    fp(Info, "NCCL git version", &[], &[], v(2, 29, 2), MAX, "N@v2.30.7-1:src/init.cc:704"),
    fp(Info, "Connected all rings, use ring PXN", &[], &[], v(2, 24, 3), MAX, "N@v2.30.7-1:src/transport/generic.cc:40"),
    fp(Info, "comm ", &[" nRanks ", " nNodes "], &[], v(2, 20, 3), MAX, "N@v2.30.7-1:src/init.cc:1422"),
    fp(Info, "NET/IB: [", &[" provider=", " speed="], &[], v(2, 27, 3), MAX, "N@v2.30.7-1:src/transport/net_ib/init.cc:444"),
    // Per-QP lines (flag NET only; sample 07).
    fp(Info, "NET/IB: Dev ", &[" GID "], &["query_ece"], MIN, v(2, 18, 6), "N@v2.18.6-1:src/transport/net_ib.cc:674"),
    fp(Info, "NET/IB: Dev ", &[" LID "], &[], MIN, v(2, 19, 4), "N@v2.19.3-1:src/transport/net_ib.cc:686"),
    fp(Info, "NET/IB: Dev ", &["query_ece=", " GID "], &[], v(2, 19, 1), v(2, 19, 4), "N@v2.19.3-1:src/transport/net_ib.cc:689"),
    fp(Info, "NET/IB: ", &[" IbDev ", " qpn ", "query_ece=", " GID ", "fifoRkey"], &["ctsFifo"], v(2, 20, 3), v(2, 26, 6), "N@v2.26.6-1:src/transport/net_ib.cc:1328"),
    fp(Info, "NET/IB: ", &[" IbDev ", " qpn ", " GID ", "fifoRkey"], &["query_ece", "ctsFifo"], v(2, 27, 3), v(2, 28, 9), "N@v2.28.9-1:src/transport/net_ib.cc:1490"),
    fp(Info, "NET/IB: ", &[" IbDev ", " qpn ", " LID ", "fifoRkey"], &["subnet-prefix", "ctsFifo"], v(2, 20, 3), v(2, 21, 5), "N@v2.21.5-1:src/transport/net_ib.cc:1057"),
    fp(Info, "NET/IB: ", &[" IbDev ", " qpn ", "subnet-prefix", "fifoRkey"], &["ctsFifo"], v(2, 22, 3), v(2, 28, 9), "N@v2.28.9-1:src/transport/net_ib.cc:1485"),
    fp(Info, "NET/IB: ", &[" IbDev ", " qpn ", "ctsFifoRkey"], &[], v(2, 29, 2), v(2, 29, 3), "N@v2.29.2-1:src/transport/net_ib/connect.cc:649"),
    fp(Info, "NET/IB: ", &[" IbDev ", " qp_num ", " mtu ", "ctsFifoRkey"], &[], v(2, 29, 7), MAX, "N@v2.30.7-1:src/transport/net_ib/connect.cc:968"),
    // GPUDirect capability per HCA (sample 08).
    fp(Info, "NET/", &["GPU Direct RDMA Disabled for HCA", "(no module)"], &[], MIN, v(2, 12, 12), "N@v2.12.12-1:src/transport/net_ib.cc:290"),
    fp(Info, "NET/", &["GPU Direct RDMA ", " for HCA "], &["(no module)"], v(2, 13, 4), MAX, "N@v2.30.7-1:src/graph/topo.cc:1653"),
    // Error lines (samples 13, 21; titles of 05 and 20).
    fp(Warn, "Failed to open libibverbs", &[], &[], MIN, v(2, 10, 3), "N@v2.10.3-1:src/misc/ibvwrap.cc:63"),
    fp(Info, "Failed to open libibverbs", &[], &[], v(2, 11, 4), v(2, 29, 7), "N@v2.29.7-1:src/misc/ibvsymbols.cc:81"),
    fp(Either, "Call to ibv_modify_qp failed with error ", &[], &[" errno "], MIN, v(2, 18, 6), "N@v2.18.6-1:src/misc/ibvwrap.cc:187"),
    fp(Either, "Call to ibv_modify_qp failed with error ", &[" errno "], &[], v(2, 19, 1), v(2, 23, 4), "N@v2.21.5-1:src/misc/ibvwrap.cc:206"),
    fp(Either, "Call to ibv_modify_qp failed with ", &[", on dev "], &[], v(2, 24, 3), MAX, "N@v2.30.7-1:src/misc/ibvwrap.cc:376"),
    fp(Warn, "NET/IB : Got completion with error", &[], &[], MIN, v(2, 9, 9), "N@v2.9.9-1:src/transport/net_ib.cc"),
    fp(Warn, "NET/IB : Got completion from peer", &[" with error "], &[], v(2, 10, 3), v(2, 19, 4), "N@v2.18.6-1:src/transport/net_ib.cc:1295"),
    fp(Warn, "NET/IB : Got completion from peer", &[" with status="], &[], v(2, 20, 3), v(2, 21, 5), "N@v2.21.5-1:src/transport/net_ib.cc:1909"),
    fp(Warn, "NET/IB: Got completion from peer", &[" with status=", " len="], &["reqSize="], v(2, 22, 3), v(2, 28, 3), "N@v2.28.3-1:src/transport/net_ib.cc:2470"),
    fp(Warn, "NET/IB: Got completion from peer", &[" reqSize="], &[], v(2, 28, 7), v(2, 28, 9), "N@v2.28.9-1:src/transport/net_ib.cc:2543"),
    fp(Warn, "NET/IB: Got completion from peer", &[" vendor_err="], &["reqSize="], v(2, 29, 2), MAX, "N@v2.30.7-1:src/transport/net_ib/p2p.cc:688"),
    fp(Warn, "NET/IB : ", &["async fatal event"], &[], v(2, 23, 4), MAX, "N@v2.30.7-1:src/transport/net_ib/common.cc:123"),
    fp(Warn, "NET/IB : ", &["GID table changed"], &[], v(2, 28, 3), MAX, "N@v2.30.7-1:src/transport/net_ib/common.cc:153"),
    fp(Warn, "NET/IB : Attempted to connect incompatible devices", &[], &[], v(2, 26, 2), MAX, "N@v2.30.7-1:src/transport/net_ib/connect.cc:987"),
];

/// The NET channel line by era: `Ring`/`Channel`, with or without `/connIndex`, and
/// whether the rank's bracket holds a PCI bus id (hex) or an NVML device index.
pub struct ChannelEra {
    pub ring: bool,
    pub conn_index: bool,
    pub bus_id: bool,
    pub range: Range,
    pub source: &'static str,
}

#[rustfmt::skip]
pub static CHANNEL_ERAS: &[ChannelEra] = &[
    ChannelEra { ring: true, conn_index: false, bus_id: true, range: Range::new(MIN, v(2, 6, 4)), source: "N@v2.6.4-1:src/transport/net.cc" },
    ChannelEra { ring: false, conn_index: false, bus_id: true, range: Range::new(v(2, 7, 3), v(2, 11, 4)), source: "N@v2.11.4-1:src/transport/net.cc" },
    ChannelEra { ring: false, conn_index: true, bus_id: true, range: Range::new(v(2, 12, 7), v(2, 18, 1)), source: "N@v2.18.1-1:src/transport/net.cc" },
    ChannelEra { ring: false, conn_index: true, bus_id: false, range: Range::new(v(2, 18, 3), MAX), source: "N@v2.30.7-1:src/transport/net.cc:324" },
];

/// `(PCI)` after `/GDRDMA`: GPUDirect through PCI mode, 2.26 and later.
pub const PCI_MODE: Range = Range::new(v(2, 26, 2), MAX);
pub const PCI_MODE_SOURCE: &str = "N@v2.26.2-1:src/transport/net.cc";

/// What a network plugin name (`Using network X`, `via NET/X/...`) says about the
/// data path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetKind {
    /// NCCL's IB transport or a plugin built on verbs (HPC-X `IBext`, `IBext_v8`;
    /// Google's `gIB`): RDMA over InfiniBand or RoCE.
    Verbs,
    /// NCCL's `Socket` transport: TCP (N@v2.30.7-1:src/transport/net_socket.cc:804).
    Socket,
    /// A plugin that moves data over TCP: GKE's `FasTrak` (TCPXO) and GPUDirect-TCPX.
    Tcp,
    /// Any other plugin (`AWS Libfabric` for EFA, ...): rdmagen does not judge it.
    Other,
}

pub fn net_kind(name: &str) -> NetKind {
    if name == "Socket" {
        NetKind::Socket
    } else if name.starts_with("IB") || name == "gIB" {
        NetKind::Verbs
    } else if name.contains("FasTrak") || name.contains("TCPX") {
        NetKind::Tcp
    } else {
        NetKind::Other
    }
}

/// `enum ibv_wc_status` (rdma-core libibverbs/verbs.h), by value.
pub fn wc_status_name(status: u32) -> &'static str {
    const NAMES: &[&str] = &[
        "SUCCESS",
        "LOC_LEN_ERR",
        "LOC_QP_OP_ERR",
        "LOC_EEC_OP_ERR",
        "LOC_PROT_ERR",
        "WR_FLUSH_ERR",
        "MW_BIND_ERR",
        "BAD_RESP_ERR",
        "LOC_ACCESS_ERR",
        "REM_INV_REQ_ERR",
        "REM_ACCESS_ERR",
        "REM_OP_ERR",
        "RETRY_EXC_ERR",
        "RNR_RETRY_EXC_ERR",
        "LOC_RDD_VIOL_ERR",
        "REM_INV_RD_REQ_ERR",
        "REM_ABORT_ERR",
        "INV_EECN_ERR",
        "INV_EEC_STATE_ERR",
        "FATAL_ERR",
        "RESP_TIMEOUT_ERR",
        "GENERAL_ERR",
    ];
    NAMES
        .get(status as usize)
        .copied()
        .unwrap_or("unknown status")
}

/// The likely cause of a work completion error, after NCCL's own hints
/// (N@v2.30.7-1:src/transport/net_ib/common.h:612-630) and the verbs man pages.
pub fn wc_status_cause(status: u32) -> &'static str {
    match status {
        12 => {
            "the peer did not acknowledge within NCCL_IB_TIMEOUT x NCCL_IB_RETRY_CNT: a link that flaps or drops packets (on RoCE, a fabric without lossless PFC/ECN), an unreachable GID/route, or a timeout too short for the fabric; raise NCCL_IB_TIMEOUT (the pool's `ibTimeout`, default 20 since NCCL 2.23) to confirm, and check the switch counters"
        }
        13 => {
            "the receiver had no buffer posted in time (RNR retries exhausted): the peer process stalled or died"
        }
        4 => {
            "a local protection error on a registered buffer: usually PCIe ACS redirecting GPUDirect RDMA traffic, or GPU memory registration (nvidia-peermem); NCCL_NET_GDR_LEVEL=0 confirms it, disable ACS per the vendor's documentation"
        }
        5 => {
            "the queue pair was already in error (a flush): a consequence of an earlier failure on the same connection; look for the first completion error"
        }
        10 => {
            "the peer refused the remote access (rkey or memory registration): mismatched NCCL versions or a peer that tore down its buffers"
        }
        9 | 11 => {
            "the peer rejected the request: mismatched NCCL versions, or the peer failed first"
        }
        _ => "the RDMA operation failed on the fabric; the status says which step",
    }
}

/// The likely cause of a work completion error on RoCE, where status 12 reads
/// differently: "When it happens right away, it usually means the NICs can't talk to
/// each other using RoCE ... making sure NCCL runs in the same conditions (GID Index,
/// Traffic class, ...)" (sjeaugey, NVIDIA/nccl#426, solved there by
/// NCCL_IB_GID_INDEX=3), so a longer timeout does not help.
pub fn wc_status_cause_roce(status: u32) -> &'static str {
    match status {
        12 => {
            "on RoCE usually a GID index or RoCE version the peers cannot route (NVIDIA/nccl#426: the connection is set up over TCP, then the first RoCE packets time out): set NCCL_IB_GID_INDEX (the pool's `gidIndex`) to the RoCE v2 IPv4 index `show_gids` lists on every node (`rdmagen detect`), or `auto` on NCCL 2.21 and later, and the traffic class the switches expect (NCCL_IB_TC); raising NCCL_IB_TIMEOUT does not help then. Only when ib_write_bw with the same GID index and traffic class works: a fabric without lossless PFC/ECN or a flapping link (check the switch counters)"
        }
        _ => wc_status_cause(status),
    }
}

/// The likely cause of `ibv_modify_qp` failing, by errno text or number, after
/// NCCL's own hints (N@v2.30.7-1:src/misc/ibvwrap.cc:336-354).
pub fn modify_qp_cause(error: &str) -> &'static str {
    let e = error.to_ascii_lowercase();
    if e.contains("invalid argument") || e.starts_with("22") {
        "usually a GID index that does not exist on this port or does not fit the peer's: NCCL_IB_GID_INDEX (the pool's `gidIndex`) forces a wrong index; use the RoCE v2 IPv4 index `show_gids` lists (`rdmagen detect`), or `auto` (NCCL_IB_GID_INDEX=-1) on NCCL 2.21 and later"
    } else if e.contains("unreachable") || e.starts_with("101") || e.starts_with("113") {
        "the peer's address is not reachable from the selected GID: a wrong or link-local GID index (NCCL_IB_GID_INDEX, the pool's `gidIndex`), no IP address on the RDMA netdev, or no route between the RoCE subnets"
    } else if e.contains("timed out") || e.starts_with("110") {
        "the NICs are not connected across rails: set NCCL_CROSS_NIC=0 (the pool's `crossNic`) to confirm, or check the fabric's cabling"
    } else if e.contains("cannot allocate memory") || e.starts_with("12 ") {
        "out of locked memory: the container needs the IPC_LOCK capability and an unlimited memlock limit"
    } else {
        "the queue pair could not be connected: check the GID index (NCCL_IB_GID_INDEX, the pool's `gidIndex`) and that both nodes run the same NCCL"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_have_sane_ranges_and_sources() {
        for f in FINGERPRINTS {
            assert!(f.range.lo <= f.range.hi, "{}", f.starts);
            assert!(f.source.starts_with("N@v2."), "{}", f.source);
        }
    }

    #[test]
    fn plugin_lines_tell_2_18_from_2_19() {
        let old =
            "NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open";
        let new = "NET/Plugin : dlerror=libnccl-net.so: cannot open No plugin found (libnccl-net.so), using internal implementation";
        let hit = |msg| {
            FINGERPRINTS
                .iter()
                .filter(|f| f.matches(Level::Info, msg))
                .count()
        };
        assert_eq!(hit(old), 1);
        assert_eq!(hit(new), 1);
        assert_eq!(
            hit("NET/Plugin : No plugin found (libnccl-net.so), using internal implementation"),
            1
        );
    }

    #[test]
    fn net_names() {
        assert_eq!(net_kind("IB"), NetKind::Verbs);
        assert_eq!(net_kind("IBext_v8"), NetKind::Verbs);
        assert_eq!(net_kind("Socket"), NetKind::Socket);
        assert_eq!(net_kind("FasTrak"), NetKind::Tcp);
        assert_eq!(net_kind("AWS Libfabric"), NetKind::Other);
        assert_eq!(wc_status_name(12), "RETRY_EXC_ERR");
        assert_eq!(wc_status_name(99), "unknown status");
    }
}
