//! Kubeflow Trainer v2 (`trainer.kubeflow.org/v1alpha1`, T@tag:path:line below):
//! its releases and what each does with a TrainJob ([`release`]), and the pod its
//! controller makes of a runtime and a TrainJob ([`effective`]).

pub mod crd;
pub mod effective;
pub mod mpi;
pub mod release;

pub use effective::{PatchField, PodPatch, effective_pod, node_container_mut, pod_patches};
pub use release::Release;

/// trainer.kubeflow.org/v1alpha1 (T@v2.3.0 pkg/apis/trainer/v1alpha1/groupversion_info.go:30).
pub const API_VERSION: &str = "trainer.kubeflow.org/v1alpha1";

/// The torch plugin's trainer replicated job, and the container in it that the
/// TrainJob's `trainer` fields go to (`constants.Node`,
/// T@v2.3.0 pkg/constants/constants.go:68-69).
pub const NODE: &str = "node";

/// The values a TrainJob's `spec.managedBy` takes (trainer@v2.3.0
/// pkg/apis/trainer/v1alpha1/trainjob_types.go:143-152; the same at v2.1.0).
pub const MANAGED_BY: [&str; 2] = [
    "trainer.kubeflow.org/trainjob-controller",
    "kueue.x-k8s.io/multikueue",
];

/// The Job-template label that marks the replicated job the trainer runs in, with
/// value `trainer` (T@v2.3.0 pkg/constants/constants.go:36-41,64-66).
pub const ANCESTOR_LABEL: &str = "trainer.kubeflow.org/trainjob-ancestor-step";
