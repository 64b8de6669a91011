//! `--templates DIR` from a repository anyone can change: bounded work and output, no
//! symlinks, no quoting of whole files, and a DIR that provides nothing is an error
//! (issue 10, defects 7, 10 and 15).

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::{root, text};

/// The job the templates render: one job, one pool.
const INPUT: &str = "examples/single-node";

/// Where every finding of a template failure points: the job document.
const AT_JOB: &str = " --> examples/single-node/job.yaml:4:1
  |
4 | apiVersion: rdmagen/v1alpha1
  | ^
";

/// Run `rdmagen render INPUT --templates DIR`, killing it after 60 s so that a hang
/// fails the test instead of blocking the suite.
fn render_with(dir: &Path) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmagen"))
        .args(["render", INPUT, "--templates"])
        .arg(dir)
        .current_dir(root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rdmagen starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("waitable").is_none() {
        if Instant::now() > deadline {
            child.kill().expect("killable");
            panic!("rdmagen render --templates did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

fn templates(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    dir
}

#[test]
fn a_template_that_never_ends_is_stopped_by_its_work_budget() {
    let dir = templates(&[(
        "pytorchjob.yaml.j2",
        "{% for a in range(100000) %}{% for b in range(100000) %}{% for c in range(100000) %}\
         {% endfor %}{% endfor %}{% endfor %}\n",
    )]);
    let out = render_with(dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        format!(
            "error[RDG093]: rendered pytorchjob.yaml: pytorchjob.yaml.j2: engine ran out of fuel: the template did more than 1000000 units of work, the most one render may do (stopped at line 1); a loop that does not end or grows too fast?
{AT_JOB}  = RDG093: a template failed to render (source: templates/)

error: 1 finding fails the run; nothing was written
"
        )
    );
}

#[test]
fn a_template_that_writes_too_much_is_stopped_at_the_size_limit() {
    let dir = templates(&[(
        "pytorchjob.yaml.j2",
        "{% for a in range(100000) %}{{ \"x\" * 1000 }}{% endfor %}\n",
    )]);
    let out = render_with(dir.path());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error[RDG093]: rendered pytorchjob.yaml: pytorchjob.yaml.j2: failed to write output: the template wrote more than 1048576 bytes, the most one rendered file may hold
{AT_JOB}  = RDG093: a template failed to render (source: templates/)

error: 1 finding fails the run; nothing was written
"
        )
    );
}

#[test]
fn a_template_is_never_read_through_a_symlink() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "TOKEN=hunter2\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("pytorchjob.yaml.j2");
    std::os::unix::fs::symlink(&secret, &link).unwrap();
    let out = render_with(dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}: is a symlink; rdmagen never follows symlinks in the trees it reads or writes\n",
            link.display()
        )
    );

    // A link to nothing is refused too, not skipped in favour of the built-in.
    std::fs::remove_file(&secret).unwrap();
    let out = render_with(dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: {}: is a symlink; rdmagen never follows symlinks in the trees it reads or writes\n",
            link.display()
        )
    );
}

#[test]
fn a_schema_error_names_the_size_of_a_long_value_instead_of_quoting_it() {
    // A template that is some other file, read whole: the value at the root is a
    // long string, and the finding must not replay it.
    let passwd_like: String = (0..40)
        .map(|n| format!("user{n}:x:{n}:{n}::/home/user{n}:/bin/sh\n"))
        .collect();
    let dir = templates(&[("pytorchjob.yaml.j2", &passwd_like)]);
    let out = render_with(dir.path());
    assert_eq!(out.status.code(), Some(1));
    let size = passwd_like.trim_end().replace('\n', " ").len() + 2;
    assert_eq!(
        text(&out.stderr),
        format!(
            "error[RDG070]: rendered pytorchjob.yaml: /spec: spec.pytorchReplicaSpecs is missing
{AT_JOB}  = RDG070: a PyTorchJob has no spec.pytorchReplicaSpecs (source: https://github.com/kubeflow/training-operator/blob/v1.9.0/manifests/base/crds/kubeflow.org_pytorchjobs.yaml)

error[RDG090]: rendered pytorchjob.yaml: /: a value of {size} bytes is not of type \"object\"
{AT_JOB}  = RDG090: the rendered manifest does not match rdmagen's PyTorchJob schema (source: schemas/pytorchjob.schema.json)

error[RDG092]: rendered pytorchjob.yaml: metadata.name reads back as null
{AT_JOB}  = RDG092: the rendered manifest does not carry a value the plan decided (source: src/verify/mod.rs)

error: 3 findings fail the run; nothing was written
"
        )
    );
}

/// `--templates DIR` that provides nothing fails with exit 2 and says what it expected.
fn assert_refused(dir: &Path, problem: &str) {
    let out = render_with(dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        format!(
            "error: --templates {}: {problem}; rdmagen takes templates named pytorchjob.yaml.j2, mpijob.yaml.j2, trainjob.yaml.j2, storage.yaml.j2 from it\n",
            dir.display()
        )
    );
}

#[test]
fn a_templates_dir_that_is_missing_or_a_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    assert_refused(&dir.path().join("nope"), "no such directory");
    let file = dir.path().join("pytorchjob.yaml.j2");
    std::fs::write(&file, "").unwrap();
    assert_refused(&file, "is a regular file, not a directory");
}

#[test]
fn a_templates_dir_without_a_template_rdmagen_uses_is_an_error() {
    assert_refused(templates(&[]).path(), "holds no template");
    assert_refused(
        templates(&[("README.md", "notes")]).path(),
        "holds no template",
    );
    // pool.yaml.j2 is detect's template; render never reads it. (The nearest name of
    // a job's template is mpijob.yaml.j2, three edits away.)
    assert_refused(
        templates(&[("pool.yaml.j2", "")]).path(),
        "pool.yaml.j2 is not the name of a template rdmagen uses (did you mean mpijob.yaml.j2?)",
    );
}

#[test]
fn a_misnamed_template_is_an_error_that_suggests_the_right_name() {
    let builtin = std::fs::read_to_string(root().join("templates/pytorchjob.yaml.j2")).unwrap();
    let dir = templates(&[
        ("pytorchjob.yml.j2", &builtin),
        ("storage.yaml.j2", "{{ job.name }}\n"),
    ]);
    assert_refused(
        dir.path(),
        "pytorchjob.yml.j2 is not the name of a template rdmagen uses (did you mean pytorchjob.yaml.j2?)",
    );
    let dir = templates(&[("pytorchjob.yaml.j2", &builtin), ("macros.j2", "")]);
    assert_refused(
        dir.path(),
        "macros.j2 is not the name of a template rdmagen uses",
    );
}

#[test]
fn files_that_are_not_templates_may_sit_beside_them() {
    let builtin = std::fs::read_to_string(root().join("templates/pytorchjob.yaml.j2")).unwrap();
    let dir = templates(&[("pytorchjob.yaml.j2", &builtin), ("README.md", "notes")]);
    let out = render_with(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let expected =
        std::fs::read_to_string(root().join("golden/single-node/debug-run/pytorchjob.yaml"))
            .unwrap();
    assert_eq!(text(&out.stdout), expected);
}
