//! What every format says about a compared file: the paths it is shown under, its
//! unified diff, and its structural changes.

use crate::diagnostics::escape::printable;
use crate::golden::semantic::{self, Change};
use crate::golden::unified::{self, Unified};
use crate::golden::{FileDiff, Status};

/// How the two sides of a comparison are named.
pub struct Labels<'a> {
    /// Prefix of old paths, e.g. the golden directory.
    pub old: &'a str,
    /// Prefix of new paths, or a fixed label such as "rendered".
    pub new: &'a str,
    /// Whether `new` is a directory prefix (diff) or a fixed label (render --check).
    pub new_is_dir: bool,
}

impl Labels<'_> {
    pub(super) fn old_path(&self, f: &FileDiff) -> String {
        join(self.old, &f.path)
    }

    fn new_path(&self, f: &FileDiff) -> String {
        if self.new_is_dir {
            join(self.new, &f.path)
        } else {
            self.new.to_owned()
        }
    }

    /// The path a reviewer looks at: the new side for files only it has (diff).
    pub(super) fn shown(&self, f: &FileDiff) -> String {
        if f.status == Status::Missing && self.new_is_dir {
            self.new_path(f)
        } else {
            self.old_path(f)
        }
    }

    /// How a file that only one side has is described.
    pub(super) fn one_sided(&self, status: Status) -> &'static str {
        match (status, self.new_is_dir) {
            (Status::Missing, false) => "missing: the render produces this file",
            (Status::Stale, false) => "stale: no input renders this file",
            (Status::Missing, true) => "added: only the new side has this file",
            _ => "removed: only the old side has this file",
        }
    }

    /// The unified diff of one file, its headers named by these labels.
    pub(super) fn unified(&self, f: &FileDiff) -> Unified {
        let old_name = match f.status {
            Status::Missing => "/dev/null".to_owned(),
            _ => self.old_path(f),
        };
        let new_name = match f.status {
            Status::Stale => "/dev/null".to_owned(),
            _ => self.new_path(f),
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
