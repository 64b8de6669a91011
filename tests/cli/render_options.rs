//! `--templates`, `--explain`, warnings that do not stop a render, and stdout vs -o.

use crate::support::{rdmagen, root, text, write};

const POOL_AISTUDIO_ROCE: &str = "apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: p}
spec:
  platform: aistudio
  gpu: {perNode: 8}
  network: {fabric: roce, hcas: [mlx5_1, mlx5_2], socketIfname: eth0, gidIndex: 5}
";

fn job(extra: &str) -> String {
    format!(
        "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {{name: j}}
spec:
  pool: p
  image: img:1
  nodes: 2
  gpusPerNode: 8
  script: t.py
{extra}---
{POOL_AISTUDIO_ROCE}"
    )
}

#[test]
fn explain_prints_each_decision_with_its_reason() {
    let out = rdmagen(&["render", "examples/aistudio-roce-4gpu-forced", "--explain"]);
    assert!(out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("bert-finetune (pool a800-roce):"),
        "{stderr}"
    );
    assert!(
        stderr.contains("rdma = on: the job sets rdma: on"),
        "{stderr}"
    );
    assert!(
        stderr
            .contains("env NCCL_IB_HCA = (left to the platform): the aistudio platform presets it"),
        "{stderr}"
    );
    assert!(stderr.contains("warning[RDG013]"), "{stderr}");
    // Explanations never pollute the manifest stream.
    assert!(!text(&out.stdout).contains("left to the platform"));

    let dir = tempfile::tempdir().unwrap();
    let out = rdmagen(&[
        "render",
        "examples/tcp-only",
        "--explain",
        "-o",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("rdma = off: rdma: auto and pool `t4-tcp` has no RDMA fabric"),
        "{stdout}"
    );
    assert!(stdout.contains("env NCCL_IB_DISABLE = 1"), "{stdout}");
}

#[test]
fn overriding_a_platform_preset_is_kept_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(
        dir.path(),
        "job.yaml",
        &job("  env: {NCCL_IB_HCA: mlx5_2}\n"),
    );
    let out = rdmagen(&["render", &input]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning[RDG022]: NCCL_IB_HCA is preset by the aistudio platform"),
        "{stderr}"
    );
    assert!(stderr.contains("job.yaml:10:9"), "{stderr}");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("- name: NCCL_IB_HCA\n                  value: mlx5_2\n"),
        "{stdout}"
    );
}

#[test]
fn partial_node_on_auto_turns_rdma_off() {
    let dir = tempfile::tempdir().unwrap();
    let input = write(
        dir.path(),
        "job.yaml",
        &job("").replace("gpusPerNode: 8", "gpusPerNode: 4"),
    );
    let out = rdmagen(&["render", &input]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("- name: NCCL_IB_DISABLE\n                  value: \"1\""),
        "{stdout}"
    );
    assert!(!stdout.contains("IPC_LOCK"));
    assert!(!stdout.contains("rdma/"));
    assert!(!stdout.contains("NCCL_IB_HCA"));
    // No warning for auto; the info that the job now trains over sockets (RDG186).
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(
        stderr.contains("info[RDG186]: the job spans 2 nodes on 4 of 8 GPUs each"),
        "{stderr}"
    );
}

#[test]
fn user_templates_replace_built_in_ones_and_are_verified() {
    let builtin = std::fs::read_to_string(root().join("templates/pytorchjob.yaml.j2")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let input = write(dir.path(), "job.yaml", &job(""));

    // A template that adds a label renders, and the label is there.
    let custom = dir.path().join("custom");
    std::fs::create_dir(&custom).unwrap();
    let with_label = builtin.replace(
        "  name: {{ job.name }}\n",
        "  name: {{ job.name }}\n  labels:\n    owner: {{ \"true\" }}\n",
    );
    assert_ne!(with_label, builtin);
    std::fs::write(custom.join("pytorchjob.yaml.j2"), with_label).unwrap();
    let out = rdmagen(&["render", &input, "--templates", custom.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // Quoted, or YAML would read the label value as a boolean (and "ml: platform",
    // once the value here, is no label value: RDG166).
    assert!(text(&out.stdout).contains("    owner: \"true\"\n"));

    // A template that changes the environment is caught by verification.
    let broken = dir.path().join("broken");
    std::fs::create_dir(&broken).unwrap();
    let renamed = builtin.replace(
        "{{ job.pod.template.spec|yaml(10) }}",
        "{{ job.pod.template.spec|yaml(10)|replace(\"NCCL_\", \"NCCL_X_\")|safe }}",
    );
    assert_ne!(renamed, builtin);
    std::fs::write(broken.join("pytorchjob.yaml.j2"), renamed).unwrap();
    let out = rdmagen(&["render", &input, "--templates", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("error[RDG092]: rendered pytorchjob.yaml: Master env"));
    assert!(out.stdout.is_empty());

    // An undefined variable is an error, not an empty string.
    let undefined = dir.path().join("undefined");
    std::fs::create_dir(&undefined).unwrap();
    std::fs::write(
        undefined.join("pytorchjob.yaml.j2"),
        builtin.replace("{{ job.name }}", "{{ job.nmae }}"),
    )
    .unwrap();
    let out = rdmagen(&["render", &input, "--templates", undefined.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("error[RDG093]"),
        "{}",
        text(&out.stderr)
    );
}

/// A finding on a rendered nodeSelector key points at the job's `nodeSelector:` entry,
/// not at a label of the same text written earlier in the file (issue 26: a finding's
/// location is the field it is about).
#[test]
fn a_rendered_node_selector_finding_points_at_the_node_selector_not_a_same_named_label() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.yaml");
    std::fs::write(
        &file,
        "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata:\n  name: j\n  labels:\n    \"bad key!\": v\nspec:\n  pool: p\n  image: img:1\n  nodes: 2\n  gpusPerNode: 8\n  script: t.py\n  nodeSelector:\n    \"bad key!\": v\n---\napiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {name: p}\nspec:\n  target: {operator: \"1.9\"}\n  gpu: {perNode: 8}\n  network: {fabric: roce, hcas: [mlx5_1], socketIfname: eth0, gidIndex: 3}\n",
    )
    .unwrap();
    let out = rdmagen(&["validate", "--format", "brief", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.contains("RDG166")).collect();
    assert!(!lines.is_empty(), "{stdout}");
    for line in lines {
        let at_selector = line.contains("in.yaml:14:5:");
        let at_label = line.contains("in.yaml:6:5:");
        if line.contains("/nodeSelector/") {
            assert!(at_selector, "{line}");
        } else {
            assert!(at_label, "{line}");
        }
    }
}
