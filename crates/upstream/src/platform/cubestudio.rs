//! CubeStudio (seed 001): variables as on a self-built cluster. RDMA is requested as a
//! plain count (`1`, its UI's own example) or `N(type)`; a typed request maps ib →
//! rdma/hca and roce → rdma/shared, anything else gets the default rdma/hca
//! (RDMA_RESOURCE_NAME; get_rdma in myapp/utils/core.py:1655-1688). It installs
//! training-operator v1-8a066f9, a commit before 1.7 (no nprocPerNode, no PET_*).

use super::PartialNodeHcas;
use super::{AutoRdma, Profile, always_hca, by_fabric, no_presets};
use crate::version::Version;

pub const PROFILE: Profile = Profile {
    name: "cubestudio",
    title: "CubeStudio",
    presets: no_presets,
    rdma_resource: always_hca,
    typed_rdma_resource: by_fabric,
    auto_rdma: AutoRdma::MultiNode,
    owns_qos: false,
    injects_into_pid1: false,
    socket_ifname: None,
    host_interfaces: &[],
    shared_resource: None,
    rails_without_networks: None,
    shape_label: None,
    shapes: &[],
    partial_node_hcas: PartialNodeHcas::All,
    operator: Some((
        Version::new(1, 6),
        "CubeStudio installs training-operator v1-8a066f9, before 1.7 (install/kubernetes/kubeflow/train-operator/manifests/overlays/standalone/kustomization.yaml:7-8)",
    )),
    recommends: &[],
    source: "seed 001: CubeStudio adds IPC_LOCK and the RDMA resource but injects no NCCL variables; its resource map (ib → rdma/hca, roce → rdma/shared, default rdma/hca) is the admin-configured one the seed describes, the public code ships none",
};
