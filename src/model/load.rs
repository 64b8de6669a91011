//! Load: files and directories → typed Jobs and Pools, each with its located tree.

use std::borrow::Cow;
use std::sync::Arc;

use serde::de::DeserializeOwned;

use crate::diagnostics::{Findings, Rule};
pub use crate::files::{dedupe, display_name, yaml_files};
use crate::model::common::API_VERSION;
use crate::model::input_check;
use crate::model::job::JobDocument;
use crate::model::pool::PoolDocument;
use crate::model::schema::{self, InputKind, VALIDATORS};
pub use crate::yaml::tree::pieces;
use crate::yaml::tree::{
    Counted, Document, DocumentSpan, Seg, each_document, each_document_at, parse_documents,
    parse_span,
};
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
    /// The file is not YAML (a syntax error, or past a budget): nothing in it is read.
    pub unreadable: bool,
    /// How many documents were read (the index of the next one), and what they
    /// counted against the file's budgets, when they were read as a piece of it.
    pub documents: usize,
    pub counted: Counted,
}

/// Parse one file's text into its Jobs and Pools. Problems with the content become
/// findings; a document with problems is left out.
pub fn read_documents(name: &Arc<str>, text: &str, findings: &mut Findings) -> FileDocuments {
    let mut jobs = Vec::new();
    let mut out = read_documents_each(name, text, findings, |index, job| {
        jobs.push((index, job));
    });
    if !out.unreadable {
        out.jobs = jobs;
    }
    out
}

/// [`read_documents`], handing each Job to `each_job` as soon as it is read and
/// checked rather than keeping it: a file of 20 000 Jobs then holds one parsed tree at
/// a time, not 300 MB of them. A syntax error loses the whole file, as it does for
/// [`read_documents`]: the findings about documents before it are dropped, and a caller
/// must drop the Jobs it was handed when [`FileDocuments::unreadable`] says so.
pub fn read_documents_each(
    name: &Arc<str>,
    text: &str,
    findings: &mut Findings,
    each_job: impl FnMut(usize, Loaded<JobDocument>),
) -> FileDocuments {
    read_documents_in(name, text, None, findings, each_job)
}

/// [`read_documents_each`] of the piece `span` of `text` alone ([`pieces`]), or of
/// the whole text; the documents of a piece are numbered from 0.
pub fn read_documents_in(
    name: &Arc<str>,
    text: &str,
    span: Option<&DocumentSpan>,
    findings: &mut Findings,
    mut each_job: impl FnMut(usize, Loaded<JobDocument>),
) -> FileDocuments {
    let mut out = FileDocuments::default();
    let mut found = Findings::default();
    let mut index = 0;
    let each = |doc| {
        read_document(index, doc, &mut out, &mut each_job, &mut found);
        index += 1;
    };
    let read = match span {
        Some(span) => each_document_at(name, text, span, each),
        None => each_document(name, text, each).map(|()| Counted::default()),
    };
    match read {
        Ok(counted) => {
            findings.extend(found);
            (out.documents, out.counted) = (index, counted);
        }
        Err(e) => {
            e.report(name.clone(), findings);
            out = FileDocuments {
                unreadable: true,
                failed_pools: vec![None],
                ..FileDocuments::default()
            };
        }
    }
    out
}

/// Document `index` of a file: a Job handed on, a Pool kept, anything else a finding.
fn read_document(
    index: usize,
    doc: Document,
    out: &mut FileDocuments,
    each_job: &mut impl FnMut(usize, Loaded<JobDocument>),
    findings: &mut Findings,
) {
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
                each_job(index, Loaded { value, doc });
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

/// The Job that [`read_documents`] accepted as document `index` of its file, parsed
/// again without its checks (they passed), from its own span of the file when it has
/// one: the pipeline reads a job again rather than keep its parsed tree between the
/// passes (about 17 KB a job) or its file's text, and reading one document alone lets
/// the jobs of one file spread across the cores. A span that does not read alone as
/// one document (a `%TAG` directive above it) falls back to the whole file. `read`
/// gives the text of a span, or of the whole file for `None`.
pub fn reread_job<'t, E>(
    name: &Arc<str>,
    index: usize,
    span: Option<&DocumentSpan>,
    read: impl Fn(Option<&DocumentSpan>) -> Result<Cow<'t, str>, E>,
) -> Result<Option<Loaded<JobDocument>>, E> {
    let alone = match span {
        Some(span) => parse_span(name, &read(Some(span))?, span)
            .ok()
            .and_then(|docs| <[Document; 1]>::try_from(docs).ok())
            .map(|[doc]| doc),
        None => None,
    };
    let doc = match alone {
        Some(doc) => doc,
        None => match parse_documents(name, &read(None)?)
            .ok()
            .and_then(|docs| docs.into_iter().nth(index))
        {
            Some(doc) => doc,
            None => return Ok(None),
        },
    };
    Ok(tree_de::from_node::<JobDocument>(&doc.root)
        .ok()
        .map(|value| Loaded { value, doc }))
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
