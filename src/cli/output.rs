//! How findings are printed: human (rustc-style, optionally coloured), JSON, or
//! GitHub workflow-command annotations.

use std::io::Write;

use clap::{Args, ValueEnum};
use serde_json::json;

use crate::diagnostics::escape::printable;
use crate::diagnostics::snippet;
use crate::diagnostics::source::Sources;
use crate::diagnostics::{Finding, Findings, Severity};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rustc-style text with the offending line.
    Human,
    /// One line per finding (or per changed file).
    Brief,
    /// One JSON document with every finding.
    Json,
    /// GitHub Actions annotations (`::error file=…,line=…::…`).
    Github,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal and NO_COLOR is not set.
    Auto,
    Always,
    Never,
}

/// Options shared by every command that reports findings.
#[derive(Debug, Args)]
pub struct OutputArgs {
    /// How findings are printed.
    #[arg(long, value_enum, default_value_t = Format::Human, help_heading = "Output")]
    pub format: Format,
    /// When to colour human output (NO_COLOR is honoured with auto).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, help_heading = "Output")]
    pub color: ColorChoice,
    /// Exit 1 when there are warnings, not only errors.
    #[arg(long, help_heading = "Output")]
    pub deny_warnings: bool,
}

impl OutputArgs {
    /// Whether to colour output going to a stream that is (or is not) a terminal.
    pub fn colored(&self, is_terminal: bool) -> bool {
        match self.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                is_terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
            }
        }
    }

    /// The exit code the findings call for: 1 on errors (or warnings with
    /// --deny-warnings), else 0.
    pub fn failed(&self, findings: &Findings) -> bool {
        findings.errors() > 0 || (self.deny_warnings && findings.count(Severity::Warning) > 0)
    }
}

/// Write all findings in the chosen format.
pub fn write_findings(
    w: &mut dyn Write,
    findings: &Findings,
    sources: &Sources,
    format: Format,
    color: bool,
) {
    match format {
        Format::Human => {
            for f in findings.iter() {
                let text = snippet::human(f, sources);
                let _ = writeln!(w, "{}", if color { paint(&text, f) } else { text });
            }
        }
        Format::Brief => {
            for f in findings.iter() {
                let info = f.rule.info();
                let at = f
                    .location
                    .as_ref()
                    .map_or(String::new(), |l| format!("{l}: "));
                let _ = writeln!(
                    w,
                    "{}{}[{}]: {}",
                    printable(&at),
                    info.severity,
                    info.id,
                    printable(&f.message)
                );
            }
        }
        Format::Json => {
            let items: Vec<_> = findings.iter().map(finding_json).collect();
            let doc = json!({
                "findings": items,
                "errors": findings.count(Severity::Error),
                "warnings": findings.count(Severity::Warning),
                "infos": findings.count(Severity::Info),
            });
            let _ = writeln!(
                w,
                "{}",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            );
        }
        Format::Github => {
            for f in findings.iter() {
                let _ = writeln!(w, "{}", github(f));
            }
        }
    }
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

fn finding_json(f: &Finding) -> serde_json::Value {
    let info = f.rule.info();
    json!({
        "rule": info.id,
        "severity": info.severity,
        "message": f.message,
        "file": f.location.as_ref().map(|l| l.file.to_string()),
        "line": f.location.as_ref().map(|l| l.line),
        "column": f.location.as_ref().map(|l| l.column),
        "summary": info.summary,
        "source": info.source,
    })
}

fn github(f: &Finding) -> String {
    let info = f.rule.info();
    let level = match info.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    };
    let mut props = Vec::new();
    if let Some(at) = &f.location {
        props.push(format!("file={}", escape_property(&at.file)));
        props.push(format!("line={}", at.line));
        props.push(format!("col={}", at.column));
    }
    props.push(format!(
        "title={}",
        escape_property(&format!("{} {}", info.id, info.summary))
    ));
    format!("::{level} {}::{}", props.join(","), escape_data(&f.message))
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

/// Colour the severity label of a human-format finding.
fn paint(text: &str, f: &Finding) -> String {
    let info = f.rule.info();
    let code = match info.severity {
        Severity::Error => "1;31",
        Severity::Warning => "1;33",
        Severity::Info => "1;36",
    };
    let label = format!("{}[{}]", info.severity, info.id);
    text.replacen(&label, &format!("\x1b[{code}m{label}\x1b[0m"), 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Rule;
    use crate::diagnostics::source::Location;

    #[test]
    fn github_annotations_escape_their_fields() {
        let f = Finding {
            rule: Rule::IbTcSet,
            message: "50% bad\nsecond line".to_owned(),
            location: Some(Location {
                file: "a,b:c.yaml".into(),
                line: 3,
                column: 5,
            }),
            pointer: None,
        };
        assert_eq!(
            github(&f),
            "::error file=a%2Cb%3Ac.yaml,line=3,col=5,title=RDG020 NCCL_IB_TC or NCCL_IB_SL is set on a platform that owns the fabric's QoS::50%25 bad%0Asecond line"
        );
    }

    #[test]
    fn github_annotations_carry_no_control_characters() {
        let f = Finding {
            rule: Rule::IbTcSet,
            message: "x\r\n::add-mask::secret\u{1b}[2J\u{0}".to_owned(),
            location: Some(Location {
                file: "a\n::error ::b.yaml".into(),
                line: 1,
                column: 1,
            }),
            pointer: None,
        };
        assert_eq!(
            github(&f),
            "::error file=a%0A%3A%3Aerror %3A%3Ab.yaml,line=1,col=1,title=RDG020 NCCL_IB_TC or NCCL_IB_SL is set on a platform that owns the fabric's QoS::x%0D%0A::add-mask::secret\\u{1b}[2J\\u{0}"
        );
    }
}
