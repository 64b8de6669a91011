//! Verify: rendered text is parsed back and checked before anything is written —
//! against rdmagen's schema of the PyTorchJob envelope, Kubernetes' own schema for
//! every pod template, PersistentVolume and PersistentVolumeClaim, every error-level
//! manifest rule (the operator webhook's among them, and the API server's validation
//! of each container's requests and limits, `resources`), and the plan itself (image,
//! command and environment must read back exactly).

pub mod mpijob_fidelity;
pub mod trainer_fidelity;

use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use crate::diagnostics::message::{
    MAX_QUOTED, path_or_root, pointer_segment, quoted, schema_message,
};
use crate::diagnostics::suggest;
use crate::diagnostics::{Finding, Rule, Severity};
use crate::kubernetes::KUBERNETES_VERSION;
use crate::kubernetes::definitions::{
    self, PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, POD_TEMPLATE_SPEC,
};
use crate::kubernetes::quick_schema::{self, Dialect};
use crate::kubernetes::schema_tree::Node;
use crate::plan::pod_parts::TRAINING_CONTAINER;
use crate::plan::trainer::RuntimePlan;
use crate::plan::{self, Plan};
use crate::rules::manifest::{self, ManifestFacts};
use crate::rules::trainer;

/// The schema of the PyTorchJob envelope rdmagen renders (`rdmagen schema pytorchjob`).
pub const OUTPUT_SCHEMA: &str = include_str!("../../schemas/pytorchjob.schema.json");

/// The tree of [`OUTPUT_SCHEMA`] for the quick walk, from the binary form build.rs
/// writes of it.
fn read_output_schema() -> Node<'static> {
    Node::decode(include_bytes!(concat!(env!("OUT_DIR"), "/pytorchjob.tree")))
}

/// The replicas whose pod templates are checked; the envelope schema allows no other.
const ROLES: [&str; 2] = ["Master", "Worker"];

/// Holds the compiled schemas; build once per run.
pub struct Verifier {
    envelope: Quick,
    pod_template: Quick,
    /// Compiled on first use (2-3 ms): most runs render no storage.yaml.
    persistent_volume: OnceLock<Schema>,
    persistent_volume_claim: OnceLock<Schema>,
}

impl Verifier {
    pub fn new() -> Self {
        // rdmagen's envelope is 2020-12 (no format asserted), the Kubernetes schemas
        // draft 7, whose formats jsonschema asserts.
        let envelope = Dialect {
            draft7: false,
            formats: false,
        };
        let kubernetes = Dialect {
            draft7: true,
            formats: true,
        };
        Verifier {
            envelope: Quick::new(read_output_schema, envelope, || {
                let envelope: Value = serde_json::from_str(OUTPUT_SCHEMA)
                    .expect("schemas/pytorchjob.schema.json is valid JSON");
                Schema::new(envelope, Rule::RenderedSchema)
            }),
            pod_template: Quick::new(definitions::pod_template_spec_quick, kubernetes, || {
                Schema::kubernetes(POD_TEMPLATE_SPEC)
            }),
            persistent_volume: OnceLock::new(),
            persistent_volume_claim: OnceLock::new(),
        }
    }

    /// Check a PyTorchJob rendered by a user's template: its text parsed back, then
    /// judged as [`Verifier::pytorchjob`] judges a built one.
    pub fn pytorchjob_text(&self, text: &str, plan: &Plan) -> Vec<Finding> {
        match one_document(text) {
            Ok(doc) => self.pytorchjob(&doc, plan),
            Err(problem) => vec![problem],
        }
    }

    /// Check a PyTorchJob against the schemas, the webhook and the plan.
    pub fn pytorchjob(&self, doc: &Value, plan: &Plan) -> Vec<Finding> {
        let mut problems = self.envelope.problems(doc, "");
        let mut valid: Option<&Value> = None;
        for role in ROLES {
            let template = &doc["spec"]["pytorchReplicaSpecs"][role]["template"];
            // A template that is missing or not an object is the envelope's finding.
            // Master's and Worker's are the same pod as a rule: one found valid
            // vouches for the other.
            if template.is_object() && !valid.is_some_and(|v| same(v, template)) {
                let found = self.pod_template(template, role);
                if found.is_empty() {
                    valid = Some(template);
                }
                problems.extend(found);
            }
        }
        // Rendered output is judged on the cluster its plan targets.
        let facts = ManifestFacts {
            operator: plan.target.operator,
            platform: Some(plan.target.platform),
            kubernetes: plan.target.kubernetes,
            // Errors only: RDG043, a warning, is lint's to report.
            management_nic: None,
        };
        problems.extend(rendered_errors(manifest::check(doc, &facts)));
        problems.extend(fidelity(doc, plan));
        problems
    }

    /// Check an MPIJob rendered by a user's template: its text parsed back, then judged
    /// as [`Verifier::mpijob`] judges a built one.
    pub fn mpijob_text(&self, text: &str, plan: &Plan) -> Vec<Finding> {
        match one_document(text) {
            Ok(doc) => self.mpijob(&doc, plan),
            Err(problem) => vec![problem],
        }
    }

    /// Check an MPIJob: each replica's pod template against Kubernetes' PodTemplateSpec,
    /// and every value against the plan (mpijob_fidelity.rs).
    pub fn mpijob(&self, doc: &Value, plan: &Plan) -> Vec<Finding> {
        let Some(mpi) = &plan.mpi_job else {
            return vec![problem(Rule::RenderedFidelity, "no MPIJob was planned")];
        };
        let mut problems = Vec::new();
        for role in [crate::kubeflow::mpi::LAUNCHER, crate::kubeflow::mpi::WORKER] {
            let template = &doc["spec"]["mpiReplicaSpecs"][role]["template"];
            let at = format!("/spec/mpiReplicaSpecs/{role}/template");
            problems.extend(self.pod_template.problems(template, &at));
        }
        // Judged as lint judges an MPIJob: the CRD, strictly, and every pod rule on
        // each replica, on the cluster the plan targets.
        let facts = ManifestFacts {
            operator: None,
            platform: Some(plan.target.platform),
            kubernetes: plan.target.kubernetes,
            // Errors only: RDG043, a warning, is lint's to report.
            management_nic: None,
        };
        problems.extend(rendered_errors(crate::rules::mpijob::check(doc, &facts)));
        problems.extend(mpijob_fidelity::fidelity(doc, plan, mpi));
        problems
    }

    /// Check a rendered (Cluster)TrainingRuntime: one document, its `node` pod template
    /// against Kubernetes' PodTemplateSpec, and every value against the plan.
    pub fn training_runtime(&self, text: &str, runtime: &RuntimePlan) -> Vec<Finding> {
        let doc = match one_document(text) {
            Ok(doc) => doc,
            Err(problem) => return vec![problem],
        };
        let mut problems = Vec::new();
        // Every job's pod template (an MPI runtime's `launcher` too) against Kubernetes'.
        for at in trainer_fidelity::pod_pointers(&doc) {
            if let Some(pod) = doc.pointer(&at) {
                problems.extend(self.pod_template.problems(pod, &at));
            }
        }
        problems.extend(trainer_fidelity::runtime_fidelity(&doc, runtime));
        // The plan of the runtime has judged its pod for the cluster's Kubernetes.
        let facts = ManifestFacts {
            operator: None,
            platform: Some(runtime.platform),
            kubernetes: None,
            // Errors only: RDG043, a warning, is lint's to report.
            management_nic: None,
        };
        problems.extend(trainer_errors(
            std::slice::from_ref(&doc),
            0,
            runtime.target.release.version,
            &facts,
        ));
        problems
    }

    /// Check a TrainJob rendered by a user's template: its text parsed back, then
    /// judged as [`Verifier::trainjob`] judges a built one.
    pub fn trainjob_text(&self, text: &str, plan: &Plan) -> Vec<Finding> {
        match one_document(text) {
            Ok(doc) => self.trainjob(&doc, plan),
            Err(problem) => vec![problem],
        }
    }

    /// Check a TrainJob, and the pod Trainer makes of it and its runtime, against the
    /// plan.
    pub fn trainjob(&self, doc: &Value, plan: &Plan) -> Vec<Finding> {
        let Some(train_job) = &plan.train_job else {
            return vec![problem(Rule::RenderedFidelity, "no TrainJob was planned")];
        };
        let mut problems = Vec::new();
        if train_job.effective_pods.is_empty() {
            let made = trainer_fidelity::pod_trainer_makes(
                &train_job.runtime_pod,
                doc,
                train_job.target.release,
            );
            problems.extend(self.pod_template.problems(&made, "(the pod it makes)"));
            problems.extend(trainer_fidelity::train_job_fidelity(
                doc, &made, &plan.name, train_job,
            ));
        } else {
            // An MPI runtime: the launcher's and the nodes' pods, with what the MPI
            // plugin adds to them.
            let made = trainer_fidelity::mpi_pods_trainer_makes(doc, train_job);
            for (job, pod) in &made {
                let at = format!("(the `{job}` pod it makes)");
                problems.extend(self.pod_template.problems(pod, &at));
            }
            problems.extend(trainer_fidelity::mpi_train_job_fidelity(
                doc, &made, &plan.name, train_job,
            ));
        }
        // Judged with its runtime, as lint judges them: the CRD of the release, the
        // torch plugin's reserved variables, and the pod-level rules on the pod the
        // TrainJob gets.
        let facts = ManifestFacts {
            operator: None,
            platform: Some(plan.target.platform),
            kubernetes: plan.target.kubernetes,
            // Errors only: RDG043, a warning, is lint's to report.
            management_nic: None,
        };
        let docs = [train_job.runtime_doc.clone(), doc.clone()];
        problems.extend(trainer_errors(
            &docs,
            1,
            train_job.target.release.version,
            &facts,
        ));
        problems
    }

    /// Check the pod template of replica `role` against Kubernetes' PodTemplateSpec;
    /// the messages give paths in the PyTorchJob.
    pub fn pod_template(&self, template: &Value, role: &str) -> Vec<Finding> {
        let at = format!(
            "/spec/pytorchReplicaSpecs/{}/template",
            pointer_segment(role)
        );
        self.pod_template.problems(template, &at)
    }

    /// Check rendered PersistentVolume/Claim documents against Kubernetes' schemas and
    /// the plan.
    pub fn storage(&self, text: &str, plan: &Plan) -> Vec<Finding> {
        let docs = match parse(text) {
            Ok(docs) => docs,
            Err(message) => return vec![problem(Rule::RenderedSchema, message)],
        };
        let mut problems: Vec<Finding> = docs
            .iter()
            .enumerate()
            .flat_map(|(i, doc)| self.storage_document(doc, i))
            .collect();
        let expected: Vec<(&str, &str)> = plan
            .storage
            .iter()
            .flat_map(|s| {
                [
                    ("PersistentVolume", s.volume_name.as_str()),
                    ("PersistentVolumeClaim", s.claim_name.as_str()),
                ]
            })
            .collect();
        let found: Vec<(&str, &str)> = docs
            .iter()
            .map(|d| {
                (
                    d["kind"].as_str().unwrap_or(""),
                    d["metadata"]["name"].as_str().unwrap_or(""),
                )
            })
            .collect();
        if found != expected {
            problems.push(problem(
                Rule::RenderedFidelity,
                format!("storage documents {found:?} differ from the plan's {expected:?}"),
            ));
        }
        problems
    }

    /// preflight.yaml: one ConfigMap, as the API server would take it, of the plan's
    /// name and namespace, holding the embedded script exactly.
    pub fn preflight(&self, text: &str, plan: &Plan) -> Vec<Finding> {
        let Some(preflight) = &plan.preflight else {
            return vec![problem(
                Rule::RenderedFidelity,
                "preflight.yaml was rendered for a plan without a preflight",
            )];
        };
        let docs = match parse(text) {
            Ok(docs) => docs,
            Err(message) => return vec![problem(Rule::RenderedSchema, message)],
        };
        let [doc] = docs.as_slice() else {
            return vec![problem(
                Rule::RenderedFidelity,
                format!(
                    "preflight.yaml holds {} documents, not one ConfigMap",
                    docs.len()
                ),
            )];
        };
        let mut out: Vec<Finding> = crate::kubernetes::config_map::problems(doc)
            .into_iter()
            .map(|p| problem(Rule::RenderedSchema, format!("ConfigMap {p}")))
            .collect();
        let script = Some((preflight.script_file, preflight.script));
        out.extend(
            crate::kubernetes::config_map::script_read_back(
                doc,
                &preflight.config_map,
                plan.namespace.as_deref(),
                script,
            )
            .into_iter()
            .map(|p| problem(Rule::RenderedFidelity, format!("preflight.yaml: {p}"))),
        );
        out
    }

    /// Check document `index` (from 0) of storage.yaml against Kubernetes' schema for
    /// its kind. A document of any other kind is left to the comparison with the plan.
    pub fn storage_document(&self, doc: &Value, index: usize) -> Vec<Finding> {
        let (schema, root, kind) = match doc["kind"].as_str() {
            Some("PersistentVolume") => (
                &self.persistent_volume,
                PERSISTENT_VOLUME,
                "PersistentVolume",
            ),
            Some("PersistentVolumeClaim") => (
                &self.persistent_volume_claim,
                PERSISTENT_VOLUME_CLAIM,
                "PersistentVolumeClaim",
            ),
            _ => return Vec::new(),
        };
        let schema = schema.get_or_init(|| Schema::kubernetes(root));
        let mut problems = schema.problems(doc, "");
        for p in &mut problems {
            p.message = format!("document {} ({kind}) at {}", index + 1, p.message);
        }
        problems
    }
}

/// A schema checked by the quick walk (kubernetes/quick_schema.rs) and compiled only
/// for a value the walk does not find valid: the compiled validator gives the findings.
/// Compiling the PodTemplateSpec closure cost 3-5 ms of CPU at every start (on a thread
/// of its own, 1-3 ms of wall time), and valid output never needs it.
struct Quick {
    /// The schema the walk reads, read on first use.
    quick: OnceLock<Node<'static>>,
    read: fn() -> Node<'static>,
    dialect: Dialect,
    full: OnceLock<Schema>,
    compile: fn() -> Schema,
}

impl Quick {
    fn new(read: fn() -> Node<'static>, dialect: Dialect, compile: fn() -> Schema) -> Self {
        Quick {
            quick: OnceLock::new(),
            read,
            dialect,
            full: OnceLock::new(),
            compile,
        }
    }

    fn problems(&self, value: &Value, at: &str) -> Vec<Finding> {
        let quick = self.quick.get_or_init(self.read);
        if quick_schema::is_valid(quick, value, self.dialect) == Some(true) {
            return Vec::new();
        }
        self.full.get_or_init(self.compile).problems(value, at)
    }
}

/// A compiled schema, the document it was compiled from (to name what an object
/// allows when it has an unknown field), and the rule its findings carry.
struct Schema {
    validator: jsonschema::Validator,
    document: Value,
    rule: Rule,
}

impl Schema {
    fn new(document: Value, rule: Rule) -> Self {
        let validator = jsonschema::validator_for(&document)
            .unwrap_or_else(|e| panic!("an embedded schema does not compile: {e}"));
        Schema {
            validator,
            document,
            rule,
        }
    }

    /// One of Kubernetes' definitions, made strict (crates/upstream/src/kubernetes/definitions.rs).
    fn kubernetes(root: &str) -> Self {
        Schema::new(
            definitions::standalone(root),
            Rule::RenderedKubernetesSchema,
        )
    }

    /// `value`'s errors, each message starting with the value's path in the rendered
    /// document: `at`, then the path inside `value`.
    fn problems(&self, value: &Value, at: &str) -> Vec<Finding> {
        // Valid output is the common case; is_valid skips building errors.
        if self.validator.is_valid(value) {
            return Vec::new();
        }
        let mut problems = Vec::new();
        for e in self.validator.iter_errors(value) {
            let path = format!("{at}{}", e.instance_path());
            match e.kind() {
                ValidationErrorKind::AdditionalProperties { unexpected } => {
                    for field in unexpected {
                        let message = self.unknown_field(&path, field, e.schema_path().as_str());
                        let pointer = format!("{path}/{}", pointer_segment(field));
                        problems.push(Finding::at_pointer(self.rule, message, pointer));
                    }
                }
                _ => problems.push(Finding::at_pointer(
                    self.rule,
                    format!("{}: {}", path_or_root(&path), schema_message(&e)),
                    path,
                )),
            }
        }
        problems
    }

    /// `PATH/FIELD: unknown field`, naming the Kubernetes definition that has no such
    /// field, and the field it most likely meant. `keyword` is where the schema says
    /// `additionalProperties: false` (`/definitions/io.k8s.api.core.v1.PodSpec/
    /// additionalProperties`); the object's own schema is beside it.
    fn unknown_field(&self, path: &str, field: &str, keyword: &str) -> String {
        let mut message = if field.len() <= MAX_QUOTED {
            format!("{path}/{}: unknown field", pointer_segment(field))
        } else {
            format!(
                "{}: unknown field (a name of {} bytes)",
                path_or_root(path),
                field.len()
            )
        };
        let object = keyword.strip_suffix("/additionalProperties");
        if let Some(name) = object.and_then(|o| o.strip_prefix("/definitions/io.k8s.")) {
            let short = name.rsplit('.').next().unwrap_or(name);
            message.push_str(&format!(
                ", not in Kubernetes {KUBERNETES_VERSION}'s {short}"
            ));
        }
        let known = object
            .and_then(|o| self.document.pointer(o))
            .and_then(|schema| schema["properties"].as_object());
        if let Some(near) =
            known.and_then(|k| suggest::closest(field, k.keys().map(String::as_str)))
        {
            message.push_str(&format!(" (did you mean {near}?)"));
        }
        message
    }
}

impl Default for Verifier {
    fn default() -> Self {
        Self::new()
    }
}

/// Warnings `lint` would make of a rendered pod that no decision of the plan covers,
/// so render makes them too: the job's or the pool's runAsUser beside the IPC_LOCK
/// rdmagen adds (RDG182). Other warnings are about values the plan chose and already
/// judged at their input.
const RENDERED_WARNINGS: &[Rule] = &[Rule::IpcLockNonRoot];

/// The error-level findings of `lint`'s rules about a rendered job manifest, and its
/// [`RENDERED_WARNINGS`] once each (its replicas are one pod as far as a rendered
/// warning goes), each message starting with its path in the document.
fn rendered_errors(found: Vec<Finding>) -> Vec<Finding> {
    let mut warned = std::collections::HashSet::new();
    found
        .into_iter()
        .filter(|p| {
            p.rule.info().severity == Severity::Error
                || RENDERED_WARNINGS.contains(&p.rule) && warned.insert(p.message.clone())
        })
        .map(|p| {
            let pointer = p.pointer.unwrap_or_default();
            let message = format!("{}: {}", path_or_root(&pointer), p.message);
            Finding::at_pointer(p.rule, message, pointer)
        })
        .collect()
}

/// The error-level findings (and [`RENDERED_WARNINGS`]) `lint` makes about document
/// `index` of `docs` (rendered Trainer objects), each message starting with its path in the document.
fn trainer_errors(
    docs: &[Value],
    index: usize,
    release: crate::version::Version,
    facts: &ManifestFacts,
) -> Vec<Finding> {
    // RDG152/153 guard a hand-written resourcesPerNode that repeats too little of the
    // runtime's; rdmagen writes the job's whole set, and plan::trainer has already
    // compared the pod it gives with the plan's (RDG136, RDG137).
    let decided = [
        Rule::ResourcesPerNodeReplaces,
        Rule::ResourcesPerNodeUnknownRuntime,
    ];
    trainer::check_all(docs, trainer::TrainerRelease::given(release), facts)
        .into_iter()
        .filter(|(i, f)| {
            *i == index
                && (f.rule.info().severity == Severity::Error
                    || RENDERED_WARNINGS.contains(&f.rule))
        })
        .filter(|(_, f)| !decided.contains(&f.rule))
        .map(|(_, p)| {
            let pointer = p.pointer.unwrap_or_default();
            let message = format!("{}: {}", path_or_root(&pointer), p.message);
            Finding::at_pointer(p.rule, message, pointer)
        })
        .collect()
}

/// The one document of a rendered file.
fn one_document(text: &str) -> Result<Value, Finding> {
    let docs = parse(text).map_err(|message| problem(Rule::RenderedSchema, message))?;
    match <[Value; 1]>::try_from(docs) {
        Ok([doc]) => Ok(doc),
        Err(docs) => Err(problem(
            Rule::RenderedSchema,
            format!("expected one document, found {}", docs.len()),
        )),
    }
}

fn problem(rule: Rule, message: impl Into<String>) -> Finding {
    Finding::new(rule, message, None)
}

/// Parse rendered YAML the way a strict consumer would: YAML 1.1 booleans stay
/// strings, and duplicate keys are errors.
pub fn parse(text: &str) -> Result<Vec<Value>, String> {
    crate::yaml::tree_value::parse_values(text).map_err(|e| {
        format!(
            "rendered text is not valid YAML at line {}, column {}: {}",
            e.line, e.column, e.message
        )
    })
}

/// What the plan decided must read back unchanged from every replica.
fn fidelity(doc: &Value, plan: &Plan) -> Vec<Finding> {
    let mut out = Vec::new();
    let mismatch = |what: &str, found: &Value| {
        problem(
            Rule::RenderedFidelity,
            format!("{what} reads back as {}", quoted(found)),
        )
    };
    if doc["metadata"]["name"] != plan.name.as_str() {
        out.push(mismatch("metadata.name", &doc["metadata"]["name"]));
    }
    let Some(specs) = doc["spec"]["pytorchReplicaSpecs"].as_object() else {
        return out;
    };
    // The plan's pod template is the truth, overlays included.
    // Borrowed, not cloned: copying the planned container and both envs was 3 % of
    // `validate`'s CPU (perf, 10 000 jobs).
    static NONE: Value = Value::Null;
    static NO_ENV: Value = Value::Array(Vec::new());
    let planned = plan.pod.template["spec"]["containers"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == TRAINING_CONTAINER))
        .unwrap_or(&NONE);
    let env = planned.get("env").unwrap_or(&NO_ENV);
    for (role, replica) in specs {
        let Some(container) = replica["template"]["spec"]["containers"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["name"] == TRAINING_CONTAINER))
        else {
            continue;
        };
        if container["image"] != planned["image"] {
            out.push(mismatch(&format!("{role} image"), &container["image"]));
        }
        if container["command"] != planned["command"] {
            out.push(mismatch(&format!("{role} command"), &container["command"]));
        }
        let found_env = container.get("env").unwrap_or(&NO_ENV);
        if found_env != env {
            out.push(mismatch(&format!("{role} env"), found_env));
        }
    }
    // Everything else the plan put in the pod template must read back too: the RDMA
    // resource, IPC_LOCK, volumes and mounts, the GPU count. A template may add a
    // field (imagePullSecrets), never drop or change one the plan decided. Without
    // this, a `--templates` override that dropped the RDMA resource and IPC_LOCK
    // rendered a job without RDMA, and no rule said so.
    for (role, replica) in specs {
        // The usual case, and a cheap one to tell: the pod template is the plan's.
        if same(&replica["template"], &plan.pod.template) {
            continue;
        }
        for difference in plan::trainer::differences(&plan.pod.template, &replica["template"]) {
            if let plan::trainer::Difference::Lost { path, want } = difference
                && !read_back_above(&path)
            {
                out.push(problem(
                    Rule::RenderedFidelity,
                    format!(
                        "{role} pod template: {path} does not read back as the plan's {}",
                        quoted(&want)
                    ),
                ));
            }
        }
    }
    out
}

/// `a == b`, faster when two maps hold their keys in the same order (a rendered pod
/// template and the plan's always do): serde_json compares maps by looking up each key
/// of one in the other, a SipHash each, which made these comparisons of whole pod
/// templates 8 % of `validate`'s CPU (perf, 10 000 jobs). Maps whose keys are not in
/// the same order are compared as serde_json compares them, so the answer is `==`'s.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() {
                return false;
            }
            if !x.keys().eq(y.keys()) {
                return a == b;
            }
            x.values().zip(y.values()).all(|(v, w)| same(v, w))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same(v, w))
        }
        _ => a == b,
    }
}

/// Whether `path` (as [`plan::trainer::differences`] names it) is the training
/// container's image, command or env, which [`fidelity`] names on its own.
fn read_back_above(path: &str) -> bool {
    let container = format!("spec.containers[{TRAINING_CONTAINER}].");
    let Some(field) = path.strip_prefix(&container) else {
        return false;
    };
    ["image", "command", "env"].iter().any(|name| {
        field
            .strip_prefix(name)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_envelope_schema_read_is_its_json() {
        let value: Value = serde_json::from_str(OUTPUT_SCHEMA).expect("JSON");
        let parsed = Node::parse(OUTPUT_SCHEMA).expect("JSON");
        assert!(read_output_schema().equals(&value));
        assert!(read_output_schema().identical(&parsed));
    }

    #[test]
    fn same_is_equality_whatever_the_order_of_keys() {
        let values = [
            json!({"a": 1, "b": [1, {"c": 2, "d": 3}]}),
            json!({"b": [1, {"d": 3, "c": 2}], "a": 1}),
            json!({"a": 1, "b": [1, {"c": 2, "d": 4}]}),
            json!({"a": 1, "b": [1, {"c": 2}]}),
            json!({"a": 1, "c": [1, {"c": 2, "d": 3}]}),
            json!({"a": 1.0, "b": [1, {"c": 2, "d": 3}]}),
            json!([1, 2]),
            json!([2, 1]),
            json!(null),
            json!("a"),
        ];
        for a in &values {
            for b in &values {
                assert_eq!(same(a, b), a == b, "{a} {b}");
            }
        }
    }

    fn messages(problems: Vec<Finding>) -> Vec<String> {
        problems
            .into_iter()
            .map(|p| format!("{}: {}", p.rule.info().id, p.message))
            .collect()
    }

    fn pod(spec: Value) -> Value {
        json!({"metadata": {}, "spec": spec})
    }

    #[test]
    fn pod_templates_are_checked_against_kubernetes_and_named_by_path() {
        let verifier = Verifier::new();
        let container = json!({"name": "pytorch", "image": "img:1"});
        let ok = pod(json!({"containers": [container],
            "imagePullSecrets": [{"name": "regcred"}], "hostNetwork": true}));
        assert!(verifier.pod_template(&ok, "Master").is_empty());

        let typo = pod(json!({"containers": [container], "imagePullSecret": "regcred"}));
        assert_eq!(
            messages(verifier.pod_template(&typo, "Worker")),
            [
                "RDG095: /spec/pytorchReplicaSpecs/Worker/template/spec/imagePullSecret: unknown field, \
              not in Kubernetes 1.33's PodSpec (did you mean imagePullSecrets?)"
            ]
        );
        let misplaced = pod(json!({"containers": [
            {"name": "pytorch", "image": "img:1", "imagePullSecrets": [{"name": "regcred"}]}]}));
        assert_eq!(
            messages(verifier.pod_template(&misplaced, "Master")),
            [
                "RDG095: /spec/pytorchReplicaSpecs/Master/template/spec/containers/0/imagePullSecrets: \
              unknown field, not in Kubernetes 1.33's Container"
            ]
        );
        let wrong_type = pod(json!({"containers": [container], "hostNetwork": "yes"}));
        assert_eq!(
            messages(verifier.pod_template(&wrong_type, "Master")),
            [
                "RDG095: /spec/pytorchReplicaSpecs/Master/template/spec/hostNetwork: \"yes\" is not of type \"boolean\""
            ]
        );
        let odd_name = pod(json!({"containers": [container], "a/b~c": 1}));
        assert_eq!(
            messages(verifier.pod_template(&odd_name, "Master")),
            [
                "RDG095: /spec/pytorchReplicaSpecs/Master/template/spec/a~1b~0c: unknown field, \
              not in Kubernetes 1.33's PodSpec"
            ]
        );
        let long = "x".repeat(MAX_QUOTED + 1);
        let long_name = pod(json!({"containers": [container], long.as_str(): 1}));
        assert_eq!(
            messages(verifier.pod_template(&long_name, "Master")),
            [format!(
                "RDG095: /spec/pytorchReplicaSpecs/Master/template/spec: unknown field (a name of {} bytes), \
                 not in Kubernetes 1.33's PodSpec",
                MAX_QUOTED + 1
            )]
        );
    }

    #[test]
    fn storage_documents_are_checked_against_kubernetes() {
        let verifier = Verifier::new();
        let pv = json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "data-pv"},
            "spec": {"accessModes": ["ReadWriteMany"], "capacity": {"storage": "1Ti"},
                     "nfs": {"server": "10.0.0.1", "path": "/data"}}});
        assert!(verifier.storage_document(&pv, 0).is_empty());
        let mut bad = pv.clone();
        bad["spec"]["nfs"]["readonly"] = json!(true);
        assert_eq!(
            messages(verifier.storage_document(&bad, 0)),
            [
                "RDG095: document 1 (PersistentVolume) at /spec/nfs/readonly: unknown field, \
              not in Kubernetes 1.33's NFSVolumeSource (did you mean readOnly?)"
            ]
        );
        let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data"}, "spec": {"volumeName": 3}});
        assert_eq!(
            messages(verifier.storage_document(&pvc, 1)),
            [
                "RDG095: document 2 (PersistentVolumeClaim) at /spec/volumeName: 3 is not of type \"string\""
            ]
        );
    }

    #[test]
    fn the_envelope_names_unknown_fields_too() {
        let envelope: Value = serde_json::from_str(OUTPUT_SCHEMA).unwrap();
        let schema = Schema::new(envelope, Rule::RenderedSchema);
        let doc = json!({"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
            "metadata": {"name": "j"},
            "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1,
                "restartPolicy": "OnFailure", "template": {"metadata": {}, "spec": {}},
                "restartPolcy": "Never"}}}});
        assert_eq!(
            messages(schema.problems(&doc, "")),
            [
                "RDG090: /spec/pytorchReplicaSpecs/Master/restartPolcy: unknown field (did you mean restartPolicy?)"
            ]
        );
    }
}
