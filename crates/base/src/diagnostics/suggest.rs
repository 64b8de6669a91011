//! "Did you mean …?" for misspelt names.

/// The candidate closest to `word` by edit distance, when it is close enough to be a
/// plausible typo (at most a third of the word's length, and at least 1 edit allowed
/// for short words). Case differences count as half an edit.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (distance(word, c), c))
        .filter(|(d, _)| *d <= limit * 2)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, c)| c)
}

/// The IDs among `ids` (`RDG` and digits) that a mistyped `word` plausibly meant:
/// the same number written differently (`rdg20`, `RGD020`, `20`), else the ID with
/// two neighbouring digits swapped, else every ID with one digit wrong when at most
/// three are. Edit distance would
/// take `RDG999` for `RDG069` (two edits in six letters); a rule ID is a number, and
/// a number two digits off is another number, not a typo.
pub fn near_ids<'a>(word: &str, ids: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let word = word.trim();
    let digits = word.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    let prefix = &word[..word.len() - digits.len()];
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || prefix.len() > 4 {
        return Vec::new();
    }
    let ids: Vec<(&str, &str)> = ids
        .into_iter()
        .map(|id| (id, id.trim_start_matches(|c: char| c.is_ascii_alphabetic())))
        .collect();
    let same_number = ids
        .iter()
        .find(|(_, n)| n.trim_start_matches('0') == digits.trim_start_matches('0'));
    if let Some((id, _)) = same_number {
        return vec![id];
    }
    let swapped: Vec<&str> = ids
        .iter()
        .filter(|(_, n)| neighbours_swapped(digits, n))
        .map(|(id, _)| *id)
        .collect();
    if !swapped.is_empty() {
        return swapped;
    }
    let typos: Vec<&str> = ids
        .iter()
        .filter(|(_, n)| one_digit_wrong(digits, n))
        .map(|(id, _)| *id)
        .collect();
    // Past three, the word is near too many IDs for any to be what was meant.
    const PLAUSIBLE: usize = 3;
    match typos.len() {
        0..=PLAUSIBLE => typos,
        _ => Vec::new(),
    }
}

/// The positions where `a` and `b`, digit strings, differ; `None` when their lengths do.
fn differences(a: &str, b: &str) -> Option<Vec<usize>> {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    (a.len() == b.len()).then(|| (0..a.len()).filter(|&i| a[i] != b[i]).collect())
}

/// `RDG096` for `RDG069`: two neighbouring digits swapped, the likeliest typo of all.
fn neighbours_swapped(a: &str, b: &str) -> bool {
    match differences(a, b).as_deref() {
        Some([i, j]) => {
            *j == i + 1
                && a.as_bytes()[*i] == b.as_bytes()[*j]
                && a.as_bytes()[*j] == b.as_bytes()[*i]
        }
        _ => false,
    }
}

/// One digit wrong.
fn one_digit_wrong(a: &str, b: &str) -> bool {
    matches!(differences(a, b).as_deref(), Some([_]))
}

/// Levenshtein distance in half-edits: a substitution that only changes case costs 1,
/// every other edit 2.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).map(|j| j * 2).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![(i + 1) * 2];
        for (j, cb) in b.iter().enumerate() {
            let sub = if ca == cb {
                0
            } else if ca.eq_ignore_ascii_case(cb) {
                1
            } else {
                2
            };
            cur.push((prev[j] + sub).min(prev[j + 1] + 2).min(cur[j] + 2));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::{closest, near_ids};

    #[test]
    fn suggests_near_names_only() {
        let fields = ["gpusPerNode", "nodes", "image", "hostNetwork"];
        assert_eq!(closest("gpuPerNode", fields), Some("gpusPerNode"));
        assert_eq!(closest("GpusPerNode", fields), Some("gpusPerNode"));
        assert_eq!(closest("imgae", fields), Some("image"));
        assert_eq!(closest("replicas", fields), None);
    }

    #[test]
    fn rule_ids_are_suggested_only_for_a_one_digit_typo() {
        let ids = ["RDG001", "RDG020", "RDG021", "RDG069", "RDG070"];
        assert_eq!(near_ids("RDG999", ids), Vec::<&str>::new());
        assert_eq!(near_ids("RDG002", ids), ["RDG020"]);
        assert_eq!(near_ids("RDG003", ids), ["RDG001"]);
        assert_eq!(near_ids("RDG029", ids), ["RDG020", "RDG021", "RDG069"]);
        let dense: Vec<String> = (1..=95).map(|n| format!("RDG{n:03}")).collect();
        let dense = || dense.iter().map(String::as_str);
        assert_eq!(near_ids("RDG098", dense()), ["RDG089"]);
        assert_eq!(near_ids("RDG999", dense()), Vec::<&str>::new());
        assert_eq!(near_ids("RDG097", dense()), ["RDG079"]);
        assert_eq!(near_ids("RDG099", dense()), Vec::<&str>::new());
        assert_eq!(near_ids("RDG096", ids), ["RDG069"]);
        assert_eq!(near_ids("rdg20", ids), ["RDG020"]);
        assert_eq!(near_ids("RGD069", ids), ["RDG069"]);
        assert_eq!(near_ids("69", ids), ["RDG069"]);
        assert_eq!(near_ids("RDG0690", ids), Vec::<&str>::new());
        assert_eq!(near_ids("nccl", ids), Vec::<&str>::new());
    }
}
