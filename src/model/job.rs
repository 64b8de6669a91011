//! The Job: what the person training asks for. It names its pool.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kubernetes::input_schema as k8s;
use crate::model::common::{ApiVersion, Metadata, ScalarString};
use crate::packages::{Family, PackageSet};

/// A distributed PyTorch training job.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JobDocument {
    pub api_version: ApiVersion,
    pub kind: JobKind,
    pub metadata: Metadata,
    pub spec: JobSpec,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum JobKind {
    Job,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JobSpec {
    /// Name of the Pool the job runs on.
    pub pool: String,
    /// Container image; it must contain NCCL and, for RDMA, the RDMA user-space packages.
    #[schemars(example = &"registry.example.com/team/trainer:1.0")]
    pub image: String,
    /// imagePullPolicy of the container.
    #[serde(default)]
    pub image_pull_policy: Option<PullPolicy>,
    /// Number of pods (one per node): one Master plus nodes-1 Workers.
    #[schemars(range(min = 1))]
    pub nodes: u32,
    /// GPUs each pod takes.
    #[schemars(range(min = 1))]
    pub gpus_per_node: u32,
    /// `auto` (the platform's rule: on for multi-node jobs on an RDMA fabric; AIStudio
    /// only for whole nodes), `on`, `off`, or CubeStudio's count `1` / `0` and typed
    /// `N(type)` such as `1(roce)` or `2(ib)`.
    #[serde(default = "default_rdma")]
    #[schemars(with = "ScalarString")]
    pub rdma: String,
    /// The network NCCL is pinned to (NCCL_NET) when the job runs RDMA on more than
    /// one node; overrides the pool's `network.ncclNet`. `off` leaves NCCL free to
    /// fall back to sockets.
    #[serde(default)]
    pub nccl_net: Option<crate::model::pool::NcclNet>,
    /// Run rdmagen's in-pod preflight (README: "The in-pod preflight") before the
    /// command: it checks the RDMA device, ports, GID, memlock, GPUDirect and
    /// NCCL_SOCKET_IFNAME, and fails the pod with one line and its own exit code.
    /// Overrides the pool's `network.preflight`; default off.
    #[serde(default)]
    pub preflight: Option<bool>,
    /// How the training processes are started. Default: torchrun with `script`, none with `command`.
    #[serde(default)]
    pub launcher: Option<Launcher>,
    /// Training script run by the launcher.
    #[serde(default)]
    pub script: Option<String>,
    /// How the script learns its local rank: `env` (only the LOCAL_RANK variable,
    /// what torchrun gives), or the argument it declares, `--local_rank` (what
    /// torch.distributed.launch passes before PyTorch 2.0; Swin-Transformer's main.py
    /// requires it) or `--local-rank` (the same launcher from 2.0). rdmagen then
    /// passes exactly that form, whichever launcher and PyTorch run the script.
    /// Unset: what the launcher passes (plan/launcher.rs).
    #[serde(default)]
    pub local_rank: Option<LocalRank>,
    /// Arguments of the script.
    #[serde(default)]
    #[schemars(with = "Vec<ScalarString>")]
    pub args: Vec<String>,
    /// An explicit command, run as given (with `launcher: none`).
    #[serde(default)]
    #[schemars(with = "Option<Vec<ScalarString>>")]
    pub command: Option<Vec<String>>,
    /// Working directory of the container.
    #[serde(default)]
    pub working_dir: Option<String>,
    /// The MPIJob of `launcher: mpirun`: the image's MPI and its user's ssh directory.
    #[serde(default)]
    pub mpi: Option<MpiSettings>,
    /// Extra environment variables of the container: a value, or
    /// `{valueFrom: <EnvVarSource>}` (a Secret or ConfigMap key, a pod field, a resource).
    #[serde(default)]
    pub env: BTreeMap<String, EnvValue>,
    /// Environment variables from whole ConfigMaps or Secrets (Kubernetes EnvFromSource).
    #[serde(default)]
    #[schemars(with = "Vec<k8s::EnvFromSource>")]
    pub env_from: Vec<Value>,
    /// Size limit of the memory-backed /dev/shm, e.g. 64Gi.
    #[serde(default)]
    #[schemars(with = "Option<ScalarString>")]
    pub shm: Option<String>,
    /// CPU and memory of each pod (requests = limits).
    #[serde(default)]
    pub resources: Resources,
    /// Volumes mounted into every pod.
    #[serde(default)]
    pub volumes: Vec<Volume>,
    /// nodeSelector of the pods.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ScalarString>")]
    pub node_selector: BTreeMap<String, String>,
    /// Tolerations of the pods.
    #[serde(default)]
    pub tolerations: Vec<Toleration>,
    /// Replica restart policy.
    #[serde(default)]
    pub restart_policy: RestartPolicy,
    /// The operator's runPolicy.
    #[serde(default)]
    pub run_policy: Option<RunPolicy>,
    /// Run pods in the host's network namespace (dnsPolicy becomes ClusterFirstWithHostNet).
    #[serde(default)]
    pub host_network: bool,
    /// Also write DIR/<job>/Dockerfile: the base image plus the RDMA user-space install.
    #[serde(default)]
    pub image_build: Option<ImageBuild>,
    /// Secrets holding credentials of a private registry, e.g. `[{name: regcred}]`.
    #[serde(default)]
    pub image_pull_secrets: Vec<ObjectName>,
    /// ServiceAccount the pods run as.
    #[serde(default)]
    pub service_account_name: Option<String>,
    /// PriorityClass of the pods.
    #[serde(default)]
    pub priority_class_name: Option<String>,
    /// Affinity of the pods (Kubernetes Affinity).
    #[serde(default)]
    #[schemars(with = "Option<k8s::Affinity>")]
    pub affinity: Option<Value>,
    /// Security settings of the training container (Kubernetes SecurityContext),
    /// merged with rdmagen's: capabilities add to IPC_LOCK, never replace it.
    #[serde(default)]
    #[schemars(with = "Option<k8s::SecurityContext>")]
    pub security_context: Option<Value>,
    /// Containers that run to completion before the training container starts.
    #[serde(default)]
    #[schemars(with = "Vec<k8s::Container>")]
    pub init_containers: Vec<Value>,
    /// Containers that run beside the training container for the pod's life, written
    /// as Kubernetes native sidecars (init containers with `restartPolicy: Always`),
    /// which stop when training ends instead of keeping the pod alive.
    #[serde(default)]
    #[schemars(with = "Vec<k8s::Container>")]
    pub sidecars: Vec<Value>,
    /// A partial Kubernetes PodTemplateSpec merged last over the rendered pod template
    /// (strategic merge: containers, env, volumes and mounts by name). What rdmagen
    /// decides (RDMA resource, IPC_LOCK, NCCL variables, the command) cannot be changed.
    #[serde(default)]
    #[schemars(with = "Option<k8s::PodTemplateOverlay>")]
    pub pod_template: Option<Value>,
}

/// A reference by name, e.g. an image pull Secret.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObjectName {
    pub name: String,
}

/// An environment variable's value: text, or where Kubernetes takes it from.
#[derive(Debug, Clone, PartialEq)]
pub enum EnvValue {
    Text(String),
    /// A Kubernetes EnvVarSource (`secretKeyRef`, `configMapKeyRef`, `fieldRef`,
    /// `resourceFieldRef`).
    From(Value),
}

impl JsonSchema for EnvValue {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "EnvValue".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let text = generator.subschema_for::<ScalarString>();
        let source = generator.subschema_for::<k8s::EnvVarSource>();
        schemars::json_schema!({
            "description": "A value, or `{valueFrom: ...}` (Kubernetes EnvVarSource).",
            "anyOf": [
                text,
                {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["valueFrom"],
                    "properties": {"valueFrom": source}
                }
            ]
        })
    }
}

impl<'de> Deserialize<'de> for EnvValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct EnvValueVisitor;

        impl<'de> serde::de::Visitor<'de> for EnvValueVisitor {
            type Value = EnvValue;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a value or {valueFrom: ...}")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<EnvValue, E> {
                Ok(EnvValue::Text(v.to_owned()))
            }

            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<EnvValue, E> {
                Ok(EnvValue::Text(v.to_string()))
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<EnvValue, E> {
                Ok(EnvValue::Text(v.to_string()))
            }

            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<EnvValue, E> {
                Ok(EnvValue::Text(v.to_string()))
            }

            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<EnvValue, E> {
                Ok(EnvValue::Text(v.to_string()))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<EnvValue, A::Error> {
                let mut source = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key != "valueFrom" {
                        return Err(serde::de::Error::unknown_field(&key, &["valueFrom"]));
                    }
                    source = Some(map.next_value::<Value>()?);
                }
                source
                    .map(EnvValue::From)
                    .ok_or_else(|| serde::de::Error::missing_field("valueFrom"))
            }
        }

        d.deserialize_str(EnvValueVisitor)
    }
}

/// How to build the job's image with the RDMA user space.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImageBuild {
    /// Base image with a tag or digest, e.g. nvcr.io/nvidia/pytorch:24.10-py3.
    #[schemars(example = &"nvcr.io/nvidia/pytorch:24.10-py3")]
    pub base: String,
    /// Packages: seed (the eight AIStudio lists), runtime, or diagnostics.
    #[serde(default)]
    pub set: PackageSet,
    /// apt or dnf, when the base image's name does not tell.
    #[serde(default)]
    pub family: Option<Family>,
}

fn default_rdma() -> String {
    "auto".to_owned()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Launcher {
    /// `torchrun <script> <args>`; nprocPerNode is the GPU count.
    Torchrun,
    /// `python -m torch.distributed.launch ...` as in the seed; nprocPerNode stays unset.
    Legacy,
    /// The command runs as given.
    None,
    /// An MPIJob (the pool's `target.mpiOperator`): its launcher runs `mpirun` with
    /// `command` (or `python <script> <args>`) once per GPU of every node.
    Mpirun,
}

/// The form in which a training script reads its local rank (`spec.localRank`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum LocalRank {
    /// Only the LOCAL_RANK variable; the script declares no local-rank argument.
    #[serde(rename = "env")]
    Env,
    /// A `--local_rank` argument (torch.distributed.launch before PyTorch 2.0).
    #[serde(rename = "--local_rank")]
    Underscore,
    /// A `--local-rank` argument (torch.distributed.launch from PyTorch 2.0).
    #[serde(rename = "--local-rank")]
    Hyphen,
}

impl LocalRank {
    /// The argument the script declares, if any.
    pub fn flag(self) -> Option<&'static str> {
        match self {
            LocalRank::Env => None,
            LocalRank::Underscore => Some("--local_rank"),
            LocalRank::Hyphen => Some("--local-rank"),
        }
    }
}

/// How a job's MPIJob runs `mpirun` (with `launcher: mpirun`).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MpiSettings {
    /// The MPI in the image: `OpenMPI` (the default), `Intel` or `MPICH`.
    #[serde(default)]
    pub implementation: Option<MpiImplementation>,
    /// The `.ssh` directory of the image's user, where the mpi-operator mounts the
    /// job's ssh key (default `/root/.ssh`: the image runs as root).
    #[serde(default)]
    pub ssh_auth_mount_path: Option<String>,
    /// The launcher runs ranks too, on a node of its own (the MPIJob's
    /// `runLauncherAsWorker`): the job's first node is the launcher's pod, with the
    /// workers' GPUs and RDMA devices, and the others are Workers. Default false.
    #[serde(default)]
    pub launcher_as_worker: Option<bool>,
}

/// The MPI implementations the mpi-operator knows (`spec.mpiImplementation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
pub enum MpiImplementation {
    #[serde(rename = "OpenMPI")]
    OpenMpi,
    Intel,
    #[serde(rename = "MPICH")]
    Mpich,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
pub enum PullPolicy {
    Always,
    IfNotPresent,
    Never,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
pub enum RestartPolicy {
    #[default]
    OnFailure,
    Never,
    Always,
    ExitCode,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Resources {
    /// CPU quantity, e.g. "64" or 500m.
    #[serde(default)]
    #[schemars(with = "Option<ScalarString>")]
    pub cpu: Option<String>,
    /// Memory quantity, e.g. 512Gi.
    #[serde(default)]
    #[schemars(with = "Option<ScalarString>")]
    pub memory: Option<String>,
}

/// A volume mounted into every pod's training container. Exactly one source:
/// `claim`, `nfs`, `csi`, `configMap`, `secret`, `hostPath` or `emptyDir`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Volume {
    pub name: String,
    pub mount_path: String,
    /// Mount one path inside the volume instead of its root.
    #[serde(default)]
    pub sub_path: Option<String>,
    #[serde(default)]
    pub read_only: bool,
    /// A ConfigMap, by name.
    #[serde(default)]
    pub config_map: Option<String>,
    /// A Secret, by name.
    #[serde(default)]
    pub secret: Option<String>,
    /// A directory on the node, by absolute path.
    #[serde(default)]
    pub host_path: Option<String>,
    /// Scratch space that lives as long as the pod.
    #[serde(default)]
    pub empty_dir: Option<EmptyDirSource>,
    /// An existing PersistentVolumeClaim.
    #[serde(default)]
    pub claim: Option<String>,
    /// An NFS export.
    #[serde(default)]
    pub nfs: Option<NfsSource>,
    /// A CSI volume (needs `persistentVolume`).
    #[serde(default)]
    pub csi: Option<CsiSource>,
    /// Also emit a PersistentVolume and PersistentVolumeClaim for the nfs/csi source and
    /// mount the claim.
    #[serde(default)]
    pub persistent_volume: Option<PersistentVolumeRequest>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EmptyDirSource {
    /// `Memory` for a tmpfs; default: the node's disk.
    #[serde(default)]
    pub medium: Option<StorageMedium>,
    /// Most the volume may hold, e.g. 100Gi.
    #[serde(default)]
    #[schemars(with = "Option<ScalarString>")]
    pub size_limit: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
pub enum StorageMedium {
    Memory,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NfsSource {
    pub server: String,
    pub path: String,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CsiSource {
    pub driver: String,
    pub volume_handle: String,
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ScalarString>")]
    pub volume_attributes: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PersistentVolumeRequest {
    /// Name of the PersistentVolumeClaim to create and mount.
    pub claim_name: String,
    /// Name of the PersistentVolume. Default: the claim name with `-pvc` replaced by `-pv`.
    #[serde(default)]
    pub volume_name: Option<String>,
    /// Capacity, e.g. 100Gi.
    #[schemars(with = "ScalarString")]
    pub capacity: String,
    #[serde(default)]
    pub access_mode: AccessMode,
    /// StorageClass; empty (the default) binds statically to the generated PV.
    #[serde(default)]
    pub storage_class_name: String,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, Serialize, JsonSchema)]
pub enum AccessMode {
    #[default]
    ReadWriteMany,
    ReadOnlyMany,
    ReadWriteOnce,
    ReadWriteOncePod,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Toleration {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<TolerationOperator>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect: Option<TaintEffect>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum TolerationOperator {
    Exists,
    Equal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum TaintEffect {
    NoSchedule,
    PreferNoSchedule,
    NoExecute,
}

/// The operator's runPolicy (spec.runPolicy of the PyTorchJob).
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RunPolicy {
    #[serde(default)]
    pub clean_pod_policy: Option<CleanPodPolicy>,
    #[serde(default)]
    pub backoff_limit: Option<u32>,
    #[serde(default)]
    pub ttl_seconds_after_finished: Option<u32>,
    #[serde(default)]
    pub active_deadline_seconds: Option<u64>,
    #[serde(default)]
    pub scheduling_policy: Option<SchedulingPolicy>,
    /// Create the job suspended (no pods until something sets it false): Kueue sets
    /// and clears it itself, so write it only to commit suspended jobs (GitOps).
    /// A TrainJob's `spec.suspend`.
    #[serde(default)]
    pub suspend: Option<bool>,
    /// The controller that reconciles the job: `kueue.x-k8s.io/multikueue` hands it to
    /// MultiKueue (PyTorchJob: operator 1.9 and later; a TrainJob's `spec.managedBy`).
    #[serde(default)]
    pub managed_by: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
pub enum CleanPodPolicy {
    All,
    Running,
    None,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SchedulingPolicy {
    #[serde(default)]
    pub min_available: Option<u32>,
    /// Overrides the pool's scheduler queue.
    #[serde(default)]
    pub queue: Option<String>,
    #[serde(default)]
    pub priority_class: Option<String>,
}
