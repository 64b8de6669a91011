//! rdmagen's upstream rooms: what Kubernetes, Kubeflow, NCCL, the package managers
//! and the platforms really do, each fact transcribed once with its source, below
//! every rule and decision that reads it (ARCHITECTURE.md).

#![warn(clippy::print_stdout, clippy::print_stderr)]

// The base layer's modules under their own names, so `crate::diagnostics` reads the
// same in every layer.
pub use rdmagen_base::{diagnostics, error, files, fingerprint, version, yaml};

pub mod kai;
pub mod krm;
pub mod kubeflow;
pub mod kubernetes;
pub mod kueue;
pub mod multus;
pub mod nccl;
pub mod packages;
pub mod platform;
pub mod shell;
pub mod torchrun;
