//! The first pass: every input file read and parsed, on every core.

use std::path::Path;
use std::sync::Arc;

use crate::diagnostics::policy::IGNORE_ANNOTATION;
use crate::diagnostics::{Findings, Location, Rule, Suppressions};
use crate::error::Error;
use crate::files::InputFile;
use crate::model::common::Metadata;
use crate::model::load::{display_name, read_documents_each};
use crate::model::{Loaded, PoolDocument};
use crate::pipeline::parallel;
use crate::pipeline::placement::Key;
use crate::yaml::tree::{Document, DocumentSpan, Seg};

/// An input held in memory: its text, and the name findings give it (no file of
/// that name is read or written).
#[derive(Debug, Clone)]
pub struct MemoryInput {
    pub name: String,
    pub text: String,
}

/// One file, read and parsed.
pub(super) struct ReadFile {
    pub(super) name: Arc<str>,
    /// Kept until the end of the run: the second pass parses its jobs again from it,
    /// and findings that point into it show it in their snippets.
    pub(super) text: Arc<str>,
    /// What parsing and the schema checks found.
    pub(super) findings: Findings,
    pub(super) pools: Vec<(usize, Loaded<PoolDocument>)>,
    pub(super) failed_pools: Vec<Option<String>>,
    /// The jobs that loaded, without their parsed trees (the second pass parses them
    /// again): keeping every job's tree between the passes cost 17 KB a job.
    pub(super) jobs: Vec<JobIdentity>,
    /// Its `# rdmagen: ignore=` comments and its documents' `rdmagen.io/ignore`
    /// annotations.
    pub(super) suppressions: Suppressions,
}

/// What the first pass keeps of a job that loaded: where it is and what it is called.
pub(super) struct JobIdentity {
    /// The document's index in its file.
    pub(super) index: usize,
    pub(super) key: Key,
    /// The pool it names: a Trainer pool's runtime is written when a job uses it.
    pub(super) pool: String,
    /// Where its name is written, for a finding on a name used twice.
    pub(super) at: Location,
    /// Where its document is written in the file's text, to read it again alone.
    pub(super) span: Option<DocumentSpan>,
}

/// Read and parse `inputs`, then the in-memory `documents`, then `pool_files` (whose
/// Jobs are refused), the files in parallel; they come back in that order. A file
/// that cannot be read fails the run: the first such file in that order, whichever
/// thread met it first.
pub(super) fn read_all(
    inputs: &[InputFile],
    documents: &[MemoryInput],
    pool_files: &[InputFile],
) -> Result<Vec<ReadFile>, Error> {
    let files: Vec<(&InputFile, bool)> = inputs
        .iter()
        .map(|p| (p, false))
        .chain(pool_files.iter().map(|p| (p, true)))
        .collect();
    let mut read: Vec<(usize, Result<ReadFile, Error>)> =
        parallel::fold(&files, |acc: &mut Vec<_>, i, (path, pools_only)| {
            acc.push((i, read_one(path, *pools_only)));
            true
        })
        .into_iter()
        .flatten()
        .collect();
    read.sort_unstable_by_key(|(i, _)| *i);
    let mut read: Vec<Result<ReadFile, Error>> = read.into_iter().map(|(_, r)| r).collect();
    // `--pools` files were read before the inputs once: their errors still come first.
    let pools = read.split_off(inputs.len());
    let pools: Vec<ReadFile> = pools.into_iter().collect::<Result<_, _>>()?;
    let mut read: Vec<ReadFile> = read.into_iter().collect::<Result<_, _>>()?;
    read.extend(
        documents
            .iter()
            .map(|d| parse_one(Arc::from(d.name.as_str()), d.text.clone(), false)),
    );
    read.extend(pools);
    Ok(read)
}

fn read_one(file: &InputFile, pools_only: bool) -> Result<ReadFile, Error> {
    let name = display_name(&file.path);
    let text = file
        .read_text()
        .map_err(|e| Error::io(Path::new(&*name), e))?;
    Ok(parse_one(name, text, pools_only))
}

/// Parse one file's text, read from disk or handed over in memory. Each Job is
/// reduced to what the second pass needs as soon as it is read, so a file of many
/// Jobs never holds all their trees.
fn parse_one(name: Arc<str>, text: String, pools_only: bool) -> ReadFile {
    let mut findings = Findings::default();
    let mut suppressions = Suppressions::default();
    suppressions.comments(&name, &text);
    let mut jobs = Vec::new();
    let mut refused = Vec::new();
    let docs = read_documents_each(&name, &text, &mut findings, |index, job| {
        if pools_only {
            refused.push(job.doc.locate(&[Seg::Key("kind")]));
            return;
        }
        annotate(&mut suppressions, &job.value.metadata, &job.doc);
        let meta = job.value.metadata;
        jobs.push(JobIdentity {
            index,
            pool: job.value.spec.pool,
            key: (meta.name, meta.namespace),
            at: job.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]),
            span: job.doc.span,
        });
    });
    if docs.unreadable {
        jobs.clear();
        refused.clear();
    }
    for at in refused {
        findings.at(
            Rule::UnknownDocument,
            "a Job in a --pools file is not rendered; pass its file as an input",
            at,
        );
    }
    for (_, pool) in &docs.pools {
        annotate(&mut suppressions, &pool.value.metadata, &pool.doc);
    }
    ReadFile {
        name,
        text: Arc::from(text),
        findings,
        pools: docs.pools,
        failed_pools: docs.failed_pools,
        jobs,
        suppressions,
    }
}

/// The document's `rdmagen.io/ignore` annotation, when it has one, among the file's
/// suppressions.
fn annotate(suppressions: &mut Suppressions, metadata: &Metadata, doc: &Document) {
    if let Some(value) = metadata.annotations.get(IGNORE_ANNOTATION) {
        let at = doc.locate(&[
            Seg::Key("metadata"),
            Seg::Key("annotations"),
            Seg::Key(IGNORE_ANNOTATION),
        ]);
        suppressions.annotation(value, at, doc.root.line, doc.root.end.0);
    }
}
