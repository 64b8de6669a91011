//! Enum errors a person can act on. When a value fails a schema that is a choice among
//! values (an `enum`, a `const`, or a `oneOf`/`anyOf` of them, perhaps beside a plain
//! type as in `gidIndex: <integer> | auto`), the message lists what is accepted and
//! names the nearest value, instead of JSON Schema's "not valid under any of the
//! schemas listed in the 'oneOf' keyword".

use serde_json::Value;

use crate::diagnostics::suggest::closest;

/// What a schema accepts when it is a choice among values.
pub(super) struct Choices<'s> {
    /// Constant values, in schema order.
    values: Vec<&'s Value>,
    /// Plain typed alternatives, described ("a non-negative integer"), with their schema.
    kinds: Vec<(String, &'s Value)>,
}

/// The choices of the schema whose keyword failed at `schema_path` (jsonschema's
/// canonical keyword location, such as `/$defs/Fabric/oneOf`), or None when that
/// schema is not a choice among values (an object, a list, types alone).
pub(super) fn at<'s>(root: &'s Value, schema_path: &str) -> Option<Choices<'s>> {
    let (parent, keyword) = schema_path.rsplit_once('/')?;
    if !matches!(keyword, "enum" | "const" | "oneOf" | "anyOf") {
        return None;
    }
    let mut choices = Choices {
        values: Vec::new(),
        kinds: Vec::new(),
    };
    collect(root, root.pointer(parent)?, &mut choices, 0)?;
    (!choices.values.is_empty()).then_some(choices)
}

/// Add what `node` accepts to `out`; None when it accepts something that is not a
/// value or a plain scalar type.
fn collect<'s>(
    root: &'s Value,
    node: &'s Value,
    out: &mut Choices<'s>,
    depth: usize,
) -> Option<()> {
    // The generated schemas nest two deep (Option<Enum>); the bound only stops a cycle.
    if depth > 8 {
        return None;
    }
    let node = match node.get("$ref").and_then(Value::as_str) {
        Some(target) => root.pointer(target.strip_prefix('#')?)?,
        None => node,
    };
    if let Some(values) = node.get("enum").and_then(Value::as_array) {
        out.values.extend(values);
        return Some(());
    }
    if let Some(value) = node.get("const") {
        out.values.push(value);
        return Some(());
    }
    if let Some(branches) = node
        .get("oneOf")
        .or_else(|| node.get("anyOf"))
        .and_then(Value::as_array)
    {
        for branch in branches {
            collect(root, branch, out, depth + 1)?;
        }
        return Some(());
    }
    let types: Vec<&str> = match node.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    for t in types {
        // `Option<T>` adds null; leaving a field out is how one says nothing.
        if t != "null" {
            out.kinds.push((describe_type(t, node)?, node));
        }
    }
    Some(())
}

/// "a non-negative integer", "an integer from 0 to 255", "a string"; None for objects
/// and lists, which are not choices.
fn describe_type(t: &str, node: &Value) -> Option<String> {
    let bound = |key| node.get(key).and_then(Value::as_f64);
    let number = |word: &str| match (bound("minimum"), bound("maximum")) {
        (Some(0.0), None) => format!("a non-negative {word}"),
        (Some(1.0), None) if word == "integer" => "a positive integer".to_owned(),
        (Some(min), None) => format!("{} of at least {min}", article(word)),
        (None, Some(max)) => format!("{} of at most {max}", article(word)),
        (Some(min), Some(max)) => format!("{} from {min} to {max}", article(word)),
        (None, None) => article(word),
    };
    Some(match t {
        "integer" => number("integer"),
        "number" => number("number"),
        "string" => "a string".to_owned(),
        "boolean" => "true or false".to_owned(),
        _ => return None,
    })
}

fn article(word: &str) -> String {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) {
        format!("an {word}")
    } else {
        format!("a {word}")
    }
}

impl Choices<'_> {
    /// "expected one of `roce`, `ib` or `tcp`, got `RoCE`; did you mean `roce`?"
    pub(super) fn message(&self, got: &Value) -> String {
        format!(
            "expected {}, got {}{}",
            self.accepted(),
            self.describe_got(got),
            self.hint(got)
        )
    }

    fn accepted(&self) -> String {
        let items: Vec<String> = self
            .kinds
            .iter()
            .map(|(kind, _)| kind.clone())
            .chain(self.values.iter().map(|v| show(v)))
            .collect();
        let list = match items.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            [init @ .., last] => format!("{} or {last}", init.join(", ")),
        };
        if self.kinds.is_empty() && items.len() > 2 {
            format!("one of {list}")
        } else {
            list
        }
    }

    fn describe_got(&self, got: &Value) -> String {
        match got {
            // Beside a typed alternative, `"3"` and `3` differ only by being a string.
            Value::String(s) if self.kinds.iter().any(|(k, _)| k != "a string") => {
                format!("the string `{}`", Value::String(shorten(s)))
            }
            Value::Null => "an empty value".to_owned(),
            Value::Array(_) => "a list".to_owned(),
            Value::Object(_) => "a mapping".to_owned(),
            other => show(other),
        }
    }

    fn hint(&self, got: &Value) -> String {
        let Value::String(s) = got else {
            return String::new();
        };
        let names: Vec<&str> = self.values.iter().filter_map(|v| v.as_str()).collect();
        // A difference in case only is the likeliest mistake (`RoCE` for `roce`).
        let near = names
            .iter()
            .find(|n| n.eq_ignore_ascii_case(s))
            .copied()
            .or_else(|| closest(s, names.iter().copied()));
        if let Some(near) = near {
            return format!("; did you mean `{near}`?");
        }
        // `"3"` where a number is accepted: YAML made it a string because of the quotes.
        let unquoted = serde_json::from_str::<Value>(s.trim())
            .ok()
            .filter(|v| v.is_number() || v.is_boolean());
        if let Some(value) = unquoted
            && self.kinds.iter().any(|(_, schema)| accepts(schema, &value))
        {
            return format!(" (write {value} without quotes)");
        }
        String::new()
    }
}

fn accepts(schema: &Value, value: &Value) -> bool {
    jsonschema::validator_for(schema).is_ok_and(|v| v.is_valid(value))
}

/// A value as the user would write it: strings bare, in backticks.
fn show(value: &Value) -> String {
    match value {
        Value::String(s) => format!("`{}`", shorten(s)),
        other => format!("`{other}`"),
    }
}

/// Messages quote what the input wrote; a long value is cut so the line stays readable.
fn shorten(s: &str) -> String {
    crate::diagnostics::escape::cut(s, 60).into_owned()
}

#[cfg(test)]
mod tests {
    use crate::diagnostics::Findings;
    use crate::model::load::read_documents;

    const POOL: &str = "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {name: p}\nspec:\n  gpu: {perNode: 8}\n  network: {fabric: roce, gidIndex: 3}\n";
    const JOB: &str = "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec: {pool: p, image: i, nodes: 2, gpusPerNode: 8, script: t.py}\n";

    /// The messages for `base` with `old` replaced by `new`.
    fn messages(base: &str, old: &str, new: &str) -> Vec<String> {
        assert!(base.contains(old), "{old}");
        let text = base.replace(old, new);
        let mut findings = Findings::default();
        read_documents(&"f.yaml".into(), &text, &mut findings);
        findings.iter().map(|f| f.message.clone()).collect()
    }

    /// (document, text replaced, replacement, the one message expected)
    const CASES: &[(&str, &str, &str, &str)] = &[
        // An enum lists its values and names the nearest.
        (
            POOL,
            "spec:\n",
            "spec:\n  platform: aistuido\n",
            "spec.platform: expected one of `generic`, `aistudio`, `cubestudio`, `cce`, `aks` or `oci`, got `aistuido`; did you mean `aistudio`?",
        ),
        (
            POOL,
            "fabric: roce",
            "fabric: RoCE",
            "spec.network.fabric: expected one of `roce`, `ib` or `tcp`, got `RoCE`; did you mean `roce`?",
        ),
        (
            JOB,
            "script: t.py",
            "script: t.py, restartPolicy: onfailure",
            "spec.restartPolicy: expected one of `OnFailure`, `Never`, `Always` or `ExitCode`, got `onfailure`; did you mean `OnFailure`?",
        ),
        (
            JOB,
            "script: t.py",
            "script: t.py, imagePullPolicy: always",
            "spec.imagePullPolicy: expected one of `Always`, `IfNotPresent` or `Never`, got `always`; did you mean `Always`?",
        ),
        // Nine case changes are too many edits for `closest`, but no typo at all.
        (
            JOB,
            "script: t.py",
            "script: t.py, imagePullPolicy: IFNOTPRESENT",
            "spec.imagePullPolicy: expected one of `Always`, `IfNotPresent` or `Never`, got `IFNOTPRESENT`; did you mean `IfNotPresent`?",
        ),
        // A value far from every choice gets the list only.
        (
            POOL,
            "fabric: roce",
            "fabric: ethernet",
            "spec.network.fabric: expected one of `roce`, `ib` or `tcp`, got `ethernet`",
        ),
        (
            POOL,
            "fabric: roce",
            "fabric: 3",
            "spec.network.fabric: expected one of `roce`, `ib` or `tcp`, got `3`",
        ),
        (
            POOL,
            "fabric: roce",
            "fabric: [roce]",
            "spec.network.fabric: expected one of `roce`, `ib` or `tcp`, got a list",
        ),
        // A typed alternative is described, and a quoted number explained.
        (
            POOL,
            "gidIndex: 3",
            "gidIndex: \"3\"",
            "spec.network.gidIndex: expected a non-negative integer or `auto`, got the string `\"3\"` (write 3 without quotes)",
        ),
        (
            POOL,
            "gidIndex: 3",
            "gidIndex: Auto",
            "spec.network.gidIndex: expected a non-negative integer or `auto`, got the string `\"Auto\"`; did you mean `auto`?",
        ),
        (
            POOL,
            "gidIndex: 3",
            "gidIndex: -1",
            "spec.network.gidIndex: expected a non-negative integer or `auto`, got `-1`",
        ),
        // A quoted number that would still be refused gets no advice to unquote it.
        (
            POOL,
            "gidIndex: 3",
            "gidIndex: \"-1\"",
            "spec.network.gidIndex: expected a non-negative integer or `auto`, got the string `\"-1\"`",
        ),
    ];

    #[test]
    fn a_value_outside_the_choices_gets_them_and_the_nearest() {
        for (base, old, new, want) in CASES {
            assert_eq!(messages(base, old, new), [*want], "{new}");
        }
    }

    #[test]
    fn a_long_value_is_cut() {
        let long = "x".repeat(100);
        assert_eq!(
            messages(POOL, "fabric: roce", &format!("fabric: {long}")),
            [format!(
                "spec.network.fabric: expected one of `roce`, `ib` or `tcp`, got `{}…`",
                "x".repeat(60)
            )]
        );
    }
}
