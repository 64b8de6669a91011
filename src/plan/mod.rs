//! Resolve: Job + Pool + platform profile → Plan. Every decision is made here, once,
//! and recorded with its reason; templates only lay out what the plan holds.

mod decision;
mod hca;
mod image_build;
mod launcher;
mod nccl_env;
mod pod;
mod quantity;
mod rdma;
mod resolve;
mod target;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::spec::job::{
    AccessMode, CleanPodPolicy, PullPolicy, RestartPolicy, TaintEffect, TolerationOperator,
};

pub use decision::Decision;
pub use image_build::ImageBuildPlan;
pub use resolve::{check_pool, resolve};
pub use target::Target;

/// Everything the templates need for one job, fully decided.
#[derive(Debug, Serialize)]
pub struct Plan {
    pub name: String,
    pub namespace: Option<String>,
    pub labels: BTreeMap<String, String>,
    /// spec.nprocPerNode, a string as the CRD wants; unset for the legacy launcher.
    pub nproc_per_node: Option<String>,
    /// Always written, `{}` when empty (the Python SDK needs it).
    pub run_policy: RunPolicyPlan,
    pub replicas: Vec<Replica>,
    pub restart_policy: RestartPolicy,
    pub pod: Pod,
    /// PersistentVolume + PersistentVolumeClaim pairs to emit beside the job.
    pub storage: Vec<Storage>,
    /// The job's Dockerfile, when it asks for one.
    #[serde(skip)]
    pub image_build: Option<ImageBuildPlan>,
    /// The cluster the plan is for (the pool's target with the platform's defaults).
    #[serde(skip)]
    pub target: Target,
    /// Why each choice was made, in the order they were made.
    #[serde(skip)]
    pub decisions: Vec<Decision>,
}

#[derive(Debug, Serialize)]
pub struct Replica {
    /// `Master` or `Worker`.
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
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub scheduler_name: Option<String>,
    pub host_network: bool,
    pub dns_policy: Option<&'static str>,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<TolerationPlan>,
    pub container: Container,
    pub volumes: Vec<PodVolume>,
}

/// Printed as one flow mapping; absent fields are left out.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TolerationPlan {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator: Option<TolerationOperator>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect: Option<TaintEffect>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

#[derive(Debug, Serialize)]
pub struct Container {
    pub image: String,
    pub image_pull_policy: Option<PullPolicy>,
    /// Exec form: no shell stands between PID 1 and the launcher.
    pub command: Vec<String>,
    pub working_dir: Option<String>,
    pub env: Vec<EnvVar>,
    /// Requests and limits are equal.
    pub resources: BTreeMap<String, String>,
    pub capabilities: Vec<&'static str>,
    pub mounts: Vec<Mount>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Serialize)]
pub struct Mount {
    pub name: String,
    pub mount_path: String,
    pub read_only: bool,
}

/// A pod volume; exactly one source is set.
#[derive(Debug, Default, Serialize)]
pub struct PodVolume {
    pub name: String,
    pub memory: Option<MemoryVolume>,
    pub claim: Option<String>,
    pub nfs: Option<NfsPlan>,
    pub read_only: bool,
}

#[derive(Debug, Serialize)]
pub struct MemoryVolume {
    pub size_limit: Option<String>,
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
