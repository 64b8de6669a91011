//! Trainer's MPI plugin (`mlPolicy.mpi`): what the controller adds to the pods of a
//! runtime's `launcher` and `node` replicated jobs, and where a TrainJob's `trainer`
//! fields go on such a runtime. Transcribed from kubeflow/trainer at v2.3.0 (T@v2.3.0)
//! and v2.1.0 (T@v2.1.0), which differ only in the ssh key files' modes:
//!
//! - both jobs get the ssh Secret volume `mpi-ssh-auth` (Secret `<trainjob>-mpi-ssh-auth`)
//!   and their `node` container a mount of it at `sshAuthMountPath`; the launcher also
//!   gets the hostfile ConfigMap `<trainjob>-mpi-hostfile` mounted at `/etc/mpi`, and its
//!   `node` container the four OpenMPI variables (T@v2.3.0
//!   pkg/runtime/framework/plugins/mpi/mpi.go:141-230; T@v2.1.0 same file :137-222).
//!   Only a container named `node` gets a mount or a variable (:189-192), whatever the job;
//! - `numProcPerNode` is the TrainJob's `trainer.numProcPerNode`, else the runtime's;
//!   a runtime's 1 becomes the GPUs per node when that is more (mpi.go:128-139), read
//!   from the TrainJob's resourcesPerNode or the first `node`/trainer job's `node`
//!   container (T@v2.3.0 pkg/runtime/runtime.go:254-298);
//! - `trainer.image`, `command` and `args` go to the job labelled
//!   `trainjob-ancestor-step: trainer` only; `trainer.env` and `resourcesPerNode` go to
//!   it and, with `runLauncherAsNode`, to `node` too (T@v2.3.0
//!   pkg/runtime/framework/plugins/jobset/builder.go:113-158 and
//!   pkg/runtime/core/trainingruntime.go:199-238; T@v2.1.0 builder.go:113-170). So with
//!   `runLauncherAsNode: false` nothing of `trainer` but the node count reaches the
//!   `node` job: its image, command and resources are the runtime's;
//! - the order of changes: patches, resources, then the plugin's volumes, mounts and
//!   variables (jobset.go:357-378), then the builder's image and env (jobset.go:420-422).
//!
//! The Secret's keys, the hostfile's lines and the Service are the controller's objects,
//! not the pods'; they are left out here.

use serde_json::{Value, json};

use super::effective::{
    apply_env, apply_image, apply_resources, items, node_container_mut, patched_pod, upsert,
    upsert_env,
};
use super::{ANCESTOR_LABEL, NODE, Release};
use crate::version::Version;

/// The launcher's replicated job (`constants.Launcher`, T@v2.3.0
/// pkg/constants/constants.go:90-92).
pub const LAUNCHER: &str = "launcher";
/// The ssh Secret's volume and the suffix of its name (constants.go:132-136).
pub const SSH_AUTH_VOLUME: &str = "mpi-ssh-auth";
pub const SSH_AUTH_SECRET_SUFFIX: &str = "-mpi-ssh-auth";
/// The hostfile ConfigMap's volume, the suffix of its name and where it is mounted
/// (constants.go:159-169).
pub const HOSTFILE_VOLUME: &str = "mpi-hostfile";
pub const HOSTFILE_CONFIG_MAP_SUFFIX: &str = "-mpi-hostfile";
pub const HOSTFILE_DIR: &str = "/etc/mpi";
pub const HOSTFILE: &str = "/etc/mpi/hostfile";
/// `sshAuthMountPath`'s default (T@v2.3.0 pkg/apis/trainer/v1alpha1/trainingruntime_types.go:292).
pub const DEFAULT_SSH_AUTH_MOUNT_PATH: &str = "/root/.ssh";
/// The one `mpiImplementation` the CRD's enum takes besides "" (trainingruntime_types.go:285;
/// v2.1.0 :256).
pub const OPENMPI: &str = "OpenMPI";
/// The ssh key files' modes from v2.3 (constants.go:150-157); v2.1 sets none.
const KEY_MODES: Version = Version::new(2, 3);

/// The variables the plugin sets on the launcher's `node` container for OpenMPI, in
/// its order (mpi.go:210-224, names and values at constants.go:171-187). A TrainJob
/// that sets one in `trainer.env` is rejected (`MPIReservedEnvNames`, constants.go:305-306;
/// mpi.go:95-107).
pub fn openmpi_env(slots: u32) -> [(&'static str, String); 4] {
    [
        ("OMPI_MCA_orte_default_hostfile", HOSTFILE.to_owned()),
        ("OMPI_MCA_orte_keep_fqdn_hostnames", "true".to_owned()),
        ("OMPI_MCA_orte_set_default_slots", slots.to_string()),
        (
            "OMPI_MCA_plm_rsh_args",
            "-o ConnectionAttempts=10".to_owned(),
        ),
    ]
}

/// The reserved names of [`openmpi_env`].
pub fn reserved_env() -> [&'static str; 4] {
    openmpi_env(1).map(|(name, _)| name)
}

/// A runtime's `mlPolicy.mpi`, with the CRD's defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub num_proc_per_node: u32,
    pub ssh_auth_mount_path: String,
    pub run_launcher_as_node: bool,
}

impl Policy {
    /// The runtime's policy, when it has `mlPolicy.mpi`.
    pub fn of(runtime: &Value) -> Option<Policy> {
        let mpi = runtime["spec"]["mlPolicy"].get("mpi")?.as_object()?;
        Some(Policy {
            num_proc_per_node: mpi
                .get("numProcPerNode")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .unwrap_or(1),
            ssh_auth_mount_path: mpi
                .get("sshAuthMountPath")
                .and_then(Value::as_str)
                .unwrap_or(DEFAULT_SSH_AUTH_MOUNT_PATH)
                .to_owned(),
            run_launcher_as_node: mpi
                .get("runLauncherAsNode")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }
}

/// The processes per node the plugin writes into the hostfile and
/// `OMPI_MCA_orte_set_default_slots` (mpi.go:128-139): the TrainJob's
/// `trainer.numProcPerNode`, else the runtime's, whose 1 becomes the GPUs per node.
pub fn slots(runtime: &Value, train_job_spec: &Value, policy: &Policy) -> u32 {
    let trainer = &train_job_spec["trainer"];
    // v2.1's field is an IntOrString read with IntValue(): a string that is no number is 0.
    match &trainer["numProcPerNode"] {
        Value::Number(n) => return n.as_u64().and_then(|n| u32::try_from(n).ok()).unwrap_or(0),
        Value::String(s) => return s.parse().unwrap_or(0),
        _ => {}
    }
    if policy.num_proc_per_node != 1 {
        return policy.num_proc_per_node;
    }
    let resources = match trainer.get("resourcesPerNode").filter(|r| !r.is_null()) {
        Some(asked) => asked.clone(),
        None => runtime_resources(runtime),
    };
    let gpus = |section: &str| {
        resources[section]
            .as_object()
            .and_then(|m| {
                m.iter()
                    .find(|(name, _)| name.to_ascii_lowercase().contains("gpu"))
            })
            .and_then(|(_, q)| match q {
                Value::Number(n) => n.as_u64(),
                Value::String(s) => s.parse().ok(),
                _ => None,
            })
            .unwrap_or(0)
    };
    let mut n = gpus("requests");
    if n == 0 {
        n = gpus("limits");
    }
    if n > 1 {
        u32::try_from(n).unwrap_or(1)
    } else {
        1
    }
}

/// The resources of the `node` container of the first job named `node` or labelled
/// the trainer's (runtime.go:254-276).
fn runtime_resources(runtime: &Value) -> Value {
    for (_, job) in items(&runtime["spec"]["template"]["spec"]["replicatedJobs"]) {
        let trainer = job["template"]["metadata"]["labels"][ANCESTOR_LABEL] == "trainer";
        if job["name"] != NODE && !trainer {
            continue;
        }
        let containers = &job["template"]["spec"]["template"]["spec"]["containers"];
        if let Some((_, c)) = items(containers).find(|(_, c)| c["name"] == NODE)
            && c["resources"].is_object()
        {
            return c["resources"].clone();
        }
    }
    Value::Null
}

/// The pod template each replicated job of an MPI `runtime` gets from a TrainJob named
/// `train_job_name` with `train_job_spec` on `release`, by job name in the runtime's
/// order. Empty when the runtime has no `mlPolicy.mpi`.
pub fn effective_pods(
    runtime: &Value,
    train_job_name: &str,
    train_job_spec: &Value,
    release: Release,
) -> Vec<(String, Value)> {
    let Some(policy) = Policy::of(runtime) else {
        return Vec::new();
    };
    let slots = slots(runtime, train_job_spec, &policy);
    let trainer = &train_job_spec["trainer"];
    let mut out = Vec::new();
    for (_, job) in items(&runtime["spec"]["template"]["spec"]["replicatedJobs"]) {
        let Some(name) = job["name"].as_str() else {
            continue;
        };
        let ancestor = job["template"]["metadata"]["labels"][ANCESTOR_LABEL] == "trainer";
        let as_node = policy.run_launcher_as_node && name == NODE;
        let template = &job["template"]["spec"]["template"];
        let mut pod = patched_pod(name, template, train_job_spec, release);
        if let Some(c) = node_container_mut(&mut pod)
            && (ancestor || as_node)
        {
            apply_resources(c, trainer, release);
        }
        plugin(&mut pod, name, train_job_name, &policy, slots, release);
        if let Some(c) = node_container_mut(&mut pod) {
            if ancestor {
                apply_image(c, trainer);
            }
            if ancestor || as_node {
                apply_env(c, trainer);
            }
        }
        out.push((name.to_owned(), pod));
    }
    out
}

/// What the plugin adds to the pod of job `job` (mpi.go:141-230).
fn plugin(
    pod: &mut Value,
    job: &str,
    train_job: &str,
    policy: &Policy,
    slots: u32,
    release: Release,
) {
    if job != NODE && job != LAUNCHER {
        return;
    }
    let modes = release.version >= KEY_MODES;
    let item = |key: &str, path: &str, mode: u32| {
        let mut item = json!({"key": key, "path": path});
        if modes {
            item["mode"] = json!(mode);
        }
        item
    };
    let mut secret = json!({
        "secretName": format!("{train_job}{SSH_AUTH_SECRET_SUFFIX}"),
        "items": [
            item("ssh-privatekey", "id_rsa", 0o640),
            item("ssh-publickey", "id_rsa.pub", 0o644),
            item("ssh-publickey", "authorized_keys", 0o644),
        ],
    });
    if modes {
        secret["defaultMode"] = json!(0o400);
    }
    let mut volumes = vec![json!({"name": SSH_AUTH_VOLUME, "secret": secret})];
    if job == LAUNCHER {
        volumes.push(json!({"name": HOSTFILE_VOLUME, "configMap": {
            "name": format!("{train_job}{HOSTFILE_CONFIG_MAP_SUFFIX}"),
            "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}],
        }}));
    }
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        upsert(spec, "volumes", &volumes, "name");
    }
    let Some(c) = node_container_mut(pod) else {
        return;
    };
    let mut mounts =
        vec![json!({"name": SSH_AUTH_VOLUME, "mountPath": policy.ssh_auth_mount_path})];
    if job == LAUNCHER {
        mounts.push(json!({"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_DIR}));
    }
    upsert(c, "volumeMounts", &mounts, "mountPath");
    if job == LAUNCHER {
        let env: Vec<Value> = openmpi_env(slots)
            .into_iter()
            .map(|(name, value)| json!({"name": name, "value": value}))
            .collect();
        upsert_env(c, &env);
    }
}

/// The pod of job `name` among [`effective_pods`]' answer.
pub fn pod_of<'a>(pods: &'a [(String, Value)], name: &str) -> Option<&'a Value> {
    pods.iter().find(|(n, _)| n == name).map(|(_, p)| p)
}

/// What a `node` pod runs so that mpirun can reach it: Trainer starts no sshd of its
/// own (its deepspeed-distributed runtime writes `/usr/sbin/sshd -De -f …`,
/// T@v2.3.0 manifests/base/runtimes/deepspeed_distributed.yaml), so the mpi-operator's
/// default for a worker without a command (`kubeflow::mpi::WORKER_DEFAULT_COMMAND`).
pub const SSHD_COMMAND: [&str; 2] = crate::kubeflow::mpi::WORKER_DEFAULT_COMMAND;

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime(num_proc: u32, as_node: bool) -> Value {
        let pod = |gpus: &str| {
            json!({"spec": {"containers": [{"name": "node",
                "env": [{"name": "NCCL_IB_HCA", "value": "=mlx5_1"}],
                "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}})
        };
        json!({"spec": {"mlPolicy": {"mpi": {"numProcPerNode": num_proc, "runLauncherAsNode": as_node}},
            "template": {"spec": {"replicatedJobs": [
                {"name": "node", "template": {"spec": {"template": pod("8")}}},
                {"name": "launcher", "template": {
                    "metadata": {"labels": {ANCESTOR_LABEL: "trainer"}},
                    "spec": {"template": pod("0")}}}]}}}})
    }

    fn env(pod: &Value) -> Vec<&str> {
        items(&pod["spec"]["containers"][0]["env"])
            .filter_map(|(_, e)| e["name"].as_str())
            .collect()
    }

    #[test]
    fn slots_are_the_train_jobs_then_the_runtimes_whose_1_is_the_gpus() {
        let policy = |n| Policy::of(&runtime(n, false)).unwrap();
        let none = json!({});
        assert_eq!(slots(&runtime(4, false), &none, &policy(4)), 4);
        // The first `node` job's GPUs (runtime.go:254-276).
        assert_eq!(slots(&runtime(1, false), &none, &policy(1)), 8);
        let asked = json!({"trainer": {"numProcPerNode": 2}});
        assert_eq!(slots(&runtime(4, false), &asked, &policy(4)), 2);
        let resources =
            json!({"trainer": {"resourcesPerNode": {"requests": {"nvidia.com/gpu": "2"}}}});
        assert_eq!(slots(&runtime(1, false), &resources, &policy(1)), 2);
    }

    #[test]
    fn the_launcher_gets_the_hostfile_the_variables_and_the_train_jobs_fields() {
        let spec = json!({"trainer": {"image": "img:1", "command": ["mpirun"],
            "env": [{"name": "X", "value": "1"}]}});
        let pods = effective_pods(
            &runtime(8, false),
            "job",
            &spec,
            Release::new(Version::new(2, 3)),
        );
        let (node, launcher) = (
            pod_of(&pods, NODE).unwrap(),
            pod_of(&pods, LAUNCHER).unwrap(),
        );
        assert_eq!(
            env(launcher),
            [
                "NCCL_IB_HCA",
                "OMPI_MCA_orte_default_hostfile",
                "OMPI_MCA_orte_keep_fqdn_hostnames",
                "OMPI_MCA_orte_set_default_slots",
                "OMPI_MCA_plm_rsh_args",
                "X"
            ]
        );
        assert_eq!(
            env(node),
            ["NCCL_IB_HCA"],
            "no env on `node` without runLauncherAsNode"
        );
        assert_eq!(launcher["spec"]["containers"][0]["image"], "img:1");
        assert!(node["spec"]["containers"][0].get("image").is_none());
        let volumes: Vec<&Value> = items(&launcher["spec"]["volumes"])
            .map(|(_, v)| &v["name"])
            .collect();
        assert_eq!(volumes, [&json!(SSH_AUTH_VOLUME), &json!(HOSTFILE_VOLUME)]);
        assert_eq!(
            node["spec"]["volumes"][0]["secret"]["secretName"],
            "job-mpi-ssh-auth"
        );
        assert_eq!(node["spec"]["volumes"][0]["secret"]["defaultMode"], 0o400);
        assert_eq!(
            node["spec"]["containers"][0]["volumeMounts"],
            json!([{"name": SSH_AUTH_VOLUME, "mountPath": DEFAULT_SSH_AUTH_MOUNT_PATH}])
        );
        // v2.1 writes no modes on the key files.
        let old = effective_pods(
            &runtime(8, false),
            "job",
            &spec,
            Release::new(Version::new(2, 1)),
        );
        let secret = &pod_of(&old, NODE).unwrap()["spec"]["volumes"][0]["secret"];
        assert!(secret.get("defaultMode").is_none() && secret["items"][0].get("mode").is_none());
        // With runLauncherAsNode the env reaches `node` too, the image does not.
        let pods = effective_pods(
            &runtime(8, true),
            "job",
            &spec,
            Release::new(Version::new(2, 3)),
        );
        let node = pod_of(&pods, NODE).unwrap();
        assert_eq!(env(node), ["NCCL_IB_HCA", "X"]);
        assert!(node["spec"]["containers"][0].get("image").is_none());
    }
}
