//! The rule catalogue: every mistake rdmagen reports has a stable ID, a severity, a
//! one-line summary, an explanation and the source of the fact it enforces.
//! Resolve-time checks, manifest verification and lint all report through this table.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        })
    }
}

/// One catalogue entry.
#[derive(Debug)]
pub struct RuleInfo {
    pub rule: Rule,
    /// Stable identifier, never reused.
    pub id: &'static str,
    pub severity: Severity,
    /// The YAML could not be read at all: exit code 2 rather than 1.
    pub syntax: bool,
    pub summary: &'static str,
    pub explanation: &'static str,
    /// Where the fact behind the rule comes from.
    pub source: &'static str,
}

// A source is one place a reader can open: a URL, or a path in this repository
// (with an optional #heading). Facts from the platform pages the project started from,
// or read across several upstream files, are quoted in docs/sources.md.
const SEED_AISTUDIO: &str = "docs/sources.md#seed-000-aistudio-rdma-network-page";
const SEED_CUBESTUDIO: &str =
    "docs/sources.md#seed-001-cubestudio-rdma-and-distributed-training-page";
/// The operator's validating webhook: names, replicas, containers, images.
const WEBHOOK: &str = "https://github.com/kubeflow/training-operator/blob/v1.9.0/pkg/webhooks/pytorch/pytorchjob_webhook.go";
/// The environment the operator gives each pod: MASTER_*, WORLD_SIZE, RANK, PET_*.
const OPERATOR_ENV: &str =
    "https://github.com/kubeflow/training-operator/blob/v1.9.0/pkg/controller.v1/pytorch/envvar.go";
const PYTORCHJOB_CRD: &str = "https://github.com/kubeflow/training-operator/blob/v1.9.0/manifests/base/crds/kubeflow.org_pytorchjobs.yaml";
/// torchrun's options, and what it reads from PET_* when they are not given.
const TORCHRUN: &str = "https://github.com/pytorch/pytorch/blob/v2.5.1/torch/distributed/run.py";
const NCCL_DOCS: &str = "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html";
/// NCCL's dynamic GID selection (2.21 and later), at the commit real-clusters were read.
const NCCL_GID_SELECTION: &str =
    "https://github.com/NVIDIA/nccl/blob/5067397c/src/transport/net_ib/connect.cc#L279-L335";
const CAPTURES: &str = "docs/sources.md#capture-formats";
/// Kubernetes' validation of a container's resources (validateResourceRequirements),
/// at the release whose schemas rdmagen embeds.
const K8S_RESOURCE_REQUIREMENTS: &str = "https://github.com/kubernetes/kubernetes/blob/v1.33.3/pkg/apis/core/validation/validation.go#L7123-L7190";
/// Each request's and limit's value (ValidateResourceQuantityValue).
const K8S_TOLERATIONS: &str = "https://github.com/kubernetes/kubernetes/blob/v1.33.3/pkg/apis/core/validation/validation.go#L4019-L4065";
const K8S_RESOURCE_QUANTITY: &str = "https://github.com/kubernetes/kubernetes/blob/v1.33.3/pkg/apis/core/validation/validation.go#L7410-L7420";
/// ValidateLabels: every label key a qualified name, every value a label value.
const K8S_LABELS: &str = "https://github.com/kubernetes/apimachinery/blob/v0.33.3/pkg/apis/meta/v1/validation/validation.go#L104-L122";
/// ValidateAnnotations and the 256 KiB total (TotalAnnotationSizeLimitB).
const K8S_ANNOTATIONS: &str = "https://github.com/kubernetes/apimachinery/blob/v0.33.3/pkg/api/validation/objectmeta.go#L36-L67";
/// ValidateVolumes: each volume's name a DNS-1123 label, never twice.
const K8S_VOLUMES: &str = "https://github.com/kubernetes/kubernetes/blob/v1.33.3/pkg/apis/core/validation/validation.go#L409-L452";
/// validateContainerCommon's name check; uniqueness in validateContainers (L3700-L3707)
/// and validateInitContainers (L3568-L3574).
const K8S_CONTAINER_NAMES: &str = "https://github.com/kubernetes/kubernetes/blob/v1.33.3/pkg/apis/core/validation/validation.go#L3614-L3621";
/// validateContainerPorts: IsValidPortName, unique within a container.
const K8S_PORT_NAMES: &str = "https://github.com/kubernetes/kubernetes/blob/v1.33.3/pkg/apis/core/validation/validation.go#L2577-L2592";
/// ValidateEnv with IsRelaxedEnvVarName (the RelaxedEnvironmentVariableValidation gate,
/// beta and on since 1.32).
const K8S_ENV_NAMES: &str = "https://github.com/kubernetes/kubernetes/blob/v1.33.3/pkg/apis/core/validation/validation.go#L2616-L2637";
/// The name formats of ConfigMaps, Secrets, ServiceAccounts and claims
/// (NameIsDNSSubdomain), as envFrom, valueFrom and serviceAccountName are checked.
const K8S_OBJECT_NAMES: &str =
    "https://github.com/kubernetes/apimachinery/blob/v0.33.3/pkg/api/validation/generic.go#L36-L79";
/// A custom resource's metadata on create: ValidateObjectMetaAccessor with
/// NameIsDNSSubdomain.
const K8S_CUSTOM_RESOURCE_META: &str = "https://github.com/kubernetes/apiextensions-apiserver/blob/v0.33.3/pkg/registry/customresource/validator.go#L53";

/// Declares every rule once: each entry becomes a variant of `Rule` and, at the same
/// index, its `RuleInfo` in `CATALOGUE` (the shape of ruff's `codes.rs`). The order of
/// the entries is the order `rdmagen rules` lists them and findings at one position sort
/// in. IDs are never reused: RDG091 (rendered webhook rules) was folded into
/// RDG064-RDG070.
macro_rules! rules {
    ($( $rule:ident $id:literal $sev:ident $syntax:literal, $summary:literal, $source:expr, $explanation:literal; )*) => {
        /// Every rule rdmagen knows, by name. `Rule::info` gives its catalogue entry.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Rule {
            $( $rule, )*
        }

        /// Every rule's entry, in the order of `Rule`'s variants.
        pub static CATALOGUE: &[RuleInfo] = &[$(RuleInfo {
            rule: Rule::$rule,
            id: $id,
            severity: Severity::$sev,
            syntax: $syntax,
            summary: $summary,
            explanation: $explanation,
            source: $source,
        }),*];

        impl Rule {
            pub fn info(self) -> &'static RuleInfo {
                // Both lists come from the one list above, so the variant's index is its
                // entry's.
                &CATALOGUE[self as usize]
            }
        }
    };
}

rules! {
    YamlSyntax "RDG001" Error true,
        "the file is not valid YAML", "https://yaml.org/spec/1.2.2/",
        "The parser stopped at this position. Nothing is rendered until every input parses.";
    DuplicateKey "RDG002" Error true,
        "a mapping repeats a key", "https://yaml.org/spec/1.2.2/#mapping",
        "Kubernetes tooling silently keeps one of two duplicate keys; rdmagen refuses the file so the surviving value is never a surprise.";
    YamlBudget "RDG176" Error true,
        "a file holds more YAML documents or nodes than rdmagen reads from one file", "crates/base/src/yaml/tree.rs",
        "rdmagen reads at most 100 000 documents and 3 000 000 nodes (scalars, sequences, mappings) from one YAML file, as it reads at most `--max-file-size` bytes: a file of millions of tiny documents, well under the size cap, would otherwise take minutes and gigabytes. The finding points at the first document or node past the budget, and nothing in the file is rendered. Real inputs and manifests are far below both; split a larger file into several.";
    UnknownDocument "RDG003" Error false,
        "a document is not an rdmagen Job or Pool", "schemas/job.schema.json",
        "Every document needs `apiVersion: rdmagen/v1alpha1` and `kind: Job` or `kind: Pool`.";
    InputShape "RDG004" Error false,
        "a field is unknown or has the wrong type", "schemas/",
        "Inputs are strict: an unknown field is an error rather than being ignored, because a misspelt field would otherwise be a silently missing setting.";
    UnknownPool "RDG005" Error false,
        "the job names a pool that no input defines", "schemas/job.schema.json",
        "Pools come from the inputs or from `--pools`. Check the spelling of `spec.pool` or pass the file that defines it.";
    DuplicateName "RDG006" Error false,
        "two jobs in one namespace or two pools share a name", "README.md",
        "A job's name and namespace name its Kubernetes objects and its output directory; pool names are how jobs refer to pools. Two jobs may share a name only in different namespaces (their directories are then `<job>.<namespace>`); pool names must be unique.";
    InvalidJobName "RDG007" Error false,
        "the job name is not a valid PyTorchJob name", WEBHOOK,
        "The operator's webhook requires a DNS-1035 label (lowercase letters, digits and '-', starting with a letter). Pods and their Services are named `<job>-worker-<n>`, which must also fit in 63 characters.";
    InvalidQuantity "RDG008" Error false,
        "a resource quantity is not in Kubernetes' syntax, is negative, or sizes /dev/shm at 0", "https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/",
        "Requests, limits and `shm` are Kubernetes quantities: a number with an optional suffix (`64Gi`, `500m`, `1e3`); a space or a unit such as `GB` is not one. The API server rejects a negative request or limit, and a /dev/shm of size 0 holds nothing (leave `shm` out for no size limit).";
    InvalidNamespace "RDG116" Error false,
        "the job's namespace is not a DNS-1123 label", "https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#dns-label-names",
        "The API server accepts only a namespace of at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit. rdmagen also names the job's output directory `<job>.<namespace>`, which relies on a namespace having no dot or slash.";
    InvalidEnvName "RDG114" Error false,
        "an environment variable name the API server refuses: empty, with `=`, or not printable ASCII", K8S_ENV_NAMES,
        "A process environment is a list of `NAME=value` strings, so a name cannot be empty or hold `=`. Kubernetes 1.33 accepts any other printable ASCII character in a name or an envFrom prefix (IsRelaxedEnvVarName, behind the RelaxedEnvironmentVariableValidation gate, beta and on since 1.32): a tab, a line break, U+2028 or any other non-ASCII character is refused, and so is the pod. Checked in a job's and pool's `env`, and in every container of everything rendered or linted.";
    EnvValueFrom "RDG115" Error false,
        "an environment variable's valueFrom does not name exactly one source", "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#environment-variables",
        "valueFrom takes exactly one of fieldRef, resourceFieldRef, configMapKeyRef or secretKeyRef; the API server refuses none or several.";
    RdmaOnTcpPool "RDG010" Error false,
        "RDMA is asked for on a pool whose fabric is tcp", SEED_AISTUDIO,
        "A pool without RoCE or InfiniBand has no RDMA device to hand out; the pod would stay Pending on the RDMA resource or NCCL would fall back to sockets.";
    RdmaTypeMismatch "RDG011" Error false,
        "the `N(type)` RDMA request names a fabric other than the pool's", SEED_CUBESTUDIO,
        "CubeStudio maps `N(ib)` to rdma/hca and `N(roce)` to rdma/shared. Asking for the other fabric's resource requests a device the nodes do not have; CubeStudio itself then silently requests nothing.";
    RdmaRequestSyntax "RDG118" Error false,
        "the RDMA request is not auto, on, off, a count or `N(type)`", "schemas/job.schema.json",
        "`rdma` takes `auto` (the platform decides), `on`, `off`, a count of RDMA devices per pod such as `1`, or CubeStudio's `N(type)` such as `1(roce)`. Anything else is refused rather than guessed at.";
    RdmaUnknownType "RDG012" Error false,
        "the `N(type)` RDMA request names a type other than roce or ib", SEED_CUBESTUDIO,
        "CubeStudio's get_rdma() returns 0 for a type it does not know, which disables RDMA without a word. rdmagen reports it instead.";
    RocePartialNode "RDG013" Warning false,
        "RDMA is forced on for a job on part of a node of a platform that turns it off there", SEED_AISTUDIO,
        "AIStudio turns RDMA on at 8 GPUs and off below, and warns that forcing it on for fewer GPUs over RoCE can cause communication problems. Other platforms turn it on for any multi-node job.";
    GpusAbovePool "RDG014" Error false,
        "the job asks for more GPUs per node than the pool's nodes have", "schemas/pool.schema.json",
        "A pod cannot span nodes; a request above the node's GPU count leaves it Pending forever.";
    RdmaResourceIsGpu "RDG113" Error false,
        "the pool's rdmaResource is its GPU resource", "schemas/pool.schema.json",
        "`network.rdmaResource` names the RDMA device plugin's extended resource (ib: rdma/hca, roce: rdma/shared by default) and `gpu.resource` the GPUs'. A container's resources are a map from resource name to count, so one name cannot request both the GPUs and the RDMA device.";
    PartialNodeNics "RDG016" Info false,
        "a job on part of a node uses NICs chosen without knowing its GPUs", "docs/sources.md#partial-node-jobs-and-nic-locality",
        "Neither rdmagen nor the device plugin knows which GPUs a pod on part of a node gets, so the NIC list cannot follow GPU locality. With `partialNodeHcas: first` the pod gets the first ceil(k·H/G) data NICs, which may be far from its GPUs (no GPUDirect RDMA, traffic across the CPU interconnect); with `all`, NCCL picks the NIC nearest each GPU. The pool's `network.partialNodeHcas` chooses; each platform has a default.";
    SocketIfnameNotInPod "RDG177" Warning false,
        "the bootstrap interface (the pool's socketIfname, a manifest's NCCL_SOCKET_IFNAME) is not one the pod has", "https://github.com/oracle-quickstart/oci-hpc-oke/blob/main/docs/running-pytorch-jobs-on-oke-using-hostnetwork-with-rdma.md",
        "NCCL_SOCKET_IFNAME names an interface inside the pod. A pod on the cluster network has eth0 (Multus's delegate 0) and its rails' net1..netN, never the host's netdevs such as bond0; a pod on the host's network (`attachment: hostNetwork`, `hostNetwork: true`) has only the host's, so `eth0` is right there only where the host has an eth0 (OCI's shapes do). The pool's `hostInterfaces` names the host's netdevs (`rdmagen detect` reads them); `lint` reports a hostNetwork pod whose NCCL_SOCKET_IFNAME names eth0 (`eth0`, `=eth0`, or a list holding it) unless the platform (`--platform`) documents an eth0 on its hosts. NCCL finds no interface of that name and the job fails at start-up.";
    HostHcaInPod "RDG178" Warning false,
        "host RDMA device names (the pool's hcas, a manifest's NCCL_IB_HCA) are given to pods that see only their own VFs", "https://github.com/skypilot-org/skypilot/blob/master/sky/provision/kubernetes/oci_nccl.py",
        "An SR-IOV VF or a host device moved into a pod keeps the RDMA device name the host gave it when it was created (`mlx5_<k>`, k by creation order and node), so host names do not name what the pod has. rdmagen writes no NCCL_IB_HCA on such a pod: NCCL then uses every RDMA device in the pod, which are exactly its rails. In a pool, remove `hcas`, or use an attachment whose pods see the host's names (shared, ipoib, hostNetwork). `lint` reports a pod with Multus networks (`k8s.v1.cni.cncf.io/networks`) and an SR-IOV or host-device resource whose NCCL_IB_HCA lists exact names (`=mlx5_1,mlx5_2`) or names with an index (`mlx5_3`): NCCL finds none of them, or the wrong ones, and falls back to sockets. Write the prefix `mlx5` (SkyPilot's OCI SR-IOV path does), or leave NCCL_IB_HCA unset.";
    AttachmentShape "RDG179" Error false,
        "the pod's attachment cannot work as written: the pool's, or a Multus annotation Multus refuses", "https://github.com/k8snetworkplumbingwg/multus-cni/blob/v4.3.0/pkg/k8sclient/k8sclient.go#L175-L250",
        "Each attachment has a shape: `shared` is one resource of the shared device plugin (`rdmaResource`), not rails; `sriov` needs rails, and each SR-IOV or host-device rail its Multus network (the device reaches the pod through its NetworkAttachmentDefinition); a pod on the host's network takes no Multus network. Multus refuses a network or namespace that is not a DNS-1123 label and an interface name longer than 15 characters or holding `/` or whitespace (parsePodNetworkObjectName), and `podInterfaces` needs one name per rail. `lint` reports a manifest's `k8s.v1.cni.cncf.io/networks` annotation that Multus cannot parse (parsePodNetworkAnnotation: JSON when the value holds `[`, `{` or `\"`, else `[namespace/]name[@ifname]` items separated by commas): Multus fails the pod's network set-up, and the pod never starts.";
    MultusDeviceMismatch "RDG180" Warning false,
        "the pod's Multus networks and its attached devices disagree in count", "https://github.com/k8snetworkplumbingwg/multus-cni/blob/v4.3.0/pkg/k8sclient/k8sclient.go#L296-L320",
        "Each entry of `k8s.v1.cni.cncf.io/networks` whose NetworkAttachmentDefinition names a device-plugin resource takes the next device of that resource the kubelet gave the pod (getKubernetesDelegate). With fewer devices than entries the pod's sandbox fails to start; with more, the extra VFs are held and never attached. An RDMA-off job that drops one rail's resource but keeps the annotation, or a smoke test that asks for one VF beside eight networks, are the usual causes. The shared device plugin's `rdma/` resource is a pod slot, not one device per network, and is not counted.";
    ShmTooSmall "RDG017" Warning false,
        "/dev/shm is smaller than 1Gi on a GPU job", "https://github.com/NVIDIA/nccl/issues/1518",
        "NCCL's shared-memory transport and data-loader workers live in /dev/shm; a few hundred MiB runs out as soon as several GPUs or workers share it (`shm: 64` is 64 bytes, not 64Gi).";
    ShmAboveMemory "RDG018" Warning false,
        "/dev/shm is larger than the pod's memory limit", "https://kubernetes.io/docs/concepts/storage/volumes/#emptydir",
        "A memory-backed emptyDir is capped by the pod's memory limit, and what it holds counts toward that limit: the pod is OOM-killed before /dev/shm reaches its size. Raise `resources.memory` or lower `shm`.";
    IbTcSet "RDG020" Error false,
        "NCCL_IB_TC or NCCL_IB_SL is set on a platform that owns the fabric's QoS", SEED_AISTUDIO,
        "The traffic class and service level must match the switches' PFC/ECN setup. Where the platform owns it (AIStudio: no need to set NCCL_IB_TC, do not change it) a user value breaks that setup. On self-built fabrics they are the pool's `trafficClass` and `serviceLevel` (e.g. OCI's lossless RoCE uses 41).";
    OperatorManagedEnv "RDG021" Error false,
        "the job sets a variable the training operator injects", OPERATOR_ENV,
        "The operator appends MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK and PET_* to every container. Setting them by hand leaves duplicate names whose winner depends on the consumer. On Kubeflow Trainer v2 the torch plugin sets PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR and PET_MASTER_PORT in the `node` container and refuses a TrainJob that sets one (pkg/runtime/framework/plugins/torch/torch.go:66-77); other PET_* (PET_MAX_RESTARTS, say) are torchrun options a job may set.";
    OverridesPlatformPreset "RDG022" Warning false,
        "the job overrides a variable the platform presets", SEED_AISTUDIO,
        "AIStudio presets NCCL_IB_GID_INDEX, NCCL_IB_HCA and NCCL_CROSS_NIC on RoCE and advises not to change them; CCE injects its NCCL variables only when the YAML does not declare them. The job's value is kept.";
    IbDisableWithRdma "RDG023" Error false,
        "NCCL_IB_DISABLE=1 while RDMA is on", NCCL_DOCS,
        "NCCL_IB_DISABLE=1 makes NCCL use sockets even though an RDMA device was requested: the job runs, slowly, and holds the RDMA resource for nothing.";
    OverridesPoolValue "RDG024" Info false,
        "the job sets a variable rdmagen would derive from the pool", "schemas/pool.schema.json",
        "The job's value replaces the pool's. Prefer fixing the pool if the pool is wrong.";
    CommandConflict "RDG030" Error false,
        "command, script and launcher do not fit together", "schemas/job.schema.json",
        "`script` (with `args`) is run by the launcher; `command` is run as given and needs `launcher: none`. Exactly one of the two is required.";
    LegacyLauncher "RDG031" Info false,
        "the legacy torch.distributed.launch form is used", "https://github.com/pytorch/pytorch/blob/v2.5.0/torch/distributed/launch.py",
        "torch.distributed.launch is deprecated. With it rdmagen leaves spec.nprocPerNode unset so that WORLD_SIZE counts pods, which is what `--nnodes $(WORLD_SIZE)` needs; with an integer nprocPerNode the rendezvous would wait forever.";
    WorldSizeNnodes "RDG032" Error false,
        "`--nnodes $WORLD_SIZE` while nprocPerNode is an integer", OPERATOR_ENV,
        "Since operator v1.7 WORLD_SIZE = pods × nprocPerNode when nprocPerNode is an integer, so `--nnodes $WORLD_SIZE` asks for N times too many nodes and the rendezvous waits forever. Use torchrun with no distributed flags (it reads PET_NNODES), `--nnodes $PET_NNODES`, or leave nprocPerNode unset.";
    LauncherlessNproc "RDG033" Warning false,
        "nprocPerNode is an integer above 1 but the command starts no launcher", OPERATOR_ENV,
        "With an integer nprocPerNode the operator sets WORLD_SIZE = pods × nprocPerNode. A script that calls init_process_group itself starts one process per pod, so the group never fills and the job hangs. Start it with torchrun, or leave nprocPerNode unset.";
    ElasticStandalone "RDG034" Error false,
        "elasticPolicy.standalone is true", "https://github.com/kubeflow/training-operator/blob/v1.9.0/pkg/controller.v1/pytorch/elastic.go",
        "The operator sets PET_STANDALONE to an empty string, and torchrun reads it with int(), which fails before training starts.";
    ShellWrapper "RDG035" Info false,
        "the command runs through `sh -c`", SEED_CUBESTUDIO,
        "On platforms that inject NCCL variables into PID 1 (Baidu CCE), processes started through sh may not inherit them. Exec form (a command list without a shell) avoids this and avoids quoting mistakes.";
    ElasticNprocConflict "RDG036" Error false,
        "elasticPolicy.nProcPerNode and spec.nprocPerNode are both set", WEBHOOK,
        "The webhook rejects the job: elasticPolicy.nProcPerNode is deprecated and forbidden together with spec.nprocPerNode.";
    OldOperatorNproc "RDG037" Error false,
        "a manifest relies on nprocPerNode or PET_* on a training-operator before 1.7", "docs/sources.md#training-operator-generations",
        "Operators before 1.7 (and CubeStudio's v1-8a066f9) have no nprocPerNode in their CRD: the field is pruned, no PET_* variables are set, and a bare `torchrun script.py` trains each pod alone on one GPU with rendezvous at 127.0.0.1. Leave nprocPerNode unset and pass --nnodes=$(WORLD_SIZE) --node_rank=$(RANK) --nproc_per_node=G --master_addr=$(MASTER_ADDR) --master_port=$(MASTER_PORT).";
    GidIndexOnIb "RDG040" Warning false,
        "a GID index is set on an InfiniBand pool", NCCL_DOCS,
        "NCCL ignores NCCL_IB_GID_INDEX on an InfiniBand link layer; rdmagen does not write it.";
    NcclValueRange "RDG041" Error false,
        "an NCCL setting is outside the range NCCL accepts", NCCL_DOCS,
        "NCCL_IB_TIMEOUT is 0-31 (0 waits forever), NCCL_IB_QPS_PER_CONNECTION 1-128, NCCL_CROSS_NIC 0, 1 or 2.";
    HcaNamingConflict "RDG042" Error false,
        "an HCA name is empty, repeated or not a plain device name", NCCL_DOCS,
        "Pool `hcas` are device names such as mlx5_1; NCCL_IB_HCA's `^`, `=` and `:port` syntax is produced by rdmagen, not written in the pool.";
    HcaManagementNic "RDG043" Warning false,
        "the RDMA device list includes the management NIC", SEED_CUBESTUDIO,
        "mlx5_0 is usually the TCP management NIC; NCCL_IB_HCA lists only RDMA data NICs (8-GPU RoCE: mlx5_1..mlx5_8). If mlx5_0 carries data on these nodes, say which NIC manages them: in a Pool, `managementNic` (`none` when every RDMA device carries data); on a manifest `lint` reads, the annotation `rdmagen.io/management-nic` with the same value, which `render` writes when the pool names one.";
    HcaPrefixAmbiguous "RDG044" Warning false,
        "NCCL_IB_HCA names devices without `=`, so NCCL matches them as prefixes", NCCL_DOCS,
        "NCCL matches NCCL_IB_HCA names as prefixes unless the list starts with `=`: mlx5_1 also selects mlx5_10..mlx5_19, whether the list names them or not (a storage NIC, say). The NCCL docs recommend always adding the `=`. A bare Mellanox driver name (`mlx5`, `mlx4`) is not reported: it is meant as the prefix of every `mlx5_<k>`, the value for pods whose VF names are not predictable (RDG178).";
    NcclSyntax "RDG045" Error false,
        "an NCCL variable's value is not in the syntax NCCL accepts", NCCL_DOCS,
        "NCCL_DEBUG is VERSION, WARN, INFO, TRACE or ABORT; NCCL_ALGO and NCCL_PROTO are lists with an optional `^`, or since 2.24 `;`-separated `function:list` items; NCCL_SOCKET_IFNAME is `[^][=]prefix,...`; NCCL_IB_HCA is `[^][=]device[:port],...`. NCCL rejects an unknown ALGO/PROTO token and fails.";
    IbTimeoutInfinite "RDG046" Warning false,
        "NCCL_IB_TIMEOUT is 0 (wait forever)", NCCL_DOCS,
        "A timeout of 0 disables the IB verbs timeout: a lost link or peer hangs the job instead of failing it so it can be restarted.";
    DebugOnlyVariable "RDG047" Info false,
        "a variable from the NCCL docs' debugging section is set by hand", NCCL_DOCS,
        "The NCCL docs say debugging variables should not be used in production nor retained in scripts; they may cause sub-optimal behaviour, crashes or hangs. A platform that recommends one (AIStudio: NCCL_ALGO=Ring for very large jobs) is exempt.";
    GidNeedsNewerNccl "RDG048" Error false,
        "the RoCE GID is left to NCCL, whose images are older than 2.21", "https://github.com/NVIDIA/nccl/blob/v2.20.5-1/src/transport/net_ib.cc#L80",
        "Dynamic GID selection exists since NCCL 2.21 (NCCL_IB_GID_INDEX defaults to -1). Before, the index defaults to 0, usually the link-local GID, and connections fail or stay inside one L2 segment. Set the pool's `gidIndex` to the RoCE v2 IPv4 index (`rdmagen detect` finds it) or raise `target.nccl`.";
    GidNcclUnknown "RDG049" Warning false,
        "the RoCE GID is left to NCCL, and the pool does not say which NCCL its images have", "https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/transport/net_ib.cc#L80",
        "`gidIndex: auto` relies on dynamic GID selection, which NCCL has only since 2.21; an older NCCL uses index 0. Set `target.nccl` to the oldest NCCL in the pool's images, or a fixed `gidIndex`.";
    VolumeSource "RDG050" Error false,
        "a volume does not name exactly one source", "https://kubernetes.io/docs/concepts/storage/volumes/",
        "Each volume takes one of `claim`, `nfs` or `csi`. A CSI volume needs `persistentVolume` (rdmagen then writes the PV and PVC); `persistentVolume` needs `nfs` or `csi`.";
    VolumeClash "RDG110" Error false,
        "two volumes share a name or mount path, or one takes rdmagen's /dev/shm", "https://github.com/kubernetes/kubernetes/blob/v1.33.0/pkg/apis/core/validation/validation.go",
        "The API server refuses a pod whose volumes repeat a name, and a container that mounts two volumes at one path. A job's volumes and the pool's default volumes land in one pod. rdmagen writes the /dev/shm volume (`dshm`) itself from `shm`; size /dev/shm there instead.";
    VolumeSubPath "RDG111" Error false,
        "a volume's subPath is absolute or contains `..`", "https://github.com/kubernetes/kubernetes/blob/v1.33.0/pkg/apis/core/validation/validation.go",
        "The API server requires a subPath to be a relative path that stays inside the volume: no leading `/` and no `..` element.";
    QueueConflict "RDG112" Error false,
        "the Volcano queue annotation disagrees with the job's queue", "https://github.com/volcano-sh/volcano/blob/ed72c7c8/pkg/controllers/podgroup/pg_controller_handler.go#L400-L402",
        "Without gang scheduling, Volcano takes a pod's queue only from its `scheduling.volcano.sh/queue-name` annotation, which rdmagen writes from the job's queue (runPolicy.schedulingPolicy.queue or the pool's). An annotation naming another queue would put the pods in one queue and the job's PodGroup in the other. Set the queue in one place.";
    RdmaWithoutHcas "RDG051" Info false,
        "RDMA is on but the pool lists no data NICs", SEED_CUBESTUDIO,
        "Without `hcas`, NCCL_IB_HCA is not written and NCCL uses every RDMA device it finds, including the management NIC (usually mlx5_0).";
    GidUndecided "RDG052" Warning false,
        "a RoCE pool makes no GID decision", NCCL_DOCS,
        "On RoCE the GID index picks the address family and RoCE version NCCL connects with. A pool that sets neither an index nor `auto` leaves it to whatever NCCL the image has (0 before 2.21). Write `gidIndex: auto` (with `target.nccl` 2.21 or later) or the index `rdmagen detect` proposes.";
    RdmaWithoutIpcLock "RDG060" Error false,
        "an RDMA resource is requested without IPC_LOCK", SEED_CUBESTUDIO,
        "RDMA registers page-locked memory; without the IPC_LOCK capability (or privileged: true) memory registration fails and NCCL falls back to sockets or aborts.";
    IpcLockWithoutRdma "RDG061" Warning false,
        "IPC_LOCK is added but no RDMA resource is requested", SEED_CUBESTUDIO,
        "IPC_LOCK is only needed to register memory with an RDMA device. Without the device-plugin resource the pod gets no RDMA device, so either the resource is missing or the capability is unnecessary privilege. AWS EFA (`vpc.amazonaws.com/efa`), `nvidia.com/mlnxnics` (the RDMA shared device plugin as NVIDIA's AICR names it) and a DRA resource claim count as such a device.";
    NoShm "RDG062" Error false,
        "a multi-GPU pod has no memory-backed /dev/shm", "https://github.com/NVIDIA/nccl/issues/1518",
        "Containers get a 64 MiB /dev/shm by default; NCCL fails to create its shared-memory segments between local GPUs. Mount an emptyDir with medium: Memory at /dev/shm; a hostPath of the node's /dev/shm (a tmpfs on systemd hosts) counts too.";
    HostNetworkDns "RDG063" Error false,
        "hostNetwork without dnsPolicy: ClusterFirstWithHostNet", "https://github.com/kubeflow/training-operator/blob/v1.9.0/pkg/controller.v1/pytorch/initcontainer.go",
        "A hostNetwork pod uses the node's DNS by default and cannot resolve the other pods by name: a PyTorchJob's `<job>-master-0` (the Workers' init container waits for it forever), a TrainJob's `<job>-node-0-0.<job>` (PET_MASTER_ADDR, so torchrun's rendezvous never connects).";
    RdmaWithoutIstioOptOut "RDG181" Info false,
        "an RDMA pod does not opt out of Istio's sidecar injection", "https://github.com/NVIDIA/nccl/issues/1638",
        "Where Istio injects sidecars into the namespace, its envoy proxy is put between the pods and NCCL's bootstrap and socket traffic goes through it: nccl-tests hangs with an istio-proxy in the pods and works without (NVIDIA/nccl#1638), and a failing nccl-tests pair was fixed by turning injection off (NVIDIA/nccl-tests#248). A pod that requests an RDMA device opts out with the pod annotation (or label) `sidecar.istio.io/inject: \"false\"`, which rdmagen writes on every pod and seed 001's PyTorchJob carries. Istio reads the label before the annotation, and from 1.27 opts out only on the exact value `false` (`False` or `no` falls back to the namespace's default; istio pkg/kube/inject/inject.go injectRequired, 1.27.0 lines 223-240). A hostNetwork pod is left alone: Istio never injects into one (the same function, lines 207-209). Many clusters have no Istio at all; there the rule can be turned off (`--disable RDG181`).";
    IpcLockNonRoot "RDG182" Warning false,
        "IPC_LOCK is added to a container that runs as a non-root user", "https://github.com/NVIDIA/nvidia-container-toolkit/issues/2037",
        "For a non-root UID, added capabilities land only in the bounding set, and Kubernetes sets no ambient capabilities, so CAP_IPC_LOCK is never effective. The locked-memory limit then stays at the container runtime's LimitMEMLOCK (8 MiB under containerd's systemd unit), ibv_reg_mr fails with ENOMEM and NCCL falls back to sockets or aborts: measured on one node, uid 1000 with IPC_LOCK had CapEff 0 and `ulimit -l` 8192, uid 0 locked 1 GiB. The effective user is the container's securityContext.runAsUser, else the pod's; runAsNonRoot: true means the same. Run the container as root, or set `LimitMEMLOCK=infinity` in a containerd systemd drop-in on the nodes (NVIDIA/nvcf#1354) and suppress this finding.";
    SharedSlotCount "RDG183" Warning false,
        "the job asks the RDMA shared device plugin for more than one pod slot", "https://github.com/Mellanox/k8s-rdma-shared-dev-plugin/blob/v1.5.3/pkg/resources/server.go#L141-L148",
        "The shared device plugin advertises `rdmaHcaMax` made-up device IDs per node (server.go:141-148), so its resource counts pods that may share the HCAs, not HCAs: one unit hands the pod every HCA the plugin's selector matched. Asking for N takes N of the node's slots (63 in the Network Operator's example) and gives the pod nothing more; with few slots left, later pods stay Pending. Ask for 1 (`rdma: on` or `auto`).";
    GangPriorityMissing "RDG184" Warning false,
        "a gang-scheduled job's pods have a priority class that its PodGroup does not", "https://github.com/kubeflow/trainer/blob/v1.9.4/pkg/controller.v1/common/job.go#L250-L296",
        "When the training operator gang-schedules through Volcano (`--gang-scheduler-name=volcano`), it makes one PodGroup per job and fills its `priorityClassName` from `runPolicy.schedulingPolicy.priorityClass` alone; the pods' `priorityClassName` is not read (training-operator v1.9.4 job.go:250-296). Volcano takes a job's priority from its PodGroup (volcano v1.15.1 pkg/scheduler/cache/cache.go:1537-1543) and orders and preempts jobs in a queue by it (plugins/priority/priority.go:71-89), so every such gang runs at the default priority, whatever its pods say. rdmagen writes the pods' class to `runPolicy.schedulingPolicy.priorityClass` on a Volcano pool; `lint` reports a PyTorchJob whose pods set `priorityClassName` and that shows it is gang-scheduled (a `runPolicy.schedulingPolicy`, or pods with `schedulerName: volcano`) without it.";
    VolcanoWithoutGang "RDG185" Warning false,
        "a multi-node job on Volcano without gang scheduling", "https://github.com/volcano-sh/volcano/blob/v1.15.1/pkg/controllers/podgroup/pg_controller_handler.go#L372-L403",
        "When the training operator does not gang-schedule (its pool says `target.gangScheduling: false`), Volcano's podgroup controller gives each pod with `schedulerName: volcano` a PodGroup of its own with minMember 1 (volcano v1.15.1 pg_controller_handler.go:372-403), so the pods of one job are scheduled one by one. Two multi-node jobs that each get some of their pods can then hold the GPUs the other needs and wait forever, and a job whose Master starts alone waits in rendezvous. Start the operator with `--gang-scheduler-name=volcano` (and say `gangScheduling: true`), or run one multi-node job at a time.";
    PlatformSocketsPartialNode "RDG186" Info false,
        "a multi-node job goes over sockets because its platform turns RDMA off on part of a node", SEED_AISTUDIO,
        "AIStudio turns RDMA on for whole nodes only (8 GPUs) and off below, so a multi-node job on fewer GPUs per node trains over TCP between its nodes, at a fraction of the fabric's speed, with nothing in the manifest to say so. `rdma: on` forces RDMA; the platform warns that this can cause communication problems over RoCE (RDG013), so size the job to whole nodes where you can.";
    SidecarDropped "RDG187" Error false,
        "a native sidecar on a cluster that drops it", "https://github.com/kubeflow/training-operator/blob/v1.8.0/manifests/base/crds/kubeflow.org_pytorchjobs.yaml",
        "A native sidecar is an init container with `restartPolicy: Always`. The PyTorchJob CRD before training-operator 1.8.0 has no such field (v1.7.0's schema ends at the init container's other fields), so the API server prunes it and the sidecar becomes an ordinary init container that never exits: the pod stays in Init forever. Kubernetes runs native sidecars by default from 1.29 (the SidecarContainers gate is off in 1.28), so on 1.28 the field is dropped the same way unless the cluster's admin turned the gate on. A pool says its versions in `target.operator` and `target.kubernetes`; `lint --operator` and `--kubernetes` say them for a manifest. Move the sidecar's work into the training container, or target a newer cluster.";
    KueueWithGang "RDG188" Error false,
        "a pool asks for Kueue and for the operator's Volcano gang scheduling", "https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobs/kubeflow/kubeflowjob/kubeflowjob_controller.go#L50-L60",
        "Kueue admits a job by suspending it (runPolicy.suspend) until its quota is there and then lets the default scheduler place its pods; an operator started with `--gang-scheduler-name=volcano` makes a Volcano PodGroup and sets every pod's schedulerName to volcano. The two decide admission twice, and Kueue's topology and quota are not what Volcano schedules by. Choose one: `scheduler: {name: kueue}` with `gangScheduling: false` (Kueue admits the job whole), or Volcano.";
    KueueIntegrationOff "RDG189" Warning false,
        "Kueue may not manage the job's kind in this cluster", "https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/config/components/manager/controller_manager_config.yaml",
        "Kueue manages a job kind only when its integration is listed in the manager's `integrations.frameworks`. Kueue v0.19.0 to v0.19.2 ship with `kubeflow.org/pytorchjob` commented out (#12606; v0.6 to v0.18 had it on). Without it the PyTorchJob is never suspended and creates all its pods at once; its queue label is on the job only, so the pods are not queued at all, or, where the namespace has a `default` LocalQueue, the pod webhook gates each pod as a workload of its own (pod_webhook.go:145-162): no gang, the Master may run while Workers wait. Say `scheduler.jobIntegration: true` once the cluster's Kueue config enables the framework; `false` says it does not, and is reported the same way.";
    FieldNotInRelease "RDG190" Error false,
        "a field the target release's CRD does not have, or a value it does not take", "https://github.com/kubeflow/trainer/blob/v1.9.4/pkg/apis/kubeflow.org/v1/common_types.go#L40-L43",
        "A custom resource keeps only the fields its CRD declares: the API server prunes the others without a word. `runPolicy.managedBy` came in the PyTorchJob CRD of training-operator 1.9.0 (v1.7.0 and v1.8.0 have no such field), and takes `kubeflow.org/training-operator` or `kueue.x-k8s.io/multikueue` (a TrainJob's `spec.managedBy`: `trainer.kubeflow.org/trainjob-controller` or `kueue.x-k8s.io/multikueue`). Pruned, the field's intent is lost: a job meant for MultiKueue is run by the local operator.";
    MpiLauncherAccelerators "RDG191" Error false,
        "an MPIJob's launcher requests GPUs or RDMA devices", "https://github.com/kubeflow/mpi-operator/blob/v0.8.0/pkg/controller/mpi_job_controller.go#L1600-L1606",
        "The launcher of an MPIJob only runs `mpirun`, which starts the ranks on the workers over ssh; unless `runLauncherAsWorker: true`, no rank runs in it. The mpi-operator sets `NVIDIA_VISIBLE_DEVICES` and `NVIDIA_DRIVER_CAPABILITIES` empty in the launcher (mpi_job_controller.go:1600-1606), so GPUs it requests are held and never used, and RDMA devices and IPC_LOCK there are the same waste: the scheduler may even keep the job Pending for a node with GPUs free for a process that uses none. Request GPUs, RDMA resources and IPC_LOCK on the Worker template only.";
    MpiJobUnsupported "RDG192" Error false,
        "a job asks for an MPIJob its pool cannot run", "https://github.com/kubeflow/mpi-operator/blob/v0.8.0/pkg/apis/kubeflow/validation/validation.go#L40-L46",
        "`launcher: mpirun` renders a `kubeflow.org/v2beta1` MPIJob, which only a cluster with the mpi-operator runs: its pool must say `target.mpiOperator` (0.6 or later, the first release whose CRD has every field rdmagen writes). On a Kubeflow Trainer pool the job becomes a TrainJob on Trainer's MPI runtime (`mlPolicy.mpi`) instead, which runs Open MPI only (the CRD's enum) and reserves the four `OMPI_MCA_*` variables its plugin sets on the launcher (constants.go:305-306). The operator's validation also accepts only `Never` and `OnFailure` as a replica's restart policy (validation.go:40-42, 153-155) and `kubeflow.org/mpi-operator` or `kueue.x-k8s.io/multikueue` as `runPolicy.managedBy` (:44-46, 104-108); and `mpi` settings mean nothing to a job that mpirun does not launch.";
    MpiJobCrd "RDG193" Error false,
        "an MPIJob does not match the mpi-operator's CRD", "https://github.com/kubeflow/mpi-operator/blob/v0.8.0/manifests/base/kubeflow.org_mpijobs.yaml",
        "The MPIJob is checked strictly against the `openAPIV3Schema` of the mpi-operator's CRD (v0.8.0, `kubeflow.org/v2beta1`): a field the CRD does not have is pruned by the API server without a word (or rejected under strict field validation), and a value of the wrong type or outside an enum (`mpiImplementation`: OpenMPI, Intel, MPICH) is rejected.";
    MpiSlotsGpus "RDG194" Warning false,
        "an MPIJob's slotsPerWorker is not the GPUs each worker requests", "https://github.com/kubeflow/mpi-operator/blob/v0.8.0/pkg/apis/kubeflow/v2beta1/types.go#L170-L174",
        "The mpi-operator writes each worker into the hostfile with `slotsPerWorker` slots (mpi_job_controller.go:1309-1337), 1 when the field is left out (types.go:170-174, default.go:62-64), and mpirun fills those slots with ranks. With one rank per GPU, more slots than the Worker container's GPUs put two ranks on one GPU (NCCL refuses a communicator with duplicate GPUs), fewer leave GPUs idle. `lint` compares `slotsPerWorker` with the GPUs the Worker's first container requests (the one the controller gives its ssh daemon and key), times the GPUs each rank drives where the launcher's program says so (nccl-tests' `-g`, torchrun's `--nproc-per-node`). A warning, not an error: a rank program that drives several GPUs some other way is right with fewer slots, and lint cannot see it; suppress the finding there.";
    MpiNpAboveWorld "RDG195" Error false,
        "an MPIJob's mpirun starts more ranks than the hostfile has slots", "https://github.com/open-mpi/ompi/blob/v4.1.6/orte/tools/orterun/orterun.1in#L427-L432",
        "The hostfile the mpi-operator writes has Worker replicas × `slotsPerWorker` slots (plus the launcher's with `runLauncherAsWorker`; mpi_job_controller.go:1309-1337). Open MPI's mpirun refuses to start more processes than slots (`--nooversubscribe` is its default, orterun.1in:427-432, although an example further down the page, :1104-1110, still shows the extra processes placed; the mapper refuses them when no-oversubscribe is set, orte/mca/rmaps/round_robin/rmaps_rr_mappers.c:58-66, with \"There are not enough slots available in the system\"), so the launcher fails and, under its restart policy, keeps failing; with `--oversubscribe`, or under Intel MPI or MPICH, the extra ranks are placed on workers whose GPUs already have one, and share them. `lint` reads `-np`/`-n`/`--np`/`-c` from the launcher's command and args (a `sh -c` script too) and says nothing where the count is not a number as written or the command line is not one it reads with confidence. An error: the job cannot run as written.";
    MpiNpBelowWorld "RDG196" Warning false,
        "an MPIJob's mpirun starts fewer ranks than the hostfile has slots", "https://github.com/open-mpi/ompi/blob/v4.1.6/orte/tools/orterun/orterun.1in#L1068-L1071",
        "`-np` below Worker replicas × `slotsPerWorker` leaves slots empty: mpirun fills the hostfile's slots in order and leaves the rest unused (orterun.1in:1068-1071), so the last workers get fewer ranks or none, and their GPUs, requested and held, stay idle while the job reports the bandwidth or speed of a smaller one. A warning: a run on part of the job's GPUs can be deliberate; lower the Worker replicas or slotsPerWorker to what mpirun starts.";
    MpiEnvNotForwarded "RDG197" Warning false,
        "a variable on an MPIJob's Worker never reaches the ranks: mpirun does not forward it", "https://github.com/openssh/openssh-portable/blob/V_9_6_P1/session.c#L993-L996",
        "A rank on a worker is started by the launcher's mpirun over ssh, as a child of an sshd session, and sshd builds a session's environment from nothing (OpenSSH session.c:993-996, do_setup_env): the `env` of the Worker's container, which the ssh daemon runs with, never reaches the rank. Only mpirun hands variables on: Open MPI those named with `-x NAME[=VALUE]` or in `mca_base_env_list`, and `OMPI_*` (orterun.1in:644-652, 1649-1654), never the rest of the launcher's env; Intel MPI and MPICH's Hydra the launcher's whole environment unless `-genvnone` (MPICH mpiexec.txt:65-69; Intel's guide), and `-genv NAME VALUE`. `lint` reports each NCCL_*, UCX_* and FI_* variable of a Worker whose container runs the controller's ssh daemon (no command) that the launcher's mpirun does not forward: set it on the launcher and export it (`-x NAME`), or, for Hydra, set it on the launcher. It says nothing where the launcher's command or env cannot be read with confidence (a script file, an unknown mpirun option, `envFrom`). A warning: the job runs, without the setting.";
    NcclFallbackUnpinned "RDG198" Info false,
        "an RDMA pod whose NCCL can fall back to sockets without a word", "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/plugin/net.cc#L319-L350",
        "Without `NCCL_NET`, NCCL tries its net plugins, then its verbs transport (`IB`), then TCP sockets, and takes the first that initialises with a device (v2.30.7-1 src/plugin/net.cc:165-215, 319-350). A pod whose RDMA device cannot be used (no `/dev/infiniband`, memlock too small for a non-root user, a wrong HCA name) therefore trains over sockets at a tenth of the speed, and only a log line says so. With `NCCL_NET=IB` (or the exact name of the image's net plugin: `IBext_v8`, `gIB`; compared whole, case aside, net.cc:331) init fails instead, at the start of the job. `render` writes the pin on every multi-node RDMA job (the Pool's `network.ncclNet` names it; `ncclNet: off` on the Pool or the Job leaves it out). Info: a job may rely on the fallback on purpose, and an `envFrom` source may set it where lint cannot see.";
    NcclNetSocket "RDG199" Error false,
        "NCCL_NET pins sockets in a pod that holds an RDMA device", "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/net_socket.cc#L803-L804",
        "`NCCL_NET=Socket` (any case) selects NCCL's TCP socket transport and nothing else (src/plugin/net.cc:331), so a pod that requests an RDMA device holds it unused and trains at socket speed. Pin `IB` or the net plugin's name, or turn RDMA off for the job (`rdma: off`), which releases the device.";
    NcclNewerThanImages "RDG200" Error false,
        "an NCCL variable uses a form the pool's oldest NCCL does not read", "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-algo",
        "A pool's `target.nccl` is the oldest NCCL its images have. NCCL_ALGO's PAT algorithm exists from NCCL 2.23, and NCCL_ALGO's and NCCL_PROTO's per-function form (`allreduce:tree;broadcast:ring`) from 2.24 (env.rst, NCCL_ALGO); an NCCL before them refuses the value, and the job fails at init on every image that has only the older NCCL. Raise `target.nccl` if every image is newer, or write the form the oldest reads.";
    StaticClaimClass "RDG053" Error false,
        "a claim meant for a static PersistentVolume leaves out storageClassName", "https://kubernetes.io/docs/concepts/storage/persistent-volumes/#class-1",
        "A claim without storageClassName (or with `storageClassName:` and no value) gets the cluster's default StorageClass and never binds a class-less static PV: the pod waits forever. Write `storageClassName: \"\"` and `volumeName` (seed 001's PVC has this mistake).";
    SchedulingWithoutGang "RDG054" Warning false,
        "gang-scheduling settings on a pool whose operator does not gang-schedule", "https://github.com/kubeflow/training-operator/blob/078ec30ff26649a07d2e28893c332d4cef70e233/pkg/controller.v1/common/job.go#L250-L297",
        "The operator reads runPolicy.schedulingPolicy (minAvailable, priorityClass, queue) only when started with --gang-scheduler-name=volcano. Without it Volcano makes one PodGroup per pod, takes the queue from the pod annotation rdmagen writes, and ignores minAvailable and priorityClass.";
    PodTemplateOverride "RDG055" Error false,
        "a podTemplate overlay changes or removes something rdmagen decided", "src/plan/overlay/judge.rs",
        "An overlay is merged last and may add to the pod. What rdmagen decides from the job and the pool, and checks there, is not the overlay's to change: the GPU and RDMA resources, IPC_LOCK, every environment variable it writes (NCCL variables and the job's and pool's `env`), the image, the launcher's command and args, the /dev/shm volume and mount, and, where the plan sets them, hostNetwork, dnsPolicy, schedulerName and the Volcano queue annotation. Overridden there, the pod would no longer be what `--explain` and the checks describe. Change the job or pool field that decides it.";
    PodTemplateAdds "RDG056" Info false,
        "a podTemplate overlay adds to what rdmagen decided", "https://github.com/kubernetes/kubernetes/issues/51980",
        "An extra environment variable or capability on the training container is merged as given. `capabilities.add` is an atomic list in Kubernetes' strategic merge, so a patch would replace it and lose IPC_LOCK; rdmagen keeps the capabilities it has and adds the overlay's. `drop: [ALL]` keeps IPC_LOCK: containerd and CRI-O drop ALL before they add; dropping IPC_LOCK by name does not.";
    MasterReplicas "RDG064" Error false,
        "Master replicas is missing or not 1", WEBHOOK,
        "The webhook requires pytorchReplicaSpecs.Master.replicas to be set and equal to 1.";
    WorkerReplicas "RDG065" Error false,
        "Worker replicas is below 1", WEBHOOK,
        "The webhook requires Worker.replicas, when set, to be at least 1.";
    NoPytorchContainer "RDG066" Error false,
        "a replica has no container named pytorch", WEBHOOK,
        "The webhook requires a container named `pytorch` in every replica; the operator reads its port and injects its environment.";
    EmptyImage "RDG067" Error false,
        "a container has no image", WEBHOOK,
        "The webhook requires a non-empty image for every container.";
    RunPolicyMisplaced "RDG068" Error false,
        "a runPolicy field is placed directly under spec", PYTORCHJOB_CRD,
        "cleanPodPolicy, backoffLimit, ttlSecondsAfterFinished, activeDeadlineSeconds, schedulingPolicy and suspend belong under spec.runPolicy. Under spec the API server prunes them without a word (CubeStudio's own launcher makes this mistake).";
    NprocPerNodeType "RDG117" Error false,
        "spec.nprocPerNode is not a string", PYTORCHJOB_CRD,
        "The PyTorchJob CRD declares nprocPerNode as a string (\"8\", \"auto\", \"cpu\", \"gpu\"); an unquoted 8 is an integer and the API server rejects the job. Quote it.";
    UnknownReplicaType "RDG069" Error false,
        "a replica type is not Master or Worker", WEBHOOK,
        "The webhook accepts exactly `Master` and `Worker` (case-sensitive).";
    NotAPyTorchJob "RDG070" Error false,
        "a PyTorchJob has no spec.pytorchReplicaSpecs", PYTORCHJOB_CRD,
        "pytorchReplicaSpecs is required; without it there is nothing to run.";
    NoRunPolicy "RDG071" Warning false,
        "a PyTorchJob has no spec.runPolicy", "https://github.com/kubeflow/training-operator/blob/v1.9.0/sdk/python/kubeflow/training/models/kubeflow_org_v1_py_torch_job_spec.py",
        "The Kubeflow Python SDK's PyTorchJob model refuses a job whose run_policy is None, so TrainingClient.get_job fails on it, and list_jobs fails for its whole namespace. The API server accepts the job; `runPolicy: {}` is enough for the SDK.";
    NoRunPolicyUnderKueue "RDG201" Info false,
        "a PyTorchJob queued by Kueue has no spec.runPolicy: Kueue's webhook writes one", "https://github.com/kubernetes-sigs/kueue/blob/v0.19.2/pkg/controller/jobframework/base_webhook.go#L77",
        "A PyTorchJob with a `kueue.x-k8s.io/queue-name` label is suspended by Kueue's webhook when it is created (jobframework/base_webhook.go:77, ApplyDefaultForSuspend), and suspending a Kubeflow job sets `spec.runPolicy.suspend` (jobs/kubeflow/kubeflowjob/kubeflowjob_controller.go:54-56). The stored job has a runPolicy, so the Python SDK reads it (RDG071 does not apply). It holds where Kueue's `kubeflow.org/pytorchjob` integration is enabled, which a queued PyTorchJob needs anyway; writing `runPolicy: {}` keeps the manifest readable before it is applied too.";
    TrainerCrd "RDG150" Error false,
        "a Trainer v2 object does not match the upstream Trainer CRD (strict)", "crates/upstream/schemas/trainer/SOURCE.md",
        "TrainJobs, TrainingRuntimes and ClusterTrainingRuntimes are checked against the CRDs of the Trainer release they are for (`lint --trainer`, default 2.3, the latest; the v2.1.0 CRDs judge 2.1, the v2.3.0 CRDs 2.2 and later), made strict as kubeconform -strict does: a field the CRD does not have is an error, because the API server drops it without a word. The API changed between releases: v2.2 replaced podTemplateOverrides with runtimePatches and removed mlPolicy.torch.numProcPerNode, so a manifest written for one release loses settings on another. The CRDs' CEL rules that a manifest alone can break are checked too, with the CRD's message: a TrainJob's name is a DNS-1035 label of at most 63 characters (it names the JobSet and PET_MASTER_ADDR), one ML policy per runtime.";
    TrainerReservedEnv "RDG151" Error false,
        "a TrainJob sets a PET_* variable the torch plugin reserves", "https://github.com/kubeflow/trainer/blob/v2.3.0/pkg/runtime/framework/plugins/torch/torch.go#L66-L77",
        "On a runtime with mlPolicy.torch, Trainer's webhook rejects a TrainJob whose spec.trainer.env sets PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR or PET_MASTER_PORT (\"must not have reserved envs\"): the torch plugin injects them into the `node` container, and a plain `torchrun script.py` reads them. Set the node count with spec.trainer.numNodes and the processes per node with spec.trainer.numProcPerNode.";
    ResourcesPerNodeReplaces "RDG152" Error false,
        "resourcesPerNode replaces the runtime's resources and drops its RDMA device or GPUs (Trainer 2.2 and earlier)", "https://github.com/kubeflow/trainer/blob/v2.2.0/pkg/runtime/core/trainingruntime.go#L178-L186",
        "Up to Trainer 2.2 a TrainJob's spec.trainer.resourcesPerNode replaces the `node` container's whole resources block; 2.3 merges it key by key (kubeflow/trainer#3602). A runtime that requests GPUs and an RDMA device loses both as soon as a TrainJob sets, say, only cpu and memory: the pods run without the RDMA device (NCCL falls back to sockets) or without GPUs. Repeat every GPU and RDMA resource of the runtime in resourcesPerNode, or leave resourcesPerNode out.";
    ResourcesPerNodeUnknownRuntime "RDG153" Warning false,
        "resourcesPerNode names no RDMA resource on Trainer 2.2 or earlier, and the runtime was not linted with it", "https://github.com/kubeflow/trainer/blob/v2.2.0/pkg/runtime/core/trainingruntime.go#L178-L186",
        "Up to Trainer 2.2 resourcesPerNode replaces the runtime container's resources (RDG152). Without the runtime, lint cannot see whether it requests an RDMA device that this TrainJob then drops; on an RDMA runtime it does. Lint the runtime together with the job, or repeat the RDMA resource (and the GPUs) in resourcesPerNode.";
    PatchNodeEnv "RDG154" Error false,
        "a TrainJob's runtime patch sets env on the node or an initializer container", "https://github.com/kubeflow/trainer/blob/v2.3.0/pkg/runtime/framework/plugins/jobset/jobset.go#L203-L205",
        "Trainer's webhook rejects a runtimePatches (2.2 and later) or podTemplateOverrides (2.1) entry that sets env on the `node`, `dataset-initializer` or `model-initializer` container (\"must not have envs for the dataset-initializer, model-initializer, node containers\"). The trainer's variables, NCCL's among them, go in spec.trainer.env.";
    PatchUnknownTarget "RDG155" Error false,
        "a TrainJob's patch, or a runtime's envInjection, names a replicated job or container the runtime does not have", "https://github.com/kubeflow/trainer/blob/v2.3.0/pkg/runtime/framework/plugins/jobset/jobset.go#L184-L202",
        "A patch can change only what the runtime has: Trainer's webhook rejects a runtimePatches (or 2.1 podTemplateOverrides) entry naming a replicated job, container or init container that the runtime's JobSet template lacks, so a TrainJob cannot add a container. mlPolicy.torch.envInjection targets must name a replicated job and container of the runtime too. Checked when the runtime is linted with the job.";
    VolcanoSchedulerMismatch "RDG156" Warning false,
        "a runtime's pods and its podGroupPolicy disagree about Volcano", "https://github.com/kubeflow/trainer/blob/v2.3.0/pkg/runtime/framework/plugins/volcano/volcano.go",
        "podGroupPolicy.volcano makes Trainer create a Volcano PodGroup for each TrainJob and annotate the pods with it, but it does not set the pods' schedulerName; the design's runtime sets `schedulerName: volcano` in the pod template (kubeflow/trainer proposals/2437-volcano-scheduler). Pods left to the default scheduler (unless an admission webhook sets schedulerName, as Volcano's resource groups can) are not gang-scheduled: some start and hold their GPUs while the others wait. The reverse, `schedulerName: volcano` without podGroupPolicy.volcano, gets no PodGroup with the job's size: Volcano schedules each pod on its own, again without the gang.";
    TrainerPodMissing "RDG157" Error false,
        "a torch runtime has no replicated job labelled as the trainer with a container named node", "https://github.com/kubeflow/trainer/blob/v2.3.0/pkg/runtime/framework/plugins/torch/torch.go#L116-L142",
        "Trainer finds the training pods by the Job template label `trainer.kubeflow.org/trainjob-ancestor-step: trainer`, and the training container by its name, `node`. Without them the torch plugin injects no PET_* variables, and a TrainJob's image, command, args, env, numNodes and resourcesPerNode go nowhere: each pod's torchrun runs alone with its rendezvous at localhost.";
    TrainJobWithoutTrainer "RDG158" Error false,
        "a TrainJob on a torch runtime has no spec.trainer", "https://github.com/kubeflow/trainer/blob/v2.3.0/pkg/runtime/framework/plugins/torch/torch.go#L138-L166",
        "The torch plugin injects PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK, PET_MASTER_ADDR and PET_MASTER_PORT only when the TrainJob has spec.trainer (`if trainJob.Spec.Trainer != nil`, the same in 2.1). Without it each pod's `torchrun` runs alone: one node, its rendezvous at localhost. Write at least `trainer: {numNodes: N}`. Checked when the runtime is linted with the job.";
    RequestAboveLimit "RDG160" Error false,
        "a container requests more of a resource than its limit", K8S_RESOURCE_REQUIREMENTS,
        "The API server refuses a pod whose container requests more cpu, memory or ephemeral-storage than its limit (\"must be less than or equal to cpu limit of 8\"), compared as quantities (500m < 1, 1Gi > 1G). A PyTorchJob or TrainJob is accepted, but the operator's pods are never created, and the job waits without a word until someone reads its events. rdmagen checks every container and init container of everything it renders, and lint checks foreign manifests; with rdmagen inputs it usually means a podTemplate overlay sets a request above the job's `resources`, which become the limits. Lower the request or raise the limit.";
    NotOvercommittable "RDG161" Error false,
        "an extended resource (GPUs, RDMA devices) or hugepages is requested without an equal limit", K8S_RESOURCE_REQUIREMENTS,
        "Resources outside kubernetes.io (nvidia.com/gpu, rdma/*, any device plugin's) and hugepages-* cannot be overcommitted: the API server requires a limit for every such request and the request to equal it (\"must be equal to nvidia.com/gpu limit of 8\", \"Limit must be set for non overcommitable resources\"). A limit alone is enough: Kubernetes copies it to the request. Set the limit and drop the request, or make them equal.";
    ResourceValueInvalid "RDG162" Error false,
        "a resource request or limit is not a quantity, is negative, or is a fraction of a whole-unit resource", K8S_RESOURCE_QUANTITY,
        "Every request and limit must parse as a Kubernetes quantity and be at least 0, and extended resources (nvidia.com/gpu, rdma/*, anything outside kubernetes.io) count whole devices: `0.5` or `500m` GPUs is refused (\"must be an integer\"). The API server refuses the pod, so the operator never creates it.";
    HugePagesShape "RDG163" Error false,
        "a hugepages request or limit is not a whole number of pages, or comes without cpu or memory", K8S_RESOURCE_REQUIREMENTS,
        "hugepages-<size> is counted in whole pages: the amount must be a multiple of the page size its name gives (hugepages-2Mi: 2Mi, 4Mi, ...), and a container that asks for hugepages must also request or limit cpu or memory (\"HugePages require cpu or memory\"). The API server refuses the pod otherwise.";
    ImageNcclEnv "RDG080" Warning false,
        "the image sets an NCCL variable with ENV", SEED_AISTUDIO,
        "AIStudio: custom images migrated from other platforms may carry preset environment variables that cause training problems. Env in the pod spec overrides the image's ENV, so what rdmagen writes wins; the danger is a variable rdmagen deliberately leaves unset: one the platform presets, NCCL_IB_GID_INDEX under `gidIndex: auto` (NCCL's dynamic selection), NCCL_IB_DISABLE when RDMA is on (NCCL's default 0), NCCL_IB_HCA when the pool lists no data NICs. There the image's value stands, and NCCL_IB_DISABLE=1 or a stale GID index in an image silently changes every job. Set NCCL variables per job or per pool, not in the image.";
    ImageMissingPackages "RDG081" Warning false,
        "the Dockerfile installs none of some RDMA user-space packages NCCL needs", SEED_AISTUDIO,
        "NCCL loads libibverbs and the device's provider (libmlx5, in ibverbs-providers on apt) at run time; without them it finds no verbs device and falls back to sockets. image-check looks for rdmagen's runtime set: ibverbs-providers, libibverbs1, librdmacm1, libibumad3, libnl-3-200 and libnl-route-3-200 (rdma-core, libibverbs, librdmacm, libibumad and libnl3 on dnf). With `--platform aistudio` it looks for AIStudio's custom-image list (seed 000), the same eight `image-check --dpkg` holds a capture to: the runtime set, infiniband-diags and perftest. A final stage FROM NVIDIA's NGC PyTorch image (nvcr.io/nvidia/pytorch) has the runtime set already. `rdmagen dockerfile` writes the install step; `--set seed` installs all eight. The writers report it too: `rdmagen dockerfile --platform aistudio --set runtime`, and a job on an AIStudio pool whose `imageBuild.set` is `runtime`, write a Dockerfile this check would flag, and say so.";
    DpkgNotInstalled "RDG082" Error false,
        "a captured dpkg -l shows an RDMA package not installed", SEED_AISTUDIO,
        "AIStudio's check is `dpkg -l infiniband-diags perftest ibverbs-providers libibumad3 libibverbs1 libnl-3-200 libnl-route-3-200 librdmacm1`; every one must show `ii`.";
    PinInvalid "RDG083" Error false,
        "a pin file line is not a usable `name=version`", "crates/upstream/src/packages/pins.rs",
        "Pins name one of the RDMA packages rdmagen installs for the family, and a version made of letters, digits and . + ~ : _ - only, so that nothing in a pin can reach the shell.";
    BaseImageInvalid "RDG084" Error false,
        "the base image is not a plain image reference, or its package family is unknown", "https://docs.docker.com/reference/dockerfile/#from",
        "A base image is registry/name:tag[@digest]; a line break, space or shell character could add instructions to the Dockerfile. When neither the name nor the tag says Debian/Ubuntu (apt) or Rocky/Alma/CentOS/RHEL/Fedora (dnf), name the family.";
    DiagUnreadableLine "RDG100" Warning false,
        "a line of a capture could not be read", CAPTURES,
        "detect reads show_gids, ibstat, ibv_devinfo, rdma link show, ofed_info -s, dpkg -l, nvidia-smi topo -m, nvidia-smi -L and lsmod output. A line that fits none of them is skipped, and a row of the topology matrix cut short or holding a cell nvidia-smi does not write is left out, reported at its column; check that the capture is complete and unedited.";
    PortNotActive "RDG101" Warning false,
        "an RDMA port is not Active or not LinkUp", "https://github.com/NVIDIA/nccl/blob/v2.21.5-1/src/transport/net_ib.cc",
        "NCCL only uses active ports. A port that is Down, Initializing or Polling is left out of the detected hcas; fix the cable, switch or subnet manager before training on it.";
    MixedFabrics "RDG102" Warning false,
        "the devices disagree on the fabric", SEED_AISTUDIO,
        "Link layer Ethernet means RoCE, InfiniBand means IB (never ibv_devinfo's transport line, which says InfiniBand for RoCE too). A pool has one fabric; the minority devices are left out.";
    NoIpv4Gid "RDG103" Warning false,
        "a RoCE device has no RoCE v2 GID with an IPv4 address", NCCL_GID_SELECTION,
        "NCCL over RoCE addresses the peer by a GID. Its dynamic selection (2.21 and later) takes an IPv4 GID, preferring RoCE v2; a device with no IPv4 GID at all has no IP on its netdev, and NCCL keeps index 0, the link-local GID, which does not leave the L2 segment. A device with only RoCE v1 beside devices with v2 cannot talk to them.";
    GidIndexDisagrees "RDG104" Warning false,
        "the RoCE v2 IPv4 GID index differs between devices", "https://github.com/NVIDIA/nccl/issues/890",
        "NCCL takes one global GID index for every device. When the devices' RoCE v2 IPv4 GIDs sit at different indices, no fixed value fits all; `gidIndex: auto` lets NCCL pick per device.";
    GidIndexInPod "RDG105" Info false,
        "the GID table was captured inside a pod", "https://github.com/NVIDIA/nccl/issues/1573",
        "In a pod the GID table holds only the pod's addresses, at indices that differ from the host's and can change with the pod network. `gidIndex: auto` (NCCL's dynamic selection) is the safe choice.";
    NoManagementNic "RDG106" Info false,
        "no device carries the management netdev", SEED_CUBESTUDIO,
        "The management NIC is the device whose host netdev is `detect --management-netdev` (default eth0, usually on mlx5_0; bond0 on a bonded host); it stays out of NCCL_IB_HCA. When none matches, every device is taken as a data NIC.";
    IbWithoutSm "RDG107" Warning false,
        "an InfiniBand port has no LID or no subnet manager", CAPTURES,
        "An active IB port gets a LID from the subnet manager; Base lid 0 or 65535, or SM lid 0, means no subnet manager answered and IB traffic will not flow.";
    NothingDetected "RDG108" Error false,
        "the captures describe no usable RDMA device", CAPTURES,
        "detect needs at least one of show_gids, ibstat, ibv_devinfo or rdma link show, naming a device whose link layer is known. `rdmagen detect --print-commands` prints what to capture.";
    RoceV1Only "RDG109" Warning false,
        "the RoCE devices have only RoCE v1 GIDs", NCCL_GID_SELECTION,
        "RoCE v1 frames are Ethernet frames with no IP header: they are not routable, so training works only while every node is in one L2 domain. detect proposes the v1 index with an IPv4 address when every device agrees; configure RoCE v2 on the NICs for a routed fabric.";
    TopoFarNic "RDG210" Warning false,
        "a data NIC is far from every GPU (NODE or SYS in nvidia-smi topo -m)", "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-net-gdr-level-formerly-nccl-ib-gdr-level",
        "detect reads `nvidia-smi topo -m`. A NIC whose best link to any GPU is NODE (across the PCIe host bridges of a NUMA node) or SYS (across NUMA nodes, the socket interconnect) is not on any GPU's PCIe tree: NCCL uses GPUDirect RDMA only up to NCCL_NET_GDR_LEVEL, whose default stops short of such paths, so the GPUs that use it stage their traffic through host memory. Usually it is a storage or management NIC, which belongs out of hcas; if it is meant for training, it is in the wrong slot.";
    TopoUnevenNics "RDG211" Warning false,
        "the GPUs share the data NICs unevenly", "https://github.com/NVIDIA/nccl/issues/820",
        "detect reads `nvidia-smi topo -m` and gives each GPU the NICs nearest it. When some NICs are nearest to more GPUs than others (8 GPUs over 3 NICs), the busiest NIC divides its rate among more GPUs, and collectives, which wait for the slowest rank, run at its pace (NVIDIA/nccl#820: GPUs sharing one NIC made one process group slower than the rest). Reported only on a matrix with a row for every GPU.";
    PeermemMissing "RDG212" Warning false,
        "nvidia_peermem is not loaded on an RDMA node with GPUs", "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html",
        "detect reads `lsmod` (or /proc/modules). GPUDirect RDMA needs nvidia_peermem (nv_peer_mem before driver 470) so that the NIC can read and write GPU memory; without it (and without dma-buf, which no module list shows) NCCL stages every transfer through host memory, at about 2/3 of the bandwidth (NVIDIA/nccl#412). The GPU Operator loads it with `driver.rdma.enabled=true`. Reported when the list shows the nvidia driver and the pool's fabric is RDMA.";
    LaunchLocalRank "RDG230" Info false,
        "the launcher passes the script a local-rank argument whose spelling depends on the PyTorch version", "https://github.com/pytorch/pytorch/blob/v2.0.0/torch/distributed/run.py",
        "What a training script is told of its local rank depends on the launcher: `python -m torch.distributed.launch` appends `--local_rank=N` to the script's arguments before PyTorch 2.0 (v1.13.1 torch/distributed/run.py, config_from_args) and `--local-rank=N` from 2.0 (v2.0.0, the same function), unless `--use_env` is given; torchrun passes none, only the LOCAL_RANK variable (its parser has no use_env, so get_use_env is true). argparse matches neither spelling to the other, so a script that declares only one (Swin-Transformer's main.py requires `--local_rank`, as seed 001's job runs it) exits at argument parsing on every rank under the other: under torchrun, or under the legacy launcher of PyTorch 2.0 or later. Say in the Job which form the script reads (`localRank: env`, `--local_rank` or `--local-rank`) and rdmagen passes exactly that one, whichever launcher and PyTorch run it; `lint` reports the legacy launcher without `--use_env`.";
    NcclTcUnsetBefore226 "RDG231" Warning false,
        "NCCL_IB_TC=-1 on an NCCL before 2.26, which reads it as traffic class 255", "https://github.com/NVIDIA/nccl/blob/v2.25.1-1/src/transport/net_ib.cc#L1103",
        "From NCCL 2.26 NCCL_IB_TC defaults to -1 and -1 means \"not set\": the communicator's configured traffic class, else 0 (v2.26.2-1 src/transport/net_ib.cc:102, 1344). Before, its default is 0 (v2.25.1-1 net_ib.cc:96) and the value goes straight into the queue pair's 8-bit GRH traffic class (:1103), so -1 is 255: DSCP 63 with both ECN bits on a RoCE fabric, a class no lossless (PFC) queue is set up for. Leave NCCL_IB_TC out, or give the class the switches expect (the pool's `trafficClass`). Judged against the pool's `target.nccl`, the oldest NCCL its images have.";
    NcclQpsOverflow "RDG232" Warning false,
        "NCCL_IB_QPS_PER_CONNECTION times the devices NCCL merges into one NIC passes its 128 queue pairs", "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/net_ib/connect.cc#L884-L887",
        "NCCL opens NCCL_IB_QPS_PER_CONNECTION queue pairs per device of a merged NIC (the two ports of a dual-port NIC, or the NICs NCCL fuses into one virtual device) and keeps them in arrays of NCCL_IB_MAX_QPS = 128 slots (v2.30.7-1 src/transport/net_ib/common.h:172, 344; connect.cc:884-887), with no check of the product. A merged NIC holds up to NCCL_IB_MAX_DEVS_PER_NIC devices: 1 before 2.20 (v2.19.3-1 net_ib.cc:650, no merging), 2 from 2.20 (v2.20.5-1 net_ib.cc:45), 4 from 2.24 (v2.24.3-1 net_ib.cc:45), 8 from 2.30 (v2.30.7-1 common.h:58, nccl_net.h, net_v12.h:11). So 128 fits only an unmerged NIC: the real bound is 128 divided by that count for the pool's `target.nccl` (64, 32 or 16), above which a merged NIC writes past the arrays. Seed 001's 8 fits every release.";
    DpkgToolMissing "RDG233" Warning false,
        "a captured dpkg -l shows a fabric-checking tool of seed 000's list not installed", SEED_AISTUDIO,
        "Seed 000's check names eight packages; two of them, infiniband-diags (ibstat) and perftest (ib_write_bw), are tools for checking the fabric by hand, and NCCL trains just as well without them. Their absence is a warning, so that `detect --dpkg` and `image-check --dpkg` do not fail on a node or image that has the RDMA user space NCCL loads; the other six missing are RDG082. `rdmagen dockerfile --set seed` installs all eight.";
    KaiWithGang "RDG270" Error false,
        "a pool asks for the KAI scheduler and for the operator's Volcano gang scheduling", "https://github.com/NVIDIA/KAI-Scheduler/blob/v0.13.0/pkg/podgrouper/pod_controller.go#L89-L91",
        "KAI's pod grouper makes one PodGroup per training job, with every replica's pods as its minimum (kubeflow/distributed_common.go:45-50), for pods whose schedulerName is KAI's; it skips every other pod (pod_controller.go:89-91). An operator started with `--gang-scheduler-name=volcano` sets each pod's schedulerName to volcano and makes a Volcano PodGroup instead, so KAI never sees the pods, and neither queue nor topology is honoured. KAI gang-schedules the job by itself: say `gangScheduling: false` on a pool with `scheduler: {name: kai-scheduler}`, and start the operator without a gang scheduler.";
    SingleProcessManyGpus "RDG250" Warning false,
        "a pod with several GPUs starts one Python process and no launcher", TORCHRUN,
        "PyTorch's distributed training runs one process per GPU (DistributedDataParallel's model); torchrun, `python -m torch.distributed.run` or the legacy launcher start `--nproc-per-node` of them. A container that requests several GPUs (`nvidia.com/gpu: 8`) and runs `python train.py` directly starts one process, which trains on one GPU while the others idle: on 2 pods of 8 GPUs, 14 of 16 do nothing. Start the script with torchrun (`--nproc-per-node=8`, or `auto`), or request one GPU per pod. Reported only when the command is plainly one Python process: exec form, or a `sh -c` script of simple commands around one `python`; a script with a loop, a background job, another launcher (mpirun, deepspeed, accelerate) or `--multiprocessing-distributed` (torch.multiprocessing.spawn, one process per GPU from inside the script) is not judged. A script that spawns its own processes otherwise: suppress the finding.";
    ElasticMetricsSdk "RDG251" Warning false,
        "a PyTorchJob's elasticPolicy.metrics breaks the Kubeflow Python SDK", "https://pypi.org/project/kubeflow-training/1.9.4/",
        "The Kubeflow Python SDK (kubeflow-training 1.9.4) types `elasticPolicy.metrics` as `list[K8sIoApiAutoscalingV2MetricSpec]` (kubeflow/training/models/kubeflow_org_v1_elastic_policy.py line 38), a model its package does not have: ApiClient.deserialize raises AttributeError (\"module 'kubeflow.training.models' has no attribute 'K8sIoApiAutoscalingV2MetricSpec'\") on any job that lists a metric, so TrainingClient.get_job fails on it and list_jobs for its whole namespace, even with `runPolicy` present (RDG071). The operator itself accepts the field (it creates a HorizontalPodAutoscaler from it). Where the SDK reads the jobs, leave `metrics` out (an empty list is read) and scale by other means.";
    ReplicaNcclEnvDiffers "RDG252" Warning false,
        "the replicas of one job set different NCCL variables", NCCL_DOCS,
        "Every rank of a communicator reads NCCL's variables from its own environment, and the ranks must agree on how they connect: a GID index (NCCL_IB_GID_INDEX), HCA list, traffic class, socket interface or transport on the Master's pod and not on the Workers', or with another value, makes the Master's queue pairs use another GID or device than the Workers' (modify_qp fails, status 12 timeouts) or one side fall back to sockets. Set each NCCL_* variable the same on every replica's training container; rdmagen writes them from one plan. Variables from envFrom or valueFrom are not compared.";
    ImageUnpinned "RDG253" Warning false,
        "a training container's image has no tag, or the tag latest", "https://kubernetes.io/docs/concepts/containers/images/#image-names",
        "An image without a tag is `:latest` (Kubernetes: \"If you don't specify a tag, Kubernetes assumes you mean the tag latest\"), and a `:latest` image gets imagePullPolicy Always by default, so every pod pulls whatever the tag names when it starts. The pods of a multi-node job start at different times on different nodes: after a push between them, ranks run different code, PyTorch or NCCL builds (NCCL refuses peers of another version, or hangs), and a restart after a failure runs another image than the one that failed. Name a version tag (`train:2024.11`) or a digest (`train@sha256:...`). A warning rather than an error: the job may run as intended on a registry that never moves the tag.";
    LauncherNnodesReplicas "RDG254" Error false,
        "the launcher's --nnodes disagrees with the PyTorchJob's replica count", TORCHRUN,
        "torchrun and `torch.distributed.launch` wait at the rendezvous for `--nnodes` nodes (or, given `MIN:MAX`, at least MIN and at most MAX), and the operator starts one pod per replica (Master's 1 plus the Workers'). With more nodes asked for than pods, the rendezvous waits until it times out; with fewer, the extra pods are turned away or form a group of their own. A literal on the command line wins over the PET_NNODES the operator sets. Leave `--nnodes` out (torchrun reads PET_NNODES), pass `$(PET_NNODES)`, or make it the replica count. Values the shell or the kubelet fills in are not judged.";
    LauncherNprocAboveGpus "RDG255" Error false,
        "the launcher starts more processes per pod than the pod has GPUs", TORCHRUN,
        "`--nproc-per-node N` starts N processes per pod, and each takes the GPU of its LOCAL_RANK. With fewer GPUs than processes, the processes past the last GPU fail (`invalid device ordinal`), or share a GPU, which NCCL refuses (`Duplicate GPU detected`). Make N the container's `nvidia.com/gpu`, or write `--nproc-per-node=gpu` (or `auto`), which counts the GPUs the pod sees.";
    LauncherNprocBelowGpus "RDG256" Warning false,
        "the launcher starts fewer processes per pod than the pod has GPUs", TORCHRUN,
        "`--nproc-per-node N` starts N processes per pod, one per GPU: with G > N GPUs requested, G - N of them idle while the pod holds them. Make N the container's `nvidia.com/gpu`, write `--nproc-per-node=gpu` (or `auto`), or request only N GPUs. A warning, not an error: a process that drives several GPUs itself (model parallelism inside one process) is right with fewer, and lint cannot see it; suppress the finding there.";
    NcclAlgoAtScale "RDG260" Info false,
        "a very large job: seed 000 suggests trying NCCL_ALGO=Ring (or Tree) against NCCL's own choice", SEED_AISTUDIO,
        "Seed 000: \"如果任务规模非常大，可以手动设置下指定拓扑建环的策略。虽然 AIStudio 平台默认会自动选择，但有时根据任务的不同规模和通信特征，尝试手动指定 ring 或者 tree 可能会有更好的性能\" (if the job is very large, you can set the algorithm by hand; the platform chooses automatically, but depending on scale and traffic, trying ring or tree may perform better), with `export NCCL_ALGO=Ring`. NCCL's tuner picks ring or tree per collective and message size from a model (src/graph/tuning.cc): ring moves the most data per step but takes 2(n-1) steps, its latency growing with the ranks, while the double binary tree's grows with their logarithm (NCCL 2.4's trees, made for scale); the model can be wrong, as on 5 nodes of 4x400G RoCE where ring reached 190 GB/s and NCCL's choice of tree 150 (NVIDIA/nccl#1368). rdmagen reads \"very large\" as 32 nodes or more (the seed gives no number) and gives it as advice, on render and validate of such a job that does not set NCCL_ALGO: measure both with nccl-tests at the job's message sizes (`NCCL_ALGO=Ring` and `=Tree`) and set one only if it wins. NCCL_ALGO restricts NCCL to the algorithms named; from 2.24 its syntax is per collective (`allreduce:ring`), and a name the version does not know fails initialisation (RDG200: PAT before 2.23, the per-function form before 2.24).";
    NcclSocketTransport "RDG140" Error false,
        "NCCL carried the inter-node data over TCP sockets, not RDMA", "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/net.cc#L324-L331",
        "nccl-log: `Using network Socket` or channels `via NET/Socket/N` mean the run did not use RDMA: it works, at a small fraction of the fabric's rate (3.15 GB/s instead of 187 on the same Azure nodes). The finding names the reason the log shows (NCCL_IB_DISABLE, no libibverbs, no device), which has a finding of its own. An IPoIB interface in the socket list (`ib0`) is still TCP. Not reported for a pool whose fabric is tcp.";
    NcclIbUnavailable "RDG141" Error false,
        "NCCL's IB transport did not start: disabled, no libibverbs, or no device", "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/net_ib/init.cc#L469-L471",
        "nccl-log: `NCCL_IB_DISABLE set by environment to 1` turns RDMA off (a job with `rdma: off`, or an image ENV: `rdmagen image-check`); `Failed to open libibverbs.so` means the image lacks the RDMA user space (`rdmagen dockerfile` installs it); `NET/IB : No device found` means no usable verbs device: no provider library (ibverbs-providers), no RDMA device given to the pod (its RDMA resource), or NCCL_IB_HCA naming devices the node lacks.";
    NcclQpConnect "RDG142" Error false,
        "NCCL could not connect RDMA queue pairs: wrong or unroutable GID, mismatched NICs", "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/misc/ibvwrap.cc#L336-L377",
        "nccl-log: `Call to ibv_modify_qp failed` with `Invalid argument` usually means NCCL_IB_GID_INDEX (the pool's `gidIndex`) forces an index that does not fit, `Network is unreachable` a GID with no route (link-local, or no address on the RDMA netdev), `Connection timed out` NICs not connected across rails (NCCL_CROSS_NIC=0). A RoCE queue pair on a link-local GID (fe80::), or a GID index other than the pool's, is reported here too.";
    NcclVerbsResources "RDG143" Error false,
        "creating an RDMA queue pair, completion queue or memory region failed", "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/misc/ibvwrap.cc#L38-L45",
        "nccl-log: `Call to ibv_create_qp failed` (or ibv_reg_mr, ibv_create_cq) with `Cannot allocate memory` is the locked-memory limit: RDMA pins its buffers, so the container needs the IPC_LOCK capability (rdmagen adds it to every RDMA job) and an unlimited memlock ulimit. `ibv_reg_mr ... Bad address` on GPU memory means nvidia-peermem (or dma-buf) is missing.";
    NcclCompletionError "RDG144" Error false,
        "an RDMA operation failed on the fabric: a completion error or a device event", "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/transport/net_ib/common.h#L612-L630",
        "nccl-log: `Got completion from peer ... status=12` is IBV_WC_RETRY_EXC_ERR: the peer did not acknowledge within NCCL_IB_TIMEOUT x NCCL_IB_RETRY_CNT (a flapping or lossy link, a RoCE fabric without PFC/ECN, or a timeout too short: the pool's `ibTimeout`). Status 4 (LOC_PROT_ERR) points at ACS breaking GPUDirect RDMA; status 5 (WR_FLUSH_ERR) follows an earlier error. Fatal async events and GID table changes come from the NIC itself.";
    NcclNoGdr "RDG145" Error false,
        "RDMA was used without GPUDirect RDMA", "https://github.com/NVIDIA/nccl/issues/412",
        "nccl-log: NET channels without `/GDRDMA`, `GDR 0` in `Connected all rings`, or `GPU Direct RDMA Disabled for HCA` mean the NIC cannot read and write GPU memory, so every transfer is staged through host memory: about 2/3 of the bandwidth (sjeaugey, NVIDIA/nccl#412). Usually nvidia-peermem (or dma-buf) is missing on the node, PCIe ACS redirects peer traffic, or the NIC is far from the GPU (NCCL_NET_GDR_LEVEL). Re-grade it (`--severity RDG145=warning`) where NICs hang off the CPU by design.";
    NcclLowBandwidth "RDG146" Error false,
        "the large-message bandwidth is below the plausible share of the pool's line rate", "https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md",
        "nccl-log: the bus-bandwidth plateau of nccl-tests (rows of at least 256 MiB; never the `# Avg bus bandwidth` line, which averages in the small sizes) or ib_write_bw's average (one NIC) is compared with the line rate of the pool's network label (\"IB 8*200G\": 1600 Gb/s = 200 GB/s). Healthy fabrics reach about 96% (NCCL's maintainers: 24 GB/s per 200G NIC); below 80% is a finding, below 10% is almost certainly TCP. On two nodes tree and NVLS can exceed the line rate, so only the lower bound is judged.";
    NcclVersionMismatch "RDG147" Error false,
        "the nodes run different NCCL versions", "https://github.com/NVIDIA/nccl-tests/issues/185",
        "nccl-log: each host's version, printed (`NCCL version 2.19.3+cuda12.3`) or bounded by the formats its lines use (2.18's plugin lines differ from 2.19's), must agree. Mixed versions fail to connect (`ibv_modify_qp ... Network is unreachable` in NVIDIA/nccl-tests#185) or hang: build every node's image from one base.";
    NcclOtherError "RDG148" Error false,
        "the log holds another error: an NCCL WARN line, wrong results, a framework NCCL error", "https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/debug.cc#L328-L354",
        "nccl-log: every `NCCL WARN` line is an error line; those of no more specific rule are reported here with their text, as are nccl-tests' wrong results (`#wrong` above 0, out-of-bounds values), perftest's connection failures, and PyTorch's `NCCL error` and watchdog timeouts.";
    NcclUndetermined "RDG149" Error false,
        "the log does not show whether RDMA carried the data", "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-debug",
        "nccl-log: without NCCL_DEBUG=INFO NCCL prints nothing about its network, which is not evidence of a fallback either (NVIDIA's fabric guide: grepping an ordinary run finds nothing); and a single-node run (`nNodes 1`) sends nothing across the network. Run across at least two nodes with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV, or accept it with `--severity RDG149=warning`.";
    UnusedSuppression "RDG130" Warning false,
        "a suppression suppresses nothing", "https://docs.astral.sh/ruff/rules/unused-noqa/",
        "A `# rdmagen: ignore=` comment or an `rdmagen.io/ignore` annotation names a rule that made no finding where it applies (the comment's line and the next; the annotated object). Either the problem was fixed or the rule is off, and the stale suppression would hide the next real finding there. ruff reports its unused `noqa` comments the same way (RUF100).";
    SuppressionWithoutReason "RDG131" Info false,
        "a suppression gives no reason", "README.md",
        "Write why after the rule IDs: `# rdmagen: ignore=RDG080 the platform strips image ENV`. The next reader of the file cannot ask the person who silenced the rule.";
    SuppressionUnknownRule "RDG132" Warning false,
        "a suppression names no rule rdmagen has, or one that cannot be suppressed", "README.md",
        "Rule IDs are RDG followed by three digits (`rdmagen rules` lists them). A misspelt ID suppresses nothing, so the finding it meant stays. Findings that a file cannot be read at all (RDG001, RDG002, RDG133), and those about what rdmagen cannot do as written (README: Rule configuration), cannot be suppressed.";
    ConfigInvalid "RDG133" Error true,
        "the configuration file is not valid", "README.md",
        "`.rdmagen.yaml` (or `--config FILE`) takes `rules`, `pools`, `output`, `format`, `minSeverity` and `overrides`; a level is off, info, warning or error, and a rule ID must exist. A configuration that cannot be read stops the run (exit 2) rather than leaving rules on or off by surprise.";
    TrainerReleaseUnsupported "RDG134" Error false,
        "the pool targets a Kubeflow Trainer release rdmagen cannot write for", "https://github.com/kubeflow/trainer/blob/v2.3.0/CHANGELOG/CHANGELOG-2.1.md",
        "rdmagen writes Trainer v2 objects for v2.1 (podTemplateOverrides) through v2.3 (runtimePatches, merged resourcesPerNode), the releases whose CRDs it validates against. v2.0 had podSpecOverrides and spec.labels, replaced in v2.1 (#2785); upgrade the cluster or target the PyTorchJob API.";
    TargetFieldIgnored "RDG135" Warning false,
        "a target field is ignored, or rdmagen assumes what it cannot know", "README.md",
        "`target.operator` is the PyTorchJob operator's version and means nothing to Kubeflow Trainer v2, whose torch plugin always sets PET_*; `target.trainer` and `target.clusterScoped` mean nothing without `api: trainer.kubeflow.org/v1alpha1`; `gangScheduling: true` on Trainer needs a Volcano scheduler. A Trainer release newer than the latest rdmagen knows is written for that latest release's API, which it may have changed. A field that is ignored usually means the pool says something other than what its author meant.";
    TrainerCannotCarry "RDG136" Error false,
        "the target Trainer release has no TrainJob field for a value the job needs", "https://github.com/kubeflow/trainer/blob/v2.3.0/pkg/apis/trainer/v1alpha1/trainjob_types.go",
        "A TrainJob carries image, command, env, node count, processes per node and resources in `trainer`, and pod values through runtimePatches (v2.2+: volumes, mounts, container and pod securityContext, nodeSelector, affinity, tolerations, imagePullSecrets, serviceAccountName, pod labels and annotations) or podTemplateOverrides (v2.1: the same without securityContext). It cannot add a container or set schedulerName, priorityClassName, hostNetwork, dnsPolicy, restartPolicy or the operator's runPolicy, and on v2.1 not IPC_LOCK. rdmagen computes the pod Trainer would make of runtime and TrainJob and names every value the job asked for that the pod would not get: set it in the pool, whose runtime carries it for every job, or target a release that can.";
    TrainerInheritsFromRuntime "RDG137" Warning false,
        "the job's pods get values from the pool's runtime that the job did not ask for", "https://github.com/kubeflow/trainer/pull/3602",
        "A TrainJob adds to its runtime and overrides it, but cannot remove what the runtime sets: an env variable, a volume, a capability, and on v2.3, where resourcesPerNode merges key by key, a resource (the RDMA device of a single-node job, say). The pods get them anyway; give such jobs a pool of their own if that matters.";
    RuntimeNamespace "RDG138" Error false,
        "a TrainJob is not in the namespace of its namespaced TrainingRuntime", "https://github.com/kubeflow/trainer/blob/v2.3.0/pkg/apis/trainer/v1alpha1/trainjob_types.go#L156-L178",
        "A namespaced TrainingRuntime can only be referenced from its own namespace. rdmagen writes the runtime in the pool's `metadata.namespace` (none: kubectl's current namespace); a job elsewhere would be refused by Trainer's webhook. Put the job in the pool's namespace, or set `target.clusterScoped: true` for a ClusterTrainingRuntime.";
    PodTemplateDropsItems "RDG164" Warning false,
        "a podTemplate overlay replaces a list and drops items the job or pool put in it", "crates/upstream/schemas/kubernetes/v1.33-core.json",
        "Kubernetes' strategic merge replaces a list without a patch merge key (its definition has no `x-kubernetes-patch-merge-key`: affinity terms, a container's command and args, `capabilities.drop`, dnsConfig lists, ...) with the patch's whole list. Where the pod rdmagen built already holds items there from the job's or the pool's fields (affinity, sidecars, initContainers, securityContext), an overlay that lists others loses them without a word. rdmagen merges such lists as Kubernetes does, because adding to them would change what they mean (node selector terms are ORed; a command is a sequence), and names the items lost: repeat them in the overlay's list, or change the job or pool field instead. Tolerations and the training container's envFrom and capabilities.add are added to, never replaced, so they do not trigger this.";
    TolerationInvalid "RDG165" Error false,
        "a toleration the API server refuses", K8S_TOLERATIONS,
        "Kubernetes validates every toleration of a pod (ValidateTolerations): an empty key needs operator Exists (\"match all\"), Exists takes no value, Equal (or no operator) takes a label value (at most 63 characters: letters, digits, `-`, `_`, `.`), only Equal and Exists are operators, the key is a label key, the effect is NoSchedule, PreferNoSchedule or NoExecute, and tolerationSeconds needs effect NoExecute. A pod with a bad toleration is refused, so the operator never creates it; with podTemplate tolerations added to every pod, one bad item stops the whole job.";
    LabelInvalid "RDG166" Error false,
        "a label the API server refuses", K8S_LABELS,
        "Kubernetes validates the labels of every object and pod template, and a pod's nodeSelector, with ValidateLabels: a key is a qualified name (`name` or `prefix/name`: the name at most 63 letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit; the prefix a lowercase DNS subdomain of at most 253 characters), a value is empty or such a name. A value with a space, a colon or a line break (`\"a: b\\nc\"`), or one of 64 characters, gets the object refused: the job is never created, or its pods never are.";
    AnnotationInvalid "RDG167" Error false,
        "an annotation key the API server refuses, or annotations over 256 KiB", K8S_ANNOTATIONS,
        "ValidateAnnotations checks each key as a qualified name after lowercasing it (so `Example.com/Note` is fine, `a b` is not) and refuses an object whose annotation keys and values add up to more than 262144 bytes (TotalAnnotationSizeLimitB). Values may hold anything. Checked on every object and pod template rendered or linted.";
    VolumeNameInvalid "RDG168" Error false,
        "a pod volume's name is not a DNS-1123 label, or repeats another volume's", K8S_VOLUMES,
        "ValidateVolumes wants each volume name to be at most 63 lowercase letters, digits and `-`, starting and ending with a letter or digit, and unique in the pod; a container's volumeMounts refer to it by that name. `*Alias_Vol` or `data.v1` gets the pod refused. A job's and pool's own volumes that repeat a name are RDG110.";
    ContainerNameInvalid "RDG169" Error false,
        "a container name is not a DNS-1123 label, or repeats another container's", K8S_CONTAINER_NAMES,
        "validateContainerCommon wants every container and init container name to be a DNS-1123 label (at most 63 lowercase letters, digits and `-`, starting and ending with a letter or digit), and validateContainers and validateInitContainers (L3568-L3574, L3700-L3707) want the names unique across both lists. A sidecar or init container from a job, a pool or a podTemplate overlay that breaks this gets every pod refused.";
    PortNameInvalid "RDG170" Error false,
        "a container port's name is not an IANA service name, or repeats one of the container's", K8S_PORT_NAMES,
        "validateContainerPorts checks a named port with IsValidPortName (apimachinery validation.go L341-L369): 1 to 15 lowercase letters, digits and `-`, at least one letter, no `--`, no `-` at either end; and names must differ within a container. A Service's targetPort refers to it by name.";
    ReferenceNameInvalid "RDG171" Error false,
        "a claim, ConfigMap, Secret or ServiceAccount is referred to by a name no such object can have", K8S_OBJECT_NAMES,
        "ConfigMaps, Secrets, ServiceAccounts and PersistentVolumeClaims are named by DNS-1123 subdomains (NameIsDNSSubdomain: at most 253 lowercase letters, digits, `-` and `.`). The API server refuses a pod whose serviceAccountName (ValidatePodSpec, validation.go L4282-L4286), envFrom configMapRef or secretRef (L2800-L2822; a trailing `-` is allowed there, as for a prefix) or valueFrom configMapKeyRef or secretKeyRef (L2866-L2899) is not one. A volume's claimName, configMap name or secretName is only checked to be non-empty (L928-L988), so such a pod is created and then waits forever for an object that cannot exist; rdmagen reports that too.";
    ObjectNameInvalid "RDG172" Error false,
        "an object's name is not a DNS-1123 subdomain", K8S_CUSTOM_RESOURCE_META,
        "The API server validates the metadata of a custom resource on create (ValidateObjectMetaAccessor with NameIsDNSSubdomain): the name is at most 253 lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit. Checked on TrainingRuntimes and ClusterTrainingRuntimes, whose CRDs add no rule of their own; a TrainJob's name is RDG150 (its CRD wants a DNS-1035 label) and a PyTorchJob's RDG007, both stricter.";
    RenderedSchema "RDG090" Error false,
        "the rendered manifest does not match rdmagen's PyTorchJob schema", "schemas/pytorchjob.schema.json",
        "Rendered output is parsed back and validated before anything is written. rdmagen's schema covers the PyTorchJob envelope (metadata, nprocPerNode, runPolicy, the Master and Worker replicas); each pod template is checked against Kubernetes' own schema (RDG095). With a custom template this usually means the template writes a field in the wrong place. Where rdmagen writes output this rule cannot be waived: a manifest it cannot read back as one PyTorchJob is one it cannot compare with the plan (RDG092).";
    RenderedFidelity "RDG092" Error false,
        "the rendered manifest does not carry a value the plan decided", "src/verify/mod.rs",
        "After rendering, the image, command and every environment variable, and everything else the plan put in each pod template (the RDMA resource, IPC_LOCK, volumes and mounts, the GPU count), are read back and compared with the plan, so that no template or quoting mistake changes what the user wrote. A template may add a field; it may not drop or change one the plan decided. Where rdmagen writes output this rule cannot be turned off, re-graded or suppressed: a waiver would let a manifest other than the plan be written without a word.";
    TemplateError "RDG093" Error false,
        "a template failed to render", "templates/",
        "A template refers to an undefined value, has a syntax error, or hit a limit: one render may do at most 1 000 000 units of work (minijinja fuel, about one per instruction; a loop that does not end stops here) and write at most 1 MiB. Built-in templates never do; check templates given with --templates or --template.";
    DockerfileShape "RDG094" Error false,
        "a rendered Dockerfile has a line that is not an instruction", "https://docs.docker.com/reference/dockerfile/",
        "Every logical line of a Dockerfile starts with an instruction (FROM, RUN, ENV, ...). A line that does not means a template or a value broke the file; nothing is written.";
    RenderedKubernetesSchema "RDG095" Error false,
        "a rendered pod template, PersistentVolume or PersistentVolumeClaim does not match Kubernetes' own schema", "crates/upstream/schemas/kubernetes/v1.33-core.json",
        "Each replica's pod template in a rendered PyTorchJob, and each PersistentVolume and PersistentVolumeClaim in storage.yaml, is validated against Kubernetes 1.33's own core/v1 definitions made strict, as kubeconform -strict does: a field Kubernetes does not know is an error, because the API server would drop it without a word. With a custom template (--templates) this usually means a misspelt or misplaced field; a field added to Kubernetes after 1.33 is unknown here too.";
}

/// Errors about what rdmagen cannot do as written, whatever the rule's level: a
/// document it could not load, a pool that is not there or not one, an input whose
/// value the plan cannot render as given (it would be dropped, replaced or placed
/// where it must not go: an invalid name, quantity or env entry, an RDMA request
/// that contradicts the pool, a volume with no or two sources, a subPath with `..`),
/// a podTemplate overlay that changes a decision (never merged), a template or pin
/// file that produced nothing usable, and rendered output that does not read back as
/// the plan (RDG092) or cannot be read back as one manifest of rdmagen's shape at all
/// (RDG090: then RDG092 could not look). Turning one off would change the output
/// without a word, so they keep their level. Every other error is waived as written:
/// a job whose NCCL_IB_TC breaks RDG020 gets exactly that NCCL_IB_TC, and with RDG095
/// off a template may write a field newer than the vendored Kubernetes schema.
const REFUSALS: &[Rule] = &[
    Rule::UnknownDocument,
    Rule::InputShape,
    Rule::UnknownPool,
    Rule::DuplicateName,
    Rule::InvalidJobName,
    Rule::InvalidQuantity,
    Rule::InvalidNamespace,
    Rule::InvalidEnvName,
    Rule::EnvValueFrom,
    Rule::RdmaOnTcpPool,
    Rule::RdmaTypeMismatch,
    Rule::RdmaRequestSyntax,
    Rule::RdmaUnknownType,
    Rule::GpusAbovePool,
    Rule::RdmaResourceIsGpu,
    Rule::CommandConflict,
    Rule::HcaNamingConflict,
    Rule::VolumeSource,
    Rule::VolumeClash,
    Rule::VolumeSubPath,
    Rule::QueueConflict,
    Rule::PodTemplateOverride,
    Rule::TemplateError,
    Rule::DockerfileShape,
    Rule::PinInvalid,
    Rule::BaseImageInvalid,
    Rule::NothingDetected,
    Rule::TrainerReleaseUnsupported,
    Rule::TrainerCannotCarry,
    Rule::RenderedSchema,
    Rule::RenderedFidelity,
];

impl RuleInfo {
    pub fn by_id(id: &str) -> Option<&'static RuleInfo> {
        CATALOGUE.iter().find(|r| r.id.eq_ignore_ascii_case(id))
    }

    /// Whether the configuration, the command line or a suppression may turn the rule
    /// off or re-grade it: not for a file that cannot be read (`syntax`), nor for a
    /// refusal.
    pub fn configurable(&self) -> bool {
        !self.syntax && !REFUSALS.contains(&self.rule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn ids_are_unique_and_well_formed() {
        let mut ids = HashSet::new();
        for info in CATALOGUE {
            assert!(ids.insert(info.id), "{} is repeated", info.id);
            assert!(info.id.starts_with("RDG") && info.id.len() == 6);
        }
        assert_eq!(Rule::TemplateError.info().id, "RDG093");
        assert_eq!(RuleInfo::by_id("rdg020").unwrap().rule, Rule::IbTcSet);
    }
}
