//! Read a capture: one command's output, or several one after another in one file
//! (sections are recognised by how each command's output starts).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::detect::{GidRow, LinkLayer, Observations, Port, topology};
use crate::diagnostics::source::Location;
use crate::packages::dpkg;

#[derive(Debug, Clone)]
enum Section {
    None,
    ShowGids,
    Ibstat {
        device: String,
        port: Option<u32>,
    },
    IbvDevinfo {
        device: String,
        port: Option<u32>,
    },
    Dpkg,
    /// `nvidia-smi topo -m`'s matrix, its link legend, its NIC legend.
    Topo,
    TopoLegend,
    NicLegend,
    Lsmod,
}

/// Add everything `text` says to `obs`. Lines starting with `#` or `$` (annotations,
/// shell prompts) and blank lines are skipped; a line that fits no format is noted.
pub fn read(obs: &mut Observations, file: &Arc<str>, text: &str) {
    obs.files.push(file.clone());
    let mut section = Section::None;
    for (i, raw) in text.lines().enumerate() {
        let at = Location {
            file: file.clone(),
            line: i + 1,
            column: 1,
        };
        let line = raw.trim_end_matches('\r').trim_end();
        let t = line.trim_start();
        if t.is_empty()
            || t.starts_with('#')
            || t.starts_with('$')
            || t.starts_with("n_gids_found=")
        {
            continue;
        }
        // nvidia-smi's header starts with GPU0 (or the escape that underlines it on a
        // terminal); checked first, as cheaply as that.
        if (t.starts_with("GPU0") || t.starts_with('\u{1b}'))
            && let Some(started) = topology::header(obs, line, &at)
        {
            section = if started {
                Section::Topo
            } else {
                Section::None
            };
            continue;
        }
        if let Some(next) = topology_section(t, &section) {
            if matches!(next, Section::Lsmod) {
                topology::modules_listed(obs);
            }
            section = next;
            continue;
        }
        if (t.starts_with(['|', '+']) || t.ends_with(|c: char| c.is_ascii_digit()))
            && let Some(understood) = topology::smi_table_line(obs, t, &at)
        {
            if !understood {
                obs.unreadable(at, t);
            }
            continue;
        }
        if let Some(understood) = topology::gpu_list_line(obs, t, &at) {
            if !understood {
                obs.unreadable(at, t);
            }
            continue;
        }
        if topology::proc_modules_line(obs, t, &at) {
            continue;
        }
        if let Some(next) = section_start(t) {
            section = match next {
                Section::Ibstat { ref device, .. } | Section::IbvDevinfo { ref device, .. }
                    if !plain_device(device) =>
                {
                    // Its port lines would describe a device no Pool can name.
                    obs.unreadable(at, t);
                    Section::None
                }
                next => next,
            };
            continue;
        }
        if let Some(rest) = t.strip_prefix("link ") {
            rdma_link(obs, rest, &at);
            continue;
        }
        if t.contains(SYSFS_INFINIBAND) || t.contains("==>") {
            let understood = if t.contains("==>") {
                ibdev2netdev(obs, t, &at)
            } else {
                sysfs_rate(obs, t, &at).unwrap_or_else(|| physfn(obs, t, &at))
            };
            if !understood {
                obs.unreadable(at, t);
            }
            continue;
        }
        if t.starts_with("MLNX_OFED_LINUX-") || t.starts_with("OFED-") || t.starts_with("DOCA-") {
            obs.ofed = Some(t.trim_end_matches(':').to_owned());
            continue;
        }
        let understood = match &mut section {
            Section::ShowGids => show_gids_row(obs, t, &at),
            Section::Ibstat { device, port } => ibstat_line(obs, device, port, t, &at),
            Section::IbvDevinfo { device, port } => devinfo_line(obs, device, port, t, &at),
            // A command without a header of its own may follow these blocks.
            Section::Topo => topology::row(obs, line, &at) || dpkg_line(obs, t, &at),
            Section::TopoLegend => topology::legend_line(t) || dpkg_line(obs, t, &at),
            Section::NicLegend => topology::nic_legend_line(obs, t, &at) || dpkg_line(obs, t, &at),
            Section::Lsmod => topology::lsmod_row(obs, t, &at) || dpkg_line(obs, t, &at),
            Section::Dpkg | Section::None => dpkg_line(obs, t, &at),
        };
        if !understood {
            obs.unreadable(at, t);
        }
    }
}

/// The blocks below nvidia-smi's matrix, and lsmod's header.
fn topology_section(t: &str, current: &Section) -> Option<Section> {
    match t {
        "Legend:" if matches!(current, Section::Topo) => Some(Section::TopoLegend),
        "NIC Legend:" => Some(Section::NicLegend),
        _ if topology::lsmod_header(t) => Some(Section::Lsmod),
        _ => None,
    }
}

fn section_start(t: &str) -> Option<Section> {
    if t.starts_with("DEV") && t.contains("GID") {
        return Some(Section::ShowGids);
    }
    if t.starts_with("---") && t.contains("----") {
        return Some(Section::ShowGids);
    }
    if let Some(rest) = t.strip_prefix("CA '") {
        let device = rest.trim_end_matches('\'').to_owned();
        return Some(Section::Ibstat { device, port: None });
    }
    if let Some(rest) = t.strip_prefix("hca_id:") {
        return Some(Section::IbvDevinfo {
            device: rest.trim().to_owned(),
            port: None,
        });
    }
    (t.starts_with("Desired=")).then_some(Section::Dpkg)
}

/// A device name a Pool accepts (plan/hca.rs): letters, digits, `_`, `-` and `.`.
/// Anything else in a capture is damage, and must not reach the detected pool.
fn plain_device(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// `mlx5_0  1  3  0000:...:ffff:0b00:0048  11.0.0.72  v2  ens3np0` (IPv4 optional).
fn show_gids_row(obs: &mut Observations, t: &str, at: &Location) -> bool {
    let f: Vec<&str> = t.split_whitespace().collect();
    if f.len() < 6 || !plain_device(f[0]) {
        return false;
    }
    let (Ok(port), Ok(index)) = (f[1].parse::<u32>(), f[2].parse::<u32>()) else {
        return false;
    };
    if !f[3].contains(':') {
        return false;
    }
    let (version, netdev) = match f.len() {
        6 => (f[4], f[5]),
        7 => (f[5], f[6]),
        _ => return false,
    };
    let Some(version) = version
        .strip_prefix(['v', 'V'])
        .and_then(|v| v.parse::<u8>().ok())
    else {
        return false;
    };
    let device = f[0].to_owned();
    obs.port(&device, port)
        .netdev
        .get_or_insert_with(|| (netdev.to_owned(), at.clone()));
    obs.gids.push(GidRow {
        device,
        port,
        index,
        gid: f[3].to_owned(),
        version: Some(version),
        netdev: Some(netdev.to_owned()),
        at: at.clone(),
    });
    true
}

fn key_value(t: &str) -> Option<(&str, &str)> {
    let (k, v) = t.split_once(':')?;
    Some((k.trim(), v.trim()))
}

fn ibstat_line(
    obs: &mut Observations,
    device: &str,
    port: &mut Option<u32>,
    t: &str,
    at: &Location,
) -> bool {
    let Some((key, value)) = key_value(t) else {
        return false;
    };
    if let Some(n) = key
        .strip_prefix("Port ")
        .and_then(|n| n.trim().parse().ok())
    {
        *port = Some(n);
        return true;
    }
    // Before `Port N:`, CA-level facts (type, firmware, GUIDs) are not needed.
    port_line(obs, device, *port, IBSTAT_FACTS, key, value, at)
}

/// What a port line says, whatever the tool's spelling.
#[derive(Clone, Copy)]
enum Fact {
    State,
    Physical,
    BaseLid,
    SmLid,
    LinkLayer,
    /// ibstat's `Rate:`, Gb/s.
    Rate,
    /// ibv_devinfo -v's `active_width: 4X (2)`: lanes.
    Width,
    /// ibv_devinfo -v's `active_speed: 50.0 Gbps (64)`: Gb/s per lane.
    Speed,
}

const IBSTAT_FACTS: &[(&str, Fact)] = &[
    ("Rate", Fact::Rate),
    ("State", Fact::State),
    ("Physical state", Fact::Physical),
    ("Base lid", Fact::BaseLid),
    ("SM lid", Fact::SmLid),
    ("Link layer", Fact::LinkLayer),
];

const DEVINFO_FACTS: &[(&str, Fact)] = &[
    ("state", Fact::State),
    ("phys_state", Fact::Physical),
    ("port_lid", Fact::BaseLid),
    ("sm_lid", Fact::SmLid),
    ("link_layer", Fact::LinkLayer),
    ("active_width", Fact::Width),
    ("active_speed", Fact::Speed),
];

/// A `key: value` line inside a port block: a fact when `facts` names the key, and
/// ignored (but read) otherwise or outside a port.
fn port_line(
    obs: &mut Observations,
    device: &str,
    port: Option<u32>,
    facts: &[(&str, Fact)],
    key: &str,
    value: &str,
    at: &Location,
) -> bool {
    let fact = facts.iter().find(|(k, _)| *k == key).map(|(_, f)| *f);
    match (port, fact) {
        (Some(p), Some(fact)) => port_fact(obs, device, p, fact, value, at),
        _ => true,
    }
}

/// Record one fact about a port. Values may carry a code (`PORT_ACTIVE (4)`): the
/// first word counts.
fn port_fact(
    obs: &mut Observations,
    device: &str,
    port: u32,
    fact: Fact,
    value: &str,
    at: &Location,
) -> bool {
    let word = value.split_whitespace().next().unwrap_or_default();
    let entry = obs.port(device, port);
    match fact {
        Fact::State => entry.state = Some((port_state(word).to_owned(), at.clone())),
        Fact::Physical => entry.physical = Some((physical_state(value).to_owned(), at.clone())),
        Fact::BaseLid => entry.base_lid = word.parse().ok(),
        Fact::SmLid => entry.sm_lid = word.parse().ok(),
        // `2.5` (SDR) is no whole number of Gb/s and is left out: no label then.
        Fact::Rate => set_rate(entry, word.parse().ok(), "ibstat's Rate", at),
        // rdma-core's ibv_devinfo prints the width before the speed (width_str and
        // speed_str in libibverbs/examples/devinfo.c): `4X`, then `25.0 Gbps`.
        Fact::Width => entry.width = word.strip_suffix('X').and_then(|w| w.parse().ok()),
        Fact::Speed => {
            let rate = entry
                .width
                .zip(word.parse::<f64>().ok())
                .and_then(|(w, s)| {
                    let gbps = f64::from(w) * s;
                    (gbps.fract() == 0.0 && gbps > 0.0 && gbps < 1e6).then_some(gbps as u32)
                });
            set_rate(entry, rate, "ibv_devinfo's active_width x active_speed", at);
        }
        Fact::LinkLayer => return set_link_layer(obs, device, port, word, at, true),
    }
    true
}

/// A port's line rate, unless one was read already.
fn set_rate(port: &mut Port, rate: Option<u32>, from: &'static str, at: &Location) {
    if let Some(rate) = rate
        && port.rate.is_none()
    {
        port.rate = Some((rate, at.clone()));
        port.rate_from = from;
    }
}

fn devinfo_line(
    obs: &mut Observations,
    device: &str,
    port: &mut Option<u32>,
    t: &str,
    at: &Location,
) -> bool {
    if let Some(rest) = t.strip_prefix("GID[") {
        return devinfo_gid(obs, device, *port, rest, at);
    }
    let Some((key, value)) = key_value(t) else {
        // `-v` lists the device's capability flags one a line (`BAD_PKEY_CNTR`,
        // `NO SUPPORT`) before its ports: device-level, read and not needed.
        return port.is_none();
    };
    if key == "port" {
        return match value.parse() {
            Ok(n) => {
                *port = Some(n);
                true
            }
            Err(_) => false,
        };
    }
    // Before `port:`, device-level facts (transport, which says InfiniBand even for
    // RoCE; fw_ver, ...) are not needed.
    port_line(obs, device, *port, DEVINFO_FACTS, key, value, at)
}

/// `GID[  3]:    ::ffff:11.0.0.72, RoCE v2` (`ibv_devinfo -v`).
fn devinfo_gid(
    obs: &mut Observations,
    device: &str,
    port: Option<u32>,
    rest: &str,
    at: &Location,
) -> bool {
    let Some((index, value)) = rest.split_once("]:") else {
        return false;
    };
    let (Ok(index), Some(port)) = (index.trim().parse::<u32>(), port) else {
        return false;
    };
    let mut parts = value.split(',');
    let gid = parts.next().unwrap_or_default().trim().to_owned();
    let version = parts
        .next()
        .and_then(|v| v.trim().strip_prefix("RoCE v"))
        .and_then(|v| v.trim().parse().ok());
    if gid.is_empty() {
        return false;
    }
    obs.gids.push(GidRow {
        device: device.to_owned(),
        port,
        index,
        gid,
        version,
        netdev: None,
        at: at.clone(),
    });
    true
}

/// `mlx5_0/1 state ACTIVE physical_state LINK_UP netdev p1p1` (RoCE) or
/// `mlx5_0/1 subnet_prefix fe80:... lid 2 sm_lid 2 lmc 0 state ACTIVE ...` (IB).
fn rdma_link(obs: &mut Observations, rest: &str, at: &Location) {
    let words: Vec<&str> = rest.split_whitespace().collect();
    let parsed = words
        .first()
        .and_then(|w| w.split_once('/'))
        .filter(|(d, _)| plain_device(d))
        .and_then(|(d, p)| Some((d, p.parse::<u32>().ok()?)));
    let Some((device, port)) = parsed else {
        obs.unreadable.push((at.clone(), format!("link {rest}")));
        return;
    };
    let value = |key: &str| words.windows(2).find(|w| w[0] == key).map(|w| w[1]);
    let entry = obs.port(device, port);
    if let Some(s) = value("state") {
        entry.state = Some((port_state(s).to_owned(), at.clone()));
    }
    if let Some(s) = value("physical_state") {
        entry.physical = Some((physical_state(s).to_owned(), at.clone()));
    }
    if let Some(n) = value("netdev") {
        entry.netdev = Some((n.to_owned(), at.clone()));
    }
    if let Some(lid) = value("lid").and_then(|l| l.parse().ok()) {
        entry.base_lid = Some(lid);
        entry.sm_lid = value("sm_lid").and_then(|l| l.parse().ok());
        set_link_layer(obs, device, port, "InfiniBand", at, true);
    } else {
        // No LID: an Ethernet link layer. Weaker than ibstat or ibv_devinfo, which win.
        set_link_layer(obs, device, port, "Ethernet", at, false);
    }
}

/// `mlx5_12 port 1 ==> net1 (Up)` (ibdev2netdev, mlnx-tools): the port's netdev.
/// The state in brackets is the netdev's, not the port's, and is not needed.
fn ibdev2netdev(obs: &mut Observations, t: &str, at: &Location) -> bool {
    let Some((left, right)) = t.split_once("==>") else {
        return false;
    };
    let left: Vec<&str> = left.split_whitespace().collect();
    let [device, "port", port] = left.as_slice() else {
        return false;
    };
    let (Ok(port), Some(netdev)) = (port.parse::<u32>(), right.split_whitespace().next()) else {
        return false;
    };
    if !plain_device(device) {
        return false;
    }
    obs.port(device, port).netdev = Some((netdev.to_owned(), at.clone()));
    true
}

/// Where sysfs lists the RDMA devices.
const SYSFS_INFINIBAND: &str = "/sys/class/infiniband/";

/// A line of `ls -l /sys/class/infiniband/*/device/physfn` (captured with `2>&1`):
/// `lrwxrwxrwx 1 root root 0 Dec  2 18:00 /sys/class/infiniband/mlx5_12/device/physfn -> ../0000:1a:00.0`
/// says mlx5_12 is an SR-IOV VF (sysfs links a VF's PCI device to its physical
/// function); `ls: cannot access '/sys/class/infiniband/mlx5_0/device/physfn': No such
/// file or directory` says mlx5_0 is not one. The glob matching nothing (`*` as the
/// device) says no device is a VF, and adds nothing.
fn physfn(obs: &mut Observations, t: &str, at: &Location) -> bool {
    let Some((_, rest)) = t.split_once(SYSFS_INFINIBAND) else {
        return false;
    };
    let Some((device, tail)) = rest.split_once('/') else {
        return false;
    };
    let Some(after) = tail.strip_prefix("device/physfn") else {
        return false;
    };
    let vf = match after.trim_start().strip_prefix("->") {
        Some(target) if !target.trim().is_empty() => true,
        Some(_) => return false,
        None if t.contains("No such file or directory") => false,
        None => return false,
    };
    if device == "*" && !vf {
        return true;
    }
    if !plain_device(device) {
        return false;
    }
    obs.physfn.insert(device.to_owned(), (vf, at.clone()));
    true
}

/// A line of `grep -H . /sys/class/infiniband/*/ports/*/rate`:
/// `/sys/class/infiniband/mlx5_0/ports/1/rate:200 Gb/sec (4X HDR)`, the kernel's
/// rate_show (drivers/infiniband/core/sysfs.c: `%d%s Gb/sec (%s)`, `.5` for SDR).
/// None when the line is no rate file's; false when it is one that does not read.
fn sysfs_rate(obs: &mut Observations, t: &str, at: &Location) -> Option<bool> {
    let (_, rest) = t.split_once(SYSFS_INFINIBAND)?;
    let (device, tail) = rest.split_once("/ports/")?;
    let (port, value) = tail.split_once("/rate:")?;
    if device == "*" {
        // The glob matched nothing (`grep: ...: No such file or directory`).
        return Some(true);
    }
    let Ok(port) = port.parse::<u32>() else {
        return Some(false);
    };
    if !plain_device(device) {
        return Some(false);
    }
    let Some(gbps) = value
        .trim()
        .strip_suffix(')')
        .and_then(|v| v.split_once(" Gb/sec ("))
        .map(|(g, _)| g)
    else {
        return Some(false);
    };
    // `2.5 Gb/sec` (SDR) is no whole number: read, and no rate kept.
    set_rate(obs.port(device, port), gbps.parse().ok(), "sysfs' rate", at);
    Some(true)
}

fn set_link_layer(
    obs: &mut Observations,
    device: &str,
    port: u32,
    value: &str,
    at: &Location,
    strong: bool,
) -> bool {
    let layer = match value {
        "Ethernet" => LinkLayer::Ethernet,
        "InfiniBand" => LinkLayer::InfiniBand,
        _ => return false,
    };
    let entry = obs.port(device, port);
    if strong || entry.link_layer.is_none() {
        entry.link_layer = Some((layer, at.clone()));
    }
    true
}

/// ibstat's spelling of a port state; anything unknown is kept as written.
fn port_state(s: &str) -> &str {
    match s.trim_start_matches("PORT_") {
        "ACTIVE" | "Active" => "Active",
        "DOWN" | "Down" => "Down",
        "INIT" | "Initializing" => "Initializing",
        "ARMED" | "Armed" => "Armed",
        _ => s,
    }
}

/// ibstat's spelling of a physical state; anything unknown is kept as written.
fn physical_state(s: &str) -> &str {
    // ibv_devinfo -v writes `LINK_UP (5)`; ibstat `LinkUp`.
    let s = s.split_whitespace().next().unwrap_or_default();
    match s {
        "LINK_UP" | "LinkUp" => "LinkUp",
        "DISABLED" | "Disabled" => "Disabled",
        "POLLING" | "Polling" => "Polling",
        "SLEEP" | "Sleep" => "Sleep",
        _ => s,
    }
}

fn dpkg_line(obs: &mut Observations, t: &str, at: &Location) -> bool {
    if dpkg::is_header(t) {
        return true;
    }
    let (state, package) = match (dpkg::row(t), dpkg::not_found(t)) {
        (Some(row), _) => row,
        (None, Some(package)) => (dpkg::NOT_FOUND, package),
        (None, None) => return false,
    };
    obs.dpkg
        .get_or_insert_with(BTreeMap::new)
        .insert(package.to_owned(), (state.to_owned(), at.clone()));
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ls -l .../physfn` (with `2>&1`) and `ibdev2netdev`, as an in-pod capture holds
    /// them: a link is a VF, `No such file` a PF, the unmatched glob nothing, and a
    /// line of either that does not parse is reported by number.
    #[test]
    fn physfn_listing_and_ibdev2netdev() {
        let text = "\
lrwxrwxrwx 1 root root 0 Dec  2 10:00 /sys/class/infiniband/mlx5_12/device/physfn -> ../0000:1a:00.0
ls: cannot access '/sys/class/infiniband/mlx5_0/device/physfn': No such file or directory
ls: cannot access '/sys/class/infiniband/*/device/physfn': No such file or directory
/sys/class/infiniband/mlx5_3/device/physfn ->
mlx5_12 port 1 ==> net1 (Up)
mlx5 12 port 1 ==> net2 (Up)
";
        let mut obs = Observations::default();
        read(&mut obs, &"pod.txt".into(), text);
        let physfn: Vec<(&str, bool, usize)> = obs
            .physfn
            .iter()
            .map(|(d, (vf, at))| (d.as_str(), *vf, at.line))
            .collect();
        assert_eq!(physfn, [("mlx5_0", false, 2), ("mlx5_12", true, 1)]);
        let netdev = obs.ports[&("mlx5_12".to_owned(), 1)].netdev.clone();
        assert_eq!(
            netdev.map(|(n, at)| (n, at.line)),
            Some(("net1".to_owned(), 5))
        );
        let unreadable: Vec<usize> = obs.unreadable.iter().map(|(at, _)| at.line).collect();
        assert_eq!(unreadable, [4, 6]);
    }
}
