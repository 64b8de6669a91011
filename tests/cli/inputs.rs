//! Where inputs come from: standard input (`-`, `--stdin-filename`), symlinks inside
//! walked trees, `--exclude`, an empty input set (`--allow-empty`), and the
//! kubectl-shaped mistakes on the command line (`-o yaml`, `explain RDG999`).

use std::os::unix::fs::symlink;
use std::process::Output;

use crate::support::{rdmagen, rdmagen_in, root, text, with_stdin};

/// (exit code, stdout, stderr).
fn ended(out: &Output) -> (Option<i32>, String, String) {
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

fn read(path: &str) -> Vec<u8> {
    std::fs::read(root().join(path)).unwrap()
}

#[test]
fn helm_template_output_piped_to_lint_names_the_stdin_filename() {
    // What `helm template` prints: each manifest after `---` and a `# Source:` comment,
    // a switched-off template as a document of comments only.
    let helm = read("tests/inputs/helm-template.yaml");
    let args = [
        "lint",
        "-",
        "--stdin-filename",
        "train/templates/pytorchjob.yaml",
        "--format",
        "brief",
    ];
    assert_eq!(
        ended(&with_stdin(&root(), &args, &helm)),
        (
            Some(0),
            // The chart's RDMA pod has no Istio opt-out: RDG181, an info.
            "train/templates/pytorchjob.yaml:29:15: info[RDG035]: processes started through `sh -c` may not inherit variables a platform injects into PID 1\ntrain/templates/pytorchjob.yaml:39:19: info[RDG181]: the pod requests rdma/shared but does not opt out of Istio's sidecar: where the namespace injects one, its proxy sits between the pods and NCCL hangs; add the pod annotation sidecar.istio.io/inject: \"false\"\n".to_owned(),
            String::new()
        )
    );
    // Without a name, standard input is `<stdin>`, in every format.
    let out = with_stdin(&root(), &["lint", "-", "--format", "github"], &helm);
    assert_eq!(
        text(&out.stdout),
        "::notice file=<stdin>,line=29,col=15,title=RDG035 the command runs through `sh -c`::processes started through `sh -c` may not inherit variables a platform injects into PID 1\n::notice file=<stdin>,line=39,col=19,title=RDG181 an RDMA pod does not opt out of Istio's sidecar injection::the pod requests rdma/shared but does not opt out of Istio's sidecar: where the namespace injects one, its proxy sits between the pods and NCCL hangs; add the pod annotation sidecar.istio.io/inject: \"false\"\n"
    );
}

#[test]
fn the_stdin_filename_is_escaped_like_any_file_name() {
    let helm = read("tests/inputs/helm-template.yaml");
    let args = [
        "lint",
        "-",
        "--stdin-filename",
        "chart\u{1b}[31m\n::error::x",
        "--format",
        "brief",
    ];
    assert_eq!(
        text(&with_stdin(&root(), &args, &helm).stdout),
        "chart\\u{1b}[31m\\n::error::x:29:15: info[RDG035]: processes started through `sh -c` may not inherit variables a platform injects into PID 1\nchart\\u{1b}[31m\\n::error::x:39:19: info[RDG181]: the pod requests rdma/shared but does not opt out of Istio's sidecar: where the namespace injects one, its proxy sits between the pods and NCCL hangs; add the pod annotation sidecar.istio.io/inject: \"false\"\n"
    );
}

#[test]
fn a_kubectl_list_piped_to_lint_is_linted_item_by_item() {
    let list = read("tests/inputs/kubectl-list.yaml");
    let out = with_stdin(&root(), &["lint", "-", "--format", "brief"], &list);
    assert_eq!(
        ended(&out),
        (
            Some(0),
            // The listed RDMA pod has no Istio opt-out: RDG181, an info.
            "<stdin>:25:19: info[RDG035]: processes started through `sh -c` may not inherit variables a platform injects into PID 1\n<stdin>:35:23: info[RDG181]: the pod requests rdma/shared but does not opt out of Istio's sidecar: where the namespace injects one, its proxy sits between the pods and NCCL hangs; add the pod annotation sidecar.istio.io/inject: \"false\"\n".to_owned(),
            String::new()
        )
    );
}

#[test]
fn render_reads_a_job_from_stdin_beside_a_pools_file() {
    let dir = "examples/seed-swin-roce";
    let from_file = rdmagen(&[
        "render",
        &format!("{dir}/job.yaml"),
        "--pools",
        &format!("{dir}/pool.yaml"),
    ]);
    assert!(from_file.status.success(), "{}", text(&from_file.stderr));
    let from_stdin = with_stdin(
        &root(),
        &["render", "-", "--pools", &format!("{dir}/pool.yaml")],
        &read(&format!("{dir}/job.yaml")),
    );
    assert_eq!(ended(&from_stdin), ended(&from_file));
}

#[test]
fn validate_image_check_and_diff_read_stdin_too() {
    let job = read("examples/seed-swin-roce/job.yaml");
    let out = with_stdin(
        &root(),
        &[
            "validate",
            "-",
            "--pools",
            "examples/seed-swin-roce/pool.yaml",
        ],
        &job,
    );
    assert_eq!(
        ended(&out),
        (
            Some(0),
            String::new(),
            "1 job(s) checked: 0 errors, 0 warnings, 0 infos\n".to_owned()
        )
    );

    let dockerfile = read("tests/inputs/heredoc.Dockerfile");
    let from_file = rdmagen(&[
        "image-check",
        "tests/inputs/heredoc.Dockerfile",
        "--format",
        "brief",
    ]);
    let from_stdin = with_stdin(
        &root(),
        &[
            "image-check",
            "-",
            "--stdin-filename",
            "tests/inputs/heredoc.Dockerfile",
            "--format",
            "brief",
        ],
        &dockerfile,
    );
    assert_eq!(ended(&from_stdin), ended(&from_file));

    let manifest = read("tests/lint/traffic-class.yaml");
    let changed = String::from_utf8(manifest.clone())
        .unwrap()
        .replace("\"41\"", "\"42\"");
    let out = with_stdin(
        &root(),
        &[
            "diff",
            "tests/lint/traffic-class.yaml",
            "-",
            "--stdin-filename",
            "new.yaml",
        ],
        changed.as_bytes(),
    );
    let (code, stdout, _) = ended(&out);
    assert_eq!(code, Some(1));
    assert!(
        stdout.starts_with("--- tests/lint/traffic-class.yaml\n+++ new.yaml\n"),
        "{stdout}"
    );
    assert!(stdout.contains("\n-                - {name: NCCL_IB_TC, value: \"41\"}\n+                - {name: NCCL_IB_TC, value: \"42\"}\n"), "{stdout}");
    let same = with_stdin(
        &root(),
        &["diff", "-", "tests/lint/traffic-class.yaml"],
        &manifest,
    );
    assert_eq!(same.status.code(), Some(0), "{}", text(&same.stderr));
    let out = with_stdin(&root(), &["diff", "-", "tests"], &manifest);
    assert_eq!(
        ended(&out),
        (
            Some(2),
            String::new(),
            "error: `-` (standard input) is one file, so tests must be a file too\n".to_owned()
        )
    );
}

#[test]
fn stdin_is_read_once_and_within_the_size_limit() {
    let job = read("examples/seed-swin-roce/job.yaml");
    let out = with_stdin(&root(), &["render", "-", "--pools", "-"], &job);
    assert_eq!(
        ended(&out),
        (
            Some(2),
            String::new(),
            "error: `-` (standard input) is named 2 times; it can be read only once\n".to_owned()
        )
    );
    let out = with_stdin(
        &root(),
        &[
            "lint",
            "-",
            "--max-file-size",
            "100",
            "--stdin-filename",
            "big.yaml",
        ],
        &read("tests/lint/traffic-class.yaml"),
    );
    assert_eq!(
        ended(&out),
        (
            Some(2),
            String::new(),
            "error: big.yaml: is larger than 100 bytes, the most rdmagen reads (--max-file-size)\n"
                .to_owned()
        )
    );
}

#[test]
fn nothing_is_written_when_the_job_on_stdin_has_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let job = String::from_utf8(read("examples/seed-swin-roce/job.yaml"))
        .unwrap()
        .replace("gpusPerNode: 8", "gpusPerNode: 8\n  gpuPerNode: 8");
    let out = with_stdin(
        &root(),
        &[
            "render",
            "-",
            "--pools",
            "examples/seed-swin-roce/pool.yaml",
            "-o",
            out_dir.to_str().unwrap(),
            "--stdin-filename",
            "job.yaml",
            "--format",
            "brief",
        ],
        job.as_bytes(),
    );
    let (code, _, stderr) = ended(&out);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.starts_with("job.yaml:"), "{stderr}");
    assert!(!out_dir.exists());
}

/// A tree with one manifest, `sub/a.yaml`; links are added by each test.
fn tree_with_a_manifest() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tree/sub")).unwrap();
    std::fs::copy(
        root().join("tests/lint/traffic-class.yaml"),
        dir.path().join("tree/sub/a.yaml"),
    )
    .unwrap();
    dir
}

const FINDING_A: &str = ":19:15: info[RDG035]: processes started through `sh -c` may not inherit variables a platform injects into PID 1\n";

#[test]
fn symlinks_inside_the_tree_are_followed_and_read_once() {
    let dir = tree_with_a_manifest();
    let tree = dir.path().join("tree");
    symlink("sub/a.yaml", tree.join("a-link.yaml")).unwrap();
    symlink("sub", tree.join("same-sub")).unwrap();
    std::fs::create_dir(tree.join("only")).unwrap();
    std::fs::copy(
        root().join("tests/lint/traffic-class.yaml"),
        tree.join("only/c.yml"),
    )
    .unwrap();
    std::fs::create_dir(tree.join("links")).unwrap();
    symlink("../only/c.yml", tree.join("links/c-link.yaml")).unwrap();
    let out = rdmagen_in(dir.path(), &["lint", "tree", "--format", "brief"]);
    // a.yaml is read once, under its own path, though two links lead to it; c.yml is
    // read once too, and the link's name decides that it is YAML.
    assert_eq!(
        ended(&out),
        (
            Some(0),
            format!("tree/only/c.yml{FINDING_A}tree/sub/a.yaml{FINDING_A}"),
            String::new()
        )
    );
    // A file reached only through a link is named by the link's path.
    std::fs::remove_file(tree.join("only/c.yml")).unwrap();
    std::fs::copy(
        root().join("tests/lint/traffic-class.yaml"),
        tree.join("only/c.txt"),
    )
    .unwrap();
    std::fs::remove_file(tree.join("links/c-link.yaml")).unwrap();
    symlink("../only/c.txt", tree.join("links/c-link.yaml")).unwrap();
    let out = rdmagen_in(dir.path(), &["lint", "tree", "--format", "brief"]);
    assert_eq!(
        ended(&out),
        (
            Some(0),
            format!("tree/links/c-link.yaml{FINDING_A}tree/sub/a.yaml{FINDING_A}"),
            String::new()
        )
    );
}

#[test]
fn a_symlink_out_of_the_tree_is_reported_and_not_read() {
    let dir = tree_with_a_manifest();
    std::fs::create_dir(dir.path().join("outside")).unwrap();
    std::fs::write(dir.path().join("outside/secret.yaml"), "token: hunter2\n").unwrap();
    symlink(
        "../outside/secret.yaml",
        dir.path().join("tree/secret.yaml"),
    )
    .unwrap();
    let out = rdmagen_in(dir.path(), &["lint", "tree"]);
    assert_eq!(
        ended(&out),
        (
            Some(2),
            String::new(),
            "error: tree/secret.yaml: is a symlink that leads out of tree; rdmagen follows a symlink only within the tree it is given (--exclude skips it)\n".to_owned()
        )
    );
    std::fs::remove_file(dir.path().join("tree/secret.yaml")).unwrap();
    symlink("../outside", dir.path().join("tree/elsewhere")).unwrap();
    let out = rdmagen_in(dir.path(), &["validate", "tree"]);
    assert_eq!(
        ended(&out),
        (
            Some(2),
            String::new(),
            "error: tree/elsewhere: is a symlink that leads out of tree; rdmagen follows a symlink only within the tree it is given (--exclude skips it)\n".to_owned()
        )
    );
    // Excluded, it is not looked at; a link to a file that is not YAML is no input.
    symlink("../outside/secret.yaml", dir.path().join("tree/notes.txt")).unwrap();
    let out = rdmagen_in(
        dir.path(),
        &[
            "lint",
            "tree",
            "--exclude",
            "tree/elsewhere",
            "--format",
            "brief",
        ],
    );
    assert_eq!(
        ended(&out),
        (
            Some(0),
            format!("tree/sub/a.yaml{FINDING_A}"),
            String::new()
        )
    );
    // A dangling link with a YAML name is an input that cannot be read.
    symlink("gone", dir.path().join("tree/gone.yaml")).unwrap();
    let out = rdmagen_in(dir.path(), &["lint", "tree", "--exclude", "tree/elsewhere"]);
    assert_eq!(
        ended(&out),
        (
            Some(2),
            String::new(),
            "error: tree/gone.yaml: is a symlink to nothing (--exclude skips it)\n".to_owned()
        )
    );
}

#[test]
fn a_symlink_loop_is_reported_without_hanging() {
    let dir = tree_with_a_manifest();
    symlink("..", dir.path().join("tree/sub/up")).unwrap();
    let out = rdmagen_in(dir.path(), &["lint", "tree"]);
    assert_eq!(
        ended(&out),
        (Some(2), String::new(), "error: tree/sub/up: is a symlink to tree, a directory that holds it: a loop (--exclude skips it)\n".to_owned())
    );
    let out = rdmagen_in(
        dir.path(),
        &["lint", "tree", "--exclude", "**/up", "--format", "brief"],
    );
    assert_eq!(
        ended(&out),
        (
            Some(0),
            format!("tree/sub/a.yaml{FINDING_A}"),
            String::new()
        )
    );
}

#[test]
fn exclude_matches_the_walked_path_and_never_a_named_file() {
    let dir = tree_with_a_manifest();
    let tree = dir.path().join("tree");
    std::fs::create_dir(tree.join("old")).unwrap();
    std::fs::copy(
        root().join("tests/lint/traffic-class.yaml"),
        tree.join("old/b.yaml"),
    )
    .unwrap();
    std::fs::copy(
        root().join("tests/lint/traffic-class.yaml"),
        tree.join("sub/draft-c.yaml"),
    )
    .unwrap();
    let lint = |args: &[&str]| {
        let mut all = vec!["lint", "--format", "brief"];
        all.extend(args);
        let (code, stdout, stderr) = ended(&rdmagen_in(dir.path(), &all));
        assert_eq!((code, stderr.as_str()), (Some(0), ""), "{args:?}");
        stdout
            .lines()
            .map(|l| l.split(':').next().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        lint(&["tree"]),
        [
            "tree/old/b.yaml",
            "tree/sub/a.yaml",
            "tree/sub/draft-c.yaml"
        ]
    );
    // A directory's path skips all below it; `*` stops at `/`, `**` crosses it.
    assert_eq!(
        lint(&["tree", "--exclude", "tree/old"]),
        ["tree/sub/a.yaml", "tree/sub/draft-c.yaml"]
    );
    assert_eq!(
        lint(&["tree", "--exclude", "tree/*.yaml"]),
        [
            "tree/old/b.yaml",
            "tree/sub/a.yaml",
            "tree/sub/draft-c.yaml"
        ]
    );
    assert_eq!(
        lint(&[
            "tree",
            "--exclude",
            "**/draft-*.yaml",
            "--exclude",
            "tree/old"
        ]),
        ["tree/sub/a.yaml"]
    );
    // The path is as given: `./tree` walks `./tree/...`.
    assert_eq!(
        lint(&["./tree", "--exclude", "tree/old"]),
        [
            "./tree/old/b.yaml",
            "./tree/sub/a.yaml",
            "./tree/sub/draft-c.yaml"
        ]
    );
    // A file named on the command line is read, whatever --exclude says.
    assert_eq!(
        lint(&["tree/old/b.yaml", "--exclude", "**"]),
        ["tree/old/b.yaml"]
    );
    let out = rdmagen_in(dir.path(), &["render", "tree", "--exclude", "tree/["]);
    assert_eq!(
        ended(&out),
        (
            Some(2),
            String::new(),
            "error: --exclude tree/[: unclosed character class; missing ']'\n".to_owned()
        )
    );
}

#[test]
fn an_empty_input_set_is_an_error_in_every_format_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    std::fs::write(dir.path().join("empty/notes.txt"), "not YAML\n").unwrap();
    std::fs::write(dir.path().join("Dockerfile"), "# nothing yet\n").unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["render", "empty"],
            "no *.yaml or *.yml file in empty (--allow-empty accepts that)",
        ),
        (
            &["validate", "empty"],
            "no *.yaml or *.yml file in empty (--allow-empty accepts that)",
        ),
        (
            &["lint", "empty"],
            "nothing to lint: no *.yaml or *.yml file in empty (--allow-empty accepts that)",
        ),
        (
            &["image-check", "Dockerfile"],
            "nothing to check: no Dockerfile instruction in Dockerfile (--allow-empty accepts that)",
        ),
    ];
    let empty_json = "{\n  \"schemaVersion\": 1,\n  \"findings\": [],\n  \"errors\": 0,\n  \"warnings\": 0,\n  \"infos\": 0,\n  \"hiddenByConfig\": []\n}\n";
    for (args, message) in cases {
        for format in ["human", "brief", "json", "github"] {
            let mut all = args.to_vec();
            all.extend(["--format", format]);
            let out = rdmagen_in(dir.path(), &all);
            let (code, stdout, stderr) = ended(&out);
            assert_eq!(code, Some(2), "{all:?}");
            // The error comes in the format asked for (README: Machine-readable output).
            match format {
                "json" => {
                    let report = if stdout.is_empty() { &stderr } else { &stdout };
                    let doc: serde_json::Value = serde_json::from_str(report).unwrap();
                    assert_eq!(doc["error"], *message, "{all:?}");
                }
                "github" => {
                    assert_eq!(stdout, "", "{all:?}");
                    assert_eq!(
                        stderr,
                        format!("::error title=rdmagen::{message}\n"),
                        "{all:?}"
                    );
                }
                _ => assert_eq!(
                    (stdout, stderr),
                    (String::new(), format!("error: {message}\n")),
                    "{all:?}"
                ),
            }
        }
        let mut all = args.to_vec();
        all.extend(["--format", "json", "--allow-empty"]);
        let (code, stdout, stderr) = ended(&rdmagen_in(dir.path(), &all));
        assert_eq!(code, Some(0), "{all:?}: {stderr}");
        // Findings are the product of validate, lint and image-check (stdout); render's
        // product is manifests, with findings beside them on stderr.
        let (product, beside) = match args[0] {
            "render" => (String::new(), empty_json.to_owned()),
            _ => (empty_json.to_owned(), String::new()),
        };
        assert_eq!((stdout, stderr), (product, beside), "{all:?}");
    }
    // A YAML file, but no document in it.
    std::fs::write(dir.path().join("empty/later.yaml"), "# jobs go here\n").unwrap();
    let out = rdmagen_in(dir.path(), &["render", "empty"]);
    assert_eq!(
        ended(&out),
        (Some(2), String::new(), "error: no Job documents in empty (kind: Job, apiVersion: rdmagen/v1alpha1; --allow-empty accepts that)\n".to_owned())
    );
}

#[test]
fn dash_o_with_a_kubectl_format_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let job = root().join("examples/seed-swin-roce");
    let job = job.to_str().unwrap();
    for format in ["yaml", "yml", "json", "wide", "name"] {
        let out = rdmagen_in(dir.path(), &["render", job, "-o", format]);
        assert_eq!(
            ended(&out),
            (
                Some(2),
                String::new(),
                format!(
                    "error: -o takes a directory, and there is no directory `{format}`: render already prints YAML to stdout without -o (write `-o ./{format}` to create a directory of that name)\n"
                )
            )
        );
        assert!(!dir.path().join(format).exists());
    }
    let out = rdmagen_in(dir.path(), &["render", job, "-o", "./yaml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(dir.path().join("yaml/swin-large/pytorchjob.yaml").is_file());
    // Once the directory exists, `-o yaml` is that directory.
    let out = rdmagen_in(dir.path(), &["render", job, "-o", "yaml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn explain_suggests_only_a_genuinely_close_rule_id() {
    let err = |id: &str| text(&rdmagen(&["explain", id]).stderr);
    // The highest ID is the catalogue's, whichever rule arrived last.
    let last = rdmagen::diagnostics::rule::CATALOGUE
        .iter()
        .map(|r| r.id)
        .max()
        .unwrap();
    assert_eq!(
        err("RDG9999"),
        format!(
            "error: no rule `RDG9999`; rule IDs run from RDG001 to {last}, and `rdmagen rules` lists them\n"
        )
    );
    assert_eq!(
        err("RDG999"),
        "error: no rule `RDG999`; did you mean RDG199?\n"
    );
    assert_eq!(
        err("RDG096"),
        "error: no rule `RDG096`; did you mean RDG069?\n"
    );
    assert_eq!(
        err("RGD20"),
        "error: no rule `RGD20`; did you mean RDG020?\n"
    );
    assert_eq!(
        err("ipc-lock"),
        format!(
            "error: no rule `ipc-lock`; rule IDs run from RDG001 to {last}, and `rdmagen rules` lists them\n"
        )
    );
}

#[test]
fn image_check_reads_heredoc_scripts_and_keeps_line_numbers() {
    // The heredoc installs every runtime package (no RDG081); the ENV written inside a
    // `cat <<NOTE` body is data, not an instruction; the real ENV is at line 18.
    let out = rdmagen(&[
        "image-check",
        "tests/inputs/heredoc.Dockerfile",
        "--format",
        "brief",
    ]);
    assert_eq!(
        ended(&out),
        (Some(0), "tests/inputs/heredoc.Dockerfile:18:1: warning[RDG080]: the image bakes in NCCL_IB_HCA=mlx5; env in the pod overrides it, but where the pod leaves NCCL_IB_HCA unset (rdmagen does on purpose, e.g. for a platform preset, `gidIndex: auto` or an NCCL default) the image's value stands\n".to_owned(), String::new())
    );
    // The same packages written to a file by `cat <<EOF` install nothing.
    let dir = tempfile::tempdir().unwrap();
    let dockerfile = "FROM ubuntu:22.04\nRUN cat <<EOF > /install.sh\napt-get install -y libibverbs1 ibverbs-providers librdmacm1 libnl-3-200 libnl-route-3-200 libibumad3\nEOF\n";
    std::fs::write(dir.path().join("Dockerfile"), dockerfile).unwrap();
    let out = rdmagen_in(
        dir.path(),
        &["image-check", "Dockerfile", "--format", "brief"],
    );
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("Dockerfile:1:1: warning[RDG081]: no install line in this Dockerfile installs ibverbs-providers, libibverbs1, "), "{stdout}");
}
