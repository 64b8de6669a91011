//! rdmagen: job + pool → validated PyTorchJob YAML for multi-node GPU training over
//! RDMA (RoCE / InfiniBand) on Kubernetes.
//!
//! The pipeline, one module per step:
//! [`model`] (load) → [`plan`] (resolve) → [`render`] → [`verify`] → [`emit`] or
//! [`golden`]. [`pipeline`] runs the steps; [`output`] holds each output format once;
//! [`cli`] is the only place that prints.
//!
//! Layers, lowest first; a module imports only from lower layers (README.md "Layout",
//! checked by `tests/cli/layers.rs`): [`diagnostics`], [`error`], [`files`],
//! [`version`] → [`yaml`], [`kubernetes`], [`packages`] → [`kubeflow`], [`model`],
//! [`render`] → [`platform`] →
//! [`nccl`] → [`dockerfile`], [`detect`], [`smoke`], [`nccl_log`] → [`plan`] → [`verify`] → [`pipeline`] →
//! [`emit`] → [`golden`] → [`output`] → [`cli`].
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod cli;
pub mod detect;
pub mod diagnostics;
pub mod dockerfile;
pub mod emit;
pub mod error;
pub mod files;
pub mod golden;
pub mod kubeflow;
pub mod kubernetes;
pub mod model;
pub mod nccl;
pub mod nccl_log;
pub mod output;
pub mod packages;
pub mod pipeline;
pub mod plan;
pub mod platform;
pub mod render;
pub mod rules;
pub mod smoke;
pub mod verify;
pub mod version;
pub mod yaml;

pub use error::Error;
