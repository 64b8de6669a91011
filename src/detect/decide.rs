//! Decide a Pool from what the captures say, and explain it.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::detect::affinity;
use crate::detect::device::Device;
use crate::detect::{Observations, gid_index, natural_key};
use crate::diagnostics::escape::cut;
use crate::diagnostics::source::Location;
use crate::diagnostics::{Findings, Rule};
use crate::error::Error;
use crate::model::pool::{Attachment, Fabric, GidIndex, Platform, PodInterfaces};
use crate::model::topology::NodeTopology;
use crate::multus;
use crate::packages::dpkg;
use crate::platform::attachment::POD_NETWORK_IFNAME;

/// What the user tells detect beyond the captures.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub name: String,
    pub platform: Platform,
    /// The pod's bootstrap interface (the Pool's socketIfname, NCCL_SOCKET_IFNAME).
    /// Unset: eth0 on the cluster network; on hostNetwork the management netdev.
    pub socket_ifname: Option<String>,
    /// The host netdev of the management NIC (`eth0`, `bond0`): the RDMA device behind
    /// it is kept out of hcas. Unset: on hostNetwork the socket interface, else eth0.
    pub management_netdev: Option<String>,
    /// How the pods attach to the fabric. Unset: `sriov` for VFs captured in a pod,
    /// otherwise left out of the pool.
    pub attachment: Option<Attachment>,
    /// The rails' resource, Multus network and namespace (attachment sriov, hostdev).
    pub rails: RailNames,
    /// GPUs per node, when the user says. Unset: `nvidia-smi -L`'s count, else the
    /// matrix's, else 8.
    pub gpus_per_node: Option<u32>,
    /// The captures were taken inside a pod: GID indices there are not the host's, the
    /// netdevs are the pod's, and VFs mean SR-IOV.
    pub in_pod: bool,
}

/// What no capture shows about the rails: the device plugin's resource and the Multus
/// network of each. `{n}` in a value stands for the rail's number (1..N) and gives one
/// rail entry each; without it one entry with `count: N` stands for every rail.
#[derive(Debug, Clone, Default)]
pub struct RailNames {
    pub resource: Option<String>,
    pub network: Option<String>,
    pub namespace: Option<String>,
}

/// What stands for the rail's number in [`RailNames`].
pub const RAIL_NUMBER: &str = "{n}";

impl RailNames {
    fn any(&self) -> bool {
        self.resource.is_some() || self.network.is_some() || self.namespace.is_some()
    }
}

/// The pool detect writes, as the pool template lays it out.
#[derive(Debug, Clone, Serialize)]
pub struct PoolDraft {
    pub name: String,
    pub platform: Platform,
    pub gpus_per_node: u32,
    /// From `nvidia-smi -L`, when every GPU is one model.
    pub gpu_model: Option<String>,
    pub fabric: Fabric,
    /// The line-rate label (`IB 4*200G`) from ibstat's `Rate:`.
    pub label: Option<String>,
    /// Absent when the attachment gives the pod devices under names of its own (VFs).
    pub attachment: Option<Attachment>,
    /// None on an attachment whose pod does not see the host's device names.
    pub hcas: Option<Vec<String>>,
    /// How many data NICs (or VFs) the captures show, for the summary.
    #[serde(skip)]
    pub data_nics: usize,
    pub rails: Vec<RailDraft>,
    pub pod_interfaces: Option<PodInterfaces>,
    /// The pod's bootstrap interface.
    pub socket_ifname: String,
    /// The host's netdevs, from a capture on the host (or a hostNetwork pod).
    pub host_interfaces: Vec<String>,
    /// Absent on InfiniBand and TCP.
    pub gid_index: Option<GidIndex>,
    pub management_nic: Option<String>,
    /// What `nvidia-smi topo -m` and `lsmod` showed: the data NICs' affinity in rail
    /// order, and nvidia_peermem.
    pub topology: Option<NodeTopology>,
    /// Comment lines for the reader of the pool: what each value came from.
    pub notes: Vec<String>,
}

/// One `network.rails` entry.
#[derive(Debug, Clone, Serialize)]
pub struct RailDraft {
    pub resource: String,
    #[serde(skip_serializing_if = "is_one")]
    pub count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

/// How much of a user's or a capture's string a message quotes.
const QUOTED: usize = 40;

/// `net1`, `net12`: the names Multus gives secondary interfaces (multus.go:94-106).
fn multus_name(netdev: &str) -> Option<u32> {
    netdev
        .strip_prefix("net")
        .filter(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
        .and_then(|d| d.parse().ok())
}

/// Where the captures say a device is an SR-IOV VF: its `physfn` link, or, in a pod
/// where no listing says otherwise, a Multus interface (`netN`) as its netdev.
fn vf_evidence(obs: &Observations, d: &Device<'_>, in_pod: bool) -> Option<Location> {
    match obs.physfn.get(d.name) {
        Some((true, at)) => Some(at.clone()),
        Some((false, _)) => None,
        None if in_pod => d
            .netdevs()
            .iter()
            .find(|n| multus_name(n).is_some())
            .and_then(|n| d.netdev_at(n)),
        None => None,
    }
}

/// The interface a VF has in the pod: its Multus interface, else its only netdev.
fn pod_netdev(d: &Device<'_>) -> Option<String> {
    let netdevs = d.netdevs();
    netdevs
        .iter()
        .find(|n| multus_name(n).is_some())
        .or_else(|| netdevs.iter().next().filter(|_| netdevs.len() == 1))
        .cloned()
}

pub fn detect(
    obs: &Observations,
    options: &Options,
    findings: &mut Findings,
) -> Result<Option<PoolDraft>, Error> {
    for (at, line) in &obs.unreadable {
        findings.at(
            Rule::DiagUnreadableLine,
            format!("cannot read `{line}`; skipped"),
            at.clone(),
        );
    }
    for (at, why) in &obs.damaged {
        findings.at(Rule::DiagUnreadableLine, why.clone(), at.clone());
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
        // A matrix alone still says where its NICs are.
        if let Some(matrix) = &obs.topology {
            affinity::judge(
                matrix,
                &affinity::map(matrix, None),
                &mut Vec::new(),
                findings,
            );
        }
        findings.at(
            Rule::NothingDetected,
            "no RDMA device in the captures; capture show_gids, ibstat, ibv_devinfo or rdma link show",
            first_file(),
        );
        return Ok(None);
    }

    let mut notes = Vec::new();
    let vfs: Vec<(&str, Location)> = devices
        .iter()
        .filter_map(|d| vf_evidence(obs, d, options.in_pod).map(|at| (d.name, at)))
        .collect();
    let attachment = match options.attachment {
        Some(a) => Some(a),
        None if options.in_pod && !vfs.is_empty() => {
            let listed: Vec<&str> = vfs.iter().map(|(d, _)| *d).collect();
            notes.push(format!(
                "captured in a pod whose RDMA devices are SR-IOV VFs ({}): attachment: sriov, one rail per VF",
                listed.join(", ")
            ));
            Some(Attachment::Sriov)
        }
        None => {
            if !options.in_pod
                && let Some((d, _)) = obs.physfn.iter().find(|(_, (vf, _))| *vf)
            {
                notes.push(format!(
                    "{d} is an SR-IOV VF (physfn); if these captures come from a pod, --in-pod proposes the SR-IOV attachment"
                ));
            }
            None
        }
    };
    let host_network = attachment == Some(Attachment::HostNetwork);
    let rail_mode = matches!(attachment, Some(Attachment::Sriov | Attachment::Hostdev));
    // A pod with VFs or moved devices: the management NIC stays on the host.
    let vf_pod = options.in_pod && rail_mode;
    // The netdevs in the captures are the host's: taken on the node, or in a pod on
    // the host's network.
    let host_view = !options.in_pod || host_network;
    check_flags(options, attachment, &devices)?;

    // On hostNetwork the pod bootstraps on a host netdev, by default the management
    // NIC's; a flag for either names both.
    let named_management = options
        .management_netdev
        .clone()
        .or_else(|| options.socket_ifname.clone().filter(|_| host_network));
    let management_netdev = named_management
        .clone()
        .unwrap_or_else(|| POD_NETWORK_IFNAME.to_owned());
    let socket_ifname = match &options.socket_ifname {
        Some(s) => s.clone(),
        None if host_network => management_netdev.clone(),
        None => POD_NETWORK_IFNAME.to_owned(),
    };

    let management = if vf_pod {
        notes.push(
            "the management NIC is the host's and not in this pod: no managementNic".to_owned(),
        );
        None
    } else {
        let found = devices
            .iter()
            .find(|d| d.netdevs().contains(&management_netdev))
            .map(|d| d.name.to_owned());
        match &found {
            Some(m) => notes.push(format!(
                "{m} carries {} (the management netdev): management NIC, kept out of hcas",
                cut(&management_netdev, QUOTED)
            )),
            None => findings.at(
                Rule::NoManagementNic,
                format!(
                    "no device's netdev is {}; every device is taken as a data NIC (check --management-netdev)",
                    cut(&management_netdev, QUOTED)
                ),
                first_file(),
            ),
        }
        found
    };

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
        return Ok(None);
    };
    // IPoIB is InfiniBand's: the ipoib CNI makes an IPoIB child of an IB port, which
    // an Ethernet (RoCE) port does not have (network-operator.md §1).
    if attachment == Some(Attachment::Ipoib) && fabric != Fabric::Ib {
        let at = candidates
            .iter()
            .find_map(|(d, _, _)| d.fabric().and_then(|(_, at)| at))
            .map_or_else(|| first_file().to_string(), |at| at.to_string());
        return Err(Error::Usage(format!(
            "--attachment ipoib: {at} shows a {} link layer, and IPoIB runs only on InfiniBand ports; give --attachment sriov, hostdev, shared or hostNetwork for a RoCE pool",
            fabric.name()
        )));
    }
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
    let mut data: Vec<&Device<'_>> = candidates
        .iter()
        .filter(|(_, f, usable)| *f == fabric && *usable)
        .map(|(d, _, _)| *d)
        .collect();
    for d in &data {
        if fabric == Fabric::Ib {
            check_subnet_manager(d, findings);
        }
    }
    let mut data_names: Vec<String> = data.iter().map(|d| d.name.to_owned()).collect();
    let topo = obs
        .topology
        .as_ref()
        .map(|m| (m, affinity::map(m, Some(data_names.as_slice()))));
    if let Some((matrix, a)) = &topo {
        affinity::judge(matrix, a, &mut notes, findings);
        if a.matched && !vf_pod {
            // The NICs in rail order first, then any the matrix does not show.
            let ordered: Vec<String> = a.nics.iter().map(|n| n.name.clone()).collect();
            data_names.sort_by_key(|n| ordered.iter().position(|o| o == n).unwrap_or(usize::MAX));
            notes.push(format!(
                "hcas in rail order, by the GPUs each NIC is nearest (nvidia-smi topo -m): {}; a pod on part of a node takes the first ones (partialNodeHcas: first), which serve the lowest GPUs, but which GPUs the device plugin gives it is not known",
                data_names.join(", ")
            ));
        }
    }
    if data_names.is_empty() {
        notes.push(format!(
            "no active data NIC on {}: hcas is empty",
            fabric.name()
        ));
    } else {
        notes.push(format!(
            "{} {} on {}: {}",
            data_names.len(),
            if vf_pod { "VF(s)" } else { "data NIC(s)" },
            fabric.name(),
            data_names.join(", ")
        ));
    }
    let hcas = match attachment {
        Some(a) if !a.host_device_names() => {
            notes.push(format!(
                "attachment: {}: no hcas, the pod sees its own devices under names the host chose when it made them, which differ per node; NCCL uses every RDMA device the pod has",
                a.name()
            ));
            None
        }
        _ => Some(data_names.clone()),
    };
    // A pod with its own VFs or devices has their GID tables, which hold the pod's
    // addresses; the host's table says nothing about the index inside it.
    let own_devices = attachment.filter(|a| !a.host_device_names() && !options.in_pod);
    let gid_index = (fabric == Fabric::Roce).then(|| match own_devices {
        Some(a) => {
            notes.push(format!(
                "attachment: {}: gidIndex: auto, since the pod's devices have GID tables of their own, holding the pod's addresses, which a host capture does not show (capture inside a pod with --in-pod to read them)",
                a.name()
            ));
            GidIndex::Auto
        }
        None => gid_index::gid_index(obs, &data, options.in_pod, &mut notes, findings),
    });
    if gid_index == Some(GidIndex::Auto) {
        notes.push(
            "gidIndex: auto needs NCCL 2.21 or later in the images (dynamic GID selection; index 0 before)"
                .to_owned(),
        );
    }

    let label = if vf_pod {
        None
    } else {
        affinity::line_rate_label(obs, fabric, &data_names, &mut notes)
    };
    let label = label.map(|(label, from)| {
        notes.push(format!(
            "network.label {label}: {} of each data NIC",
            from.join(", ")
        ));
        label
    });
    let listed = affinity::gpus(obs, &mut notes);
    let gpus_per_node = match (options.gpus_per_node, &listed, &obs.topology) {
        (Some(n), Some((listed, _, by)), _) if n != *listed => {
            notes.push(format!(
                "gpu.perNode {n} as --gpus says; {by} lists {listed}"
            ));
            n
        }
        (Some(n), _, _) => n,
        (None, Some((listed, _, by)), _) => {
            notes.push(format!("gpu.perNode {listed}: the GPUs {by} lists"));
            *listed
        }
        (None, None, Some(m)) if m.gpu_count() > 0 => {
            let n = u32::try_from(m.gpu_count()).unwrap_or(u32::MAX);
            notes.push(format!("gpu.perNode {n}: the GPUs of nvidia-smi topo -m"));
            n
        }
        (None, None, _) => {
            notes.push(
                "gpu.perNode 8: no capture lists the GPUs (capture nvidia-smi -L, or give --gpus)"
                    .to_owned(),
            );
            8
        }
    };
    let gpu_model = listed.and_then(|(_, model, _)| model);
    let nvidia_peermem = affinity::peermem(obs, fabric, findings);
    // Only names the other captures confirm: `NIC3` without its legend is no device a
    // pool can name.
    let nics = topo
        .as_ref()
        .filter(|(_, a)| a.matched)
        .map(|(_, a)| a.nics.clone())
        .unwrap_or_default();
    let topology = (!nics.is_empty() || nvidia_peermem.is_some()).then_some(NodeTopology {
        nics,
        nvidia_peermem,
    });

    // Rails in the order Multus names the pod's interfaces (net1, net2, ...), which
    // is the annotation's order.
    if vf_pod {
        data.sort_by_key(|d| pod_netdev(d).map(|n| natural_key(&n)));
    }
    let (rails, pod_interfaces) = if let Some(mode) = attachment.filter(|_| rail_mode) {
        let at = vfs
            .first()
            .map(|(_, at)| at.clone())
            .unwrap_or_else(first_file);
        let Some(rails) = rails(&options.rails, mode, data.len(), at, &mut notes, findings) else {
            return Ok(None);
        };
        let pod_interfaces = if vf_pod {
            pod_interfaces(&data, &mut notes)
        } else {
            None
        };
        (rails, pod_interfaces)
    } else {
        (Vec::new(), None)
    };

    let host_interfaces = if host_view {
        let mut all: Vec<String> = devices
            .iter()
            .flat_map(|d| d.netdevs())
            .chain(named_management)
            // A Linux interface name (the sysfs loop writes `-` for none); Multus checks
            // names by the same rule.
            .filter(|n| n != "-" && multus::ifname_problem(n).is_none())
            .collect();
        all.sort_by(|a, b| natural_key(a).cmp(&natural_key(b)).then(a.cmp(b)));
        all.dedup();
        if !all.is_empty() {
            notes.push(if host_network {
                "hostInterfaces: the host's netdevs, which a hostNetwork pod shares".to_owned()
            } else {
                "hostInterfaces: the host's netdevs as captured; a pod on the cluster network does not have them".to_owned()
            });
        }
        all
    } else {
        Vec::new()
    };
    notes.push(if host_network {
        format!(
            "socketIfname {}: attachment hostNetwork, so the pod bootstraps on a host netdev",
            cut(&socket_ifname, QUOTED)
        )
    } else if options.socket_ifname.is_none() {
        "socketIfname eth0: the pod's own cluster-network interface (Multus's delegate 0), whatever the host's netdevs are; --attachment hostNetwork for pods on the host's network".to_owned()
    } else {
        format!(
            "socketIfname {}: as --socket-ifname says",
            cut(&socket_ifname, QUOTED)
        )
    });

    // Only what the captures show goes into the pool: they say nothing of the
    // training-operator or of the NCCL inside the images, so no spec.target.
    notes.push(format!(
        "no spec.target: the captures show neither the training-operator version nor the images' NCCL (set target.nccl if you know it); the {} platform's defaults apply",
        options.platform.name()
    ));
    if let Some(ofed) = &obs.ofed {
        notes.push(format!("driver stack: {ofed}"));
    }
    Ok(Some(PoolDraft {
        name: options.name.clone(),
        platform: options.platform,
        gpus_per_node,
        gpu_model,
        fabric,
        label,
        attachment,
        hcas,
        data_nics: data.len(),
        rails,
        pod_interfaces,
        socket_ifname,
        host_interfaces,
        gid_index,
        // Written only when it is not the default mlx5_0; `none` when the management
        // NIC has no RDMA device, so that an mlx5_0 data NIC is not mistaken for it.
        // Not at all in a VF pod, which has no management NIC.
        management_nic: match management {
            _ if vf_pod => None,
            Some(m) if m == crate::model::pool::DEFAULT_MANAGEMENT_NIC => None,
            Some(m) => Some(m),
            None => Some("none".to_owned()),
        },
        topology,
        notes,
    }))
}

/// Flags that contradict each other or the captures: a usage error, before any pool.
fn check_flags(
    options: &Options,
    attachment: Option<Attachment>,
    devices: &[Device<'_>],
) -> Result<(), Error> {
    let host_network = attachment == Some(Attachment::HostNetwork);
    // `--socket-ifname` once also named the management NIC's host netdev. Given a
    // host netdev the captures show, and nothing else, the user means one of two
    // pools; say which flag gives which.
    if !options.in_pod
        && !host_network
        && options.management_netdev.is_none()
        && let Some(socket) = options
            .socket_ifname
            .as_deref()
            .filter(|s| *s != POD_NETWORK_IFNAME)
        && let Some((device, at)) = devices
            .iter()
            .find_map(|d| d.netdev_at(socket).map(|at| (d.name, at)))
    {
        let s = cut(socket, QUOTED);
        return Err(Error::Usage(format!(
            "--socket-ifname {s}: {at} shows {s} as a host netdev of {device}. --socket-ifname is the pod's bootstrap interface (eth0 for pods on the cluster network); name the host's management netdev with --management-netdev {s}, or give --attachment hostNetwork for pods on the host's network, which bootstrap on {s}"
        )));
    }
    let rail_mode = matches!(attachment, Some(Attachment::Sriov | Attachment::Hostdev));
    if options.rails.any() && !rail_mode {
        let mode = attachment.map_or("(unset)", Attachment::name);
        return Err(Error::Usage(format!(
            "--rail-resource, --rail-network and --rail-namespace describe the rails of attachment sriov or hostdev, and the pool's attachment is {mode}; give --attachment sriov or hostdev, or --in-pod with captures of the pod's VFs"
        )));
    }
    Ok(())
}

/// The rails of a VF or host-device pool: one per data device, named by the flags, or
/// None (with an error) when the flags do not name them.
fn rails(
    names: &RailNames,
    mode: Attachment,
    count: usize,
    at: Location,
    notes: &mut Vec<String>,
    findings: &mut Findings,
) -> Option<Vec<RailDraft>> {
    let resource = names
        .resource
        .clone()
        .or_else(|| mode.default_resource().map(str::to_owned));
    let (Some(resource), Some(network)) = (resource, names.network.clone()) else {
        let missing = match (
            names.resource.is_none() && mode.default_resource().is_none(),
            names.network.is_none(),
        ) {
            (true, true) => "--rail-resource and --rail-network",
            (true, false) => "--rail-resource",
            _ => "--rail-network",
        };
        findings.at(
            Rule::AttachmentShape,
            format!(
                "attachment: {}: the pool needs {count} rail(s), each a device-plugin resource and the Multus network that attaches it, which no capture shows; give {missing} (`{RAIL_NUMBER}` stands for the rail's number: --rail-resource nvidia.com/rail{RAIL_NUMBER} --rail-network gpu-rail{RAIL_NUMBER}; without it one entry stands for every rail)",
                mode.name()
            ),
            at,
        );
        return None;
    };
    let namespace = names.namespace.clone();
    let per_rail = [Some(&resource), Some(&network), namespace.as_ref()]
        .into_iter()
        .flatten()
        .any(|v| v.contains(RAIL_NUMBER));
    let rails = if per_rail {
        let number = |v: &str, n: usize| v.replace(RAIL_NUMBER, &n.to_string());
        (1..=count)
            .map(|n| RailDraft {
                resource: number(&resource, n),
                count: 1,
                network: Some(number(&network, n)),
                namespace: namespace.as_deref().map(|v| number(v, n)),
            })
            .collect()
    } else if count == 0 {
        Vec::new()
    } else {
        vec![RailDraft {
            resource,
            count,
            network: Some(network),
            namespace,
        }]
    };
    notes.push(format!(
        "rails: {count}, one per {} (names from --rail-resource and --rail-network)",
        if mode == Attachment::Hostdev {
            "device"
        } else {
            "VF"
        }
    ));
    Some(rails)
}

/// The VFs' interfaces as the pod sees them: `auto` when they are net1..netN (as
/// Multus names them in annotation order), else the names.
fn pod_interfaces(data: &[&Device<'_>], notes: &mut Vec<String>) -> Option<PodInterfaces> {
    let names: Option<Vec<String>> = data.iter().map(|d| pod_netdev(d)).collect();
    let Some(names) = names.filter(|n| !n.is_empty()) else {
        notes.push(
            "the captures do not name every VF's interface: podInterfaces left out (auto)"
                .to_owned(),
        );
        return None;
    };
    let auto = names
        .iter()
        .enumerate()
        .all(|(i, n)| multus_name(n) == Some(i as u32 + 1));
    notes.push(format!(
        "podInterfaces{}: the VFs are {} in the pod",
        if auto { " auto" } else { "" },
        names.join(", ")
    ));
    Some(if auto {
        PodInterfaces::Auto
    } else {
        PodInterfaces::Named(names)
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
            gpus_per_node: Some(8),
            ..Options::default()
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
        let pool = detect(&obs, &options(), &mut findings).unwrap().unwrap();
        assert_eq!(pool.hcas.unwrap(), ["mlx5_1", "mlx5_2"]);
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
        let pool = detect(&obs, &options(), &mut findings).unwrap().unwrap();
        assert_eq!(pool.hcas.unwrap(), ["mlx5_", "mlx5_1"]);
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
            let pool = detect(&obs, &options(), &mut findings).unwrap().unwrap();
            assert_eq!(pool.gid_index, Some(expected), "{text}");
        }
    }
}
