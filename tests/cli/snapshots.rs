//! Whole-output snapshots: what a user sees for the commands people run most, every
//! byte of stdout and stderr and the exit code, in each output format. A change to a
//! message, a format or the exit code shows up here as a reviewed diff of
//! tests/snapshots/, where a `.contains(` check would pass it by.
//!
//! `RDMAGEN_BLESS=1 cargo test --test cli snapshots` rewrites the snapshots from the
//! tool's output; review them with `git diff tests/snapshots`.

use std::fmt::Write as _;

use crate::support::{rdmagen, root, text};

const SEED: &str = "tests/lint/seed-swin.yaml";
const GOLDEN_SWIN: &str = "golden/seed-swin-roce/swin-large/pytorchjob.yaml";
/// A rendered manifest and the same with two values changed.
const OLD: &str = "tests/snapshots/inputs/old.yaml";
const NEW: &str = "tests/snapshots/inputs/new.yaml";

/// (snapshot name, arguments).
const CASES: &[(&str, &[&str])] = &[
    ("explain-RDG020", &["explain", "RDG020"]),
    ("explain-unknown", &["explain", "RDG999"]),
    ("rules", &["rules"]),
    ("validate-human", &["validate", "tests/bad/ib-tc.yaml"]),
    (
        "validate-color",
        &["validate", "tests/bad/ib-tc.yaml", "--color", "always"],
    ),
    (
        "validate-brief",
        &["validate", "tests/bad/enum-typo.yaml", "--format", "brief"],
    ),
    (
        "validate-json",
        &["validate", "tests/bad/enum-typo.yaml", "--format", "json"],
    ),
    (
        "validate-github",
        &["validate", "tests/bad/enum-typo.yaml", "--format", "github"],
    ),
    ("validate-examples", &["validate", "examples"]),
    (
        "render-explain",
        &["render", "examples/pool-defaults", "--explain"],
    ),
    (
        "render-explain-mpijob",
        &["render", "examples/mpijob-deepspeed", "--explain"],
    ),
    ("lint-human", &["lint", SEED]),
    ("lint-color", &["lint", SEED, "--color", "always"]),
    ("lint-brief", &["lint", "tests/lint", "--format", "brief"]),
    (
        "lint-json",
        &[
            "lint",
            "tests/lint/old-operator-nproc.yaml",
            "--format",
            "json",
        ],
    ),
    (
        "lint-github",
        &[
            "lint",
            "tests/lint/old-operator-nproc.yaml",
            "--format",
            "github",
        ],
    ),
    ("lint-junit", &["lint", "tests/lint", "--format", "junit"]),
    (
        "lint-gitlab",
        &["lint", "tests/lint/long-name.yaml", "--format", "gitlab"],
    ),
    (
        "lint-json-error",
        &["lint", "tests/lint/no-such-file.yaml", "--format", "json"],
    ),
    ("diff-human", &["diff", SEED, GOLDEN_SWIN]),
    (
        "diff-color",
        &["diff", SEED, GOLDEN_SWIN, "--color", "always"],
    ),
    ("diff-semantic", &["diff", "--semantic", OLD, NEW]),
    (
        "diff-semantic-renamed",
        &["diff", "--semantic", SEED, GOLDEN_SWIN],
    ),
    (
        "diff-brief",
        &[
            "diff",
            "golden/nccl-before-2.21",
            "golden/selfbuilt-roce-tc",
            "--format",
            "brief",
        ],
    ),
    (
        "diff-json",
        &["diff", "--semantic", OLD, NEW, "--format", "json"],
    ),
    ("diff-github", &["diff", OLD, NEW, "--format", "github"]),
    (
        "detect",
        &[
            "detect",
            "--capture",
            "tests/diag/roce-host.txt",
            "--name",
            "h100",
        ],
    ),
    (
        "detect-topology",
        &[
            "detect",
            "--capture",
            "tests/diag/topology-host.txt",
            "--name",
            "h100-ib",
        ],
    ),
    (
        "detect-json",
        &[
            "detect",
            "--capture",
            "tests/diag/gid-disagree.txt",
            "--format",
            "json",
        ],
    ),
    ("dockerfile", &["dockerfile", "--base", "ubuntu:22.04"]),
    (
        "image-check",
        &["image-check", "tests/rules/RDG080.Dockerfile"],
    ),
];

fn shown(args: &[&str]) -> String {
    let out = rdmagen(args);
    let mut s = String::new();
    writeln!(s, "$ rdmagen {}", args.join(" ")).unwrap();
    writeln!(s, "exit: {}", out.status.code().unwrap_or(-1)).unwrap();
    writeln!(s, "--- stdout").unwrap();
    s.push_str(&text(&out.stdout));
    writeln!(s, "--- stderr").unwrap();
    s.push_str(&text(&out.stderr));
    s
}

#[test]
fn outputs_match_their_snapshots() {
    let bless = std::env::var_os("RDMAGEN_BLESS").is_some();
    let dir = root().join("tests/snapshots");
    let mut stale = Vec::new();
    for (name, args) in CASES {
        let path = dir.join(format!("{name}.txt"));
        let now = shown(args);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &now).unwrap();
            continue;
        }
        let was = std::fs::read_to_string(&path).unwrap_or_default();
        if was != now {
            let diff = similar::TextDiff::from_lines(&was, &now)
                .unified_diff()
                .header(&format!("tests/snapshots/{name}.txt"), "now")
                .to_string();
            stale.push(diff);
        }
    }
    // A snapshot whose case is gone would be reviewed as if it still held.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(stem) = name.strip_suffix(".txt")
            && !CASES.iter().any(|(case, _)| *case == stem)
        {
            stale.push(format!("tests/snapshots/{name} has no case; delete it"));
        }
    }
    assert!(
        stale.is_empty(),
        "output differs from its snapshot (RDMAGEN_BLESS=1 to accept, then review):\n{}",
        stale.join("\n")
    );
}
