//! Resolve: Job + Pool + platform profile → Plan. Every decision is made here, once,
//! and recorded with its reason; templates only lay out what the plan holds.

mod attachment;
mod ctx;
mod decision;
pub mod defaults;
mod hca;
mod image_build;
mod kai;
mod kueue;
mod launcher;
pub mod mpi;
mod nccl_env;
mod overlay;
pub mod pod;
pub mod pod_parts;
pub mod preflight;
mod rdma;
mod resolve;
mod target;
pub mod trainer;

pub use rdma::Rdma;

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::model::job::{AccessMode, CleanPodPolicy, EnvValue, RestartPolicy};

pub use decision::Decision;
pub use image_build::ImageBuildPlan;
pub use resolve::{check_pool, resolve};
pub use target::{Api, Target, TrainerTarget, trainer_of};

/// Everything the templates need for one job, fully decided.
#[derive(Debug, Serialize)]
pub struct Plan {
    pub name: String,
    pub namespace: Option<String>,
    /// Labels of the PyTorchJob: the job's and its pool's defaults.
    pub labels: BTreeMap<String, String>,
    /// Annotations of the PyTorchJob: the job's and its pool's defaults.
    pub annotations: BTreeMap<String, String>,
    /// spec.nprocPerNode, a string as the CRD wants; unset for the legacy launcher.
    pub nproc_per_node: Option<String>,
    /// Always written, `{}` when empty (the Python SDK needs it).
    pub run_policy: RunPolicyPlan,
    pub replicas: Vec<Replica>,
    pub restart_policy: RestartPolicy,
    pub pod: Pod,
    /// PersistentVolume + PersistentVolumeClaim pairs to emit beside the job.
    pub storage: Vec<Storage>,
    /// The in-pod preflight's ConfigMap, when the job runs it (plan/preflight.rs).
    pub preflight: Option<preflight::PreflightPlan>,
    /// The job's MPIJob, for a job whose launcher is mpirun (plan/mpi.rs); its Worker
    /// pod is `pod`.
    pub mpi_job: Option<mpi::MpiJobPlan>,
    /// The job's TrainJob, for a Kubeflow Trainer v2 target (set once its pool's
    /// runtime is planned: `trainer::train_job`).
    pub train_job: Option<TrainJobPlan>,
    /// The job's Dockerfile, when it asks for one.
    #[serde(skip)]
    pub image_build: Option<ImageBuildPlan>,
    /// The cluster the plan is for (the pool's target with the platform's defaults).
    #[serde(skip)]
    pub target: Target,
    /// The annotations that say what the manifests were written for (in
    /// `annotations` too), which the job's Trainer runtime carries as well.
    #[serde(skip)]
    pub written_for: Vec<(&'static str, String)>,
    /// RDMA on or off, and the resources and networks of the pod (which of its pool's
    /// Trainer runtimes a TrainJob names depends on them).
    #[serde(skip)]
    pub rdma: rdma::Rdma,
    /// Why each choice was made, in the order they were made.
    #[serde(skip)]
    pub decisions: Vec<Decision>,
}

/// A job's TrainJob: everything the template lays out.
#[derive(Debug, Serialize)]
pub struct TrainJobPlan {
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    /// The TrainJob's `spec`, decided field by field below.
    pub spec: Value,
    /// The `node` pod Trainer makes of runtime and TrainJob, which verify checks the
    /// rendered files against.
    #[serde(skip)]
    pub effective_pod: Value,
    /// The runtime's `node` pod template, which the TrainJob patches.
    #[serde(skip)]
    pub runtime_pod: Value,
    /// The runtime as rendered, which verify judges the TrainJob with.
    #[serde(skip)]
    pub runtime_doc: Value,
    /// On an MPI runtime, the pod of each of its jobs (`launcher`, `node`) Trainer makes
    /// of it and the TrainJob (`kubeflow::trainer::mpi::effective_pods`); empty on a
    /// torch runtime, whose one pod is `effective_pod`.
    #[serde(skip)]
    pub effective_pods: Vec<(String, Value)>,
    #[serde(skip)]
    pub target: TrainerTarget,
}

#[derive(Debug, Serialize)]
pub struct Replica {
    /// `Master` or `Worker` (an MPIJob's: `Launcher` or `Worker`).
    pub role: &'static str,
    pub count: u32,
}

#[derive(Debug, Serialize)]
pub struct RunPolicyPlan {
    /// No field is set: written as `runPolicy: {}`.
    pub empty: bool,
    pub clean_pod_policy: Option<CleanPodPolicy>,
    pub backoff_limit: Option<u32>,
    pub ttl_seconds_after_finished: Option<u32>,
    pub active_deadline_seconds: Option<u64>,
    pub scheduling_policy: Option<SchedulingPlan>,
    pub suspend: Option<bool>,
    pub managed_by: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct SchedulingPlan {
    pub min_available: Option<u32>,
    pub queue: Option<String>,
    pub priority_class: Option<String>,
}

/// The pod template shared by Master and Worker.
#[derive(Debug, Serialize)]
pub struct Pod {
    /// The PodTemplateSpec (`metadata`, `spec`) as Kubernetes reads it, with every
    /// pool default and `podTemplate` overlay applied.
    pub template: Value,
    /// What rdmagen decided about the training container, read back by verify.
    #[serde(skip)]
    pub container: Container,
}

#[derive(Debug)]
pub struct Container {
    pub image: String,
    /// Exec form: no shell stands between PID 1 and the launcher.
    pub command: Vec<String>,
    pub env: Vec<EnvVar>,
    /// Requests and limits are equal.
    pub resources: BTreeMap<String, String>,
    pub capabilities: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EnvVar {
    pub name: String,
    pub value: EnvValue,
}

impl EnvVar {
    pub fn text(name: impl Into<String>, value: impl Into<String>) -> Self {
        EnvVar {
            name: name.into(),
            value: EnvValue::Text(value.into()),
        }
    }

    /// As a Kubernetes EnvVar.
    pub fn to_kubernetes(&self) -> Value {
        match &self.value {
            EnvValue::Text(value) => serde_json::json!({"name": self.name, "value": value}),
            EnvValue::From(source) => serde_json::json!({"name": self.name, "valueFrom": source}),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct NfsPlan {
    pub server: String,
    pub path: String,
}

#[derive(Debug, Serialize)]
pub struct CsiPlan {
    pub driver: String,
    pub volume_handle: String,
    pub volume_attributes: BTreeMap<String, String>,
}

#[derive(Debug, Serialize)]
pub struct Storage {
    pub volume_name: String,
    pub claim_name: String,
    pub namespace: Option<String>,
    pub capacity: String,
    pub access_mode: AccessMode,
    pub storage_class_name: String,
    pub read_only: bool,
    pub nfs: Option<NfsPlan>,
    pub csi: Option<CsiPlan>,
}
