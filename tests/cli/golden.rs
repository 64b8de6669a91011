//! Every example renders, validates against the upstream CRD, and matches golden/.
//!
//! After an intended change, re-bless with `RDMAGEN_BLESS=1 cargo test --test cli golden`
//! (it writes golden/ through rdmagen's own renderer and emitter) and review the diff.

use std::path::Path;

use rdmagen::pipeline::{self, Request};

use crate::support::{examples, root, tree};

fn render_example(dir: &Path) -> Vec<pipeline::OutputFile> {
    let outcome = pipeline::run(&Request {
        inputs: vec![dir.to_path_buf()],
        ..Request::default()
    })
    .expect("example renders");
    assert_eq!(
        outcome.findings.errors(),
        0,
        "{}: {:?}",
        dir.display(),
        outcome.findings
    );
    outcome.jobs.into_iter().flat_map(|j| j.files).collect()
}

#[test]
fn examples_match_golden_files() {
    let bless = std::env::var_os("RDMAGEN_BLESS").is_some();
    let golden_root = root().join("golden");
    let mut expected_dirs = Vec::new();
    for example in examples() {
        let name = example.file_name().unwrap().to_string_lossy().into_owned();
        let golden = golden_root.join(&name);
        let files = render_example(&example);
        assert!(!files.is_empty(), "{name} renders no job");
        if bless {
            let _ = std::fs::remove_dir_all(&golden);
            rdmagen::emit::write_tree(&golden, &files).expect("bless writes golden");
        }
        let on_disk = tree(&golden);
        let mut rendered: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|f| (f.path.clone(), f.text.clone().into_bytes()))
            .collect();
        rendered.sort();
        for ((path, want), (got_path, got)) in on_disk.iter().zip(&rendered) {
            assert_eq!(path, got_path, "{name}: file list differs");
            assert!(
                want == got,
                "{name}/{path} differs from its golden file; re-bless if intended:\n{}",
                String::from_utf8_lossy(got)
            );
        }
        assert_eq!(
            on_disk.len(),
            rendered.len(),
            "{name}: number of files differs"
        );
        expected_dirs.push(name);
    }
    let mut found_dirs: Vec<String> = std::fs::read_dir(&golden_root)
        .expect("golden/ exists")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name != "dockerfile")
        .collect();
    found_dirs.sort();
    assert_eq!(
        found_dirs, expected_dirs,
        "golden/ holds a directory no example produces"
    );
}

/// The upstream CRD's openAPIV3Schema (training-operator v1.9.0), from the shared
/// reference folder when it is present beside the project.
#[test]
fn golden_manifests_validate_against_the_upstream_crd() {
    let crd = root().join("../shared/reference/pytorchjob-v1.schema.json");
    let Ok(text) = std::fs::read_to_string(&crd) else {
        eprintln!("skipped: {} not found", crd.display());
        return;
    };
    let schema: serde_json::Value = serde_json::from_str(&text).expect("CRD schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("CRD schema compiles");
    let mut checked = 0;
    for (path, bytes) in tree(&root().join("golden")) {
        if !path.ends_with("pytorchjob.yaml") {
            continue;
        }
        let docs = rdmagen::check::verify::parse(&String::from_utf8(bytes).unwrap()).unwrap();
        for doc in docs {
            let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
            assert!(errors.is_empty(), "{path}: {errors:#?}");
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} manifests checked");
}
