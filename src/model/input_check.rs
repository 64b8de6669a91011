//! Validate an input document against its JSON Schema and turn every violation into
//! a located finding, so a user sees all problems of a file at once.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{JsonType, ValidationError, Validator};
use serde_json::Value;

use crate::diagnostics::suggest::closest;
use crate::diagnostics::{Findings, Rule, pointer};
use crate::model::choices;
use crate::yaml::tree::Document;

/// Report every schema violation of `value` (the document as JSON) as RDG004.
pub fn check(
    doc: &Document,
    value: &Value,
    validator: &Validator,
    schema: &Value,
    findings: &mut Findings,
) {
    // Valid documents are the common case; is_valid skips building errors.
    if validator.is_valid(value) {
        return;
    }
    let errors: Vec<ValidationError<'_>> = validator.iter_errors(value).collect();
    // A misspelt required field shows up twice: unknown `gpuPerNode` and missing
    // `gpusPerNode`. The suggestion says it all, so the second is dropped.
    let mut suggested = Vec::new();
    for error in &errors {
        if let ValidationErrorKind::AdditionalProperties { unexpected } = error.kind() {
            let pointer = error.instance_path().to_string();
            let allowed = properties_at(schema, &pointer);
            for field in unexpected {
                if let Some(near) = closest(field, allowed.iter().map(String::as_str)) {
                    suggested.push((pointer.clone(), near.to_owned()));
                }
            }
        }
    }
    for error in &errors {
        report(doc, schema, error, &suggested, findings);
    }
}

/// Fields that moved: where a Job's `spec.labels` and `spec.annotations` live now.
fn moved(pointer: &str, field: &str) -> Option<&'static str> {
    match (pointer, field) {
        ("/spec", "labels") => Some("metadata.labels"),
        ("/spec", "annotations") => Some("metadata.annotations"),
        _ => None,
    }
}

fn report(
    doc: &Document,
    schema: &Value,
    error: &ValidationError<'_>,
    suggested: &[(String, String)],
    findings: &mut Findings,
) {
    let pointer = error.instance_path().to_string();
    let choice = matches!(
        error.kind(),
        ValidationErrorKind::Enum { .. }
            | ValidationErrorKind::Constant { .. }
            | ValidationErrorKind::OneOfNotValid { .. }
            | ValidationErrorKind::AnyOf { .. }
    );
    if choice && let Some(choices) = choices::at(schema, error.schema_path().as_str()) {
        findings.at(
            Rule::InputShape,
            format!(
                "{}: {}",
                dotted(&pointer),
                choices.message(error.instance())
            ),
            doc.locate_pointer(&pointer),
        );
        return;
    }
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let allowed = properties_at(schema, &pointer);
            for field in unexpected {
                let at = doc.locate_pointer(&format!("{pointer}/{}", pointer::segment(field)));
                let hint = match (
                    moved(&pointer, field),
                    closest(field, allowed.iter().map(String::as_str)),
                ) {
                    (Some(place), _) => {
                        format!("; it moved to `{place}`, where Kubernetes keeps it")
                    }
                    (None, Some(near)) => format!("; did you mean `{near}`?"),
                    (None, None) => format!("; expected one of {}", allowed.join(", ")),
                };
                findings.at(
                    Rule::InputShape,
                    format!("unknown field `{field}`{hint}"),
                    at,
                );
            }
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            if suggested.iter().any(|(p, n)| *p == pointer && n == name) {
                return;
            }
            findings.at(
                Rule::InputShape,
                format!("{}: missing field `{name}`", dotted(&pointer)),
                doc.locate_pointer(&pointer),
            );
        }
        ValidationErrorKind::AnyOf { context } => {
            // `Option<T>` is `anyOf [T, null]`: report what is wrong against T.
            let branches: Vec<&Vec<ValidationError<'static>>> =
                context.iter().filter(|b| !is_null_branch(b)).collect();
            match branches.as_slice() {
                [only] => only
                    .iter()
                    .for_each(|e| report(doc, schema, e, suggested, findings)),
                _ => plain(doc, &pointer, error, findings),
            }
        }
        ValidationErrorKind::Pattern { .. } => {
            // A regular expression says nothing to the person who typed the value; the
            // schema's description of the field says what it takes.
            let described = error
                .schema_path()
                .as_str()
                .strip_suffix("/pattern")
                .and_then(|parent| schema.pointer(parent))
                .and_then(|node| node["description"].as_str());
            match described {
                Some(takes) => findings.at(
                    Rule::InputShape,
                    format!(
                        "{}: {} is not a value this field takes ({takes})",
                        dotted(&pointer),
                        crate::diagnostics::message::quoted(error.instance())
                    ),
                    doc.locate_pointer(&pointer),
                ),
                None => plain(doc, &pointer, error, findings),
            }
        }
        _ => plain(doc, &pointer, error, findings),
    }
}

fn plain(doc: &Document, pointer: &str, error: &ValidationError<'_>, findings: &mut Findings) {
    findings.at(
        Rule::InputShape,
        format!("{}: {error}", dotted(pointer)),
        doc.locate_pointer(pointer),
    );
}

fn is_null_branch(errors: &[ValidationError<'_>]) -> bool {
    matches!(
        errors,
        [e] if matches!(e.kind(), ValidationErrorKind::Type { kind: TypeKind::Single(JsonType::Null) })
    )
}

/// `/spec/env/X` as `spec.env.X`, the root as `document`.
fn dotted(pointer: &str) -> String {
    if pointer.is_empty() {
        "document".to_owned()
    } else {
        pointer::segments(pointer).collect::<Vec<_>>().join(".")
    }
}

/// The property names the schema allows for the object at `pointer`.
fn properties_at(root: &Value, pointer: &str) -> Vec<String> {
    let mut node = resolve(root, root);
    for seg in pointer::segments(pointer) {
        let next = node
            .get("properties")
            .and_then(|p| p.get(seg.as_ref()))
            .or_else(|| node.get("additionalProperties").filter(|a| a.is_object()))
            .or_else(|| node.get("items"));
        match next {
            Some(n) => node = resolve(root, n),
            None => return Vec::new(),
        }
    }
    node.get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// Follow `$ref`s into `$defs` and step into the non-null branch of an `anyOf`.
fn resolve<'a>(root: &'a Value, mut node: &'a Value) -> &'a Value {
    for _ in 0..16 {
        if let Some(name) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
        {
            node = &root["$defs"][name];
        } else if let Some(branch) = node.get("anyOf").and_then(Value::as_array).and_then(|bs| {
            bs.iter()
                .find(|b| b.get("type") != Some(&Value::from("null")))
        }) {
            node = branch;
        } else {
            break;
        }
    }
    node
}
