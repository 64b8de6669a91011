//! The Kubeflow training operator (v1, PyTorchJob): which generation a release is,
//! since the two set different variables in each pod.

use crate::version::Version;

/// The two generations of the training operator, which set different variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperatorGeneration {
    /// Before kubeflow/training-operator#1840 (≤ 1.6, and CubeStudio's v1-8a066f9):
    /// MASTER_ADDR, MASTER_PORT, WORLD_SIZE = pods, RANK = pod index; `nprocPerNode` is
    /// not in the CRD and is pruned.
    PodWorld,
    /// 1.7 and later: also PET_NNODES, PET_NODE_RANK, PET_NPROC_PER_NODE, PET_MASTER_*;
    /// WORLD_SIZE = pods × an integer nprocPerNode.
    Pet,
}

/// The first operator release with PET_* and `nprocPerNode` (#1840, v1.7.0).
pub const PET_OPERATOR: Version = Version::new(1, 7);

/// The first operator release whose PyTorchJob CRD keeps `initContainers[].restartPolicy`
/// (training-operator@v1.8.0 manifests/base/crds/kubeflow.org_pytorchjobs.yaml, f8687ca7;
/// v1.7.0's has no such field, so the API server prunes it and a native sidecar
/// becomes an init container that never exits).
pub const NATIVE_SIDECAR_CRD: Version = Version::new(1, 8);

/// The first operator release whose PyTorchJob CRD has `runPolicy.managedBy`
/// (training-operator@v1.9.4 pkg/apis/kubeflow.org/v1/common_types.go:40-43,239; the
/// v1.7.0 and v1.8.0 CRDs have no such field).
pub const MANAGED_BY_CRD: Version = Version::new(1, 9);

/// The values it takes (common_types.go:40-43).
pub const MANAGED_BY: [&str; 2] = [
    "kubeflow.org/training-operator",
    "kueue.x-k8s.io/multikueue",
];

impl OperatorGeneration {
    pub fn of(version: Version) -> Self {
        if version < PET_OPERATOR {
            OperatorGeneration::PodWorld
        } else {
            OperatorGeneration::Pet
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_generations() {
        assert_eq!(
            OperatorGeneration::of(Version::new(1, 6)),
            OperatorGeneration::PodWorld
        );
        assert_eq!(
            OperatorGeneration::of(Version::new(1, 7)),
            OperatorGeneration::Pet
        );
    }
}
