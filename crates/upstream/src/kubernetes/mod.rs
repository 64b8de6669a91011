//! Kubernetes itself, as data: the vendored core/v1 definitions of a pinned release,
//! strict schemas made from them (and a walk that checks valid documents against a
//! schema without compiling it), the strategic merge they describe, and the naming
//! rules for objects, namespaces, labels and the names inside a pod.

pub mod config_map;
pub mod definitions;
pub mod input_schema;
pub mod job_name;
pub mod labels;
pub mod merge;
pub mod names;
pub mod namespace;
pub mod quantity;
pub mod quick_schema;
pub mod schema_blob;
pub mod schema_tree;
pub mod sidecars;

pub use definitions::KUBERNETES_VERSION;
pub use merge::{ListOrder, strategic_merge};
