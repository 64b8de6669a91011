//! Rule configuration: `.rdmagen.yaml`, `--config`, `--disable`, `--severity`,
//! `--min-severity`, and suppressions in comments and annotations (issue 14).

use std::path::{Path, PathBuf};

use crate::support::{rdmagen_in, root, text};

/// A fresh directory that is its own repository root (a `.git` stops the search for
/// a configuration file), holding the AIStudio job that sets NCCL_IB_TC (RDG020).
fn repo() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let job = std::fs::read_to_string(root().join("tests/bad/ib-tc.yaml")).unwrap();
    std::fs::write(dir.path().join("job.yaml"), job).unwrap();
    let path = dir.path().to_path_buf();
    (dir, path)
}

fn write(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
}

/// Exit code, stdout, and both streams together (validate and lint print findings
/// on stdout, render on stderr).
fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = rdmagen_in(dir, args);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    (out.status.code().unwrap(), stdout.clone(), stdout + &stderr)
}

#[test]
fn a_config_turning_rdg020_off_makes_the_aistudio_tc_job_pass() {
    let (_keep, dir) = repo();
    // Without a configuration it is an error, as the platform owns QoS.
    let (code, _, err) = run(&dir, &["render", "job.yaml"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("error[RDG020]"), "{err}");

    write(&dir, ".rdmagen.yaml", "rules:\n  RDG020: off\n");
    let (code, out, err) = run(&dir, &["render", "job.yaml"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("RDG020"), "{err}");
    assert!(
        out.contains("NCCL_IB_TC") && out.contains("\"106\""),
        "{out}"
    );
    // `validate` reads the same file.
    assert_eq!(run(&dir, &["validate", "job.yaml"]).0, 0);
    // --no-config ignores it; --config names another.
    assert_eq!(run(&dir, &["validate", "job.yaml", "--no-config"]).0, 1);
    write(&dir, "strict.yaml", "rules: {}\n");
    assert_eq!(
        run(&dir, &["validate", "job.yaml", "--config", "strict.yaml"]).0,
        1
    );
}

#[test]
fn the_config_is_found_from_a_subdirectory_up_to_the_repository_root() {
    let (_keep, dir) = repo();
    write(&dir, ".rdmagen.yaml", "rules: {RDG020: warning}\n");
    write(
        &dir,
        "jobs/deep/job.yaml",
        &std::fs::read_to_string(dir.join("job.yaml")).unwrap(),
    );
    let (code, _, err) = run(&dir.join("jobs/deep"), &["validate", "job.yaml"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning[RDG020]"), "{err}");
    // A repository below the file does not see it.
    std::fs::create_dir(dir.join("jobs/.git")).unwrap();
    let (code, _, err) = run(&dir.join("jobs/deep"), &["validate", "job.yaml"]);
    assert_eq!(code, 1, "{err}");
}

#[test]
fn overrides_apply_to_the_paths_their_globs_match() {
    let (_keep, dir) = repo();
    let job = std::fs::read_to_string(dir.join("job.yaml")).unwrap();
    write(
        &dir,
        "legacy/old/job.yaml",
        &job.replace("{name: j}", "{name: old}"),
    );
    write(
        &dir,
        ".rdmagen.yaml",
        "overrides:\n  - files: \"legacy/**\"\n    rules: {RDG020: off}\n",
    );
    let (code, _, err) = run(&dir, &["validate", "legacy", "--format", "brief"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = run(&dir, &["validate", "job.yaml", "--format", "brief"]);
    assert_eq!(code, 1, "{err}");
    // Paths are the config's, wherever the run starts.
    let (code, _, err) = run(&dir.join("legacy"), &["validate", "old/job.yaml"]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn command_line_levels_win_over_the_config() {
    let (_keep, dir) = repo();
    write(&dir, ".rdmagen.yaml", "rules: {RDG020: off}\n");
    let (code, _, err) = run(
        &dir,
        &["validate", "job.yaml", "--severity", "RDG020=error"],
    );
    assert_eq!(code, 1, "{err}");
    let (code, _, err) = run(
        &dir,
        &["validate", "job.yaml", "--severity", "rdg020=warning"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning[RDG020]"), "{err}");
    // The floor hides what is below it; --disable takes a list.
    let (code, _, err) = run(
        &dir,
        &[
            "validate",
            "job.yaml",
            "--severity",
            "RDG020=warning",
            "--min-severity",
            "error",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("RDG020"), "{err}");
    let (code, _, err) = run(
        &dir,
        &[
            "validate",
            "job.yaml",
            "--no-config",
            "--disable",
            "RDG047,RDG020",
        ],
    );
    assert_eq!(code, 0, "{err}");
    // A file that cannot be read is never checked: its rules cannot be turned off.
    let (code, _, err) = run(&dir, &["validate", "job.yaml", "--disable", "RDG001"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("RDG001 cannot be turned off"), "{err}");
    let (code, _, err) = run(
        &dir,
        &["validate", "job.yaml", "--severity", "RDG055=warning"],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("RDG055 (--severity) cannot be turned off or re-graded when rendering"),
        "{err}"
    );
    // Each rule whose waiver would change the output keeps its level (an attack
    // found csi turned into emptyDir, env entries dropped, rdma: on rendered off).
    for rule in [
        "RDG007", "RDG008", "RDG010", "RDG011", "RDG012", "RDG014", "RDG030", "RDG042", "RDG050",
        "RDG110", "RDG111", "RDG112", "RDG113", "RDG114", "RDG115", "RDG116", "RDG118",
    ] {
        let (code, _, err) = run(&dir, &["validate", "job.yaml", "--disable", rule]);
        assert_eq!(code, 2, "{rule}: {err}");
    }
    let (code, _, err) = run(&dir, &["validate", "job.yaml", "--severity", "RDG020=loud"]);
    assert_eq!(code, 2);
    assert!(err.contains("`loud` is not a level"), "{err}");
    let (code, _, err) = run(&dir, &["validate", "job.yaml", "--disable", "RDG999"]);
    assert_eq!(code, 2);
    assert!(err.contains("no rule `RDG999`"), "{err}");
}

#[test]
fn an_invalid_config_names_file_line_and_column_and_runs_nothing() {
    let (_keep, dir) = repo();
    write(
        &dir,
        ".rdmagen.yaml",
        "rules:\n  RDG020: of\n  RDG998: off\nformats: json\noutput: ../elsewhere\npools: /etc\n",
    );
    let (code, out, err) = run(&dir, &["render", "job.yaml", "-o", "out"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    for expected in [
        ".rdmagen.yaml:2:11",
        "`of` is not a level",
        ".rdmagen.yaml:3:3",
        "no rule `RDG998`",
        ".rdmagen.yaml:4:1",
        "did you mean format?",
        ".rdmagen.yaml:5:9",
        ".rdmagen.yaml:6:8",
        "must be a relative path inside the configuration's directory",
    ] {
        assert!(err.contains(expected), "{expected} in:\n{err}");
    }
    assert!(!dir.join("out").exists(), "nothing is written");
    // A YAML error in it is reported the same way.
    write(&dir, ".rdmagen.yaml", "rules: [\n");
    let (code, _, err) = run(&dir, &["validate", "job.yaml"]);
    assert_eq!(code, 2);
    assert!(err.contains(".rdmagen.yaml:"), "{err}");
    // A named file that is not there is an I/O error.
    let (code, _, err) = run(&dir, &["validate", "job.yaml", "--config", "missing.yaml"]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.yaml"), "{err}");
}

#[test]
fn the_config_gives_default_format_pools_and_output() {
    let (_keep, dir) = repo();
    let job = std::fs::read_to_string(dir.join("job.yaml")).unwrap();
    let (job_doc, pool_doc) = job.split_once("---\n").unwrap();
    write(&dir, "jobs/job.yaml", job_doc);
    write(&dir, "pools/pool.yaml", pool_doc);
    std::fs::remove_file(dir.join("job.yaml")).unwrap();
    write(
        &dir,
        ".rdmagen.yaml",
        "format: json\npools: pools\noutput: rendered\nrules: {RDG020: warning}\n",
    );
    let (code, out, err) = run(&dir, &["validate", "jobs"]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON by the config's format");
    assert!(out.contains("RDG020"), "{json}");
    // A flag on the command line wins.
    let (_, out, _) = run(&dir, &["validate", "jobs", "--format", "brief"]);
    assert!(out.starts_with("jobs/job.yaml:"), "{out}");
    // A bare render is a preview and prints (issue 22); --write writes the
    // configured directory; -o - is stdout.
    let (code, out, err) = run(&dir, &["render", "jobs"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kind: PyTorchJob"), "{out}");
    assert!(!dir.join("rendered").exists());
    let (code, _, err) = run(&dir, &["render", "jobs", "--write"]);
    assert_eq!(code, 0, "{err}");
    assert!(dir.join("rendered/j/pytorchjob.yaml").is_file());
    let (code, out, err) = run(&dir, &["render", "jobs", "-o", "-"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kind: PyTorchJob"), "{out}");
    let (code, _, err) = run(&dir, &["render", "jobs", "--check"]);
    assert_eq!(
        code, 0,
        "--check compares with the configured directory: {err}"
    );
    // A configured format that cannot show differences leaves a comparison's output
    // human, its findings included.
    write(
        &dir,
        ".rdmagen.yaml",
        "format: sarif\npools: pools\noutput: rendered\nrules: {RDG020: warning}\n",
    );
    let (code, _, err) = run(&dir, &["render", "jobs", "--check"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("warning[RDG020]"), "{err}");
    let (_, out, _) = run(&dir, &["validate", "jobs"]);
    assert!(out.contains("\"version\": \"2.1.0\""), "{out}");
    let (code, out, err) = run(&dir, &["diff", "rendered", "rendered"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("2.1.0"), "{out}");
    // Without one, --check says what it needs.
    let (code, _, err) = run(
        &dir,
        &[
            "render",
            "jobs",
            "--check",
            "--no-config",
            "--pools",
            "pools",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--check needs an output directory"), "{err}");
}

#[test]
fn rdmagen_config_prints_each_value_with_its_origin() {
    let (_keep, dir) = repo();
    write(
        &dir,
        ".rdmagen.yaml",
        "rules:\n  RDG020: off\nformat: github\noverrides:\n  - files: [\"a/*.yaml\"]\n    rules: {RDG047: error}\n",
    );
    std::fs::create_dir(dir.join("sub")).unwrap();
    let (code, out, err) = run(&dir.join("sub"), &["config", "--disable", "RDG071"]);
    assert_eq!(code, 0, "{err}");
    for expected in [
        "# configuration file: ../.rdmagen.yaml (found in ",
        "format: github  # ../.rdmagen.yaml:3",
        "pools: []  # default",
        "RDG020: off  # ../.rdmagen.yaml:2",
        "RDG071: off  # --disable",
        "  - files: a/*.yaml",
        "      RDG047: error  # ../.rdmagen.yaml:6",
    ] {
        assert!(out.contains(expected), "{expected} in:\n{out}");
    }
    let (_, out, _) = run(&dir, &["config", "--no-config"]);
    assert!(
        out.contains("# configuration file: none (--no-config)"),
        "{out}"
    );
}

#[test]
fn a_comment_suppresses_on_its_line_or_the_line_below() {
    let (_keep, dir) = repo();
    let job = std::fs::read_to_string(dir.join("job.yaml")).unwrap();
    let same_line = job.replace(
        "NCCL_IB_TC: \"106\"",
        "NCCL_IB_TC: \"106\"  # rdmagen: ignore=RDG020 the fabric team owns TC here",
    );
    write(&dir, "job.yaml", &same_line);
    let (code, _, err) = run(&dir, &["validate", "job.yaml"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        !err.contains("RDG13"),
        "a used suppression with a reason is silent: {err}"
    );

    let above = job.replace(
        "    NCCL_IB_TC: \"106\"",
        "    # rdmagen ignore=RDG020\n    NCCL_IB_TC: \"106\"",
    );
    write(&dir, "job.yaml", &above);
    let (code, _, err) = run(&dir, &["validate", "job.yaml", "--format", "brief"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("job.yaml:13:5: info[RDG131]"),
        "no reason: {err}"
    );

    // Two lines above is too far; the unused suppression is itself a warning.
    let far = job.replace(
        "  env:\n",
        "  # rdmagen: ignore=RDG020,RDG99 too far\n  env:\n",
    );
    write(&dir, "job.yaml", &far);
    let (code, _, err) = run(&dir, &["validate", "job.yaml", "--format", "brief"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("error[RDG020]"), "{err}");
    assert!(err.contains("job.yaml:12:3: warning[RDG130]"), "{err}");
    assert!(err.contains("warning[RDG132]: no rule `RDG99`"), "{err}");
}

#[test]
fn a_job_annotation_suppresses_the_jobs_findings() {
    let (_keep, dir) = repo();
    let job = std::fs::read_to_string(dir.join("job.yaml")).unwrap();
    let annotated = job.replace(
        "metadata: {name: j}",
        "metadata:\n  name: j\n  annotations: {rdmagen.io/ignore: \"RDG020,RDG047 TC set with the fabric team\"}",
    );
    write(&dir, "job.yaml", &annotated);
    let (code, out, err) = run(&dir, &["render", "job.yaml", "--format", "brief"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning[RDG130]: this suppression of RDG047 suppresses nothing"),
        "{err}"
    );
    assert!(!err.contains("[RDG020]"), "{err}");
    assert!(
        out.contains("rdmagen.io/ignore"),
        "the annotation travels with the job: {out}"
    );
}

#[test]
fn a_manifest_annotation_suppresses_lint_findings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let manifest = std::fs::read_to_string(root().join("tests/lint/long-name.yaml")).unwrap();
    write(dir.path(), "m.yaml", &manifest);
    assert_eq!(run(dir.path(), &["lint", "m.yaml"]).0, 1);
    let annotated = manifest.replace(
        "  name: llama-pretrain-with-a-name-long-enough-to-break-service\n",
        "  name: llama-pretrain-with-a-name-long-enough-to-break-service\n  annotations:\n    rdmagen.io/ignore: \"RDG007 never more than 9 workers\"\n",
    );
    write(dir.path(), "m.yaml", &annotated);
    let (code, out, err) = run(dir.path(), &["lint", "m.yaml", "--format", "brief"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("RDG007"), "{out}");
}

#[test]
fn a_pod_template_annotation_covers_only_its_template() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let manifest = std::fs::read_to_string(root().join("tests/lint/seed-swin.yaml")).unwrap();
    let (_, before, _) = run_lint(dir.path(), &manifest);
    assert_eq!(before.matches("[RDG035]").count(), 2, "{before}");
    // The Master's template is the first `template:` of the file.
    let annotated = manifest.replacen(
        "      template:\n        metadata:\n          annotations:\n",
        "      template:\n        metadata:\n          annotations:\n            rdmagen.io/ignore: \"RDG035 the image sources the env itself\"\n",
        1,
    );
    assert_ne!(annotated, manifest);
    let (_, after, _) = run_lint(dir.path(), &annotated);
    assert_eq!(after.matches("[RDG035]").count(), 1, "{after}");
    // The Worker's, below the annotated Master, stays.
    assert!(after.contains("m.yaml:63:15: info[RDG035]"), "{after}");
    assert!(!after.contains("RDG130"), "{after}");
}

fn run_lint(dir: &Path, manifest: &str) -> (i32, String, String) {
    write(dir, "m.yaml", manifest);
    run(dir, &["lint", "m.yaml", "--format", "brief"])
}

#[test]
fn a_dockerfile_comment_suppresses_image_check_findings() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let dockerfile = std::fs::read_to_string(root().join("tests/rules/RDG080.Dockerfile")).unwrap();
    write(dir.path(), "Dockerfile", &dockerfile);
    let (_, out, _) = run(
        dir.path(),
        &["image-check", "Dockerfile", "--format", "brief"],
    );
    assert!(out.contains("warning[RDG080]"), "{out}");
    let suppressed = dockerfile.replace(
        "ENV NCCL_SOCKET_IFNAME=eth0",
        "# rdmagen: ignore=RDG080 our platform strips image ENV\nENV NCCL_SOCKET_IFNAME=eth0",
    );
    write(dir.path(), "Dockerfile", &suppressed);
    let (code, out, err) = run(
        dir.path(),
        &[
            "image-check",
            "Dockerfile",
            "--format",
            "brief",
            "--deny-warnings",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.is_empty(), "{out}");
}

/// What an attack on this feature found, each now refused or fixed.
#[test]
fn a_config_cannot_aim_output_at_its_own_directory_or_git() {
    let (_keep, dir) = repo();
    for (output, line) in [(".", 1), ("./", 1), (".git", 1), ("./.git/hooks", 1)] {
        write(&dir, ".rdmagen.yaml", &format!("output: \"{output}\"\n"));
        let (code, _, err) = run(&dir, &["render", "job.yaml", "--disable", "RDG020"]);
        assert_eq!(code, 2, "{output}: {err}");
        assert!(
            err.contains(&format!(".rdmagen.yaml:{line}:9")),
            "{output}: {err}"
        );
        assert!(!dir.join(".git/j").exists() && !dir.join("j").exists());
    }
}

#[test]
fn overrides_that_cannot_work_are_errors_not_panics() {
    let (_keep, dir) = repo();
    let long = "?".repeat(400_000);
    for (config, expected) in [
        (
            format!("overrides:\n  - files: \"{long}\"\n    rules: {{RDG020: off}}\n"),
            "longer than 1024 bytes",
        ),
        (
            "overrides:\n  - files: \"/abs/**\"\n    rules: {RDG020: off}\n".to_owned(),
            "would never match",
        ),
        (
            "overrides:\n  - files: \"../x/**\"\n    rules: {RDG020: off}\n".to_owned(),
            "would never match",
        ),
        (
            "overrides:\n  - files: []\n    rules: {RDG020: off}\n".to_owned(),
            "names no pattern",
        ),
        (
            "overrides:\n  - files: \"x/**\"\n".to_owned(),
            "needs `rules`",
        ),
        (
            "rules: {RDG020: off, rdg020: error}\n".to_owned(),
            "RDG020 is set twice",
        ),
    ] {
        write(&dir, ".rdmagen.yaml", &config);
        let (code, _, err) = run(&dir, &["validate", "job.yaml"]);
        assert_eq!(code, 2, "{expected}: {}", &err[..err.len().min(400)]);
        assert!(
            err.contains(expected),
            "{expected}: {}",
            &err[..err.len().min(400)]
        );
    }
}

#[test]
fn text_that_is_data_is_no_suppression() {
    let (_keep, dir) = repo();
    let job = std::fs::read_to_string(dir.join("job.yaml")).unwrap();
    for data in [
        "  command: [\"bash\", \"-c\", \"echo # rdmagen: ignore=RDG020 smuggled\"]\n",
        "  workingDir: |\n    # rdmagen: ignore=RDG020 in a block scalar\n",
    ] {
        write(
            &dir,
            "job.yaml",
            &job.replace("  env:\n", &format!("{data}  env:\n")),
        );
        let (code, out, _) = run(&dir, &["validate", "job.yaml", "--format", "brief"]);
        assert_eq!(code, 1, "{data}: {out}");
        assert!(out.contains("error[RDG020]"), "{out}");
    }
}

#[test]
fn a_suppression_below_the_floor_is_still_used() {
    let (_keep, dir) = repo();
    // RDG047 (NCCL_ALGO is a debugging variable) is an info.
    let job = std::fs::read_to_string(root().join("tests/rules/RDG047.yaml")).unwrap();
    let suppressed = job.replace(
        "    NCCL_ALGO: Ring\n",
        "    NCCL_ALGO: Ring  # rdmagen: ignore=RDG047 the vendor asked for Ring\n",
    );
    write(&dir, "job.yaml", &suppressed);
    let args = ["validate", "job.yaml", "--format", "brief"];
    let (code, out, _) = run(&dir, &args);
    assert_eq!((code, out.as_str()), (0, ""));
    let floor = [&args[..], &["--min-severity", "warning", "--deny-warnings"]].concat();
    let (code, out, _) = run(&dir, &floor);
    assert_eq!((code, out.as_str()), (0, ""), "no false RDG130");
}

#[test]
fn a_rendered_jobs_annotation_is_honoured_by_lint_without_stale_copies() {
    let (_keep, dir) = repo();
    let job = std::fs::read_to_string(dir.join("job.yaml")).unwrap();
    let annotated = job.replace(
        "metadata: {name: j}",
        "metadata:\n  name: j\n  annotations: {rdmagen.io/ignore: \"RDG020 TC agreed with the fabric team\"}",
    );
    write(&dir, "job.yaml", &annotated);
    let out = rdmagen_in(&dir, &["render", "job.yaml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::write(dir.join("rendered.yaml"), &out.stdout).unwrap();
    let (code, out, err) = run(
        &dir,
        &[
            "lint",
            "rendered.yaml",
            "--platform",
            "aistudio",
            "--deny-warnings",
            "--format",
            "brief",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        !out.contains("RDG130") && !out.contains("[RDG020]"),
        "{out}"
    );
    // Inside a kubectl List, each item's annotation counts too.
    let manifest = std::fs::read_to_string(dir.join("rendered.yaml")).unwrap();
    let indented: String = manifest.lines().map(|l| format!("    {l}\n")).collect();
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n  - {}",
        indented.trim_start()
    );
    write(&dir, "list.yaml", &list);
    let (code, out, err) = run(
        &dir,
        &[
            "lint",
            "list.yaml",
            "--platform",
            "aistudio",
            "--deny-warnings",
            "--format",
            "brief",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn outside_a_repository_only_the_working_directory_is_searched() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".rdmagen.yaml", "rules: {RDG020: off}\n");
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let (_, out, _) = run(&dir.path().join("sub"), &["config"]);
    assert!(out.contains("# configuration file: none"), "{out}");
    let (_, out, _) = run(dir.path(), &["config"]);
    assert!(out.contains("RDG020: off"), "{out}");
}

#[test]
fn rdmagen_config_escapes_what_it_echoes() {
    let (_keep, dir) = repo();
    write(
        &dir,
        ".rdmagen.yaml",
        "overrides:\n  - files: \"x\\ny/**\"\n    rules: {RDG020: off}\noutput: \"out\\u001b[31m\"\n",
    );
    let (code, out, err) = run(&dir, &["config"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  - files: x\\ny/**\n"), "{out}");
    assert!(out.contains("output: out\\u{1b}[31m  #"), "{out}");
    assert!(!out.contains('\u{1b}'), "{out}");
}

#[test]
fn a_config_that_is_not_utf8_is_named_at_its_line_and_column() {
    let (_keep, dir) = repo();
    std::fs::write(dir.join(".rdmagen.yaml"), b"rules:\n  RDG020: of\xfff\n").unwrap();
    let (code, _, err) = run(&dir, &["validate", "job.yaml"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(".rdmagen.yaml:2:13"), "{err}");
    assert!(err.contains("not valid UTF-8"), "{err}");
    // detect --print-commands runs no rules and reads no configuration.
    let (code, out, err) = run(&dir, &["detect", "--print-commands"]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.is_empty());
}

/// `.rdmagen.yml` is read as `.rdmagen.yaml` is (kube-linter and hadolint accept both
/// extensions); both in one directory is an error naming them, not a silent choice.
#[test]
fn the_yml_spelling_is_read_and_both_are_an_error() {
    let (_keep, dir) = repo();
    write(&dir, ".rdmagen.yml", "rules:\n  RDG020: off\n");
    let (code, _, err) = run(&dir, &["validate", "job.yaml"]);
    assert_eq!(code, 0, "{err}");
    let (_, out, _) = run(&dir, &["config"]);
    assert!(out.contains(".rdmagen.yml"), "{out}");
    write(&dir, ".rdmagen.yaml", "rules:\n  RDG020: off\n");
    let (code, _, err) = run(&dir, &["validate", "job.yaml"]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        err,
        "error: .rdmagen.yml: both .rdmagen.yaml and .rdmagen.yml are here; keep one\n"
    );
}
