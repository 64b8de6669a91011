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
    use super::closest;

    #[test]
    fn suggests_near_names_only() {
        let fields = ["gpusPerNode", "nodes", "image", "hostNetwork"];
        assert_eq!(closest("gpuPerNode", fields), Some("gpusPerNode"));
        assert_eq!(closest("GpusPerNode", fields), Some("gpusPerNode"));
        assert_eq!(closest("imgae", fields), Some("image"));
        assert_eq!(closest("replicas", fields), None);
    }
}
