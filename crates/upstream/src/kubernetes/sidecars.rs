//! Native sidecars: init containers with `restartPolicy: Always`, which Kubernetes
//! starts before the main containers and stops after them.

use serde_json::Value;

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
