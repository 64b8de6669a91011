//! Whether a document is valid against a JSON Schema, decided by walking the schema as
//! parsed JSON (a [`Node`] tree, kubernetes/schema_tree.rs), without compiling it: the start-up cost of a run of valid documents
//! (issue 23). Compiling rdmagen's strict schemas with `jsonschema` costs milliseconds
//! each; walking one document through them, microseconds.
//!
//! The walk answers `Some(true)` (valid), `Some(false)` (invalid) or `None` (a keyword
//! or a case it does not decide exactly), and never disagrees with `jsonschema`:
//! whatever it does not know (`multipleOf`, `patternProperties`, tuple `items`, a
//! number compared with a float, an asserted `format` on a string, ...) is `None`.
//! Callers treat anything but `Some(true)` as "ask the compiled validator", which stays
//! the one source of verdicts and messages for invalid documents. A test compares the
//! walk with `jsonschema::Validator::is_valid` on every example, golden file, rule
//! fixture and mutated documents, for every schema it stands in for.
//!
//! It lives among the Kubernetes leaves (layer 1) so that the input schemas (`model`)
//! and the checks of rendered output (`verify`) can both use it.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::kubernetes::schema_tree::{Node, Object};

/// How the walk reads a schema.
#[derive(Clone, Copy, Debug)]
pub struct Dialect {
    /// Draft 7 ignores the keywords beside a `$ref`; 2020-12 applies them too.
    pub draft7: bool,
    /// Whether `format` is an assertion (jsonschema's draft-7 default) or an
    /// annotation (2020-12's default, and rdmagen's draft-7 input check).
    pub formats: bool,
}

/// Every answer is exact: `Some(valid)`, or `None` when the walk cannot tell.
type Verdict = Option<bool>;

/// Whether `instance` is valid against `schema`, a whole schema document whose `$ref`s
/// (`#/...` JSON Pointers) resolve inside it.
pub fn is_valid(schema: &Node, instance: &Value, dialect: Dialect) -> Verdict {
    is_valid_at(schema, schema, instance, dialect)
}

/// Whether `instance` is valid against `schema`, a part of the document `root` in
/// which its `$ref`s resolve (one file holding several schemas and the definitions
/// they share).
pub fn is_valid_at<'a>(
    root: &Node<'a>,
    schema: &Node<'a>,
    instance: &Value,
    dialect: Dialect,
) -> Verdict {
    Walk { root, dialect }.node(schema, instance, 0)
}

/// Deeper than any rdmagen schema nests (a recursive schema would loop).
const MAX_DEPTH: usize = 256;

struct Walk<'s, 'a> {
    root: &'s Node<'a>,
    dialect: Dialect,
}

/// `Some(false)` as soon as one part is invalid, `Some(true)` when all are valid.
fn all(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
    let mut sure = true;
    for v in verdicts {
        match v {
            Some(false) => return Some(false),
            Some(true) => {}
            None => sure = false,
        }
    }
    sure.then_some(true)
}

impl<'s, 'a> Walk<'s, 'a> {
    fn node(&self, schema: &'s Node<'a>, instance: &Value, depth: usize) -> Verdict {
        if depth > MAX_DEPTH {
            return None;
        }
        let map = match schema {
            Node::Bool(b) => return Some(*b),
            Node::Object(map) => map,
            _ => return None,
        };
        if self.dialect.draft7
            && let Some(reference) = map.get("$ref")
        {
            return self.reference(reference, instance, depth);
        }
        let mut verdict = Some(true);
        for (key, value) in map.iter() {
            let v = self.keyword(map, key, value, instance, depth);
            match v {
                Some(false) => return Some(false),
                Some(true) => {}
                None => verdict = None,
            }
        }
        verdict
    }

    fn reference(&self, reference: &'s Node<'a>, instance: &Value, depth: usize) -> Verdict {
        let target = reference
            .as_str()
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|pointer| resolve(self.root, pointer))?;
        self.node(target, instance, depth + 1)
    }

    fn keyword(
        &self,
        map: &'s Object<'a>,
        key: &str,
        value: &'s Node<'a>,
        instance: &Value,
        depth: usize,
    ) -> Verdict {
        let deeper = depth + 1;
        match key {
            // Annotations, and the definitions `$ref` reaches.
            "description" | "title" | "default" | "examples" | "$schema" | "$id" | "$comment"
            | "definitions" | "$defs" | "readOnly" | "writeOnly" | "deprecated" => Some(true),
            k if k.starts_with("x-") => Some(true),
            "$ref" => self.reference(value, instance, depth),
            "type" => match value {
                Node::String(t) => has_type(t, instance),
                Node::OwnedString(t) => has_type(t, instance),
                Node::Array(types) => {
                    let mut verdict = Some(false);
                    for t in types {
                        match t.as_str().and_then(|t| has_type(t, instance)) {
                            Some(true) => return Some(true),
                            Some(false) => {}
                            None => verdict = None,
                        }
                    }
                    verdict
                }
                _ => None,
            },
            "enum" => {
                let options = value.as_array()?;
                // serde_json's equality is stricter than JSON Schema's only for numbers
                // (1 and 1.0): a miss is sure when the instance holds none.
                if options.iter().any(|o| o.equals(instance)) {
                    Some(true)
                } else if has_number(instance) || options.iter().any(node_has_number) {
                    None
                } else {
                    Some(false)
                }
            }
            "const" => {
                if value.equals(instance) {
                    Some(true)
                } else if has_number(instance) || node_has_number(value) {
                    None
                } else {
                    Some(false)
                }
            }
            "required" => {
                let Value::Object(object) = instance else {
                    return Some(true);
                };
                let names = value.as_array()?;
                Some(
                    names
                        .iter()
                        .all(|n| n.as_str().is_some_and(|n| object.contains_key(n))),
                )
            }
            "properties" => {
                let Value::Object(object) = instance else {
                    return Some(true);
                };
                let properties = value.as_object()?;
                all(object
                    .iter()
                    .filter_map(|(name, v)| properties.get(name).map(|s| self.node(s, v, deeper))))
            }
            "additionalProperties" => {
                let Value::Object(object) = instance else {
                    return Some(true);
                };
                if map.contains_key("patternProperties") {
                    return None;
                }
                let properties = map.get("properties").and_then(Node::as_object);
                all(object
                    .iter()
                    .filter(|(name, _)| !properties.is_some_and(|p| p.contains_key(name)))
                    .map(|(_, v)| self.node(value, v, deeper)))
            }
            "items" => {
                let Value::Array(items) = instance else {
                    return Some(true);
                };
                if !(value.is_object() || value.is_boolean()) {
                    return None;
                }
                all(items.iter().map(|item| self.node(value, item, deeper)))
            }
            "allOf" => all(value
                .as_array()?
                .iter()
                .map(|s| self.node(s, instance, deeper))),
            "anyOf" => {
                let mut verdict = Some(false);
                for s in value.as_array()? {
                    match self.node(s, instance, deeper) {
                        Some(true) => return Some(true),
                        Some(false) => {}
                        None => verdict = None,
                    }
                }
                verdict
            }
            "oneOf" => {
                let mut valid = 0;
                for s in value.as_array()? {
                    if self.node(s, instance, deeper)? {
                        valid += 1;
                    }
                }
                Some(valid == 1)
            }
            "not" => self.node(value, instance, deeper).map(|v| !v),
            "contains" => {
                let Value::Array(items) = instance else {
                    return Some(true);
                };
                let mut verdict = Some(false);
                for item in items {
                    match self.node(value, item, deeper) {
                        Some(true) => return Some(true),
                        Some(false) => {}
                        None => verdict = None,
                    }
                }
                verdict
            }
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                let Value::Number(n) = instance else {
                    return Some(true);
                };
                let ordering = compare(n, value.as_number()?)?;
                Some(match key {
                    "minimum" => ordering.is_ge(),
                    "maximum" => ordering.is_le(),
                    "exclusiveMinimum" => ordering.is_gt(),
                    _ => ordering.is_lt(),
                })
            }
            "minLength" | "maxLength" => {
                let Value::String(s) = instance else {
                    return Some(true);
                };
                let bound = value.as_u64()?;
                let length = s.chars().count() as u64;
                Some(if key == "minLength" {
                    length >= bound
                } else {
                    length <= bound
                })
            }
            "minItems" | "maxItems" => {
                let Value::Array(items) = instance else {
                    return Some(true);
                };
                let bound = value.as_u64()?;
                let length = items.len() as u64;
                Some(if key == "minItems" {
                    length >= bound
                } else {
                    length <= bound
                })
            }
            "minProperties" | "maxProperties" => {
                let Value::Object(object) = instance else {
                    return Some(true);
                };
                let bound = value.as_u64()?;
                let length = object.len() as u64;
                Some(if key == "minProperties" {
                    length >= bound
                } else {
                    length <= bound
                })
            }
            "uniqueItems" => {
                let Value::Array(items) = instance else {
                    return Some(true);
                };
                if !matches!(value, Node::Bool(true)) {
                    return Some(true);
                }
                // Equal as serde_json sees them is equal as JSON Schema does, except
                // numbers (1 and 1.0) and containers holding them.
                if items.iter().any(has_number) {
                    return None;
                }
                Some(
                    items
                        .iter()
                        .enumerate()
                        .all(|(i, a)| items[i + 1..].iter().all(|b| a != b)),
                )
            }
            "pattern" => {
                let Value::String(_) = instance else {
                    return Some(true);
                };
                let (pattern, Value::String(text)) = (value.as_str()?, instance) else {
                    return None;
                };
                Some(match plain_pattern(pattern) {
                    Some(regex) => regex.is_match(text),
                    None => compiled_pattern(pattern).is_valid(instance),
                })
            }
            "format" => {
                if self.dialect.formats && instance.is_string() {
                    None
                } else {
                    Some(true)
                }
            }
            _ => None,
        }
    }
}

/// `root.pointer(pointer)`, looking up each token as it is written; a pointer with an
/// escape (`~`) or one through an array takes [`Node::pointer`]'s way. Every `$ref` of
/// a pod template resolves again for each job (serde_json's own pointer unescaped
/// every token into two new strings: 7 % of `validate`'s CPU, perf, 10 000 jobs).
fn resolve<'s, 'a>(root: &'s Node<'a>, pointer: &str) -> Option<&'s Node<'a>> {
    let Some(tokens) = pointer.strip_prefix('/') else {
        return root.pointer(pointer);
    };
    if tokens.contains('~') {
        return root.pointer(pointer);
    }
    let mut target = root;
    for token in tokens.split('/') {
        target = match target {
            Node::Object(map) => map.get(token)?,
            Node::Array(_) => return root.pointer(pointer),
            _ => return None,
        };
    }
    Some(target)
}

fn has_type(name: &str, instance: &Value) -> Verdict {
    Some(match name {
        "object" => instance.is_object(),
        "array" => instance.is_array(),
        "string" => instance.is_string(),
        "boolean" => instance.is_boolean(),
        "null" => instance.is_null(),
        "number" => instance.is_number(),
        // A float with no fraction (8.0) is an integer to JSON Schema.
        "integer" => match instance {
            Value::Number(n) if n.is_f64() => return None,
            Value::Number(_) => true,
            _ => false,
        },
        _ => return None,
    })
}

fn has_number(value: &Value) -> bool {
    match value {
        Value::Number(_) => true,
        Value::Array(items) => items.iter().any(has_number),
        Value::Object(map) => map.values().any(has_number),
        _ => false,
    }
}

fn node_has_number(value: &Node) -> bool {
    match value {
        Node::Number(_) => true,
        Node::Array(items) => items.iter().any(node_has_number),
        Node::Object(map) => map.iter().any(|(_, v)| node_has_number(v)),
        _ => false,
    }
}

/// `n` against `bound`, exactly when both are integers; `None` for floats, whose
/// comparison jsonschema makes more precisely than `f64` can.
fn compare(n: &serde_json::Number, bound: &serde_json::Number) -> Option<std::cmp::Ordering> {
    if let (Some(a), Some(b)) = (n.as_i64(), bound.as_i64()) {
        return Some(a.cmp(&b));
    }
    if let (Some(a), Some(b)) = (n.as_u64(), bound.as_u64()) {
        return Some(a.cmp(&b));
    }
    // One is a negative i64 and the other a u64 beyond i64.
    match (n.as_i64(), bound.as_u64(), n.as_u64(), bound.as_i64()) {
        (Some(_), Some(_), None, _) => Some(std::cmp::Ordering::Less),
        (None, _, Some(_), Some(_)) => Some(std::cmp::Ordering::Greater),
        _ => None,
    }
}

/// A `pattern` written only with what the regex crate, fancy-regex (jsonschema's
/// engine) and ECMA 262 (JSON Schema's dialect) all read alike: ASCII literals, classes
/// of ASCII ranges, groups, `|`, `?`, `*`, `+`, `{m,n}`, `^`, `$` and the escapes `\.`,
/// `\+`, `\-`; compiled once per process. Every pattern of rdmagen's schemas is such a
/// one; any other goes to [`compiled_pattern`]. Compiling a pattern with jsonschema
/// cost about 0.5 ms (it builds its meta-schema's validator first), the regex crate
/// tens of microseconds.
fn plain_pattern(pattern: &str) -> Option<Arc<regex::Regex>> {
    static COMPILED: Mutex<Vec<(String, Arc<regex::Regex>)>> = Mutex::new(Vec::new());
    let mut escaped = false;
    let mut in_class = false;
    for c in pattern.chars() {
        let plain = if escaped {
            escaped = false;
            matches!(c, '.' | '+' | '-')
        } else {
            match c {
                '\\' => {
                    escaped = true;
                    true
                }
                '[' if !in_class => {
                    in_class = true;
                    true
                }
                ']' if in_class => {
                    in_class = false;
                    true
                }
                // `[^...]` and nested classes are read differently by the engines.
                '^' | '[' if in_class => false,
                // `.` is not in the subset: the engines differ on which line
                // terminators it matches.
                '.' => in_class,
                c => {
                    c.is_ascii_alphanumeric()
                        || "-_,:/^$()|?*+{}".contains(c)
                        || (in_class && " .+*".contains(c))
                }
            }
        };
        if !plain {
            return None;
        }
    }
    // `(?` opens a group kind (lookaround, inline flags) the engines do not share.
    if escaped || in_class || pattern.contains("(?") {
        return None;
    }
    let mut compiled = COMPILED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, regex)) = compiled.iter().find(|(p, _)| p == pattern) {
        return Some(regex.clone());
    }
    let regex = Arc::new(regex::Regex::new(pattern).ok()?);
    compiled.push((pattern.to_owned(), regex.clone()));
    Some(regex)
}

/// A `pattern`, compiled by jsonschema itself (a one-keyword schema), so that its
/// regular-expression dialect is exactly the full validator's; once per pattern per
/// process. As draft 7: jsonschema checks a schema against its draft's meta-schema
/// first, and 2020-12's, with its vocabularies, cost more to build than all the rest
/// of a one-job render's checks (pattern semantics do not differ between the two).
fn compiled_pattern(pattern: &str) -> Arc<jsonschema::Validator> {
    static COMPILED: Mutex<Vec<(String, Arc<jsonschema::Validator>)>> = Mutex::new(Vec::new());
    let mut compiled = COMPILED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, validator)) = compiled.iter().find(|(p, _)| p == pattern) {
        return validator.clone();
    }
    let validator = Arc::new(
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .build(&serde_json::json!({ "pattern": pattern }))
            .unwrap_or_else(|e| panic!("the pattern {pattern:?} does not compile: {e}")),
    );
    compiled.push((pattern.to_owned(), validator.clone()));
    validator
}

/// `schema` without the keywords the walk skips anyway (descriptions, defaults,
/// titles, examples, `x-` annotations): the smaller text of a schema generated ahead of
/// time for the walk alone, which parses faster. Property names and the values of
/// `enum` and `const` are data and stay whole.
pub fn stripped(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "description" | "title" | "default" | "examples" | "$comment"
                    ) && !k.starts_with("x-")
                })
                .map(|(k, v)| {
                    let v = match k.as_str() {
                        "properties" | "definitions" | "$defs" => match v {
                            Value::Object(named) => Value::Object(
                                named
                                    .iter()
                                    .map(|(n, s)| (n.clone(), stripped(s)))
                                    .collect(),
                            ),
                            other => other.clone(),
                        },
                        "enum" | "const" => v.clone(),
                        _ => stripped(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(stripped).collect()),
        other => other.clone(),
    }
}

/// Fails when a committed schema generated for the walk (`embedded`, at `path` from
/// the root of the crate that embeds it, `crate_root`) differs from what the code
/// generates; `RDMAGEN_BLESS=1` rewrites it. For unit tests, in this crate and above.
pub fn assert_fresh(crate_root: &str, path: &str, embedded: &str, generated: &str) {
    if std::env::var_os("RDMAGEN_BLESS").is_some() {
        let file = std::path::Path::new(crate_root).join(path);
        std::fs::write(file, generated).expect("the generated schema is written");
        return;
    }
    assert!(
        embedded == generated,
        "{path} is stale; regenerate with `RDMAGEN_BLESS=1 cargo test --lib quick`"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_resolve_as_serde_json_resolves_them() {
        let text = r#"{
            "definitions": {"a": {"type": "string"}, "b/c": 1, "d~e": 2, "": {"f": 3}},
            "list": [{"g": 4}, 5]
        }"#;
        let root: Value = serde_json::from_str(text).unwrap();
        let tree = Node::parse(text).unwrap();
        for &pointer in crate::kubernetes::schema_tree::POINTERS {
            match (resolve(&tree, pointer), root.pointer(pointer)) {
                (Some(node), Some(value)) => assert!(node.equals(value), "{pointer:?}"),
                (None, None) => {}
                (node, value) => panic!("{pointer:?}: {node:?} and {value:?}"),
            }
        }
    }

    #[test]
    fn only_patterns_every_engine_reads_alike_skip_jsonschema() {
        for plain in [
            "^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$",
            r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE])?$",
            "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
        ] {
            assert!(plain_pattern(plain).is_some(), "{plain}");
        }
        for other in ["^.+$", r"^\d+$", "[^a]", "(?=a)b", "(?i)a", "a{", "é"] {
            assert!(plain_pattern(other).is_none(), "{other}");
        }
    }
}
