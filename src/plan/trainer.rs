//! Kubeflow Trainer v2: a pool becomes a (Cluster)TrainingRuntime that holds the pod
//! shape every job on it shares (the platform team's), and a job becomes a small
//! TrainJob that names the runtime and carries only what is the job's own (the
//! upstream persona split, T@v2.3.0 proposals/2437-volcano-scheduler/README.md:48-51).
//!
//! The runtime is the plan of a whole-node, two-node job on the pool, so that every
//! decision about the pod shape (RDMA resource, IPC_LOCK, /dev/shm, NCCL variables,
//! scheduler, placement, the pool's defaults) is made by the same code as for a
//! PyTorchJob. A job's TrainJob is then the difference between the pod its own plan
//! wants and the runtime's, expressed in the fields the target release has: `trainer`
//! (image, command, env, numNodes, numProcPerNode, resourcesPerNode) and
//! `runtimePatches` (v2.2+) or `podTemplateOverrides` (v2.1). What a release cannot
//! carry is found by computing the pod Trainer would really make
//! ([`kubeflow::trainer::effective_pod`](crate::kubeflow::trainer::effective_pod)) and comparing it with the plan's: a value the job
//! needs and would not get is an error (RDG136), a value the pod would get beyond
//! the job's a warning (RDG137). Nothing is dropped without a word.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::diagnostics::escape::printable;
use crate::diagnostics::{Findings, Rule};
use crate::kubeflow::trainer::mpi as trainer_mpi;
use crate::kubeflow::trainer::{
    ANCESTOR_LABEL, NODE as NODE_JOB, effective_pod, node_container_mut,
};
use crate::model::job::RestartPolicy;
use crate::model::{JobDocument, Loaded, PoolDocument};
use crate::plan::decision::Decisions;
use crate::plan::pod_parts::{TRAINER_CONTAINER, VOLCANO_QUEUE};
use crate::plan::target::TrainerTarget;
use crate::plan::{Decision, Plan, TrainJobPlan, resolve};
use crate::yaml::tree::Seg;

/// The label the SDK finds torch runtimes by (manifests/base/runtimes/torch_distributed.yaml:19-20).
const FRAMEWORK_LABEL: &str = "trainer.kubeflow.org/framework";
/// runtimePatches are keyed by the manager that wrote them (domain-prefixed;
/// trainjob_types.go:293-312).
const PATCH_MANAGER: &str = "rdmagen.io/rdmagen";
/// The image the canonical job is planned with; the runtime is written without one,
/// since every TrainJob rdmagen writes sets `trainer.image`.
const NO_IMAGE: &str = "runtime.rdmagen.invalid/none:0";

/// Which of its pool's runtimes a TrainJob names. A TrainJob can change what its
/// runtime's pods get but never take anything away (env merges by name, resources key
/// by key from v2.3, annotations key by key), so a pod with less RDMA than the pool's
/// whole-node pod needs a runtime of its own shape: planned, like the pool's, from a
/// canonical job of that shape, and written only when a job names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RuntimeShape {
    /// The pool's runtime: the pods of a whole-node, multi-node job.
    Whole,
    /// Pods without RDMA on an RDMA pool (a single node, or `rdma: off`): no RDMA
    /// resource, no Multus network, no IPC_LOCK, no RDMA variable.
    NoRdma,
    /// Pods of this many GPUs, which get fewer of the pool's per-rail resources than a
    /// whole node.
    Gpus(u32),
}

impl RuntimeShape {
    /// The runtime's name: the pool's, with a suffix for the narrower shapes.
    pub fn runtime_name(self, pool: &str) -> String {
        match self {
            RuntimeShape::Whole => pool.to_owned(),
            RuntimeShape::NoRdma => format!("{pool}-no-rdma"),
            RuntimeShape::Gpus(g) => format!("{pool}-{g}gpu"),
        }
    }

    /// Its place among the pool's runtimes, for the order output is written in.
    pub fn rank(self) -> usize {
        match self {
            RuntimeShape::Whole => 0,
            RuntimeShape::NoRdma => 1,
            RuntimeShape::Gpus(g) => 2 + g as usize,
        }
    }

    /// The shape of the runtime a job of `gpus` GPUs per node, planned as `plan`,
    /// names, given its pool's runtime `whole`.
    pub fn of(gpus: u32, plan: &Plan, whole: &RuntimePlan) -> RuntimeShape {
        let names = |r: &[(String, u32)]| r.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        match (plan.rdma.on, whole.rdma.on) {
            (false, true) => RuntimeShape::NoRdma,
            // The same resources in other counts are the job's resourcesPerNode; other
            // resources (fewer rails) cannot be.
            (true, true) if names(&plan.rdma.resources) != names(&whole.rdma.resources) => {
                RuntimeShape::Gpus(gpus)
            }
            _ => RuntimeShape::Whole,
        }
    }
}

/// A pool's runtime: everything the template lays out.
#[derive(Debug, Serialize)]
pub struct RuntimePlan {
    /// The runtime's name: the pool's, or the pool's with its shape's suffix.
    pub name: String,
    /// The pool's namespace, for a namespaced TrainingRuntime.
    pub namespace: Option<String>,
    pub kind: &'static str,
    pub labels: BTreeMap<String, String>,
    /// What the runtime was written for (`Target::written_for`).
    pub annotations: BTreeMap<String, String>,
    /// Annotations of the JobSet template: Volcano's plugin reads the queue here
    /// (T@v2.3.0 pkg/runtime/framework/plugins/volcano/volcano.go:180-184).
    pub jobset_annotations: BTreeMap<String, String>,
    /// `podGroupPolicy: {volcano: {}}`: the Volcano plugin makes one PodGroup per
    /// TrainJob (gang scheduling).
    pub volcano: bool,
    pub ancestor_label: &'static str,
    pub node_job: &'static str,
    /// The `node` pod template, `{metadata, spec}`, without image and command (an MPI
    /// runtime's has both: it runs sshd, and a TrainJob cannot give it either).
    pub pod: Value,
    /// The MPI runtime's own fields, for a job launched by mpirun.
    pub mpi: Option<MpiRuntimePlan>,
    /// The platform, for the rules verify runs on the rendered runtime.
    #[serde(skip)]
    pub platform: crate::model::pool::Platform,
    /// The runtime as rendered and parsed back (set once verified), which each
    /// TrainJob on it is judged with.
    #[serde(skip)]
    pub rendered: Value,
    #[serde(skip)]
    pub target: TrainerTarget,
    #[serde(skip)]
    pub shape: RuntimeShape,
    /// The pool's name.
    #[serde(skip)]
    pub pool: String,
    /// What its pods get of RDMA, which decides the shape a job needs.
    #[serde(skip)]
    pub rdma: crate::plan::Rdma,
    #[serde(skip)]
    pub decisions: Vec<Decision>,
}

/// The runtime of `pool` of `shape` for `target`; None when planning it found errors
/// (reported, with the pool's file and line where they come from the pool).
pub fn runtime(
    pool: &Loaded<PoolDocument>,
    target: TrainerTarget,
    shape: RuntimeShape,
    findings: &mut Findings,
) -> Option<RuntimePlan> {
    let spec = &pool.value.spec;
    let pool_name = &pool.value.metadata.name;
    let name = &shape.runtime_name(pool_name);
    let (gpus, rdma) = match shape {
        RuntimeShape::Whole => (spec.gpu.per_node, "auto"),
        RuntimeShape::NoRdma => (spec.gpu.per_node, "off"),
        RuntimeShape::Gpus(g) => (g, "auto"),
    };
    let canonical = json!({
        "apiVersion": "rdmagen/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "runtime", "namespace": pool.value.metadata.namespace},
        "spec": {
            "pool": pool_name,
            "image": NO_IMAGE,
            "nodes": 2,
            "gpusPerNode": gpus,
            "rdma": rdma,
            "script": "train.py",
        },
    });
    let value: JobDocument =
        serde_json::from_value(canonical).expect("the canonical job of a runtime is a valid Job");
    // Its findings point into the pool: only the pool's values can be wrong.
    let job = Loaded {
        value,
        doc: pool.doc.clone(),
    };
    let mut own = Findings::default();
    let plan = resolve(&job, pool, &mut own);
    let mut failed = false;
    for f in own.iter() {
        let mut f = f.clone();
        if f.rule.info().severity != crate::diagnostics::Severity::Error {
            // A job on the pool reports its own warnings; the runtime's would repeat them.
            continue;
        }
        failed = true;
        f.message = format!("runtime `{name}` of pool `{pool_name}`: {}", f.message);
        findings.add(f);
    }
    if failed {
        return None;
    }
    // The canonical job's command and image are not the runtime's.
    let mut decisions = Decisions(
        plan.decisions
            .into_iter()
            .filter(|d| {
                d.topic != "command" && d.topic != "numNodes" && !d.topic.starts_with("preflight")
            })
            .collect(),
    );
    let mut pod = plan.pod.template;
    if let Some(c) = node_container_mut(&mut pod) {
        c.shift_remove("image");
        c.shift_remove("command");
    }
    without_preflight(&mut pod);
    decisions.record(
        "runtime pod",
        format!(
            "the pod of a 2-node job on `{pool_name}` with {gpus} GPUs per node{}",
            if shape == RuntimeShape::NoRdma { " and rdma: off" } else { "" }
        ),
        match shape {
            RuntimeShape::Whole => "the pool's pod shape (RDMA resource, IPC_LOCK, /dev/shm, NCCL variables, scheduler, placement, jobDefaults) is decided as for any job on it; image and command are each TrainJob's",
            RuntimeShape::NoRdma => "the pool's pod shape without RDMA, for the jobs that run without it (a single node, rdma: off): a TrainJob cannot take the pool runtime's RDMA resources, Multus networks, IPC_LOCK or NCCL variables away",
            RuntimeShape::Gpus(_) => "the pool's pod shape for pods of this many GPUs, which get fewer of its rails than a whole node: a TrainJob cannot take the pool runtime's other rail resources away",
        },
    );
    let volcano = spec.scheduler.as_ref().is_some_and(|s| s.is_volcano())
        && spec.target.gang_scheduling != Some(false);
    if volcano {
        decisions.record(
            "podGroupPolicy",
            "volcano",
            "the pool schedules with Volcano: Trainer's Volcano plugin (v2.1+) makes one PodGroup per TrainJob with minMember = all its pods (volcano.go:160-178); only a runtime can carry it",
        );
    }
    let mut jobset_annotations = BTreeMap::new();
    // A Kueue or KAI pool's queue is the TrainJob's label (plan::kueue, plan::kai),
    // not Volcano's.
    let volcano_queue = spec
        .scheduler
        .as_ref()
        .and_then(|s| s.volcano_queue())
        .map(str::to_owned);
    if let Some(queue) = volcano_queue {
        decisions.record(
            "queue",
            &queue,
            "the pool's queue, on the JobSet template (where Trainer's Volcano plugin reads it, volcano.go:180-184) and on the pods",
        );
        jobset_annotations.insert(VOLCANO_QUEUE.to_owned(), queue);
    }
    let labels = BTreeMap::from([(FRAMEWORK_LABEL.to_owned(), "torch".to_owned())]);
    let annotations = plan
        .written_for
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    Some(RuntimePlan {
        name: name.clone(),
        namespace: (!target.cluster_scoped)
            .then(|| pool.value.metadata.namespace.clone())
            .flatten(),
        kind: target.runtime_kind(),
        labels,
        annotations,
        jobset_annotations,
        volcano,
        ancestor_label: ANCESTOR_LABEL,
        node_job: NODE_JOB,
        pod,
        mpi: None,
        platform: spec.platform,
        rendered: Value::Null,
        target,
        shape,
        pool: pool_name.clone(),
        rdma: plan.rdma,
        decisions: decisions.0,
    })
}

/// `pod` without the in-pod preflight's volume, mount and variables: like image and
/// command it is each TrainJob's (its ConfigMap is named after the job), and a
/// TrainJob adds it to the runtime's pod as it adds its own volumes and env.
fn without_preflight(pod: &mut Value) {
    let spec = &mut pod["spec"];
    if let Some(volumes) = spec["volumes"].as_array_mut() {
        volumes.retain(|v| v["name"] != crate::plan::preflight::VOLUME);
    }
    if let Some(c) = node_container_mut(pod) {
        if let Some(Value::Array(mounts)) = c.get_mut("volumeMounts") {
            mounts.retain(|m| m["name"] != crate::plan::preflight::VOLUME);
        }
        if let Some(Value::Array(env)) = c.get_mut("env") {
            env.retain(|e| {
                !e["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with(crate::plan::preflight::ENV_PREFIX))
            });
        }
    }
}

/// What an MPI runtime has beyond a torch runtime's fields: `mlPolicy.mpi`, the JobSet's
/// network and success policy, and the `launcher` job.
#[derive(Debug, Serialize)]
pub struct MpiRuntimePlan {
    pub num_proc_per_node: u32,
    pub implementation: &'static str,
    pub ssh_auth_mount_path: String,
    pub run_launcher_as_node: bool,
    /// `template.spec.network` and `successPolicy`, and the launcher's `dependsOn`
    /// (null: none).
    pub network: Value,
    pub success_policy: Value,
    pub depends_on: Value,
    pub launcher_job: &'static str,
    /// The `launcher` pod template, without image and command (the TrainJob's).
    pub launcher_pod: Value,
}

/// The suffix of a job's MPI runtime's name.
const MPI_RUNTIME_SUFFIX: &str = "-mpi";

/// The MPI runtime of `job` on `pool`, planned as `plan` (whose `mpi_job` is set), on `target`.
/// It is the job's own TrainingRuntime, in its namespace: Trainer takes the `node`
/// job's image, command and resources from the runtime alone (the TrainJob's image
/// and command go to the trainer job, T@v2.3.0
/// pkg/runtime/framework/plugins/jobset/builder.go:113-141; its resourcesPerNode and
/// env reach `node` only with runLauncherAsNode, builder.go:142-155 and
/// pkg/runtime/core/trainingruntime.go:199-203), so a runtime shared by a pool's jobs
/// could not hold each job's image or GPU count.
pub fn mpi_runtime(
    job: &Loaded<JobDocument>,
    pool: &Loaded<PoolDocument>,
    plan: &mut Plan,
    target: TrainerTarget,
) -> Option<RuntimePlan> {
    let mpi = plan.mpi_job.as_ref()?;
    let name = format!("{}{MPI_RUNTIME_SUFFIX}", plan.name);
    let mut pod = plan.pod.template.clone();
    if let Some(c) = node_container_mut(&mut pod) {
        // Where a container's command is written, after its image.
        let at = c
            .keys()
            .position(|k| k == "image")
            .map_or(c.len(), |i| i + 1);
        c.shift_insert(at, "command".to_owned(), json!(trainer_mpi::SSHD_COMMAND));
    }
    let mut launcher_pod = mpi.launcher_template.clone();
    if let Some(c) = node_container_mut(&mut launcher_pod) {
        c.shift_remove("image");
        c.shift_remove("command");
    }
    let mut decisions = Decisions(std::mem::take(&mut plan.decisions));
    decisions.record(
        "runtime",
        format!("TrainingRuntime {name} (namespace {})", job.value.metadata.namespace.as_deref().unwrap_or("default")),
        "the job's own: Trainer gives the `node` job the runtime's image, command and resources, never the TrainJob's (builder.go:113-155, trainingruntime.go:199-203, at v2.1.0 and v2.3.0), so the runtime holds the job's image and GPU count; namespaced, in the job's namespace, so that jobs of one name in two namespaces do not share it",
    );
    decisions.record(
        "successPolicy",
        "operator All, targetReplicatedJobs [launcher]",
        "the JobSet succeeds when the launcher's mpirun does; the nodes' sshd never exits (Trainer's deepspeed-distributed runtime does the same, manifests/base/runtimes/deepspeed_distributed.yaml)",
    );
    // Gang scheduling as the pool's runtime has it.
    let scheduler = pool.value.spec.scheduler.as_ref();
    let volcano = scheduler.is_some_and(|s| s.is_volcano())
        && pool.value.spec.target.gang_scheduling != Some(false);
    let depends_on = if volcano {
        decisions.record(
            "launcher dependsOn",
            "none",
            "Trainer's Volcano PodGroup counts the launcher among its minMember (volcano.go:163-178): a launcher that waited for the nodes to be ready would never be created, and the nodes never scheduled without it. The launcher starts with the nodes, as the mpi-operator's default launcherCreationPolicy AtStartup does, and OMPI_MCA_plm_rsh_args' 10 connection attempts and the launcher's restarts wait for their sshd",
        );
        Value::Null
    } else {
        decisions.record(
            "launcher dependsOn",
            "node Ready",
            "JobSet starts the launcher once every node pod is ready, so mpirun's first ssh finds their sshd (deepspeed_distributed.yaml); OMPI_MCA_plm_rsh_args' 10 connection attempts cover the rest",
        );
        json!([{"name": NODE_JOB, "status": "Ready"}])
    };
    decisions.record(
        "network.publishNotReadyAddresses",
        "true",
        "every node pod's name resolves as soon as it exists, as the hostfile names them (`<trainjob>-node-0-<i>.<trainjob>`, mpi.go:316-342; jobset.go:288-291), not only once it is ready (deepspeed_distributed.yaml sets it too)",
    );
    plan.decisions = decisions.0;
    // The Volcano queue as the pool's runtime has it, or the job's own, since the
    // runtime is the job's.
    let mut jobset_annotations = BTreeMap::new();
    if let Some(queue) = plan
        .run_policy
        .scheduling_policy
        .as_ref()
        .and_then(|s| s.queue.clone())
        .filter(|_| scheduler.is_some_and(|s| s.reads_volcano_queue()))
    {
        jobset_annotations.insert(VOLCANO_QUEUE.to_owned(), queue);
    }
    Some(RuntimePlan {
        name,
        namespace: job.value.metadata.namespace.clone(),
        kind: "TrainingRuntime",
        labels: BTreeMap::from([(FRAMEWORK_LABEL.to_owned(), "mpi".to_owned())]),
        annotations: plan
            .written_for
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect(),
        jobset_annotations,
        volcano,
        ancestor_label: ANCESTOR_LABEL,
        node_job: NODE_JOB,
        pod,
        mpi: Some(MpiRuntimePlan {
            num_proc_per_node: mpi.slots_per_worker,
            implementation: trainer_mpi::OPENMPI,
            ssh_auth_mount_path: mpi.ssh_auth_mount_path.clone(),
            run_launcher_as_node: false,
            network: json!({"publishNotReadyAddresses": true}),
            success_policy: json!({"operator": "All", "targetReplicatedJobs": [trainer_mpi::LAUNCHER]}),
            depends_on,
            launcher_job: trainer_mpi::LAUNCHER,
            launcher_pod,
        }),
        platform: pool.value.spec.platform,
        rendered: Value::Null,
        target,
        shape: RuntimeShape::Whole,
        pool: pool.value.metadata.name.clone(),
        rdma: plan.rdma.clone(),
        decisions: Vec::new(),
    })
}

/// The TrainJob of `job` on its own MPI runtime `runtime`: the runtime's name, the
/// launcher's image and mpirun command, the node count and the job's run policy. The
/// runtime holds the rest, so the pods Trainer makes of the two must be the plan's
/// (RDG136 otherwise); what they get beyond them is the plugin's ssh key and hostfile.
pub fn mpi_train_job(
    job: &Loaded<JobDocument>,
    plan: &mut Plan,
    runtime: &RuntimePlan,
    findings: &mut Findings,
) -> TrainJobPlan {
    let target = runtime.target;
    let mpi = plan
        .mpi_job
        .as_ref()
        .expect("an MPI runtime has an mpi plan");
    let mut trainer = Map::new();
    trainer.insert("image".to_owned(), json!(job.value.spec.image));
    trainer.insert("command".to_owned(), json!(mpi.launcher_command));
    trainer.insert("numNodes".to_owned(), json!(job.value.spec.nodes));
    let mut spec = Map::new();
    spec.insert(
        "runtimeRef".to_owned(),
        json!({"name": runtime.name, "kind": runtime.kind}),
    );
    spec.insert("trainer".to_owned(), Value::Object(trainer));
    let mut decisions = Decisions(std::mem::take(&mut plan.decisions));
    decisions.record(
        "trainer",
        "image, command (mpirun), numNodes",
        "the image and command go to the launcher's `node` container (builder.go:125-139) and numNodes is the `node` job's pod count (mpi.go:117-126); no resourcesPerNode or env: on a runtime without runLauncherAsNode they reach the launcher only (trainingruntime.go:199-203, builder.go:142-155), and the runtime already gives the launcher its env and the nodes their GPUs and RDMA resources",
    );
    run_policy_fields(job, plan, target, &mut spec, findings);
    plan.decisions = decisions.0;
    let spec = Value::Object(spec);
    let pods = trainer_mpi::effective_pods(&runtime.rendered, &plan.name, &spec, target.release);
    let mut want = runtime.pod.clone();
    let mut launcher = mpi.launcher_template.clone();
    for (pod, name) in [
        (&mut want, NODE_JOB),
        (&mut launcher, trainer_mpi::LAUNCHER),
    ] {
        let got = trainer_mpi::pod_of(&pods, name)
            .cloned()
            .unwrap_or_default();
        // The plugin's ssh key and hostfile are what the pods get beyond the plan's:
        // by design, so they are not reported.
        for difference in differences(pod, &got) {
            if let Difference::Lost { path, want } = difference {
                findings.at(
                    Rule::TrainerCannotCarry,
                    format!(
                        "the `{name}` pods Trainer {} makes of the job's MPI runtime and TrainJob lack the plan's `{path}` ({})",
                        target.release,
                        shown(&want)
                    ),
                    input_at(job, &path),
                );
            }
        }
    }
    let node = trainer_mpi::pod_of(&pods, NODE_JOB)
        .cloned()
        .unwrap_or_default();
    TrainJobPlan {
        labels: plan.labels.clone(),
        annotations: plan.annotations.clone(),
        spec,
        effective_pod: node,
        runtime_pod: runtime.pod.clone(),
        runtime_doc: runtime.rendered.clone(),
        effective_pods: pods,
        target,
    }
}

/// The TrainJob of `job` (planned as `plan`) on `runtime`. Findings about what the
/// release cannot carry point at the job.
pub fn train_job(
    job: &Loaded<JobDocument>,
    plan: &mut Plan,
    runtime: &RuntimePlan,
    findings: &mut Findings,
) -> TrainJobPlan {
    let target = runtime.target;
    let release = target.release;
    let spec_at = job.doc.locate(&[Seg::Key("spec")]);
    let mut decisions = Decisions(std::mem::take(&mut plan.decisions));
    let want = &plan.pod.template;
    let base = &runtime.pod;
    let mine = container(want);
    let theirs = container(base);

    // trainer: what the torch plugin and the JobSet builder take from the TrainJob.
    let mut trainer = Map::new();
    for field in ["image", "command", "args"] {
        if let Some(v) = mine.get(field) {
            trainer.insert(field.to_owned(), v.clone());
        }
    }
    let env = env_difference(&mine["env"], &theirs["env"]);
    if !env.is_empty() {
        decisions.record(
            "trainer.env",
            names(&env),
            "the job's variables that the runtime lacks or sets otherwise; merged by name into the runtime's (builder.go:140-150). Env cannot go in a patch of the `node` container (jobset.go:203-205)",
        );
        trainer.insert("env".to_owned(), Value::Array(env));
    }
    trainer.insert("numNodes".to_owned(), json!(job.value.spec.nodes));
    if let Some(n) = plan
        .nproc_per_node
        .as_deref()
        .and_then(|n| n.parse::<u32>().ok())
    {
        trainer.insert("numProcPerNode".to_owned(), json!(n));
        decisions.record(
            "trainer.numProcPerNode",
            n.to_string(),
            "the GPUs per node, written rather than left to `auto`, so that PET_NPROC_PER_NODE does not depend on how torchrun counts devices",
        );
    }
    if mine.get("resources") != theirs.get("resources") {
        trainer.insert("resourcesPerNode".to_owned(), mine["resources"].clone());
        decisions.record(
            "trainer.resourcesPerNode",
            "every resource of the job's pod",
            if target.release.merges_resources() {
                "they differ from the runtime's; v2.3 merges them into the runtime's key by key (#3602), and all of them are written so that the job reads the same on every release"
            } else {
                "they differ from the runtime's; before v2.3 resourcesPerNode replaces the runtime's whole block (trainingruntime.go:178-186), so the RDMA resource and the GPUs are repeated in it"
            },
        );
    }

    // The pod-level difference, as a patch of the `node` pod template.
    let pod_patch = pod_difference(want, base, target);
    let mut spec = Map::new();
    decisions.record(
        "runtimeRef",
        &runtime.name,
        match runtime.shape {
            RuntimeShape::Whole => format!("the runtime of pool `{}`", runtime.pool),
            RuntimeShape::NoRdma => format!(
                "the job runs without RDMA, and a TrainJob cannot take away the RDMA resources, networks, IPC_LOCK and NCCL variables of pool `{}`'s runtime: its runtime without RDMA",
                runtime.pool
            ),
            RuntimeShape::Gpus(g) => format!(
                "pods of {g} GPUs get fewer of pool `{}`'s rails than a whole node, and a TrainJob cannot take the others away: the pool's runtime of {g}-GPU pods",
                runtime.pool
            ),
        },
    );
    spec.insert(
        "runtimeRef".to_owned(),
        json!({"name": runtime.name, "kind": runtime.kind}),
    );
    spec.insert("trainer".to_owned(), Value::Object(trainer));

    // The JobSet-level queue: a job's own queue overrides the pool's.
    let job_queue = plan
        .run_policy
        .scheduling_policy
        .as_ref()
        .and_then(|s| s.queue.clone());
    let jobset_annotations: Option<Value> = job_queue
        .filter(|q| runtime.jobset_annotations.get(VOLCANO_QUEUE) != Some(q))
        .map(|q| json!({VOLCANO_QUEUE: q}));
    if target.release.has_runtime_patches() {
        let mut template = Map::new();
        if let Some(a) = &jobset_annotations {
            template.insert("metadata".to_owned(), json!({"annotations": a}));
        }
        if let Some(patch) = &pod_patch {
            template.insert(
                "spec".to_owned(),
                json!({"replicatedJobs": [{"name": NODE_JOB, "template": {"spec": {"template": patch}}}]}),
            );
        }
        if !template.is_empty() {
            spec.insert(
                "runtimePatches".to_owned(),
                json!([{"manager": PATCH_MANAGER, "trainingRuntimeSpec": {"template": template}}]),
            );
            decisions.record(
                "runtimePatches",
                PATCH_MANAGER,
                "the job's pod values the runtime does not have, as one strategic-merge patch of the `node` pod template (v2.2+, trainingruntime.go:251-290)",
            );
        }
    } else {
        if let Some(a) = jobset_annotations {
            spec.insert("annotations".to_owned(), a);
        }
        if let Some(patch) = pod_patch {
            let mut o = Map::new();
            o.insert("targetJobs".to_owned(), json!([{"name": NODE_JOB}]));
            for field in ["metadata", "spec"] {
                if let Some(v) = patch.get(field) {
                    o.insert(field.to_owned(), v.clone());
                }
            }
            spec.insert("podTemplateOverrides".to_owned(), json!([o]));
            decisions.record(
                "podTemplateOverrides",
                "targetJobs [node]",
                "the job's pod values the runtime does not have; v2.1 has no runtimePatches (#3309 came in v2.2)",
            );
        }
    }

    run_policy_fields(job, plan, target, &mut spec, findings);

    let spec = Value::Object(spec);
    let effective = effective_pod(NODE_JOB, base, &spec, target.release);
    let mut inherited = Vec::new();
    for difference in differences(want, &effective) {
        match difference {
            Difference::Lost { path, want } => findings.at(
                Rule::TrainerCannotCarry,
                format!(
                    "Trainer {release} has no place for the job's pod value `{path}` ({}): {}",
                    shown(&want),
                    hint(&path, target)
                ),
                input_at(job, &path),
            ),
            Difference::Inherited { path, .. } => inherited.push(path),
        }
    }
    if !inherited.is_empty() {
        findings.at(
            Rule::TrainerInheritsFromRuntime,
            format!(
                "the job's pods also get from runtime `{}` what the job does not ask for: {}; a TrainJob on Trainer {release} cannot remove what its runtime sets",
                runtime.name,
                printable(&inherited.join(", "))
            ),
            spec_at.clone(),
        );
    }
    plan.decisions = decisions.0;
    TrainJobPlan {
        labels: plan.labels.clone(),
        annotations: plan.annotations.clone(),
        spec,
        effective_pod: effective,
        runtime_pod: base.clone(),
        runtime_doc: runtime.rendered.clone(),
        effective_pods: Vec::new(),
        target,
    }
}

/// The job's runPolicy and restart policy in the TrainJob's fields where Trainer has
/// one (activeDeadlineSeconds from v2.2, suspend, managedBy); RDG136 for the others.
fn run_policy_fields(
    job: &Loaded<JobDocument>,
    plan: &Plan,
    target: TrainerTarget,
    spec: &mut Map<String, Value>,
    findings: &mut Findings,
) {
    let release = target.release;
    let cannot = |findings: &mut Findings, field: &str, why: &str| {
        let path: Vec<Seg<'_>> = std::iter::once(Seg::Key("spec"))
            .chain(field.split('.').map(Seg::Key))
            .collect();
        findings.at(
            Rule::TrainerCannotCarry,
            format!("Trainer {release} has no place for the job's {field}: {why}"),
            job.doc.locate(&path),
        );
    };
    // The operator's runPolicy and replica fields: where Trainer has one.
    let run_policy = &plan.run_policy;
    if let Some(seconds) = run_policy.active_deadline_seconds {
        if target.release.has_runtime_patches() {
            spec.insert("activeDeadlineSeconds".to_owned(), json!(seconds));
        } else {
            cannot(
                findings,
                "runPolicy.activeDeadlineSeconds",
                "TrainJob.spec.activeDeadlineSeconds came in v2.2 (#3258)",
            );
        }
    }
    // Kueue and GitOps: TrainJob.spec.suspend and spec.managedBy (trainjob_types.go:129,
    // 143-152, at v2.1.0 and v2.3.0).
    if let Some(suspend) = run_policy.suspend {
        spec.insert("suspend".to_owned(), json!(suspend));
    }
    if let Some(by) = &run_policy.managed_by {
        spec.insert("managedBy".to_owned(), json!(by));
    }
    let unsupported = [
        (
            "runPolicy.cleanPodPolicy",
            run_policy.clean_pod_policy.is_some(),
        ),
        ("runPolicy.backoffLimit", run_policy.backoff_limit.is_some()),
        (
            "runPolicy.ttlSecondsAfterFinished",
            run_policy.ttl_seconds_after_finished.is_some(),
        ),
        (
            "runPolicy.schedulingPolicy.minAvailable",
            run_policy
                .scheduling_policy
                .as_ref()
                .is_some_and(|s| s.min_available.is_some()),
        ),
        (
            "runPolicy.schedulingPolicy.priorityClass",
            run_policy
                .scheduling_policy
                .as_ref()
                .is_some_and(|s| s.priority_class.is_some()),
        ),
        (
            "restartPolicy",
            !matches!(job.value.spec.restart_policy, RestartPolicy::OnFailure),
        ),
    ];
    for (field, set) in unsupported {
        if set {
            cannot(
                findings,
                field,
                "a TrainJob has no such field (the runtime's JobSet decides it); set it in a runtime of your own",
            );
        }
    }
}

/// What the job's pod needs that `base` does not give, as a partial pod template in
/// the fields the release's patch has (PodSpecPatch in v2.2+,
/// trainjob_types.go:390-494; PodTemplateSpecOverride in v2.1). Container fields other
/// than volumeMounts and securityContext go through `trainer`; everything else that
/// differs is left for [`differences`] to report.
fn pod_difference(want: &Value, base: &Value, target: TrainerTarget) -> Option<Value> {
    let mut metadata = Map::new();
    for field in ["labels", "annotations"] {
        let added = map_difference(&want["metadata"][field], &base["metadata"][field]);
        if !added.is_empty() {
            metadata.insert(field.to_owned(), Value::Object(added));
        }
    }
    let mut spec = Map::new();
    // The fields the release's patch sets whole.
    let whole = target.release.patched_pod_fields();
    for field in whole {
        if let Some(v) = want["spec"].get(*field)
            && base["spec"].get(*field) != Some(v)
        {
            spec.insert((*field).to_owned(), v.clone());
        }
    }
    let selector = map_difference(&want["spec"]["nodeSelector"], &base["spec"]["nodeSelector"]);
    if !selector.is_empty() {
        spec.insert("nodeSelector".to_owned(), Value::Object(selector));
    }
    let volumes = keyed_difference(&want["spec"]["volumes"], &base["spec"]["volumes"], "name");
    if !volumes.is_empty() {
        spec.insert("volumes".to_owned(), Value::Array(volumes));
    }
    let (mine, theirs) = (container(want), container(base));
    let mut patch = Map::new();
    patch.insert("name".to_owned(), json!(TRAINER_CONTAINER));
    let mounts = keyed_difference(&mine["volumeMounts"], &theirs["volumeMounts"], "mountPath");
    if !mounts.is_empty() {
        patch.insert("volumeMounts".to_owned(), Value::Array(mounts));
    }
    if target.release.has_runtime_patches()
        && let Some(sc) = mine.get("securityContext")
        && theirs.get("securityContext") != Some(sc)
    {
        patch.insert("securityContext".to_owned(), sc.clone());
    }
    if patch.len() > 1 {
        spec.insert("containers".to_owned(), json!([patch]));
    }
    let mut out = Map::new();
    if !metadata.is_empty() {
        out.insert("metadata".to_owned(), Value::Object(metadata));
    }
    if !spec.is_empty() {
        out.insert("spec".to_owned(), Value::Object(spec));
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Entries of map `want` that `base` lacks or holds otherwise.
fn map_difference(want: &Value, base: &Value) -> Map<String, Value> {
    let Some(want) = want.as_object() else {
        return Map::new();
    };
    want.iter()
        .filter(|(k, v)| base.get(k.as_str()) != Some(v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Items of list `want` that `base` lacks or holds otherwise, matched on `key`.
fn keyed_difference(want: &Value, base: &Value, key: &str) -> Vec<Value> {
    let Some(want) = want.as_array() else {
        return Vec::new();
    };
    let base = base.as_array().map(Vec::as_slice).unwrap_or_default();
    want.iter()
        .filter(|item| {
            !base
                .iter()
                .any(|b| b.get(key) == item.get(key) && b == *item)
        })
        .cloned()
        .collect()
}

/// Env entries of the job's container that the runtime's lacks or sets otherwise.
fn env_difference(want: &Value, base: &Value) -> Vec<Value> {
    keyed_difference(want, base, "name")
}

fn names(env: &[Value]) -> String {
    env.iter()
        .filter_map(|e| e["name"].as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn container(pod: &Value) -> &Value {
    pod["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == TRAINER_CONTAINER))
        .unwrap_or(&Value::Null)
}

/// Where the pod Trainer makes differs from the pod the job's plan wants.
#[derive(Debug, PartialEq)]
pub enum Difference {
    /// The job wants `want` at `path`; the pod gets something else or nothing.
    Lost { path: String, want: Value },
    /// The pod gets `got` at `path`, which the job did not ask for.
    Inherited { path: String, got: Value },
}

/// Every difference between `want` and `got`, pod templates both: objects key by key,
/// lists of named items (containers, env, volumes) by name and mounts by mount path,
/// other values whole.
pub fn differences(want: &Value, got: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    walk(want, got, String::new(), &mut out);
    out
}

fn walk(want: &Value, got: &Value, path: String, out: &mut Vec<Difference>) {
    let join = |key: &str| {
        if path.is_empty() {
            key.to_owned()
        } else {
            format!("{path}.{key}")
        }
    };
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, v) in w {
                match g.get(k) {
                    Some(gv) => walk(v, gv, join(k), out),
                    None => out.push(Difference::Lost {
                        path: join(k),
                        want: v.clone(),
                    }),
                }
            }
            for (k, v) in g {
                if !w.contains_key(k) {
                    out.push(Difference::Inherited {
                        path: join(k),
                        got: v.clone(),
                    });
                }
            }
        }
        (Value::Array(w), Value::Array(g)) if keyed(w).is_some() && keyed(w) == keyed(g) => {
            let key = keyed(w).unwrap_or("name");
            let id = |item: &Value| item[key].as_str().unwrap_or_default().to_owned();
            for item in w {
                let at = format!("{path}[{}]", id(item));
                match g.iter().find(|o| o[key] == item[key]) {
                    Some(other) => walk(item, other, at, out),
                    None => out.push(Difference::Lost {
                        path: at,
                        want: item.clone(),
                    }),
                }
            }
            for item in g {
                if !w.iter().any(|o| o[key] == item[key]) {
                    out.push(Difference::Inherited {
                        path: format!("{path}[{}]", id(item)),
                        got: item.clone(),
                    });
                }
            }
        }
        (w, g) if w != g => out.push(Difference::Lost {
            path,
            want: w.clone(),
        }),
        _ => {}
    }
}

/// The key a list's items are matched on, when every item has it.
fn keyed(items: &[Value]) -> Option<&'static str> {
    ["name", "mountPath"]
        .into_iter()
        .find(|key| !items.is_empty() && items.iter().all(|i| i[*key].is_string()))
}

/// A value as the message shows it: compact JSON, escaped, at most 80 characters.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    let text: String = if text.chars().count() > 80 {
        text.chars().take(77).chain("...".chars()).collect()
    } else {
        text
    };
    printable(&text).into_owned()
}

/// Where the job writes what ends up at `path` of its pod: the job field it comes
/// from when the job sets it, else the job's podTemplate, else its `spec` (the value
/// came from the pool or from rdmagen's decisions).
fn input_at(job: &Loaded<JobDocument>, path: &str) -> crate::diagnostics::Location {
    let field = path
        .strip_prefix("spec.containers[node].")
        .or_else(|| path.strip_prefix("spec."))
        .or_else(|| path.strip_prefix("metadata."))
        .unwrap_or(path);
    let key = field.split(['.', '[']).next().unwrap_or(field);
    let input = match key {
        "volumeMounts" => "volumes",
        "dnsPolicy" => "hostNetwork",
        "initContainers" if job.value.spec.init_containers.is_empty() => "sidecars",
        "labels" | "annotations" => {
            return job.doc.locate(&[Seg::Key("metadata"), Seg::Key(key)]);
        }
        other => other,
    };
    let spec = job.doc.locate(&[Seg::Key("spec")]);
    for candidate in [
        vec![Seg::Key("spec"), Seg::Key(input)],
        vec![Seg::Key("spec"), Seg::Key("podTemplate")],
    ] {
        let at = job.doc.locate(&candidate);
        if at != spec {
            return at;
        }
    }
    spec
}

/// What to do about a value the release cannot carry.
fn hint(path: &str, target: TrainerTarget) -> String {
    let runtime_only = [
        "spec.containers[",
        "spec.schedulerName",
        "spec.priorityClassName",
        "spec.hostNetwork",
        "spec.dnsPolicy",
        "spec.initContainers",
        "spec.runtimeClassName",
    ];
    if path.starts_with("spec.containers[node].") && !path.contains(".securityContext") {
        return "a TrainJob sets the trainer container's image, command, args, env and resources, and patches its volumeMounts and securityContext, nothing else (imagePullPolicy, workingDir and envFrom among what it cannot); set it in the pool, whose runtime every job shares".to_owned();
    }
    if path.contains(".securityContext") && !target.release.has_runtime_patches() {
        return "a container's securityContext (IPC_LOCK among it) can be patched from v2.2 (#3066); on v2.1 only the runtime can carry it, so set it in the pool".to_owned();
    }
    if runtime_only.iter().any(|p| path.starts_with(p)) {
        return "only a runtime can carry it (a TrainJob cannot add a container or set it); set it in the pool, whose runtime every job shares".to_owned();
    }
    "the TrainJob's fields cannot carry this difference from the pool's runtime; set it in the pool, or target a release that can".to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_match_named_items_and_tell_lost_from_inherited() {
        let want = json!({"spec": {"containers": [{"name": "node",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]}});
        let got = json!({"spec": {"containers": [{"name": "node",
            "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}]}],
            "schedulerName": "volcano"}});
        let found = differences(&want, &got);
        assert_eq!(
            found,
            vec![
                Difference::Lost {
                    path: "spec.containers[node].env[A]".to_owned(),
                    want: json!({"name": "A", "value": "1"})
                },
                Difference::Lost {
                    path: "spec.containers[node].env[B].value".to_owned(),
                    want: json!("2")
                },
                Difference::Inherited {
                    path: "spec.containers[node].env[C]".to_owned(),
                    got: json!({"name": "C", "value": "4"})
                },
                Difference::Inherited {
                    path: "spec.schedulerName".to_owned(),
                    got: json!("volcano")
                },
            ]
        );
        assert!(differences(&want, &want).is_empty());
    }
}
