//! Block YAML for Kubernetes objects held as JSON (a pod template), in the layout
//! rdmagen's templates use: two spaces per level, list items under their key indented
//! by two, `{}`/`[]` for empty collections. Strings go through [`scalar`] and keys too,
//! so the text reads back as exactly the value.

use std::fmt::Write;

use serde_json::Value;

use crate::render::yaml_scalar::scalar;

/// Append `value` (a mapping, normally) at `indent`, one entry per line.
pub fn write(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, v) in map {
                let _ = write!(out, "{:indent$}{}:", "", scalar(key));
                entry(out, v, indent);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                let _ = write!(out, "{:indent$}-", "");
                match item {
                    Value::Object(map) if !map.is_empty() => {
                        // The first key shares the dash's line.
                        let mut first = true;
                        for (key, v) in map {
                            if first {
                                let _ = write!(out, " {}:", scalar(key));
                                first = false;
                            } else {
                                let _ = write!(out, "{:w$}{}:", "", scalar(key), w = indent + 2);
                            }
                            entry(out, v, indent + 2);
                        }
                    }
                    other => {
                        let _ = writeln!(out, " {}", inline(other));
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{:indent$}{}", "", inline(other));
        }
    }
}

/// The rest of a `key:` line at `indent`: a scalar, or a nested block below it.
fn entry(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            write(out, value, indent + 2);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            write(out, value, indent + 2);
        }
        other => {
            let _ = writeln!(out, " {}", inline(other));
        }
    }
}

/// A scalar, or an empty or nested collection in flow style.
fn inline(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar(s),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(inline).collect();
            format!("[{}]", inner.join(", "))
        }
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", scalar(k), inline(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    fn block(value: serde_json::Value) -> String {
        let mut out = String::new();
        super::write(&mut out, &value, 2);
        out
    }

    #[test]
    fn layout() {
        let value = json!({
            "containers": [{"name": "pytorch", "command": ["torchrun", "a b"],
                "resources": {"limits": {"nvidia.com/gpu": "8"}}, "ports": []}],
            "hostNetwork": true,
            "emptyDir": {},
            "list": [[1, 2], "no"],
        });
        assert_eq!(
            block(value),
            "  containers:\n    - name: pytorch\n      command:\n        - torchrun\n        - \"a b\"\n      resources:\n        limits:\n          nvidia.com/gpu: \"8\"\n      ports: []\n  hostNetwork: true\n  emptyDir: {}\n  list:\n    - [1, 2]\n    - \"no\"\n"
        );
    }

    #[test]
    fn reads_back_as_the_value() {
        let value = json!({"a: b": {"k": ["x\ny", "#c", "~", "on", 3, false, null, {}]},
            "nested": [{"x": [{"y": "z"}]}]});
        let text = block(value.clone());
        let back = crate::yaml::tree_value::parse_values(&text).expect("parses");
        assert_eq!(back, vec![value]);
    }
}
