//! Kubeflow Trainer v2 output: what is written where, what its real consumers read,
//! and that a TrainJob gives its pods what the same job gets as a PyTorchJob.

use rdmagen::kubeflow::trainer::effective_pod;
use rdmagen::kubeflow::trainer::{NODE, Release};
use rdmagen::verify::parse;
use rdmagen::version::Version;
use serde_json::Value;

use crate::support::{rdmagen, root, text, tree};

/// The Trainer examples and the release each targets.
const EXAMPLES: [(&str, u32); 3] = [
    ("trainer-v2-roce", 3),
    ("trainer-v2.1-ib", 1),
    ("trainer-v2-sriov-rails", 3),
];

fn one(path: &str) -> Value {
    let body = std::fs::read_to_string(root().join(path)).unwrap();
    let mut docs = parse(&body).unwrap();
    assert_eq!(docs.len(), 1, "{path}");
    docs.remove(0)
}

/// The `node` pod template of a runtime.
fn runtime_pod(runtime: &Value) -> Value {
    runtime["spec"]["template"]["spec"]["replicatedJobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == "node")
        .expect("a replicated job `node`")["template"]["spec"]["template"]
        .clone()
}

#[test]
fn the_stream_starts_with_the_runtime_and_o_writes_runtimes_and_trainjobs() {
    let out = rdmagen(&["render", "examples/trainer-v2-roce"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let docs = parse(&text(&out.stdout)).unwrap();
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["TrainingRuntime", "TrainJob", "TrainJob"]);
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("out");
    let out = rdmagen(&[
        "render",
        "examples/trainer-v2-roce",
        "-o",
        to.to_str().unwrap(),
        "--write",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("2 job(s) and 1 runtime(s) rendered"),
        "{}",
        text(&out.stderr)
    );
    let mut files: Vec<String> = tree(&to).into_iter().map(|(path, _)| path).collect();
    files.retain(|f| !f.starts_with('.'));
    assert_eq!(
        files,
        [
            "bert-finetune/trainjob.yaml",
            "llama-pretrain/trainjob.yaml",
            "runtimes/h100-trainer.yaml"
        ]
    );
}

/// A platform team renders its pools alone: each Trainer pool named as an input
/// becomes its runtime, with no job at all; a pool only given with --pools does not.
#[test]
fn a_pool_alone_renders_its_runtime() {
    let out = rdmagen(&["render", "examples/trainer-v2.1-ib/pool.yaml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let docs = parse(&text(&out.stdout)).unwrap();
    assert_eq!(docs.len(), 1);
    assert_eq!(docs[0]["kind"], "ClusterTrainingRuntime");
    assert!(docs[0]["metadata"].get("namespace").is_none());
    let out = rdmagen(&[
        "render",
        "examples/seed-swin-roce",
        "--pools",
        "examples/trainer-v2.1-ib/pool.yaml",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let docs = parse(&text(&out.stdout)).unwrap();
    let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["PyTorchJob"]);
}

/// A Trainer pool whose podTemplate still names PyTorchJob's container `pytorch` made
/// a second, imageless container in the runtime, exit 0 (session 8's attack): the API
/// server refuses such pods. Render refuses it and says which name Trainer uses; a
/// container that names `node` instead renders.
#[test]
fn a_runtime_container_without_an_image_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pool = std::fs::read_to_string(root().join("examples/trainer-v2-roce/pool.yaml")).unwrap();
    for (name, code) in [("pytorch", 1), ("node", 0)] {
        let overlay = format!(
            "  jobDefaults:\n    podTemplate:\n      spec:\n        containers:\n          - name: {name}\n            env: [{{name: FOO, value: bar}}]\n"
        );
        let path = crate::support::write(
            dir.path(),
            "pool.yaml",
            &pool.replacen("  jobDefaults:\n", &overlay, 1),
        );
        let out = rdmagen(&["render", "--format", "brief", &path]);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{name}: {}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        if code == 1 {
            assert!(
                err.contains("error[RDG067]: rendered runtimes/h100-trainer.yaml: /spec/template/spec/replicatedJobs/0/template/spec/template/spec/containers/1/image: container `pytorch` has no image, and only `node` gets one from the TrainJob: the API server refuses the pods; on Kubeflow Trainer the training container is `node`"),
                "{err}"
            );
        }
    }
}

/// The same job on the same pool gets the same pod from Trainer (runtime + TrainJob,
/// as Trainer's controller merges them) as from the training operator (the
/// PyTorchJob's pod template): only the container's name differs, `node` for
/// Trainer's torch plugin and `pytorch` for the operator.
#[test]
fn a_trainjob_gives_its_pods_what_the_same_job_gets_as_a_pytorchjob() {
    let mut compared = 0;
    for (example, minor) in EXAMPLES {
        let target = Release::new(Version::new(2, minor));
        let golden = root().join("golden").join(example);
        let runtimes: Vec<Value> = tree(&golden.join("runtimes"))
            .into_iter()
            .map(|(path, _)| one(&format!("golden/{example}/runtimes/{path}")))
            .collect();
        // The example again, its pool turned to the PyTorchJob API of operator 1.9.
        let dir = tempfile::tempdir().unwrap();
        for (path, bytes) in tree(&root().join("examples").join(example)) {
            let body = String::from_utf8(bytes).unwrap();
            let body = body
                .replace("api: trainer.kubeflow.org/v1alpha1", "api: kubeflow.org/v1")
                .replace("trainer: \"2.3\"", "operator: \"1.9\"")
                .replace("trainer: \"2.1\"", "operator: \"1.9\"")
                .replace("clusterScoped: true", "gangScheduling: true");
            std::fs::write(dir.path().join(path), body).unwrap();
        }
        let out = rdmagen(&["render", dir.path().to_str().unwrap()]);
        assert!(out.status.success(), "{example}: {}", text(&out.stderr));
        for job in parse(&text(&out.stdout)).unwrap() {
            assert_eq!(job["kind"], "PyTorchJob");
            let name = job["metadata"]["name"].as_str().unwrap();
            let train_job = one(&format!("golden/{example}/{name}/trainjob.yaml"));
            // The runtime it names: the pool's, or the pool's of its pods' shape.
            let named = &train_job["spec"]["runtimeRef"]["name"];
            let runtime = runtimes
                .iter()
                .find(|r| r["metadata"]["name"] == *named)
                .unwrap_or_else(|| panic!("{example}/{name}: runtime {named}"));
            let base = runtime_pod(runtime);
            let mut made = effective_pod(NODE, &base, &train_job["spec"], target);
            made["spec"]["containers"][0]["name"] = "pytorch".into();
            let mut want = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"].clone();
            // Trainer appends a TrainJob's new variables after the runtime's
            // (UpsertEnvVars) and puts the mounts and volumes its patch adds before the
            // runtime's (the API server's merge order); rdmagen sorts a PyTorchJob's
            // variables and writes /dev/shm first. Same items, same values.
            for pod in [&mut made, &mut want] {
                let by_name = |list: &mut Value| {
                    if let Some(items) = list.as_array_mut() {
                        items.sort_by_key(|e| e["name"].as_str().unwrap_or_default().to_owned());
                    }
                };
                by_name(&mut pod["spec"]["containers"][0]["env"]);
                by_name(&mut pod["spec"]["containers"][0]["volumeMounts"]);
                by_name(&mut pod["spec"]["volumes"]);
            }
            assert_eq!(made, want, "{example}/{name}");
            compared += 1;
        }
    }
    assert_eq!(compared, 8);
}

/// The Kubeflow Python SDK's models of each release (`kubeflow-trainer-api`, which
/// the `kubeflow` SDK's TrainerClient deserializes into; .ci/run installs 2.3.0 and
/// 2.1.0) read every golden object of their release and write it back unchanged. The
/// upstream default runtime of each release passes the same check, and the other
/// release's objects fail it: the check tells the two APIs apart.
#[test]
fn the_trainer_sdk_of_each_release_reads_its_golden_objects_unchanged() {
    let sdks = [
        (
            3,
            "RDMAGEN_TRAINER_SDK_2_3",
            &[
                "trainer-v2-roce",
                "trainer-v2-sriov-rails",
                "trainer-v2-mpi-nccl-tests",
            ][..],
            "v2.3.0",
        ),
        (
            1,
            "RDMAGEN_TRAINER_SDK_2_1",
            &["trainer-v2.1-ib"][..],
            "v2.1.0",
        ),
    ];
    for (minor, var, examples, tag) in sdks {
        let Some(sdk) = std::env::var_os(var) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "kubeflow-trainer-api must be installed in CI ({var})"
            );
            eprintln!("skipped: set {var} to a kubeflow-trainer-api 2.{minor}.0 install");
            continue;
        };
        let mut files: Vec<String> = examples
            .iter()
            .flat_map(|example| {
                tree(&root().join("golden").join(example))
                    .into_iter()
                    .filter(|(path, _)| path.ends_with(".yaml"))
                    .map(move |(path, _)| format!("golden/{example}/{path}"))
            })
            .collect();
        assert_eq!(files.len(), if minor == 3 { 13 } else { 4 });
        files.push(format!(
            "tests/upstream/trainer-v2/torch_distributed.{tag}.yaml"
        ));
        // The other release's golden TrainJob.
        let other = if minor == 3 {
            "golden/trainer-v2.1-ib/resnet-ib/trainjob.yaml"
        } else {
            "golden/trainer-v2-roce/llama-pretrain/trainjob.yaml"
        };
        files.push(other.to_owned());
        let out = std::process::Command::new("python3")
            .arg("tests/sdk/read_trainer.py")
            .args(&files)
            .current_dir(root())
            .env("PYTHONPATH", sdk)
            .output()
            .expect("python3 runs");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let stdout = text(&out.stdout);
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), files.len(), "{stdout}");
        for (file, line) in files.iter().zip(&lines) {
            if file == other {
                let dropped = if minor == 3 {
                    "$.spec.podTemplateOverrides was dropped"
                } else {
                    "$.spec.runtimePatches was dropped"
                };
                assert!(line.contains(dropped), "{stdout}");
            } else {
                assert_eq!(*line, format!("ok {file}"), "{stdout}");
            }
        }
    }
}

/// Issue 15's acceptance: every golden TrainJob and runtime validates, strictly,
/// against the vendored upstream CRDs of the release its pool targets, with the same
/// checker that passes the upstream default `torch-distributed` runtime of each
/// release (the control) and fails the v2.1 one against v2.3's CRDs.
#[test]
fn golden_trainer_objects_validate_against_their_release_crds() {
    use rdmagen::kubeflow::trainer::crd::check;
    let mut checked = 0;
    for (example, minor) in EXAMPLES {
        let release = Version::new(2, minor);
        for (path, bytes) in tree(&root().join("golden").join(example)) {
            if !path.ends_with(".yaml") {
                continue;
            }
            for doc in parse(&String::from_utf8(bytes).unwrap()).unwrap() {
                let found: Vec<String> = check(&doc, release)
                    .into_iter()
                    .map(|f| f.message)
                    .collect();
                assert!(found.is_empty(), "golden/{example}/{path}: {found:#?}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 14);
    for (tag, minor) in [("v2.3.0", 3), ("v2.1.0", 1)] {
        let control = one(&format!(
            "tests/upstream/trainer-v2/torch_distributed.{tag}.yaml"
        ));
        let found = check(&control, Version::new(2, minor));
        assert!(found.is_empty(), "{tag}: {found:#?}");
    }
    let old = one("tests/upstream/trainer-v2/torch_distributed.v2.1.0.yaml");
    let found = check(&old, Version::new(2, 3));
    assert!(
        found.iter().any(|f| f.message.contains("numProcPerNode")),
        "{found:#?}"
    );
}

/// `lint` and `render` judge a TrainJob's pods by one model of what Trainer's
/// controller makes (issue 23). For every golden TrainJob and its runtime: the pod
/// lint judges (`rules::trainer::trainer_pods`, from what the API server keeps of
/// both objects) is the pod render's fidelity check holds to the plan's
/// (`verify::trainer_fidelity::pod_trainer_makes`; `render` of the examples, which the
/// golden tests run, fails if it is not the plan's), and lint finds no error in that
/// pod that the runtime's own pod does not have (render fails on one).
#[test]
fn lint_and_render_judge_every_golden_trainjob_by_the_same_pod() {
    use rdmagen::diagnostics::Severity;
    use rdmagen::rules::manifest::ManifestFacts;
    use rdmagen::rules::trainer::{TrainerRelease, check_all, trainer_pods};
    use rdmagen::verify::trainer_fidelity::pod_trainer_makes;

    // Each golden tree of TrainJobs and the release its pool targets.
    let trees = [
        ("trainer-v2-roce/", 3),
        ("trainer-v2.1-ib/", 1),
        ("trainer-v2-sriov-rails/", 3),
        ("kueue-topology/", 3),
        ("kai-topology/", 3),
        ("smoke/h100-trainer-roce/", 3),
        ("smoke/a100-trainer-hdr-ib/", 1),
        ("trainer-v2-mpi-nccl-tests/", 3),
        ("preflight-trainer-ib/", 3),
    ];
    let mut judged = Vec::new();
    for (path, _) in tree(&root().join("golden")) {
        let Some(dir) = path.strip_suffix("/trainjob.yaml") else {
            continue;
        };
        let (_, minor) = trees
            .iter()
            .find(|(t, _)| path.starts_with(t))
            .unwrap_or_else(|| panic!("{path}: add its tree and release to this test"));
        let version = Version::new(2, *minor);
        let release = Release::new(version);
        let train_job = one(&format!("golden/{path}"));
        let runtimes = format!(
            "golden/{}/runtimes",
            dir.rsplit_once('/').map_or("", |(d, _)| d)
        );
        let name = &train_job["spec"]["runtimeRef"]["name"];
        if std::fs::exists(root().join(format!("golden/{dir}/trainingruntime.yaml"))).unwrap() {
            // A job's own MPI runtime, whose pods are judged by
            // golden_trainer_mpi_pods_get_every_nccl_variable_and_a_rank_per_gpu.
            continue;
        }
        let runtime = tree(&root().join(&runtimes))
            .into_iter()
            .map(|(file, _)| one(&format!("{runtimes}/{file}")))
            .find(|r| r["metadata"]["name"] == *name)
            .unwrap_or_else(|| panic!("{path}: runtime {name} in {runtimes}"));

        let (_, linted_from, linted) =
            trainer_pods(&train_job, &runtime, release).expect("a trainer job");
        let rendered = pod_trainer_makes(&runtime_pod(&runtime), &train_job, release);
        assert_eq!(linted_from, runtime_pod(&runtime), "{path}");
        assert_eq!(linted, rendered, "{path}");
        // The TrainJob changes the pod: the model is not judged on a no-op.
        assert_ne!(rendered, runtime_pod(&runtime), "{path}");

        let docs = [runtime, train_job];
        let found: Vec<String> = check_all(
            &docs,
            TrainerRelease::given(version),
            &ManifestFacts::default(),
        )
        .into_iter()
        .filter(|(i, f)| *i == 1 && f.rule.info().severity == Severity::Error)
        .filter(|(_, f)| f.message.starts_with("in the pods this TrainJob gets"))
        .map(|(_, f)| format!("{}: {}", f.rule.info().id, f.message))
        .collect();
        assert_eq!(found, Vec::<String>::new(), "{path}");
        judged.push(path);
    }
    assert_eq!(judged.len(), 15, "{judged:?}");
}

/// A runtime of a narrower shape is named after its pool with a suffix, and the name
/// must still be a DNS label of at most 63 characters: a pool whose own runtime name
/// fits but whose `-no-rdma` runtime would not is an error at the pool's name, for the
/// job that needs that runtime, and nothing is written.
#[test]
fn a_runtime_of_a_narrower_shape_needs_a_name_that_fits() {
    let pool_name = "p".repeat(60);
    let dir = tempfile::tempdir().unwrap();
    let pool = format!(
        "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {{name: {pool_name}}}\nspec:\n  gpu: {{perNode: 8}}\n  network: {{fabric: ib, hcas: [mlx5_0]}}\n  target: {{api: trainer.kubeflow.org/v1alpha1, trainer: \"2.3\", clusterScoped: true}}\n"
    );
    let job = |name: &str, nodes: u32| {
        format!(
            "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {{name: {name}}}\nspec: {{pool: {pool_name}, image: img:1, script: t.py, nodes: {nodes}, gpusPerNode: 8}}\n"
        )
    };
    std::fs::write(dir.path().join("pool.yaml"), &pool).unwrap();
    std::fs::write(dir.path().join("whole.yaml"), job("whole", 2)).unwrap();
    let out = rdmagen(&["render", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // A single-node job needs `<pool>-no-rdma`: 68 characters.
    std::fs::write(dir.path().join("single.yaml"), job("single", 1)).unwrap();
    let target = dir.path().join("out");
    let out = rdmagen(&[
        "render",
        dir.path().to_str().unwrap(),
        "-o",
        target.to_str().unwrap(),
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "pool `{pool_name}` names its ClusterTrainingRuntime `{pool_name}-no-rdma` (for the jobs that need it): `{pool_name}-no-rdma` is 68 characters; at most 63"
        )),
        "{stderr}"
    );
    assert!(stderr.contains("pool.yaml:3:"), "{stderr}");
    assert!(!target.exists(), "nothing is written");
}

/// The golden TrainJob on Trainer's MPI runtime, and the runtime, validate strictly
/// against the Trainer v2.3.0 CRDs, and the CRD's enum refuses an MPI other than Open
/// MPI: the check reaches `mlPolicy.mpi`.
#[test]
fn golden_trainer_mpi_objects_validate_strictly_and_refuse_another_mpi() {
    use rdmagen::kubeflow::trainer::crd::check;
    let dir = "golden/trainer-v2-mpi-nccl-tests/mpi-allreduce";
    for file in ["trainingruntime.yaml", "trainjob.yaml"] {
        let doc = one(&format!("{dir}/{file}"));
        let found: Vec<String> = check(&doc, Version::new(2, 3))
            .into_iter()
            .map(|f| f.message)
            .collect();
        assert_eq!(found, Vec::<String>::new(), "{file}");
    }
    let mut runtime = one(&format!("{dir}/trainingruntime.yaml"));
    runtime["spec"]["mlPolicy"]["mpi"]["mpiImplementation"] = "Intel".into();
    let found: Vec<(Option<String>, String)> = check(&runtime, Version::new(2, 3))
        .into_iter()
        .map(|f| (f.pointer, f.message))
        .collect();
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        found[0].0.as_deref(),
        Some("/spec/mlPolicy/mpi/mpiImplementation"),
        "{found:#?}"
    );
}

/// What Trainer's MPI plugin makes of the golden runtime and TrainJob
/// (`kubeflow::trainer::mpi::effective_pods`): the launcher runs mpirun with one rank
/// per GPU of every node and forwards every NCCL variable the nodes have, the plugin
/// gives it the hostfile and slots = GPUs per node, the nodes get the GPUs and the RDMA
/// device and the launcher neither, and every pod is a valid Kubernetes pod template.
#[test]
fn golden_trainer_mpi_pods_get_every_nccl_variable_and_a_rank_per_gpu() {
    use rdmagen::kubeflow::trainer::mpi::{HOSTFILE_DIR, effective_pods, pod_of, reserved_env};
    let dir = "golden/trainer-v2-mpi-nccl-tests/mpi-allreduce";
    let runtime = one(&format!("{dir}/trainingruntime.yaml"));
    let train_job = one(&format!("{dir}/trainjob.yaml"));
    let job = one("examples/trainer-v2-mpi-nccl-tests/job.yaml");
    let (nodes, gpus) = (
        job["spec"]["nodes"].as_u64().unwrap(),
        job["spec"]["gpusPerNode"].as_u64().unwrap(),
    );
    let pods = effective_pods(
        &runtime,
        train_job["metadata"]["name"].as_str().unwrap(),
        &train_job["spec"],
        Release::new(Version::new(2, 3)),
    );
    let names: Vec<&str> = pods.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["node", "launcher"]);
    let container = |job: &str| pod_of(&pods, job).unwrap()["spec"]["containers"][0].clone();
    let (node, launcher) = (container("node"), container("launcher"));
    assert_eq!(runtime["spec"]["mlPolicy"]["mpi"]["numProcPerNode"], gpus);
    assert_eq!(train_job["spec"]["trainer"]["numNodes"], nodes);

    let command: Vec<&str> = launcher["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(command[..3], ["mpirun", "-np", &(nodes * gpus).to_string()]);
    assert!(!command.contains(&"--hostfile") && !command.contains(&"-hostfile"));
    let forwarded: Vec<&str> = command
        .windows(2)
        .filter(|w| w[0] == "-x")
        .map(|w| w[1])
        .collect();
    let env_names = |c: &Value| -> Vec<String> {
        c["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let nccl: Vec<String> = env_names(&node)
        .into_iter()
        .filter(|n| n.starts_with("NCCL_"))
        .collect();
    assert!(nccl.len() >= 4, "{nccl:?}");
    for name in &nccl {
        assert!(
            forwarded.contains(&name.as_str()),
            "{name} is not forwarded: {command:?}"
        );
        // The launcher holds the value mpirun forwards.
        assert!(env_names(&launcher).contains(name), "{name}");
    }
    for name in ["PATH", "LD_LIBRARY_PATH"] {
        assert!(forwarded.contains(&name), "{name}");
    }

    // The plugin's variables: slots = GPUs per node, the hostfile it mounts.
    let value = |c: &Value, name: &str| {
        c["env"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|e| e["name"] == name)
            .map(|e| e["value"].clone())
    };
    assert_eq!(
        value(&launcher, "OMPI_MCA_orte_set_default_slots"),
        Some(gpus.to_string().into())
    );
    assert_eq!(
        value(&launcher, "OMPI_MCA_orte_default_hostfile"),
        Some("/etc/mpi/hostfile".into())
    );
    let mounts = |c: &Value| -> Vec<String> {
        c["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["mountPath"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(mounts(&launcher).contains(&HOSTFILE_DIR.to_owned()));
    assert!(!mounts(&node).contains(&HOSTFILE_DIR.to_owned()));
    for c in [&node, &launcher] {
        assert!(mounts(c).contains(&"/root/.ssh".to_owned()));
    }
    // The TrainJob sets none of the variables Trainer's webhook reserves.
    for name in reserved_env() {
        assert!(
            value(&train_job["spec"]["trainer"], name).is_none(),
            "{name}"
        );
        assert_eq!(
            value(
                &runtime["spec"]["template"]["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]
                    ["spec"]["containers"][0],
                name
            ),
            None
        );
    }

    // GPUs and the RDMA device on the nodes, nothing of a rank's on the launcher.
    assert_eq!(
        node["resources"]["limits"]["nvidia.com/gpu"],
        gpus.to_string()
    );
    assert_eq!(node["resources"]["limits"]["rdma/hca"], "1");
    assert_eq!(
        node["command"],
        serde_json::json!(["/usr/sbin/sshd", "-De"])
    );
    let limits = launcher["resources"]["limits"].as_object().unwrap();
    assert_eq!(limits.keys().collect::<Vec<_>>(), ["cpu", "memory"]);
    assert_eq!(launcher["image"], job["spec"]["image"]);
    assert_eq!(node["image"], job["spec"]["image"]);

    let verifier = rdmagen::verify::Verifier::new();
    for (name, pod) in &pods {
        let found: Vec<String> = verifier
            .pod_template(pod, name)
            .into_iter()
            .map(|f| f.message)
            .collect();
        assert_eq!(found, Vec::<String>::new(), "{name}");
    }
}

/// What Trainer's MPI runtime cannot run is an error at the job's field: an MPI other
/// than Open MPI (the CRD's enum), and a variable the plugin reserves; nothing is
/// written.
#[test]
fn a_trainer_mpi_job_asking_another_mpi_or_a_reserved_variable_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let example = root().join("examples/trainer-v2-mpi-nccl-tests");
    let pool = std::fs::read_to_string(example.join("pool.yaml")).unwrap();
    crate::support::write(dir.path(), "pool.yaml", &pool);
    let job = std::fs::read_to_string(example.join("job.yaml")).unwrap().replacen(
        "  env: {NCCL_DEBUG: INFO, NCCL_TESTS_MIN_BW: \"300\"}\n",
        "  env: {NCCL_DEBUG: INFO, OMPI_MCA_plm_rsh_args: \"-p 2222\"}\n  mpi: {implementation: Intel}\n",
        1,
    );
    let path = crate::support::write(dir.path(), "job.yaml", &job);
    let out = rdmagen(&["render", "--format", "brief", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let err = text(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("RDG192")).collect();
    assert_eq!(
        lines,
        [
            format!(
                "{path}:17:27: error[RDG192]: OMPI_MCA_plm_rsh_args is set by Trainer's MPI plugin on the launcher, and its webhook rejects a TrainJob that sets it (constants.go:305-306, mpi.go:95-107)"
            ),
            format!(
                "{path}:18:9: error[RDG192]: mpi.implementation Intel: Kubeflow Trainer's MPI runtime runs Open MPI only (mlPolicy.mpi.mpiImplementation takes `OpenMPI` or \"\" in the v2.1.0 and v2.3.0 CRDs, and the plugin writes Open MPI's environment alone, mpi.go:208-227); use an Open MPI image, or a pool with target.mpiOperator for an MPIJob"
            ),
        ],
        "{err}"
    );
}

/// `mpi.launcherAsWorker` is an MPIJob's `runLauncherAsWorker`: on a Trainer pool, and
/// on a one-node job (no Worker replica is left), it is an error at the field and
/// nothing is written.
#[test]
fn launcher_as_worker_is_refused_where_no_mpijob_can_carry_it() {
    let cases = [
        (
            "examples/trainer-v2-mpi-nccl-tests",
            "  launcher: mpirun\n",
            "  launcher: mpirun\n  mpi: {launcherAsWorker: true}\n",
            "mpi.launcherAsWorker on Kubeflow Trainer pool",
        ),
        (
            "examples/mpijob-nccl-tests-ib",
            "  nodes: 4\n",
            "  nodes: 1\n  mpi: {launcherAsWorker: true}\n",
            "mpi.launcherAsWorker on a one-node job",
        ),
    ];
    for (example, from, to, said) in cases {
        let dir = tempfile::tempdir().unwrap();
        let from_dir = root().join(example);
        let pool = std::fs::read_to_string(from_dir.join("pool.yaml")).unwrap();
        crate::support::write(dir.path(), "pool.yaml", &pool);
        let original = std::fs::read_to_string(from_dir.join("job.yaml")).unwrap();
        let job = original.replacen(from, to, 1);
        assert_ne!(job, original, "{example}: the case applies");
        let path = crate::support::write(dir.path(), "job.yaml", &job);
        let out = rdmagen(&["render", "--format", "brief", dir.path().to_str().unwrap()]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(out.stdout.is_empty());
        let line = job
            .lines()
            .position(|l| l.contains("launcherAsWorker"))
            .unwrap()
            + 1;
        assert!(
            err.lines()
                .any(|l| l.starts_with(&format!("{path}:{line}:"))
                    && l.contains("error[RDG192]: ")
                    && l.contains(said)),
            "{err}"
        );
    }
}
