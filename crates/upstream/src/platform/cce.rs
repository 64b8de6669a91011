//! Baidu CCE (seed 001): the platform detects the container's RoCE environment and
//! injects NCCL_IB_HCA, NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX, NCCL_IB_TIMEOUT and
//! NCCL_IB_QPS_PER_CONNECTION into PID 1, unless the YAML declares them. Children of
//! PID 1 inherit them; processes started through `sh` may not. Its example requests
//! the RDMA device as `rdma/hca` on RoCE, and its NIC table gives a 4-GPU job
//! mlx5_1..mlx5_4.

use super::{AutoRdma, Profile, always_hca};
use super::{Fabric, PartialNodeHcas};

const INJECTED: &[&str] = &[
    "NCCL_IB_HCA",
    "NCCL_SOCKET_IFNAME",
    "NCCL_IB_GID_INDEX",
    "NCCL_IB_TIMEOUT",
    "NCCL_IB_QPS_PER_CONNECTION",
];

fn presets(fabric: Fabric, rdma_on: bool) -> &'static [&'static str] {
    if fabric.is_rdma() && rdma_on {
        INJECTED
    } else {
        &[]
    }
}

pub const PROFILE: Profile = Profile {
    name: "cce",
    title: "Baidu CCE",
    presets,
    rdma_resource: always_hca,
    typed_rdma_resource: always_hca,
    auto_rdma: AutoRdma::MultiNode,
    owns_qos: false,
    injects_into_pid1: true,
    socket_ifname: None,
    host_interfaces: &[],
    shared_resource: None,
    rails_without_networks: None,
    shape_label: None,
    shapes: &[],
    partial_node_hcas: PartialNodeHcas::First,
    operator: None,
    recommends: &["NCCL_IB_QPS_PER_CONNECTION"],
    source: "seed 001: CCE injects NCCL_IB_HCA, NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX, NCCL_IB_TIMEOUT and NCCL_IB_QPS_PER_CONNECTION into PID 1 unless the YAML declares them",
};
