//! Compare rendered files with what a directory holds (golden files), or two trees.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use rustix::fs::FileType;

use crate::emit::OldTree;
use crate::error::Error;
use crate::files;
use crate::pipeline::OutputFile;

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Same,
    /// Both sides have the file, with different bytes.
    Differs,
    /// Rendered, but not in the directory.
    Missing,
    /// In the directory, but nothing renders it.
    Stale,
}

#[derive(Debug, Clone)]
pub struct FileDiff {
    /// Relative to the compared directory.
    pub path: String,
    pub status: Status,
    /// The directory's (golden) text.
    pub old: Option<String>,
    /// The rendered text.
    pub new: Option<String>,
}

/// The outcome of a comparison: the files that are not the same, sorted by path, and
/// how many are.
#[derive(Debug, Default)]
pub struct Comparison {
    pub files: Vec<FileDiff>,
    /// Files identical on both sides (not listed in `files`).
    pub same: usize,
}

impl Comparison {
    pub fn count(&self, status: Status) -> usize {
        if status == Status::Same {
            return self.same;
        }
        self.files.iter().filter(|f| f.status == status).count()
    }

    pub fn is_clean(&self) -> bool {
        self.files.is_empty()
    }

    pub fn changed(&self) -> impl Iterator<Item = &FileDiff> {
        self.files.iter().filter(|f| f.status != Status::Same)
    }

    /// Every file compared: the same ones, those that differ and those only the new
    /// (rendered) side has; stale files are counted apart.
    pub fn checked(&self) -> usize {
        self.same + self.files.len() - self.count(Status::Stale)
    }

    /// `12 checked, 2 differ, 1 missing, 0 stale`
    pub fn summary(&self) -> String {
        format!(
            "{} checked, {} differ, {} missing, {} stale",
            self.checked(),
            self.count(Status::Differs),
            self.count(Status::Missing),
            self.count(Status::Stale)
        )
    }

    fn from_maps(old: BTreeMap<String, String>, mut new: BTreeMap<String, String>) -> Self {
        let mut files = Vec::new();
        let mut same = 0;
        for (path, old_text) in old {
            let diff = match new.remove(&path) {
                Some(new_text) if new_text == old_text => {
                    same += 1;
                    continue;
                }
                Some(new_text) => FileDiff {
                    path,
                    status: Status::Differs,
                    old: Some(old_text),
                    new: Some(new_text),
                },
                None => FileDiff {
                    path,
                    status: Status::Stale,
                    old: Some(old_text),
                    new: None,
                },
            };
            files.push(diff);
        }
        files.extend(new.into_iter().map(|(path, text)| FileDiff {
            path,
            status: Status::Missing,
            old: None,
            new: Some(text),
        }));
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Comparison { files, same }
    }
}

/// Compares rendered jobs with an output directory as they arrive, keeping only what
/// differs: memory grows with the differences, not with the number of jobs.
pub struct Comparator {
    old: Arc<OldTree>,
    /// Keep both texts of what differs (for diffs); without, only paths and statuses.
    keep_text: bool,
    changed: Mutex<Vec<FileDiff>>,
    rendered: Mutex<BTreeSet<String>>,
}

impl Comparator {
    pub fn new(old: Arc<OldTree>, keep_text: bool) -> Self {
        Comparator {
            old,
            keep_text,
            changed: Default::default(),
            rendered: Default::default(),
        }
    }

    fn read(&self, rel: &str) -> Result<Vec<u8>, Error> {
        self.old
            .read(rel)
            .map_err(|e| Error::io(&self.old.shown(rel), e))
    }

    fn compare(&self, file: &OutputFile) -> Result<(), Error> {
        let diff = if self.old.has_file(&file.path)? {
            let bytes = self.read(&file.path)?;
            (bytes != file.text.as_bytes()).then(|| FileDiff {
                path: file.path.clone(),
                status: Status::Differs,
                old: Some(lossy(bytes)),
                new: Some(file.text.clone()),
            })
        } else {
            Some(FileDiff {
                path: file.path.clone(),
                status: Status::Missing,
                old: None,
                new: Some(file.text.clone()),
            })
        };
        self.rendered
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(file.path.clone());
        if let Some(mut diff) = diff {
            if !self.keep_text {
                (diff.old, diff.new) = (None, None);
            }
            self.changed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(diff);
        }
        Ok(())
    }

    /// The comparison: what differs, what is missing, and every file in the
    /// directory that nothing rendered (stale), rdmagen's ownership record aside.
    pub fn finish(self) -> Result<Comparison, Error> {
        let rendered =
            std::mem::take(&mut *self.rendered.lock().unwrap_or_else(|p| p.into_inner()));
        let mut files =
            std::mem::take(&mut *self.changed.lock().unwrap_or_else(|p| p.into_inner()));
        let same = rendered.len() - files.len();
        for path in self.old.files().filter(|p| !rendered.contains(*p)) {
            let old = match self.keep_text {
                true => Some(lossy(self.read(path)?)),
                false => None,
            };
            files.push(FileDiff {
                path: path.to_owned(),
                status: Status::Stale,
                old,
                new: None,
            });
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Comparison { files, same })
    }
}

impl crate::pipeline::Sink for Comparator {
    fn accept(
        &self,
        _: crate::pipeline::Order,
        job: crate::pipeline::RenderedJob,
    ) -> Result<(), Error> {
        job.files.iter().try_for_each(|f| self.compare(f))
    }
}

/// Two trees, or two files (compared under the new file's name).
/// Either may be `-`, standard input, a file named by `--stdin-filename`.
pub fn paths(old: &Path, new: &Path) -> Result<Comparison, Error> {
    let is_file = |p: &Path| files::is_stdin(p) || p.is_file();
    if is_file(old) && is_file(new) {
        let shown = |p: &Path| match files::is_stdin(p) {
            true => files::stdin_name().to_owned(),
            false => p.to_string_lossy().into_owned(),
        };
        let name = shown(new);
        let read = |p: &Path| files::read_input(p).map_err(|e| Error::io(Path::new(&shown(p)), e));
        let old_map = BTreeMap::from([(name.clone(), lossy(read(old)?))]);
        let new_map = BTreeMap::from([(name, lossy(read(new)?))]);
        return Ok(Comparison::from_maps(old_map, new_map));
    }
    // A path that is not there is named as such before any talk of directories:
    // `diff FILE MISSING` once said MISSING "is not a directory".
    if let Some(absent) = [old, new].into_iter().find(|p| !p.exists()) {
        return Err(Error::Usage(format!(
            "{}: does not exist",
            absent.display()
        )));
    }
    match (old.is_dir(), new.is_dir()) {
        (true, true) => {}
        (false, true) | (true, false) => {
            let (not_dir, dir) = if new.is_dir() { (old, new) } else { (new, old) };
            return Err(Error::Usage(format!(
                "{}: is not a directory while {} is; compare two files or two directories",
                not_dir.display(),
                dir.display()
            )));
        }
        (false, false) => {
            let odd = if old.is_file() { new } else { old };
            return Err(Error::Usage(format!(
                "{}: is not a regular file",
                odd.display()
            )));
        }
    }
    Ok(Comparison::from_maps(read_tree(old)?, read_tree(new)?))
}

/// Every file below `dir` with its text. A symlink, FIFO or device below it is an
/// error that names it: nothing is followed or read but regular files.
pub fn read_tree(dir: &Path) -> Result<BTreeMap<String, String>, Error> {
    let mut out = BTreeMap::new();
    for entry in files::walk(dir).map_err(|e| Error::io(dir, e))? {
        match entry.kind {
            FileType::Directory => {}
            FileType::RegularFile => {
                let bytes =
                    files::read_regular(&entry.path).map_err(|e| Error::io(&entry.path, e))?;
                out.insert(entry.rel, lossy(bytes));
            }
            FileType::Symlink => return Err(Error::io(&entry.path, files::symlink_refused())),
            other => {
                return Err(Error::io(
                    &entry.path,
                    std::io::Error::other(format!(
                        "is {}; rdmagen reads only regular files",
                        files::kind_name(other)
                    )),
                ));
            }
        }
    }
    Ok(out)
}

fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
