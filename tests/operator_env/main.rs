//! Every golden PyTorchJob, run on a transcription of the training operator that will
//! run it, gives one consistent world (issue 11): every pod agrees on the world size
//! and the rendezvous endpoint, global ranks are exactly 0..W-1, and every pod runs one
//! process per GPU it requests.
//!
//! The chain, each link transcribed from its source (see each module):
//! operator defaults and env ([`operator`]) → kubelet `$(VAR)` expansion ([`kubelet`])
//! → torchrun's parser or a plain script ([`launcher`]) → the groups that form
//! ([`world`]). The manifests are judged by simulation only, never by their text.

#[path = "../control_plane/mod.rs"]
mod cluster;
mod gang;
mod kubelet;
mod launcher;
mod mpi;
mod operator;
mod real;
mod world;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rdmagen::diagnostics::Findings;
use rdmagen::kubeflow::operator::OperatorGeneration;
use rdmagen::model::load::read_documents;
use serde_json::Value;

use operator::Generation;
use world::{Member, World};

/// What a manifest becomes on one operator generation.
#[derive(Debug)]
struct Simulation {
    worlds: Vec<World>,
    /// Everything that keeps it from being one consistent world using every GPU.
    failures: Vec<String>,
}

fn simulate(job: &Value, generation: Generation, gpu_resource: &str) -> Simulation {
    match operator::operate(job, generation, gpu_resource) {
        Ok(operated) => world_of(&operated.pods, operated.notes),
        Err(e) => Simulation {
            worlds: Vec::new(),
            failures: vec![e],
        },
    }
}

/// The world `pods` form once the kubelet and the launcher have run them (with
/// `failures` already known): the operator's pods as the transcription predicts them,
/// or as a real operator made them (real.rs).
fn world_of(pods: &[operator::Pod], mut failures: Vec<String>) -> Simulation {
    let mut members = Vec::new();
    for pod in pods {
        let launched = kubelet::environment(&pod.env).and_then(|env| {
            let argv = kubelet::argv(&pod.command, &pod.args, &env);
            launcher::launch(&argv, &env, pod.gpus)
        });
        match launched {
            Ok(launch) => members.push(Member {
                pod: &pod.name,
                launch,
                gpus: pod.gpus,
            }),
            Err(e) => failures.push(format!("{}: {e}", pod.name)),
        }
    }
    let (worlds, formed) = world::form(&members);
    failures.extend(formed);
    if worlds.len() > 1 {
        let sizes: Vec<String> = worlds
            .iter()
            .map(|w| format!("{} of size {} at {}", pod_names(w), w.size, w.endpoint))
            .collect();
        failures.push(format!(
            "the pods form {} separate worlds: {}",
            worlds.len(),
            sizes.join("; ")
        ));
    }
    for w in &worlds {
        let mut ranks: Vec<u32> = w.pods.iter().flat_map(|(_, r)| r.clone()).collect();
        ranks.sort_unstable();
        if ranks.iter().copied().ne(0..w.size) {
            failures.push(format!(
                "world at {}: ranks {ranks:?} are not 0..{}",
                w.endpoint, w.size
            ));
        }
        let host = w.endpoint.rsplit_once(':').map_or("", |(h, _)| h);
        if w.pods.len() > 1 && matches!(host, "127.0.0.1" | "localhost" | "::1" | "") {
            failures.push(format!(
                "{} pods rendezvous at the loopback {}",
                w.pods.len(),
                w.endpoint
            ));
        }
    }
    for m in &members {
        let processes = worlds
            .iter()
            .flat_map(|w| &w.pods)
            .find(|(p, _)| p == m.pod)
            .map(|(_, r)| r.len());
        if let Some(n) = processes
            && n as u32 != m.gpus
        {
            failures.push(format!(
                "{} runs {n} process(es) on {} GPU(s)",
                m.pod, m.gpus
            ));
        }
    }
    Simulation { worlds, failures }
}

fn pod_names(w: &World) -> String {
    w.pods
        .iter()
        .map(|(p, _)| p.as_str())
        .collect::<Vec<_>>()
        .join("+")
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn manifest(text: &str) -> Value {
    let docs = rdmagen::verify::parse(text).expect("a manifest parses");
    docs.into_iter()
        .find(|d| d["kind"] == "PyTorchJob")
        .expect("a PyTorchJob")
}

/// The operator generation(s) a golden must run on, with why: the example pool's
/// `spec.target.operator`, else its platform's default (CubeStudio: the pre-1.7 operator
/// it installs), else unknown, and then both.
struct Target {
    generations: Vec<Generation>,
    why: String,
    gpu_resource: String,
}

/// The target of the example's job `job_name` in `namespace` (its directory name is
/// `<job>.<namespace>` when jobs in two namespaces share the name, so the manifest
/// says which job it is).
fn target(example: &Path, job_name: &str, namespace: Option<&str>) -> Target {
    let (mut jobs, mut pools) = (Vec::new(), Vec::new());
    let mut findings = Findings::default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(example)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let docs = read_documents(
            &Arc::from(f.to_string_lossy().as_ref()),
            &text,
            &mut findings,
        );
        jobs.extend(docs.jobs.into_iter().map(|(_, j)| j));
        pools.extend(docs.pools.into_iter().map(|(_, p)| p));
    }
    let job = jobs
        .iter()
        .find(|j| {
            j.value.metadata.name == job_name && j.value.metadata.namespace.as_deref() == namespace
        })
        .unwrap_or_else(|| panic!("{}: no Job {job_name}", example.display()));
    let pool = pools
        .iter()
        .find(|p| p.value.metadata.name == job.value.spec.pool)
        .unwrap_or_else(|| panic!("{}: no Pool {}", example.display(), job.value.spec.pool));
    pool_target(&pool.value.spec)
}

/// The target of a job on a pool with `spec`.
fn pool_target(spec: &rdmagen::model::pool::PoolSpec) -> Target {
    let of = |v| match OperatorGeneration::of(v) {
        OperatorGeneration::PodWorld => Generation::PodWorld,
        OperatorGeneration::Pet => Generation::Pet,
    };
    let profile = rdmagen::platform::profile(spec.platform);
    let (generations, why) = match (spec.target.operator, profile.operator) {
        (Some(v), _) => (vec![of(v)], format!("pool target.operator {v}")),
        (None, Some((v, _))) => (
            vec![of(v)],
            format!("{} platform default {v}", profile.name),
        ),
        (None, None) => (
            vec![Generation::PodWorld, Generation::Pet],
            "operator unknown: both generations".to_owned(),
        ),
    };
    Target {
        generations,
        why,
        gpu_resource: spec.gpu.resource.clone(),
    }
}

/// (pool, tool) of a golden of `rdmagen smoke-test`, from its path.
fn smoke_test(rel: &str) -> Option<(&str, &str)> {
    let mut parts = rel.strip_prefix("golden/smoke/")?.split('/');
    Some((parts.next()?, parts.next()?))
}

/// The target of a smoke test on examples/smoke/<pool>.yaml.
fn smoke_pool_target(pool: &str) -> Target {
    let file = root().join(format!("examples/smoke/{pool}.yaml"));
    let text = std::fs::read_to_string(&file).unwrap();
    let docs = read_documents(&Arc::from(pool), &text, &mut Findings::default());
    let (_, pool) = docs
        .pools
        .first()
        .expect("one Pool per examples/smoke file");
    pool_target(&pool.value.spec)
}

/// The pool a golden manifest (`golden/...`, relative to the root) was rendered for, or
/// `None` for the smoke test's perftest, which runs one ib_write_bw per pod and forms
/// no training world.
fn golden_target(rel: &str, job: &Value) -> Option<Target> {
    let meta = &job["metadata"];
    let name = meta["name"].as_str().expect("metadata.name");
    match smoke_test(rel) {
        // `rdmagen smoke-test`'s goldens: golden/smoke/<pool>/<tool>/<job>/, the pool
        // in examples/smoke/<pool>.yaml. Its nccl test is a torchrun job like any.
        Some((_, "perftest")) => None,
        Some((pool, _)) => Some(smoke_pool_target(pool)),
        None => {
            let example = rel
                .strip_prefix("golden/")
                .unwrap()
                .split('/')
                .next()
                .unwrap();
            let example = root().join("examples").join(example);
            Some(target(&example, name, meta["namespace"].as_str()))
        }
    }
}

/// Issue 11's acceptance test: every golden manifest, on every operator generation its
/// pool may run, is one consistent world that uses every GPU it requests. All failures
/// are gathered and reported together, one line per golden and generation.
#[test]
fn every_golden_manifest_is_one_consistent_world_on_its_target_operator() {
    let mut report = Vec::new();
    let mut failed = 0;
    let mut checked = 0;
    let mut goldens: Vec<PathBuf> = walkdir::WalkDir::new(root().join("golden"))
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.file_name().is_some_and(|n| n == "pytorchjob.yaml"))
        .collect();
    goldens.sort();
    assert!(!goldens.is_empty(), "no golden manifests found");
    for path in goldens {
        let rel = path.strip_prefix(root()).unwrap().display().to_string();
        let job = manifest(&std::fs::read_to_string(&path).unwrap());
        let Some(target) = golden_target(&rel, &job) else {
            continue;
        };
        for generation in &target.generations {
            checked += 1;
            let sim = simulate(&job, *generation, &target.gpu_resource);
            let head = format!("{rel} on {} ({})", generation.name(), target.why);
            if sim.failures.is_empty() {
                let w = &sim.worlds[0];
                report.push(format!(
                    "ok    {head}: one world of {} at {}",
                    w.size, w.endpoint
                ));
            } else {
                failed += 1;
                report.push(format!("FAIL  {head}:"));
                report.extend(sim.failures.iter().map(|f| format!("        - {f}")));
            }
        }
    }
    let report = report.join("\n");
    if failed == 0 {
        eprintln!("{report}");
    }
    assert!(
        failed == 0,
        "{failed} of {checked} golden/generation pairs are not one consistent world:\n{report}"
    );
}

/// One replica of [`two_pods`]: one pod with a `pytorch` container.
const REPLICA: &str = "      replicas: 1
      template:
        spec:
          containers:
            - {name: pytorch, image: i, command: COMMAND, resources: {limits: {nvidia.com/gpu: \"GPUS\"}}}
";

/// A Master and a Worker, each on `gpus` GPUs, running `command`, with `nproc` as
/// spec.nprocPerNode (None: not written).
fn two_pods(command: &str, nproc: Option<&str>, gpus: u32) -> Value {
    let nproc = nproc.map_or(String::new(), |n| format!("nprocPerNode: \"{n}\""));
    let replica = REPLICA
        .replace("COMMAND", command)
        .replace("GPUS", &gpus.to_string());
    manifest(&format!(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {{name: j}}\nspec:\n  {nproc}\n  pytorchReplicaSpecs:\n    Master:\n{replica}    Worker:\n{replica}"
    ))
}

fn worlds(sim: &Simulation) -> Vec<(u32, String, Vec<String>)> {
    sim.worlds
        .iter()
        .map(|w| {
            (
                w.size,
                w.endpoint.clone(),
                w.pods.iter().map(|(p, _)| p.clone()).collect(),
            )
        })
        .collect()
}

/// The bug of issue 11: today's bare `torchrun main.py` (with nprocPerNode, pruned) on
/// an operator before 1.7 gets no PET_*, so torchrun takes its defaults: each pod is a
/// world of size 1 at 127.0.0.1:29500, on one of its 8 GPUs. On 1.7+ it is one world.
#[test]
fn bare_torchrun_on_the_old_operator_trains_each_pod_alone() {
    let job = two_pods("[torchrun, main.py]", Some("8"), 8);
    let old = simulate(&job, Generation::PodWorld, "nvidia.com/gpu");
    assert_eq!(
        worlds(&old),
        [
            (1, "127.0.0.1:29500".into(), vec!["j-master-0".into()]),
            (1, "127.0.0.1:29500".into(), vec!["j-worker-0".into()]),
        ]
    );
    assert_eq!(
        old.failures,
        [
            "spec.nprocPerNode is not in this operator's CRD: kubectl's strict field validation rejects the job (pruned without it)",
            "the pods form 2 separate worlds: j-master-0 of size 1 at 127.0.0.1:29500; j-worker-0 of size 1 at 127.0.0.1:29500",
            "j-master-0 runs 1 process(es) on 8 GPU(s)",
            "j-worker-0 runs 1 process(es) on 8 GPU(s)",
        ]
    );
    let new = simulate(&job, Generation::Pet, "nvidia.com/gpu");
    assert_eq!(
        worlds(&new),
        [(
            16,
            "j-master-0:23456".into(),
            vec!["j-master-0".into(), "j-worker-0".into()]
        )]
    );
    assert!(new.failures.is_empty(), "{:?}", new.failures);
}

/// `--nnodes=$(WORLD_SIZE)` is right where WORLD_SIZE counts pods: on the old operator,
/// and on 1.7+ while nprocPerNode is unset ("auto" counts 1). With an integer
/// nprocPerNode, 1.7+ sets WORLD_SIZE = pods × 8 and the rendezvous waits for 16 nodes.
#[test]
fn nnodes_from_world_size_needs_world_size_to_count_pods() {
    let command = "[torchrun, \"--nnodes=$(WORLD_SIZE)\", \"--node_rank=$(RANK)\", --nproc_per_node=8, \"--master_addr=$(MASTER_ADDR)\", \"--master_port=$(MASTER_PORT)\", train.py]";
    let unset = two_pods(command, None, 8);
    for generation in [Generation::PodWorld, Generation::Pet] {
        let sim = simulate(&unset, generation, "nvidia.com/gpu");
        assert!(
            sim.failures.is_empty(),
            "{generation:?}: {:?}",
            sim.failures
        );
        assert_eq!(
            worlds(&sim),
            [(
                16,
                "j-master-0:23456".into(),
                vec!["j-master-0".into(), "j-worker-0".into()]
            )]
        );
    }
    let integer = simulate(
        &two_pods(command, Some("8"), 8),
        Generation::Pet,
        "nvidia.com/gpu",
    );
    assert_eq!(worlds(&integer), []);
    assert_eq!(
        integer.failures,
        [
            "at j-master-0:23456: the rendezvous waits for 16 node(s) and 2 pod(s) join (j-master-0, j-worker-0); it never completes"
        ]
    );
    let legacy = command.replace("[torchrun,", "[python, -m, torch.distributed.launch,");
    let sim = simulate(
        &two_pods(&legacy, None, 8),
        Generation::Pet,
        "nvidia.com/gpu",
    );
    assert!(sim.failures.is_empty(), "{:?}", sim.failures);
}

/// A script that starts no launcher is one process per pod, reading WORLD_SIZE and
/// RANK: right with one GPU per pod; with an integer nprocPerNode on 1.7+ the world
/// is 16 with ranks 0 and 1 only, and init_process_group waits forever.
#[test]
fn a_plain_script_is_one_process_per_pod() {
    let one_gpu = simulate(
        &two_pods("[python, train.py]", None, 1),
        Generation::PodWorld,
        "nvidia.com/gpu",
    );
    assert!(one_gpu.failures.is_empty(), "{:?}", one_gpu.failures);
    assert_eq!(one_gpu.worlds[0].size, 2);
    let sim = simulate(
        &two_pods("[python, train.py]", Some("8"), 8),
        Generation::Pet,
        "nvidia.com/gpu",
    );
    assert_eq!(
        sim.failures,
        [
            "at j-master-0:23456: WORLD_SIZE is 16 but the processes have RANK [0, 1]; init_process_group waits forever"
        ]
    );
}

/// The operator's MASTER_ADDR is the Master's Service, `<job>-master-0`, on every pod,
/// and MASTER_PORT the Master's `pytorchjob-port` (23456 when the manifest has none).
#[test]
fn the_operator_env_of_each_generation() {
    let job = two_pods("[torchrun, t.py]", None, 8);
    let env = |generation| -> Vec<Vec<(String, String)>> {
        operator::operate(&job, generation, "nvidia.com/gpu")
            .unwrap()
            .pods
            .into_iter()
            .map(|p| p.env)
            .collect()
    };
    let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
        v.iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    };
    assert_eq!(
        env(Generation::PodWorld),
        [
            pairs(&[
                ("PYTHONUNBUFFERED", "0"),
                ("MASTER_PORT", "23456"),
                ("MASTER_ADDR", "j-master-0"),
                ("WORLD_SIZE", "2"),
                ("RANK", "0")
            ]),
            pairs(&[
                ("PYTHONUNBUFFERED", "0"),
                ("MASTER_PORT", "23456"),
                ("MASTER_ADDR", "j-master-0"),
                ("WORLD_SIZE", "2"),
                ("RANK", "1")
            ]),
        ]
    );
    let pet = |rank: &str| {
        pairs(&[
            ("PYTHONUNBUFFERED", "1"),
            ("MASTER_PORT", "23456"),
            ("PET_MASTER_PORT", "23456"),
            ("MASTER_ADDR", "j-master-0"),
            ("PET_MASTER_ADDR", "j-master-0"),
            ("WORLD_SIZE", "2"),
            ("RANK", rank),
            ("PET_NODE_RANK", rank),
            ("PET_NPROC_PER_NODE", "auto"),
            ("PET_NNODES", "2"),
        ])
    };
    assert_eq!(env(Generation::Pet), [pet("0"), pet("1")]);
}
