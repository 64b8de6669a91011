//! Load: the input model (Job, Pool) and how it is read from YAML with positions.

mod choices;
pub mod common;
pub mod fast_yaml;
pub mod input_check;
pub mod job;
pub mod load;
pub mod pool;
pub mod rdma_request;
pub mod schema;
pub mod target;
pub mod tree;
pub mod tree_de;
pub mod tree_value;

pub use job::JobDocument;
pub use load::Loaded;
pub use pool::PoolDocument;
