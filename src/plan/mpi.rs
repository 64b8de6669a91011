//! An MPIJob (kubeflow/mpi-operator, `kubeflow.org/v2beta1`) for a job that asks for
//! `launcher: mpirun`: the launcher pod and its `mpirun` command, the worker count and
//! slots, and how every variable the plan decided reaches the ranks. The workers are
//! the pod a PyTorchJob replica gets on the same pool (`pod::decide`), without a
//! command: the controller starts their ssh daemon. What the controller itself does
//! with the MPIJob is `kubeflow::mpi`'s.
//!
//! On a Kubeflow Trainer pool the same decisions make a TrainJob on an MPI runtime
//! (`mlPolicy.mpi`, `kubeflow::trainer::mpi`): the launcher becomes the runtime's
//! `launcher` job and the workers its `node` job ([`Flavour::Trainer`]); plan::trainer
//! lays them out. The mpirun command is [`mpirun`]'s for both.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::diagnostics::Rule;
use crate::kubeflow::mpi::{self, Implementation};
use crate::kubeflow::trainer::mpi as trainer_mpi;
use crate::model::job::{CleanPodPolicy, Launcher, MpiImplementation, RestartPolicy};
use crate::multus;
use crate::plan::ctx::Ctx;
use crate::plan::{EnvVar, Pod, RunPolicyPlan};
use crate::yaml::tree::Seg;

/// The launcher container's name. The controller takes the first container of each
/// template (mpi_job_controller.go:1502, 1581), whatever its name.
pub const LAUNCHER_CONTAINER: &str = "launcher";

/// The launcher's requests and limits: it runs `mpirun` and one ssh client per worker.
const LAUNCHER_CPU: &str = "1";
const LAUNCHER_MEMORY: &str = "1Gi";

/// Variables an ssh session does not get from the image's ENV, forwarded to the ranks
/// with OpenMPI's `-x` as published nccl-tests MPIJobs do (coreweave/nccl-tests
/// `mpi-operator/nccl-test-distributed-h100-64-mpijob.yaml`: `-x LD_LIBRARY_PATH`).
const IMAGE_PATHS: [&str; 2] = ["PATH", "LD_LIBRARY_PATH"];

/// The MPIJob of a job: everything its template lays out beyond the worker pod
/// (`Plan::pod`) and the run policy (`Plan::run_policy`).
#[derive(Debug, Serialize)]
pub struct MpiJobPlan {
    pub slots_per_worker: u32,
    pub ssh_auth_mount_path: String,
    /// `spec.mpiImplementation`'s value.
    pub implementation: &'static str,
    pub launcher_replicas: u32,
    pub worker_replicas: u32,
    /// The replicas' restart policy (Never or OnFailure: validation.go:40-42).
    pub restart_policy: RestartPolicy,
    /// The launcher's PodTemplateSpec.
    pub launcher_template: Value,
    /// What verify reads back from the launcher and the workers.
    #[serde(skip)]
    pub launcher_command: Vec<String>,
    #[serde(skip)]
    pub launcher_env: Vec<EnvVar>,
    /// The variables of the workers' container that mpirun forwards to every rank.
    #[serde(skip)]
    pub forwarded: Vec<String>,
    #[serde(skip)]
    pub processes: u32,
    #[serde(skip)]
    pub kind: Implementation,
    /// An MPIJob, or a TrainJob on Trainer's MPI runtime.
    #[serde(skip)]
    pub flavour: Flavour,
    /// `spec.runLauncherAsWorker`: the launcher's pod is a rank's.
    pub launcher_as_worker: bool,
}

/// Whether the job asks the launcher to run ranks too (`mpi.launcherAsWorker`).
fn launcher_as_worker(ctx: &Ctx<'_>) -> bool {
    let mpi = ctx.job.value.spec.mpi.as_ref();
    mpi.and_then(|m| m.launcher_as_worker) == Some(true)
}

/// Whether the job asks for an MPIJob.
pub(super) fn wanted(ctx: &Ctx<'_>) -> bool {
    ctx.job.value.spec.launcher == Some(Launcher::Mpirun)
}

/// RDG192 where the job cannot become an MPIJob on its pool: no mpi-operator, one
/// older than the CRD rdmagen writes, a Trainer pool, `mpi` settings without mpirun, a
/// restart policy the operator's validation refuses, a variable the controller sets.
/// Returns whether the MPIJob can be written.
pub(super) fn check(ctx: &mut Ctx<'_>) -> bool {
    let spec = &ctx.job.value.spec;
    let pool = ctx.pool.value.metadata.name.clone();
    if !wanted(ctx) {
        if spec.mpi.is_some() {
            ctx.report(
                Rule::MpiJobUnsupported,
                "`mpi` configures the MPIJob of `launcher: mpirun`; this job is not launched by mpirun",
                &[Seg::Key("spec"), Seg::Key("mpi")],
            );
        }
        return false;
    }
    let launcher_at = [Seg::Key("spec"), Seg::Key("launcher")];
    let as_worker_at = [
        Seg::Key("spec"),
        Seg::Key("mpi"),
        Seg::Key("launcherAsWorker"),
    ];
    if launcher_as_worker(ctx) {
        if ctx.target.trainer().is_some() {
            ctx.report(
                Rule::MpiJobUnsupported,
                format!("mpi.launcherAsWorker on Kubeflow Trainer pool `{pool}`: Trainer's counterpart, mlPolicy.mpi.runLauncherAsNode, gives the TrainJob's env and resources to both jobs (builder.go:142-155), and rdmagen does not write it yet; leave it out, or use a pool with target.mpiOperator"),
                &as_worker_at,
            );
            return false;
        }
        if spec.nodes < 2 {
            ctx.report(
                Rule::MpiJobUnsupported,
                "mpi.launcherAsWorker on a one-node job: the launcher would be the whole job and the Worker replica empty, which the mpi-operator refuses (replicas must be 1 or more, validation.go:136-146); a one-node job needs no launcher of its own, leave it out",
                &as_worker_at,
            );
            return false;
        }
    }
    if ctx.target.trainer().is_some() {
        return check_trainer(ctx);
    }
    match ctx.target.mpi_operator {
        None => {
            ctx.report(
                Rule::MpiJobUnsupported,
                format!("`launcher: mpirun` renders an MPIJob, and pool `{pool}` does not say the mpi-operator is installed: set its target.mpiOperator (e.g. \"{}\")", mpi::LATEST),
                &launcher_at,
            );
            return false;
        }
        Some(v) if v < mpi::OLDEST => {
            ctx.report(
                Rule::MpiJobUnsupported,
                format!("pool `{pool}` has mpi-operator {v}; rdmagen writes MPIJobs for {} and later, whose CRD has every field it writes", mpi::OLDEST),
                &launcher_at,
            );
            return false;
        }
        Some(_) => {}
    }
    let mut ok = true;
    let restart = spec.restart_policy;
    if matches!(restart, RestartPolicy::Always | RestartPolicy::ExitCode) {
        ctx.report(
            Rule::MpiJobUnsupported,
            format!(
                "restartPolicy {}: the mpi-operator accepts only Never and OnFailure for an MPIJob's replicas (validation.go:40-42)",
                serde_json::to_value(restart).unwrap_or_default().as_str().unwrap_or("?")
            ),
            &[Seg::Key("spec"), Seg::Key("restartPolicy")],
        );
        ok = false;
    }
    ok &= refuse_reserved(
        ctx,
        &mpi::controller_env_names(),
        "is set by the mpi-operator in the launcher (mpi_job_controller.go:169-219), after the job's env: the job's value is lost",
    );
    ok
}

/// RDG192 at each variable of the job's env (or its pool's) that `reserved` names,
/// `why` saying who sets it. Returns whether there was none.
fn refuse_reserved(ctx: &mut Ctx<'_>, reserved: &[&str], why: &str) -> bool {
    let mut ok = true;
    let names: Vec<String> = ctx.inputs.env.keys().cloned().collect();
    for name in names {
        if reserved.contains(&name.as_str()) {
            let origin = ctx.inputs.env[&name].origin;
            let mut at = origin.path("env");
            at.push(Seg::Key(&name));
            ctx.report_from(
                origin,
                Rule::MpiJobUnsupported,
                format!("{name} {why}"),
                &at,
            );
            ok = false;
        }
    }
    ok
}

/// RDG192 where the job cannot run on Trainer's MPI runtime: an MPI other than Open
/// MPI, a variable the plugin reserves. Returns whether the TrainJob can be written.
fn check_trainer(ctx: &mut Ctx<'_>) -> bool {
    let mut ok = true;
    let asked = ctx
        .job
        .value
        .spec
        .mpi
        .as_ref()
        .and_then(|m| m.implementation);
    if let Some(kind @ (MpiImplementation::Intel | MpiImplementation::Mpich)) = asked {
        let name = match kind {
            MpiImplementation::Intel => Implementation::Intel.name(),
            _ => Implementation::Mpich.name(),
        };
        ctx.report(
            Rule::MpiJobUnsupported,
            format!(
                "mpi.implementation {name}: Kubeflow Trainer's MPI runtime runs Open MPI only (mlPolicy.mpi.mpiImplementation takes `{}` or \"\" in the v2.1.0 and v2.3.0 CRDs, and the plugin writes Open MPI's environment alone, mpi.go:208-227); use an Open MPI image, or a pool with target.mpiOperator for an MPIJob",
                trainer_mpi::OPENMPI
            ),
            &[Seg::Key("spec"), Seg::Key("mpi"), Seg::Key("implementation")],
        );
        ok = false;
    }
    ok &= refuse_reserved(
        ctx,
        &trainer_mpi::reserved_env(),
        "is set by Trainer's MPI plugin on the launcher, and its webhook rejects a TrainJob that sets it (constants.go:305-306, mpi.go:95-107)",
    );
    ok
}

/// Which workload the job's MPI decisions are laid out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// An MPIJob for the mpi-operator.
    MpiOperator,
    /// A TrainJob on an MPI runtime of Kubeflow Trainer.
    Trainer,
}

/// The program every rank runs: the job's `command`, or its script under python.
pub(super) fn program(ctx: &mut Ctx<'_>) -> Vec<String> {
    let spec = &ctx.job.value.spec;
    let (program, why) = match (&spec.command, &spec.script) {
        (Some(command), _) => (command.clone(), "the job's `command`, as given"),
        (None, script) => (
            ["python".to_owned(), script.clone().unwrap_or_default()]
                .into_iter()
                .chain(spec.args.iter().cloned())
                .collect(),
            "the job's script under python, with its args",
        ),
    };
    ctx.decisions.record(
        "rank program",
        program.join(" "),
        format!(
            "{why}: mpirun starts it once per rank, one rank per GPU; nothing else starts processes"
        ),
    );
    program
}

/// The MPIJob's launcher, counts and forwarding, for a job whose workers are `worker`;
/// on a Trainer pool the same for its MPI runtime's `launcher` and `node` jobs.
/// `run_policy` gets the clean-up policy an MPIJob needs.
pub(super) fn decide(
    ctx: &mut Ctx<'_>,
    worker: &Pod,
    program: Vec<String>,
    run_policy: &mut RunPolicyPlan,
) -> MpiJobPlan {
    let flavour = match ctx.target.trainer() {
        Some(_) => Flavour::Trainer,
        None => Flavour::MpiOperator,
    };
    let spec = &ctx.job.value.spec;
    let (nodes, gpus) = (spec.nodes, spec.gpus_per_node);
    let asked = spec.mpi.clone().unwrap_or_default();
    let kind = match asked.implementation {
        Some(MpiImplementation::OpenMpi) | None => Implementation::OpenMpi,
        Some(MpiImplementation::Intel) => Implementation::Intel,
        Some(MpiImplementation::Mpich) => Implementation::Mpich,
    };
    let ssh = asked
        .ssh_auth_mount_path
        .clone()
        .unwrap_or_else(|| mpi::DEFAULT_SSH_AUTH_MOUNT_PATH.to_owned());
    let root = ssh == mpi::DEFAULT_SSH_AUTH_MOUNT_PATH;
    // Only an MPIJob: check() refuses it on a Trainer pool.
    let as_worker = flavour == Flavour::MpiOperator && launcher_as_worker(ctx);
    match flavour {
        Flavour::MpiOperator => record_mpi_operator(ctx, kind, &asked, &ssh, as_worker),
        Flavour::Trainer => record_trainer(ctx, &asked, &ssh),
    }
    let processes = nodes.saturating_mul(gpus);

    // Every variable the plan put in the workers' container reaches the ranks only
    // through mpirun: a rank is a child of an sshd session, which does not pass on the
    // container's env. The launcher holds them, and mpirun forwards them by name.
    let forwarded: Vec<String> = worker
        .container
        .env
        .iter()
        .map(|v| v.name.clone())
        .collect();
    let command = mpirun(ctx, kind, &forwarded, program);
    if !forwarded.is_empty() {
        ctx.decisions.record(
            "forwarded env",
            forwarded.join(", "),
            "set on the launcher with the workers' values, and forwarded by mpirun to every rank: a rank is started by sshd on its worker and does not see the worker container's env",
        );
    }

    let mut launcher_env = worker.container.env.clone();
    if kind == Implementation::OpenMpi && root {
        launcher_env.push(EnvVar::text("OMPI_ALLOW_RUN_AS_ROOT", "1"));
        launcher_env.push(EnvVar::text("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"));
        ctx.decisions.record(
            "env OMPI_ALLOW_RUN_AS_ROOT",
            "1 (and OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1), on the launcher",
            "the image runs as root (sshAuthMountPath /root/.ssh), and Open MPI's mpirun refuses to run as root without both (coreweave/nccl-tests' MPIJob sets them)",
        );
    }
    if flavour == Flavour::Trainer {
        for (name, value) in mpi::launcher_env(kind, gpus, false)
            .into_iter()
            .filter(|(name, _)| name.starts_with("NVIDIA_"))
        {
            launcher_env.push(EnvVar::text(name, value));
        }
        ctx.decisions.record(
            "env NVIDIA_VISIBLE_DEVICES",
            "\"\" (and NVIDIA_DRIVER_CAPABILITIES=\"\"), on the launcher",
            "the launcher requests no GPU, but an image that sets NVIDIA_VISIBLE_DEVICES=all (the CUDA images do) would get every GPU of its node from the NVIDIA runtime; the mpi-operator empties both for the same reason (mpi_job_controller.go:1600-1606), Trainer's MPI plugin does not (mpi.go:141-230). mpirun does not forward them",
        );
    }
    let container = match flavour {
        Flavour::MpiOperator => LAUNCHER_CONTAINER,
        // The plugin mounts the hostfile and sets its variables only on a container
        // named `node` (T@v2.3.0 mpi.go:189-192), and the TrainJob's image and command
        // go to that container of the trainer job (builder.go:125-139).
        Flavour::Trainer => crate::kubeflow::trainer::NODE,
    };
    let launcher_template = if as_worker {
        ctx.decisions.record(
            "launcher pod",
            "a worker's pod (GPUs, RDMA devices and networks, IPC_LOCK, /dev/shm), running mpirun",
            format!("mpi.launcherAsWorker: the launcher runs {gpus} of the ranks itself, children of its mpirun, so it is the pod of a node; the controller lists it first in the hostfile with {gpus} slots and leaves its GPUs visible (mpi_job_controller.go:1309-1337, 1600-1606)"),
        );
        rank_launcher_template(ctx, worker, &command, &launcher_env)
    } else {
        ctx.decisions.record(
            "launcher pod",
            format!("cpu {LAUNCHER_CPU}, memory {LAUNCHER_MEMORY}; no GPU, RDMA device, IPC_LOCK or /dev/shm"),
            match flavour {
                Flavour::MpiOperator => "the launcher runs mpirun and its ssh clients, no rank: GPUs or RDMA there would be held unused (the controller hides GPUs from it, mpi_job_controller.go:1600-1606); it keeps the workers' placement, scheduler and pod metadata, without their Multus networks",
                Flavour::Trainer => "the launcher runs mpirun and its ssh clients, no rank (runLauncherAsNode: false): GPUs or RDMA there would be held unused; it keeps the workers' placement, scheduler and pod metadata, without their Multus networks",
            },
        );
        launcher_template(ctx, worker, container, &command, &launcher_env)
    };

    if flavour == Flavour::MpiOperator && run_policy.clean_pod_policy.is_none() {
        run_policy.clean_pod_policy = Some(CleanPodPolicy::Running);
        run_policy.empty = false;
        ctx.decisions.record(
            "runPolicy.cleanPodPolicy",
            "Running",
            "the workers' sshd never exits: with the operator's default None (default.go:52-55) they keep their GPUs after the launcher finishes, until the MPIJob is deleted",
        );
    }

    let workers = if as_worker { nodes - 1 } else { nodes };
    let on_volcano = ctx.on_volcano();
    let asked_min = run_policy
        .scheduling_policy
        .as_ref()
        .and_then(|s| s.min_available);
    // Trainer's Volcano plugin makes its own PodGroup (plan/trainer.rs says so).
    if flavour == Flavour::MpiOperator
        && on_volcano
        && ctx.target.gang_scheduling != Some(false)
        && asked_min.is_none()
    {
        ctx.decisions.record(
            "PodGroup minMember",
            format!(
                "{} (Launcher 1 + Worker {workers})",
                workers.saturating_add(1)
            ),
            "the mpi-operator's default when it gang-schedules with Volcano and runPolicy.schedulingPolicy.minAvailable is unset: every worker and the launcher (mpi-operator@v0.8.0 pkg/controller/podgroup.go:390-397), so no worker holds its GPUs while the launcher waits for a node",
        );
    }

    MpiJobPlan {
        slots_per_worker: gpus,
        ssh_auth_mount_path: ssh,
        implementation: kind.name(),
        launcher_replicas: 1,
        worker_replicas: workers,
        restart_policy: spec.restart_policy,
        launcher_template,
        launcher_command: command,
        launcher_env,
        forwarded,
        processes,
        kind,
        flavour,
        launcher_as_worker: as_worker,
    }
}

/// The decisions of an MPIJob's own fields.
fn record_mpi_operator(
    ctx: &mut Ctx<'_>,
    kind: Implementation,
    asked: &crate::model::job::MpiSettings,
    ssh: &str,
    as_worker: bool,
) {
    let spec = &ctx.job.value.spec;
    let (nodes, gpus) = (spec.nodes, spec.gpus_per_node);
    let version = ctx.target.mpi_operator.unwrap_or(mpi::LATEST);
    let pool = ctx.pool.value.metadata.name.clone();
    ctx.decisions.record(
        "workload",
        format!("MPIJob ({})", mpi::API_VERSION),
        format!(
            "the job's launcher is mpirun and pool `{pool}` has mpi-operator {version} (target.mpiOperator); written for the {} API, validated against its CRD",
            crate::kubeflow::mpi::crd::TAG
        ),
    );
    ctx.decisions.record(
        "mpiImplementation",
        kind.name(),
        match asked.implementation {
            Some(_) => "the job's mpi.implementation: the MPI its image has; the controller writes the hostfile and the launcher's env for it (mpi_job_controller.go:1309-1337, 1584-1599)".to_owned(),
            None => "the operator's default (types.go:199-203); set mpi.implementation for an image with Intel MPI or MPICH".to_owned(),
        },
    );
    if as_worker {
        ctx.decisions.record(
            "replicas",
            format!("Launcher 1, Worker {} (runLauncherAsWorker: true)", nodes - 1),
            format!("mpi.launcherAsWorker: the launcher is the first of the {nodes} nodes and runs ranks as the workers do; each pod is the one a PyTorchJob replica gets on pool `{pool}`, its container still named `pytorch` so that the pool's podTemplate overlays apply to it alike"),
        );
    } else {
        ctx.decisions.record(
            "replicas",
            format!("Launcher 1, Worker {nodes}"),
            format!("one worker pod per node, each the pod a PyTorchJob replica gets on pool `{pool}`, its container still named `pytorch` so that the pool's podTemplate overlays apply to it alike; the launcher runs mpirun only (runLauncherAsWorker stays false, the operator's default; mpi.launcherAsWorker asks for it)"),
        );
    }
    ctx.decisions.record(
        "slotsPerWorker",
        gpus.to_string(),
        "one rank per GPU: the controller writes each worker into the hostfile with this many slots (mpi_job_controller.go:1329-1337) and tells mpirun the same (OMPI_MCA_orte_set_default_slots / I_MPI_PERHOST, :1583-1596)",
    );
    ctx.decisions.record(
        "sshAuthMountPath",
        ssh,
        if asked.ssh_auth_mount_path.is_some() {
            "the job's mpi.sshAuthMountPath: the .ssh of the image's user, where the controller mounts the job's generated key as id_rsa, id_rsa.pub and authorized_keys (mpi_job_controller.go:1764-1787); the image's sshd must run as that user"
        } else {
            "the operator's default, root's .ssh (default.go:65-67): the image runs as root; the controller mounts the key there with mode 0600 (mpi_job_controller.go:1764-1787)"
        },
    );
    ctx.decisions.record(
        "worker command",
        "none (the controller runs /usr/sbin/sshd -De)",
        "the ranks are started by the launcher's mpirun over ssh: a worker whose container has no command or args gets `/usr/sbin/sshd -De` from the controller (mpi_job_controller.go:1502-1505)",
    );
}

/// The decisions of a Trainer MPI runtime's own fields (`mlPolicy.mpi`, its jobs).
fn record_trainer(ctx: &mut Ctx<'_>, asked: &crate::model::job::MpiSettings, ssh: &str) {
    let spec = &ctx.job.value.spec;
    let (nodes, gpus) = (spec.nodes, spec.gpus_per_node);
    let pool = ctx.pool.value.metadata.name.clone();
    ctx.decisions.record(
        "workload",
        "TrainJob on a TrainingRuntime with mlPolicy.mpi (trainer.kubeflow.org/v1alpha1)",
        format!("the job's launcher is mpirun and pool `{pool}` targets Kubeflow Trainer, whose MPI plugin runs the launcher and the nodes of one JobSet and gives them an ssh key and a hostfile; no mpi-operator is needed"),
    );
    ctx.decisions.record(
        "mlPolicy.mpi.mpiImplementation",
        trainer_mpi::OPENMPI,
        "the only implementation Trainer's CRD and plugin take (trainingruntime_types.go:285 at v2.3.0, :256 at v2.1.0; mpi.go:208-227)",
    );
    ctx.decisions.record(
        "replicatedJobs",
        format!("launcher 1, node {nodes}"),
        format!("`node` holds one pod per node, each the pod a TrainJob's trainer gets on pool `{pool}`, running sshd; `launcher` runs mpirun and carries the trainer label, so the TrainJob's image, command and env go to it (builder.go:113-158); runLauncherAsNode stays false (the CRD's default): the launcher runs no rank"),
    );
    ctx.decisions.record(
        "mlPolicy.mpi.numProcPerNode",
        gpus.to_string(),
        "one rank per GPU: the plugin writes each node pod into the hostfile with this many slots and sets OMPI_MCA_orte_set_default_slots to it on the launcher (mpi.go:205-224, 316-342)",
    );
    ctx.decisions.record(
        "mlPolicy.mpi.sshAuthMountPath",
        ssh,
        if asked.ssh_auth_mount_path.is_some() {
            "the job's mpi.sshAuthMountPath: the .ssh of the image's user, where the plugin mounts the TrainJob's generated key as id_rsa, id_rsa.pub and authorized_keys in both jobs (mpi.go:141-200); the image's sshd must run as that user"
        } else {
            "the CRD's default, root's .ssh (trainingruntime_types.go:292): the image runs as root"
        },
    );
    ctx.decisions.record(
        "node command",
        trainer_mpi::SSHD_COMMAND.join(" "),
        "the ranks are started by the launcher's mpirun over ssh; Trainer, unlike the mpi-operator, starts no sshd of its own (its deepspeed-distributed runtime writes one), so the runtime's `node` container runs the mpi-operator's default",
    );
}

/// The mpirun command that starts `program` once per GPU of every node, forwarding
/// `forwarded` (and, for Open MPI, the image's paths) to every rank. The hostfile is
/// the operator's or Trainer's, found through their environment on the launcher, so
/// none is passed here.
pub(super) fn mpirun(
    ctx: &mut Ctx<'_>,
    kind: Implementation,
    forwarded: &[String],
    program: Vec<String>,
) -> Vec<String> {
    let spec = &ctx.job.value.spec;
    let (nodes, gpus) = (spec.nodes, spec.gpus_per_node);
    let np = nodes.saturating_mul(gpus).to_string();
    let mut command = vec!["mpirun".to_owned()];
    match kind {
        Implementation::OpenMpi => {
            command.extend([
                "-np".to_owned(),
                np,
                "--bind-to".to_owned(),
                "none".to_owned(),
            ]);
            command.extend(["--map-by".to_owned(), "slot".to_owned()]);
            for name in forwarded.iter().map(String::as_str).chain(IMAGE_PATHS) {
                command.extend(["-x".to_owned(), name.to_owned()]);
            }
        }
        Implementation::Intel | Implementation::Mpich => {
            command.extend(["-n".to_owned(), np, "-ppn".to_owned(), gpus.to_string()]);
            for name in forwarded {
                command.extend(["-genv".to_owned(), name.clone(), format!("$({name})")]);
            }
        }
    }
    command.extend(program);
    ctx.decisions.record(
        "launcher command",
        command.join(" "),
        match kind {
            Implementation::OpenMpi => format!(
                "-np = {nodes} nodes × {gpus} GPUs; --map-by slot fills each worker's {gpus} slots in hostfile order, so ranks 0-{} are on the hostfile's first pod; --bind-to none leaves CPU affinity to NCCL and CUDA; `-x NAME` for each variable the ranks need (Open MPI mpirun(1)), with PATH and LD_LIBRARY_PATH, which an ssh session does not get from the image; no --hostfile: the launcher's OMPI_MCA_orte_default_hostfile names the one its operator writes",
                gpus.saturating_sub(1)
            ),
            _ => format!(
                "-n = {nodes} nodes × {gpus} GPUs, -ppn {gpus} per worker; `-genv NAME $(NAME)` for each variable the ranks need, its value expanded by Kubernetes from the launcher's env"
            ),
        },
    );
    command
}

/// The launcher's PodTemplateSpec when it runs ranks (`runLauncherAsWorker`): the
/// workers' pod, its first container (the one the controller reads,
/// mpi_job_controller.go:1581) running `command` with `env`, laid out as
/// `pod::job_container` lays every container out, then the rank's own fields
/// (security context, mounts) as the workers have them.
fn rank_launcher_template(
    ctx: &Ctx<'_>,
    worker: &Pod,
    command: &[String],
    env: &[EnvVar],
) -> Value {
    let mut template = worker.template.clone();
    let Some(first) = template["spec"]["containers"][0].as_object().cloned() else {
        return template;
    };
    let name = first["name"].as_str().unwrap_or(LAUNCHER_CONTAINER);
    let mut container = super::pod::job_container(ctx, name, command, env, &Value::Null);
    // The rank's resources as the workers have them, requests and limits alike.
    container.insert("resources".to_owned(), first["resources"].clone());
    for (key, value) in first {
        if !container.contains_key(&key) && key != "args" {
            container.insert(key, value);
        }
    }
    template["spec"]["containers"][0] = Value::Object(container);
    template
}

/// The launcher's PodTemplateSpec: the workers' metadata (without their Multus
/// networks) and placement, one container running `command` with `env`, small
/// requests and nothing of a rank's (GPUs, RDMA devices, IPC_LOCK, /dev/shm, volumes,
/// hostNetwork).
fn launcher_template(
    ctx: &Ctx<'_>,
    worker: &Pod,
    name: &str,
    command: &[String],
    env: &[EnvVar],
) -> Value {
    let mut metadata = worker.template["metadata"].clone();
    if let Some(annotations) = metadata["annotations"].as_object_mut() {
        annotations.remove(multus::NETWORKS_ANNOTATION);
    }
    let resources = json!({"cpu": LAUNCHER_CPU, "memory": LAUNCHER_MEMORY});
    let container = super::pod::job_container(ctx, name, command, env, &resources);
    let mut pod_spec = Map::new();
    // Where the job may run and who schedules it: the workers' own values.
    for key in [
        "schedulerName",
        "priorityClassName",
        "serviceAccountName",
        "nodeSelector",
        "affinity",
        "tolerations",
        "imagePullSecrets",
    ] {
        if let Some(value) = worker.template["spec"].get(key) {
            pod_spec.insert(key.to_owned(), value.clone());
        }
    }
    pod_spec.insert("containers".to_owned(), json!([Value::Object(container)]));
    json!({"metadata": metadata, "spec": pod_spec})
}
