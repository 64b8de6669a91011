//! `rdmagen smoke-test`: a job that checks a pool's network before anyone trains on it.
//!
//! It is not a second renderer. The test is an ordinary rdmagen Job
//! (`templates/smoke/job.yaml.j2`) on the user's pool, handed to the pipeline in
//! memory, so resolve, render and verify give its pods exactly what a real job on the
//! pool gets (GPUs and the RDMA resource, IPC_LOCK, /dev/shm, NCCL variables, the
//! scheduler, node placement) for whatever target API the pool names. The Job adds
//! only its documented parts: the script as a ConfigMap volume ([`SCRIPT_VOLUME`] at
//! [`SCRIPT_DIR`]), how the script starts, and for `nccl` the NCCL logging variables
//! ([`ADDED_ENV`]). Beside the job goes that ConfigMap
//! (`templates/smoke/configmap.yaml.j2`), parsed back and checked against
//! Kubernetes' rules for ConfigMaps before anything is written.
//!
//! - `nccl`: an all-reduce sweep over every GPU of every node. Where the pool says the
//!   mpi-operator is installed (`target.mpiOperator`), nccl-tests' own
//!   `all_reduce_perf` under mpirun, an MPIJob whose mpirun line, slots and forwarded
//!   variables the plan decides as for any `launcher: mpirun` job; elsewhere
//!   torch.distributed (`templates/smoke/allreduce.py`), launched like any torchrun
//!   job, printing all_reduce_perf's table. Both run the same sweep ([`SWEEP`]).
//! - `perftest`: `ib_write_bw` between node ranks 0 and 1
//!   (`templates/smoke/ib_write_bw.sh`), one process per pod, with the pool's first data
//!   NIC and GID index.

use serde::Serialize;

use crate::diagnostics::policy::Level;
use crate::diagnostics::{Policy, Rule};
use crate::kubeflow::mpi;
use crate::kubernetes::config_map;
use crate::model::pool::{DEFAULT_MANAGEMENT_NIC, Fabric, GidIndex, PoolDocument};
use crate::model::target::TargetApi;
use crate::nccl::{self, EnvFacts};
use crate::render::{self, Renderer};
use crate::yaml::tree_value::parse_values;

/// The volume that holds the script, and where it is mounted.
pub const SCRIPT_VOLUME: &str = "rdmagen-smoke";
pub const SCRIPT_DIR: &str = "/rdmagen-smoke";

/// The variables the `nccl` test adds to the pods' environment (NCCL_ALGO only where
/// [`force_ring`] says).
pub const ADDED_ENV: [&str; 3] = ["NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_ALGO"];

/// The name findings give the in-memory Job (no file of that name is read).
pub const JOB_SOURCE: &str = "<smoke-test job>";

/// The `nccl` test's image when none is given: NGC's PyTorch container, which holds
/// torch, NCCL and the RDMA user space (libibverbs and the mlx5 provider). The tag is
/// the one this project's examples use (`rdmagen dockerfile --base`).
pub const NCCL_IMAGE: &str = "nvcr.io/nvidia/pytorch:24.10-py3";

/// The `nccl` test's image under mpirun when none is given: CoreWeave's public
/// nccl-tests image, the one the examples' MPIJobs and coreweave/nccl-tests' own
/// `mpi-operator/` manifests use. Its Dockerfile (coreweave/nccl-tests
/// `Dockerfile.ubuntu22`) builds nccl-tests with `MPI=1` into /opt/nccl-tests (linked
/// as /opt/nccl_tests), has HPC-X's Open MPI `mpirun` on PATH, openssh-server for the
/// sshd the mpi-operator starts in each worker, and the RDMA user space (libibverbs,
/// rdma-core's providers). NGC's PyTorch image has no nccl-tests binaries and no sshd.
pub const NCCL_TESTS_IMAGE: &str =
    "ghcr.io/coreweave/nccl-tests:12.8.1-devel-ubuntu22.04-nccl2.26.2-1-0708d2e";

/// Where [`NCCL_TESTS_IMAGE`] has `all_reduce_perf`: a path of that image, not of
/// nccl-tests (whose `make` writes `build/` in its source tree, wherever that is). An
/// image given with `--image` must have it there too.
pub const NCCL_TESTS_BINARY: &str = "/opt/nccl_tests/build/all_reduce_perf";

/// The all-reduce sweep both forms of the `nccl` test run: float32 from 8 bytes to
/// 2 GiB, each size 4 times the last, 5 warm-up iterations, 20 timed iterations per
/// size, results checked. `allreduce.py`'s defaults are these (a unit test reads
/// them); all_reduce_perf gets them as flags ([`Sweep::nccl_tests_args`]).
pub const SWEEP: Sweep = Sweep {
    min_bytes: 8,
    max_bytes: 2 << 30,
    step_factor: 4,
    warmup: 5,
    iters: 20,
};

/// An all-reduce sweep's sizes and iterations.
#[derive(Debug, Clone, Copy)]
pub struct Sweep {
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub step_factor: u64,
    pub warmup: u32,
    pub iters: u32,
}

impl Sweep {
    /// all_reduce_perf's flags for the sweep (nccl-tests src/common.cu's options:
    /// -b/-e bytes, -f factor, -w warm-up and -n timed iterations, -c 1 checks the
    /// results), with `-g 1`: one GPU per rank, mpirun starting a rank per GPU.
    pub fn nccl_tests_args(&self) -> Vec<String> {
        [
            ("-b", self.min_bytes.to_string()),
            ("-e", self.max_bytes.to_string()),
            ("-f", self.step_factor.to_string()),
            ("-g", "1".to_owned()),
            ("-w", self.warmup.to_string()),
            ("-n", self.iters.to_string()),
            ("-c", "1".to_owned()),
        ]
        .into_iter()
        .flat_map(|(flag, value)| [flag.to_owned(), value])
        .collect()
    }
}

/// The `nccl` test's subsystems: INIT and NET for the transport, device and channel
/// lines (the GID, "GPU Direct RDMA ... for HCA" and error-hint lines are NET only),
/// ENV for the echo of every NCCL variable the pod sets (reference/nccl-logs §1.0).
pub const DEBUG_SUBSYS: &str = "INIT,NET,ENV";

const ALLREDUCE: &str = include_str!("../../templates/smoke/allreduce.py");
const IB_WRITE_BW: &str = include_str!("../../templates/smoke/ib_write_bw.sh");

/// Which test runs in the pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Tool {
    /// An all-reduce bandwidth sweep with torch.distributed over NCCL, on every GPU.
    Nccl,
    /// perftest's ib_write_bw between two pods: the NIC and the fabric without NCCL.
    Perftest,
}

impl Tool {
    pub fn name(self) -> &'static str {
        match self {
            Tool::Nccl => "nccl",
            Tool::Perftest => "perftest",
        }
    }
}

/// How the `nccl` test starts one rank per GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Launcher {
    /// torchrun in every pod, running the test's all-reduce script (torch.distributed).
    Torchrun,
    /// mpirun in an MPIJob's launcher, running nccl-tests' all_reduce_perf on every
    /// worker (a pool with target.mpiOperator).
    Mpirun,
}

impl Launcher {
    pub fn name(self) -> &'static str {
        match self {
            Launcher::Torchrun => "torchrun",
            Launcher::Mpirun => "mpirun",
        }
    }
}

/// What the command line asks for.
#[derive(Debug, Clone)]
pub struct Options {
    pub pool: String,
    pub nodes: u32,
    pub gpus: Option<u32>,
    pub image: Option<String>,
    pub tool: Tool,
    /// `--launcher`: None lets the pool decide ([`choose_launcher`]).
    pub launcher: Option<Launcher>,
}

/// One of the smoke test's own choices, with its reason (`--explain`, the ConfigMap's
/// comments).
#[derive(Debug, Clone, Serialize)]
pub struct Note {
    pub topic: String,
    pub value: String,
    pub reason: String,
}

/// One environment variable the test adds, with the suppression comment it carries.
#[derive(Debug, Clone, Serialize)]
struct EnvEntry {
    name: &'static str,
    value: String,
}

/// Everything decided about one smoke test, before the pipeline renders its job.
#[derive(Debug, Clone)]
pub struct SmokeTest {
    pub name: String,
    /// The pool's namespace: a namespaced Trainer runtime is only usable from there,
    /// and the ConfigMap must be where the pods are.
    pub namespace: Option<String>,
    pub pool: String,
    pub tool: Tool,
    /// How the `nccl` test starts its ranks; None for `perftest` (one process a pod).
    pub launcher: Option<Launcher>,
    pub nodes: u32,
    pub gpus: u32,
    pub image: String,
    /// The label selector of the job's pods, for `kubectl logs` (by target API).
    pub pods: String,
    /// What `kubectl wait` waits for: the job's object and its success condition.
    pub wait: String,
    pub notes: Vec<Note>,
    /// NCCL_ALGO=Ring, and why, when forced.
    ring: Option<String>,
    /// RDG047 (a debugging variable) would fire on NCCL_ALGO here, so the Job says in
    /// an annotation why the test sets it.
    suppress_algo: bool,
    command: Vec<String>,
    restart_policy: Option<&'static str>,
}

/// Decide the smoke test for `options` on `pool`, or say why it cannot run (a usage
/// error). `pool` is None when the named pool could not be loaded: the job is then
/// built anyway, for the pipeline to report why its pool is missing or broken.
pub fn prepare(options: &Options, pool: Option<&PoolDocument>) -> Result<SmokeTest, String> {
    if options.nodes < 2 {
        return Err(format!(
            "--nodes {}: the network is tested between nodes, so a smoke test needs at least 2 (on one node NCCL never leaves it, and RDMA stays off)",
            options.nodes
        ));
    }
    if options.tool == Tool::Perftest && options.nodes != 2 {
        return Err(format!(
            "--nodes {}: --tool perftest runs ib_write_bw between two pods; use --nodes 2, or --tool nccl for more nodes",
            options.nodes
        ));
    }
    if options.gpus == Some(0) {
        return Err("--gpus 0: a pod takes at least one GPU".to_owned());
    }
    if options.tool == Tool::Perftest && options.image.is_none() {
        return Err("--tool perftest needs --image: an image with perftest's ib_write_bw and the RDMA user space your jobs use, e.g. your training image built with the step `rdmagen dockerfile --base IMAGE --set diagnostics` prints (no public image is both)".to_owned());
    }
    let mut notes = Vec::new();
    let gpus = match (pool, options.gpus) {
        (Some(pool), Some(gpus)) if gpus > pool.spec.gpu.per_node => {
            return Err(format!(
                "--gpus {gpus}: pool `{}` has {} GPUs per node",
                options.pool, pool.spec.gpu.per_node
            ));
        }
        (_, Some(gpus)) => gpus,
        (Some(pool), None) => {
            notes.push(Note {
                topic: "gpus".to_owned(),
                value: pool.spec.gpu.per_node.to_string(),
                reason: "every GPU of a node (the pool's gpu.perNode), as a job on whole nodes"
                    .to_owned(),
            });
            pool.spec.gpu.per_node
        }
        (None, None) => 1,
    };
    if let Some(pool) = pool {
        if options.tool == Tool::Perftest && !pool.spec.network.fabric.is_rdma() {
            return Err(format!(
                "--tool perftest: pool `{}` has fabric tcp, no RDMA device to test; --tool nccl measures what NCCL gets over TCP",
                options.pool
            ));
        }
        let taken = pool
            .spec
            .job_defaults
            .volumes
            .iter()
            .find(|v| v.name == SCRIPT_VOLUME || v.mount_path == SCRIPT_DIR);
        if let Some(volume) = taken {
            return Err(format!(
                "pool `{}` gives every job a volume `{}` at {}, where the smoke test mounts its script ({SCRIPT_VOLUME} at {SCRIPT_DIR})",
                options.pool, volume.name, volume.mount_path
            ));
        }
    }
    let launcher = match options.tool {
        Tool::Nccl => Some(choose_launcher(options, pool, &mut notes)?),
        Tool::Perftest => {
            if let Some(asked) = options.launcher {
                return Err(format!(
                    "--launcher {}: chooses how --tool nccl starts its ranks; --tool perftest runs one ib_write_bw in each of two pods",
                    asked.name()
                ));
            }
            None
        }
    };
    let mpirun = launcher == Some(Launcher::Mpirun);
    let image = match (&options.image, launcher) {
        (Some(image), _) => image.clone(),
        (None, Some(Launcher::Mpirun)) => {
            notes.push(Note {
                topic: "image".to_owned(),
                value: NCCL_TESTS_IMAGE.to_owned(),
                reason: format!("CoreWeave's public nccl-tests image: all_reduce_perf built with MPI support at {NCCL_TESTS_BINARY}, Open MPI's mpirun, the sshd the mpi-operator starts in each worker, and the RDMA user space; --image for yours, with all_reduce_perf at that path"),
            });
            NCCL_TESTS_IMAGE.to_owned()
        }
        (None, _) => {
            notes.push(Note {
                topic: "image".to_owned(),
                value: NCCL_IMAGE.to_owned(),
                reason: "NGC's PyTorch image: torch, NCCL and the RDMA user space; --image for your training image, which tests the NCCL your jobs use".to_owned(),
            });
            NCCL_IMAGE.to_owned()
        }
    };
    let name = job_name(options.tool, &options.pool, options.nodes);
    if name != format!("rdmagen-smoke-{}-{}", options.tool.name(), options.pool) {
        notes.push(Note {
            topic: "name".to_owned(),
            value: name.clone(),
            reason: format!(
                "`rdmagen-smoke-{}-<pool>` made a DNS-1035 label that leaves room for the pods' names, with a hash of the pool's name to keep it apart",
                options.tool.name()
            ),
        });
    }
    let v1 = pool.is_none_or(|p| matches!(p.spec.target.api, None | Some(TargetApi::KubeflowV1)));
    // training-operator v1 labels its pods with the job's name (kubeflow/common
    // JobNameLabel) and marks success with condition Succeeded; Trainer v2 runs a
    // JobSet of the TrainJob's name, whose pods JobSet labels, and marks Complete.
    let (pods, wait) = if mpirun {
        // The launcher's log holds everything: mpirun gathers every rank's output,
        // NCCL's lines and all_reduce_perf's table. The workers log only their sshd.
        (
            format!(
                "{}={name},{}={}",
                mpi::JOB_NAME_LABEL,
                mpi::JOB_ROLE_LABEL,
                mpi::ROLE_LAUNCHER
            ),
            format!("mpijob/{name} --for=condition={}", mpi::SUCCEEDED),
        )
    } else if v1 {
        (
            format!("training.kubeflow.org/job-name={name}"),
            format!("pytorchjob/{name} --for=condition=Succeeded"),
        )
    } else {
        (
            format!("jobset.sigs.k8s.io/jobset-name={name}"),
            format!("trainjob/{name} --for=condition=Complete"),
        )
    };
    let mut smoke = SmokeTest {
        name,
        namespace: pool.and_then(|p| p.metadata.namespace.clone()),
        pool: options.pool.clone(),
        tool: options.tool,
        launcher,
        nodes: options.nodes,
        gpus,
        image,
        pods,
        wait,
        notes,
        ring: None,
        suppress_algo: false,
        command: Vec::new(),
        // A failing test fails the job, with its pods (and their logs) kept: the
        // operator's default cleanPodPolicy is None, and OnFailure would restart the
        // pod and, past backoffLimit, delete it. An MPIJob's replicas take Never too
        // (the mpi-operator's validation.go:40-42); its launcher's pods stay.
        restart_policy: v1.then_some("Never"),
    };
    match options.tool {
        Tool::Nccl => {
            let model = pool.and_then(|p| p.spec.gpu.model.as_deref());
            smoke.ring = force_ring(options.nodes, model);
            if let (Some(reason), Some(pool)) = (&smoke.ring, pool) {
                smoke.notes.push(Note {
                    topic: "env NCCL_ALGO".to_owned(),
                    value: "Ring".to_owned(),
                    reason: reason.clone(),
                });
                let facts = EnvFacts {
                    profile: Some(crate::platform::profile(pool.spec.platform)),
                    ..EnvFacts::default()
                };
                smoke.suppress_algo = nccl::check("NCCL_ALGO", "Ring", &facts)
                    .iter()
                    .any(|f| f.rule == Rule::DebugOnlyVariable);
            }
            if mpirun {
                smoke.command = std::iter::once(NCCL_TESTS_BINARY.to_owned())
                    .chain(SWEEP.nccl_tests_args())
                    .collect();
            }
        }
        Tool::Perftest => {
            let (device, gid, management) = perftest_choices(pool, &mut smoke.notes);
            smoke.command = [
                "bash",
                &format!("{SCRIPT_DIR}/ib_write_bw.sh"),
                "--device",
                &device,
                "--gid-index",
                &gid,
                "--management-nic",
                &management,
            ]
            .map(str::to_owned)
            .to_vec();
        }
    }
    Ok(smoke)
}

/// How the `nccl` test starts its ranks: mpirun (nccl-tests' all_reduce_perf as an
/// MPIJob) where the pool says an mpi-operator rdmagen writes for is installed, else
/// torchrun; `--launcher` overrides, and mpirun where the pool has no such operator is
/// an error naming what to set. Noted with its reason. A pool that did not load gets
/// what was asked (or torchrun): the pipeline reports the pool.
fn choose_launcher(
    options: &Options,
    pool: Option<&PoolDocument>,
    notes: &mut Vec<Note>,
) -> Result<Launcher, String> {
    let Some(pool) = pool else {
        return Ok(options.launcher.unwrap_or(Launcher::Torchrun));
    };
    let name = &options.pool;
    let target = &pool.spec.target;
    // Why this pool cannot run an MPIJob (as plan/mpi.rs's RDG192 would refuse the
    // job), and what would let it.
    let refused = if matches!(target.api, Some(TargetApi::TrainerV1Alpha1)) {
        Some((
            format!(
                "pool `{name}` targets Kubeflow Trainer v2, whose MPI runtime (mlPolicy.mpi) rdmagen does not write yet"
            ),
            "use a PyTorchJob-API pool with target.mpiOperator".to_owned(),
        ))
    } else {
        match target.mpi_operator {
            None => Some((
                format!(
                    "pool `{name}` does not say the mpi-operator is installed (it sets no target.mpiOperator)"
                ),
                format!(
                    "where it is, set the pool's spec.target.mpiOperator to its release, e.g. \"{}\"",
                    mpi::LATEST
                ),
            )),
            Some(v) if v < mpi::OLDEST => Some((
                format!(
                    "pool `{name}` has mpi-operator {v}, and rdmagen writes MPIJobs for {} and later",
                    mpi::OLDEST
                ),
                "upgrade the operator and the pool's spec.target.mpiOperator".to_owned(),
            )),
            Some(_) => None,
        }
    };
    let (launcher, reason) = match (options.launcher, refused) {
        (Some(Launcher::Mpirun), Some((why, fix))) => {
            return Err(format!(
                "--launcher mpirun runs nccl-tests as an MPIJob, and {why}: {fix}; or leave out --launcher for the torchrun form"
            ));
        }
        (Some(Launcher::Mpirun), None) => (
            Launcher::Mpirun,
            "asked with --launcher mpirun: nccl-tests' all_reduce_perf, one rank per GPU, as an MPIJob".to_owned(),
        ),
        (Some(Launcher::Torchrun), _) => (
            Launcher::Torchrun,
            "asked with --launcher torchrun: the test's all-reduce script (torch.distributed), one process per GPU".to_owned(),
        ),
        (None, None) => (
            Launcher::Mpirun,
            format!("pool `{name}` has the mpi-operator (target.mpiOperator): nccl-tests' all_reduce_perf, the standard measure of a fabric, one rank per GPU, as an MPIJob; --launcher torchrun for the torchrun form"),
        ),
        (None, Some((why, _))) => (
            Launcher::Torchrun,
            format!("{why}, so the test's all-reduce script (torch.distributed) runs under torchrun, one process per GPU, printing all_reduce_perf's table"),
        ),
    };
    notes.push(Note {
        topic: "launcher".to_owned(),
        value: launcher.name().to_owned(),
        reason,
    });
    Ok(launcher)
}

/// `rdmagen-smoke-<tool>-<pool>` as a DNS-1035 label that leaves room for what the
/// operators name after it: training-operator v1 a Service per pod,
/// `<job>-worker-<nodes-2>` (crates/upstream/src/kubernetes/job_name.rs), Trainer v2 a pod hostname
/// `<job>-node-0-<nodes-1>`; each at most 63 characters. A pool name that is not
/// lowercase letters, digits and '-', or is too long, is cleaned and cut, and a hash
/// of the whole name added, so two such pools never share a job.
pub fn job_name(tool: Tool, pool: &str, nodes: u32) -> String {
    let prefix = format!("rdmagen-smoke-{}-", tool.name());
    let suffix = format!("-worker-{}", nodes.saturating_sub(1)).len();
    let budget = 63usize.saturating_sub(suffix + prefix.len());
    let mut clean = String::new();
    for c in pool.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            clean.push(c);
        } else if !clean.is_empty() && !clean.ends_with('-') {
            clean.push('-');
        }
    }
    let clean = clean.trim_end_matches('-');
    if clean == pool && !clean.is_empty() && clean.len() <= budget {
        return format!("{prefix}{clean}");
    }
    let hash = format!("{:08x}", fnv1a(pool.as_bytes()));
    let keep = budget.saturating_sub(hash.len() + 1);
    let cut: String = clean.chars().take(keep).collect();
    let cut = cut.trim_end_matches('-');
    if cut.is_empty() {
        format!("{prefix}{hash}")
    } else {
        format!("{prefix}{cut}-{hash}")
    }
}

/// FNV-1a, 32 bits: a stable hash (the same on every machine and release).
fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5, |h: u32, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// Why NCCL_ALGO=Ring is forced, or None when NCCL's own choice measures the wire.
/// The bus bandwidth of an all-reduce is comparable with the network's rate only when
/// the algorithm sends every byte over it: on 2 nodes NCCL's tree (or NVLS tree) can go
/// beyond the network bottleneck (nccl-tests#196, nccl#812), and with NVLink SHARP
/// (NVLS, NVSwitch systems from Hopper on) neither algbw nor busbw is bandwidth on the
/// wire (nccl-tests#212). A GPU model the pool does not name may be either.
pub fn force_ring(nodes: u32, gpu_model: Option<&str>) -> Option<String> {
    if nodes == 2 {
        return Some("on 2 nodes NCCL's tree algorithms can go beyond the network's rate (nccl-tests#196), so only Ring's bus bandwidth measures the wire".to_owned());
    }
    let Some(model) = gpu_model else {
        return Some("the pool names no GPU model, so NVLink SHARP (NVLS), whose bus bandwidth is not bandwidth on the wire (nccl-tests#212), cannot be ruled out".to_owned());
    };
    let upper = model.to_ascii_uppercase();
    const NVLS: [&str; 9] = [
        "H100", "H200", "H800", "H20", "GH200", "B100", "B200", "B300", "GB200",
    ];
    let nvswitch = NVLS.iter().any(|gpu| upper.contains(gpu)) && !upper.contains("PCIE");
    nvswitch.then(|| format!("{model} GPUs on NVSwitch can use NVLink SHARP (NVLS), whose bus bandwidth is not bandwidth on the wire (nccl-tests#212)"))
}

/// The device, GID index and management NIC ib_write_bw is given, each noted.
fn perftest_choices(
    pool: Option<&PoolDocument>,
    notes: &mut Vec<Note>,
) -> (String, String, String) {
    let Some(pool) = pool else {
        return ("auto".into(), "auto".into(), DEFAULT_MANAGEMENT_NIC.into());
    };
    let network = &pool.spec.network;
    let management = network.management_device().to_owned();
    let device = match network.hcas.first() {
        Some(first) => {
            notes.push(Note {
                topic: "ib_write_bw device".to_owned(),
                value: first.clone(),
                reason: "the pool's first data NIC (network.hcas)".to_owned(),
            });
            first.clone()
        }
        None => {
            notes.push(Note {
                topic: "ib_write_bw device".to_owned(),
                value: "auto".to_owned(),
                reason: format!("the pool lists no data NICs: at run time, the first entry of NCCL_IB_HCA, else the first RDMA device that is not the management NIC {management}"),
            });
            "auto".to_owned()
        }
    };
    let gid = match (network.fabric, network.gid_index) {
        (Fabric::Roce, Some(GidIndex::Index(index))) => {
            notes.push(Note {
                topic: "ib_write_bw GID index".to_owned(),
                value: index.to_string(),
                reason: "the pool's gidIndex".to_owned(),
            });
            index.to_string()
        }
        (Fabric::Roce, _) => {
            notes.push(Note {
                topic: "ib_write_bw GID index".to_owned(),
                value: "auto".to_owned(),
                reason: "the pool's gidIndex is auto or unset: at run time, NCCL_IB_GID_INDEX when the platform sets it, else the lowest RoCE v2 GID with an IPv4 address in sysfs, which the test prints".to_owned(),
            });
            "auto".to_owned()
        }
        _ => {
            notes.push(Note {
                topic: "ib_write_bw GID index".to_owned(),
                value: "none".to_owned(),
                reason: "InfiniBand addresses ports by LID; a GID index is RoCE's".to_owned(),
            });
            "none".to_owned()
        }
    };
    (device, gid, management)
}

/// What the Job template reads.
#[derive(Serialize)]
struct JobView<'a> {
    name: &'a str,
    namespace: Option<&'a str>,
    pool: &'a str,
    image: &'a str,
    nodes: u32,
    gpus: u32,
    launcher: &'static str,
    script: Option<String>,
    command: &'a [String],
    env: Vec<EnvEntry>,
    /// The job's `rdmagen.io/ignore` annotation, when it needs one.
    ignore: Option<String>,
    /// The script's volume, when there is a script to mount.
    volume: Option<&'static str>,
    mount_path: &'static str,
    restart_policy: Option<&'static str>,
}

/// What the ConfigMap template reads.
#[derive(Serialize)]
struct ConfigMapView<'a> {
    name: &'a str,
    namespace: Option<&'a str>,
    comments: Vec<String>,
    script_file: Option<&'static str>,
    script_text: Option<&'static str>,
}

impl SmokeTest {
    /// The rdmagen Job, as YAML text for the pipeline. `policy` decides whether the
    /// job carries its suppression of RDG047 for NCCL_ALGO: not when RDG047 is off (a
    /// suppression of nothing is itself a finding, RDG130).
    pub fn job_document(&self, renderer: &Renderer, policy: &Policy) -> Result<String, String> {
        let mut env = Vec::new();
        let mut ignore = None;
        if self.tool == Tool::Nccl {
            env.push(EnvEntry {
                name: "NCCL_DEBUG",
                value: "INFO".to_owned(),
            });
            env.push(EnvEntry {
                name: "NCCL_DEBUG_SUBSYS",
                value: DEBUG_SUBSYS.to_owned(),
            });
            if self.ring.is_some() {
                let on = policy.level(Rule::DebugOnlyVariable, Some(JOB_SOURCE)) != Level::Off;
                if self.suppress_algo && on {
                    // An annotation, not a comment: it reaches the rendered manifest's
                    // metadata, so that `lint` of the output honours it too.
                    ignore = Some(format!(
                        "{} a smoke test measures the wire with Ring",
                        Rule::DebugOnlyVariable.info().id
                    ));
                }
                env.push(EnvEntry {
                    name: "NCCL_ALGO",
                    value: "Ring".to_owned(),
                });
            }
        }
        // The job's own `launcher` words (model::job::Launcher): under mpirun the
        // program is the image's all_reduce_perf, in `command`; nothing is mounted.
        let (launcher, script) = match self.launcher {
            Some(Launcher::Torchrun) => ("torchrun", Some(format!("{SCRIPT_DIR}/allreduce.py"))),
            Some(Launcher::Mpirun) => ("mpirun", None),
            None => ("none", None),
        };
        let view = JobView {
            name: &self.name,
            namespace: self.namespace.as_deref(),
            pool: &self.pool,
            image: &self.image,
            nodes: self.nodes,
            gpus: self.gpus,
            launcher,
            script,
            command: &self.command,
            env,
            ignore,
            volume: self.script().map(|_| SCRIPT_VOLUME),
            mount_path: SCRIPT_DIR,
            restart_policy: self.restart_policy,
        };
        renderer
            .render(render::SMOKE_JOB, "smoke", &view)
            .map_err(|e| format!("{}: {e}", render::SMOKE_JOB))
    }

    /// The script's file name in the ConfigMap, and its text; None under mpirun,
    /// whose program is nccl-tests' own binary in the image.
    pub fn script(&self) -> Option<(&'static str, &'static str)> {
        match (self.tool, self.launcher) {
            (Tool::Nccl, Some(Launcher::Mpirun)) => None,
            (Tool::Nccl, _) => Some(("allreduce.py", ALLREDUCE)),
            (Tool::Perftest, _) => Some(("ib_write_bw.sh", IB_WRITE_BW)),
        }
    }

    /// The ConfigMap holding the script, its comments saying what runs, what was
    /// decided (`decisions`: the pipeline's and the test's own, as `topic = value:
    /// reason` lines) and how to read the result; parsed back and checked as the API
    /// server would before it is returned. `pools` is how the pools were named on the
    /// command line, for the `nccl-log` line.
    pub fn config_map(
        &self,
        renderer: &Renderer,
        decisions: &[String],
        pools: &str,
    ) -> Result<String, String> {
        let script = self.script();
        let what = match (self.tool, self.launcher) {
            (Tool::Nccl, Some(Launcher::Mpirun)) => format!(
                "nccl-tests' all_reduce_perf on {} nodes x {} GPUs, an MPIJob (mpirun on the launcher, one rank per GPU of the workers); the launcher's log holds its table and every rank's NCCL_DEBUG=INFO ({DEBUG_SUBSYS}) lines",
                self.nodes, self.gpus
            ),
            (Tool::Nccl, _) => format!(
                "an all-reduce bandwidth sweep with torch.distributed over NCCL on {} nodes x {} GPUs (torchrun, one process per GPU); node 0 prints nccl-tests' all_reduce_perf table, every rank NCCL_DEBUG=INFO ({DEBUG_SUBSYS}) lines",
                self.nodes, self.gpus
            ),
            (Tool::Perftest, _) => "perftest's ib_write_bw between node ranks 0 (server) and 1 (client), all sizes to 8 MiB in Gb/s".to_owned(),
        };
        let nccl_env = match self.tool {
            Tool::Nccl => ", NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_ALGO when forced",
            Tool::Perftest => "",
        };
        let mut comments = vec![format!(
            "rdmagen smoke-test --tool {} for pool {}: {what}.",
            self.tool.name(),
            self.pool
        )];
        match script {
            Some(_) => comments.extend([
                "Its pods have the shape of a real job on the pool; the additions are this ConfigMap's script".to_owned(),
                format!("(volume {SCRIPT_VOLUME} at {SCRIPT_DIR}), the command{nccl_env}."),
            ]),
            // Nothing mounts this ConfigMap: it carries these comments, as in every form.
            None => comments.extend([
                "Its pods have the shape of a real job on the pool; the additions are the image, the command".to_owned(),
                format!("(the image's {NCCL_TESTS_BINARY}, under the mpirun rdmagen plans for the pool){nccl_env}."),
                "This ConfigMap holds no script: nothing mounts it.".to_owned(),
            ]),
        }
        comments.extend([
            String::new(),
            "Run it, wait for it, keep each pod's log, and read them (README: Verify the network before you train):".to_owned(),
            "  kubectl apply -f smoke.yaml      # what smoke-test printed; with -o DIR: -f DIR/<name>/".to_owned(),
            format!(
                "  kubectl wait {} --timeout=30m   # a failed test times out: read the logs anyway",
                self.wait
            ),
            format!(
                "  for pod in $(kubectl get pods -l {} -o name); do kubectl logs \"$pod\" > \"${{pod#pod/}}.log\"; done",
                self.pods
            ),
            format!("  rdmagen nccl-log *.log --pool {} --pools {pools}", self.pool),
            "  kubectl delete -f smoke.yaml".to_owned(),
        ]);
        if !decisions.is_empty() {
            comments.push(String::new());
            comments.push("Decided for this test:".to_owned());
            comments.extend(decisions.iter().map(|d| format!("  {d}")));
        }
        let view = ConfigMapView {
            name: &self.name,
            namespace: self.namespace.as_deref(),
            comments,
            script_file: script.map(|(file, _)| file),
            script_text: script.map(|(_, text)| text),
        };
        let rendered = renderer
            .render(render::SMOKE_CONFIGMAP, "smoke", &view)
            .map_err(|e| format!("{}: {e}", render::SMOKE_CONFIGMAP))?;
        let docs = parse_values(&rendered).map_err(|e| {
            format!(
                "the rendered ConfigMap is not valid YAML at line {}, column {}: {}",
                e.line, e.column, e.message
            )
        })?;
        let [doc] = docs.as_slice() else {
            return Err(format!(
                "the rendered ConfigMap holds {} documents, not one",
                docs.len()
            ));
        };
        let mut problems = config_map::problems(doc);
        problems.extend(config_map::script_read_back(
            doc,
            &self.name,
            self.namespace.as_deref(),
            script,
        ));
        match problems.is_empty() {
            true => Ok(rendered),
            false => Err(format!(
                "the rendered ConfigMap would be refused: {}",
                problems.join("; ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_fit_and_stay_apart() {
        assert_eq!(
            job_name(Tool::Nccl, "a100-roce", 2),
            "rdmagen-smoke-nccl-a100-roce"
        );
        for (pool, nodes) in [
            ("A100_RoCE", 2),
            ("x".repeat(80).as_str(), 2),
            ("a".repeat(40).as_str(), 1000),
            ("---", 2),
            ("", 2),
        ] {
            for tool in [Tool::Nccl, Tool::Perftest] {
                let name = job_name(tool, pool, nodes);
                let worker = format!("{name}-worker-{}", nodes - 1);
                assert!(worker.len() <= 63, "{worker}");
                assert!(
                    crate::kubernetes::job_name::problem(
                        &name,
                        &[("Master", 1), ("Worker", nodes - 1)]
                    )
                    .is_none(),
                    "{name}"
                );
            }
        }
        assert_ne!(
            job_name(Tool::Nccl, "pool_a", 2),
            job_name(Tool::Nccl, "pool-a", 2)
        );
    }

    /// Both forms run one sweep: allreduce.py's argparse defaults are [`SWEEP`], which
    /// all_reduce_perf gets as flags.
    #[test]
    fn both_forms_run_the_same_sweep() {
        let default = |option: &str| -> u64 {
            let line = ALLREDUCE
                .lines()
                .find(|l| l.contains(&format!("\"--{option}\"")))
                .unwrap_or_else(|| panic!("allreduce.py has no --{option}"));
            let value = line.split("default=").nth(1).unwrap().trim_end_matches(')');
            match value.split_once(" << ") {
                Some((base, shift)) => {
                    base.parse::<u64>().unwrap() << shift.parse::<u32>().unwrap()
                }
                None => value.parse().unwrap(),
            }
        };
        assert_eq!(default("min-bytes"), SWEEP.min_bytes);
        assert_eq!(default("max-bytes"), SWEEP.max_bytes);
        assert_eq!(default("step-factor"), SWEEP.step_factor);
        assert_eq!(default("warmup"), u64::from(SWEEP.warmup));
        assert_eq!(default("iters"), u64::from(SWEEP.iters));
        assert_eq!(
            SWEEP.nccl_tests_args().join(" "),
            "-b 8 -e 2147483648 -f 4 -g 1 -w 5 -n 20 -c 1"
        );
    }

    #[test]
    fn ring_where_the_bus_bandwidth_would_not_be_the_wire() {
        assert!(force_ring(2, Some("A100-SXM-80G")).is_some());
        assert!(force_ring(4, Some("A100-SXM-80G")).is_none());
        assert!(force_ring(4, Some("H800")).is_some());
        assert!(force_ring(4, Some("H100-PCIe")).is_none());
        assert!(force_ring(4, None).is_some());
    }
}
