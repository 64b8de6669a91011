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
    let shell = |message: &str| ("RDG035".to_owned(), 18, message.to_owned());
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
                    20,
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
