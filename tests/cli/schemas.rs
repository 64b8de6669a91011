//! The committed input schemas are the ones the code generates.

use rdmagen::model::schema::{InputKind, pretty};

use crate::support::root;

#[test]
fn committed_schemas_are_fresh() {
    for (kind, file) in [
        (InputKind::Job, "job.schema.json"),
        (InputKind::Pool, "pool.schema.json"),
    ] {
        let path = root().join("schemas").join(file);
        let generated = pretty(kind);
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

#[test]
fn schemas_are_valid_json_schema_and_examples_validate() {
    use rdmagen::model::schema::VALIDATORS;
    for file in [
        "job.schema.json",
        "pool.schema.json",
        "pytorchjob.schema.json",
    ] {
        let text = std::fs::read_to_string(root().join("schemas").join(file)).unwrap();
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(
            jsonschema::meta::is_valid(&schema),
            "{file} is not a valid JSON Schema"
        );
    }
    let mut checked = 0;
    for example in crate::support::examples() {
        for (path, bytes) in crate::support::tree(&example) {
            let text = String::from_utf8(bytes).unwrap();
            let docs: Vec<serde_json::Value> = serde_saphyr::from_str_multiple(&text).unwrap();
            for doc in docs {
                let validator = match doc["kind"].as_str() {
                    Some("Job") => &VALIDATORS.job,
                    Some("Pool") => &VALIDATORS.pool,
                    other => panic!("{path}: unexpected kind {other:?}"),
                };
                let errors: Vec<String> =
                    validator.iter_errors(&doc).map(|e| e.to_string()).collect();
                assert!(
                    errors.is_empty(),
                    "{}/{path}: {errors:?}",
                    example.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "{checked} documents checked");
}
