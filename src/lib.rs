//! rdmagen: job + pool → validated PyTorchJob YAML for multi-node GPU training over
//! RDMA (RoCE / InfiniBand) on Kubernetes.
//!
//! The pipeline, one module per step:
//! [`spec`] (load) → [`plan`] (resolve) → [`render`] → [`check::verify`] → [`emit`].
//! [`pipeline`] runs the steps; [`cli`] is the only place that prints.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod check;
pub mod cli;
pub mod diag;
pub mod dockerfile;
pub mod emit;
pub mod error;
pub mod files;
pub mod golden;
pub mod kubernetes;
pub mod pipeline;
pub mod plan;
pub mod platform;
pub mod render;
pub mod source;
pub mod spec;

pub use error::Error;
