//! Compare rendered files with what a directory holds (golden files), or two trees.

use std::collections::BTreeMap;
use std::path::Path;

use walkdir::WalkDir;

use crate::error::Error;
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

    /// `12 checked, 2 differ, 1 missing, 0 stale`
    pub fn summary(&self) -> String {
        format!(
            "{} checked, {} differ, {} missing, {} stale",
            self.same + self.files.len() - self.count(Status::Stale),
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

/// Compares rendered jobs with `dir` as they arrive, keeping only what differs:
/// memory grows with the differences, not with the number of jobs.
pub struct Comparator {
    dir: std::path::PathBuf,
    /// Keep both texts of what differs (for diffs); without, only paths and statuses.
    keep_text: bool,
    changed: std::sync::Mutex<Vec<FileDiff>>,
    rendered: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

impl Comparator {
    pub fn new(dir: &Path, keep_text: bool) -> Self {
        Comparator {
            dir: dir.to_path_buf(),
            keep_text,
            changed: Default::default(),
            rendered: Default::default(),
        }
    }

    fn compare(&self, file: &OutputFile) -> Result<(), Error> {
        let path = self.dir.join(&file.path);
        let diff = match crate::files::read_regular(&path) {
            Ok(bytes) if bytes == file.text.as_bytes() => None,
            Ok(bytes) => Some(FileDiff {
                path: file.path.clone(),
                status: Status::Differs,
                old: Some(lossy(bytes)),
                new: Some(file.text.clone()),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(FileDiff {
                path: file.path.clone(),
                status: Status::Missing,
                old: None,
                new: Some(file.text.clone()),
            }),
            Err(e) => return Err(Error::io(&path, e)),
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

    /// The comparison: what differs, what is missing, and the files under `dir` that
    /// nothing rendered (stale).
    pub fn finish(self) -> Result<Comparison, Error> {
        let rendered = self
            .rendered
            .into_inner()
            .unwrap_or_else(|p| p.into_inner());
        let mut files = self.changed.into_inner().unwrap_or_else(|p| p.into_inner());
        let same = rendered.len() - files.len();
        for path in list_tree(&self.dir)? {
            if !rendered.contains(&path) {
                let old = if self.keep_text {
                    let full = self.dir.join(&path);
                    Some(lossy(
                        std::fs::read(&full).map_err(|e| Error::io(&full, e))?,
                    ))
                } else {
                    None
                };
                files.push(FileDiff {
                    path,
                    status: Status::Stale,
                    old,
                    new: None,
                });
            }
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
pub fn paths(old: &Path, new: &Path) -> Result<Comparison, Error> {
    if old.is_file() && new.is_file() {
        let name = new.to_string_lossy().into_owned();
        let read = |p: &Path| std::fs::read(p).map_err(|e| Error::io(p, e));
        let old_map = BTreeMap::from([(name.clone(), lossy(read(old)?))]);
        let new_map = BTreeMap::from([(name, lossy(read(new)?))]);
        return Ok(Comparison::from_maps(old_map, new_map));
    }
    for p in [old, new] {
        if !p.is_dir() {
            let kind = if p.exists() {
                "is not a directory while the other is"
            } else {
                "does not exist"
            };
            return Err(Error::Usage(format!("{}: {kind}", p.display())));
        }
    }
    Ok(Comparison::from_maps(read_tree(old)?, read_tree(new)?))
}

/// Every file below `dir` by relative path (sorted), skipping rdmagen's staging
/// directories; a missing `dir` holds nothing.
pub fn list_tree(dir: &Path) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    if !dir.exists() {
        return Ok(out);
    }
    let walker = WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !e.file_name()
                .to_string_lossy()
                .starts_with(".rdmagen-staging")
        });
    for entry in walker {
        let entry = entry.map_err(|e| Error::io(dir, e.into()))?;
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(out)
}

/// Every file below `dir` with its text.
pub fn read_tree(dir: &Path) -> Result<BTreeMap<String, String>, Error> {
    let mut out = BTreeMap::new();
    for rel in list_tree(dir)? {
        let path = dir.join(&rel);
        let bytes = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        out.insert(rel, lossy(bytes));
    }
    Ok(out)
}

fn lossy(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}
