//! PersistentVolumes and the claims meant to bind them, as `lint` sees them: a claim
//! for a static (class-less) PV must say `storageClassName: ""`. Leaving the field out,
//! or writing `storageClassName:` with no value (YAML null, the same thing), hands the
//! claim the cluster's default StorageClass, and a claim of one class never binds a
//! PV of another (Kubernetes PersistentVolumeClaim binding; real-clusters.md §5).
//! Seed 001's PV and PVC make exactly this mistake.

use serde_json::Value;

use crate::diagnostics::source::Location;
use crate::diagnostics::{Finding, Rule};

/// A PersistentVolume, as far as binding a claim is concerned.
#[derive(Debug, Clone)]
pub struct Volume {
    name: String,
    /// `spec.claimRef`: (namespace, name) of the one claim it is reserved for.
    claim_ref: Option<(Option<String>, String)>,
    /// `storageClassName`; None when missing, null or "" (a class-less PV).
    class: Option<String>,
    access_modes: Vec<String>,
}

/// A PersistentVolumeClaim, with where its storageClassName is (or should be) written.
#[derive(Debug, Clone)]
pub struct Claim {
    name: String,
    namespace: Option<String>,
    volume_name: Option<String>,
    class: Class,
    access_modes: Vec<String>,
    at: Location,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Class {
    Missing,
    Null,
    /// A class; "" is the explicit "no class" a static PV needs.
    Named(String),
}

fn is_core_v1(doc: &Value, kind: &str) -> bool {
    doc["kind"] == kind && doc["apiVersion"] == "v1"
}

fn text(v: &Value) -> Option<String> {
    v.as_str().filter(|s| !s.is_empty()).map(str::to_owned)
}

fn access_modes(spec: &Value) -> Vec<String> {
    spec["accessModes"]
        .as_array()
        .map(|a| a.iter().filter_map(text).collect())
        .unwrap_or_default()
}

/// `doc` as a PersistentVolume, when it is one.
pub fn volume(doc: &Value) -> Option<Volume> {
    if !is_core_v1(doc, "PersistentVolume") {
        return None;
    }
    let spec = &doc["spec"];
    let claim_ref =
        text(&spec["claimRef"]["name"]).map(|name| (text(&spec["claimRef"]["namespace"]), name));
    Some(Volume {
        name: text(&doc["metadata"]["name"]).unwrap_or_default(),
        claim_ref,
        class: text(&spec["storageClassName"]),
        access_modes: access_modes(spec),
    })
}

/// `doc` as a PersistentVolumeClaim, when it is one; `locate` finds a JSON Pointer.
pub fn claim(doc: &Value, locate: impl Fn(&str) -> Location) -> Option<Claim> {
    if !is_core_v1(doc, "PersistentVolumeClaim") {
        return None;
    }
    let spec = &doc["spec"];
    let class = match spec.get("storageClassName") {
        None => Class::Missing,
        Some(Value::Null) => Class::Null,
        Some(v) => Class::Named(v.as_str().unwrap_or_default().to_owned()),
    };
    Some(Claim {
        name: text(&doc["metadata"]["name"]).unwrap_or_default(),
        namespace: text(&doc["metadata"]["namespace"]),
        volume_name: text(&spec["volumeName"]),
        class,
        access_modes: access_modes(spec),
        // A missing key resolves to /spec, where it belongs.
        at: locate("/spec/storageClassName"),
    })
}

/// What a claim must write to bind `pv`: its class, or "" for a class-less one.
fn class_of(pv: Option<&Volume>) -> String {
    match pv.and_then(|v| v.class.as_deref()) {
        Some(class) => format!("storageClassName: {class} (the PV's class)"),
        None => "storageClassName: \"\"".to_owned(),
    }
}

/// Why `claim` is meant for a static PV, and what to write, when it is.
fn static_intent(claim: &Claim, volumes: &[Volume]) -> Option<(String, String)> {
    if let Some(pv) = &claim.volume_name {
        let named = volumes.iter().find(|v| v.name == *pv);
        return Some((format!("names volumeName `{pv}`"), class_of(named)));
    }
    let bind = |v: &Volume| format!("{} and volumeName: {}", class_of(Some(v)), v.name);
    let reserved = volumes.iter().find(|v| {
        v.claim_ref.as_ref().is_some_and(|(ns, name)| {
            *name == claim.name
                && ns
                    .as_ref()
                    .zip(claim.namespace.as_ref())
                    .is_none_or(|(a, b)| a == b)
        })
    });
    if let Some(v) = reserved {
        return Some((
            format!("is the claimRef of PersistentVolume `{}`", v.name),
            bind(v),
        ));
    }
    // A free class-less PV written alongside, offering every access mode the claim
    // asks for: the pair is a static binding, as in seed 001.
    volumes
        .iter()
        .find(|v| {
            v.class.is_none()
                && v.claim_ref.is_none()
                && claim
                    .access_modes
                    .iter()
                    .all(|m| v.access_modes.contains(m))
        })
        .map(|v| {
            (
                format!(
                    "is written with the class-less PersistentVolume `{}`",
                    v.name
                ),
                bind(v),
            )
        })
}

/// A claim that names its PV (volumeName) with a class the PV does not have: it stays
/// Pending.
fn mismatch(claim: &Claim, class: &str, volumes: &[Volume]) -> Option<Finding> {
    let pv = volumes
        .iter()
        .find(|v| Some(&v.name) == claim.volume_name.as_ref())?;
    let theirs = pv.class.as_deref().unwrap_or("");
    (theirs != class).then(|| {
        let message = format!(
            "PersistentVolumeClaim `{}` has storageClassName `{class}` but its volumeName `{}` has `{theirs}`: a claim binds only a PV of its own class; write {}",
            claim.name,
            pv.name,
            class_of(Some(pv))
        );
        Finding::new(Rule::StaticClaimClass, message, Some(claim.at.clone()))
    })
}

/// Every claim meant for a static PV that would not bind it, at the claim.
pub fn check(volumes: &[Volume], claims: &[Claim]) -> Vec<Finding> {
    claims
        .iter()
        .filter_map(|claim| {
            let class = match &claim.class {
                Class::Named(class) => return mismatch(claim, class, volumes),
                Class::Missing => "leaves out storageClassName",
                Class::Null => "has `storageClassName:` with no value (null: the same as leaving it out)",
            };
            let (intent, fix) = static_intent(claim, volumes)?;
            let message = format!(
                "PersistentVolumeClaim `{}` {intent} but {class}: on a cluster with a default StorageClass it gets that class and never binds the static PV; write {fix}",
                claim.name
            );
            Some(Finding::new(
                Rule::StaticClaimClass,
                message,
                Some(claim.at.clone()),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn at(_: &str) -> Location {
        Location {
            file: Arc::from("t.yaml"),
            line: 1,
            column: 1,
        }
    }

    fn pvc(spec: Value) -> Claim {
        let doc = serde_json::json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data"}, "spec": spec,
        });
        claim(&doc, at).unwrap()
    }

    fn pv(spec: Value) -> Volume {
        let doc = serde_json::json!({
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "data-pv"}, "spec": spec,
        });
        volume(&doc).unwrap()
    }

    fn rules(volumes: &[Volume], claim: Claim) -> usize {
        check(volumes, &[claim]).len()
    }

    #[test]
    fn static_intent_without_a_class_is_flagged() {
        let rwx = serde_json::json!(["ReadWriteMany"]);
        // volumeName, missing or null class.
        assert_eq!(rules(&[], pvc(serde_json::json!({"volumeName": "x"}))), 1);
        let null = pvc(serde_json::json!({"volumeName": "x", "storageClassName": null}));
        assert_eq!(rules(&[], null), 1);
        // The right form.
        let empty = pvc(serde_json::json!({"volumeName": "x", "storageClassName": ""}));
        assert_eq!(rules(&[], empty), 0);
        // A PV's claimRef names the claim.
        let reserved =
            pv(serde_json::json!({"claimRef": {"name": "data"}, "storageClassName": "nas"}));
        assert_eq!(rules(&[reserved], pvc(serde_json::json!({}))), 1);
        // Seed 001: a free class-less PV and a claim for the same access mode.
        let seed_pv = pv(serde_json::json!({"accessModes": rwx, "storageClassName": null}));
        let seed_pvc = pvc(serde_json::json!({"accessModes": rwx, "storageClassName": null}));
        let found = check(&[seed_pv], &[seed_pvc]);
        assert_eq!(found.len(), 1);
        assert!(
            found[0].message.starts_with("PersistentVolumeClaim `data` is written with the class-less PersistentVolume `data-pv` but has `storageClassName:` with no value"),
            "{}",
            found[0].message
        );
    }

    #[test]
    fn dynamic_provisioning_is_fine() {
        assert_eq!(rules(&[], pvc(serde_json::json!({}))), 0);
        // A PV with a class of its own, or reserved for another claim, is not this one's.
        let named = pv(serde_json::json!({"storageClassName": "nas"}));
        let other = pv(serde_json::json!({"claimRef": {"name": "other"}}));
        assert_eq!(rules(&[named, other], pvc(serde_json::json!({}))), 0);
        // A class-less PV that cannot give the access mode the claim asks for.
        let rwo = pv(serde_json::json!({"accessModes": ["ReadWriteOnce"]}));
        let rwx = pvc(serde_json::json!({"accessModes": ["ReadWriteMany"]}));
        assert_eq!(rules(&[rwo], rwx), 0);
    }

    #[test]
    fn the_fix_names_the_pvs_class_and_a_wrong_class_is_flagged() {
        // The named PV has a class: "" would never bind it either.
        let fast = pv(serde_json::json!({"storageClassName": "fast"}));
        let found = check(
            std::slice::from_ref(&fast),
            &[pvc(serde_json::json!({"volumeName": "data-pv"}))],
        );
        assert!(
            found[0]
                .message
                .ends_with("write storageClassName: fast (the PV's class)"),
            "{}",
            found[0].message
        );
        // A claim of another class than the PV it names stays Pending.
        let slow = pvc(serde_json::json!({"volumeName": "data-pv", "storageClassName": "slow"}));
        assert_eq!(rules(std::slice::from_ref(&fast), slow), 1);
        let same = pvc(serde_json::json!({"volumeName": "data-pv", "storageClassName": "fast"}));
        assert_eq!(rules(&[fast], same), 0);
    }
}
