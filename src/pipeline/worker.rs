//! The work of a run: reading files on every core, and each job from resolve to sink.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use crate::diagnostics::source::{Location, Sources};
use crate::diagnostics::{Findings, Rule};
use crate::error::Error;
use crate::model::load::{display_name, read_documents};
use crate::model::{JobDocument, Loaded, PoolDocument};
use crate::pipeline::placement::{Key, Placement};
use crate::pipeline::pools::Pools;
use crate::pipeline::render_one::render_one;
use crate::pipeline::{Order, RenderedJob, Sink};
use crate::plan::{self, Decision};
use crate::render::Renderer;
use crate::verify::Verifier;
use crate::yaml::tree::Seg;

/// Shared state of a run.
pub(super) struct Run<'a> {
    pub(super) renderer: &'a Renderer,
    pub(super) verifier: &'a Verifier,
    pub(super) pools: RwLock<Pools>,
    pub(super) sink: &'a dyn Sink,
    /// Each job's directory, from the names read before the run.
    pub(super) placement: &'a Placement,
    pub(super) explain: bool,
    /// In the last pass every pool is known: an unknown pool is an error, not a wait.
    pub(super) last_pass: bool,
}

impl Run<'_> {
    fn pools(&self) -> std::sync::RwLockReadGuard<'_, Pools> {
        self.pools.read().unwrap_or_else(|p| p.into_inner())
    }
}

/// What one worker found.
#[derive(Default)]
pub(super) struct Partial {
    pub(super) findings: Findings,
    /// Findings caused by another file's errors (a job whose pool failed to load):
    /// reported after every other finding, so that the cause comes first.
    pub(super) consequences: Findings,
    /// Each job's own findings, by the pool it used: dropped if that pool's name turns
    /// out to be defined twice (which definition a job saw would depend on timing).
    pub(super) job_findings: Vec<(String, Findings)>,
    pub(super) sources: Sources,
    pub(super) rendered: usize,
    pub(super) names: Vec<(Key, Order, Location)>,
    pub(super) decisions: Vec<(Order, String, String, Vec<Decision>)>,
    /// Jobs whose pool was not known when they were read: (file, document).
    pub(super) deferred: Vec<Order>,
    pub(super) error: Option<Error>,
}

impl Partial {
    pub(super) fn merge(&mut self, other: Partial) {
        self.findings.extend(other.findings);
        self.consequences.extend(other.consequences);
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

/// Drop files already listed (the same file named twice, or under two roots). A file's
/// identity is its canonical directory plus its name; directories are few, so each is
/// canonicalised once.
pub(super) fn dedupe(paths: Vec<PathBuf>, seen: &mut BTreeSet<PathBuf>) -> Vec<PathBuf> {
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

pub(super) fn read(path: &Path) -> Result<String, Error> {
    crate::files::read_regular_text(path).map_err(|e| Error::io(path, e))
}

/// How many threads read `files` files: one per core, up to 8, and one per 32 files.
pub(super) fn workers(files: usize) -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8)
        .min(files.div_ceil(32))
        .max(1)
}

/// Handle `files` on every core: each worker takes the next file until none is left.
pub(super) fn in_parallel(run: &Run<'_>, files: &[(usize, &PathBuf)]) -> Partial {
    let workers = workers(files.len());
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
            let mut cited = false;
            if !docs.pools.is_empty() || !docs.failed_pools.is_empty() {
                let mut pools = run.pools.write().unwrap_or_else(|p| p.into_inner());
                for (d, pool) in docs.pools {
                    cited |= pools.register((*i, d), pool);
                }
                pools.failed_to_load(&name, docs.failed_pools);
            }
            for (d, job) in docs.jobs {
                job_done(run, (*i, d), job, &mut partial);
            }
            if cited || partial.findings.len() + partial.job_findings.len() > before {
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
pub(super) fn job_done(
    run: &Run<'_>,
    order: Order,
    job: Loaded<JobDocument>,
    partial: &mut Partial,
) {
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
        let missing = run.pools().missing(&pool_name);
        let findings = if missing.consequence {
            &mut partial.consequences
        } else {
            &mut partial.findings
        };
        findings.at(
            Rule::UnknownPool,
            missing.message,
            job.doc.locate(&[Seg::Key("spec"), Seg::Key("pool")]),
        );
        return;
    };
    let meta = &job.value.metadata;
    let (name, namespace) = (meta.name.as_str(), meta.namespace.as_deref());
    let name_at = job.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]);
    partial
        .names
        .push(((name.to_owned(), meta.namespace.clone()), order, name_at));
    let dir = run.placement.dir(name, namespace);
    let mut findings = Findings::default();
    let rendered = render_job(run, &job, &pool, broken, &dir, &mut findings);
    if !findings.is_empty() {
        partial.job_findings.push((pool_name, findings));
    }
    let Some(rendered) = rendered else {
        return;
    };
    if run.explain {
        partial.decisions.push((
            order,
            dir,
            rendered.pool.clone(),
            rendered.decisions.clone(),
        ));
    }
    partial.rendered += 1;
    // Both would write one directory; the run fails on RDG006 (duplicate_names).
    if run.placement.is_duplicated(name, namespace) {
        return;
    }
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
    dir: &str,
    findings: &mut Findings,
) -> Option<RenderedJob> {
    let plan = plan::resolve(job, pool, findings);
    check_namespace(job, findings);
    if findings.errors() > 0 || pool_broken {
        return None;
    }
    render_one(run.renderer, run.verifier, job, &plan, dir, findings)
}

/// The API server refuses any other namespace, and it names an output directory.
fn check_namespace(job: &Loaded<JobDocument>, findings: &mut Findings) {
    let Some(namespace) = &job.value.metadata.namespace else {
        return;
    };
    if let Some(problem) = crate::kubernetes::namespace::problem(namespace) {
        findings.at(
            Rule::InvalidNamespace,
            problem,
            job.doc
                .locate(&[Seg::Key("metadata"), Seg::Key("namespace")]),
        );
    }
}

/// Two jobs with one name in one namespace are one Kubernetes object, and would write
/// one directory: every later one is an error. In two namespaces they are two objects.
pub(super) fn duplicate_names(total: &mut Partial) {
    let mut names = std::mem::take(&mut total.names);
    names.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    for pair in names.windows(2) {
        if pair[0].0 == pair[1].0 {
            let (name, namespace) = &pair[1].0;
            let message = match namespace {
                Some(ns) => format!("job `{name}` is defined more than once in namespace `{ns}`"),
                None => format!("job `{name}` is defined more than once"),
            };
            total
                .findings
                .at(Rule::DuplicateName, message, pair[1].2.clone());
        }
    }
}
