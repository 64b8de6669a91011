//! `rdmagen smoke-test`: golden outputs for every pool in examples/smoke/ and every
//! tool, the pod shape a real job on the same pool gets, validation like any
//! rendered job, the scripts it ships, and bad input.
//!
//! A pool file `examples/smoke/<pool>.yaml` (its one Pool named `<pool>`) gets its
//! goldens in `golden/smoke/<pool>/<tool>/`, the tree `smoke-test -o` writes; adding
//! a pool file (a Trainer v2 pool, say) adds its goldens. After an intended change,
//! re-bless with `RDMAGEN_BLESS=1 cargo test --test cli smoke` and review the diff.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

use rdmagen::kubeflow::trainer::effective_pod;
use rdmagen::kubeflow::trainer::{NODE, Release};
use rdmagen::version::Version;

use crate::support::{rdmagen, root, text, tree};

/// The tools, with the flags each needs (perftest names its image).
const TOOLS: [(&str, &[&str]); 2] = [
    ("nccl", &[]),
    (
        "perftest",
        &["--image", "registry.example.com/rdma-diagnostics:1.0"],
    ),
];

/// What the smoke test adds to a real job's pods, and nothing else (README: Verify the
/// network before you train). The one list [`without_smoke_additions`] takes out.
struct Additions {
    /// The script's volume and its mount in the training container, from the test's
    /// own ConfigMap (none under mpirun, whose program is the image's all_reduce_perf).
    script_volume: &'static str,
    /// NCCL logging, and NCCL_ALGO=Ring where forced: in the training container, and
    /// in an MPIJob's launcher, which forwards them to every rank.
    env: [&'static str; 3],
    /// The training container's fields that say how it starts: the script, or under
    /// mpirun the launcher's mpirun line (an MPIJob's workers have none at all).
    container: [&'static str; 2],
    /// The job's suppression of RDG047 for its NCCL_ALGO=Ring, a job annotation that
    /// lands on the pods as every job annotation does.
    annotations: [&'static str; 1],
}

const ADDITIONS: Additions = Additions {
    script_volume: "rdmagen-smoke",
    env: ["NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_ALGO"],
    container: ["command", "args"],
    annotations: ["rdmagen.io/ignore"],
};
const SCRIPT_VOLUME: &str = ADDITIONS.script_volume;

/// Every pool file of examples/smoke/, as (pool name, path from the root), sorted.
fn pools() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(root().join("examples/smoke"))
        .expect("examples/smoke exists")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|f| f.strip_suffix(".yaml").map(str::to_owned))
        .map(|stem| {
            let path = format!("examples/smoke/{stem}.yaml");
            let docs = documents(&std::fs::read_to_string(root().join(&path)).unwrap());
            assert!(
                matches!(docs.as_slice(), [pool] if pool["kind"] == "Pool" && pool["metadata"]["name"] == stem.as_str()),
                "{path} must hold one Pool named {stem}"
            );
            (stem, path)
        })
        .collect();
    out.sort();
    assert!(out.len() >= 2, "examples/smoke holds an IB and a RoCE pool");
    out
}

fn documents(text: &str) -> Vec<Value> {
    rdmagen::verify::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// `rdmagen smoke-test` for `pool` and `tool`, with `extra` arguments.
fn smoke(pool: &(String, String), tool: (&str, &[&str]), extra: &[&str]) -> Output {
    let mut args = vec![
        "smoke-test",
        "--pool",
        pool.0.as_str(),
        "--pools",
        pool.1.as_str(),
        "--tool",
        tool.0,
    ];
    args.extend(tool.1);
    args.extend(extra);
    rdmagen(&args)
}

fn golden_dir(pool: &str, tool: &str) -> PathBuf {
    root().join("golden/smoke").join(pool).join(tool)
}

/// Each pool × tool: `smoke-test -o` writes exactly its golden tree, and stdout holds
/// the same documents, the ConfigMap first. With RDMAGEN_BLESS set, the goldens are
/// written instead (by the tool, through -o).
#[test]
fn smoke_tests_match_golden_files() {
    let bless = std::env::var_os("RDMAGEN_BLESS").is_some();
    let mut expected = Vec::new();
    for pool in pools() {
        for tool in TOOLS {
            let golden = golden_dir(&pool.0, tool.0);
            expected.push(format!("{}/{}", pool.0, tool.0));
            let scratch = tempfile::tempdir().unwrap();
            let dir = match bless {
                true => golden.clone(),
                false => scratch.path().join("out"),
            };
            let out = smoke(&pool, tool, &["-o", dir.to_str().unwrap()]);
            assert!(
                out.status.success(),
                "{pool:?} {}: {}",
                tool.0,
                text(&out.stderr)
            );
            assert!(
                text(&out.stderr).starts_with("smoke test rdmagen-smoke-"),
                "{}",
                text(&out.stderr)
            );
            let written = tree(&dir);
            if !bless {
                assert_eq!(
                    written,
                    tree(&golden),
                    "golden/smoke/{}/{} differs from what smoke-test writes; re-bless with RDMAGEN_BLESS=1 cargo test --test cli smoke if intended",
                    pool.0,
                    tool.0
                );
            }
            let out = smoke(&pool, tool, &[]);
            assert!(out.status.success(), "{}", text(&out.stderr));
            assert_eq!(text(&out.stderr), "", "a clean run says nothing on stderr");
            let streamed = documents(&text(&out.stdout));
            assert_eq!(
                streamed[0]["kind"], "ConfigMap",
                "the ConfigMap comes first"
            );
            let mut on_disk: Vec<String> = written
                .iter()
                .filter(|(path, _)| path.ends_with(".yaml"))
                .flat_map(|(_, bytes)| documents(&String::from_utf8_lossy(bytes)))
                .map(|d| d.to_string())
                .collect();
            let mut streamed: Vec<String> = streamed.iter().map(Value::to_string).collect();
            on_disk.sort();
            streamed.sort();
            assert_eq!(streamed, on_disk, "stdout and -o hold the same documents");
        }
    }
    let mut found = Vec::new();
    for pool in std::fs::read_dir(root().join("golden/smoke")).unwrap() {
        let pool = pool.unwrap();
        for tool in std::fs::read_dir(pool.path()).unwrap() {
            found.push(format!(
                "{}/{}",
                pool.file_name().to_string_lossy(),
                tool.unwrap().file_name().to_string_lossy()
            ));
        }
    }
    found.sort();
    expected.sort();
    assert_eq!(
        found, expected,
        "golden/smoke holds a test no pool file makes"
    );
}

/// The pod templates of rendered documents, by where they are, in document order.
/// PyTorchJob (kubeflow.org/v1): each replica's template. A TrainingRuntime or
/// ClusterTrainingRuntime (Trainer v2): each replicated job's pod template. A kind
/// not taught here fails the test rather than being skipped: a TrainJob carries its
/// part of the pods as `spec.trainer` and patches, which the comparison must learn.
fn pod_templates(docs: &[Value]) -> Vec<(String, Value)> {
    // A TrainJob's pods are its runtime's `node` pod with the TrainJob merged in, as
    // Trainer's controller does it (rdmagen::plan::trainer::effective).
    let runtime_pods: Vec<(&Value, Value)> = docs
        .iter()
        .filter(|d| {
            matches!(
                d["kind"].as_str(),
                Some("TrainingRuntime" | "ClusterTrainingRuntime")
            )
        })
        .map(|d| {
            let node = d["spec"]["template"]["spec"]["replicatedJobs"]
                .as_array()
                .unwrap()
                .iter()
                .find(|j| j["name"] == "node")
                .expect("a runtime's replicated job `node`");
            (
                &d["metadata"]["name"],
                node["template"]["spec"]["template"].clone(),
            )
        })
        .collect();
    let mut out = Vec::new();
    for doc in docs {
        let kind = doc["kind"].as_str().unwrap_or_default();
        match kind {
            "ConfigMap" | "TrainingRuntime" | "ClusterTrainingRuntime" => {}
            "PyTorchJob" | "MPIJob" => {
                let key = match kind {
                    "MPIJob" => "mpiReplicaSpecs",
                    _ => "pytorchReplicaSpecs",
                };
                let replicas = doc["spec"][key].as_object().unwrap();
                for (role, replica) in replicas {
                    out.push((format!("{kind} {role}"), replica["template"].clone()));
                }
            }
            "TrainJob" => {
                let spec = &doc["spec"];
                let (_, base) = runtime_pods
                    .iter()
                    .find(|(name, _)| **name == spec["runtimeRef"]["name"])
                    .expect("the TrainJob's runtime is in the same stream");
                // Which release the TrainJob is for shows in how it patches pods.
                let minor = if spec.get("podTemplateOverrides").is_some() {
                    1
                } else {
                    3
                };
                let target = Release::new(Version::new(2, minor));
                out.push((
                    format!("{kind} node"),
                    effective_pod(NODE, base, spec, target),
                ));
            }
            other => {
                panic!("pod_templates: teach this test where a `{other}` keeps its pods' shape")
            }
        }
    }
    out
}

/// Remove a mutable list's items that `drop` matches; how many went.
fn remove(list: &mut Value, drop: impl Fn(&Value) -> bool) -> usize {
    let Some(items) = list.as_array_mut() else {
        return 0;
    };
    let before = items.len();
    items.retain(|item| !drop(item));
    let (removed, empty) = (before - items.len(), items.is_empty());
    if empty {
        *list = Value::Null;
    }
    removed
}

/// How a pod template starts its training container, which tells the additions
/// apart: by the script it mounts, by mpirun's line (an MPIJob's launcher), or not at
/// all (an MPIJob's worker: the controller starts sshd in its first container).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Start {
    Script,
    Mpirun,
    Sshd,
}

fn start_of(at: &str, mounts_script: bool) -> Start {
    match (
        at.ends_with("MPIJob Launcher"),
        at.ends_with("MPIJob Worker"),
    ) {
        (true, _) => Start::Mpirun,
        (_, true) => Start::Sshd,
        _ => {
            assert!(
                mounts_script,
                "{at}: a torchrun or perftest pod mounts its script"
            );
            Start::Script
        }
    }
}

/// A pod template without [`ADDITIONS`], and the name of its training container: the
/// one that mounts the script, else (an MPIJob, whose controller takes each
/// template's first container) the first.
fn without_smoke_additions(mut template: Value, at: &str, start: Start) -> (Value, String) {
    if let Some(annotations) = template["metadata"]["annotations"].as_object_mut() {
        for key in ADDITIONS.annotations {
            annotations.remove(key);
        }
    }
    let spec = &mut template["spec"];
    let removed = remove(&mut spec["volumes"], |v| v["name"] == SCRIPT_VOLUME);
    assert_eq!(
        removed,
        usize::from(start == Start::Script),
        "{at}: the script volume"
    );
    let containers = spec["containers"].as_array_mut().unwrap();
    let training = match start {
        Start::Script => {
            let mut mounting = None;
            for container in containers.iter_mut() {
                if remove(&mut container["volumeMounts"], |m| {
                    m["name"] == SCRIPT_VOLUME
                }) == 1
                {
                    mounting = Some(container);
                }
            }
            mounting.unwrap_or_else(|| panic!("{at}: no container mounts the script"))
        }
        Start::Mpirun | Start::Sshd => &mut containers[0],
    };
    let map = training.as_object_mut().unwrap();
    let started = ADDITIONS
        .container
        .iter()
        .filter(|field| map.remove(**field).is_some())
        .count();
    assert_eq!(
        started > 0,
        start != Start::Sshd,
        "{at}: the smoke test's command (an MPIJob's workers have none: sshd)"
    );
    let name = map["name"].as_str().unwrap().to_owned();
    remove(&mut training["env"], |e| {
        ADDITIONS
            .env
            .contains(&e["name"].as_str().unwrap_or_default())
    });
    (strip_nulls(template), name)
}

/// A real job's pod template without its training container's command.
fn without_command(mut template: Value, container: &str) -> Value {
    for c in template["spec"]["containers"].as_array_mut().unwrap() {
        if c["name"] == container {
            let map = c.as_object_mut().unwrap();
            for field in ADDITIONS.container {
                map.remove(field);
            }
        }
    }
    strip_nulls(template)
}

/// Lists emptied by [`remove`] are gone, as if never written.
fn strip_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, strip_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_nulls).collect()),
        other => other,
    }
}

/// The acceptance: a smoke test's pod template is what a real job on the same pool
/// (same name, nodes, GPUs and image, and `launcher: mpirun` where the test is an
/// MPIJob) gets through `rdmagen render`, once [`ADDITIONS`] are taken out: the script
/// volume and its mount, the command, and NCCL_DEBUG, NCCL_DEBUG_SUBSYS and
/// NCCL_ALGO. Nothing else differs: resources, the RDMA resource, IPC_LOCK,
/// /dev/shm, the pool's NCCL variables, the scheduler, node placement; on an MPI pool
/// both the workers and the launcher.
#[test]
fn the_pod_template_is_a_real_jobs() {
    let scratch = tempfile::tempdir().unwrap();
    for pool in pools() {
        for tool in TOOLS {
            let out = smoke(&pool, tool, &[]);
            assert!(out.status.success(), "{}", text(&out.stderr));
            let smoke_docs = documents(&text(&out.stdout));
            let job = smoke_docs
                .iter()
                .find(|d| {
                    matches!(
                        d["kind"].as_str(),
                        Some("PyTorchJob" | "TrainJob" | "MPIJob")
                    )
                })
                .unwrap();
            let name = job["metadata"]["name"].as_str().unwrap();
            let mpi = job["kind"] == "MPIJob";
            let config_map = &smoke_docs[0];
            // The ConfigMap's one script; under mpirun it holds none.
            let script = config_map["data"]
                .as_object()
                .and_then(|data| data.keys().next().cloned());
            assert_eq!(
                script.is_none(),
                mpi,
                "{name}: a script unless under mpirun"
            );
            let templates = pod_templates(&smoke_docs);
            assert!(!templates.is_empty());
            let ranks = templates
                .iter()
                .map(|(_, t)| &t["spec"]["containers"][0])
                .find(|c| !c["resources"]["limits"]["nvidia.com/gpu"].is_null())
                .unwrap();
            let image = ranks["image"].as_str().unwrap();
            let gpus = ranks["resources"]["limits"]["nvidia.com/gpu"]
                .as_str()
                .unwrap();
            let launcher = if mpi { "  launcher: mpirun\n" } else { "" };
            let real = scratch.path().join(format!("{name}.yaml"));
            // In the smoke test's namespace (its pool's), like a real job on the pool.
            let namespace = match job["metadata"]["namespace"].as_str() {
                Some(ns) => format!(", namespace: {ns}"),
                None => String::new(),
            };
            std::fs::write(
                &real,
                format!(
                    "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {{name: {name}{namespace}}}\nspec:\n  pool: {}\n  image: {image}\n  nodes: 2\n  gpusPerNode: {gpus}\n{launcher}  script: train.py\n",
                    pool.0
                ),
            )
            .unwrap();
            let rendered = rdmagen(&["render", real.to_str().unwrap(), "--pools", &pool.1]);
            assert!(rendered.status.success(), "{}", text(&rendered.stderr));
            let real_templates = pod_templates(&documents(&text(&rendered.stdout)));
            assert_eq!(
                templates.iter().map(|(at, _)| at).collect::<Vec<_>>(),
                real_templates.iter().map(|(at, _)| at).collect::<Vec<_>>(),
                "{name}: the same pods"
            );
            for ((at, smoke), (_, real)) in templates.into_iter().zip(real_templates) {
                let at = format!("{name} {at}");
                let start = start_of(&at, script.is_some());
                let command = smoke["spec"]["containers"][0]["command"].to_string();
                match (start, &script) {
                    (Start::Script, Some(script)) => {
                        // The script is mounted, from this test's own ConfigMap.
                        let volume = smoke["spec"]["volumes"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .find(|v| v["name"] == SCRIPT_VOLUME)
                            .unwrap_or_else(|| panic!("{at}: no script volume"));
                        assert_eq!(volume["configMap"]["name"], name, "{at}");
                        assert!(
                            command.contains(&format!("/rdmagen-smoke/{script}")),
                            "{at}: {command}"
                        );
                    }
                    // mpirun starts nccl-tests' binary with the sweep, one GPU a rank.
                    (Start::Mpirun, _) => assert!(
                        command.contains(
                            "\"/opt/nccl_tests/build/all_reduce_perf\",\"-b\",\"8\",\"-e\",\"2147483648\",\"-f\",\"4\",\"-g\",\"1\""
                        ),
                        "{at}: {command}"
                    ),
                    (Start::Sshd, _) => assert_eq!(command, "null", "{at}"),
                    (Start::Script, None) => unreachable!(),
                }
                let (smoke, container) = without_smoke_additions(smoke, &at, start);
                let real = without_command(real, &container);
                assert_eq!(
                    smoke, real,
                    "{at}: beyond its documented additions, the smoke test's pods differ from a real job's"
                );
            }
        }
    }
}

/// The output validates like any rendered job: it went through verify (schemas, the
/// webhook's rules, the plan) before it was printed, every golden PyTorchJob passes
/// the upstream CRD (tests/cli/golden.rs checks all of golden/, this directory
/// included), `lint` finds nothing (the nccl test's NCCL_ALGO=Ring is waived by the
/// job's own `rdmagen.io/ignore` annotation, which lint reads on the output: without
/// it, RDG047 on NCCL_ALGO is all lint finds), and every ConfigMap passes Kubernetes'
/// rules for ConfigMaps.
#[test]
fn smoke_tests_validate_like_rendered_jobs() {
    let out = rdmagen(&["lint", "golden/smoke", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["findings"], serde_json::json!([]), "{report:#}");
    // The same files without the waiver (its key renamed, so that no map is left
    // empty).
    let dir = tempfile::tempdir().unwrap();
    let mut waived = 0;
    for (path, bytes) in tree(&root().join("golden/smoke")) {
        let body = String::from_utf8(bytes).unwrap_or_default();
        let kept = body.replace(
            "rdmagen.io/ignore: \"RDG047 ",
            "example.com/note: \"RDG047 ",
        );
        waived += usize::from(kept != body);
        let file = dir.path().join(&path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, kept).unwrap();
    }
    assert_eq!(waived, pools().len(), "each nccl test's manifest is waived");
    let out = rdmagen(&["lint", dir.path().to_str().unwrap(), "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let findings = report["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    for finding in findings {
        assert_eq!(finding["rule"], "RDG047", "{finding:#}");
        assert!(
            finding["message"]
                .as_str()
                .unwrap()
                .starts_with("NCCL_ALGO "),
            "{finding:#}"
        );
    }
    let mut pytorchjobs = 0;
    let mut config_maps = 0;
    for (path, bytes) in tree(&root().join("golden/smoke")) {
        let docs = documents(&String::from_utf8(bytes).unwrap_or_default());
        if path.ends_with("/pytorchjob.yaml") {
            pytorchjobs += docs.len();
        }
        for doc in docs.iter().filter(|d| d["kind"] == "ConfigMap") {
            let problems = rdmagen::kubernetes::config_map::problems(doc);
            assert!(problems.is_empty(), "{path}: {problems:?}");
            config_maps += 1;
        }
    }
    assert!(
        pytorchjobs >= 2,
        "golden/smoke holds PyTorchJobs for the CRD check"
    );
    assert_eq!(config_maps, pools().len() * TOOLS.len());
}

/// Every script of the golden ConfigMaps, as (file name, text).
fn scripts() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, bytes) in tree(&root().join("golden/smoke")) {
        if !path.ends_with("/configmap.yaml") {
            continue;
        }
        for doc in documents(&String::from_utf8(bytes).unwrap()) {
            // Under mpirun the ConfigMap holds no script.
            for (file, script) in doc["data"].as_object().into_iter().flatten() {
                out.push((file.clone(), script.as_str().unwrap().to_owned()));
            }
        }
    }
    assert!(out.iter().any(|(f, _)| f.ends_with(".py")));
    assert!(out.iter().any(|(f, _)| f.ends_with(".sh")));
    out
}

/// python3, or None with the reason printed; in CI (`CI` set) it is required.
fn python3() -> Option<&'static str> {
    let found = Command::new("python3").arg("--version").output();
    if found.is_ok_and(|o| o.status.success()) {
        return Some("python3");
    }
    let ci = std::env::var("CI").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"));
    assert!(
        !ci,
        "CI is set and python3 is not on PATH: the smoke test's script must be checked"
    );
    println!("skipped: python3 is not on PATH (required when CI is set)");
    None
}

/// The scripts the ConfigMaps carry parse: `python3 -m py_compile` and `bash -n`.
#[test]
fn the_scripts_parse() {
    let scratch = tempfile::tempdir().unwrap();
    let python = python3();
    for (i, (file, script)) in scripts().into_iter().enumerate() {
        let path = scratch.path().join(format!("{i}-{file}"));
        std::fs::write(&path, &script).unwrap();
        let check = if file.ends_with(".py") {
            let Some(python) = python else { continue };
            Command::new(python)
                .args(["-m", "py_compile"])
                .arg(&path)
                .env("PYTHONPYCACHEPREFIX", scratch.path().join("pycache"))
                .output()
        } else {
            Command::new("bash").arg("-n").arg(&path).output()
        };
        let check = check.expect("the checker runs");
        assert!(check.status.success(), "{file}: {}", text(&check.stderr));
    }
}

/// The all-reduce script, run as rank 0 of 2 against a stand-in torch
/// (tests/smoke/fake_torch), prints nccl-tests' all_reduce_perf table exactly:
/// header, `%12li  %12li  %8s  %6s  %6s` rows with both placements, footer.
#[test]
fn the_nccl_script_prints_the_nccl_tests_table() {
    let Some(python) = python3() else { return };
    let scratch = tempfile::tempdir().unwrap();
    let (_, script) = scripts()
        .into_iter()
        .find(|(f, _)| f == "allreduce.py")
        .unwrap();
    let path = scratch.path().join("allreduce.py");
    std::fs::write(&path, script).unwrap();
    let out = Command::new(python)
        .arg(&path)
        .args(["--max-bytes", "2097152"])
        .env("PYTHONPATH", root().join("tests/smoke/fake_torch"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("NCCL_ALGO", "Ring")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    let lines: Vec<&str> = printed.lines().collect();
    // nccl-tests src/util.cu writeResultHeader, byte for byte.
    let header = [
        "#                                                              out-of-place                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong ",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         ",
    ];
    let at = lines
        .iter()
        .position(|l| *l == header[0])
        .unwrap_or_else(|| panic!("no header:\n{printed}"));
    assert_eq!(lines[at + 1], header[1]);
    assert_eq!(lines[at + 2], header[2]);
    let rows: Vec<&str> = lines[at + 3..]
        .iter()
        .take_while(|l| !l.starts_with('#'))
        .copied()
        .collect();
    let sizes: Vec<u64> = (0..10)
        .map(|k| 8 * 4u64.pow(k))
        .filter(|s| *s <= 2097152)
        .collect();
    assert_eq!(rows.len(), sizes.len(), "{printed}");
    for (row, size) in rows.iter().zip(&sizes) {
        let fixed = format!(
            "{size:>12}  {:>12}  {:>8}  {:>6}  {:>6}",
            size / 4,
            "float",
            "sum",
            -1
        );
        assert!(row.starts_with(&fixed), "{row:?} vs {fixed:?}");
        // Then per placement `  %7s  %6s  %6s  %6g`: time, algbw, busbw, #wrong (0).
        let rest = &row[fixed.len()..];
        assert_eq!(rest.len(), 2 * (2 + 7 + 2 + 6 + 2 + 6 + 2 + 6), "{row:?}");
        let cells: Vec<&str> = rest.split_whitespace().collect();
        assert_eq!(cells.len(), 8, "{row:?}");
        assert_eq!((cells[3], cells[7]), ("0", "0"), "{row:?}");
        for number in [0, 1, 2, 4, 5, 6] {
            cells[number].parse::<f64>().unwrap();
        }
    }
    let footer = &lines[at + 3 + rows.len()..];
    assert_eq!(footer[0], "# Out of bounds values : 0 OK");
    assert!(
        footer[1].starts_with("# Avg bus bandwidth    : "),
        "{}",
        footer[1]
    );
    assert_eq!(footer[2], "#");
    assert_eq!(footer[3], "# Collective test concluded: all_reduce_perf");
    assert!(printed.contains("# NCCL_ALGO=Ring\n"));
    assert!(printed.contains("2 ranks, 2 nodes"));
}

/// A fake sysfs port: link layer and GIDs (index, type, address).
fn fake_port(sysfs: &Path, device: &str, link: &str, gids: &[(u32, &str, &str)]) {
    let port = sysfs.join(device).join("ports/1");
    std::fs::create_dir_all(port.join("gid_attrs/types")).unwrap();
    std::fs::create_dir_all(port.join("gids")).unwrap();
    std::fs::write(port.join("link_layer"), format!("{link}\n")).unwrap();
    std::fs::write(port.join("rate"), "400 Gb/sec (4X NDR)\n").unwrap();
    std::fs::write(port.join("state"), "4: ACTIVE\n").unwrap();
    for (index, kind, address) in gids {
        std::fs::write(
            port.join(format!("gid_attrs/types/{index}")),
            format!("{kind}\n"),
        )
        .unwrap();
        std::fs::write(port.join(format!("gids/{index}")), format!("{address}\n")).unwrap();
    }
}

/// The perftest script, from the golden ConfigMaps, with a fake ib_write_bw and sysfs:
/// the server on rank 0, the client on rank 1 connecting to MASTER_ADDR (v1) or
/// PET_MASTER_ADDR (Trainer v2), the pool's device, and for `gidIndex: auto` the
/// lowest RoCE v2 IPv4 GID (said so), NCCL_IB_GID_INDEX first when the platform sets it.
#[test]
fn the_perftest_script_finds_its_device_and_gid() {
    let scratch = tempfile::tempdir().unwrap();
    let (_, script) = scripts()
        .into_iter()
        .find(|(f, _)| f == "ib_write_bw.sh")
        .unwrap();
    let path = scratch.path().join("ib_write_bw.sh");
    std::fs::write(&path, script).unwrap();
    let bin = scratch.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(
        bin.join("ib_write_bw"),
        "#!/bin/sh\necho \"ib_write_bw $*\"\n",
    )
    .unwrap();
    std::fs::write(bin.join("hostname"), "#!/bin/sh\necho pod\n").unwrap();
    for tool in ["ib_write_bw", "hostname"] {
        Command::new("chmod")
            .arg("+x")
            .arg(bin.join(tool))
            .status()
            .unwrap();
    }
    let sysfs = scratch.path().join("sys");
    let v4 = "0000:0000:0000:0000:0000:ffff:0a00:0048";
    let link_local = "fe80:0000:0000:0000:0000:0000:0000:0001";
    fake_port(
        &sysfs,
        "mlx5_0",
        "Ethernet",
        &[(0, "IB/RoCE v1", link_local)],
    );
    fake_port(
        &sysfs,
        "mlx5_1",
        "Ethernet",
        &[
            (0, "IB/RoCE v1", link_local),
            (1, "RoCE v2", link_local),
            (2, "IB/RoCE v1", v4),
            (3, "RoCE v2", v4),
            (11, "RoCE v2", v4),
        ],
    );
    let path_var = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = Command::new("bash");
        command
            .arg(&path)
            .args(args)
            .env_clear()
            .env("PATH", &path_var)
            .env("RDMAGEN_SMOKE_SYSFS", &sysfs);
        for (k, v) in env {
            command.env(k, v);
        }
        let out = command.output().unwrap();
        (out.status.code(), text(&out.stdout), text(&out.stderr))
    };
    let device = ["--device", "mlx5_1", "--management-nic", "mlx5_0"];
    let auto = [&device[..], &["--gid-index", "auto"]].concat();

    let (code, out, _) = run(&auto, &[("RANK", "0"), ("MASTER_ADDR", "job-master-0")]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(
            "GID index 3 (::ffff:10.0.0.72): the lowest RoCE v2 GID with an IPv4 address in sysfs"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "\nib_write_bw -d mlx5_1 -i 1 -x 3 -a -F --report_gbits -q 2 -n 5000 -p 18515\n"
        ),
        "{out}"
    );

    let (code, out, _) = run(
        &auto,
        &[
            ("PET_NODE_RANK", "1"),
            ("PET_MASTER_ADDR", "job-node-0-0.job"),
        ],
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.ends_with("-p 18515 job-node-0-0.job\n"), "{out}");

    let (_, out, _) = run(
        &auto,
        &[
            ("RANK", "1"),
            ("MASTER_ADDR", "m"),
            ("NCCL_IB_GID_INDEX", "5"),
        ],
    );
    assert!(
        out.contains(" -x 5 ") && out.contains("the platform presets it"),
        "{out}"
    );

    let (_, out, _) = run(
        &[
            "--device",
            "auto",
            "--gid-index",
            "7",
            "--management-nic",
            "mlx5_0",
        ],
        &[("RANK", "0"), ("NCCL_IB_HCA", "=mlx5_1:1,mlx5_2")],
    );
    assert!(
        out.contains("the first entry of NCCL_IB_HCA") && out.contains("-d mlx5_1 -i 1 -x 7 "),
        "{out}"
    );

    let (_, out, _) = run(
        &[
            "--device",
            "auto",
            "--gid-index",
            "none",
            "--management-nic",
            "mlx5_0",
        ],
        &[("RANK", "0")],
    );
    assert!(out.contains("-d mlx5_1 -i 1 -a "), "{out}");

    let (code, out, _) = run(
        &["--device", "mlx5_0", "--gid-index", "auto"],
        &[("RANK", "0")],
    );
    assert_eq!(code, Some(1), "no RoCE v2 IPv4 GID on mlx5_0: {out}");
    let (code, out, _) = run(
        &["--device", "mlx5_9", "--gid-index", "3"],
        &[("RANK", "0")],
    );
    assert_eq!(code, Some(1), "no such device: {out}");
    let (code, out, _) = run(&auto, &[("RANK", "2")]);
    assert_eq!(code, Some(0), "rank 2 takes no part: {out}");
    let (code, out, _) = run(&auto, &[]);
    assert_eq!(code, Some(2), "no operator variables: {out}");
}

/// Bad input is a clear error (exit 2, or 1 for a pool with errors, as `render`),
/// and nothing is written: no stdout, no output directory.
#[test]
fn bad_input_writes_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let broken = scratch.path().join("broken.yaml");
    std::fs::write(
        &broken,
        std::fs::read_to_string(root().join("examples/smoke/h100-roce-400g.yaml"))
            .unwrap()
            .replace("perNode: 8", "perNode: 0"),
    )
    .unwrap();
    let broken = broken.to_str().unwrap().to_owned();
    let roce = "examples/smoke/h100-roce-400g.yaml";
    let trainer = "examples/smoke/h100-trainer-roce.yaml";
    let cases: [(&[&str], i32, &str); 13] = [
        (
            &["--pool", "h100-roce-40g", "--pools", roce],
            2,
            "no such pool in examples/smoke/h100-roce-400g.yaml; pools there: h100-roce-400g (did you mean h100-roce-400g?)",
        ),
        (
            &["--pool", "h100-roce-400g", "--pools", roce, "--nodes", "0"],
            2,
            "--nodes 0: the network is tested between nodes",
        ),
        (
            &["--pool", "h100-roce-400g", "--pools", roce, "--nodes", "1"],
            2,
            "needs at least 2",
        ),
        (
            &["--pool", "h100-roce-400g", "--pools", roce, "--gpus", "9"],
            2,
            "--gpus 9: pool `h100-roce-400g` has 8 GPUs per node",
        ),
        (
            &["--pool", "h100-roce-400g", "--pools", roce, "--gpus", "0"],
            2,
            "--gpus 0",
        ),
        (
            &[
                "--pool",
                "h100-roce-400g",
                "--pools",
                roce,
                "--tool",
                "perftest",
            ],
            2,
            "--tool perftest needs --image",
        ),
        (
            &[
                "--pool",
                "h100-roce-400g",
                "--pools",
                roce,
                "--tool",
                "perftest",
                "--image",
                "i:1",
                "--nodes",
                "3",
            ],
            2,
            "between two pods",
        ),
        (
            &[
                "--pool",
                "t4-tcp",
                "--pools",
                "examples/tcp-only/pool.yaml",
                "--tool",
                "perftest",
                "--image",
                "i:1",
            ],
            2,
            "fabric tcp",
        ),
        (&["--pool", "h100-roce-400g"], 2, "needs the pools"),
        (
            &[
                "--pool",
                "h100-roce-400g",
                "--pools",
                roce,
                "--launcher",
                "mpirun",
            ],
            2,
            "--launcher mpirun runs nccl-tests as an MPIJob, and pool `h100-roce-400g` does not say the mpi-operator is installed (it sets no target.mpiOperator): where it is, set the pool's spec.target.mpiOperator to its release, e.g. \"0.8\"; or leave out --launcher for the torchrun form\n",
        ),
        (
            &[
                "--pool",
                "h100-trainer-roce",
                "--pools",
                trainer,
                "--launcher",
                "mpirun",
            ],
            2,
            "--launcher mpirun runs nccl-tests as an MPIJob, and pool `h100-trainer-roce` targets Kubeflow Trainer v2, whose MPI runtime (mlPolicy.mpi) rdmagen does not write yet: use a PyTorchJob-API pool with target.mpiOperator; or leave out --launcher for the torchrun form\n",
        ),
        (
            &[
                "--pool",
                "h100-roce-400g",
                "--pools",
                roce,
                "--tool",
                "perftest",
                "--image",
                "i:1",
                "--launcher",
                "torchrun",
            ],
            2,
            "--launcher torchrun: chooses how --tool nccl starts its ranks; --tool perftest runs one ib_write_bw in each of two pods\n",
        ),
        (
            &["--pool", "h100-roce-400g", "--pools", &broken],
            1,
            "pool `h100-roce-400g` failed to load",
        ),
    ];
    for (args, code, said) in cases {
        let dir = scratch.path().join("out");
        let mut all = vec!["smoke-test"];
        all.extend(args);
        all.extend(["-o", dir.to_str().unwrap()]);
        let out = rdmagen(&all);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(said),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(!dir.exists(), "{args:?}: wrote {}", dir.display());
        all.truncate(all.len() - 2);
        let out = rdmagen(&all);
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        assert_eq!(text(&out.stdout), "", "{args:?}: printed a manifest");
    }
    // A pool whose jobs get no RDMA device cannot run ib_write_bw (AIStudio: RDMA on
    // whole nodes only).
    let out = rdmagen(&[
        "smoke-test",
        "--pool",
        "a800-roce",
        "--pools",
        "examples/aistudio-roce-4gpu-forced/pool.yaml",
        "--tool",
        "perftest",
        "--image",
        "i:1",
        "--gpus",
        "4",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("gets no RDMA device"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(text(&out.stdout), "");
}

/// The pool decides the `nccl` test's launcher unless `--launcher` does: on a pool
/// with target.mpiOperator the test is an MPIJob by default and when asked, the same
/// MPIJob either way; `--launcher torchrun` there gives exactly the PyTorchJob of the
/// same pool without the mpi-operator. Only the ConfigMap's note of why differs.
#[test]
fn the_launcher_is_the_pools_unless_asked() {
    let mpi = (
        "h100-roce-400g-mpi".to_owned(),
        "examples/smoke/h100-roce-400g-mpi.yaml".to_owned(),
    );
    let nccl = TOOLS[0];
    let run = |pool: &(String, String), extra: &[&str]| -> (Vec<Value>, Value) {
        let out = smoke(pool, nccl, extra);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{extra:?}: {}",
            text(&out.stderr)
        );
        let mut docs = documents(&text(&out.stdout));
        let config_map = docs.remove(0);
        assert_eq!(config_map["kind"], "ConfigMap");
        (docs, config_map)
    };
    let launcher_note = |config_map_text: &str| -> String {
        config_map_text
            .lines()
            .find(|l| l.starts_with("#   launcher = "))
            .unwrap_or_else(|| panic!("no launcher note:\n{config_map_text}"))
            .to_owned()
    };
    let stdout = |pool: &(String, String), extra: &[&str]| text(&smoke(pool, nccl, extra).stdout);

    let (default, _) = run(&mpi, &[]);
    let kinds: Vec<&str> = default
        .iter()
        .map(|d| d["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["MPIJob"]);
    assert_eq!(
        launcher_note(&stdout(&mpi, &[])),
        "#   launcher = mpirun: pool `h100-roce-400g-mpi` has the mpi-operator (target.mpiOperator): nccl-tests' all_reduce_perf, the standard measure of a fabric, one rank per GPU, as an MPIJob; --launcher torchrun for the torchrun form"
    );
    let (asked, _) = run(&mpi, &["--launcher", "mpirun"]);
    assert_eq!(asked, default, "--launcher mpirun is the pool's own choice");
    assert_eq!(
        launcher_note(&stdout(&mpi, &["--launcher", "mpirun"])),
        "#   launcher = mpirun: asked with --launcher mpirun: nccl-tests' all_reduce_perf, one rank per GPU, as an MPIJob"
    );

    let (forced, config_map) = run(&mpi, &["--launcher", "torchrun"]);
    assert!(config_map["data"]["allreduce.py"].is_string());
    let scratch = tempfile::tempdir().unwrap();
    let without = scratch.path().join("h100-roce-400g-mpi.yaml");
    let pool_text = std::fs::read_to_string(root().join(&mpi.1)).unwrap();
    let plain = pool_text.replace(", mpiOperator: \"0.8\"", "");
    assert_ne!(plain, pool_text);
    std::fs::write(&without, plain).unwrap();
    let without = (mpi.0.clone(), without.to_str().unwrap().to_owned());
    let (torchrun, _) = run(&without, &[]);
    assert_eq!(
        forced, torchrun,
        "the PyTorchJob of the pool without the mpi-operator"
    );
    assert_eq!(forced[0]["kind"], "PyTorchJob");
    assert_eq!(
        launcher_note(&stdout(&mpi, &["--launcher", "torchrun"])),
        "#   launcher = torchrun: asked with --launcher torchrun: the test's all-reduce script (torch.distributed), one process per GPU"
    );
    assert_eq!(
        launcher_note(&stdout(&without, &[])),
        "#   launcher = torchrun: pool `h100-roce-400g-mpi` does not say the mpi-operator is installed (it sets no target.mpiOperator), so the test's all-reduce script (torch.distributed) runs under torchrun, one process per GPU, printing all_reduce_perf's table"
    );
}
