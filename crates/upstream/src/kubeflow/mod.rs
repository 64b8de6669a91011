//! Kubeflow's operators, as data: what their controllers and webhooks do with the
//! objects rdmagen writes and lints, transcribed once with tag:path:line so that the
//! plan, `render`'s checks and `lint` read the same copy.

pub mod mpi;
pub mod operator;
pub mod trainer;
