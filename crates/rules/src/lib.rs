//! Rules that judge a manifest, whoever wrote it: what `rdmagen lint` reports on YAML
//! that rdmagen did not write, and what `render`'s verification demands of what it did
//! write (`verify/` runs the error-level ones on every rendered object). They read
//! only the manifest and the upstream rooms (Kubernetes, Kubeflow, NCCL, platforms),
//! never the plan: a rule cannot lean on what rdmagen meant, only on what it wrote.

#![warn(clippy::print_stdout, clippy::print_stderr)]

// The lower layers' modules under their own names, so `crate::diagnostics` and
// `crate::kubeflow` read the same in every layer.
pub use rdmagen_base::{diagnostics, error, files, fingerprint, version, yaml};
pub use rdmagen_upstream::{
    krm, kubeflow, kubernetes, kueue, multus, nccl, packages, platform, shell, torchrun,
};

mod images;
mod launch;
pub mod lint;
pub mod manifest;
pub mod mpijob;
pub mod names;
pub mod pod_network;
pub mod pod_templates;
mod replica_env;
mod resources;
pub mod storage;
mod tolerations;
pub mod trainer;
