//! The mpi-operator v0.8.0 for real (issues 25 and 27): its controller runs against the
//! test API server, and every golden MPIJob is created. What the controller makes of
//! each must be what `rdmagen::kubeflow::mpi` transcribes, which the rank simulation of
//! `tests/operator_env/mpi.rs` and `render`'s checks rely on:
//! - the hostfile in the ConfigMap `<job>-config`, byte for byte (`mpi::hostfile`);
//! - one worker pod per replica, named `mpi::worker_name`, labelled with the job's name
//!   and role, its first container the template's with `mpi::worker_env` appended and,
//!   where the template gives no command, `mpi::WORKER_DEFAULT_COMMAND`;
//! - the launcher Job `mpi::launcher_name`, its first container the template's with
//!   `mpi::launcher_env` appended, in that order, and the hostfile mounted at
//!   `mpi::CONFIG_MOUNT_PATH`.
//!
//! Every other field of each template must arrive unchanged. No kubelet runs, so the
//! pods stay Pending; no Job controller runs, so the launcher is judged as its Job's
//! template, which is what its pod is made from. The controls: the same MPIJob with one
//! more worker gives a hostfile the golden one's transcription no longer predicts, and
//! a variable changed after rendering is told on the worker and the launcher.

use serde_json::{Value, json};

use rdmagen::kubeflow::mpi::{self, Implementation};

use super::binary;
use crate::cluster::{Cluster, Controller, Golden, golden_objects, lost, root};

/// The operator's health port: fixed (cmd/mpi-operator/app/server.go:65) and bound on
/// every address (:192-197), which `.ci/run`'s `unshare --net` keeps to loopback.
const HEALTH_PORT: u16 = 8080;

/// The namespace of the operator's leader-election lease (`--lock-namespace`,
/// options.go:77): the operator runs only once it holds the lease.
const LOCK_NAMESPACE: &str = "mpi-operator";

fn operator(cluster: &Cluster) -> Controller<'_> {
    cluster.namespaces([LOCK_NAMESPACE]);
    let mut controller = cluster.start(
        "mpi-operator-v0.8",
        &binary("RDMAGEN_MPI_OPERATOR"),
        &[
            format!("--lock-namespace={LOCK_NAMESPACE}"),
            "--kube-api-qps=50".to_owned(),
            "--kube-api-burst=100".to_owned(),
        ],
        &[],
    );
    controller.wait_ready("mpi-operator-v0.8", HEALTH_PORT, "/healthz");
    controller
}

/// `kubectl get <what> <name> -n <namespace> -o json`, waited for.
fn get(cluster: &Cluster, what: &str, name: &str, namespace: &str) -> Value {
    let mut found = Value::Null;
    let log = cluster.dir().join("mpi-operator-v0.8.log");
    let waited = format!(
        "{what} {namespace}/{name} from the mpi-operator (log: {})",
        log.display()
    );
    cluster.wait_for(&waited, || {
        let (ok, out, _) =
            cluster.kubectl(&["get", what, name, "-n", namespace, "-o", "json"], None);
        if ok {
            found = serde_json::from_str(&out).unwrap();
        }
        ok
    });
    found
}

fn env_pairs(container: &Value) -> Vec<(String, String)> {
    container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_owned(),
                v["value"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The first container of `template` as the controller predicts it: its env with
/// `added` appended (and, for a worker without a command, sshd's), then compared with
/// the real one: every other field unchanged, the env exactly, in order.
fn judge_container(
    what: &str,
    template: &Value,
    real: &Value,
    added: &[(&'static str, String)],
    default_command: bool,
) -> Vec<String> {
    let mut failures = Vec::new();
    let mut predicted = template["spec"]["containers"][0].clone();
    let mut env = env_pairs(&predicted);
    env.extend(added.iter().map(|(n, v)| ((*n).to_owned(), v.clone())));
    if default_command && predicted.get("command").is_none() && predicted.get("args").is_none() {
        predicted["command"] = json!(mpi::WORKER_DEFAULT_COMMAND);
    }
    // The env is judged whole below; the volume mounts may gain the controller's.
    let mounts = predicted
        .as_object_mut()
        .unwrap()
        .remove("volumeMounts")
        .unwrap_or(json!([]));
    predicted.as_object_mut().unwrap().remove("env");
    let real_container = &real["containers"][0];
    let mut changed = Vec::new();
    lost(&predicted, real_container, "/containers/0", &mut changed);
    failures.extend(changed.into_iter().map(|c| format!("{what}: {c}")));
    let real_env = env_pairs(real_container);
    if real_env != env {
        failures.push(format!(
            "{what}: env {real_env:?}, the transcription predicts {env:?}"
        ));
    }
    for mount in mounts.as_array().unwrap() {
        let kept = real_container["volumeMounts"]
            .as_array()
            .is_some_and(|m| m.contains(mount));
        if !kept {
            failures.push(format!("{what}: the mount {mount} is gone"));
        }
    }
    // The rest of the pod spec: every field the template gives, unchanged; its volumes
    // may gain the controller's.
    let mut spec = template["spec"].clone();
    let spec_map = spec.as_object_mut().unwrap();
    spec_map.remove("containers");
    let volumes = spec_map.remove("volumes").unwrap_or(json!([]));
    let mut changed = Vec::new();
    lost(&spec, real, "", &mut changed);
    failures.extend(changed.into_iter().map(|c| format!("{what}: {c}")));
    // Each by its name, holding every field the template gives: the API server adds
    // its defaults (a configMap volume's `defaultMode: 420`, core/v1 defaults.go).
    for volume in volumes.as_array().unwrap() {
        let name = &volume["name"];
        let Some(kept) = real["volumes"]
            .as_array()
            .and_then(|v| v.iter().find(|r| r["name"] == *name))
        else {
            failures.push(format!("{what}: the volume {volume} is gone"));
            continue;
        };
        let mut changed = Vec::new();
        lost(volume, kept, &format!("/volumes/{name}"), &mut changed);
        failures.extend(changed.into_iter().map(|c| format!("{what}: {c}")));
    }
    failures
}

/// What the controller made of `job`, against the transcription: the failures.
fn judge(cluster: &Cluster, job: &Value) -> Vec<String> {
    let name = job["metadata"]["name"].as_str().unwrap();
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or("default");
    let spec = &job["spec"];
    let implementation = spec["mpiImplementation"]
        .as_str()
        .map_or(Some(Implementation::OpenMpi), Implementation::from_name)
        .unwrap();
    let slots = spec["slotsPerWorker"]
        .as_u64()
        .map_or(mpi::DEFAULT_SLOTS_PER_WORKER, |s| s as u32);
    let workers = spec["mpiReplicaSpecs"][mpi::WORKER]["replicas"]
        .as_u64()
        .unwrap_or(1) as u32;
    let as_worker = spec["runLauncherAsWorker"] == true;
    let mut failures = Vec::new();

    let config = get(cluster, "configmap", &format!("{name}-config"), namespace);
    let want = mpi::hostfile(name, namespace, workers, slots, implementation, as_worker);
    if config["data"]["hostfile"] != want.as_str() {
        failures.push(format!(
            "hostfile {:?}, the transcription predicts {want:?}",
            config["data"]["hostfile"]
        ));
    }

    let selector = format!(
        "{}={name},{}={}",
        mpi::JOB_NAME_LABEL,
        mpi::JOB_ROLE_LABEL,
        mpi::ROLE_WORKER
    );
    let log = cluster.dir().join("mpi-operator-v0.8.log");
    let pods = cluster.wait_for_items(
        &format!(
            "the worker pods of {namespace}/{name} (log: {})",
            log.display()
        ),
        "pods",
        namespace,
        &selector,
        workers as usize,
    );
    let template = &spec["mpiReplicaSpecs"][mpi::WORKER]["template"];
    let mut names: Vec<&str> = pods
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    let mut predicted: Vec<String> = (0..workers).map(|i| mpi::worker_name(name, i)).collect();
    predicted.sort_unstable();
    if names != predicted {
        failures.push(format!("worker pods {names:?}, predicted {predicted:?}"));
    }
    for pod in &pods {
        let pod_name = pod["metadata"]["name"].as_str().unwrap();
        failures.extend(judge_container(
            pod_name,
            template,
            &pod["spec"],
            &mpi::worker_env(),
            true,
        ));
        let mut changed = Vec::new();
        lost(
            &template["metadata"],
            &pod["metadata"],
            "/metadata",
            &mut changed,
        );
        failures.extend(changed.into_iter().map(|c| format!("{pod_name}: {c}")));
    }

    let launcher = get(cluster, "job", &mpi::launcher_name(name), namespace);
    let pod = &launcher["spec"]["template"];
    let template = &spec["mpiReplicaSpecs"][mpi::LAUNCHER]["template"];
    let what = mpi::launcher_name(name);
    failures.extend(judge_container(
        &what,
        template,
        &pod["spec"],
        &mpi::launcher_env(implementation, slots, as_worker),
        false,
    ));
    let hostfile_mounted = pod["spec"]["containers"][0]["volumeMounts"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|m| m["mountPath"] == mpi::CONFIG_MOUNT_PATH);
    if !hostfile_mounted {
        failures.push(format!("{what}: no mount at {}", mpi::CONFIG_MOUNT_PATH));
    }
    failures
}

fn delete(cluster: &Cluster, name: &str, namespace: &str) {
    // No garbage collector runs: what the operator made goes by its labels and names.
    cluster.ok(
        &[
            "delete",
            "mpijob",
            name,
            "-n",
            namespace,
            "--ignore-not-found",
            "--wait=false",
        ],
        None,
    );
    let selector = format!("{}={name}", mpi::JOB_NAME_LABEL);
    cluster.ok(
        &[
            "delete",
            "pods",
            "-n",
            namespace,
            "-l",
            &selector,
            "--wait=false",
        ],
        None,
    );
    for (what, object) in [
        ("job", mpi::launcher_name(name)),
        ("configmap", format!("{name}-config")),
        ("secret", format!("{name}-ssh")),
        ("service", name.to_owned()),
    ] {
        cluster.ok(
            &[
                "delete",
                what,
                &object,
                "-n",
                namespace,
                "--ignore-not-found",
                "--wait=false",
            ],
            None,
        );
    }
}

#[test]
fn the_real_mpi_operator_makes_the_pods_and_hostfile_the_transcription_predicts() {
    let Some(cluster) = Cluster::get("the mpi-operator v0.8.0 against its transcription") else {
        return;
    };
    let objects = golden_objects();
    let jobs: Vec<&Golden> = objects.iter().filter(|o| o.kind() == "MPIJob").collect();
    cluster.install_crds(&[
        root().join("tests/upstream/mpi-operator/crds/v0.8.0/kubeflow.org_mpijobs.yaml")
    ]);
    cluster.namespaces(jobs.iter().map(|j| j.namespace().unwrap_or("default")));
    let operator = operator(&cluster);

    let mut failures = Vec::new();
    let mut pods = 0;
    for job in &jobs {
        let name = job.doc["metadata"]["name"].as_str().unwrap();
        let namespace = job.namespace().unwrap_or("default");
        delete(&cluster, name, namespace);
        cluster.ok(&["create", "-f", "-"], Some(&job.doc.to_string()));
        let found = judge(&cluster, &job.doc);
        failures.extend(found.into_iter().map(|f| format!("{}: {f}", job.file)));
        pods += job.doc["spec"]["mpiReplicaSpecs"][mpi::WORKER]["replicas"]
            .as_u64()
            .unwrap_or(1);
        delete(&cluster, name, namespace);
    }
    assert!(failures.is_empty(), "{failures:#?}");

    // The control: one more worker than the golden job, judged by the golden job's
    // transcription, must fail on the hostfile and the worker pods.
    let golden = &jobs[0].doc;
    let mut grown = golden.clone();
    let name = format!("{}-grown", golden["metadata"]["name"].as_str().unwrap());
    grown["metadata"]["name"] = json!(name);
    let workers = &mut grown["spec"]["mpiReplicaSpecs"][mpi::WORKER]["replicas"];
    *workers = json!(workers.as_u64().unwrap() + 1);
    let namespace = jobs[0].namespace().unwrap_or("default");
    delete(&cluster, &name, namespace);
    cluster.ok(&["create", "-f", "-"], Some(&grown.to_string()));
    let config = get(&cluster, "configmap", &format!("{name}-config"), namespace);
    let mut told = golden.clone();
    told["metadata"]["name"] = json!(name);
    let spec = &told["spec"];
    let predicted = mpi::hostfile(
        &name,
        namespace,
        spec["mpiReplicaSpecs"][mpi::WORKER]["replicas"]
            .as_u64()
            .unwrap() as u32,
        spec["slotsPerWorker"].as_u64().unwrap() as u32,
        Implementation::from_name(spec["mpiImplementation"].as_str().unwrap()).unwrap(),
        false,
    );
    assert_ne!(
        config["data"]["hostfile"],
        predicted.as_str(),
        "the control: a grown job's hostfile must differ from the golden job's prediction"
    );
    delete(&cluster, &name, namespace);

    // The control of the pod judgement: the golden job as created, judged as though its
    // workers' and launcher's first variable had another value, must fail on both.
    let name = format!("{}-told", golden["metadata"]["name"].as_str().unwrap());
    let mut created = golden.clone();
    created["metadata"]["name"] = json!(name);
    let mut told = created.clone();
    for role in [mpi::WORKER, mpi::LAUNCHER] {
        let env = &mut told["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["containers"][0]["env"]
            [0];
        env["value"] = json!("changed after rendering");
    }
    delete(&cluster, &name, namespace);
    cluster.ok(&["create", "-f", "-"], Some(&created.to_string()));
    let found = judge(&cluster, &told);
    for pod in [mpi::worker_name(&name, 0), mpi::launcher_name(&name)] {
        assert!(
            found.iter().any(|f| f.starts_with(&format!("{pod}: env "))),
            "the control: {pod}'s changed variable must be told: {found:#?}"
        );
    }
    delete(&cluster, &name, namespace);
    drop(operator);
    eprintln!(
        "{} MPIJobs, {pods} worker pods: the mpi-operator v0.8.0 made what the transcription predicts",
        jobs.len()
    );
    assert!(
        jobs.len() >= 4,
        "the golden files hold every example's MPIJob"
    );
}
