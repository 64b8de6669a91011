//! One pretty-printed JSON document per run.

use std::borrow::Cow;
use std::io::{self, Write};

use serde_json::{Value, json};

use super::comparison::{self, Labels};
use crate::diagnostics::escape::is_bidi_control;
use crate::diagnostics::{Finding, Findings, Severity};
use crate::golden::semantic::Change;
use crate::golden::{Comparison, Status};

/// The version of the JSON documents rdmagen writes (findings, comparisons, errors),
/// raised when a field changes meaning or goes away; new fields do not raise it.
pub const SCHEMA_VERSION: u32 = 1;

/// Write `doc` pretty-printed, with a final line break, and [`inert`].
pub fn document(w: &mut dyn Write, doc: &Value) -> io::Result<()> {
    let text = serde_json::to_string_pretty(doc)?;
    writeln!(w, "{}", inert(&text))
}

/// JSON `text` with bidirectional controls written as `\u202e` and `##[` as
/// `#\u0023[`: the same document to any parser, but one that neither reorders what a
/// reader of a log sees nor holds a GitHub workflow command. Both can only stand
/// inside a string, where the escape is the same character; after a backslash that
/// escapes, only `"\/bfnrtu` may follow, never `#`. A line of pretty-printed JSON
/// starts with spaces and a bracket, a brace or a quote, so never with `::`.
fn inert(text: &str) -> Cow<'_, str> {
    if !text.contains("##[") && !text.chars().any(is_bidi_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.replace("##[", "#\\u0023[").chars() {
        if is_bidi_control(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

pub fn findings(w: &mut dyn Write, findings: &Findings) -> io::Result<()> {
    let items: Vec<_> = findings.iter().map(finding).collect();
    document(
        w,
        &json!({
            "schemaVersion": SCHEMA_VERSION,
            "findings": items,
            "errors": findings.count(Severity::Error),
            "warnings": findings.count(Severity::Warning),
            "infos": findings.count(Severity::Info),
            // What `.rdmagen.yaml` hid or graded info, counted as the summary counts it.
            "hiddenByConfig": findings
                .hidden_counts()
                .map(|(severity, how, count)| json!({"severity": severity, "how": how, "count": count}))
                .collect::<Vec<_>>(),
        }),
    )
}

/// One finding as the findings document writes it, for a command that writes its
/// own document around its findings (`nccl-log`).
pub fn finding(f: &Finding) -> Value {
    let info = f.rule.info();
    json!({
        "rule": info.id,
        "severity": f.severity(),
        "message": f.message,
        "file": f.location.as_ref().map(|l| l.file.to_string()),
        "line": f.location.as_ref().map(|l| l.line),
        "column": f.location.as_ref().map(|l| l.column),
        "summary": info.summary,
        "source": info.source,
    })
}

pub fn comparison(w: &mut dyn Write, cmp: &Comparison, labels: &Labels<'_>) -> io::Result<()> {
    let files: Vec<_> = cmp
        .changed()
        .map(|f| {
            let u = labels.unified(f);
            json!({
                "path": labels.shown(f),
                "status": f.status,
                "note": u.note,
                "changes": comparison::changes(f)
                    .unwrap_or_default()
                    .iter()
                    .map(change)
                    .collect::<Vec<_>>(),
                "diff": u.text,
            })
        })
        .collect();
    document(
        w,
        &json!({
            "schemaVersion": SCHEMA_VERSION,
            "checked": cmp.checked(),
            "differ": cmp.count(Status::Differs),
            "missing": cmp.count(Status::Missing),
            "stale": cmp.count(Status::Stale),
            "files": files,
        }),
    )
}

/// A structural change with its old and new values as JSON values, not as the JSON
/// text the human summary prints (which read `"\"3\""` in a JSON document).
fn change(c: &Change) -> Value {
    let value = |text: &Option<String>| {
        text.as_deref()
            .map(|t| serde_json::from_str::<Value>(t).unwrap_or_else(|_| Value::from(t)))
    };
    json!({
        "path": c.path,
        "kind": c.kind,
        "old": value(&c.old),
        "new": value(&c.new),
    })
}

/// The document that replaces a command's output when an error ends the run, so a
/// program reading stdout finds JSON there and not nothing.
pub fn error(w: &mut dyn Write, message: &str) -> io::Result<()> {
    document(
        w,
        &json!({
            "schemaVersion": SCHEMA_VERSION,
            "error": message,
        }),
    )
}
