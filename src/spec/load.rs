//! Load: files and directories → typed Jobs and Pools, each with its located tree.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_saphyr::{DefaultMessageFormatter, MessageFormatter};
use walkdir::WalkDir;

use crate::check::{Findings, Rule};
use crate::error::Error;
use crate::source::Sources;
use crate::spec::common::API_VERSION;
use crate::spec::input_check;
use crate::spec::job::JobDocument;
use crate::spec::pool::PoolDocument;
use crate::spec::schema::VALIDATORS;
use crate::spec::tree::{Document, Seg, parse_documents};

/// A typed input together with the document it was read from.
#[derive(Debug)]
pub struct Loaded<T> {
    pub value: T,
    pub doc: Document,
}

/// Everything read from the inputs, in a stable order (sorted paths, document order).
#[derive(Debug, Default)]
pub struct Inputs {
    pub jobs: Vec<Loaded<JobDocument>>,
    pub pools: Vec<Loaded<PoolDocument>>,
    pub sources: Sources,
}

/// Expand files and directories into the YAML files they name, sorted.
/// A directory is walked recursively for `*.yaml` and `*.yml`; a file is taken as given.
pub fn yaml_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            for entry in WalkDir::new(path).sort_by_file_name() {
                let entry = entry.map_err(|e| Error::io(path, e.into()))?;
                let is_yaml = entry
                    .path()
                    .extension()
                    .is_some_and(|ext| ext == "yaml" || ext == "yml");
                if entry.file_type().is_file() && is_yaml {
                    found.push(entry.into_path());
                }
            }
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files)
}

impl Inputs {
    /// Read and parse one file, adding its Jobs and Pools. Problems with the file's
    /// content become findings; only I/O failures are errors.
    pub fn load_file(&mut self, path: &Path, findings: &mut Findings) -> Result<(), Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        self.load_text(display_name(path), text, findings);
        Ok(())
    }

    pub fn load_text(&mut self, name: Arc<str>, text: String, findings: &mut Findings) {
        let text: Arc<str> = Arc::from(text);
        self.sources.add(name.clone(), text.clone());
        let docs = match parse_documents(&name, &text) {
            Ok(docs) => docs,
            Err(e) => {
                e.report(name, findings);
                return;
            }
        };
        for doc in docs {
            let api_version = doc.root.get("apiVersion").and_then(|n| n.as_str());
            let kind = doc.root.get("kind").and_then(|n| n.as_str());
            match (api_version, kind) {
                (Some(API_VERSION), Some("Job")) => {
                    let v = &*VALIDATORS;
                    if let Some(value) = typed(&text, &doc, (&v.job, &v.job_schema), findings) {
                        self.jobs.push(Loaded { value, doc });
                    }
                }
                (Some(API_VERSION), Some("Pool")) => {
                    let v = &*VALIDATORS;
                    if let Some(value) = typed(&text, &doc, (&v.pool, &v.pool_schema), findings) {
                        self.pools.push(Loaded { value, doc });
                    }
                }
                (Some(API_VERSION), other) => findings.at(
                    Rule::UnknownDocument,
                    format!(
                        "kind is {}; rdmagen reads `Job` and `Pool`",
                        other.map_or("missing".to_owned(), |k| format!("`{k}`"))
                    ),
                    doc.locate(&[Seg::Key("kind")]),
                ),
                (other, _) => findings.at(
                    Rule::UnknownDocument,
                    format!(
                        "apiVersion is {}; expected `{API_VERSION}`",
                        other.map_or("missing".to_owned(), |v| format!("`{v}`"))
                    ),
                    doc.locate(&[Seg::Key("apiVersion")]),
                ),
            }
        }
    }
}

/// Validate one document against its schema (every violation is reported), then
/// deserialise it into its typed form.
fn typed<T: DeserializeOwned>(
    text: &str,
    doc: &Document,
    (validator, schema): (&jsonschema::Validator, &serde_json::Value),
    findings: &mut Findings,
) -> Option<T> {
    let value = document_value(text, doc, findings)?;
    let before = findings.len();
    input_check::check(doc, &value, validator, schema, findings);
    if findings.len() > before {
        return None;
    }
    match serde_saphyr::from_str_with_options::<T>(&padded_text(text, doc), options()) {
        Ok(value) => Some(value),
        Err(e) => {
            report_saphyr(doc, &e, Rule::InputShape, findings);
            None
        }
    }
}

/// How rdmagen reads YAML: YAML 1.1 booleans such as `no` and `on` stay strings.
fn options() -> serde_saphyr::Options {
    serde_saphyr::options! { strict_booleans: true }
}

/// The document's text preceded by as many line breaks as lines before it, so that
/// serde-saphyr's positions are the file's.
fn padded_text(text: &str, doc: &Document) -> String {
    let mut padded = "\n".repeat(doc.first_line.saturating_sub(1));
    padded.push_str(&text[doc.start..doc.end]);
    padded
}

/// One document of a file as JSON; a failure becomes a finding.
pub fn document_value(
    text: &str,
    doc: &Document,
    findings: &mut Findings,
) -> Option<serde_json::Value> {
    match serde_saphyr::from_str_with_options(&padded_text(text, doc), options()) {
        Ok(value) => Some(value),
        Err(e) => {
            report_saphyr(doc, &e, Rule::YamlSyntax, findings);
            None
        }
    }
}

fn report_saphyr(doc: &Document, e: &serde_saphyr::Error, rule: Rule, findings: &mut Findings) {
    let message = DefaultMessageFormatter
        .format_message(e.without_snippet())
        .into_owned();
    let location = match e.location() {
        // serde reports a missing field where the mapping ends; point at the key that
        // owns the mapping instead.
        Some(l) if message.starts_with("missing field") => {
            doc.owner_of_mapping_at(l.line() as usize, l.column() as usize)
        }
        Some(l) if l.line() > 0 => doc.location(l.line() as usize, l.column() as usize),
        _ => doc.locate(&[]),
    };
    findings.at(rule, message, location);
}

/// How a path is shown in diagnostics: as given, with `/` separators.
pub fn display_name(path: &Path) -> Arc<str> {
    Arc::from(path.to_string_lossy().replace('\\', "/"))
}
