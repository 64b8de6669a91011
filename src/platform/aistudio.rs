//! AIStudio (seed 000): on RoCE the platform presets NCCL_IB_GID_INDEX, NCCL_IB_HCA
//! and NCCL_CROSS_NIC=0 and advises users not to change them; users set
//! NCCL_SOCKET_IFNAME themselves, and never NCCL_IB_TC. For very large jobs it suggests
//! trying NCCL_ALGO=Ring (or Tree).

use super::{Profile, cubestudio_resource};
use crate::spec::pool::Fabric;

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
    presets,
    rdma_resource: cubestudio_resource,
    recommends: &["NCCL_ALGO"],
    source: "seed 000: on RoCE AIStudio presets NCCL_IB_GID_INDEX, NCCL_IB_HCA and NCCL_CROSS_NIC",
};
