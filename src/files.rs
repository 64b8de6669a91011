//! Reading files from trees a pull request may have written.
//!
//! Inputs, templates and golden files come from repositories anyone can change, and
//! rdmagen's output reaches CI logs. So every read here opens the path without
//! following a symlink at its last component (trees are walked without following
//! symlinks, so no earlier component is one either), refuses anything but a regular
//! file (a FIFO would block, `/dev/zero` never ends), and stops at a size limit
//! instead of reading without bound.

use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{FileType, Mode, OFlags};

/// The default largest file rdmagen reads: 32 MiB. A Job is a few KiB; a file of
/// 4 000 Jobs is about 12 MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 32 << 20;

static MAX_FILE_SIZE: AtomicU64 = AtomicU64::new(DEFAULT_MAX_FILE_SIZE);

/// Set the largest file rdmagen reads (`--max-file-size`), for the whole process.
pub fn set_max_file_size(bytes: u64) {
    MAX_FILE_SIZE.store(bytes, Ordering::Relaxed);
}

pub fn max_file_size() -> u64 {
    MAX_FILE_SIZE.load(Ordering::Relaxed)
}

/// What a path turned out to be, for messages.
pub fn kind_name(kind: FileType) -> &'static str {
    match kind {
        FileType::RegularFile => "a regular file",
        FileType::Directory => "a directory",
        FileType::Symlink => "a symlink",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Unknown => "not a regular file",
    }
}

/// The error for a symlink where rdmagen reads or writes.
pub fn symlink_refused() -> io::Error {
    io::Error::other("is a symlink; rdmagen never follows symlinks in the trees it reads or writes")
}

/// Read a regular file whole, refusing symlinks, anything that is not a regular file,
/// and files over [`max_file_size`]. Thousands of small files are read per run, so
/// this makes one open, one fstat and reads until the end.
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    refuse_symlinked_name(path)?;
    let limit = max_file_size();
    let flags =
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = rustix::fs::open(path, flags, Mode::empty()).map_err(|e| {
        if e == rustix::io::Errno::LOOP {
            symlink_refused()
        } else {
            io::Error::from(e)
        }
    })?;
    let stat = rustix::fs::fstat(&fd)?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if kind != FileType::RegularFile {
        return Err(io::Error::other(format!(
            "is {}; rdmagen reads only regular files",
            kind_name(kind)
        )));
    }
    let too_large = || {
        io::Error::other(format!(
            "is larger than {limit} bytes, the most rdmagen reads (--max-file-size)"
        ))
    };
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0) + 1);
    // Read one byte past the limit: a file that grew (or lied about its size, as
    // /proc files do) is still caught.
    std::fs::File::from(fd)
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read_regular(path)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "is not valid UTF-8 text"))
}

/// Refuse a path that passes through a symlink: any component of a relative path
/// (a repository can commit `jobs -> /etc`), and the last one of an absolute path
/// (whose ancestors are the machine's, not the repository's). A trailing `/` or `/.`
/// does not hide the last component: `lstat("dir/")` would follow it, so each prefix
/// is rebuilt from its components.
pub fn refuse_symlinked_name(path: &Path) -> io::Result<()> {
    let components: Vec<Component<'_>> = path.components().collect();
    let mut prefix = PathBuf::new();
    for (i, component) in components.iter().enumerate() {
        prefix.push(component);
        let checked = path.is_relative() || i + 1 == components.len();
        if checked
            && matches!(component, Component::Normal(_))
            && kind_of(&prefix)? == Some(FileType::Symlink)
        {
            if i + 1 == components.len() {
                return Err(symlink_refused());
            }
            return Err(io::Error::other(format!(
                "passes through {}, a symlink; rdmagen never follows symlinks in the trees it reads or writes",
                prefix.display()
            )));
        }
    }
    Ok(())
}

/// What `lstat` says a path is, without following it; `None` when nothing is there.
pub fn kind_of(path: &Path) -> io::Result<Option<FileType>> {
    match rustix::fs::lstat(path) {
        Ok(stat) => Ok(Some(FileType::from_raw_mode(stat.st_mode))),
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// One entry below a walked root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Relative to the root, `/`-separated.
    pub rel: String,
    pub path: PathBuf,
    pub kind: FileType,
}

/// Every entry below `root` (not the root itself), sorted by path, without following
/// any symlink: a symlink is listed as one, never entered. A root that is a symlink
/// is refused.
pub fn walk(root: &Path) -> io::Result<Vec<Entry>> {
    refuse_symlinked_name(root)?;
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .min_depth(1)
        .follow_links(false)
        .follow_root_links(false)
        .sort_by_file_name()
    {
        let entry = entry.map_err(io::Error::from)?;
        // Names are compared and joined as text: two names that differ only in
        // invalid bytes would become one, so such a name is refused, not guessed.
        if entry.file_name().to_str().is_none() {
            return Err(io::Error::other(format!(
                "holds {}, a name that is not valid UTF-8; rename it",
                entry.path().to_string_lossy()
            )));
        }
        let kind = if entry.file_type().is_symlink() {
            FileType::Symlink
        } else if entry.file_type().is_dir() {
            FileType::Directory
        } else if entry.file_type().is_file() {
            FileType::RegularFile
        } else {
            kind_of(entry.path())?.unwrap_or(FileType::Unknown)
        };
        let rel = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .replace('\\', "/");
        out.push(Entry {
            rel,
            path: entry.into_path(),
            kind,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_regular_file_and_refuses_everything_else() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "text").unwrap();
        assert_eq!(read_regular(&file).unwrap(), b"text");

        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let e = read_regular(&link).unwrap_err().to_string();
        assert!(e.starts_with("is a symlink"), "{e}");

        let e = read_regular(Path::new("/dev/zero"))
            .unwrap_err()
            .to_string();
        assert_eq!(e, "is a character device; rdmagen reads only regular files");
        let e = read_regular(dir.path()).unwrap_err().to_string();
        assert_eq!(e, "is a directory; rdmagen reads only regular files");
    }

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let e = read_regular(&fifo).unwrap_err().to_string();
        assert_eq!(e, "is a FIFO; rdmagen reads only regular files");
    }

    #[test]
    fn proc_files_that_claim_size_zero_are_still_bounded() {
        // /proc/self/environ says st_size 0; the read itself stops at the limit.
        let limit = max_file_size();
        let bytes = read_regular(Path::new("/proc/self/status")).unwrap();
        assert!(!bytes.is_empty() && (bytes.len() as u64) <= limit);
    }

    #[test]
    fn walk_lists_symlinks_without_entering_them() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("a")).unwrap();
        std::fs::write(dir.path().join("a/x"), "").unwrap();
        std::os::unix::fs::symlink("/etc", dir.path().join("b")).unwrap();
        let got: Vec<(String, FileType)> = walk(dir.path())
            .unwrap()
            .into_iter()
            .map(|e| (e.rel, e.kind))
            .collect();
        assert_eq!(
            got,
            [
                ("a".to_owned(), FileType::Directory),
                ("a/x".to_owned(), FileType::RegularFile),
                ("b".to_owned(), FileType::Symlink),
            ]
        );
    }
}
