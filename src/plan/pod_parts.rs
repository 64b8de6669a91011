//! The parts of a pod rdmagen names, and how to find them again in a pod template:
//! shared by the pod builder, the overlay judge and verification.

use serde_json::Value;

/// The training container's name; the operator finds it by this name.
pub const TRAINING_CONTAINER: &str = "pytorch";
pub const SHM_VOLUME: &str = "dshm";
/// volcano.sh/apis pkg/apis/scheduling/v1beta1/labels.go:48.
pub const VOLCANO_QUEUE: &str = "scheduling.volcano.sh/queue-name";

/// The training container of a pod template.
pub fn training(pod: &Value) -> Option<&Value> {
    pod.pointer("/spec/containers")?
        .as_array()?
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(TRAINING_CONTAINER))
}

/// Capability names compare without case, as the container runtime reads them.
pub fn same_capability(a: &Value, b: &Value) -> bool {
    match (a.as_str(), b.as_str()) {
        (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
        _ => a == b,
    }
}
