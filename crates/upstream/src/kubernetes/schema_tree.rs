//! A JSON document read for the quick walk (kubernetes/quick_schema.rs) and the
//! strategic merge: an embedded schema parsed into a tree that borrows its keys and
//! strings from the text, without hashing them. serde_json's `Value` copies every key
//! into a `String` and hashes it into an index map (SipHash); for the 50-250 KB of
//! schemas a one-job render walks, that was a fifth of its time (perf, issue 23). The
//! tree holds what `Value` would hold, read the same way (numbers as serde_json's
//! `Number`, a repeated key keeping its first place and its last value), so the walk's
//! verdicts are the same.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use crate::kubernetes::schema_blob::{self, INDEXED};

/// One JSON value, borrowing from the text it was parsed from. 24 bytes, and every
/// array and object one allocation of its exact size: a run's schema trees are about a
/// megabyte, and their allocations and fresh pages were half of their parse (perf).
#[derive(Debug, Clone, PartialEq)]
pub enum Node<'a> {
    Null,
    Bool(bool),
    Number(Number),
    /// A string as the text holds it (one without escapes).
    String(&'a str),
    /// A string the text escapes, unescaped.
    OwnedString(Box<str>),
    Array(Box<[Node<'a>]>),
    Object(Box<Object<'a>>),
}

/// A JSON object in the order of its text, looked up by a scan when small and by a
/// sorted index when larger (a `properties` or `$defs` of hundreds of names).
#[derive(Debug, Clone, PartialEq)]
pub struct Object<'a> {
    entries: Box<[(Cow<'a, str>, Slot<'a>)]>,
    /// Positions in `entries` in the order of their keys; empty below [`INDEXED`]
    /// entries.
    sorted: Box<[u32]>,
}

/// An object's value: read, or (from a schema's binary form) still in the blob until a
/// walk first asks for it. A one-job render walks a small part of the 300 KB of
/// schemas it holds, and decoding all of them eagerly was 30 % of its instructions
/// (callgrind, issue 23). Kept inside [`Object`], so that whoever holds a [`Node`] holds
/// one that is read: no match on a `Node` can meet a value not yet read.
#[derive(Clone)]
enum Slot<'a> {
    Read(Node<'a>),
    Later(Box<Later<'a>>),
}

/// A value's bytes in a blob, and the value once read (by whichever thread asks first).
#[derive(Clone)]
struct Later<'a> {
    table: &'a str,
    bytes: &'a [u8],
    node: OnceLock<Node<'a>>,
}

impl<'a> Slot<'a> {
    fn node(&self) -> &Node<'a> {
        match self {
            Slot::Read(node) => node,
            Slot::Later(later) => later.node.get_or_init(|| {
                let mut reader = Blob {
                    table: later.table,
                    rest: later.bytes,
                };
                let node = reader.node();
                debug_assert!(reader.rest.is_empty(), "a value's bytes hold one value");
                node
            }),
        }
    }
}

impl PartialEq for Slot<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.node() == other.node()
    }
}

impl fmt::Debug for Slot<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.node().fmt(f)
    }
}

impl<'a> Node<'a> {
    /// `text` as a tree; `text` must be JSON (the embedded schemas are).
    pub fn parse(text: &'a str) -> Result<Node<'a>, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let (mut entries, mut items) = (Vec::new(), Vec::new());
        let node = Seed {
            entries: &mut entries,
            items: &mut items,
        }
        .deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(node)
    }

    /// The tree of a schema's binary form (kubernetes/schema_blob.rs, written by the
    /// build script from the committed JSON): the tree [`Node::parse`] gives of that
    /// JSON, strings borrowed from `blob`. Reading it is a few times faster than
    /// tokenising the text. A blob that is not one panics: the build script wrote it.
    pub fn decode(blob: &'a [u8]) -> Node<'a> {
        let mut reader = Blob::new(blob);
        let node = reader.node();
        assert!(reader.rest.is_empty(), "a schema blob holds one value");
        node
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::String(s) => Some(s),
            Node::OwnedString(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Node<'a>]> {
        match self {
            Node::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Node::Object(object) => Some(object),
            _ => None,
        }
    }

    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Node::Number(n) => Some(n),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Node::Object(_))
    }

    pub fn is_boolean(&self) -> bool {
        matches!(self, Node::Bool(_))
    }

    /// The value at an object's `key`; `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.as_object()?.get(key)
    }

    /// Whether this equals `value` as serde_json compares two `Value`s (objects by
    /// their entries whatever the order, numbers as `Number`s).
    pub fn equals(&self, value: &Value) -> bool {
        match (self, value) {
            (Node::Null, Value::Null) => true,
            (Node::Bool(a), Value::Bool(b)) => a == b,
            (Node::Number(a), Value::Number(b)) => a == b,
            (Node::String(_) | Node::OwnedString(_), Value::String(b)) => {
                self.as_str() == Some(b.as_str())
            }
            (Node::Array(a), Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a.equals(b))
            }
            (Node::Object(a), Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.get(k).is_some_and(|other| v.equals(other)))
            }
            _ => false,
        }
    }

    /// Whether this is `other` to the last detail a walk can see: the same values in
    /// the same order, and the same key index of every object (a string the text
    /// escapes equals the same string held as it is). What a test of a schema's binary
    /// form requires of its decoded tree against the tree of its JSON.
    pub fn identical(&self, other: &Node<'_>) -> bool {
        match (self, other) {
            (Node::Array(a), Node::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(a, b)| a.identical(b))
            }
            (Node::Object(a), Node::Object(b)) => {
                a.sorted == b.sorted
                    && a.entries.len() == b.entries.len()
                    && a.entries
                        .iter()
                        .zip(b.entries.iter())
                        .all(|((ka, va), (kb, vb))| ka == kb && va.node().identical(vb.node()))
            }
            (Node::String(_) | Node::OwnedString(_), Node::String(_) | Node::OwnedString(_)) => {
                self.as_str() == other.as_str()
            }
            (Node::Null, Node::Null) => true,
            (Node::Bool(a), Node::Bool(b)) => a == b,
            (Node::Number(a), Node::Number(b)) => a == b,
            _ => false,
        }
    }

    /// The node at a JSON Pointer (RFC 6901), exactly as `Value::pointer` finds it.
    pub fn pointer(&self, pointer: &str) -> Option<&Node<'a>> {
        if pointer.is_empty() {
            return Some(self);
        }
        let tokens = pointer.strip_prefix('/')?;
        let mut target = self;
        for token in tokens.split('/') {
            let unescaped;
            let token = if token.contains('~') {
                unescaped = token.replace("~1", "/").replace("~0", "~");
                unescaped.as_str()
            } else {
                token
            };
            target = match target {
                Node::Object(object) => object.get(token)?,
                Node::Array(items) => items.get(array_index(token)?)?,
                _ => return None,
            };
        }
        Some(target)
    }
}

/// An array index as serde_json reads one in a pointer: digits, no sign, no leading
/// zero.
fn array_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

impl<'a> Object<'a> {
    fn new(entries: Box<[(Cow<'a, str>, Node<'a>)]>) -> Self {
        let entries = if has_repeat(&entries) {
            first_place_last_value(entries.into_vec()).into_boxed_slice()
        } else {
            entries
        };
        let entries: Box<[(Cow<'a, str>, Slot<'a>)]> = entries
            .into_vec()
            .into_iter()
            .map(|(key, node)| (key, Slot::Read(node)))
            .collect();
        let mut sorted: Box<[u32]> = Box::new([]);
        if entries.len() >= INDEXED {
            let mut order: Vec<u32> = (0..entries.len() as u32).collect();
            order.sort_unstable_by(|&a, &b| entries[a as usize].0.cmp(&entries[b as usize].0));
            sorted = order.into_boxed_slice();
        }
        Object { entries, sorted }
    }

    pub fn get(&self, key: &str) -> Option<&Node<'a>> {
        if self.sorted.is_empty() {
            return self
                .entries
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.node());
        }
        self.sorted
            .binary_search_by(|&i| self.entries[i as usize].0.as_ref().cmp(key))
            .ok()
            .map(|at| self.entries[self.sorted[at] as usize].1.node())
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in the order of the text.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Node<'a>)> {
        self.entries.iter().map(|(k, v)| (k.as_ref(), v.node()))
    }
}

/// Whether a key repeats: by a scan when small, through a sorted copy of the keys when
/// larger.
fn has_repeat(entries: &[(Cow<'_, str>, Node<'_>)]) -> bool {
    if entries.len() < INDEXED {
        return entries
            .iter()
            .enumerate()
            .any(|(i, (k, _))| entries[..i].iter().any(|(seen, _)| seen == k));
    }
    let mut keys: Vec<&str> = entries.iter().map(|(k, _)| k.as_ref()).collect();
    keys.sort_unstable();
    keys.windows(2).any(|w| w[0] == w[1])
}

/// What serde_json's map keeps of a repeated key: its first place and its last value.
fn first_place_last_value<'a>(
    entries: Vec<(Cow<'a, str>, Node<'a>)>,
) -> Vec<(Cow<'a, str>, Node<'a>)> {
    let mut kept: Vec<(Cow<'a, str>, Node<'a>)> = Vec::with_capacity(entries.len());
    for (key, value) in entries {
        match kept.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => kept.push((key, value)),
        }
    }
    kept
}

/// A reader of a schema's binary form: its string table, and the tree still to read.
struct Blob<'a> {
    table: &'a str,
    rest: &'a [u8],
}

impl<'a> Blob<'a> {
    fn new(blob: &'a [u8]) -> Self {
        let mut reader = Blob {
            table: "",
            rest: blob,
        };
        let n = reader.count();
        reader.table =
            std::str::from_utf8(reader.take(n)).expect("a schema blob's string table is UTF-8");
        reader
    }

    fn take(&mut self, n: usize) -> &'a [u8] {
        let (taken, rest) = self.rest.split_at(n);
        self.rest = rest;
        taken
    }

    fn eight(&mut self) -> [u8; 8] {
        self.take(8).try_into().expect("eight bytes")
    }

    fn count(&mut self) -> usize {
        u32::from_le_bytes(self.take(4).try_into().expect("four bytes")) as usize
    }

    fn str(&mut self) -> &'a str {
        let at = self.count();
        let n = self.count();
        &self.table[at..at + n]
    }

    fn node(&mut self) -> Node<'a> {
        let tag = self.take(1)[0];
        match tag {
            schema_blob::NULL => Node::Null,
            schema_blob::FALSE => Node::Bool(false),
            schema_blob::TRUE => Node::Bool(true),
            schema_blob::U64 => Node::Number(u64::from_le_bytes(self.eight()).into()),
            schema_blob::I64 => Node::Number(i64::from_le_bytes(self.eight()).into()),
            schema_blob::F64 => {
                Number::from_f64(f64::from_le_bytes(self.eight())).map_or(Node::Null, Node::Number)
            }
            schema_blob::STRING => Node::String(self.str()),
            schema_blob::ARRAY => {
                let _bytes = self.count();
                let n = self.count();
                Node::Array((0..n).map(|_| self.node()).collect())
            }
            schema_blob::OBJECT => {
                let _bytes = self.count();
                let n = self.count();
                let entries = (0..n)
                    .map(|_| (Cow::Borrowed(self.str()), self.slot()))
                    .collect();
                // The blob was written from a serde_json map: no key repeats, and from
                // INDEXED entries the order of the keys follows.
                let sorted: Box<[u32]> = if n >= INDEXED {
                    (0..n).map(|_| self.count() as u32).collect()
                } else {
                    Box::new([])
                };
                Node::Object(Box::new(Object { entries, sorted }))
            }
            other => panic!("a schema blob has no tag {other}"),
        }
    }

    /// An object's value: an array or object of [`schema_blob::LATER_FROM`] bytes or
    /// more is left in the blob, to be read when first asked for.
    fn slot(&mut self) -> Slot<'a> {
        let tag = self.rest[0];
        if matches!(tag, schema_blob::ARRAY | schema_blob::OBJECT) {
            let bytes =
                u32::from_le_bytes(self.rest[1..5].try_into().expect("four bytes")) as usize;
            if bytes >= schema_blob::LATER_FROM {
                return Slot::Later(Box::new(Later {
                    table: self.table,
                    bytes: self.take(5 + bytes),
                    node: OnceLock::new(),
                }));
            }
        }
        Slot::Read(self.node())
    }
}

/// Reads one value. An array's items and an object's entries are gathered on stacks
/// shared by the whole parse and moved into one allocation of their exact size when
/// the array or object ends.
struct Seed<'s, 'a> {
    entries: &'s mut Vec<(Cow<'a, str>, Node<'a>)>,
    items: &'s mut Vec<Node<'a>>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, 'de> {
    type Value = Node<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_, 'de> {
    type Value = Node<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Node<'de>, E> {
        Ok(Node::Bool(b))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Node<'de>, E> {
        Ok(Node::Number(n.into()))
    }

    // As serde_json's `Value` reads a float: a non-finite one is null.
    fn visit_f64<E>(self, n: f64) -> Result<Node<'de>, E> {
        Ok(Number::from_f64(n).map_or(Node::Null, Node::Number))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Node<'de>, E> {
        Ok(Node::String(s))
    }

    fn visit_str<E>(self, s: &str) -> Result<Node<'de>, E> {
        Ok(Node::OwnedString(s.into()))
    }

    fn visit_string<E>(self, s: String) -> Result<Node<'de>, E> {
        Ok(Node::OwnedString(s.into_boxed_str()))
    }

    fn visit_unit<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node<'de>, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node<'de>, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node<'de>, A::Error> {
        let start = self.items.len();
        while let Some(item) = seq.next_element_seed(Seed {
            entries: &mut *self.entries,
            items: &mut *self.items,
        })? {
            self.items.push(item);
        }
        Ok(Node::Array(self.items.drain(start..).collect()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node<'de>, A::Error> {
        let start = self.entries.len();
        while let Some(Key(key)) = map.next_key()? {
            let value = map.next_value_seed(Seed {
                entries: &mut *self.entries,
                items: &mut *self.items,
            })?;
            self.entries.push((key, value));
        }
        let entries = self.entries.drain(start..).collect();
        Ok(Node::Object(Box::new(Object::new(entries))))
    }
}

/// An object's key, borrowed when the text holds it without escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string key")
            }

            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }

            fn visit_str<E: de::Error>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }

            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// JSON Pointers that tests resolve both in a tree and in serde_json's `Value` of the
/// same text (escapes, empty tokens, array indices read as serde_json reads them).
#[cfg(test)]
pub(crate) const POINTERS: &[&str] = &[
    "",
    "/",
    "/definitions",
    "/definitions/a",
    "/definitions/a/type",
    "/definitions/missing",
    "/definitions/b~1c",
    "/definitions/d~0e",
    "/definitions/",
    "/definitions//f",
    "/list/0/g",
    "/list/1",
    "/list/01",
    "/list/+1",
    "/list/2",
    "/definitions/a/type/deeper",
    "/big/k3",
    "/big/k11",
    "/big/k12",
    "/esc\"aped",
    "definitions",
    "#/definitions",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree of a text equals serde_json's `Value` of it, and a pointer finds the
    /// same node in both.
    #[test]
    fn reads_and_resolves_as_serde_json() {
        let text = r#"{"definitions": {"a": {"type": "string"}, "b/c": 1, "d~e": 2, "": {"f": 3}},
            "list": [{"g": 4}, 5], "esc\"aped": "x\ny", "n": [1, -2, 3.5, 18446744073709551615],
            "repeat": {"k": 1, "j": 2, "k": 3},
            "big": {"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k3":33},
            "null": null, "t": true}"#;
        let value: Value = serde_json::from_str(text).unwrap();
        let tree = Node::parse(text).unwrap();
        assert!(tree.equals(&value));
        assert_eq!(std::mem::size_of::<Node>(), 24);
        assert_eq!(
            tree.get("repeat")
                .unwrap()
                .as_object()
                .unwrap()
                .iter()
                .collect::<Vec<_>>(),
            [
                ("k", &Node::Number(3.into())),
                ("j", &Node::Number(2.into()))
            ]
        );
        for &pointer in POINTERS {
            match (tree.pointer(pointer), value.pointer(pointer)) {
                (Some(node), Some(v)) => assert!(node.equals(v), "{pointer:?}"),
                (None, None) => {}
                (node, v) => panic!("{pointer:?}: {node:?} and {v:?}"),
            }
        }
    }

    /// A text's binary form decodes to the tree of its text, shared strings and the
    /// key index included, and `identical` tells a change of order or of a value.
    #[test]
    fn the_binary_form_decodes_to_the_tree_of_its_text() {
        let text = r#"{"b": "x\ny", "a": [1, -2, 3.5, null, true, false, "b"],
            "big": {"k9":9,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k0":0,"k10":10,"k11":"a"},
            "small": {"z": {}, "y": []}, "long": {"enum": [LONG], "deeper": {"items": [LONG]}}}"#;
        let long = (0..40)
            .map(|i| format!("\"value {i}\""))
            .collect::<Vec<_>>()
            .join(",");
        let text = &text.replace("LONG", &long);
        let value: Value = serde_json::from_str(text).unwrap();
        let blob = schema_blob::encode(&value);
        let tree = Node::parse(text).unwrap();
        // "big" (12 entries and their index: 280 bytes), "long" and the two inside it
        // are left in the blob until asked for; "small" is read with the root.
        let decoded = Node::decode(&blob);
        let kinds = |node: &Node| {
            let object = node.as_object().unwrap();
            object
                .entries
                .iter()
                .map(|(k, slot)| (k.to_string(), matches!(slot, Slot::Later(_))))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            kinds(&decoded)
                .into_iter()
                .filter(|(_, later)| *later)
                .map(|(k, _)| k)
                .collect::<Vec<_>>(),
            ["big", "long"]
        );
        let long = decoded.get("long").unwrap();
        assert_eq!(
            kinds(long),
            [("enum".to_owned(), true), ("deeper".to_owned(), true)]
        );
        assert_eq!(
            decoded
                .pointer("/long/deeper/items/39")
                .and_then(Node::as_str),
            Some("value 39")
        );
        assert!(decoded.identical(&tree));
        assert!(Node::decode(&blob).identical(&tree));
        assert_eq!(
            Node::decode(&blob).pointer("/big/k0"),
            Some(&Node::Number(0.into()))
        );
        assert_eq!(Node::decode(&blob).pointer("/big/k12"), None);
        // Each distinct string is in the table once ("a" and "b" are keys and values).
        fn strings<'v>(value: &'v Value, seen: &mut std::collections::BTreeSet<&'v str>) {
            match value {
                Value::String(s) => {
                    seen.insert(s);
                }
                Value::Array(items) => items.iter().for_each(|v| strings(v, seen)),
                Value::Object(map) => map.iter().for_each(|(k, v)| {
                    seen.insert(k);
                    strings(v, seen)
                }),
                _ => {}
            }
        }
        let mut distinct = std::collections::BTreeSet::new();
        strings(&value, &mut distinct);
        let table = u32::from_le_bytes(blob[..4].try_into().unwrap()) as usize;
        assert_eq!(table, distinct.iter().map(|s| s.len()).sum::<usize>());
        for other in [
            r#"{"a": [1, -2, 3.5, null, true, false, "b"], "b": "x\ny"}"#,
            r#"{"b": "x\ny", "a": [1, -2, 3.5, null, true, false, "c"]}"#,
            r#"{"b": "x\ny", "a": [1, -2, 3.5, null, true, false]}"#,
        ] {
            assert!(!Node::parse(other).unwrap().identical(&tree), "{other}");
        }
    }
}
