//! An input edited while a run reads it (issue 23): the run keeps no file's text
//! between its passes, so the second pass reads each job again, and what it reads
//! must be what the first pass read. A Trainer pool's runtime reaches the sink after
//! the first pass and before the second, which is where these sinks edit the inputs.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rdmagen::error::Error;
use rdmagen::pipeline::{self, Order, RenderedJob, Request, Sink};

use crate::support::root;

/// Runs `edit` on the first job it is handed (the runtime), then keeps the rest.
struct EditOnce<F: Fn() + Sync> {
    edit: F,
    done: Mutex<bool>,
    jobs: Mutex<Vec<String>>,
}

impl<F: Fn() + Sync> Sink for EditOnce<F> {
    fn accept(&self, _: Order, job: RenderedJob) -> Result<(), Error> {
        let mut done = self.done.lock().unwrap();
        if !*done {
            (self.edit)();
            *done = true;
        }
        self.jobs.lock().unwrap().push(job.name);
        Ok(())
    }
}

/// A copy of `examples/trainer-v2-roce` (a pool file and a file of two jobs).
fn trainer_example() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let from = root().join("examples/trainer-v2-roce");
    for name in ["pool.yaml", "jobs.yaml"] {
        std::fs::copy(from.join(name), dir.path().join(name)).unwrap();
    }
    let (pool, jobs) = (dir.path().join("pool.yaml"), dir.path().join("jobs.yaml"));
    (dir, pool, jobs)
}

fn run(dir: &Path, edit: impl Fn() + Sync) -> (Result<pipeline::Outcome, Error>, Vec<String>) {
    let sink = EditOnce {
        edit,
        done: Mutex::new(false),
        jobs: Mutex::new(Vec::new()),
    };
    let request = Request {
        inputs: vec![dir.to_path_buf()],
        ..Request::default()
    };
    let outcome = pipeline::run_with(&request, &sink, false);
    (outcome, sink.jobs.into_inner().unwrap())
}

#[test]
fn a_job_edited_between_the_passes_fails_the_run_naming_its_file() {
    let (dir, _, jobs) = trainer_example();
    let before = std::fs::read_to_string(&jobs).unwrap();
    let edited = before.replacen("nodes: 4", "nodes: 2", 1);
    assert_ne!(edited, before);
    let (outcome, _) = run(dir.path(), || std::fs::write(&jobs, &edited).unwrap());
    let error = outcome
        .expect_err("an edited input must fail the run")
        .to_string();
    assert!(error.contains("jobs.yaml"), "{error}");
    assert!(
        error.contains("changed while rdmagen was reading it"),
        "{error}"
    );
}

#[test]
fn an_edit_that_moves_a_later_job_fails_the_run_too() {
    // A comment added at the top changes no job's text, but moves both: each is read
    // again at the offsets the first pass found, which now hold other bytes.
    let (dir, _, jobs) = trainer_example();
    let before = std::fs::read_to_string(&jobs).unwrap();
    let (outcome, _) = run(dir.path(), || {
        std::fs::write(&jobs, format!("# moved\n{before}")).unwrap()
    });
    let error = outcome
        .expect_err("a moved job must fail the run")
        .to_string();
    assert!(
        error.contains("changed while rdmagen was reading it"),
        "{error}"
    );
}

#[test]
fn a_file_rewritten_with_the_same_bytes_or_an_edited_pool_file_renders_as_before() {
    let (dir, pool, jobs) = trainer_example();
    let (untouched, rendered) = run(dir.path(), || {});
    let untouched = untouched.unwrap();
    assert_eq!(untouched.rendered, 2, "{:?}", untouched.findings);

    let same = std::fs::read(&jobs).unwrap();
    let (rewritten, again) = run(dir.path(), || std::fs::write(&jobs, &same).unwrap());
    assert_eq!(rewritten.unwrap().rendered, 2);
    assert_eq!(again, rendered);

    // The pool was read once, in the first pass, and is used as read then: an edit
    // after it mixes nothing, and no finding quotes the file.
    let (pool_edited, _) = run(dir.path(), || {
        std::fs::write(&pool, "# edited after it was read\n").unwrap()
    });
    assert_eq!(pool_edited.unwrap().rendered, 2);
}

#[test]
fn a_finding_still_quotes_its_line_when_the_file_is_read_again_at_the_end() {
    // A finding in a job's file (a field no Job has): the file's text is not held
    // through the run, so it is read again at the end for the finding's snippet.
    let (dir, _, jobs) = trainer_example();
    let text = std::fs::read_to_string(&jobs).unwrap();
    std::fs::write(
        &jobs,
        text.replacen("shm: 128Gi", "shm: 128Gi\n  shmSize: 1Gi", 1),
    )
    .unwrap();
    let (outcome, _) = run(dir.path(), || {});
    let outcome = outcome.unwrap();
    let finding = outcome.findings.iter().find(|f| {
        f.location
            .as_ref()
            .is_some_and(|at| at.file.ends_with("jobs.yaml"))
    });
    let at = finding
        .and_then(|f| f.location.as_ref())
        .expect("a finding in jobs.yaml");
    let line = outcome.sources.line(at).expect("the quoted line");
    assert_eq!(line, text_line(&jobs, at.line));
    assert!(line.contains("shmSize"), "{line}");
}

fn text_line(path: &Path, line: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().nth(line - 1).unwrap().to_owned()
}
