//! Strategic merge of a partial Kubernetes object over a whole one, driven by the
//! vendored definitions' `x-kubernetes-patch-strategy` and
//! `x-kubernetes-patch-merge-key` (what `kubectl patch --type strategic` does), read
//! from their merge view (`MERGE_DEFINITIONS`):
//!
//! - objects merge key by key; `null` removes a key;
//! - a list with patch strategy `merge` and a merge key (containers, env, volumes,
//!   volumeMounts, imagePullSecrets, ...) merges item by item on that key, and an
//!   item `{<key>: ..., $patch: delete}` removes the item with that key;
//! - a list with patch strategy `merge` and no key is a set union;
//! - every other list, and every scalar, is replaced.

use serde_json::{Map, Value};

use crate::kubernetes::definitions::{MERGE_DEFINITIONS, ref_name};
use crate::kubernetes::schema_tree::Node;

/// The schema of what the merge view does not describe: every list replaced.
static NO_SCHEMA: Node<'static> = Node::Null;

/// The merge view's schema of `definition`, or [`NO_SCHEMA`].
fn definition_schema(definition: &str) -> &'static Node<'static> {
    MERGE_DEFINITIONS.get(definition).unwrap_or(&NO_SCHEMA)
}

/// The directive key of strategic-merge patches.
pub const PATCH_DIRECTIVE: &str = "$patch";

/// One step of a path into a patch: a key of an object or an index into a list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// The directives in `patch` that this merge does not implement, with where each is
/// written. Only `$patch: delete` on an item of a list merged by key is implemented;
/// `$patch: replace` or `merge`, `$retainKeys`, `$setElementOrder/...`,
/// `$deleteFromPrimitiveList/...` and any other `$` key would otherwise be ignored or
/// copied into the result as if it were a field.
pub fn unsupported_directives(patch: &Value, definition: &str) -> Vec<(Vec<Step>, String)> {
    let schema = definition_schema(definition);
    let mut found = Vec::new();
    directives_in(patch, schema, false, &mut Vec::new(), &mut found);
    found
}

/// `keyed_item`: `value` is an item of a list merged by key, where `$patch: delete`
/// is allowed.
fn directives_in(
    value: &Value,
    schema: &'static Node<'static>,
    keyed_item: bool,
    path: &mut Vec<Step>,
    found: &mut Vec<(Vec<Step>, String)>,
) {
    let schema = resolve(schema);
    match value {
        Value::Object(map) => {
            for (key, v) in map {
                path.push(Step::Key(key.clone()));
                if key == PATCH_DIRECTIVE {
                    if !(keyed_item && v.as_str() == Some("delete")) {
                        let shown = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                        found.push((path.clone(), format!("{PATCH_DIRECTIVE}: {shown}")));
                    }
                } else if key.starts_with('$') {
                    found.push((path.clone(), key.clone()));
                } else {
                    directives_in(v, field_schema(schema, key), false, path, found);
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            let keyed = list_strategy(schema).1.is_some();
            let item_schema = schema.get("items").unwrap_or(&NO_SCHEMA);
            for (i, item) in items.iter().enumerate() {
                path.push(Step::Index(i));
                directives_in(item, item_schema, keyed, path, found);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Whether a list merges, and on which key: (`merge` strategy, merge key).
fn list_strategy(schema: &'static Node<'static>) -> (bool, Option<&'static str>) {
    let strategy = schema
        .get("x-kubernetes-patch-strategy")
        .and_then(Node::as_str)
        .unwrap_or_default();
    let merges = strategy.split(',').any(|s| s == "merge");
    let key = schema
        .get("x-kubernetes-patch-merge-key")
        .and_then(Node::as_str)
        .filter(|_| merges);
    (merges, key)
}

/// Where the items of a list merged by key end up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListOrder {
    /// As the API server orders them (`in_patch_order`): what the patch names in the
    /// patch's order, an item the patch adds before the items it does not name. What
    /// Kubeflow Trainer's controller and `kubectl patch --type strategic` give.
    AsTheApiServer,
    /// The base's items where they were, then the patch's new ones in its order: what
    /// rdmagen's own podTemplate overlays use, so the training container stays first
    /// (`kubectl logs` and `exec` pick the first) and an added variable comes last.
    AddedLast,
}

/// Merge `patch` into `base`, both instances of the definition `definition`, with
/// merged lists in `order`.
pub fn strategic_merge(base: &mut Value, patch: &Value, definition: &str, order: ListOrder) {
    let schema = definition_schema(definition);
    merge_value(base, patch, schema, order);
}

/// The schema `schema` stands for, following one `$ref`.
fn resolve(schema: &'static Node<'static>) -> &'static Node<'static> {
    match schema.get("$ref").and_then(Node::as_str) {
        Some(r) => definition_schema(ref_name(r)),
        None => schema,
    }
}

fn merge_value(base: &mut Value, patch: &Value, schema: &'static Node<'static>, order: ListOrder) {
    let schema = resolve(schema);
    match (base, patch) {
        (Value::Object(base), Value::Object(patch)) => merge_object(base, patch, schema, order),
        (base, Value::Array(items)) if base.is_array() => merge_list(base, items, schema, order),
        (base, patch) => *base = without_directives(patch),
    }
}

fn merge_object(
    base: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    schema: &'static Node<'static>,
    order: ListOrder,
) {
    for (key, value) in patch {
        if key == PATCH_DIRECTIVE {
            continue;
        }
        if value.is_null() {
            base.remove(key);
            continue;
        }
        let field = field_schema(schema, key);
        match base.get_mut(key) {
            Some(existing) => merge_value(existing, value, field, order),
            None => {
                base.insert(key.clone(), without_directives(value));
            }
        }
    }
}

/// The schema of `key` in an object schema: a property, or the map's value schema.
fn field_schema(schema: &'static Node<'static>, key: &str) -> &'static Node<'static> {
    schema
        .get("properties")
        .and_then(|p| p.get(key))
        .or_else(|| schema.get("additionalProperties").filter(|v| v.is_object()))
        .unwrap_or(&NO_SCHEMA)
}

fn merge_list(base: &mut Value, items: &[Value], schema: &'static Node<'static>, order: ListOrder) {
    let (merges, key) = list_strategy(schema);
    let item_schema = schema.get("items").unwrap_or(&NO_SCHEMA);
    let Value::Array(list) = base else {
        return;
    };
    // Only the API server's order looks back at the list before the merge.
    let original = match order {
        ListOrder::AsTheApiServer => list.clone(),
        ListOrder::AddedLast => Vec::new(),
    };
    match (merges, key) {
        (true, Some(key)) => {
            for item in items {
                let id = item.get(key);
                let at = id.and_then(|id| list.iter().position(|b| b.get(key) == Some(id)));
                let delete = item.get(PATCH_DIRECTIVE).and_then(Value::as_str) == Some("delete");
                match (at, delete) {
                    (Some(i), true) => {
                        list.remove(i);
                    }
                    (None, true) => {}
                    (Some(i), false) => merge_value(&mut list[i], item, item_schema, order),
                    (None, false) => list.push(without_directives(item)),
                }
            }
            if order == ListOrder::AsTheApiServer {
                let id = |v: &Value| v.get(key).cloned();
                *list = in_patch_order(std::mem::take(list), &original, items, id);
            }
        }
        (true, None) => {
            for item in items {
                if !list.contains(item) {
                    list.push(item.clone());
                }
            }
            if order == ListOrder::AsTheApiServer {
                let id = |v: &Value| Some(v.clone());
                *list = in_patch_order(std::mem::take(list), &original, items, id);
            }
        }
        _ => *list = items.iter().map(without_directives).collect(),
    }
}

/// The order the API server gives a merged list (apimachinery v0.34.3
/// pkg/util/strategicpatch/patch.go: `mergeSlice` :1534-1544, `normalizeElementOrder`
/// :404-416, `mergeSortedSlice` :427-468, `normalizeSliceOrder` :521-545): the items
/// the patch names, in the patch's order, interleaved with the others in the
/// original's order; where the original does not order a pair (an item the patch
/// adds), the patch's item comes first. So an item a patch adds goes before the items
/// it does not name, not at the end. `id` is an item's merge key (the item itself for
/// a list of scalars).
fn in_patch_order(
    merged: Vec<Value>,
    original: &[Value],
    patch: &[Value],
    id: impl Fn(&Value) -> Option<Value>,
) -> Vec<Value> {
    let index = |list: &[Value], item: &Value| {
        let wanted = id(item);
        list.iter()
            .position(|v| wanted.is_some() && id(v) == wanted)
    };
    let (mut named, mut others): (Vec<Value>, Vec<Value>) = merged
        .into_iter()
        .partition(|item| index(patch, item).is_some());
    // sort.SliceStable with "less" true unless both are found and ordered otherwise.
    named.sort_by_key(|item| index(patch, item));
    others.sort_by_key(|item| index(original, item));
    let mut out = Vec::with_capacity(named.len() + others.len());
    let (mut left, mut right) = (others.into_iter().peekable(), named.into_iter().peekable());
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => match (index(original, l), index(original, r)) {
                (Some(li), Some(ri)) => li < ri,
                _ => false,
            },
        };
        out.extend(if take_left { left.next() } else { right.next() });
    }
    out
}

/// A list in `base` that `patch` replaces whole (a list without the `merge` strategy),
/// found where the merge would meet it: `at` is the path in the patch (list items by
/// their index in the patch), `base` and `patch` the two lists.
#[derive(Debug, PartialEq)]
pub struct ReplacedList {
    pub at: Vec<Step>,
    pub base: Vec<Value>,
    pub patch: Vec<Value>,
}

/// Every non-empty list of `base` that merging `patch` (both instances of
/// `definition`) would replace with the patch's. Nested lists are followed only where
/// the merge follows them: through objects, and items of lists merged by key.
pub fn replaced_lists(base: &Value, patch: &Value, definition: &str) -> Vec<ReplacedList> {
    let schema = definition_schema(definition);
    let mut found = Vec::new();
    replaced_in(base, patch, schema, &mut Vec::new(), &mut found);
    found
}

fn replaced_in(
    base: &Value,
    patch: &Value,
    schema: &'static Node<'static>,
    path: &mut Vec<Step>,
    found: &mut Vec<ReplacedList>,
) {
    let schema = resolve(schema);
    match (base, patch) {
        (Value::Object(base), Value::Object(patch)) => {
            for (key, value) in patch {
                let Some(existing) = base.get(key) else {
                    continue;
                };
                path.push(Step::Key(key.clone()));
                replaced_in(existing, value, field_schema(schema, key), path, found);
                path.pop();
            }
        }
        (Value::Array(base), Value::Array(items)) if !base.is_empty() => {
            match list_strategy(schema) {
                (true, Some(key)) => {
                    let item_schema = schema.get("items").unwrap_or(&NO_SCHEMA);
                    for (i, item) in items.iter().enumerate() {
                        let Some(id) = item.get(key) else {
                            continue;
                        };
                        if let Some(existing) = base.iter().find(|b| b.get(key) == Some(id)) {
                            path.push(Step::Index(i));
                            replaced_in(existing, item, item_schema, path, found);
                            path.pop();
                        }
                    }
                }
                (true, None) => {}
                _ => found.push(ReplacedList {
                    at: path.clone(),
                    base: base.clone(),
                    patch: items.iter().map(without_directives).collect(),
                }),
            }
        }
        _ => {}
    }
}

/// A patch value as it lands in the result: directives and nulls are patch syntax.
fn without_directives(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| *k != PATCH_DIRECTIVE && !v.is_null())
                .map(|(k, v)| (k.clone(), without_directives(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_directives).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{
        ListOrder, ReplacedList, Step, replaced_lists, strategic_merge, unsupported_directives,
    };
    use crate::kubernetes::definitions::POD_TEMPLATE_SPEC;

    fn merged(base: serde_json::Value, patch: serde_json::Value) -> serde_json::Value {
        merged_in(ListOrder::AsTheApiServer, base, patch)
    }

    fn merged_in(
        order: ListOrder,
        base: serde_json::Value,
        patch: serde_json::Value,
    ) -> serde_json::Value {
        let mut base = base;
        strategic_merge(&mut base, &patch, POD_TEMPLATE_SPEC, order);
        base
    }

    #[test]
    fn containers_env_and_volumes_merge_by_name() {
        let base = json!({"spec": {
            "containers": [{"name": "pytorch", "image": "a",
                "env": [{"name": "A", "value": "1"}],
                "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}});
        let patch = json!({"spec": {
            "containers": [{"name": "pytorch",
                "env": [{"name": "B", "value": "2"}],
                "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
            "volumes": [{"name": "data", "hostPath": {"path": "/mnt"}}],
            "hostIPC": true}});
        // What the patch adds comes first, as the API server orders it (in_patch_order;
        // tests/cli/control_plane/trainer.rs sees it in the pods Trainer makes).
        assert_eq!(
            merged(base, patch),
            json!({"spec": {
                "containers": [{"name": "pytorch", "image": "a",
                    "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}],
                    "volumeMounts": [{"name": "data", "mountPath": "/data"},
                                     {"name": "dshm", "mountPath": "/dev/shm"}]}],
                "volumes": [{"name": "data", "hostPath": {"path": "/mnt"}},
                            {"name": "dshm", "emptyDir": {"medium": "Memory"}}],
                "hostIPC": true}})
        );
    }

    /// The order of apimachinery's mergeSortedSlice: items the patch names keep the
    /// patch's order, the others the original's, and where both were in the original
    /// the original decides between them. Added last, the base keeps its order and the
    /// patch's new items follow it.
    #[test]
    fn a_merged_list_is_in_the_order_asked_for() {
        let env = |names: &[&str]| {
            json!({"spec": {"containers": [{"name": "c", "env":
                names.iter().map(|n| json!({"name": n, "value": "v"})).collect::<Vec<_>>()}]}})
        };
        let names = |pod: serde_json::Value| -> Vec<String> {
            pod["spec"]["containers"][0]["env"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["name"].as_str().unwrap().to_owned())
                .collect()
        };
        for (base, patch, api_server, added_last) in [
            (
                vec!["A", "B", "C"],
                vec!["B"],
                vec!["A", "B", "C"],
                vec!["A", "B", "C"],
            ),
            (
                vec!["A", "B", "C"],
                vec!["C", "A"],
                vec!["B", "C", "A"],
                vec!["A", "B", "C"],
            ),
            (
                vec!["A", "B"],
                vec!["X"],
                vec!["X", "A", "B"],
                vec!["A", "B", "X"],
            ),
            (
                vec!["A", "B"],
                vec!["B", "X"],
                vec!["A", "B", "X"],
                vec!["A", "B", "X"],
            ),
            (
                vec!["A", "B"],
                vec!["X", "B"],
                vec!["X", "A", "B"],
                vec!["A", "B", "X"],
            ),
            (
                vec!["A"],
                vec!["Y", "X"],
                vec!["Y", "X", "A"],
                vec!["A", "Y", "X"],
            ),
        ] {
            for (order, want) in [
                (ListOrder::AsTheApiServer, api_server),
                (ListOrder::AddedLast, added_last),
            ] {
                assert_eq!(
                    names(merged_in(order, env(&base), env(&patch))),
                    want,
                    "{order:?}: {base:?} + {patch:?}"
                );
            }
        }
    }

    #[test]
    fn atomic_lists_are_replaced_and_null_or_delete_removes() {
        let base = json!({"spec": {
            "containers": [{"name": "pytorch", "command": ["torchrun"],
                "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}],
            "tolerations": [{"key": "a", "operator": "Exists"}],
            "nodeSelector": {"x": "1", "y": "2"}}});
        let patch = json!({"spec": {
            "containers": [{"name": "pytorch", "command": ["bash"],
                "env": [{"name": "A", "$patch": "delete"}]}],
            "tolerations": [{"key": "b", "operator": "Exists"}],
            "nodeSelector": {"y": null, "z": "3"}}});
        assert_eq!(
            merged(base, patch),
            json!({"spec": {
                "containers": [{"name": "pytorch", "command": ["bash"],
                    "env": [{"name": "B", "value": "2"}]}],
                "tolerations": [{"key": "b", "operator": "Exists"}],
                "nodeSelector": {"x": "1", "z": "3"}}})
        );
    }

    #[test]
    fn only_delete_on_a_keyed_item_is_a_supported_directive() {
        let patch = json!({"spec": {
            "$retainKeys": ["containers"],
            "$setElementOrder/containers": [{"name": "pytorch"}],
            "containers": [{"name": "pytorch", "$patch": "replace",
                "$deleteFromPrimitiveList/args": ["x"],
                "env": [{"name": "A", "$patch": "delete"}],
                "securityContext": {"$patch": "delete"}}],
            "tolerations": [{"key": "a", "$patch": "delete"}]}});
        let key = |k: &str| Step::Key(k.to_owned());
        let container = [key("spec"), key("containers"), Step::Index(0)];
        let at = |tail: &[Step]| [container.as_slice(), tail].concat();
        assert_eq!(
            unsupported_directives(&patch, POD_TEMPLATE_SPEC),
            [
                (
                    vec![key("spec"), key("$retainKeys")],
                    "$retainKeys".to_owned()
                ),
                (
                    vec![key("spec"), key("$setElementOrder/containers")],
                    "$setElementOrder/containers".to_owned()
                ),
                (at(&[key("$patch")]), "$patch: replace".to_owned()),
                (
                    at(&[key("$deleteFromPrimitiveList/args")]),
                    "$deleteFromPrimitiveList/args".to_owned()
                ),
                (
                    at(&[key("securityContext"), key("$patch")]),
                    "$patch: delete".to_owned()
                ),
                // Tolerations are an atomic list: there is no item to delete by key.
                (
                    vec![
                        key("spec"),
                        key("tolerations"),
                        Step::Index(0),
                        key("$patch")
                    ],
                    "$patch: delete".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn replaced_lists_are_the_atomic_lists_the_merge_meets() {
        let base = json!({"spec": {
            "containers": [{"name": "pytorch", "command": ["torchrun"],
                "envFrom": [{"configMapRef": {"name": "a"}}]},
                {"name": "side", "args": ["x"]}],
            "tolerations": [{"key": "a", "operator": "Exists"}],
            "readinessGates": [],
            "volumes": [{"name": "v", "emptyDir": {}}]}});
        let patch = json!({"spec": {
            "containers": [{"name": "new", "args": ["y"]},
                {"name": "pytorch", "envFrom": [{"secretRef": {"name": "s"}}]}],
            "tolerations": [{"key": "b", "operator": "Exists"}],
            "readinessGates": [{"conditionType": "c"}],
            "volumes": [{"name": "w", "emptyDir": {}}]}});
        let key = |k: &str| Step::Key(k.to_owned());
        assert_eq!(
            replaced_lists(&base, &patch, POD_TEMPLATE_SPEC),
            [
                // The container `new` is added, not merged; `side` is not in the patch;
                // an empty list has nothing to lose; volumes merge by name.
                ReplacedList {
                    at: vec![
                        key("spec"),
                        key("containers"),
                        Step::Index(1),
                        key("envFrom")
                    ],
                    base: vec![json!({"configMapRef": {"name": "a"}})],
                    patch: vec![json!({"secretRef": {"name": "s"}})],
                },
                ReplacedList {
                    at: vec![key("spec"), key("tolerations")],
                    base: vec![json!({"key": "a", "operator": "Exists"})],
                    patch: vec![json!({"key": "b", "operator": "Exists"})],
                },
            ]
        );
    }
}
