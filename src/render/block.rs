//! Block YAML for Kubernetes objects held as JSON (a pod template), in the layout
//! rdmagen's templates use: two spaces per level, list items under their key indented
//! by two, `{}`/`[]` for empty collections. Strings go through [`scalar`] and keys too,
//! so the text reads back as exactly the value.

use std::fmt::Write;

use serde_json::Value;

use crate::render::yaml_scalar::push_scalar;

// Everything is appended to `out` in place: with `write!("{:indent$}")` padding and a
// String per scalar, writing the text was 8 % of `validate`'s CPU at 10 000 jobs
// (perf, 2026-12-02).

/// Append `value` (a mapping, normally) at `indent`, one entry per line.
pub fn write(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, v) in map {
                spaces(out, indent);
                key_colon(out, key);
                entry(out, v, indent);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                spaces(out, indent);
                out.push('-');
                match item {
                    Value::Object(map) if !map.is_empty() => {
                        // The first key shares the dash's line.
                        let mut first = true;
                        for (key, v) in map {
                            if first {
                                out.push(' ');
                                first = false;
                            } else {
                                spaces(out, indent + 2);
                            }
                            key_colon(out, key);
                            entry(out, v, indent + 2);
                        }
                    }
                    other => {
                        out.push(' ');
                        inline(out, other);
                        out.push('\n');
                    }
                }
            }
        }
        other => {
            spaces(out, indent);
            inline(out, other);
            out.push('\n');
        }
    }
}

fn spaces(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n(' ', n));
}

fn key_colon(out: &mut String, key: &str) {
    push_scalar(out, key);
    out.push(':');
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
            out.push(' ');
            inline(out, other);
            out.push('\n');
        }
    }
}

/// Append a scalar, or an empty or nested collection in flow style.
fn inline(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::String(s) => push_scalar(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                inline(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                push_scalar(out, k);
                out.push_str(": ");
                inline(out, v);
            }
            out.push('}');
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
