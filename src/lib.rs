//! rdmagen: job + pool → validated PyTorchJob YAML for multi-node GPU training over
//! RDMA (RoCE / InfiniBand) on Kubernetes.
//!
//! The pipeline, one module per step:
//! [`model`] (load) → [`plan`] (resolve) → [`render`] → [`verify`] → [`emit`] or
//! [`golden`]. [`pipeline`] runs the steps; [`output`] holds each output format once;
//! [`cli`] is the only place that prints.
//!
//! Layers, lowest first, are the workspace's crates (README.md "Layout"): `rdmagen-base`
//! ([`diagnostics`], [`error`], [`version`], [`files`], [`yaml`]) → `rdmagen-upstream`
//! ([`kubernetes`], [`packages`], [`platform`], [`kubeflow`], [`nccl`]) → `rdmagen-rules`
//! ([`rules`]) → this crate, whose modules run in pipeline order: [`model`], [`render`],
//! [`dockerfile`], [`detect`], [`smoke`], [`nccl_log`] → [`plan`] → [`verify`] →
//! [`pipeline`] → [`emit`] → [`golden`] → [`output`] → [`cli`].
#![warn(clippy::print_stdout, clippy::print_stderr)]

// The lower layers, under the names the product's modules use (`crate::rules`,
// `crate::diagnostics`); each is its own crate so that it cannot import upward.
pub use rdmagen_base::{diagnostics, error, files, fingerprint, version, yaml};
pub use rdmagen_rules as rules;
pub use rdmagen_upstream::{
    kai, krm, kubeflow, kubernetes, kueue, multus, nccl, packages, platform,
};

pub mod cli;
pub mod detect;
pub mod dockerfile;
pub mod emit;
pub mod golden;
pub mod model;
pub mod nccl_log;
pub mod output;
pub mod pipeline;
pub mod plan;
pub mod render;
pub mod smoke;
pub mod verify;

pub use error::Error;
