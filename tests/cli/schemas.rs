//! The committed input schemas are the ones the code generates, editors can use them
//! (draft-07, every `$ref` resolvable), and every example validates.

use rdmagen::model::schema::{Published, pretty};
use serde_json::Value;

use crate::support::root;

#[test]
fn committed_schemas_are_fresh() {
    for which in Published::ALL {
        let file = which.file_name();
        let path = root().join("schemas").join(file);
        let generated = pretty(which);
        if std::env::var_os("RDMAGEN_BLESS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "schemas/{file} is stale; regenerate with `RDMAGEN_BLESS=1 cargo test --test cli schemas`"
        );
    }
}

fn committed(file: &str) -> Value {
    let text = std::fs::read_to_string(root().join("schemas").join(file)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every example document, with where it came from.
fn example_documents() -> Vec<(String, Value)> {
    let mut documents = Vec::new();
    for example in crate::support::examples() {
        for (path, bytes) in crate::support::tree(&example) {
            let text = String::from_utf8(bytes).unwrap();
            let docs: Vec<Value> = serde_saphyr::from_str_multiple(&text).unwrap();
            let shown = format!("{}/{path}", example.display());
            documents.extend(docs.into_iter().map(|doc| (shown.clone(), doc)));
        }
    }
    documents
}

fn errors(validator: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    validator.iter_errors(doc).map(|e| e.to_string()).collect()
}

#[test]
fn schemas_are_valid_json_schema_and_examples_validate() {
    use rdmagen::model::schema::VALIDATORS;
    for file in [
        "job.schema.json",
        "pool.schema.json",
        "inputs.schema.json",
        "pytorchjob.schema.json",
    ] {
        assert!(
            jsonschema::meta::is_valid(&committed(file)),
            "{file} is not a valid JSON Schema"
        );
    }
    let published = |file| jsonschema::validator_for(&committed(file)).unwrap();
    let (job, pool, inputs) = (
        published("job.schema.json"),
        published("pool.schema.json"),
        published("inputs.schema.json"),
    );
    let mut checked = 0;
    for (path, doc) in example_documents() {
        // The validator rdmagen runs, the editor's schema of the kind, and the mixed one.
        let validators = match doc["kind"].as_str() {
            Some("Job") => [&VALIDATORS.job, &job, &inputs],
            Some("Pool") => [&VALIDATORS.pool, &pool, &inputs],
            other => panic!("{path}: unexpected kind {other:?}"),
        };
        for validator in validators {
            let errors = errors(validator, &doc);
            assert!(errors.is_empty(), "{path}: {errors:?}");
        }
        checked += 1;
    }
    assert!(checked >= 20, "{checked} documents checked");
}

/// The published schemas are what yaml-language-server reads: draft-07, with an `$id`
/// under the repository, and `$ref`s that resolve inside the file with nothing beside
/// them (draft-07 ignores a `$ref`'s siblings, so a constraint there would be lost).
#[test]
fn published_schemas_are_draft_07_with_ids_and_resolvable_refs() {
    fn check_refs(root: &Value, node: &Value, file: &str, count: &mut usize) {
        match node {
            Value::Object(map) => {
                if let Some(Value::String(target)) = map.get("$ref") {
                    let pointer = target.strip_prefix('#').unwrap_or(target);
                    assert!(
                        root.pointer(pointer).is_some(),
                        "{file}: $ref {target} resolves to nothing"
                    );
                    assert_eq!(map.len(), 1, "{file}: $ref {target} has siblings");
                    *count += 1;
                }
                map.values().for_each(|v| check_refs(root, v, file, count));
            }
            Value::Array(items) => items.iter().for_each(|v| check_refs(root, v, file, count)),
            _ => {}
        }
    }
    for which in Published::ALL {
        let file = which.file_name();
        let schema = committed(file);
        assert_eq!(
            schema["$schema"], "http://json-schema.org/draft-07/schema#",
            "{file}"
        );
        assert_eq!(
            schema["$id"],
            format!("https://github.com/rdmagen/rdmagen/raw/main/schemas/{file}"),
        );
        assert!(schema.get("$defs").is_none(), "{file} has 2020-12 $defs");
        let mut refs = 0;
        check_refs(&schema, &schema, file, &mut refs);
        // Kubernetes' Affinity and Container alone are dozens of definitions.
        assert!(refs > 50, "{file}: only {refs} $refs");
    }
}

/// The mixed schema checks each document as the kind it names, and refuses others.
#[test]
fn inputs_schema_checks_each_document_as_its_kind() {
    let inputs = jsonschema::validator_for(&committed("inputs.schema.json")).unwrap();
    let documents = example_documents();
    let first = |kind: &str| {
        documents
            .iter()
            .find(|(_, doc)| doc["kind"] == kind)
            .map(|(_, doc)| doc.clone())
            .unwrap()
    };
    let (job, pool) = (first("Job"), first("Pool"));
    // A Pool's spec under a Job, a Job's under a Pool, an unknown kind, no kind.
    let mut swapped = job.clone();
    swapped["spec"] = pool["spec"].clone();
    let mut swapped_back = pool.clone();
    swapped_back["spec"] = job["spec"].clone();
    let mut unknown = job.clone();
    unknown["kind"] = "Pod".into();
    let mut kindless = job.clone();
    kindless.as_object_mut().unwrap().remove("kind");
    for (what, doc) in [
        ("a Job with a Pool's spec", swapped),
        ("a Pool with a Job's spec", swapped_back),
        ("kind: Pod", unknown),
        ("no kind", kindless),
    ] {
        assert!(!errors(&inputs, &doc).is_empty(), "{what} validates");
    }
}
