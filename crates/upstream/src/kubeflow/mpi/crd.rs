//! Strict validation of an MPIJob against the mpi-operator's CRD (v0.8.0, the release
//! rdmagen writes for; tests/upstream/mpi-operator/SOURCE.md).
//!
//! The embedded schema (crates/upstream/schemas/mpi-operator/v0.8.0/mpijobs.strict.json)
//! is the CRD's `openAPIV3Schema` made strict the way Trainer's CRDs are (every object
//! closed with `additionalProperties: false`, int-or-string, int32 bounds, nullable:
//! `kubeflow::trainer::crd::strict`), generated ahead of time; tests/cli/mpijob_crd.rs
//! extracts it from the vendored CRD again and fails when the file differs. The CRD
//! has no CEL rules. What the CRD leaves to the controller's validation (Launcher and
//! Worker only, their counts and restart policies) is the rules' (`rules::mpijob`).

use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use crate::diagnostics::message::{
    path_or_root, pointer_segment, quoted, schema_message, unexpected_field,
};
use crate::diagnostics::suggest;
use crate::diagnostics::{Finding, Rule};
use crate::kubernetes::quick_schema::{self, Dialect};
use crate::kubernetes::schema_tree::Node;

use super::{API_VERSION, KIND};

/// The tag whose CRD the embedded schema is.
pub const TAG: &str = "v0.8.0";

/// The strict schema as committed JSON text.
pub const STRICT: &str = include_str!("../../../schemas/mpi-operator/v0.8.0/mpijobs.strict.json");

/// Whether `doc` is an MPIJob of the API rdmagen knows.
pub fn is_mpijob(doc: &Value) -> bool {
    doc["apiVersion"] == API_VERSION && doc["kind"] == KIND
}

/// [`STRICT`] in the binary form crates/upstream/build.rs writes, which the quick walk
/// reads (kubernetes/schema_blob.rs).
const STRICT_BLOB: &[u8] = include_bytes!(concat!(
    env!("OUT_DIR"),
    "/mpi-operator-v0.8.0-mpijobs.strict.tree"
));

/// The schema as the quick walk reads it, and, for an object it does not find valid,
/// as serde_json reads it and compiled, for the messages.
struct Compiled {
    tree: Node<'static>,
    schema: OnceLock<Value>,
    validator: OnceLock<jsonschema::Validator>,
}

fn compiled() -> &'static Compiled {
    static COMPILED: OnceLock<Compiled> = OnceLock::new();
    COMPILED.get_or_init(|| Compiled {
        tree: Node::decode(STRICT_BLOB),
        schema: OnceLock::new(),
        validator: OnceLock::new(),
    })
}

impl Compiled {
    fn schema(&self) -> &Value {
        self.schema.get_or_init(|| {
            serde_json::from_str(STRICT).expect("mpijobs.strict.json is valid JSON")
        })
    }
}

/// Every way `doc` does not match the MPIJob CRD, strictly: RDG193 findings at JSON
/// Pointers into `doc`. A valid object is decided by the quick walk alone; the schema
/// is compiled only for one that is not, for the messages.
pub fn check(doc: &Value) -> Vec<Finding> {
    if !is_mpijob(doc) {
        let message = format!(
            "not an MPIJob: apiVersion {} and kind {}; expected apiVersion {API_VERSION} and kind {KIND}",
            quoted(&doc["apiVersion"]),
            quoted(&doc["kind"]),
        );
        return vec![Finding::at_pointer(Rule::MpiJobCrd, message, "")];
    }
    let compiled = compiled();
    let draft7 = Dialect {
        draft7: true,
        formats: true,
    };
    if quick_schema::is_valid(&compiled.tree, doc, draft7) == Some(true) {
        return Vec::new();
    }
    let validator = compiled.validator.get_or_init(|| {
        jsonschema::draft7::new(compiled.schema())
            .unwrap_or_else(|e| panic!("the strict MPIJob {TAG} schema compiles: {e}"))
    });
    let mut out = Vec::new();
    for e in validator.iter_errors(doc) {
        let path = e.instance_path().as_str().to_owned();
        match e.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                let keyword = e.schema_path().as_str().to_owned();
                let object = keyword.strip_suffix("/additionalProperties").unwrap_or("");
                let known: Vec<&str> = compiled
                    .schema()
                    .pointer(object)
                    .and_then(|s| s["properties"].as_object())
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default();
                for field in unexpected {
                    let mut message = unexpected_field(field, &path);
                    message.push_str(&format!(
                        ": the mpi-operator {TAG} MPIJob CRD has no such field, so the API server drops it"
                    ));
                    if let Some(near) = suggest::closest(field, known.iter().copied()) {
                        message.push_str(&format!(" (did you mean {near}?)"));
                    }
                    let pointer = format!("{path}/{}", pointer_segment(field));
                    out.push(Finding::at_pointer(Rule::MpiJobCrd, message, pointer));
                }
            }
            _ => out.push(Finding::at_pointer(
                Rule::MpiJobCrd,
                format!(
                    "{}: {} (the mpi-operator {TAG} MPIJob CRD)",
                    path_or_root(&path),
                    schema_message(&e)
                ),
                path,
            )),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What a run decodes is what the committed strict JSON says.
    #[test]
    fn the_strict_binary_form_is_the_committed_json() {
        let value: Value = serde_json::from_str(STRICT).unwrap();
        assert!(Node::decode(STRICT_BLOB).equals(&value));
        assert!(Node::decode(STRICT_BLOB).identical(&Node::parse(STRICT).unwrap()));
    }

    fn job(spec: Value) -> Value {
        json!({"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "j"}, "spec": spec})
    }

    fn replicas() -> Value {
        let template = json!({"spec": {"containers": [{"name": "c", "image": "i"}]}});
        json!({"Launcher": {"replicas": 1, "template": template},
               "Worker": {"replicas": 2, "template": template}})
    }

    #[test]
    fn a_minimal_mpijob_is_valid_and_a_misspelt_field_is_named() {
        assert!(check(&job(json!({"mpiReplicaSpecs": replicas()}))).is_empty());
        let typo = job(json!({"mpiReplicaSpecs": replicas(), "slotPerWorker": 8}));
        let found: Vec<String> = check(&typo).into_iter().map(|f| f.message).collect();
        assert_eq!(
            found,
            [
                "'slotPerWorker' was unexpected at /spec: the mpi-operator v0.8.0 MPIJob CRD has no such field, so the API server drops it (did you mean slotsPerWorker?)"
            ]
        );
        let enum_value =
            job(json!({"mpiReplicaSpecs": replicas(), "mpiImplementation": "OpenMpi"}));
        let found = check(&enum_value);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].pointer.as_deref(), Some("/spec/mpiImplementation"));
        assert_eq!(check(&json!({"kind": "PyTorchJob"})).len(), 1);
    }
}
