//! The new tree beside the old one, and the one rename that swaps them.
//!
//! A run builds the whole new output directory in a staging area next to it,
//! `PARENT/.rdmagen-<name>.<id>/tree`, then exchanges the two directories with
//! `renameat2(RENAME_EXCHANGE)`: one system call, so the path names either the old
//! tree or the new one, whatever fails and whenever the process is killed. Files
//! rdmagen keeps (unchanged outputs, the user's own files) are hard links, so
//! nothing is copied and their timestamps survive.
//!
//! The staging area holds a `lock` file, flock'd while its run lives: a staging area
//! whose lock can be taken belongs to a killed run. The lock file also names the
//! staging directory's own inode (which a committed file cannot forge) and, just
//! before the swap, the inodes of the old and new trees, so the next run can tell
//! whether the swap happened and finish the clean-up either way.

use std::collections::BTreeSet;
use std::fs;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, FlockOperation, Mode, OFlags, RenameFlags};

use super::owned::{self, RECORD};
use crate::files;

const PREFIX: &str = ".rdmagen-";

/// A staging area: `container/lock` and `container/tree`.
#[derive(Debug)]
pub struct Staging {
    pub container: PathBuf,
    pub tree: PathBuf,
    lock: fs::File,
}

type Inode = (u64, u64);

impl Staging {
    /// Create a staging area beside `parent/name`.
    pub fn create(parent: &Path, name: &std::ffi::OsStr) -> io::Result<Self> {
        let shown = name.to_string_lossy();
        let unique = format!(
            "{PREFIX}{}.{}-{}",
            short(&shown),
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
        );
        let container = parent.join(unique);
        fs::create_dir(&container)?;
        let fill = || -> io::Result<Staging> {
            let mut lock = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(container.join("lock"))?;
            rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive)?;
            let (dev, ino) = inode_of(&container)?;
            writeln!(lock, "for {shown}\ncontainer {dev}:{ino}")?;
            let tree = container.join("tree");
            fs::create_dir(&tree)?;
            Ok(Staging {
                container: container.clone(),
                tree,
                lock,
            })
        };
        // A full disk can stop this half-way: what was made goes again, or it would
        // stay forever (its lock file could never name it).
        fill().inspect_err(|_| {
            let _ = fs::remove_dir_all(&container);
        })
    }

    /// Write down both trees' identities before swapping, so that a run killed
    /// during the swap can be finished by the next one.
    pub fn note_swap(&mut self, old: Inode, new: Inode) -> io::Result<()> {
        writeln!(
            self.lock,
            "old {}:{}\nnew {}:{}",
            old.0, old.1, new.0, new.1
        )?;
        self.lock.sync_all()
    }

    /// Remove the staging area before any swap: it holds only files this run wrote
    /// and hard links to files that stay in the output directory.
    pub fn discard(self) {
        let _ = fs::remove_dir_all(&self.container);
    }
}

/// The output directory's name as it appears in its staging area's name: at most 100
/// bytes, so the whole name stays under NAME_MAX (255 bytes) whatever DIR is called.
fn short(name: &str) -> &str {
    let mut end = name.len().min(100);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    &name[..end]
}

/// Exchange `new` and `dir` in one system call. On file systems without
/// RENAME_EXCHANGE (NFS, some FUSE), fall back to two renames through `aside`: a
/// kill between them leaves `dir` missing, which the next run rolls forward.
pub fn exchange(new: &Path, dir: &Path, aside: &Path) -> io::Result<()> {
    let cwd = rustix::fs::CWD;
    match rustix::fs::renameat_with(cwd, new, cwd, dir, RenameFlags::EXCHANGE) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::OPNOTSUPP) => {
            fs::rename(dir, aside)?;
            fs::rename(new, dir).inspect_err(|_| {
                let _ = fs::rename(aside, dir);
            })?;
            // `aside` now holds the old tree; the caller cleans `new`'s name, so move
            // it back there.
            fs::rename(aside, new)
        }
        Err(e) => Err(e.into()),
    }
}

/// Flush everything written below `dir` (the file system's buffers, once, rather
/// than one fsync per file).
pub fn sync_tree(dir: &Path) -> io::Result<()> {
    let fd = open_dir(dir)?;
    rustix::fs::syncfs(&fd)?;
    Ok(())
}

/// fsync a directory, so a rename in it is on disk.
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    rustix::fs::fsync(open_dir(dir)?)?;
    Ok(())
}

pub fn open_dir(dir: &Path) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    Ok(rustix::fs::open(dir, flags, Mode::empty())?)
}

pub fn inode_of(path: &Path) -> io::Result<Inode> {
    let stat = rustix::fs::lstat(path)?;
    Ok((stat.st_dev, stat.st_ino))
}

/// Remove the old tree once the new one is in place, deleting only what is provably
/// rdmagen's or still in the new tree: a file rdmagen owned (`owned`), its record, or
/// a name whose inode the new tree also holds (kept files are hard links). Anything
/// else appeared while the run worked, and is moved back into the new tree; what
/// cannot be moved stays, and is returned.
pub fn clear_old_tree(old: &Path, new: &Path, owned: &BTreeSet<String>) -> Vec<PathBuf> {
    let Ok(entries) = files::walk(old) else {
        return vec![old.to_path_buf()];
    };
    // Directories are never shared between the trees (only files are linked), so the
    // old ones may be opened up for the deletion (a read-only job directory).
    for entry in entries.iter().filter(|e| e.kind == FileType::Directory) {
        let _ = fs::set_permissions(&entry.path, fs::Permissions::from_mode(0o700));
    }
    let mut left = Vec::new();
    for entry in entries.iter().rev() {
        if entry.kind == FileType::Directory {
            if fs::remove_dir(&entry.path).is_err() {
                left.push(entry.path.clone());
            }
            continue;
        }
        let in_new = new.join(&entry.rel);
        let ours = (entry.kind == FileType::RegularFile && owned.contains(&entry.rel))
            || entry.rel == RECORD
            || same_file(&entry.path, &in_new);
        let gone = if ours {
            fs::remove_file(&entry.path).is_ok()
        } else {
            move_back(&entry.path, &in_new)
        };
        if !gone {
            left.push(entry.path.clone());
        }
    }
    if fs::remove_dir(old).is_err() && left.is_empty() {
        left.push(old.to_path_buf());
    }
    left
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((inode_of(a), inode_of(b)), (Ok(x), Ok(y)) if x == y)
}

fn move_back(from: &Path, to: &Path) -> bool {
    if let Some(parent) = to.parent() {
        let _ = fs::create_dir_all(parent);
    }
    let cwd = rustix::fs::CWD;
    rustix::fs::renameat_with(cwd, from, cwd, to, RenameFlags::NOREPLACE).is_ok()
}

/// What a staging area left by a killed run was doing, read from its lock file.
struct Left {
    container: Inode,
    old: Option<Inode>,
    new: Option<Inode>,
}

fn parse_lock(text: &str, name: &str) -> Option<Left> {
    let mut lines = text.lines();
    if lines.next()? != format!("for {name}") {
        return None;
    }
    let inode = |line: Option<&str>, key: &str| -> Option<Inode> {
        let (dev, ino) = line?
            .strip_prefix(key)?
            .strip_prefix(' ')?
            .split_once(':')?;
        Some((dev.parse().ok()?, ino.parse().ok()?))
    };
    Some(Left {
        container: inode(lines.next(), "container")?,
        old: inode(lines.next(), "old"),
        new: inode(lines.next(), "new"),
    })
}

/// Finish what killed runs left beside `parent/name`: a staging area whose lock
/// nobody holds and whose lock file names its own inode. Before the swap it is
/// removed; after the swap its tree is the old tree and is cleared like any old
/// tree. Returns what could not be removed.
pub fn recover(parent: &Path, name: &std::ffi::OsStr, dir: &Path) -> Vec<PathBuf> {
    let shown = name.to_string_lossy();
    let prefix = format!("{PREFIX}{}.", short(&shown));
    let Ok(listing) = fs::read_dir(parent) else {
        return Vec::new();
    };
    let mut left = Vec::new();
    for entry in listing.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        let container = entry.path();
        if let Some(stuck) = recover_one(&container, &shown, dir) {
            left.extend(stuck);
        }
    }
    left
}

fn recover_one(container: &Path, name: &str, dir: &Path) -> Option<Vec<PathBuf>> {
    if files::kind_of(container).ok()?? != FileType::Directory {
        return None;
    }
    let lock_path = container.join("lock");
    let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
    let lock = rustix::fs::open(&lock_path, flags, Mode::empty()).ok()?;
    // Held: its run is alive.
    rustix::fs::flock(&lock, FlockOperation::NonBlockingLockExclusive).ok()?;
    let text = files::read_regular(&lock_path).ok()?;
    let left = parse_lock(&String::from_utf8_lossy(&text), name)?;
    if inode_of(container).ok()? != left.container {
        return None;
    }
    let tree = container.join("tree");
    let aside = container.join("old");
    let mut stuck = Vec::new();
    if files::kind_of(&aside).ok()?.is_some() {
        // Killed inside the two-rename fallback: roll forward, and put the old tree
        // where the clean-up looks for it.
        if inode_of(dir).is_err() {
            fs::rename(&tree, dir).ok()?;
        }
        if files::kind_of(&tree).ok()?.is_none() {
            fs::rename(&aside, &tree).ok()?;
        }
    }
    let swapped = left.new.is_some() && inode_of(dir).ok() == left.new && left.old.is_some();
    if swapped {
        // The old record (what rdmagen owned) and the new one (what it rendered, and
        // so replaced) together name everything of the old tree that may go.
        let mut owned = old_tree_owned(&tree);
        owned.extend(old_tree_owned(dir));
        stuck = clear_old_tree(&tree, dir, &owned);
    } else {
        let _ = fs::remove_dir_all(&tree);
    }
    let _ = fs::remove_file(&lock_path);
    let _ = fs::remove_dir(container);
    Some(stuck)
}

/// What a tree's record says rdmagen owned (by names, without a record).
fn old_tree_owned(tree: &Path) -> BTreeSet<String> {
    match files::read_regular(&tree.join(RECORD)) {
        Ok(text) => owned::parse(&String::from_utf8_lossy(&text))
            .into_iter()
            .filter(|(_, proof)| *proof != owned::Proof::Damaged)
            .map(|(rel, _)| rel)
            .collect(),
        Err(_) => files::walk(tree)
            .map(|entries| {
                entries
                    .into_iter()
                    .map(|e| e.rel)
                    .filter(|rel| owned::is_output_name(rel))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Give `to` the permission bits of `from` (and its owner, where allowed).
pub fn copy_mode(from: &Path, to: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(from)?;
    fs::set_permissions(to, fs::Permissions::from_mode(meta.mode() & 0o7777))?;
    let _ = std::os::unix::fs::lchown(to, Some(meta.uid()), Some(meta.gid()));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_file_that_names_another_directory_is_not_ours() {
        assert!(parse_lock("for other\ncontainer 1:2\n", "rendered").is_none());
        let left = parse_lock(
            "for rendered\ncontainer 1:2\nold 1:3\nnew 1:4\n",
            "rendered",
        )
        .unwrap();
        assert_eq!(
            (left.container, left.old, left.new),
            ((1, 2), Some((1, 3)), Some((1, 4)))
        );
    }

    #[test]
    fn clearing_an_old_tree_keeps_what_appeared_meanwhile() {
        let base = tempfile::tempdir().unwrap();
        let (old, new) = (base.path().join("old"), base.path().join("new"));
        fs::create_dir_all(old.join("job")).unwrap();
        fs::create_dir_all(new.join("job")).unwrap();
        fs::write(old.join("job/pytorchjob.yaml"), "old").unwrap();
        fs::write(new.join("job/pytorchjob.yaml"), "new").unwrap();
        fs::write(old.join("README"), "user").unwrap();
        fs::hard_link(old.join("README"), new.join("README")).unwrap();
        fs::write(old.join("late.txt"), "written during the run").unwrap();
        let owned = BTreeSet::from(["job/pytorchjob.yaml".to_owned()]);
        assert!(clear_old_tree(&old, &new, &owned).is_empty());
        assert!(!old.exists());
        assert_eq!(fs::read_to_string(new.join("README")).unwrap(), "user");
        assert_eq!(
            fs::read_to_string(new.join("late.txt")).unwrap(),
            "written during the run"
        );
        assert_eq!(
            fs::read_to_string(new.join("job/pytorchjob.yaml")).unwrap(),
            "new"
        );
    }
}
