//! A pod's tolerations as the API server validates them on create. Overlay
//! tolerations are added to every pod of a job (plan::overlay), so one bad item would
//! keep the whole job from starting. A transcription of Kubernetes v1.33.3
//! `pkg/apis/core/validation/validation.go`: `ValidateTolerations` (L4019-L4065) and
//! `validateTaintEffect` (L3939-L3960), with label keys and values as
//! `kubernetes::labels` checks them.

use serde_json::Value;

use crate::diagnostics::message::quoted;
use crate::diagnostics::{Finding, Rule};
use crate::kubernetes::labels::{is_label_key, is_label_value};

/// validateTaintEffect (L3945-L3947); NoScheduleNoAdmit is still commented out there.
const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// The findings about `pod.tolerations`, a pod spec at JSON Pointer `base`.
pub(crate) fn check(pod: &Value, base: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let tolerations = pod["tolerations"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, toleration) in tolerations.iter().enumerate() {
        let at = format!("{base}/tolerations/{i}");
        let text = |field: &str| toleration[field].as_str().unwrap_or_default();
        let (key, operator, value, effect) =
            (text("key"), text("operator"), text("value"), text("effect"));
        let mut bad = |field: &str, why: String| {
            out.push(Finding::at_pointer(
                Rule::TolerationInvalid,
                format!(
                    "toleration {}: {why}; the API server refuses the pod",
                    quoted(toleration)
                ),
                format!("{at}/{field}"),
            ));
        };
        // L4025-L4028.
        if !key.is_empty() && !is_label_key(key) {
            bad("key", "its key is not a label key (`name` or `prefix/name`, at most 63 characters of letters, digits, `-`, `_`, `.`)".to_owned());
        }
        // L4030-L4034.
        if key.is_empty() && operator != "Exists" {
            bad(
                "operator",
                "an empty key needs operator Exists (\"match all values and all keys\")".to_owned(),
            );
        }
        // L4036-L4039.
        if !toleration["tolerationSeconds"].is_null() && effect != "NoExecute" {
            bad(
                "effect",
                "tolerationSeconds needs effect NoExecute".to_owned(),
            );
        }
        // L4041-L4055; an empty operator means Equal.
        match operator {
            "Equal" | "" if !is_label_value(value) => bad(
                "value",
                "its value is not a label value (at most 63 characters of letters, digits, `-`, `_`, `.`)".to_owned(),
            ),
            "Equal" | "" => {}
            "Exists" if !value.is_empty() => {
                bad("value", "operator Exists takes no value".to_owned());
            }
            "Exists" => {}
            other => bad(
                "operator",
                format!("operator {} is neither Equal nor Exists", quoted(&Value::from(other))),
            ),
        }
        // L4057-L4060: an empty effect matches every effect.
        if !effect.is_empty() && !EFFECTS.contains(&effect) {
            bad(
                "effect",
                format!(
                    "effect {} is not one of {}",
                    quoted(&Value::from(effect)),
                    EFFECTS.join(", ")
                ),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn found(toleration: Value) -> Vec<String> {
        check(&json!({"tolerations": [toleration]}), "/spec")
            .into_iter()
            .map(|f| f.pointer.unwrap_or_default())
            .collect()
    }

    /// The attack's three: each passed render and lint, and each is refused.
    #[test]
    fn what_the_api_server_refuses() {
        let at = |field: &str| vec![format!("/spec/tolerations/0/{field}")];
        assert_eq!(
            found(json!({"key": "k", "operator": "Exists", "value": "x"})),
            at("value")
        );
        assert_eq!(
            found(json!({"operator": "Equal", "value": "x"})),
            at("operator")
        );
        assert_eq!(
            found(
                json!({"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 30})
            ),
            at("effect")
        );
        assert_eq!(found(json!({"key": "k", "operator": "In"})), at("operator"));
        assert_eq!(
            found(json!({"key": "k", "effect": "NoAdmit"})),
            at("effect")
        );
        assert_eq!(
            found(json!({"key": "a b", "operator": "Exists"})),
            at("key")
        );
        assert_eq!(found(json!({"key": "k", "value": "a b"})), at("value"));
    }

    #[test]
    fn what_it_accepts() {
        for ok in [
            json!({"operator": "Exists"}),
            json!({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}),
            json!({"key": "k", "value": "v"}),
            json!({"key": "k", "operator": "Equal", "value": ""}),
            json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}),
        ] {
            assert!(found(ok.clone()).is_empty(), "{ok}");
        }
    }
}
