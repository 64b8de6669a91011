//! The second pass: each job from resolve to sink, on every core.

use std::collections::BTreeSet;

use crate::diagnostics::policy::IGNORE_ANNOTATION;
use crate::diagnostics::{Findings, Rule, Suppressions};
use crate::model::{JobDocument, Loaded, PoolDocument};
use crate::pipeline::partial::Partial;
use crate::pipeline::render_one::render_one;
use crate::pipeline::rendered::{OutputFile, RenderedJob};
use crate::pipeline::run::Run;
use crate::pipeline::sink::Order;
use crate::plan;
use crate::plan::trainer::RuntimeShape;
use crate::yaml::tree::Seg;

/// Resolve, render, verify and hand over one job; false when the run must stop (the
/// sink failed).
pub(super) fn job_done(
    run: &Run<'_>,
    order: Order,
    job: &Loaded<JobDocument>,
    partial: &mut Partial,
) -> bool {
    partial.checked += 1;
    let pool_name = &job.value.spec.pool;
    let (pool, broken) = match run.pools.get(pool_name) {
        Ok(found) => found,
        Err(missing) => {
            let findings = if missing.consequence {
                &mut partial.consequences
            } else {
                &mut partial.findings
            };
            findings.at(
                missing.rule,
                missing.message,
                job.doc.locate(&[Seg::Key("spec"), Seg::Key("pool")]),
            );
            return true;
        }
    };
    let meta = &job.value.metadata;
    let (name, namespace) = (meta.name.as_str(), meta.namespace.as_deref());
    let dir = run.placement.dir(name, namespace);
    let own = own_suppressions(job);
    // A runtime the job is the first to need: reported apart from the job's own
    // findings, which the job's suppressions and levels judge.
    let mut runtimes = Partial::default();
    let rendered = render_job(
        run,
        &own,
        (job, pool, broken),
        &dir,
        &mut partial.findings,
        &mut runtimes,
    );
    let stopped = runtimes.error.is_some();
    partial.merge(runtimes);
    let Some(rendered) = rendered else {
        return !stopped;
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
        return true;
    }
    match run.sink.accept(order, rendered) {
        Ok(()) => true,
        Err(e) => {
            partial.error = Some((order, e));
            false
        }
    }
}

/// The job's `rdmagen.io/ignore` annotation, for every finding its rendering makes,
/// wherever it points (a value from the pool points into the pool's file).
fn own_suppressions(job: &Loaded<JobDocument>) -> Suppressions {
    let Some(value) = job.value.metadata.annotations.get(IGNORE_ANNOTATION) else {
        return Suppressions::default();
    };
    let at = job.doc.locate(&[
        Seg::Key("metadata"),
        Seg::Key("annotations"),
        Seg::Key(IGNORE_ANNOTATION),
    ]);
    Suppressions::everything(value, at)
}

/// Resolve, then render and verify unless the job or its pool has errors (after the
/// user's rule levels and suppressions). A Trainer runtime planned for the job goes to
/// `runtimes`.
fn render_job(
    run: &Run<'_>,
    own: &Suppressions,
    (job, pool, pool_broken): (&Loaded<JobDocument>, &Loaded<PoolDocument>, bool),
    dir: &str,
    findings: &mut Findings,
    runtimes: &mut Partial,
) -> Option<RenderedJob> {
    let from = findings.len();
    let mut plan = plan::resolve(job, pool, findings);
    check_namespace(job, findings);
    let mut runtime_file = None;
    if let (Some(trainer), true) = (plan.target.trainer(), plan.mpi_job.is_some()) {
        // The job's own MPI runtime, rendered and verified before its TrainJob, which
        // is judged with it.
        let mut runtime = plan::trainer::mpi_runtime(job, pool, &mut plan, trainer)?;
        let file = format!("{dir}/{}", super::runtimes::MPI_RUNTIME_FILE);
        let text =
            super::runtimes::render_own(run.writer(), job, pool, &file, &mut runtime, findings)?;
        plan.train_job = Some(plan::trainer::mpi_train_job(
            job, &mut plan, &runtime, findings,
        ));
        runtime_file = Some(OutputFile { path: file, text });
    } else if let Some(trainer) = plan.target.trainer() {
        // A Trainer pool whose runtime failed is broken: its errors were reported.
        let gpus = job.value.spec.gpus_per_node;
        let shape = |whole: &_| RuntimeShape::of(gpus, &plan, whole);
        let runtime = run.runtimes.for_job(run.writer(), pool, shape, runtimes)?;
        if !trainer.cluster_scoped && runtime.namespace != job.value.metadata.namespace {
            findings.at(
                Rule::RuntimeNamespace,
                format!(
                    "TrainingRuntime `{}` is written in {}, this job's TrainJob in {}; a TrainJob can only use a namespaced runtime of its own namespace",
                    runtime.name,
                    shown_namespace(runtime.namespace.as_deref()),
                    shown_namespace(job.value.metadata.namespace.as_deref()),
                ),
                job.doc.locate(&[Seg::Key("metadata")]),
            );
        }
        plan.train_job = Some(plan::trainer::train_job(job, &mut plan, &runtime, findings));
    }
    let (fails, used) = run.judge.judge(findings, from, own);
    if fails || pool_broken {
        return None;
    }
    // The rendered manifest is checked again by rules the input was (RDG020 on its
    // env, say), to catch a template's mistakes: what the user suppressed in the
    // input stays suppressed there, and what was reported is not reported twice.
    let mut own = own.clone();
    own.extend(Suppressions::carried(&used));
    let reported: BTreeSet<Rule> = findings.iter().skip(from).map(|f| f.rule).collect();
    let judge = |findings: &mut Findings, from| {
        findings.retain_from(from, |f| !reported.contains(&f.rule));
        run.judge.fails(findings, from, &own)
    };
    let mut rendered = render_one(
        run.renderer,
        run.verifier,
        &judge,
        (job, pool),
        &plan,
        dir,
        findings,
    )?;
    // The runtime first, so that a stream applies it before the TrainJob that names it.
    if let Some(file) = runtime_file {
        rendered.files.insert(0, file);
    }
    Some(rendered)
}

fn shown_namespace(namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("namespace `{ns}`"),
        None => "kubectl's current namespace (none is set)".to_owned(),
    }
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
