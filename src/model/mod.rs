//! The input model: Job and Pool documents as users write them (serde + schemars),
//! and loading them from located YAML with every field's position.

mod choices;
pub mod common;
pub mod input_check;
pub mod job;
pub mod load;
pub mod pool;
pub mod rdma_request;
pub mod schema;
pub mod target;
pub mod topology;

pub use job::JobDocument;
pub use load::Loaded;
pub use pool::PoolDocument;
