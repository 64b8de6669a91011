//! A located YAML tree as JSON, with YAML 1.2 core-schema typing: only plain
//! scalars can be numbers, booleans or null, and `yes`/`no`/`on`/`off` stay strings.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::yaml::core_schema::{key_string, plain_scalar};

use crate::yaml::tree::{Node, NodeKind, SyntaxError, parse_documents};

/// Every document of `text` as JSON: how rendered output is read back for
/// verification, and how `diff` reads manifests. The subset rdmagen writes is read by
/// a fast path (checked against the located tree in debug builds); anything else by
/// the located tree, converted.
pub fn parse_values(text: &str) -> Result<Vec<Value>, SyntaxError> {
    match crate::yaml::fast_yaml::parse(text) {
        Some(docs) => {
            debug_assert_eq!(
                Ok(&docs),
                parse_values_located(text).as_ref().map_err(|e| &e.message),
                "fast YAML path disagrees with the parser on:\n{text}"
            );
            Ok(docs)
        }
        None => parse_values_located(text),
    }
}

/// Every document of `text` as JSON, through the located tree: one builder of YAML
/// events, so duplicate keys and the alias budget are the tree's.
fn parse_values_located(text: &str) -> Result<Vec<Value>, SyntaxError> {
    let docs = parse_documents(&Arc::from("<text>"), text)?;
    Ok(docs.iter().map(|d| to_value(&d.root)).collect())
}

/// A node and everything below it as JSON (YAML 1.2 core schema).
pub fn to_value(node: &Node) -> Value {
    match &node.kind {
        NodeKind::Scalar { text, plain: false } => Value::String(text.clone()),
        NodeKind::Scalar { text, plain: true } => plain_scalar(text),
        NodeKind::Sequence(items) => Value::Array(items.iter().map(to_value).collect()),
        NodeKind::Mapping(entries) => {
            let mut map = Map::with_capacity(entries.len());
            for (k, v) in entries {
                map.insert(key_string(to_value(k)), to_value(v));
            }
            Value::Object(map)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn values_follow_the_core_schema_through_aliases_and_documents() {
        let text = "a: &x {b: [1, \"2\", no, ~]}\nc: *x\n---\n---\nd: 1.5\n";
        let values = super::parse_values(text).unwrap();
        let x = json!({"b": [1, "2", "no", null]});
        assert_eq!(values, vec![json!({"a": x, "c": x}), json!({"d": 1.5})]);
        let dup = super::parse_values("a: 1\na: 2\n").unwrap_err();
        assert_eq!(dup.kind, crate::yaml::tree::SyntaxErrorKind::DuplicateKey);
        assert_eq!((dup.line, dup.column), (2, 1));
    }
}
