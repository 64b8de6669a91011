//! Reading files from trees a pull request may have written.
//!
//! Inputs, templates and golden files come from repositories anyone can change, and
//! rdmagen's output reaches CI logs. So every read here opens the path without
//! following a symlink at its last component (trees are walked without following
//! symlinks, so no earlier component is one either), refuses anything but a regular
//! file (a FIFO would block, `/dev/zero` never ends), and stops at a size limit
//! instead of reading without bound.
//!
//! Input trees are the one exception to "never follow": [`walk_inputs`] follows a
//! symlink whose target stays inside the tree named on the command line, and refuses
//! one that leads out of it or around a loop.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use globset::GlobSet;
use rustix::fs::{FileType, Mode, OFlags};

use crate::error::Error;
use crate::fingerprint::Fingerprint;

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

/// How standard input is named on the command line.
pub const STDIN: &str = "-";

/// The name standard input goes by in messages when `--stdin-filename` names none.
pub const DEFAULT_STDIN_NAME: &str = "<stdin>";

static STDIN_NAME: OnceLock<String> = OnceLock::new();

/// Standard input's bytes, or why they could not be read: kept for the whole process,
/// because a stream can be read only once.
static STDIN_BYTES: OnceLock<Result<Vec<u8>, String>> = OnceLock::new();

/// Name standard input in messages (`--stdin-filename`), once for the whole process.
pub fn set_stdin_name(name: &str) {
    // A second call (unit tests share the process) keeps the first name.
    STDIN_NAME.get_or_init(|| name.to_owned());
}

/// The name standard input goes by in messages.
pub fn stdin_name() -> &'static str {
    STDIN_NAME.get().map_or(DEFAULT_STDIN_NAME, String::as_str)
}

/// Whether `path` is `-`, standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// All of standard input, read on first use and kept: naming `-` twice reads the
/// same bytes (the command line refuses that anyway). Bounded by [`max_file_size`]
/// like any file: a longer stream is an error, never a partial read.
pub fn read_stdin() -> io::Result<Vec<u8>> {
    let read = STDIN_BYTES.get_or_init(|| {
        let limit = max_file_size();
        let mut bytes = Vec::new();
        io::stdin()
            .lock()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| e.to_string())?;
        if bytes.len() as u64 > limit {
            return Err(too_large(limit).to_string());
        }
        // read_to_end doubles its buffer: a 33 MB stream held 64 MB for the run.
        bytes.shrink_to_fit();
        Ok(bytes)
    });
    read.clone().map_err(io::Error::other)
}

/// [`read_stdin`] for `-`, else [`read_regular`].
pub fn read_input(path: &Path) -> io::Result<Vec<u8>> {
    if is_stdin(path) {
        read_stdin()
    } else {
        read_regular(path)
    }
}

/// [`read_input`] as UTF-8 text.
pub fn read_input_text(path: &Path) -> io::Result<String> {
    utf8(read_input(path)?)
}

fn too_large(limit: u64) -> io::Error {
    io::Error::other(format!(
        "is larger than {limit} bytes, the most rdmagen reads (--max-file-size)"
    ))
}

fn utf8(bytes: Vec<u8>) -> io::Result<String> {
    String::from_utf8(bytes)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "is not valid UTF-8 text"))
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
    let limit = max_file_size();
    let (file, size) = open_regular(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0) + 1);
    // Read one byte past the limit: a file that grew (or lied about its size, as
    // /proc files do) is still caught.
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// Open a regular file for reading, as [`read_regular`] would read it: no symlink,
/// nothing but a regular file, not over [`max_file_size`] by its size. Returns the
/// file and that size. A caller that streams it must still stop at the limit (see
/// [`limited`]): a file may grow while it is read.
pub fn open_regular(path: &Path) -> io::Result<(std::fs::File, u64)> {
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
    let size = u64::try_from(stat.st_size).unwrap_or(0);
    if size > limit {
        return Err(too_large(limit));
    }
    Ok((std::fs::File::from(fd), size))
}

/// The error for `read` bytes read from a stream: `Err` once they pass
/// [`max_file_size`], so that a streaming reader stops there as a whole-file read
/// would, with the same message.
pub fn limited(read: u64) -> io::Result<()> {
    let limit = max_file_size();
    if read > limit {
        return Err(too_large(limit));
    }
    Ok(())
}

/// [`read_regular`] as UTF-8 text.
pub fn read_regular_text(path: &Path) -> io::Result<String> {
    utf8(read_regular(path)?)
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

/// `path` as messages show it: relative to the working directory when it lies below
/// it (a staging area's absolute path says less than `.rdmagen-out.…/tree/x`).
pub fn shown_relative(path: &Path) -> PathBuf {
    let below = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf));
    match below {
        Some(rel) if !rel.as_os_str().is_empty() => rel,
        _ => path.to_path_buf(),
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

/// A file found by [`walk_inputs`] (or named on the command line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFile {
    /// The path as walked: the root as given joined with the names below it. Messages
    /// name it and `--exclude` matches it.
    pub path: PathBuf,
    /// Where a path through a symlink inside the tree really leads (canonical), read
    /// in its place: [`read_regular`] refuses a symlink anywhere in `path`.
    pub target: Option<PathBuf>,
}

impl InputFile {
    /// A path named on the command line, read as given (`-` is standard input).
    pub fn named(path: PathBuf) -> Self {
        InputFile { path, target: None }
    }

    /// The file whose bytes are read: the symlink's target, else the path.
    pub fn real(&self) -> &Path {
        self.target.as_deref().unwrap_or(&self.path)
    }

    /// The whole file as UTF-8 text, within [`max_file_size`].
    pub fn read_text(&self) -> io::Result<String> {
        read_input_text(self.real())
    }

    /// The bytes `range` of the file (the whole file for `None`) read again as text,
    /// as [`read_text`](Self::read_text) reads, and refused unless their fingerprint
    /// is `expected`, what the first read found there: a file edited during a run
    /// must fail it, never give output that mixes its old and new text.
    pub fn reread_text(
        &self,
        range: Option<std::ops::Range<usize>>,
        expected: Fingerprint,
    ) -> io::Result<String> {
        let bytes = match (&range, is_stdin(self.real())) {
            (None, _) => read_input(self.real())?,
            // Standard input is read once and kept, so it is cut from what was kept.
            (Some(range), true) => read_stdin()?
                .get(range.clone())
                .ok_or_else(changed)?
                .to_vec(),
            (Some(range), false) => {
                let (file, size) = open_regular(self.real())?;
                if (size as usize) < range.end {
                    return Err(changed());
                }
                let mut bytes = vec![0; range.len()];
                std::os::unix::fs::FileExt::read_exact_at(&file, &mut bytes, range.start as u64)?;
                bytes
            }
        };
        if Fingerprint::of(&bytes) != expected {
            return Err(changed());
        }
        utf8(bytes)
    }
}

fn changed() -> io::Error {
    io::Error::other(
        "changed while rdmagen was reading it (it differs from its first read); run again",
    )
}

/// Which entries [`walk_inputs`] takes and skips.
pub struct InputFilter<'a> {
    /// A file the walk wants, by its name (e.g. `*.yaml`).
    pub wanted: &'a dyn Fn(&Path) -> bool,
    /// A file or directory the user excluded, by its walked path (`--exclude`).
    pub excluded: &'a dyn Fn(&Path) -> bool,
}

/// A walk's error, with the path it is about.
pub type WalkError = (PathBuf, io::Error);

/// The regular files below `root` that `filter` wants, sorted by path. A symlink is
/// followed when what it leads to (canonicalised) is inside `root`'s canonical tree:
/// a repository may link `prod.yaml -> base/prod.yaml`. One that leads out of the
/// tree, to nothing, or back around a loop is an error naming it, never silently
/// dropped; a symlink to a file the filter does not want is not looked at, as no
/// such file is. Excluded paths are skipped before anything about them is looked at,
/// so an exclusion is the way past a symlink the walk refuses. A root that is a
/// symlink is refused, as everywhere.
pub fn walk_inputs(root: &Path, filter: &InputFilter<'_>) -> Result<Vec<InputFile>, WalkError> {
    let at_root = |e: io::Error| (root.to_path_buf(), e);
    refuse_symlinked_name(root).map_err(at_root)?;
    let real_root = std::fs::canonicalize(root).map_err(at_root)?;
    // Directories reached through a symlink, as walked: files below them are read
    // through their canonical path.
    let linked_dirs: RefCell<Vec<PathBuf>> = RefCell::default();
    let refused: RefCell<Option<WalkError>> = RefCell::default();
    let walker = walkdir::WalkDir::new(root)
        .min_depth(1)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|entry| {
            let path = entry.path();
            if (filter.excluded)(path) {
                return false;
            }
            if !entry.path_is_symlink() {
                return true;
            }
            let is_dir = entry.file_type().is_dir();
            if !is_dir && !(filter.wanted)(path) {
                return false;
            }
            let why = match std::fs::canonicalize(path) {
                Ok(target) if target.starts_with(&real_root) => {
                    if is_dir {
                        linked_dirs.borrow_mut().push(path.to_path_buf());
                    }
                    return true;
                }
                // Where it leads is not printed: a pull request must not learn the
                // machine's paths from a CI log.
                Ok(_) => format!(
                    "is a symlink that leads out of {}; rdmagen follows a symlink only within the tree it is given",
                    root.display()
                ),
                Err(e) => format!("is a symlink that cannot be followed ({e})"),
            };
            refused
                .borrow_mut()
                .get_or_insert_with(|| refusal(path, &why));
            false
        });
    let mut out = Vec::new();
    for entry in walker {
        if let Some(refusal) = refused.borrow_mut().take() {
            return Err(refusal);
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => match walk_error(e, filter) {
                Some(refusal) => return Err(refusal),
                None => continue,
            },
        };
        let path = entry.path();
        if path.file_name().and_then(|n| n.to_str()).is_none() {
            return Err(at_root(io::Error::other(format!(
                "holds {}, a name that is not valid UTF-8; rename it",
                path.to_string_lossy()
            ))));
        }
        if entry.file_type().is_dir() || !(filter.wanted)(path) {
            continue;
        }
        if !entry.file_type().is_file() {
            let kind = kind_of(path).ok().flatten().unwrap_or(FileType::Unknown);
            return Err(refusal(
                path,
                &format!("is {}; rdmagen reads only regular files", kind_name(kind)),
            ));
        }
        let through_link =
            entry.path_is_symlink() || linked_dirs.borrow().iter().any(|dir| path.starts_with(dir));
        let target = match through_link {
            true => Some(std::fs::canonicalize(path).map_err(|e| (path.to_path_buf(), e))?),
            false => None,
        };
        out.push(InputFile {
            path: entry.into_path(),
            target,
        });
    }
    match refused.into_inner() {
        Some(refusal) => Err(refusal),
        None => Ok(out),
    }
}

/// A path the walk will not take, and why; the way past it is to exclude it.
fn refusal(path: &Path, why: &str) -> WalkError {
    (
        path.to_path_buf(),
        io::Error::other(format!("{why} (--exclude skips it)")),
    )
}

/// A walk error as the error that stops the walk, a loop or a dangling symlink named
/// as such; `None` for an excluded path, and for a dangling symlink whose name the
/// walk does not want, which would not have been read.
fn walk_error(e: walkdir::Error, filter: &InputFilter<'_>) -> Option<WalkError> {
    let path = e.path().map(Path::to_path_buf).unwrap_or_default();
    // walkdir meets a loop or a dangling link before `filter_entry` sees the entry.
    if (filter.excluded)(&path) {
        return None;
    }
    if let Some(ancestor) = e.loop_ancestor() {
        let why = format!(
            "is a symlink to {}, a directory that holds it: a loop",
            ancestor.display()
        );
        return Some(refusal(&path, &why));
    }
    if kind_of(&path).ok().flatten() == Some(FileType::Symlink) {
        if !(filter.wanted)(&path) && std::fs::metadata(&path).is_err() {
            return None;
        }
        return Some(refusal(&path, "is a symlink to nothing"));
    }
    Some((path, io::Error::from(e)))
}

/// Expand files and directories into the YAML files they name. A directory is walked
/// recursively for `*.yaml` and `*.yml` in sorted order, following only symlinks that
/// stay inside it and skipping what `exclude` matches (see [`walk_inputs`]); a file
/// (or `-`, standard input) is taken as given, even when `exclude` matches it: naming
/// a file is asking for it. A named path that is a symlink, FIFO or device is refused
/// by the read.
pub fn yaml_files(paths: &[PathBuf], exclude: &GlobSet) -> Result<Vec<InputFile>, Error> {
    let is_yaml = |path: &Path| {
        path.extension()
            .is_some_and(|ext| ext == "yaml" || ext == "yml")
    };
    let excluded = |path: &Path| !exclude.is_empty() && exclude.is_match(path);
    let filter = InputFilter {
        wanted: &is_yaml,
        excluded: &excluded,
    };
    let mut files = Vec::new();
    for path in paths {
        let kind = match is_stdin(path) {
            true => None,
            false => kind_of(path).map_err(|e| Error::io(path, e))?,
        };
        if kind != Some(FileType::Directory) {
            files.push(InputFile::named(path.clone()));
            continue;
        }
        let found = walk_inputs(path, &filter).map_err(|(at, e)| Error::io(&at, e))?;
        files.extend(found);
    }
    Ok(files)
}

/// Drop files already listed: the same file named twice, under two roots, or reached
/// again through a symlink (`seen` spans calls: `--pools` and the inputs). A file's
/// identity is its canonical directory plus its name; directories are few, so each
/// is canonicalised once. A file reached both directly and through a symlink is kept
/// under its direct path, wherever the walk met the link.
pub fn dedupe(files: Vec<InputFile>, seen: &mut BTreeSet<PathBuf>) -> Vec<InputFile> {
    let mut dirs: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut identity = |file: &InputFile| {
        let p = file.real();
        let dir = p.parent().unwrap_or(Path::new(""));
        let real = dirs.entry(dir.to_path_buf()).or_insert_with(|| {
            let d = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf())
        });
        real.join(p.file_name().unwrap_or_default())
    };
    let keyed: Vec<(PathBuf, InputFile)> = files.into_iter().map(|f| (identity(&f), f)).collect();
    let direct: BTreeSet<&PathBuf> = keyed
        .iter()
        .filter(|(_, f)| f.target.is_none())
        .map(|(key, _)| key)
        .collect();
    let linked_to_direct: BTreeSet<PathBuf> = keyed
        .iter()
        .filter(|(key, f)| f.target.is_some() && direct.contains(key))
        .map(|(key, _)| key.clone())
        .collect();
    keyed
        .into_iter()
        .filter(|(key, f)| {
            !(f.target.is_some() && linked_to_direct.contains(key)) && seen.insert(key.clone())
        })
        .map(|(_, f)| f)
        .collect()
}

/// How a path is shown in diagnostics: as given, with `/` separators; standard input
/// (`-`) by the name `--stdin-filename` gives it.
pub fn display_name(path: &Path) -> Arc<str> {
    if is_stdin(path) {
        return Arc::from(stdin_name());
    }
    Arc::from(path.to_string_lossy().replace('\\', "/"))
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
