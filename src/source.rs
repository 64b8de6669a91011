//! Source files and positions: every diagnostic points back at `file:line:column`.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

/// Read a small file: open and read until the end, without the size queries (statx,
/// lseek) `fs::read` and `read_to_end` make first. Jobs and manifests are a few KiB
/// and thousands are read per run, where each system call counts.
pub fn read_small(path: &Path) -> std::io::Result<Vec<u8>> {
    const CHUNK: usize = 16 * 1024;
    let mut file = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    let mut len = 0;
    loop {
        bytes.resize(len + CHUNK, 0);
        match file.read(&mut bytes[len..]) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    bytes.truncate(len);
    Ok(bytes)
}

/// [`read_small`] as UTF-8 text.
pub fn read_small_text(path: &Path) -> std::io::Result<String> {
    String::from_utf8(read_small(path)?)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// A position in an input file. Lines and columns are 1-based, columns count characters.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    pub file: Arc<str>,
    pub line: usize,
    pub column: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// The text of every file read, so a diagnostic can quote the line it points at.
#[derive(Default, Debug)]
pub struct Sources {
    files: BTreeMap<Arc<str>, Arc<str>>,
}

impl Sources {
    pub fn add(&mut self, name: Arc<str>, text: Arc<str>) {
        self.files.insert(name, text);
    }

    pub fn extend(&mut self, other: Sources) {
        self.files.extend(other.files);
    }

    /// The source line a location points at, without its line break.
    pub fn line(&self, location: &Location) -> Option<&str> {
        let text = self.files.get(&location.file)?;
        text.lines().nth(location.line.checked_sub(1)?)
    }
}
