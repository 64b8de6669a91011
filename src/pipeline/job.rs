//! The second pass: each job from resolve to sink, on every core.

use crate::diagnostics::{Findings, Rule};
use crate::model::{JobDocument, Loaded, PoolDocument};
use crate::pipeline::partial::Partial;
use crate::pipeline::render_one::render_one;
use crate::pipeline::rendered::RenderedJob;
use crate::pipeline::run::Run;
use crate::pipeline::sink::Order;
use crate::plan;
use crate::yaml::tree::Seg;

/// Resolve, render, verify and hand over one job; false when the run must stop (the
/// sink failed).
pub(super) fn job_done(
    run: &Run<'_>,
    order: Order,
    job: &Loaded<JobDocument>,
    partial: &mut Partial,
) -> bool {
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
    let rendered = render_job(run, job, pool, broken, &dir, &mut partial.findings);
    let Some(rendered) = rendered else {
        return true;
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

/// Resolve, then render and verify unless the job or its pool has errors.
fn render_job(
    run: &Run<'_>,
    job: &Loaded<JobDocument>,
    pool: &Loaded<PoolDocument>,
    pool_broken: bool,
    dir: &str,
    findings: &mut Findings,
) -> Option<RenderedJob> {
    let before = findings.errors();
    let plan = plan::resolve(job, pool, findings);
    check_namespace(job, findings);
    if findings.errors() > before || pool_broken {
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
