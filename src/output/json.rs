//! One pretty-printed JSON document per run.

use std::io::{self, Write};

use serde_json::{Value, json};

use super::comparison::{self, Labels};
use crate::diagnostics::{Finding, Findings, Severity};
use crate::golden::{Comparison, Status};

/// Write `doc` pretty-printed, with a final line break.
pub fn document(w: &mut dyn Write, doc: &Value) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, doc)?;
    writeln!(w)
}

pub fn findings(w: &mut dyn Write, findings: &Findings) -> io::Result<()> {
    let items: Vec<_> = findings.iter().map(finding).collect();
    document(
        w,
        &json!({
            "findings": items,
            "errors": findings.count(Severity::Error),
            "warnings": findings.count(Severity::Warning),
            "infos": findings.count(Severity::Info),
        }),
    )
}

fn finding(f: &Finding) -> Value {
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
                "changes": comparison::changes(f).unwrap_or_default(),
                "diff": u.text,
            })
        })
        .collect();
    document(
        w,
        &json!({
            "checked": cmp.files.len() - cmp.count(Status::Stale),
            "differ": cmp.count(Status::Differs),
            "missing": cmp.count(Status::Missing),
            "stale": cmp.count(Status::Stale),
            "files": files,
        }),
    )
}
