//! The Pool: what a platform team knows about a set of GPU nodes and their network.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::kubernetes::input_schema as k8s;
use crate::model::common::{ApiVersion, Metadata, ScalarString};
use crate::model::job::{EnvValue, ObjectName, Toleration, Volume};
use crate::model::target::TargetSpec;
use crate::model::topology::NodeTopology;
pub use crate::platform::{Attachment, DEFAULT_MANAGEMENT_NIC, Fabric, PartialNodeHcas, Platform};

/// A pool of GPU nodes: platform, GPUs per node, training network, scheduler.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PoolDocument {
    pub api_version: ApiVersion,
    pub kind: PoolKind,
    pub metadata: Metadata,
    pub spec: PoolSpec,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum PoolKind {
    Pool,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PoolSpec {
    /// The platform the pool belongs to; decides which NCCL variables the platform presets.
    #[serde(default)]
    pub platform: Platform,
    /// What the cluster runs: training API, operator and NCCL versions, gang scheduling.
    /// Unset fields take the platform's defaults.
    #[serde(default)]
    pub target: TargetSpec,
    pub gpu: GpuSpec,
    pub network: NetworkSpec,
    /// The pod scheduler, e.g. `{name: volcano, queue: default}`.
    #[serde(default)]
    pub scheduler: Option<SchedulerSpec>,
    /// What every job on the pool's nodes gets unless the job says otherwise.
    #[serde(default)]
    pub job_defaults: JobDefaults,
    /// What `rdmagen detect` read of a node's GPU↔NIC topology (`nvidia-smi topo -m`):
    /// each data NIC's nearest GPUs, in rail order. Informational: rdmagen does not know
    /// which GPUs a device plugin gives a pod on part of a node.
    #[serde(default)]
    pub topology: Option<NodeTopology>,
}

// The Job's own field names and types, declared again here: serde's `flatten` cannot be
// combined with `deny_unknown_fields`, and an unknown field must stay an error.
/// Defaults for every job on a pool. A job's own value wins: maps (`nodeSelector`,
/// `env`, `labels`, `annotations`) merge key by key, named lists (`volumes`,
/// `imagePullSecrets`, `initContainers`, `sidecars`) item by name, `tolerations` and
/// `envFrom` add up, `affinity` merges by kind (nodeAffinity, podAffinity,
/// podAntiAffinity), and a single value is replaced.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct JobDefaults {
    /// Node labels the pool's nodes carry, e.g. `{gpu.example.com/model: h100}`: keeps
    /// jobs off other pools' nodes that share the GPU resource name.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ScalarString>")]
    pub node_selector: BTreeMap<String, String>,
    /// Tolerations of the pool's taints.
    #[serde(default)]
    pub tolerations: Vec<Toleration>,
    /// Affinity of the pods (Kubernetes Affinity).
    #[serde(default)]
    #[schemars(with = "Option<k8s::Affinity>")]
    pub affinity: Option<Value>,
    /// Registry credentials every job needs.
    #[serde(default)]
    pub image_pull_secrets: Vec<ObjectName>,
    /// Environment variables of every job's training container.
    #[serde(default)]
    pub env: BTreeMap<String, EnvValue>,
    /// Environment from whole ConfigMaps or Secrets (Kubernetes EnvFromSource).
    #[serde(default)]
    #[schemars(with = "Vec<k8s::EnvFromSource>")]
    pub env_from: Vec<Value>,
    /// Labels of every job's PyTorchJob and pods.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ScalarString>")]
    pub labels: BTreeMap<String, String>,
    /// Annotations of every job's PyTorchJob and pods.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ScalarString>")]
    pub annotations: BTreeMap<String, String>,
    /// Volumes every job mounts, e.g. the shared dataset file system.
    #[serde(default)]
    pub volumes: Vec<Volume>,
    /// PriorityClass of the pods.
    #[serde(default)]
    pub priority_class_name: Option<String>,
    /// ServiceAccount the pods run as.
    #[serde(default)]
    pub service_account_name: Option<String>,
    /// Init containers every job runs first.
    #[serde(default)]
    #[schemars(with = "Vec<k8s::Container>")]
    pub init_containers: Vec<Value>,
    /// Sidecars every job runs (native sidecars, as a job's `sidecars`).
    #[serde(default)]
    #[schemars(with = "Vec<k8s::Container>")]
    pub sidecars: Vec<Value>,
    /// A partial PodTemplateSpec merged over every job's pods, before the job's own.
    #[serde(default)]
    #[schemars(with = "Option<k8s::PodTemplateOverlay>")]
    pub pod_template: Option<Value>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GpuSpec {
    /// Extended resource name of a GPU.
    #[serde(default = "default_gpu_resource")]
    pub resource: String,
    /// GPUs on each node.
    #[schemars(range(min = 1))]
    pub per_node: u32,
    /// GPU model, for people reading the pool.
    #[serde(default)]
    pub model: Option<String>,
}

fn default_gpu_resource() -> String {
    "nvidia.com/gpu".to_owned()
}

/// The training (data) network of the pool's nodes.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NetworkSpec {
    pub fabric: Fabric,
    /// The pool page's training-network label, e.g. "RoCE 8*200G" or "IB 4*200G".
    #[serde(default)]
    pub label: Option<String>,
    /// RDMA data NICs in order, e.g. mlx5_1..mlx5_8. Never the management NIC.
    #[serde(default)]
    #[schemars(example = ["mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4"])]
    pub hcas: Vec<String>,
    /// The management (TCP) NIC's RDMA device, kept out of NCCL_IB_HCA. Default: mlx5_0;
    /// `none` when the management NIC has no RDMA device.
    #[serde(default)]
    pub management_nic: Option<String>,
    /// The IP interface NCCL bootstraps over (NCCL_SOCKET_IFNAME), as the pod sees it:
    /// on the cluster network usually eth0, on `attachment: hostNetwork` a host
    /// interface (one of `hostInterfaces`). Default with an attachment on the cluster
    /// network: eth0.
    #[serde(default)]
    pub socket_ifname: Option<String>,
    /// The nodes' own IP interfaces (host netdevs, e.g. `[bond0, ens1f0]`), as
    /// `rdmagen detect` reads them on a node: what a `hostNetwork` pod sees, and names
    /// a pod on the cluster network does not have.
    #[serde(default)]
    pub host_interfaces: Vec<String>,
    /// How pods attach to the fabric: `shared` (the RDMA shared device plugin), `sriov`
    /// (a VF per rail through Multus), `hostdev`, `ipoib`, or `hostNetwork`. Unset:
    /// the pod requests `rdmaResource` and nothing more.
    #[serde(default)]
    pub attachment: Option<Attachment>,
    /// The RDMA devices of a whole-node pod, in GPU order: each entry a device-plugin
    /// resource with the Multus network that attaches it; `count: 8` on one entry is
    /// one pool of VFs standing for 8 rails. A pod on part of a node gets the rails of
    /// its GPUs.
    #[serde(default)]
    pub rails: Vec<Rail>,
    /// The rails' interface names inside the pod: `auto` (net1..netN, as Multus names
    /// them in annotation order) or one name per rail, written into the annotation as
    /// `network@name`.
    #[serde(default)]
    pub pod_interfaces: Option<PodInterfaces>,
    /// RoCE GID index (NCCL_IB_GID_INDEX), or "auto" for NCCL's dynamic selection.
    #[serde(default)]
    pub gid_index: Option<GidIndex>,
    /// The network NCCL is pinned to on multi-node RDMA jobs (NCCL_NET), so that a
    /// broken fabric fails at init instead of falling back to sockets: `IB` (the
    /// default: NCCL's verbs transport, InfiniBand and RoCE), the exact name the
    /// image's net plugin reports (`IBext_v8`, `gIB`), or `off` to leave NCCL free.
    #[serde(default)]
    pub nccl_net: Option<NcclNet>,
    /// Run rdmagen's in-pod preflight (README: "The in-pod preflight") before every
    /// RDMA job's command on this pool; a job's `preflight` wins. Default off.
    #[serde(default)]
    pub preflight: Option<bool>,
    /// Extended resource of the RDMA device plugin. Default: ib → rdma/hca, roce → rdma/shared.
    #[serde(default)]
    pub rdma_resource: Option<String>,
    /// NCCL_IB_TIMEOUT (0-31; 0 waits forever).
    #[serde(default)]
    pub ib_timeout: Option<u32>,
    /// NCCL_IB_QPS_PER_CONNECTION (1-128).
    #[serde(default)]
    pub qps_per_connection: Option<u32>,
    /// NCCL_CROSS_NIC (0, 1 or 2).
    #[serde(default)]
    pub cross_nic: Option<u32>,
    /// NCCL_IB_TC: the traffic class of a lossless RoCE fabric's QoS setup (OCI: 41).
    /// Only on platforms that leave QoS to the user.
    #[serde(default)]
    pub traffic_class: Option<u32>,
    /// NCCL_IB_SL: the InfiniBand service level (0-15). Only on platforms that leave
    /// QoS to the user.
    #[serde(default)]
    pub service_level: Option<u32>,
    /// Which data NICs a job on part of a node uses: `first` (the first ceil(k·H/G), seed
    /// 001's table) or `all` (every data NIC; NCCL picks the nearest to each GPU).
    /// Default: the platform's.
    #[serde(default)]
    pub partial_node_hcas: Option<PartialNodeHcas>,
}

/// One rail entry: a device-plugin resource, how many of its devices, and the Multus
/// network (NetworkAttachmentDefinition) that attaches each of them.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Rail {
    /// Extended resource of the rail's device, e.g. nvidia.com/rail1 (SR-IOV, one per
    /// rail), nvidia.com/sriov_rdma (one pool of VFs) or nvidia.com/hostdev.
    pub resource: String,
    /// How many rails this entry stands for: each is one device of `resource` and, with
    /// `network`, one entry of the Multus annotation. Default 1.
    #[serde(default = "one")]
    #[schemars(range(min = 1))]
    pub count: u32,
    /// The Multus network (NetworkAttachmentDefinition) of each device, a DNS-1123
    /// label. None on `hostNetwork`, or where the device needs no secondary network.
    #[serde(default)]
    pub network: Option<String>,
    /// The network's namespace; default the pod's (Multus reads a name without one in
    /// the pod's namespace).
    #[serde(default)]
    pub namespace: Option<String>,
}

fn one() -> u32 {
    1
}

/// The rails' interface names inside the pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodInterfaces {
    /// net1..netN, as Multus names them in annotation order.
    Auto,
    /// One name per rail, in rail order.
    Named(Vec<String>),
}

/// Written as a Pool reads it: `auto`, or the list of names.
impl Serialize for PodInterfaces {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PodInterfaces::Auto => s.serialize_str("auto"),
            PodInterfaces::Named(names) => names.serialize(s),
        }
    }
}

impl JsonSchema for PodInterfaces {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "PodInterfaces".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "`auto` (net1..netN, as Multus names them in annotation order) or one interface name per rail.",
            "anyOf": [{"const": "auto"}, {"type": "array", "items": {"type": "string"}}]
        })
    }
}

impl<'de> Deserialize<'de> for PodInterfaces {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::String(text) if text == "auto" => Ok(PodInterfaces::Auto),
            Value::Array(items) => items
                .into_iter()
                .map(|item| match item {
                    Value::String(name) => Ok(name),
                    other => Err(serde::de::Error::custom(format!(
                        "invalid interface name {other}: expected a string"
                    ))),
                })
                .collect::<Result<_, _>>()
                .map(PodInterfaces::Named),
            other => Err(serde::de::Error::custom(format!(
                "invalid podInterfaces {other}: expected `auto` or a list of names"
            ))),
        }
    }
}

impl NetworkSpec {
    /// The management NIC's RDMA device: the pool's, or mlx5_0 when it names none.
    pub fn management_device(&self) -> &str {
        self.management_nic
            .as_deref()
            .unwrap_or(DEFAULT_MANAGEMENT_NIC)
    }
}

/// The network NCCL_NET pins, or `off` for no pin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NcclNet {
    Off,
    /// A network's name as NCCL or its plugin reports it (`Initialized NET plugin
    /// <name>` in the log from NCCL 2.27): one printable line, no space around it.
    Name(String),
}

impl Serialize for NcclNet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            NcclNet::Off => "off",
            NcclNet::Name(name) => name,
        })
    }
}

impl JsonSchema for NcclNet {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NcclNet".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The network NCCL_NET pins on multi-node RDMA jobs: `IB` (NCCL's verbs transport), a net plugin's exact name (`IBext_v8`, `gIB`), or `off`; one line with no space at either end, as NCCL compares it whole",
            "type": "string",
            "minLength": 1,
            "maxLength": 64,
            "pattern": "^[^\\s\\u0000-\\u001f\\u007f-\\u009f](?:[^\\u0000-\\u001f\\u007f-\\u009f]*[^\\s\\u0000-\\u001f\\u007f-\\u009f])?$",
            "examples": ["IB", "IBext_v8", "off"]
        })
    }
}

impl<'de> Deserialize<'de> for NcclNet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text == "off" {
            return Ok(NcclNet::Off);
        }
        let printable = !text.chars().any(char::is_control);
        if text.is_empty() || text.trim() != text || !printable || text.chars().count() > 64 {
            return Err(serde::de::Error::custom(
                "ncclNet names one network as NCCL reports it (`IB`, `IBext_v8`, `gIB`; at most 64 characters, no control characters, no space at either end), or `off`",
            ));
        }
        Ok(NcclNet::Name(text))
    }
}

/// A GID index, or `auto` to leave it to NCCL's dynamic selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GidIndex {
    Index(u32),
    Auto,
}

/// Written as a Pool reads it: the number, or `auto`.
impl Serialize for GidIndex {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            GidIndex::Index(index) => s.serialize_u32(*index),
            GidIndex::Auto => s.serialize_str("auto"),
        }
    }
}

impl JsonSchema for GidIndex {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "GidIndex".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A GID index, or `auto` to leave it to NCCL's dynamic selection.",
            "anyOf": [{"type": "integer", "minimum": 0}, {"const": "auto"}]
        })
    }
}

impl<'de> Deserialize<'de> for GidIndex {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        if text == "auto" {
            return Ok(GidIndex::Auto);
        }
        text.parse().map(GidIndex::Index).map_err(|_| {
            serde::de::Error::custom(format!(
                "invalid GID index `{text}`: expected a non-negative integer or `auto`"
            ))
        })
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SchedulerSpec {
    /// schedulerName of the pods, e.g. volcano or kai-scheduler (NVIDIA's KAI
    /// scheduler); or `kueue`, which queues and admits jobs for the default scheduler
    /// (no schedulerName is written).
    pub name: String,
    /// The queue. Volcano: written to runPolicy.schedulingPolicy.queue (read by the
    /// operator under gang scheduling) and to the pods' `scheduling.volcano.sh/queue-name`
    /// annotation (read by Volcano without it). Kueue: the LocalQueue, as the job
    /// object's `kueue.x-k8s.io/queue-name` label (never on its pods). KAI: the job
    /// object's `kai.scheduler/queue` label.
    #[serde(default)]
    pub queue: Option<String>,
    /// Topology-aware scheduling. Kueue: every pod of a replica type (a pod set) in one
    /// domain of this topology level, a node label. KAI: every pod of the job in one
    /// domain of a level of the KAI Topology `name`.
    #[serde(default)]
    pub topology: Option<TopologyRequest>,
    /// Kueue: whether its integration for the job's kind is enabled in the cluster's
    /// Kueue configuration (`kubeflow.org/pytorchjob`, which Kueue v0.19 ships off;
    /// `trainer.kubeflow.org/trainjob`, on since v0.14).
    #[serde(default)]
    pub job_integration: Option<bool>,
}

/// A topology request: one of `required` and `preferred`; for KAI, also the Topology
/// whose levels they name.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TopologyRequest {
    /// KAI only: the name of the cluster's Topology object (kai.scheduler/v1alpha1),
    /// written as the job's `kai.scheduler/topology` annotation. Kueue takes its
    /// Topology from the ResourceFlavor instead.
    #[serde(default)]
    pub name: Option<String>,
    /// All pods of the pod set in one domain of this level (a node label), or not
    /// admitted.
    #[serde(default)]
    pub required: Option<String>,
    /// The same if possible, else the lowest levels that fit.
    #[serde(default)]
    pub preferred: Option<String>,
}

impl SchedulerSpec {
    /// Whether the pool's jobs are queued by Kueue.
    pub fn is_kueue(&self) -> bool {
        self.name.eq_ignore_ascii_case("kueue")
    }

    /// Whether the pool's pods are scheduled by Volcano.
    pub fn is_volcano(&self) -> bool {
        self.name.eq_ignore_ascii_case("volcano")
    }

    /// Whether the pool's pods are scheduled by NVIDIA's KAI scheduler: its default
    /// schedulerName (a cluster that renamed it is a scheduler rdmagen does not know).
    pub fn is_kai(&self) -> bool {
        self.name == crate::kai::SCHEDULER_NAME
    }

    /// The queue as Volcano reads it (runPolicy.schedulingPolicy.queue and the pods'
    /// annotation): the pool's queue, unless Kueue or KAI reads it from a label of the
    /// job object instead.
    pub fn volcano_queue(&self) -> Option<&str> {
        self.queue.as_deref().filter(|_| self.reads_volcano_queue())
    }

    /// Whether a queue goes where Volcano reads it: not on Kueue or KAI.
    pub fn reads_volcano_queue(&self) -> bool {
        !self.is_kueue() && !self.is_kai()
    }
}
