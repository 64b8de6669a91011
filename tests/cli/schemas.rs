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

/// Every document the tests hold (the examples, tests/bad, the snapshots' inputs), as
/// rdmagen reads it, with where it came from.
fn every_input_document() -> Vec<(String, Value)> {
    use rdmagen::yaml::{tree::parse_documents, tree_value::to_value};
    let mut dirs = crate::support::examples();
    dirs.push(root().join("tests"));
    let mut documents = Vec::new();
    for dir in dirs {
        for (path, bytes) in crate::support::tree(&dir) {
            if !(path.ends_with(".yaml") || path.ends_with(".yml")) {
                continue;
            }
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            let name: std::sync::Arc<str> = format!("{}/{path}", dir.display()).into();
            let Ok(docs) = parse_documents(&name, &text) else {
                continue;
            };
            for doc in docs {
                let value = to_value(&doc.root);
                if value["apiVersion"] == "rdmagen/v1alpha1" {
                    documents.push((name.to_string(), value));
                }
            }
        }
    }
    documents
}

/// Each document changed in one place: a field removed, an unknown field added to an
/// object, a value replaced by one of a few of another type or out of range.
fn variants(doc: &Value) -> Vec<Value> {
    fn walk(root: &Value, node: &Value, pointer: String, out: &mut Vec<Value>) {
        let replace = |with: Value| {
            let mut v = root.clone();
            *v.pointer_mut(&pointer).unwrap() = with;
            v
        };
        for with in [
            Value::Null,
            Value::from(0),
            Value::from(-1),
            Value::from(1.5),
            Value::from("x"),
            Value::from(true),
            serde_json::json!([]),
            serde_json::json!({}),
        ] {
            if *node != with {
                out.push(replace(with));
            }
        }
        match node {
            Value::Object(map) => {
                let mut added = node.clone();
                added["zzUnknown"] = Value::from("x");
                out.push(replace(added));
                for (key, child) in map {
                    let mut removed = node.clone();
                    removed.as_object_mut().unwrap().remove(key);
                    out.push(replace(removed));
                    let key = key.replace('~', "~0").replace('/', "~1");
                    walk(root, child, format!("{pointer}/{key}"), out);
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    walk(root, child, format!("{pointer}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = vec![doc.clone()];
    walk(doc, doc, String::new(), &mut out);
    out
}

/// The fast check of valid inputs (the embedded schema, Kubernetes definitions compiled
/// on demand) judges every document as the full generated schema does: every example
/// and test input, and each of them changed in one place. Were it to call a document
/// valid that the full schema refuses, that document's findings would go unreported.
#[test]
fn the_fast_input_check_agrees_with_the_full_schema() {
    use rdmagen::model::schema::{InputKind, VALIDATORS, is_valid};
    let (mut documents, mut valid, mut invalid) = (0, 0, 0);
    for (path, doc) in every_input_document() {
        let (kind, full) = match doc["kind"].as_str() {
            Some("Job") => (InputKind::Job, &VALIDATORS.job),
            Some("Pool") => (InputKind::Pool, &VALIDATORS.pool),
            _ => continue,
        };
        documents += 1;
        for variant in variants(&doc) {
            let expected = full.is_valid(&variant);
            assert_eq!(
                is_valid(kind, &variant),
                expected,
                "{path}: the fast check and the full schema disagree on {variant}"
            );
            if expected { valid += 1 } else { invalid += 1 }
        }
    }
    assert!(documents >= 60, "{documents} documents");
    assert!(
        valid >= 1000 && invalid >= 10_000,
        "{valid} valid, {invalid} invalid variants"
    );
}

/// `schemas/nccl-log.schema.json` is what the code generates, and every vendored log's
/// JSON verdict validates against it: no field is undocumented (every object of the
/// schema refuses unknown properties).
#[test]
fn nccl_log_output_schema_is_fresh_and_documents_every_field() {
    let generated = rdmagen::nccl_log::output_schema();
    let path = root().join("schemas/nccl-log.schema.json");
    if std::env::var_os("RDMAGEN_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "schemas/nccl-log.schema.json is stale; regenerate with `RDMAGEN_BLESS=1 cargo test --test cli schemas`"
    );
    let schema: Value = serde_json::from_str(&committed).unwrap();
    assert!(jsonschema::meta::is_valid(&schema));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut checked = 0;
    for dir in ["samples", "nccl-tests", "perftest"] {
        for entry in std::fs::read_dir(root().join("tests/nccl_logs").join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().unwrap() == "SOURCES.txt" {
                continue;
            }
            let pools = root().join("tests/nccl_logs/pools.yaml");
            let out = crate::support::rdmagen(&[
                "nccl-log",
                path.to_str().unwrap(),
                "--pools",
                pools.to_str().unwrap(),
                "--pool",
                "h100-roce",
                "--format",
                "json",
            ]);
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            let errors = errors(&validator, &doc);
            assert!(errors.is_empty(), "{}: {errors:?}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 25, "{checked}");
}

/// schemas/config.schema.json is what `rdmagen schema config` prints.
#[test]
fn config_schema_is_committed_fresh() {
    let out = crate::support::rdmagen(&["schema", "config"]);
    assert_eq!(out.status.code(), Some(0));
    let generated = crate::support::text(&out.stdout);
    let path = root().join("schemas/config.schema.json");
    if std::env::var_os("RDMAGEN_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "schemas/config.schema.json is stale; regenerate with `RDMAGEN_BLESS=1 cargo test --test cli schemas`"
    );
    let schema: Value = serde_json::from_str(&committed).unwrap();
    assert!(jsonschema::meta::is_valid(&schema));
    assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
    assert_eq!(
        schema["$id"],
        "https://github.com/rdmagen/rdmagen/raw/main/schemas/config.schema.json"
    );
}

/// Every configuration the repository holds: the README's example, and each text the
/// tests write as `.rdmagen.yaml`/`.rdmagen.yml` (a Rust string literal after the
/// file's name), by where it came from.
fn repository_configs() -> Vec<(String, String)> {
    let mut configs = Vec::new();
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (_, after) = readme
        .split_once("takes these keys:\n\n```yaml\n")
        .expect("README shows the configuration file's keys");
    let example = after.split_once("```").unwrap().0;
    configs.push(("README.md".to_owned(), example.to_owned()));
    let literal = regex::Regex::new(r#""\.rdmagen\.ya?ml",\s*"((?:[^"\\]|\\.)*)""#).unwrap();
    for entry in std::fs::read_dir(root().join("tests/cli")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let source = std::fs::read_to_string(&path).unwrap();
        for (n, found) in literal.captures_iter(&source).enumerate() {
            let text = found[1]
                .replace("\\n", "\n")
                .replace("\\\"", "\"")
                .replace("\\\\", "\\");
            configs.push((format!("{} #{n}", path.display()), text));
        }
    }
    configs.sort();
    configs
}

/// A configuration's text as rdmagen and yaml-language-server read it: YAML 1.2, in
/// which `off` is a string (YAML 1.1 made it false).
fn yaml_1_2(text: &str) -> Value {
    use rdmagen::yaml::{tree::parse_documents, tree_value::to_value};
    let docs = parse_documents(&std::sync::Arc::from(".rdmagen.yaml"), text).unwrap();
    docs.first().map_or(Value::Null, |doc| to_value(&doc.root))
}

/// The schema accepts every configuration rdmagen accepts, and refuses an unknown
/// key, level or format, and a rule that cannot be configured.
#[test]
fn config_schema_accepts_every_config_rdmagen_reads() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("schemas/config.schema.json")).unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let (mut accepted, mut refused) = (0, 0);
    for (from, text) in repository_configs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".rdmagen.yaml"), &text).unwrap();
        let run = crate::support::rdmagen_in(dir.path(), &["config"]);
        if run.status.code() != Some(0) {
            refused += 1;
            continue;
        }
        let doc = yaml_1_2(&text);
        let problems = errors(&validator, &doc);
        assert!(problems.is_empty(), "{from}: {text}\n{problems:?}");
        accepted += 1;
    }
    // The README's example and the tests' valid files, besides those meant to fail.
    assert!(
        accepted >= 10 && refused >= 1,
        "{accepted} accepted, {refused} refused"
    );
    for wrong in [
        "rulez: {RDG020: off}\n",
        "rules: {RDG020: of}\n",
        "rules: {RDG001: off}\n",
        "rules: {XYZ: off}\n",
        "format: yaml\n",
        "minSeverity: off\n",
        "overrides:\n  - files: a/**\n    rules: {RDG020: off}\n    extra: 1\n",
        "overrides:\n  - rules: {RDG020: off}\n",
    ] {
        let doc = yaml_1_2(wrong);
        assert!(!errors(&validator, &doc).is_empty(), "accepted: {wrong}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".rdmagen.yaml"), wrong).unwrap();
        let run = crate::support::rdmagen_in(dir.path(), &["config"]);
        assert_eq!(run.status.code(), Some(2), "rdmagen reads {wrong}");
    }
}
