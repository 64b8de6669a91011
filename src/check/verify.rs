//! Verify: rendered text is parsed back and checked before anything is written —
//! against rdmagen's strict PyTorchJob schema, every error-level manifest rule (the
//! operator webhook's among them), and the plan itself (image, command and
//! environment must read back exactly).

use serde_json::Value;

use crate::check::manifest::{self, ManifestFacts};
use crate::check::{Rule, Severity};
use crate::plan::Plan;
use crate::plan::pod::TRAINING_CONTAINER;

/// The schema of rendered PyTorchJobs (`rdmagen schema pytorchjob`).
pub const OUTPUT_SCHEMA: &str = include_str!("../../schemas/pytorchjob.schema.json");

/// A problem found in rendered output: the rule and what is wrong, at a JSON path.
#[derive(Debug)]
pub struct Problem {
    pub rule: Rule,
    pub message: String,
}

/// Holds the compiled schema; build once per run.
pub struct Verifier {
    schema: jsonschema::Validator,
}

impl Verifier {
    pub fn new() -> Self {
        let schema: Value = serde_json::from_str(OUTPUT_SCHEMA)
            .expect("schemas/pytorchjob.schema.json is valid JSON");
        let schema = jsonschema::validator_for(&schema).expect("the embedded schema compiles");
        Verifier { schema }
    }

    /// Check a rendered PyTorchJob document against the schema, the webhook and the plan.
    pub fn pytorchjob(&self, text: &str, plan: &Plan) -> Vec<Problem> {
        let docs = match parse(text) {
            Ok(docs) => docs,
            Err(message) => return vec![problem(Rule::RenderedSchema, message)],
        };
        let [doc] = docs.as_slice() else {
            return vec![problem(
                Rule::RenderedSchema,
                format!("expected one document, found {}", docs.len()),
            )];
        };
        // Valid output is the common case; is_valid skips building errors.
        let mut problems: Vec<Problem> = (!self.schema.is_valid(doc))
            .then(|| self.schema.iter_errors(doc))
            .into_iter()
            .flatten()
            .map(|e| {
                problem(
                    Rule::RenderedSchema,
                    format!(
                        "{}: {}",
                        path_or_root(&e.instance_path().to_string()),
                        schema_message(&e)
                    ),
                )
            })
            .collect();
        // Rendered output is judged on the cluster its plan targets.
        let facts = ManifestFacts {
            operator: plan.target.generation(),
            platform: Some(plan.target.platform),
        };
        problems.extend(
            manifest::check(doc, &facts)
                .into_iter()
                .filter(|p| p.rule.info().severity == Severity::Error)
                .map(|p| {
                    problem(
                        p.rule,
                        format!("{}: {}", path_or_root(&p.pointer), p.message),
                    )
                }),
        );
        problems.extend(fidelity(doc, plan));
        problems
    }

    /// Check rendered PersistentVolume/Claim documents against the plan.
    pub fn storage(&self, text: &str, plan: &Plan) -> Vec<Problem> {
        let docs = match parse(text) {
            Ok(docs) => docs,
            Err(message) => return vec![problem(Rule::RenderedSchema, message)],
        };
        let expected: Vec<(&str, &str)> = plan
            .storage
            .iter()
            .flat_map(|s| {
                [
                    ("PersistentVolume", s.volume_name.as_str()),
                    ("PersistentVolumeClaim", s.claim_name.as_str()),
                ]
            })
            .collect();
        let found: Vec<(&str, &str)> = docs
            .iter()
            .map(|d| {
                (
                    d["kind"].as_str().unwrap_or(""),
                    d["metadata"]["name"].as_str().unwrap_or(""),
                )
            })
            .collect();
        if found == expected {
            Vec::new()
        } else {
            vec![problem(
                Rule::RenderedFidelity,
                format!("storage documents {found:?} differ from the plan's {expected:?}"),
            )]
        }
    }
}

impl Default for Verifier {
    fn default() -> Self {
        Self::new()
    }
}

fn problem(rule: Rule, message: impl Into<String>) -> Problem {
    Problem {
        rule,
        message: message.into(),
    }
}

/// The longest value a finding quotes from rendered output, in bytes of JSON.
const MAX_QUOTED: usize = 160;

/// A schema error as a message, quoting the offending value only when it is short.
/// A user template can render any text, a whole file even, where an object belongs;
/// a finding then names the problem and the value's size, and never replays the file
/// into a CI log.
fn schema_message(e: &jsonschema::ValidationError<'_>) -> String {
    let size = e.instance().to_string().len();
    if size <= MAX_QUOTED {
        e.to_string()
    } else {
        e.masked_with(format!("a value of {size} bytes"))
            .to_string()
    }
}

/// `value` as JSON when short, else its size (see [`schema_message`]).
fn quoted(value: &Value) -> String {
    let json = value.to_string();
    if json.len() <= MAX_QUOTED {
        json
    } else {
        format!("a value of {} bytes", json.len())
    }
}

fn path_or_root(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// Parse rendered YAML the way a strict consumer would: YAML 1.1 booleans stay
/// strings, and duplicate keys are errors.
pub fn parse(text: &str) -> Result<Vec<Value>, String> {
    crate::spec::tree_value::parse_values(text).map_err(|e| {
        format!(
            "rendered text is not valid YAML at line {}, column {}: {}",
            e.line, e.column, e.message
        )
    })
}

/// What the plan decided must read back unchanged from every replica.
fn fidelity(doc: &Value, plan: &Plan) -> Vec<Problem> {
    let mut out = Vec::new();
    let mismatch = |what: &str, found: &Value| {
        problem(
            Rule::RenderedFidelity,
            format!("{what} reads back as {}", quoted(found)),
        )
    };
    if doc["metadata"]["name"] != plan.name.as_str() {
        out.push(mismatch("metadata.name", &doc["metadata"]["name"]));
    }
    let Some(specs) = doc["spec"]["pytorchReplicaSpecs"].as_object() else {
        return out;
    };
    // The plan's pod template is the truth, overlays included.
    let planned = plan.pod.template["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == TRAINING_CONTAINER))
        .cloned()
        .unwrap_or_default();
    let env = planned
        .get("env")
        .cloned()
        .unwrap_or(Value::Array(Vec::new()));
    for (role, replica) in specs {
        let Some(container) = replica["template"]["spec"]["containers"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["name"] == TRAINING_CONTAINER))
        else {
            continue;
        };
        if container["image"] != planned["image"] {
            out.push(mismatch(&format!("{role} image"), &container["image"]));
        }
        if container["command"] != planned["command"] {
            out.push(mismatch(&format!("{role} command"), &container["command"]));
        }
        let found_env = container
            .get("env")
            .cloned()
            .unwrap_or(Value::Array(Vec::new()));
        if found_env != env {
            out.push(mismatch(&format!("{role} env"), &found_env));
        }
    }
    out
}
