//! Kubernetes itself, as data: the vendored core/v1 definitions of a pinned release,
//! strict schemas made from them, and the strategic merge they describe. Depends on
//! nothing else in the crate.

pub mod definitions;
pub mod input_schema;
pub mod merge;

pub use definitions::KUBERNETES_VERSION;
pub use merge::strategic_merge;
