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

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, FlockOperation, Mode, OFlags, RenameFlags};

use super::old_tree::DirMode;
use super::owned::{self, Fingerprint, RECORD};
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

    /// Write down both trees' identities before swapping, and what the run replaces
    /// or prunes with the fingerprint each held when it was judged, so that the next
    /// run can finish a killed one's clean-up with the same proof (a plain path holds
    /// no control character, so one line holds one file).
    pub fn note_swap(
        &mut self,
        old: Inode,
        new: Inode,
        judged: &BTreeMap<String, Fingerprint>,
    ) -> io::Result<()> {
        let mut text = format!("old {}:{}\nnew {}:{}\n", old.0, old.1, new.0, new.1);
        for (rel, fingerprint) in judged {
            text.push_str(&format!("judged {fingerprint} {rel}\n"));
        }
        self.lock.write_all(text.as_bytes())?;
        self.lock.sync_all()
    }

    /// Remove the staging area before any swap: rdmagen created it during this run,
    /// and it holds only files this run wrote and hard links to files that stay in
    /// the output directory.
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

/// What clearing an old tree did beyond deleting rdmagen's own files.
#[derive(Debug, Default)]
pub struct Settled {
    /// Edits made while a run rendered, put back in the output directory in place of
    /// the file that run wrote there (paths in the output directory).
    pub restored: Vec<PathBuf>,
    /// Edits that could not be put back (the path in the output directory holds
    /// something that is not rdmagen's): left where they are, in the staging area.
    pub kept_aside: Vec<PathBuf>,
    /// Anything else that could not be removed (a directory that is not empty).
    pub left: Vec<PathBuf>,
}

impl Settled {
    pub fn extend(&mut self, other: Settled) {
        self.restored.extend(other.restored);
        self.kept_aside.extend(other.kept_aside);
        self.left.extend(other.left);
    }
}

/// Clear the old tree `old` once the new one is in place at `dir`. A file is deleted
/// only with proof that losing it loses nothing: it still holds the bytes the run
/// judged before replacing or pruning it (`judged`), or it is the same inode as the
/// file at its path in `dir` (kept files are hard links), or it is the old record.
/// Anything else is someone's: a file that appeared while the run worked is moved
/// into `dir`; an edit of a file the run replaced is put back in place of the
/// rendered file when that file is provably rdmagen's (`dir`'s record lists it with
/// its bytes: it can be rendered again, the edit cannot); what can be neither stays
/// where it is and is returned.
///
/// With `dir` None (the output directory was moved or removed since the swap), only
/// what still holds the judged bytes, or what the old tree's own record proves is
/// rdmagen's as written, is deleted; everything else stays and is returned.
pub fn settle_old_tree(
    old: &Path,
    dir: Option<&Path>,
    judged: &BTreeMap<String, Fingerprint>,
) -> Settled {
    let mut settled = Settled::default();
    let Ok(entries) = files::walk(old) else {
        settled.left.push(old.to_path_buf());
        return settled;
    };
    let record_of = |tree: &Path| {
        files::read_regular(&tree.join(RECORD))
            .map(|text| owned::parse(&String::from_utf8_lossy(&text)))
            .unwrap_or_default()
    };
    let rendered = dir.map(record_of).unwrap_or_default();
    let wrote = match dir {
        Some(_) => owned::Record::new(),
        None => record_of(old),
    };
    // Directories are never shared between the trees (only files are linked), so the
    // old ones may be opened up for the deletion (a read-only job directory).
    for entry in entries.iter().filter(|e| e.kind == FileType::Directory) {
        let _ = fs::set_permissions(&entry.path, fs::Permissions::from_mode(0o700));
    }
    for entry in entries.iter().rev() {
        if entry.kind == FileType::Directory {
            if fs::remove_dir(&entry.path).is_err() {
                settled.left.push(entry.path.clone());
            }
            continue;
        }
        let now = match entry.kind {
            FileType::RegularFile => files::read_regular(&entry.path)
                .ok()
                .map(|b| Fingerprint::of(&b)),
            _ => None,
        };
        let proven = |record: &owned::Record| matches!((record.get(&entry.rel), now), (Some(owned::Proof::Bytes(wrote)), Some(now)) if *wrote == now);
        let ours = entry.rel == RECORD
            || dir.is_some_and(|dir| same_file(&entry.path, &dir.join(&entry.rel)))
            || (now.is_some() && judged.get(&entry.rel) == now.as_ref())
            || proven(&wrote);
        let Some(dir) = dir else {
            if !ours {
                settled.kept_aside.push(entry.path.clone());
            } else if fs::remove_file(&entry.path).is_err() {
                settled.left.push(entry.path.clone());
            }
            continue;
        };
        let in_new = dir.join(&entry.rel);
        if ours {
            if fs::remove_file(&entry.path).is_err() {
                settled.left.push(entry.path.clone());
            }
        } else if move_back(&entry.path, &in_new) {
            // Appeared while the run worked, at a path the new tree leaves free.
        } else if is_rendered(&in_new, &entry.rel, &rendered) {
            match fs::rename(&entry.path, &in_new) {
                Ok(()) => settled.restored.push(in_new),
                Err(_) => settled.kept_aside.push(entry.path.clone()),
            }
        } else {
            settled.kept_aside.push(entry.path.clone());
        }
    }
    if fs::remove_dir(old).is_err() && settled.left.is_empty() && settled.kept_aside.is_empty() {
        settled.left.push(old.to_path_buf());
    }
    settled
}

/// Whether `path` (at `rel` in the new tree) holds exactly what the new record says
/// rdmagen wrote there.
fn is_rendered(path: &Path, rel: &str, record: &owned::Record) -> bool {
    matches!(record.get(rel), Some(owned::Proof::Bytes(wrote))
        if files::read_regular(path).is_ok_and(|b| Fingerprint::of(&b) == *wrote))
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
    /// What the run replaced or pruned, with the fingerprint each held when judged.
    judged: BTreeMap<String, Fingerprint>,
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
    let container = inode(lines.next(), "container")?;
    let old = inode(lines.next(), "old");
    let new = inode(lines.next(), "new");
    let judged = lines
        .filter_map(|line| {
            let (fingerprint, rel) = line.strip_prefix("judged ")?.split_once(' ')?;
            let fingerprint = Fingerprint::parse(fingerprint)?;
            owned::is_plain_relative(rel).then(|| (rel.to_owned(), fingerprint))
        })
        .collect();
    Some(Left {
        container,
        old,
        new,
        judged,
    })
}

/// Finish what killed runs left beside `parent/name`: a staging area whose lock
/// nobody holds and whose lock file names its own inode. Before the swap its tree is
/// the new tree, which rdmagen created in that run, and it is removed; after the
/// swap its tree is the old tree, settled with the proof the killed run wrote down.
pub fn recover(parent: &Path, name: &std::ffi::OsStr, dir: &Path) -> Settled {
    let shown = name.to_string_lossy();
    let prefix = format!("{PREFIX}{}.", short(&shown));
    let mut settled = Settled::default();
    let Ok(listing) = fs::read_dir(parent) else {
        return settled;
    };
    for entry in listing.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        let container = entry.path();
        if let Some(done) = recover_one(&container, &shown, dir) {
            settled.extend(done);
        }
    }
    settled
}

fn recover_one(container: &Path, name: &str, dir: &Path) -> Option<Settled> {
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
    // The staging tree tells by its own inode which tree it is: the new one (never
    // swapped in, created by that run: it goes) or the old one (swapped out: settled
    // with the proof the lock file gives, into the output directory if that is still
    // the tree the run swapped in, else on its own). Anything else is left alone.
    let tree_is = inode_of(&tree).ok();
    let mut settled = Settled::default();
    if tree_is.is_some() && tree_is == left.old {
        let dir_is_new = left.new.is_some() && inode_of(dir).ok() == left.new;
        settled = settle_old_tree(&tree, dir_is_new.then_some(dir), &left.judged);
    } else if tree_is.is_none() || left.old.is_none() || tree_is == left.new {
        let _ = fs::remove_dir_all(&tree);
    } else {
        settled.kept_aside.push(tree.clone());
    }
    // Whatever stays keeps its lock file, so the next run tries again.
    if settled.kept_aside.is_empty() && settled.left.is_empty() {
        let _ = fs::remove_file(&lock_path);
        let _ = fs::remove_dir(container);
    }
    Some(settled)
}

/// Give `to` the mode and (where allowed) the owner a directory had when it was
/// judged.
pub fn set_mode(to: &Path, mode: DirMode) -> io::Result<()> {
    fs::set_permissions(to, fs::Permissions::from_mode(mode.mode))?;
    let _ = std::os::unix::fs::lchown(to, mode.uid, mode.gid);
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
        let judged = BTreeMap::from([("job/pytorchjob.yaml".to_owned(), Fingerprint::of(b"old"))]);
        let settled = settle_old_tree(&old, Some(&new), &judged);
        assert!(
            settled.left.is_empty() && settled.kept_aside.is_empty(),
            "{settled:?}"
        );
        assert!(settled.restored.is_empty());
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

    /// An edit that slips in after a run's last check (or that a killed run left in
    /// its old tree) goes back to its path in place of the rendered file, which the
    /// new record proves is rdmagen's; one whose path holds the user's own file stays
    /// where it is. Neither is deleted.
    #[test]
    fn an_edit_left_in_the_old_tree_is_put_back_never_deleted() {
        let base = tempfile::tempdir().unwrap();
        let (old, new) = (base.path().join("old"), base.path().join("new"));
        for tree in [&old, &new] {
            fs::create_dir_all(tree.join("job")).unwrap();
        }
        fs::write(old.join("job/pytorchjob.yaml"), "v1 tuned").unwrap();
        fs::write(new.join("job/pytorchjob.yaml"), "v2").unwrap();
        fs::write(old.join("job/Dockerfile"), "FROM mine").unwrap();
        fs::write(new.join("job/Dockerfile"), "FROM theirs, not in the record").unwrap();
        let record = owned::format(&owned::Record::from([(
            "job/pytorchjob.yaml".to_owned(),
            owned::Proof::Bytes(Fingerprint::of(b"v2")),
        )]));
        fs::write(new.join(RECORD), record).unwrap();
        let judged = BTreeMap::from([
            ("job/pytorchjob.yaml".to_owned(), Fingerprint::of(b"v1")),
            ("job/Dockerfile".to_owned(), Fingerprint::of(b"FROM base")),
        ]);
        let settled = settle_old_tree(&old, Some(&new), &judged);
        assert_eq!(settled.restored, [new.join("job/pytorchjob.yaml")]);
        assert_eq!(settled.kept_aside, [old.join("job/Dockerfile")]);
        assert_eq!(
            fs::read_to_string(new.join("job/pytorchjob.yaml")).unwrap(),
            "v1 tuned"
        );
        assert_eq!(
            fs::read_to_string(old.join("job/Dockerfile")).unwrap(),
            "FROM mine"
        );
    }
}
