//! `lint`: check PyTorchJob manifests that rdmagen did not write (hand-written, from
//! Arena, CubeStudio, Helm) against every rule a manifest alone can show.

use std::path::PathBuf;
use std::sync::Arc;

use crate::check::{Findings, manifest};
use crate::error::Error;
use crate::source::Sources;
use crate::spec::load::{display_name, yaml_files};
use crate::spec::tree::parse_documents;
use crate::spec::tree_value::to_value;

/// What a lint run found, and over how much.
#[derive(Debug, Default)]
pub struct LintReport {
    pub findings: Findings,
    pub sources: Sources,
    pub files: usize,
    pub jobs: usize,
}

/// Lint every PyTorchJob document in `paths` (files, or directories walked for YAML).
/// Other documents (Services, PVCs, ...) are skipped.
pub fn lint(paths: &[PathBuf]) -> Result<LintReport, Error> {
    let mut report = LintReport::default();
    for path in yaml_files(paths)? {
        let text = crate::files::read_regular_text(&path).map_err(|e| Error::io(&path, e))?;
        let name = display_name(&path);
        lint_text(&mut report, name, text);
        report.files += 1;
    }
    report.findings.sort();
    Ok(report)
}

pub fn lint_text(report: &mut LintReport, name: Arc<str>, text: String) {
    let text: Arc<str> = Arc::from(text);
    report.sources.add(name.clone(), text.clone());
    let docs = match parse_documents(&name, &text) {
        Ok(docs) => docs,
        Err(e) => {
            e.report(name, &mut report.findings);
            return;
        }
    };
    for doc in docs {
        let value = to_value(&doc.root);
        if !manifest::is_pytorchjob(&value) {
            continue;
        }
        report.jobs += 1;
        for problem in manifest::check(&value) {
            let at = doc.locate_pointer(&problem.pointer);
            report.findings.at(problem.rule, problem.message, at);
        }
    }
}
