//! The pipeline: load → resolve → render → verify. Emitting (or comparing) is the
//! caller's choice; nothing here writes a file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::check::verify::{Problem, Verifier};
use crate::check::{Findings, Rule};
use crate::dockerfile;
use crate::error::Error;
use crate::plan::{self, Decision, Plan};
use crate::render::{self, Renderer};
use crate::source::Sources;
use crate::spec::load::yaml_files;
use crate::spec::tree::Seg;
use crate::spec::{Inputs, JobDocument, Loaded, PoolDocument};

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

/// The result of a run: rendered jobs (empty when any error was found), every
/// finding, and the sources they point into.
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

/// Run load → resolve → render → verify over a request.
pub fn run(request: &Request) -> Result<Outcome, Error> {
    let renderer = Renderer::new(request.templates.as_deref())?;
    let mut findings = Findings::default();
    let inputs = load(request, &mut findings)?;
    let plans = resolve_all(&inputs, &mut findings);
    let mut jobs = Vec::new();
    if findings.errors() == 0 {
        let verifier = Verifier::new();
        for (job, plan) in &plans {
            if let Some(rendered) = render_one(&renderer, &verifier, job, plan, &mut findings) {
                jobs.push(rendered);
            }
        }
    }
    if findings.errors() > 0 {
        jobs.clear();
    }
    findings.sort();
    Ok(Outcome {
        jobs,
        findings,
        sources: inputs.sources,
    })
}

fn load(request: &Request, findings: &mut Findings) -> Result<Inputs, Error> {
    let mut inputs = Inputs::default();
    let mut seen = BTreeSet::new();
    for path in yaml_files(&request.inputs)? {
        if seen.insert(canonical(&path)) {
            inputs.load_file(&path, findings)?;
        }
    }
    for path in yaml_files(&request.pools)? {
        if !seen.insert(canonical(&path)) {
            continue;
        }
        let jobs_before = inputs.jobs.len();
        inputs.load_file(&path, findings)?;
        for job in inputs.jobs.drain(jobs_before..) {
            findings.at(
                Rule::UnknownDocument,
                "a Job in a --pools file is not rendered; pass its file as an input",
                job.doc.locate(&[Seg::Key("kind")]),
            );
        }
    }
    Ok(inputs)
}

fn canonical(path: &std::path::Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn resolve_all<'i>(
    inputs: &'i Inputs,
    findings: &mut Findings,
) -> Vec<(&'i Loaded<JobDocument>, Plan)> {
    let mut pools: BTreeMap<&str, &Loaded<PoolDocument>> = BTreeMap::new();
    for pool in &inputs.pools {
        let name = pool.value.metadata.name.as_str();
        if pools.insert(name, pool).is_some() {
            findings.at(
                Rule::DuplicateName,
                format!("pool `{name}` is defined more than once"),
                pool.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]),
            );
        }
        plan::check_pool(pool, findings);
    }
    let mut names = BTreeSet::new();
    let mut plans = Vec::new();
    for job in &inputs.jobs {
        let name = job.value.metadata.name.as_str();
        if !names.insert(name) {
            findings.at(
                Rule::DuplicateName,
                format!("job `{name}` is defined more than once"),
                job.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]),
            );
        }
        let pool_name = job.value.spec.pool.as_str();
        let Some(pool) = pools.get(pool_name) else {
            let known: Vec<&str> = pools.keys().copied().collect();
            findings.at(
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
            continue;
        };
        plans.push((job, plan::resolve(job, pool, findings)));
    }
    plans
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
