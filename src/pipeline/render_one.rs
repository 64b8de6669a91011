//! Render and verify one job's files.

use crate::diagnostics::Rule;
use crate::diagnostics::{Finding, Findings};
use crate::dockerfile;
use crate::model::{JobDocument, Loaded};
use crate::pipeline::rendered::{OutputFile, RenderedJob};
use crate::plan::Plan;
use crate::render::{self, Renderer};
use crate::verify::Verifier;

/// Render and verify the job's files; None when a check fails. `fails` judges new
/// findings by the user's rule levels and says whether errors are left (a check the
/// user turned off does not stop the job).
pub(super) fn render_one(
    renderer: &Renderer,
    verifier: &Verifier,
    fails: &dyn Fn(&mut Findings, usize) -> bool,
    job: &Loaded<JobDocument>,
    plan: &Plan,
    dir: &str,
    findings: &mut Findings,
) -> Option<RenderedJob> {
    let at = job.doc.locate(&[]);
    // Whether the problems found in `file` stop the job.
    let mut stops = |file: &str, problems: Vec<Finding>| {
        let from = findings.len();
        for mut p in problems {
            p.message = format!("rendered {file}: {}", p.message);
            p.location = Some(at.clone());
            findings.add(p);
        }
        fails(findings, from)
    };
    let mut files = Vec::new();
    // Each template with the file it becomes and the check for what it renders.
    type Check = fn(&Verifier, &str, &Plan) -> Vec<Finding>;
    let mut outputs: Vec<(&str, &str, Check)> = match plan.train_job {
        Some(_) => vec![(render::TRAINJOB, "trainjob.yaml", Verifier::trainjob)],
        None => vec![(render::PYTORCHJOB, "pytorchjob.yaml", Verifier::pytorchjob)],
    };
    if !plan.storage.is_empty() {
        outputs.push((render::STORAGE, "storage.yaml", Verifier::storage));
    }
    for (template, file, check) in outputs {
        let text = match renderer.render(template, "job", plan) {
            Ok(text) => text,
            Err(e) => {
                // Nothing was rendered to write, whatever the rule's level.
                let failed = Finding::new(Rule::TemplateError, format!("{template}: {e}"), None);
                stops(file, vec![failed]);
                return None;
            }
        };
        if stops(file, check(verifier, &text, plan)) {
            return None;
        }
        files.push(OutputFile {
            path: format!("{dir}/{file}"),
            text,
        });
    }
    if let Some(build) = &plan.image_build {
        let text = build.dockerfile(&plan.name);
        let broken = dockerfile::unknown_instructions(&text);
        if !broken.is_empty() {
            let problems = broken
                .into_iter()
                .map(|(line, word)| {
                    Finding::new(
                        Rule::DockerfileShape,
                        format!("line {line} starts with `{word}`"),
                        None,
                    )
                })
                .collect();
            if stops("Dockerfile", problems) {
                return None;
            }
        }
        files.push(OutputFile {
            path: format!("{dir}/Dockerfile"),
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
