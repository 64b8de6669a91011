//! The pipeline: load → resolve → render → verify, streaming: each job is handed to a
//! [`Sink`] as soon as it is verified. Emitting (or comparing) is the sink's business;
//! nothing here writes a file.

mod placement;
mod pools;
mod render_one;
mod sink;
mod worker;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use crate::diagnostics::source::Sources;
use crate::diagnostics::{Findings, Rule};
use crate::error::Error;
use crate::model::load::{display_name, read_documents, yaml_files};
use crate::plan::Decision;
use crate::render::Renderer;
use crate::verify::Verifier;
use crate::yaml::tree::Seg;

pub use sink::{Collect, Discard, Order, Sink};

use placement::Placement;
use pools::{Pools, pool_findings};
use worker::{Partial, Run, dedupe, duplicate_names, in_parallel, job_done, read};

/// What to render.
#[derive(Debug, Default, Clone)]
pub struct Request {
    /// Files or directories holding Jobs (and possibly Pools).
    pub inputs: Vec<PathBuf>,
    /// Files or directories holding Pools only.
    pub pools: Vec<PathBuf>,
    /// A directory whose templates replace the embedded ones by name.
    pub templates: Option<PathBuf>,
}

/// One generated file, relative to the output directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    pub path: String,
    pub text: String,
}

#[derive(Debug)]
pub struct RenderedJob {
    pub name: String,
    pub pool: String,
    pub files: Vec<OutputFile>,
    pub decisions: Vec<Decision>,
}

/// What a streaming run found: findings (sorted), the sources they point into, how
/// many jobs rendered, and every decision when asked for.
#[derive(Debug, Default)]
pub struct Report {
    pub findings: Findings,
    pub sources: Sources,
    pub rendered: usize,
    /// (job, pool, decisions) in input order, when `explain` was asked; a job is named
    /// by its output directory (`name.namespace` when jobs in two namespaces share
    /// its name).
    pub decisions: Vec<(String, String, Vec<Decision>)>,
}

/// The result of a collecting run: rendered jobs (empty when any error was found),
/// every finding, and the sources they point into.
#[derive(Debug)]
pub struct Outcome {
    pub jobs: Vec<RenderedJob>,
    pub findings: Findings,
    pub sources: Sources,
}

impl Outcome {
    /// All manifests as one multi-document YAML stream, jobs in input order.
    /// Dockerfiles are only written with `-o`.
    pub fn stream(&self) -> String {
        let docs: Vec<&str> = self
            .jobs
            .iter()
            .flat_map(|j| j.files.iter())
            .filter(|f| f.path.ends_with(".yaml"))
            .map(|f| f.text.as_str())
            .collect();
        docs.join("---\n")
    }
}

/// Run load → resolve → render → verify and keep every rendered job.
pub fn run(request: &Request) -> Result<Outcome, Error> {
    let collect = Collect::default();
    let report = run_with(request, &collect, false)?;
    let mut jobs = collect.into_jobs();
    if report.findings.errors() > 0 {
        jobs.clear();
    }
    Ok(Outcome {
        jobs,
        findings: report.findings,
        sources: report.sources,
    })
}

/// Run load → resolve → render → verify, handing each job to `sink` as soon as it is
/// verified; nothing is kept per job, so memory stays flat however many jobs there
/// are. `--pools` files are read first, then the inputs' job names and namespaces
/// (parsed only: they decide each job's directory); input files are then read once
/// more each, in parallel across cores, pools registered as they are found; a job
/// whose pool is not known yet is read again in a last pass.
pub fn run_with(request: &Request, sink: &dyn Sink, explain: bool) -> Result<Report, Error> {
    let renderer = Renderer::new(request.templates.as_deref())?;
    let verifier = Verifier::new();
    let (inputs, pool_files) = {
        let mut seen = BTreeSet::new();
        let inputs = dedupe(yaml_files(&request.inputs)?, &mut seen);
        (inputs, dedupe(yaml_files(&request.pools)?, &mut seen))
    };

    let mut total = Partial::default();
    let mut pools = Pools::new(!request.pools.is_empty());
    for (i, path) in pool_files.iter().enumerate() {
        let text = read(path)?;
        let name = display_name(path);
        let before = total.findings.len();
        let docs = read_documents(&name, &text, &mut total.findings);
        pools.failed_to_load(&name, docs.failed_pools);
        for (_, job) in docs.jobs {
            total.findings.at(
                Rule::UnknownDocument,
                "a Job in a --pools file is not rendered; pass its file as an input",
                job.doc.locate(&[Seg::Key("kind")]),
            );
        }
        let mut cited = total.findings.len() > before;
        for (d, pool) in docs.pools {
            cited |= pools.register((inputs.len() + i, d), pool);
        }
        // Kept for the snippets of the findings that point into it.
        if cited {
            total.sources.add(name, Arc::from(text));
        }
    }
    let placement = match sink.places_files() {
        true => Placement::scan(&inputs),
        false => Placement::default(),
    };
    let mut run = Run {
        renderer: &renderer,
        verifier: &verifier,
        pools: RwLock::new(pools),
        sink,
        placement: &placement,
        explain,
        last_pass: false,
    };
    let files: Vec<(usize, &PathBuf)> = inputs.iter().enumerate().collect();
    total.merge(in_parallel(&run, &files));

    run.last_pass = true;
    let mut deferred = std::mem::take(&mut total.deferred);
    deferred.sort_unstable();
    for group in deferred.chunk_by(|a, b| a.0 == b.0) {
        let file = group[0].0;
        let docs: Vec<usize> = group.iter().map(|(_, d)| *d).collect();
        let path = &inputs[file];
        let text = read(path)?;
        let name = display_name(path);
        // Parsed once already (its findings are reported): only the waiting jobs.
        let mut again = Findings::default();
        let parsed = read_documents(&name, &text, &mut again);
        let count = |t: &Partial| t.findings.len() + t.job_findings.len() + t.consequences.len();
        let before = count(&total);
        for (d, job) in parsed.jobs.into_iter().filter(|(d, _)| docs.contains(d)) {
            job_done(&run, (file, d), job, &mut total);
        }
        if count(&total) > before {
            total.sources.add(name, Arc::from(text));
        }
    }
    if let Some(e) = total.error.take() {
        return Err(e);
    }
    let pools = run.pools.into_inner().unwrap_or_else(|p| p.into_inner());
    pool_findings(pools, &mut total);
    if total.rendered == 0 && total.findings.is_empty() && total.consequences.is_empty() {
        let paths: Vec<String> = request
            .inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        return Err(Error::Usage(format!(
            "no Job documents in {} (kind: Job, apiVersion: rdmagen/v1alpha1)",
            paths.join(", ")
        )));
    }
    duplicate_names(&mut total);
    total.findings.sort();
    let mut consequences = std::mem::take(&mut total.consequences);
    consequences.sort();
    total.findings.extend(consequences);
    total.decisions.sort_by_key(|(order, ..)| *order);
    Ok(Report {
        findings: total.findings,
        sources: total.sources,
        rendered: total.rendered,
        decisions: total
            .decisions
            .into_iter()
            .map(|(_, name, pool, d)| (name, pool, d))
            .collect(),
    })
}
