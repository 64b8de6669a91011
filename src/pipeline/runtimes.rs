//! Kubeflow Trainer v2 runtimes. Every pool that targets Trainer has one, planned,
//! rendered and verified between the two passes, before any job, since every TrainJob
//! on the pool is the difference from its runtime. A job whose pods have less RDMA
//! than the pool's whole-node pods (a single node, `rdma: off`, part of a node on
//! per-rail resources) names a runtime of its own shape ([`RuntimeShape`]), planned
//! the first time a job needs it and shared by every later one. Each goes to the
//! sink at an order before every job (`runtimes/<name>.yaml`), so that a stream
//! applies the runtimes before the jobs that name them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};

use crate::diagnostics::{Finding, Findings, Rule, Suppressions};
use crate::model::{Loaded, PoolDocument};
use crate::pipeline::judge::Judge;
use crate::pipeline::partial::Partial;
use crate::pipeline::pools::Pools;
use crate::pipeline::rendered::{OutputFile, RenderedJob};
use crate::pipeline::sink::{Order, Sink};
use crate::plan::trainer::{self, RuntimePlan, RuntimeShape};
use crate::plan::{TrainerTarget, trainer_of};
use crate::render::{self, Renderer};
use crate::verify::Verifier;
use crate::yaml::tree::Seg;

/// The directory, below the output directory, that holds the runtimes.
pub const RUNTIMES_DIR: &str = "runtimes";

/// The file, in a job's directory, of the job's own MPI runtime.
pub const MPI_RUNTIME_FILE: &str = "trainingruntime.yaml";

/// Orders of one pool's runtimes: its index times this, plus the shape's rank.
const SHAPES_PER_POOL: usize = 1 << 20;

/// A runtime being planned or planned: None when it failed (reported once, by the job
/// that asked first).
type Slot = Arc<OnceLock<Option<Arc<RuntimePlan>>>>;

/// The runtimes of a run's Trainer pools.
#[derive(Default)]
pub(super) struct Runtimes {
    /// Each Trainer pool's runtime, by pool name, with the pool's index.
    whole: BTreeMap<String, (usize, Arc<RuntimePlan>)>,
    /// The narrower shapes, planned when a job first names one.
    shaped: Mutex<BTreeMap<(String, RuntimeShape), Slot>>,
}

/// What rendering a runtime needs of the run.
#[derive(Clone, Copy)]
pub(super) struct Writer<'a> {
    pub(super) renderer: &'a Renderer,
    pub(super) verifier: &'a Verifier,
    pub(super) judge: Judge<'a>,
    pub(super) sink: &'a dyn Sink,
    pub(super) explain: bool,
}

/// One runtime to plan: its pool, release, shape and place in the output.
struct Target<'p> {
    pool: &'p Loaded<PoolDocument>,
    trainer: TrainerTarget,
    shape: RuntimeShape,
    order: Order,
}

impl Runtimes {
    /// Plan, render and verify the runtime of every Trainer pool in `wanted`, handing
    /// each to the run's sink. A pool whose runtime fails is marked broken, so that
    /// its jobs are not rendered.
    pub(super) fn plan(
        writer: Writer<'_>,
        pools: &mut Pools,
        wanted: &BTreeSet<String>,
        total: &mut Partial,
    ) -> Runtimes {
        let mut runtimes = Runtimes::default();
        let mut failed = Vec::new();
        let candidates: Vec<_> = pools
            .sound()
            .filter(|p| wanted.contains(&p.value.metadata.name))
            .filter_map(|p| trainer_of(p).map(|t| (p, t)))
            .collect();
        for (i, (pool, trainer)) in candidates.into_iter().enumerate() {
            let name = pool.value.metadata.name.clone();
            let shape = RuntimeShape::Whole;
            let target = Target {
                pool,
                trainer,
                shape,
                order: order(i, shape),
            };
            match render_runtime(writer, &target, total) {
                Ok(Some(runtime)) => {
                    runtimes.whole.insert(name, (i, Arc::new(runtime)));
                }
                Ok(None) => failed.push(name),
                Err(()) => return runtimes,
            }
        }
        for name in failed {
            pools.mark_broken(&name);
        }
        runtimes
    }

    /// The runtime a job on `pool` whose pods have `shape` names; None when the pool
    /// or that runtime failed (reported, once). The first job to need a narrower
    /// shape plans and renders it; the others wait for it and share it, so that the
    /// output does not depend on which job came first.
    pub(super) fn for_job(
        &self,
        writer: Writer<'_>,
        pool: &Loaded<PoolDocument>,
        shape: impl FnOnce(&RuntimePlan) -> RuntimeShape,
        partial: &mut Partial,
    ) -> Option<Arc<RuntimePlan>> {
        let name = &pool.value.metadata.name;
        let (i, whole) = self.whole.get(name)?;
        let shape = shape(whole);
        if shape == RuntimeShape::Whole {
            return Some(whole.clone());
        }
        let slot = self
            .shaped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((name.clone(), shape))
            .or_default()
            .clone();
        slot.get_or_init(|| {
            let target = Target {
                pool,
                trainer: whole.target,
                shape,
                order: order(*i, shape),
            };
            render_runtime(writer, &target, partial)
                .ok()
                .flatten()
                .map(Arc::new)
        })
        .clone()
    }
}

/// Where a pool's runtime of `shape` comes in the output: after the pool's earlier
/// runtimes, before every job.
fn order(pool_index: usize, shape: RuntimeShape) -> Order {
    (0, pool_index * SHAPES_PER_POOL + shape.rank())
}

/// Plan, render and verify one runtime and hand it to the sink. Ok(None) when it
/// failed (reported in `total`), Err when the sink failed (kept in `total.error`).
fn render_runtime(
    writer: Writer<'_>,
    target: &Target<'_>,
    total: &mut Partial,
) -> Result<Option<RuntimePlan>, ()> {
    let pool = target.pool;
    let pool_name = &pool.value.metadata.name;
    let name = target.shape.runtime_name(pool_name);
    let none = Suppressions::default();
    let findings = &mut total.findings;
    let from = findings.len();
    check_name(pool, &name, target.trainer, findings);
    let runtime = trainer::runtime(pool, target.trainer, target.shape, findings);
    let (Some(runtime), false) = (runtime, writer.judge.fails(findings, from, &none)) else {
        return Ok(None);
    };
    let file = format!("{RUNTIMES_DIR}/{name}.yaml");
    let (text, problems) = rendered_and_verified(writer, &runtime);
    if !problems.is_empty() {
        let at = pool.doc.locate(&[]);
        let from = total.findings.len();
        for mut p in problems {
            p.message = format!("rendered {file}: {}", p.message);
            let written = super::name_location::written(&p, &text, &[&pool.doc]);
            p.location = Some(written.unwrap_or_else(|| at.clone()));
            total.findings.add(p);
        }
        writer.judge.fails(&mut total.findings, from, &none);
        return Ok(None);
    }
    let mut runtime = runtime;
    runtime.rendered = crate::verify::parse(&text)
        .ok()
        .and_then(|docs| docs.into_iter().next())
        .unwrap_or_default();
    let rendered = RenderedJob {
        name: format!("{RUNTIMES_DIR}/{name}"),
        pool: pool_name.clone(),
        files: vec![OutputFile { path: file, text }],
        decisions: runtime.decisions.clone(),
    };
    if writer.explain {
        total.decisions.push((
            target.order,
            rendered.name.clone(),
            pool_name.clone(),
            runtime.decisions.clone(),
        ));
    }
    total.runtimes += 1;
    if let Err(e) = writer.sink.accept(target.order, rendered) {
        total.error = Some((target.order, e));
        return Err(());
    }
    Ok(Some(runtime))
}

/// The runtime's name becomes an object name and a file name: a DNS label, at most 63
/// characters. A narrower shape's suffix can make a pool's valid name too long.
fn check_name(
    pool: &Loaded<PoolDocument>,
    name: &str,
    trainer: TrainerTarget,
    findings: &mut Findings,
) {
    let problem = crate::kubernetes::job_name::problem(name, &[]).or_else(|| {
        (name.len() > 63).then(|| format!("`{name}` is {} characters; at most 63", name.len()))
    });
    if let Some(problem) = problem {
        let pool_name = &pool.value.metadata.name;
        let what = match name == pool_name {
            true => format!("pool `{pool_name}` names its {}", trainer.runtime_kind()),
            false => format!(
                "pool `{pool_name}` names its {} `{name}` (for the jobs that need it)",
                trainer.runtime_kind()
            ),
        };
        findings.at(
            Rule::InvalidJobName,
            format!("{what}: {problem}"),
            pool.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]),
        );
    }
}

/// The runtime's text and what its verification found; a template error is the one
/// finding, with no text.
fn rendered_and_verified(writer: Writer<'_>, runtime: &RuntimePlan) -> (String, Vec<Finding>) {
    match writer
        .renderer
        .render(render::TRAINING_RUNTIME, "runtime", runtime)
    {
        Ok(text) => {
            let found = writer.verifier.training_runtime(&text, runtime);
            (text, found)
        }
        Err(e) => (
            String::new(),
            vec![Finding::new(
                Rule::TemplateError,
                format!("{}: {e}", render::TRAINING_RUNTIME),
                None,
            )],
        ),
    }
}

/// Render and verify a job's own runtime (an MPI runtime, `plan::trainer::mpi_runtime`)
/// as `file`, keeping the rendered document in `runtime.rendered`. None when it
/// failed: the problems are the job's findings, placed in the job or pool where the
/// rendered value came from.
pub(super) fn render_own(
    writer: Writer<'_>,
    job: &Loaded<crate::model::JobDocument>,
    pool: &Loaded<PoolDocument>,
    file: &str,
    runtime: &mut RuntimePlan,
    findings: &mut Findings,
) -> Option<String> {
    let none = Suppressions::default();
    let from = findings.len();
    // The runtime is named after the job, whose own name checks passed: only the
    // suffix can make it too long for an object name.
    if runtime.name.len() > 63 {
        findings.at(
            Rule::InvalidJobName,
            format!(
                "the job's MPI runtime is named `{}`, {} characters; at most 63",
                runtime.name,
                runtime.name.len()
            ),
            job.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]),
        );
    }
    let (text, problems) = rendered_and_verified(writer, runtime);
    let at = job.doc.locate(&[]);
    for mut p in problems {
        p.message = format!("rendered {file}: {}", p.message);
        let written = super::name_location::written(&p, &text, &[&job.doc, &pool.doc]);
        p.location = Some(written.unwrap_or_else(|| at.clone()));
        findings.add(p);
    }
    if writer.judge.fails(findings, from, &none) {
        return None;
    }
    runtime.rendered = crate::verify::parse(&text)
        .ok()
        .and_then(|docs| docs.into_iter().next())
        .unwrap_or_default();
    Some(text)
}
