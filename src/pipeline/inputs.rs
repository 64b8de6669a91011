//! The first pass: every input file read and parsed, on every core.

use std::path::Path;
use std::sync::Arc;

use crate::diagnostics::policy::IGNORE_ANNOTATION;
use crate::diagnostics::{Findings, Location, Rule, Suppressions};
use crate::error::Error;
use crate::files::InputFile;
use crate::fingerprint::Fingerprint;
use crate::model::common::Metadata;
use crate::model::load::{FileDocuments, display_name, pieces, read_documents_in};
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
    /// Only for a document handed over in memory, which has no file to be read again
    /// from (`pipeline::texts`): a file's text is dropped as soon as it is parsed, or
    /// every file's would be held at once when the first pass ends.
    pub(super) text: Option<Arc<str>>,
    /// Of the whole text, to tell that the file is still what was read here.
    pub(super) fingerprint: Fingerprint,
    /// The jobs that loaded, without their parsed trees (the second pass parses them
    /// again): keeping every job's tree between the passes cost 17 KB a job.
    pub(super) jobs: Vec<JobIdentity>,
    /// What most files hold none of; `None` then. Every file's result is held until
    /// the last file is read, and at 50 000 files of one job their empty lists and
    /// maps (176 bytes a file) were most of the first pass's peak.
    pub(super) extras: Option<Box<FileExtras>>,
}

/// What a file holds besides its jobs.
pub(super) struct FileExtras {
    /// What parsing and the schema checks found.
    pub(super) findings: Findings,
    pub(super) pools: Vec<(usize, Loaded<PoolDocument>)>,
    pub(super) failed_pools: Vec<Option<String>>,
    /// Its `# rdmagen: ignore=` comments and its documents' `rdmagen.io/ignore`
    /// annotations.
    pub(super) suppressions: Suppressions,
}

impl FileExtras {
    fn is_empty(&self) -> bool {
        self.findings.is_blank()
            && self.pools.is_empty()
            && self.failed_pools.is_empty()
            && self.suppressions.is_empty()
    }
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
    /// Of its span's bytes (of the whole text without a span), to tell that what the
    /// second pass reads there is what was read here.
    pub(super) read: Fingerprint,
}

/// Read and parse `inputs`, then the in-memory `documents`, then `pool_files` (whose
/// Jobs are refused), the files in parallel; they come back in that order. A file
/// that cannot be read fails the run: the first such file in that order, whichever
/// thread met it first.
#[expect(
    clippy::vec_box,
    reason = "boxed on purpose: whole ReadFiles in the growing lists held 17 MB at 50 000 files"
)]
pub(super) fn read_all(
    inputs: &[InputFile],
    documents: &[MemoryInput],
    pool_files: &[InputFile],
) -> Result<Vec<Box<ReadFile>>, Error> {
    let files: Vec<(&InputFile, bool)> = inputs
        .iter()
        .map(|p| (p, false))
        .chain(pool_files.iter().map(|p| (p, true)))
        .collect();
    // Each file's result is boxed where it is made and stays boxed: the workers' lists
    // grow by doubling and are gathered into one, and at 50 000 files the lists of
    // whole `ReadFile`s (248 bytes each) held 17 MB at the peak; of boxes, 0.4 MB each.
    let mut read: Vec<Option<Result<Box<ReadFile>, Error>>> = Vec::with_capacity(files.len());
    read.resize_with(files.len(), || None);
    let folded = parallel::fold(&files, |acc: &mut Vec<_>, i, (path, pools_only)| {
        acc.push((i, read_one(path, *pools_only).map(Box::new)));
        true
    });
    for (i, result) in folded.into_iter().flatten() {
        read[i] = Some(result);
    }
    let mut read: Vec<Result<Box<ReadFile>, Error>> = read
        .into_iter()
        .map(|r| r.expect("every file is read"))
        .collect();
    // `--pools` files were read before the inputs once: their errors still come first.
    let pools: Vec<Box<ReadFile>> = read
        .split_off(inputs.len())
        .into_iter()
        .collect::<Result<_, _>>()?;
    let mut out: Vec<Box<ReadFile>> = read.into_iter().collect::<Result<_, _>>()?;
    out.extend(documents.iter().map(|d| {
        Box::new(parse_one(
            Arc::from(d.name.as_str()),
            d.text.clone(),
            false,
            true,
        ))
    }));
    out.extend(pools);
    Ok(out)
}

fn read_one(file: &InputFile, pools_only: bool) -> Result<ReadFile, Error> {
    let name = display_name(&file.path);
    let text = file
        .read_text()
        .map_err(|e| Error::io(Path::new(&*name), e))?;
    Ok(parse_one(name, text, pools_only, false))
}

/// Parse one file's text, read from disk or handed over in memory. Each Job is
/// reduced to what the second pass needs as soon as it is read, so a file of many
/// Jobs never holds all their trees. A large file is read in pieces on every core.
/// The text is kept only when asked (`keep_text`).
fn parse_one(name: Arc<str>, text: String, pools_only: bool, keep_text: bool) -> ReadFile {
    // Held as the run holds it from the start: copied at the end, a large file was
    // there twice while its identities were too.
    let text: Arc<str> = Arc::from(text);
    let mut suppressions = Suppressions::default();
    suppressions.comments(&name, &text);
    let read = (text.len() >= 2 * PIECE)
        .then(|| pieces(&text, PIECE))
        .flatten()
        .and_then(|pieces| read_pieces(&name, &text, &pieces, pools_only))
        .unwrap_or_else(|| {
            let mut read = read_piece(&name, &text, None, pools_only);
            if read.docs.unreadable {
                read.jobs.clear();
                read.refused.clear();
            }
            read
        });
    let Read {
        mut findings,
        docs,
        mut jobs,
        refused,
        annotations,
    } = read;
    // Held to the end of the first pass, and most files hold one job: a list grown by
    // one push keeps room for four, 29 of 96 MB of the heap at 50 000 jobs.
    jobs.shrink_to_fit();
    suppressions.extend(annotations);
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
    let extras = FileExtras {
        findings,
        pools: docs.pools,
        failed_pools: docs.failed_pools,
        suppressions,
    };
    ReadFile {
        name,
        fingerprint: Fingerprint::of(text.as_bytes()),
        text: keep_text.then_some(text),
        jobs,
        extras: (!extras.is_empty()).then(|| Box::new(extras)),
    }
}

/// The size of the pieces a large file is read in. The first pass of one file of
/// 20 000 Jobs (18 MB) kept one core busy while the other waited (1.6 cores over the
/// run, bench/RESULTS.md).
const PIECE: usize = 64 * 1024;

/// What reading a file, or a piece of it, found.
struct Read {
    findings: Findings,
    docs: FileDocuments,
    jobs: Vec<JobIdentity>,
    /// Where the Jobs of a `--pools` file are written.
    refused: Vec<Location>,
    /// The Jobs' `rdmagen.io/ignore` annotations.
    annotations: Suppressions,
}

/// Read the piece `span` of `text`, or the whole text.
fn read_piece(name: &Arc<str>, text: &str, span: Option<&DocumentSpan>, pools_only: bool) -> Read {
    let mut findings = Findings::default();
    let mut annotations = Suppressions::default();
    let mut jobs = Vec::new();
    let mut refused = Vec::new();
    let docs = read_documents_in(name, text, span, &mut findings, |index, job| {
        if pools_only {
            refused.push(job.doc.locate(&[Seg::Key("kind")]));
            return;
        }
        annotate(&mut annotations, &job.value.metadata, &job.doc);
        let meta = job.value.metadata;
        let bytes = job
            .doc
            .span
            .as_ref()
            .map_or(text, |s| &text[s.bytes.clone()]);
        jobs.push(JobIdentity {
            read: Fingerprint::of(bytes.as_bytes()),
            index,
            pool: job.value.spec.pool,
            key: (meta.name, meta.namespace),
            at: job.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]),
            span: job.doc.span,
        });
    });
    Read {
        findings,
        docs,
        jobs,
        refused,
        annotations,
    }
}

/// `pieces` of `text` read on every core and put together in order, as the whole text
/// reads; None when one of them fails or together they leave a budget of the file
/// (the whole text is then read, for the whole file's finding).
fn read_pieces(
    name: &Arc<str>,
    text: &str,
    pieces: &[DocumentSpan],
    pools_only: bool,
) -> Option<Read> {
    let mut read: Vec<(usize, Read)> = parallel::fold(pieces, |acc: &mut Vec<_>, i, span| {
        let piece = read_piece(name, text, Some(span), pools_only);
        let failed = piece.docs.unreadable;
        acc.push((i, piece));
        !failed
    })
    .into_iter()
    .flatten()
    .collect();
    if read.len() < pieces.len() {
        return None;
    }
    read.sort_unstable_by_key(|(i, _)| *i);
    let mut whole = Read {
        findings: Findings::default(),
        docs: FileDocuments::default(),
        jobs: Vec::new(),
        refused: Vec::new(),
        annotations: Suppressions::default(),
    };
    for (_, piece) in read {
        if piece.docs.unreadable {
            return None;
        }
        let before = whole.docs.documents;
        whole.findings.extend(piece.findings);
        whole.jobs.extend(piece.jobs.into_iter().map(|mut job| {
            job.index += before;
            job
        }));
        whole.refused.extend(piece.refused);
        whole.annotations.extend(piece.annotations);
        let docs = &mut whole.docs;
        docs.pools
            .extend(piece.docs.pools.into_iter().map(|(i, p)| (i + before, p)));
        docs.failed_pools.extend(piece.docs.failed_pools);
        docs.documents += piece.docs.documents;
        docs.counted = docs.counted + piece.docs.counted;
    }
    whole.docs.counted.within_budgets().then_some(whole)
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
