//! JSON Schemas of the inputs, generated from the Rust types: what `rdmagen schema`
//! prints, what `schemas/` holds, and what every input is validated against.

use std::sync::LazyLock;

use serde_json::Value;

use crate::model::{JobDocument, PoolDocument};

/// Which input schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputKind {
    Job,
    Pool,
}

/// The schema of one input kind as JSON.
pub fn generate(kind: InputKind) -> Value {
    let schema = match kind {
        InputKind::Job => schemars::schema_for!(JobDocument),
        InputKind::Pool => schemars::schema_for!(PoolDocument),
    };
    serde_json::to_value(schema).expect("schemas serialise")
}

/// Pretty JSON with a final newline, as committed under `schemas/`.
pub fn pretty(kind: InputKind) -> String {
    let mut text = serde_json::to_string_pretty(&generate(kind)).expect("schemas serialise");
    text.push('\n');
    text
}

/// Compiled validators, built once per process.
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
