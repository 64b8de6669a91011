//! Source files and positions: every diagnostic points back at `file:line:column`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock};

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
    files: BTreeMap<Arc<str>, SourceFile>,
}

impl Sources {
    pub fn add(&mut self, name: Arc<str>, text: Arc<str>) {
        self.files.insert(name, SourceFile::new(text));
    }

    /// Some lines of a file, by line number (1-based), for a reader that streams a
    /// file too large to keep (`nccl-log`): findings can quote these lines and no
    /// others.
    pub fn add_lines(&mut self, name: Arc<str>, lines: BTreeMap<usize, String>) {
        self.files.insert(name, SourceFile::Lines(lines));
    }

    /// A file known by its name alone: no finding quotes it, so its text was not kept.
    pub fn add_unread(&mut self, name: Arc<str>) {
        self.files.insert(name, SourceFile::Lines(BTreeMap::new()));
    }

    pub fn extend(&mut self, other: Sources) {
        self.files.extend(other.files);
    }

    /// The name of every file held, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(|name| &**name)
    }

    /// The source line a location points at, without its line break.
    pub fn line(&self, location: &Location) -> Option<&str> {
        match self.files.get(&location.file)? {
            SourceFile::Text(text) => text.line(location.line.checked_sub(1)?),
            SourceFile::Lines(lines) => lines.get(&location.line).map(String::as_str),
        }
    }
}

/// A file's whole text, or only the lines findings quote.
#[derive(Debug)]
enum SourceFile {
    Text(TextFile),
    Lines(BTreeMap<usize, String>),
}

impl SourceFile {
    fn new(text: Arc<str>) -> Self {
        SourceFile::Text(TextFile::new(text))
    }
}

/// One file's text and, once a finding asks for a line of it, where each line starts:
/// finding a line by counting line breaks from the top made printing N findings of one
/// file cost N × its size (100 000 findings in a 1.7 MB file: minutes).
#[derive(Debug)]
struct TextFile {
    text: Arc<str>,
    line_starts: OnceLock<LineStarts>,
}

impl TextFile {
    fn new(text: Arc<str>) -> Self {
        TextFile {
            text,
            line_starts: OnceLock::new(),
        }
    }

    /// Line `index` (0-based) as `str::lines` yields it: split at `\n`, a `\r` before
    /// the `\n` dropped, and no empty line after a final line break.
    fn line(&self, index: usize) -> Option<&str> {
        let text = &*self.text;
        let starts = self.line_starts.get_or_init(|| line_starts(text));
        let start = starts.get(index)?;
        match starts.get(index + 1) {
            // The next line starts after this one's `\n`.
            Some(next) => {
                let line = &text[start..next - 1];
                Some(line.strip_suffix('\r').unwrap_or(line))
            }
            None if start < text.len() => Some(&text[start..]),
            // A final line break ends the last line; it does not start an empty one.
            None => None,
        }
    }
}

/// The byte offset of every line's first character; the last entry is the text's
/// length when the text ends with a line break (or is empty). Offsets of a text
/// under 4 GiB are kept in 32 bits: a 33 MB flood of two-line documents has 7.4
/// million lines, and 64-bit offsets were 59 MB of the run's peak.
#[derive(Debug)]
enum LineStarts {
    Narrow(Vec<u32>),
    Wide(Vec<usize>),
}

impl LineStarts {
    fn get(&self, index: usize) -> Option<usize> {
        match self {
            LineStarts::Narrow(starts) => starts.get(index).map(|&at| at as usize),
            LineStarts::Wide(starts) => starts.get(index).copied(),
        }
    }
}

fn line_starts(text: &str) -> LineStarts {
    let starts = || std::iter::once(0).chain(text.match_indices('\n').map(|(at, _)| at + 1));
    match u32::try_from(text.len()) {
        Ok(_) => LineStarts::Narrow(starts().map(|at| at as u32).collect()),
        Err(_) => LineStarts::Wide(starts().collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(text: &str) -> Sources {
        let mut s = Sources::default();
        s.add("f.yaml".into(), text.into());
        s
    }

    fn line(s: &Sources, line: usize) -> Option<&str> {
        s.line(&Location {
            file: "f.yaml".into(),
            line,
            column: 1,
        })
    }

    #[test]
    fn first_middle_and_last_lines() {
        let s = sources("first\nsecond\nlast\n");
        assert_eq!(line(&s, 1), Some("first"));
        assert_eq!(line(&s, 2), Some("second"));
        assert_eq!(line(&s, 3), Some("last"));
        assert_eq!(line(&s, 4), None);
        assert_eq!(line(&s, 0), None);
    }

    #[test]
    fn last_line_without_a_line_break() {
        let s = sources("a: 1\nb: 2");
        assert_eq!(line(&s, 2), Some("b: 2"));
        assert_eq!(line(&s, 3), None);
    }

    #[test]
    fn crlf_line_breaks_are_not_part_of_the_line() {
        let s = sources("a: 1\r\nb: 2\r\n");
        assert_eq!(line(&s, 1), Some("a: 1"));
        assert_eq!(line(&s, 2), Some("b: 2"));
        assert_eq!(line(&s, 3), None);
    }

    #[test]
    fn empty_files_and_blank_lines() {
        assert_eq!(line(&sources(""), 1), None);
        let s = sources("\n\nx\n");
        assert_eq!(line(&s, 1), Some(""));
        assert_eq!(line(&s, 2), Some(""));
        assert_eq!(line(&s, 3), Some("x"));
    }

    #[test]
    fn sparse_files_quote_only_their_lines() {
        let mut s = Sources::default();
        s.add_lines(
            "big.log".into(),
            BTreeMap::from([(7, "seventh".to_owned())]),
        );
        let at = |line| Location {
            file: "big.log".into(),
            line,
            column: 1,
        };
        assert_eq!(s.line(&at(7)), Some("seventh"));
        assert_eq!(s.line(&at(6)), None);
    }

    #[test]
    fn unknown_files_have_no_lines() {
        let s = sources("a\n");
        let elsewhere = Location {
            file: "other.yaml".into(),
            line: 1,
            column: 1,
        };
        assert_eq!(s.line(&elsewhere), None);
    }

    /// The index must agree with `str::lines`, which the quoting used before it, on
    /// every line of texts with each kind of line ending.
    #[test]
    fn agrees_with_str_lines() {
        let texts = [
            "",
            "\n",
            "\r\n",
            "a",
            "a\n",
            "a\r",
            "a\r\n",
            "a\rb\n",
            "a\n\r\nb",
            "\r\r\n",
            "x\n\ny\n\n",
            "é\nü\r\n日本\n",
            "tab\there\n \n",
        ];
        for text in texts {
            let s = sources(text);
            let expected: Vec<&str> = text.lines().collect();
            let indexed: Vec<&str> = (1..=expected.len() + 1)
                .map_while(|n| line(&s, n))
                .collect();
            assert_eq!(indexed, expected, "{text:?}");
        }
    }
}
