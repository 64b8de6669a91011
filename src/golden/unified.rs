//! Line diffs, with line-ending and final-newline differences named instead of being
//! shown as a whole-file rewrite.

use std::borrow::Cow;

use similar::DiffOp;

use super::line_ops;

/// A unified diff of one file and what a reviewer should know about it.
#[derive(Debug, Clone, Default)]
pub struct Unified {
    /// `--- a` / `+++ b` headers and hunks with 3 lines of context; empty when the
    /// texts differ only in line endings.
    pub text: String,
    /// Line (1-based) of the first change in the old text.
    pub first_old_line: Option<usize>,
    /// Every hunk of `text`, so a format that points at lines can point at each.
    pub hunks: Vec<Hunk>,
    /// A plain-words explanation, e.g. that the old file uses CRLF line endings.
    pub note: Option<String>,
}

/// One hunk of a unified diff.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    /// Line (1-based) of the hunk's first change in the old text.
    pub first_old_line: usize,
    /// Line (1-based) of the hunk's first change in the new text.
    pub first_new_line: usize,
    /// The hunk, from its `@@ … @@` line on.
    pub text: String,
}

pub fn diff(old: &str, new: &str, old_name: &str, new_name: &str) -> Unified {
    let (old_lf, new_lf, mut note) = line_endings(old, new);
    let (old_text, new) = (&*old_lf, &*new_lf);
    if note.is_none() && new.strip_suffix('\n') == Some(old_text) {
        note = Some("the old file lacks the final newline".to_owned());
    } else if note.is_none() && old_text.strip_suffix('\n') == Some(new) {
        note = Some("the new file lacks the final newline".to_owned());
    }
    if old_text == new {
        return Unified {
            text: String::new(),
            first_old_line: Some(1),
            hunks: Vec::new(),
            note,
        };
    }
    let (skipped, old_middle, new_middle) = line_ops::differing_middle(old_text, new);
    let (old_lines, new_lines) = (line_ops::lines(old_middle), line_ops::lines(new_middle));
    let ops = line_ops::ops(&old_lines, &new_lines);
    let first_old_line = ops
        .iter()
        .find(|op| !is_equal(op))
        .map(|op| skipped + op.old_range().start + 1);
    let hunks: Vec<Hunk> = similar::group_diff_ops(ops, CONTEXT_LINES)
        .iter()
        .map(|ops| hunk(ops, &old_lines, &new_lines, skipped))
        .collect();
    let mut text = format!("--- {old_name}\n+++ {new_name}\n");
    if hunks.is_empty() {
        text.clear();
    }
    for h in &hunks {
        text.push_str(&h.text);
    }
    Unified {
        text,
        first_old_line,
        hunks,
        note,
    }
}

/// Lines of context around each change, as `diff -u` shows.
const CONTEXT_LINES: usize = 3;

/// One hunk as `diff -u` writes it: its `@@` line, then each line marked ` `, `-` or
/// `+`, a line without a final newline followed by `\ No newline at end of file`.
/// `old` and `new` are the lines after the first `skipped` of both texts.
fn hunk(ops: &[DiffOp], old: &[&str], new: &[&str], skipped: usize) -> Hunk {
    let (first, last) = (ops[0], ops[ops.len() - 1]);
    let numbered = [
        DiffOp::Equal {
            old_index: skipped + first.old_range().start,
            new_index: skipped + first.new_range().start,
            len: 0,
        },
        DiffOp::Insert {
            old_index: skipped + last.old_range().end,
            new_index: skipped + last.new_range().end,
            new_len: 0,
        },
    ];
    let mut text = format!("{}\n", similar::udiff::UnifiedHunkHeader::new(&numbered));
    let mut line = |mark: char, value: &str| {
        text.push(mark);
        text.push_str(value);
        if !value.ends_with('\n') && !value.ends_with('\r') {
            text.push_str("\n\\ No newline at end of file\n");
        }
    };
    for op in ops {
        match *op {
            DiffOp::Equal { .. } => old[op.old_range()].iter().for_each(|l| line(' ', l)),
            _ => {
                old[op.old_range()].iter().for_each(|l| line('-', l));
                new[op.new_range()].iter().for_each(|l| line('+', l));
            }
        }
    }
    let first = ops.iter().find(|op| !is_equal(op));
    Hunk {
        first_old_line: skipped + first.map_or(1, |op| op.old_range().start + 1),
        first_new_line: skipped + first.map_or(1, |op| op.new_range().start + 1),
        text,
    }
}

fn is_equal(op: &DiffOp) -> bool {
    matches!(op, DiffOp::Equal { .. })
}

/// Both texts with LF line breaks when only one of them uses CRLF, and a note saying
/// so: lines are compared without their terminators, so a file whose line endings
/// changed is not shown as a rewrite of every line. Texts with the same line endings
/// are compared as they are.
fn line_endings<'a>(old: &'a str, new: &'a str) -> (Cow<'a, str>, Cow<'a, str>, Option<String>) {
    let (old_crlf, new_crlf) = (old.contains("\r\n"), new.contains("\r\n"));
    if old_crlf == new_crlf {
        return (Cow::Borrowed(old), Cow::Borrowed(new), None);
    }
    let (old_lf, new_lf) = (old.replace("\r\n", "\n"), new.replace("\r\n", "\n"));
    let (crlf, lf) = if old_crlf {
        ("old", "new")
    } else {
        ("new", "old")
    };
    let note = if old_lf == new_lf {
        format!("only line endings differ: the {crlf} file uses CRLF (\\r\\n), the {lf} one LF")
    } else if old_crlf {
        "the old file uses CRLF (\\r\\n) line endings; compared as LF".to_owned()
    } else {
        "line endings changed: the new file uses CRLF (\\r\\n), the old one LF; lines compared without them".to_owned()
    };
    (Cow::Owned(old_lf), Cow::Owned(new_lf), Some(note))
}

#[cfg(test)]
mod tests {
    use super::diff;

    #[test]
    fn one_changed_line() {
        let u = diff("a\nb\nc\n", "a\nB\nc\n", "old", "new");
        assert_eq!(
            u.text,
            "--- old\n+++ new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert_eq!(u.first_old_line, Some(2));
        assert!(u.note.is_none());
    }

    #[test]
    fn crlf_is_named_not_shown_as_a_rewrite() {
        let u = diff("a\r\nb\r\n", "a\nb\n", "old", "new");
        assert!(u.text.is_empty());
        assert!(u.note.unwrap().starts_with("only line endings differ"));
        let u = diff("a\r\nb\r\n", "a\nc\n", "old", "new");
        assert_eq!(
            u.text.lines().filter(|l| l.starts_with(['-', '+'])).count(),
            4
        );
    }

    #[test]
    fn a_crlf_new_file_is_compared_line_by_line() {
        let u = diff("a\nb\n", "a\r\nb\r\n", "old", "new");
        assert!(u.text.is_empty());
        assert_eq!(
            u.note.as_deref(),
            Some("only line endings differ: the new file uses CRLF (\\r\\n), the old one LF")
        );
        let u = diff("a\nb\nc\n", "a\r\nB\r\nc\r\n", "old", "new");
        assert_eq!(
            u.text,
            "--- old\n+++ new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
        );
        assert!(u.note.unwrap().starts_with("line endings changed"));
    }

    #[test]
    fn every_hunk_is_listed_with_its_first_changed_line() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        let new = old.replace("\n2\n", "\nB\n").replace("\n18\n", "\nX\n");
        let u = diff(&old, &new, "old", "new");
        let lines: Vec<(usize, usize)> = u
            .hunks
            .iter()
            .map(|h| (h.first_old_line, h.first_new_line))
            .collect();
        assert_eq!(lines, [(2, 2), (18, 18)]);
        assert_eq!(u.hunks[0].text, "@@ -1,5 +1,5 @@\n 1\n-2\n+B\n 3\n 4\n 5\n");
        assert_eq!(
            u.text,
            format!("--- old\n+++ new\n{}{}", u.hunks[0].text, u.hunks[1].text)
        );
    }

    #[test]
    fn the_text_is_what_similars_own_unified_diff_writes() {
        let cases = [
            ("a\nb\nc\n", "a\nB\nc\n"),
            ("a\nb", "a\nc"),
            ("a\rb\rc", "a\rB\rc\n"),
            ("", "x\n"),
            ("x\n", ""),
            (
                "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
                "0\n1\n2\n3\n4\n6\n7\n8\n9\nA",
            ),
        ];
        // Long common heads and tails, cut before the diff reads them.
        let head: String = (0..2_000).map(|i| format!("h{i}\n")).collect();
        let tail: String = (0..2_000).map(|i| format!("t{i}\r")).collect();
        let long = [
            (format!("{head}a\nb\n{tail}"), format!("{head}a\nB\n{tail}")),
            (format!("{head}{tail}"), format!("{head}x\n{tail}")),
            (format!("{head}x\n{head}"), format!("{head}{head}")),
            (format!("{tail}\n{head}1"), format!("{tail}\n{head}2\n")),
        ];
        let cases = cases
            .iter()
            .map(|&(o, n)| (o, n))
            .chain(long.iter().map(|(o, n)| (o.as_str(), n.as_str())));
        for (old, new) in cases {
            let theirs = similar::TextDiff::from_lines(old, new)
                .unified_diff()
                .context_radius(3)
                .header("old", "new")
                .to_string();
            assert_eq!(
                diff(old, new, "old", "new").text,
                theirs,
                "{old:?} → {new:?}"
            );
        }
    }

    #[test]
    fn missing_final_newline_is_named() {
        let u = diff("a\nb", "a\nb\n", "old", "new");
        assert_eq!(
            u.note.as_deref(),
            Some("the old file lacks the final newline")
        );
        assert!(u.text.contains("\\ No newline at end of file"));
    }
}
