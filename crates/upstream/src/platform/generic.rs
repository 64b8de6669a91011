//! A self-built cluster: nothing is injected, so rdmagen writes every NCCL variable,
//! and QoS (traffic class, service level) is the cluster owner's to set.

use super::PartialNodeHcas;
use super::{AutoRdma, Profile, by_fabric, no_presets};

pub const PROFILE: Profile = Profile {
    name: "generic",
    title: "self-built",
    presets: no_presets,
    rdma_resource: by_fabric,
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
    operator: None,
    recommends: &[],
    source: "self-built cluster: no platform injects NCCL variables (seed 001, 'may not apply to self-built K8s clusters')",
};
