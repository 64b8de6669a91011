//! Rules judged from a PyTorchJob manifest alone: what `rdmagen lint` reports on YAML
//! that rdmagen did not write, and what verification demands of what it did write.

use serde_json::Value;

use crate::diagnostics::{Finding, Rule};
use crate::kubeflow::operator::OperatorGeneration;
use crate::kubernetes::job_name;
use crate::kubernetes::sidecars::NATIVE_SIDECARS;
use crate::kueue::QUEUE_LABEL;
use crate::multus;
use crate::nccl::{self, EnvFacts};
use crate::platform::Platform;
use crate::platform::{Profile, is_rdma_resource, profile};
use crate::version::Version;

use super::pod_templates::{PodTemplate, of_pytorchjob};
use super::{images, launch, names, pod_network, replica_env, resources, tolerations};
use crate::diagnostics::escape;
use crate::diagnostics::message::pointer_segment;

/// What is known about the cluster a manifest is for. Unknown fields silence the rules
/// that depend on them: lint never guesses a platform or an operator.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManifestFacts {
    /// The training-operator version (`lint --operator`, or the pool's target).
    pub operator: Option<Version>,
    /// The platform (`lint --platform`, or the pool's).
    pub platform: Option<Platform>,
    /// The Kubernetes version of the cluster (`lint --kubernetes`, or the pool's).
    pub kubernetes: Option<Version>,
    /// The nodes' management NIC as its RDMA device name, or `none` when every RDMA
    /// device carries data; unknown: mlx5_0, the usual one ([`MANAGEMENT_NIC_ANNOTATION`]).
    pub management_nic: Option<String>,
}

/// The annotations of a manifest rdmagen wrote that say which cluster it was written
/// for: the pool's platform, its training-operator version (PyTorchJob) and its Trainer
/// release (TrainJob, runtime). `render` writes them on the object's metadata; `lint`
/// judges the object by them where no flag says otherwise, so that rendered output
/// lints as it was rendered.
pub const PLATFORM_ANNOTATION: &str = "rdmagen.io/platform";
pub const OPERATOR_ANNOTATION: &str = "rdmagen.io/operator";
pub const TRAINER_ANNOTATION: &str = "rdmagen.io/trainer";
pub const KUBERNETES_ANNOTATION: &str = "rdmagen.io/kubernetes";
/// The mpi-operator release an MPIJob was written for.
pub const MPI_OPERATOR_ANNOTATION: &str = "rdmagen.io/mpi-operator";
/// The management NIC of the pool a manifest was written for, when the pool named one
/// other than mlx5_0 (`none`: every RDMA device is a data NIC). RDG043 doubts an
/// NCCL_IB_HCA that lists mlx5_0 unless this says mlx5_0 is not the management NIC.
pub const MANAGEMENT_NIC_ANNOTATION: &str = "rdmagen.io/management-nic";

/// The version an object's annotation `key` gives, when it gives one.
pub fn written_version(object: &Value, key: &str) -> Option<crate::version::Version> {
    crate::version::Version::parse(object["metadata"]["annotations"][key].as_str()?)
}

impl ManifestFacts {
    fn profile(&self) -> Option<&'static Profile> {
        self.platform.map(profile)
    }

    /// The operator's generation, when its version is known.
    pub fn generation(&self) -> Option<OperatorGeneration> {
        self.operator.map(OperatorGeneration::of)
    }

    /// These facts, each one they leave unknown taken from the annotations `object`
    /// was written with ([`PLATFORM_ANNOTATION`], [`OPERATOR_ANNOTATION`],
    /// [`KUBERNETES_ANNOTATION`]); a value no platform or version has is ignored, as if
    /// not written.
    pub fn or_written(&self, object: &Value) -> ManifestFacts {
        let annotations = &object["metadata"]["annotations"];
        let platform = self
            .platform
            .or_else(|| serde_json::from_value(annotations[PLATFORM_ANNOTATION].clone()).ok());
        let operator = self
            .operator
            .or_else(|| written_version(object, OPERATOR_ANNOTATION));
        let kubernetes = self
            .kubernetes
            .or_else(|| written_version(object, KUBERNETES_ANNOTATION));
        let management_nic = self.management_nic.clone().or_else(|| {
            annotations[MANAGEMENT_NIC_ANNOTATION]
                .as_str()
                .filter(|v| {
                    !v.is_empty()
                        && v.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
                })
                .map(str::to_owned)
        });
        ManifestFacts {
            operator,
            platform,
            kubernetes,
            management_nic,
        }
    }
}

/// Whether `doc` is a Kubeflow PyTorchJob (any kubeflow.org version).
pub fn is_pytorchjob(doc: &Value) -> bool {
    doc["kind"] == "PyTorchJob"
        && doc["apiVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with("kubeflow.org/"))
}

/// Fields of RunPolicy that users put under `spec` by mistake.
const RUN_POLICY_FIELDS: &[&str] = &[
    "cleanPodPolicy",
    "backoffLimit",
    "ttlSecondsAfterFinished",
    "activeDeadlineSeconds",
    "schedulingPolicy",
    "suspend",
];

/// Commands that start one process per GPU from the operator's variables.
const LAUNCHERS: &[&str] = &[
    "torchrun",
    "torch.distributed.run",
    "torch.distributed.launch",
    "accelerate",
    "deepspeed",
];

/// The manifest's findings, each at a JSON Pointer into it.
struct Out(Vec<Finding>);

impl Out {
    fn push(&mut self, rule: Rule, message: impl Into<String>, pointer: impl Into<String>) {
        self.0.push(Finding::at_pointer(rule, message, pointer));
    }
}

/// Whether Kueue queues `doc`: its queue label on the job object, where Kueue's job
/// webhooks read it (Kueue v0.19.2 pkg/controller/constants/constants.go:23).
fn queued_by_kueue(doc: &Value) -> bool {
    doc["metadata"]["labels"][QUEUE_LABEL]
        .as_str()
        .is_some_and(|queue| !queue.is_empty())
}

/// Every problem of one PyTorchJob document, on the cluster `facts` describes.
pub fn check(doc: &Value, facts: &ManifestFacts) -> Vec<Finding> {
    let mut out = Out(Vec::new());
    let spec = &doc["spec"];
    for field in RUN_POLICY_FIELDS {
        if spec.get(field).is_some() {
            out.push(
                Rule::RunPolicyMisplaced,
                format!("spec.{field} belongs under spec.runPolicy; the API server drops it here"),
                format!("/spec/{field}"),
            );
        }
    }
    if spec.get("nprocPerNode").is_some_and(|v| !v.is_string()) {
        out.push(
            Rule::NprocPerNodeType,
            format!(
                "spec.nprocPerNode is {}; the CRD declares a string (\"8\", \"auto\"), so the API server rejects the job",
                spec["nprocPerNode"]
            ),
            "/spec/nprocPerNode",
        );
    }
    if !spec["runPolicy"].is_object() && queued_by_kueue(doc) {
        out.push(
            Rule::NoRunPolicyUnderKueue,
            format!("spec.runPolicy is missing, and the job's {QUEUE_LABEL} label has Kueue's webhook write runPolicy.suspend when the job is created, so the Python SDK reads the stored job; `runPolicy: {{}}` keeps the manifest readable before it is applied"),
            "/spec",
        );
    } else if !spec["runPolicy"].is_object() {
        out.push(
            Rule::NoRunPolicy,
            "spec.runPolicy is missing: the Kubeflow Python SDK cannot read the job, and one such job breaks list_jobs for its namespace; write `runPolicy: {}`",
            "/spec",
        );
    }
    let mut nproc = nproc_per_node(spec);
    if facts.generation() == Some(OperatorGeneration::PodWorld)
        && spec.get("nprocPerNode").is_some()
    {
        out.push(
            Rule::OldOperatorNproc,
            "spec.nprocPerNode is not in the CRD of a training-operator before 1.7: it is pruned, no PET_* variables are set, and WORLD_SIZE counts pods",
            "/spec/nprocPerNode",
        );
        // The operator never sees it: WORLD_SIZE is the pod count, as the command
        // checks below must assume.
        nproc = None;
    }
    let elastic = &spec["elasticPolicy"];
    if elastic["standalone"] == true {
        out.push(
            Rule::ElasticStandalone,
            "elasticPolicy.standalone: true makes the operator set PET_STANDALONE=\"\", which torchrun cannot parse",
            "/spec/elasticPolicy/standalone",
        );
    }
    // RDG251: the SDK's ElasticPolicy model names a metric model its package lacks
    // (kubeflow-training 1.9.4 models/kubeflow_org_v1_elastic_policy.py:38); an empty
    // list is read.
    if elastic
        .get("metrics")
        .is_some_and(|m| !m.is_null() && m.as_array().is_none_or(|a| !a.is_empty()))
    {
        out.push(
            Rule::ElasticMetricsSdk,
            "elasticPolicy.metrics: the Kubeflow Python SDK (kubeflow-training 1.9.4) cannot read a job that lists a metric (its model K8sIoApiAutoscalingV2MetricSpec does not exist), so get_job fails on this job and list_jobs for its namespace, runPolicy or not; leave metrics out where the SDK reads the jobs",
            "/spec/elasticPolicy/metrics",
        );
    }
    if elastic.get("nProcPerNode").is_some() && spec.get("nprocPerNode").is_some() {
        out.push(
            Rule::ElasticNprocConflict,
            "elasticPolicy.nProcPerNode is forbidden together with spec.nprocPerNode",
            "/spec/elasticPolicy/nProcPerNode",
        );
    }
    let Some(replicas) = spec["pytorchReplicaSpecs"].as_object() else {
        out.push(
            Rule::NotAPyTorchJob,
            "spec.pytorchReplicaSpecs is missing",
            "/spec",
        );
        return out.0;
    };
    if !replicas.contains_key("Master") && !replicas.contains_key("Worker") {
        out.push(
            Rule::NotAPyTorchJob,
            "pytorchReplicaSpecs has neither Master nor Worker",
            "/spec/pytorchReplicaSpecs",
        );
    }
    if let Some(name) = doc["metadata"]["name"].as_str() {
        // The operator defaults a missing replicas to 1 (pytorch_defaults.go).
        let counts: Vec<(&str, u32)> = replicas
            .iter()
            .map(|(role, r)| {
                let n = r.get("replicas").map_or(Some(1), Value::as_u64);
                (
                    role.as_str(),
                    n.map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX)),
                )
            })
            .collect();
        if let Some(message) = job_name::problem(name, &counts) {
            out.push(Rule::InvalidJobName, message, "/metadata/name");
        }
    }
    // The name is RDG007's, stricter than a custom resource's (names::custom_resource_name).
    out.0
        .extend(names::object_meta(&doc["metadata"], "/metadata"));
    for t in of_pytorchjob(doc) {
        let (role, replica) = (t.name, t.holder);
        let base = format!("/spec/pytorchReplicaSpecs/{}", pointer_segment(role));
        match role {
            "Master" => {
                if replica["replicas"] != 1 {
                    let found = replica
                        .get("replicas")
                        .map_or("missing".to_owned(), Value::to_string);
                    out.push(
                        Rule::MasterReplicas,
                        format!("Master replicas must be set to 1 (found {found})"),
                        format!("{base}/replicas"),
                    );
                }
            }
            "Worker" => {
                if replica["replicas"].as_i64().is_some_and(|n| n < 1) {
                    out.push(
                        Rule::WorkerReplicas,
                        format!(
                            "Worker replicas is {}; it must be at least 1",
                            replica["replicas"]
                        ),
                        format!("{base}/replicas"),
                    );
                }
            }
            _ => out.push(
                Rule::UnknownReplicaType,
                format!("replica type `{role}` is not Master or Worker (case-sensitive)"),
                base.clone(),
            ),
        }
        out.0
            .extend(pod_template_rules(&t, "<job>-master-0", facts));
        // The PyTorchJob's own CRD: the operator's release (pod_template_rules judged
        // the Kubernetes version, and says it once per sidecar).
        if facts.kubernetes.is_none_or(|v| v >= NATIVE_SIDECARS) {
            out.0.extend(dropped_sidecars(
                t.spec(),
                &t.spec_at(),
                None,
                facts.operator,
            ));
        }
        pytorch_pod(&mut out, t.spec(), &t.spec_at(), nproc, facts);
    }
    out.0.extend(replica_env::check(doc));
    out.0.extend(launch::nnodes(doc));
    gang_priority(&mut out, doc);
    out.0
}

/// RDG184: pods with a priority class in a job that looks gang-scheduled (a
/// `schedulingPolicy`, or pods on Volcano), whose PodGroup would not get it: the
/// operator reads `runPolicy.schedulingPolicy.priorityClass` only (training-operator
/// v1.9.4 job.go:250-296). Reported once, at the first such pod.
fn gang_priority(out: &mut Out, doc: &Value) {
    let scheduling = &doc["spec"]["runPolicy"]["schedulingPolicy"];
    if scheduling["priorityClass"]
        .as_str()
        .is_some_and(|c| !c.is_empty())
    {
        return;
    }
    let templates = of_pytorchjob(doc);
    let on_volcano = templates
        .iter()
        .any(|t| t.spec()["schedulerName"] == "volcano");
    if !scheduling.is_object() && !on_volcano {
        return;
    }
    let Some((t, class)) = templates
        .iter()
        .find_map(|t| Some((t, t.spec()["priorityClassName"].as_str()?)))
    else {
        return;
    };
    out.push(
        Rule::GangPriorityMissing,
        format!(
            "the pods' priorityClassName is `{}`, but runPolicy.schedulingPolicy.priorityClass is not set: when the operator gang-schedules through Volcano, the job's PodGroup takes its priority from that field alone, so Volcano orders and preempts this job at the default priority; set runPolicy.schedulingPolicy.priorityClass: {}",
            escape::shown(class),
            escape::shown(class)
        ),
        format!("{}/priorityClassName", t.spec_at()),
    );
}

/// spec.nprocPerNode as an integer, when it is one (the CRD wants a string).
fn nproc_per_node(spec: &Value) -> Option<i64> {
    match &spec["nprocPerNode"] {
        Value::String(s) => s.trim().parse().ok(),
        v => v.as_i64(),
    }
}

/// The rules of a PyTorchJob replica's pod beyond [`pod_shape`]: the operator's
/// `pytorch` container, every container's image, and the training command.
fn pytorch_pod(out: &mut Out, pod: &Value, base: &str, nproc: Option<i64>, facts: &ManifestFacts) {
    let containers = pod["containers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if !containers.iter().any(|c| c["name"] == "pytorch") {
        out.push(
            Rule::NoPytorchContainer,
            "no container is named `pytorch`",
            format!("{base}/containers"),
        );
    }
    for (i, c) in containers.iter().enumerate() {
        let at = format!("{base}/containers/{i}");
        if c["image"].as_str().is_none_or(|s| s.trim().is_empty()) {
            out.push(
                Rule::EmptyImage,
                format!(
                    "container `{}` has no image",
                    c["name"].as_str().unwrap_or("?")
                ),
                format!("{at}/image"),
            );
        }
        if c["name"] == "pytorch" {
            command(out, c, &at, nproc, facts);
        }
    }
}

/// Every pod rule of one pod template, wherever it sits ([`PodTemplate`]): the
/// template's metadata as the API server validates it, and [`pod_shape`] of its pod.
pub(crate) fn pod_template_rules(
    t: &PodTemplate<'_>,
    peer: &str,
    facts: &ManifestFacts,
) -> Vec<Finding> {
    let mut found = names::object_meta(&t.template["metadata"], &format!("{}/metadata", t.at));
    found.extend(multus_devices(t));
    found.extend(dropped_sidecars(
        t.spec(),
        &t.spec_at(),
        facts.kubernetes,
        None,
    ));
    found.extend(pod_shape(
        t.spec(),
        &t.template["metadata"],
        &t.spec_at(),
        peer,
        facts,
    ));
    found
}

/// RDG187: each native sidecar of `pod` (at `base`) that the cluster drops, on
/// `kubernetes` before 1.29 or under the PyTorchJob CRD of an `operator` before 1.8.
fn dropped_sidecars(
    pod: &Value,
    base: &str,
    kubernetes: Option<Version>,
    operator: Option<Version>,
) -> Vec<Finding> {
    let Some(why) = crate::kubernetes::sidecars::why_dropped(kubernetes, operator) else {
        return Vec::new();
    };
    crate::kubernetes::sidecars::native_sidecars(pod)
        .map(|(i, name)| {
            Finding::at_pointer(
                Rule::SidecarDropped,
                format!(
                    "init container `{}` is a native sidecar (restartPolicy: Always), but {why}: it becomes an init container that never exits and the pod stays in Init",
                    escape::shown(name)
                ),
                format!("{base}/initContainers/{i}/restartPolicy"),
            )
        })
        .collect()
}

/// The rules of a training pod that hold wherever its template sits (a PyTorchJob
/// replica, a Trainer runtime's replicated job, the pod a TrainJob gets from its
/// runtime): hostNetwork and DNS, RDMA and IPC_LOCK, a memory-backed /dev/shm, every
/// container's NCCL variables, and every container's requests and limits, the
/// tolerations and the names as the API server validates them (`resources`,
/// `tolerations`, `names`, also run on each PyTorchJob replica). `pod` is a pod spec at `base` (a JSON Pointer);
/// `peer` is the name the pods resolve to reach rank 0; `metadata` is the pod
/// template's (its Multus annotation says which resources attach secondary networks).
pub(crate) fn pod_shape(
    pod: &Value,
    metadata: &Value,
    base: &str,
    peer: &str,
    facts: &ManifestFacts,
) -> Vec<Finding> {
    let mut out = Out(Vec::new());
    host_network(&mut out, pod, base, peer);
    let multus = pod_network::has_multus_networks(metadata);
    let containers = pod["containers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, c) in containers.iter().enumerate() {
        container_rdma(
            &mut out,
            pod,
            c,
            &format!("{base}/containers/{i}"),
            facts,
            multus,
        );
    }
    out.0
        .extend(pod_network::check(pod, metadata, base, facts.profile()));
    out.0.extend(resources::check(pod, base));
    out.0.extend(launch::pod(pod, base));
    out.0.extend(images::check(pod, base));
    out.0.extend(tolerations::check(pod, base));
    out.0.extend(names::pod(pod, base));
    out.0
}

fn host_network(out: &mut Out, pod: &Value, base: &str, peer: &str) {
    if pod["hostNetwork"] == true && pod["dnsPolicy"] != "ClusterFirstWithHostNet" {
        out.push(
            Rule::HostNetworkDns,
            format!("hostNetwork: true needs dnsPolicy: ClusterFirstWithHostNet to resolve {peer}"),
            format!("{base}/hostNetwork"),
        );
    }
}

/// RDMA and IPC_LOCK, /dev/shm and the NCCL variables of container `c` (at `at`) of
/// `pod`.
fn container_rdma(
    out: &mut Out,
    pod: &Value,
    c: &Value,
    at: &str,
    facts: &ManifestFacts,
    multus: bool,
) {
    let rdma =
        resources(c).find(|(name, _)| is_rdma_resource(name) || multus && is_attached_device(name));
    let caps = capabilities(c);
    let privileged = c["securityContext"]["privileged"] == true;
    let ipc_lock = caps.contains(&"IPC_LOCK") || privileged;
    let host_rdma = privileged && host_rdma_devices(pod);
    if let Some((name, section)) = rdma {
        if !ipc_lock {
            out.push(
                Rule::RdmaWithoutIpcLock,
                format!("{name} is requested but IPC_LOCK is not added"),
                format!("{at}/resources/{section}/{}", pointer_segment(name)),
            );
        }
    } else if caps.contains(&"IPC_LOCK") && !host_rdma && !other_rdma_device(c) {
        out.push(
            Rule::IpcLockWithoutRdma,
            "IPC_LOCK is added but no RDMA resource is requested",
            format!("{at}/securityContext/capabilities"),
        );
    }
    if caps.contains(&"IPC_LOCK")
        && let Some((user, pointer)) = non_root_user(pod, c, at)
    {
        out.push(
            Rule::IpcLockNonRoot,
            format!(
                "container `{}` adds IPC_LOCK but runs as {user}: a non-root process never holds the capability (no ambient capabilities in Kubernetes), so locked memory stays at the runtime's limit (8 MiB under containerd) and ibv_reg_mr fails; run it as root, or set LimitMEMLOCK=infinity for containerd on the nodes and suppress this",
                escape::shown(c["name"].as_str().unwrap_or("?"))
            ),
            pointer,
        );
    }
    let gpus = launch::gpus(c);
    if gpus > 1 && !has_memory_shm(pod, c) {
        out.push(Rule::NoShm, format!("{gpus} GPUs share the 64 MiB default /dev/shm; mount an emptyDir with medium: Memory there"), at.to_owned());
    }
    if (rdma.is_some() || host_rdma) && !pins_nccl_net(c) {
        out.push(
            Rule::NcclFallbackUnpinned,
            format!(
                "container `{}` holds an RDMA device but leaves NCCL_NET unset: where the device cannot be used, NCCL trains over TCP sockets without failing; set NCCL_NET=IB (or the name of the image's net plugin) so that it fails at init instead",
                escape::shown(c["name"].as_str().unwrap_or("?"))
            ),
            format!("{at}/env"),
        );
    }
    let env_facts = EnvFacts {
        rdma_on: rdma.is_some() || host_rdma,
        profile: facts.profile(),
        management_nic: facts.management_nic.as_deref(),
        ..EnvFacts::default()
    };
    for (j, var) in c["env"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        let (Some(name), Some(value)) = (var["name"].as_str(), var["value"].as_str()) else {
            continue;
        };
        for problem in nccl::check(name, value, &env_facts) {
            out.push(problem.rule, problem.message, format!("{at}/env/{j}"));
        }
    }
}

/// Whether container `c` may pin NCCL's network: it sets NCCL_NET, or takes variables
/// from an `envFrom` source lint cannot read.
fn pins_nccl_net(c: &Value) -> bool {
    let env = c["env"].as_array().map(Vec::as_slice).unwrap_or_default();
    env.iter().any(|var| var["name"] == "NCCL_NET")
        || c["envFrom"].as_array().is_some_and(|from| !from.is_empty())
}

/// The pod spec's pointer, from a container's (`<base>/containers/<i>`).
fn base_of(at: &str) -> &str {
    at.rsplit_once("/containers/").map_or(at, |(base, _)| base)
}

/// RDG182: the user container `c` (at `at`) runs as when it is not root, with the
/// pointer of the field that says so: the container's securityContext wins over the
/// pod's, field by field, as the kubelet merges them (runAsUser, runAsNonRoot). None
/// for root or an unknown user (the image's USER, which a manifest does not show).
fn non_root_user(pod: &Value, c: &Value, at: &str) -> Option<(String, String)> {
    let field = |key: &str| -> Option<(&Value, String)> {
        let own = &c["securityContext"][key];
        if !own.is_null() {
            return Some((own, format!("{at}/securityContext/{key}")));
        }
        let pod_wide = &pod["securityContext"][key];
        (!pod_wide.is_null()).then(|| (pod_wide, format!("{}/securityContext/{key}", base_of(at))))
    };
    if let Some((v, pointer)) = field("runAsUser") {
        // uid 0 holds IPC_LOCK; beside runAsNonRoot: true the kubelet refuses to start
        // the container, which is another problem than this one.
        return (v.as_i64() != Some(0))
            .then(|| (format!("uid {}", escape::cut(&v.to_string(), 40)), pointer));
    }
    match field("runAsNonRoot") {
        Some((v, pointer)) if *v == true => Some(("runAsNonRoot: true".to_owned(), pointer)),
        _ => None,
    }
}

fn command(out: &mut Out, c: &Value, at: &str, nproc: Option<i64>, facts: &ManifestFacts) {
    let words: Vec<&str> = ["command", "args"]
        .iter()
        .flat_map(|k| c[k].as_array().map(Vec::as_slice).unwrap_or_default())
        .filter_map(Value::as_str)
        .collect();
    if words.is_empty() {
        return;
    }
    let line = words.join(" ");
    let first = words[0].rsplit('/').next().unwrap_or_default();
    if matches!(first, "sh" | "bash" | "dash" | "zsh") && words.contains(&"-c") {
        let message = match facts.profile().filter(|p| p.injects_into_pid1) {
            Some(p) => format!(
                "processes started through `sh -c` may not inherit the NCCL variables {} injects into PID 1",
                p.title
            ),
            None => "processes started through `sh -c` may not inherit variables a platform injects into PID 1".to_owned(),
        };
        out.push(Rule::ShellWrapper, message, format!("{at}/command"));
    }
    if facts.generation() == Some(OperatorGeneration::PodWorld) {
        old_operator_launch(out, &words, &line, at);
    }
    // torch.distributed.launch appends `--local_rank=N` to the script's arguments
    // before PyTorch 2.0 and `--local-rank=N` from 2.0 (torch/distributed/run.py
    // config_from_args at v1.13.1 and v2.0.0) unless --use_env: a script declaring one
    // form exits on the other (seed 001's Swin-Transformer main.py requires
    // --local_rank). A `sh -c` script is one word, read whole.
    if words.iter().any(|w| w.contains("torch.distributed.launch"))
        && !words
            .iter()
            .any(|w| w.contains("--use_env") || w.contains("--use-env"))
    {
        out.push(
            Rule::LaunchLocalRank,
            "torch.distributed.launch passes the script `--local_rank=N` before PyTorch 2.0 and `--local-rank=N` from 2.0 (torchrun passes neither, only LOCAL_RANK): a script that declares one form exits at argument parsing under the other; check which the image's PyTorch and the script use, or pass --use_env and LOCAL_RANK",
            format!("{at}/command"),
        );
    }
    // Without an (effective) nprocPerNode, torch.distributed.launch fed from
    // $(WORLD_SIZE) and $(RANK) is the correct form on both operator generations
    // (real-clusters.md §1); it only merits a note when PET_* would do the job.
    let Some(n) = nproc else { return };
    if line.contains("torch.distributed.launch") {
        out.push(Rule::LegacyLauncher, "torch.distributed.launch is deprecated; with spec.nprocPerNode set, torchrun reads the operator's PET_* variables with no flags", format!("{at}/command"));
    }
    if nnodes_from_world_size(&line) {
        out.push(
            Rule::WorldSizeNnodes,
            format!("--nnodes $WORLD_SIZE with nprocPerNode {n}: WORLD_SIZE is pods × {n}, so the rendezvous waits for nodes that never come"),
            format!("{at}/command"),
        );
    } else if n > 1 && !LAUNCHERS.iter().any(|l| line.contains(l)) {
        out.push(
            Rule::LauncherlessNproc,
            format!("nprocPerNode is {n} but no launcher starts {n} processes per pod; WORLD_SIZE counts processes that never join"),
            "/spec/nprocPerNode",
        );
    }
}

/// An operator before 1.7 sets no PET_* variables, so torchrun (and
/// torch.distributed.launch, the same parser) falls back to its defaults for what the
/// command does not pass: one node, one process, master 127.0.0.1 (torch
/// distributed/run.py get_args_parser). Each pod then trains alone without a word.
fn old_operator_launch(out: &mut Out, words: &[&str], line: &str, at: &str) {
    let launcher = words.iter().any(|w| {
        w.rsplit('/').next() == Some("torchrun")
            || *w == "torch.distributed.run"
            || *w == "torch.distributed.launch"
    });
    let has = |flags: &[&str]| {
        words.iter().any(|w| {
            flags
                .iter()
                .any(|f| *w == *f || w.starts_with(&format!("{f}=")))
        })
    };
    let missing: Vec<&str> = [
        (&["--nnodes"][..], "--nnodes"),
        (
            &["--nproc_per_node", "--nproc-per-node"][..],
            "--nproc_per_node",
        ),
        (
            &[
                "--master_addr",
                "--master-addr",
                "--rdzv_endpoint",
                "--rdzv-endpoint",
            ][..],
            "--master_addr",
        ),
    ]
    .into_iter()
    .filter(|(flags, _)| !has(flags))
    .map(|(_, name)| name)
    .collect();
    if launcher && !missing.is_empty() {
        out.push(
            Rule::OldOperatorNproc,
            format!(
                "an operator before 1.7 sets no PET_* variables, so the launcher runs without {}: each pod trains alone (1 node, 1 process, master 127.0.0.1); pass them from $(WORLD_SIZE), $(RANK) and $(MASTER_ADDR)/$(MASTER_PORT)",
                missing.join(", ")
            ),
            format!("{at}/command"),
        );
    } else if line.contains("PET_") {
        out.push(
            Rule::OldOperatorNproc,
            "the command reads PET_* variables, which an operator before 1.7 does not set",
            format!("{at}/command"),
        );
    }
}

/// `--nnodes $WORLD_SIZE`, `--nnodes=${WORLD_SIZE}` or `--nnodes $(WORLD_SIZE)`.
fn nnodes_from_world_size(line: &str) -> bool {
    line.match_indices("--nnodes").any(|(i, flag)| {
        let rest = line[i + flag.len()..].trim_start_matches(['=', ' ', '"', '\'']);
        ["$WORLD_SIZE", "${WORLD_SIZE}", "$(WORLD_SIZE)"]
            .iter()
            .any(|v| rest.starts_with(v))
    })
}

/// (resource name, "limits" | "requests") of a container.
pub(crate) fn resources(c: &Value) -> impl Iterator<Item = (&str, &'static str)> {
    ["limits", "requests"].into_iter().flat_map(move |section| {
        c["resources"][section]
            .as_object()
            .into_iter()
            .flat_map(move |m| m.keys().map(move |k| (k.as_str(), section)))
    })
}

pub(crate) fn capabilities(c: &Value) -> Vec<&str> {
    c["securityContext"]["capabilities"]["add"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

pub(crate) fn quantity(v: &Value) -> Option<i64> {
    match v {
        Value::String(s) => s.trim().parse().ok(),
        v => v.as_i64(),
    }
}

/// RDG180: the Multus annotation's entries against the devices the pod's containers
/// request (limits, where an extended resource must be given), the shared device
/// plugin's `rdma/` pod slot aside; and RDG179 for an annotation Multus cannot read,
/// which fails the pod's network set-up before any device is counted.
fn multus_devices(t: &PodTemplate<'_>) -> Vec<Finding> {
    let Some(value) = t.template["metadata"]["annotations"][multus::NETWORKS_ANNOTATION].as_str()
    else {
        return Vec::new();
    };
    let annotation_at = format!(
        "{}/metadata/annotations/{}",
        t.at,
        pointer_segment(multus::NETWORKS_ANNOTATION)
    );
    // The namespace only fills in entries that name none; it decides nothing here.
    let entries = match multus::parse(value, "default") {
        Ok(entries) => entries,
        // An empty value asks for nothing: Multus finds no network in it, and
        // has_multus_networks treats it so.
        Err(_) if value.is_empty() => return Vec::new(),
        Err(problem) => {
            return vec![Finding::at_pointer(
                Rule::AttachmentShape,
                format!(
                    "Multus cannot read {} `{}`: {}; the pod's network set-up fails and the pod never starts",
                    multus::NETWORKS_ANNOTATION,
                    escape::shown(value),
                    escape::cut(&problem, 200)
                ),
                annotation_at,
            )];
        }
    };
    let mut devices: Vec<(String, u64)> = Vec::new();
    for c in t.spec()["containers"].as_array().into_iter().flatten() {
        for (name, v) in c["resources"]["limits"].as_object().into_iter().flatten() {
            if is_attached_device(name) && !name.to_ascii_lowercase().starts_with("rdma/") {
                let n = quantity(v).and_then(|n| u64::try_from(n).ok()).unwrap_or(0);
                devices.push((name.clone(), n));
            }
        }
    }
    let held: u64 = devices.iter().map(|(_, n)| n).sum();
    if held == 0 || held == entries.len() as u64 {
        return Vec::new();
    }
    let listed = devices
        .iter()
        .map(|(name, n)| format!("{name}: {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    vec![Finding::at_pointer(
        Rule::MultusDeviceMismatch,
        format!(
            "{} lists {} network(s), but the pod requests {held} device(s) to attach ({listed}); each network takes one device of its NetworkAttachmentDefinition's resource",
            multus::NETWORKS_ANNOTATION,
            entries.len()
        ),
        annotation_at,
    )]
}

/// On a pod with Multus networks, a device-plugin resource other than a GPU: SR-IOV
/// rails are named by the cluster (`nvidia.com/rail1`), and each network entry takes
/// one device of its NetworkAttachmentDefinition's resource (multus-cni@v4.3.0
/// pkg/k8sclient/k8sclient.go:306), so such a resource is the pod's attached device.
pub(crate) fn is_attached_device(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let Some((domain, _)) = lower.split_once('/') else {
        return false;
    };
    !lower.contains("gpu") && !domain.ends_with("kubernetes.io") && !lower.starts_with("hugepages-")
}

/// Devices that carry RDMA without `rdma` in their resource name, for which IPC_LOCK
/// is no surplus privilege: the network operator's RDMA shared device plugin under the
/// name NVIDIA's AICR gives it (`nvidia.com/mlnxnics`), AWS EFA, and a DRA resource
/// claim (AICR's RoCE runtime claims its NICs so). Not enough to call RDMA on (EFA
/// runs NCCL through its own plugin), only to keep RDG061 quiet.
fn other_rdma_device(c: &Value) -> bool {
    let named = resources(c).any(|(name, _)| {
        matches!(
            name.to_ascii_lowercase().as_str(),
            "nvidia.com/mlnxnics" | "vpc.amazonaws.com/efa"
        )
    });
    let claimed = c["resources"]["claims"]
        .as_array()
        .is_some_and(|claims| !claims.is_empty());
    named || claimed
}

/// Whether the pod reaches the node's RDMA devices without a device plugin: with
/// hostNetwork it sees the node's RDMA netdevs, and a privileged container gets every
/// host device, /dev/infiniband included (runc adds all of /dev for privileged).
fn host_rdma_devices(pod: &Value) -> bool {
    pod["hostNetwork"] == true
}

/// A memory-backed /dev/shm: an emptyDir with medium Memory, or the node's own
/// /dev/shm through a hostPath, a tmpfs on systemd hosts (systemd's mount table,
/// src/shared/mount-setup.c) rather than the runtime's 64 MiB, as AWS's public
/// nccl-tests MPIJob mounts it (tests/lint/public/SOURCE.md).
fn has_memory_shm(pod: &Value, c: &Value) -> bool {
    let mounts = c["volumeMounts"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let volumes = pod["volumes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    mounts
        .iter()
        .filter(|m| {
            m["mountPath"]
                .as_str()
                .is_some_and(|p| p.trim_end_matches('/') == "/dev/shm")
        })
        .any(|m| {
            volumes.iter().filter(|v| v["name"] == m["name"]).any(|v| {
                v["emptyDir"]["medium"] == "Memory"
                    || v["hostPath"]["path"]
                        .as_str()
                        .is_some_and(|p| p.trim_end_matches('/') == "/dev/shm")
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nnodes_forms() {
        assert!(nnodes_from_world_size("x --nnodes $WORLD_SIZE y"));
        assert!(nnodes_from_world_size("--nnodes=${WORLD_SIZE}"));
        assert!(nnodes_from_world_size("--nnodes $(WORLD_SIZE)"));
        assert!(!nnodes_from_world_size("--nnodes $PET_NNODES"));
        assert!(!nnodes_from_world_size("--nnodes 2"));
    }

    /// A one-pod job whose Master is `pod` (a pod spec) with `spec` extras.
    fn job(spec: Value, pod: Value) -> Value {
        let mut doc = serde_json::json!({
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "j"},
            "spec": {"runPolicy": {}, "pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": pod}}}},
        });
        for (k, v) in spec.as_object().unwrap() {
            doc["spec"][k] = v.clone();
        }
        doc
    }

    fn rules(doc: &Value, facts: &ManifestFacts) -> Vec<Rule> {
        check(doc, facts).into_iter().map(|p| p.rule).collect()
    }

    /// A manifest finding says where in the object it is, so lint can place it in the
    /// file and render can name the field; it has no file position of its own.
    #[test]
    fn findings_point_into_the_manifest() {
        let doc = job(
            serde_json::json!({"backoffLimit": 3}),
            serde_json::json!({"containers": [{"name": "pytorch", "image": "i:1"}]}),
        );
        let found: Vec<_> = check(&doc, &ManifestFacts::default())
            .into_iter()
            .map(|f| (f.rule, f.pointer, f.location.is_none()))
            .collect();
        assert_eq!(
            found,
            [(
                Rule::RunPolicyMisplaced,
                Some("/spec/backoffLimit".to_owned()),
                true
            )]
        );
    }

    #[test]
    fn host_network_rdma_counts_as_rdma_for_the_environment() {
        let pod = serde_json::json!({
            "hostNetwork": true,
            "dnsPolicy": "ClusterFirstWithHostNet",
            "containers": [{
                "name": "pytorch", "image": "i:1",
                "env": [{"name": "NCCL_IB_DISABLE", "value": "1"}],
                "securityContext": {"privileged": true, "capabilities": {"add": ["IPC_LOCK"]}},
                "volumeMounts": [{"name": "ib", "mountPath": "/dev/infiniband"}],
            }],
            "volumes": [{"name": "ib", "hostPath": {"path": "/dev/infiniband"}}],
        });
        let doc = job(serde_json::json!({}), pod.clone());
        // RDMA to NCCL, so an unpinned network is said too (RDG198).
        assert_eq!(
            rules(&doc, &ManifestFacts::default()),
            [
                Rule::NcclFallbackUnpinned,
                Rule::IbDisableWithRdma,
                Rule::DebugOnlyVariable
            ]
        );
        // hostNetwork + privileged reaches the devices without the mount too.
        let mut bare = pod.clone();
        bare["volumes"][0]["hostPath"]["path"] = "/data".into();
        assert_eq!(
            rules(&job(serde_json::json!({}), bare), &ManifestFacts::default()),
            [
                Rule::NcclFallbackUnpinned,
                Rule::IbDisableWithRdma,
                Rule::DebugOnlyVariable
            ]
        );
        // Without hostNetwork it is a TCP pod that adds IPC_LOCK for nothing.
        let mut tcp = pod;
        tcp["hostNetwork"] = false.into();
        assert_eq!(
            rules(&job(serde_json::json!({}), tcp), &ManifestFacts::default()),
            [Rule::IpcLockWithoutRdma]
        );
    }

    /// IPC_LOCK is inert for a non-root user, whether the container or the pod says
    /// so; the container's field wins.
    #[test]
    fn ipc_lock_under_a_non_root_user() {
        let pod = |container_sc: Value, pod_sc: Value| {
            let mut sc = serde_json::json!({"capabilities": {"add": ["IPC_LOCK"]}});
            for (k, v) in container_sc.as_object().unwrap() {
                sc[k] = v.clone();
            }
            serde_json::json!({
                "securityContext": pod_sc,
                "containers": [{
                    "name": "pytorch", "image": "i:1", "securityContext": sc,
                    "resources": {"limits": {"rdma/hca": 1}},
                }],
            })
        };
        let found = |container_sc: Value, pod_sc: Value| -> Vec<(Rule, Option<String>)> {
            check(
                &job(serde_json::json!({}), pod(container_sc, pod_sc)),
                &ManifestFacts::default(),
            )
            .into_iter()
            .filter(|f| f.rule == Rule::IpcLockNonRoot)
            .map(|f| (f.rule, f.pointer))
            .collect()
        };
        let base = "/spec/pytorchReplicaSpecs/Master/template/spec";
        let none = serde_json::json!({});
        assert_eq!(
            found(serde_json::json!({"runAsUser": 1000}), none.clone()),
            [(
                Rule::IpcLockNonRoot,
                Some(format!("{base}/containers/0/securityContext/runAsUser"))
            )]
        );
        assert_eq!(
            found(none.clone(), serde_json::json!({"runAsNonRoot": true})),
            [(
                Rule::IpcLockNonRoot,
                Some(format!("{base}/securityContext/runAsNonRoot"))
            )]
        );
        // The container's root user overrides the pod's non-root one.
        assert!(
            found(
                serde_json::json!({"runAsUser": 0}),
                serde_json::json!({"runAsUser": 1000})
            )
            .is_empty()
        );
        assert!(found(none.clone(), none.clone()).is_empty());
        assert!(
            found(
                serde_json::json!({"runAsNonRoot": false}),
                serde_json::json!({"runAsNonRoot": true})
            )
            .is_empty()
        );
    }

    /// An annotation Multus cannot parse is reported, not skipped.
    #[test]
    fn an_unreadable_multus_annotation_is_an_attachment_shape_error() {
        let mut doc = job(
            serde_json::json!({}),
            serde_json::json!({"containers": [{"name": "pytorch", "image": "i:1"}]}),
        );
        let template = &mut doc["spec"]["pytorchReplicaSpecs"]["Master"]["template"];
        template["metadata"] =
            serde_json::json!({"annotations": {"k8s.v1.cni.cncf.io/networks": "netops/rail1/x"}});
        let found = check(&doc, &ManifestFacts::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].rule, Rule::AttachmentShape);
        assert_eq!(
            found[0].message,
            "Multus cannot read k8s.v1.cni.cncf.io/networks `netops/rail1/x`: `netops/rail1/x`: more than one `/`; the pod's network set-up fails and the pod never starts"
        );
    }

    #[test]
    fn legacy_launcher_notes_follow_the_effective_nproc_per_node() {
        // --use_env: the script reads LOCAL_RANK, so RDG230 (the local-rank argument's
        // spelling) has nothing to say and only the nproc_per_node rules speak.
        let pod = serde_json::json!({"containers": [{
            "name": "pytorch", "image": "i:1",
            "command": ["python", "-m", "torch.distributed.launch", "--use_env", "--nnodes", "$(WORLD_SIZE)", "t.py"],
        }]});
        let unset = job(serde_json::json!({}), pod.clone());
        assert!(rules(&unset, &ManifestFacts::default()).is_empty());
        let set = job(serde_json::json!({"nprocPerNode": "8"}), pod);
        assert_eq!(
            rules(&set, &ManifestFacts::default()),
            [Rule::LegacyLauncher, Rule::WorldSizeNnodes]
        );
        // Before 1.7 the field is pruned: only that is wrong, WORLD_SIZE counts pods.
        let old = ManifestFacts {
            operator: Some(Version::new(1, 6)),
            ..ManifestFacts::default()
        };
        // The launcher lacks --nproc_per_node and --master_addr: no PET_* fill them in.
        assert_eq!(
            rules(&set, &old),
            [Rule::OldOperatorNproc, Rule::OldOperatorNproc]
        );
    }

    #[test]
    fn a_launcher_without_flags_trains_alone_before_1_7() {
        let old = ManifestFacts {
            operator: Some(Version::new(1, 6)),
            ..ManifestFacts::default()
        };
        let with = |command: Value| {
            job(
                serde_json::json!({}),
                serde_json::json!({"containers": [{"name": "pytorch", "image": "i:1", "command": command}]}),
            )
        };
        let bare = with(serde_json::json!(["torchrun", "train.py"]));
        assert_eq!(rules(&bare, &old), [Rule::OldOperatorNproc]);
        assert!(rules(&bare, &ManifestFacts::default()).is_empty());
        let pet = with(serde_json::json!([
            "python",
            "train.py",
            "--nodes",
            "$(PET_NNODES)"
        ]));
        assert_eq!(rules(&pet, &old), [Rule::OldOperatorNproc]);
        let flags = with(serde_json::json!([
            "torchrun",
            "--nproc_per_node=8",
            "--nnodes=$(WORLD_SIZE)",
            "--node_rank=$(RANK)",
            "--master_addr=$(MASTER_ADDR)",
            "--master_port=$(MASTER_PORT)",
            "train.py"
        ]));
        assert!(rules(&flags, &old).is_empty());
        // The API server and the Python SDK.
        let int = job(
            serde_json::json!({"nprocPerNode": 8}),
            serde_json::json!({"containers": [{"name": "pytorch", "image": "i:1"}]}),
        );
        assert_eq!(
            rules(&int, &ManifestFacts::default()),
            [Rule::NprocPerNodeType]
        );
        let mut no_policy = flags;
        no_policy["spec"]
            .as_object_mut()
            .unwrap()
            .remove("runPolicy");
        assert_eq!(
            rules(&no_policy, &ManifestFacts::default()),
            [Rule::NoRunPolicy]
        );
        // Queued by Kueue, the stored job gets runPolicy.suspend from its webhook.
        let mut queued = no_policy.clone();
        queued["metadata"]["labels"] = serde_json::json!({QUEUE_LABEL: "team-a"});
        assert_eq!(
            rules(&queued, &ManifestFacts::default()),
            [Rule::NoRunPolicyUnderKueue]
        );
        // An empty queue name queues nothing.
        queued["metadata"]["labels"][QUEUE_LABEL] = "".into();
        assert_eq!(
            rules(&queued, &ManifestFacts::default()),
            [Rule::NoRunPolicy]
        );
    }
}
