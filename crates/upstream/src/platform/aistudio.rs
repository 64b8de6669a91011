//! AIStudio (seed 000): RDMA is on at 8 GPUs (a whole node) and off below. On RoCE the
//! platform presets NCCL_IB_GID_INDEX, NCCL_IB_HCA and NCCL_CROSS_NIC=0 and advises
//! users not to change them; users set NCCL_SOCKET_IFNAME=eth0 themselves, and never
//! NCCL_IB_TC (the platform owns QoS). For very large jobs it suggests trying
//! NCCL_ALGO=Ring (or Tree).

use super::{AutoRdma, Profile, by_fabric};
use super::{Fabric, PartialNodeHcas};

const ROCE_PRESETS: &[&str] = &["NCCL_IB_GID_INDEX", "NCCL_IB_HCA", "NCCL_CROSS_NIC"];

fn presets(fabric: Fabric, rdma_on: bool) -> &'static [&'static str] {
    if fabric == Fabric::Roce && rdma_on {
        ROCE_PRESETS
    } else {
        &[]
    }
}

pub const PROFILE: Profile = Profile {
    name: "aistudio",
    title: "AIStudio",
    presets,
    rdma_resource: by_fabric,
    typed_rdma_resource: by_fabric,
    auto_rdma: AutoRdma::WholeNodes,
    owns_qos: true,
    injects_into_pid1: false,
    socket_ifname: Some((
        "eth0",
        "AIStudio's RDMA page: on IB and RoCE, set NCCL_SOCKET_IFNAME=eth0 (seed 000)",
    )),
    host_interfaces: &[],
    shared_resource: None,
    rails_without_networks: None,
    shape_label: None,
    shapes: &[],
    partial_node_hcas: PartialNodeHcas::First,
    operator: None,
    recommends: &["NCCL_ALGO"],
    source: "seed 000: on RoCE AIStudio presets NCCL_IB_GID_INDEX, NCCL_IB_HCA and NCCL_CROSS_NIC",
};
