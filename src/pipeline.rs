//! The pipeline: load → resolve → render → verify, streaming: each job is handed to a
//! [`Sink`] as soon as it is verified. Emitting (or comparing) is the sink's business;
//! nothing here writes a file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::check::verify::{Problem, Verifier};
use crate::check::{Findings, Rule};
use crate::dockerfile;
use crate::error::Error;
use crate::plan::{self, Decision, Plan};
use crate::render::{self, Renderer};
use crate::source::{Location, Sources};
use crate::spec::load::{FileDocuments, display_name, read_documents, yaml_files};
use crate::spec::tree::Seg;
use crate::spec::{JobDocument, Loaded, PoolDocument};

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

/// Where each rendered job goes as soon as it is verified: collected in memory, staged
/// into an output directory, compared with one, or just counted. Called from several
/// threads.
pub trait Sink: Sync {
    fn accept(&self, order: Order, job: RenderedJob) -> Result<(), Error>;
}

/// Position of a job in the inputs (file index, document index): output streams
/// follow it, whatever order threads finish in.
pub type Order = (usize, usize);

/// Keeps every rendered job (stdout, tests).
#[derive(Default)]
pub struct Collect(Mutex<Vec<(Order, RenderedJob)>>);

impl Sink for Collect {
    fn accept(&self, order: Order, job: RenderedJob) -> Result<(), Error> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((order, job));
        Ok(())
    }
}

impl Collect {
    /// The jobs in input order.
    pub fn into_jobs(self) -> Vec<RenderedJob> {
        let mut jobs = self.0.into_inner().unwrap_or_else(|p| p.into_inner());
        jobs.sort_by_key(|(order, _)| *order);
        jobs.into_iter().map(|(_, job)| job).collect()
    }
}

/// Counts jobs and keeps nothing (validate).
pub struct Discard;

impl Sink for Discard {
    fn accept(&self, _: Order, _: RenderedJob) -> Result<(), Error> {
        Ok(())
    }
}

/// What a streaming run found: findings (sorted), the sources they point into, how
/// many jobs rendered, and every decision when asked for.
#[derive(Debug, Default)]
pub struct Report {
    pub findings: Findings,
    pub sources: Sources,
    pub rendered: usize,
    /// (job, pool, decisions) in input order, when `explain` was asked.
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

/// Every pool definition seen so far. Pools are few; jobs look them up often.
#[derive(Default)]
struct Pools {
    /// The definition each name resolves to (the first registered).
    by_name: BTreeMap<String, Arc<Loaded<PoolDocument>>>,
    /// Findings of each registered pool's own checks, and whether any is an error.
    checks: BTreeMap<String, (Findings, bool)>,
    /// Every definition, in no particular order, for duplicate detection.
    all: Vec<(Order, Arc<Loaded<PoolDocument>>)>,
}

impl Pools {
    fn register(&mut self, order: Order, pool: Loaded<PoolDocument>) {
        let pool = Arc::new(pool);
        let name = pool.value.metadata.name.clone();
        if !self.by_name.contains_key(&name) {
            let mut findings = Findings::default();
            plan::check_pool(&pool, &mut findings);
            let broken = findings.errors() > 0;
            self.checks.insert(name.clone(), (findings, broken));
            self.by_name.insert(name, pool.clone());
        }
        self.all.push((order, pool));
    }

    fn broken(&self, name: &str) -> bool {
        self.checks.get(name).is_some_and(|(_, broken)| *broken)
    }
}

/// Shared state of a run.
struct Run<'a> {
    renderer: &'a Renderer,
    verifier: &'a Verifier,
    pools: RwLock<Pools>,
    sink: &'a dyn Sink,
    explain: bool,
    /// In the last pass every pool is known: an unknown pool is an error, not a wait.
    last_pass: bool,
}

impl Run<'_> {
    fn pools(&self) -> std::sync::RwLockReadGuard<'_, Pools> {
        self.pools.read().unwrap_or_else(|p| p.into_inner())
    }
}

/// What one worker found.
#[derive(Default)]
struct Partial {
    findings: Findings,
    /// Each job's own findings, by the pool it used: dropped if that pool's name turns
    /// out to be defined twice (which definition a job saw would depend on timing).
    job_findings: Vec<(String, Findings)>,
    sources: Sources,
    rendered: usize,
    names: Vec<(String, Order, Location)>,
    decisions: Vec<(Order, String, String, Vec<Decision>)>,
    /// Jobs whose pool was not known when they were read: (file, document).
    deferred: Vec<Order>,
    error: Option<Error>,
}

impl Partial {
    fn merge(&mut self, other: Partial) {
        self.findings.extend(other.findings);
        self.job_findings.extend(other.job_findings);
        self.sources.extend(other.sources);
        self.rendered += other.rendered;
        self.names.extend(other.names);
        self.decisions.extend(other.decisions);
        self.deferred.extend(other.deferred);
        if self.error.is_none() {
            self.error = other.error;
        }
    }
}

/// Run load → resolve → render → verify, handing each job to `sink` as soon as it is
/// verified; nothing is kept per job, so memory stays flat however many jobs there
/// are. `--pools` files are read first; input files are then read once each, in
/// parallel across cores, pools registered as they are found; a job whose pool is
/// not known yet is read again in a last pass.
pub fn run_with(request: &Request, sink: &dyn Sink, explain: bool) -> Result<Report, Error> {
    let renderer = Renderer::new(request.templates.as_deref())?;
    let verifier = Verifier::new();
    let (inputs, pool_files) = {
        let mut seen = BTreeSet::new();
        let inputs = dedupe(yaml_files(&request.inputs)?, &mut seen);
        (inputs, dedupe(yaml_files(&request.pools)?, &mut seen))
    };

    let mut total = Partial::default();
    let mut pools = Pools::default();
    for (i, path) in pool_files.iter().enumerate() {
        let docs = read_file(path, &read(path)?, &mut total);
        for (_, job) in docs.jobs {
            total.findings.at(
                Rule::UnknownDocument,
                "a Job in a --pools file is not rendered; pass its file as an input",
                job.doc.locate(&[Seg::Key("kind")]),
            );
        }
        for (d, pool) in docs.pools {
            pools.register((inputs.len() + i, d), pool);
        }
    }
    let mut run = Run {
        renderer: &renderer,
        verifier: &verifier,
        pools: RwLock::new(pools),
        sink,
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
        let before = total.findings.len() + total.job_findings.len();
        for (d, job) in parsed.jobs.into_iter().filter(|(d, _)| docs.contains(d)) {
            job_done(&run, (file, d), job, &mut total);
        }
        if total.findings.len() + total.job_findings.len() > before {
            total.sources.add(name, Arc::from(text));
        }
    }
    if let Some(e) = total.error.take() {
        return Err(e);
    }
    let pools = run.pools.into_inner().unwrap_or_else(|p| p.into_inner());
    pool_findings(pools, &mut total);
    if total.rendered == 0 && total.findings.is_empty() {
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

/// Each pool name's checks, and an error for every definition after the first (in
/// input order). Jobs on a name defined twice keep no findings of their own.
fn pool_findings(mut pools: Pools, total: &mut Partial) {
    pools.all.sort_by_key(|(order, _)| *order);
    let mut first: BTreeMap<String, Arc<Loaded<PoolDocument>>> = BTreeMap::new();
    let mut duplicated = BTreeSet::new();
    for (_, pool) in &pools.all {
        let name = pool.value.metadata.name.clone();
        match first.entry(name) {
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(pool.clone());
            }
            std::collections::btree_map::Entry::Occupied(slot) => {
                total.findings.at(
                    Rule::DuplicateName,
                    format!("pool `{}` is defined more than once", slot.key()),
                    pool.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]),
                );
                duplicated.insert(slot.key().clone());
            }
        }
    }
    for (name, pool) in &first {
        if duplicated.contains(name) {
            plan::check_pool(pool, &mut total.findings);
        } else if let Some((findings, _)) = pools.checks.remove(name) {
            total.findings.extend(findings);
        }
    }
    for (pool, findings) in std::mem::take(&mut total.job_findings) {
        if !duplicated.contains(&pool) {
            total.findings.extend(findings);
        }
    }
}

/// Drop files already listed (the same file named twice, or under two roots). A file's
/// identity is its canonical directory plus its name; directories are few, so each is
/// canonicalised once.
fn dedupe(paths: Vec<PathBuf>, seen: &mut BTreeSet<PathBuf>) -> Vec<PathBuf> {
    let mut dirs: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    paths
        .into_iter()
        .filter(|p| {
            let dir = p.parent().unwrap_or(Path::new(""));
            let real = dirs.entry(dir.to_path_buf()).or_insert_with(|| {
                let d = if dir.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    dir
                };
                std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf())
            });
            seen.insert(real.join(p.file_name().unwrap_or_default()))
        })
        .collect()
}

fn read(path: &Path) -> Result<String, Error> {
    crate::source::read_small_text(path).map_err(|e| Error::io(path, e))
}

/// Parse a file; keep its text when it produced findings (for their snippets).
fn read_file(path: &Path, text: &str, partial: &mut Partial) -> FileDocuments {
    let name = display_name(path);
    let before = partial.findings.len();
    let docs = read_documents(&name, text, &mut partial.findings);
    if partial.findings.len() > before {
        partial.sources.add(name, Arc::from(text));
    }
    docs
}

/// Handle `files` on every core: each worker takes the next file until none is left.
fn in_parallel(run: &Run<'_>, files: &[(usize, &PathBuf)]) -> Partial {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8)
        .min(files.len().div_ceil(32))
        .max(1);
    let next = AtomicUsize::new(0);
    let work = || {
        let mut partial = Partial::default();
        while partial.error.is_none() {
            let Some((i, path)) = files.get(next.fetch_add(1, Ordering::Relaxed)) else {
                break;
            };
            let text = match read(path) {
                Ok(text) => text,
                Err(e) => {
                    partial.error = Some(e);
                    break;
                }
            };
            let before = partial.findings.len() + partial.job_findings.len();
            let name = display_name(path);
            let docs = read_documents(&name, &text, &mut partial.findings);
            if !docs.pools.is_empty() {
                let mut pools = run.pools.write().unwrap_or_else(|p| p.into_inner());
                for (d, pool) in docs.pools {
                    pools.register((*i, d), pool);
                }
            }
            for (d, job) in docs.jobs {
                job_done(run, (*i, d), job, &mut partial);
            }
            if partial.findings.len() + partial.job_findings.len() > before {
                partial.sources.add(name, Arc::from(text));
            }
        }
        partial
    };
    if workers == 1 {
        return work();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(work)).collect();
        let mut total = Partial::default();
        for h in handles {
            match h.join() {
                Ok(p) => total.merge(p),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        total
    })
}

/// Resolve, render, verify and hand over one job (or let it wait for its pool).
fn job_done(run: &Run<'_>, order: Order, job: Loaded<JobDocument>, partial: &mut Partial) {
    let pool_name = job.value.spec.pool.clone();
    let (pool, broken) = {
        let pools = run.pools();
        (
            pools.by_name.get(&pool_name).cloned(),
            pools.broken(&pool_name),
        )
    };
    let Some(pool) = pool else {
        if !run.last_pass {
            partial.deferred.push(order);
            return;
        }
        let known: Vec<String> = run.pools().by_name.keys().cloned().collect();
        partial.findings.at(
            Rule::UnknownPool,
            format!(
                "pool `{pool_name}` is not defined; known pools: {}",
                if known.is_empty() {
                    "none (pass --pools)".to_owned()
                } else {
                    known.join(", ")
                }
            ),
            job.doc.locate(&[Seg::Key("spec"), Seg::Key("pool")]),
        );
        return;
    };
    let name_at = job.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]);
    partial
        .names
        .push((job.value.metadata.name.clone(), order, name_at));
    let mut findings = Findings::default();
    let rendered = render_job(run, &job, &pool, broken, &mut findings);
    if !findings.is_empty() {
        partial.job_findings.push((pool_name, findings));
    }
    let Some(rendered) = rendered else {
        return;
    };
    if run.explain {
        partial.decisions.push((
            order,
            rendered.name.clone(),
            rendered.pool.clone(),
            rendered.decisions.clone(),
        ));
    }
    partial.rendered += 1;
    if let Err(e) = run.sink.accept(order, rendered) {
        partial.error = Some(e);
    }
}

/// Resolve, then render and verify unless the job or its pool has errors.
fn render_job(
    run: &Run<'_>,
    job: &Loaded<JobDocument>,
    pool: &Loaded<PoolDocument>,
    pool_broken: bool,
    findings: &mut Findings,
) -> Option<RenderedJob> {
    let plan = plan::resolve(job, pool, findings);
    if findings.errors() > 0 || pool_broken {
        return None;
    }
    render_one(run.renderer, run.verifier, job, &plan, findings)
}

/// Two jobs with one name would write one directory: every later one is an error.
fn duplicate_names(total: &mut Partial) {
    let mut names = std::mem::take(&mut total.names);
    names.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    for pair in names.windows(2) {
        if pair[0].0 == pair[1].0 {
            total.findings.at(
                Rule::DuplicateName,
                format!("job `{}` is defined more than once", pair[1].0),
                pair[1].2.clone(),
            );
        }
    }
}

fn render_one(
    renderer: &Renderer,
    verifier: &Verifier,
    job: &Loaded<JobDocument>,
    plan: &Plan,
    findings: &mut Findings,
) -> Option<RenderedJob> {
    let at = job.doc.locate(&[]);
    let mut report = |file: &str, problems: Vec<Problem>| {
        for p in problems {
            findings.at(
                p.rule,
                format!("rendered {file}: {}", p.message),
                at.clone(),
            );
        }
    };
    let mut files = Vec::new();
    let mut outputs = vec![(render::PYTORCHJOB, "pytorchjob.yaml")];
    if !plan.storage.is_empty() {
        outputs.push((render::STORAGE, "storage.yaml"));
    }
    for (template, file) in outputs {
        let text = match renderer.render(template, plan) {
            Ok(text) => text,
            Err(e) => {
                report(
                    file,
                    vec![Problem {
                        rule: Rule::TemplateError,
                        message: format!("{template}: {e}"),
                    }],
                );
                return None;
            }
        };
        let problems = if file == "pytorchjob.yaml" {
            verifier.pytorchjob(&text, plan)
        } else {
            verifier.storage(&text, plan)
        };
        if !problems.is_empty() {
            report(file, problems);
            return None;
        }
        files.push(OutputFile {
            path: format!("{}/{file}", plan.name),
            text,
        });
    }
    if let Some(build) = &plan.image_build {
        let text = build.dockerfile(&plan.name);
        let broken = dockerfile::unknown_instructions(&text);
        if !broken.is_empty() {
            let problems = broken
                .into_iter()
                .map(|(line, word)| Problem {
                    rule: Rule::DockerfileShape,
                    message: format!("line {line} starts with `{word}`"),
                })
                .collect();
            report("Dockerfile", problems);
            return None;
        }
        files.push(OutputFile {
            path: format!("{}/Dockerfile", plan.name),
            text,
        });
    }
    Some(RenderedJob {
        name: plan.name.clone(),
        pool: job.value.spec.pool.clone(),
        files,
        decisions: plan.decisions.clone(),
    })
}
