//! Load: files and directories → typed Jobs and Pools, each with its located tree.

use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::diagnostics::{Findings, Rule};
pub use crate::files::{dedupe, display_name, yaml_files};
use crate::model::common::API_VERSION;
use crate::model::input_check;
use crate::model::job::JobDocument;
use crate::model::pool::PoolDocument;
use crate::model::schema::{self, InputKind, VALIDATORS};
use crate::yaml::tree::{Document, Seg, parse_documents};
use crate::yaml::{tree_de, tree_value};

/// A typed input together with the document it was read from.
#[derive(Debug)]
pub struct Loaded<T> {
    pub value: T,
    pub doc: Document,
}

/// The Jobs and Pools of one file, each with its position in the file.
#[derive(Debug, Default)]
pub struct FileDocuments {
    pub jobs: Vec<(usize, Loaded<JobDocument>)>,
    pub pools: Vec<(usize, Loaded<PoolDocument>)>,
    /// Pools that failed to load, by name; None when the name cannot be known (a
    /// syntax error loses the whole file, which may have defined any pool). A job on
    /// one of them then says so, rather than that its pool is not defined.
    pub failed_pools: Vec<Option<String>>,
}

/// Parse one file's text into its Jobs and Pools. Problems with the content become
/// findings; a document with problems is left out.
pub fn read_documents(name: &Arc<str>, text: &str, findings: &mut Findings) -> FileDocuments {
    let mut out = FileDocuments::default();
    let docs = match parse_documents(name, text) {
        Ok(docs) => docs,
        Err(e) => {
            e.report(name.clone(), findings);
            out.failed_pools.push(None);
            return out;
        }
    };
    for (index, doc) in docs.into_iter().enumerate() {
        let api_version = doc.root.get("apiVersion").and_then(|n| n.as_str());
        let kind = doc.root.get("kind").and_then(|n| n.as_str());
        let pool_name = (kind == Some("Pool")).then(|| {
            doc.root
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(|n| n.as_str())
                .map(str::to_owned)
        });
        let pools_before = out.pools.len();
        match (api_version, kind) {
            (Some(API_VERSION), Some("Job")) => {
                if let Some(value) = typed(&doc, InputKind::Job, findings) {
                    out.jobs.push((index, Loaded { value, doc }));
                }
            }
            (Some(API_VERSION), Some("Pool")) => {
                if let Some(value) = typed(&doc, InputKind::Pool, findings) {
                    out.pools.push((index, Loaded { value, doc }));
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
        if let Some(name) = pool_name
            && out.pools.len() == pools_before
        {
            out.failed_pools.push(name);
        }
    }
    out
}

/// The Jobs at `indexes` (ascending) of `text`, documents an earlier [`read_documents`] of the
/// same text accepted, parsed again without their checks (they passed). The pipeline
/// keeps a job's text between its passes rather than its parsed tree, which is about
/// 17 KB per job (bench/RESULTS.md).
pub fn reread_jobs(
    name: &Arc<str>,
    text: &str,
    indexes: &[usize],
) -> Vec<(usize, Loaded<JobDocument>)> {
    let Ok(docs) = parse_documents(name, text) else {
        return Vec::new();
    };
    docs.into_iter()
        .enumerate()
        .filter(|(index, _)| indexes.binary_search(index).is_ok())
        .filter_map(|(index, doc)| {
            let value = tree_de::from_node::<JobDocument>(&doc.root).ok()?;
            Some((index, Loaded { value, doc }))
        })
        .collect()
}

/// Validate one document against its schema (every violation is reported), then
/// deserialise it into its typed form from the same parsed tree. A valid document is
/// judged by the fast check alone; the full schema is generated and compiled only for
/// one that fails it, to report each violation.
fn typed<T: DeserializeOwned>(
    doc: &Document,
    kind: InputKind,
    findings: &mut Findings,
) -> Option<T> {
    let value = tree_value::to_value(&doc.root);
    if !schema::is_valid(kind, &value) {
        let v = &*VALIDATORS;
        let (validator, schema) = match kind {
            InputKind::Job => (&v.job, &v.job_schema),
            InputKind::Pool => (&v.pool, &v.pool_schema),
        };
        let before = findings.len();
        input_check::check(doc, &value, validator, schema, findings);
        if findings.len() > before {
            return None;
        }
    }
    match tree_de::from_node::<T>(&doc.root) {
        Ok(value) => Some(value),
        Err(e) => {
            let at = match e.at {
                Some((line, column)) => doc.location(line, column),
                None => doc.locate(&[]),
            };
            findings.at(Rule::InputShape, e.message, at);
            None
        }
    }
}
