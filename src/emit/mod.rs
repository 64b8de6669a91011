//! Emit: replace an output directory's tree with the rendered one, all or nothing.
//!
//! - [`output_dir`] resolves `-o DIR` once (no symlink, no `..` after a missing name)
//!   and locks it, so runs on one directory take turns.
//! - [`old_tree`] reads what DIR holds, without following anything, and which files
//!   rdmagen can prove it wrote ([`owned`]: the `.rdmagen-owned` record, with the
//!   fingerprint of each; a name proves nothing). A file it cannot prove it wrote, or
//!   one edited since, is never replaced unless the run says `--force`, and never
//!   pruned; a directory with files and no record is not an output directory unless
//!   the run says `--force`.
//! - [`OutputWriter`] stages each rendered file as it arrives into a new tree beside
//!   DIR; on success it adds hard links to everything it keeps (unchanged outputs, the
//!   user's files, stale files not pruned), checks that nothing it judged changed
//!   meanwhile, and [`swap`] exchanges the trees in one rename. A failure at any
//!   point before the swap removes only the staging area, which this run created.

pub mod old_tree;
pub mod output_dir;
pub mod owned;
pub mod swap;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::Error;
use crate::files;
use crate::pipeline::{Order, OutputFile, RenderedJob, Sink};

pub use old_tree::{OldTree, Unproven};
pub use output_dir::{Access, OutputDir, Waiting, refuse_place};
use owned::{Fingerprint, Proof, RECORD, Record};

/// What a write did, for the summary line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub created: usize,
    pub updated: usize,
    pub unchanged: usize,
    /// Stale files deleted (`--prune`): rdmagen's own, by its record.
    pub pruned: BTreeSet<String>,
    /// Stale files `--prune` kept although the record lists them, and why: their
    /// bytes are not provably rdmagen's (edited since, or a record line that proves
    /// nothing).
    pub kept: BTreeMap<String, Unproven>,
    /// Edits made while a run rendered (this one, or a killed one this run finished),
    /// put back in DIR in place of the rendered file.
    pub restored: Vec<PathBuf>,
    /// Edits that could not be put back, left in a staging area.
    pub kept_aside: Vec<PathBuf>,
    /// What a clean-up could not remove (the old tree's remains), to report.
    pub left: Vec<PathBuf>,
}

impl Written {
    /// The error that ends a run whose clean-up found edits: the run wrote its tree,
    /// but someone's work is now where they may not look for it, so it must not pass
    /// unnoticed (exit 2).
    pub fn edits(&self) -> Option<Error> {
        edits_error(&self.restored, &self.kept_aside, "this run")
    }
}

fn edits_error(restored: &[PathBuf], kept_aside: &[PathBuf], whose: &str) -> Option<Error> {
    if restored.is_empty() && kept_aside.is_empty() {
        return None;
    }
    let list = |paths: &[PathBuf]| {
        paths
            .iter()
            .map(|p| files::shown_relative(p).display().to_string())
            .collect::<Vec<_>>()
    };
    let mut parts = Vec::new();
    if !restored.is_empty() {
        parts.push(format!(
            "{} file(s) edited while {whose} rendered them are back in place of what it \
             rendered, so the edit is not lost (the next run refuses to replace them until \
             the change is in the job or pool, or --force): {}",
            restored.len(),
            list_cut(&list(restored), ", ")
        ));
    }
    if !kept_aside.is_empty() {
        parts.push(format!(
            "{} edited or new file(s) could not be put back and stay where they are; move \
             them by hand: {}",
            kept_aside.len(),
            list_cut(&list(kept_aside), ", ")
        ));
    }
    Some(Error::Usage(parts.join("; ")))
}

/// At most 20 names joined by `sep`, then how many more: every message that lists
/// files stays one bounded line.
fn list_cut(names: &[impl AsRef<str>], sep: &str) -> String {
    const SHOWN: usize = 20;
    let mut listed = names
        .iter()
        .take(SHOWN)
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(sep);
    if names.len() > SHOWN {
        listed.push_str(&format!("{sep}and {} more", names.len() - SHOWN));
    }
    listed
}

/// Builds the new tree of an output directory as jobs are rendered, and swaps it in.
/// Safe to use from several threads.
pub struct OutputWriter {
    out: OutputDir,
    old: Arc<OldTree>,
    staging: Option<swap::Staging>,
    /// The new tree being built (inside the staging area).
    tree: PathBuf,
    /// Replace and prune files rdmagen cannot prove are its own as written (`--force`).
    force: bool,
    /// Every rendered path, with the fingerprint of what was rendered there.
    rendered: Mutex<BTreeMap<String, Fingerprint>>,
    /// Files this run would replace that are not rdmagen's as written: each one's
    /// message. Any of them fails the run at commit, before anything changes.
    refused: Mutex<Vec<String>>,
    /// What the old tree held at each path this run replaces or prunes, as it was
    /// judged: after the swap the old file is deleted only if it still holds these
    /// bytes, so an edit made while the run renders is kept, not lost.
    judged: Mutex<BTreeMap<String, Fingerprint>>,
    unchanged: Mutex<Vec<String>>,
    created: AtomicUsize,
    updated: AtomicUsize,
    /// What earlier, killed runs left and this one could not remove.
    recovered_left: Vec<PathBuf>,
}

impl OutputWriter {
    /// Lock `dir` (creating it when missing), finish what killed runs left beside it,
    /// read what it holds, and create the staging area. With `force`, files rdmagen
    /// did not write, or that were edited since, are replaced too (never pruned), and
    /// a directory without a record may be written into.
    pub fn open(dir: &Path, waiting: &mut Waiting<'_>, force: bool) -> Result<Self, Error> {
        let Some(out) = OutputDir::open(dir, Access::Exclusive, true, waiting)? else {
            return Err(Error::Usage(format!(
                "{}: cannot be created",
                dir.display()
            )));
        };
        let recovered = swap::recover(&out.parent, &out.name, &out.path());
        if let Some(edits) = edits_error(
            &recovered.restored,
            &recovered.kept_aside,
            "a killed rdmagen run",
        ) {
            return Err(edits);
        }
        let old = Arc::new(OldTree::scan(out.path(), dir.to_path_buf())?);
        if let Some(repository) = old
            .dirs()
            .find(|rel| rel.rsplit('/').next() == Some(".git"))
        {
            // A repository below: rendering would rebuild its .git with new inodes,
            // and its files would be one --force away from being replaced.
            return Err(Error::Usage(format!(
                "{}: holds a repository ({}), so it is not an output directory; name a \
                 directory of its own, e.g. rendered/",
                dir.display(),
                old.shown(repository).display()
            )));
        }
        let unrecorded = old.unrecorded_files();
        if !force && !unrecorded.is_empty() {
            return Err(no_record(dir, &unrecorded));
        }
        let recovered_left = recovered.left;
        let staging = swap::Staging::create(&out.parent, &out.name).map_err(|e| {
            Error::io(
                &out.parent,
                std::io::Error::other(format!(
                    "cannot create the staging area for {} beside it: {e}",
                    dir.display()
                )),
            )
        })?;
        Ok(OutputWriter {
            out,
            old,
            tree: staging.tree.clone(),
            staging: Some(staging),
            force,
            rendered: Mutex::default(),
            refused: Mutex::default(),
            judged: Mutex::default(),
            unchanged: Mutex::default(),
            created: AtomicUsize::new(0),
            updated: AtomicUsize::new(0),
            recovered_left,
        })
    }

    /// What the directory held when the run started.
    pub fn old_tree(&self) -> Arc<OldTree> {
        Arc::clone(&self.old)
    }

    /// Stage one rendered file (or note it unchanged).
    pub fn put(&self, file: &OutputFile) -> Result<(), Error> {
        let rel = file.path.as_str();
        if !owned::is_plain_relative(rel) || rel == RECORD {
            return Err(Error::Usage(format!(
                "refusing to write {rel:?}: not a plain path below the output directory"
            )));
        }
        let fingerprint = Fingerprint::of(file.text.as_bytes());
        if lock(&self.rendered)
            .insert(rel.to_owned(), fingerprint)
            .is_some()
        {
            return Err(Error::Usage(format!("{rel} is rendered twice")));
        }
        if self.old.has_file(rel)? {
            let old = self
                .old
                .read(rel)
                .map_err(|e| Error::io(&self.old.shown(rel), e))?;
            if old == file.text.as_bytes() {
                lock(&self.unchanged).push(rel.to_owned());
                return Ok(());
            }
            if let Some(why) = self.not_to_replace(rel, &old) {
                lock(&self.refused).push(why);
            }
            lock(&self.judged).insert(rel.to_owned(), Fingerprint::of(&old));
            self.updated.fetch_add(1, Ordering::Relaxed);
        } else {
            self.created.fetch_add(1, Ordering::Relaxed);
        }
        write_new(&self.tree.join(rel), file.text.as_bytes())
    }

    /// Why `rel`, which holds `old` and is about to be replaced, is not rdmagen's to
    /// replace; None when it is (or under `--force`).
    fn not_to_replace(&self, rel: &str, old: &[u8]) -> Option<String> {
        if self.force {
            return None;
        }
        let why = self.old.proven(rel, old).err()?;
        Some(format!("{} ({})", self.old.shown(rel).display(), why.why()))
    }

    /// Finish the new tree and swap it in; with `prune`, rdmagen's own files that no
    /// input rendered are left out of it. Nothing changes on disk when nothing would,
    /// or when a file rdmagen cannot prove is its own would be replaced.
    pub fn commit(mut self, prune: bool) -> Result<Written, Error> {
        let mut refused = std::mem::take(&mut *lock(&self.refused));
        // Jobs render in parallel: sorted, the message is the same on every run.
        refused.sort();
        if !refused.is_empty() {
            return Err(refusal(&refused));
        }
        let rendered = std::mem::take(&mut *lock(&self.rendered));
        let unchanged = std::mem::take(&mut *lock(&self.unchanged));
        let mut written = Written {
            created: self.created.load(Ordering::Relaxed),
            updated: self.updated.load(Ordering::Relaxed),
            unchanged: unchanged.len(),
            left: std::mem::take(&mut self.recovered_left),
            ..Written::default()
        };
        let old = Arc::clone(&self.old);
        let stale: Vec<&str> = old
            .files()
            .filter(|rel| !rendered.contains_key(*rel))
            .collect();
        // Only proof deletes: --force replaces what a run renders, it never prunes.
        for rel in stale.iter().filter(|rel| prune && old.listed(rel)) {
            // Unreadable counts as edited: deleting needs proof.
            let now = old.read(rel);
            match now.as_deref().map(|now| (old.proven(rel, now), now)) {
                Ok((Ok(()), now)) => {
                    written.pruned.insert((*rel).to_owned());
                    lock(&self.judged).insert((*rel).to_owned(), Fingerprint::of(now));
                }
                Ok((Err(why), _)) => {
                    written.kept.insert((*rel).to_owned(), why);
                }
                Err(_) => {
                    written.kept.insert((*rel).to_owned(), Unproven::Edited);
                }
            }
        }
        let kept: Vec<&str> = stale
            .into_iter()
            .filter(|rel| !written.pruned.contains(*rel))
            .collect();
        // A kept file stays listed with the fingerprint of what rdmagen wrote, so an
        // edit keeps it the user's.
        let mut owned_now: Record = rendered
            .iter()
            .map(|(rel, fingerprint)| (rel.clone(), Proof::Bytes(*fingerprint)))
            .collect();
        owned_now.extend(
            kept.iter()
                .filter_map(|rel| old.proof(rel).map(|proof| ((*rel).to_owned(), proof))),
        );
        let record = owned::format(&owned_now);
        let old_record = match old.has_file(RECORD)? {
            true => old.read(RECORD).ok(),
            false => None,
        };
        let changed = written.created + written.updated > 0
            || !written.pruned.is_empty()
            || old_record.as_deref() != Some(record.as_bytes());
        let Some(mut staging) = self.staging.take() else {
            return Ok(written);
        };
        if !changed {
            staging.discard();
            return Ok(written);
        }
        let judged = std::mem::take(&mut *lock(&self.judged));
        let result = self.build_and_swap(&mut staging, &unchanged, &kept, &record, &judged);
        match result {
            Ok(()) => {
                // What this run replaced or pruned goes with the old tree if it still
                // holds what was judged, and what both trees share by its inode; an
                // edit that slipped in after the last check is put back (see
                // settle_old_tree).
                let settled = swap::settle_old_tree(&staging.tree, Some(&self.out.path()), &judged);
                // Whatever stays keeps its lock file, so the next run tries again.
                if settled.left.is_empty() && settled.kept_aside.is_empty() {
                    let _ = fs::remove_file(staging.container.join("lock"));
                    let _ = fs::remove_dir(&staging.container);
                }
                written.restored.extend(settled.restored);
                written.kept_aside.extend(settled.kept_aside);
                written.left.extend(settled.left);
                Ok(written)
            }
            Err(e) => {
                staging.discard();
                Err(e)
            }
        }
    }

    /// Link what stays, write the record, give directories their modes, flush, check
    /// that nothing judged changed meanwhile, and exchange the trees.
    fn build_and_swap(
        &mut self,
        staging: &mut swap::Staging,
        unchanged: &[String],
        kept: &[&str],
        record: &str,
        judged: &BTreeMap<String, Fingerprint>,
    ) -> Result<(), Error> {
        let tree = staging.tree.clone();
        let old = Arc::clone(&self.old);
        for dir in old.dirs() {
            let path = tree.join(dir);
            match fs::create_dir(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(Error::io(&path, e)),
            }
        }
        for rel in unchanged
            .iter()
            .map(String::as_str)
            .chain(kept.iter().copied())
        {
            old.link_to(rel, &tree.join(rel)).map_err(|e| {
                Error::io(
                    &old.shown(rel),
                    std::io::Error::other(format!("cannot keep it in the new tree: {e}")),
                )
            })?;
        }
        write_new(&tree.join(RECORD), record.as_bytes())?;
        // A directory that held only pruned files goes with them; every other
        // directory keeps the permission bits it had when it was judged (a read-only
        // one too, set last), never those of what took its name since.
        let judged_mode = |rel: &str, path: &Path| {
            let mode = old.mode(rel).unwrap_or(DEFAULT_DIR_MODE);
            swap::set_mode(path, mode).map_err(|e| Error::io(path, e))
        };
        for dir in old.dirs().collect::<Vec<_>>().into_iter().rev() {
            let path = tree.join(dir);
            if fs::remove_dir(&path).is_ok() && !is_empty_dir(&old.path(dir)) {
                continue;
            }
            let _ = fs::create_dir(&path);
            judged_mode(dir, &path)?;
        }
        judged_mode("", &tree)?;
        let dir = self.out.path();
        let io = |e| Error::io(&self.out.shown, e);
        swap::sync_tree(&tree).map_err(io)?;
        let changed = changed_since_judged(&old, &tree, judged, unchanged, kept);
        if !changed.is_empty() {
            return Err(changed_error(&changed));
        }
        staging
            .note_swap(
                self.out.identity()?,
                swap::inode_of(&tree).map_err(io)?,
                judged,
            )
            .map_err(io)?;
        // Hold the lock on the new tree before it takes the name: a run waiting on the
        // old one then finds the name moved and waits on the new one.
        let old_lock = self.out.relock(swap::open_dir(&tree).map_err(io)?)?;
        if let Err(e) = swap::exchange(&tree, &dir, &staging.container.join("old")) {
            let _ = self.out.relock(old_lock);
            return Err(Error::io(
                &self.out.shown,
                std::io::Error::other(format!(
                    "cannot swap the new tree in beside it (a mount point, or a file system \
                     that cannot rename directories?): {e}"
                )),
            ));
        }
        self.out.created = false;
        // The swap is done and cannot be undone here: a failed fsync of the parent only
        // means the rename may not survive a power loss, so it is not an error that
        // would make the caller discard the staging area (now the old tree).
        let _ = swap::sync_dir(&self.out.parent);
        Ok(())
    }
}

impl Drop for OutputWriter {
    /// A run that ends early (an error, a panic) removes its staging area only; the
    /// output directory is as it was.
    fn drop(&mut self) {
        if let Some(staging) = self.staging.take() {
            staging.discard();
        }
    }
}

impl Sink for OutputWriter {
    fn accept(&self, _: Order, job: RenderedJob) -> Result<(), Error> {
        job.files.iter().try_for_each(|f| self.put(f))
    }
}

/// The mode of a directory the old tree did not have (the default of `mkdir`).
const DEFAULT_DIR_MODE: old_tree::DirMode = old_tree::DirMode {
    mode: 0o755,
    uid: None,
    gid: None,
};

/// Files of the old tree that changed after this run judged them: a replaced or
/// pruned file whose bytes differ from what was judged, or a kept one (linked into
/// the new tree) whose name now holds another file. Swapping now would lose the
/// change, so the run stops before the swap instead.
fn changed_since_judged(
    old: &OldTree,
    tree: &Path,
    judged: &BTreeMap<String, Fingerprint>,
    unchanged: &[String],
    kept: &[&str],
) -> Vec<String> {
    let mut changed: Vec<String> = judged
        .iter()
        .filter(|(rel, was)| match old.read(rel) {
            Ok(now) => Fingerprint::of(&now) != **was,
            // Deleted meanwhile: nothing of it to lose.
            Err(e) => e.kind() != std::io::ErrorKind::NotFound,
        })
        .map(|(rel, _)| rel.as_str())
        .chain(
            unchanged
                .iter()
                .map(String::as_str)
                .chain(kept.iter().copied())
                .filter(|rel| {
                    let now = swap::inode_of(&old.path(rel));
                    now.is_ok() && now.ok() != swap::inode_of(&tree.join(rel)).ok()
                }),
        )
        .map(|rel| old.shown(rel).display().to_string())
        .collect();
    changed.sort();
    changed
}

fn changed_error(changed: &[String]) -> Error {
    Error::Usage(format!(
        "{} file(s) changed while this run rendered, after it had judged them: {}. Nothing \
         was written, so the change is in place: run again",
        changed.len(),
        list_cut(changed, ", ")
    ))
}

/// The error for a directory that holds files and no record: nothing in it is
/// provably rdmagen's (a name is no proof), so it is not taken as an output
/// directory. A pull request's `output: services` once made --bless --prune delete
/// a repository's Dockerfiles.
fn no_record(dir: &Path, unrecorded: &[&str]) -> Error {
    Error::Usage(format!(
        "{}: holds {} file(s) and no {RECORD}, so nothing in it is provably rdmagen's \
         ({}). Nothing was written: name a new or empty directory, or rerun with --force \
         to write into it (--force replaces files only at the paths rdmagen renders, and \
         never deletes one)",
        dir.display(),
        unrecorded.len(),
        list_cut(unrecorded, ", ")
    ))
}

/// The error for files a run would replace without proof that they are rdmagen's.
/// One line: the CLI escapes line breaks in an error.
fn refusal(refused: &[String]) -> Error {
    let listed = list_cut(refused, "; ");
    Error::Usage(format!(
        "refusing to replace {} file(s) that may hold someone's work: {listed}. Nothing was \
         written: move the change into the job or pool (a podTemplate overlay), or rerun \
         with --force to replace them",
        refused.len()
    ))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn is_empty_dir(path: &Path) -> bool {
    fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

/// Write a new file in the staging area (which only this run writes to).
fn write_new(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let mut out = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io(path, e))?;
    out.write_all(bytes).map_err(|e| Error::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(dir: &Path) -> OutputWriter {
        let mut waiting = Waiting {
            no_wait: true,
            notify: Box::new(|_| {}),
        };
        OutputWriter::open(dir, &mut waiting, false).unwrap()
    }

    fn file(path: &str, text: &str) -> OutputFile {
        OutputFile {
            path: path.to_owned(),
            text: text.to_owned(),
        }
    }

    /// The attack edited two outputs while a long render ran, after they were judged
    /// rdmagen's: one in place, one by renaming a copy over it. Both edits were lost
    /// (deleted with the old tree, or by the next run's clean-up). Now the run stops
    /// before the swap, names both, and leaves them in place.
    #[test]
    fn an_edit_made_while_the_run_renders_stops_it_before_the_swap() {
        let scratch = tempfile::tempdir().unwrap();
        let out = scratch.path().join("out");
        let first = writer(&out);
        for job in ["a", "b", "c"] {
            first
                .put(&file(&format!("{job}/pytorchjob.yaml"), "v1\n"))
                .unwrap();
        }
        first.commit(false).unwrap();

        let second = writer(&out);
        for job in ["a", "b", "c"] {
            second
                .put(&file(&format!("{job}/pytorchjob.yaml"), "v2\n"))
                .unwrap();
        }
        std::fs::write(out.join("a/pytorchjob.yaml"), "v1 tuned in place\n").unwrap();
        std::fs::write(out.join("b/copy"), "v1 tuned in a copy\n").unwrap();
        std::fs::rename(out.join("b/copy"), out.join("b/pytorchjob.yaml")).unwrap();
        let e = second.commit(false).unwrap_err().to_string();
        let shown = |job: &str| out.join(job).join("pytorchjob.yaml").display().to_string();
        assert!(
            e.starts_with(&format!(
                "2 file(s) changed while this run rendered, after it had judged them: {}, {}.",
                shown("a"),
                shown("b")
            )),
            "{e}"
        );
        let now =
            |job: &str| std::fs::read_to_string(out.join(job).join("pytorchjob.yaml")).unwrap();
        assert_eq!(now("a"), "v1 tuned in place\n");
        assert_eq!(now("b"), "v1 tuned in a copy\n");
        assert_eq!(now("c"), "v1\n");
        let beside: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
        assert_eq!(beside.len(), 1, "the staging area is gone");
    }
}
