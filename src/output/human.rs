//! Text for people: rustc-style findings with the line they point at, unified diffs,
//! and a structural summary of differences; optionally coloured.

use std::io::{self, Write};

use anstyle::{AnsiColor, Reset, Style};

use super::comparison::{self, Labels};
use crate::diagnostics::escape::printable;
use crate::diagnostics::snippet;
use crate::diagnostics::source::Sources;
use crate::diagnostics::{Finding, Findings, Severity};
use crate::golden::semantic::Change;
use crate::golden::{Comparison, Status};

const BOLD: Style = Style::new().bold();

fn severity_style(severity: Severity) -> Style {
    let color = match severity {
        Severity::Error => AnsiColor::Red,
        Severity::Warning => AnsiColor::Yellow,
        Severity::Info => AnsiColor::Cyan,
    };
    BOLD.fg_color(Some(color.into()))
}

/// Colour of a unified-diff line, by its prefix (`+`, `-`, `@@`, headers).
fn diff_line_style(line: &str) -> Style {
    if line.starts_with("+++") || line.starts_with("---") {
        BOLD
    } else if line.starts_with('+') {
        AnsiColor::Green.on_default()
    } else if line.starts_with('-') {
        AnsiColor::Red.on_default()
    } else if line.starts_with("@@") {
        AnsiColor::Cyan.on_default()
    } else {
        Style::new()
    }
}

/// `text` in `style`, then reset. anstyle writes each attribute as a sequence of its
/// own (`ESC[1m ESC[36m`); rdmagen has always written one (`ESC[1;36m`), which
/// terminals read the same, so the parameters are joined to keep the bytes.
fn painted(style: Style, text: &str) -> String {
    if style == Style::new() {
        return text.to_owned();
    }
    let open = style.render().to_string().replace("m\x1b[", ";");
    format!("{open}{text}{}", Reset.render())
}

/// Every finding, rustc-style, a blank line after each; with `color`, the severity
/// label is painted.
pub fn findings(
    w: &mut dyn Write,
    findings: &Findings,
    sources: &Sources,
    color: bool,
) -> io::Result<()> {
    for f in findings.iter() {
        let text = snippet::human(f, sources);
        if color {
            writeln!(w, "{}", paint_label(&text, f))?;
        } else {
            writeln!(w, "{text}")?;
        }
    }
    Ok(())
}

/// The first `severity[ID]` of a finding's text, painted.
fn paint_label(text: &str, f: &Finding) -> String {
    let info = f.rule.info();
    let label = format!("{}[{}]", f.severity(), info.id);
    text.replacen(&label, &painted(severity_style(f.severity()), &label), 1)
}

/// `3 errors, 1 warning, 0 infos`
pub fn summary(findings: &Findings) -> String {
    let n = |s, word: &str| {
        let count = findings.count(s);
        format!("{count} {word}{}", if count == 1 { "" } else { "s" })
    };
    format!(
        "{}, {}, {}",
        n(Severity::Error, "error"),
        n(Severity::Warning, "warning"),
        n(Severity::Info, "info")
    )
}

/// Unified diffs of every changed file, after the structural summary when `semantic`.
pub fn comparison(
    w: &mut dyn Write,
    cmp: &Comparison,
    labels: &Labels<'_>,
    semantic: bool,
    color: bool,
) -> io::Result<()> {
    let mut out = Lines { w, color };
    if semantic && !cmp.is_clean() {
        structural_summary(&mut out, cmp, labels)?;
    }
    for f in cmp.changed() {
        let u = labels.unified(f);
        if let Some(note) = &u.note {
            out.put(&format!("{}: {note}", labels.shown(f)), Style::new())?;
        }
        // Split on LF only: a CR left at a line's end is shown (escaped), not dropped.
        for line in u.text.split_terminator('\n') {
            let line = printable(line);
            out.put(&line, diff_line_style(&line))?;
        }
    }
    Ok(())
}

/// Files with the same structural changes are listed together, so a pool change that
/// touches 40 manifests reads as one change "in 40 files".
fn structural_summary(
    out: &mut Lines<'_>,
    cmp: &Comparison,
    labels: &Labels<'_>,
) -> io::Result<()> {
    let mut groups: Vec<(Vec<Change>, Vec<String>)> = Vec::new();
    for f in cmp.files.iter().filter(|f| f.status == Status::Differs) {
        let changes = match comparison::changes(f) {
            Ok(c) if !c.is_empty() => c,
            Ok(_) => continue,
            Err(e) => {
                let line = format!("{}: not compared structurally ({e})", labels.shown(f));
                out.put(&line, Style::new())?;
                continue;
            }
        };
        match groups.iter_mut().find(|(c, _)| *c == changes) {
            Some((_, files)) => files.push(labels.shown(f)),
            None => groups.push((changes, vec![labels.shown(f)])),
        }
    }
    for (changes, files) in &groups {
        let head = match files.as_slice() {
            [one] => one.clone(),
            many => {
                let shown: Vec<&str> = many.iter().take(3).map(String::as_str).collect();
                let more = if many.len() > 3 {
                    format!(", and {} more", many.len() - 3)
                } else {
                    String::new()
                };
                format!(
                    "same change in {} files: {}{more}",
                    many.len(),
                    shown.join(", ")
                )
            }
        };
        out.put(&head, BOLD)?;
        for c in changes {
            out.put(&format!("  {c}"), Style::new())?;
        }
    }
    for f in cmp.changed().filter(|f| f.status != Status::Differs) {
        let line = format!("{}: {}", labels.shown(f), labels.one_sided(f.status));
        out.put(&line, BOLD)?;
    }
    writeln!(out.w)
}

/// Where every line of a comparison is written. Paths, golden-file lines and the
/// values in change descriptions are bytes a pull request chose, so a line is
/// escaped first (no control character reaches the log) and coloured after.
struct Lines<'a> {
    w: &'a mut dyn Write,
    color: bool,
}

impl Lines<'_> {
    fn put(&mut self, line: &str, style: Style) -> io::Result<()> {
        let line = printable(line);
        if self.color {
            writeln!(self.w, "{}", painted(style, &line))
        } else {
            writeln!(self.w, "{line}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styles_are_written_as_one_sequence_each() {
        assert_eq!(
            painted(severity_style(Severity::Info), "info[RDG035]"),
            "\x1b[1;36minfo[RDG035]\x1b[0m"
        );
        assert_eq!(painted(BOLD, "x"), "\x1b[1mx\x1b[0m");
        assert_eq!(painted(diff_line_style("-a"), "-a"), "\x1b[31m-a\x1b[0m");
        assert_eq!(painted(diff_line_style(" a"), " a"), " a");
    }
}
