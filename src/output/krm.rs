//! KRM function results (`rdmagen krm`): the ResourceList that was read, its items
//! untouched, with one entry of `results` per finding, as the KRM functions
//! specification has them ([`crate::krm`] names the source).

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use crate::diagnostics::{Finding, Findings, Severity};
use crate::krm::{INDEX_ANNOTATIONS, PATH_ANNOTATIONS};
use crate::yaml::tree::{Node, NodeKind};

/// `list` (a ResourceList as read; `root` is its tree, for where each item is written)
/// with a result for every finding after the `results` it already had.
pub fn resource_list(list: &Value, root: &Node, findings: &Findings) -> Value {
    let nodes: &[Node] = match root.get("items").map(|n| &n.kind) {
        Some(NodeKind::Sequence(items)) => items,
        _ => &[],
    };
    let items = list["items"].as_array().map_or(&[][..], Vec::as_slice);
    let mut results = list["results"].as_array().cloned().unwrap_or_default();
    results.extend(findings.iter().map(|f| result(f, items, nodes)));
    let mut out = list.as_object().cloned().unwrap_or_default();
    out.insert("results".to_owned(), Value::Array(results));
    Value::Object(out)
}

/// One finding as a result: its message and severity, and, when it is written inside
/// an item, that item's identity, the field it points at, and the file kustomize read
/// the item from. The rule's ID is the `rule` tag.
fn result(f: &Finding, items: &[Value], nodes: &[Node]) -> Value {
    let severity = match f.severity() {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
    };
    let mut result = Map::new();
    result.insert("message".to_owned(), json!(f.message));
    result.insert("severity".to_owned(), json!(severity));
    let at = f.location.as_ref().map(|l| (l.line, l.column));
    let item = at.and_then(|at| {
        nodes
            .iter()
            .position(|n| (n.line, n.column) <= at && at <= n.end)
            .map(|i| (i, at))
    });
    if let Some((i, at)) = item
        && let Some(object) = items.get(i)
    {
        result.insert("resourceRef".to_owned(), resource_ref(object));
        if let Some(path) = field_path(&nodes[i], at) {
            result.insert("field".to_owned(), json!({ "path": path }));
        }
        if let Some(file) = file(object) {
            result.insert("file".to_owned(), file);
        }
    }
    result.insert("tags".to_owned(), json!({ "rule": f.rule.info().id }));
    Value::Object(result)
}

/// apiVersion, kind, name and namespace, those the object has.
fn resource_ref(object: &Value) -> Value {
    let mut reference = Map::new();
    for (key, value) in [
        ("apiVersion", &object["apiVersion"]),
        ("kind", &object["kind"]),
        ("name", &object["metadata"]["name"]),
        ("namespace", &object["metadata"]["namespace"]),
    ] {
        if let Some(text) = value.as_str() {
            reference.insert(key.to_owned(), json!(text));
        }
    }
    Value::Object(reference)
}

/// The file and document kustomize says the object came from, when it says.
fn file(object: &Value) -> Option<Value> {
    let annotations = &object["metadata"]["annotations"];
    let first = |keys: [&str; 2]| keys.iter().find_map(|k| annotations[*k].as_str());
    let path = first(PATH_ANNOTATIONS)?;
    let mut file = json!({ "path": path });
    if let Some(index) = first(INDEX_ANNOTATIONS).and_then(|i| i.parse::<u64>().ok()) {
        file["index"] = json!(index);
    }
    Some(file)
}

/// The path, in the `spec.containers[0].image` form, of the key or sequence item that
/// is written at `at` inside `node`: where a finding's location points (a mapping
/// entry's key, a sequence's item). None for the object itself or a place between.
/// One walk down, into the one child whose text holds `at`.
fn field_path(node: &Node, at: (usize, usize)) -> Option<String> {
    let holds = |n: &Node| (n.line, n.column) <= at && at <= n.end;
    if (node.line, node.column) == at {
        return None; // the object itself, located where its first key is written
    }
    let mut path = String::new();
    let mut node = node;
    loop {
        match &node.kind {
            NodeKind::Mapping(entries) => {
                let (key, value) = entries
                    .iter()
                    .find(|(k, v)| (k.line, k.column) == at || holds(v))?;
                let name = key.as_str().unwrap_or_default();
                let plain = !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                match (plain, path.is_empty()) {
                    (true, true) => path.push_str(name),
                    (true, false) => write!(path, ".{name}").ok()?,
                    (false, _) => write!(path, "[{}]", json!(name)).ok()?,
                }
                if (key.line, key.column) == at {
                    return Some(path);
                }
                node = value;
            }
            NodeKind::Sequence(items) => {
                let i = items.iter().position(holds)?;
                write!(path, "[{i}]").ok()?;
                if (items[i].line, items[i].column) == at {
                    return Some(path);
                }
                node = &items[i];
            }
            NodeKind::Scalar { .. } => return None,
        }
    }
}
