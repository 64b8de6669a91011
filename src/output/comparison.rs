//! What every format says about a compared file: the paths it is shown under, its
//! unified diff, and its structural changes.

use crate::diagnostics::escape::printable;
use crate::golden::semantic::{self, Change};
use crate::golden::unified::{self, Hunk, Unified};
use crate::golden::{FileDiff, Status};

/// How the two sides of a comparison are named.
#[derive(Debug, Clone, Copy)]
pub enum Labels<'a> {
    /// `diff OLD NEW` of two directories: each file below both.
    Directories { old: &'a str, new: &'a str },
    /// `diff OLD NEW` of two files, each side under its own name.
    Files { old: &'a str, new: &'a str },
    /// `render --check -o DIR`: DIR's files against what the inputs render. Diffs are
    /// patches that bring DIR up to date, with git's `a/` and `b/` headers, so
    /// `git apply` (or `patch -p1`) takes them from where rdmagen ran.
    Golden { dir: &'a str },
}

impl Labels<'_> {
    fn old_path(&self, f: &FileDiff) -> String {
        match *self {
            Labels::Directories { old, .. } => join(old, &f.path),
            Labels::Files { old, .. } => old.to_owned(),
            Labels::Golden { dir } => join(dir, &f.path),
        }
    }

    fn new_path(&self, f: &FileDiff) -> String {
        match *self {
            Labels::Directories { new, .. } => join(new, &f.path),
            Labels::Files { new, .. } => new.to_owned(),
            Labels::Golden { dir } => join(dir, &f.path),
        }
    }

    /// The path a reviewer looks at: the new side's for two files and for files
    /// only the new directory has, else the old side's (the golden file).
    pub(super) fn shown(&self, f: &FileDiff) -> String {
        match (self, f.status) {
            (Labels::Files { .. }, _) | (Labels::Directories { .. }, Status::Missing) => {
                self.new_path(f)
            }
            _ => self.old_path(f),
        }
    }

    /// The line of `hunk` in the file [`Self::shown`] names.
    pub(super) fn shown_line(&self, hunk: &Hunk) -> usize {
        match self {
            Labels::Files { .. } => hunk.first_new_line,
            _ => hunk.first_old_line,
        }
    }

    /// What a changed file is said to differ from: the render, or the old side's file.
    pub(super) fn differs(&self, f: &FileDiff) -> String {
        match self {
            Labels::Golden { .. } => "differs from the rendered output".to_owned(),
            _ => format!("differs from {}", self.old_path(f)),
        }
    }

    /// How a file that only one side has is described.
    pub(super) fn one_sided(&self, status: Status) -> &'static str {
        match (status, self) {
            (Status::Missing, Labels::Golden { .. }) => "missing: the render produces this file",
            (Status::Stale, Labels::Golden { .. }) => "stale: no input renders this file",
            (Status::Missing, _) => "added: only the new side has this file",
            _ => "removed: only the old side has this file",
        }
    }

    /// The unified diff of one file, its headers named by these labels.
    pub(super) fn unified(&self, f: &FileDiff) -> Unified {
        // git's prefixes, on an absolute path too as `git diff --no-index` writes
        // it (`a/tmp/x` for /tmp/x): a patch relative to /.
        let git_path = |prefix: &str, path: String| match self {
            Labels::Golden { .. } => format!("{prefix}{}", path.trim_start_matches('/')),
            _ => path,
        };
        let old_name = match f.status {
            Status::Missing => "/dev/null".to_owned(),
            _ => git_path("a/", self.old_path(f)),
        };
        let new_name = match f.status {
            Status::Stale => "/dev/null".to_owned(),
            _ => git_path("b/", self.new_path(f)),
        };
        // The names go into the `---`/`+++` headers of a text that is later split at
        // line breaks, so a line break in a path must be escaped before, not after.
        unified::diff(
            f.old.as_deref().unwrap_or(""),
            f.new.as_deref().unwrap_or(""),
            &printable(&old_name),
            &printable(&new_name),
        )
    }
}

fn join(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        path.to_owned()
    } else {
        format!("{}/{path}", prefix.trim_end_matches('/'))
    }
}

/// The structural changes of a YAML file that differs; none for other files.
pub(super) fn changes(f: &FileDiff) -> Result<Vec<Change>, String> {
    match (f.status, &f.old, &f.new) {
        (Status::Differs, Some(old), Some(new)) if is_yaml(&f.path) => semantic::changes(old, new),
        _ => Ok(Vec::new()),
    }
}

fn is_yaml(path: &str) -> bool {
    path.ends_with(".yaml") || path.ends_with(".yml")
}
