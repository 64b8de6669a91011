//! Issue 29 (seed 001's Swin case): what each launcher passes a script of its local
//! rank, and the form a job says its script reads reaching it, whichever launcher runs
//! it. Swin-Transformer's main.py declares `--local_rank` as required; torchrun passes
//! only LOCAL_RANK, and torch.distributed.launch passes `--local_rank=N` before
//! PyTorch 2.0 and `--local-rank=N` from 2.0 (torch/distributed/run.py
//! config_from_args at v1.13.1 and v2.0.0), unless --use_env.

use crate::support::{rdmagen, text};

fn job(launcher: &str, local_rank: Option<&str>) -> tempfile::NamedTempFile {
    let local_rank = local_rank
        .map(|f| format!("  localRank: \"{f}\"\n"))
        .unwrap_or_default();
    let body = format!(
        "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {{name: swin}}
spec:
  pool: p
  image: img:1
  nodes: 2
  gpusPerNode: 8
  launcher: {launcher}
{local_rank}  script: main.py
  args: [--cfg, c.yaml]
---
apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {{name: p}}
spec:
  gpu: {{perNode: 8}}
  target: {{operator: \"1.9\"}}
  network: {{fabric: roce, hcas: [mlx5_1], socketIfname: eth0, gidIndex: 3}}
"
    );
    let mut file = tempfile::Builder::new().suffix(".yaml").tempfile().unwrap();
    std::io::Write::write_all(&mut file, body.as_bytes()).unwrap();
    file
}

/// (the Master's command, the `local rank` line of --explain, stderr).
fn render(launcher: &str, local_rank: Option<&str>) -> (Vec<String>, String, String) {
    let file = job(launcher, local_rank);
    let path = file.path().to_str().unwrap();
    let out = rdmagen(&["render", path]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_saphyr::from_str(
        text(&out.stdout)
            .split("\n---\n")
            .find(|d| d.contains("kind: PyTorchJob"))
            .unwrap(),
    )
    .unwrap();
    let command = doc["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
        ["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect();
    let explain = rdmagen(&["render", path, "--explain"]);
    let line = text(&explain.stdout)
        .lines()
        .chain(text(&explain.stderr).lines())
        .find(|l| l.trim_start().starts_with("local rank = "))
        .unwrap_or_else(|| panic!("no local rank decision:\n{}", text(&explain.stdout)))
        .trim()
        .to_owned();
    (command, line, text(&out.stderr))
}

const WRAPPER: &str = "exec python \"$0\" --local_rank=\"$LOCAL_RANK\" \"$@\"";

#[test]
fn torchrun_passes_only_local_rank_and_a_declared_argument_is_added() {
    let (command, explain, _) = render("torchrun", None);
    assert_eq!(command, ["torchrun", "main.py", "--cfg", "c.yaml"]);
    assert_eq!(
        explain,
        "local rank = (what the launcher passes): torchrun passes the script no local-rank argument, only the LOCAL_RANK variable; the job does not say which form its script reads (`localRank`)"
    );
    let (command, explain, _) = render("torchrun", Some("--local_rank"));
    assert_eq!(
        command,
        [
            "torchrun",
            "--no_python",
            "sh",
            "-c",
            WRAPPER,
            "main.py",
            "--cfg",
            "c.yaml"
        ]
    );
    assert!(
        explain.starts_with("local rank = --local_rank: the job says its script declares --local_rank; torchrun passes"),
        "{explain}"
    );
    let (command, _, _) = render("torchrun", Some("env"));
    assert_eq!(command, ["torchrun", "main.py", "--cfg", "c.yaml"]);
}

#[test]
fn the_legacy_launcher_is_told_to_pass_nothing_and_the_job_says_what() {
    let flags = [
        "--nproc_per_node=8",
        "--nnodes=$(WORLD_SIZE)",
        "--node_rank=$(RANK)",
        "--master_addr=$(MASTER_ADDR)",
        "--master_port=$(MASTER_PORT)",
    ];
    let legacy = ["python", "-m", "torch.distributed.launch"];
    let (command, explain, stderr) = render("legacy", None);
    let expected: Vec<&str> = legacy
        .iter()
        .chain(&flags)
        .chain(&["main.py", "--cfg", "c.yaml"])
        .copied()
        .collect();
    assert_eq!(command, expected);
    assert!(
        explain.contains("`--local_rank=N` before PyTorch 2.0 and `--local-rank=N` from 2.0"),
        "{explain}"
    );
    assert!(stderr.contains("info[RDG230]"), "{stderr}");

    let (command, _, stderr) = render("legacy", Some("--local-rank"));
    let hyphen = WRAPPER.replace("--local_rank", "--local-rank");
    let expected: Vec<&str> = legacy
        .iter()
        .chain(&["--use_env"])
        .chain(&flags)
        .chain(&[
            "--no_python",
            "sh",
            "-c",
            hyphen.as_str(),
            "main.py",
            "--cfg",
            "c.yaml",
        ])
        .copied()
        .collect();
    assert_eq!(command, expected);
    assert!(!stderr.contains("RDG230"), "{stderr}");

    let (command, _, _) = render("legacy", Some("env"));
    let expected: Vec<&str> = legacy
        .iter()
        .chain(&["--use_env"])
        .chain(&flags)
        .chain(&["main.py", "--cfg", "c.yaml"])
        .copied()
        .collect();
    assert_eq!(command, expected);
}

/// examples/seed-swin-roce is seed 001's job: its main.py gets `--local_rank`, and lint
/// of what it renders says nothing of the launch.
#[test]
fn the_seed_swin_example_passes_its_script_local_rank() {
    let golden = std::fs::read_to_string(
        crate::support::root().join("golden/seed-swin-roce/swin-large/pytorchjob.yaml"),
    )
    .unwrap();
    assert_eq!(
        golden
            .matches(WRAPPER.replace('"', "\\\"").as_str())
            .count(),
        2
    );
    let out = rdmagen(&[
        "lint",
        "golden/seed-swin-roce/swin-large/pytorchjob.yaml",
        "--format",
        "brief",
    ]);
    assert!(
        !text(&out.stdout).contains("RDG230"),
        "{}",
        text(&out.stdout)
    );
}
