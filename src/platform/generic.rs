//! A self-built cluster: nothing is injected, so rdmagen writes every NCCL variable.

use super::{Profile, cubestudio_resource, no_presets};

pub const PROFILE: Profile = Profile {
    name: "generic",
    presets: no_presets,
    rdma_resource: cubestudio_resource,
    recommends: &[],
    source: "self-built cluster: no platform injects NCCL variables (seed 001, 'may not apply to self-built K8s clusters')",
};
