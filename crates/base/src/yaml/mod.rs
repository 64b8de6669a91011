//! Located YAML: a YAML reader that keeps every node's file, line and column, and a
//! serde deserializer over it, so that every input error can point at its source.
//! Knows nothing about Jobs or Pools.

pub mod core_schema;
pub mod fast_yaml;
pub mod tree;
pub mod tree_de;
pub mod tree_value;
