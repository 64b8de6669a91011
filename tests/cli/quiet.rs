//! `-q`/`--quiet`: no summary or progress lines on stderr; findings, errors and the exit
//! status as without it.

use std::process::Output;

use crate::support::{rdmagen, text};

/// The same command with and without `-q`.
fn loud_and_quiet(args: &[&str]) -> (Output, Output) {
    let loud = rdmagen(args);
    let mut quiet_args = vec!["-q"];
    quiet_args.extend(args);
    (loud, rdmagen(&quiet_args))
}

/// stdout and the exit status are the same; stderr loses exactly its summary line.
fn only_the_summary_goes(args: &[&str], summary: &str) {
    let (loud, quiet) = loud_and_quiet(args);
    assert_eq!(quiet.status.code(), loud.status.code(), "{args:?}");
    assert_eq!(text(&quiet.stdout), text(&loud.stdout), "{args:?}");
    let kept: String = text(&loud.stderr)
        .lines()
        .filter(|l| !l.contains(summary))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(kept, text(&loud.stderr), "{args:?}: no summary without -q");
    assert_eq!(text(&quiet.stderr), kept, "{args:?}");
}

#[test]
fn quiet_lint_drops_the_summary_and_keeps_findings() {
    // A file with findings (a warning and infos) and a clean tree (rdmagen's own output).
    only_the_summary_goes(&["lint", "tests/rules/RDG031.yaml"], "linted");
    only_the_summary_goes(&["lint", "golden/aistudio-ib-8gpu"], "linted");
    let (_, quiet) = loud_and_quiet(&["lint", "golden/aistudio-ib-8gpu"]);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(
        text(&quiet.stdout),
        "",
        "a clean lint under -q says nothing"
    );
    assert_eq!(text(&quiet.stderr), "");
    // An error that ends the run is still said.
    let quiet = rdmagen(&["--quiet", "lint", "tests/nothing-here.yaml"]);
    assert_eq!(quiet.status.code(), Some(2));
    assert!(
        text(&quiet.stderr).starts_with("error: "),
        "{}",
        text(&quiet.stderr)
    );
}

#[test]
fn quiet_validate_drops_the_summary_and_keeps_findings() {
    only_the_summary_goes(&["validate", "tests/rules/RDG020.yaml"], "checked:");
    only_the_summary_goes(&["validate", "examples/aistudio-ib-8gpu"], "checked:");
    let (loud, quiet) =
        loud_and_quiet(&["validate", "tests/rules/RDG020.yaml", "--format", "brief"]);
    assert_eq!(quiet.status.code(), Some(1));
    assert!(text(&loud.stdout).contains("RDG020"));
}

#[test]
fn quiet_render_drops_what_was_written_and_keeps_findings() {
    // To stdout: the manifests and the findings beside them are the same.
    let (loud, quiet) = loud_and_quiet(&["render", "examples/aistudio-roce-4gpu-forced"]);
    assert_eq!(quiet.status.code(), loud.status.code());
    assert_eq!(text(&quiet.stdout), text(&loud.stdout));
    assert_eq!(text(&quiet.stderr), text(&loud.stderr));
    assert!(
        text(&quiet.stderr).contains("RDG013"),
        "{}",
        text(&quiet.stderr)
    );
    // Into a directory: the same files, without `... rendered to DIR: ...`.
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a_out, b_out) = (a.path().join("out"), b.path().join("out"));
    let input = "examples/aistudio-roce-4gpu-forced";
    let loud = rdmagen(&["render", input, "-o", a_out.to_str().unwrap()]);
    let quiet = rdmagen(&["render", "-q", input, "-o", b_out.to_str().unwrap()]);
    assert_eq!(quiet.status.code(), Some(0));
    assert_eq!(loud.status.code(), Some(0));
    let loud_err = text(&loud.stderr);
    let summary: Vec<&str> = loud_err
        .lines()
        .filter(|l| l.contains(" rendered to "))
        .collect();
    assert_eq!(summary.len(), 1, "{loud_err}");
    let kept: String = loud_err
        .lines()
        .filter(|l| !l.contains(" rendered to "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(text(&quiet.stderr), kept);
    assert_eq!(crate::support::tree(&a_out), crate::support::tree(&b_out));
}
