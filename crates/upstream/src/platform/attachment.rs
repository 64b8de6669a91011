//! How a pool's pods attach to the RDMA fabric: the NVIDIA Network Operator's modes and
//! the host's network. Facts from `../shared/reference/network-operator.md` §1 and §4
//! (Mellanox/network-operator@v26.4.1, k8s-rdma-shared-dev-plugin@v1.5.3,
//! sriov-network-device-plugin@v3.11.0).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How pods reach the RDMA fabric.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema, clap::ValueEnum,
)]
pub enum Attachment {
    /// The RDMA shared device plugin: one resource (a pod slot, always 1) hands the pod
    /// every HCA its selector matched, under the host's names.
    #[serde(rename = "shared")]
    #[value(name = "shared")]
    Shared,
    /// SR-IOV VFs through Multus: one VF per rail (a resource per rail, or one pool of
    /// VFs with a count), each attached by a secondary network; inside the pod the VFs
    /// are `net1..netN` and their RDMA devices have names the host chose.
    #[serde(rename = "sriov")]
    #[value(name = "sriov")]
    Sriov,
    /// Host devices through Multus (`HostDeviceNetwork`, `nvidia.com/hostdev`): the
    /// whole device moves into the pod.
    #[serde(rename = "hostdev")]
    #[value(name = "hostdev")]
    Hostdev,
    /// IPoIB through Multus (`IPoIBNetwork`) beside the shared device plugin's resource.
    #[serde(rename = "ipoib")]
    #[value(name = "ipoib")]
    Ipoib,
    /// The pod on the host's network (`hostNetwork: true`): it sees the host's
    /// interfaces and every HCA, the management NIC included.
    #[serde(rename = "hostNetwork")]
    #[value(name = "hostNetwork")]
    HostNetwork,
}

/// The shared device plugin's resource in the Network Operator's example
/// NicClusterPolicy (`resourceName: rdma_shared_device_a` under the `rdma/` prefix;
/// network-operator@v26.4.1 example/crs/mellanox.com_v1alpha1_nicclusterpolicy_cr-full.yaml:45-63),
/// which its IPoIB example pod requests too (example/ipoib/rdma-test-pod1.yml).
pub const SHARED_DEVICE_RESOURCE: &str = "rdma/rdma_shared_device_a";
/// The host-device pool of the Network Operator's HostDeviceNetwork example
/// (example/crs/mellanox.com_v1alpha1_hostdevicenetwork_cr.yaml).
pub const HOSTDEV_RESOURCE: &str = "nvidia.com/hostdev";
/// The pod's cluster-network interface: Multus's delegate 0 (multus-cni@v4.3.0
/// pkg/multus/multus.go:94-106), where NCCL bootstraps on a pod network.
pub const POD_NETWORK_IFNAME: &str = "eth0";

impl Attachment {
    /// The name a Pool's `network.attachment` takes.
    pub fn name(self) -> &'static str {
        match self {
            Attachment::Shared => "shared",
            Attachment::Sriov => "sriov",
            Attachment::Hostdev => "hostdev",
            Attachment::Ipoib => "ipoib",
            Attachment::HostNetwork => "hostNetwork",
        }
    }

    /// Whether the pod sees RDMA devices under the host's names (the shared plugin,
    /// IPoIB beside it, the host's network), so that the pool's `hcas` mean something
    /// inside it. A VF or a moved device keeps a name the host chose at creation, not
    /// predictable per node (reference §3).
    pub fn host_device_names(self) -> bool {
        matches!(
            self,
            Attachment::Shared | Attachment::Ipoib | Attachment::HostNetwork
        )
    }

    /// Whether rails may name Multus networks: never on the host's network (the pod
    /// has no network namespace of its own to attach to).
    pub fn takes_networks(self) -> bool {
        self != Attachment::HostNetwork
    }

    /// The resource a rail gets when the pool names none, where the mode has one
    /// default (reference §1).
    pub fn default_resource(self) -> Option<&'static str> {
        match self {
            Attachment::Shared | Attachment::Ipoib => Some(SHARED_DEVICE_RESOURCE),
            Attachment::Hostdev => Some(HOSTDEV_RESOURCE),
            Attachment::Sriov | Attachment::HostNetwork => None,
        }
    }
}
