//! Baidu CCE (seed 001): the platform detects the container's RoCE environment and
//! injects NCCL_IB_HCA, NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX, NCCL_IB_TIMEOUT and
//! NCCL_IB_QPS_PER_CONNECTION into PID 1, unless the YAML declares them. Children of
//! PID 1 inherit them; processes started through `sh` may not. Its example requests
//! the RDMA device as `rdma/hca` on RoCE.

use super::Profile;
use crate::spec::pool::Fabric;

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

fn rdma_resource(_: Fabric) -> &'static str {
    "rdma/hca"
}

pub const PROFILE: Profile = Profile {
    name: "cce",
    presets,
    rdma_resource,
    recommends: &["NCCL_IB_QPS_PER_CONNECTION"],
    source: "seed 001: CCE injects NCCL_IB_HCA, NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX, NCCL_IB_TIMEOUT and NCCL_IB_QPS_PER_CONNECTION into PID 1 unless the YAML declares them",
};
