//! The hooks of `.pre-commit-hooks.yaml`, run by real pre-commit (PyPI; `.ci/run`
//! installs it and names it in RDMAGEN_PRE_COMMIT) on a throwaway repository of mixed
//! files, as a project's commit would run them. Skipped with a message where
//! pre-commit is absent, unless CI=true, where its absence fails.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::{root, text, write};

/// How to run pre-commit: `python3 -m pre_commit` over RDMAGEN_PRE_COMMIT (a pip
/// `--target` directory), else `pre-commit` on PATH; None when neither is there.
fn pre_commit() -> Option<Command> {
    if let Some(dir) = std::env::var_os("RDMAGEN_PRE_COMMIT") {
        let mut cmd = Command::new("python3");
        cmd.args(["-m", "pre_commit"]).env("PYTHONPATH", dir);
        return Some(cmd);
    }
    let on_path = Command::new("pre-commit").arg("--version").output();
    on_path
        .is_ok_and(|o| o.status.success())
        .then(|| Command::new("pre-commit"))
}

/// The hooks as this repository defines them, each run as a local hook on the binary
/// under test (`language: system`): the definition's own entry, files and types.
fn local_config() -> String {
    let hooks: Vec<Value> = serde_saphyr::from_str(
        &std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap(),
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_rdmagen");
    let mut local = Vec::new();
    for mut hook in hooks {
        if hook["id"] == "rdmagen-render-check" {
            continue; // takes its inputs in `args`, not file names
        }
        let entry = hook["entry"].as_str().unwrap();
        let rest = entry.strip_prefix("rdmagen ").unwrap();
        hook["entry"] = format!("{bin} {rest}").into();
        hook["language"] = "system".into();
        local.push(hook);
    }
    serde_json::json!({"repos": [{"repo": "local", "hooks": local}]}).to_string()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
}

fn run(mut cmd: Command, dir: &Path, home: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = cmd
        .current_dir(dir)
        .env("PRE_COMMIT_HOME", home)
        .env_remove("PRE_COMMIT_NO_CONCURRENCY")
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), text(&out.stdout) + &text(&out.stderr))
}

/// A commit of one PyTorchJob among eleven Services and Dockerfiles, in as many
/// batches as pre-commit makes: the batches without a job pass, the whole run passes;
/// a commit touching only Services passes; a job with an error fails the hook.
#[test]
fn hooks_pass_ordinary_commits_under_real_pre_commit() {
    let Some(_) = pre_commit() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true and no pre-commit: .ci/run installs it (RDMAGEN_PRE_COMMIT)"
        );
        eprintln!("skipped: no pre-commit (set RDMAGEN_PRE_COMMIT or put it on PATH)");
        return;
    };
    let repo = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let dir = repo.path();
    git(dir, &["init", "-q"]);
    write(dir, ".pre-commit-config.yaml", &local_config());
    let job = std::fs::read_to_string(root().join("tests/lint/long-name.yaml")).unwrap();
    let clean_job =
        std::fs::read_to_string(root().join("golden/aks-ib/gpt-aks-shared/pytorchjob.yaml"))
            .unwrap();
    std::fs::create_dir_all(dir.join("deploy")).unwrap();
    write(dir, "deploy/job.yaml", &clean_job);
    let mut services = Vec::new();
    for i in 0..11 {
        let name = format!("deploy/svc-{i:02}.yaml");
        write(
            dir,
            &name,
            &format!(
                "apiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\nspec: {{ports: [{{port: 80}}]}}\n"
            ),
        );
        services.push(name);
    }
    write(dir, "Containerfile", "");
    write(dir, "README.md", "not YAML\n");
    git(dir, &["add", "-A"]);

    let all = run(
        pre_commit().unwrap(),
        dir,
        home.path(),
        &["run", "--all-files", "--verbose"],
    );
    assert_eq!(all.0, Some(0), "{}", all.1);
    assert!(all.1.contains("rdmagen lint"), "{}", all.1);
    // The hook ran in more than one batch where pre-commit has more than one core:
    // each batch prints its own summary line.
    let batches = all.1.matches("linted:").count();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    assert!(batches >= cores.min(2), "{batches} batch(es): {}", all.1);

    let mut only_services: Vec<&str> = vec!["run", "--files"];
    only_services.extend(services.iter().map(String::as_str));
    let svc = run(pre_commit().unwrap(), dir, home.path(), &only_services);
    assert_eq!(svc.0, Some(0), "{}", svc.1);

    write(dir, "deploy/job.yaml", &job);
    git(dir, &["add", "-A"]);
    let bad = run(
        pre_commit().unwrap(),
        dir,
        home.path(),
        &["run", "--all-files"],
    );
    assert_eq!(bad.0, Some(1), "{}", bad.1);
    assert!(bad.1.contains("error[RDG"), "{}", bad.1);
}
