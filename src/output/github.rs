//! GitHub Actions workflow commands (`::error file=…,line=…,title=…::message`), which
//! the runner shows as annotations on the pull request.

use std::io::{self, Write};

use super::comparison::{self, Labels};
use crate::diagnostics::escape::printable;
use crate::diagnostics::{Findings, Severity};
use crate::golden::{Comparison, Status};

pub fn findings(w: &mut dyn Write, findings: &Findings) -> io::Result<()> {
    for f in findings.iter() {
        let info = f.rule.info();
        let level = match f.severity() {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let place = f.location.as_ref().map(|at| Place {
            file: &at.file,
            line: at.line,
            column: Some(at.column),
        });
        let title = format!("{} {}", info.id, info.summary);
        annotation(w, level, place, &title, &f.message)?;
    }
    Ok(())
}

/// One annotation per hunk of a changed file, at the hunk's first changed line, with
/// the hunk as its message; the file's structural changes go with its first hunk. A
/// file only one side has, or that differs only in line endings or a final newline,
/// gets one annotation at line 1.
pub fn comparison(w: &mut dyn Write, cmp: &Comparison, labels: &Labels<'_>) -> io::Result<()> {
    for f in cmp.changed() {
        let file = labels.shown(f);
        let at = |line| Place {
            file: &file,
            line,
            column: None,
        };
        if f.status != Status::Differs {
            let message = labels.one_sided(f.status);
            annotation(w, "error", Some(at(1)), "rdmagen golden", message)?;
            continue;
        }
        let u = labels.unified(f);
        let structural: String = comparison::changes(f)
            .unwrap_or_default()
            .iter()
            .map(|c| format!("{c}\n"))
            .collect();
        if u.hunks.is_empty() {
            let message = u.note.unwrap_or_else(|| labels.differs(f));
            annotation(w, "error", Some(at(1)), "rdmagen golden", &message)?;
            continue;
        }
        let count = u.hunks.len();
        for (i, hunk) in u.hunks.iter().enumerate() {
            let mut message = format!("{} (change {} of {count})", labels.differs(f), i + 1);
            if i == 0 {
                if let Some(note) = &u.note {
                    message += &format!("; {note}");
                }
                if !structural.is_empty() {
                    message += &format!("\n{structural}");
                }
            }
            message += &format!("\n{}", hunk.text);
            annotation(
                w,
                "error",
                Some(at(labels.shown_line(hunk))),
                "rdmagen golden",
                message.trim_end(),
            )?;
        }
    }
    Ok(())
}

/// Where an annotation points.
struct Place<'a> {
    file: &'a str,
    line: usize,
    column: Option<usize>,
}

/// One workflow command line.
fn annotation(
    w: &mut dyn Write,
    level: &str,
    place: Option<Place<'_>>,
    title: &str,
    message: &str,
) -> io::Result<()> {
    write!(w, "::{level} ")?;
    if let Some(at) = place {
        write!(w, "file={},line={},", escape_property(at.file), at.line)?;
        if let Some(column) = at.column {
            write!(w, "col={column},")?;
        }
    }
    writeln!(
        w,
        "title={}::{}",
        escape_property(title),
        escape_data(message)
    )
}

/// GitHub workflow commands: data escapes %, CR, LF (GitHub decodes them, so a
/// message may span lines without a line starting a command); properties also `:` and
/// `,`. Other control characters (ESC, NUL) have no encoding there and are written as
/// [`printable`] escapes, as in human output.
pub fn escape_data(s: &str) -> String {
    let encoded = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    printable(&encoded).into_owned()
}

pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::source::Location;
    use crate::diagnostics::{Finding, Rule};

    fn annotated(f: Finding) -> String {
        let mut all = Findings::default();
        all.push(f.rule, f.message, f.location);
        let mut out = Vec::new();
        findings(&mut out, &all).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn github_annotations_escape_their_fields() {
        let f = Finding::new(
            Rule::IbTcSet,
            "50% bad\nsecond line",
            Some(Location {
                file: "a,b:c.yaml".into(),
                line: 3,
                column: 5,
            }),
        );
        assert_eq!(
            annotated(f),
            "::error file=a%2Cb%3Ac.yaml,line=3,col=5,title=RDG020 NCCL_IB_TC or NCCL_IB_SL is set on a platform that owns the fabric's QoS::50%25 bad%0Asecond line\n"
        );
    }

    #[test]
    fn github_annotations_carry_no_control_characters() {
        let f = Finding::new(
            Rule::IbTcSet,
            "x\r\n::add-mask::secret\u{1b}[2J\u{0}",
            Some(Location {
                file: "a\n::error ::b.yaml".into(),
                line: 1,
                column: 1,
            }),
        );
        assert_eq!(
            annotated(f),
            "::error file=a%0A%3A%3Aerror %3A%3Ab.yaml,line=1,col=1,title=RDG020 NCCL_IB_TC or NCCL_IB_SL is set on a platform that owns the fabric's QoS::x%0D%0A::add-mask::secret\\u{1b}[2J\\u{0}\n"
        );
    }
}
