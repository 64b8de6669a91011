//! Where a job's files go below `-o DIR`: `DIR/<job>/`, unless jobs in more than one
//! namespace share the name (a job without a namespace counts as one more); then each
//! of those jobs that has a namespace goes to `DIR/<job>.<namespace>/`, Kubernetes'
//! `name.namespace` order, and one without keeps `DIR/<job>/`. Job names are DNS-1035
//! labels (RDG007) and namespaces DNS-1123 labels (RDG116), so neither holds a dot and
//! `<job>.<namespace>` is never another job's directory.
//!
//! Whether a name is shared is known only once every input is read, but jobs are
//! handed to the sink as soon as they are rendered. So the names are read first, in a
//! pre-pass that only parses (no schema check, resolve or rendering). Its cost is one
//! more YAML parse of every input, nearly all of it the tokenizer: measured on
//! `bench/generate.py`'s 10 000 jobs, 1.0-1.7 s of a `validate` taking 10-12 s of CPU
//! in the dev build (opt-level 1), about a tenth. `validate` places no files and skips it
//! ([`Sink::places_files`](crate::pipeline::Sink::places_files)).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::model::common::API_VERSION;
use crate::pipeline::worker::{read, workers};
use crate::yaml::tree_value::parse_values_fully;

/// A job's identity in Kubernetes: its name and namespace.
pub(super) type Key = (String, Option<String>);

/// The directory of every job of a run.
#[derive(Debug, Default)]
pub(super) struct Placement {
    /// Names used by jobs in more than one namespace.
    shared: BTreeSet<String>,
    /// Names used more than once in one namespace: an error (RDG006), and two jobs that
    /// would write one directory, so neither is handed to the sink.
    duplicated: BTreeSet<Key>,
}

impl Placement {
    /// The placement of the Jobs in `files`. A file that cannot be read or parsed is
    /// skipped here: the run reads it again and reports it.
    pub(super) fn scan(files: &[PathBuf]) -> Self {
        let next = AtomicUsize::new(0);
        let work = || {
            let mut keys = Vec::new();
            while let Some(path) = files.get(next.fetch_add(1, Ordering::Relaxed)) {
                if let Ok(text) = read(path) {
                    keys.extend(job_keys(&text));
                }
            }
            keys
        };
        let keys = match workers(files.len()) {
            1 => work(),
            n => std::thread::scope(|scope| {
                let handles: Vec<_> = (0..n).map(|_| scope.spawn(work)).collect();
                let mut keys = Vec::new();
                for h in handles {
                    match h.join() {
                        Ok(k) => keys.extend(k),
                        Err(panic) => std::panic::resume_unwind(panic),
                    }
                }
                keys
            }),
        };
        Placement::of(keys)
    }

    /// The placement of jobs with these keys, in any order.
    pub(super) fn of(mut keys: Vec<Key>) -> Self {
        keys.sort_unstable();
        let mut placement = Placement::default();
        for pair in keys.windows(2) {
            let ((a, a_ns), (b, b_ns)) = (&pair[0], &pair[1]);
            if a != b {
                continue;
            }
            if a_ns == b_ns {
                placement.duplicated.insert(pair[1].clone());
            } else {
                placement.shared.insert(b.clone());
            }
        }
        placement
    }

    /// The directory, below the output directory, of the job `name` in `namespace`.
    pub(super) fn dir(&self, name: &str, namespace: Option<&str>) -> String {
        match namespace {
            Some(ns) if self.shared.contains(name) => format!("{name}.{ns}"),
            _ => name.to_owned(),
        }
    }

    /// Whether another job has this job's name and namespace.
    pub(super) fn is_duplicated(&self, name: &str, namespace: Option<&str>) -> bool {
        self.duplicated
            .contains(&(name.to_owned(), namespace.map(str::to_owned)))
    }
}

/// The keys of the Jobs in one file's text, read as the loader reads them: a document
/// is a Job by its `apiVersion` and `kind`, and a null namespace is none.
fn job_keys(text: &str) -> Vec<Key> {
    let Ok(docs) = parse_values_fully(text) else {
        return Vec::new();
    };
    docs.iter()
        .filter(|doc| doc["apiVersion"] == API_VERSION && doc["kind"] == "Job")
        .filter_map(|doc| {
            let meta = &doc["metadata"];
            let name = meta["name"].as_str()?.to_owned();
            Some((name, meta["namespace"].as_str().map(str::to_owned)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str, ns: Option<&str>) -> Key {
        (name.to_owned(), ns.map(str::to_owned))
    }

    #[test]
    fn a_name_in_two_namespaces_gets_a_directory_per_namespace() {
        let p = Placement::of(vec![
            key("train", Some("team-b")),
            key("eval", Some("team-a")),
            key("train", Some("team-a")),
            key("train", None),
        ]);
        assert_eq!(p.dir("train", Some("team-a")), "train.team-a");
        assert_eq!(p.dir("train", Some("team-b")), "train.team-b");
        assert_eq!(p.dir("train", None), "train");
        // A name no other job has keeps today's directory, namespace or not.
        assert_eq!(p.dir("eval", Some("team-a")), "eval");
        assert!(!p.is_duplicated("train", Some("team-a")));
    }

    #[test]
    fn one_name_twice_in_one_namespace_is_a_duplicate_not_a_shared_name() {
        let p = Placement::of(vec![
            key("train", Some("team-a")),
            key("train", Some("team-a")),
            key("eval", None),
            key("eval", None),
        ]);
        assert!(p.is_duplicated("train", Some("team-a")));
        assert!(p.is_duplicated("eval", None));
        assert_eq!(p.dir("train", Some("team-a")), "train");
    }

    #[test]
    fn keys_are_read_as_the_loader_reads_jobs() {
        let text = "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {name: a, namespace: team-a}
---
apiVersion: rdmagen/v1alpha1
kind: Job
metadata:
  name: b
  namespace: null
---
apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: p, namespace: team-a}
---
apiVersion: other/v1
kind: Job
metadata: {name: c}
";
        assert_eq!(
            job_keys(text),
            vec![key("a", Some("team-a")), key("b", None)]
        );
        assert_eq!(job_keys("a: [unclosed"), Vec::<Key>::new());
    }
}
