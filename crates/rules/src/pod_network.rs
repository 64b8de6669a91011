//! What a pod's network attachment, as its manifest shows it, means for the NCCL
//! variables it sets and the sidecars it may get: host names on a VF pod (RDG178), the
//! host's eth0 on a hostNetwork pod (RDG177), Multus networks on a hostNetwork pod
//! (RDG179), and Istio's proxy in front of RDMA traffic (RDG181). The facts are `../shared/reference/network-operator.md` §3, §4 and
//! §6; the plan's own checks of a pool are `src/plan/attachment.rs`.

use serde_json::Value;

use crate::diagnostics::escape::cut;
use crate::diagnostics::message::pointer_segment;
use crate::diagnostics::{Finding, Rule};
use crate::multus;
use crate::nccl;
use crate::platform::Profile;
use crate::platform::attachment::POD_NETWORK_IFNAME;
use crate::platform::is_rdma_resource;

use super::manifest::resources;

/// The annotation (or label) by which a pod opts out of Istio's sidecar injection.
pub const ISTIO_INJECT: &str = "sidecar.istio.io/inject";

/// The longest user value a message quotes.
const QUOTED: usize = 80;

/// Every finding of this module on `pod` (a pod spec at `base`) with its template's
/// `metadata`.
pub(crate) fn check(
    pod: &Value,
    metadata: &Value,
    base: &str,
    profile: Option<&'static Profile>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let multus = has_multus_networks(metadata);
    let host_network = pod["hostNetwork"] == true;
    if host_network && multus {
        // The kubelet gives a hostNetwork pod the node's network namespace, and the
        // container runtime runs no CNI plugin for it: Multus is never called.
        out.push(Finding::at_pointer(
            Rule::AttachmentShape,
            format!(
                "the pod is on the host's network and asks Multus for networks ({}): a pod on the host's network gets no pod network, so none is attached and NCCL sees the host's devices and interfaces; remove hostNetwork or the annotation",
                multus::NETWORKS_ANNOTATION
            ),
            format!("{base}/hostNetwork"),
        ));
    }
    for (i, c) in items(&pod["containers"]) {
        let at = format!("{base}/containers/{i}");
        let attached = multus
            .then(|| resources(c).find(|(name, _)| is_vf_or_host_device(name)))
            .flatten();
        for (j, var) in items(&c["env"]) {
            let (Some(name), Some(value)) = (var["name"].as_str(), var["value"].as_str()) else {
                continue;
            };
            let env_at = format!("{at}/env/{j}");
            match name {
                "NCCL_IB_HCA" => {
                    if let Some((device, _)) = attached
                        && let Some(host) = host_hca_names(value)
                    {
                        out.push(Finding::at_pointer(
                            Rule::HostHcaInPod,
                            format!(
                                "NCCL_IB_HCA=`{}` names the host's RDMA devices ({host}), but this pod's come through Multus as SR-IOV VFs or host devices ({}), which keep names the host chose when it made them; write the prefix `mlx5`, or leave NCCL_IB_HCA unset (NCCL then uses every RDMA device the pod has, its rails)",
                                cut(value, QUOTED),
                                cut(device, QUOTED)
                            ),
                            env_at,
                        ));
                    }
                }
                "NCCL_SOCKET_IFNAME" => {
                    let documented =
                        profile.is_some_and(|p| p.host_interfaces.contains(&POD_NETWORK_IFNAME));
                    if host_network && !documented && names_eth0(value) {
                        out.push(Finding::at_pointer(
                            Rule::SocketIfnameNotInPod,
                            format!(
                                "NCCL_SOCKET_IFNAME=`{}` on a hostNetwork pod names the host's {POD_NETWORK_IFNAME}, which exists only on hosts that have one (OCI's GPU shapes do; many name theirs bond0 or ens*); name the host's bootstrap interface (`rdmagen detect` reads them on a node)",
                                cut(value, QUOTED)
                            ),
                            env_at,
                        ));
                    }
                }
                _ => {}
            }
        }
    }
    out.extend(istio(pod, metadata, base, multus));
    out
}

/// RDG181: a pod that requests an RDMA device and does not opt out of Istio's sidecar
/// as Istio reads the opt-out (istio pkg/kube/inject/inject.go `injectRequired`, at
/// 1.27.0 lines 199-240): a hostNetwork pod is never injected (:207-209); the label
/// `sidecar.istio.io/inject` wins over the annotation of that name (:223-227); and from
/// 1.27 only the exact value `false` opts out, any other value falling back to the
/// namespace's default (:228-240; 1.24-1.26 lower-cased the value and took anything
/// but y/yes/true/on as false), so `False` or `no` is an opt-out only on older Istio.
fn istio(pod: &Value, metadata: &Value, base: &str, multus: bool) -> Option<Finding> {
    if pod["hostNetwork"] == true {
        return None;
    }
    let label = metadata["labels"][ISTIO_INJECT].as_str();
    let selector = label.or(metadata["annotations"][ISTIO_INJECT].as_str());
    if selector == Some("false") {
        return None;
    }
    let (i, name, section) = items(&pod["containers"]).find_map(|(i, c)| {
        resources(c)
            .find(|(name, _)| {
                is_rdma_resource(name) || multus && super::manifest::is_attached_device(name)
            })
            .map(|(name, section)| (i, name, section))
    })?;
    let what = match (selector, label) {
        (None, _) => "does not opt out of Istio's sidecar".to_owned(),
        (Some(value), Some(_)) => format!(
            "does not opt out of Istio's sidecar: its label {ISTIO_INJECT}: `{}` is what Istio reads, before the annotation of that name",
            cut(value, QUOTED)
        ),
        (Some(value), None) => format!(
            "opts out of Istio's sidecar with `{}`, but Istio 1.27 and later opt out only on the exact value `false` (any other falls back to the namespace's default)",
            cut(value, QUOTED)
        ),
    };
    Some(Finding::at_pointer(
        Rule::RdmaWithoutIstioOptOut,
        format!(
            "the pod requests {} but {what}: where the namespace injects one, its proxy sits between the pods and NCCL hangs; add the pod annotation {ISTIO_INJECT}: \"false\"",
            cut(name, QUOTED)
        ),
        format!(
            "{base}/containers/{i}/resources/{section}/{}",
            pointer_segment(name)
        ),
    ))
}

/// Whether the template's metadata asks Multus for secondary networks.
pub(crate) fn has_multus_networks(metadata: &Value) -> bool {
    metadata["annotations"][multus::NETWORKS_ANNOTATION]
        .as_str()
        .is_some_and(|v| !v.trim().is_empty())
}

/// On a Multus pod, a resource that is an SR-IOV VF or a host device: an attached
/// device other than the shared device plugin's `rdma/` pod slot, whose HCAs keep the
/// host's names (IPoIB beside it, reference §1).
fn is_vf_or_host_device(name: &str) -> bool {
    super::manifest::is_attached_device(name) && !name.to_ascii_lowercase().starts_with("rdma/")
}

/// The host device names an NCCL_IB_HCA value selects, when it names exact devices: an
/// `=` list, or a name with an index (`mlx5_3`). A prefix such as `mlx5` matches
/// whatever the VFs are called (reference §3); an exclusion (`^`) keeps every VF but
/// one that happens to carry an excluded name, so neither is reported.
fn host_hca_names(value: &str) -> Option<String> {
    let (exclude, exact, names) = nccl::hca_names(value.trim());
    if exclude {
        return None;
    }
    let named: Vec<&str> = names
        .into_iter()
        .filter(|n| exact || has_index(n))
        .collect();
    (!named.is_empty()).then(|| cut(&named.join(", "), QUOTED).into_owned())
}

/// `mlx5_3`: a device name ending in `_` and a number, the host's k-th device.
fn has_index(name: &str) -> bool {
    name.rsplit_once('_')
        .is_some_and(|(_, k)| !k.is_empty() && k.chars().all(|c| c.is_ascii_digit()))
}

/// Whether an NCCL_SOCKET_IFNAME value selects eth0 by name: `eth0`, `=eth0`, or a
/// list holding it. An exclusion (`^eth0`) selects every other interface.
fn names_eth0(value: &str) -> bool {
    let v = value.trim();
    if v.starts_with('^') {
        return false;
    }
    let list = v.strip_prefix('=').unwrap_or(v);
    list.split(',').any(|n| n.trim() == POD_NETWORK_IFNAME)
}

/// The items of a JSON array with their index; nothing for anything else.
fn items(v: &Value) -> impl Iterator<Item = (usize, &Value)> {
    v.as_array().into_iter().flatten().enumerate()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exact_and_indexed_hca_names_are_host_names() {
        assert_eq!(
            host_hca_names("=mlx5_1,mlx5_2").as_deref(),
            Some("mlx5_1, mlx5_2")
        );
        assert_eq!(host_hca_names("mlx5_3").as_deref(), Some("mlx5_3"));
        assert_eq!(host_hca_names("mlx5_3:1").as_deref(), Some("mlx5_3"));
        assert_eq!(host_hca_names("=mlx5").as_deref(), Some("mlx5"));
        assert_eq!(host_hca_names("mlx5"), None);
        assert_eq!(host_hca_names("mlx5,ibp"), None);
        assert_eq!(host_hca_names("^=mlx5_0"), None);
    }

    #[test]
    fn eth0_is_named_exactly_or_in_a_list() {
        assert!(names_eth0("eth0"));
        assert!(names_eth0("=eth0"));
        assert!(names_eth0("bond0,eth0"));
        assert!(!names_eth0("^eth0"));
        assert!(!names_eth0("eth"));
        assert!(!names_eth0("bond0"));
        assert!(!names_eth0("eth01"));
    }

    fn rules(pod: &Value, metadata: &Value) -> Vec<Rule> {
        check(pod, metadata, "/spec", None)
            .into_iter()
            .map(|f| f.rule)
            .collect()
    }

    #[test]
    fn a_vf_pod_with_host_names_and_no_istio_opt_out() {
        let pod = json!({"containers": [{
            "name": "pytorch",
            "env": [{"name": "NCCL_IB_HCA", "value": "=mlx5_1"}],
            "resources": {"limits": {"nvidia.com/rail1": 1}},
        }]});
        let multus = json!({"annotations": {"k8s.v1.cni.cncf.io/networks": "rail1"}});
        assert_eq!(
            rules(&pod, &multus),
            [Rule::HostHcaInPod, Rule::RdmaWithoutIstioOptOut]
        );
        // Without the annotation the resource is not an attached device.
        assert!(rules(&pod, &json!({})).is_empty());
        // The shared plugin's pod slot beside Multus (IPoIB) keeps the host's names.
        let mut shared = pod.clone();
        shared["containers"][0]["resources"] = json!({"limits": {"rdma/shared_ib": 1}});
        let opted_out = json!({"annotations": {
            "k8s.v1.cni.cncf.io/networks": "ipoib",
            "sidecar.istio.io/inject": "false",
        }});
        assert!(rules(&shared, &opted_out).is_empty());
        // The label opts out as well.
        let label = json!({"labels": {"sidecar.istio.io/inject": "false"}});
        assert!(rules(&shared, &label).is_empty());
        assert_eq!(rules(&shared, &json!({})), [Rule::RdmaWithoutIstioOptOut]);
    }

    /// Istio 1.27's reading: the label before the annotation, and only `false`.
    #[test]
    fn only_the_exact_false_opts_out_and_the_label_wins() {
        let pod = json!({"containers": [{
            "name": "pytorch",
            "resources": {"limits": {"rdma/hca": 1}},
        }]});
        for value in ["False", "no", "off", " false"] {
            let annotated = json!({"annotations": {"sidecar.istio.io/inject": value}});
            let found = check(&pod, &annotated, "/spec", None);
            assert_eq!(found.len(), 1, "{value:?}");
            assert!(
                found[0].message.contains("only on the exact value `false`"),
                "{}",
                found[0].message
            );
        }
        let both = json!({
            "labels": {"sidecar.istio.io/inject": "true"},
            "annotations": {"sidecar.istio.io/inject": "false"},
        });
        let found = check(&pod, &both, "/spec", None);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.contains("before the annotation"),
            "{}",
            found[0].message
        );
        let both = json!({
            "labels": {"sidecar.istio.io/inject": "false"},
            "annotations": {"sidecar.istio.io/inject": "true"},
        });
        assert!(check(&pod, &both, "/spec", None).is_empty());
    }

    #[test]
    fn eth0_on_the_host_network_unless_the_platform_has_it() {
        let pod = json!({"hostNetwork": true, "containers": [{
            "name": "pytorch",
            "env": [{"name": "NCCL_SOCKET_IFNAME", "value": "=eth0"}],
            "resources": {"limits": {"rdma/hca": 1}},
        }]});
        // No Istio finding: Istio does not inject into a hostNetwork pod.
        assert_eq!(rules(&pod, &json!({})), [Rule::SocketIfnameNotInPod]);
        // A platform whose hosts are documented to have eth0 (OCI's GPU shapes) makes
        // it right.
        let oci = crate::platform::profile(crate::platform::Platform::Oci);
        assert!(check(&pod, &json!({}), "/spec", Some(oci)).is_empty());
        // Multus networks on the host's network are never attached.
        let multus = json!({"annotations": {"k8s.v1.cni.cncf.io/networks": "rail1"}});
        assert_eq!(
            rules(&pod, &multus),
            [Rule::AttachmentShape, Rule::SocketIfnameNotInPod]
        );
        let mut pod_network = pod.clone();
        pod_network["hostNetwork"] = false.into();
        assert_eq!(
            rules(&pod_network, &json!({})),
            [Rule::RdmaWithoutIstioOptOut]
        );
    }
}
