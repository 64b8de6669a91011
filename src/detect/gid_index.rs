//! The GID index detect proposes for a RoCE pool.
//!
//! NCCL takes one global NCCL_IB_GID_INDEX for every device (NVIDIA/nccl#890). Its
//! dynamic selection (NCCL ≥ 2.21, `src/transport/net_ib/connect.cc:268-335` at
//! 5067397c) starts at index 0, moves to the first GID of the wanted address family
//! (IPv4) whatever its RoCE version (:279-280), and among those prefers RoCE v2 (:290).
//! So detect proposes the RoCE v2 IPv4 index when there is one, and otherwise the
//! RoCE v1 IPv4 index, the one NCCL's own selection would take, with a warning that
//! RoCE v1 does not cross an L3 router.

use std::collections::BTreeMap;

use crate::detect::device::Device;
use crate::detect::{GidRow, Observations, gid};
use crate::diagnostics::source::Location;
use crate::diagnostics::{Findings, Rule};
use crate::model::pool::GidIndex;

/// What one data device's GID table offers NCCL.
struct Offer<'a> {
    device: &'a str,
    /// The lowest-index RoCE v2 GID with an IPv4 address: NCCL's first choice.
    v2: Option<&'a GidRow>,
    /// The lowest-index RoCE v1 GID with an IPv4 address.
    v1: Option<&'a GidRow>,
    /// The table's first row, for findings about the device.
    first: &'a GidRow,
}

impl<'a> Offer<'a> {
    /// None when the captures hold no GID table for the device.
    fn of(d: &Device<'a>) -> Option<Self> {
        let first = *d.gids.first()?;
        let netdevs = d.netdevs();
        let ipv4 = |version: u8| {
            d.gids
                .iter()
                .copied()
                .filter(|g| g.version == Some(version) && gid::ipv4(&g.gid).is_some())
                .filter(|g| g.netdev.as_ref().is_none_or(|n| netdevs.contains(n)))
                .min_by_key(|g| g.index)
        };
        Some(Offer {
            device: d.name,
            v2: ipv4(2),
            v1: ipv4(1),
            first,
        })
    }

    /// Its IPv4 GID of the version.
    fn pick(&self, version: Roce) -> Option<&'a GidRow> {
        match version {
            Roce::V2 => self.v2,
            Roce::V1 => self.v1,
        }
    }

    /// Whether the table looks shifted, as a pod's is. A host's table starts with the
    /// port's default GID, the link-local one, at index 0; in a pod's network namespace
    /// the link-local GID of the pod's own netdev comes later (tests/diag/roce-pod.txt:
    /// index 4). A table printed without its link-local rows (seed 001 shows only each
    /// data NIC's IPv4 row, at index 2) says nothing either way.
    fn shifted(d: &Device<'_>) -> bool {
        d.gids
            .iter()
            .filter(|g| g.gid.trim().to_ascii_lowercase().starts_with("fe80:"))
            .map(|g| g.index)
            .min()
            .is_some_and(|i| i > 0)
    }
}

/// The RoCE version whose IPv4 GIDs the index is chosen among.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Roce {
    V1,
    V2,
}

impl Roce {
    fn name(self) -> &'static str {
        match self {
            Roce::V1 => "RoCE v1",
            Roce::V2 => "RoCE v2",
        }
    }
}

/// How the index came out.
enum Outcome {
    /// Every device has its IPv4 GID of the version at this index.
    Index(u32),
    /// None of the devices has one.
    Nothing,
    /// They do, but the capture comes from a pod.
    InPod,
    /// They do, at different indices: (index, devices) for each.
    Disagree(Vec<(u32, Vec<String>)>),
}

/// The RoCE IPv4 GID index each data device would use; one global index when they all
/// agree, else `auto`.
pub(super) fn gid_index(
    obs: &Observations,
    data: &[&Device<'_>],
    in_pod: bool,
    notes: &mut Vec<String>,
    findings: &mut Findings,
) -> GidIndex {
    let offers: Vec<Offer<'_>> = data.iter().filter_map(|d| Offer::of(d)).collect();
    let in_pod = in_pod || data.iter().any(|d| Offer::shifted(d));
    let any_v2 = offers.iter().any(|o| o.v2.is_some());
    let any_v1 = offers.iter().any(|o| o.v1.is_some());
    // RoCE v1 only when no device has a v2 IPv4 GID: NCCL prefers v2 wherever there is
    // one, and a v1 device cannot talk to a v2 peer.
    let version = if any_v2 || !any_v1 {
        Roce::V2
    } else {
        Roce::V1
    };
    for o in offers.iter().filter(|o| o.pick(version).is_none()) {
        let message = match (version, o.v1) {
            (Roce::V2, Some(v1)) => format!(
                "{} has no RoCE v2 GID with an IPv4 address, only a RoCE v1 one (index {}); RoCE v1 and v2 do not interoperate, so it cannot reach the other NICs' RoCE v2 GIDs",
                o.device, v1.index
            ),
            _ => format!(
                "{} has no GID with an IPv4 address: its netdev has no IPv4 address, and NCCL's dynamic selection keeps index 0, the link-local GID, which does not leave the L2 segment",
                o.device
            ),
        };
        findings.at(Rule::NoIpv4Gid, message, o.first.at.clone());
    }

    let mut chosen: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    let mut chosen_at: BTreeMap<u32, Location> = BTreeMap::new();
    for o in &offers {
        if let Some(g) = o.pick(version) {
            chosen.entry(g.index).or_default().push(o.device);
            chosen_at.entry(g.index).or_insert_with(|| g.at.clone());
        }
    }
    let outcome = match chosen.len() {
        0 => Outcome::Nothing,
        1 if in_pod => Outcome::InPod,
        1 => Outcome::Index(chosen.keys().next().copied().unwrap_or_default()),
        _ => Outcome::Disagree(
            chosen
                .iter()
                .map(|(i, ds)| (*i, ds.iter().map(|d| (*d).to_owned()).collect()))
                .collect(),
        ),
    };
    let at = obs.gids.first().map(|g| g.at.clone());
    // Point at the row of the index the fewest devices use.
    let rare_at = chosen
        .iter()
        .min_by_key(|(_, ds)| ds.len())
        .and_then(|(i, _)| chosen_at.get(i).cloned())
        .or_else(|| at.clone());
    let devices: Vec<&str> = chosen.values().flatten().copied().collect();

    let value = match &outcome {
        Outcome::Index(index) => {
            notes.push(format!(
                "{} IPv4 GID at index {index} on all {} data NIC(s)",
                version.name(),
                devices.len()
            ));
            GidIndex::Index(*index)
        }
        Outcome::Nothing => {
            notes.push(if offers.is_empty() {
                "no GID table in the captures: gidIndex left to NCCL's dynamic selection".to_owned()
            } else {
                "no GID with an IPv4 address seen: gidIndex left to NCCL's dynamic selection"
                    .to_owned()
            });
            GidIndex::Auto
        }
        Outcome::InPod => {
            if let Some(at) = at.clone() {
                findings.at(
                    Rule::GidIndexInPod,
                    format!("captured inside a pod (GID indices are shifted there and change with the pod's network); gidIndex: auto lets NCCL pick the {} IPv4 GID", version.name()),
                    at,
                );
            }
            GidIndex::Auto
        }
        Outcome::Disagree(spread) => {
            if version == Roce::V2
                && let Some(at) = rare_at.clone()
            {
                findings.at(
                    Rule::GidIndexDisagrees,
                    format!("the RoCE v2 IPv4 GID sits at different indices ({}); NCCL takes one global index, so gidIndex: auto", spread_text(spread)),
                    at,
                );
            }
            GidIndex::Auto
        }
    };

    if version == Roce::V1 {
        let decision = match &outcome {
            Outcome::Index(index) => format!(
                "the RoCE v1 IPv4 GID is at index {index} on every data NIC ({}), so gidIndex: {index}",
                devices.join(", ")
            ),
            Outcome::InPod => "the capture comes from a pod, so gidIndex: auto (NCCL 2.21 and later then picks the IPv4 GID, RoCE v1 included)".to_owned(),
            Outcome::Disagree(spread) => format!(
                "the RoCE v1 IPv4 GIDs sit at different indices ({}) and NCCL takes one global index, so gidIndex: auto (NCCL 2.21 and later picks the IPv4 GID on each device, RoCE v1 included)",
                spread_text(spread)
            ),
            // RoCE v1 is chosen only when a device has a v1 IPv4 GID.
            Outcome::Nothing => String::new(),
        };
        let first_v1 = offers
            .iter()
            .find_map(|o| o.v1)
            .map(|g| g.at.clone())
            .or(at);
        if let Some(at) = first_v1 {
            findings.at(
                Rule::RoceV1Only,
                format!("no data NIC has a RoCE v2 GID with an IPv4 address, only RoCE v1 ones; {decision}. RoCE v1 is not routable: training works only while every node is in one L2 domain; enable RoCE v2 on the NICs for a routed fabric"),
                at,
            );
        }
    }
    value
}

fn spread_text(spread: &[(u32, Vec<String>)]) -> String {
    spread
        .iter()
        .map(|(i, ds)| format!("{i} on {}", ds.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}
