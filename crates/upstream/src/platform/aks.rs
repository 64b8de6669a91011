//! Azure AKS with InfiniBand (ND-series VMs), set up with the NVIDIA Network Operator
//! as Azure documents it (Azure/aks-rdma-infiniband, website/docs/configurations/
//! 01-network-operator.md): nothing is injected into pods; the shared device plugin's
//! resource is `rdma/shared_ib` (63 pods per node), the SR-IOV device plugin's is
//! `rdma/ib` (one per NIC, a pod per node for the best bandwidth), and Multus is "not
//! strictly required" for RDMA over InfiniBand. Pods bootstrap on the cluster
//! network's `eth0`, and need IPC_LOCK ("without it `ulimit -l` shows 64").

use super::Profile;

const SOURCE: &str = "https://github.com/Azure/aks-rdma-infiniband/blob/main/website/docs/configurations/01-network-operator.md";

pub const PROFILE: Profile = Profile {
    name: "aks",
    title: "AKS",
    socket_ifname: Some((
        "eth0",
        "AKS pods bootstrap on the cluster network's eth0 (Azure/aks-rdma-infiniband, network-operator.md)",
    )),
    shared_resource: Some((
        "rdma/shared_ib",
        "AKS's shared device plugin resource, 63 pods per node (Azure/aks-rdma-infiniband, network-operator.md)",
    )),
    rails_without_networks: Some(
        "AKS's SR-IOV device plugin hands each pod whole InfiniBand devices (`rdma/ib`, one per NIC); Multus is not needed for RDMA over InfiniBand (Azure/aks-rdma-infiniband, network-operator.md)",
    ),
    source: SOURCE,
    // Otherwise as a self-built cluster: nothing injected, the pool's QoS.
    ..super::generic::PROFILE
};
