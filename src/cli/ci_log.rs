//! Text for people, made inert for the GitHub Actions runner.
//!
//! The runner reads a step's stdout and stderr line by line and runs the workflow
//! commands it finds: `::cmd::` at the start of a line (after white space) and the
//! older `##[cmd]` anywhere in one. rdmagen echoes what a pull request wrote (a
//! golden file's lines in a diff, an HCA name from an NCCL log, job names), so on
//! Actions every stream that carries prose passes through [`Inert`], the last step
//! before the file descriptor: no path through the program can print around it.
//!
//! Why not `::stop-commands::TOKEN` around the output, as before: the runner reads
//! stdout and stderr on two pipes and does not keep their order, so a frame on one
//! stream does not reliably cover the other; a frame on a data stream (YAML piped to
//! kubectl, a SARIF report) would corrupt it; and whether a pipe leads to the runner
//! or to another program cannot be told from inside. Rewriting the two patterns is
//! the same on every stream and needs no guess. Data streams are not rewritten here:
//! their writers escape the patterns in a form that reads back as the same data
//! (JSON `\u0023`, XML `&#35;`, YAML `\u0023`), see `output::json::document`,
//! `output::junit` and `render::quote`.

use std::cell::Cell;
use std::io::{self, Write};

/// The longest start of a pattern held back until the next write shows how it ends:
/// `##` of `##[`.
const MAX_HELD: usize = 2;

/// A stream that writes `##[` as `#\u{23}[` and a leading `::` as `\u{3a}:`, in the
/// escape syntax of [`crate::diagnostics::escape::printable`], while `active`.
pub struct Inert<'a> {
    inner: &'a mut dyn Write,
    /// Set once the command, and so what each stream carries, is known.
    active: &'a Cell<bool>,
    /// Nothing but white space (see `may_precede`) since the last line break.
    at_line_start: bool,
    /// The end of the last write that may be the start of a pattern.
    held: Vec<u8>,
}

impl<'a> Inert<'a> {
    pub fn new(inner: &'a mut dyn Write, active: &'a Cell<bool>) -> Self {
        Inert {
            inner,
            active,
            at_line_start: true,
            held: Vec::new(),
        }
    }

    /// Write what is held back: the output has ended.
    pub fn finish(&mut self) -> io::Result<()> {
        let held = std::mem::take(&mut self.held);
        self.inner.write_all(&held)?;
        self.inner.flush()
    }

    /// Whether a line starts after `data`, written as it is: its last line break,
    /// unless a visible character follows it, decides; none leaves it as it was.
    fn note_line_start(&mut self, data: &[u8]) {
        if let Some(&last) = data
            .iter()
            .rev()
            .find(|b| matches!(b, b'\n' | b'\r') || !may_precede(**b))
        {
            self.at_line_start = matches!(last, b'\n' | b'\r');
        }
    }

    /// `data` rewritten; a possible start of a pattern at its end is held back.
    fn rewrite(&mut self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(data.len() + 8);
        let mut i = 0;
        while i < data.len() {
            let rest = &data[i..];
            if rest.starts_with(b"##[") {
                out.extend_from_slice(b"#\\u{23}[");
                i += 3;
                self.at_line_start = false;
                continue;
            }
            if self.at_line_start && rest.starts_with(b"::") {
                out.extend_from_slice(b"\\u{3a}:");
                i += 2;
                self.at_line_start = false;
                continue;
            }
            let open = b"##[".starts_with(rest) || (self.at_line_start && rest == b":");
            if open && rest.len() <= MAX_HELD {
                self.held = rest.to_vec();
                break;
            }
            let byte = data[i];
            out.push(byte);
            if byte == b'\n' || byte == b'\r' {
                self.at_line_start = true;
            } else if !may_precede(byte) {
                self.at_line_start = false;
            }
            i += 1;
        }
        out
    }
}

/// Whether `byte` may be part of the white space before a command: the runner trims
/// any Unicode white space, so every byte of a character outside visible ASCII counts
/// (as `escape::may_precede_a_command` does for characters).
fn may_precede(byte: u8) -> bool {
    !byte.is_ascii_graphic()
}

impl Write for Inert<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        if !self.active.get() {
            let held = std::mem::take(&mut self.held);
            self.inner.write_all(&held)?;
            return self.inner.write_all(buf);
        }
        // Most writes hold neither character a pattern starts with: pass them on.
        // Copying every write made `diff` of 200 000 changed lines 40 % slower on
        // Actions (4.4 s to 6.2 s); this way only the lines with `#` or `:` pay.
        if self.held.is_empty() && !buf.iter().any(|b| matches!(b, b'#' | b':')) {
            self.note_line_start(buf);
            return self.inner.write_all(buf);
        }
        let mut data = std::mem::take(&mut self.held);
        data.extend_from_slice(buf);
        let out = self.rewrite(&data);
        self.inner.write_all(&out)
    }

    /// Flushes what was written, but keeps a held start of a pattern: the next write
    /// may complete it.
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `pieces`, written one after another, become.
    fn inert(pieces: &[&str]) -> String {
        let active = Cell::new(true);
        let mut out = Vec::new();
        let mut w = Inert::new(&mut out, &active);
        for piece in pieces {
            w.write_all(piece.as_bytes()).unwrap();
        }
        w.finish().unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn commands_become_inert_wherever_the_writes_split_them() {
        let text = "a ##[error]x\n::error::y\n  \t::warning::z\n\u{a0}::debug::w\nk: a::b\n###[x\n";
        let want = "a #\\u{23}[error]x\n\\u{3a}:error::y\n  \t\\u{3a}:warning::z\n\u{a0}\\u{3a}:debug::w\nk: a::b\n##\\u{23}[x\n";
        assert_eq!(inert(&[text]), want);
        // Split at every byte: the held start of a pattern waits for the next write.
        let bytes: Vec<String> = text.chars().map(String::from).collect();
        let pieces: Vec<&str> = bytes.iter().map(String::as_str).collect();
        assert_eq!(inert(&pieces), want);
        assert_eq!(inert(&["x\r::", "error::y"]), "x\r\\u{3a}:error::y");
        // Writes without `#` or `:` pass on whole, and still tell where a line starts.
        assert_eq!(inert(&["a\n  ", "::x"]), "a\n  \\u{3a}:x");
        assert_eq!(inert(&["a\n  b", "::x"]), "a\n  b::x");
    }

    #[test]
    fn what_is_held_at_the_end_is_written_and_plain_text_passes() {
        assert_eq!(inert(&["done #"]), "done #");
        assert_eq!(inert(&[":"]), ":");
        assert_eq!(inert(&["3 errors: fe80::1 ok\n"]), "3 errors: fe80::1 ok\n");
    }

    #[test]
    fn an_inactive_stream_is_untouched() {
        let active = Cell::new(false);
        let mut out = Vec::new();
        let mut w = Inert::new(&mut out, &active);
        w.write_all(b"::error::x ##[y]").unwrap();
        w.finish().unwrap();
        assert_eq!(out, b"::error::x ##[y]");
    }
}
