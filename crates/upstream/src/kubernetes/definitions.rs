//! Kubernetes' own core/v1 definitions (crates/upstream/schemas/kubernetes/, Kubernetes 1.33), and
//! the strict JSON Schemas made from them.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use serde_json::{Map, Value, json};

use crate::kubernetes::schema_tree::Node;

/// The Kubernetes release whose definitions are vendored.
pub const KUBERNETES_VERSION: &str = "1.33";

const VENDORED: &str = include_str!("../../schemas/kubernetes/v1.33-core.json");

pub const POD_TEMPLATE_SPEC: &str = "io.k8s.api.core.v1.PodTemplateSpec";
pub const POD_SPEC: &str = "io.k8s.api.core.v1.PodSpec";
pub const PERSISTENT_VOLUME: &str = "io.k8s.api.core.v1.PersistentVolume";
pub const PERSISTENT_VOLUME_CLAIM: &str = "io.k8s.api.core.v1.PersistentVolumeClaim";
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// The vendored definitions by name, exactly as upstream wrote them.
pub static DEFINITIONS: LazyLock<Map<String, Value>> = LazyLock::new(|| {
    let mut file: Value =
        serde_json::from_str(VENDORED).expect("schemas/kubernetes/v1.33-core.json is JSON");
    match file["definitions"].take() {
        Value::Object(map) => map,
        _ => panic!("schemas/kubernetes/v1.33-core.json has a definitions object"),
    }
});

/// The vendored definitions reduced to what a strategic merge reads (`properties`,
/// `items`, `additionalProperties`, `$ref` and the `x-kubernetes-patch-*` strategy and
/// key), generated ahead of time ([`merge_text`], a test compares): a run that merges a
/// pod reads these 34 KB (in their binary form), not the 248 KB of upstream text with
/// descriptions.
pub static MERGE_DEFINITIONS: LazyLock<Node<'static>> =
    LazyLock::new(|| Node::decode(MERGE_VIEW_BLOB));

/// [`MERGE_VIEW`]'s binary form, written by build.rs (kubernetes/schema_blob.rs).
const MERGE_VIEW_BLOB: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/kubernetes-v1.33-merge.tree"));

/// The committed text a run reads through [`MERGE_VIEW_BLOB`]; tests compare the two.
#[cfg(test)]
const MERGE_VIEW: &str = include_str!("../../schemas/kubernetes/v1.33-merge.json");

/// The committed text of [`MERGE_DEFINITIONS`]: one line of JSON and a newline.
pub fn merge_text() -> String {
    fn reduced(schema: &Value) -> Value {
        let Value::Object(map) = schema else {
            return schema.clone();
        };
        let kept = map.iter().filter_map(|(key, v)| {
            let v = match key.as_str() {
                // Property names are data, not schema keywords.
                "properties" => match v {
                    Value::Object(props) => {
                        Value::Object(props.iter().map(|(k, p)| (k.clone(), reduced(p))).collect())
                    }
                    other => other.clone(),
                },
                "items" | "additionalProperties" => reduced(v),
                "$ref" | "x-kubernetes-patch-strategy" | "x-kubernetes-patch-merge-key" => {
                    v.clone()
                }
                _ => return None,
            };
            Some((key.clone(), v))
        });
        Value::Object(kept.collect())
    }
    let view: Map<String, Value> = DEFINITIONS
        .iter()
        .map(|(name, def)| (name.clone(), reduced(def)))
        .collect();
    let mut text = serde_json::to_string(&view).expect("definitions serialise");
    text.push('\n');
    text
}

/// One upstream definition by its full name (`io.k8s.api.core.v1.Container`).
pub fn definition(name: &str) -> &'static Value {
    DEFINITIONS
        .get(name)
        .unwrap_or_else(|| panic!("{name} is not among the vendored Kubernetes definitions"))
}

/// The name a `$ref` points to (`#/definitions/X` → `X`).
pub fn ref_name(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

/// `name` and every definition it reaches through `$ref`, sorted.
pub fn closure(name: &str) -> BTreeSet<&'static str> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![name.to_owned()];
    while let Some(next) = todo.pop() {
        let Some((key, def)) = DEFINITIONS.get_key_value(next.as_str()) else {
            continue;
        };
        if seen.insert(key.as_str()) {
            refs(def, &mut |r| todo.push(ref_name(r).to_owned()));
        }
    }
    seen
}

fn refs(value: &Value, found: &mut impl FnMut(&str)) {
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                match (key.as_str(), v) {
                    ("$ref", Value::String(r)) => found(r),
                    _ => refs(v, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| refs(v, found)),
        _ => {}
    }
}

/// An upstream definition made strict, with its references rewritten to `prefix`.
///
/// - An object with `properties` allows no other key (`additionalProperties: false`),
///   as kubeconform's `-strict` schemas do: the API server drops an unknown field
///   without a word, which is how a misspelt field goes unnoticed.
/// - `IntOrString` is an integer or a string, and `Quantity` a string or a number, as
///   the API server's decoder reads them (upstream declares both as strings).
/// - `x-kubernetes-*` annotations are left out: they are for patching, not checking.
pub fn strict(name: &str, prefix: &str) -> Value {
    match name {
        INT_OR_STRING => json!({
            "description": "An integer or a string (IntOrString).",
            "type": ["integer", "string"]
        }),
        QUANTITY => json!({
            "description": "A Kubernetes quantity such as 64Gi, 500m or 8.",
            "type": ["string", "number"]
        }),
        _ => strict_value(definition(name), prefix),
    }
}

fn strict_value(value: &Value, prefix: &str) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::new();
            for (key, v) in map {
                if key.starts_with("x-kubernetes-") {
                    continue;
                }
                let v = match (key.as_str(), v) {
                    ("$ref", Value::String(r)) => Value::String(format!("{prefix}{}", ref_name(r))),
                    // Property names are data, not schema keywords.
                    ("properties", Value::Object(props)) => Value::Object(
                        props
                            .iter()
                            .map(|(k, p)| (k.clone(), strict_value(p, prefix)))
                            .collect(),
                    ),
                    _ => strict_value(v, prefix),
                };
                out.insert(key.clone(), v);
            }
            if out.contains_key("properties") && !out.contains_key("additionalProperties") {
                out.insert("additionalProperties".to_owned(), Value::Bool(false));
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|v| strict_value(v, prefix)).collect())
        }
        other => other.clone(),
    }
}

/// A standalone strict schema for one definition and everything it reaches.
pub fn standalone(root: &str) -> Value {
    let definitions: Map<String, Value> = closure(root)
        .into_iter()
        .map(|name| (name.to_owned(), strict(name, "#/definitions/")))
        .collect();
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": format!("#/definitions/{root}"),
        "definitions": definitions,
    })
}

/// [`standalone`] of PodTemplateSpec for the quick walk alone
/// ([`quick_schema::stripped`](crate::kubernetes::quick_schema::stripped)), generated
/// ahead of time so that checking a valid pod neither parses the 248 KB of vendored
/// definitions nor makes them strict; a test regenerates it ([`quick_text`]).
pub const POD_TEMPLATE_SPEC_QUICK: &str =
    include_str!("../../schemas/kubernetes/pod-template-spec.quick.json");

/// [`POD_TEMPLATE_SPEC_QUICK`]'s binary form, written by build.rs
/// (kubernetes/schema_blob.rs).
const POD_TEMPLATE_SPEC_QUICK_BLOB: &[u8] = include_bytes!(concat!(
    env!("OUT_DIR"),
    "/kubernetes-pod-template-spec.quick.tree"
));

/// The tree of [`POD_TEMPLATE_SPEC_QUICK`], read from its binary form.
pub fn pod_template_spec_quick() -> Node<'static> {
    Node::decode(POD_TEMPLATE_SPEC_QUICK_BLOB)
}

/// The committed text of a `*.quick.json`: `schema` stripped for the quick walk, one
/// line of JSON and a newline.
pub fn quick_text(schema: &Value) -> String {
    let stripped = crate::kubernetes::quick_schema::stripped(schema);
    let mut text = serde_json::to_string(&stripped).expect("a schema serialises");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a run decodes is what the committed JSON says.
    #[test]
    fn the_binary_forms_are_the_committed_json() {
        for (text, blob) in [
            (MERGE_VIEW, MERGE_VIEW_BLOB),
            (POD_TEMPLATE_SPEC_QUICK, POD_TEMPLATE_SPEC_QUICK_BLOB),
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            assert!(Node::decode(blob).equals(&value));
            assert!(Node::decode(blob).identical(&Node::parse(text).unwrap()));
        }
    }

    #[test]
    fn the_merge_view_is_the_generated_one() {
        crate::kubernetes::quick_schema::assert_fresh(
            env!("CARGO_MANIFEST_DIR"),
            "schemas/kubernetes/v1.33-merge.json",
            MERGE_VIEW,
            &merge_text(),
        );
    }

    #[test]
    fn the_quick_pod_template_spec_is_the_generated_one() {
        crate::kubernetes::quick_schema::assert_fresh(
            env!("CARGO_MANIFEST_DIR"),
            "schemas/kubernetes/pod-template-spec.quick.json",
            POD_TEMPLATE_SPEC_QUICK,
            &quick_text(&standalone(POD_TEMPLATE_SPEC)),
        );
    }

    #[test]
    fn every_reference_resolves() {
        for (name, def) in DEFINITIONS.iter() {
            refs(def, &mut |r| {
                assert!(
                    DEFINITIONS.contains_key(ref_name(r)),
                    "{name} refers to {r}, which is not vendored"
                )
            });
        }
        assert!(closure(POD_TEMPLATE_SPEC).contains("io.k8s.api.core.v1.EnvVarSource"));
    }

    #[test]
    fn strict_schemas_compile_and_refuse_unknown_fields() {
        let schema = standalone(POD_TEMPLATE_SPEC);
        let validator = jsonschema::validator_for(&schema).expect("compiles");
        let ok = json!({"spec": {"containers": [{"name": "c", "image": "i",
            "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": 8, "memory": "1Gi"}}}]}});
        assert!(validator.is_valid(&ok));
        let typo = json!({"spec": {"containers": [{"name": "c", "imagePullSecret": "x"}]}});
        assert!(!validator.is_valid(&typo));
        let missing = json!({"spec": {}});
        assert!(!validator.is_valid(&missing), "containers are required");
    }
}
