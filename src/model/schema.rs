//! JSON Schemas of the inputs, generated from the Rust types: what every input is
//! validated against, and what `schemas/` publishes and `rdmagen schema` prints.
//!
//! Two drafts of the same types. The validator uses JSON Schema 2020-12: its error
//! messages walk the schema by keyword location (`input_check`, `choices`), through
//! `$ref`s that sit beside a description. The published files are draft-07, the draft
//! yaml-language-server (VS Code YAML, Neovim, Helix) implements; schemars' draft-07
//! settings move such `$ref`s into an `allOf`, which draft-07 requires.

use std::sync::LazyLock;

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::kubernetes::quick_schema::{self, Dialect};
use crate::kubernetes::schema_tree::Node;
use crate::model::{JobDocument, PoolDocument};

/// Which input schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputKind {
    Job,
    Pool,
}

/// The schema of one input kind as the validator uses it (2020-12).
pub fn generate(kind: InputKind) -> Value {
    let schema = match kind {
        InputKind::Job => schemars::schema_for!(JobDocument),
        InputKind::Pool => schemars::schema_for!(PoolDocument),
    };
    serde_json::to_value(schema).expect("schemas serialise")
}

/// A schema published under `schemas/` for editors (draft-07).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Published {
    Job,
    Pool,
    /// Jobs and Pools in any mix, chosen per YAML document by `kind`.
    Inputs,
}

impl Published {
    pub const ALL: [Published; 3] = [Published::Job, Published::Pool, Published::Inputs];

    /// Its file under `schemas/`.
    pub fn file_name(self) -> &'static str {
        match self {
            Published::Job => "job.schema.json",
            Published::Pool => "pool.schema.json",
            Published::Inputs => "inputs.schema.json",
        }
    }

    /// Its `$id`: the address of the committed file on the main branch. An editor that
    /// is given the `$id` as a URL fetches this very file, and the `$id` does not change
    /// with each release (the schemas only grow compatibly while the input API is
    /// `rdmagen/v1alpha1`).
    pub fn id(self) -> String {
        format!(
            "{}/raw/main/schemas/{}",
            env!("CARGO_PKG_REPOSITORY"),
            self.file_name()
        )
    }
}

/// A published schema as JSON.
pub fn published(which: Published) -> Value {
    let mut generator = SchemaSettings::draft07().into_generator();
    let meta_schema = generator.settings().meta_schema.clone();
    let body = match which {
        Published::Job => serde_json::to_value(generator.into_root_schema_for::<JobDocument>()),
        Published::Pool => {
            serde_json::to_value(generator.into_root_schema_for::<PoolDocument>())
        }
        Published::Inputs => {
            let job = generator.subschema_for::<JobDocument>();
            let pool = generator.subschema_for::<PoolDocument>();
            // yaml-language-server applies a schema to each document of a file, and
            // follows if/then/else, so each document is completed and checked as the
            // one kind it names (a oneOf would offer both kinds' fields everywhere).
            Ok(json!({
                "title": "rdmagen inputs",
                "description": "A YAML file of rdmagen inputs: each document is a Job or a Pool, as its `kind` says.",
                "type": "object",
                "required": ["kind"],
                "properties": {"kind": {"enum": ["Job", "Pool"]}},
                "if": {"properties": {"kind": {"const": "Pool"}}},
                "then": pool,
                "else": job,
                "definitions": generator.take_definitions(true),
            }))
        }
    }
    .expect("schemas serialise");
    // `$schema` and `$id` first, where a reader looks for them.
    let mut schema = Map::new();
    schema.insert("$schema".to_owned(), json!(meta_schema));
    schema.insert("$id".to_owned(), json!(which.id()));
    if let Value::Object(rest) = body {
        schema.extend(rest.into_iter().filter(|(k, _)| k != "$schema"));
    }
    Value::Object(schema)
}

/// Pretty JSON with a final newline, as committed under `schemas/`.
pub fn pretty(which: Published) -> String {
    let mut text = serde_json::to_string_pretty(&published(which)).expect("schemas serialise");
    text.push('\n');
    text
}

/// Compiled validators of the full schemas, built once per process on first use: only
/// when a document fails [`is_valid`] (to report every violation with today's messages)
/// and in tests. Generating both schemas and compiling them costs about 15 ms of CPU
/// (bench/RESULTS.md, "Start-up (issue 23)"), so a run of valid inputs never builds them.
pub struct Validators {
    pub job: jsonschema::Validator,
    pub pool: jsonschema::Validator,
    pub job_schema: Value,
    pub pool_schema: Value,
}

pub static VALIDATORS: LazyLock<Validators> = LazyLock::new(|| {
    let job_schema = generate(InputKind::Job);
    let pool_schema = generate(InputKind::Pool);
    Validators {
        job: jsonschema::validator_for(&job_schema).expect("job schema compiles"),
        pool: jsonschema::validator_for(&pool_schema).expect("pool schema compiles"),
        job_schema,
        pool_schema,
    }
});

/// [`generate`] of both kinds for the quick walk alone (2020-12, every Kubernetes
/// definition they reach made strict, without descriptions), generated ahead of time:
/// a run of valid inputs neither generates nor compiles the full schema. One file,
/// `{"$defs": …, "job": …, "pool": …}`: the two share almost every definition (the
/// Kubernetes pod fields among them), which a run then parses once. A test
/// regenerates it ([`quick_text`]).
#[cfg(test)]
const QUICK_INPUTS: &str = include_str!("../../schemas/quick/inputs.json");

/// [`QUICK_INPUTS`] in the binary form build.rs writes, which a run reads: decoding it
/// is a few times faster than tokenising the JSON (issue 23).
const QUICK_INPUTS_BLOB: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/quick-inputs.tree"));

/// The committed text of `schemas/quick/inputs.json`.
pub fn quick_text() -> String {
    let mut definitions = Map::new();
    let mut roots = Map::new();
    for (key, kind) in [("job", InputKind::Job), ("pool", InputKind::Pool)] {
        let mut root = quick_schema::stripped(&generate(kind));
        let own = root.as_object_mut().and_then(|r| r.remove("$defs"));
        for (name, definition) in own.and_then(|d| d.as_object().cloned()).unwrap_or_default() {
            match definitions.get(&name) {
                // One name is one Rust type, so the same schema in both.
                Some(seen) => assert_eq!(
                    seen, &definition,
                    "$defs/{name} differs between job and pool"
                ),
                None => {
                    definitions.insert(name, definition);
                }
            }
        }
        roots.insert(key.to_owned(), root);
    }
    let mut quick = Map::new();
    quick.insert("$defs".to_owned(), definitions.into());
    quick.extend(roots);
    let mut text = serde_json::to_string(&Value::Object(quick)).expect("a schema serialises");
    text.push('\n');
    text
}

/// Whether `value` (a document as JSON) is valid against the schema of `kind`, exactly
/// as [`VALIDATORS`] judges it. The quick walk decides a valid document without
/// compiling anything; only a document it does not find valid builds [`VALIDATORS`],
/// whose verdict is then the answer (kubernetes/quick_schema.rs; a test compares the
/// two on every example, bad input and mutated documents).
pub fn is_valid(kind: InputKind, value: &Value) -> bool {
    static QUICK: LazyLock<Node<'static>> = LazyLock::new(|| Node::decode(QUICK_INPUTS_BLOB));
    let key = match kind {
        InputKind::Job => "job",
        InputKind::Pool => "pool",
    };
    let dialect = Dialect {
        draft7: false,
        formats: false,
    };
    QUICK.get(key).is_some_and(|schema| {
        quick_schema::is_valid_at(&QUICK, schema, value, dialect) == Some(true)
    }) || match kind {
        InputKind::Job => VALIDATORS.job.is_valid(value),
        InputKind::Pool => VALIDATORS.pool.is_valid(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quick_schemas_are_the_generated_ones() {
        quick_schema::assert_fresh(
            env!("CARGO_MANIFEST_DIR"),
            "schemas/quick/inputs.json",
            QUICK_INPUTS,
            &quick_text(),
        );
    }

    #[test]
    fn the_quick_schemas_blob_is_their_json() {
        let value: Value = serde_json::from_str(QUICK_INPUTS).expect("JSON");
        assert!(Node::decode(QUICK_INPUTS_BLOB).equals(&value));
        assert!(
            Node::decode(QUICK_INPUTS_BLOB).identical(&Node::parse(QUICK_INPUTS).expect("JSON"))
        );
    }
}
