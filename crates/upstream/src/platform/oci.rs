//! Oracle OKE on bare-metal GPU shapes, RoCE. Oracle tunes NCCL per shape and ships the
//! values as a per-shape ConfigMap (`oci-nccl-parameters-<shape>`) from its OKE HPC
//! stack; its documented way to run RDMA training is a pod on the host's network
//! (oci-hpc-oke docs/running-pytorch-jobs-on-oke-using-hostnetwork-with-rdma.md), where
//! NCCL bootstraps on the host's `eth0`. Nothing is injected into pods, so rdmagen
//! writes Oracle's values for the pool's shape wherever the pool does not set its own.
//!
//! The table holds Oracle's values for the 8-GPU RoCE shapes as Oracle's terraform
//! (oracle-quickstart/oci-hpc-oke terraform/via-provider-nccl-rccl-configmap.tf at
//! c48c2fbe, also carried by SkyPilot's sky/provision/kubernetes/oci_nccl.py) gives them,
//! without `NCCL_DEBUG=WARN`, which is logging, not tuning. The GB200/GB300 rack shapes
//! (multi-node NVLink, `NCCL_MNNVL_ENABLE`) and BM.GPU.RTXPRO.8 (`NCCL_ALGO=Tree`) are
//! left out: their values change what NCCL is, not how it reaches the wire, and rdmagen
//! has no model of those yet.

use super::{Profile, Shape};

/// The node label OKE sets to the node's shape.
pub const SHAPE_LABEL: &str = "node.kubernetes.io/instance-type";

const SOURCE: &str = "https://github.com/oracle-quickstart/oci-hpc-oke/blob/main/terraform/via-provider-nccl-rccl-configmap.tf";

const A100_HCAS: &str = "=mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_14,mlx5_15,mlx5_16,mlx5_17,mlx5_9,mlx5_10,mlx5_11,mlx5_12";

/// What every shape below shares: RoCE v2 at GID index 3, traffic class 41, service
/// level 0, timeout 22, data split off.
macro_rules! roce {
    ($($name:literal => $value:expr),* $(,)?) => {
        &[
            ("NCCL_IB_SPLIT_DATA_ON_QPS", "0"),
            ("NCCL_IB_GID_INDEX", "3"),
            ("NCCL_IB_TC", "41"),
            ("NCCL_IB_SL", "0"),
            ("NCCL_IB_TIMEOUT", "22"),
            $(($name, $value),)*
        ]
    };
}

/// BM.GPU.H200.8 and BM.GPU.B200.8: Oracle gives both the same values.
const H200_B200: &[(&str, &str)] = roce![
    "NCCL_CUMEM_ENABLE" => "0",
    "NCCL_IB_HCA" => "=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11",
    "NCCL_SOCKET_IFNAME" => "eth0",
    "NCCL_IGNORE_CPU_AFFINITY" => "1",
];

pub const SHAPES: &[Shape] = &[
    Shape {
        name: "BM.GPU4.8",
        nccl: roce![
            "NCCL_IB_QPS_PER_CONNECTION" => "4",
            "NCCL_IB_HCA" => "=mlx5_0,mlx5_2,mlx5_6,mlx5_8,mlx5_10,mlx5_12,mlx5_14,mlx5_16,mlx5_1,mlx5_3,mlx5_7,mlx5_9,mlx5_11,mlx5_13,mlx5_15,mlx5_17",
        ],
    },
    Shape {
        name: "BM.GPU.A100-v2.8",
        nccl: roce![
            "NCCL_IB_QPS_PER_CONNECTION" => "4",
            "NCCL_IB_HCA" => A100_HCAS,
        ],
    },
    Shape {
        name: "BM.GPU.B4.8",
        nccl: roce![
            "NCCL_IB_QPS_PER_CONNECTION" => "4",
            "NCCL_IB_HCA" => A100_HCAS,
        ],
    },
    Shape {
        name: "BM.GPU.H100.8",
        nccl: roce![
            "NCCL_CUMEM_ENABLE" => "0",
            "NCCL_IB_HCA" => "=mlx5_0,mlx5_1,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_9,mlx5_10,mlx5_12,mlx5_13,mlx5_14,mlx5_15,mlx5_16,mlx5_17",
            "NCCL_SOCKET_IFNAME" => "eth0",
            "NCCL_IGNORE_CPU_AFFINITY" => "1",
        ],
    },
    Shape {
        name: "BM.GPU.H200.8",
        nccl: H200_B200,
    },
    Shape {
        name: "BM.GPU.B200.8",
        nccl: H200_B200,
    },
    Shape {
        name: "BM.GPU.B300.8",
        nccl: roce![
            "NCCL_CUMEM_ENABLE" => "0",
            "NCCL_IB_HCA" => "=mlx5_0,mlx5_1,mlx5_7,mlx5_8,mlx5_9,mlx5_10,mlx5_11,mlx5_12,mlx5_13,mlx5_14,mlx5_16,mlx5_17,mlx5_18,mlx5_19,mlx5_20,mlx5_21",
            "NCCL_SOCKET_IFNAME" => "eth0",
            "NCCL_IGNORE_CPU_AFFINITY" => "1",
        ],
    },
];

pub const PROFILE: Profile = Profile {
    name: "oci",
    title: "OCI",
    // Oracle's values for every shape that names a bootstrap interface name eth0, and
    // its hostNetwork guide runs pods on the host's network with it.
    host_interfaces: &["eth0"],
    shape_label: Some(SHAPE_LABEL),
    shapes: SHAPES,
    // Filed under the NCCL docs' debugging section, yet in Oracle's tuning for every
    // shape.
    recommends: &["NCCL_IB_SPLIT_DATA_ON_QPS"],
    source: SOURCE,
    // Otherwise as a self-built cluster: nothing injected, the pool's QoS.
    ..super::generic::PROFILE
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nccl::{self, EnvFacts};

    /// Every value passes NCCL's own syntax and ranges, as rdmagen checks a user's.
    #[test]
    fn oracles_values_are_valid_nccl() {
        for shape in SHAPES {
            for (name, value) in shape.nccl {
                let problems = nccl::check(name, value, &EnvFacts::default());
                let wrong: Vec<_> = problems
                    .iter()
                    .filter(|p| p.rule != crate::diagnostics::Rule::DebugOnlyVariable)
                    .collect();
                assert!(
                    wrong.is_empty(),
                    "{}: {name}={value}: {wrong:?}",
                    shape.name
                );
            }
        }
    }
}
