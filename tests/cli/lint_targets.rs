//! `lint` on the cluster a manifest is for (`--operator`, `--platform`), and the
//! manifests it used to miss or misjudge: long job names, PV/PVC pairs, RDMA through
//! hostNetwork, platform-only rules.

use serde_json::Value;

use crate::support::{rdmagen, text};

/// (exit code, [(rule, line, message)]) of `rdmagen lint <args> --format json`.
fn lint(args: &[&str]) -> (Option<i32>, Vec<(String, u64, String)>) {
    let mut all = vec!["lint", "--format", "json"];
    all.extend(args);
    let out = rdmagen(&all);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    let found = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap(),
                f["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (out.status.code(), found)
}

fn rules(found: &[(String, u64, String)]) -> Vec<(&str, u64)> {
    found.iter().map(|(r, l, _)| (r.as_str(), *l)).collect()
}

#[test]
fn nproc_per_node_is_an_error_only_for_an_operator_before_1_7() {
    let fixture = "tests/lint/old-operator-nproc.yaml";
    // Unknown operator: lint does not guess.
    assert_eq!(lint(&[fixture]), (Some(0), vec![]));
    assert_eq!(lint(&[fixture, "--operator", "1.9"]), (Some(0), vec![]));
    let (code, found) = lint(&[fixture, "--operator", "1.6"]);
    assert_eq!(code, Some(1));
    // The field is pruned, and the bare torchrun of each replica gets no PET_*.
    let launcher = "an operator before 1.7 sets no PET_* variables, so the launcher runs without --nnodes, --nproc_per_node, --master_addr: each pod trains alone (1 node, 1 process, master 127.0.0.1); pass them from $(WORLD_SIZE), $(RANK) and $(MASTER_ADDR)/$(MASTER_PORT)";
    assert_eq!(
        found,
        [
            (
                "RDG037".to_owned(),
                8,
                "spec.nprocPerNode is not in the CRD of a training-operator before 1.7: it is pruned, no PET_* variables are set, and WORLD_SIZE counts pods".to_owned()
            ),
            ("RDG037".to_owned(), 18, launcher.to_owned()),
            ("RDG037".to_owned(), 34, launcher.to_owned()),
        ]
    );
    // CubeStudio installs an operator before 1.7; --operator overrides the platform's.
    let (code, found) = lint(&[fixture, "--platform", "cubestudio"]);
    assert_eq!(
        (code, rules(&found)),
        (Some(1), vec![("RDG037", 8), ("RDG037", 18), ("RDG037", 34)])
    );
    let newer = lint(&[fixture, "--platform", "cubestudio", "--operator", "1.9"]);
    assert_eq!(newer, (Some(0), vec![]));
}

#[test]
fn an_operator_version_must_be_a_version() {
    let out = rdmagen(&[
        "lint",
        "tests/lint/old-operator-nproc.yaml",
        "--operator",
        "v1-8a066f9",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("`v1-8a066f9` is not a version: expected MAJOR.MINOR, e.g. 1.9"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_job_name_too_long_for_the_operators_service_names_is_an_error() {
    let (code, found) = lint(&["tests/lint/long-name.yaml"]);
    assert_eq!(code, Some(1));
    let name = "llama-pretrain-with-a-name-long-enough-to-break-service";
    assert_eq!(
        found,
        [(
            "RDG007".to_owned(),
            6,
            format!(
                "`{name}` is 55 characters; the operator names a Service `{name}-worker-9` (64 characters), which must fit in 63, so the name can be at most 54"
            )
        )]
    );
}

#[test]
fn rdma_through_host_network_and_dev_infiniband_needs_ipc_lock() {
    assert_eq!(lint(&["tests/lint/host-rdma.yaml"]), (Some(0), vec![]));
}

#[test]
fn traffic_class_and_pid1_injection_are_named_only_on_their_platform() {
    let fixture = "tests/lint/traffic-class.yaml";
    let generic =
        "processes started through `sh -c` may not inherit variables a platform injects into PID 1";
    let shell = |message: &str| ("RDG035".to_owned(), 19, message.to_owned());
    assert_eq!(lint(&[fixture]), (Some(0), vec![shell(generic)]));
    assert_eq!(
        lint(&[fixture, "--platform", "generic"]),
        (Some(0), vec![shell(generic)])
    );
    assert_eq!(
        lint(&[fixture, "--platform", "aistudio"]),
        (
            Some(1),
            vec![
                shell(generic),
                (
                    "RDG020".to_owned(),
                    21,
                    "NCCL_IB_TC must match the switches' QoS setup, which AIStudio owns: no need to set it, do not change it".to_owned()
                )
            ]
        )
    );
    assert_eq!(
        lint(&[fixture, "--platform", "cce"]),
        (
            Some(0),
            vec![shell(
                "processes started through `sh -c` may not inherit the NCCL variables Baidu CCE injects into PID 1"
            )]
        )
    );
}

#[test]
fn a_claim_for_dynamic_provisioning_is_linted_and_clean() {
    let out = rdmagen(&["lint", "tests/lint/dynamic-pvc.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "0 PyTorchJob(s) and 1 PersistentVolume(Claim)(s) in 1 file(s) linted: 0 errors, 0 warnings, 0 infos\n"
    );
}

#[test]
fn a_claim_and_the_pv_it_should_bind_may_be_in_different_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pv.yaml"),
        "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: data-pv}\nspec:\n  claimRef: {name: data, namespace: team}\n  nfs: {server: nas, path: /data}\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("pvc.yaml"),
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: team}\nspec:\n  accessModes: [ReadWriteMany]\n",
    )
    .unwrap();
    let (code, found) = lint(&[dir.path().to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert_eq!(
        found,
        [(
            "RDG053".to_owned(),
            4,
            "PersistentVolumeClaim `data` is the claimRef of PersistentVolume `data-pv` but leaves out storageClassName: on a cluster with a default StorageClass it gets that class and never binds the static PV; write storageClassName: \"\" and volumeName: data-pv".to_owned()
        )]
    );
}

/// The Trainer v2 objects of the upstream examples: lint knows the kinds and, judged
/// for the release they were written for, finds only that Trainer's own Volcano
/// example leaves the pods to the default scheduler.
#[test]
fn upstream_trainer_examples_are_linted() {
    let dir = "tests/upstream/trainer-v2";
    let files = [
        format!("{dir}/torch_distributed.v2.3.0.yaml"),
        format!("{dir}/examples/upstream-01-multi-node.yaml"),
        format!("{dir}/examples/upstream-02-runtime-patches.yaml"),
        format!("{dir}/examples/upstream-04-volcano-integration.yaml"),
    ];
    let mut args: Vec<&str> = files.iter().map(String::as_str).collect();
    args.extend(["--trainer", "2.3"]);
    let (code, found) = lint(&args);
    assert_eq!(code, Some(0));
    assert_eq!(rules(&found), [("RDG156", 59)]);
    let out = rdmagen(&[
        "lint",
        "--trainer",
        "2.3",
        &format!("{dir}/torch_distributed.v2.3.0.yaml"),
        &format!("{dir}/examples/upstream-01-multi-node.yaml"),
    ]);
    assert_eq!(
        text(&out.stderr),
        "1 TrainJob(s), 1 (Cluster)TrainingRuntime(s) (Trainer 2.3) in 2 file(s) linted: 0 errors, 0 warnings, 0 infos\n"
    );
}

/// Without --trainer, lint judges by the latest release and says so, in the summary
/// and in each finding that depends on it; --trainer 2.0 is refused.
#[test]
fn the_trainer_release_is_assumed_aloud_and_checked() {
    let old = "tests/upstream/trainer-v2/torch_distributed.v2.1.0.yaml";
    let out = rdmagen(&["lint", "--format", "brief", old]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "'numProcPerNode' was unexpected at /spec/mlPolicy/torch: the Trainer v2.3.0 ClusterTrainingRuntime CRD"
        ) && stdout.trim_end().ends_with(
            "; judged as Trainer 2.3, the latest, since --trainer was not given"
        ),
        "{stdout}"
    );
    let out = rdmagen(&["lint", old]);
    assert!(
        text(&out.stderr)
            .starts_with("1 (Cluster)TrainingRuntime(s) (Trainer 2.3, assumed) in 1 file(s)"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(lint(&[old, "--trainer", "2.1"]), (Some(0), vec![]));
    let (code, found) = lint(&[old, "--trainer", "2.3"]);
    assert_eq!((code, rules(&found)), (Some(1), vec![("RDG150", 11)]));
    assert!(!found[0].2.contains("assumed"));

    let out = rdmagen(&["lint", old, "--trainer", "2.0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("Trainer 2.0 is not supported"),
        "{}",
        text(&out.stderr)
    );
}

/// A TrainJob and its runtime in different files are judged together: on 2.2 the job's
/// resourcesPerNode replaces the runtime's RDMA device, and the job's NCCL variables
/// are judged in the pod the runtime gives it.
#[test]
fn a_trainjob_is_judged_with_its_runtime_from_another_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("runtime.yaml"),
        "\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: rdma, namespace: ml}
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                metadata: {annotations: {sidecar.istio.io/inject: \"false\"}}
                spec:
                  containers:
                    - name: node
                      image: img:1
                      resources: {limits: {nvidia.com/gpu: 8, rdma/hca: 1}}
                      securityContext: {capabilities: {add: [IPC_LOCK]}}
                      volumeMounts: [{name: dshm, mountPath: /dev/shm}]
                  volumes: [{name: dshm, emptyDir: {medium: Memory}}]
",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("job.yaml"),
        "\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: train, namespace: ml}
spec:
  runtimeRef: {name: rdma, kind: TrainingRuntime}
  trainer:
    numNodes: 2
    env: [{name: NCCL_IB_DISABLE, value: \"1\"}, {name: NCCL_NET, value: IB}]
    resourcesPerNode: {limits: {nvidia.com/gpu: 8}}
",
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, found) = lint(&[d, "--trainer", "2.3"]);
    assert_eq!(code, Some(1));
    assert_eq!(rules(&found), [("RDG023", 8), ("RDG047", 8)]);
    assert!(
        found[0].2.starts_with(
            "in the pods this TrainJob gets from TrainingRuntime `rdma`: NCCL_IB_DISABLE=1 turns RDMA off"
        ),
        "{}",
        found[0].2
    );
    // On 2.2 the GPUs survive but the RDMA device does not; NCCL_IB_DISABLE=1 is then
    // a TCP job's statement.
    let (code, found) = lint(&[d, "--trainer", "2.2"]);
    assert_eq!(code, Some(1));
    assert_eq!(rules(&found), [("RDG152", 9)]);
    assert!(
        found[0]
            .2
            .contains("so its pods lose rdma/hca; repeat it here"),
        "{}",
        found[0].2
    );
    // In another namespace the runtime is not this job's.
    let job = std::fs::read_to_string(dir.path().join("job.yaml")).unwrap();
    std::fs::write(
        dir.path().join("job.yaml"),
        job.replace("namespace: ml}", "namespace: other}"),
    )
    .unwrap();
    let (_, found) = lint(&[d, "--trainer", "2.2"]);
    assert_eq!(rules(&found), [("RDG153", 9)]);
}

/// `rdmagen.io/ignore` works on Trainer objects as on PyTorchJobs: on the object's
/// metadata for the object, on a runtime's pod template for that template only.
#[test]
fn ignore_annotations_cover_trainer_objects_and_their_pod_templates() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.yaml");
    std::fs::write(
        &file,
        "\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: train
  annotations: {rdmagen.io/ignore: \"RDG151 the platform strips it\"}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    env: [{name: PET_NNODES, value: \"2\"}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: two-jobs}
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                metadata:
                  annotations: {rdmagen.io/ignore: \"RDG060 IPC_LOCK comes from a webhook\", sidecar.istio.io/inject: \"false\"}
                spec:
                  containers:
                    - {name: node, image: \"img:1\", resources: {limits: {rdma/hca: 1}}}
        - name: sidecar
          template:
            spec:
              template:
                spec:
                  containers:
                    - {name: probe, image: \"img:1\", resources: {limits: {rdma/hca: 1}}}
",
    )
    .unwrap();
    let (code, found) = lint(&[file.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    // The probe's pod opts out of nothing: RDG060 and RDG181 (no Istio opt-out) both
    // stand there.
    assert_eq!(rules(&found), [("RDG060", 35), ("RDG181", 35)]);
}

/// Each pod-network rule on its fixture pair (tests/lint/<name>.yaml fires it,
/// <name>.ok.yaml is the fix): the finding, its line and its whole message, and
/// nothing at all on the fix.
fn fires_once_and_not_when_fixed(name: &str, code: i32, expected: (&str, u64, &str)) {
    let fixture = format!("tests/lint/{name}.yaml");
    let (rule, line, message) = expected;
    assert_eq!(
        lint(&[&fixture]),
        (
            Some(code),
            vec![(rule.to_owned(), line, message.to_owned())]
        ),
        "{fixture}"
    );
    let fixed = format!("tests/lint/{name}.ok.yaml");
    assert_eq!(lint(&[&fixed]), (Some(0), vec![]), "{fixed}");
}

#[test]
fn host_hca_names_on_a_multus_vf_pod_are_reported() {
    fires_once_and_not_when_fixed(
        "host-hca-vf",
        0,
        (
            "RDG178",
            23,
            "NCCL_IB_HCA=`=mlx5_1,mlx5_2` names the host's RDMA devices (mlx5_1, mlx5_2), but this pod's come through Multus as SR-IOV VFs or host devices (nvidia.com/rail1), which keep names the host chose when it made them; write the prefix `mlx5`, or leave NCCL_IB_HCA unset (NCCL then uses every RDMA device the pod has, its rails)",
        ),
    );
}

#[test]
fn eth0_on_a_host_network_runtime_is_reported_unless_the_platforms_hosts_have_it() {
    let message = "NCCL_SOCKET_IFNAME=`=eth0` on a hostNetwork pod names the host's eth0, which exists only on hosts that have one (OCI's GPU shapes do; many name theirs bond0 or ens*); name the host's bootstrap interface (`rdmagen detect` reads them on a node)";
    fires_once_and_not_when_fixed("hostnet-eth0", 0, ("RDG177", 27, message));
    // Only OCI documents an eth0 on its hosts (Profile.host_interfaces).
    for platform in ["generic", "aistudio", "cubestudio", "cce", "aks"] {
        let (_, found) = lint(&["tests/lint/hostnet-eth0.yaml", "--platform", platform]);
        assert_eq!(rules(&found), [("RDG177", 27)], "{platform}");
    }
    let (code, found) = lint(&["tests/lint/hostnet-eth0.yaml", "--platform", "oci"]);
    assert_eq!((code, rules(&found)), (Some(0), vec![]));
}

#[test]
fn an_rdma_pod_without_the_istio_opt_out_gets_an_info() {
    fires_once_and_not_when_fixed(
        "istio-rdma",
        0,
        (
            "RDG181",
            23,
            "the pod requests rdma/hca but does not opt out of Istio's sidecar: where the namespace injects one, its proxy sits between the pods and NCCL hangs; add the pod annotation sidecar.istio.io/inject: \"false\"",
        ),
    );
}

#[test]
fn ipc_lock_under_a_non_root_pod_user_is_reported() {
    fires_once_and_not_when_fixed(
        "ipc-lock-non-root",
        0,
        (
            "RDG182",
            17,
            "container `pytorch` adds IPC_LOCK but runs as uid 1000: a non-root process never holds the capability (no ambient capabilities in Kubernetes), so locked memory stays at the runtime's limit (8 MiB under containerd) and ibv_reg_mr fails; run it as root, or set LimitMEMLOCK=infinity for containerd on the nodes and suppress this",
        ),
    );
}

#[test]
fn a_multus_annotation_multus_cannot_parse_is_an_error() {
    fires_once_and_not_when_fixed(
        "multus-unreadable",
        1,
        (
            "RDG179",
            14,
            "Multus cannot read k8s.v1.cni.cncf.io/networks `netops/gpu-rail1/net1`: `netops/gpu-rail1/net1`: more than one `/`; the pod's network set-up fails and the pod never starts",
        ),
    );
}

#[test]
fn multus_networks_on_a_host_network_pod_are_an_error() {
    fires_once_and_not_when_fixed(
        "hostnet-multus",
        1,
        (
            "RDG179",
            17,
            "the pod is on the host's network and asks Multus for networks (k8s.v1.cni.cncf.io/networks): a pod on the host's network gets no pod network, so none is attached and NCCL sees the host's devices and interfaces; remove hostNetwork or the annotation",
        ),
    );
}

/// Native sidecars on a cluster that drops them (issue 26): the golden finetune job of
/// examples/pool-defaults (operator 1.9, a log-shipper sidecar) lints clean as written,
/// and is RDG187 at each replica's sidecar for an operator whose PyTorchJob CRD has no
/// `initContainers[].restartPolicy` (1.7) or a Kubernetes that does not run sidecars by
/// default (1.28); both at once are said once per sidecar.
#[test]
fn native_sidecars_on_an_older_operator_or_kubernetes_are_an_error() {
    let golden = "golden/pool-defaults/finetune/pytorchjob.yaml";
    assert_eq!(lint(&[golden]), (Some(0), vec![]));
    let at = |found: &[(String, u64, String)]| -> Vec<(String, u64)> {
        found.iter().map(|(r, l, _)| (r.clone(), *l)).collect()
    };
    let both = vec![("RDG187".to_owned(), 59), ("RDG187".to_owned(), 168)];
    for flags in [
        &["--operator", "1.7"][..],
        &["--kubernetes", "1.28"][..],
        &["--operator", "1.7", "--kubernetes", "1.28"][..],
    ] {
        let mut args = vec![golden];
        args.extend(flags);
        let (code, found) = lint(&args);
        assert_eq!((code, at(&found)), (Some(1), both.clone()), "{flags:?}");
        assert!(
            found[0].2.starts_with(
                "init container `log-shipper` is a native sidecar (restartPolicy: Always), but "
            ),
            "{}",
            found[0].2
        );
    }
    let (_, found) = lint(&[golden, "--kubernetes", "1.28"]);
    assert!(
        found[0]
            .2
            .contains("Kubernetes 1.28 does not run native sidecars by default"),
        "{}",
        found[0].2
    );
    let (code, _) = lint(&[golden, "--operator", "1.8", "--kubernetes", "1.29"]);
    assert_eq!(code, Some(0));
}

/// Each MPIJob pitfall on its fixture pair (tests/lint/mpijob-<name>.yaml): mpirun
/// as the launcher runs it, against the hostfile the mpi-operator writes and the
/// env a rank gets. The /dev/shm one is RDG062, the pod rule every Worker gets.
#[test]
fn mpijob_pitfalls_are_each_reported_once_and_not_when_fixed() {
    fires_once_and_not_when_fixed(
        "mpijob-slots",
        0,
        (
            "RDG194",
            7,
            "slotsPerWorker is not set, so each worker has 1 slot (the mpi-operator's default), but the Worker's container requests 8 nvidia.com/gpu: some GPUs stay idle; set slotsPerWorker to the GPUs per worker for one rank per GPU",
        ),
    );
    // A `bash -c` script: the count is read from its one mpirun, past the
    // continuations, the quoted -x and the comment.
    fires_once_and_not_when_fixed(
        "mpijob-np-above",
        1,
        (
            "RDG195",
            21,
            "mpirun starts 32 ranks but the hostfile has 2 workers × slotsPerWorker 8 = 16 slots: Open MPI refuses to start more processes than slots, and the launcher fails",
        ),
    );
    fires_once_and_not_when_fixed(
        "mpijob-np-below",
        0,
        (
            "RDG196",
            18,
            "mpirun starts 8 ranks but the hostfile has 2 workers × slotsPerWorker 8 = 16 slots: 8 of them stay empty, and the GPUs they stand for idle",
        ),
    );
    // NCCL_SOCKET_IFNAME is exported with -x; NCCL_IB_HCA is not.
    fires_once_and_not_when_fixed(
        "mpijob-worker-env",
        0,
        (
            "RDG197",
            30,
            "NCCL_IB_HCA is set on the Worker's container, but a rank is started by sshd, which does not pass the container's env on, and the launcher's mpirun does not forward it: set it on the Launcher and add `-x NCCL_IB_HCA` to mpirun (Open MPI passes only what -x names)",
        ),
    );
    fires_once_and_not_when_fixed(
        "mpijob-no-shm",
        1,
        (
            "RDG062",
            24,
            "8 GPUs share the 64 MiB default /dev/shm; mount an emptyDir with medium: Memory there",
        ),
    );
}

/// Every golden MPIJob, as rdmagen writes it, is clean under the MPIJob rules:
/// slots = GPUs, -np = the world, every worker variable forwarded.
#[test]
fn golden_mpijobs_lint_clean() {
    let root = crate::support::root();
    let mut linted = 0;
    for entry in walkdir::WalkDir::new(root.join("golden")).sort_by_file_name() {
        let path = entry.unwrap().into_path();
        if path.file_name().is_none_or(|n| n != "mpijob.yaml") {
            continue;
        }
        let golden = path.strip_prefix(&root).unwrap().display().to_string();
        assert_eq!(lint(&[&golden]), (Some(0), vec![]), "{golden}");
        linted += 1;
    }
    // The mpijob-* examples' five, the Kueue example's, the preflight example's and
    // the smoke test's.
    assert_eq!(linted, 8, "golden MPIJobs linted");
}

/// Public nccl-tests MPIJobs (tests/lint/public/SOURCE.md), byte for byte as
/// published: no error, and exactly the warnings SOURCE.md explains.
#[test]
fn public_nccl_tests_mpijobs_lint_without_an_error() {
    let dir = "tests/lint/public";
    assert_eq!(crate::trainer_crd::recorded_hashes_match(dir), 3);
    let at = |file: &str| format!("{dir}/{file}");
    assert_eq!(lint(&[&at("aws-nccl-tests.yaml")]), (Some(0), vec![]));
    assert_eq!(
        lint(&[&at("dranet-aks-gb300-mpi-job.yaml")]),
        (Some(0), vec![])
    );
    let (code, found) = lint(&[&at("dranet-nccl-test-job.yaml")]);
    // IPC_LOCK on the launcher, which runs no rank, and on a worker whose container
    // lists no claim of the pod's DRA NIC.
    assert_eq!(
        (code, rules(&found)),
        (Some(0), vec![("RDG061", 33), ("RDG061", 46)])
    );
}
