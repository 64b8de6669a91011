//! Issue 29, item 7: seed points held to the letter, each as a case that fires and its
//! fixed twin.

use crate::support::{rdmagen, text};

fn file(body: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    std::io::Write::write_all(&mut file, body.as_bytes()).unwrap();
    file
}

fn job(platform: &str, per_node: u32, gpus: u32, run: &str) -> tempfile::NamedTempFile {
    file(&format!(
        "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {{name: j}}
spec:
  pool: p
  image: img:1
  nodes: 2
  gpusPerNode: {gpus}
{run}
---
apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {{name: p}}
spec:
  platform: {platform}
  gpu: {{perNode: {per_node}}}
  network: {{fabric: ib, hcas: [mlx5_1, mlx5_2], socketIfname: eth0}}
"
    ))
}

/// The `rdma = ` line of `render --explain`.
fn rdma_decision(f: &tempfile::NamedTempFile) -> String {
    let out = rdmagen(&["render", f.path().to_str().unwrap(), "--explain"]);
    text(&out.stdout)
        .lines()
        .chain(text(&out.stderr).lines())
        .find(|l| l.trim_start().starts_with("rdma = "))
        .unwrap_or_else(|| panic!("{}{}", text(&out.stdout), text(&out.stderr)))
        .trim()
        .to_owned()
}

/// Seed 000: "RDMA 配置在规格为 8 卡时自动开启、小于 8 卡时自动关闭": the spec is the
/// job's, so an 8-GPU job on a 16-GPU node gets RDMA, and 4 GPUs do not.
#[test]
fn aistudio_turns_rdma_on_at_8_gpus_whatever_the_node_holds() {
    let on = rdma_decision(&job("aistudio", 16, 8, "  script: t.py"));
    assert!(on.starts_with("rdma = on:"), "{on}");
    assert!(on.contains("from 8 GPUs per pod"), "{on}");
    let off = rdma_decision(&job("aistudio", 16, 4, "  script: t.py"));
    assert!(off.starts_with("rdma = off:"), "{off}");
    // A node of fewer than 8 GPUs: a whole node is the largest spec it has.
    let whole = rdma_decision(&job("aistudio", 4, 4, "  script: t.py"));
    assert!(whole.starts_with("rdma = on:"), "{whole}");
}

/// Seed 001: processes started through sh may not inherit what CCE injects into
/// PID 1. render and validate say it, as lint does (RDG035); exec form is silent.
#[test]
fn a_cce_job_through_sh_c_is_told_at_render_and_validate() {
    let shell = job(
        "cce",
        8,
        8,
        "  launcher: none\n  command: [/bin/sh, -c, \"python -m torch.distributed.launch main.py\"]",
    );
    let exec = job(
        "cce",
        8,
        8,
        "  launcher: none\n  command: [python, main.py]",
    );
    let message = "processes started through `sh -c` may not inherit the NCCL variables Baidu CCE injects into PID 1";
    for command in ["render", "validate"] {
        let out = rdmagen(&[command, shell.path().to_str().unwrap()]);
        let said = text(&out.stdout) + &text(&out.stderr);
        assert!(
            said.contains(&format!("info[RDG035]: {message}")),
            "{command}: {said}"
        );
        assert_eq!(out.status.code(), Some(0), "{command}: {said}");
        let out = rdmagen(&[command, exec.path().to_str().unwrap()]);
        let said = text(&out.stdout) + &text(&out.stderr);
        assert!(!said.contains("RDG035"), "{command}: {said}");
    }
}
