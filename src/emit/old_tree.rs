//! What an output directory holds before a run: every entry, walked once without
//! following anything, and which files rdmagen can prove it wrote.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;

use super::owned::{self, Fingerprint, Proof, RECORD, Record};
use crate::error::Error;
use crate::files;

#[derive(Debug, Default)]
pub struct OldTree {
    /// The real path of the directory.
    root: PathBuf,
    /// The path as the user wrote it, for messages.
    shown: PathBuf,
    /// Every entry below the root by relative path: regular files and directories
    /// only (anything else is refused when the tree is read).
    entries: BTreeMap<String, FileType>,
    /// Files rdmagen wrote, by its record (or, without one, by their names), with the
    /// fingerprint of what it wrote where the record has one.
    owned: Record,
}

impl OldTree {
    /// An empty tree, for a directory that does not exist yet.
    pub fn empty(root: PathBuf, shown: PathBuf) -> Self {
        OldTree {
            root,
            shown,
            ..OldTree::default()
        }
    }

    /// Walk `root`. A symlink, FIFO, socket or device anywhere below it is an error
    /// that names it: rdmagen neither reads through, replaces, nor keeps what it cannot
    /// copy or prove harmless.
    pub fn scan(root: PathBuf, shown: PathBuf) -> Result<Self, Error> {
        let mut entries = BTreeMap::new();
        for entry in files::walk(&root).map_err(|e| Error::io(&shown, e))? {
            match entry.kind {
                FileType::RegularFile | FileType::Directory => {}
                FileType::Symlink => {
                    return Err(Error::io(&shown.join(&entry.rel), files::symlink_refused()));
                }
                other => {
                    return Err(Error::Usage(format!(
                        "{}: is {}; an output directory holds only files and directories",
                        shown.join(&entry.rel).display(),
                        files::kind_name(other)
                    )));
                }
            }
            entries.insert(entry.rel, entry.kind);
        }
        let owned = match entries.get(RECORD) {
            Some(FileType::RegularFile) => {
                let path = root.join(RECORD);
                let text = files::read_regular(&path).map_err(|e| Error::io(&path, e))?;
                owned::parse(&String::from_utf8_lossy(&text))
            }
            Some(_) => {
                return Err(Error::Usage(format!(
                    "{}: is not a file",
                    shown.join(RECORD).display()
                )));
            }
            None => entries
                .keys()
                .filter(|rel| owned::is_output_name(rel))
                .map(|rel| (rel.clone(), Proof::Listed))
                .collect(),
        };
        let owned = owned
            .into_iter()
            .filter(|(rel, _)| entries.get(rel) == Some(&FileType::RegularFile))
            .collect();
        Ok(OldTree {
            root,
            shown,
            entries,
            owned,
        })
    }

    /// Whether a regular file is at `rel`; an error when something else is there or
    /// on the way to it (a file where a directory should be).
    pub fn has_file(&self, rel: &str) -> Result<bool, Error> {
        let mut prefix = 0;
        while let Some(slash) = rel[prefix..].find('/') {
            let dir = &rel[..prefix + slash];
            match self.entries.get(dir) {
                None | Some(FileType::Directory) => {}
                Some(_) => return Err(self.in_the_way(dir, "a directory")),
            }
            prefix += slash + 1;
        }
        match self.entries.get(rel) {
            None => Ok(false),
            Some(FileType::RegularFile) => Ok(true),
            Some(_) => Err(self.in_the_way(rel, "a file")),
        }
    }

    fn in_the_way(&self, rel: &str, wanted: &str) -> Error {
        Error::Usage(format!(
            "{}: rdmagen writes {wanted} here, and something else is in the way; move it",
            self.shown.join(rel).display()
        ))
    }

    /// The real path of `rel`.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Every regular file, except the ownership record.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|(rel, kind)| **kind == FileType::RegularFile && *rel != RECORD)
            .map(|(rel, _)| rel.as_str())
    }

    /// Every directory, parents before children.
    pub fn dirs(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|(_, kind)| **kind == FileType::Directory)
            .map(|(rel, _)| rel.as_str())
    }

    /// Whether rdmagen can prove it wrote `rel` (a damaged record line proves nothing).
    pub fn owns(&self, rel: &str) -> bool {
        matches!(self.owned.get(rel), Some(Proof::Bytes(_) | Proof::Listed))
    }

    /// Whether `rel`'s record line is damaged (for the message that refuses it).
    pub fn damaged(&self, rel: &str) -> bool {
        self.owned.get(rel) == Some(&Proof::Damaged)
    }

    /// Whether `bytes`, what `rel` holds now, differ from what the record says rdmagen
    /// wrote there (false when the record has no fingerprint for it).
    pub fn edited(&self, rel: &str, bytes: &[u8]) -> bool {
        matches!(self.owned.get(rel), Some(Proof::Bytes(wrote)) if *wrote != Fingerprint::of(bytes))
    }

    /// What the record proves of `rel`, for a file that stays in the new record.
    pub fn proof(&self, rel: &str) -> Option<Proof> {
        self.owned.get(rel).copied()
    }

    /// `rel` as the user would name it, for messages.
    pub fn shown(&self, rel: &str) -> PathBuf {
        self.shown.join(rel)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}
