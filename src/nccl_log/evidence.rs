//! What NCCL's own lines say, collected line by line into bounded maps: versions per
//! host, the network chosen, the channels' transports, devices, GIDs, GPUDirect,
//! environment echoes and error lines. Formats and their versions are in
//! [`super::formats`]; this file reads them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::formats::{self, CHANNEL_ERAS, FINGERPRINTS, Level};
use super::version::{self, Range, Version};
use crate::diagnostics::Rule;
use crate::diagnostics::escape::cut;

/// A line of an input: file and 1-based line number.
pub type Loc = (Arc<str>, usize);

/// The most of each kind kept; beyond it lines are counted, not kept. Every map below
/// is bounded so by one of these, so memory does not grow with the log.
pub const MAX_HOSTS: usize = 4096;
pub const MAX_DEVICES: usize = 256;
pub const MAX_ERRORS: usize = 100;
pub const MAX_NAMES: usize = 64;
/// The most of a log line an error report quotes.
pub const MAX_QUOTE: usize = 400;

/// How often something was seen, and where first.
#[derive(Clone, Debug)]
pub struct Seen {
    pub count: u64,
    pub first: Loc,
}

/// A host's NCCL version: printed, or narrowed by the formats its lines use.
#[derive(Debug, Default)]
pub struct Host {
    /// Printed versions (normally one), with their text and line.
    pub printed: BTreeMap<Version, (String, Loc)>,
    /// The versions whose formats every line of the host fits, the line that narrowed
    /// it last and that format's source; None before any fingerprint.
    pub range: Option<(Range, Loc, &'static str)>,
    /// Two of the host's lines fit no common version (two builds on one host, or a
    /// pod name reused): its formats are not used.
    pub conflict: bool,
    /// NIC speeds from NCCL 2.27+'s per-port line, in Mb/s, by device.
    pub speeds: BTreeMap<String, u64>,
}

#[derive(Debug, Clone)]
pub struct Device {
    pub port: u32,
    pub link: String,
    pub first: Loc,
}

/// The NET channel lines of one network plugin.
#[derive(Debug, Clone)]
pub struct Channels {
    pub all: Seen,
    pub gdr: u64,
    pub without_gdr: Option<Seen>,
}

/// A GID the per-QP lines show, by index.
#[derive(Debug, Clone)]
pub struct Gid {
    pub seen: Seen,
    pub kind: GidKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GidKind {
    /// fe80::/64: reaches only the local L2 segment.
    LinkLocal,
    /// ::ffff:a.b.c.d, the RoCE (v2) IPv4 GID NCCL's selection prefers.
    Ipv4,
    Other,
}

/// One kind of error line, with how many lines said it.
#[derive(Debug, Clone)]
pub struct ErrorLine {
    pub rule: Rule,
    /// What failed, shortly: "ibv_modify_qp failed: Network is unreachable".
    pub title: String,
    /// The likely cause and what to change.
    pub cause: String,
    /// The first such line's message, cut to [`MAX_QUOTE`].
    pub text: String,
    pub host: Option<String>,
    pub first: Loc,
    pub count: u64,
}

#[derive(Debug, Default)]
pub struct Evidence {
    pub hosts: BTreeMap<String, Host>,
    pub hosts_dropped: u64,
    /// Every host NCCL's lines name (up to [`MAX_HOSTS`]).
    pub log_hosts: BTreeSet<String>,
    /// Printed versions no host could be given (a bare line before any host's line).
    pub unattributed: BTreeMap<Version, (String, Loc)>,
    /// `Using network X`
    pub networks: BTreeMap<String, Seen>,
    /// `via NET/X/...`, by X
    pub channels: BTreeMap<String, Channels>,
    /// `via P2P/...`, `via SHM/...`: inside a node.
    pub intra_channels: u64,
    pub devices: BTreeMap<String, Device>,
    pub devices_dropped: u64,
    /// `NET/Socket : Using [0]eth0:10.0.0.1<0>`: interface names.
    pub socket_interfaces: BTreeMap<String, Loc>,
    /// Per-QP lines of an IB port (LID) and of a RoCE port (GID).
    pub qp_ib: Option<Seen>,
    pub qp_roce: Option<Seen>,
    pub gids: BTreeMap<u32, Gid>,
    /// `NCCL_X set by environment to V`: values by name.
    pub env: BTreeMap<String, BTreeMap<String, Loc>>,
    /// `nNodes N` of each communicator.
    pub nnodes: BTreeMap<u32, Seen>,
    pub gdr_hca_on: Option<Seen>,
    pub gdr_hca_off: Option<Seen>,
    pub gdr_hca_off_names: BTreeSet<String>,
    pub gdr_gpu_on: Option<Seen>,
    pub gdr_gpu_off: Option<Seen>,
    pub rings_gdr_on: Option<Seen>,
    pub rings_gdr_off: Option<Seen>,
    pub errors: BTreeMap<String, ErrorLine>,
    pub errors_dropped: u64,
    /// The first `file.cc:123 -> 2` line: NCCL returning an error code.
    pub unwound: Option<(String, Loc)>,
    /// Set when the line just read is the first of something a finding may quote.
    pub quote: bool,
    /// The host and range [`Evidence::narrow`] last applied.
    last_narrowed: Option<(String, Range)>,
}

impl Evidence {
    fn seen(slot: &mut Option<Seen>, at: &Loc, quote: &mut bool) {
        match slot {
            Some(s) => s.count += 1,
            None => {
                *slot = Some(Seen {
                    count: 1,
                    first: at.clone(),
                });
                *quote = true;
            }
        }
    }

    fn seen_in<K: Ord>(map: &mut BTreeMap<K, Seen>, key: K, at: &Loc, quote: &mut bool) {
        if let Some(s) = map.get_mut(&key) {
            s.count += 1;
        } else if map.len() < MAX_NAMES {
            map.insert(
                key,
                Seen {
                    count: 1,
                    first: at.clone(),
                },
            );
            *quote = true;
        }
    }

    /// The host's entry, unless too many hosts are known already.
    pub fn host(&mut self, name: &str) -> Option<&mut Host> {
        if !self.hosts.contains_key(name) {
            if self.hosts.len() >= MAX_HOSTS {
                self.hosts_dropped += 1;
                return None;
            }
            self.hosts.insert(name.to_owned(), Host::default());
        }
        self.hosts.get_mut(name)
    }

    /// A printed version; `host` None when no host can be told.
    pub fn version(&mut self, host: Option<&str>, v: Version, text: &str, at: &Loc) {
        let entry = (text.to_owned(), at.clone());
        let printed = match host.and_then(|h| self.host(h)) {
            Some(h) => &mut h.printed,
            None => &mut self.unattributed,
        };
        if printed.len() < 8 && !printed.contains_key(&v) {
            printed.insert(v, entry);
            self.quote = true;
        }
    }

    /// A line of `host` whose shape only `range` prints.
    fn narrow(&mut self, host: Option<&str>, range: Range, source: &'static str, at: &Loc) {
        // Thousands of channel lines of one host narrow it by the same era: the first
        // did it.
        if let (Some(h), Some((last, r))) = (host, &self.last_narrowed)
            && h == last
            && *r == range
        {
            return;
        }
        if let Some(h) = host {
            self.last_narrowed = Some((h.to_owned(), range));
        }
        let Some(host) = host.and_then(|h| self.host(h)) else {
            return;
        };
        if host.conflict {
            return;
        }
        let narrowed = match &host.range {
            None => Some(range),
            Some((now, _, _)) => now.intersect(range),
        };
        match narrowed {
            Some(r) if host.range.as_ref().is_some_and(|(now, _, _)| *now == r) => {}
            Some(r) => {
                host.range = Some((r, at.clone(), source));
                self.quote = true;
            }
            None => host.conflict = true,
        }
    }

    /// Record an error line under `key` (one entry per kind of error).
    #[allow(clippy::too_many_arguments)]
    pub fn error(
        &mut self,
        key: String,
        rule: Rule,
        title: String,
        cause: String,
        text: &str,
        host: Option<&str>,
        at: &Loc,
    ) {
        if let Some(e) = self.errors.get_mut(&key) {
            e.count += 1;
            return;
        }
        if self.errors.len() >= MAX_ERRORS {
            self.errors_dropped += 1;
            return;
        }
        self.errors.insert(
            key,
            ErrorLine {
                rule,
                title,
                cause,
                text: cut(text, MAX_QUOTE).into_owned(),
                host: host.map(str::to_owned),
                first: at.clone(),
                count: 1,
            },
        );
        self.quote = true;
    }

    /// An `NCCL INFO` line.
    pub fn info(&mut self, host: Option<&str>, msg: &str, at: &Loc) {
        self.log_host(host);
        self.fingerprints(Level::Info, host, msg, at);
        if let Some(rest) = msg.strip_prefix("NCCL version ") {
            if let Some(v) = Version::parse_prefix(rest) {
                let text = rest.split_whitespace().next().unwrap_or(rest);
                self.version(host, v, text, at);
            }
        } else if let Some(name) = msg.strip_prefix("Using network ") {
            let name = name.trim();
            Self::seen_in(&mut self.networks, name.to_owned(), at, &mut self.quote);
        } else if msg.starts_with("Channel ") || msg.starts_with("Ring ") {
            self.channel(host, msg, at);
        } else if let Some(list) = msg.strip_prefix("NET/IB : Using") {
            self.devices(list, at);
        } else if msg.starts_with("NET/IB : No device found") {
            self.error(
                "ib-no-device".into(),
                Rule::NcclIbUnavailable,
                "NET/IB : No device found".into(),
                "NCCL's IB transport found no usable verbs device: the image lacks the RDMA user space (libibverbs1 and the provider, ibverbs-providers / libmlx5: `rdmagen dockerfile` writes the install step, `rdmagen image-check` finds it missing), the pod was given no RDMA device (the pool's rdma resource, e.g. rdma/hca, in its limits), or NCCL_IB_HCA names devices this node does not have".into(),
                msg,
                host,
                at,
            );
        } else if msg.starts_with("Failed to open libibverbs") {
            self.libibverbs(host, msg, at);
        } else if let Some(list) = msg.strip_prefix("NET/Socket : Using") {
            for word in list.split_whitespace() {
                let word = strip_index(word);
                if let Some((name, _)) = word.split_once(':')
                    && !name.is_empty()
                    && self.socket_interfaces.len() < MAX_NAMES
                    && !self.socket_interfaces.contains_key(name)
                {
                    self.socket_interfaces.insert(name.to_owned(), at.clone());
                    self.quote = true;
                }
            }
        } else if msg.starts_with("NET/IB: [") && msg.contains(" speed=") {
            self.port_speed(host, msg, at);
        } else if msg.starts_with("NET/IB: ") && msg.contains(" mtu ") {
            self.queue_pair(msg, at);
        } else if let Some((name, value)) = env_echo(msg) {
            self.env_echo(host, name, value, msg, at);
        } else if msg.starts_with("comm ") && msg.contains(" nNodes ") {
            if let Some(n) = word_after(msg, " nNodes ").and_then(|w| w.parse().ok()) {
                Self::seen_in(&mut self.nnodes, n, at, &mut self.quote);
            }
        } else if msg.contains("GPU Direct RDMA ") {
            self.gdr(msg, at);
        } else if let Some(rest) = msg.strip_prefix("Connected all rings, use ring PXN ") {
            match rest.rsplit(' ').next() {
                Some("0") => Self::seen(&mut self.rings_gdr_off, at, &mut self.quote),
                Some("1") => Self::seen(&mut self.rings_gdr_on, at, &mut self.quote),
                _ => {}
            }
        } else if self.unwound.is_none() && is_unwinding(msg) {
            self.unwound = Some((msg.to_owned(), at.clone()));
            self.quote = true;
        }
    }

    fn log_host(&mut self, host: Option<&str>) {
        if let Some(h) = host
            && self.log_hosts.len() < MAX_HOSTS
            && !self.log_hosts.contains(h)
        {
            self.log_hosts.insert(h.to_owned());
        }
    }

    fn fingerprints(&mut self, level: Level, host: Option<&str>, msg: &str, at: &Loc) {
        let (Some(_), Some(first)) = (host, msg.as_bytes().first()) else {
            return;
        };
        for f in FINGERPRINTS {
            // Most lines start with no fingerprint's first byte: a byte compare first.
            if f.starts.as_bytes().first() == Some(first) && f.matches(level, msg) {
                self.narrow(host, f.range, f.source, at);
            }
        }
    }

    fn libibverbs(&mut self, host: Option<&str>, msg: &str, at: &Loc) {
        self.error(
            "libibverbs".into(),
            Rule::NcclIbUnavailable,
            "libibverbs is missing".into(),
            "the image lacks the RDMA user space (libibverbs1 and ibverbs-providers on apt, rdma-core and libibverbs on dnf), so NCCL cannot use verbs at all: `rdmagen dockerfile` writes the step that installs them, `rdmagen image-check` finds them missing".into(),
            msg,
            host,
            at,
        );
    }

    /// `Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA` and its older shapes.
    fn channel(&mut self, host: Option<&str>, msg: &str, at: &Loc) {
        let Some((head, body)) = msg.split_once(" : ") else {
            return;
        };
        let Some((_, via)) = body.split_once(" via ") else {
            return;
        };
        let Some(net) = via.strip_prefix("NET/") else {
            if via.starts_with("P2P/") || via.starts_with("SHM/") || via.starts_with("direct") {
                self.intra_channels += 1;
            }
            return;
        };
        let ring = head.starts_with("Ring ");
        let conn_index = head.contains('/');
        let bus_id = body
            .split_whitespace()
            .next()
            .and_then(|w| w.split_once('[').map(|(_, b)| b.trim_end_matches(']')))
            .map(is_bus_id);
        if let Some(bus_id) = bus_id
            && let Some(era) = CHANNEL_ERAS.iter().find(|e| {
                e.ring == ring && e.conn_index == conn_index && (!conn_index || e.bus_id == bus_id)
            })
        {
            self.narrow(host, era.range, era.source, at);
        }
        let Some(path) = NetPath::parse(net) else {
            return;
        };
        if path.pci {
            self.narrow(host, formats::PCI_MODE, formats::PCI_MODE_SOURCE, at);
        }
        if !self.channels.contains_key(path.name) {
            if self.channels.len() >= MAX_NAMES {
                return;
            }
            self.quote = true;
            let first = Seen {
                count: 0,
                first: at.clone(),
            };
            self.channels.insert(
                path.name.to_owned(),
                Channels {
                    all: first,
                    gdr: 0,
                    without_gdr: None,
                },
            );
        }
        let quote = &mut self.quote;
        let Some(channels) = self.channels.get_mut(path.name) else {
            return;
        };
        channels.all.count += 1;
        if path.gdr {
            channels.gdr += 1;
        } else {
            Self::seen(&mut channels.without_gdr, at, quote);
        }
    }

    /// ` [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>`, the merged
    /// `[0]={[0] mlx5_0:1/IB, [1] mlx5_1:1/IB}` of 2.20-2.23 and 2.30's
    /// `mlx5_0:1:<rail>` / `mlx5_0:1::<plane>` (N@v2.30.7-1:src/transport/net_ib/init.cc:494-514).
    fn devices(&mut self, list: &str, at: &Loc) {
        let list = list.split("; OOB").next().unwrap_or(list);
        for word in list.split_whitespace() {
            let word = strip_index(word).trim_end_matches([',', '}']);
            let Some((left, right)) = word.split_once('/') else {
                continue;
            };
            let link = right.split('/').next().unwrap_or(right);
            let mut parts = left.split(':');
            let (Some(name), Some(port)) = (parts.next(), parts.next()) else {
                continue;
            };
            let Ok(port) = port.parse::<u32>() else {
                continue;
            };
            if name.is_empty() || !matches!(link, "IB" | "RoCE" | "UNSPECIFIED") {
                continue;
            }
            self.device(name, port, link, at);
        }
    }

    fn device(&mut self, name: &str, port: u32, link: &str, at: &Loc) {
        if self.devices.contains_key(name) {
            return;
        }
        if self.devices.len() >= MAX_DEVICES {
            self.devices_dropped += 1;
            return;
        }
        self.devices.insert(
            name.to_owned(),
            Device {
                port,
                link: link.to_owned(),
                first: at.clone(),
            },
        );
        self.quote = true;
    }

    /// `NET/IB: [0] mlx5_0:ibp12s0:1/IB provider=Mlx5 speed=400000 ...` (2.27+):
    /// `speed` is Mb/s (N@v2.30.7-1:src/transport/net_ib/init.cc:405-448).
    fn port_speed(&mut self, host: Option<&str>, msg: &str, at: &Loc) {
        let Some(port) = msg.split_whitespace().nth(2) else {
            return;
        };
        let Some((left, link)) = port.split_once('/') else {
            return;
        };
        let fields: Vec<&str> = left.split(':').collect();
        let (Some(name), Some(number)) = (fields.first(), fields.last()) else {
            return;
        };
        let number = number.parse().unwrap_or(1);
        self.device(name, number, link, at);
        let speed = word_after(msg, " speed=").and_then(|s| s.parse::<u64>().ok());
        if let (Some(speed), Some(h)) = (speed, host.and_then(|h| self.host(h)))
            && h.speeds.len() < MAX_NAMES
        {
            h.speeds.insert((*name).to_owned(), speed);
        }
    }

    /// Per-QP lines: `... LID n ...` on IB, `... GID <index> (<prefix>/<iid>) ...` on
    /// RoCE, every era (see the fingerprints).
    fn queue_pair(&mut self, msg: &str, at: &Loc) {
        if msg.contains(" LID ") {
            Self::seen(&mut self.qp_ib, at, &mut self.quote);
            return;
        }
        let Some(rest) = msg.split_once(" GID ").map(|(_, r)| r) else {
            return;
        };
        Self::seen(&mut self.qp_roce, at, &mut self.quote);
        let mut words = rest.split_whitespace();
        let Some(index) = words.next().and_then(|w| w.parse::<u32>().ok()) else {
            return;
        };
        let kind = words
            .next()
            .and_then(|w| w.strip_prefix('(')?.strip_suffix(')'))
            .and_then(|w| w.split_once('/'))
            .and_then(|(p, i)| {
                Some(gid_kind(
                    u64::from_str_radix(p, 16).ok()?,
                    u64::from_str_radix(i, 16).ok()?,
                ))
            })
            .unwrap_or(GidKind::Other);
        let known = self.gids.len();
        match self.gids.get_mut(&index) {
            Some(g) => g.seen.count += 1,
            None if known < MAX_NAMES => {
                self.gids.insert(
                    index,
                    Gid {
                        seen: Seen {
                            count: 1,
                            first: at.clone(),
                        },
                        kind,
                    },
                );
                self.quote = true;
            }
            None => {}
        }
    }

    fn env_echo(&mut self, host: Option<&str>, name: &str, value: &str, msg: &str, at: &Loc) {
        if name == "NCCL_IB_DISABLE" && value != "0" {
            self.error(
                "ib-disable".into(),
                Rule::NcclIbUnavailable,
                format!("NCCL_IB_DISABLE is {value}"),
                "NCCL_IB_DISABLE=1 turns NCCL's IB transport off, so it uses sockets: the job asks for it (`rdma: off`), or the image or platform sets it (an image ENV: `rdmagen image-check` reports it, RDG080); rdmagen leaves it unset when RDMA is on".into(),
                msg,
                host,
                at,
            );
        }
        if !self.env.contains_key(name) && self.env.len() >= MAX_NAMES {
            return;
        }
        let values = self.env.entry(name.to_owned()).or_default();
        if values.len() < 8 && !values.contains_key(value) {
            values.insert(value.to_owned(), at.clone());
            self.quote = true;
        }
    }

    /// `NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'` (capability, 2.13+),
    /// `... for HCA 0 'mlx5_0' (no module)` (before 2.13), and the per GPU/NIC
    /// decision `GPU Direct RDMA Enabled for GPU ... / HCA ...` (INFO until 2.29).
    fn gdr(&mut self, msg: &str, at: &Loc) {
        let on = msg.contains("GPU Direct RDMA Enabled for");
        let off = msg.contains("GPU Direct RDMA Disabled for");
        let q = &mut self.quote;
        if msg.contains(" for HCA ") {
            if off {
                Self::seen(&mut self.gdr_hca_off, at, q);
                if let Some(name) = msg.split('\'').nth(1)
                    && self.gdr_hca_off_names.len() < MAX_NAMES
                {
                    self.gdr_hca_off_names.insert(name.to_owned());
                }
            } else if on {
                Self::seen(&mut self.gdr_hca_on, at, q);
            }
        } else if off {
            Self::seen(&mut self.gdr_gpu_off, at, q);
        } else if on {
            Self::seen(&mut self.gdr_gpu_on, at, q);
        }
    }

    /// An `NCCL WARN` line: every one is an error line; the known ones get their rule
    /// and cause.
    pub fn warn(&mut self, host: Option<&str>, msg: &str, at: &Loc) {
        self.log_host(host);
        self.fingerprints(Level::Warn, host, msg, at);
        let (key, rule, title, cause) = classify_warning(msg);
        self.error(key, rule, title, cause, msg, host, at);
        self.warned_gid(msg, at);
    }

    /// The GID a failed `ibv_modify_qp` names, 2.24 and later: `..., local GID index
    /// 3, local GID ::ffff:10.0.0.1, remote GID ...` (N@v2.30.7-1:src/misc/ibvwrap.cc:
    /// ibvModifyQpStr), so the verdict knows the index even without the per-QP INFO lines.
    fn warned_gid(&mut self, msg: &str, at: &Loc) {
        let Some(index) = word_after(msg, "local GID index ")
            .and_then(|w| w.trim_end_matches(',').parse::<u32>().ok())
        else {
            return;
        };
        let gid = msg
            .match_indices("local GID ")
            .filter_map(|(i, m)| msg[i + m.len()..].split_whitespace().next())
            .find(|w| *w != "index")
            .map(|g| g.trim_end_matches(','));
        let kind = match gid {
            Some(g) if g.starts_with("fe80:") => GidKind::LinkLocal,
            Some(g) if g.starts_with("::ffff:") => GidKind::Ipv4,
            _ => GidKind::Other,
        };
        if let Some(g) = self.gids.get_mut(&index) {
            g.seen.count += 1;
        } else if self.gids.len() < MAX_NAMES {
            self.gids.insert(
                index,
                Gid {
                    seen: Seen {
                        count: 1,
                        first: at.clone(),
                    },
                    kind,
                },
            );
            self.quote = true;
        }
    }

    /// A line that is not NCCL's: a bare `NCCL version` line, PyTorch's NCCL errors.
    pub fn other(&mut self, host: Option<&str>, text: &str, at: &Loc) {
        if text.contains("NCCL version ")
            && let Some((v, shown)) = version::printed(text)
        {
            self.version(host, v, shown, at);
        }
        if text.contains("NCCL error")
            && (text.contains("ncclSystemError")
                || text.contains("NCCL error in:")
                || text.contains("unhandled system error"))
        {
            self.error(
                "torch-nccl-error".into(),
                Rule::NcclOtherError,
                "the framework reports an NCCL error".into(),
                "NCCL returned an error to the training process; NCCL's own WARN lines (NCCL_DEBUG=INFO) say which call failed and why".into(),
                text,
                None,
                at,
            );
        } else if text.contains("Watchdog caught collective operation timeout") {
            self.error(
                "torch-watchdog".into(),
                Rule::NcclOtherError,
                "a collective timed out".into(),
                "a collective did not finish within the process group's timeout: a rank died or hung, or the network stalled (an RDMA retry storm, a fallback to a slow transport); look for NCCL WARN lines on every rank".into(),
                text,
                None,
                at,
            );
        }
    }
}

/// The rule, title and cause of a WARN message, and the key that groups it with
/// lines of the same kind.
fn classify_warning(msg: &str) -> (String, Rule, String, String) {
    let own = |s: &str| s.to_owned();
    if let Some(rest) = msg.strip_prefix("Call to ibv_modify_qp failed with ") {
        // ≤2.18 `error %s`; 2.19-2.23 `error %s errno %d`; 2.24+ `%d %s, on dev ...`
        let error = rest.strip_prefix("error ").unwrap_or(rest);
        let error = error.split(" errno ").next().unwrap_or(error);
        let error = error.split(", ").next().unwrap_or(error).trim();
        let mut cause = own(formats::modify_qp_cause(error));
        let local_gid = msg
            .match_indices("local GID ")
            .filter_map(|(at, m)| msg[at + m.len()..].split_whitespace().next())
            .find(|w| *w != "index");
        if let Some(gid) = local_gid.filter(|g| g.starts_with("fe80:")) {
            cause = format!(
                "the local GID {} is link-local (fe80::/64), which RoCE cannot route: {cause}",
                gid.trim_end_matches(',')
            );
        }
        return (
            format!("modify_qp:{error}"),
            Rule::NcclQpConnect,
            format!("ibv_modify_qp failed: {error}"),
            cause,
        );
    }
    if let Some(rest) = msg.strip_prefix("Call to ibv_") {
        let call = rest.split_whitespace().next().unwrap_or(rest);
        let error = rest
            .split_once(" failed")
            .map(|(_, e)| e.trim())
            .unwrap_or("");
        let error = error.strip_prefix("with error ").unwrap_or(error);
        let error = error.split(" errno ").next().unwrap_or(error);
        let memory = error.contains("Cannot allocate memory");
        let resource = matches!(
            call,
            "create_qp"
                | "create_cq"
                | "reg_mr"
                | "reg_mr_iova2"
                | "reg_dmabuf_mr"
                | "alloc_pd"
                | "create_srq"
                | "create_comp_channel"
        );
        if resource || memory {
            let cause = if call.starts_with("reg_") && error.contains("Bad address") {
                "the NIC could not register GPU memory: the node lacks nvidia-peermem (or dma-buf support), which GPUDirect RDMA needs"
            } else {
                "usually the locked-memory limit: RDMA pins its buffers, so the container needs the IPC_LOCK capability (rdmagen adds it to every RDMA job) and an unlimited memlock ulimit; else the device ran out of queue pairs or memory"
            };
            return (
                format!("verbs:{call}:{error}"),
                Rule::NcclVerbsResources,
                format!("ibv_{call} failed{}", suffix(error)),
                own(cause),
            );
        }
        if call.starts_with("open_device") || call.starts_with("get_device_list") {
            return (
                format!("verbs:{call}"),
                Rule::NcclIbUnavailable,
                format!("ibv_{call} failed{}", suffix(error)),
                own(
                    "NCCL cannot open the RDMA device: the pod has no access to it (the RDMA device plugin's resource in the pod's limits) or the image lacks the device's provider library",
                ),
            );
        }
    }
    if msg.contains("Got completion") {
        let status = completion_status(msg);
        let (name, cause) = match status {
            Some(s) => (
                format!("status {s} ({})", formats::wc_status_name(s)),
                formats::wc_status_cause(s),
            ),
            None => (
                "an error status".to_owned(),
                formats::wc_status_cause(u32::MAX),
            ),
        };
        return (
            format!("completion:{status:?}"),
            Rule::NcclCompletionError,
            format!("an RDMA operation completed with {name}"),
            own(cause),
        );
    }
    for (needle, key, title, cause) in [
        (
            "async fatal event",
            "async-fatal",
            "the NIC reported a fatal async event",
            "the device or a queue pair failed: check the node's kernel log (dmesg), the NIC's firmware and the cable",
        ),
        (
            "Got non-fatal async event",
            "async",
            "the NIC reported an async event",
            "a port went down or changed state during the run (link flap, subnet manager change): check the cable and the switch port",
        ),
        (
            "GID table changed",
            "gid-changed",
            "the GID table changed during the run",
            "an address on the RDMA netdev changed while NCCL ran (the pod network re-assigned it): a fixed NCCL_IB_GID_INDEX may now point at another GID; prefer `gidIndex: auto` on NCCL 2.21 and later",
        ),
        (
            "Attempted to connect incompatible devices",
            "incompatible",
            "NCCL paired NICs that cannot talk",
            "the two ends use NICs of different link layers or kinds: select matching NICs on every node with NCCL_IB_HCA (the pool's `hcas`)",
        ),
    ] {
        if msg.contains(needle) {
            let rule = if key == "incompatible" {
                Rule::NcclQpConnect
            } else {
                Rule::NcclCompletionError
            };
            return (format!("warn:{key}"), rule, own(title), own(cause));
        }
    }
    if msg.starts_with("NET/IB : Unable to open device") {
        return (
            "open-device".into(),
            Rule::NcclIbUnavailable,
            "NET/IB : Unable to open device".into(),
            own(
                "NCCL sees the device but cannot open it: the pod was not given it (the RDMA device plugin's resource in its limits) or lacks permission for /dev/infiniband",
            ),
        );
    }
    if msg.starts_with("NET/IB : No IP interface found") {
        return (
            "no-ip-interface".into(),
            Rule::NcclIbUnavailable,
            "NET/IB : No IP interface found".into(),
            own(
                "the IB transport needs an IP interface for its out-of-band exchange and found none: NCCL_SOCKET_IFNAME (the pool's `socketIfname`) names no interface of the pod",
            ),
        );
    }
    if msg.starts_with("Failed to open libibverbs") {
        return (
            "libibverbs".into(),
            Rule::NcclIbUnavailable,
            "libibverbs is missing".into(),
            own(
                "the image lacks the RDMA user space (libibverbs1 and ibverbs-providers on apt, rdma-core and libibverbs on dnf), so NCCL cannot use verbs at all: `rdmagen dockerfile` writes the step that installs them, `rdmagen image-check` finds them missing",
            ),
        );
    }
    (
        format!("warn:{}", shape(msg)),
        Rule::NcclOtherError,
        format!("NCCL WARN {}", cut(msg, 120)),
        own("NCCL reports an error of its own; the lines before it say what it was doing"),
    )
}

fn suffix(error: &str) -> String {
    if error.is_empty() {
        String::new()
    } else {
        format!(": {error}")
    }
}

/// The status number of a completion error in each era's wording: `with error 12,`
/// (≤2.19), `with status=12 ` (2.20-2.28.3), `with status=RETRY_EXC_ERR(12)` (2.28.7+).
fn completion_status(msg: &str) -> Option<u32> {
    let digits = |s: &str| -> Option<u32> {
        let n = s.bytes().take_while(u8::is_ascii_digit).count();
        s[..n].parse().ok()
    };
    if let Some(rest) = msg.split_once("status=").map(|(_, r)| r) {
        return digits(rest).or_else(|| {
            let open = rest.find('(')?;
            digits(&rest[open + 1..])
        });
    }
    if let Some(rest) = msg.split_once("with error ").map(|(_, r)| r) {
        return digits(rest);
    }
    None
}

/// A message with its numbers, addresses and quoted names masked, so that lines
/// differing only in those count as one kind.
fn shape(msg: &str) -> String {
    let mut out = String::new();
    let mut last_hash = false;
    for c in msg.chars().take(120) {
        if c.is_ascii_digit() {
            if !last_hash {
                out.push('#');
            }
            last_hash = true;
        } else {
            out.push(c);
            last_hash = false;
        }
    }
    out
}

/// `[0]` index prefixes (several, and the merged form's `=` and `{`) removed.
fn strip_index(mut word: &str) -> &str {
    loop {
        let before = word.len();
        if let Some(rest) = word.strip_prefix('[')
            && let Some(end) = rest.find(']')
            && rest[..end].bytes().all(|b| b.is_ascii_digit())
        {
            word = &rest[end + 1..];
        }
        word = word.trim_start_matches(['=', '{']);
        if word.len() == before {
            return word;
        }
    }
}

/// The bracket of `rank[x]` holds a PCI bus id (hex, ≥ 4 digits such as `1b000`)
/// up to 2.18.1, and the NVML device index (a small decimal) after.
fn is_bus_id(inside: &str) -> bool {
    inside.bytes().any(|b| b.is_ascii_alphabetic()) || inside.len() >= 4
}

/// `NCCL_X set by environment to V[.]` (integers end with a period,
/// N@v2.30.7-1:src/misc/param.cc:100) and `NCCL_IB_HCA set to V`.
fn env_echo(msg: &str) -> Option<(&str, &str)> {
    let (name, value) = msg
        .split_once(" set by environment to ")
        .or_else(|| msg.split_once(" set to "))?;
    if !name.starts_with("NCCL_") || name.contains(' ') {
        return None;
    }
    let value = value.trim();
    let value = match value.strip_suffix('.') {
        Some(v) if v.parse::<i64>().is_ok() => v,
        _ => value,
    };
    Some((name, value))
}

/// `transport/net_ib.cc:368 -> 2`: NCCL returning an error code up the stack.
fn is_unwinding(msg: &str) -> bool {
    let Some((site, code)) = msg.split_once(" -> ") else {
        return false;
    };
    site.contains(':')
        && !site.contains(' ')
        && code
            .split_whitespace()
            .next()
            .is_some_and(|c| c.parse::<u32>().is_ok_and(|n| n > 0))
}

/// The word after `marker`.
fn word_after<'a>(text: &'a str, marker: &str) -> Option<&'a str> {
    text.split_once(marker)?.1.split_whitespace().next()
}

/// What a GID prints as `(%lX/%lX)`: the subnet prefix and interface id, each the
/// 8 bytes of the GID read as a little-endian u64 (N@v2.21.5-1:src/transport/net_ib.cc:1065).
fn gid_kind(prefix: u64, iid: u64) -> GidKind {
    if prefix == 0x80fe {
        GidKind::LinkLocal
    } else if prefix == 0 && iid & 0xffff_ffff == 0xffff_0000 {
        GidKind::Ipv4
    } else {
        GidKind::Other
    }
}

/// `NET/IB/0(3)/GDRDMA(PCI)/Shared` after `via `.
struct NetPath<'a> {
    name: &'a str,
    gdr: bool,
    pci: bool,
}

impl<'a> NetPath<'a> {
    /// `X/%d[(%d)][/GDRDMA][(PCI)][/Shared]` (N@v2.30.7-1:src/transport/net.cc:324-331),
    /// X the plugin's name, which may hold a space (`AWS Libfabric`).
    fn parse(net: &'a str) -> Option<NetPath<'a>> {
        let mut rest = net.trim_end();
        rest = rest.strip_suffix("/Shared").unwrap_or(rest);
        let pci = rest.ends_with("(PCI)");
        rest = rest.strip_suffix("(PCI)").unwrap_or(rest);
        let gdr = rest.ends_with("/GDRDMA");
        rest = rest.strip_suffix("/GDRDMA").unwrap_or(rest);
        if rest.ends_with(')')
            && let Some(open) = rest.rfind('(')
        {
            rest = &rest[..open];
        }
        let (name, dev) = rest.rsplit_once('/')?;
        (!name.is_empty() && !dev.is_empty() && dev.bytes().all(|b| b.is_ascii_digit()))
            .then_some(NetPath { name, gdr, pci })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at() -> Loc {
        (Arc::from("t.log"), 1)
    }

    #[test]
    fn net_paths_of_every_era() {
        let p = NetPath::parse("IBext_v8/7/GDRDMA").unwrap();
        assert_eq!((p.name, p.gdr, p.pci), ("IBext_v8", true, false));
        let p = NetPath::parse("IB/0(3)/GDRDMA(PCI)/Shared").unwrap();
        assert_eq!((p.name, p.gdr, p.pci), ("IB", true, true));
        let p = NetPath::parse("AWS Libfabric/1").unwrap();
        assert_eq!((p.name, p.gdr), ("AWS Libfabric", false));
        assert!(NetPath::parse("IB").is_none());
    }

    #[test]
    fn device_lists_plain_merged_and_rail() {
        let mut e = Evidence::default();
        e.info(
            Some("h"),
            "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
            &at(),
        );
        e.info(Some("h"), "NET/IB : Using [0]={[0] mlx5_2:1/IB, [1] mlx5_3:1/IB} [1]mlx5_4:1/IB/SHARP ; OOB ib0:1.2.3.4<0>", &at());
        e.info(
            Some("h"),
            "NET/IB : Using [0]mlx5_5:1:2/IB [1]mlx5_6:1::0/RoCE [RO]; OOB eth0:10.0.0.1<0>",
            &at(),
        );
        let names: Vec<&str> = e.devices.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6"
            ]
        );
        assert_eq!(e.devices["mlx5_6"].link, "RoCE");
    }

    #[test]
    fn completion_statuses_of_every_era() {
        assert_eq!(
            completion_status(
                "NET/IB : Got completion with error 12, opcode 1, len 0, vendor err 129"
            ),
            Some(12)
        );
        assert_eq!(
            completion_status(
                "NET/IB : Got completion from peer 1.2.3.4<5> with error 4, opcode 0"
            ),
            Some(4)
        );
        assert_eq!(
            completion_status("NET/IB: Got completion from peer x with status=12 opcode=1 len=0"),
            Some(12)
        );
        assert_eq!(
            completion_status(
                "NET/IB: Got completion from peer x with status=RETRY_EXC_ERR(12) opcode=RDMA_WRITE(1) reqSize=0"
            ),
            Some(12)
        );
    }

    #[test]
    fn gid_kinds_from_the_printed_halves() {
        assert_eq!(gid_kind(0x80fe, 0x1a8a41feff21a75e), GidKind::LinkLocal);
        assert_eq!(gid_kind(0, 0xb880a00affff0000), GidKind::Ipv4);
        assert_eq!(gid_kind(0x80fe0000, 1), GidKind::Other);
    }

    #[test]
    fn env_echoes() {
        assert_eq!(
            env_echo("NCCL_IB_DISABLE set by environment to 1."),
            Some(("NCCL_IB_DISABLE", "1"))
        );
        assert_eq!(
            env_echo("NCCL_IB_HCA set to mlx5"),
            Some(("NCCL_IB_HCA", "mlx5"))
        );
        assert_eq!(
            env_echo("NCCL_SOCKET_IFNAME set by environment to net1"),
            Some(("NCCL_SOCKET_IFNAME", "net1"))
        );
        assert_eq!(env_echo("P2P Chunksize set to 131072"), None);
    }

    #[test]
    fn modify_qp_warnings_of_every_era() {
        for msg in [
            "Call to ibv_modify_qp failed with error Network is unreachable",
            "Call to ibv_modify_qp failed with error Network is unreachable errno 101",
            "Call to ibv_modify_qp failed with 101 Network is unreachable, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.1, remote GID ::ffff:10.0.0.2",
        ] {
            let (_, rule, title, cause) = classify_warning(msg);
            assert_eq!(rule, Rule::NcclQpConnect, "{msg}");
            assert!(title.contains("Network is unreachable"), "{title}");
            assert!(cause.contains("NCCL_IB_GID_INDEX"), "{cause}");
        }
    }

    #[test]
    fn unknown_warnings_group_by_shape() {
        assert_eq!(
            shape("Cuda failure 2 'out of memory' at 0x7f00"),
            "Cuda failure # 'out of memory' at #x#f#"
        );
        assert!(is_unwinding("transport/net_ib.cc:368 -> 2"));
        assert!(!is_unwinding("Channel 00 : 0 -> 1"));
    }
}
