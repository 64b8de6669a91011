//! Line diffs, with line-ending and final-newline differences named instead of being
//! shown as a whole-file rewrite.

use similar::TextDiff;

/// A unified diff of one file and what a reviewer should know about it.
#[derive(Debug, Clone, Default)]
pub struct Unified {
    /// `--- a` / `+++ b` headers and hunks with 3 lines of context; empty when the
    /// texts differ only in line endings.
    pub text: String,
    /// Line (1-based) of the first change in the old text.
    pub first_old_line: Option<usize>,
    /// A plain-words explanation, e.g. that the old file uses CRLF line endings.
    pub note: Option<String>,
}

pub fn diff(old: &str, new: &str, old_name: &str, new_name: &str) -> Unified {
    let mut note = None;
    let normalised;
    let mut old_text = old;
    if old.contains("\r\n") && !new.contains("\r\n") {
        normalised = old.replace("\r\n", "\n");
        old_text = &normalised;
        note = Some(if normalised == new {
            "only line endings differ: the old file uses CRLF (\\r\\n), the new one LF".to_owned()
        } else {
            "the old file uses CRLF (\\r\\n) line endings; compared as LF".to_owned()
        });
    }
    if note.is_none() && format!("{old_text}\n") == new {
        note = Some("the old file lacks the final newline".to_owned());
    } else if note.is_none() && format!("{new}\n") == old_text {
        note = Some("the new file lacks the final newline".to_owned());
    }
    if old_text == new {
        return Unified {
            text: String::new(),
            first_old_line: Some(1),
            note,
        };
    }
    let d = TextDiff::from_lines(old_text, new);
    let mut unified = d.unified_diff();
    unified.context_radius(3).header(old_name, new_name);
    let first_old_line = d
        .ops()
        .iter()
        .find(|op| !matches!(op, similar::DiffOp::Equal { .. }))
        .map(|op| op.old_range().start + 1);
    Unified {
        text: unified.to_string(),
        first_old_line,
        note,
    }
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
    fn missing_final_newline_is_named() {
        let u = diff("a\nb", "a\nb\n", "old", "new");
        assert_eq!(
            u.note.as_deref(),
            Some("the old file lacks the final newline")
        );
        assert!(u.text.contains("\\ No newline at end of file"));
    }
}
