//! The direct path from plan to bytes (src/render/manifest.rs) and the embedded
//! templates lay every manifest out the same way, byte for byte. rdmagen writes a
//! built-in manifest from a value it builds and checks; the templates stay the
//! documented layout, and the starting point of a user's `--templates`, whose output
//! is parsed back to be checked. So each example is rendered again through the
//! embedded templates passed as user templates, and must match its golden files
//! (which `examples_match_golden_files` holds to the direct path).

use crate::support::{examples, rdmagen, text};

/// The templates of a job's files, copied as a user would copy them.
const JOB_TEMPLATES: [&str; 4] = [
    "pytorchjob.yaml.j2",
    "mpijob.yaml.j2",
    "trainjob.yaml.j2",
    "storage.yaml.j2",
];

#[test]
fn the_embedded_templates_render_every_example_as_the_direct_path_does() {
    let dir = tempfile::tempdir().unwrap();
    for name in JOB_TEMPLATES {
        std::fs::copy(
            crate::support::root().join("templates").join(name),
            dir.path().join(name),
        )
        .unwrap();
    }
    let templates = dir.path().to_str().unwrap();
    let (mut trainjobs, mut mpijobs) = (0, 0);
    for example in examples() {
        let name = example.file_name().unwrap().to_string_lossy().into_owned();
        let ex = format!("examples/{name}");
        let golden = format!("golden/{name}");
        let out = rdmagen(&[
            "render",
            ex.as_str(),
            "-o",
            golden.as_str(),
            "--check",
            "--templates",
            templates,
        ]);
        assert!(
            out.status.success(),
            "{name}: through the embedded templates, the output differs from the direct path's (golden/{name}):\n{}\n{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        let count = |file: &str| {
            walkdir::WalkDir::new(crate::support::root().join(&golden))
                .into_iter()
                .filter(|e| e.as_ref().is_ok_and(|e| e.file_name() == file))
                .count()
        };
        trainjobs += count("trainjob.yaml");
        mpijobs += count("mpijob.yaml");
    }
    // Every kind of job manifest was compared, not only PyTorchJobs.
    assert!(trainjobs > 0, "no example renders a TrainJob");
    assert!(mpijobs > 0, "no example renders an MPIJob");
}
