//! Native sidecars: init containers with `restartPolicy: Always`, which Kubernetes
//! starts before the main containers and stops after them.

use serde_json::Value;

use crate::kubeflow::operator::NATIVE_SIDECAR_CRD;
use crate::version::Version;

/// The first Kubernetes release that runs them by default: the `SidecarContainers`
/// gate is alpha (off) in 1.28, beta and on from 1.29, GA in 1.33 (kubernetes
/// pkg/features/kube_features.go; docs "Sidecar Containers": "active by default since
/// Kubernetes v1.29"). On 1.28 the gate must be turned on by the cluster's admin.
pub const NATIVE_SIDECARS: Version = Version::new(1, 29);

/// The indices and names of a pod spec's native sidecars.
pub fn native_sidecars(pod: &Value) -> impl Iterator<Item = (usize, &str)> {
    pod["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, c)| c["restartPolicy"] == "Always")
        .map(|(i, c)| (i, c["name"].as_str().unwrap_or("")))
}

/// Why a cluster drops native sidecars, when it does: a Kubernetes before
/// [`NATIVE_SIDECARS`], else (for a PyTorchJob) the CRD of a training-operator before
/// [`NATIVE_SIDECAR_CRD`]. None when neither is known to drop them.
pub fn why_dropped(kubernetes: Option<Version>, operator: Option<Version>) -> Option<String> {
    match (kubernetes, operator) {
        (Some(v), _) if v < NATIVE_SIDECARS => Some(format!(
            "Kubernetes {v} does not run native sidecars by default (the SidecarContainers gate is on from {NATIVE_SIDECARS}), so it drops restartPolicy: Always"
        )),
        (_, Some(v)) if v < NATIVE_SIDECAR_CRD => Some(format!(
            "the PyTorchJob CRD of training-operator {v} has no initContainers[].restartPolicy (it came in {NATIVE_SIDECAR_CRD}), so the API server prunes it"
        )),
        _ => None,
    }
}
