//! Render and verify one job's files.

use crate::diagnostics::Findings;
use crate::diagnostics::Rule;
use crate::dockerfile;
use crate::model::{JobDocument, Loaded};
use crate::pipeline::{OutputFile, RenderedJob};
use crate::plan::Plan;
use crate::render::{self, Renderer};
use crate::verify::{Problem, Verifier};

pub(super) fn render_one(
    renderer: &Renderer,
    verifier: &Verifier,
    job: &Loaded<JobDocument>,
    plan: &Plan,
    dir: &str,
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
        let text = match renderer.render(template, "job", plan) {
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
                .map(|(line, word)| Problem {
                    rule: Rule::DockerfileShape,
                    message: format!("line {line} starts with `{word}`"),
                })
                .collect();
            report("Dockerfile", problems);
            return None;
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
