//! Structural diff of Kubernetes YAML: documents matched by identity, named lists
//! (env, containers, volumes, volumeMounts, ports) matched by `name`, each change
//! reported at its path, e.g.
//! `spec.pytorchReplicaSpecs.Worker.template.spec.containers[pytorch].env[NCCL_IB_GID_INDEX].value`.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Added,
    Removed,
    Modified,
    /// Same named items, other order.
    Reordered,
}

/// Where a change is: the object it belongs to (when the files hold several) and the
/// steps from that object's root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ChangePath {
    /// `apiVersion/kind/[namespace/]name`, or `document N` for objects without one.
    pub object: Option<String>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Step {
    /// A mapping key.
    Key(String),
    /// A position in a list whose items have no unique names.
    Index(usize),
    /// The item with this `name` in a named list (env, containers, volumes, ...).
    Named(String),
}

impl ChangePath {
    fn object(object: String) -> Self {
        ChangePath {
            object: Some(object),
            steps: Vec::new(),
        }
    }

    fn then(&self, step: Step) -> Self {
        let mut next = self.clone();
        next.steps.push(step);
        next
    }
}

/// `object: a.b[name][0]`, or `a["x.y/z"]` for keys that would be ambiguous after a dot.
impl fmt::Display for ChangePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(object) = &self.object {
            f.write_str(object)?;
            if !self.steps.is_empty() {
                f.write_str(": ")?;
            }
        }
        for (i, step) in self.steps.iter().enumerate() {
            match step {
                Step::Key(key) if plain(key) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                Step::Key(key) => write!(f, "[{}]", compact(&Value::from(key.as_str())))?,
                Step::Index(index) => write!(f, "[{index}]")?,
                Step::Named(name) => write!(f, "[{name}]")?,
            }
        }
        Ok(())
    }
}

/// Paths are written as text wherever they are shown, JSON included.
impl serde::Serialize for ChangePath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

fn plain(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Change {
    pub path: ChangePath,
    pub kind: Kind,
    pub old: Option<String>,
    pub new: Option<String>,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let none = String::new();
        let (old, new) = (
            self.old.as_ref().unwrap_or(&none),
            self.new.as_ref().unwrap_or(&none),
        );
        match self.kind {
            Kind::Modified => write!(f, "± {}: {old} → {new}", self.path),
            Kind::Added => write!(f, "+ {}: {new}", self.path),
            Kind::Removed => write!(f, "- {}: {old}", self.path),
            Kind::Reordered => write!(f, "⇆ {}: {old} → {new}", self.path),
        }
    }
}

/// Structural changes from `old` to `new` (multi-document YAML).
pub fn changes(old: &str, new: &str) -> Result<Vec<Change>, String> {
    let old_docs = parse(old)?;
    let new_docs = parse(new)?;
    let mut out = Vec::new();
    let several = old_docs.len() > 1 || new_docs.len() > 1;
    // Objects are matched by identity when every one has one, else by position.
    let old_ids: Option<Vec<String>> = old_docs.iter().map(identity).collect();
    let new_ids: Option<Vec<String>> = new_docs.iter().map(identity).collect();
    if let (Some(old_ids), Some(new_ids)) = (old_ids, new_ids) {
        // Objects are matched through maps of identities: searching the other file for
        // each object took 11 s for 4 000 objects.
        let mut new_by_id: HashMap<&str, &Value> = HashMap::with_capacity(new_ids.len());
        for (id, doc) in new_ids.iter().zip(&new_docs) {
            // The first object with an identity is the one it is compared with.
            new_by_id.entry(id).or_insert(doc);
        }
        let old_id_set: HashSet<&str> = old_ids.iter().map(String::as_str).collect();
        for (id, d) in old_ids.iter().zip(&old_docs) {
            let root = ChangePath {
                object: several.then(|| id.clone()),
                steps: Vec::new(),
            };
            match new_by_id.get(id.as_str()) {
                Some(n) => walk(&root, d, n, &mut out),
                None => out.push(change(
                    ChangePath::object(id.clone()),
                    Kind::Removed,
                    Some(d),
                    None,
                )),
            }
        }
        for (id, n) in new_ids.iter().zip(&new_docs) {
            if !old_id_set.contains(id.as_str()) {
                out.push(change(
                    ChangePath::object(id.clone()),
                    Kind::Added,
                    None,
                    Some(n),
                ));
            }
        }
    } else {
        for i in 0..old_docs.len().max(new_docs.len()) {
            let document = format!("document {}", i + 1);
            let root = ChangePath {
                object: several.then(|| document.clone()),
                steps: Vec::new(),
            };
            match (old_docs.get(i), new_docs.get(i)) {
                (Some(o), Some(n)) => walk(&root, o, n, &mut out),
                (Some(o), None) => out.push(change(
                    ChangePath::object(document),
                    Kind::Removed,
                    Some(o),
                    None,
                )),
                (None, Some(n)) => out.push(change(
                    ChangePath::object(document),
                    Kind::Added,
                    None,
                    Some(n),
                )),
                (None, None) => {}
            }
        }
    }
    Ok(out)
}

fn parse(text: &str) -> Result<Vec<Value>, String> {
    let docs = crate::yaml::tree_value::parse_values(text)
        .map_err(|e| format!("line {}, column {}: {}", e.line, e.column, e.message))?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

/// `apiVersion/kind/[namespace/]name`, as dyff and kubectl identify objects.
fn identity(doc: &Value) -> Option<String> {
    let api = doc["apiVersion"].as_str()?;
    let kind = doc["kind"].as_str()?;
    let name = doc["metadata"]["name"].as_str()?;
    Some(match doc["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{api}/{kind}/{ns}/{name}"),
        None => format!("{api}/{kind}/{name}"),
    })
}

fn change(path: ChangePath, kind: Kind, old: Option<&Value>, new: Option<&Value>) -> Change {
    Change {
        path,
        kind,
        old: old.map(compact),
        new: new.map(compact),
    }
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn walk(path: &ChangePath, old: &Value, new: &Value, out: &mut Vec<Change>) {
    let key = |k: &String| path.then(Step::Key(k.clone()));
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (k, ov) in o {
                match n.get(k) {
                    Some(nv) => walk(&key(k), ov, nv, out),
                    None => out.push(change(key(k), Kind::Removed, Some(ov), None)),
                }
            }
            for (k, nv) in n {
                if !o.contains_key(k) {
                    out.push(change(key(k), Kind::Added, None, Some(nv)));
                }
            }
        }
        (Value::Array(o), Value::Array(n)) => match (names(o), names(n)) {
            (Some(on), Some(nn)) => named_lists(path, o, &on, n, &nn, out),
            _ => {
                for i in 0..o.len().max(n.len()) {
                    let at = path.then(Step::Index(i));
                    match (o.get(i), n.get(i)) {
                        (Some(ov), Some(nv)) => walk(&at, ov, nv, out),
                        (Some(ov), None) => out.push(change(at, Kind::Removed, Some(ov), None)),
                        (None, Some(nv)) => out.push(change(at, Kind::Added, None, Some(nv))),
                        (None, None) => {}
                    }
                }
            }
        },
        _ if old != new => out.push(change(path.clone(), Kind::Modified, Some(old), Some(new))),
        _ => {}
    }
}

/// The `name` of every item, when every item is a mapping with a unique string name.
fn names(items: &[Value]) -> Option<Vec<&str>> {
    let names: Vec<&str> = items
        .iter()
        .map(|i| i["name"].as_str())
        .collect::<Option<_>>()?;
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    (sorted.len() == names.len() && !names.is_empty()).then_some(names)
}

fn named_lists(
    path: &ChangePath,
    o: &[Value],
    on: &[&str],
    n: &[Value],
    nn: &[&str],
    out: &mut Vec<Change>,
) {
    // Positions by name (names are unique within each list): looking every name up
    // in the other list made long lists quadratic.
    let old_at: HashMap<&str, usize> = on.iter().enumerate().map(|(i, x)| (*x, i)).collect();
    let new_at: HashMap<&str, usize> = nn.iter().enumerate().map(|(i, x)| (*x, i)).collect();
    let common_old: Vec<&str> = on
        .iter()
        .copied()
        .filter(|x| new_at.contains_key(x))
        .collect();
    let common_new: Vec<&str> = nn
        .iter()
        .copied()
        .filter(|x| old_at.contains_key(x))
        .collect();
    if common_old != common_new {
        out.push(Change {
            path: path.clone(),
            kind: Kind::Reordered,
            old: Some(compact(&Value::from(common_old.clone()))),
            new: Some(compact(&Value::from(common_new))),
        });
    }
    let named = |name: &str| path.then(Step::Named(name.to_owned()));
    for (item, name) in o.iter().zip(on) {
        match new_at.get(name) {
            Some(&j) => walk(&named(name), item, &n[j], out),
            None => out.push(change(named(name), Kind::Removed, Some(item), None)),
        }
    }
    for (item, name) in n.iter().zip(nn) {
        if !old_at.contains_key(name) {
            out.push(change(named(name), Kind::Added, None, Some(item)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD: &str = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: pytorch\n      env:\n        - {name: A, value: \"1\"}\n        - {name: GID, value: \"3\"}\n";

    #[test]
    fn named_items_and_paths() {
        let new = OLD.replace("\"3\"", "\"5\"");
        let c = changes(OLD, &new).unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(
            c[0].to_string(),
            "± spec.containers[pytorch].env[GID].value: \"3\" → \"5\""
        );
    }

    #[test]
    fn reorder_is_not_removal_plus_addition() {
        let new = OLD.replace(
            "- {name: A, value: \"1\"}\n        - {name: GID, value: \"3\"}",
            "- {name: GID, value: \"3\"}\n        - {name: A, value: \"1\"}",
        );
        let c = changes(OLD, &new).unwrap();
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].kind, Kind::Reordered);
        assert_eq!(
            c[0].to_string(),
            "⇆ spec.containers[pytorch].env: [\"A\",\"GID\"] → [\"GID\",\"A\"]"
        );
    }

    fn object(name: &str, value: &str) -> String {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata: {{v: \"{value}\"}}\n"
        )
    }

    #[test]
    fn objects_match_by_identity_in_any_order() {
        let old = [object("a", "1"), object("b", "1"), object("gone", "1")].join("---\n");
        let new = [object("new", "1"), object("b", "2"), object("a", "1")].join("---\n");
        let c: Vec<String> = changes(&old, &new)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            c,
            [
                "± v1/ConfigMap/b: data.v: \"1\" → \"2\"",
                "- v1/ConfigMap/gone: {\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"gone\"},\"data\":{\"v\":\"1\"}}",
                "+ v1/ConfigMap/new: {\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"new\"},\"data\":{\"v\":\"1\"}}",
            ]
        );
    }

    #[test]
    fn an_identity_written_twice_is_compared_with_its_first_object() {
        let old = object("a", "1");
        let new = [object("a", "2"), object("a", "1")].join("---\n");
        let c: Vec<String> = changes(&old, &new)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(c, ["± v1/ConfigMap/a: data.v: \"1\" → \"2\""]);
    }

    #[test]
    fn added_and_removed_items_and_documents() {
        let new = OLD.replace("        - {name: A, value: \"1\"}\n", "")
            + "---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n";
        let c: Vec<String> = changes(OLD, &new)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            c,
            [
                "- v1/Pod/p: spec.containers[pytorch].env[A]: {\"name\":\"A\",\"value\":\"1\"}",
                "+ v1/Service/s: {\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"s\"}}",
            ]
        );
    }

    #[test]
    fn keys_with_dots_are_quoted_and_unnamed_lists_indexed() {
        let old = "metadata:\n  annotations: {sidecar.istio.io/inject: \"false\"}\nargs: [a, b]\n";
        let new = "metadata:\n  annotations: {sidecar.istio.io/inject: \"true\"}\nargs: [a, c]\n";
        let c: Vec<String> = changes(old, new)
            .unwrap()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            c,
            [
                "± metadata.annotations[\"sidecar.istio.io/inject\"]: \"false\" → \"true\"",
                "± args[1]: \"b\" → \"c\"",
            ]
        );
    }
}
