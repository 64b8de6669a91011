//! Deserialise typed inputs straight from the located tree: one YAML parse per file,
//! and an error points at the node it is about. Strings are lenient as YAML users
//! expect (`cpu: 64` is the string "64"); the JSON Schema has already checked types.

use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor};

use crate::yaml::core_schema::plain_scalar;
use crate::yaml::tree::{Node, NodeKind};

/// A deserialisation error and the node (line, column) it is about.
#[derive(Debug)]
pub struct Error {
    pub message: String,
    pub at: Option<(usize, usize)>,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error {
            message: msg.to_string(),
            at: None,
        }
    }

    /// `deny_unknown_fields`: the key, and the one meant when one is near it.
    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        let hint = match crate::diagnostics::suggest::closest(field, expected.iter().copied()) {
            Some(near) => format!("; did you mean {near}?"),
            None => format!("; the keys are {}", expected.join(", ")),
        };
        de::Error::custom(format!("unknown key `{field}`{hint}"))
    }
}

/// A value read by [`from_node`] and where it is written (its first character), for
/// checks after deserialisation that must point at it; serde_spanned's way for TOML.
#[derive(Clone, Debug, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub line: usize,
    pub column: usize,
}

/// The struct name [`NodeDe`] answers with a node's position, and its fields' order.
const LOCATED: &str = "$rdmagen::yaml::Located";
const LOCATED_FIELDS: &[&str] = &["$line", "$column", "$value"];

impl<'de, T: de::Deserialize<'de>> de::Deserialize<'de> for Located<T> {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Fields<T>(std::marker::PhantomData<T>);
        impl<'de, T: de::Deserialize<'de>> Visitor<'de> for Fields<T> {
            type Value = Located<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value read from a located YAML tree")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Located<T>, A::Error> {
                let missing = || de::Error::custom("a located value without its position");
                let (_, line) = map
                    .next_entry::<de::IgnoredAny, usize>()?
                    .ok_or_else(missing)?;
                let (_, column) = map
                    .next_entry::<de::IgnoredAny, usize>()?
                    .ok_or_else(missing)?;
                let (_, value) = map.next_entry::<de::IgnoredAny, T>()?.ok_or_else(missing)?;
                Ok(Located {
                    value,
                    line,
                    column,
                })
            }
        }
        deserializer.deserialize_struct(LOCATED, LOCATED_FIELDS, Fields(std::marker::PhantomData))
    }
}

/// A node's position, then the node, as the three entries [`Located`] reads.
struct Position<'a> {
    node: &'a Node,
    next: usize,
}

impl<'de> MapAccess<'de> for Position<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match LOCATED_FIELDS.get(self.next) {
            Some(name) => seed.deserialize((*name).into_deserializer()).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let field = self.next;
        self.next += 1;
        match field {
            0 => seed.deserialize((self.node.line as u64).into_deserializer()),
            1 => seed.deserialize((self.node.column as u64).into_deserializer()),
            _ => seed.deserialize(NodeDe(self.node)),
        }
    }
}

pub fn from_node<'de, T: serde::Deserialize<'de>>(node: &'de Node) -> Result<T, Error> {
    T::deserialize(NodeDe(node))
}

#[derive(Clone, Copy)]
struct NodeDe<'a>(&'a Node);

impl<'a> NodeDe<'a> {
    /// Attach this node's position to an error that has none yet.
    fn here<T>(self, result: Result<T, Error>) -> Result<T, Error> {
        result.map_err(|mut e| {
            e.at.get_or_insert((self.0.line, self.0.column));
            e
        })
    }

    fn scalar(self) -> Result<&'a str, Error> {
        match &self.0.kind {
            NodeKind::Scalar { text, .. } => Ok(text),
            _ => self.here(Err(de::Error::custom("expected a scalar"))),
        }
    }

    fn number<T: std::str::FromStr>(self, what: &str) -> Result<T, Error> {
        let text = self.scalar()?;
        self.here(
            text.trim()
                .parse()
                .map_err(|_| de::Error::custom(format!("`{text}` is not {what}"))),
        )
    }
}

macro_rules! numbers {
    ($($method:ident $visit:ident $ty:ty, $what:literal;)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            let n: $ty = self.number($what)?;
            self.here(visitor.$visit(n))
        }
    )*};
}

impl<'de> de::Deserializer<'de> for NodeDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let result = match &self.0.kind {
            NodeKind::Scalar { text, plain: false } => visitor.visit_str(text),
            NodeKind::Scalar { text, plain: true } => match plain_scalar(text) {
                serde_json::Value::Null => visitor.visit_unit(),
                serde_json::Value::Bool(b) => visitor.visit_bool(b),
                serde_json::Value::Number(n) if n.is_u64() => {
                    visitor.visit_u64(n.as_u64().unwrap_or_default())
                }
                serde_json::Value::Number(n) if n.is_i64() => {
                    visitor.visit_i64(n.as_i64().unwrap_or_default())
                }
                serde_json::Value::Number(n) => visitor.visit_f64(n.as_f64().unwrap_or_default()),
                _ => visitor.visit_str(text),
            },
            NodeKind::Sequence(items) => visitor.visit_seq(Seq(items.iter())),
            NodeKind::Mapping(entries) => visitor.visit_map(Map {
                entries: entries.iter(),
                value: None,
            }),
        };
        self.here(result)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        // A type that also takes a mapping (an env value or `{valueFrom: ...}`) asks
        // for a string and gets the mapping; any other visitor refuses it.
        if !matches!(self.0.kind, NodeKind::Scalar { .. }) {
            return self.deserialize_any(visitor);
        }
        let text = self.scalar()?;
        self.here(visitor.visit_str(text))
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        let b = match self.scalar()? {
            "true" | "True" | "TRUE" => true,
            "false" | "False" | "FALSE" => false,
            other => {
                return self.here(Err(de::Error::custom(format!(
                    "`{other}` is not true or false"
                ))));
            }
        };
        self.here(visitor.visit_bool(b))
    }

    numbers! {
        deserialize_u8 visit_u8 u8, "a small non-negative integer";
        deserialize_u16 visit_u16 u16, "a non-negative integer";
        deserialize_u32 visit_u32 u32, "a non-negative integer";
        deserialize_u64 visit_u64 u64, "a non-negative integer";
        deserialize_i8 visit_i8 i8, "an integer";
        deserialize_i16 visit_i16 i16, "an integer";
        deserialize_i32 visit_i32 i32, "an integer";
        deserialize_i64 visit_i64 i64, "an integer";
        deserialize_f32 visit_f32 f32, "a number";
        deserialize_f64 visit_f64 f64, "a number";
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
        match &self.0.kind {
            NodeKind::Scalar { text, plain: true } if plain_scalar(text).is_null() => {
                visitor.visit_none()
            }
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        let text = self.scalar()?;
        self.here(visitor.visit_enum(text.into_deserializer()))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Error> {
        if name == LOCATED {
            return visitor.visit_map(Position {
                node: self.0,
                next: 0,
            });
        }
        self.deserialize_any(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        i128 u128 char bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

struct Seq<'a>(std::slice::Iter<'a, Node>);

impl<'de> SeqAccess<'de> for Seq<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        match self.0.next() {
            Some(node) => seed.deserialize(NodeDe(node)).map(Some),
            None => Ok(None),
        }
    }
}

struct Map<'a> {
    entries: std::slice::Iter<'a, (Node, Node)>,
    value: Option<&'a Node>,
}

impl<'de> MapAccess<'de> for Map<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        match self.entries.next() {
            Some((k, v)) => {
                self.value = Some(v);
                let key = NodeDe(k);
                key.here(seed.deserialize(key)).map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let node = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("value without a key"))?;
        seed.deserialize(NodeDe(node))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::sync::Arc;

    use serde::Deserialize;

    use super::from_node;
    use crate::yaml::tree::parse_documents;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct T {
        name: String,
        count: u32,
        #[serde(default)]
        maybe: Option<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        flag: bool,
        kind: Kind,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    enum Kind {
        A,
        B,
    }

    #[test]
    fn located_values_keep_their_place() {
        #[derive(Debug, Deserialize)]
        struct L {
            a: super::Located<String>,
            b: Vec<super::Located<u32>>,
        }
        let doc = parse("a: x\nb:\n  - 1\n  -   2\n");
        let l: L = from_node(&doc.root).unwrap();
        assert_eq!((l.a.value.as_str(), l.a.line, l.a.column), ("x", 1, 4));
        let b: Vec<_> = l.b.iter().map(|v| (v.value, v.line, v.column)).collect();
        assert_eq!(b, [(1, 3, 5), (2, 4, 7)]);
        // An error inside keeps the inner place.
        let doc = parse("a: x\nb: [1, many]\n");
        let e = from_node::<L>(&doc.root).unwrap_err();
        assert_eq!(e.at, Some((2, 8)));
    }

    fn parse(text: &str) -> crate::yaml::tree::Document {
        parse_documents(&Arc::from("t"), text).unwrap().remove(0)
    }

    #[test]
    fn lenient_strings_strict_numbers_located_errors() {
        let doc = parse("name: 64\ncount: 3\nenv: {A: 1.0, B: no}\nflag: true\nkind: B\n");
        let t: T = from_node(&doc.root).unwrap();
        assert_eq!(t.name, "64");
        assert_eq!(t.env["A"], "1.0");
        assert_eq!(t.env["B"], "no");
        assert_eq!(t.kind, Kind::B);
        assert_eq!(t.maybe, None);

        let doc = parse("name: x\ncount: many\nflag: true\nkind: A\n");
        let e = from_node::<T>(&doc.root).unwrap_err();
        assert_eq!(e.at, Some((2, 8)));
        let doc = parse("name: x\ncount: 1\nflag: true\nkind: A\nextra: 1\n");
        let e = from_node::<T>(&doc.root).unwrap_err();
        assert_eq!(
            e.message,
            "unknown key `extra`; the keys are name, count, maybe, env, flag, kind"
        );
        assert_eq!(e.at, Some((5, 1)));
        let doc = parse("name: x\ncount: 1\nflag: true\nkind: A\ncuont: 1\n");
        let e = from_node::<T>(&doc.root).unwrap_err();
        assert_eq!(e.message, "unknown key `cuont`; did you mean count?");
        assert_eq!(e.at, Some((5, 1)));
    }
}
