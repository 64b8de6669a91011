//! `lint` of Kubeflow Trainer v2 objects: TrainJobs, TrainingRuntimes and
//! ClusterTrainingRuntimes (`trainer.kubeflow.org/v1alpha1`).
//!
//! Each object is checked against its release's CRD ([`crd::check`], RDG150).
//! A runtime holds the RDMA pod shape, so its pod templates get the pod-level rules a
//! PyTorchJob replica gets (RDMA ⇒ IPC_LOCK, memory /dev/shm, NCCL variables,
//! hostNetwork DNS), plus the Trainer's own: the trainer job and its `node` container
//! (RDG157), Volcano (RDG156), envInjection targets (RDG155). A TrainJob is checked
//! for what Trainer's webhook rejects or silently changes: reserved PET_* variables
//! (RDG151), env patched into the `node` container (RDG154), resourcesPerNode that
//! replaces the runtime's resources on 2.2 and earlier (RDG152, RDG153). When its
//! runtime is among the linted objects, the TrainJob is judged with it: patch targets
//! (RDG155), a missing `spec.trainer` (RDG158), and the pod the TrainJob really gets
//! (the runtime's pod with the patches, `trainer.env` and `resourcesPerNode` applied),
//! whose new problems are reported at the TrainJob.
//!
//! API: [`check_all`]`(docs, TrainerRelease::given(version), &facts)` judges rendered
//! documents (no file positions; each finding with its document's index and a JSON
//! Pointer), [`judge`] the objects `lint` read from files.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::diagnostics::{Finding, Rule};
use crate::kubeflow::trainer::crd::{self, API_VERSION, TrainerKind};
use crate::kubeflow::trainer::effective::{items, trainer_job};
use crate::kubeflow::trainer::{
    ANCESTOR_LABEL, NODE, PodPatch, Release, effective_pod, pod_patches,
};
use crate::manifest::{self, ManifestFacts};
use crate::names;
use crate::nccl::{self, EnvFacts};
use crate::platform::is_rdma_resource;
use crate::pod_templates::{PodTemplate, of_runtime};
use crate::version::Version;
use crate::yaml::tree::Document;

/// The Trainer release lint judges by: `--trainer`, or the latest, assumed. What the
/// release does is [`Release`]'s to say; this adds only whether it was assumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrainerRelease {
    pub release: Release,
    /// Not given: [`crd::LATEST`] was assumed, and release-dependent findings
    /// say so.
    pub assumed: bool,
}

impl TrainerRelease {
    pub fn given(version: Version) -> Self {
        TrainerRelease {
            release: Release::new(version),
            assumed: false,
        }
    }

    fn version(self) -> Version {
        self.release.version
    }

    /// How a release-dependent finding says the release was assumed ("" when given).
    fn note(self) -> String {
        if self.assumed {
            format!(
                "; judged as Trainer {}, the latest, since --trainer was not given",
                self.release
            )
        } else {
            String::new()
        }
    }
}

impl Default for TrainerRelease {
    fn default() -> Self {
        TrainerRelease {
            release: Release::new(crd::LATEST),
            assumed: true,
        }
    }
}

/// A Trainer object lint read, kept until every file is read: a TrainJob and its
/// runtime may sit in different files.
#[derive(Debug)]
pub struct Object {
    pub kind: TrainerKind,
    pub value: Value,
    /// The document it is in, to place findings.
    pub doc: Arc<Document>,
    /// Where the object is in the document (a JSON Pointer; "" for the whole).
    pub prefix: String,
}

/// Containers a patch may not set env on (jobset.go:203-205).
const NO_PATCHED_ENV: &[&str] = &["node", "dataset-initializer", "model-initializer"];
/// What the torch plugin sets and a TrainJob may not (constants.go:299-300), each with
/// what to write instead.
const RESERVED: &[(&str, &str)] = &[
    (
        "PET_NNODES",
        "set the node count with spec.trainer.numNodes",
    ),
    (
        "PET_NPROC_PER_NODE",
        "set the processes per node with spec.trainer.numProcPerNode",
    ),
    (
        "PET_NODE_RANK",
        "the plugin sets it from each pod's completion index",
    ),
    (
        "PET_MASTER_ADDR",
        "the plugin sets it to <job>-node-0-0.<job>",
    ),
    ("PET_MASTER_PORT", "the plugin sets it to 29500"),
];

/// Every finding about `objects`, placed in their files, judged for `release` on the
/// cluster `facts` describes.
pub fn judge(objects: &[Object], release: TrainerRelease, facts: &ManifestFacts) -> Vec<Finding> {
    let values: Vec<(TrainerKind, &Value)> = objects.iter().map(|o| (o.kind, &o.value)).collect();
    judge_values(&values, release, facts)
        .into_iter()
        .map(|(i, mut finding)| {
            let object = &objects[i];
            let pointer = finding.pointer.as_deref().unwrap_or("");
            finding.location = Some(
                object
                    .doc
                    .locate_pointer(&format!("{}{pointer}", object.prefix)),
            );
            finding
        })
        .collect()
}

/// Every finding `lint` makes about the Trainer objects among `docs`, each with the
/// index of its document in `docs` and a JSON Pointer into it (no file position): for
/// objects that are not in a file yet, such as rendered output. A TrainJob is judged
/// with its runtime when that is among `docs`. Other documents are skipped.
pub fn check_all(
    docs: &[Value],
    release: TrainerRelease,
    facts: &ManifestFacts,
) -> Vec<(usize, Finding)> {
    let (indices, values): (Vec<usize>, Vec<(TrainerKind, &Value)>) = docs
        .iter()
        .enumerate()
        .filter_map(|(i, doc)| Some((i, (TrainerKind::of(doc)?, doc))))
        .unzip();
    judge_values(&values, release, facts)
        .into_iter()
        .map(|(i, finding)| (indices[i], finding))
        .collect()
}

/// The findings of each of `objects`, by its index.
fn judge_values(
    objects: &[(TrainerKind, &Value)],
    release: TrainerRelease,
    facts: &ManifestFacts,
) -> Vec<(usize, Finding)> {
    let mut out = Vec::new();
    for (i, (kind, value)) in objects.iter().enumerate() {
        let findings = match kind {
            TrainerKind::TrainJob => {
                let runtime = runtime_of(value, objects);
                train_job(value, runtime, release, facts)
            }
            _ => runtime(value, release, facts),
        };
        out.extend(findings.into_iter().map(|f| (i, f)));
        // A TrainJob's CRD holds its name to a DNS-1035 label (RDG150), stricter.
        let meta = &value["metadata"];
        let name = names::custom_resource_name(meta, "/metadata").filter(|_| kind.is_runtime());
        let names = name
            .into_iter()
            .chain(names::object_meta(meta, "/metadata"));
        out.extend(names.map(|f| (i, f)));
    }
    out
}

/// The CRD's findings for `doc`, saying when the release was assumed.
fn crd(doc: &Value, release: TrainerRelease) -> Vec<Finding> {
    let mut findings = crd::check(doc, release.version());
    let note = release.note();
    for f in &mut findings {
        f.message.push_str(&note);
    }
    findings
}

/// The runtime `job` refers to, when exactly one of `objects` fits: a
/// ClusterTrainingRuntime by name; a TrainingRuntime by name in the job's namespace (an
/// object without one is taken to be in any).
fn runtime_of<'a>(job: &Value, objects: &[(TrainerKind, &'a Value)]) -> Option<&'a Value> {
    let reference = &job["spec"]["runtimeRef"];
    let name = reference["name"].as_str()?;
    let group = reference["apiGroup"]
        .as_str()
        .unwrap_or("trainer.kubeflow.org");
    if group != "trainer.kubeflow.org" {
        return None;
    }
    let kind = reference["kind"]
        .as_str()
        .unwrap_or("ClusterTrainingRuntime");
    let kind = TrainerKind::from_name(kind).filter(|k| k.is_runtime())?;
    let namespace = |v: &Value| v["metadata"]["namespace"].as_str().map(str::to_owned);
    let job_namespace = namespace(job);
    let candidates: Vec<&Value> = objects
        .iter()
        .filter(|(k, v)| *k == kind && v["metadata"]["name"] == name)
        .map(|(_, v)| *v)
        .filter(|v| {
            kind == TrainerKind::ClusterTrainingRuntime
                || match (&job_namespace, namespace(v)) {
                    (Some(a), Some(b)) => *a == b,
                    _ => true,
                }
        })
        .collect();
    match candidates.as_slice() {
        [one] => Some(one),
        _ => {
            // Several: the one in the job's very namespace, if only one is.
            let exact: Vec<&Value> = candidates
                .iter()
                .copied()
                .filter(|v| namespace(v) == job_namespace)
                .collect();
            match exact.as_slice() {
                [one] => Some(one),
                _ => None,
            }
        }
    }
}

/// A runtime's replicated jobs.
fn replicated_jobs(runtime: &Value) -> &Value {
    &runtime["spec"]["template"]["spec"]["replicatedJobs"]
}

/// The pod spec of a replicated job.
fn pod_of(job: &Value) -> &Value {
    &job["template"]["spec"]["template"]["spec"]
}

fn pod_pointer(i: usize) -> String {
    format!("/spec/template/spec/replicatedJobs/{i}/template/spec/template/spec")
}

/// The names of a replicated job's containers and init containers.
fn container_names(job: &Value) -> Vec<&str> {
    let pod = pod_of(job);
    ["containers", "initContainers"]
        .iter()
        .flat_map(|k| items(&pod[*k]).filter_map(|(_, c)| c["name"].as_str()))
        .collect()
}

fn is_torch(runtime: &Value) -> bool {
    runtime["spec"]["mlPolicy"]["torch"].is_object()
}

/// What rank 0's pod is called, for messages.
const PEER: &str = "<job>-node-0-0.<job> (PET_MASTER_ADDR)";

/// Every pod rule of a runtime's pod template (manifest::pod_template_rules), without
/// those about the v1 training operator's variables: Trainer sets only the PET_* ones
/// (RDG151).
fn trainer_pod_rules(t: &PodTemplate<'_>, facts: &ManifestFacts) -> Vec<Finding> {
    let mut findings = manifest::pod_template_rules(t, PEER, facts);
    // A runtime's env is completed by each TrainJob: whether NCCL_NET is pinned is
    // judged on the pod a TrainJob gets (effective_pod_findings).
    findings.retain(|f| f.rule != Rule::OperatorManagedEnv && f.rule != Rule::NcclFallbackUnpinned);
    findings
}

/// The pod-level rules of one pod (manifest::pod_shape), without those about the v1
/// training operator's variables: Trainer sets only the PET_* ones (RDG151).
fn pod_shape(
    pod: &Value,
    metadata: &Value,
    base: &str,
    peer: &str,
    facts: &ManifestFacts,
) -> Vec<Finding> {
    let mut findings = manifest::pod_shape(pod, metadata, base, peer, facts);
    findings.retain(|f| f.rule != Rule::OperatorManagedEnv);
    findings
}

/// A runtime's containers other than `node` that have no image. The TrainJob gives
/// `node` its image; nothing gives one to the others, and the API server refuses a
/// container without one, so none of the job's pods would be created. A pool overlay
/// that still names PyTorchJob's container `pytorch` makes such a container.
fn imageless(pod: &Value, base: &str) -> Vec<Finding> {
    items(&pod["containers"])
        .filter(|(_, c)| c["name"] != NODE)
        .filter(|(_, c)| c["image"].as_str().is_none_or(|s| s.trim().is_empty()))
        .map(|(j, c)| {
            let name = c["name"].as_str().unwrap_or("?");
            let hint = if name == "pytorch" {
                format!("; on Kubeflow Trainer the training container is `{NODE}`, so name it that in the pool's podTemplate")
            } else {
                String::new()
            };
            Finding::at_pointer(
                Rule::EmptyImage,
                format!(
                    "container `{}` has no image, and only `{NODE}` gets one from the TrainJob: the API server refuses the pods{hint}",
                    crate::diagnostics::escape::shown(name)
                ),
                format!("{base}/containers/{j}/image"),
            )
        })
        .collect()
}

fn runtime(doc: &Value, release: TrainerRelease, facts: &ManifestFacts) -> Vec<Finding> {
    let mut out = crd(doc, release);
    // The pods are judged as the API server keeps them: pruning removes object fields
    // only, so pointers into `kept` are pointers into `doc`.
    let kept = crd::prune(doc, release.version());
    for t in of_runtime(&kept) {
        // The Job template's metadata, then the pod template's: the JobSet controller
        // creates a Job and the Job controller pods from them.
        let job_template = t.at.strip_suffix("/spec/template").unwrap_or(&t.at);
        out.extend(names::object_meta(
            &t.holder["template"]["metadata"],
            &format!("{job_template}/metadata"),
        ));
        if t.spec().is_object() {
            out.extend(trainer_pod_rules(&t, facts));
            out.extend(imageless(t.spec(), &t.spec_at()));
        } else {
            out.extend(names::object_meta(
                &t.template["metadata"],
                &format!("{}/metadata", t.at),
            ));
        }
    }
    if is_torch(doc) {
        match trainer_job(doc) {
            None => {
                let (at, which) = match items(replicated_jobs(doc)).find(|(_, j)| j["name"] == NODE)
                {
                    Some((i, _)) => (
                        format!("/spec/template/spec/replicatedJobs/{i}/template"),
                        "replicated job `node` lacks it under template.metadata.labels",
                    ),
                    None => (
                        "/spec/template/spec/replicatedJobs".to_owned(),
                        "write it on the `node` job's template.metadata.labels",
                    ),
                };
                out.push(Finding::at_pointer(
                    Rule::TrainerPodMissing,
                    format!(
                        "no replicated job is labelled `{ANCESTOR_LABEL}: trainer` ({which}): the torch \
                         plugin injects no PET_* variables, and a TrainJob's image, command, env and \
                         numNodes go nowhere"
                    ),
                    at,
                ));
            }
            Some((i, job)) => {
                let containers = &pod_of(job)["containers"];
                if !items(containers).any(|(_, c)| c["name"] == NODE) {
                    let names: Vec<&str> = items(containers)
                        .filter_map(|(_, c)| c["name"].as_str())
                        .collect();
                    out.push(Finding::at_pointer(
                        Rule::TrainerPodMissing,
                        format!(
                            "the trainer job `{}` has no container named `node` (it has {}): the torch \
                             plugin injects no PET_* variables, and a TrainJob's image, command and env \
                             go nowhere",
                            job["name"].as_str().unwrap_or("?"),
                            if names.is_empty() {
                                "none".to_owned()
                            } else {
                                names.join(", ")
                            }
                        ),
                        format!("{}/containers", pod_pointer(i)),
                    ));
                }
            }
        }
    }
    out.extend(env_injection(doc));
    out.extend(volcano(doc));
    out
}

/// mlPolicy.torch.envInjection targets that name no replicated job or container of the
/// runtime (torch.go validateEnvInjectionTargets).
fn env_injection(doc: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let targets = &doc["spec"]["mlPolicy"]["torch"]["envInjection"]["targets"];
    for (t, target) in items(targets) {
        let at = format!("/spec/mlPolicy/torch/envInjection/targets/{t}");
        let Some(name) = target["jobName"].as_str() else {
            continue;
        };
        let Some((_, job)) = items(replicated_jobs(doc)).find(|(_, j)| j["name"] == name) else {
            out.push(Finding::at_pointer(
                Rule::PatchUnknownTarget,
                format!(
                    "envInjection names replicated job `{name}`, which the runtime does not have"
                ),
                format!("{at}/jobName"),
            ));
            continue;
        };
        let names = container_names(job);
        for (c, container) in items(&target["containerNames"]) {
            let Some(container) = container.as_str() else {
                continue;
            };
            if !names.contains(&container) {
                out.push(Finding::at_pointer(
                    Rule::PatchUnknownTarget,
                    format!(
                        "envInjection names container `{container}`, which replicated job `{name}` does not have"
                    ),
                    format!("{at}/containerNames/{c}"),
                ));
            }
        }
    }
    out
}

/// podGroupPolicy.volcano and the pods' schedulerName must agree (RDG156).
fn volcano(doc: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let gang = doc["spec"]["podGroupPolicy"]["volcano"].is_object();
    for (i, job) in items(replicated_jobs(doc)) {
        let pod = pod_of(job);
        let scheduler = pod["schedulerName"].as_str();
        let name = job["name"].as_str().unwrap_or("?");
        if gang && scheduler != Some("volcano") {
            let (at, found) = match scheduler {
                Some(s) => (
                    format!("{}/schedulerName", pod_pointer(i)),
                    format!("schedulerName `{s}`"),
                ),
                None => (
                    pod_pointer(i),
                    "no schedulerName (the default scheduler)".to_owned(),
                ),
            };
            out.push(Finding::at_pointer(
                Rule::VolcanoSchedulerMismatch,
                format!(
                    "podGroupPolicy.volcano is set but replicated job `{name}`'s pods have {found}: \
                     Trainer creates the PodGroup but does not set schedulerName, so they are not \
                     gang-scheduled; add `schedulerName: volcano` to the pod template"
                ),
                at,
            ));
        } else if !gang && scheduler == Some("volcano") {
            out.push(Finding::at_pointer(
                Rule::VolcanoSchedulerMismatch,
                format!(
                    "replicated job `{name}`'s pods use schedulerName volcano but the runtime has no \
                     podGroupPolicy.volcano: Trainer creates no PodGroup, so Volcano schedules each pod \
                     on its own, not as a gang; add `podGroupPolicy: {{volcano: {{}}}}`"
                ),
                format!("{}/schedulerName", pod_pointer(i)),
            ));
        }
    }
    out
}

fn train_job(
    doc: &Value,
    runtime: Option<&Value>,
    release: TrainerRelease,
    facts: &ManifestFacts,
) -> Vec<Finding> {
    let mut out = crd(doc, release);
    let trainer = &doc["spec"]["trainer"];
    let torch = runtime.map(is_torch);
    let runtime_name = || {
        format!(
            "{} `{}`",
            doc["spec"]["runtimeRef"]["kind"]
                .as_str()
                .unwrap_or("ClusterTrainingRuntime"),
            doc["spec"]["runtimeRef"]["name"].as_str().unwrap_or("?")
        )
    };

    if torch != Some(false) {
        for (k, var) in items(&trainer["env"]) {
            let Some(name) = var["name"].as_str() else {
                continue;
            };
            if let Some((_, instead)) = RESERVED.iter().find(|(r, _)| *r == name) {
                let when = if torch.is_none() {
                    " on a runtime with mlPolicy.torch, as torch-distributed has"
                } else {
                    ""
                };
                out.push(Finding::at_pointer(
                    Rule::TrainerReservedEnv,
                    format!(
                        "{name} is reserved: Trainer's webhook rejects the TrainJob{when} (\"must not have \
                         reserved envs\") because the torch plugin sets it; {instead}"
                    ),
                    format!("/spec/trainer/env/{k}"),
                ));
            }
        }
    }
    if torch == Some(true) && !trainer.is_object() {
        out.push(Finding::at_pointer(
            Rule::TrainJobWithoutTrainer,
            format!(
                "no spec.trainer: on the torch runtime {} Trainer injects no PET_* variables, so each \
                 pod's torchrun runs alone (one node, rendezvous at localhost); write at least \
                 `trainer: {{numNodes: N}}`",
                runtime_name()
            ),
            "/spec",
        ));
    }

    // Every patch, of either release's field: a field the release lacks is the CRD's
    // finding, and a patch that names what it must not is wrong on every release.
    let patches = pod_patches(&doc["spec"]);
    for patch in &patches {
        let base = format!("/spec{}/spec", patch.at);
        for (k, c) in items(&patch.spec["containers"]) {
            let name = c["name"].as_str().unwrap_or_default();
            let has_env = c["env"].as_array().is_some_and(|e| !e.is_empty());
            if has_env && NO_PATCHED_ENV.contains(&name) {
                out.push(Finding::at_pointer(
                    Rule::PatchNodeEnv,
                    format!(
                        "the patch sets env on container `{name}`: Trainer's webhook rejects it (\"must not \
                         have envs for the dataset-initializer, model-initializer, node containers\"); put \
                         the trainer's variables in spec.trainer.env"
                    ),
                    format!("{base}/containers/{k}/env"),
                ));
            }
        }
    }
    if let Some(runtime) = runtime {
        out.extend(patch_targets(&patches, runtime, &runtime_name()));
    }

    // resourcesPerNode replaces the runtime container's resources up to 2.2.
    let per_node = &trainer["resourcesPerNode"];
    let sets_resources = per_node["limits"].is_object() || per_node["requests"].is_object();
    let mut replaced = false;
    if !release.release.merges_resources() && sets_resources {
        let names = resource_names(per_node);
        match runtime {
            Some(runtime) => {
                let container = trainer_container(runtime);
                let lost: Vec<&str> = container
                    .map(|c| resource_names(&c["resources"]))
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|n| is_rdma_resource(n) || n.to_ascii_lowercase().contains("gpu"))
                    .filter(|n| !names.contains(n))
                    .collect();
                if !lost.is_empty() {
                    replaced = true;
                    out.push(Finding::at_pointer(
                        Rule::ResourcesPerNodeReplaces,
                        format!(
                            "on Trainer {} resourcesPerNode replaces the `node` container's resources of {}, \
                             so its pods lose {}; repeat {} here{}",
                            release.version(),
                            runtime_name(),
                            lost.join(", "),
                            if lost.len() == 1 { "it" } else { "them" },
                            release.note()
                        ),
                        "/spec/trainer/resourcesPerNode",
                    ));
                }
            }
            None if !names.iter().any(|n| is_rdma_resource(n)) => {
                out.push(Finding::at_pointer(
                    Rule::ResourcesPerNodeUnknownRuntime,
                    format!(
                        "on Trainer {} resourcesPerNode replaces the `node` container's resources of {}, and \
                         it names no RDMA resource: an RDMA device (and any GPU not repeated here) the runtime \
                         requests is dropped; lint the runtime with the job, or repeat them here{}",
                        release.version(),
                        runtime_name(),
                        release.note()
                    ),
                    "/spec/trainer/resourcesPerNode",
                ));
            }
            None => {}
        }
    }

    match runtime {
        Some(runtime) => {
            out.extend(effective_pod_findings(
                doc, runtime, release, facts, replaced,
            ));
        }
        None => {
            // The trainer's NCCL variables alone; RDMA is on when the job asks for it.
            let env_facts = EnvFacts {
                rdma_on: resource_names(per_node).iter().any(|n| is_rdma_resource(n)),
                profile: facts.platform.map(crate::platform::profile),
                ..EnvFacts::default()
            };
            for (k, var) in items(&trainer["env"]) {
                let (Some(name), Some(value)) = (var["name"].as_str(), var["value"].as_str())
                else {
                    continue;
                };
                for problem in nccl::check(name, value, &env_facts) {
                    if problem.rule != Rule::OperatorManagedEnv {
                        out.push(Finding::at_pointer(
                            problem.rule,
                            problem.message,
                            format!("/spec/trainer/env/{k}"),
                        ));
                    }
                }
            }
        }
    }
    out
}

/// Patch targets the runtime lacks (RDG155): a replicated job, a container.
fn patch_targets(patches: &[PodPatch<'_>], runtime: &Value, runtime_name: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    let jobs: Vec<&Value> = items(replicated_jobs(runtime)).map(|(_, j)| j).collect();
    for patch in patches {
        let base = format!("/spec{}/spec", patch.at);
        for (at, name) in &patch.targets {
            let at = format!("/spec{at}");
            let Some(job) = jobs.iter().find(|j| j["name"] == *name) else {
                let known: Vec<&str> = jobs.iter().filter_map(|j| j["name"].as_str()).collect();
                out.push(Finding::at_pointer(
                    Rule::PatchUnknownTarget,
                    format!(
                        "the patch names replicated job `{name}`, which {runtime_name} does not have (it has \
                         {}): Trainer's webhook rejects the TrainJob",
                        known.join(", ")
                    ),
                    at,
                ));
                continue;
            };
            let names = container_names(job);
            for list in ["containers", "initContainers"] {
                for (k, c) in items(&patch.spec[list]) {
                    let Some(container) = c["name"].as_str() else {
                        continue;
                    };
                    if !names.contains(&container) {
                        out.push(Finding::at_pointer(
                            Rule::PatchUnknownTarget,
                            format!(
                                "the patch names container `{container}`, which replicated job `{name}` of \
                                 {runtime_name} does not have: Trainer's webhook rejects the TrainJob, since a \
                                 patch cannot add a container"
                            ),
                            format!("{base}/{list}/{k}/name"),
                        ));
                    }
                }
            }
        }
    }
    out
}

/// The trainer's `node` container in a runtime.
fn trainer_container(runtime: &Value) -> Option<&Value> {
    let (_, job) = trainer_job(runtime)?;
    items(&pod_of(job)["containers"])
        .map(|(_, c)| c)
        .find(|c| c["name"] == NODE)
}

/// The resource names of a ResourceRequirements (limits and requests).
fn resource_names(requirements: &Value) -> Vec<&str> {
    let mut names: Vec<&str> = ["limits", "requests"]
        .iter()
        .filter_map(|s| requirements[*s].as_object())
        .flat_map(|m| m.keys().map(String::as_str))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The pods a TrainJob gets from `runtime` on `release`, as Trainer's controller makes
/// them ([`effective_pod`]) from what the API server keeps of both objects: the index
/// of the runtime's trainer job, its pod template as the runtime has it, and the pod
/// template the TrainJob's pods get. None when the runtime has no trainer job with a
/// pod template (the CRD's or RDG157's finding). `lint` judges this pod; `render`
/// checks the one it makes of the same function against the plan.
pub fn trainer_pods(
    train_job: &Value,
    runtime: &Value,
    release: Release,
) -> Option<(usize, Value, Value)> {
    let kept = crd::prune(train_job, release.version);
    let runtime = crd::prune(runtime, release.version);
    let (index, job) = trainer_job(&runtime)?;
    let name = job["name"].as_str()?;
    let original = &job["template"]["spec"]["template"];
    if !original["spec"].is_object() {
        // Not a pod spec: the CRD's finding.
        return None;
    }
    let made = effective_pod(name, original, &kept["spec"], release);
    Some((index, original.clone(), made))
}

/// Problems of the pod `doc` gets from `runtime` that the runtime's own pod does not
/// have: the job's, reported at the field that brought them.
fn effective_pod_findings(
    doc: &Value,
    runtime: &Value,
    release: TrainerRelease,
    facts: &ManifestFacts,
    replaced: bool,
) -> Vec<Finding> {
    let Some((index, original, made)) = trainer_pods(doc, runtime, release.release) else {
        return Vec::new();
    };
    let (original_meta, made_meta) = (&original["metadata"], &made["metadata"]);
    let (original, pod) = (&original["spec"], &made["spec"]);
    let kept = crd::prune(doc, release.version());
    let job_name = trainer_job(runtime).and_then(|(_, j)| j["name"].as_str());
    let field = release.release.patch_field();
    let patch_pointer = pod_patches(&kept["spec"])
        .into_iter()
        .find(|p| p.field == field && job_name.is_some_and(|n| p.targets(n)) && p.spec.is_object())
        .map(|p| format!("/spec{}/spec", p.at));
    let trainer = &doc["spec"]["trainer"];
    let base = pod_pointer(index);
    let name = doc["metadata"]["name"].as_str().unwrap_or("<job>");
    let peer = format!("{name}-node-0-0.{name} (PET_MASTER_ADDR)");
    let mut known: BTreeMap<(Rule, String), usize> = BTreeMap::new();
    for f in pod_shape(original, original_meta, &base, &peer, facts) {
        // Not reported on the runtime (trainer_pod_rules), so the TrainJob's pod says it.
        if f.rule != Rule::NcclFallbackUnpinned {
            *known.entry((f.rule, f.message)).or_default() += 1;
        }
    }
    let runtime_label = format!(
        "{} `{}`",
        doc["spec"]["runtimeRef"]["kind"]
            .as_str()
            .unwrap_or("ClusterTrainingRuntime"),
        doc["spec"]["runtimeRef"]["name"].as_str().unwrap_or("?")
    );
    let mut out = Vec::new();
    for f in pod_shape(pod, made_meta, &base, &peer, facts) {
        if let Some(n) = known.get_mut(&(f.rule, f.message.clone()))
            && *n > 0
        {
            *n -= 1;
            continue;
        }
        if replaced && f.rule == Rule::IpcLockWithoutRdma {
            // RDG152 already says the RDMA resource is lost.
            continue;
        }
        let pointer = f.pointer.as_deref().unwrap_or("");
        let at = blame(pointer, pod, trainer, patch_pointer.as_deref());
        out.push(Finding::at_pointer(
            f.rule,
            format!(
                "in the pods this TrainJob gets from {runtime_label}: {}",
                f.message
            ),
            at,
        ));
    }
    out
}

/// The TrainJob field that brought a problem of its effective pod at `pointer`: an
/// env var of spec.trainer.env, resourcesPerNode, the first patch, else runtimeRef.
fn blame(pointer: &str, pod: &Value, trainer: &Value, patch: Option<&str>) -> String {
    let segments: Vec<&str> = pointer.split('/').collect();
    let position = |key: &str| segments.iter().position(|s| *s == key);
    if let (Some(c), Some(e)) = (position("containers"), position("env")) {
        let index = |i: usize| segments.get(i + 1).and_then(|s| s.parse::<usize>().ok());
        let name = index(c)
            .zip(index(e))
            .and_then(|(c, e)| pod["containers"][c]["env"][e]["name"].as_str());
        if let Some(k) = name
            .and_then(|n| items(&trainer["env"]).find_map(|(k, v)| (v["name"] == n).then_some(k)))
        {
            return format!("/spec/trainer/env/{k}");
        }
    }
    if position("resources").is_some() && trainer["resourcesPerNode"].is_object() {
        return "/spec/trainer/resourcesPerNode".to_owned();
    }
    patch.map_or_else(|| "/spec/runtimeRef".to_owned(), str::to_owned)
}

/// The kind a document was meant to be, when it names a Trainer kind with the wrong
/// apiVersion: (pointer, why), for `lint`'s "nothing to lint" message.
pub fn near_miss(doc: &Value) -> Option<(&'static str, String)> {
    let kind = doc["kind"].as_str()?;
    TrainerKind::from_name(kind)?;
    let api_version = doc["apiVersion"].as_str().unwrap_or("");
    let why = format!(
        "apiVersion `{api_version}` is not {API_VERSION}{}",
        if api_version.starts_with("kubeflow.org/") {
            " (Trainer v2.0 renamed the group from kubeflow.org)"
        } else {
            ""
        }
    );
    Some(("/apiVersion", why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules(found: &[Finding]) -> Vec<(Rule, String)> {
        found
            .iter()
            .map(|f| (f.rule, f.pointer.clone().unwrap_or_default()))
            .collect()
    }

    fn rdma_runtime() -> Value {
        json!({"apiVersion": API_VERSION, "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "rdma"},
            "spec": {"mlPolicy": {"numNodes": 2, "torch": {}},
                "template": {"spec": {"replicatedJobs": [{"name": "node",
                    "template": {"metadata": {"labels": {ANCESTOR_LABEL: "trainer"}},
                        // The pod opts out of Istio, as an RDMA pod should (RDG181), and
                        // pins NCCL's network (RDG198).
                        "spec": {"template": {"metadata": {"annotations": {crate::pod_network::ISTIO_INJECT: "false"}}, "spec": {
                            "containers": [{"name": "node", "image": "img:1",
                                "env": [{"name": "NCCL_NET", "value": "IB"}],
                                "resources": {"limits": {"nvidia.com/gpu": 8, "rdma/hca": 1}},
                                "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                                "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]}],
                            "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}}}}}]}}}})
    }

    fn job(spec: Value) -> Value {
        json!({"apiVersion": API_VERSION, "kind": "TrainJob", "metadata": {"name": "j"},
            "spec": spec})
    }

    #[test]
    fn a_patch_that_replaces_capabilities_drops_ipc_lock_in_the_effective_pod() {
        let runtime = rdma_runtime();
        assert!(
            super::runtime(
                &runtime,
                TrainerRelease::default(),
                &ManifestFacts::default()
            )
            .is_empty()
        );
        let doc = job(
            json!({"runtimeRef": {"name": "rdma"}, "trainer": {"numNodes": 2},
            "runtimePatches": [{"manager": "x.io/y", "trainingRuntimeSpec": {"template": {"spec": {
                "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
                    "containers": [{"name": "node", "securityContext": {"capabilities": {"add": ["SYS_PTRACE"]}}}]
                }}}}}]}}}}]}),
        );
        let found = train_job(
            &doc,
            Some(&runtime),
            TrainerRelease::default(),
            &ManifestFacts::default(),
        );
        assert_eq!(
            rules(&found),
            [(Rule::RdmaWithoutIpcLock, "/spec/runtimePatches/0/trainingRuntimeSpec/template/spec/replicatedJobs/0/template/spec/template/spec".to_owned())]
        );
        assert!(found[0].message.starts_with("in the pods this TrainJob gets from ClusterTrainingRuntime `rdma`: rdma/hca is requested"));
    }

    /// Objects of the wrong shape anywhere are the CRD's findings, never a panic.
    #[test]
    fn misshapen_objects_do_not_panic() {
        let shapes = [
            json!("x"),
            json!(3),
            json!([]),
            json!(null),
            json!({"a": 1}),
        ];
        let paths: &[&[&str]] = &[
            &["spec"],
            &["spec", "trainer"],
            &["spec", "trainer", "env"],
            &["spec", "trainer", "resourcesPerNode"],
            &["spec", "trainer", "resourcesPerNode", "limits"],
            &["spec", "runtimePatches"],
            &["spec", "podTemplateOverrides"],
            &["spec", "template", "spec", "replicatedJobs"],
            &[
                "spec",
                "template",
                "spec",
                "replicatedJobs",
                "0",
                "template",
                "spec",
                "template",
                "spec",
            ],
            &[
                "spec",
                "template",
                "spec",
                "replicatedJobs",
                "0",
                "template",
                "spec",
                "template",
                "spec",
                "containers",
                "0",
                "resources",
            ],
            &[
                "spec",
                "template",
                "spec",
                "replicatedJobs",
                "0",
                "template",
                "spec",
                "template",
                "spec",
                "containers",
                "0",
                "env",
            ],
        ];
        let patched = job(
            json!({"runtimeRef": {"name": "rdma"}, "trainer": {"numNodes": 2,
            "env": [{"name": "A", "value": "1"}], "resourcesPerNode": {"limits": {"cpu": 1}}},
            "runtimePatches": [{"manager": "x.io/y", "trainingRuntimeSpec": {"template": {"spec": {
                "replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
                    "containers": [{"name": "node", "env": [{"name": "B"}], "securityContext": {"privileged": true}}],
                    "volumes": [{"name": "v"}], "tolerations": []}}}}}]}}}}]}),
        );
        for shape in &shapes {
            for path in paths {
                for base in [rdma_runtime(), patched.clone()] {
                    let mut doc = base;
                    let mut at = &mut doc;
                    for key in &path[..path.len() - 1] {
                        at = match key.parse::<usize>() {
                            Ok(i) if at.get(i).is_some() => &mut at[i],
                            _ if at.is_object() => &mut at[*key],
                            _ => break,
                        };
                    }
                    if at.is_object() {
                        at[path[path.len() - 1]] = shape.clone();
                    }
                    for release in [Version::new(2, 1), Version::new(2, 2), Version::new(2, 3)] {
                        let docs = [rdma_runtime(), doc.clone(), patched.clone()];
                        let _ = check_all(
                            &docs,
                            TrainerRelease::given(release),
                            &ManifestFacts::default(),
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn check_all_judges_rendered_documents_together() {
        let runtime = rdma_runtime();
        let doc = job(json!({"runtimeRef": {"name": "rdma"}}));
        let service = json!({"apiVersion": "v1", "kind": "Service"});
        let found = check_all(
            &[service, runtime, doc],
            TrainerRelease::given(Version::new(2, 3)),
            &ManifestFacts::default(),
        );
        let found: Vec<(usize, Rule, Option<String>)> = found
            .into_iter()
            .map(|(i, f)| (i, f.rule, f.pointer))
            .collect();
        assert_eq!(
            found,
            [(2, Rule::TrainJobWithoutTrainer, Some("/spec".to_owned()))]
        );
    }

    #[test]
    fn resources_per_node_replaces_up_to_2_2_and_merges_on_2_3() {
        let runtime = rdma_runtime();
        let doc = job(
            json!({"runtimeRef": {"name": "rdma"}, "trainer": {"numNodes": 2,
            "resourcesPerNode": {"limits": {"cpu": 8, "memory": "64Gi"}}}}),
        );
        let old = TrainerRelease::given(Version::new(2, 2));
        let found = train_job(&doc, Some(&runtime), old, &ManifestFacts::default());
        assert_eq!(
            rules(&found),
            [(
                Rule::ResourcesPerNodeReplaces,
                "/spec/trainer/resourcesPerNode".to_owned()
            )]
        );
        assert!(
            found[0].message.contains("lose nvidia.com/gpu, rdma/hca"),
            "{}",
            found[0].message
        );
        let new = TrainerRelease::given(Version::new(2, 3));
        assert!(train_job(&doc, Some(&runtime), new, &ManifestFacts::default()).is_empty());
        // Without the runtime, a warning on 2.2.
        let found = train_job(&doc, None, old, &ManifestFacts::default());
        assert_eq!(
            rules(&found),
            [(
                Rule::ResourcesPerNodeUnknownRuntime,
                "/spec/trainer/resourcesPerNode".to_owned()
            )]
        );
    }

    #[test]
    fn trainer_env_is_judged_with_the_runtime() {
        let runtime = rdma_runtime();
        let doc = job(
            json!({"runtimeRef": {"name": "rdma"}, "trainer": {"numNodes": 2,
            "env": [{"name": "NCCL_IB_DISABLE", "value": "1"}, {"name": "PET_NNODES", "value": "2"}]}}),
        );
        let found = train_job(
            &doc,
            Some(&runtime),
            TrainerRelease::default(),
            &ManifestFacts::default(),
        );
        assert_eq!(
            rules(&found),
            [
                (Rule::TrainerReservedEnv, "/spec/trainer/env/1".to_owned()),
                (Rule::IbDisableWithRdma, "/spec/trainer/env/0".to_owned()),
                (Rule::DebugOnlyVariable, "/spec/trainer/env/0".to_owned()),
            ]
        );
        // Alone, nothing says RDMA is on: NCCL_IB_DISABLE=1 then says the job runs over TCP.
        let found = train_job(
            &doc,
            None,
            TrainerRelease::default(),
            &ManifestFacts::default(),
        );
        assert_eq!(
            rules(&found),
            [(Rule::TrainerReservedEnv, "/spec/trainer/env/1".to_owned())]
        );
    }
}
