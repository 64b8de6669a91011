//! CubeStudio (seed 001): variables as on a self-built cluster; RDMA resources are
//! named by type, ib → rdma/hca and roce → rdma/shared, and requested as `N(type)`.

use super::{Profile, cubestudio_resource, no_presets};

pub const PROFILE: Profile = Profile {
    name: "cubestudio",
    presets: no_presets,
    rdma_resource: cubestudio_resource,
    recommends: &[],
    source: "seed 001: CubeStudio adds IPC_LOCK and the RDMA resource but injects no NCCL variables",
};
