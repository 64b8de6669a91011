//! Kubeflow Trainer v2 runtimes: one per pool that targets Trainer, planned, rendered
//! and verified between the two passes, before any job, since every TrainJob on the
//! pool is the difference from its runtime. They go to the sink first
//! (`runtimes/<pool>.yaml`), so that a stream applies them before the jobs that name
//! them.

use std::collections::{BTreeMap, BTreeSet};

use crate::diagnostics::{Finding, Rule, Suppressions};
use crate::pipeline::judge::Judge;
use crate::pipeline::partial::Partial;
use crate::pipeline::pools::Pools;
use crate::pipeline::rendered::{OutputFile, RenderedJob};
use crate::pipeline::sink::Sink;
use crate::plan::trainer::{self, RuntimePlan};
use crate::plan::trainer_of;
use crate::render::{self, Renderer};
use crate::verify::Verifier;
use crate::yaml::tree::Seg;

/// The directory, below the output directory, that holds the runtimes.
pub const RUNTIMES_DIR: &str = "runtimes";

/// Plan, render and verify the runtime of every Trainer pool in `wanted`, handing each
/// to `sink` (orders `(0, i)`: before every job). A pool whose runtime fails is marked
/// broken, so that its jobs are not rendered.
#[allow(clippy::too_many_arguments)]
pub(super) fn runtimes(
    pools: &mut Pools,
    wanted: &BTreeSet<String>,
    renderer: &Renderer,
    verifier: &Verifier,
    judge: Judge<'_>,
    sink: &dyn Sink,
    explain: bool,
    total: &mut Partial,
) -> BTreeMap<String, RuntimePlan> {
    let mut planned = BTreeMap::new();
    let mut failed = Vec::new();
    let candidates: Vec<_> = pools
        .sound()
        .filter(|p| wanted.contains(&p.value.metadata.name))
        .filter_map(|p| trainer_of(p).map(|t| (p, t)))
        .collect();
    for (i, (pool, target)) in candidates.into_iter().enumerate() {
        let name = pool.value.metadata.name.clone();
        let findings = &mut total.findings;
        let from = findings.len();
        // The pool's name becomes an object name and a file name: a DNS label, at
        // most 63 characters.
        let problem = crate::kubernetes::job_name::problem(&name, &[]).or_else(|| {
            (name.len() > 63).then(|| format!("`{name}` is {} characters; at most 63", name.len()))
        });
        if let Some(problem) = problem {
            findings.at(
                Rule::InvalidJobName,
                format!(
                    "pool `{name}` names its {}: {problem}",
                    target.runtime_kind()
                ),
                pool.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]),
            );
        }
        let runtime = trainer::runtime(pool, target, findings);
        let none = Suppressions::default();
        let (Some(runtime), false) = (runtime, judge.fails(findings, from, &none)) else {
            failed.push(name);
            continue;
        };
        let file = format!("{RUNTIMES_DIR}/{name}.yaml");
        let at = pool.doc.locate(&[]);
        let mut rendered_text = String::new();
        let mut problems: Vec<Finding> =
            match renderer.render(render::TRAINING_RUNTIME, "runtime", &runtime) {
                Ok(text) => {
                    let found = verifier.training_runtime(&text, &runtime);
                    if found.is_empty() {
                        let mut runtime = runtime;
                        runtime.rendered = crate::verify::parse(&text)
                            .ok()
                            .and_then(|docs| docs.into_iter().next())
                            .unwrap_or_default();
                        let rendered = RenderedJob {
                            name: format!("{RUNTIMES_DIR}/{name}"),
                            pool: name.clone(),
                            files: vec![OutputFile {
                                path: file.clone(),
                                text,
                            }],
                            decisions: runtime.decisions.clone(),
                        };
                        if explain {
                            total.decisions.push((
                                (0, i),
                                rendered.name.clone(),
                                name.clone(),
                                runtime.decisions.clone(),
                            ));
                        }
                        total.runtimes += 1;
                        if let Err(e) = sink.accept((0, i), rendered) {
                            total.error = Some(((0, i), e));
                            return planned;
                        }
                        planned.insert(name, runtime);
                        continue;
                    }
                    rendered_text = text;
                    found
                }
                Err(e) => vec![Finding::new(
                    Rule::TemplateError,
                    format!("{}: {e}", render::TRAINING_RUNTIME),
                    None,
                )],
            };
        for p in &mut problems {
            p.message = format!("rendered {file}: {}", p.message);
            let written = super::name_location::written(p, &rendered_text, &[&pool.doc]);
            p.location = Some(written.unwrap_or_else(|| at.clone()));
        }
        let from = total.findings.len();
        for p in problems {
            total.findings.add(p);
        }
        judge.fails(&mut total.findings, from, &none);
        failed.push(name);
    }
    for name in failed {
        pools.mark_broken(&name);
    }
    planned
}
