//! The transcription ([`crate::operator`]) against the operator itself (issue 25): the
//! Kubeflow training operator v1.9.4, built from its module by `.ci/controlplane/build`,
//! runs against the test API server with its validating webhook, and every golden
//! PyTorchJob written for 1.9 (or for no named release) is created for real. The pods
//! it makes are read back: their names and the `pytorch` container's command, args and
//! env must be what the transcription says, and every field of the manifest's pod
//! template must reach the pod unchanged.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::cluster::{Cluster, Controller, Golden, golden_objects, lost, root};
use crate::operator::{self, Generation};

/// The operator's webhook and health ports, on 127.0.0.1 (beside the API server's).
const WEBHOOK_PORT: u16 = 26445;
const HEALTH_PORT: u16 = 26446;

/// certDir, pkg/cert/cert.go (v1.9.4): fixed, where the Deployment mounts the Secret.
const CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";

/// webhookConfigurationName, cmd/training-operator.v1/main.go:57 (v1.9.4): the
/// configuration its certificate rotator keeps the CA bundle of.
const WEBHOOK_CONFIGURATION: &str = "validator.training-operator.kubeflow.org";

/// Starts the operator as its Deployment would (manifests/base/deployment.yaml: the
/// `kubeflow` namespace, MY_POD_NAMESPACE), for PyTorchJobs only, with the webhook
/// pair `up` made in its Secret, and registers its PyTorchJob webhook (the entry of
/// manifests/base/webhook/manifests.yaml, v1.9.4) at 127.0.0.1.
fn start<'a>(cluster: &'a Cluster, gang: Option<&str>) -> Controller<'a> {
    let dir = cluster.dir();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    cluster.namespaces(["kubeflow"]);
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "training-operator-webhook-cert", "namespace": "kubeflow"},
        "stringData": {
            "ca.crt": read("webhook-ca.crt"), "ca.key": read("webhook-ca.key"),
            "tls.crt": read("webhook.crt"), "tls.key": read("webhook.key"),
        },
    });
    cluster.ok(
        &["apply", "--server-side", "--force-conflicts", "-f", "-"],
        Some(&secret.to_string()),
    );
    // The Deployment mounts that Secret at the rotator's CertDir (deployment.yaml:41,
    // pkg/cert/cert.go certDir); the rotator waits for the files (ensureCertsMounted).
    cluster.webhook_certificates(Path::new(CERT_DIR));
    let binary = std::env::var_os("RDMAGEN_TRAINING_OPERATOR")
        .expect("RDMAGEN_TRAINING_OPERATOR names the operator `up` built");
    let mut operator = cluster.start(
        "training-operator",
        Path::new(&binary),
        &[
            "--enable-scheme=pytorchjob".to_owned(),
            format!("--gang-scheduler-name={}", gang.unwrap_or_default()),
            "--metrics-bind-address=0".to_owned(),
            format!("--health-probe-bind-address=127.0.0.1:{HEALTH_PORT}"),
            format!("--webhook-server-port={WEBHOOK_PORT}"),
        ],
        &[("MY_POD_NAMESPACE", "kubeflow")],
    );
    // No caBundle: the rotator writes it, as it does in a cluster.
    operator.register(&json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": WEBHOOK_CONFIGURATION},
        "webhooks": [{
            "name": "validator.pytorchjob.training-operator.kubeflow.org",
            "admissionReviewVersions": ["v1"],
            "clientConfig": {
                "url": format!("https://127.0.0.1:{WEBHOOK_PORT}/validate-kubeflow-org-v1-pytorchjob"),
            },
            "failurePolicy": "Fail",
            "sideEffects": "None",
            "rules": [{
                "apiGroups": ["kubeflow.org"], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["pytorchjobs"],
            }],
        }],
    }));
    // Ready once the certificates are mounted and the rotator has injected the CA
    // bundle (setupProbeEndpoints waits for certsReady, which ensureReady closes).
    operator.wait_ready("training-operator", HEALTH_PORT, "/readyz");
    operator
}

/// The golden PyTorchJobs the 1.9 operator runs: written for 1.9 or for no release.
fn written_for_1_9(object: &Golden) -> bool {
    object.kind() == "PyTorchJob"
        && object
            .annotation("rdmagen.io/operator")
            .is_none_or(|v| v == "1.9")
}

/// An env list as the transcription writes it: a `valueFrom` as a placeholder.
fn env_of(container: &Value) -> Vec<(String, String)> {
    container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let name = e["name"].as_str().unwrap().to_owned();
            let value = match e.get("valueFrom") {
                Some(_) => format!("<valueFrom of {name}>"),
                None => e["value"].as_str().unwrap_or_default().to_owned(),
            };
            (name, value)
        })
        .collect()
}

/// `spec` without its containers' env, which the operator extends (and the
/// transcription judges).
fn without_env(spec: &Value) -> Value {
    let mut spec = spec.clone();
    for list in ["containers", "initContainers"] {
        if let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) {
            for c in containers {
                c.as_object_mut().unwrap().remove("env");
            }
        }
    }
    spec
}

/// The init container the operator appends to each Worker of a job with a Master
/// (setInitContainer, pkg/controller.v1/pytorch/initcontainer.go:105-137, v1.9.4): it
/// waits for the master's name to resolve. Removed from `pod` (and checked) so that
/// the rest compares with the template; rdmagen does not write it.
fn take_operator_init_container(pod: &mut Value, role: &str, has_master: bool) {
    let inits = pod["spec"]
        .get_mut("initContainers")
        .and_then(Value::as_array_mut);
    let added = match inits {
        Some(inits) if inits.last().is_some_and(|c| c["name"] == "init-pytorch") => {
            inits.pop();
            if inits.is_empty() {
                pod["spec"]
                    .as_object_mut()
                    .unwrap()
                    .remove("initContainers");
            }
            true
        }
        _ => false,
    };
    assert_eq!(
        added,
        role == "worker" && has_master,
        "init-pytorch on a {role} (job with a Master: {has_master})"
    );
}

/// Creates `job` on the cluster, admitting it as Kueue would when it is suspended.
fn create_admitted(cluster: &Cluster, job: &Value) {
    let name = job["metadata"]["name"].as_str().unwrap();
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or("default");
    cluster.ok(&["create", "-f", "-"], Some(&job.to_string()));
    if job["spec"]["runPolicy"]["suspend"] == true {
        // What Kueue does when it admits the job.
        cluster.ok(
            &[
                "patch",
                "pytorchjob",
                name,
                "-n",
                namespace,
                "--type=merge",
                "-p",
                r#"{"spec":{"runPolicy":{"suspend":false}}}"#,
            ],
            None,
        );
    }
}

/// Creates `job` on the cluster (admitting it as Kueue would when it is suspended)
/// and returns the `count` pods the operator makes of it.
fn run(cluster: &Cluster, job: &Value, count: usize) -> Vec<Value> {
    create_admitted(cluster, job);
    let name = job["metadata"]["name"].as_str().unwrap();
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or("default");
    let selector = format!("training.kubeflow.org/job-name={name}");
    let log = cluster.dir().join("training-operator.log");
    cluster.wait_for_items(
        &format!(
            "the pods of {namespace}/{name} (the operator's log: {})",
            log.display()
        ),
        "pods",
        namespace,
        &selector,
        count,
    )
}

/// Deletes `job` and, as no garbage collector runs (no controller manager), what it
/// owned, before a job of the same name in another example comes.
fn remove(cluster: &Cluster, job: &Value) {
    let name = job["metadata"]["name"].as_str().unwrap();
    let namespace = job["metadata"]["namespace"].as_str().unwrap_or("default");
    let selector = format!("training.kubeflow.org/job-name={name}");
    cluster.ok(&["delete", "pytorchjob", name, "-n", namespace], None);
    cluster.ok(
        &["delete", "pods,services", "-n", namespace, "-l", &selector],
        None,
    );
}

/// Real pods as the transcription's [`operator::Pod`]s: the `pytorch` container's
/// env, command, args and GPU limit.
fn as_transcribed(pods: &[Value], gpu: &str) -> Vec<operator::Pod> {
    pods.iter()
        .map(|pod| {
            let container = pytorch_container(pod);
            let strings = |v: &Value| -> Vec<String> {
                v.as_array()
                    .into_iter()
                    .flatten()
                    .map(|s| s.as_str().unwrap().to_owned())
                    .collect()
            };
            let gpus = &container["resources"]["limits"][gpu];
            operator::Pod {
                name: pod["metadata"]["name"].as_str().unwrap().to_owned(),
                env: env_of(container),
                command: strings(&container["command"]),
                args: strings(&container["args"]),
                gpus: gpus.as_str().map_or(0, |g| g.parse().unwrap()),
            }
        })
        .collect()
}

fn pytorch_container(pod: &Value) -> &Value {
    pod["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "pytorch")
        .expect("a pytorch container")
}

/// Creates the PriorityClasses `jobs` name: the cluster's own objects, which the
/// Priority admission plugin requires of a pod that names one.
fn priority_classes(cluster: &Cluster, jobs: &[Golden]) {
    let classes: BTreeSet<&str> = jobs
        .iter()
        .flat_map(|job| {
            job.doc["spec"]["pytorchReplicaSpecs"]
                .as_object()
                .unwrap()
                .values()
        })
        .filter_map(|spec| spec["template"]["spec"]["priorityClassName"].as_str())
        .collect();
    for class in classes {
        let doc = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": class}, "value": 1000});
        cluster.ok(
            &["apply", "--server-side", "-f", "-"],
            Some(&doc.to_string()),
        );
    }
}

/// The golden PyTorchJobs the 1.9 operator runs, their namespaces created.
fn jobs_for_1_9(cluster: &Cluster) -> Vec<Golden> {
    let jobs: Vec<Golden> = golden_objects()
        .into_iter()
        .filter(written_for_1_9)
        .collect();
    let namespaces: BTreeSet<&str> = jobs.iter().filter_map(Golden::namespace).collect();
    cluster.namespaces(namespaces);
    priority_classes(cluster, &jobs);
    jobs
}

/// Issue 26 against the operator itself: with Volcano gang scheduling on, the PodGroup
/// the real operator makes of each golden PyTorchJob has the members, queue and
/// priority class the transcription ([`crate::gang::pod_group`]) says, which is what
/// Volcano orders and preempts jobs by.
#[test]
fn the_real_operator_makes_the_podgroups_the_transcription_predicts() {
    let Some(cluster) = Cluster::get("the operator's PodGroups against the transcription") else {
        return;
    };
    cluster.install_crds(&[
        root().join("tests/upstream/crds/pytorchjob-v1.9.0.yaml"),
        root().join("tests/upstream/crds/volcano-podgroups-v1.15.1.yaml"),
    ]);
    let jobs = jobs_for_1_9(&cluster);
    let _operator = start(&cluster, Some("volcano"));
    let mut priorities = BTreeSet::new();
    for job in &jobs {
        create_admitted(&cluster, &job.doc);
        let name = job.doc["metadata"]["name"].as_str().unwrap();
        let namespace = job.namespace().unwrap_or("default");
        // The operator makes the PodGroup first and the pods only once Volcano has
        // taken it up (no Volcano runs here), so the PodGroup is what there is to read.
        let get = [
            "get",
            "podgroups.scheduling.volcano.sh",
            name,
            "-n",
            namespace,
            "-o",
            "json",
        ];
        cluster.wait_for(&format!("the PodGroup of {}", job.id()), || {
            cluster.kubectl(&get, None).0
        });
        let group: Value = serde_json::from_str(&cluster.ok(&get, None)).unwrap();
        let want = crate::gang::pod_group(&job.doc);
        let spec = &group["spec"];
        assert_eq!(
            spec["minMember"].as_u64(),
            Some(want.min_member),
            "{}",
            job.file
        );
        assert_eq!(
            spec["queue"].as_str(),
            Some(want.queue.as_str()),
            "{}",
            job.file
        );
        assert_eq!(
            spec["priorityClassName"].as_str().unwrap_or_default(),
            want.priority_class_name,
            "{}",
            job.file
        );
        priorities.insert(want.priority_class_name);
        remove(&cluster, &job.doc);
        cluster.ok(
            &[
                "delete",
                "podgroups.scheduling.volcano.sh",
                name,
                "-n",
                namespace,
            ],
            None,
        );
    }
    // pool-defaults' two priority classes, and jobs without one.
    assert!(priorities.len() >= 3, "{priorities:?}");
}

#[test]
fn the_real_operator_makes_the_pods_the_transcription_predicts() {
    let Some(cluster) = Cluster::get("the training operator against the transcription") else {
        return;
    };
    cluster.install_crds(&[root().join("tests/upstream/crds/pytorchjob-v1.9.0.yaml")]);
    let jobs = jobs_for_1_9(&cluster);
    priority_classes(&cluster, &jobs);
    let _operator = start(&cluster, None);

    let mut pods_compared = 0;
    let mut worlds = 0;
    for job in &jobs {
        let target = crate::golden_target(&job.file, &job.doc);
        let gpu = target
            .as_ref()
            .map_or("nvidia.com/gpu", |t| t.gpu_resource.as_str());
        let predicted = operator::operate(&job.doc, Generation::Pet, gpu)
            .unwrap_or_else(|e| panic!("{}: the transcription refuses it: {e}", job.file));
        let mut pods = run(&cluster, &job.doc, predicted.pods.len());
        // The real pods, run by the kubelet and launcher transcriptions, form one world
        // that uses every GPU (main.rs's check, on what the operator really made).
        if target.is_some() {
            let world = crate::world_of(&as_transcribed(&pods, gpu), Vec::new());
            assert!(
                world.failures.is_empty(),
                "{} ({}): {:#?}",
                job.file,
                job.id(),
                world.failures
            );
            worlds += 1;
        }

        let mut names: Vec<&str> = pods
            .iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap())
            .collect();
        names.sort_unstable();
        let mut expected: Vec<&str> = predicted.pods.iter().map(|p| p.name.as_str()).collect();
        expected.sort_unstable();
        assert_eq!(names, expected, "{}: pod names", job.file);

        for pod in &mut pods {
            let pod_name = pod["metadata"]["name"].as_str().unwrap().to_owned();
            let want = predicted.pods.iter().find(|p| p.name == pod_name).unwrap();
            let container = pod["spec"]["containers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "pytorch")
                .unwrap();
            assert_eq!(
                env_of(container),
                want.env,
                "{}: {pod_name}'s env",
                job.file
            );
            let strings = |v: &Value| -> Vec<String> {
                v.as_array()
                    .into_iter()
                    .flatten()
                    .map(|s| s.as_str().unwrap().to_owned())
                    .collect()
            };
            assert_eq!(
                strings(&container["command"]),
                want.command,
                "{}: {pod_name}'s command",
                job.file
            );
            assert_eq!(
                strings(&container["args"]),
                want.args,
                "{}: {pod_name}'s args",
                job.file
            );

            // Every field of the replica's template reaches the pod unchanged.
            let role = pod["metadata"]["labels"]["training.kubeflow.org/replica-type"]
                .as_str()
                .unwrap()
                .to_owned();
            let replicas = job.doc["spec"]["pytorchReplicaSpecs"].as_object().unwrap();
            let has_master = replicas.keys().any(|k| k.eq_ignore_ascii_case("master"));
            take_operator_init_container(pod, &role, has_master);
            let (_, spec) = job.doc["spec"]["pytorchReplicaSpecs"]
                .as_object()
                .unwrap()
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(&role))
                .unwrap();
            let template = &spec["template"];
            crate::cluster::take_default_tolerations(pod, template);
            let mut changed = Vec::new();
            lost(
                &without_env(&template["spec"]),
                &without_env(&pod["spec"]),
                "/spec",
                &mut changed,
            );
            lost(
                &template["metadata"],
                &pod["metadata"],
                "/metadata",
                &mut changed,
            );
            assert!(
                changed.is_empty(),
                "{}: {pod_name} lost or changed {changed:#?}",
                job.file
            );
            pods_compared += 1;
        }
        remove(&cluster, &job.doc);
    }
    eprintln!(
        "{} jobs, {pods_compared} pods: the operator made what the transcription predicts; {worlds} jobs one world",
        jobs.len()
    );

    // The control: one field changed, the seed's `--nnodes=$(WORLD_SIZE)` job given
    // `nprocPerNode: "8"`. The real operator then sets WORLD_SIZE to pods × 8
    // (envvar.go:62-64), torchrun waits for 16 nodes of which 2 exist, and the check
    // above says so.
    let mut broken = jobs
        .iter()
        .find(|j| j.file == "golden/seed-swin-roce/swin-large/pytorchjob.yaml")
        .unwrap()
        .doc
        .clone();
    broken["spec"]["nprocPerNode"] = "8".into();
    let pods = run(&cluster, &broken, 2);
    let world = crate::world_of(&as_transcribed(&pods, "nvidia.com/gpu"), Vec::new());
    remove(&cluster, &broken);
    assert!(
        world.failures.iter().any(|f| f.contains("16")),
        "{:#?}",
        world.failures
    );
    assert!(
        jobs.len() >= 25 && pods_compared >= 60,
        "{} jobs, {pods_compared} pods",
        jobs.len()
    );
}
