//! Making untrusted text safe to print.
//!
//! Messages, paths, echoed source lines and diffed golden files come from trees a pull
//! request may have written, and rdmagen's output lands in CI logs and terminals. A raw
//! line break there can start a GitHub workflow command (`::add-mask::`, `::error`)
//! on a line of its own, and ESC, CR or NUL can rewrite what a terminal shows. So every
//! human-facing format writes user text through [`printable`].

use std::borrow::Cow;

/// `text` with every control character except tab written as a Rust-style escape:
/// `\n`, `\r`, `\u{1b}` (ESC), `\u{0}` (NUL), `\u{9b}` (the one-byte CSI), and so on.
///
/// Tab is kept: it is common in YAML comments and Dockerfiles, moves the cursor only
/// forward, and the caret line under an echoed line reproduces it to stay aligned.
/// Backslashes are kept as they are, so `\n` in the output may also be a literal
/// backslash-n in the input; the message stays readable and a control character can
/// never pass through.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_printable(&mut out, c);
    }
    Cow::Owned(out)
}

/// Append one character as [`printable`] would write it; returns how many characters
/// that took (1, or the length of the escape).
pub fn push_printable(out: &mut String, c: char) -> usize {
    if needs_escape(c) {
        let before = out.len();
        out.extend(c.escape_default());
        // An escape is ASCII, so its byte length is its width.
        out.len() - before
    } else {
        out.push(c);
        1
    }
}

/// `text` cut to at most `max` characters, with `…` when something was cut: for a
/// message that quotes what an input wrote, which may be a megabyte on one line.
pub fn cut(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
        None => Cow::Borrowed(text),
    }
}

/// The most characters of an input a message quotes; the rest is in the file.
/// ([`crate::diagnostics::finding::MAX_MESSAGE`] bounds the whole message, whatever a
/// check forgets.)
pub const MAX_QUOTED_TEXT: usize = 80;

/// `text` as a message quotes a piece of input: [`cut`] to [`MAX_QUOTED_TEXT`].
pub fn shown(text: &str) -> Cow<'_, str> {
    cut(text, MAX_QUOTED_TEXT)
}

/// `text` in double quotes, cut to `max` characters, with everything but printable
/// ASCII escaped (`\n`, `\"`, `\u{2028}`, `\u{e9}`): for a name that is wrong
/// because of a character the reader could not otherwise see.
pub fn quoted_ascii(text: &str, max: usize) -> String {
    format!("\"{}\"", cut(text, max).escape_default())
}

fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\t') || is_bidi_control(c)
}

/// The characters that reorder how a line is shown without being shown themselves:
/// the bidirectional embeddings, overrides and isolates (U+202A-U+202E,
/// U+2066-U+2069, the "Trojan Source" characters, CVE-2021-42574) and the
/// left-to-right, right-to-left and Arabic letter marks (U+200E, U+200F, U+061C). A
/// job named with U+202E reads backwards from there on, in a terminal and in a CI
/// log, so every format escapes them as it escapes control characters.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}')
}

/// Whether `c` may stand before a workflow command at the start of a line: the
/// Actions runner trims a line (any Unicode white space) before it looks for `::`.
/// Counted generously, so that no white space is missed: anything but a visible
/// ASCII character.
pub fn may_precede_a_command(c: char) -> bool {
    !c.is_ascii_graphic()
}

#[cfg(test)]
mod tests {
    use super::{cut, printable};

    #[test]
    fn quoted_ascii_shows_what_cannot_be_seen() {
        assert_eq!(
            super::quoted_ascii("a\u{2028}b \"c\"\n", 80),
            r#""a\u{2028}b \"c\"\n""#
        );
        assert_eq!(super::quoted_ascii("abcd", 3), r#""abc\u{2026}""#);
    }

    #[test]
    fn cut_counts_characters() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "abc…");
        assert_eq!(cut("混合物x", 2), "混合…");
    }

    #[test]
    fn control_characters_but_tab_are_escaped() {
        assert_eq!(
            printable("a\n::add-mask::x\r\u{1b}[31m\u{0}\u{7f}\u{9b}\tb"),
            "a\\n::add-mask::x\\r\\u{1b}[31m\\u{0}\\u{7f}\\u{9b}\tb"
        );
    }

    #[test]
    fn bidi_controls_are_escaped() {
        assert_eq!(
            printable("job\u{202e}lmay.\u{2066}x\u{2069}\u{200f}\u{61c}é"),
            "job\\u{202e}lmay.\\u{2066}x\\u{2069}\\u{200f}\\u{61c}é"
        );
    }

    #[test]
    fn plain_text_is_borrowed_unchanged() {
        let text = "job.yaml: `é` is not a DNS-1035 label";
        assert!(matches!(printable(text), std::borrow::Cow::Borrowed(t) if t == text));
    }
}
