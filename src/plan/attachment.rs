//! How the pod attaches to the fabric: which rail resources it requests, which Multus
//! networks attach them, and which names exist inside it. The pool's `network` states
//! the attachment (`attachment`, `rails`, `podInterfaces`, `hostInterfaces`); the
//! facts behind each choice are in `platform/attachment.rs` and `multus.rs`.

use std::collections::HashSet;

use crate::diagnostics::{Findings, Rule};
use crate::model::pool::{Attachment, Fabric, PodInterfaces, Rail};
use crate::model::{Loaded, PoolDocument};
use crate::multus::{self, Selection};
use crate::plan::ctx::Ctx;
use crate::platform::attachment::POD_NETWORK_IFNAME;
use crate::yaml::tree::Seg;

/// What a pod with RDMA on gets from the pool's rails.
pub struct Rails {
    /// Each resource with its count, in rail order of first appearance.
    pub resources: Vec<(String, u32)>,
    /// One Multus selection per rail that names a network, in rail order.
    pub networks: Vec<Selection>,
}

/// The pool's rails expanded one per device, in GPU order.
fn expanded(rails: &[Rail]) -> Vec<&Rail> {
    rails
        .iter()
        .flat_map(|r| std::iter::repeat_n(r, r.count as usize))
        .collect()
}

/// How many of R rails a pod on k of G GPUs gets: ceil(k·R/G), every one for a whole
/// node (the same share as `partialNodeHcas: first`, seed 001's table).
pub fn share(rails: usize, gpus: u32, per_node: u32) -> usize {
    if per_node == 0 || gpus >= per_node {
        return rails;
    }
    let wanted = (u64::from(gpus) * rails as u64).div_ceil(u64::from(per_node));
    (wanted as usize).min(rails)
}

/// The rails of this job's pods (RDMA is on and the pool has rails).
pub fn for_job(ctx: &mut Ctx<'_>) -> Rails {
    let network = &ctx.pool.value.spec.network;
    let all = expanded(&network.rails);
    let gpus = ctx.job.value.spec.gpus_per_node;
    let per_node = ctx.pool.value.spec.gpu.per_node;
    let taken = share(all.len(), gpus, per_node);
    let names: Vec<Option<String>> = match &network.pod_interfaces {
        Some(PodInterfaces::Named(names)) => names.iter().cloned().map(Some).collect(),
        _ => Vec::new(),
    };
    let mut resources: Vec<(String, u32)> = Vec::new();
    let mut networks = Vec::new();
    for (i, rail) in all[..taken].iter().enumerate() {
        match resources
            .iter_mut()
            .find(|(name, _)| *name == rail.resource)
        {
            Some((_, count)) => *count += 1,
            None => resources.push((rail.resource.clone(), 1)),
        }
        if let Some(name) = &rail.network {
            networks.push(Selection {
                namespace: rail.namespace.clone(),
                name: name.clone(),
                interface: names.get(i).cloned().flatten(),
            });
        }
    }
    let pool = ctx.pool.value.metadata.name.clone();
    let listed = resources
        .iter()
        .map(|(name, count)| format!("{name}: {count}"))
        .collect::<Vec<_>>()
        .join(", ");
    let reason = if taken == all.len() {
        format!(
            "a whole node gets every one of pool `{pool}`'s {} rails (network.rails, in GPU order), one device each",
            all.len()
        )
    } else {
        ctx.report(
            Rule::PartialNodeNics,
            format!(
                "the pod takes {gpus} of {per_node} GPUs and gets the first ceil({gpus}*{}/{per_node}) = {taken} of pool `{pool}`'s rails; which GPUs it gets is not known, so these rails may be far from them (no GPUDirect RDMA)",
                all.len()
            ),
            &[Seg::Key("spec"), Seg::Key("gpusPerNode")],
        );
        format!(
            "the rails of its GPUs: the first ceil({gpus}*{}/{per_node}) = {taken} of pool `{pool}`'s {} rails (network.rails, in GPU order)",
            all.len(),
            all.len()
        )
    };
    ctx.decisions.record("rdma resource", listed, reason);
    if let (true, Some(why)) = (networks.is_empty(), ctx.profile.rails_without_networks) {
        ctx.decisions.record(
            format!("annotation {}", multus::NETWORKS_ANNOTATION),
            "(none)",
            why,
        );
    }
    if !networks.is_empty() {
        let how = match &network.pod_interfaces {
            Some(PodInterfaces::Named(_)) => {
                "each with the interface name the pool's podInterfaces gives it (`@name`)"
            }
            _ => {
                "Multus names them net1..netN in this order (multus.go:94-106), the cluster network staying eth0"
            }
        };
        ctx.decisions.record(
            format!("annotation {}", multus::NETWORKS_ANNOTATION),
            multus::format(&networks),
            format!(
                "one Multus network per rail, in rail order: each entry takes one device of its NetworkAttachmentDefinition's resource (k8sclient.go:306); a name without a namespace is read in the pod's (k8sclient.go:247-250); {how}"
            ),
        );
    }
    Rails {
        resources,
        networks,
    }
}

/// NCCL_SOCKET_IFNAME when the pool names none: eth0 on the cluster network, where
/// an attachment says the pod is on it.
pub fn default_socket_ifname(
    attachment: Option<Attachment>,
) -> Option<(&'static str, &'static str)> {
    match attachment {
        Some(Attachment::HostNetwork) | None => None,
        Some(_) => Some((
            POD_NETWORK_IFNAME,
            "the pod's cluster-network interface (Multus's delegate 0, multus.go:94-106): bootstrap stays off the RDMA rails",
        )),
    }
}

/// Checks of a pool's attachment that need no job; run once per pool.
pub fn check_pool(pool: &Loaded<PoolDocument>, findings: &mut Findings) {
    let net = &pool.value.spec.network;
    let at = |path: &[Seg<'_>]| {
        let mut full = vec![Seg::Key("spec"), Seg::Key("network")];
        full.extend_from_slice(path);
        pool.doc.locate(&full)
    };
    let shape = |findings: &mut Findings, message: String, path: &[Seg<'_>]| {
        findings.at(Rule::AttachmentShape, message, at(path));
    };
    let attachment = net.attachment;
    let mode = attachment.map_or("(unset)", Attachment::name);
    let profile = crate::platform::profile(pool.value.spec.platform);
    if !net.rails.is_empty() {
        match attachment {
            None => shape(
                findings,
                "rails need an `attachment` (sriov, hostdev, ipoib or hostNetwork): it decides what the pod sees".to_owned(),
                &[Seg::Key("rails")],
            ),
            Some(Attachment::Shared) => shape(
                findings,
                "attachment: shared gives every pod one resource of the shared device plugin (a pod slot, always 1), not rails; name it in `rdmaResource`".to_owned(),
                &[Seg::Key("rails")],
            ),
            _ => {}
        }
        if net.rdma_resource.is_some() {
            shape(
                findings,
                "rdmaResource and rails both name the RDMA devices; keep the rails".to_owned(),
                &[Seg::Key("rdmaResource")],
            );
        }
    }
    if matches!(attachment, Some(Attachment::Sriov)) && net.rails.is_empty() {
        shape(
            findings,
            "attachment: sriov needs `rails`: each VF's resource and the Multus network that attaches it".to_owned(),
            &[Seg::Key("attachment")],
        );
    }
    for (i, rail) in net.rails.iter().enumerate() {
        let rail_at = |field: &'static str| [Seg::Key("rails"), Seg::Index(i), Seg::Key(field)];
        match (&rail.network, attachment) {
            (Some(_), Some(a)) if !a.takes_networks() => shape(
                findings,
                format!(
                    "rail {} names a Multus network, but a pod on the host's network (attachment: {mode}) has no network namespace of its own to attach it to",
                    i + 1
                ),
                &rail_at("network"),
            ),
            (None, Some(Attachment::Sriov))
                if net.fabric == Fabric::Ib && profile.rails_without_networks.is_some() => {}
            (None, Some(Attachment::Sriov | Attachment::Hostdev)) => shape(
                findings,
                format!(
                    "rail {} names no Multus network; with attachment: {mode} the device reaches the pod only through its NetworkAttachmentDefinition",
                    i + 1
                ),
                &[Seg::Key("rails"), Seg::Index(i)],
            ),
            _ => {}
        }
        for (field, value) in [("network", &rail.network), ("namespace", &rail.namespace)] {
            if let Some(problem) = value.as_deref().and_then(multus::name_problem) {
                shape(findings, problem, &rail_at(field));
            }
        }
        if rail.namespace.is_some() && rail.network.is_none() {
            shape(
                findings,
                format!("rail {} has a namespace but no network", i + 1),
                &rail_at("namespace"),
            );
        }
    }
    if let Some(PodInterfaces::Named(names)) = &net.pod_interfaces {
        let rails: u32 = net.rails.iter().map(|r| r.count).sum();
        if names.len() != rails as usize {
            shape(
                findings,
                format!(
                    "podInterfaces names {} interfaces for {rails} rails; give one per rail, or `auto`",
                    names.len()
                ),
                &[Seg::Key("podInterfaces")],
            );
        }
        let mut seen = HashSet::new();
        for (i, name) in names.iter().enumerate() {
            let problem = multus::ifname_problem(name)
                .or_else(|| {
                    (name == POD_NETWORK_IFNAME)
                        .then(|| format!("`{name}` is the pod's cluster-network interface"))
                })
                .or_else(|| {
                    (!seen.insert(name.as_str())).then(|| format!("`{name}` is listed twice"))
                });
            if let Some(problem) = problem {
                shape(
                    findings,
                    problem,
                    &[Seg::Key("podInterfaces"), Seg::Index(i)],
                );
            }
        }
    }
    if let Some(a) = attachment
        && !a.host_device_names()
        && !net.hcas.is_empty()
    {
        findings.at(
            Rule::HostHcaInPod,
            format!("hcas names the host's RDMA devices, but with attachment: {mode} the pod sees only its own VFs or devices, under names the host chose when it made them; NCCL_IB_HCA is not written (NCCL uses every device the pod has)"),
            at(&[Seg::Key("hcas")]),
        );
    }
    if let Some(socket) = &net.socket_ifname {
        let listed = net.host_interfaces.iter().any(|h| h == socket);
        let platform_has = profile.host_interfaces.contains(&socket.as_str());
        let message = match attachment {
            Some(Attachment::HostNetwork) if !listed && !platform_has => {
                Some(if net.host_interfaces.is_empty() {
                    format!(
                        "socketIfname is `{socket}`, but a hostNetwork pod bootstraps on a host interface and the pool names none (hostInterfaces); `rdmagen detect` reads them on a node"
                    )
                } else {
                    format!(
                        "socketIfname is `{socket}`, which is not among the host's interfaces ({}): a hostNetwork pod sees only those",
                        net.host_interfaces.join(", ")
                    )
                })
            }
            Some(a) if a != Attachment::HostNetwork && listed && socket != POD_NETWORK_IFNAME => {
                Some(format!(
                    "socketIfname is `{socket}`, one of the host's interfaces; a pod on the cluster network (attachment: {mode}) has eth0 and its rails, not the host's netdevs"
                ))
            }
            _ => None,
        };
        if let Some(message) = message {
            findings.at(
                Rule::SocketIfnameNotInPod,
                message,
                at(&[Seg::Key("socketIfname")]),
            );
        }
    }
}

/// A job's own `hostNetwork: true` on a pool whose pods attach to the fabric some
/// other way. The container runtime sets up no pod network for a pod on the host's
/// network (the kubelet asks for the node's network namespace; containerd runs no CNI
/// plugin for it), so Multus attaches none of the rails' networks (RDG179), and the pod
/// bootstraps on the host's netdevs, not the `eth0` of a pod on the cluster network
/// (RDG177, where the pool names no such host interface).
pub fn check_job_host_network(ctx: &mut Ctx<'_>, networks: &[Selection]) {
    let net = &ctx.pool.value.spec.network;
    let attachment = net.attachment;
    if !ctx.job.value.spec.host_network || attachment == Some(Attachment::HostNetwork) {
        return;
    }
    let pool = ctx.pool.value.metadata.name.clone();
    let at = [Seg::Key("spec"), Seg::Key("hostNetwork")];
    if !networks.is_empty() {
        let mode = attachment.map_or("none", Attachment::name);
        ctx.report(
            Rule::AttachmentShape,
            format!(
                "the job sets hostNetwork: true, but pool `{pool}` attaches its pods' rails through Multus (attachment: {mode}, {} network(s)): a pod on the host's network gets no pod network, so no Multus network is attached and NCCL sees the host's devices and interfaces, not the rails; remove hostNetwork, or use a pool with attachment: hostNetwork",
                networks.len()
            ),
            &at,
        );
    }
    // The pool's bootstrap interface, or the one written when it names none.
    let Some(socket) = net
        .socket_ifname
        .clone()
        .or_else(|| default_socket_ifname(attachment).map(|(name, _)| name.to_owned()))
    else {
        return;
    };
    let on_host = net.host_interfaces.contains(&socket)
        || ctx.profile.host_interfaces.contains(&socket.as_str());
    if socket == POD_NETWORK_IFNAME && !on_host {
        ctx.report(
            Rule::SocketIfnameNotInPod,
            format!(
                "the job sets hostNetwork: true, so its pods bootstrap on the host's interfaces, but pool `{pool}`'s bootstrap interface is `{socket}`, the one a pod on the cluster network has; name a host interface in the pool (hostInterfaces, socketIfname), or remove hostNetwork"
            ),
            &at,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_gets_the_rails_of_its_gpus() {
        assert_eq!(share(8, 8, 8), 8);
        assert_eq!(share(8, 4, 8), 4);
        assert_eq!(share(8, 1, 8), 1);
        assert_eq!(share(4, 3, 8), 2);
    }
}
