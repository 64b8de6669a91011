//! Where Kubernetes users already render (issue 30 item 9): `lint --post-renderer`
//! as Helm's post-renderer, `rdmagen krm` as a kustomize KRM function, and the binary
//! as the kubectl plugin `kubectl-rdmagen`. The contracts are tested here without the
//! tools, then with real Helm v3 and kustomize v5 (built from their Go modules by
//! `.ci/renderers/build`; `.ci/run` names them in RDMAGEN_HELM and RDMAGEN_KUSTOMIZE),
//! skipped with a message where they are absent, unless CI=true.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::support::{root, text, with_stdin};

/// A PyTorchJob rdmagen rendered (no finding), behind a Service, as `helm template`
/// prints a chart: `---` separators and `# Source:` comments, a line ending in a
/// space, and no final line break.
fn clean_stream() -> String {
    let job =
        std::fs::read_to_string(root().join("golden/tcp-only/small-ddp/pytorchjob.yaml")).unwrap();
    format!(
        "---\n# Source: chart/templates/service.yaml\napiVersion: v1\nkind: Service\n\
         metadata: {{name: small-ddp}} \nspec: {{clusterIP: None}}\n---\n\
         # Source: chart/templates/pytorchjob.yaml\n{}",
        job.trim_end()
    )
}

/// The PyTorchJob, PV and claim of seed 001, which lint flags with errors.
fn failing_stream() -> String {
    std::fs::read_to_string(root().join("tests/lint/seed-swin.yaml")).unwrap()
}

/// The rule IDs a human report names, in order.
fn rules_named(report: &str) -> Vec<String> {
    report
        .lines()
        .filter_map(|l| {
            l.strip_prefix("error[")
                .or_else(|| l.strip_prefix("warning["))
        })
        .filter_map(|l| l.split(']').next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn post_renderer_passes_a_clean_stream_through_byte_for_byte() {
    let stream = clean_stream();
    let out = with_stdin(&root(), &["lint", "--post-renderer"], stream.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(out.stdout, stream.as_bytes());
    // Only Services and ConfigMaps: nothing to lint is no failure for a chart.
    let services = "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n";
    let out = with_stdin(&root(), &["lint", "--post-renderer"], services.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), services);
}

#[test]
fn post_renderer_with_an_error_writes_findings_to_stderr_and_nothing_to_stdout() {
    let stream = failing_stream();
    let out = with_stdin(&root(), &["lint", "--post-renderer"], stream.as_bytes());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    // The same findings `lint -` reports, now on stderr.
    let lint = with_stdin(&root(), &["lint", "-"], stream.as_bytes());
    let expected = rules_named(&text(&lint.stdout));
    assert!(!expected.is_empty());
    let stderr = text(&out.stderr);
    assert_eq!(rules_named(&stderr), expected);
    let last = stderr.lines().last().unwrap();
    assert!(
        last.starts_with("error: ") && last.ends_with("; nothing was written to stdout"),
        "{last}"
    );
    // Under --deny-warnings, a stream with warnings only fails the same way.
    let out = with_stdin(
        &root(),
        &[
            "lint",
            "--post-renderer",
            "--stdin-filename",
            "chart.yaml",
            "--format",
            "json",
        ],
        stream.as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    let report: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(report["findings"][0]["file"], "chart.yaml");
}

#[test]
fn post_renderer_takes_no_manifest_arguments() {
    let out = with_stdin(&root(), &["lint", "--post-renderer", "job.yaml"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot be used with"),
        "{}",
        text(&out.stderr)
    );
}

/// A ResourceList as kustomize writes it: items with its path annotations, and a
/// functionConfig.
fn resource_list(items: &str) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}\
         functionConfig:\n  apiVersion: rdmagen.io/v1alpha1\n  kind: LintFunction\n  \
         metadata: {{name: rdmagen}}\n  data: {{anything: goes}}\n"
    )
}

/// Each document of `stream` as an item of a ResourceList, with kustomize's
/// annotations naming `file` and the document's index.
fn items_of(stream: &str, file: &str) -> String {
    let docs: Vec<Value> = serde_saphyr::from_str_multiple(stream).unwrap();
    let mut items = String::new();
    for (i, mut doc) in docs.into_iter().filter(|d| d.is_object()).enumerate() {
        let annotations = &mut doc["metadata"]["annotations"];
        if annotations.is_null() {
            *annotations = json!({});
        }
        annotations["config.kubernetes.io/path"] = json!(file);
        annotations["config.kubernetes.io/index"] = json!(i.to_string());
        items.push_str(&format!("- {}\n", serde_json::to_string(&doc).unwrap()));
    }
    items
}

fn krm(input: &str) -> (Option<i32>, Value, String) {
    let out = with_stdin(&root(), &["krm"], input.as_bytes());
    let answer: Value = serde_saphyr::from_str(&text(&out.stdout))
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
    (out.status.code(), answer, text(&out.stderr))
}

#[test]
fn krm_returns_the_items_unchanged_and_a_result_per_finding() {
    let input = resource_list(&items_of(&failing_stream(), "base/seed.yaml"));
    let (code, answer, stderr) = krm(&input);
    assert_eq!(code, Some(1), "{stderr}");
    let sent: Value = serde_saphyr::from_str(&input).unwrap();
    assert_eq!(answer["items"], sent["items"], "the items, as YAML values");
    assert_eq!(answer["functionConfig"], sent["functionConfig"]);
    assert_eq!(answer["kind"], "ResourceList");
    assert_eq!(answer["apiVersion"], "config.kubernetes.io/v1");
    let results = answer["results"].as_array().unwrap();
    // One result per finding `lint` reports on the same objects, in its order.
    let lint = with_stdin(
        &root(),
        &["lint", "-", "--format", "json"],
        failing_stream().as_bytes(),
    );
    let findings: Value = serde_json::from_slice(&lint.stdout).unwrap();
    let findings = findings["findings"].as_array().unwrap();
    assert_eq!(results.len(), findings.len(), "{results:?}");
    for (result, finding) in results.iter().zip(findings) {
        assert_eq!(result["message"], finding["message"]);
        assert_eq!(result["severity"], finding["severity"]);
        assert_eq!(result["tags"]["rule"], finding["rule"]);
    }
    // The seed's error is its claim's; its job has warnings.
    let claim = results
        .iter()
        .find(|r| r["severity"] == "error")
        .expect("an error");
    assert_eq!(claim["resourceRef"]["kind"], "PersistentVolumeClaim");
    assert_eq!(claim["resourceRef"]["apiVersion"], "v1");
    assert_eq!(claim["field"]["path"], "spec.storageClassName");
    let job = results
        .iter()
        .find(|r| r["resourceRef"]["kind"] == "PyTorchJob")
        .expect("a result on the PyTorchJob");
    assert_eq!(job["resourceRef"]["apiVersion"], "kubeflow.org/v1");
    assert_eq!(
        job["resourceRef"]["name"],
        sent["items"][0]["metadata"]["name"]
    );
    assert_eq!(job["file"], json!({"path": "base/seed.yaml", "index": 0}));
    let paths: Vec<&str> = results
        .iter()
        .filter_map(|r| r["field"]["path"].as_str())
        .collect();
    assert!(
        paths
            .iter()
            .any(|p| p.starts_with("spec.pytorchReplicaSpecs.")),
        "{paths:?}"
    );
}

#[test]
fn krm_of_clean_items_has_no_results_and_exits_0() {
    let input = resource_list(&items_of(&clean_stream(), "base/job.yaml"));
    let (code, answer, stderr) = krm(&input);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(answer["results"], json!([]));
    let sent: Value = serde_saphyr::from_str(&input).unwrap();
    assert_eq!(answer["items"], sent["items"]);
    // Values YAML reads as other types unless quoted stay what they were.
    let tricky = "- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: \
                  {a: \"0123\", b: \"yes\", c: \"1e3\", d: \"null\", e: \"~\", f: \"- x\", g: \": y\", h: \"#z\"}}\n";
    let input = resource_list(tricky);
    let (code, answer, _) = krm(&input);
    assert_eq!(code, Some(0));
    let sent: Value = serde_saphyr::from_str(&input).unwrap();
    assert_eq!(answer["items"], sent["items"]);
}

#[test]
fn krm_refuses_what_is_not_a_resource_list() {
    let out = with_stdin(&root(), &["krm"], failing_stream().as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "error: <stdin>: a KRM function reads one ResourceList (kind ResourceList, \
         apiVersion config.kubernetes.io/v1); it holds 3 documents\n"
    );
}

/// The binary under the kubectl plugin's name, in a directory of its own.
fn as_kubectl_plugin(dir: &Path) -> PathBuf {
    let plugin = dir.join("kubectl-rdmagen");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rdmagen"), &plugin).unwrap();
    plugin
}

#[test]
fn the_binary_named_kubectl_rdmagen_works_as_a_kubectl_plugin() {
    let dir = tempfile::tempdir().unwrap();
    let plugin = as_kubectl_plugin(dir.path());
    let run = |exe: &Path, args: &[&str]| -> Output {
        Command::new(exe)
            .args(args)
            .current_dir(root())
            .env_remove("CI")
            .env_remove("GITHUB_ACTIONS")
            .output()
            .unwrap()
    };
    let help = run(&plugin, &["lint", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    let usage = text(&help.stdout);
    assert!(
        usage.contains("\nUsage: kubectl rdmagen lint [OPTIONS]"),
        "{usage}"
    );
    let args = ["lint", "tests/lint/seed-swin.yaml"];
    let (as_plugin, as_itself) = (
        run(&plugin, &args),
        run(Path::new(env!("CARGO_BIN_EXE_rdmagen")), &args),
    );
    assert_eq!(as_plugin.status.code(), Some(1));
    assert_eq!(as_plugin.stdout, as_itself.stdout);
    assert_eq!(as_plugin.stderr, as_itself.stderr);
    let own = run(
        Path::new(env!("CARGO_BIN_EXE_rdmagen")),
        &["lint", "--help"],
    );
    assert!(text(&own.stdout).contains("\nUsage: rdmagen lint [OPTIONS]"));
}

/// A renderer the tests drive, from its environment variable; None (and a message)
/// when it is not set, which CI=true refuses.
fn tool(var: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(path) => Some(PathBuf::from(path)),
        None => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true and no {var}: .ci/run builds it (.ci/renderers/build)"
            );
            eprintln!("skipped: {var} is not set (.ci/renderers/build builds it)");
            None
        }
    }
}

fn run_tool(exe: &Path, dir: &Path, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("HELM_CACHE_HOME", dir.join("cache"))
        .env("HELM_CONFIG_HOME", dir.join("config"))
        .env("HELM_DATA_HOME", dir.join("data"))
        .env_remove("CI")
        .output()
        .unwrap()
}

/// A chart of the given templates.
fn chart(dir: &Path, templates: &[(&str, &str)]) -> PathBuf {
    let chart = dir.join("chart");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: chart\nversion: 0.1.0\n",
    )
    .unwrap();
    for (name, body) in templates {
        std::fs::write(chart.join("templates").join(name), body).unwrap();
    }
    chart
}

/// Real `helm template --post-renderer`: a chart of a clean job and a Service comes
/// out exactly as without the post-renderer; a chart of the seed's job fails the
/// command with lint's findings in Helm's error.
#[test]
fn helm_template_runs_lint_as_its_post_renderer() {
    let Some(helm) = tool("RDMAGEN_HELM") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let job =
        std::fs::read_to_string(root().join("golden/tcp-only/small-ddp/pytorchjob.yaml")).unwrap();
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  clusterIP: None\n";
    let clean = chart(dir.path(), &[("job.yaml", &job), ("service.yaml", service)]);
    let clean = clean.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_rdmagen");
    let post = [
        "--post-renderer",
        bin,
        "--post-renderer-args",
        "lint",
        "--post-renderer-args",
        "--post-renderer",
    ];
    let plain = run_tool(&helm, dir.path(), &["template", "rel", clean]);
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain.stderr));
    let mut args = vec!["template", "rel", clean];
    args.extend(post);
    let linted = run_tool(&helm, dir.path(), &args);
    assert_eq!(linted.status.code(), Some(0), "{}", text(&linted.stderr));
    assert_eq!(text(&linted.stdout), text(&plain.stdout));
    assert!(text(&linted.stdout).contains("kind: PyTorchJob"));

    let failing = dir.path().join("failing");
    std::fs::create_dir_all(&failing).unwrap();
    let bad = chart(&failing, &[("job.yaml", &failing_stream())]);
    let mut args = vec!["template", "rel", bad.to_str().unwrap()];
    args.extend(post);
    let out = run_tool(&helm, dir.path(), &args);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert_eq!(text(&out.stdout), "");
    let lint = with_stdin(&root(), &["lint", "-"], failing_stream().as_bytes());
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("Error: error while running post render on files:"),
        "{stderr}"
    );
    for rule in rules_named(&text(&lint.stdout)) {
        assert!(
            stderr.contains(&format!("[{rule}]")),
            "{rule} not in {stderr}"
        );
    }
}

/// A kustomization of `resources` with rdmagen as an exec KRM function, among
/// `transformers:`: kustomize v5.8.2 refuses every exec function among `validators:`
/// that returns its items as they came, since kyaml adds a path annotation to the
/// output first (kyaml@v0.21.2 fn/runtime/runtimeutil/runtimeutil.go:196-199,
/// api@v0.21.2 internal/target/kusttarget.go:384-395).
fn kustomization(dir: &Path, resources: &[(&str, &str)], with_function: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let mut names = Vec::new();
    for (name, body) in resources {
        std::fs::write(dir.join(name), body).unwrap();
        names.push(format!("  - {name}\n"));
    }
    let mut kustomization = format!("resources:\n{}", names.concat());
    if with_function {
        let function = format!(
            "apiVersion: rdmagen.io/v1alpha1\nkind: LintFunction\nmetadata:\n  name: rdmagen\n  \
             annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: {}\n        \
             args: [krm]\n",
            env!("CARGO_BIN_EXE_rdmagen")
        );
        std::fs::write(dir.join("rdmagen.yaml"), function).unwrap();
        kustomization.push_str("transformers:\n  - rdmagen.yaml\n");
    }
    std::fs::write(dir.join("kustomization.yaml"), kustomization).unwrap();
}

/// Real `kustomize build --enable-alpha-plugins --enable-exec` with rdmagen as a
/// function: a clean job builds exactly as without it; the seed's job fails the build
/// with lint's findings on stderr.
#[test]
fn kustomize_build_runs_rdmagen_krm_as_a_function() {
    let Some(kustomize) = tool("RDMAGEN_KUSTOMIZE") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let job =
        std::fs::read_to_string(root().join("golden/tcp-only/small-ddp/pytorchjob.yaml")).unwrap();
    let service =
        "apiVersion: v1\nkind: Service\nmetadata: {name: small-ddp}\nspec: {clusterIP: None}\n";
    let resources = [("job.yaml", job.as_str()), ("service.yaml", service)];
    kustomization(&dir.path().join("plain"), &resources, false);
    kustomization(&dir.path().join("linted"), &resources, true);
    let flags = ["--enable-alpha-plugins", "--enable-exec"];
    let build = |name: &str| {
        let mut args = vec!["build", name];
        args.extend(flags);
        run_tool(&kustomize, dir.path(), &args)
    };
    let plain = build("plain");
    assert_eq!(plain.status.code(), Some(0), "{}", text(&plain.stderr));
    let linted = build("linted");
    assert_eq!(linted.status.code(), Some(0), "{}", text(&linted.stderr));
    assert_eq!(text(&linted.stdout), text(&plain.stdout));
    assert!(text(&linted.stdout).contains("kind: PyTorchJob"));

    kustomization(
        &dir.path().join("failing"),
        &[("seed.yaml", &failing_stream())],
        true,
    );
    let out = build("failing");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert_eq!(text(&out.stdout), "");
    let stderr = text(&out.stderr);
    let lint = with_stdin(&root(), &["lint", "-"], failing_stream().as_bytes());
    for rule in rules_named(&text(&lint.stdout)) {
        assert!(
            stderr.contains(&format!("[{rule}]")),
            "{rule} not in {stderr}"
        );
    }
}
