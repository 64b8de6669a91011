//! What a pool's cluster runs: the training API, the training-operator and NCCL
//! versions, and whether Volcano gang-schedules. rdmagen's output must fit these, and
//! every decision that depends on them says so in `--explain`.

use schemars::JsonSchema;
use serde::Deserialize;

/// Release numbers sit below the model: the upstream rooms key their facts by them.
pub use crate::version::Version;

/// `spec.target` of a Pool. Every field is optional; the platform profile gives the
/// defaults (`platform::Profile::target_defaults`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TargetSpec {
    /// The training API the manifests are written for: `kubeflow.org/v1` (PyTorchJob,
    /// the default) or `trainer.kubeflow.org/v1alpha1` (Kubeflow Trainer v2: a
    /// TrainingRuntime per pool and a TrainJob per job).
    #[serde(default)]
    pub api: Option<TargetApi>,
    /// The Kubeflow Trainer release, e.g. "2.3" (with `api: trainer.kubeflow.org/v1alpha1`;
    /// default the latest rdmagen knows, 2.3). Releases differ in what a TrainJob can carry.
    #[serde(default)]
    #[schemars(with = "Option<VersionSchema>")]
    pub trainer: Option<Version>,
    /// Write a ClusterTrainingRuntime (cluster-wide, needs cluster-admin to apply)
    /// instead of a TrainingRuntime in the pool's namespace (Trainer v2 only).
    #[serde(default)]
    pub cluster_scoped: Option<bool>,
    /// The Kubeflow training-operator version, e.g. "1.9". Anything below 1.7 is the
    /// older generation: no `nprocPerNode`, no PET_* variables.
    #[serde(default)]
    #[schemars(with = "Option<VersionSchema>")]
    pub operator: Option<Version>,
    /// The Kubernetes version of the cluster, e.g. "1.31" (optional; unknown means a
    /// release Kubernetes still maintains, 1.29 or later). Decides what pod fields the
    /// cluster keeps: native sidecars need 1.29 (SidecarContainers on by default).
    #[serde(default)]
    #[schemars(with = "Option<VersionSchema>")]
    pub kubernetes: Option<Version>,
    /// The minimum NCCL version in this pool's images, e.g. "2.21".
    #[serde(default)]
    #[schemars(with = "Option<VersionSchema>")]
    pub nccl: Option<Version>,
    /// The Kubeflow mpi-operator release the cluster also runs, e.g. "0.8" (a
    /// PyTorchJob-API pool). With it, a job with `launcher: mpirun` is written as an
    /// MPIJob (`kubeflow.org/v2beta1`).
    #[serde(default)]
    #[schemars(with = "Option<VersionSchema>")]
    pub mpi_operator: Option<Version>,
    /// Whether the operator runs with `--gang-scheduler-name=volcano` (it then creates
    /// one PodGroup per job and reads runPolicy.schedulingPolicy).
    #[serde(default)]
    pub gang_scheduling: Option<bool>,
}

/// Training APIs rdmagen writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum TargetApi {
    /// Kubeflow training-operator v1: PyTorchJob.
    #[serde(rename = "kubeflow.org/v1")]
    KubeflowV1,
    /// Kubeflow Trainer v2: TrainingRuntime / ClusterTrainingRuntime and TrainJob.
    #[serde(rename = "trainer.kubeflow.org/v1alpha1")]
    TrainerV1Alpha1,
}

/// Schema of a version: a string such as "1.9"; a bare YAML number is read as its text.
pub struct VersionSchema;

impl JsonSchema for VersionSchema {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Version".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A release version, MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. \"1.9\".",
            "type": ["string", "number"]
        })
    }
}
