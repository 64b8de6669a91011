//! What a training container's command starts against what the pod and the job
//! hold: one Python process on several GPUs (RDG250), a launcher's
//! `--nproc-per-node` against the container's GPUs (RDG255, RDG256), and its
//! `--nnodes` against a PyTorchJob's replicas (RDG254). The command is read by
//! `torchrun` (the upstream room for PyTorch's launcher), conservatively: what it
//! cannot read is not judged.

use serde_json::Value;

use crate::diagnostics::escape;
use crate::diagnostics::{Finding, Rule};
use crate::manifest::{quantity, resources};
use crate::torchrun::{self, Nnodes, NprocPerNode, Start};

/// The GPUs container `c` requests: the largest count of a resource whose name holds
/// `gpu` (`nvidia.com/gpu`, `amd.com/gpu`), in its limits or requests; 0 for none.
pub(crate) fn gpus(c: &Value) -> i64 {
    resources(c)
        .filter(|(name, _)| name.to_ascii_lowercase().contains("gpu"))
        .filter_map(|(name, section)| quantity(&c["resources"][section][name]))
        .max()
        .unwrap_or(0)
}

/// The words of `c`'s `command` then `args`, each with the JSON Pointer of its item;
/// `None` when an item is not a string (the API server refuses the pod then).
fn argv<'a>(c: &'a Value, at: &str) -> Option<Vec<(&'a str, String)>> {
    let mut words = Vec::new();
    for key in ["command", "args"] {
        for (i, w) in c[key].as_array().into_iter().flatten().enumerate() {
            words.push((w.as_str()?, format!("{at}/{key}/{i}")));
        }
    }
    Some(words)
}

/// What container `c` (at `at`) starts, and the pointer of the first word holding
/// each needle asked for (the whole command's first word when none does).
struct Command<'a> {
    words: Vec<(&'a str, String)>,
    start: Start,
}

impl<'a> Command<'a> {
    fn of(c: &'a Value, at: &str) -> Option<Command<'a>> {
        let words = argv(c, at)?;
        if words.is_empty() {
            return None;
        }
        let plain: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
        let start = torchrun::start(&plain);
        Some(Command { words, start })
    }

    fn pointer(&self, needles: &[&str]) -> String {
        self.words
            .iter()
            .find(|(w, _)| needles.iter().any(|n| w.contains(n)))
            .unwrap_or(&self.words[0])
            .1
            .clone()
    }
}

fn name(c: &Value) -> String {
    escape::shown(c["name"].as_str().unwrap_or("?")).into_owned()
}

/// RDG250, RDG255 and RDG256 for every container of `pod` (a pod spec at `base`).
pub(crate) fn pod(pod: &Value, base: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, c) in pod["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let gpus = gpus(c);
        if gpus < 1 {
            continue;
        }
        let at = format!("{base}/containers/{i}");
        let Some(command) = Command::of(c, &at) else {
            continue;
        };
        match &command.start {
            Start::SinglePython if gpus > 1 => out.push(Finding::at_pointer(
                Rule::SingleProcessManyGpus,
                format!(
                    "container `{}` requests {gpus} GPUs but starts one Python process with no launcher: it trains on one GPU and {} idle; start it with torchrun --nproc-per-node={gpus} (or gpu), or request 1 GPU",
                    name(c),
                    gpus - 1
                ),
                command.pointer(&["python"]),
            )),
            Start::Launcher(options) => {
                let Some((written, Some(NprocPerNode::Count(n)))) = &options.nproc_per_node
                else {
                    continue;
                };
                let n = i64::try_from(*n).unwrap_or(i64::MAX);
                let at = command.pointer(&["--nproc-per-node", "--nproc_per_node"]);
                let written = escape::shown(written);
                if n > gpus {
                    out.push(Finding::at_pointer(
                        Rule::LauncherNprocAboveGpus,
                        format!(
                            "--nproc-per-node {written} starts {n} processes in container `{}`, which requests {gpus} GPU(s): the processes past the last GPU fail or share one; make it {gpus}, or gpu",
                            name(c)
                        ),
                        at,
                    ));
                } else if n < gpus {
                    out.push(Finding::at_pointer(
                        Rule::LauncherNprocBelowGpus,
                        format!(
                            "--nproc-per-node {written} starts {n} process(es) in container `{}`, which requests {gpus} GPUs: {} idle; make it {gpus}, or gpu",
                            name(c),
                            gpus - n
                        ),
                        at,
                    ));
                }
            }
            _ => {}
        }
    }
    out
}

/// The pods a PyTorchJob's replicas make: Master's and the Workers' `replicas`, 1
/// where it is left out (the operator's default, pytorch_defaults.go); `None` when a
/// count is not a whole number.
fn pods(doc: &Value) -> Option<u64> {
    let mut total = 0u64;
    for replica in doc["spec"]["pytorchReplicaSpecs"].as_object()?.values() {
        total += match replica.get("replicas") {
            None | Some(Value::Null) => 1,
            Some(v) => v.as_u64()?,
        };
    }
    Some(total)
}

/// RDG254: the `pytorch` container of each replica of PyTorchJob `doc` against the
/// pods its replicas make.
pub(crate) fn nnodes(doc: &Value) -> Vec<Finding> {
    let Some(pods) = pods(doc) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for t in crate::pod_templates::of_pytorchjob(doc) {
        let base = t.spec_at();
        for (i, c) in t.spec()["containers"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            if c["name"] != "pytorch" {
                continue;
            }
            let Some(command) = Command::of(c, &format!("{base}/containers/{i}")) else {
                continue;
            };
            let Start::Launcher(options) = &command.start else {
                continue;
            };
            let Some((written, Some(nnodes))) = &options.nnodes else {
                continue;
            };
            if nnodes.admits(pods) {
                continue;
            }
            let asked = match nnodes {
                Nnodes::Fixed(n) => format!("waits for {n} node(s)"),
                Nnodes::Range(min, max) => format!("takes {min} to {max} nodes"),
            };
            out.push(Finding::at_pointer(
                Rule::LauncherNnodesReplicas,
                format!(
                    "--nnodes {} in replica `{}` {asked}, but the job's replicas make {pods} pod(s): the rendezvous never completes as written; leave --nnodes out (torchrun reads PET_NNODES) or make it {pods}",
                    escape::shown(written),
                    escape::shown(t.name)
                ),
                command.pointer(&["--nnodes"]),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod_with(command: Value, gpus: i64) -> Value {
        json!({"containers": [{"name": "pytorch", "image": "i:1", "command": command,
            "resources": {"limits": {"nvidia.com/gpu": gpus}}}]})
    }

    fn rules(found: &[Finding]) -> Vec<&'static str> {
        found.iter().map(|f| f.rule.info().id).collect()
    }

    #[test]
    fn processes_are_held_to_the_gpus() {
        let judge = |command: Value, gpus| pod(&pod_with(command, gpus), "/spec");
        assert_eq!(rules(&judge(json!(["python", "train.py"]), 8)), ["RDG250"]);
        assert_eq!(
            rules(&judge(json!(["python", "train.py"]), 1)),
            Vec::<&str>::new()
        );
        assert_eq!(
            rules(&judge(
                json!(["torchrun", "--nproc-per-node=16", "t.py"]),
                8
            )),
            ["RDG255"]
        );
        assert_eq!(
            rules(&judge(
                json!(["torchrun", "--nproc_per_node", "4", "t.py"]),
                8
            )),
            ["RDG256"]
        );
        for fine in [
            json!(["torchrun", "--nproc-per-node=8", "t.py"]),
            json!(["torchrun", "--nproc-per-node=gpu", "t.py"]),
            json!(["torchrun", "--nproc-per-node=$(N)", "t.py"]),
            json!(["bash", "-c", "for g in 0 1; do python t.py & done; wait"]),
        ] {
            assert_eq!(rules(&judge(fine.clone(), 8)), Vec::<&str>::new(), "{fine}");
        }
        let found = judge(json!(["torchrun", "--nproc-per-node=16", "t.py"]), 8);
        assert_eq!(
            found[0].pointer.as_deref(),
            Some("/spec/containers/0/command/1")
        );
    }

    #[test]
    fn nnodes_is_held_to_the_replicas() {
        let job = |nnodes: &str, workers: Value| {
            json!({"spec": {"pytorchReplicaSpecs": {
                "Master": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "pytorch", "command": ["torchrun", format!("--nnodes={nnodes}"), "t.py"]}]}}},
                "Worker": {"replicas": workers, "template": {"spec": {"containers": [
                    {"name": "pytorch", "command": ["torchrun", format!("--nnodes={nnodes}"), "t.py"]}]}}},
            }}})
        };
        assert_eq!(rules(&nnodes(&job("4", json!(3)))), Vec::<&str>::new());
        assert_eq!(rules(&nnodes(&job("2", json!(3)))), ["RDG254", "RDG254"]);
        assert_eq!(rules(&nnodes(&job("1:4", json!(3)))), Vec::<&str>::new());
        assert_eq!(rules(&nnodes(&job("1:3", json!(3)))), ["RDG254", "RDG254"]);
        assert_eq!(
            rules(&nnodes(&job("$(PET_NNODES)", json!(3)))),
            Vec::<&str>::new()
        );
        assert_eq!(rules(&nnodes(&job("2", json!("3")))), Vec::<&str>::new());
    }
}
