//! Every golden MPIJob, run on the mpi-operator as `rdmagen::kubeflow::mpi` transcribes
//! its controller (kubeflow/mpi-operator v0.8.0 pkg/controller/mpi_job_controller.go:
//! worker and launcher names :1453-1455 and :84/:1557, the hostfile :1309-1337, the
//! launcher's env :1581-1606), then through the kubelet's `$(VAR)` expansion and
//! mpirun's own options, gives one rank per GPU on every worker, and every variable of
//! the workers' container reaches every rank through mpirun's forwarding: a rank is a
//! child of sshd, which does not pass on the container's env
//! (../shared/reference/mpijob.md §4.3).
//!
//! mpirun's options, as the simulation reads them: Open MPI's `-np N`, `-x NAME[=VALUE]`
//! (the value from mpirun's own environment when none is given), `--bind-to X` and
//! `--map-by slot` (ranks fill each host's slots in hostfile order); Intel MPI's and
//! MPICH's Hydra `-n N`, `-ppn N` and `-genv NAME VALUE` (mpirun(1) of each). Anything
//! else before the program is refused, not guessed.

use std::collections::BTreeMap;
use std::path::PathBuf;

use rdmagen::kubeflow::mpi::{self, Implementation};
use serde_json::Value;

use crate::kubelet;
use crate::root;

/// A rank: where it runs and the environment mpirun gives it.
struct Rank {
    host: String,
    env: BTreeMap<String, String>,
}

/// The options an mpirun command line gives, and the program.
struct Mpirun {
    np: u32,
    per_host: Option<u32>,
    forwarded: BTreeMap<String, String>,
}

fn parse_mpirun(
    argv: &[String],
    implementation: Implementation,
    env: &BTreeMap<String, String>,
) -> Result<Mpirun, String> {
    if argv.first().map(String::as_str) != Some("mpirun") {
        return Err(format!("the launcher runs {argv:?}, not mpirun"));
    }
    let mut run = Mpirun {
        np: 0,
        per_host: None,
        forwarded: BTreeMap::new(),
    };
    let mut i = 1;
    let value = |i: usize| {
        argv.get(i)
            .cloned()
            .ok_or(format!("{} takes a value", argv[i - 1]))
    };
    while i < argv.len() && argv[i].starts_with('-') {
        let option = argv[i].as_str();
        match (implementation, option) {
            (Implementation::OpenMpi, "-np" | "-n") | (_, "-n" | "-np") => {
                run.np = value(i + 1)?.parse().map_err(|e| format!("-np: {e}"))?;
                i += 2;
            }
            (Implementation::OpenMpi, "--bind-to" | "--map-by") => {
                if option == "--map-by" && value(i + 1)? != "slot" {
                    return Err(format!("--map-by {} is not simulated", argv[i + 1]));
                }
                i += 2;
            }
            (Implementation::OpenMpi, "-x") => {
                let spec = value(i + 1)?;
                match spec.split_once('=') {
                    Some((name, v)) => {
                        run.forwarded.insert(name.to_owned(), v.to_owned());
                    }
                    // An unset variable is not forwarded.
                    None => {
                        if let Some(v) = env.get(&spec) {
                            run.forwarded.insert(spec.clone(), v.clone());
                        }
                    }
                }
                i += 2;
            }
            (Implementation::Intel | Implementation::Mpich, "-ppn") => {
                run.per_host = Some(value(i + 1)?.parse().map_err(|e| format!("-ppn: {e}"))?);
                i += 2;
            }
            (Implementation::Intel | Implementation::Mpich, "-genv") => {
                run.forwarded.insert(value(i + 1)?, value(i + 2)?);
                i += 3;
            }
            _ => return Err(format!("mpirun option {option} is not simulated")),
        }
    }
    if i == argv.len() {
        return Err("mpirun is given no program".to_owned());
    }
    Ok(run)
}

/// The hosts and slots of a hostfile in the implementation's form.
fn hosts(hostfile: &str, implementation: Implementation) -> Vec<(String, u32)> {
    hostfile
        .lines()
        .filter_map(|line| {
            let (host, slots) = match implementation {
                Implementation::OpenMpi => line.split_once(" slots=")?,
                _ => line.rsplit_once(':')?,
            };
            Some((host.to_owned(), slots.parse().ok()?))
        })
        .collect()
}

/// The first container's env of a pod template, as (name, value) text pairs.
fn env_of(container: &Value) -> Vec<(String, String)> {
    container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let name = e["name"].as_str().unwrap_or_default().to_owned();
            (name, e["value"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_owned))
        .collect()
}

/// What the MPIJob becomes: its ranks, or everything that keeps it from one rank per
/// GPU with every worker variable.
fn simulate(job: &Value) -> Result<Vec<Rank>, Vec<String>> {
    let mut failures = Vec::new();
    let name = job["metadata"]["name"].as_str().unwrap_or_default();
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or("default");
    let spec = &job["spec"];
    // The defaults of default.go:60-73 for what a manifest leaves out.
    let implementation = spec["mpiImplementation"]
        .as_str()
        .map_or(Some(Implementation::OpenMpi), Implementation::from_name)
        .ok_or(vec![
            "mpiImplementation is none the operator knows".to_owned(),
        ])?;
    let slots = spec["slotsPerWorker"].as_u64().unwrap_or(1) as u32;
    let workers = spec["mpiReplicaSpecs"][mpi::WORKER]["replicas"]
        .as_u64()
        .unwrap_or(0) as u32;
    let launcher_as_worker = spec["runLauncherAsWorker"] == true;
    let worker = &spec["mpiReplicaSpecs"][mpi::WORKER]["template"]["spec"]["containers"][0];
    let launcher = &spec["mpiReplicaSpecs"][mpi::LAUNCHER]["template"]["spec"]["containers"][0];
    let gpus = worker["resources"]["limits"]["nvidia.com/gpu"]
        .as_str()
        .and_then(|g| g.parse::<u32>().ok())
        .unwrap_or(0);

    // The controller: the hostfile, and the launcher's env after the manifest's.
    let hostfile = mpi::hostfile(
        name,
        namespace,
        workers,
        slots,
        implementation,
        launcher_as_worker,
    );
    let listed = hosts(&hostfile, implementation);
    // The pods that run ranks: the launcher first when it is a worker too.
    let rank_pods: Vec<String> = launcher_as_worker
        .then(|| mpi::launcher_name(name))
        .into_iter()
        .chain((0..workers).map(|i| mpi::worker_name(name, i)))
        .collect();
    for pod in &rank_pods {
        let host = mpi::host(pod, name, namespace);
        if !listed.contains(&(host.clone(), gpus)) {
            failures.push(format!(
                "the hostfile lists {host} without {gpus} slot(s), one per GPU:\n{hostfile}"
            ));
        }
    }
    let mut env = env_of(launcher);
    env.extend(
        mpi::launcher_env(implementation, slots, launcher_as_worker)
            .into_iter()
            .map(|(n, v)| (n.to_owned(), v)),
    );
    // The image's ENV, which the launcher's mpirun also sees.
    env.extend([("PATH".to_owned(), "/usr/local/bin:/usr/bin".to_owned())]);
    let env = kubelet::environment(&env).map_err(|e| vec![e])?;
    let argv = kubelet::argv(
        &strings(&launcher["command"]),
        &strings(&launcher["args"]),
        &env,
    );
    let run = parse_mpirun(&argv, implementation, &env).map_err(|e| vec![e])?;

    let world = rank_pods.len() as u32 * gpus;
    if run.np != world {
        failures.push(format!(
            "mpirun starts {} ranks for {world} GPUs ({} pods × {gpus})",
            run.np,
            rank_pods.len()
        ));
    }
    // mpirun starts the launcher's own ranks as its children: they inherit its env.
    let launcher_host =
        launcher_as_worker.then(|| mpi::host(&mpi::launcher_name(name), name, namespace));
    // Ranks fill each host's slots (Hydra: -ppn per host) in hostfile order.
    let per_host = run.per_host.unwrap_or(u32::MAX);
    let mut ranks = Vec::new();
    'fill: for (host, host_slots) in &listed {
        for _ in 0..(*host_slots).min(per_host) {
            if ranks.len() as u32 == run.np {
                break 'fill;
            }
            let mut rank_env = run.forwarded.clone();
            if launcher_host.as_ref() == Some(host) {
                rank_env.extend(env.iter().map(|(n, v)| (n.clone(), v.clone())));
            }
            ranks.push(Rank {
                host: host.clone(),
                env: rank_env,
            });
        }
    }
    if (ranks.len() as u32) < run.np {
        failures.push(format!(
            "{} ranks, but the hostfile has slots for {}",
            run.np,
            ranks.len()
        ));
    }
    for (worker_var, value) in env_of(worker) {
        for (r, rank) in ranks.iter().enumerate() {
            if rank.env.get(&worker_var) != Some(&value) {
                failures.push(format!(
                    "rank {r} on {} gets {worker_var}={:?}; the workers' container has {value:?}",
                    rank.host,
                    rank.env.get(&worker_var)
                ));
                break;
            }
        }
    }
    if failures.is_empty() {
        Ok(ranks)
    } else {
        Err(failures)
    }
}

fn golden_mpijobs() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = walkdir::WalkDir::new(root().join("golden"))
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.file_name().is_some_and(|n| n == "mpijob.yaml"))
        .collect();
    found.sort();
    found
}

/// Issue 27's acceptance test: every golden MPIJob's hostfile holds every worker with
/// one slot per GPU, mpirun starts one rank per GPU, and every variable rdmagen put in
/// the workers' container (NCCL's among them) reaches every rank.
#[test]
fn every_golden_mpijob_runs_one_rank_per_gpu_with_every_worker_variable() {
    let goldens = golden_mpijobs();
    assert!(goldens.len() >= 3, "only {} golden MPIJobs", goldens.len());
    let mut report = Vec::new();
    for path in goldens {
        let rel = path.strip_prefix(root()).unwrap().display().to_string();
        let docs = rdmagen::verify::parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
        match simulate(&docs[0]) {
            Ok(ranks) => {
                let nccl = ranks[0]
                    .env
                    .keys()
                    .filter(|k| k.starts_with("NCCL_"))
                    .count();
                assert!(nccl > 0, "{rel}: no NCCL variable reaches the ranks");
            }
            Err(failures) => report.push(format!("{rel}:\n  - {}", failures.join("\n  - "))),
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n"));
}

/// The simulation finds what the test exists for: a variable set only on the workers,
/// an -np that is not the GPU count, and slots that are not the GPUs per worker.
#[test]
fn a_variable_mpirun_does_not_forward_and_a_wrong_world_are_failures() {
    let path = golden_mpijobs()
        .into_iter()
        .next()
        .expect("a golden MPIJob");
    let job = rdmagen::verify::parse(&std::fs::read_to_string(path).unwrap())
        .unwrap()
        .remove(0);
    assert!(simulate(&job).is_ok());

    let mut only_on_workers = job.clone();
    let worker = &mut only_on_workers["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
        [0];
    worker["env"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "NCCL_NET_GDR_LEVEL", "value": "PHB"}));
    let failures = simulate(&only_on_workers).err().unwrap();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].contains("gets NCCL_NET_GDR_LEVEL=None"),
        "{failures:?}"
    );

    // One slot per worker: the hostfile has as many slots as workers.
    let workers = job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"]
        .as_u64()
        .unwrap();
    let slots = job["spec"]["slotsPerWorker"].as_u64().unwrap();
    assert!(
        slots > 1,
        "the control needs a job of several GPUs per worker"
    );
    let mut one_slot = job.clone();
    one_slot["spec"]["slotsPerWorker"] = 1.into();
    let failures = simulate(&one_slot).err().unwrap();
    assert!(
        failures
            .iter()
            .any(|f| f.contains(&format!("without {slots} slot(s)"))),
        "{failures:?}"
    );
    assert!(
        failures
            .iter()
            .any(|f| f.contains(&format!("but the hostfile has slots for {workers}"))),
        "{failures:?}"
    );
}
