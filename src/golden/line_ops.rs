//! The edit script of a large line diff, with work bounded by the input's size.
//!
//! similar's Myers costs O((N+M)·D): fine for the texts a review shows, quadratic when
//! a large file changed everywhere (20 000 objects listed in reverse cost 2.1 s, five
//! times as many 16 s). Above [`MYERS_LINES`] the texts are cut at lines that occur
//! once on each side and keep their order (patience diff's anchors); stretches
//! between anchors are diffed with Myers when short, cut again when long, and shown
//! as replaced when they hold no anchor. Every step depends on the texts alone, so
//! the script is deterministic; it is not always the shortest, which only matters
//! for a diff no reviewer reads line by line.

use std::collections::HashMap;
use std::ops::Range;

use similar::{Algorithm, DiffOp};

/// Line counts (old + new) up to which one Myers diff of the whole is the script,
/// as it always was: at most about half a second on the worst input of this size.
pub const MYERS_LINES: usize = 20_000;

/// A stretch between anchors this short is diffed with Myers: at most
/// `GAP_LINES²` steps each, and the stretches add up to the input.
const GAP_LINES: usize = 256;

/// How often a stretch is cut again at the anchors unique within it; below that it
/// is shown as replaced. Each level reads every line once, so the whole is linear.
const MAX_DEPTH: u32 = 24;

/// Lines of equal context kept on each side of the part that differs: more than
/// the 3 a hunk shows, so a lone `\r` (which ends a line but is not cut at) cannot
/// leave a hunk short of context.
const KEPT_CONTEXT: usize = 8;

/// The parts of `old` and `new` that a diff must read, and how many lines precede
/// them: their common head and tail are cut at line breaks, keeping [`KEPT_CONTEXT`]
/// lines, so two 33 MB files that differ in one line are not split into 7 million
/// lines each to find it (545 MB; the texts alone are 66).
pub fn differing_middle<'a>(old: &'a str, new: &'a str) -> (usize, &'a str, &'a str) {
    let (o, n) = (old.as_bytes(), new.as_bytes());
    let same_head = o.iter().zip(n).take_while(|(a, b)| a == b).count();
    let head = back_lines(&o[..same_head], KEPT_CONTEXT + 1);
    let most_tail = o.len().min(n.len()) - head;
    let same_tail = o
        .iter()
        .rev()
        .zip(n.iter().rev())
        .take(most_tail)
        .take_while(|(a, b)| a == b)
        .count();
    let tail_start = o.len() - same_tail;
    let tail = same_tail - forward_lines(&o[tail_start..], KEPT_CONTEXT + 1);
    (
        line_count(&old[..head]),
        &old[head..o.len() - tail],
        &new[head..n.len() - tail],
    )
}

/// The offset just after the `n`th `\n` counted back from the end of `bytes`, or 0.
fn back_lines(bytes: &[u8], n: usize) -> usize {
    bytes
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, b)| **b == b'\n')
        .nth(n - 1)
        .map_or(0, |(i, _)| i + 1)
}

/// The offset just after the `n`th `\n` of `bytes`, or its length.
fn forward_lines(bytes: &[u8], n: usize) -> usize {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(n - 1)
        .map_or(bytes.len(), |(i, _)| i + 1)
}

/// How many lines [`lines`] finds in `text`, which ends with a line break.
fn line_count(text: &str) -> usize {
    let b = text.as_bytes();
    (0..b.len())
        .filter(|&i| b[i] == b'\n' || (b[i] == b'\r' && b.get(i + 1) != Some(&b'\n')))
        .count()
}

/// The lines of `text`, each with its terminator (`\n`, `\r\n` or a lone `\r`), as
/// similar's line diff splits them.
pub fn lines(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let end = match bytes[i] {
            b'\n' => i + 1,
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => i + 2,
            b'\r' => i + 1,
            _ => {
                i += 1;
                continue;
            }
        };
        out.push(&text[start..end]);
        start = end;
        i = end;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// The edit script from `old` to `new` (see the module comment), with equal runs
/// merged, in the form similar's unified-diff grouping takes.
pub fn ops(old: &[&str], new: &[&str]) -> Vec<DiffOp> {
    if old.len() + new.len() <= MYERS_LINES {
        return similar::capture_diff_slices(Algorithm::Myers, old, new);
    }
    let mut out = Vec::new();
    let mut todo = vec![Task::Stretch(0..old.len(), 0..new.len(), 0)];
    while let Some(task) = todo.pop() {
        match task {
            Task::Equal(o, n) => push(
                &mut out,
                DiffOp::Equal {
                    old_index: o,
                    new_index: n,
                    len: 1,
                },
            ),
            Task::Stretch(o, n, depth) => {
                let (o, n, prefix, suffix) = trimmed(old, o, new, n);
                if suffix > 0 {
                    todo.push(Task::Suffix(o.end, n.end, suffix));
                }
                if prefix > 0 {
                    push(
                        &mut out,
                        DiffOp::Equal {
                            old_index: o.start - prefix,
                            new_index: n.start - prefix,
                            len: prefix,
                        },
                    );
                }
                stretch(old, o, new, n, depth, &mut out, &mut todo);
            }
            Task::Suffix(o, n, len) => push(
                &mut out,
                DiffOp::Equal {
                    old_index: o,
                    new_index: n,
                    len,
                },
            ),
        }
    }
    out
}

/// Work left, popped last-pushed first so the script comes out in order.
enum Task {
    Stretch(Range<usize>, Range<usize>, u32),
    /// One anchor line, equal on both sides.
    Equal(usize, usize),
    /// The common tail of a stretch, written once the stretch is done.
    Suffix(usize, usize, usize),
}

fn stretch(
    old: &[&str],
    o: Range<usize>,
    new: &[&str],
    n: Range<usize>,
    depth: u32,
    out: &mut Vec<DiffOp>,
    todo: &mut Vec<Task>,
) {
    let size = o.len() + n.len();
    if size == 0 {
        return;
    }
    if o.is_empty() || n.is_empty() || size <= GAP_LINES {
        for op in similar::capture_diff(Algorithm::Myers, old, o, new, n) {
            push(out, op);
        }
        return;
    }
    let anchors = if depth < MAX_DEPTH {
        anchors(old, o.clone(), new, n.clone())
    } else {
        Vec::new()
    };
    if anchors.is_empty() {
        push(
            out,
            DiffOp::Replace {
                old_index: o.start,
                old_len: o.len(),
                new_index: n.start,
                new_len: n.len(),
            },
        );
        return;
    }
    // Pushed in reverse: the stretch after the last anchor is done last.
    let (mut o_end, mut n_end) = (o.end, n.end);
    for &(a_old, a_new) in anchors.iter().rev() {
        todo.push(Task::Stretch(a_old + 1..o_end, a_new + 1..n_end, depth + 1));
        todo.push(Task::Equal(a_old, a_new));
        (o_end, n_end) = (a_old, a_new);
    }
    todo.push(Task::Stretch(o.start..o_end, n.start..n_end, depth + 1));
}

/// The ranges without their common first and last lines, and how many there were.
fn trimmed(
    old: &[&str],
    o: Range<usize>,
    new: &[&str],
    n: Range<usize>,
) -> (Range<usize>, Range<usize>, usize, usize) {
    let prefix = old[o.clone()]
        .iter()
        .zip(&new[n.clone()])
        .take_while(|(a, b)| a == b)
        .count();
    let (o, n) = (o.start + prefix..o.end, n.start + prefix..n.end);
    let suffix = old[o.clone()]
        .iter()
        .rev()
        .zip(new[n.clone()].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    (
        o.start..o.end - suffix,
        n.start..n.end - suffix,
        prefix,
        suffix,
    )
}

/// Lines that occur exactly once in each range, as (old, new) positions, the longest
/// run of them whose order both sides agree on (patience sorting, O(k log k)).
fn anchors(old: &[&str], o: Range<usize>, new: &[&str], n: Range<usize>) -> Vec<(usize, usize)> {
    // line → (count in old, its old position, count in new, its new position)
    let mut seen: HashMap<&str, (u32, usize, u32, usize)> = HashMap::new();
    for i in o {
        let e = seen.entry(old[i]).or_default();
        e.0 += 1;
        e.1 = i;
    }
    for j in n {
        if let Some(e) = seen.get_mut(new[j]) {
            e.2 += 1;
            e.3 = j;
        }
    }
    let mut unique: Vec<(usize, usize)> = seen
        .into_values()
        .filter(|e| e.0 == 1 && e.2 == 1)
        .map(|e| (e.1, e.3))
        .collect();
    unique.sort_unstable();
    longest_increasing(&unique)
}

/// The longest subsequence of `pairs` (sorted by old position) whose new positions
/// increase; ties go to the earliest, so the result depends on the input alone.
fn longest_increasing(pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // tails[k]: index in `pairs` of the smallest tail of an increasing run of length k+1.
    let mut tails: Vec<usize> = Vec::new();
    let mut before: Vec<Option<usize>> = vec![None; pairs.len()];
    for (i, &(_, new)) in pairs.iter().enumerate() {
        let k = tails.partition_point(|&t| pairs[t].1 < new);
        before[i] = k.checked_sub(1).map(|k| tails[k]);
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut run = Vec::with_capacity(tails.len());
    let mut at = tails.last().copied();
    while let Some(i) = at {
        run.push(pairs[i]);
        at = before[i];
    }
    run.reverse();
    run
}

/// Appends `op`, merging it into the last one when both are equal runs that touch.
fn push(out: &mut Vec<DiffOp>, op: DiffOp) {
    if let (
        Some(DiffOp::Equal {
            old_index,
            new_index,
            len,
        }),
        DiffOp::Equal {
            old_index: o,
            new_index: n,
            len: l,
        },
    ) = (out.last_mut(), op)
        && *old_index + *len == o
        && *new_index + *len == n
    {
        *len += l;
        return;
    }
    if op_len(&op) > 0 {
        out.push(op);
    }
}

fn op_len(op: &DiffOp) -> usize {
    op.old_range().len() + op.new_range().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies `ops` to `old`, to check they turn it into `new`.
    fn apply<'a>(ops: &[DiffOp], old: &[&'a str], new: &[&'a str]) -> Vec<&'a str> {
        let mut out = Vec::new();
        let (mut o_at, mut n_at) = (0, 0);
        for op in ops {
            assert_eq!(
                (op.old_range().start, op.new_range().start),
                (o_at, n_at),
                "ops are contiguous"
            );
            if let DiffOp::Equal {
                old_index,
                new_index,
                len,
            } = *op
            {
                assert_eq!(
                    old[old_index..old_index + len],
                    new[new_index..new_index + len]
                );
                out.extend_from_slice(&old[old_index..old_index + len]);
            } else {
                out.extend_from_slice(&new[op.new_range()]);
            }
            (o_at, n_at) = (op.old_range().end, op.new_range().end);
        }
        assert_eq!((o_at, n_at), (old.len(), new.len()), "ops cover both texts");
        out
    }

    #[test]
    fn lines_keep_every_terminator() {
        assert_eq!(lines("a\nb\r\nc\rd"), ["a\n", "b\r\n", "c\r", "d"]);
        assert_eq!(lines(""), Vec::<&str>::new());
    }

    #[test]
    fn a_large_reordered_text_is_cut_at_its_anchors_and_rebuilt_exactly() {
        let old_text: String = (0..30_000)
            .map(|i| format!("k: {}\nv: same\n", i % 9_000))
            .collect();
        let mut blocks: Vec<String> = (0..30_000)
            .map(|i| format!("k: {}\nv: same\n", (i * 7) % 9_001))
            .collect();
        blocks.reverse();
        let new_text: String = blocks.concat();
        let (old, new) = (lines(&old_text), lines(&new_text));
        assert!(old.len() + new.len() > MYERS_LINES);
        let ops = ops(&old, &new);
        assert_eq!(apply(&ops, &old, &new), new);
    }

    #[test]
    fn anchors_split_a_large_diff_so_unchanged_blocks_stay_equal() {
        let block = |i: usize, v: &str| format!("name: job-{i}\nvalue: {v}\nkind: x\nkind: x\n");
        let old_text: String = (0..6_000).map(|i| block(i, "a")).collect();
        let new_text: String = (0..6_000)
            .map(|i| block(i, if i % 1000 == 0 { "b" } else { "a" }))
            .collect();
        let (old, new) = (lines(&old_text), lines(&new_text));
        let ops = ops(&old, &new);
        assert_eq!(apply(&ops, &old, &new), new);
        let changed: usize = ops
            .iter()
            .filter(|op| !matches!(op, DiffOp::Equal { .. }))
            .map(|op| op.old_range().len())
            .sum();
        assert_eq!(
            changed, 6,
            "only the six changed lines are shown as changed"
        );
    }

    #[test]
    fn a_text_without_anchors_is_shown_replaced() {
        let old_text = "a\nb\n".repeat(20_000);
        let new_text = "b\na\nc\n".repeat(20_000);
        let (old, new) = (lines(&old_text), lines(&new_text));
        let ops = ops(&old, &new);
        assert_eq!(apply(&ops, &old, &new), new);
    }

    #[test]
    fn small_texts_get_one_myers_diff_as_before() {
        let old = lines("a\nb\nc\nd\n");
        let new = lines("a\nc\nB\nd\n");
        assert_eq!(
            ops(&old, &new),
            similar::capture_diff_slices(Algorithm::Myers, &old, &new)
        );
    }
}
