//! The words a Pool uses for its platform and its fabric. They live here, below the
//! input model, because every platform profile, NCCL's rules and the manifest rules are
//! keyed by them; `model::pool` re-exports them for the Pool that is read from YAML.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Platforms whose conventions rdmagen knows.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// A self-built cluster: rdmagen writes every NCCL variable the pool implies.
    #[default]
    Generic,
    /// AIStudio: presets NCCL_IB_GID_INDEX, NCCL_IB_HCA and NCCL_CROSS_NIC on RoCE.
    Aistudio,
    /// CubeStudio: RDMA resources named by type (`N(roce)`, `N(ib)`).
    Cubestudio,
    /// Baidu CCE: injects its NCCL variables into PID 1 unless the YAML declares them.
    Cce,
    /// Azure AKS with InfiniBand (ND-series): the Network Operator's `rdma/shared_ib`
    /// (shared) or `rdma/ib` (SR-IOV device plugin, one per NIC, no Multus).
    Aks,
    /// Oracle OKE RoCE on bare-metal GPU shapes: Oracle's NCCL parameters per shape
    /// (read from the pool's `node.kubernetes.io/instance-type` node selector).
    Oci,
}

impl Platform {
    /// The name a Pool's `spec.platform` takes.
    pub fn name(self) -> &'static str {
        match self {
            Platform::Generic => "generic",
            Platform::Aistudio => "aistudio",
            Platform::Cubestudio => "cubestudio",
            Platform::Cce => "cce",
            Platform::Aks => "aks",
            Platform::Oci => "oci",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Fabric {
    /// RDMA over Converged Ethernet.
    Roce,
    /// InfiniBand.
    Ib,
    /// No RDMA: NCCL uses sockets.
    Tcp,
}

impl Fabric {
    pub fn is_rdma(self) -> bool {
        self != Fabric::Tcp
    }

    pub fn name(self) -> &'static str {
        match self {
            Fabric::Roce => "roce",
            Fabric::Ib => "ib",
            Fabric::Tcp => "tcp",
        }
    }
}

/// NIC choice for a job that takes k of a node's G GPUs. Neither rdmagen nor the device
/// plugin knows which GPUs the pod gets, so neither choice can follow GPU locality.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum PartialNodeHcas {
    /// The first ceil(k·H/G) of the H data NICs (seed 001: 4 GPUs → mlx5_1..mlx5_4).
    First,
    /// Every data NIC; NCCL uses the ones nearest to each GPU.
    All,
}

/// Seed 001: "mlx5_0 is usually the TCP main NIC".
pub const DEFAULT_MANAGEMENT_NIC: &str = "mlx5_0";
