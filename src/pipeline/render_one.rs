//! Render and verify one job's files.

use std::borrow::Cow;

use serde_json::Value;

use crate::diagnostics::{Finding, Findings, Location, Rule, pointer};
use crate::dockerfile;
use crate::model::{JobDocument, Loaded, PoolDocument};
use crate::pipeline::name_location;
use crate::pipeline::rendered::{OutputFile, RenderedJob};
use crate::plan::Plan;
use crate::render::{self, Renderer, manifest};
use crate::verify::Verifier;
use crate::yaml::tree::{Document, Seg};

/// Render and verify the job's files; None when a check fails. `fails` judges new
/// findings by the user's rule levels and says whether errors are left (a check the
/// user turned off does not stop the job).
pub(super) fn render_one(
    renderer: &Renderer,
    verifier: &Verifier,
    fails: &dyn Fn(&mut Findings, usize) -> bool,
    (job, pool): (&Loaded<JobDocument>, &Loaded<PoolDocument>),
    plan: &Plan,
    dir: &str,
    findings: &mut Findings,
) -> Option<RenderedJob> {
    let at = job.doc.locate(&[]);
    // Whether the problems found in `file` (rendered as `text`) stop the job.
    let mut stops = |file: &str, text: &str, problems: Vec<Finding>| {
        let from = findings.len();
        for mut p in problems {
            p.message = format!("rendered {file}: {}", p.message);
            let input = overlay_location(&p, plan, job, pool)
                .or_else(|| toleration_location(&p, plan, job, pool))
                .or_else(|| run_as_location(&p, job, pool))
                .or_else(|| name_location::written(&p, text, &[&job.doc, &pool.doc]));
            p.location = Some(input.unwrap_or_else(|| at.clone()));
            findings.add(p);
        }
        fails(findings, from)
    };
    let mut files = Vec::new();
    // The job's manifest, built as a value from the plan and checked as that value;
    // one a user's template lays out (`--templates`) is rendered and parsed back.
    type Check = fn(&Verifier, &str, &Plan) -> Vec<Finding>;
    let (template, file, check): (_, _, Check) = match (&plan.train_job, &plan.mpi_job) {
        (Some(_), _) => (render::TRAINJOB, "trainjob.yaml", Verifier::trainjob_text),
        (None, Some(_)) => (render::MPIJOB, "mpijob.yaml", Verifier::mpijob_text),
        (None, None) => (
            render::PYTORCHJOB,
            "pytorchjob.yaml",
            Verifier::pytorchjob_text,
        ),
    };
    let mut templated: Vec<(&str, &str, Check)> = Vec::new();
    if renderer.is_overridden(template) {
        templated.push((template, file, check));
    } else {
        let (value, problems) = match (&plan.train_job, &plan.mpi_job) {
            (Some(train_job), _) => {
                let value = manifest::trainjob(plan, train_job);
                let problems = verifier.trainjob(&value, plan);
                (value, problems)
            }
            (None, Some(mpi)) => {
                let value = manifest::mpijob(plan, mpi);
                let problems = verifier.mpijob(&value, plan);
                (value, problems)
            }
            (None, None) => {
                let value = manifest::pytorchjob(plan);
                let problems = verifier.pytorchjob(&value, plan);
                (value, problems)
            }
        };
        let text = manifest::text(&value);
        if stops(file, &text, problems) {
            return None;
        }
        files.push(OutputFile {
            path: format!("{dir}/{file}"),
            text,
        });
    }
    if !plan.storage.is_empty() {
        templated.push((render::STORAGE, "storage.yaml", Verifier::storage));
    }
    if plan.preflight.is_some() {
        templated.push((
            render::PREFLIGHT_CONFIGMAP,
            "preflight.yaml",
            Verifier::preflight,
        ));
    }
    for (template, file, check) in templated {
        let text = match renderer.render(template, "job", plan) {
            Ok(text) => text,
            Err(e) => {
                // Nothing was rendered to write, whatever the rule's level.
                let failed = Finding::new(Rule::TemplateError, format!("{template}: {e}"), None);
                stops(file, "", vec![failed]);
                return None;
            }
        };
        if stops(file, &text, check(verifier, &text, plan)) {
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
            if stops("Dockerfile", &text, problems) {
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

/// The rules about a container's requests and limits (rules::resources).
const RESOURCE_RULES: [Rule; 4] = [
    Rule::RequestAboveLimit,
    Rule::NotOvercommittable,
    Rule::ResourceValueInvalid,
    Rule::HugePagesShape,
];

/// Where a podTemplate overlay wrote the request or limit a resource finding is
/// about: the job's own overlay when it sets that value, else the pool's
/// (`jobDefaults.podTemplate`, which the job's is merged over). None when neither
/// does (the value is rdmagen's decision from `resources`, or the finding is about a
/// TrainJob's resourcesPerNode): the finding stays at the job.
fn overlay_location(
    finding: &Finding,
    plan: &Plan,
    job: &Loaded<JobDocument>,
    pool: &Loaded<PoolDocument>,
) -> Option<Location> {
    if !RESOURCE_RULES.contains(&finding.rule) {
        return None;
    }
    // `.../template/spec/<list>/<index>/resources/<section>/<name>`: the rendered pod
    // template is the plan's, so its containers are the plan's, in the same order.
    let pointer = finding.pointer.as_deref()?;
    let (_, tail) = pointer.rsplit_once("/template/spec/")?;
    let segments: Vec<_> = pointer::segments(&format!("/{tail}"))
        .map(Cow::into_owned)
        .collect();
    let [list, index, resources, section, name] = segments.as_slice() else {
        return None;
    };
    if resources != "resources" {
        return None;
    }
    let container = &plan.pod.template["spec"][list.as_str()][index.parse::<usize>().ok()?]["name"];
    let overlays: [(&Document, &[Seg<'_>], Option<&Value>); 2] = [
        (
            &job.doc,
            &[Seg::Key("spec"), Seg::Key("podTemplate")],
            job.value.spec.pod_template.as_ref(),
        ),
        (
            &pool.doc,
            &[
                Seg::Key("spec"),
                Seg::Key("jobDefaults"),
                Seg::Key("podTemplate"),
            ],
            pool.value.spec.job_defaults.pod_template.as_ref(),
        ),
    ];
    overlays.into_iter().find_map(|(doc, prefix, overlay)| {
        let items = overlay?["spec"][list.as_str()].as_array()?;
        let i = items.iter().position(|c| {
            c["name"] == *container
                && c["resources"][section.as_str()]
                    .get(name.as_str())
                    .is_some()
        })?;
        let mut path = prefix.to_vec();
        path.extend([
            Seg::Key("spec"),
            Seg::Key(list),
            Seg::Index(i),
            Seg::Key("resources"),
            Seg::Key(section),
            Seg::Key(name),
        ]);
        Some(doc.locate(&path))
    })
}

/// Where the input wrote the user a RDG182 finding is about (`runAsUser` or
/// `runAsNonRoot`): the job's `securityContext`, else the
/// pod-wide one of the job's podTemplate, else the pool's. None when none of them
/// sets it (a user's template wrote it): the finding stays at the job.
fn run_as_location(
    finding: &Finding,
    job: &Loaded<JobDocument>,
    pool: &Loaded<PoolDocument>,
) -> Option<Location> {
    if finding.rule != Rule::IpcLockNonRoot {
        return None;
    }
    // A TrainJob's finding points at the patch that brought the user, not the field:
    // then either field may be the one.
    let last = finding.pointer.as_deref()?.rsplit('/').next()?;
    let keys: &[&str] = match last {
        "runAsUser" | "runAsNonRoot" => &[last],
        _ => &["runAsUser", "runAsNonRoot"],
    };
    keys.iter().find_map(|key| run_as_field(key, job, pool))
}

/// The first input of [`run_as_location`]'s order that sets `key`.
fn run_as_field(
    key: &str,
    job: &Loaded<JobDocument>,
    pool: &Loaded<PoolDocument>,
) -> Option<Location> {
    let job_spec = &job.value.spec;
    let candidates: [(&Document, Vec<Seg<'_>>, Option<&Value>); 3] = [
        (
            &job.doc,
            vec![Seg::Key("spec"), Seg::Key("securityContext"), Seg::Key(key)],
            job_spec
                .security_context
                .as_ref()
                .and_then(|sc| sc.get(key)),
        ),
        (
            &job.doc,
            vec![
                Seg::Key("spec"),
                Seg::Key("podTemplate"),
                Seg::Key("spec"),
                Seg::Key("securityContext"),
                Seg::Key(key),
            ],
            job_spec
                .pod_template
                .as_ref()
                .and_then(|t| t["spec"]["securityContext"].get(key)),
        ),
        (
            &pool.doc,
            vec![
                Seg::Key("spec"),
                Seg::Key("jobDefaults"),
                Seg::Key("podTemplate"),
                Seg::Key("spec"),
                Seg::Key("securityContext"),
                Seg::Key(key),
            ],
            pool.value
                .spec
                .job_defaults
                .pod_template
                .as_ref()
                .and_then(|t| t["spec"]["securityContext"].get(key)),
        ),
    ];
    candidates
        .into_iter()
        .find(|(_, _, set)| set.is_some())
        .map(|(doc, path, _)| doc.locate(&path))
}

/// Where the input wrote the toleration a RDG165 finding is about: the first of the
/// job's overlay, the pool's overlay, the job's `tolerations` and the pool's
/// `jobDefaults.tolerations` that holds the same item (the pod's list is their union).
fn toleration_location(
    finding: &Finding,
    plan: &Plan,
    job: &Loaded<JobDocument>,
    pool: &Loaded<PoolDocument>,
) -> Option<Location> {
    if finding.rule != Rule::TolerationInvalid {
        return None;
    }
    let pointer = finding.pointer.as_deref()?;
    let (_, tail) = pointer.rsplit_once("/template/spec/tolerations/")?;
    let (index, field) = tail.split_once('/')?;
    let item = &plan.pod.template["spec"]["tolerations"][index.parse::<usize>().ok()?];
    let overlay = |o: Option<&Value>| o.map_or(Value::Null, |o| o["spec"]["tolerations"].clone());
    let typed = |list| serde_json::to_value(list).unwrap_or(Value::Null);
    let sources: [(&Document, Vec<Seg<'_>>, Value); 4] = [
        (
            &job.doc,
            vec![Seg::Key("spec"), Seg::Key("podTemplate"), Seg::Key("spec")],
            overlay(job.value.spec.pod_template.as_ref()),
        ),
        (
            &pool.doc,
            vec![
                Seg::Key("spec"),
                Seg::Key("jobDefaults"),
                Seg::Key("podTemplate"),
                Seg::Key("spec"),
            ],
            overlay(pool.value.spec.job_defaults.pod_template.as_ref()),
        ),
        (
            &job.doc,
            vec![Seg::Key("spec")],
            typed(&job.value.spec.tolerations),
        ),
        (
            &pool.doc,
            vec![Seg::Key("spec"), Seg::Key("jobDefaults")],
            typed(&pool.value.spec.job_defaults.tolerations),
        ),
    ];
    sources.into_iter().find_map(|(doc, mut path, list)| {
        let i = list.as_array()?.iter().position(|t| t == item)?;
        path.extend([Seg::Key("tolerations"), Seg::Index(i)]);
        if item.get(field).is_some() {
            path.push(Seg::Key(field));
        }
        Some(doc.locate(&path))
    })
}
