//! The output directory: resolved once, never a symlink, and locked for the run.
//!
//! `-o newdir/..` once made rdmagen treat the current directory as one it had
//! created, and delete it; `rendered -> .` made `--bless --prune` delete a whole
//! repository. So the path is resolved here, once, the way the kernel would resolve
//! it, and refused when it is a symlink or when a `..` follows a name that does not
//! exist. Everything else works on the resolved parent and name.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{FileType, FlockOperation, Mode, OFlags};

use crate::error::Error;
use crate::files;

/// How a run shares the directory with other rdmagen runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `--check`: readers run side by side, never while a writer swaps the tree.
    Shared,
    /// Writing and blessing: one run at a time.
    Exclusive,
}

/// What to do when another run holds the lock.
pub struct Waiting<'a> {
    /// Fail at once (`--no-wait`) instead of waiting.
    pub no_wait: bool,
    /// Told once, before the run starts waiting (the CLI prints it).
    pub notify: Box<dyn FnMut(&Path) + 'a>,
}

/// A resolved, locked output directory.
#[derive(Debug)]
pub struct OutputDir {
    /// As the user wrote it, for messages.
    pub shown: PathBuf,
    /// The real (canonical) directory that holds it.
    pub parent: PathBuf,
    /// Its last path component.
    pub name: OsString,
    /// Whether this run created it (it is removed again, if still empty, when the run
    /// writes nothing).
    pub created: bool,
    /// An open descriptor of the directory, locked with flock.
    lock: OwnedFd,
    access: Access,
}

impl OutputDir {
    /// Resolve `dir` and lock it. With `create`, a missing directory (and missing
    /// parents) is created; without, a missing directory gives `None`.
    pub fn open(
        dir: &Path,
        access: Access,
        create: bool,
        waiting: &mut Waiting<'_>,
    ) -> Result<Option<Self>, Error> {
        // The last name is checked below, with a message of its own.
        let named: PathBuf = dir.components().collect();
        if let Some(parent) = named.parent() {
            files::refuse_symlinked_name(parent).map_err(|e| Error::io(dir, e))?;
        }
        let (parent, name) = resolve(dir, create)?;
        let path = parent.join(&name);
        let mut created = false;
        let mut notified = false;
        loop {
            match files::kind_of(&path).map_err(|e| Error::io(dir, e))? {
                None if !create => return Ok(None),
                None => match fs::create_dir(&path) {
                    Ok(()) => created = true,
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(Error::io(dir, e)),
                },
                Some(FileType::Directory) => {}
                Some(FileType::Symlink) => return Err(symlink_output(dir)),
                Some(kind) => {
                    return Err(Error::Usage(format!(
                        "{}: is {}, not a directory",
                        dir.display(),
                        files::kind_name(kind)
                    )));
                }
            }
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = match rustix::fs::open(&path, flags, Mode::empty()) {
                Ok(fd) => fd,
                // Replaced between the look and the open: look again.
                Err(rustix::io::Errno::NOENT) => continue,
                Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => {
                    return Err(symlink_output(dir));
                }
                Err(e) => return Err(Error::io(dir, e.into())),
            };
            lock(&fd, access, dir, waiting, &mut notified)?;
            // Another run may have swapped a new tree in while this one waited: the
            // lock is only good if it is on the directory the path names now.
            if same_inode(&fd, &path) {
                return Ok(Some(OutputDir {
                    shown: dir.to_path_buf(),
                    parent,
                    name,
                    created,
                    lock: fd,
                    access,
                }));
            }
        }
    }

    /// The directory's real path.
    pub fn path(&self) -> PathBuf {
        self.parent.join(&self.name)
    }

    /// Lock the directory a run is about to swap in, so that the lock is held on
    /// whichever directory the path names.
    pub fn relock(&mut self, new_root: OwnedFd) -> Result<OwnedFd, Error> {
        let operation = match self.access {
            Access::Shared => FlockOperation::NonBlockingLockShared,
            Access::Exclusive => FlockOperation::NonBlockingLockExclusive,
        };
        rustix::fs::flock(&new_root, operation).map_err(|e| Error::io(&self.shown, e.into()))?;
        Ok(std::mem::replace(&mut self.lock, new_root))
    }

    /// Identity of the directory held, to tell it from a directory swapped in later.
    pub fn identity(&self) -> Result<(u64, u64), Error> {
        let stat = rustix::fs::fstat(&self.lock).map_err(|e| Error::io(&self.shown, e.into()))?;
        Ok((stat.st_dev, stat.st_ino))
    }
}

impl Drop for OutputDir {
    /// A directory this run created and left empty goes again: rmdir removes only an
    /// empty directory, so nothing another run wrote there can be lost.
    fn drop(&mut self) {
        if self.created && same_inode(&self.lock, &self.path()) {
            let _ = fs::remove_dir(self.path());
        }
    }
}

fn lock(
    fd: &OwnedFd,
    access: Access,
    dir: &Path,
    waiting: &mut Waiting<'_>,
    notified: &mut bool,
) -> Result<(), Error> {
    let (try_op, wait_op) = match access {
        Access::Shared => (
            FlockOperation::NonBlockingLockShared,
            FlockOperation::LockShared,
        ),
        Access::Exclusive => (
            FlockOperation::NonBlockingLockExclusive,
            FlockOperation::LockExclusive,
        ),
    };
    match rustix::fs::flock(fd, try_op) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::WOULDBLOCK) => {
            if waiting.no_wait {
                return Err(Error::Usage(format!(
                    "{}: another rdmagen run is using it (--no-wait)",
                    dir.display()
                )));
            }
            if !*notified {
                (waiting.notify)(dir);
                *notified = true;
            }
            rustix::fs::flock(fd, wait_op).map_err(|e| Error::io(dir, e.into()))
        }
        Err(e) => Err(Error::io(dir, e.into())),
    }
}

pub(super) fn same_inode(fd: &OwnedFd, path: &Path) -> bool {
    match (rustix::fs::fstat(fd), rustix::fs::lstat(path)) {
        (Ok(a), Ok(b)) => (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino),
        _ => false,
    }
}

/// Refuse an output directory whose place alone says it is not one: the working
/// directory or one above it (`-o .`), a repository's root or a directory above one,
/// a directory inside `.git`, or one that holds an input. Rendering replaces the
/// output directory's tree whole, so any of these would put a repository's files
/// at stake. The configuration file's `output` and `-o` are judged alike.
pub fn refuse_place(dir: &Path, inputs: &[PathBuf]) -> Result<(), Error> {
    let (parent, name) = resolve(dir, false)?;
    let full = parent.join(&name);
    // A symlink is refused when the directory is opened, with a message of its own;
    // nothing here may look through it.
    if files::kind_of(&full).map_err(|e| Error::io(dir, e))? == Some(FileType::Symlink) {
        return Ok(());
    }
    let refuse = |why: String| {
        Err(Error::Usage(format!(
            "{}: {why}; rendering replaces an output directory's tree whole, so name a \
             directory of its own, e.g. rendered/",
            dir.display()
        )))
    };
    let cwd = std::env::current_dir()
        .and_then(fs::canonicalize)
        .map_err(|e| Error::io(Path::new("."), e))?;
    if cwd.starts_with(&full) {
        return refuse(match cwd == full {
            true => "is the working directory".to_owned(),
            false => "holds the working directory".to_owned(),
        });
    }
    if let Some(root) = cwd.ancestors().find(|a| a.join(".git").exists())
        && root.starts_with(&full)
    {
        return refuse(format!(
            "is the repository's root {}",
            match root == full {
                true => "itself".to_owned(),
                false => format!("({}) or above it", root.display()),
            }
        ));
    }
    if full.join(".git").exists() {
        return refuse("is a repository's root (it holds .git)".to_owned());
    }
    if full.components().any(|c| c.as_os_str() == ".git") {
        return refuse("is inside .git".to_owned());
    }
    for input in inputs.iter().filter(|i| !files::is_stdin(i)) {
        if let Ok(real) = fs::canonicalize(input)
            && real.starts_with(&full)
        {
            return refuse(format!("holds the input {}", input.display()));
        }
    }
    Ok(())
}

fn symlink_output(dir: &Path) -> Error {
    Error::Usage(format!(
        "{}: is a symlink; rdmagen writes only into a real directory, never through a \
         symlink (one committed to a repository could point anywhere); pass the directory \
         it points to",
        dir.display()
    ))
}

/// The real parent directory and the last name of `dir`, resolved as the kernel would:
/// a `..` steps out of the real directory before it, which must exist. With `create`,
/// missing parents are created.
fn resolve(dir: &Path, create: bool) -> Result<(PathBuf, OsString), Error> {
    let mut path = if dir.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir().map_err(|e| Error::io(Path::new("."), e))?
    };
    for component in dir.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => path.push(component.as_os_str()),
            Component::CurDir => {}
            Component::Normal(name) => path.push(name),
            Component::ParentDir => {
                let real = match fs::canonicalize(&path) {
                    Ok(real) if real.is_dir() => real,
                    _ => {
                        return Err(Error::Usage(format!(
                            "{}: `..` follows {}, which is not an existing directory; \
                             name the output directory without it",
                            dir.display(),
                            path.display()
                        )));
                    }
                };
                path = real;
                path.pop();
            }
        }
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(Error::Usage(format!(
            "{}: the file system root cannot be an output directory",
            dir.display()
        )));
    };
    if create {
        fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let parent = match fs::canonicalize(parent) {
        Ok(real) => real,
        Err(e) if e.kind() == io::ErrorKind::NotFound && !create => parent.to_path_buf(),
        Err(e) => return Err(Error::io(parent, e)),
    };
    Ok((parent, name.to_os_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet() -> Waiting<'static> {
        Waiting {
            no_wait: true,
            notify: Box::new(|_: &Path| {}),
        }
    }

    #[test]
    fn dot_dot_after_a_missing_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = resolve(&dir.path().join("newdir/.."), true).unwrap_err();
        assert!(
            e.to_string().contains("which is not an existing directory"),
            "{e}"
        );
        assert!(!dir.path().join("newdir").exists());
    }

    #[test]
    fn dot_dot_after_a_real_directory_resolves_like_the_kernel() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        let (parent, name) = resolve(&dir.path().join("a/../out"), true).unwrap();
        assert_eq!(parent, dir.path().canonicalize().unwrap());
        assert_eq!(name, "out");
    }

    #[test]
    fn a_symlinked_output_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(".", dir.path().join("rendered")).unwrap();
        let e = OutputDir::open(
            &dir.path().join("rendered"),
            Access::Exclusive,
            true,
            &mut quiet(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("is a symlink"), "{e}");
    }

    #[test]
    fn a_second_writer_is_refused_with_no_wait_and_a_reader_too() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let first = OutputDir::open(&out, Access::Exclusive, true, &mut quiet()).unwrap();
        assert!(first.is_some());
        for access in [Access::Exclusive, Access::Shared] {
            let e = OutputDir::open(&out, access, true, &mut quiet()).unwrap_err();
            assert!(e.to_string().contains("another rdmagen run"), "{e}");
        }
    }

    #[test]
    fn a_created_directory_left_empty_goes_again() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        drop(OutputDir::open(&out, Access::Exclusive, true, &mut quiet()).unwrap());
        assert!(!out.exists());
    }
}
