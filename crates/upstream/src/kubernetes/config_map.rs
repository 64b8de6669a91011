//! A ConfigMap (core/v1) as the API server accepts it, for the ConfigMaps rdmagen
//! writes (`smoke-test`'s script, the in-pod preflight's).
//!
//! ConfigMap is not among the vendored definitions (the closure of a pod template, a
//! PersistentVolume and a claim), and its own fields are few: Kubernetes' core/v1
//! `ConfigMap` type is TypeMeta, ObjectMeta, `immutable` (bool), `data` (string to
//! string) and `binaryData` (string to bytes, base64 in JSON). The schema here is
//! those fields around the vendored, strict `ObjectMeta`, strict like the rest: an
//! unknown field is an error. The API server's validation adds what a schema cannot
//! say (k8s.io/kubernetes pkg/apis/core/validation ValidateConfigMap): the name is a
//! DNS-1123 subdomain, every key is `[-._a-zA-Z0-9]+` of at most 253 characters and
//! appears in `data` or `binaryData`, not both, and all values together hold at most
//! 1 MiB (`MaxSecretSize`, which ConfigMaps share).

use std::sync::LazyLock;

use serde_json::{Map, Value, json};

use crate::kubernetes::definitions::{self, closure};
use crate::kubernetes::names::is_dns1123_subdomain;

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The most a ConfigMap's data may hold, in bytes (core/v1 `MaxSecretSize`).
pub const MAX_DATA_BYTES: usize = 1 << 20;

/// The longest ConfigMap key and object name (DNS-1123 subdomain).
const MAX_NAME: usize = 253;

/// The strict schema of a ConfigMap, standalone (draft-07, as the vendored ones).
pub fn schema() -> Value {
    let mut definitions: Map<String, Value> = closure(OBJECT_META)
        .into_iter()
        .map(|name| (name.to_owned(), definitions::strict(name, "#/definitions/")))
        .collect();
    definitions.insert(
        "io.k8s.api.core.v1.ConfigMap".to_owned(),
        json!({
            "description": "ConfigMap holds configuration data for pods to consume.",
            "type": "object",
            "required": ["apiVersion", "kind", "metadata"],
            "additionalProperties": false,
            "properties": {
                "apiVersion": {"const": "v1"},
                "kind": {"const": "ConfigMap"},
                "metadata": {"$ref": format!("#/definitions/{OBJECT_META}")},
                "immutable": {"type": "boolean"},
                "data": {"type": "object", "additionalProperties": {"type": "string"}},
                "binaryData": {"type": "object", "additionalProperties": {"type": "string"}}
            }
        }),
    );
    json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": "#/definitions/io.k8s.api.core.v1.ConfigMap",
        "definitions": definitions,
    })
}

static VALIDATOR: LazyLock<jsonschema::Validator> =
    LazyLock::new(|| jsonschema::validator_for(&schema()).expect("the ConfigMap schema compiles"));

/// How `doc`, rendered as the ConfigMap `name` in `namespace` that holds `script` as
/// `data.<file>` (no data at all for `None`), reads back otherwise: one phrase each,
/// none when it is that ConfigMap. Both script ConfigMaps are checked this way.
pub fn script_read_back(
    doc: &Value,
    name: &str,
    namespace: Option<&str>,
    script: Option<(&str, &str)>,
) -> Vec<String> {
    let mut out = Vec::new();
    let metadata = &doc["metadata"];
    if doc["kind"] != "ConfigMap" {
        out.push(format!("kind reads back as {}", doc["kind"]));
    }
    if metadata["name"] != name {
        out.push(format!("metadata.name reads back as {}", metadata["name"]));
    }
    if metadata["namespace"].as_str() != namespace {
        out.push(format!(
            "metadata.namespace reads back as {}",
            metadata["namespace"]
        ));
    }
    match script {
        Some((file, text)) if doc["data"][file] != text => {
            out.push(format!("data.{file} does not read back as the script"));
        }
        None if !doc["data"].is_null() => {
            out.push("data reads back, where no script was written".to_owned());
        }
        _ => {}
    }
    out
}

/// Everything the API server would refuse in `doc`, one message each; none when it
/// would take it.
pub fn problems(doc: &Value) -> Vec<String> {
    let mut out: Vec<String> = VALIDATOR
        .iter_errors(doc)
        .map(|e| {
            let path = e.instance_path().to_string();
            format!("{}: {e}", if path.is_empty() { "/" } else { &path })
        })
        .collect();
    if !out.is_empty() {
        return out;
    }
    let name = doc["metadata"]["name"].as_str().unwrap_or("");
    if !is_dns1123_subdomain(name) {
        out.push(format!(
            "/metadata/name: `{name}` is not a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', at most {MAX_NAME})"
        ));
    }
    let empty = Map::new();
    let data = doc["data"].as_object().unwrap_or(&empty);
    let binary = doc["binaryData"].as_object().unwrap_or(&empty);
    let mut size = 0;
    for (key, value) in data.iter().chain(binary) {
        let good = !key.is_empty()
            && key.len() <= MAX_NAME
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !good || key == "." || key == ".." {
            out.push(format!(
                "key `{key}`: a ConfigMap key is letters, digits, '-', '_' and '.', at most {MAX_NAME}, and not `.` or `..`"
            ));
        }
        size += key.len() + value.as_str().map_or(0, str::len);
    }
    if let Some(key) = data.keys().find(|k| binary.contains_key(*k)) {
        out.push(format!("key `{key}` is in both data and binaryData"));
    }
    if size > MAX_DATA_BYTES {
        out.push(format!(
            "its data holds {size} bytes; a ConfigMap holds at most {MAX_DATA_BYTES}"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_map(extra: Value) -> Value {
        let mut doc = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "smoke", "labels": {"app": "x"}},
            "data": {"run.sh": "echo hi\n"}
        });
        doc.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        doc
    }

    #[test]
    fn a_plain_config_map_passes() {
        assert_eq!(problems(&config_map(json!({}))), Vec::<String>::new());
    }

    #[test]
    fn what_the_api_server_refuses() {
        let typo = problems(&config_map(json!({"datas": {}})));
        assert!(typo[0].contains("datas"), "{typo:?}");
        let meta = problems(&config_map(json!({"metadata": {"name": "x", "label": {}}})));
        assert!(meta[0].contains("label"), "{meta:?}");
        let number = problems(&config_map(json!({"data": {"a": 1}})));
        assert_eq!(number.len(), 1, "{number:?}");
        let key = problems(&config_map(json!({"data": {"a/b": "x"}})));
        assert!(key[0].contains("a/b"), "{key:?}");
        let name = problems(&config_map(json!({"metadata": {"name": "Smoke_1"}})));
        assert!(name[0].contains("Smoke_1"), "{name:?}");
        let big = "x".repeat(MAX_DATA_BYTES);
        let size = problems(&config_map(json!({"data": {"a": big}})));
        assert!(size[0].contains("at most"), "{size:?}");
        let kind = problems(&config_map(json!({"kind": "Secret"})));
        assert_eq!(kind.len(), 1, "{kind:?}");
    }

    #[test]
    fn a_script_config_map_reads_back_as_written_or_says_what_differs() {
        let doc = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "j-preflight", "namespace": "training"},
            "data": {"preflight.sh": "#!/bin/sh\n"},
        });
        let script = Some(("preflight.sh", "#!/bin/sh\n"));
        assert!(script_read_back(&doc, "j-preflight", Some("training"), script).is_empty());
        assert_eq!(
            script_read_back(&doc, "other", None, Some(("preflight.sh", "echo"))),
            [
                "metadata.name reads back as \"j-preflight\"",
                "metadata.namespace reads back as \"training\"",
                "data.preflight.sh does not read back as the script",
            ]
        );
        assert_eq!(
            script_read_back(&doc, "j-preflight", Some("training"), None),
            ["data reads back, where no script was written"]
        );
    }
}
