//! The golden diff on arbitrary text: line diffs and the structural YAML diff.

use proptest::prelude::*;
use rdmagen::golden::{semantic, unified};

use crate::corpus::YAML;
use crate::guard;
use crate::mutate::input;

proptest! {
    #![proptest_config(guard::config(256, "tests/proptest-regressions/fuzz-golden-diff.txt"))]

    /// Any two texts: the structural diff ends with changes or an error, and finds no
    /// change between a text and itself.
    #[test]
    fn semantic_diff_of_a_text_with_itself_is_empty(old in input(&YAML), new in input(&YAML)) {
        let same = guard::run("semantic::changes", move || {
            // The pair only has to end; the text against itself has a known answer.
            let _ = semantic::changes(&old, &new);
            semantic::changes(&old, &old).map(|c| (c, old))
        });
        if let Ok((changes, text)) = same {
            prop_assert!(changes.is_empty(), "{changes:?} between {text:?} and itself");
        }
    }

    /// Any two texts: the line diff is empty exactly when they are equal once CRLF is
    /// read as LF, and names the first changed line inside the old text.
    #[test]
    fn unified_diff_is_empty_only_for_equal_texts(old in input(&YAML), new in input(&YAML)) {
        let outcome = guard::run("unified::diff", move || {
            let u = unified::diff(&old, &new, "old", "new");
            (u, old, new)
        });
        let (u, old, new) = outcome;
        let same = old == new || (old.contains("\r\n") && !new.contains("\r\n") && old.replace("\r\n", "\n") == new);
        prop_assert_eq!(u.text.is_empty(), same, "old {:?}, new {:?}", old, new);
        if let Some(line) = u.first_old_line {
            prop_assert!(line >= 1 && line <= old.split('\n').count().max(1) + 1, "first line {line} of {old:?}");
        }
    }
}
