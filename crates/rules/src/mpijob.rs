//! Rules judged from an MPIJob (kubeflow/mpi-operator, `kubeflow.org/v2beta1`) alone:
//! the CRD, strictly; the name the controller builds its hostnames from; every pod
//! rule on each replica's pod, through the one extractor (`pod_templates::of_mpijob`);
//! and the launcher judged as a launcher: it runs mpirun, no rank, so GPUs or RDMA
//! devices there are held for nothing (RDG191). Then the job as mpirun will run it:
//! the hostfile's slots against the Worker's GPUs (RDG194), the ranks mpirun starts
//! against those slots (RDG195, RDG196), and each Worker variable a rank never gets
//! (RDG197). The launcher's command is read through `kubeflow::mpi::mpirun`, which
//! says `None` for a command line it cannot read with confidence: those rules then
//! say nothing.

use serde_json::Value;

use crate::diagnostics::escape;
use crate::diagnostics::message::{pointer_segment, quoted};
use crate::diagnostics::{Finding, Rule};
use crate::kubeflow::mpi::mpirun::{self, Mpirun};
use crate::kubeflow::mpi::{self, Implementation, LAUNCHER, WORKER};
use crate::kubernetes::job_name;
use crate::manifest::{ManifestFacts, is_attached_device, pod_template_rules, quantity, resources};
use crate::platform::is_rdma_resource;
use crate::pod_network;
use crate::shell;

use super::pod_templates::{PodTemplate, of_mpijob};

pub use crate::kubeflow::mpi::crd::is_mpijob;

/// Every problem of one MPIJob document, on the cluster `facts` describes, each at a
/// JSON Pointer into it.
pub fn check(doc: &Value, facts: &ManifestFacts) -> Vec<Finding> {
    let mut out = mpi::crd::check(doc);
    let name = doc["metadata"]["name"].as_str();
    let workers = doc["spec"]["mpiReplicaSpecs"][mpi::WORKER]["replicas"]
        .as_u64()
        .map_or(1, |n| u32::try_from(n).unwrap_or(u32::MAX));
    if let Some(name) = name
        && let Some(message) = job_name::problem(name, &mpi::name_replicas(workers))
    {
        out.push(Finding::at_pointer(
            Rule::InvalidJobName,
            message,
            "/metadata/name",
        ));
    }
    out.extend(crate::names::object_meta(&doc["metadata"], "/metadata"));
    // The launcher and the workers reach each other by `<pod>.<job>`: the headless
    // Service the controller makes (mpi_job_controller.go:1384-1412).
    let peer = format!(
        "{}.{}",
        mpi::worker_name(name.unwrap_or("<job>"), 0),
        name.unwrap_or("<job>")
    );
    let launcher_is_worker = doc["spec"]["runLauncherAsWorker"] == true;
    for t in of_mpijob(doc) {
        out.extend(pod_template_rules(&t, &peer, facts));
        if t.name == LAUNCHER && !launcher_is_worker {
            out.extend(launcher_accelerators(&t));
        }
    }
    out.extend(as_mpirun_runs_it(doc));
    out
}

/// The container the controller gives the ssh key and, without a command, the ssh
/// daemon (controller:1502-1505, 1764-1787): the first. mpirun's ranks run there.
fn first_container<'a>(t: &PodTemplate<'a>) -> Option<&'a Value> {
    t.spec()["containers"].get(0)
}

/// RDG194-RDG197: the slots, the count and the variables, as mpirun uses them.
fn as_mpirun_runs_it(doc: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let templates = of_mpijob(doc);
    let Some(worker) = templates.iter().find(|t| t.name == WORKER) else {
        return out;
    };
    let spec = &doc["spec"];
    let slots_field = &spec["slotsPerWorker"];
    let Some(slots) = (match slots_field {
        Value::Null => Some(mpi::DEFAULT_SLOTS_PER_WORKER),
        v => v.as_u64().and_then(|n| u32::try_from(n).ok()),
    }) else {
        // Not a count: the CRD check (RDG193) reports it.
        return out;
    };
    let launch = templates
        .iter()
        .find(|t| t.name == LAUNCHER)
        .and_then(|t| Launch::read(t, doc));
    if let Some(c) = first_container(worker) {
        out.extend(slots_against_gpus(slots, slots_field, c, launch.as_ref()));
    }
    let Some(launch) = launch else { return out };
    let replicas = worker.holder["replicas"].as_u64();
    if let Some(workers) = replicas.and_then(|n| u32::try_from(n).ok()) {
        let as_worker = u32::from(spec["runLauncherAsWorker"] == true);
        let world = u64::from(workers + as_worker) * u64::from(slots);
        out.extend(count_against_world(
            &launch,
            world,
            workers,
            slots,
            as_worker == 1,
        ));
    }
    if let Some(c) = first_container(worker) {
        out.extend(unforwarded(
            &launch,
            c,
            &format!("{}/containers/0", worker.spec_at()),
        ));
    }
    out
}

/// The launcher's mpirun as read from its first container (controller:1581 takes
/// the first), each word with the JSON Pointer of the field it came from.
struct Launch {
    run: Mpirun,
    words: Vec<String>,
    at: Vec<String>,
    /// The launcher container's env (a value, or `None` from a reference), or `None`
    /// where `envFrom` may add names lint cannot see.
    env: Option<Vec<(String, Option<String>)>>,
}

impl Launch {
    fn read(t: &PodTemplate<'_>, doc: &Value) -> Option<Launch> {
        let implementation = match doc["spec"]["mpiImplementation"].as_str() {
            None => Implementation::default(),
            Some(name) => Implementation::from_name(name)?,
        };
        let c = first_container(t)?;
        let at = format!("{}/containers/0", t.spec_at());
        let mut words = Vec::new();
        let mut pointers = Vec::new();
        for key in ["command", "args"] {
            for (i, w) in c[key].as_array().into_iter().flatten().enumerate() {
                words.push(w.as_str()?.to_owned());
                pointers.push(format!("{at}/{key}/{i}"));
            }
        }
        let argv: Vec<&str> = words.iter().map(String::as_str).collect();
        let (words, at) = match shell::script_index(&argv) {
            Some(s) => {
                let line = the_one_mpirun(argv[s])?;
                let at = vec![pointers[s].clone(); line.len()];
                (line, at)
            }
            None => (words, pointers),
        };
        let env: Vec<(String, Option<String>)> = c["env"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|e| {
                let name = e["name"].as_str()?.to_owned();
                Some((
                    name,
                    e["value"]
                        .as_str()
                        .map(str::to_owned)
                        .or_else(|| e.get("valueFrom").is_none().then(String::new)),
                ))
            })
            .collect();
        let env_list = env
            .iter()
            .find(|(n, _)| n == mpirun::OPEN_MPI_ENV_LIST_VARIABLE)
            .map(|(_, v)| v.as_deref());
        let argv: Vec<&str> = words.iter().map(String::as_str).collect();
        let run = mpirun::read(&argv, implementation, env_list)?;
        let env = c.get("envFrom").is_none().then_some(env);
        Some(Launch {
            run,
            words,
            at,
            env,
        })
    }

    fn program(&self) -> Vec<&str> {
        self.words[self.run.program..]
            .iter()
            .map(String::as_str)
            .collect()
    }
}

/// The words of the one mpirun command of a `sh -c` script, from mpirun on. A script
/// that runs mpirun twice (a probe, then the job), or names it where it is not the
/// command (`echo mpirun`), is not read: which run the rules should judge is a guess.
fn the_one_mpirun(script: &str) -> Option<Vec<String>> {
    let commands = shell::commands(script)?;
    let named = commands
        .iter()
        .flatten()
        .filter(|w| mpirun::is_mpirun(w))
        .count();
    let mut found = commands.into_iter().filter_map(|words| {
        // Assignments, `exec` and `time` before a command, and the keywords a command
        // follows in a compound command (`then mpirun ...`), are not the command.
        let start = words.iter().position(|w| {
            !(matches!(w.as_str(), "exec" | "time" | "then" | "do" | "else" | "!")
                || w.split_once('=').is_some_and(|(n, _)| {
                    !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                }))
        })?;
        mpirun::is_mpirun(&words[start]).then(|| words[start..].to_vec())
    });
    let line = found.next()?;
    (named == 1 && found.next().is_none()).then_some(line)
}

/// RDG194: each worker's slots against its first container's GPUs, times the GPUs a
/// rank drives where the launcher's program says (default one rank per GPU).
fn slots_against_gpus(
    slots: u32,
    field: &Value,
    c: &Value,
    launch: Option<&Launch>,
) -> Vec<Finding> {
    let gpu = resources(c)
        .filter(|(name, _)| name.to_ascii_lowercase().contains("gpu"))
        .filter_map(|(name, section)| Some((name, quantity(&c["resources"][section][name])?)))
        .max_by_key(|(_, n)| *n);
    // No GPU resource (a CPU job, or GPUs through a DRA claim): nothing to compare.
    let Some((resource, gpus)) = gpu.filter(|(_, n)| *n > 0) else {
        return Vec::new();
    };
    let per_rank = launch.and_then(|l| mpirun::gpus_per_rank(&l.program()));
    let used = i64::from(slots) * i64::from(per_rank.unwrap_or(1));
    if used == gpus {
        return Vec::new();
    }
    let slots_text = match field {
        Value::Null => format!(
            "slotsPerWorker is not set, so each worker has {} slot (the mpi-operator's default)",
            mpi::DEFAULT_SLOTS_PER_WORKER
        ),
        v => format!("slotsPerWorker is {}", quoted(v)),
    };
    let ranks = match per_rank {
        Some(k) if k > 1 => format!(" and each rank drives {k} GPUs"),
        _ => String::new(),
    };
    let effect = if used > gpus {
        "ranks share GPUs (NCCL refuses two ranks of one communicator on one GPU)"
    } else {
        "some GPUs stay idle"
    };
    let at = if field.is_null() {
        "/spec".to_owned()
    } else {
        "/spec/slotsPerWorker".to_owned()
    };
    vec![Finding::at_pointer(
        Rule::MpiSlotsGpus,
        format!(
            "{slots_text}{ranks}, but the Worker's container requests {gpus} {}: {effect}; set slotsPerWorker to the GPUs per worker for one rank per GPU",
            escape::shown(resource)
        ),
        at,
    )]
}

/// RDG195, RDG196: the ranks mpirun starts against the hostfile's slots. Without a
/// count Open MPI starts one rank per slot (orterun.1in:356-364); with a host list of
/// its own the slots are not the MPIJob's.
fn count_against_world(
    launch: &Launch,
    world: u64,
    workers: u32,
    slots: u32,
    as_worker: bool,
) -> Vec<Finding> {
    let run = &launch.run;
    let Some((i, Some(np))) = run.np else {
        return Vec::new();
    };
    if run.other_hosts || u64::from(np) == world {
        return Vec::new();
    }
    let hosts = if as_worker {
        format!("{workers} workers and the launcher")
    } else {
        format!("{workers} workers")
    };
    let world_text = format!("{hosts} × slotsPerWorker {slots} = {world} slots");
    let value = quoted(&Value::from(np));
    let (rule, message) = if u64::from(np) > world {
        let effect = if run.oversubscribe {
            "--oversubscribe starts the extra ranks on workers whose GPUs already have one"
        } else if run.implementation == Implementation::OpenMpi {
            "Open MPI refuses to start more processes than slots, and the launcher fails"
        } else {
            "the ranks beyond the slots have none of their own and share the workers' GPUs"
        };
        (
            Rule::MpiNpAboveWorld,
            format!("mpirun starts {value} ranks but the hostfile has {world_text}: {effect}"),
        )
    } else {
        (
            Rule::MpiNpBelowWorld,
            format!(
                "mpirun starts {value} ranks but the hostfile has {world_text}: {} of them stay empty, and the GPUs they stand for idle",
                world - u64::from(np)
            ),
        )
    };
    vec![Finding::at_pointer(rule, message, launch.at[i].clone())]
}

/// RDG197: each variable of a Worker's first container that configures a rank's
/// libraries and that mpirun does not forward. Only where the container runs an ssh
/// daemon (no command or args: the controller's; or a command that is sshd): a script
/// of its own may pass its env on some other way (a profile sshd's shell reads), which
/// lint cannot see.
fn unforwarded(launch: &Launch, c: &Value, at: &str) -> Vec<Finding> {
    let Some(launcher_env) = &launch.env else {
        return Vec::new();
    };
    let words = |key: &str| c[key].as_array().map(Vec::as_slice).unwrap_or_default();
    let sshd = match (words("command"), words("args")) {
        ([], []) => true,
        ([first, ..], _) => first
            .as_str()
            .is_some_and(|w| w.rsplit('/').next() == Some("sshd")),
        _ => false,
    };
    if !sshd {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (j, e) in c["env"].as_array().into_iter().flatten().enumerate() {
        let Some(name) = e["name"].as_str() else {
            continue;
        };
        if !mpirun::RANK_ENV_PREFIXES
            .iter()
            .any(|p| name.starts_with(p))
        {
            continue;
        }
        let in_launcher = launcher_env.iter().any(|(n, _)| n == name);
        if launch.run.forwards(name, in_launcher) {
            continue;
        }
        let shown = escape::shown(name);
        let fix = if launch.run.implementation == Implementation::OpenMpi {
            format!(
                "set it on the Launcher and add `-x {shown}` to mpirun (Open MPI passes only what -x names)"
            )
        } else if launch.run.passes_environment {
            format!(
                "set it on the Launcher, whose environment mpirun passes to every rank, or add `-genv {shown} VALUE`"
            )
        } else {
            format!("-genvnone passes no launcher variable; add `-genv {shown} VALUE`")
        };
        out.push(Finding::at_pointer(
            Rule::MpiEnvNotForwarded,
            format!(
                "{shown} is set on the Worker's container, but a rank is started by sshd, which does not pass the container's env on, and the launcher's mpirun does not forward it: {fix}"
            ),
            format!("{at}/env/{j}"),
        ));
    }
    out
}

/// RDG191: each GPU or RDMA device the launcher's containers request (IPC_LOCK
/// without a device is RDG061's, as on any pod).
fn launcher_accelerators(t: &PodTemplate<'_>) -> Vec<Finding> {
    let multus = pod_network::has_multus_networks(&t.template["metadata"]);
    let mut out = Vec::new();
    let containers = t.spec()["containers"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, c) in containers.iter().enumerate() {
        let at = format!("{}/containers/{i}", t.spec_at());
        let mut seen = Vec::new();
        for (name, section) in resources(c) {
            let gpu = name.to_ascii_lowercase().contains("gpu");
            let rdma = is_rdma_resource(name) || multus && is_attached_device(name);
            if !(gpu || rdma) || seen.contains(&name) {
                continue;
            }
            seen.push(name);
            let what = if gpu {
                "a GPU resource"
            } else {
                "an RDMA device"
            };
            out.push(Finding::at_pointer(
                Rule::MpiLauncherAccelerators,
                format!(
                    "the launcher requests {name}, {what}: it runs mpirun and no rank (runLauncherAsWorker is not true), and the mpi-operator hides the GPUs from it; request it on the Worker template"
                ),
                format!("{at}/resources/{section}/{}", pointer_segment(name)),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An MPIJob of 2 workers × 8 slots and GPUs whose launcher's first container runs
    /// `command`/`args` with `env`, the worker's container having `worker_env`.
    fn job(launcher: Value, worker_env: Value, implementation: &str) -> Value {
        let mut l = json!({"name": "launcher", "image": "i:1"});
        l.as_object_mut()
            .unwrap()
            .extend(launcher.as_object().unwrap().clone());
        json!({
            "apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
            "metadata": {"name": "j"},
            "spec": {
                "slotsPerWorker": 8,
                "mpiImplementation": implementation,
                "runPolicy": {"cleanPodPolicy": "Running"},
                "mpiReplicaSpecs": {
                    "Launcher": {"replicas": 1, "template": {"spec": {"containers": [l]}}},
                    "Worker": {"replicas": 2, "template": {"spec": {
                        "containers": [{
                            "name": "worker", "image": "i:1", "env": worker_env,
                            "resources": {"limits": {"nvidia.com/gpu": 8}},
                            "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
                        }],
                        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
                    }}},
                },
            },
        })
    }

    fn found(doc: &Value) -> Vec<(&'static str, String)> {
        check(doc, &ManifestFacts::default())
            .into_iter()
            .map(|f| {
                let at = f.pointer.clone().unwrap_or_default();
                (f.rule.info().id, at)
            })
            .collect()
    }

    const LAUNCHER: &str = "/spec/mpiReplicaSpecs/Launcher/template/spec/containers/0";
    const WORKER_ENV: &str = "/spec/mpiReplicaSpecs/Worker/template/spec/containers/0/env";

    fn script(text: &str) -> Value {
        json!({"command": ["/bin/bash", "-c"], "args": [text]})
    }

    #[test]
    fn the_count_is_read_in_every_form_and_pointed_at() {
        for (launcher, at) in [
            (
                json!({"command": ["mpirun", "-np", "8", "p"]}),
                format!("{LAUNCHER}/command/2"),
            ),
            (
                json!({"command": ["mpirun"], "args": ["--np=8", "p"]}),
                format!("{LAUNCHER}/args/0"),
            ),
            (
                json!({"command": ["mpirun", "-n", "8", "p"]}),
                format!("{LAUNCHER}/command/2"),
            ),
            (
                script("mpirun \\\n  -np 8 \\\n  p"),
                format!("{LAUNCHER}/args/0"),
            ),
            (
                script("set -e; exec mpirun -c '8' p"),
                format!("{LAUNCHER}/args/0"),
            ),
            (
                json!({"command": ["sh", "-ec", "NP=8 mpirun -np 8 p"]}),
                format!("{LAUNCHER}/command/2"),
            ),
        ] {
            let doc = job(launcher.clone(), json!([]), "OpenMPI");
            assert_eq!(found(&doc), [("RDG196", at)], "{launcher}");
        }
        // The count as Kubernetes or the shell fills it in, a probe mpirun before the
        // real one, a launcher script file, a host list of its own: not read.
        for launcher in [
            json!({"command": ["mpirun", "-np", "$(NP)", "p"]}),
            script("mpirun -np ${NP} p"),
            script("mpirun -np 1 hostname; mpirun -np 8 p"),
            json!({"command": ["bash", "/launch.sh"]}),
            json!({"command": ["mpirun", "-np", "8", "--hostfile", "/tmp/hosts", "p"]}),
            json!({"command": ["mpirun", "--frobnicate", "-np", "8", "p"]}),
        ] {
            let doc = job(launcher.clone(), json!([]), "OpenMPI");
            assert_eq!(found(&doc), [], "{launcher}");
        }
    }

    #[test]
    fn worker_variables_are_judged_by_what_mpirun_forwards() {
        let env = json!([
            {"name": "NCCL_IB_HCA", "value": "mlx5"},
            {"name": "UCX_TLS", "value": "rc"},
            {"name": "MY_SETTING", "value": "1"},
        ]);
        let at = |j: usize| format!("{WORKER_ENV}/{j}");
        // Open MPI: -x NAME, -x NAME=value, quoted in a script; the rest is reported.
        let doc = job(
            script("mpirun -np 16 -x \"NCCL_IB_HCA=mlx5\" p"),
            env.clone(),
            "OpenMPI",
        );
        assert_eq!(found(&doc), [("RDG197", at(1))]);
        let doc = job(
            json!({"command": ["mpirun", "-np", "16", "-x", "NCCL_IB_HCA", "-x", "UCX_TLS", "p"]}),
            env.clone(),
            "OpenMPI",
        );
        assert_eq!(found(&doc), []);
        // Open MPI does not pass the launcher's env on.
        let with_env = json!({
            "command": ["mpirun", "-np", "16", "p"],
            "env": [{"name": "NCCL_IB_HCA", "value": "mlx5"}, {"name": "UCX_TLS", "value": "rc"}],
        });
        let doc = job(with_env.clone(), env.clone(), "OpenMPI");
        assert_eq!(found(&doc), [("RDG197", at(0)), ("RDG197", at(1))]);
        // Intel MPI does; -genv names the rest.
        let with_env = json!({
            "command": ["mpirun", "-n", "16", "-genv", "UCX_TLS", "rc", "p"],
            "env": [{"name": "NCCL_IB_HCA", "value": "mlx5"}],
        });
        assert_eq!(found(&job(with_env, env.clone(), "Intel")), []);
        let bare = json!({"command": ["mpirun", "-n", "16", "p"]});
        assert_eq!(
            found(&job(bare, env.clone(), "MPICH")),
            [("RDG197", at(0)), ("RDG197", at(1))]
        );
        // envFrom on the launcher may hold the list: not judged.
        let from = json!({"command": ["mpirun", "-np", "16", "p"], "envFrom": [{"configMapRef": {"name": "nccl"}}]});
        assert_eq!(found(&job(from, env.clone(), "OpenMPI")), []);
        // A worker that runs a script of its own may pass its env on: not judged.
        let mut doc = job(
            json!({"command": ["mpirun", "-np", "16", "p"]}),
            env,
            "OpenMPI",
        );
        doc["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["command"] =
            json!(["bash", "/start-sshd.sh"]);
        assert_eq!(found(&doc), []);
    }

    #[test]
    fn slots_are_judged_against_the_gpus_a_rank_drives() {
        let mut doc = job(json!({"command": ["mpirun", "p"]}), json!([]), "OpenMPI");
        doc["spec"]["slotsPerWorker"] = json!(1);
        assert_eq!(found(&doc), [("RDG194", "/spec/slotsPerWorker".to_owned())]);
        // One rank per worker driving 8 GPUs: nccl-tests -g 8, torchrun.
        for launcher in [
            json!({"command": ["mpirun", "/opt/nccl_tests/build/all_reduce_perf", "-g", "8"]}),
            json!({"command": ["mpirun", "torchrun", "--nproc-per-node=8", "train.py"]}),
            script("mpirun bash -c \"source /env.sh; all_reduce_perf -g 8\""),
        ] {
            let mut doc = job(launcher.clone(), json!([]), "OpenMPI");
            doc["spec"]["slotsPerWorker"] = json!(1);
            assert_eq!(found(&doc), [], "{launcher}");
        }
    }
}
