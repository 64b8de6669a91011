//! JSON Schemas of the inputs, generated from the Rust types: what every input is
//! validated against, and what `schemas/` publishes and `rdmagen schema` prints.
//!
//! Two drafts of the same types. The validator uses JSON Schema 2020-12: its error
//! messages walk the schema by keyword location (`input_check`, `choices`), through
//! `$ref`s that sit beside a description. The published files are draft-07, the draft
//! yaml-language-server (VS Code YAML, Neovim, Helix) implements; schemars' draft-07
//! settings move such `$ref`s into an `allOf`, which draft-07 requires.

use std::sync::{Arc, LazyLock, OnceLock};

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

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

/// The committed `schemas/job.schema.json` and `schemas/pool.schema.json`, embedded:
/// equal to [`pretty`] of the same kind (a test here, and `committed_schemas_are_fresh`,
/// which regenerates the files).
const EMBEDDED_JOB: &str = include_str!("../../schemas/job.schema.json");
const EMBEDDED_POOL: &str = include_str!("../../schemas/pool.schema.json");

/// Whether `value` (a document as JSON) is valid against the schema of `kind`, exactly
/// as [`VALIDATORS`] judges it, without generating or compiling the full schema.
///
/// The embedded draft-07 schema is compiled with rdmagen's own definitions only: each
/// `$ref` to a Kubernetes definition becomes the keyword [`KUBERNETES_KEYWORD`], whose
/// validator (that definition and its closure, made strict as the full schema has
/// them) is compiled the first time a document has such a field. Formats are not
/// checked, as the 2020-12 validator does not check them. A test runs every example,
/// every bad input and generated documents through both and compares.
pub fn is_valid(kind: InputKind, value: &Value) -> bool {
    static FAST: [LazyLock<jsonschema::Validator>; 2] = [
        LazyLock::new(|| fast_validator(EMBEDDED_JOB)),
        LazyLock::new(|| fast_validator(EMBEDDED_POOL)),
    ];
    let index = match kind {
        InputKind::Job => 0,
        InputKind::Pool => 1,
    };
    FAST[index].is_valid(value)
}

/// The keyword that stands for a `$ref` to a Kubernetes definition in [`is_valid`]'s
/// schemas; its value is the definition's name.
const KUBERNETES_KEYWORD: &str = "x-rdmagen-kubernetes";

fn fast_validator(embedded: &str) -> jsonschema::Validator {
    let mut schema: Value =
        serde_json::from_str(embedded).expect("the embedded input schemas are JSON");
    if let Some(Value::Object(definitions)) = schema.get_mut("definitions") {
        definitions.retain(|name, _| !name.starts_with(KUBERNETES_PREFIX));
    }
    replace_kubernetes_refs(&mut schema);
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft7)
        .should_validate_formats(false)
        .with_keyword(KUBERNETES_KEYWORD, |_, value, _| {
            let name = value.as_str().unwrap_or_default().to_owned();
            Ok(Box::new(KubernetesRef {
                name,
                validator: OnceLock::new(),
            }))
        })
        .build(&schema)
        .unwrap_or_else(|e| panic!("the embedded input schema does not compile: {e}"))
}

const KUBERNETES_PREFIX: &str = "io.k8s.";

fn replace_kubernetes_refs(node: &mut Value) {
    match node {
        Value::Object(map) => {
            let target = match map.get("$ref") {
                Some(Value::String(r)) => r
                    .strip_prefix("#/definitions/")
                    .filter(|name| name.starts_with(KUBERNETES_PREFIX))
                    .map(str::to_owned),
                _ => None,
            };
            if let Some(name) = target {
                map.remove("$ref");
                map.insert(KUBERNETES_KEYWORD.to_owned(), Value::String(name));
            }
            map.values_mut().for_each(replace_kubernetes_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(replace_kubernetes_refs),
        _ => {}
    }
}

/// One Kubernetes definition inside an input, compiled on first use.
struct KubernetesRef {
    name: String,
    validator: OnceLock<Arc<jsonschema::Validator>>,
}

impl KubernetesRef {
    fn validator(&self) -> &jsonschema::Validator {
        self.validator
            .get_or_init(|| crate::kubernetes::input_schema::validator(&self.name))
    }
}

impl<'i> jsonschema::Keyword<'i> for KubernetesRef {
    fn validate(&self, instance: &'i Value) -> Result<(), jsonschema::ValidationError<'i>> {
        if self.is_valid(instance) {
            Ok(())
        } else {
            Err(jsonschema::ValidationError::custom(format!(
                "not a valid {}",
                self.name
            )))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        self.validator().is_valid(instance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_schemas_are_the_generated_ones() {
        assert!(
            EMBEDDED_JOB == pretty(Published::Job),
            "schemas/job.schema.json is stale"
        );
        assert!(
            EMBEDDED_POOL == pretty(Published::Pool),
            "schemas/pool.schema.json is stale"
        );
    }
}
