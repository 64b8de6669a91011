//! Decide a Pool from what the captures say, and explain it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::detect::device::Device;
use crate::detect::{Observations, gid_index, natural_key};
use crate::diagnostics::source::Location;
use crate::diagnostics::{Findings, Rule};
use crate::model::pool::{Fabric, GidIndex, Platform};
use crate::packages::dpkg;

/// What the user tells detect beyond the captures.
#[derive(Debug, Clone)]
pub struct Options {
    pub name: String,
    pub platform: Platform,
    /// The pod's bootstrap interface; the device behind it is the management NIC.
    pub socket_ifname: String,
    /// GPUs per node (not in these captures; `nvidia-smi -L` tells).
    pub gpus_per_node: u32,
    /// The captures were taken inside a pod: GID indices there are not the host's.
    pub in_pod: bool,
}

/// The pool detect writes, as the pool template lays it out.
#[derive(Debug, Clone, Serialize)]
pub struct PoolDraft {
    pub name: String,
    pub platform: Platform,
    pub gpus_per_node: u32,
    pub fabric: Fabric,
    pub hcas: Vec<String>,
    pub socket_ifname: String,
    /// Absent on InfiniBand and TCP.
    pub gid_index: Option<GidIndex>,
    pub management_nic: Option<String>,
    /// Comment lines for the reader of the pool: what each value came from.
    pub notes: Vec<String>,
}

pub fn detect(obs: &Observations, options: &Options, findings: &mut Findings) -> Option<PoolDraft> {
    for (at, line) in &obs.unreadable {
        findings.at(
            Rule::DiagUnreadableLine,
            format!("cannot read `{line}`; skipped"),
            at.clone(),
        );
    }
    let mut names: Vec<&str> = obs.ports.keys().map(|(d, _)| d.as_str()).collect();
    names.extend(obs.gids.iter().map(|g| g.device.as_str()));
    // The name breaks ties: `mlx5_` and `mlx5_0` share a natural key, and dedup only
    // drops neighbours.
    names.sort_by(|a, b| natural_key(a).cmp(&natural_key(b)).then(a.cmp(b)));
    names.dedup();
    let devices = Device::gather(obs, &names);
    check_dpkg(obs, findings);
    let first_file = || Location {
        file: obs
            .files
            .first()
            .cloned()
            .unwrap_or_else(|| "<none>".into()),
        line: 1,
        column: 1,
    };
    if devices.is_empty() {
        findings.at(
            Rule::NothingDetected,
            "no RDMA device in the captures; capture show_gids, ibstat, ibv_devinfo or rdma link show",
            first_file(),
        );
        return None;
    }

    let mut notes = Vec::new();
    let management = devices
        .iter()
        .find(|d| d.netdevs().contains(&options.socket_ifname))
        .map(|d| d.name.to_owned());
    match &management {
        Some(m) => notes.push(format!("{m} carries {} (the socket interface): management NIC, kept out of hcas", options.socket_ifname)),
        None => findings.at(
            Rule::NoManagementNic,
            format!(
                "no device's netdev is {}; every device is taken as a data NIC (check --socket-ifname)",
                options.socket_ifname
            ),
            first_file(),
        ),
    }

    // The fabric is a property of the NICs, whatever their ports' state; only active
    // ones become data NICs.
    let mut candidates: Vec<(&Device<'_>, Fabric, bool)> = Vec::new();
    let mut fabrics: BTreeMap<&'static str, Vec<&str>> = BTreeMap::new();
    for d in &devices {
        if management.as_deref() == Some(d.name) {
            continue;
        }
        let usable = ports_usable(d, findings);
        match d.fabric() {
            Some((fabric, _)) => {
                fabrics.entry(fabric.name()).or_default().push(d.name);
                candidates.push((d, fabric, usable));
            }
            None => notes.push(format!(
                "{}: no link layer in the captures; left out",
                d.name
            )),
        }
    }
    let Some(fabric) = majority(&candidates) else {
        findings.at(
            Rule::NothingDetected,
            "no device with a known link layer (Ethernet → RoCE, InfiniBand → IB)",
            first_file(),
        );
        return None;
    };
    if fabrics.len() > 1 {
        let detail: Vec<String> = fabrics
            .iter()
            .map(|(f, ds)| format!("{f}: {}", ds.join(", ")))
            .collect();
        let at = candidates
            .iter()
            .find(|(_, f, _)| *f != fabric)
            .and_then(|(d, _, _)| d.fabric().and_then(|(_, at)| at))
            .unwrap_or_else(first_file);
        findings.at(
            Rule::MixedFabrics,
            format!(
                "devices disagree on the fabric ({}); the pool takes {} and leaves the others out",
                detail.join("; "),
                fabric.name()
            ),
            at,
        );
    }
    let data: Vec<&Device<'_>> = candidates
        .iter()
        .filter(|(_, f, usable)| *f == fabric && *usable)
        .map(|(d, _, _)| *d)
        .collect();
    for d in &data {
        if fabric == Fabric::Ib {
            check_subnet_manager(d, findings);
        }
    }
    let hcas: Vec<String> = data.iter().map(|d| d.name.to_owned()).collect();
    if hcas.is_empty() {
        notes.push(format!(
            "no active data NIC on {}: hcas is empty",
            fabric.name()
        ));
    } else {
        notes.push(format!(
            "{} data NIC(s) on {}: {}",
            hcas.len(),
            fabric.name(),
            hcas.join(", ")
        ));
    }
    let gid_index = (fabric == Fabric::Roce)
        .then(|| gid_index::gid_index(obs, &data, options.in_pod, &mut notes, findings));
    if gid_index == Some(GidIndex::Auto) {
        notes.push(
            "gidIndex: auto needs NCCL 2.21 or later in the images (dynamic GID selection; index 0 before)"
                .to_owned(),
        );
    }
    // Only what the captures show goes into the pool: they say nothing of the
    // training-operator or of the NCCL inside the images, so no spec.target.
    notes.push(format!(
        "no spec.target: the captures show neither the training-operator version nor the images' NCCL (set target.nccl if you know it); the {} platform's defaults apply",
        options.platform.name()
    ));
    if let Some(ofed) = &obs.ofed {
        notes.push(format!("driver stack: {ofed}"));
    }
    Some(PoolDraft {
        name: options.name.clone(),
        platform: options.platform,
        gpus_per_node: options.gpus_per_node,
        fabric,
        hcas,
        socket_ifname: options.socket_ifname.clone(),
        gid_index,
        // Written only when it is not the default mlx5_0; `none` when the management
        // NIC has no RDMA device, so that an mlx5_0 data NIC is not mistaken for it.
        management_nic: match management {
            Some(m) if m == crate::model::pool::DEFAULT_MANAGEMENT_NIC => None,
            Some(m) => Some(m),
            None => Some("none".to_owned()),
        },
        notes,
    })
}

/// Every port Active and LinkUp; otherwise a finding, and the device stays out.
fn ports_usable(d: &Device<'_>, findings: &mut Findings) -> bool {
    let mut usable = true;
    for (n, p) in &d.ports {
        let bad_state = p.state.as_ref().filter(|(s, _)| s != "Active");
        let bad_phys = p.physical.as_ref().filter(|(s, _)| s != "LinkUp");
        if let Some((what, at)) = bad_state.or(bad_phys) {
            findings.at(
                Rule::PortNotActive,
                format!(
                    "{}/{n} is {what}; left out of hcas (NCCL skips ports that are not active)",
                    d.name
                ),
                at.clone(),
            );
            usable = false;
        }
    }
    usable
}

/// An active IB port needs a LID and a subnet manager.
fn check_subnet_manager(d: &Device<'_>, findings: &mut Findings) {
    for (n, p) in &d.ports {
        let no_lid = p.base_lid.is_some_and(|l| l == 0 || l == 65535);
        let no_sm = p.sm_lid == Some(0);
        if no_lid || no_sm {
            let at = p.link_layer.as_ref().map(|(_, at)| at.clone());
            if let Some(at) = at {
                findings.at(
                    Rule::IbWithoutSm,
                    format!(
                        "{}/{n} is InfiniBand without a LID or subnet manager (base lid {}, SM lid {})",
                        d.name,
                        p.base_lid.map_or("?".to_owned(), |l| l.to_string()),
                        p.sm_lid.map_or("?".to_owned(), |l| l.to_string())
                    ),
                    at,
                );
            }
        }
    }
}

fn majority(data: &[(&Device<'_>, Fabric, bool)]) -> Option<Fabric> {
    let roce = data.iter().filter(|(_, f, _)| *f == Fabric::Roce).count();
    let ib = data.iter().filter(|(_, f, _)| *f == Fabric::Ib).count();
    match (roce, ib) {
        (0, 0) => None,
        (r, i) if r >= i => Some(Fabric::Roce),
        _ => Some(Fabric::Ib),
    }
}

/// A package the `dpkg -l` capture lacks is reported at the row of the capture's first
/// package by name (the captures may be one file, so there is no file start to use).
fn check_dpkg(obs: &Observations, findings: &mut Findings) {
    let Some(status) = &obs.dpkg else { return };
    let some_row = status.values().next().map(|(_, at)| at);
    dpkg::check_installed(status, some_row, findings);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::capture;

    fn options() -> Options {
        Options {
            name: "p".to_owned(),
            platform: Platform::Generic,
            socket_ifname: "eth0".to_owned(),
            gpus_per_node: 8,
            in_pod: false,
        }
    }

    /// Rows of two devices, interleaved: each device must see only its own rows, in
    /// order, so the management NIC, the fabric and each device's GID index come out
    /// as if the rows had been grouped.
    #[test]
    fn each_device_is_judged_on_its_own_rows_when_they_interleave() {
        let gid = |ip: u8| format!("0000:0000:0000:0000:0000:ffff:0a00:00{ip:02x}");
        let text = [
            "DEV PORT INDEX GID IPv4 VER DEV".to_owned(),
            format!("mlx5_0 1 3 {} 10.0.0.1 v2 eth0", gid(1)),
            format!("mlx5_2 1 5 {} 10.0.0.3 v2 eth2", gid(3)),
            format!("mlx5_1 1 3 {} 10.0.0.2 v2 eth1", gid(2)),
            format!("mlx5_2 1 4 {} 10.0.0.3 v1 eth2", gid(3)),
            format!("mlx5_1 1 2 {} 10.0.0.2 v1 eth1", gid(2)),
        ]
        .join("\n");
        let mut obs = Observations::default();
        capture::read(&mut obs, &"gids.txt".into(), &text);
        let mut findings = Findings::default();
        let pool = detect(&obs, &options(), &mut findings).unwrap();
        assert_eq!(pool.hcas, ["mlx5_1", "mlx5_2"]);
        assert_eq!(pool.fabric, Fabric::Roce);
        assert_eq!(pool.gid_index, Some(GidIndex::Auto));
        let messages: Vec<(&str, usize)> = findings
            .iter()
            .map(|f| (f.message.as_str(), f.location.as_ref().unwrap().line))
            .collect();
        assert_eq!(
            messages,
            [(
                "the RoCE v2 IPv4 GID sits at different indices (3 on mlx5_1; 5 on mlx5_2); NCCL takes one global index, so gidIndex: auto",
                4
            )]
        );
    }

    /// `mlx5_` and `mlx5_0` share a natural sort key; each must still be one device
    /// (the capture fuzzer found `mlx5_` listed twice in hcas, which render rejects).
    #[test]
    fn names_with_one_natural_key_stay_distinct_devices() {
        let gid = |ip: u8| format!("0000:0000:0000:0000:0000:ffff:0a00:00{ip:02x}");
        let text = [
            "DEV PORT INDEX GID IPv4 VER DEV".to_owned(),
            format!("mlx5_0 1 3 {} 10.0.0.1 v2 eth0", gid(1)),
            format!("mlx5_ 1 3 {} 10.0.0.2 v2 eth1", gid(2)),
            format!("mlx5_1 1 3 {} 10.0.0.3 v2 eth2", gid(3)),
            format!("mlx5_0 1 2 {} 10.0.0.1 v1 eth0", gid(1)),
        ]
        .join("\n");
        let mut obs = Observations::default();
        capture::read(&mut obs, &"gids.txt".into(), &text);
        let mut findings = Findings::default();
        let pool = detect(&obs, &options(), &mut findings).unwrap();
        assert_eq!(pool.hcas, ["mlx5_", "mlx5_1"]);
        assert_eq!(pool.gid_index, Some(GidIndex::Index(3)));
    }

    /// A host's show_gids printed without its link-local rows (as seed 001 abridges
    /// it) starts above index 0 but is no pod capture: the index is still proposed.
    /// A pod's table is recognised by its link-local GID sitting above index 0.
    #[test]
    fn a_table_without_link_local_rows_is_not_taken_for_a_pod() {
        let gid = |ip: u8| format!("0000:0000:0000:0000:0000:ffff:0a00:00{ip:02x}");
        let abridged = [
            "DEV PORT INDEX GID IPv4 VER DEV".to_owned(),
            format!("mlx5_1 1 3 {} 10.0.0.1 v2 eth1", gid(1)),
            format!("mlx5_2 1 3 {} 10.0.0.2 v2 eth2", gid(2)),
        ]
        .join("\n");
        let link_local = "fe80:0000:0000:0000:0c42:a1ff:fe00:0001";
        let pod = format!("{abridged}\nmlx5_1 1 2 {link_local}  v2 eth1");
        for (text, expected) in [(abridged, GidIndex::Index(3)), (pod, GidIndex::Auto)] {
            let mut obs = Observations::default();
            capture::read(&mut obs, &"gids.txt".into(), &text);
            let mut findings = Findings::default();
            let pool = detect(&obs, &options(), &mut findings).unwrap();
            assert_eq!(pool.gid_index, Some(expected), "{text}");
        }
    }
}
