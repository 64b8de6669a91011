//! Where a job's files go below `-o DIR`: `DIR/<job>/`, unless jobs in more than one
//! namespace share the name (a job without a namespace counts as one more); then each
//! of those jobs that has a namespace goes to `DIR/<job>.<namespace>/`, Kubernetes'
//! `name.namespace` order, and one without keeps `DIR/<job>/`. Job names are DNS-1035
//! labels (RDG007) and namespaces DNS-1123 labels (RDG116), so neither holds a dot and
//! `<job>.<namespace>` is never another job's directory.
//!
//! Whether a name is shared is known once every input is parsed: the first pass
//! collects every job's name and namespace, before any job is rendered.

use std::collections::BTreeSet;

use crate::diagnostics::Location;
use crate::diagnostics::{Findings, Rule};
use crate::pipeline::sink::Order;

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
    /// The placement of jobs with these keys, in any order. Sorted by reference: a
    /// copy of every key was 4 MB at 50 000 jobs, at the first pass's peak.
    pub(super) fn of<'k>(keys: impl IntoIterator<Item = &'k Key>) -> Self {
        let mut keys: Vec<&Key> = keys.into_iter().collect();
        keys.sort_unstable();
        let mut placement = Placement::default();
        for pair in keys.windows(2) {
            let ((a, a_ns), (b, b_ns)) = (pair[0], pair[1]);
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

/// Two jobs with one name in one namespace are one Kubernetes object, and would write
/// one directory: every later one (in input order) is an error. In two namespaces they
/// are two objects.
pub(super) fn duplicate_names(mut names: Vec<(Key, Order, Location)>, findings: &mut Findings) {
    names.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    for pair in names.windows(2) {
        if pair[0].0 == pair[1].0 {
            let (name, namespace) = &pair[1].0;
            let message = match namespace {
                Some(ns) => format!("job `{name}` is defined more than once in namespace `{ns}`"),
                None => format!("job `{name}` is defined more than once"),
            };
            findings.at(Rule::DuplicateName, message, pair[1].2.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str, ns: Option<&str>) -> Key {
        (name.to_owned(), ns.map(str::to_owned))
    }

    #[test]
    fn a_name_in_two_namespaces_gets_a_directory_per_namespace() {
        let p = Placement::of(&[
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
        let p = Placement::of(&[
            key("train", Some("team-a")),
            key("train", Some("team-a")),
            key("eval", None),
            key("eval", None),
        ]);
        assert!(p.is_duplicated("train", Some("team-a")));
        assert!(p.is_duplicated("eval", None));
        assert_eq!(p.dir("train", Some("team-a")), "train");
    }
}
