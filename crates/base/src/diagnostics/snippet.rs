//! How findings read on a terminal: rustc-style, with the line they point at.

use std::fmt::Write;

use unicode_width::UnicodeWidthStr;

use crate::diagnostics::Finding;
use crate::diagnostics::escape::{printable, push_printable};
use crate::diagnostics::source::Sources;

/// The most characters of a source line shown under a finding. A minified or
/// generated file can hold megabytes on one line; the window around the column is
/// what a reader needs, and the log stays small.
pub const ECHO_WIDTH: usize = 160;

/// One finding as text, e.g.
///
/// ```text
/// error[RDG020]: NCCL_IB_TC must match the switches' QoS setup; ...
///   --> job.yaml:14:5
///    |
/// 14 |     NCCL_IB_TC: "106"
///    |     ^
/// ```
///
/// The message, the path and the echoed line are user text: they are written through
/// [`printable`], so none of them can add a line or a terminal escape of its own.
pub fn human(finding: &Finding, sources: &Sources) -> String {
    let mut out = String::new();
    write_human(&mut out, finding, sources).expect("a String takes any text");
    out
}

fn write_human(out: &mut String, finding: &Finding, sources: &Sources) -> std::fmt::Result {
    let info = finding.rule.info();
    writeln!(
        out,
        "{}[{}]: {}",
        finding.severity(),
        info.id,
        printable(&finding.message)
    )?;
    let gutter = finding
        .location
        .as_ref()
        .map_or(1, |at| at.line.to_string().len());
    let pad = " ".repeat(gutter);
    if let Some(at) = &finding.location {
        writeln!(out, "{pad}--> {}", printable(&at.to_string()))?;
        if let Some(line) = sources.line(at) {
            let (shown, caret_pad) = echo(line, at.column);
            writeln!(out, "{pad} |")?;
            writeln!(out, "{} | {shown}", at.line)?;
            writeln!(out, "{pad} | {caret_pad}^")?;
        }
    }
    writeln!(
        out,
        "{pad} = {}: {} (source: {})",
        info.id, info.summary, info.source
    )
}

/// The part of `line` shown under a finding, escaped, and the padding that puts the
/// caret under character `column` (1-based) of what is shown. The padding is as wide
/// as what precedes the caret is on screen: two columns for a CJK character, none for
/// a combining mark (Unicode's East Asian Width, as terminals and rustc use it).
///
/// A line longer than [`ECHO_WIDTH`] bytes is cut to [`ECHO_WIDTH`] characters
/// around the column: `…` marks a cut start, `… N bytes more` a cut end. Tabs are
/// kept in the padding so that the caret lines up however wide the terminal draws
/// them; an escaped character is padded as wide as its escape.
fn echo(line: &str, column: usize) -> (String, String) {
    let target = column.saturating_sub(1);
    let first = if line.len() <= ECHO_WIDTH {
        0
    } else {
        target.saturating_sub(ECHO_WIDTH / 2)
    };
    let mut shown = String::new();
    let mut caret_pad = String::new();
    if first > 0 {
        shown.push_str("… ");
        caret_pad.push_str("  ");
    }
    let mut end = line.len();
    for (n, (at, c)) in line.char_indices().skip(first).enumerate() {
        if n == ECHO_WIDTH {
            end = at;
            break;
        }
        let start = shown.len();
        push_printable(&mut shown, c);
        if first + n < target {
            match c {
                '\t' => caret_pad.push('\t'),
                _ => caret_pad.extend(std::iter::repeat_n(' ', shown[start..].width())),
            }
        }
    }
    if end < line.len() {
        shown += &format!(" … {} bytes more", line.len() - end);
    }
    (shown, caret_pad)
}

#[cfg(test)]
mod tests {
    use unicode_width::UnicodeWidthStr;

    use super::{ECHO_WIDTH, echo};

    #[test]
    fn a_short_line_is_shown_whole_with_the_caret_under_the_column() {
        assert_eq!(
            echo("  NCCL_IB_TC: \"106\"", 3),
            ("  NCCL_IB_TC: \"106\"".to_owned(), "  ".to_owned())
        );
        assert_eq!(
            echo("\tkey: v", 2),
            ("\tkey: v".to_owned(), "\t".to_owned())
        );
    }

    #[test]
    fn escapes_before_the_column_widen_the_caret_padding() {
        // `\u{1b}` takes six columns, `\r` two: the caret still points at `x`.
        assert_eq!(
            echo("a\u{1b}\rx", 4),
            ("a\\u{1b}\\rx".to_owned(), " ".repeat(9))
        );
    }

    #[test]
    fn wide_characters_before_the_column_take_two_columns_each() {
        // `名前` is four columns on screen, `: ` two more: the caret is under `值`.
        assert_eq!(echo("名前: 值", 5), ("名前: 值".to_owned(), " ".repeat(6)));
        // A combining accent takes no column of its own.
        assert_eq!(echo("e\u{301}x", 3).1, " ");
        let (shown, caret_pad) = echo("  ｎａｍｅ: 値", 9);
        let caret_at = caret_pad.len();
        assert_eq!(shown[..].width(), 2 + 8 + 2 + 2);
        assert_eq!(caret_at, 2 + 8 + 2, "{shown}\n{caret_pad}^");
    }

    #[test]
    fn a_long_line_is_cut_around_the_column_and_says_how_much_is_left() {
        let line = format!("{}X{}", "a".repeat(1000), "b".repeat(5000));
        let (shown, caret_pad) = echo(&line, 1001);
        let half = ECHO_WIDTH / 2;
        let kept_after = ECHO_WIDTH - half - 1;
        assert_eq!(
            shown,
            format!(
                "… {}X{} … {} bytes more",
                "a".repeat(half),
                "b".repeat(kept_after),
                5000 - kept_after
            )
        );
        assert_eq!(caret_pad, " ".repeat(2 + half));
    }

    #[test]
    fn a_long_line_with_an_early_column_is_cut_at_the_end_only() {
        let line = "é".repeat(1000);
        let (shown, caret_pad) = echo(&line, 3);
        assert_eq!(
            shown,
            format!(
                "{} … {} bytes more",
                "é".repeat(ECHO_WIDTH),
                2 * (1000 - ECHO_WIDTH)
            )
        );
        assert_eq!(caret_pad, "  ");
    }
}
