//! `lint`, `validate`, report formats, colour, and the rule/schema commands.

use rdmagen::diagnostics::rule::CATALOGUE;
use serde_json::Value;

use crate::support::{rdmagen, root, text};

fn json(out: &std::process::Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

/// rdmagen agrees with itself: its own output has nothing to lint, at any severity,
/// both judged alone (by what each manifest says it was written for: its
/// `rdmagen.io/platform`, `rdmagen.io/operator` and `rdmagen.io/trainer` annotations,
/// and the smoke tests' `rdmagen.io/ignore` of RDG047 for NCCL_ALGO=Ring) and judged
/// for the cluster its pool targets, given as flags.
#[test]
fn golden_manifests_lint_clean() {
    let out = rdmagen(&["lint", "golden", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = json(&out);
    assert_eq!(doc["findings"], serde_json::json!([]), "{doc:#}");
    // Every manifest says what it was written for.
    for (path, bytes) in crate::support::tree(&root().join("golden")) {
        // ConfigMaps (smoke-test's, and a job's preflight.yaml) say nothing of a cluster.
        if !path.ends_with(".yaml")
            || path.ends_with("configmap.yaml")
            || path.ends_with("/preflight.yaml")
        {
            continue;
        }
        for object in rdmagen::verify::parse(&String::from_utf8(bytes).unwrap()).unwrap() {
            let kind = object["kind"].as_str().unwrap_or_default();
            if matches!(kind, "PersistentVolume" | "PersistentVolumeClaim") {
                continue;
            }
            let annotations = &object["metadata"]["annotations"];
            assert!(
                annotations["rdmagen.io/platform"].is_string(),
                "golden/{path}"
            );
            // A PyTorchJob names its operator only where the pool or platform does;
            // an MPIJob names its mpi-operator, which its pool must say.
            if kind == "MPIJob" {
                assert!(
                    annotations["rdmagen.io/mpi-operator"].is_string(),
                    "golden/{path}"
                );
            } else if kind != "PyTorchJob" {
                assert!(
                    annotations["rdmagen.io/trainer"].is_string(),
                    "golden/{path}"
                );
            }
        }
    }

    for example in crate::support::examples() {
        let name = example.file_name().unwrap().to_string_lossy().into_owned();
        // The example's first pool (an example's pools share a platform and target):
        // its platform and target operator, as lint flags.
        let mut docs: Vec<Value> = Vec::new();
        for entry in std::fs::read_dir(&example).unwrap() {
            let source = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            let these: Vec<Value> = serde_saphyr::from_str_multiple(&source).unwrap();
            docs.extend(these);
        }
        let pool = docs.iter().find(|d| d["kind"] == "Pool").unwrap();
        let mut flags: Vec<&str> = Vec::new();
        if let Some(platform) = pool["spec"]["platform"].as_str() {
            flags.extend(["--platform", platform]);
        }
        if let Some(operator) = pool["spec"]["target"]["operator"].as_str() {
            flags.extend(["--operator", operator]);
        }
        if let Some(trainer) = pool["spec"]["target"]["trainer"].as_str() {
            flags.extend(["--trainer", trainer]);
        }
        let golden = format!("golden/{name}");
        let mut args = vec!["lint", golden.as_str(), "--format", "json"];
        args.extend(flags);
        let out = rdmagen(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(json(&out)["findings"], serde_json::json!([]), "{args:?}");
    }
}

#[test]
fn the_seed_pytorchjob_gets_the_findings_a_reviewer_would_make() {
    let out = rdmagen(&["lint", "tests/lint/seed-swin.yaml", "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let found: Vec<(String, u64)> = json(&out)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap(),
            )
        })
        .collect();
    // torch.distributed.launch from $WORLD_SIZE with nprocPerNode unset is the right
    // legacy form on both operator generations: no RDG031.
    let expected = [
        ("RDG071", 7),  // no runPolicy: the Python SDK cannot read the job
        ("RDG035", 21), // sh -c may lose variables a platform injects into PID 1
        ("RDG230", 21), // the launcher's local-rank argument depends on PyTorch's version
        ("RDG198", 25), // RDMA devices and no NCCL_NET: a silent fallback to sockets
        ("RDG047", 28), // NCCL_IB_DISABLE is a debugging variable
        ("RDG035", 62), // the same four on the Worker
        ("RDG230", 62),
        ("RDG198", 66),
        ("RDG047", 69),
        ("RDG053", 121), // the PVC's `storageClassName:` is null: never binds the PV
    ];
    let expected: Vec<(String, u64)> = expected
        .iter()
        .map(|(r, l)| ((*r).to_owned(), *l))
        .collect();
    assert_eq!(found, expected);
    let human = rdmagen(&["lint", "tests/lint/seed-swin.yaml"]);
    assert!(
        text(&human.stderr)
            .contains("1 PyTorchJob(s) and 2 PersistentVolume(Claim)(s) in 1 file(s) linted: 1 error, 1 warning, 8 infos")
    );
}

#[test]
fn lint_errors_exit_1_and_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.yaml");
    std::fs::write(
        &path,
        "apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: x}
spec:
  cleanPodPolicy: None
  pytorchReplicaSpecs:
    Master:
      replicas: 2
      template:
        spec:
          containers:
            - name: trainer
              image: img
",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let out = rdmagen(&["lint", p]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    for (rule, line) in [("RDG068", 5), ("RDG064", 8), ("RDG066", 11)] {
        assert!(stdout.contains(&format!("[{rule}]")), "{rule}: {stdout}");
        assert!(
            stdout.contains(&format!("{p}:{line}:")),
            "{rule} at {line}: {stdout}"
        );
    }
}

#[test]
fn github_format_writes_workflow_annotations() {
    let out = rdmagen(&["lint", "tests/lint/seed-swin.yaml", "--format", "github"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.lines().any(|l| l
            .starts_with("::notice file=tests/lint/seed-swin.yaml,line=21,col=15,title=RDG035 ")),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), 10);
}

#[test]
fn colour_only_when_asked_or_on_a_terminal() {
    let plain = rdmagen(&["lint", "tests/lint/seed-swin.yaml"]);
    assert!(!plain.stdout.contains(&0x1b), "piped output must be plain");
    let always = rdmagen(&["lint", "tests/lint/seed-swin.yaml", "--color", "always"]);
    assert!(text(&always.stdout).contains("\x1b[1;36minfo[RDG035]\x1b[0m"));
    let never = rdmagen(&["lint", "tests/lint/seed-swin.yaml", "--color", "never"]);
    assert!(!never.stdout.contains(&0x1b));
}

#[test]
fn deny_warnings_turns_warnings_into_failure() {
    let ex = "examples/aistudio-roce-4gpu-forced";
    assert_eq!(rdmagen(&["validate", ex]).status.code(), Some(0));
    let out = rdmagen(&["validate", ex, "--deny-warnings"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("warning[RDG013]"));
}

#[test]
fn validate_checks_everything_and_writes_nothing() {
    let out = rdmagen(&["validate", "examples"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr)
            .contains("55 job(s) and 12 runtime(s) checked: 0 errors, 2 warnings, 5 infos")
    );
    let bad = rdmagen(&["validate", "tests/bad/ib-tc.yaml", "--format", "json"]);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(json(&bad)["findings"][0]["rule"], "RDG020");
}

#[test]
fn rules_lists_the_catalogue_and_explain_prints_one() {
    let out = rdmagen(&["rules"]);
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), CATALOGUE.len());
    for rule in CATALOGUE {
        assert!(stdout.contains(rule.id), "{}", rule.id);
    }
    let out = rdmagen(&["explain", "rdg020"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout
            .starts_with("RDG020 (error): NCCL_IB_TC or NCCL_IB_SL is set on a platform that owns"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with(&format!(
            "\nSource: docs/sources.md#seed-000-aistudio-rdma-network-page\nPage: {}/blob/main/docs/rules/RDG020.md\n",
            env!("CARGO_PKG_REPOSITORY")
        )),
        "{stdout}"
    );
    let out = rdmagen(&["explain", "RDG02"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("did you mean RDG002?"));
}

#[test]
fn schema_prints_the_committed_schemas() {
    for (which, file) in [
        ("job", "job.schema.json"),
        ("pool", "pool.schema.json"),
        ("inputs", "inputs.schema.json"),
        ("pytorchjob", "pytorchjob.schema.json"),
        ("nccl-log", "nccl-log.schema.json"),
    ] {
        let out = rdmagen(&["schema", which]);
        assert!(out.status.success());
        let committed = std::fs::read_to_string(root().join("schemas").join(file)).unwrap();
        assert!(
            text(&out.stdout) == committed,
            "`rdmagen schema {which}` differs from schemas/{file}"
        );
    }
}

/// `lint PATH...` that finds no PyTorchJob: exit 2, nothing on stdout, and `message`.
fn assert_nothing_linted(paths: &[&str], message: &str) {
    let mut args = vec!["lint"];
    args.extend(paths);
    let out = rdmagen(&args);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        format!("error: nothing to lint: {message} (--allow-empty accepts that)\n")
    );
}

#[test]
fn lint_that_checks_no_pytorchjob_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let empty = format!("{d}/empty");
    std::fs::create_dir(&empty).unwrap();
    assert_nothing_linted(&[&empty], &format!("no *.yaml or *.yml file in {empty}"));

    let typo = format!("{d}/typo.yaml");
    std::fs::write(
        &typo,
        "apiVersion: kubeflow.org/v1\nkind: PytorchJob\nmetadata: {name: x}\n",
    )
    .unwrap();
    assert_nothing_linted(
        &[&typo],
        &format!(
            "no PyTorchJob (kind PyTorchJob, apiVersion kubeflow.org/v1) and no TrainJob, \
             TrainingRuntime or ClusterTrainingRuntime (apiVersion trainer.kubeflow.org/v1alpha1) in {typo}; \
             {typo}:2:1: kind `PytorchJob`; did you mean PyTorchJob?"
        ),
    );

    let api = format!("{d}/api.yaml");
    std::fs::write(
        &api,
        "kind: PyTorchJob\napiVersion: kubeflow/v1\n---\napiVersion: v1\nkind: Service\n",
    )
    .unwrap();
    assert_nothing_linted(
        &[&api],
        &format!(
            "no PyTorchJob (kind PyTorchJob, apiVersion kubeflow.org/v1) and no TrainJob, \
             TrainingRuntime or ClusterTrainingRuntime (apiVersion trainer.kubeflow.org/v1alpha1) in {api}; \
             {api}:2:1: apiVersion `kubeflow/v1` is not kubeflow.org/v1"
        ),
    );

    let pool = "examples/single-node/pool.yaml";
    assert_nothing_linted(
        &[pool],
        &format!(
            "no PyTorchJob (kind PyTorchJob, apiVersion kubeflow.org/v1) and no TrainJob, \
             TrainingRuntime or ClusterTrainingRuntime (apiVersion trainer.kubeflow.org/v1alpha1) in {pool}; \
             {pool}:3:1: kind Pool is an rdmagen input; `rdmagen validate` checks those"
        ),
    );

    // A Trainer kind under the group Trainer v2.0 renamed.
    let old_group = format!("{d}/old-group.yaml");
    std::fs::write(
        &old_group,
        "apiVersion: kubeflow.org/v2alpha1\nkind: TrainJob\nmetadata: {name: x}\n",
    )
    .unwrap();
    assert_nothing_linted(
        &[&old_group],
        &format!(
            "no PyTorchJob (kind PyTorchJob, apiVersion kubeflow.org/v1) and no TrainJob, \
             TrainingRuntime or ClusterTrainingRuntime (apiVersion trainer.kubeflow.org/v1alpha1) in {old_group}; \
             {old_group}:1:1: apiVersion `kubeflow.org/v2alpha1` is not trainer.kubeflow.org/v1alpha1 \
             (Trainer v2.0 renamed the group from kubeflow.org)"
        ),
    );
    let typo = format!("{d}/trainjob-typo.yaml");
    std::fs::write(
        &typo,
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingJob\nmetadata: {name: x}\n",
    )
    .unwrap();
    let out = rdmagen(&["lint", &typo]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("kind `TrainingJob`; did you mean TrainJob?"),
        "{}",
        text(&out.stderr)
    );
}

/// README.md shows what a diagnostic looks like; it is the tool's output, not a sketch
/// of it, so a changed message, rule source or fixture line shows up here.
#[test]
fn the_readme_diagnostic_is_the_tools_output() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find("Diagnostics name a rule, the file, line and column:\n\n```text\n")
        .expect("README.md shows a diagnostic");
    let block = &readme[start..];
    let block = &block[block.find("```text\n").unwrap() + 8..];
    let shown = &block[..block.find("```").unwrap()];
    let out = rdmagen(&["validate", "tests/bad/ib-tc.yaml"]);
    let printed = text(&out.stdout);
    assert_eq!(
        printed.split("\n\n").next().map(|b| format!("{b}\n")),
        Some(shown.to_owned()),
        "README.md's diagnostic is stale; the tool prints:\n{printed}"
    );
}

/// `--color auto` (the default) follows CLICOLOR_FORCE into a pipe, and NO_COLOR over it.
#[test]
fn auto_colour_follows_clicolor_force_and_no_color() {
    let run = |env: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_rdmagen"));
        cmd.args(["validate", "tests/bad/ib-tc.yaml"])
            .current_dir(root())
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR")
            .env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        text(&cmd.output().unwrap().stdout)
    };
    let always = text(&rdmagen(&["validate", "tests/bad/ib-tc.yaml", "--color", "always"]).stdout);
    assert!(always.contains('\u{1b}'));
    assert_eq!(run(&[("CLICOLOR_FORCE", "1")]), always);
    let plain = run(&[]);
    assert!(!plain.contains('\u{1b}'), "{plain}");
    assert_eq!(run(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]), plain);
}

/// `lint` judges an object by the cluster its annotations say it was written for
/// where no flag says otherwise, and a flag wins over them: a TrainJob with
/// `podTemplateOverrides` written for Trainer 2.1 lints clean alone, is RDG150 with
/// `--trainer 2.3`, and is RDG150 alone once its annotation says 2.3. A value no
/// release or platform has is ignored, as if not written.
#[test]
fn lint_judges_by_what_a_manifest_was_written_for_unless_a_flag_says_otherwise() {
    let golden =
        std::fs::read_to_string(root().join("golden/trainer-v2.1-ib/resnet-ib/trainjob.yaml"))
            .unwrap();
    assert!(golden.contains("rdmagen.io/trainer: \"2.1\""), "{golden}");
    let dir = tempfile::tempdir().unwrap();
    let lint = |body: &str, flags: &[&str]| {
        let file = dir.path().join("trainjob.yaml");
        std::fs::write(&file, body).unwrap();
        let mut args = vec!["lint", file.to_str().unwrap()];
        args.extend(flags);
        // The summary line (human format), then the findings (JSON).
        let summary = text(&rdmagen(&args).stderr);
        args.extend(["--format", "json"]);
        let rules: Vec<String> = json(&rdmagen(&args))["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_owned())
            .collect();
        (rules, summary)
    };
    let (rules, stderr) = lint(&golden, &[]);
    assert_eq!(rules, Vec::<String>::new());
    assert!(stderr.contains("(Trainer 2.1)"), "{stderr}");
    let (rules, _) = lint(&golden, &["--trainer", "2.3"]);
    assert!(rules.contains(&"RDG150".to_owned()), "{rules:?}");
    let (rules, stderr) = lint(
        &golden.replace("rdmagen.io/trainer: \"2.1\"", "rdmagen.io/trainer: \"2.3\""),
        &[],
    );
    assert!(rules.contains(&"RDG150".to_owned()), "{rules:?}");
    assert!(stderr.contains("(Trainer 2.3)"), "{stderr}");
    let (rules, stderr) = lint(
        &golden.replace(
            "rdmagen.io/trainer: \"2.1\"",
            "rdmagen.io/trainer: \"banana\"",
        ),
        &[],
    );
    assert!(rules.contains(&"RDG150".to_owned()), "{rules:?}");
    assert!(stderr.contains("(Trainer 2.3, assumed)"), "{stderr}");

    // The platform: OCI's shape values (a debugging variable Oracle recommends) lint
    // clean as written for oci, and are RDG047 once the annotation is taken away.
    let oci = std::fs::read_to_string(
        root().join("golden/oci-roce-hostnetwork/llama-oke/pytorchjob.yaml"),
    )
    .unwrap();
    assert!(oci.contains("rdmagen.io/platform: oci"), "{oci}");
    let (rules, _) = lint(&oci, &[]);
    assert_eq!(rules, Vec::<String>::new());
    let (rules, _) = lint(
        &oci.replace("rdmagen.io/platform: oci", "rdmagen.io/platform: generic"),
        &[],
    );
    assert!(rules.contains(&"RDG047".to_owned()), "{rules:?}");
    let (rules, _) = lint(&oci, &["--platform", "generic"]);
    assert!(rules.contains(&"RDG047".to_owned()), "{rules:?}");
}

/// A pool that says mlx5_0 carries data (`managementNic: none`) renders an NCCL_IB_HCA
/// listing it, and says so on the manifest (`rdmagen.io/management-nic`), so that lint
/// does not doubt it (RDG043); without the annotation lint warns, and its advice is
/// one a lint user can follow: the annotation, not only the pool's field.
#[test]
fn management_nic_decision_is_marked_for_lint() {
    let dir = tempfile::tempdir().unwrap();
    let input = crate::support::write(
        dir.path(),
        "job.yaml",
        "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n  pool: p\n  image: img:1\n  nodes: 2\n  gpusPerNode: 8\n  script: t.py\n---\napiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {name: p}\nspec:\n  gpu: {perNode: 8}\n  network:\n    fabric: ib\n    managementNic: none\n    hcas: [mlx5_0, mlx5_1, mlx5_2, mlx5_3]\n",
    );
    let out = rdmagen(&["render", &input]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let rendered = text(&out.stdout);
    assert!(
        rendered.contains("    rdmagen.io/management-nic: none\n"),
        "{rendered}"
    );
    let lint = |manifest: &str| {
        let path = crate::support::write(dir.path(), "out.yaml", manifest);
        let out = rdmagen(&["lint", "--format", "brief", &path]);
        (out.status.code(), text(&out.stdout))
    };
    assert_eq!(lint(&rendered), (Some(0), String::new()));
    let (status, stdout) = lint(&rendered.replace("    rdmagen.io/management-nic: none\n", ""));
    assert_eq!(status, Some(0));
    let warnings: Vec<&str> = stdout.lines().collect();
    assert_eq!(warnings.len(), 2, "{stdout}");
    for line in warnings {
        assert!(
            line.ends_with(
                "warning[RDG043]: NCCL_IB_HCA includes mlx5_0, which is usually the management (TCP) NIC, not an RDMA data NIC; where it carries data, say so: `managementNic` in the Pool, or the annotation `rdmagen.io/management-nic: none` (or the real management NIC) on a manifest"
            ),
            "{line}"
        );
    }
    // The annotation naming another NIC leaves mlx5_0 a data NIC; naming mlx5_0, a doubt.
    let (_, stdout) = lint(&rendered.replace(
        "rdmagen.io/management-nic: none",
        "rdmagen.io/management-nic: mlx5_0",
    ));
    assert_eq!(stdout.lines().count(), 2, "{stdout}");
}

/// `validate` of a file of four Jobs, one of which has an error, says four were
/// checked: the one its error stopped is checked too.
#[test]
fn validate_counts_the_job_an_error_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let job = |name: &str, gpus: u32| {
        format!(
            "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {{name: {name}}}\nspec:\n  pool: p\n  image: img:1\n  nodes: 2\n  gpusPerNode: {gpus}\n  script: t.py\n---\n"
        )
    };
    let body = format!(
        "{}{}{}{}apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {{name: p}}\nspec:\n  gpu: {{perNode: 8}}\n  network:\n    fabric: ib\n    hcas: [mlx5_1, mlx5_2]\n",
        job("a", 8),
        job("b", 8),
        job("c", 9),
        job("d", 8)
    );
    let path = crate::support::write(dir.path(), "four.yaml", &body);
    let out = rdmagen(&["validate", "--color", "never", &path]);
    assert_eq!(out.status.code(), Some(1));
    let all = text(&out.stdout) + &text(&out.stderr);
    assert!(
        all.contains("\n4 job(s) checked: 1 error, 0 warnings, 0 infos\n"),
        "{all}"
    );
}

/// LICENSE holds the Apache-2.0 text Cargo.toml names, and CHANGELOG.md and the
/// README's versioning policy for `rdmagen/v1alpha1` exist.
#[test]
fn license_changelog_and_versioning_policy_exist() {
    let license = std::fs::read_to_string(root().join("LICENSE")).unwrap();
    assert!(license.contains("Apache License\n                        Version 2.0, January 2004"));
    assert!(license.trim_end().ends_with("END OF TERMS AND CONDITIONS"));
    let cargo = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(cargo.contains("license = \"Apache-2.0\""));
    let changelog = std::fs::read_to_string(root().join("CHANGELOG.md")).unwrap();
    assert!(changelog.starts_with("# Changelog\n"));
    assert!(changelog.contains("\n## Unreleased\n"));
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let policy = readme
        .split("### How `rdmagen/v1alpha1` will change\n")
        .nth(1)
        .expect("a versioning policy");
    assert!(policy.contains("`rdmagen/v1beta1`"));
}
