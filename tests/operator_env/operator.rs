//! The Kubeflow training-operator's defaulting and per-pod environment for a
//! PyTorchJob, transcribed for its two generations from github:kubeflow/training-operator:
//!
//! - before #1840: branch `v1.6-branch`, and commit `8a066f938` (CubeStudio's
//!   `v1-8a066f9`), whose `pkg/controller.v1/pytorch/{envvar,master}.go` are the same;
//! - 1.7 and later: branch `release-1.9`.
//!
//! Line numbers are those files' at those refs.

use serde_json::Value;

/// Which operator sets the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// ≤ 1.6 and 8a066f9: MASTER_ADDR, MASTER_PORT, WORLD_SIZE = pods, RANK = pod index.
    PodWorld,
    /// ≥ 1.7: the same plus PET_*; WORLD_SIZE = pods × integer nprocPerNode.
    Pet,
}

impl Generation {
    pub fn name(self) -> &'static str {
        match self {
            Generation::PodWorld => "operator < 1.7",
            Generation::Pet => "operator >= 1.7",
        }
    }
}

/// One pod the operator creates, as its training container will see it.
#[derive(Debug, Clone)]
pub struct Pod {
    /// `<job>-<replica type, lower case>-<index>`: the pod's name and its Service's
    /// (`replicaName`, envvar.go:106-109 v1.6 / :150-153 release-1.9; the Services are
    /// named the same way, pkg/controller.v1/common/service.go).
    pub name: String,
    /// The `pytorch` container's env: the manifest's entries, then the operator's.
    pub env: Vec<(String, String)>,
    pub command: Vec<String>,
    pub args: Vec<String>,
    /// The container's limit of the GPU resource (0 when absent).
    pub gpus: u32,
}

/// What the operator makes of a PyTorchJob manifest: its pods, or why it makes none.
pub struct Operated {
    pub pods: Vec<Pod>,
    /// Things a real cluster does to the manifest that the world does not show.
    pub notes: Vec<String>,
}

/// PyTorchJobDefaultContainerName, PyTorchJobDefaultPortName, PyTorchJobDefaultPort
/// (pkg/apis/kubeflow.org/v1/pytorch_types.go:24-30 v1.6).
const CONTAINER: &str = "pytorch";
const PORT_NAME: &str = "pytorchjob-port";
const DEFAULT_PORT: i64 = 23456;

pub fn operate(
    job: &Value,
    generation: Generation,
    gpu_resource: &str,
) -> Result<Operated, String> {
    let mut job = job.clone();
    let mut notes = Vec::new();
    if job["spec"].get("elasticPolicy").is_some() {
        return Err(
            "elasticPolicy: the elastic environment (elastic.go) is not transcribed".into(),
        );
    }
    match generation {
        Generation::PodWorld => {
            // The pre-1.7 CRD has no spec.nprocPerNode: the API server prunes it, or
            // rejects the job under strict field validation (kubectl's default since
            // 1.27). real-clusters.md §1.
            if let Some(spec) = job["spec"].as_object_mut()
                && spec.remove("nprocPerNode").is_some()
            {
                notes.push("spec.nprocPerNode is not in this operator's CRD: kubectl's strict field validation rejects the job (pruned without it)".to_owned());
            }
        }
        Generation::Pet => {
            // setDefaultNprocPerNode, pytorch_defaults.go:68-74 (DefaultNprocPerNode =
            // "auto", :23): unset becomes "auto" when there is no elasticPolicy.
            if job["spec"].get("nprocPerNode").is_none() {
                job["spec"]["nprocPerNode"] = "auto".into();
            }
        }
    }
    let specs = job["spec"]["pytorchReplicaSpecs"]
        .as_object()
        .ok_or("no spec.pytorchReplicaSpecs")?
        .clone();
    // setTypeNameToCamelCase (defaulting_utils.go:51-60) accepts any case.
    let spec_of = |kind: &str| {
        specs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(kind))
            .map(|(_, v)| v.clone())
    };
    for k in specs.keys() {
        if !k.eq_ignore_ascii_case("master") && !k.eq_ignore_ascii_case("worker") {
            return Err(format!("replica type {k}: not transcribed"));
        }
    }
    let master = spec_of("Master");
    let worker = spec_of("Worker");
    // setDefaultReplicas(spec, 1), pytorch_defaults.go:78 v1.6 / :87 release-1.9.
    let replicas = |spec: &Option<Value>| -> Result<u32, String> {
        match spec {
            None => Ok(0),
            Some(s) => match s.get("replicas") {
                None => Ok(1),
                Some(r) => r
                    .as_u64()
                    .and_then(|r| u32::try_from(r).ok())
                    .ok_or_else(|| format!("replicas {r} is not a count")),
            },
        }
    };
    // getTotalReplicas: the sum over every replica spec (envvar.go:98-104 v1.6,
    // :142-148 release-1.9).
    let total = replicas(&master)? + replicas(&worker)?;
    let name = job["metadata"]["name"]
        .as_str()
        .ok_or("no metadata.name")?
        .to_owned();
    let nproc = job["spec"]["nprocPerNode"].as_str().map(str::to_owned);
    if let Some(v) = job["spec"].get("nprocPerNode")
        && !v.is_string()
    {
        return Err(format!("spec.nprocPerNode {v} is not a string"));
    }

    // MasterEnvVarGenerator (master.go:30-51 v1.6, :33-62 release-1.9): only when a Master
    // spec exists; the port is the Master's `pytorch` container port named
    // pytorchjob-port (getPortFromPyTorchJob, envvar.go:111-124 / :155-168), which
    // defaulting adds as 23456 when missing (setPytorchDefaultPort, pytorch_defaults.go:29-34
    // v1.6 / :31-36; on the `pytorch` container, else the first, defaulting_utils.go:11-35).
    // No such port on a container named `pytorch`: "port not found", and no pod is made.
    let master_env = match &master {
        None => None,
        Some(m) => {
            let port = master_port(m)?;
            let addr = format!("{name}-master-0");
            Some(match generation {
                Generation::PodWorld => vec![
                    ("MASTER_PORT".to_owned(), port.to_string()),
                    ("MASTER_ADDR".to_owned(), addr),
                ],
                Generation::Pet => vec![
                    ("MASTER_PORT".to_owned(), port.to_string()),
                    ("PET_MASTER_PORT".to_owned(), port.to_string()),
                    ("MASTER_ADDR".to_owned(), addr.clone()),
                    ("PET_MASTER_ADDR".to_owned(), addr),
                ],
            })
        }
    };

    let mut pods = Vec::new();
    for (kind, spec) in [("master", &master), ("worker", &worker)] {
        let Some(spec) = spec else { continue };
        for index in 0..replicas(&Some(spec.clone()))? {
            let container = spec["template"]["spec"]["containers"]
                .as_array()
                .and_then(|cs| cs.iter().find(|c| c["name"] == CONTAINER))
                .ok_or_else(|| format!("{kind}: no container named {CONTAINER}"))?;
            let mut env = user_env(container)?;
            env.extend(set_pod_env(
                generation,
                kind,
                index,
                total,
                nproc.as_deref(),
                master_env.as_deref(),
            ));
            pods.push(Pod {
                name: format!("{name}-{kind}-{index}"),
                env,
                command: strings(&container["command"])?,
                args: strings(&container["args"])?,
                gpus: gpus(container, gpu_resource)?,
            });
        }
    }
    Ok(Operated { pods, notes })
}

/// setPodEnv for one pod (`rtype` lower case, `index` its index within the type).
fn set_pod_env(
    generation: Generation,
    rtype: &str,
    index: u32,
    total: u32,
    nproc_per_node: Option<&str>,
    master_env: Option<&[(String, String)]>,
) -> Vec<(String, String)> {
    let mut env = Vec::new();
    let var = |n: &str, v: String| (n.to_owned(), v);
    match generation {
        // v1.6-branch envvar.go:33-96 (8a066f938 the same lines).
        Generation::PodWorld => {
            env.push(var("PYTHONUNBUFFERED", "0".into())); // :46-50
            if let Some(master) = master_env {
                // :53 if the Master spec is not nil
                env.extend_from_slice(master); // :54-60
                let rank = if rtype == "worker" { index + 1 } else { index }; // :63-69
                env.push(var("WORLD_SIZE", total.to_string())); // :71-76
                env.push(var("RANK", rank.to_string())); // :77-80
            }
            // :84-92: elasticPolicy, refused in `operate`.
        }
        // release-1.9 envvar.go:43-127.
        Generation::Pet => {
            env.push(var("PYTHONUNBUFFERED", "1".into())); // :56-60
            let world_size = total * nproc_per_node_int(nproc_per_node); // :62-64
            if let Some(master) = master_env {
                // :67
                env.extend_from_slice(master); // :68-74
                let rank = if rtype == "worker" { index + 1 } else { index }; // :77-83
                env.push(var("WORLD_SIZE", world_size.to_string())); // :85-88
                env.push(var("RANK", rank.to_string())); // :89-92
                env.push(var("PET_NODE_RANK", rank.to_string())); // :93-96
            }
            if let Some(n) = nproc_per_node {
                env.push(var("PET_NPROC_PER_NODE", n.to_owned())); // :99-104
            }
            // :109-123: without an elasticPolicy, PET_NNODES = total replicas.
            env.push(var("PET_NNODES", total.to_string()));
        }
    }
    env
}

/// getNprocPerNodeInt, release-1.9 envvar.go:129-140: the integer, or 1 when unset or
/// not an integer ("auto", "gpu", ...): then "world size env will not be used".
fn nproc_per_node_int(nproc_per_node: Option<&str>) -> u32 {
    nproc_per_node
        .and_then(|n| n.parse::<i64>().ok())
        .map_or(1, |n| u32::try_from(n).unwrap_or(0))
}

fn master_port(master: &Value) -> Result<i64, String> {
    let containers = master["template"]["spec"]["containers"]
        .as_array()
        .ok_or("Master: no containers")?;
    // Defaulting adds the port to the `pytorch` container, else to the first one.
    let defaulted = containers
        .iter()
        .position(|c| c["name"] == CONTAINER)
        .unwrap_or(0);
    for (i, c) in containers.iter().enumerate() {
        if c["name"] != CONTAINER {
            continue;
        }
        let named = c["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == PORT_NAME);
        match named {
            Some(p) => {
                return p["containerPort"]
                    .as_i64()
                    .ok_or_else(|| format!("{PORT_NAME} has no containerPort"));
            }
            None if i == defaulted => return Ok(DEFAULT_PORT),
            None => {}
        }
    }
    Err("port not found: the operator creates no pod (getPortFromPyTorchJob)".to_owned())
}

fn user_env(container: &Value) -> Result<Vec<(String, String)>, String> {
    let mut env = Vec::new();
    for e in container["env"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().ok_or("env entry without a name")?;
        match e.get("value") {
            Some(v) => env.push((name.to_owned(), v.as_str().unwrap_or_default().to_owned())),
            // The kubelet resolves valueFrom (a Secret key, a pod field) when the pod
            // starts; its value cannot matter to the world unless the launch reads it.
            None if e.get("valueFrom").is_some() => {
                let launch = ["MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK"];
                if launch.contains(&name) || name.starts_with("PET_") {
                    return Err(format!(
                        "env {name}: valueFrom on a launch variable is not transcribed"
                    ));
                }
                env.push((name.to_owned(), format!("<valueFrom of {name}>")));
            }
            None => env.push((name.to_owned(), String::new())),
        }
    }
    Ok(env)
}

fn strings(v: &Value) -> Result<Vec<String>, String> {
    match v {
        Value::Null => Ok(Vec::new()),
        Value::Array(items) => items
            .iter()
            .map(|s| {
                s.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| format!("{s} is not a string"))
            })
            .collect(),
        other => Err(format!("{other} is not a list")),
    }
}

/// The container's GPU limit (extended resources have request == limit).
fn gpus(container: &Value, resource: &str) -> Result<u32, String> {
    let limits = &container["resources"]["limits"];
    match limits.get(resource) {
        None => Ok(0),
        Some(v) => v
            .as_str()
            .map(str::to_owned)
            .or_else(|| v.as_u64().map(|n| n.to_string()))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{resource}: {v} is not a count")),
    }
}
