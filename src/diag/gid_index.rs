//! The GID index detect proposes for a RoCE pool.

use std::collections::BTreeMap;

use crate::check::{Findings, Rule};
use crate::diag::detect::Device;
use crate::diag::{Observations, gid};
use crate::source::Location;

/// The RoCE v2, IPv4-mapped GID index each data device would use; one global index
/// when they all agree (NCCL has one, NVIDIA/nccl#890), else `auto`.
pub(super) fn gid_index(
    obs: &Observations,
    data: &[&Device<'_>],
    in_pod: bool,
    notes: &mut Vec<String>,
    findings: &mut Findings,
) -> serde_json::Value {
    let mut chosen: BTreeMap<u32, Vec<&str>> = BTreeMap::new();
    let mut chosen_at: BTreeMap<u32, Location> = BTreeMap::new();
    let mut shifted = false;
    for d in data {
        let rows = &d.gids;
        if rows.is_empty() {
            continue;
        }
        // A host's table starts with the port's default GID, the link-local one, at
        // index 0; in a pod's network namespace the link-local GID of the pod's own
        // netdev comes later (tests/diag/roce-pod.txt: index 4). A table printed
        // without its link-local rows (seed 001 shows only each data NIC's IPv4 row, at
        // index 2) says nothing either way.
        shifted |= rows
            .iter()
            .filter(|g| g.gid.trim().to_ascii_lowercase().starts_with("fe80:"))
            .map(|g| g.index)
            .min()
            .is_some_and(|i| i > 0);
        let netdevs = d.netdevs();
        let pick = rows
            .iter()
            .filter(|g| g.version == Some(2) && gid::ipv4(&g.gid).is_some())
            .filter(|g| g.netdev.as_ref().is_none_or(|n| netdevs.contains(n)))
            .min_by_key(|g| g.index);
        match pick {
            Some(g) => {
                chosen.entry(g.index).or_default().push(d.name);
                chosen_at.entry(g.index).or_insert_with(|| g.at.clone());
            }
            None => findings.at(
                Rule::NoIpv4Gid,
                format!("{} has no RoCE v2 GID with an IPv4 address; NCCL's dynamic selection finds nothing there either", d.name),
                rows[0].at.clone(),
            ),
        }
    }
    let at = obs.gids.first().map(|g| g.at.clone());
    match chosen.len() {
        0 => {
            notes.push(
                "no RoCE v2 IPv4 GID seen: gidIndex left to NCCL's dynamic selection".to_owned(),
            );
            "auto".into()
        }
        1 if !(in_pod || shifted) => {
            let (index, devices) = chosen
                .iter()
                .next()
                .map(|(i, d)| (*i, d.len()))
                .unwrap_or_default();
            notes.push(format!(
                "RoCE v2 IPv4 GID at index {index} on all {devices} data NIC(s)"
            ));
            index.into()
        }
        1 => {
            if let Some(at) = at {
                findings.at(
                    Rule::GidIndexInPod,
                    "captured inside a pod (GID indices are shifted there and change with the pod's network); gidIndex: auto lets NCCL pick the RoCE v2 IPv4 GID",
                    at,
                );
            }
            "auto".into()
        }
        _ => {
            let detail: Vec<String> = chosen
                .iter()
                .map(|(i, ds)| format!("{i} on {}", ds.join(", ")))
                .collect();
            // Point at the row of the index the fewest devices use.
            let rare = chosen
                .iter()
                .min_by_key(|(_, ds)| ds.len())
                .map(|(i, _)| *i);
            if let Some(at) = rare.and_then(|i| chosen_at.get(&i).cloned()).or(at) {
                findings.at(
                    Rule::GidIndexDisagrees,
                    format!("the RoCE v2 IPv4 GID sits at different indices ({}); NCCL takes one global index, so gidIndex: auto", detail.join("; ")),
                    at,
                );
            }
            "auto".into()
        }
    }
}
