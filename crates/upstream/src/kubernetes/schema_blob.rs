//! The binary form of an embedded schema that a run reads instead of its JSON text
//! ([`Node::decode`](crate::kubernetes::schema_tree::Node::decode)): written by the
//! build scripts (crates/upstream/build.rs and the product's build.rs, which include
//! this file) from the committed JSON, so that a run does not tokenise 230 KB of JSON to
//! read the schemas it walks (1.2 ms of a one-job TrainJob render, perf, issue 23). A
//! test decodes every blob and requires the tree the JSON text gives.
//!
//! Little-endian. The blob opens with its string table: a u32 byte length and every
//! distinct string and key once, UTF-8, so that a run checks the UTF-8 of one slice
//! rather than of each of some 40 000 strings (that check was a tenth of a one-job
//! render's instructions, callgrind). The tree follows; a value is a tag byte and its
//! payload: `0` null, `1` false, `2` true, `3` a u64, `4` an i64 (negative), `5` an f64
//! (8 bytes each), `6` a string, `7` an array (u32 count, the items), `8` an object (u32
//! count, then each key as a string and its value, then, from [`INDEXED`] entries, the
//! entries' positions in the order of their keys, u32 each). An array's or object's
//! payload is preceded by its u32 byte length, so that a reader can leave a value it
//! may never need unread ([`LATER_FROM`]). A string is its u32 offset
//! in the table and its u32 byte length. Numbers keep the kind serde_json read.

use std::collections::HashMap;

pub const NULL: u8 = 0;
pub const FALSE: u8 = 1;
pub const TRUE: u8 = 2;
pub const U64: u8 = 3;
pub const I64: u8 = 4;
pub const F64: u8 = 5;
pub const STRING: u8 = 6;
pub const ARRAY: u8 = 7;
pub const OBJECT: u8 = 8;

/// From this many entries an object carries the order of its keys, and a run looks a
/// key up by a binary search through it rather than by a scan.
pub const INDEXED: usize = 12;

/// From this many bytes an array or object that is an object's value is read only when
/// a walk first asks for it; smaller ones are read with their object, which costs less
/// than keeping their place.
pub const LATER_FROM: usize = 256;

/// `value` in the binary form.
pub fn encode(value: &serde_json::Value) -> Vec<u8> {
    let mut writer = Writer::default();
    writer.node(value);
    let mut blob = Vec::with_capacity(4 + writer.table.len() + writer.tree.len());
    count(writer.table.len(), &mut blob);
    blob.extend_from_slice(writer.table.as_bytes());
    blob.extend_from_slice(&writer.tree);
    blob
}

#[derive(Default)]
struct Writer<'v> {
    table: String,
    /// Where each string already in the table starts.
    placed: HashMap<&'v str, usize>,
    tree: Vec<u8>,
}

impl<'v> Writer<'v> {
    fn node(&mut self, value: &'v serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::Null => self.tree.push(NULL),
            Value::Bool(false) => self.tree.push(FALSE),
            Value::Bool(true) => self.tree.push(TRUE),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    self.tree.push(U64);
                    self.tree.extend_from_slice(&u.to_le_bytes());
                } else if let Some(i) = n.as_i64() {
                    self.tree.push(I64);
                    self.tree.extend_from_slice(&i.to_le_bytes());
                } else {
                    self.tree.push(F64);
                    let f = n
                        .as_f64()
                        .expect("a serde_json number is a u64, an i64 or an f64");
                    self.tree.extend_from_slice(&f.to_le_bytes());
                }
            }
            Value::String(s) => {
                self.tree.push(STRING);
                self.string(s);
            }
            Value::Array(items) => {
                self.tree.push(ARRAY);
                let length_at = self.placeholder();
                count(items.len(), &mut self.tree);
                for item in items {
                    self.node(item);
                }
                self.fill(length_at);
            }
            Value::Object(map) => {
                self.tree.push(OBJECT);
                let length_at = self.placeholder();
                count(map.len(), &mut self.tree);
                for (key, v) in map {
                    self.string(key);
                    self.node(v);
                }
                if map.len() >= INDEXED {
                    let keys: Vec<&String> = map.keys().collect();
                    let mut order: Vec<usize> = (0..keys.len()).collect();
                    order.sort_unstable_by_key(|&i| keys[i]);
                    for i in order {
                        count(i, &mut self.tree);
                    }
                }
                self.fill(length_at);
            }
        }
    }

    /// Room for a payload's byte length, filled in by [`Writer::fill`] when it ends.
    fn placeholder(&mut self) -> usize {
        self.tree.extend_from_slice(&[0; 4]);
        self.tree.len()
    }

    fn fill(&mut self, payload_at: usize) {
        let n = u32::try_from(self.tree.len() - payload_at).expect("a schema is below 4 GiB");
        self.tree[payload_at - 4..payload_at].copy_from_slice(&n.to_le_bytes());
    }

    fn string(&mut self, s: &'v str) {
        let at = *self.placed.entry(s).or_insert_with(|| {
            self.table.push_str(s);
            self.table.len() - s.len()
        });
        count(at, &mut self.tree);
        count(s.len(), &mut self.tree);
    }
}

fn count(n: usize, out: &mut Vec<u8>) {
    let n = u32::try_from(n).expect("an embedded schema is smaller than 4 GiB");
    out.extend_from_slice(&n.to_le_bytes());
}
