//! The pipeline: load → resolve → render → verify, in two passes. The first reads and
//! parses every input and keeps what each job is called and where it is written; the
//! second reads each job again, takes the jobs across the cores and hands each to a
//! [`Sink`] as soon as it is verified.
//! Emitting (or comparing) is the sink's business; nothing here writes a file.

mod inputs;
mod job;
mod judge;
mod name_location;
mod parallel;
mod partial;
mod placement;
mod pools;
mod render_one;
mod rendered;
mod run;
mod runtimes;
mod sink;
mod texts;

use std::collections::BTreeSet;
use std::path::PathBuf;

use globset::GlobSet;

use crate::diagnostics::source::Sources;
use crate::diagnostics::{Findings, Policy, Suppressions};
use crate::error::Error;
use crate::fingerprint::Fingerprint;
use crate::model::load::{dedupe, reread_job, yaml_files};
use crate::plan::Decision;
use crate::render::Renderer;
use crate::verify::Verifier;
use crate::yaml::tree::DocumentSpan;

pub use inputs::MemoryInput;
pub use rendered::{OutputFile, RenderedJob, stream};
pub use sink::{Collect, Discard, Order, Sink};

use inputs::read_all;
use job::job_done;
use judge::Judge;
use partial::Partial;
use placement::{Placement, duplicate_names};
use pools::Pools;
use run::Run;
use texts::InputText;

/// What to render.
#[derive(Debug, Default, Clone)]
pub struct Request {
    /// Files or directories holding Jobs (and possibly Pools).
    pub inputs: Vec<PathBuf>,
    /// Documents held in memory, read as inputs after the files: a Job a command
    /// builds itself (`rdmagen smoke-test`) goes through the same steps as one read
    /// from disk.
    pub documents: Vec<MemoryInput>,
    /// Files or directories holding Pools only.
    pub pools: Vec<PathBuf>,
    /// A directory whose templates replace the embedded ones by name.
    pub templates: Option<PathBuf>,
    /// Walked paths to leave out (`--exclude`).
    pub exclude: GlobSet,
    /// Finding no Job is a run that did nothing, not an error (`--allow-empty`).
    pub allow_empty: bool,
    /// The user's rule levels (config file and command line).
    pub policy: Policy,
}

/// A job the first pass accepted, for the second to read again: its file (by order),
/// and where in it the job is written and what was read there.
struct JobToRead {
    file: usize,
    index: usize,
    span: Option<DocumentSpan>,
    read: Fingerprint,
}

/// What a streaming run found: findings (sorted), the sources they point into, how
/// many jobs rendered, and every decision when asked for.
#[derive(Debug, Default)]
pub struct Outcome {
    pub findings: Findings,
    pub sources: Sources,
    pub rendered: usize,
    /// How many jobs were judged: rendered, or stopped by their own findings.
    pub checked: usize,
    /// How many Kubeflow Trainer runtimes rendered (one per Trainer pool used).
    pub runtimes: usize,
    /// (job, pool, decisions) in input order, when `explain` was asked; a job is named
    /// by its output directory (`name.namespace` when jobs in two namespaces share
    /// its name).
    pub decisions: Vec<(String, String, Vec<Decision>)>,
}

/// Run load → resolve → render → verify, handing each job to `sink` as soon as it is
/// verified, in two passes. The first reads and parses every file (inputs and
/// `--pools`) in parallel across cores, registers every pool and collects every job's
/// name and namespace (they decide each job's directory). The second resolves,
/// renders and verifies the jobs in parallel, a job at a time, reading and parsing
/// each job's document again from its span of its file: holding every parsed job
/// between the passes cost 17 KB a job (225 MB at 10 000), parsing again 7% more CPU,
/// and holding the files' texts 34 MB at 50 000 jobs (bench/RESULTS.md). What is read
/// again must be what the first pass read (`texts`).
/// Rendered files are not kept either: each goes to the sink at once.
pub fn run_with(request: &Request, sink: &dyn Sink, explain: bool) -> Result<Outcome, Error> {
    let renderer = Renderer::new(request.templates.as_deref())?;
    let verifier = Verifier::new();
    let (inputs, pool_files) = {
        let mut seen = BTreeSet::new();
        let exclude = &request.exclude;
        let inputs = dedupe(yaml_files(&request.inputs, exclude)?, &mut seen);
        (
            inputs,
            dedupe(yaml_files(&request.pools, exclude)?, &mut seen),
        )
    };

    // Pass 1: every file read and parsed; pools registered, jobs' names collected.
    let mut total = Partial::default();
    let mut pools = Pools::new(!request.pools.is_empty());
    let mut texts = Vec::new();
    let mut definitions = Vec::new();
    let mut suppressions = Suppressions::default();
    // Pools whose Trainer runtime is written: those a job uses, and those named as
    // inputs (a platform team renders its pools alone).
    let mut wanted = BTreeSet::new();
    let named = inputs.len() + request.documents.len();
    let read = read_all(&inputs, &request.documents, &pool_files)?;
    // The file each read came from, in read_all's order; None for a document in memory.
    let on_disk = |file: usize| match file.checked_sub(named) {
        None => inputs.get(file),
        Some(pool_file) => pool_files.get(pool_file),
    };
    // Sized once: they live through the second pass, and doubling left up to half of
    // each unused.
    let count = read.iter().map(|r| r.jobs.len()).sum();
    let mut names = Vec::with_capacity(count);
    let mut jobs = Vec::with_capacity(count);
    for (file, read) in read.into_iter().enumerate() {
        let read = *read;
        wanted.extend(read.jobs.iter().map(|j| j.pool.clone()));
        if let Some(extras) = read.extras {
            let extras = *extras;
            if file < named {
                wanted.extend(
                    extras
                        .pools
                        .iter()
                        .map(|(_, p)| p.value.metadata.name.clone()),
                );
            }
            total.findings.extend(extras.findings);
            suppressions.extend(extras.suppressions);
            pools.failed_to_load(&read.name, extras.failed_pools);
            definitions.extend(extras.pools.into_iter().map(|(d, p)| ((file, d), p)));
        }
        for job in read.jobs {
            names.push((job.key, (file, job.index), job.at));
            jobs.push(JobToRead {
                file,
                index: job.index,
                span: job.span,
                read: job.read,
            });
        }
        // Only a document handed over in memory kept its text; a file is read again.
        texts.push(match read.text {
            Some(text) => InputText::in_memory(read.name, text),
            None => {
                let input = on_disk(file).expect("only documents in memory keep their text");
                InputText::file(read.name, input, read.fingerprint)
            }
        });
    }
    let judge = Judge {
        policy: &request.policy,
        suppressions: &suppressions,
    };
    pools.register(definitions, judge, &mut total.findings);
    let writer = runtimes::Writer {
        renderer: &renderer,
        verifier: &verifier,
        judge,
        sink,
        explain,
    };
    let runtimes = runtimes::Runtimes::plan(writer, &mut pools, &wanted, &mut total);
    let placement = Placement::of(names.iter().map(|(key, ..)| key));
    duplicate_names(names, &mut total.findings);

    // Pass 2: every job resolved, rendered, verified and handed to the sink.
    let run = Run {
        renderer: &renderer,
        verifier: &verifier,
        pools: &pools,
        runtimes: &runtimes,
        sink,
        placement: &placement,
        explain,
        judge,
    };
    // Each job is read and parsed again from its own span of its file, a job at a
    // time per core, so the jobs of one large file spread across the cores too.
    let partials = parallel::fold(&jobs, |partial: &mut Partial, _, job: &JobToRead| {
        let input = &texts[job.file];
        let span = job.span.as_ref();
        let read = |at: Option<&DocumentSpan>| input.read(at.map(|at| (at, job.read)));
        let loaded = match reread_job(&input.name, job.index, span, read) {
            Ok(Some(loaded)) => loaded,
            Ok(None) => return true,
            Err(e) => {
                partial.error = Some(((job.file + 1, job.index), e));
                return false;
            }
        };
        // Jobs come after the runtimes, whose orders are (0, i).
        job_done(&run, (job.file + 1, job.index), &loaded, partial)
    });
    for partial in partials {
        total.merge(partial);
    }
    if let Some((_, e)) = total.error.take() {
        return Err(e);
    }
    // Pass 1's findings, and any made outside a job, meet the user's levels here.
    let policy = &request.policy;
    policy.apply(&mut total.findings, 0, &[&suppressions]);
    policy.apply(&mut total.consequences, 0, &[&suppressions]);
    total.findings.note_used(&total.consequences);
    policy.finish(&mut total.findings, &suppressions);
    let nothing_found = total.rendered + total.runtimes == 0 && total.findings.is_empty();
    if nothing_found && total.consequences.is_empty() && !request.allow_empty {
        let searched = searched(&request.inputs);
        return Err(Error::Usage(
            match inputs.is_empty() && request.documents.is_empty() {
                true => {
                    format!("no *.yaml or *.yml file in {searched} (--allow-empty accepts that)")
                }
                false => format!(
                    "no Job documents in {searched} (kind: Job, apiVersion: rdmagen/v1alpha1; --allow-empty accepts that)"
                ),
            },
        ));
    }
    total.findings.sort();
    let mut consequences = std::mem::take(&mut total.consequences);
    consequences.sort();
    total.findings.extend(consequences);
    total.decisions.sort_by_key(|(order, ..)| *order);
    let sources = texts::sources(texts, &total.findings)?;
    Ok(Outcome {
        findings: total.findings,
        sources,
        rendered: total.rendered,
        checked: total.checked,
        runtimes: total.runtimes,
        decisions: total
            .decisions
            .into_iter()
            .map(|(_, name, pool, d)| (name, pool, d))
            .collect(),
    })
}

impl Outcome {
    /// "3 job(s)", or "3 job(s) and 1 runtime(s)" when Trainer runtimes were rendered.
    pub fn counted(&self) -> String {
        Self::count(self.rendered, self.runtimes)
    }

    /// [`Outcome::counted`] of the jobs judged, those an error stopped among them
    /// (what `validate` checked).
    pub fn checked(&self) -> String {
        Self::count(self.checked.max(self.rendered), self.runtimes)
    }

    fn count(jobs: usize, runtimes: usize) -> String {
        match runtimes {
            0 => format!("{jobs} job(s)"),
            n => format!("{jobs} job(s) and {n} runtime(s)"),
        }
    }
}

/// The paths a run searched, as named on the command line, for a message.
fn searched(paths: &[PathBuf]) -> String {
    let shown: Vec<String> = paths
        .iter()
        .map(|p| crate::model::load::display_name(p).to_string())
        .collect();
    shown.join(", ")
}
