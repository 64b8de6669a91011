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
//! - `nccl`: an all-reduce sweep with torch.distributed (`templates/smoke/allreduce.py`),
//!   launched like any torchrun job, printing nccl-tests' all_reduce_perf table.
//! - `perftest`: `ib_write_bw` between node ranks 0 and 1
//!   (`templates/smoke/ib_write_bw.sh`), one process per pod, with the pool's first data
//!   NIC and GID index.

use serde::Serialize;

use crate::diagnostics::policy::Level;
use crate::diagnostics::{Policy, Rule};
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

/// What the command line asks for.
#[derive(Debug, Clone)]
pub struct Options {
    pub pool: String,
    pub nodes: u32,
    pub gpus: Option<u32>,
    pub image: Option<String>,
    pub tool: Tool,
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
    let image = match (&options.image, options.tool) {
        (Some(image), _) => image.clone(),
        (None, Tool::Nccl) => NCCL_IMAGE.to_owned(),
        (None, Tool::Perftest) => {
            return Err("--tool perftest needs --image: an image with perftest's ib_write_bw and the RDMA user space your jobs use, e.g. your training image built with the step `rdmagen dockerfile --base IMAGE --set diagnostics` prints (no public image is both)".to_owned());
        }
    };
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
    let (pods, wait) = if v1 {
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
        // pod and, past backoffLimit, delete it.
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
    volume: &'static str,
    mount_path: &'static str,
    restart_policy: Option<&'static str>,
}

/// What the ConfigMap template reads.
#[derive(Serialize)]
struct ConfigMapView<'a> {
    name: &'a str,
    namespace: Option<&'a str>,
    comments: Vec<String>,
    script_file: &'static str,
    script_text: &'static str,
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
        let (launcher, script) = match self.tool {
            Tool::Nccl => ("torchrun", Some(format!("{SCRIPT_DIR}/allreduce.py"))),
            Tool::Perftest => ("none", None),
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
            volume: SCRIPT_VOLUME,
            mount_path: SCRIPT_DIR,
            restart_policy: self.restart_policy,
        };
        renderer
            .render(render::SMOKE_JOB, "smoke", &view)
            .map_err(|e| format!("{}: {e}", render::SMOKE_JOB))
    }

    /// The script's file name in the ConfigMap, and its text.
    pub fn script(&self) -> (&'static str, &'static str) {
        match self.tool {
            Tool::Nccl => ("allreduce.py", ALLREDUCE),
            Tool::Perftest => ("ib_write_bw.sh", IB_WRITE_BW),
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
        let (file, text) = self.script();
        let what = match self.tool {
            Tool::Nccl => format!(
                "an all-reduce bandwidth sweep with torch.distributed over NCCL on {} nodes x {} GPUs (torchrun, one process per GPU); node 0 prints nccl-tests' all_reduce_perf table, every rank NCCL_DEBUG=INFO ({DEBUG_SUBSYS}) lines",
                self.nodes, self.gpus
            ),
            Tool::Perftest => "perftest's ib_write_bw between node ranks 0 (server) and 1 (client), all sizes to 8 MiB in Gb/s".to_owned(),
        };
        let mut comments = vec![
            format!(
                "rdmagen smoke-test --tool {} for pool {}: {what}.",
                self.tool.name(),
                self.pool
            ),
            "Its pods have the shape of a real job on the pool; the additions are this ConfigMap's script".to_owned(),
            format!(
                "(volume {SCRIPT_VOLUME} at {SCRIPT_DIR}), the command{}.",
                if self.tool == Tool::Nccl {
                    ", NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_ALGO when forced"
                } else {
                    ""
                }
            ),
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
        ];
        if !decisions.is_empty() {
            comments.push(String::new());
            comments.push("Decided for this test:".to_owned());
            comments.extend(decisions.iter().map(|d| format!("  {d}")));
        }
        let view = ConfigMapView {
            name: &self.name,
            namespace: self.namespace.as_deref(),
            comments,
            script_file: file,
            script_text: text,
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
        if doc["metadata"]["name"] != self.name.as_str() {
            problems.push(format!(
                "metadata.name reads back as {}",
                doc["metadata"]["name"]
            ));
        }
        if doc["data"][file] != text {
            problems.push(format!("data.{file} does not read back as the script"));
        }
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

    #[test]
    fn ring_where_the_bus_bandwidth_would_not_be_the_wire() {
        assert!(force_ring(2, Some("A100-SXM-80G")).is_some());
        assert!(force_ring(4, Some("A100-SXM-80G")).is_none());
        assert!(force_ring(4, Some("H800")).is_some());
        assert!(force_ring(4, Some("H100-PCIe")).is_none());
        assert!(force_ring(4, None).is_some());
    }
}
