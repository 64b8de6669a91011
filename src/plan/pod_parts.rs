//! The parts of a pod rdmagen names, and how to find them again in a pod template:
//! shared by the pod builder, the overlay judge and verification.

use serde_json::Value;

/// The training container's name in a PyTorchJob; the operator finds it by this name.
pub const TRAINING_CONTAINER: &str = "pytorch";
/// The trainer container's name in a Trainer v2 runtime: the torch plugin injects PET_*
/// only into the container named `node`.
pub use crate::kubeflow::trainer::NODE as TRAINER_CONTAINER;
pub const SHM_VOLUME: &str = "dshm";
/// volcano.sh/apis pkg/apis/scheduling/v1beta1/labels.go:48.
pub const VOLCANO_QUEUE: &str = "scheduling.volcano.sh/queue-name";

/// The training container of a pod template: the container called `name`
/// ([`TRAINING_CONTAINER`] or [`TRAINER_CONTAINER`], as the target says).
pub fn training<'a>(pod: &'a Value, name: &str) -> Option<&'a Value> {
    pod.pointer("/spec/containers")?
        .as_array()?
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
}

/// Capability names compare without case, as the container runtime reads them.
pub fn same_capability(a: &Value, b: &Value) -> bool {
    match (a.as_str(), b.as_str()) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        _ => a == b,
    }
}
