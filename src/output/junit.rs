//! JUnit XML, the test report CI dashboards (GitLab, Jenkins, Azure) show: one
//! `<testsuite>` per run and one `<testcase>` per file checked, so a clean file shows
//! as a passing test. Each error is a `<failure>` (type = rule ID); warnings and infos
//! do not fail a run by default, so they are listed in the test case's
//! `<system-out>` rather than failing it (under --deny-warnings the exit code still
//! says they do). Findings with no file are a test case named `rdmagen`.
//!
//! Every attribute and text is escaped; the characters XML 1.0 forbids (most C0
//! controls) cannot be written even escaped, so they, and every other control
//! character but tab and line breaks, are written as `\u{1b}`-style escapes.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::json::SCHEMA_VERSION;
use crate::diagnostics::escape::{is_bidi_control, may_precede_a_command};
use crate::diagnostics::source::Sources;
use crate::diagnostics::{Finding, Findings, Severity};

/// The test case of findings that point at no file.
const NO_FILE: &str = "rdmagen";

pub fn findings(w: &mut dyn Write, findings: &Findings, sources: &Sources) -> io::Result<()> {
    // Every file checked, with or without findings, in path order.
    let mut cases: BTreeMap<&str, Vec<&Finding>> =
        sources.names().map(|name| (name, Vec::new())).collect();
    for f in findings.iter() {
        let file = f.location.as_ref().map_or(NO_FILE, |at| &*at.file);
        cases.entry(file).or_default().push(f);
    }
    let failures = cases
        .values()
        .filter(|fs| fs.iter().any(|f| fails(f)))
        .count();
    let mut xml = String::new();
    open_suites(&mut xml, cases.len(), failures, 0);
    for (file, found) in &cases {
        testcase(&mut xml, file, found);
    }
    close_suites(&mut xml);
    w.write_all(xml.as_bytes())
}

/// The report of a run an error ended: one test case in error.
pub fn error(w: &mut dyn Write, message: &str) -> io::Result<()> {
    let mut xml = String::new();
    open_suites(&mut xml, 1, 0, 1);
    xml.push_str(&format!(
        "    <testcase name=\"{NO_FILE}\" classname=\"rdmagen\">\n      <error type=\"error\" message=\"{}\">{}</error>\n    </testcase>\n",
        attribute(message),
        text(message)
    ));
    close_suites(&mut xml);
    w.write_all(xml.as_bytes())
}

fn fails(f: &Finding) -> bool {
    f.severity() == Severity::Error
}

fn open_suites(xml: &mut String, tests: usize, failures: usize, errors: usize) {
    let counts = format!("tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\"");
    xml.push_str(&format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"rdmagen\" {counts}>\n  \
         <testsuite name=\"rdmagen\" {counts} skipped=\"0\">\n    \
         <properties>\n      \
         <property name=\"rdmagen.schemaVersion\" value=\"{SCHEMA_VERSION}\"/>\n      \
         <property name=\"rdmagen.version\" value=\"{}\"/>\n    \
         </properties>\n",
        env!("CARGO_PKG_VERSION")
    ));
}

fn close_suites(xml: &mut String) {
    xml.push_str("  </testsuite>\n</testsuites>\n");
}

fn testcase(xml: &mut String, file: &str, found: &[&Finding]) {
    let name = attribute(file);
    xml.push_str(&format!(
        "    <testcase name=\"{name}\" classname=\"rdmagen\""
    ));
    if file != NO_FILE {
        xml.push_str(&format!(" file=\"{name}\""));
    }
    if found.is_empty() {
        xml.push_str("/>\n");
        return;
    }
    xml.push_str(">\n");
    for f in found.iter().filter(|f| fails(f)) {
        let info = f.rule.info();
        xml.push_str(&format!(
            "      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
            info.id,
            attribute(&f.message),
            text(&line(f))
        ));
    }
    let others: String = found
        .iter()
        .filter(|f| !fails(f))
        .map(|f| line(f) + "\n")
        .collect();
    if !others.is_empty() {
        xml.push_str(&format!(
            "      <system-out>{}</system-out>\n",
            text(&others)
        ));
    }
    xml.push_str("    </testcase>\n");
}

/// `file:line:col: severity[ID]: message`, as brief output writes a finding.
fn line(f: &Finding) -> String {
    let info = f.rule.info();
    let at = f
        .location
        .as_ref()
        .map_or(String::new(), |l| format!("{l}: "));
    format!("{at}{}[{}]: {}", f.severity(), info.id, f.message)
}

/// Element text: markup escaped; CR as a reference, so XML's line-end handling keeps
/// it; other control characters as printable escapes.
fn text(s: &str) -> String {
    escape(s, false)
}

/// An attribute value: also quotes, and tab and line breaks as references, which an
/// XML parser would otherwise turn into spaces.
fn attribute(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, in_attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            '"' if in_attribute => out.push_str("&quot;"),
            '\'' if in_attribute => out.push_str("&apos;"),
            '\n' if in_attribute => out.push_str("&#10;"),
            '\t' if in_attribute => out.push_str("&#9;"),
            '\n' | '\t' => out.push(c),
            // Forbidden in XML 1.0 (C0 controls, U+FFFE, U+FFFF) or unsafe in a log
            // that shows the report (DEL, C1 controls).
            c if c.is_control() || is_bidi_control(c) || c == '\u{fffe}' || c == '\u{ffff}' => {
                out.extend(c.escape_default())
            }
            c => out.push(c),
        }
    }
    inert(out)
}

/// `xml` with every GitHub workflow command made inert by a character reference,
/// which means the same character to an XML parser: `##[` anywhere, and `::` where a
/// line starts with it (after white space). A report is often printed into the CI
/// log that a pull request's text could otherwise write commands into.
fn inert(xml: String) -> String {
    let xml = if xml.contains("##[") {
        xml.replace("##[", "#&#35;[")
    } else {
        xml
    };
    if !xml.contains("::") {
        return xml;
    }
    let mut out = String::with_capacity(xml.len() + 8);
    for (i, line) in xml.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let lead = line.len() - line.trim_start_matches(may_precede_a_command).len();
        match line[lead..].strip_prefix("::") {
            Some(rest) => {
                out.push_str(&line[..lead]);
                out.push_str("&#58;:");
                out.push_str(rest);
            }
            None => out.push_str(line),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Rule;
    use crate::diagnostics::source::Location;

    /// A clean file passes, a file with an error fails, and a finding with no file
    /// is a case of its own: every case a dashboard needs, in path order.
    #[test]
    fn every_file_checked_is_a_case_and_findings_without_a_file_have_one() {
        let mut sources = Sources::default();
        sources.add("b-clean.yaml".into(), "a: 1\n".into());
        sources.add("a-bad.yaml".into(), "a: 1\n".into());
        let mut all = Findings::default();
        let at = Location {
            file: "a-bad.yaml".into(),
            line: 1,
            column: 1,
        };
        all.push(Rule::IbTcSet, "set", Some(at));
        all.push(Rule::IbTcSet, "nowhere", None);
        let mut out = Vec::new();
        findings(&mut out, &all, &sources).unwrap();
        let xml = String::from_utf8(out).unwrap();
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let cases: Vec<(&str, usize)> = doc
            .descendants()
            .filter(|n| n.has_tag_name("testcase"))
            .map(|n| {
                let failed = n.children().filter(|c| c.has_tag_name("failure")).count();
                (n.attribute("name").unwrap(), failed)
            })
            .collect();
        assert_eq!(
            cases,
            [("a-bad.yaml", 1), ("b-clean.yaml", 0), (NO_FILE, 1)]
        );
        let suite = doc
            .descendants()
            .find(|n| n.has_tag_name("testsuite"))
            .unwrap();
        assert_eq!(suite.attribute("tests"), Some("3"));
        assert_eq!(suite.attribute("failures"), Some("2"));
    }

    #[test]
    fn markup_and_controls_are_escaped() {
        assert_eq!(
            escape("<a href='x'>&\"\u{1b}\u{0}\r\n\t\u{ffff}", true),
            "&lt;a href=&apos;x&apos;&gt;&amp;&quot;\\u{1b}\\u{0}&#13;&#10;&#9;\\u{ffff}"
        );
        assert_eq!(escape("a\n\tb\u{7}", false), "a\n\tb\\u{7}");
    }
}
