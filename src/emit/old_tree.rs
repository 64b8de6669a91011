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
    /// The mode and owner of the root (`""`) and of every directory, as the walk
    /// found them: a directory swapped for a symlink while the run renders must not
    /// hand the new tree the link's `rwxrwxrwx`.
    modes: BTreeMap<String, DirMode>,
    /// Files rdmagen wrote, by its record, with the fingerprint of what it wrote
    /// where the record has one.
    owned: Record,
    /// Whether the directory has a record at all.
    recorded: bool,
}

/// A directory's permission bits and owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirMode {
    pub mode: u32,
    /// The owner, where the walk saw one (`None`: leave the new directory's).
    pub uid: Option<u32>,
    pub gid: Option<u32>,
}

/// Why a file in the old tree is not provably rdmagen's as it is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unproven {
    /// The record does not list it (or there is no record).
    NotListed,
    /// Its record line proves nothing: cut short, garbled, or twice with different
    /// fingerprints.
    Damaged,
    /// The record is from before fingerprints: it names the file, not its bytes.
    NoFingerprint,
    /// Its bytes no longer match the fingerprint rdmagen recorded.
    Edited,
}

impl Unproven {
    /// Why, as a message puts it after the file's name.
    pub fn why(self) -> String {
        match self {
            Unproven::NotListed => format!("not in {RECORD}: rdmagen did not write it"),
            Unproven::Damaged => {
                format!("its line in {RECORD} is damaged, so nothing proves rdmagen wrote it")
            }
            Unproven::NoFingerprint => format!(
                "{RECORD} lists it without a fingerprint (a record from before fingerprints), \
                 so nothing proves its bytes are rdmagen's"
            ),
            Unproven::Edited => {
                format!("edited since rdmagen wrote it: its bytes no longer match {RECORD}")
            }
        }
    }
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
        let mut modes = BTreeMap::new();
        let root_mode = dir_mode(&root).map_err(|e| Error::io(&shown, e))?;
        modes.insert(String::new(), root_mode);
        for entry in files::walk(&root).map_err(|e| Error::io(&shown, e))? {
            match entry.kind {
                FileType::RegularFile => {}
                FileType::Directory => {
                    let mode =
                        dir_mode(&entry.path).map_err(|e| Error::io(&shown.join(&entry.rel), e))?;
                    modes.insert(entry.rel.clone(), mode);
                }
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
        let (owned, recorded) = match entries.get(RECORD) {
            Some(FileType::RegularFile) => {
                let path = root.join(RECORD);
                let text = files::read_regular(&path).map_err(|e| Error::io(&path, e))?;
                (owned::parse(&String::from_utf8_lossy(&text)), true)
            }
            Some(_) => {
                return Err(Error::Usage(format!(
                    "{}: is not a file",
                    shown.join(RECORD).display()
                )));
            }
            None => (Record::new(), false),
        };
        let owned = owned
            .into_iter()
            .filter(|(rel, _)| entries.get(rel) == Some(&FileType::RegularFile))
            .collect();
        Ok(OldTree {
            root,
            shown,
            entries,
            modes,
            owned,
            recorded,
        })
    }

    /// Whether the directory has no record and yet holds files: none of them is
    /// provably rdmagen's, so it is not an output directory unless the run says so.
    pub fn unrecorded_files(&self) -> Vec<&str> {
        match self.recorded {
            true => Vec::new(),
            false => self.files().collect(),
        }
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

    /// Read the file at `rel` as [`files::read_regular`] does, and refuse when a
    /// directory on the way to it is a symlink now: the walk saw directories, but one
    /// may be swapped for a link to anywhere while the run renders.
    pub fn read(&self, rel: &str) -> std::io::Result<Vec<u8>> {
        self.refuse_links_on_the_way(rel)?;
        files::read_regular(&self.path(rel))
    }

    /// Hard-link the regular file at `rel` to `to` (a file the new tree keeps),
    /// refusing links on the way as [`OldTree::read`] does, and a `rel` that is no
    /// longer a regular file (link(2) would link a symlink itself).
    pub fn link_to(&self, rel: &str, to: &Path) -> std::io::Result<()> {
        self.refuse_links_on_the_way(rel)?;
        match files::kind_of(&self.path(rel))? {
            Some(FileType::RegularFile) => std::fs::hard_link(self.path(rel), to),
            Some(FileType::Symlink) => Err(files::symlink_refused()),
            _ => Err(std::io::Error::other("is no longer a regular file")),
        }
    }

    fn refuse_links_on_the_way(&self, rel: &str) -> std::io::Result<()> {
        let mut at = self.root.clone();
        let mut names = rel.split('/').peekable();
        while let Some(name) = names.next() {
            if names.peek().is_none() {
                break;
            }
            at.push(name);
            if files::kind_of(&at)? != Some(FileType::Directory) {
                return Err(std::io::Error::other(format!(
                    "{} is no longer a directory (a symlink?); rdmagen never follows one",
                    at.display()
                )));
            }
        }
        Ok(())
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

    /// Whether `bytes`, what `rel` holds now, are provably what rdmagen wrote there:
    /// the record lists `rel` with their fingerprint. Nothing else is proof.
    pub fn proven(&self, rel: &str, bytes: &[u8]) -> Result<(), Unproven> {
        match self.owned.get(rel) {
            Some(Proof::Bytes(wrote)) if *wrote == Fingerprint::of(bytes) => Ok(()),
            Some(Proof::Bytes(_)) => Err(Unproven::Edited),
            Some(Proof::Listed) => Err(Unproven::NoFingerprint),
            Some(Proof::Damaged) => Err(Unproven::Damaged),
            None => Err(Unproven::NotListed),
        }
    }

    /// Whether the record lists `rel` as rdmagen's, whatever it holds now (a stale
    /// file `--prune` considers).
    pub fn listed(&self, rel: &str) -> bool {
        self.owned.contains_key(rel)
    }

    /// What the record proves of `rel`, for a file that stays in the new record.
    pub fn proof(&self, rel: &str) -> Option<Proof> {
        self.owned.get(rel).copied()
    }

    /// The mode and owner the walk found for directory `rel` (`""`: the root).
    pub fn mode(&self, rel: &str) -> Option<DirMode> {
        self.modes.get(rel).copied()
    }

    /// `rel` as the user would name it, for messages.
    pub fn shown(&self, rel: &str) -> PathBuf {
        self.shown.join(rel)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

fn dir_mode(path: &Path) -> std::io::Result<DirMode> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path)?;
    Ok(DirMode {
        mode: meta.mode() & 0o7777,
        uid: Some(meta.uid()),
        gid: Some(meta.gid()),
    })
}
