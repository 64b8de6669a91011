//! The binary form of an embedded schema that a run reads instead of its JSON text
//! ([`Node::decode`](crate::kubernetes::schema_tree::Node::decode)): written by the
//! build script (crates/upstream/build.rs, which includes this file) from the committed
//! JSON, so that a run does not tokenise 180 KB of JSON to read the schemas it walks
//! (1.2 ms of a one-job TrainJob render, perf, issue 23). A test decodes every blob and
//! requires the tree the JSON text gives.
//!
//! Little-endian; a value is a tag byte and its payload: `0` null, `1` false, `2` true,
//! `3` a u64, `4` an i64 (negative), `5` an f64 (8 bytes each), `6` a string (u32 byte
//! length, UTF-8), `7` an array (u32 count, the items), `8` an object (u32 count, then
//! each key as a string payload and its value). Numbers keep the kind serde_json read.

pub const NULL: u8 = 0;
pub const FALSE: u8 = 1;
pub const TRUE: u8 = 2;
pub const U64: u8 = 3;
pub const I64: u8 = 4;
pub const F64: u8 = 5;
pub const STRING: u8 = 6;
pub const ARRAY: u8 = 7;
pub const OBJECT: u8 = 8;

/// `value` in the binary form, appended to `out`.
pub fn encode(value: &serde_json::Value, out: &mut Vec<u8>) {
    use serde_json::Value;
    match value {
        Value::Null => out.push(NULL),
        Value::Bool(false) => out.push(FALSE),
        Value::Bool(true) => out.push(TRUE),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                out.push(U64);
                out.extend_from_slice(&u.to_le_bytes());
            } else if let Some(i) = n.as_i64() {
                out.push(I64);
                out.extend_from_slice(&i.to_le_bytes());
            } else {
                out.push(F64);
                let f = n
                    .as_f64()
                    .expect("a serde_json number is a u64, an i64 or an f64");
                out.extend_from_slice(&f.to_le_bytes());
            }
        }
        Value::String(s) => {
            out.push(STRING);
            string(s, out);
        }
        Value::Array(items) => {
            out.push(ARRAY);
            count(items.len(), out);
            for item in items {
                encode(item, out);
            }
        }
        Value::Object(map) => {
            out.push(OBJECT);
            count(map.len(), out);
            for (key, v) in map {
                string(key, out);
                encode(v, out);
            }
        }
    }
}

fn count(n: usize, out: &mut Vec<u8>) {
    let n = u32::try_from(n).expect("an embedded schema is smaller than 4 GiB");
    out.extend_from_slice(&n.to_le_bytes());
}

fn string(s: &str, out: &mut Vec<u8>) {
    count(s.len(), out);
    out.extend_from_slice(s.as_bytes());
}
