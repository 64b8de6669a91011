//! The bad-input corpus: every file in tests/bad/ must fail with the rule, line and
//! exit code its header announces (`# run: render` then `# expect: RDG010 at 12 exit
//! 1`, the format tests/rules/ uses too), and must leave the output directory
//! untouched.

use crate::support::{fixture, rdmagen, root, text};

#[test]
fn every_bad_input_fails_with_its_rule_line_and_exit_code() {
    let mut files: Vec<_> = std::fs::read_dir(root().join("tests/bad"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 10, "the corpus has {} files", files.len());
    for path in files {
        let rel = path
            .strip_prefix(root())
            .unwrap()
            .to_str()
            .unwrap()
            .replace('\\', "/");
        let source = std::fs::read_to_string(&path).unwrap();
        let want = fixture(&source, &rel);
        let (Some(rule), Some(line), Some(exit)) = (&want.rule, want.line, want.exit) else {
            panic!("{rel}: a bad input names its rule, line and exit code");
        };

        let out_dir = tempfile::tempdir().unwrap();
        let target = out_dir.path().join("out");
        let mut args: Vec<&str> = want.args.iter().map(String::as_str).collect();
        args.extend([rel.as_str(), "-o", target.to_str().unwrap()]);
        let out = rdmagen(&args);
        let stderr = text(&out.stderr);

        assert_eq!(out.status.code(), Some(exit), "{rel}: exit code\n{stderr}");
        let header = format!("[{rule}]:");
        let pointer = format!("--> {rel}:{line}:");
        let found = stderr
            .split("\n\n")
            .any(|block| block.contains(&header) && block.contains(&pointer));
        assert!(found, "{rel}: expected {rule} at line {line}\n{stderr}");
        assert!(stderr.contains("nothing was written"), "{rel}: {stderr}");
        assert!(out.stdout.is_empty(), "{rel}: wrote to stdout");
        assert!(!target.exists(), "{rel}: created the output directory");
    }
}

#[test]
fn an_existing_output_directory_is_left_untouched() {
    let out_dir = tempfile::tempdir().unwrap();
    let keep = out_dir.path().join("keep.txt");
    std::fs::write(&keep, "untouched").unwrap();
    // An output directory (it has a record), so that the run gets as far as the
    // input; one with files and no record is refused before (output_safety).
    std::fs::write(out_dir.path().join(".rdmagen-owned"), "# none yet\n").unwrap();
    let before = crate::support::tree(out_dir.path());
    let out = rdmagen(&[
        "render",
        "tests/bad/ib-tc.yaml",
        "-o",
        out_dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(crate::support::tree(out_dir.path()), before);
}

#[test]
fn missing_input_file_is_an_io_error() {
    let out = rdmagen(&["render", "no/such/file.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no/such/file.yaml"));
}

#[test]
fn usage_errors_exit_2() {
    let out = rdmagen(&["render"]);
    assert_eq!(out.status.code(), Some(2));
    let out = rdmagen(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn no_jobs_is_a_usage_error_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("out");
    let out = rdmagen(&[
        "render",
        "examples/dockerfile",
        "-o",
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("no *.yaml or *.yml file in examples/dockerfile"));
    assert!(
        !target.exists(),
        "no output directory, no staging directory"
    );
}

// ------------------------------------------------- what guards the plan (issue 22)

/// The RDMA job of the seed: Master and Worker, rdma/hca, IPC_LOCK, NCCL_IB_HCA.
const RDMA_JOB: &str = "examples/seed-swin-roce";

/// Why a rule is refused when waived (`diagnostics::policy::FIXED`).
const FIXED: &str = "it says a file could not be read, or what rdmagen cannot do as written, and turning it off would change the output without a word";

/// A repository (`.git`) holding the RDMA job in `jobs/` and, in `t/`, a
/// `pytorchjob.yaml.j2` that writes a valid manifest without RDMA: the rdma/hca
/// resource renamed, IPC_LOCK made NET_RAW, NCCL_IB_HCA renamed (so NCCL ignores it).
fn repository_with_a_template_that_drops_rdma() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join("jobs")).unwrap();
    std::fs::create_dir_all(dir.path().join("t")).unwrap();
    for file in ["job.yaml", "pool.yaml"] {
        std::fs::copy(
            root().join(RDMA_JOB).join(file),
            dir.path().join("jobs").join(file),
        )
        .unwrap();
    }
    let builtin = std::fs::read_to_string(root().join("templates/pytorchjob.yaml.j2")).unwrap();
    let line = "{{ job.pod.template.spec|yaml(10) }}";
    let dropping = builtin.replace(
        line,
        "{{ job.pod.template.spec|yaml(10)|replace(\"rdma/hca\", \"example.com/unused\")\
         |replace(\"IPC_LOCK\", \"NET_RAW\")|replace(\"NCCL_IB_HCA\", \"NCCL_IB_HCA_UNUSED\")|safe }}",
    );
    assert_ne!(dropping, builtin, "the built-in template changed");
    std::fs::write(dir.path().join("t/pytorchjob.yaml.j2"), dropping).unwrap();
    dir
}

/// What `render jobs --templates t` says about that template: every value lost, at
/// the job, and that nothing was written; `also` (a warning about a suppression)
/// before the last line.
fn refused_template_stderr(also: &str) -> String {
    let mut lost = vec![
        "Master env reads back as a value of 344 bytes".to_owned(),
        "Worker env reads back as a value of 344 bytes".to_owned(),
    ];
    for role in ["Master", "Worker"] {
        for (path, want) in [
            ("resources.requests.rdma/hca", "\"1\""),
            ("resources.limits.rdma/hca", "\"1\""),
            ("securityContext.capabilities.add", "[\"IPC_LOCK\"]"),
        ] {
            lost.push(format!(
                "{role} pod template: spec.containers[pytorch].{path} does not read back as the plan's {want}"
            ));
        }
    }
    let mut out = String::new();
    for message in lost {
        out.push_str(&format!(
            "error[RDG092]: rendered pytorchjob.yaml: {message}
 --> jobs/job.yaml:8:1
  |
8 | apiVersion: rdmagen/v1alpha1
  | ^
  = RDG092: the rendered manifest does not carry a value the plan decided (source: src/verify/mod.rs)

"
        ));
    }
    out.push_str(also);
    out.push_str("error: 8 findings fail the run; nothing was written\n");
    out
}

/// A `--templates` override that drops the RDMA resource, IPC_LOCK and NCCL_IB_HCA
/// rendered with exit 0 and an empty stderr once RDG092 was waived (issue 22, item
/// 3). Now every value the plan decided must read back, and no source of waivers
/// turns that off: the command line and the configuration are a usage error naming
/// where the waiver is, and a suppression in the job is itself a warning.
#[test]
fn a_template_that_drops_rdma_is_refused_however_rdg092_is_waived() {
    let dir = repository_with_a_template_that_drops_rdma();
    let repo = dir.path();
    let render = |extra: &[&str]| {
        let mut args = vec!["render", "jobs", "--templates", "t"];
        args.extend_from_slice(extra);
        crate::support::rdmagen_in(repo, &args)
    };
    let out = render(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(text(&out.stderr), refused_template_stderr(""));

    let usage = |origin: &str| {
        format!(
            "error: RDG092 ({origin}) cannot be turned off or re-graded when rendering: {FIXED}\n"
        )
    };
    let waivers: [(&[&str], &str, &str); 6] = [
        (&["--disable", "RDG092"], "", "--disable"),
        (&["--severity", "RDG092=info"], "", "--severity"),
        (&["--severity", "RDG092=off"], "", "--severity"),
        (&[], "rules: {RDG092: off}\n", ".rdmagen.yaml:1"),
        (
            &[],
            "overrides: [{files: [\"jobs/**\"], rules: {RDG092: warning}}]\n",
            ".rdmagen.yaml:1",
        ),
        (
            &[],
            "minSeverity: error\nrules: {RDG092: info}\n",
            ".rdmagen.yaml:2",
        ),
    ];
    for (flags, config, origin) in waivers {
        std::fs::write(repo.join(".rdmagen.yaml"), config).unwrap();
        for command in ["render", "validate"] {
            let mut args = vec![command, "jobs", "--templates", "t"];
            args.extend_from_slice(flags);
            let out = crate::support::rdmagen_in(repo, &args);
            assert_eq!(out.status.code(), Some(2), "{args:?} {config}");
            assert_eq!(text(&out.stdout), "", "{args:?} {config}");
            assert_eq!(text(&out.stderr), usage(origin), "{args:?} {config}");
        }
    }
    std::fs::remove_file(repo.join(".rdmagen.yaml")).unwrap();

    // In the job: its annotation and a comment. The findings stay; the suppression
    // is a warning at its line.
    let job = std::fs::read_to_string(repo.join("jobs/job.yaml")).unwrap();
    let metadata = "metadata: {name: swin-large, namespace: default}";
    let annotated = "metadata: {name: swin-large, namespace: default, annotations: {rdmagen.io/ignore: \"RDG092 the template is ours\"}}";
    let commented = "kind: Job # rdmagen: ignore=RDG092 the template is ours";
    for (edited, line, text_at) in [
        (job.replace(metadata, annotated), 10, annotated),
        (job.replace("kind: Job", commented), 9, commented),
    ] {
        assert_ne!(edited, job);
        std::fs::write(repo.join("jobs/job.yaml"), &edited).unwrap();
        let column = if line == 10 { 64 } else { 11 };
        let warning = format!(
            "warning[RDG132]: RDG092 cannot be suppressed here: {FIXED}
{gutter}--> jobs/job.yaml:{line}:{column}
{gutter} |
{line} | {text_at}
{gutter} | {pad}^
{gutter} = RDG132: a suppression names no rule rdmagen has, or one that cannot be suppressed (source: README.md)

",
            pad = " ".repeat(column - 1),
            gutter = " ".repeat(line.to_string().len()),
        );
        let out = render(&[]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "");
        assert_eq!(text(&out.stderr), refused_template_stderr(&warning));
    }
}

/// Every rule that cannot be waived where rdmagen writes output, from every source of
/// waivers: `--disable`, `--severity`, the configuration's `rules` and `overrides`
/// are a usage error naming each rule and where it was set; a job's annotation and
/// comment are a warning per rule. RDG090 and RDG092 joined the set in issue 22.
#[test]
fn no_source_waives_a_rule_that_guards_what_is_written() {
    let fixed: Vec<&str> = rdmagen::diagnostics::rule::CATALOGUE
        .iter()
        .filter(|r| !r.syntax && !r.configurable())
        .map(|r| r.id)
        .collect();
    assert!(
        fixed.contains(&"RDG090") && fixed.contains(&"RDG092"),
        "{fixed:?}"
    );
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    std::fs::create_dir(repo.join(".git")).unwrap();
    for file in ["job.yaml", "pool.yaml"] {
        std::fs::copy(
            root().join("examples/single-node").join(file),
            repo.join(file),
        )
        .unwrap();
    }
    let list = fixed.join(",");
    let refused = |origin: &dyn Fn(usize) -> String| {
        let each: Vec<String> = fixed
            .iter()
            .enumerate()
            .map(|(i, id)| format!("{id} ({})", origin(i)))
            .collect();
        format!(
            "error: {} cannot be turned off or re-graded when rendering: {FIXED}\n",
            each.join(", ")
        )
    };
    let severities: Vec<String> = fixed
        .iter()
        .map(|id| format!("--severity={id}=warning"))
        .collect();
    let severity_flags: Vec<&str> = severities.iter().map(String::as_str).collect();
    let rules_off: String = fixed.iter().map(|id| format!("  {id}: off\n")).collect();
    let overrides: String = format!(
        "overrides:\n  - files: [\"*.yaml\"]\n    rules: {{{}}}\n",
        fixed
            .iter()
            .map(|id| format!("{id}: info"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let disable = format!("--disable={list}");
    let sources: Vec<(Vec<&str>, String, String)> = vec![
        (
            vec![disable.as_str()],
            String::new(),
            refused(&|_| "--disable".to_owned()),
        ),
        (
            severity_flags,
            String::new(),
            refused(&|_| "--severity".to_owned()),
        ),
        (
            vec![],
            format!("rules:\n{rules_off}"),
            refused(&|i| format!(".rdmagen.yaml:{}", i + 2)),
        ),
        (
            vec![],
            overrides,
            refused(&|_| ".rdmagen.yaml:3".to_owned()),
        ),
    ];
    for (flags, config, want) in &sources {
        std::fs::write(repo.join(".rdmagen.yaml"), config).unwrap();
        for command in ["render", "validate"] {
            let mut args = vec![command, "job.yaml", "pool.yaml"];
            args.extend_from_slice(flags);
            let out = crate::support::rdmagen_in(repo, &args);
            assert_eq!(out.status.code(), Some(2), "{args:?}\n{config}");
            assert_eq!(text(&out.stderr), *want, "{args:?}\n{config}");
        }
    }
    std::fs::remove_file(repo.join(".rdmagen.yaml")).unwrap();

    // In the job: one warning per rule at the suppression, whatever it is written as.
    let job = std::fs::read_to_string(repo.join("job.yaml")).unwrap();
    let annotation =
        format!("metadata:\n  annotations: {{rdmagen.io/ignore: \"{list} we know\"}}\n");
    let comment = format!("# rdmagen: ignore={list} we know\nmetadata:\n");
    for edited in [
        job.replacen("metadata:\n", &annotation, 1),
        job.replacen("metadata:\n", &comment, 1),
    ] {
        assert_ne!(edited, job);
        std::fs::write(repo.join("job.yaml"), &edited).unwrap();
        for command in ["render", "validate"] {
            let out = crate::support::rdmagen_in(repo, &[command, "job.yaml", "pool.yaml"]);
            // validate's findings are its product, on stdout; render's go to stderr.
            let findings = text(if command == "validate" {
                &out.stdout
            } else {
                &out.stderr
            });
            let refused: Vec<&str> = findings
                .lines()
                .filter_map(|l| l.strip_prefix("warning[RDG132]: "))
                .collect();
            let want: Vec<String> = fixed
                .iter()
                .map(|id| format!("{id} cannot be suppressed here: {FIXED}"))
                .collect();
            assert_eq!(refused, want, "{command}\n{findings}");
        }
    }
}

// ------------------------------------------- a configuration against --deny-warnings

/// A repository holding a job with one warning (RDG018, shm above the memory limit)
/// and `.rdmagen.yaml` holding `config`.
fn repository_with_a_warning(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::copy(
        root().join("tests/bad/shm-above-memory.yaml"),
        dir.path().join("job.yaml"),
    )
    .unwrap();
    std::fs::write(dir.path().join(".rdmagen.yaml"), config).unwrap();
    dir
}

/// A pull request's `.rdmagen.yaml` turned CI's `validate --deny-warnings` from exit
/// 1 into exit 0 with "0 warnings" (issue 22, item 6). The flag is CI's: what the file
/// hides or grades info still counts, and the summary says what that was.
#[test]
fn a_configuration_cannot_hide_a_warning_from_deny_warnings() {
    for (config, shown, summary) in [
        (
            "minSeverity: error\n",
            "",
            "0 errors, 0 warnings, 0 infos; 1 warning below minSeverity, not shown",
        ),
        (
            "rules: {RDG018: off}\n",
            "",
            "0 errors, 0 warnings, 0 infos; 1 warning turned off by .rdmagen.yaml",
        ),
        (
            "overrides: [{files: [\"*.yaml\"], rules: {RDG018: off}}]\n",
            "",
            "0 errors, 0 warnings, 0 infos; 1 warning turned off by .rdmagen.yaml",
        ),
        (
            "rules: {RDG018: info}\n",
            "info[RDG018]: shm is `600Gi` but the pod's memory limit is `512Gi`: /dev/shm is capped by it and counts toward it, so the pod is OOM-killed first
  --> job.yaml:12:3
   |
12 |   shm: 600Gi
   |   ^
   = RDG018: /dev/shm is larger than the pod's memory limit (source: https://kubernetes.io/docs/concepts/storage/volumes/#emptydir)

",
            "0 errors, 0 warnings, 1 info; 1 warning graded info by .rdmagen.yaml",
        ),
    ] {
        let dir = repository_with_a_warning(config);
        let hidden = summary.split_once("; ").unwrap().1;
        let out = crate::support::rdmagen_in(dir.path(), &["validate", "job.yaml", "--deny-warnings"]);
        assert_eq!(out.status.code(), Some(1), "{config}{}", text(&out.stderr));
        assert_eq!(text(&out.stdout), shown, "{config}");
        assert_eq!(
            text(&out.stderr),
            format!(
                "1 job(s) checked: {summary}\nerror: 1 finding fails the run (counted by --deny-warnings: {hidden})\n"
            ),
            "{config}"
        );
        // render says why nothing was written, though no finding is shown.
        let out = crate::support::rdmagen_in(
            dir.path(),
            &["render", "job.yaml", "--deny-warnings", "--format", "brief"],
        );
        assert_eq!(out.status.code(), Some(1), "{config}");
        assert_eq!(text(&out.stdout), "");
        assert!(
            text(&out.stderr).ends_with(&format!(
                "error: 1 finding fails the run (counted by --deny-warnings: {hidden}); nothing was written\n"
            )),
            "{config}{}",
            text(&out.stderr)
        );
        // The JSON report counts the same, for a pipeline that reads it.
        let out = crate::support::rdmagen_in(
            dir.path(),
            &["validate", "job.yaml", "--deny-warnings", "--format", "json"],
        );
        assert_eq!(out.status.code(), Some(1), "{config}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let how = hidden.strip_prefix("1 warning ").unwrap();
        assert_eq!(
            report["hiddenByConfig"],
            serde_json::json!([{"severity": "warning", "how": how, "count": 1}]),
            "{config}"
        );
        // Without the flag the file decides, as before.
        let out = crate::support::rdmagen_in(dir.path(), &["validate", "job.yaml"]);
        assert_eq!(out.status.code(), Some(0), "{config}");
    }
}

/// The command line is the CI owner's: its `--disable` and `--min-severity` hide a
/// warning from `--deny-warnings` as they always did.
#[test]
fn the_command_line_still_hides_what_it_turns_off() {
    let dir = repository_with_a_warning("");
    for flags in [&["--disable", "RDG018"][..], &["--min-severity", "error"]] {
        let mut args = vec!["validate", "job.yaml", "--deny-warnings"];
        args.extend_from_slice(flags);
        let out = crate::support::rdmagen_in(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{flags:?}");
        assert_eq!(
            text(&out.stderr),
            "1 job(s) checked: 0 errors, 0 warnings, 0 infos\n"
        );
    }
}
