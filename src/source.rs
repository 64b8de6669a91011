//! Source files and positions: every diagnostic points back at `file:line:column`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

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
