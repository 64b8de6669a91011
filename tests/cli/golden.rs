//! Every example renders, validates against the upstream CRD, and matches golden/.
//!
//! After an intended change, re-bless with `RDMAGEN_BLESS=1 cargo test --test cli golden`
//! (it runs `rdmagen render --bless --prune` per example) and review the diff.

use crate::support::{examples, rdmagen, root, text, tree};

/// Each example is checked through `render --check`, the path users' CI takes; with
/// RDMAGEN_BLESS set it is blessed (and pruned) instead.
#[test]
fn examples_match_golden_files() {
    let bless = std::env::var_os("RDMAGEN_BLESS").is_some();
    let mut expected_dirs = Vec::new();
    for example in examples() {
        let name = example.file_name().unwrap().to_string_lossy().into_owned();
        let ex = format!("examples/{name}");
        let golden = format!("golden/{name}");
        let mode: &[&str] = if bless {
            &["--bless", "--prune"]
        } else {
            &["--check"]
        };
        let mut args = vec!["render", ex.as_str(), "-o", golden.as_str()];
        args.extend_from_slice(mode);
        let out = rdmagen(&args);
        assert!(
            out.status.success(),
            "{name}: golden/{name} differs from the rendered output; re-bless if intended:\n{}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        expected_dirs.push(name);
    }
    let mut found_dirs: Vec<String> = std::fs::read_dir(root().join("golden"))
        .expect("golden/ exists")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        // golden/dockerfile and golden/smoke hold other commands' goldens
        // (tests/cli/dockerfile.rs, tests/cli/smoke_test.rs).
        .filter(|name| name != "dockerfile" && name != "smoke")
        .collect();
    found_dirs.sort();
    assert_eq!(
        found_dirs, expected_dirs,
        "golden/ holds a directory no example produces"
    );
}

/// Every golden tree's ownership record lists exactly the files rdmagen wrote there,
/// each with the FNV-1a fingerprint of the bytes on disk: goldens are written by
/// `--bless`, never by hand (a hand edit would also make the next bless refuse).
#[test]
fn golden_records_list_every_file_with_its_fingerprint() {
    use std::hash::Hasher;
    let mut records = 0;
    for entry in walkdir::WalkDir::new(root().join("golden")).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.file_name() != ".rdmagen-owned" {
            continue;
        }
        records += 1;
        let dir = entry.path().parent().unwrap();
        let mut listed: Vec<(String, String)> = std::fs::read_to_string(entry.path())
            .unwrap()
            .lines()
            .filter(|line| !line.starts_with('#'))
            .map(|line| {
                let (path, fingerprint) = line.split_once('\t').expect("a fingerprint");
                (path.to_owned(), fingerprint.to_owned())
            })
            .collect();
        let mut on_disk: Vec<(String, String)> = tree(dir)
            .into_iter()
            .filter(|(rel, _)| rel != ".rdmagen-owned")
            .map(|(rel, bytes)| {
                let mut hasher = fnv::FnvHasher::default();
                hasher.write(&bytes);
                (rel, format!("fnv1a64:{:016x}", hasher.finish()))
            })
            .collect();
        listed.sort();
        on_disk.sort();
        assert_eq!(listed, on_disk, "{}", entry.path().display());
    }
    assert!(records >= 20, "only {records} golden records");
}

/// The upstream CRD's openAPIV3Schema (training-operator v1.9.0; tests/upstream/SOURCE.md).
#[test]
fn golden_manifests_validate_against_the_upstream_crd() {
    let crd = root().join("tests/upstream/pytorchjob-v1.9.0.schema.json");
    let text = std::fs::read_to_string(&crd).unwrap();
    let schema: serde_json::Value = serde_json::from_str(&text).expect("CRD schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("CRD schema compiles");
    let mut checked = 0;
    for (path, bytes) in tree(&root().join("golden")) {
        if !path.ends_with("pytorchjob.yaml") {
            continue;
        }
        let docs = rdmagen::verify::parse(&String::from_utf8(bytes).unwrap()).unwrap();
        for doc in docs {
            let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{path}: {errors:#?}");
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} manifests checked");
}

/// The paths in `doc` that the API server would prune under `schema` (a CRD's
/// structural openAPIV3Schema): a key of an object whose schema lists `properties` and
/// neither `additionalProperties` nor `x-kubernetes-preserve-unknown-fields`. The
/// root's `metadata` is ObjectMeta, which the API server keeps whole.
pub(crate) fn pruned(
    doc: &serde_json::Value,
    schema: &serde_json::Value,
    at: &str,
    out: &mut Vec<String>,
) {
    use serde_json::Value;
    if schema["x-kubernetes-preserve-unknown-fields"] == true {
        return;
    }
    match doc {
        Value::Object(map) => {
            for (key, value) in map {
                let path = format!("{at}/{key}");
                if at.is_empty() && key == "metadata" {
                    continue;
                }
                if let Some(s) = schema["properties"].get(key) {
                    pruned(value, s, &path, out);
                } else if schema["additionalProperties"].is_object() {
                    pruned(value, &schema["additionalProperties"], &path, out);
                } else if schema["properties"].is_object() {
                    out.push(path);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                pruned(item, &schema["items"], &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// The training-operator releases whose PyTorchJob CRD is vendored, and the release a
/// pool's `target.operator` allows: its own, or all of them when the pool names none.
/// Below 1.7 (CubeStudio's) no CRD is vendored; those are judged by 1.7's, the oldest.
fn allowed_crds(operator: Option<&str>) -> Vec<&'static str> {
    const ALL: [(&str, u64); 3] = [("v1.7.0", 7), ("v1.8.0", 8), ("v1.9.0", 9)];
    let Some(v) = operator else {
        return ALL.iter().map(|(t, _)| *t).collect();
    };
    let minor: u64 = v.split('.').nth(1).and_then(|m| m.parse().ok()).unwrap();
    let pick = ALL
        .iter()
        .rev()
        .find(|(_, m)| *m <= minor)
        .unwrap_or(&ALL[0]);
    vec![pick.0]
}

/// Issue 26: every golden PyTorchJob keeps every field it writes under the CRD of each
/// release its pool allows (training-operator v1.7.0, v1.8.0, v1.9.0; an unknown
/// operator allows all three), so nothing is pruned on the way to the cluster. The
/// control: the same walk finds the native sidecars' `restartPolicy` pruned under
/// v1.7.0, which is why a pool on 1.7 with sidecars fails render (RDG187).
#[test]
fn golden_pytorchjobs_keep_every_field_under_each_release_their_pool_allows() {
    let schema = |tag: &str| -> serde_json::Value {
        let path = root().join(format!("tests/upstream/pytorchjob-{tag}.schema.json"));
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    };
    let schemas: std::collections::BTreeMap<&str, serde_json::Value> =
        ["v1.7.0", "v1.8.0", "v1.9.0"]
            .into_iter()
            .map(|t| (t, schema(t)))
            .collect();
    let mut checked = 0;
    for (path, bytes) in tree(&root().join("golden")) {
        if !path.ends_with("pytorchjob.yaml") {
            continue;
        }
        // The example's pools (golden/smoke/<pool>/... come from examples/smoke/<pool>.yaml).
        let mut parts = path.split('/');
        let first = parts.next().unwrap();
        let sources: Vec<std::path::PathBuf> = if first == "smoke" {
            vec![root().join(format!("examples/smoke/{}.yaml", parts.next().unwrap()))]
        } else {
            std::fs::read_dir(root().join("examples").join(first))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect()
        };
        let mut operators = std::collections::BTreeSet::new();
        for source in sources {
            let text = std::fs::read_to_string(source).unwrap();
            for doc in rdmagen::verify::parse(&text).unwrap() {
                let target = &doc["spec"]["target"];
                let trainer = target["api"]
                    .as_str()
                    .is_some_and(|a| a.starts_with("trainer."));
                // A pool with the mpi-operator and no training-operator is run for
                // MPIJobs; the examples hold no PyTorchJob on one.
                let mpi_only = target["mpiOperator"].is_string() && target["operator"].is_null();
                if doc["kind"] == "Pool" && !trainer && !mpi_only {
                    let platform_default =
                        (doc["spec"]["platform"] == "cubestudio").then_some("1.6");
                    operators.insert(
                        target["operator"]
                            .as_str()
                            .or(platform_default)
                            .map(str::to_owned),
                    );
                }
            }
        }
        assert_eq!(
            operators.len(),
            1,
            "{path}: one operator per example's PyTorchJob pools: {operators:?}"
        );
        let operator = operators.into_iter().next().unwrap();
        let docs = rdmagen::verify::parse(&String::from_utf8(bytes).unwrap()).unwrap();
        for tag in allowed_crds(operator.as_deref()) {
            for doc in &docs {
                let mut lost = Vec::new();
                pruned(doc, &schemas[tag], "", &mut lost);
                assert_eq!(lost, Vec::<String>::new(), "golden/{path} under {tag}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 60, "only {checked} checked");

    // The control: native sidecars under v1.7.0.
    let finetune = root().join("golden/pool-defaults/finetune/pytorchjob.yaml");
    let doc = rdmagen::verify::parse(&std::fs::read_to_string(finetune).unwrap())
        .unwrap()
        .remove(0);
    let mut lost = Vec::new();
    pruned(&doc, &schemas["v1.7.0"], "", &mut lost);
    assert_eq!(
        lost,
        [
            "/spec/pytorchReplicaSpecs/Master/template/spec/initContainers/1/restartPolicy",
            "/spec/pytorchReplicaSpecs/Worker/template/spec/initContainers/1/restartPolicy",
        ]
    );
    let mut kept = Vec::new();
    pruned(&doc, &schemas["v1.8.0"], "", &mut kept);
    assert!(kept.is_empty(), "{kept:?}");
}
