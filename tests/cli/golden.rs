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
