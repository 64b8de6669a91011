//! `lint`: check PyTorchJob manifests that rdmagen did not write (hand-written, from
//! Arena, CubeStudio, Helm) against every rule a manifest alone can show, and the
//! PersistentVolumes and claims that come with them; and Kubeflow Trainer v2 objects
//! (TrainJob, TrainingRuntime, ClusterTrainingRuntime: `rules/trainer.rs`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diagnostics::policy::IGNORE_ANNOTATION;
use globset::GlobSet;

use crate::diagnostics::source::Sources;
use crate::diagnostics::suggest::closest;
use crate::diagnostics::{Findings, Policy, Suppressions};
use crate::error::Error;
use crate::files::{dedupe, display_name, yaml_files};
use crate::kubeflow::trainer::crd::TrainerKind;
use crate::manifest::{self, ManifestFacts, TRAINER_ANNOTATION, written_version};
use crate::storage;
use crate::trainer::{self, TrainerRelease};
use crate::yaml::tree::{Document, Node, each_document};
use crate::yaml::tree_value::to_value;

/// What a lint run found, and over how much.
#[derive(Debug, Default)]
pub struct Linted {
    pub findings: Findings,
    pub sources: Sources,
    pub files: usize,
    pub jobs: usize,
    /// Of `jobs`, the MPIJobs.
    pub mpi_jobs: usize,
    /// PersistentVolume and PersistentVolumeClaim documents.
    pub volumes_and_claims: usize,
    /// TrainJobs, and TrainingRuntimes with ClusterTrainingRuntimes.
    pub train_jobs: usize,
    pub runtimes: usize,
    /// The Trainer release the Trainer objects are judged by (`--trainer`).
    pub trainer_release: TrainerRelease,
    /// The releases they were judged by (`--trainer`, else each object's
    /// [`TRAINER_ANNOTATION`], else the latest, assumed), in order.
    pub trainer_releases: Vec<TrainerRelease>,
    /// Kept until every file is read: a TrainJob's runtime may be in another file.
    trainer_objects: Vec<trainer::Object>,
    /// The cluster the files were linted for, for the checks made at the end.
    facts: ManifestFacts,
    /// Kept until every file is read: a claim may be bound by a PV in another file.
    volumes: Vec<storage::Volume>,
    claims: Vec<storage::Claim>,
    /// Documents that are not PyTorchJobs but look as if they were meant to be, each
    /// with what is wrong: they explain a run that linted nothing.
    pub near_misses: Vec<String>,
    /// The files' `# rdmagen: ignore=` comments and `rdmagen.io/ignore` annotations.
    suppressions: Suppressions,
}

impl Linted {
    /// Why nothing was linted, when nothing was and nothing else went wrong: a run
    /// that checked no PyTorchJob must not pass as clean (a `kind` typo, a Pool file,
    /// an empty folder). `paths` are what the user named.
    pub fn nothing_linted(&self, paths: &[PathBuf]) -> Option<String> {
        let trainer = self.train_jobs + self.runtimes;
        if self.jobs > 0 || self.volumes_and_claims > 0 || trainer > 0 || !self.findings.is_empty()
        {
            return None;
        }
        let named: Vec<String> = paths.iter().map(|p| display_name(p).to_string()).collect();
        let named = named.join(", ");
        if self.files == 0 {
            return Some(format!(
                "nothing to lint: no *.yaml or *.yml file in {named}"
            ));
        }
        let mut message = format!(
            "nothing to lint: no PyTorchJob (kind PyTorchJob, apiVersion kubeflow.org/v1) and no \
             TrainJob, TrainingRuntime or ClusterTrainingRuntime (apiVersion {}) in {named}",
            crate::kubeflow::trainer::crd::API_VERSION
        );
        const SHOWN: usize = 3;
        for miss in self.near_misses.iter().take(SHOWN) {
            message.push_str("; ");
            message.push_str(miss);
        }
        if self.near_misses.len() > SHOWN {
            message.push_str(&format!("; and {} more", self.near_misses.len() - SHOWN));
        }
        Some(message)
    }

    /// Take what the documents of one file gave (see [`lint_text`]).
    fn absorb(&mut self, file: Linted) {
        self.findings.extend(file.findings);
        self.jobs += file.jobs;
        self.mpi_jobs += file.mpi_jobs;
        self.volumes_and_claims += file.volumes_and_claims;
        self.train_jobs += file.train_jobs;
        self.runtimes += file.runtimes;
        self.trainer_objects.extend(file.trainer_objects);
        self.volumes.extend(file.volumes);
        self.claims.extend(file.claims);
        self.near_misses.extend(file.near_misses);
        self.suppressions.extend(file.suppressions);
    }

    /// The checks that need every file read: claims against the PVs of the whole run;
    /// then every finding judged by the user's rule levels and suppressions.
    pub fn finish(&mut self, policy: &Policy) {
        for finding in storage::check(&self.volumes, &self.claims) {
            self.findings.add(finding);
        }
        self.volumes.clear();
        self.claims.clear();
        // Objects written for different clusters are judged apart: a TrainJob with the
        // runtime rendered beside it, by what both say they were written for.
        let mut groups: Vec<((TrainerRelease, ManifestFacts), Vec<trainer::Object>)> = Vec::new();
        for object in std::mem::take(&mut self.trainer_objects) {
            let key = (
                self.release_of(&object.value),
                self.facts.or_written(&object.value),
            );
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, objects)) => objects.push(object),
                None => groups.push((key, vec![object])),
            }
        }
        for ((release, facts), objects) in &groups {
            for finding in trainer::judge(objects, *release, facts) {
                self.findings.add(finding);
            }
            if !self.trainer_releases.contains(release) {
                self.trainer_releases.push(*release);
            }
        }
        self.trainer_releases
            .sort_by_key(|r| (r.release.version, r.assumed));
        policy.apply(&mut self.findings, 0, &[&self.suppressions]);
        policy.finish(&mut self.findings, &self.suppressions);
    }
}

impl Linted {
    /// The release `object` is judged by: `--trainer`, else the one it says it was
    /// written for (when lint knows that release's CRDs), else the latest, assumed.
    fn release_of(&self, object: &serde_json::Value) -> TrainerRelease {
        if !self.trainer_release.assumed {
            return self.trainer_release;
        }
        written_version(object, TRAINER_ANNOTATION)
            .filter(|v| crate::kubeflow::trainer::crd::supported(*v))
            .map_or(self.trainer_release, TrainerRelease::given)
    }
}

/// Lint every PyTorchJob, Trainer v2 object (judged for Trainer `trainer`),
/// PersistentVolume and PersistentVolumeClaim document in `paths` (files, or
/// directories walked for YAML), on the cluster `facts` describes. Other documents
/// (Services, ConfigMaps, ...) are skipped. Directories are walked as `render` walks
/// them, leaving out what `exclude` matches.
pub fn lint(
    paths: &[PathBuf],
    exclude: &GlobSet,
    facts: &ManifestFacts,
    trainer: TrainerRelease,
    policy: &Policy,
) -> Result<Linted, Error> {
    let mut linted = Linted {
        trainer_release: trainer,
        ..Linted::default()
    };
    let files = dedupe(yaml_files(paths, exclude)?, &mut BTreeSet::new());
    for file in files {
        let name = display_name(&file.path);
        let text = file
            .read_text()
            .map_err(|e| Error::io(Path::new(&*name), e))?;
        lint_text(&mut linted, name, text, facts);
        linted.files += 1;
    }
    linted.finish(policy);
    linted.findings.sort();
    Ok(linted)
}

/// Lint one stream read whole (a KRM function's ResourceList), named `name`, as
/// [`lint`] lints a file.
pub fn lint_stream(
    name: Arc<str>,
    text: String,
    facts: &ManifestFacts,
    trainer: TrainerRelease,
    policy: &Policy,
) -> Linted {
    let mut linted = Linted {
        trainer_release: trainer,
        files: 1,
        ..Linted::default()
    };
    lint_text(&mut linted, name, text, facts);
    linted.finish(policy);
    linted.findings.sort();
    linted
}

/// Lint one file's text into `linted`; call [`Linted::finish`] after the last.
pub fn lint_text(linted: &mut Linted, name: Arc<str>, text: String, facts: &ManifestFacts) {
    let text: Arc<str> = Arc::from(text);
    linted.facts = facts.clone();
    linted.sources.add(name.clone(), text.clone());
    linted.suppressions.comments(&name, &text);
    // Each document is linted as it is read and dropped after, unless a Trainer
    // object keeps it for the checks at the end: holding every parsed document of a
    // file cost 611 MB for a 70 MB file (issue 22). What the documents give is kept
    // aside until the file is read to its end, so that a file with a syntax error,
    // or past a budget, gives that error alone: nothing in it was checked.
    let mut file = Linted {
        trainer_release: linted.trainer_release,
        ..Linted::default()
    };
    match each_document(&name, &text, |doc| lint_document(&mut file, doc, facts)) {
        Ok(()) => linted.absorb(file),
        Err(e) => e.report(name, &mut linted.findings),
    }
}

/// Lint one document of a file.
fn lint_document(linted: &mut Linted, doc: Document, facts: &ManifestFacts) {
    let doc = Arc::new(doc);
    read_annotations(&doc, &mut linted.suppressions);
    let value = to_value(&doc.root);
    // `kubectl get ... -o yaml` prints a `List` of objects, and a KRM function reads a
    // `ResourceList` (`rdmagen krm`); each item is linted in place.
    match list_items(&value) {
        Some(items) => {
            for (i, item) in items.iter().enumerate() {
                lint_object(linted, item, &format!("/items/{i}"), &doc, facts);
            }
        }
        None => lint_object(linted, &value, "", &doc, facts),
    }
}

/// The objects of a Kubernetes `List` (`apiVersion: v1`, `kind: List`, `items`) or of
/// a KRM [`ResourceList`](crate::krm).
fn list_items(value: &serde_json::Value) -> Option<&Vec<serde_json::Value>> {
    let is_list = value["apiVersion"] == "v1" && value["kind"] == "List"
        || crate::krm::is_resource_list(value);
    is_list.then(|| value["items"].as_array()).flatten()
}

/// Lint one object, found at `prefix` (a JSON pointer) in `doc`.
fn lint_object(
    linted: &mut Linted,
    value: &serde_json::Value,
    prefix: &str,
    doc: &Arc<Document>,
    facts: &ManifestFacts,
) {
    let locate = |pointer: &str| doc.locate_pointer(&format!("{prefix}{pointer}"));
    if let Some(kind) = TrainerKind::of(value) {
        // Judged in `finish`, with every other Trainer object read.
        match kind {
            TrainerKind::TrainJob => linted.train_jobs += 1,
            _ => linted.runtimes += 1,
        }
        linted.trainer_objects.push(trainer::Object {
            kind,
            value: value.clone(),
            doc: doc.clone(),
            prefix: prefix.to_owned(),
        });
        return;
    }
    if let Some(volume) = storage::volume(value) {
        linted.volumes.push(volume);
        linted.volumes_and_claims += 1;
        return;
    }
    if let Some(claim) = storage::claim(value, locate) {
        linted.claims.push(claim);
        linted.volumes_and_claims += 1;
        return;
    }
    if crate::mpijob::is_mpijob(value) {
        linted.jobs += 1;
        linted.mpi_jobs += 1;
        for mut finding in crate::mpijob::check(value, &facts.or_written(value)) {
            let pointer = finding.pointer.as_deref().unwrap_or("");
            finding.location = Some(locate(pointer));
            linted.findings.add(finding);
        }
        return;
    }
    if !manifest::is_pytorchjob(value) {
        if let Some((pointer, why)) = near_miss(value) {
            linted
                .near_misses
                .push(format!("{}: {why}", locate(pointer)));
        }
        return;
    }
    linted.jobs += 1;
    for mut finding in manifest::check(value, &facts.or_written(value)) {
        let pointer = finding.pointer.as_deref().unwrap_or("");
        finding.location = Some(locate(pointer));
        linted.findings.add(finding);
    }
}

/// The `rdmagen.io/ignore` annotations of a document's `metadata` (covering the
/// document) and of each PyTorchJob replica's or Trainer runtime's replicated job's pod
/// template (covering the template).
/// An object's annotation is found on each item of a Kubernetes `List` too. A pod
/// template's annotation that repeats its object's (a rendered Job's annotations land
/// on both) is the same suppression, already covering the template.
fn read_annotations(doc: &Document, suppressions: &mut Suppressions) {
    use crate::yaml::tree::NodeKind;
    fn annotation(object: &Node) -> Option<&Node> {
        object
            .get("metadata")?
            .get("annotations")?
            .get(IGNORE_ANNOTATION)
    }
    let is_list = doc.root.get("kind").and_then(Node::as_str) == Some("List");
    let objects: Vec<&Node> = match doc.root.get("items").map(|i| &i.kind) {
        Some(NodeKind::Sequence(items)) if is_list => items.iter().collect(),
        _ => vec![&doc.root],
    };
    for object in objects {
        let own = annotation(object).and_then(Node::as_str);
        let mut annotated = vec![object];
        let mut templates: Vec<&Node> = Vec::new();
        // A PyTorchJob's or an MPIJob's replica specs.
        for key in ["pytorchReplicaSpecs", "mpiReplicaSpecs"] {
            let replicas = object.get("spec").and_then(|s| s.get(key));
            if let Some(NodeKind::Mapping(entries)) = replicas.map(|r| &r.kind) {
                templates.extend(entries.iter().filter_map(|(_, r)| r.get("template")));
            }
        }
        // A runtime's spec.template.spec.replicatedJobs[].template.spec.template.
        let jobs = ["spec", "template", "spec", "replicatedJobs"]
            .iter()
            .try_fold(object, |node, key| node.get(key));
        if let Some(NodeKind::Sequence(jobs)) = jobs.map(|j| &j.kind) {
            templates.extend(jobs.iter().filter_map(|j| {
                ["template", "spec", "template"]
                    .iter()
                    .try_fold(j, |node, key| node.get(key))
            }));
        }
        annotated.extend(
            templates
                .into_iter()
                .filter(|t| own.is_none() || annotation(t).and_then(Node::as_str) != own),
        );
        for node in annotated {
            if let Some(value) = annotation(node)
                && let Some(text) = value.as_str()
            {
                let at = doc.location(value.line, value.column);
                suppressions.annotation(text, at, node.line, node.end.0);
            }
        }
    }
}

/// What keeps a document that was probably meant as a PyTorchJob or a Trainer object
/// from being one, and where: a misspelt kind, a wrong apiVersion, or an rdmagen input
/// given to lint.
fn near_miss(doc: &serde_json::Value) -> Option<(&'static str, String)> {
    let kind = doc["kind"].as_str()?;
    let api_version = doc["apiVersion"].as_str().unwrap_or("");
    if api_version.starts_with("rdmagen/") {
        let why = format!("kind {kind} is an rdmagen input; `rdmagen validate` checks those");
        return Some(("/kind", why));
    }
    if kind == "PyTorchJob" {
        let why = format!("apiVersion `{api_version}` is not kubeflow.org/v1");
        return Some(("/apiVersion", why));
    }
    if let Some(miss) = trainer::near_miss(doc) {
        return Some(miss);
    }
    let kinds = std::iter::once("PyTorchJob").chain(TrainerKind::ALL.map(TrainerKind::name));
    let right = closest(kind, kinds)?;
    Some(("/kind", format!("kind `{kind}`; did you mean {right}?")))
}
