//! Strict validation of Kubeflow Trainer v2 objects (`TrainJob`, `TrainingRuntime`,
//! `ClusterTrainingRuntime`; `trainer.kubeflow.org/v1alpha1`) against the upstream CRDs
//! of the Trainer release a cluster runs.
//!
//! # API
//!
//! - [`check`]`(doc: &serde_json::Value, release: Version) -> Vec<Finding>`: every way
//!   `doc` does not match the CRD of its kind for Trainer `release`
//!   (`crate::model::target::Version`, e.g. `Version::new(2, 3)`). Each finding is
//!   [`Rule::TrainerCrd`] (RDG150, an error) at a JSON Pointer into `doc`
//!   ([`Finding::pointer`]), and its message starts with that path or names it, e.g.
//!   `'numProcPerNode' was unexpected at /spec/mlPolicy/torch: ...`. An empty list
//!   means the object is valid. A document that is not one of the three kinds, or a
//!   release rdmagen has no CRDs for (below 2.1), is one finding at `""`.
//! - [`TrainerKind::of`]`(doc)`: which of the three kinds `doc` is, if any.
//! - [`CrdRelease::for_release`]`(release)`: the vendored CRDs that judge `release`,
//!   or `None` below 2.1 (see [`supported`]).
//! - [`prune`]`(doc, release) -> Value`: `doc` as the API server keeps it (every field
//!   the CRD lacks removed), for checks of what the cluster will really run.
//!
//! # Which CRDs judge which release
//!
//! rdmagen vendors the CRDs of two releases (tests/upstream/trainer-v2/SOURCE.md):
//!
//! - **v2.1.0** judges 2.1.x: `podTemplateOverrides`, `spec.labels`/`spec.annotations`
//!   on the TrainJob, `mlPolicy.torch.numProcPerNode` (`auto|cpu|gpu|int`).
//! - **v2.3.0** judges 2.2 and later. v2.2.0 replaced `podTemplateOverrides` (and the
//!   TrainJob's `labels`/`annotations`) with `runtimePatches` and removed
//!   `mlPolicy.torch.numProcPerNode` and `elasticPolicy` (kubeflow/trainer#3309,
//!   #3239, #3235); v2.3.0 only added to that API. The fields v2.3.0 added (the
//!   TrainJob's `PodSpecPatch.terminationGracePeriodSeconds`,
//!   `mlPolicy.torch.envInjection`, JobSet's `RestartJob` failure actions) are reported
//!   on 2.2.x by [`check`] itself. A release after 2.3 is judged by v2.3.0, and each
//!   finding says so.
//! - Below 2.1 (v2.0's `podSpecOverrides`) is not supported.
//!
//! # What "strict" means
//!
//! A CRD's schema does not set `additionalProperties: false`, so the API server prunes
//! an unknown field without a word (or rejects it only with server-side field
//! validation "Strict"). [`strict`] converts the CRD's `openAPIV3Schema` the way
//! kubeconform `-strict` does, and a little further:
//!
//! - every object schema with `properties` and no `additionalProperties` or
//!   `x-kubernetes-preserve-unknown-fields` gets `additionalProperties: false`; so does
//!   an object with neither (an empty Go struct such as `mlPolicy.jax`: the API server
//!   prunes every field of it). The object's own `metadata` is the exception: the API
//!   server checks it as an ObjectMeta, which the CRD does not describe;
//! - `x-kubernetes-int-or-string: true` accepts an integer or a string (a float such as
//!   `cpu: 0.5` is neither, and the API server refuses it in a CRD object);
//! - `nullable: true` accepts `null`; `x-kubernetes-embedded-resource` allows
//!   `apiVersion`, `kind` and `metadata`; `x-kubernetes-list-type: set` is
//!   `uniqueItems`; `format: int32` bounds the integer;
//! - CEL `x-kubernetes-validations` cannot be evaluated here, but the rule shapes the
//!   vendored CRDs use are translated to JSON Schema and reported with the CRD's own
//!   message: the TrainJob name rule (`^[a-z]([-a-z0-9]*[a-z0-9])?$`, at most 63
//!   characters: the name becomes the JobSet's and part of `PET_MASTER_ADDR`),
//!   `managedBy`'s values, one ML policy at a time, and the others [`cel_rules`] lists.
//!   Transition rules (`self == oldSelf`, immutability) compare with a stored object
//!   and are left out. A rule of another shape is ignored (a test fails when a
//!   vendored CRD has one).
//!
//! The schemas are embedded as the CRDs' `openAPIV3Schema` without descriptions
//! (crates/upstream/schemas/trainer/, checked against the vendored CRDs by tests/cli/trainer_crd.rs),
//! and beside each its strict form, generated ahead of time (`*.strict.json`, checked
//! against [`strict`] of the first by the same tests). A run parses the strict schema
//! of the kind and release it meets and walks a valid object through it
//! (kubernetes/quick_schema.rs); it compiles the schema only for an object the walk
//! does not find valid, for the findings. Converting a CRD at run time cost about 2 ms
//! of CPU per schema (bench/RESULTS.md, issue 23).

use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use serde_json::{Map, Value, json};

use crate::diagnostics::suggest;
use crate::diagnostics::{Finding, Rule};
use crate::kubernetes::quick_schema::{self, Dialect};
use crate::kubernetes::schema_tree::Node;
// The releases and the apiVersion are facts of the Trainer room, named here for the
// CRD checks' callers.
use crate::diagnostics::message::{
    path_or_root, pointer_segment, quoted, schema_message, unexpected_field,
};
pub use crate::kubeflow::trainer::API_VERSION;
use crate::kubeflow::trainer::effective::items;
pub use crate::kubeflow::trainer::release::{LATEST, OLDEST};
use crate::version::Version;

/// The three Trainer v2 kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TrainerKind {
    TrainJob,
    TrainingRuntime,
    ClusterTrainingRuntime,
}

impl TrainerKind {
    pub const ALL: [TrainerKind; 3] = [
        TrainerKind::TrainJob,
        TrainerKind::TrainingRuntime,
        TrainerKind::ClusterTrainingRuntime,
    ];

    /// The `kind` as written in a manifest.
    pub fn name(self) -> &'static str {
        match self {
            TrainerKind::TrainJob => "TrainJob",
            TrainerKind::TrainingRuntime => "TrainingRuntime",
            TrainerKind::ClusterTrainingRuntime => "ClusterTrainingRuntime",
        }
    }

    /// The kind named `kind` (case-sensitive, as the API server reads it).
    pub fn from_name(kind: &str) -> Option<TrainerKind> {
        TrainerKind::ALL.into_iter().find(|k| k.name() == kind)
    }

    /// Which kind `doc` is: `apiVersion: trainer.kubeflow.org/v1alpha1` and one of the
    /// three kinds.
    pub fn of(doc: &Value) -> Option<TrainerKind> {
        if doc["apiVersion"] != API_VERSION {
            return None;
        }
        TrainerKind::from_name(doc["kind"].as_str()?)
    }

    /// A TrainingRuntime or ClusterTrainingRuntime (both have `TrainingRuntimeSpec`).
    pub fn is_runtime(self) -> bool {
        self != TrainerKind::TrainJob
    }
}

/// The vendored CRD sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CrdRelease {
    /// kubeflow/trainer v2.1.0: judges 2.1.x.
    V2_1_0,
    /// kubeflow/trainer v2.3.0: judges 2.2 and later.
    V2_3_0,
}

impl CrdRelease {
    pub const ALL: [CrdRelease; 2] = [CrdRelease::V2_1_0, CrdRelease::V2_3_0];

    /// The CRDs that judge Trainer `release`; `None` below 2.1.
    pub fn for_release(release: Version) -> Option<CrdRelease> {
        if release < OLDEST {
            None
        } else if release < Version::new(2, 2) {
            Some(CrdRelease::V2_1_0)
        } else {
            Some(CrdRelease::V2_3_0)
        }
    }

    /// The upstream tag, e.g. `v2.3.0`.
    pub fn tag(self) -> &'static str {
        match self {
            CrdRelease::V2_1_0 => "v2.1.0",
            CrdRelease::V2_3_0 => "v2.3.0",
        }
    }

    /// The release as a version (2.1, 2.3).
    pub fn version(self) -> Version {
        match self {
            CrdRelease::V2_1_0 => Version::new(2, 1),
            CrdRelease::V2_3_0 => Version::new(2, 3),
        }
    }

    /// The embedded `openAPIV3Schema` (without descriptions) of `kind`'s CRD as JSON
    /// text. TrainingRuntime and ClusterTrainingRuntime share one: their schemas differ
    /// only in descriptions.
    pub fn embedded(self, kind: TrainerKind) -> &'static str {
        match (self, kind.is_runtime()) {
            (CrdRelease::V2_1_0, false) => {
                include_str!("../../../schemas/trainer/v2.1.0/trainjobs.json")
            }
            (CrdRelease::V2_1_0, true) => {
                include_str!("../../../schemas/trainer/v2.1.0/trainingruntimes.json")
            }
            (CrdRelease::V2_3_0, false) => {
                include_str!("../../../schemas/trainer/v2.3.0/trainjobs.json")
            }
            (CrdRelease::V2_3_0, true) => {
                include_str!("../../../schemas/trainer/v2.3.0/trainingruntimes.json")
            }
        }
    }

    /// The strict schema of `kind`'s CRD ([`strict`] of [`embedded`](Self::embedded)) as
    /// committed JSON text, generated ahead of time so that a run never converts a CRD
    /// or translates its CEL rules: [`strict_text`] regenerates it, and
    /// tests/cli/trainer_crd.rs fails when the committed file differs.
    pub fn strict_embedded(self, kind: TrainerKind) -> &'static str {
        match (self, kind.is_runtime()) {
            (CrdRelease::V2_1_0, false) => {
                include_str!("../../../schemas/trainer/v2.1.0/trainjobs.strict.json")
            }
            (CrdRelease::V2_1_0, true) => {
                include_str!("../../../schemas/trainer/v2.1.0/trainingruntimes.strict.json")
            }
            (CrdRelease::V2_3_0, false) => {
                include_str!("../../../schemas/trainer/v2.3.0/trainjobs.strict.json")
            }
            (CrdRelease::V2_3_0, true) => {
                include_str!("../../../schemas/trainer/v2.3.0/trainingruntimes.strict.json")
            }
        }
    }

    /// The binary form of [`strict_embedded`](Self::strict_embedded), written by
    /// build.rs (kubernetes/schema_blob.rs): what a run reads.
    fn strict_blob(self, kind: TrainerKind) -> &'static [u8] {
        match (self, kind.is_runtime()) {
            (CrdRelease::V2_1_0, false) => include_bytes!(concat!(
                env!("OUT_DIR"),
                "/trainer-v2.1.0-trainjobs.strict.tree"
            )),
            (CrdRelease::V2_1_0, true) => include_bytes!(concat!(
                env!("OUT_DIR"),
                "/trainer-v2.1.0-trainingruntimes.strict.tree"
            )),
            (CrdRelease::V2_3_0, false) => include_bytes!(concat!(
                env!("OUT_DIR"),
                "/trainer-v2.3.0-trainjobs.strict.tree"
            )),
            (CrdRelease::V2_3_0, true) => include_bytes!(concat!(
                env!("OUT_DIR"),
                "/trainer-v2.3.0-trainingruntimes.strict.tree"
            )),
        }
    }

    fn index(self, kind: TrainerKind) -> usize {
        let release = match self {
            CrdRelease::V2_1_0 => 0,
            CrdRelease::V2_3_0 => 2,
        };
        release + usize::from(kind.is_runtime())
    }
}

/// Whether rdmagen can judge Trainer `release` (2.1 and later).
pub fn supported(release: Version) -> bool {
    CrdRelease::for_release(release).is_some()
}

/// `doc` as the API server keeps it for Trainer `release`: every field its CRD does
/// not have removed, as structural pruning does (the object's own `metadata` is the API
/// server's to judge, and stays whole). What a check of the effective object should
/// look at, where [`check`] reports what was written. A document that is not a Trainer
/// object, or a release without CRDs, comes back unchanged.
pub fn prune(doc: &Value, release: Version) -> Value {
    let mut kept = doc.clone();
    if let (Some(kind), Some(crd)) = (TrainerKind::of(doc), CrdRelease::for_release(release)) {
        prune_with(&mut kept, &compiled(crd, kind).tree);
    }
    kept
}

fn prune_with(value: &mut Value, schema: &Node) {
    match value {
        Value::Object(map) => {
            let properties = schema.get("properties").and_then(Node::as_object);
            let additional = schema.get("additionalProperties");
            map.retain(|key, v| {
                match (properties.and_then(|p| p.get(key)), additional) {
                    (Some(s), _) => prune_with(v, s),
                    (None, Some(additional @ Node::Object(_))) => prune_with(v, additional),
                    (None, Some(Node::Bool(false))) => return false,
                    (None, _) => {}
                }
                true
            });
        }
        Value::Array(items) => {
            if let Some(each @ Node::Object(_)) = schema.get("items") {
                for item in items {
                    prune_with(item, each);
                }
            }
        }
        _ => {}
    }
}

/// Why `release` cannot be judged, for a usage error or a finding.
pub fn unsupported(release: Version) -> String {
    format!(
        "Trainer {release} is not supported: rdmagen has the CRDs of v2.1.0 (for 2.1) and \
         v2.3.0 (for 2.2 and later); v2.0 had spec.podSpecOverrides, which neither knows"
    )
}

/// Every way `doc` does not match the upstream CRD of its kind for Trainer `release`,
/// strictly (see the module documentation). Findings are RDG150 at JSON Pointers into
/// `doc`.
pub fn check(doc: &Value, release: Version) -> Vec<Finding> {
    let Some(kind) = TrainerKind::of(doc) else {
        let message = format!(
            "not a Trainer v2 object: apiVersion {} and kind {}; expected apiVersion {API_VERSION} \
             and kind TrainJob, TrainingRuntime or ClusterTrainingRuntime",
            quoted(&doc["apiVersion"]),
            quoted(&doc["kind"]),
        );
        return vec![Finding::at_pointer(Rule::TrainerCrd, message, "")];
    };
    let Some(crd) = CrdRelease::for_release(release) else {
        return vec![Finding::at_pointer(
            Rule::TrainerCrd,
            unsupported(release),
            "",
        )];
    };
    let mut findings = compiled(crd, kind).problems(doc, kind, crd, release);
    if release.major == 2 && release.minor == 2 {
        findings.extend(added_in_v2_3(doc, kind));
    }
    if release > LATEST && (release.major, release.minor) != (LATEST.major, LATEST.minor) {
        for f in &mut findings {
            f.message.push_str(&format!(
                " (Trainer {release} is judged by the {} CRD, the newest rdmagen has)",
                crd.tag()
            ));
        }
    }
    findings
}

/// A strict schema as a tree (to walk a valid object without compiling, and to prune),
/// and, only for an object the quick walk does not find valid, the schema as a `Value`
/// with its compiled validator (to name what an object allows, and the CEL rule behind
/// an error): compiling one cost 2-4 ms of CPU at the first Trainer object of a run,
/// and parsing it as a `Value` 0.3-0.6 ms (bench/RESULTS.md, issue 23).
struct Compiled {
    tree: Node<'static>,
    text: &'static str,
    full: OnceLock<Full>,
    tag: &'static str,
}

/// The strict schema as serde_json reads it, and its validator.
struct Full {
    schema: Value,
    validator: jsonschema::Validator,
}

impl Full {
    /// The CEL rule and message an error's keyword location comes from, when it lies
    /// inside a translated rule (an `allOf` entry carrying `x-cel-message`).
    fn cel_behind(&self, keyword: &str) -> Option<(&str, &str)> {
        let segments: Vec<&str> = keyword.split('/').collect();
        (1..segments.len()).rev().find_map(|end| {
            if segments[end - 1] != "allOf" {
                return None;
            }
            let entry = self.schema.pointer(&segments[..=end].join("/"))?;
            Some((
                entry["x-cel-rule"].as_str()?,
                entry["x-cel-message"].as_str()?,
            ))
        })
    }
}

static COMPILED: [OnceLock<Compiled>; 4] = [const { OnceLock::new() }; 4];

fn compiled(crd: CrdRelease, kind: TrainerKind) -> &'static Compiled {
    COMPILED[crd.index(kind)].get_or_init(|| {
        let text = crd.strict_embedded(kind);
        Compiled {
            tree: Node::decode(crd.strict_blob(kind)),
            text,
            full: OnceLock::new(),
            tag: crd.tag(),
        }
    })
}

impl Compiled {
    fn full(&self) -> &Full {
        self.full.get_or_init(|| {
            let schema: Value =
                serde_json::from_str(self.text).expect("schemas/trainer/*.strict.json is JSON");
            let validator = jsonschema::draft7::new(&schema)
                .unwrap_or_else(|e| panic!("the strict Trainer {} schema compiles: {e}", self.tag));
            Full { schema, validator }
        })
    }

    fn problems(
        &self,
        doc: &Value,
        kind: TrainerKind,
        crd: CrdRelease,
        release: Version,
    ) -> Vec<Finding> {
        let draft7 = Dialect {
            draft7: true,
            formats: true,
        };
        if quick_schema::is_valid(&self.tree, doc, draft7) == Some(true) {
            return Vec::new();
        }
        let full = self.full();
        let validator = &full.validator;
        if validator.is_valid(doc) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for e in validator.iter_errors(doc) {
            let path = e.instance_path().as_str().to_owned();
            let keyword = e.schema_path().as_str().to_owned();
            if let Some((rule, message)) = full.cel_behind(&keyword) {
                let found = match e.instance().as_ref() {
                    v @ (Value::String(_) | Value::Number(_) | Value::Bool(_)) => {
                        format!(" (found {})", quoted(v))
                    }
                    _ => String::new(),
                };
                out.push(Finding::at_pointer(
                    Rule::TrainerCrd,
                    format!(
                        "{}: {message}{found}; the {} {} CRD's rule `{rule}`",
                        path_or_root(&path),
                        crd.tag(),
                        kind.name()
                    ),
                    path,
                ));
                continue;
            }
            match e.kind() {
                ValidationErrorKind::AdditionalProperties { unexpected } => {
                    let object = keyword.strip_suffix("/additionalProperties").unwrap_or("");
                    let known = full
                        .schema
                        .pointer(object)
                        .and_then(|s| s["properties"].as_object());
                    for field in unexpected {
                        let message = unknown_field(&path, field, known, kind, crd, release);
                        let pointer = format!("{path}/{}", pointer_segment(field));
                        out.push(Finding::at_pointer(Rule::TrainerCrd, message, pointer));
                    }
                }
                _ => {
                    let mut message = format!(
                        "{}: {} (the {} {} CRD)",
                        path_or_root(&path),
                        schema_message(&e),
                        crd.tag(),
                        kind.name()
                    );
                    let string = e.instance().is_string();
                    if kind == TrainerKind::TrainJob
                        && path == "/spec/trainer/numProcPerNode"
                        && crd == CrdRelease::V2_3_0
                        && string
                    {
                        message.push_str(
                            "; Trainer v2.2 made it an integer (kubeflow/trainer#3239): leave it \
                             out for auto, or give the processes per node",
                        );
                    }
                    out.push(Finding::at_pointer(Rule::TrainerCrd, message, path));
                }
            }
        }
        out
    }
}

/// `'FIELD' was unexpected at PATH: ...`, with what the object allows, the field it
/// most likely meant, or how the API changed between releases.
fn unknown_field(
    path: &str,
    field: &str,
    known: Option<&Map<String, Value>>,
    kind: TrainerKind,
    crd: CrdRelease,
    release: Version,
) -> String {
    let mut message = unexpected_field(field, path);
    message.push_str(&format!(
        ": the Trainer {} {} CRD has no such field, so the API server drops it",
        crd.tag(),
        kind.name()
    ));
    if let Some(hint) = drift_hint(kind, path, field, release) {
        message.push_str("; ");
        message.push_str(hint);
        return message;
    }
    let names: Vec<&str> = known
        .map(|k| k.keys().map(String::as_str).collect())
        .unwrap_or_default();
    if let Some(near) = suggest::closest(field, names.iter().copied()) {
        message.push_str(&format!(" (did you mean {near}?)"));
    } else if names.is_empty() {
        message.push_str(" (the object takes no fields)");
    } else if names.len() <= 6 {
        message.push_str(&format!(" (it takes {})", names.join(", ")));
    }
    message
}

/// `path` with every array index as `*`: `/spec/runtimePatches/0/...` →
/// `/spec/runtimePatches/*/...`.
fn generic(path: &str) -> String {
    path.split('/')
        .map(|s| {
            if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                "*"
            } else {
                s
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// What happened to a field between Trainer releases, when an unknown field is one
/// that another release has (kubeflow/trainer CHANGELOG-2.1.md, CHANGELOG-2.2.md).
fn drift_hint(
    kind: TrainerKind,
    path: &str,
    field: &str,
    release: Version,
) -> Option<&'static str> {
    let at = generic(path);
    let new_api = release >= Version::new(2, 2);
    let hint = match (kind.is_runtime(), at.as_str(), field) {
        (true, "/spec/mlPolicy/torch", "numProcPerNode") if new_api => {
            "mlPolicy.torch.numProcPerNode was removed in Trainer v2.2 (kubeflow/trainer#3239): \
             the TrainJob sets spec.trainer.numProcPerNode (an integer), and torch defaults to auto"
        }
        (true, "/spec/mlPolicy/torch", "elasticPolicy") if new_api => {
            "mlPolicy.torch.elasticPolicy was removed in Trainer v2.2 (kubeflow/trainer#3235)"
        }
        (true, "/spec/mlPolicy", "flux" | "jax" | "xgboost") if !new_api => {
            "this ML policy arrived in Trainer v2.2"
        }
        (false, "/spec", "podTemplateOverrides") if new_api => {
            "Trainer v2.2 replaced podTemplateOverrides with spec.runtimePatches \
             (kubeflow/trainer#3309)"
        }
        (false, "/spec", "labels" | "annotations") if new_api => {
            "Trainer v2.2 moved the TrainJob's labels and annotations into \
             spec.runtimePatches[].trainingRuntimeSpec.template.metadata (kubeflow/trainer#3309)"
        }
        (false, "/spec", "runtimePatches") if !new_api => {
            "runtimePatches arrived in Trainer v2.2; on 2.1 a TrainJob customises pods with \
             spec.podTemplateOverrides"
        }
        (false, "/spec", "activeDeadlineSeconds") if !new_api => {
            "activeDeadlineSeconds arrived in Trainer v2.2"
        }
        (false, "/spec", "podSpecOverrides") => {
            "podSpecOverrides is Trainer v2.0's; v2.1 has spec.podTemplateOverrides and v2.2 \
             and later spec.runtimePatches"
        }
        (false, "/spec/podTemplateOverrides/*/spec/containers/*", "securityContext")
        | (false, "/spec/podTemplateOverrides/*/spec/initContainers/*", "securityContext") => {
            "a Trainer 2.1 TrainJob cannot set a container's securityContext (IPC_LOCK among \
             it): put it in the runtime, or target 2.2 or later, whose runtimePatches can"
        }
        _ => return None,
    };
    Some(hint)
}

/// Fields Trainer v2.3.0's CRDs have and v2.2's do not (the v2.3.0 CRDs judge 2.2):
/// found by comparing the v2.2.0, v2.2.1 and v2.3.0 CRDs field by field.
fn added_in_v2_3(doc: &Value, kind: TrainerKind) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut unexpected = |parent: String, field: &str| {
        let message = format!(
            "'{field}' was unexpected at {parent}: Trainer 2.2's {} CRD has no such field (it \
             arrived in v2.3.0), so the API server drops it",
            kind.name()
        );
        out.push(Finding::at_pointer(
            Rule::TrainerCrd,
            message,
            format!("{parent}/{field}"),
        ));
    };
    if kind == TrainerKind::TrainJob {
        for (i, patch) in items(&doc["spec"]["runtimePatches"]) {
            let jobs = &patch["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"];
            for (j, job) in items(jobs) {
                if job["template"]["spec"]["template"]["spec"]
                    .get("terminationGracePeriodSeconds")
                    .is_some()
                {
                    unexpected(
                        format!(
                            "/spec/runtimePatches/{i}/trainingRuntimeSpec/template/spec/replicatedJobs/{j}/template/spec/template/spec"
                        ),
                        "terminationGracePeriodSeconds",
                    );
                }
            }
        }
        return out;
    }
    if doc["spec"]["mlPolicy"]["torch"]
        .get("envInjection")
        .is_some()
    {
        unexpected("/spec/mlPolicy/torch".to_owned(), "envInjection");
    }
    for (i, rule) in items(&doc["spec"]["template"]["spec"]["failurePolicy"]["rules"]) {
        if let Some(action @ ("RestartJob" | "RestartJobAndIgnoreMaxRestarts")) =
            rule["action"].as_str()
        {
            out.push(Finding::at_pointer(
                Rule::TrainerCrd,
                format!(
                    "/spec/template/spec/failurePolicy/rules/{i}/action: \"{action}\" is not one \
                     of FailJobSet, RestartJobSet, RestartJobSetAndIgnoreMaxRestarts in Trainer \
                     2.2's {} CRD (it arrived in v2.3.0)",
                    kind.name()
                ),
                format!("/spec/template/spec/failurePolicy/rules/{i}/action"),
            ));
        }
    }
    out
}

// ---------------------------------------------------------------------------------
// The conversion.

/// One CEL rule of a CRD (`x-kubernetes-validations`), and what the strict schema
/// makes of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CelRule {
    /// Where the rule sits, as a path in the object (`*` for any array item or map
    /// value), `""` for the object itself.
    pub at: String,
    pub rule: String,
    pub message: String,
    pub handling: CelHandling,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CelHandling {
    /// Translated to JSON Schema and checked.
    Checked,
    /// A transition rule (`oldSelf`): it compares an update with the stored object, so
    /// a manifest alone cannot break it.
    Transition,
    /// A shape the translator does not know: not checked.
    Ignored,
}

/// The strict JSON Schema (draft 7) for a CRD's `openAPIV3Schema` (see the module
/// documentation).
pub fn strict(upstream: &Value) -> Value {
    let mut converter = Converter::default();
    let mut schema = converter.node(upstream, "", true);
    if let Value::Object(map) = &mut schema {
        map.insert(
            "$schema".to_owned(),
            json!("http://json-schema.org/draft-07/schema#"),
        );
    }
    schema
}

/// The committed text of [`CrdRelease::strict_embedded`]: [`strict`] of the embedded
/// upstream schema, one line of JSON and a newline.
pub fn strict_text(crd: CrdRelease, kind: TrainerKind) -> String {
    let upstream: Value =
        serde_json::from_str(crd.embedded(kind)).expect("schemas/trainer/*.json is valid JSON");
    let mut text = serde_json::to_string(&strict(&upstream)).expect("a schema serialises");
    text.push('\n');
    text
}

/// Every CEL rule in a CRD's `openAPIV3Schema`, and whether [`strict`] checks it.
pub fn cel_rules(upstream: &Value) -> Vec<CelRule> {
    let mut converter = Converter::default();
    converter.node(upstream, "", true);
    converter.cel
}

/// Schema keywords the vendored CRDs use that are not kept as they are, nor
/// translated; a test requires this to be empty for every vendored CRD.
pub fn unknown_keywords(upstream: &Value) -> Vec<String> {
    let mut converter = Converter::default();
    converter.node(upstream, "", true);
    converter.unknown
}

#[derive(Default)]
struct Converter {
    cel: Vec<CelRule>,
    unknown: Vec<String>,
}

/// Validation keywords that mean the same in OpenAPI v3 structural schemas and JSON
/// Schema draft 7, kept as they are.
const KEPT: &[&str] = &[
    "type",
    "required",
    "enum",
    "pattern",
    "maxItems",
    "minItems",
    "maxLength",
    "minLength",
    "maximum",
    "minimum",
    "multipleOf",
    "uniqueItems",
    "maxProperties",
    "minProperties",
];

/// Keywords that do not validate (documentation, defaults, merge strategies).
const DROPPED: &[&str] = &[
    "description",
    "default",
    "example",
    "title",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
];

impl Converter {
    /// `schema` (at object path `path`) made strict. `root`: the object's own schema.
    fn node(&mut self, schema: &Value, path: &str, root: bool) -> Value {
        let Value::Object(map) = schema else {
            return schema.clone();
        };
        let mut out = Map::new();
        let flag = |key: &str| map.get(key) == Some(&Value::Bool(true));
        let int_or_string = flag("x-kubernetes-int-or-string");
        let preserve = flag("x-kubernetes-preserve-unknown-fields");
        let embedded = flag("x-kubernetes-embedded-resource");
        for (key, value) in map {
            match key.as_str() {
                "properties" => {
                    let Value::Object(props) = value else {
                        continue;
                    };
                    let converted: Map<String, Value> = props
                        .iter()
                        .map(|(name, p)| {
                            let at = format!("{path}/{}", pointer_segment(name));
                            let converted = if root && name == "metadata" {
                                // The API server checks the object's metadata as an
                                // ObjectMeta; the CRD says only `type: object`.
                                p.clone()
                            } else {
                                self.node(p, &at, false)
                            };
                            (name.clone(), converted)
                        })
                        .collect();
                    out.insert(key.clone(), Value::Object(converted));
                }
                "items" | "not" => {
                    let at = if key == "items" {
                        format!("{path}/*")
                    } else {
                        path.to_owned()
                    };
                    out.insert(key.clone(), self.node(value, &at, false));
                }
                "additionalProperties" => {
                    let converted = match value {
                        Value::Bool(_) => value.clone(),
                        _ => self.node(value, &format!("{path}/*"), false),
                    };
                    out.insert(key.clone(), converted);
                }
                "anyOf" | "allOf" | "oneOf" => {
                    let list = value
                        .as_array()
                        .map(|a| a.iter().map(|s| self.node(s, path, false)).collect())
                        .unwrap_or_default();
                    out.insert(key.clone(), Value::Array(list));
                }
                "x-kubernetes-list-type" => {
                    if value == "set" {
                        out.insert("uniqueItems".to_owned(), Value::Bool(true));
                    }
                }
                "x-kubernetes-validations" => {}
                "format"
                | "nullable"
                | "x-kubernetes-int-or-string"
                | "x-kubernetes-preserve-unknown-fields"
                | "x-kubernetes-embedded-resource" => {}
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if DROPPED.contains(&k) => {}
                other => {
                    let what = format!("{other} at {}", path_or_root(path));
                    if !self.unknown.contains(&what) {
                        self.unknown.push(what);
                    }
                }
            }
        }
        if int_or_string {
            // Upstream writes anyOf [integer, string]; one type list reads better in
            // an error and means the same.
            if out
                .get("anyOf")
                .is_some_and(|a| *a == json!([{"type": "integer"}, {"type": "string"}]))
            {
                out.remove("anyOf");
            }
            out.insert("type".to_owned(), json!(["integer", "string"]));
        }
        if map.get("format") == Some(&json!("int32")) && out.get("type") == Some(&json!("integer"))
        {
            out.entry("minimum").or_insert(json!(i32::MIN));
            out.entry("maximum").or_insert(json!(i32::MAX));
        }
        if flag("nullable") {
            if let Some(t) = out.get_mut("type") {
                let mut types = match t.take() {
                    Value::Array(list) => list,
                    one => vec![one],
                };
                types.push(json!("null"));
                *t = Value::Array(types);
            }
            if let Some(Value::Array(values)) = out.get_mut("enum") {
                values.push(Value::Null);
            }
        }
        if embedded {
            let props = out
                .entry("properties")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .expect("properties is an object");
            props
                .entry("apiVersion")
                .or_insert_with(|| json!({"type": "string"}));
            props
                .entry("kind")
                .or_insert_with(|| json!({"type": "string"}));
            props
                .entry("metadata")
                .or_insert_with(|| json!({"type": "object"}));
        }
        let object = out.get("type") == Some(&json!("object")) || out.contains_key("properties");
        if object && !preserve && !out.contains_key("additionalProperties") {
            out.insert("additionalProperties".to_owned(), Value::Bool(false));
        }
        let mut checks = Vec::new();
        for rule in map
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let text = rule["rule"].as_str().unwrap_or_default();
            let message = rule["message"]
                .as_str()
                .map_or_else(|| format!("failed rule: {text}"), str::to_owned);
            let handling = if text.contains("oldSelf") {
                CelHandling::Transition
            } else if let Some(mut fragment) = cel::translate(text) {
                fragment["x-cel-rule"] = json!(text);
                fragment["x-cel-message"] = json!(message);
                checks.push(fragment);
                CelHandling::Checked
            } else {
                CelHandling::Ignored
            };
            self.cel.push(CelRule {
                at: path.to_owned(),
                rule: text.to_owned(),
                message,
                handling,
            });
        }
        if !checks.is_empty() {
            match out.get_mut("allOf") {
                Some(Value::Array(all)) => all.extend(checks),
                _ => {
                    out.insert("allOf".to_owned(), Value::Array(checks));
                }
            }
        }
        Value::Object(out)
    }
}

/// A translator for the CEL rule shapes the vendored CRDs use, to JSON Schema. It
/// knows a handful of forms over `self`, never evaluates anything, and returns `None`
/// for any other text: an unknown rule is left unchecked rather than misread.
mod cel {
    use serde_json::{Value, json};

    /// The JSON Schema fragment that holds exactly when `rule` does.
    pub fn translate(rule: &str) -> Option<Value> {
        let s: String = rule.split_whitespace().collect();
        disjunction(&s)
    }

    /// `A || B || ...`: any of the alternatives.
    fn disjunction(s: &str) -> Option<Value> {
        let parts = split_top(s, "||");
        if parts.len() == 1 {
            return term(s);
        }
        let alternatives: Option<Vec<Value>> = parts.iter().map(|p| term(p)).collect();
        Some(json!({"anyOf": alternatives?}))
    }

    fn term(s: &str) -> Option<Value> {
        if let Some(inner) = s.strip_prefix("!(").and_then(|r| r.strip_suffix(')')) {
            return Some(json!({"not": conjunction(inner)?}));
        }
        if let Some(inner) = s
            .strip_prefix("!self.exists(")
            .and_then(|r| r.strip_suffix(')'))
        {
            // !self.exists(c, c == 'node'): no item equals the literal.
            let (var, cond) = inner.split_once(',')?;
            let literal = cond.strip_prefix(&format!("{var}=="))?;
            return Some(json!({"not": {"contains": {"const": string(literal)?}}}));
        }
        if let Some(inner) = s
            .strip_prefix("has(self.")
            .and_then(|r| r.strip_suffix(')'))
        {
            return Some(required_path(
                &inner.split('.').collect::<Vec<_>>(),
                json!({}),
            ));
        }
        if let Some(list) = s.strip_prefix("selfin[").and_then(|r| r.strip_suffix(']')) {
            let values: Option<Vec<Value>> = split_top(list, ",")
                .into_iter()
                .map(|v| string(v).map(Value::from))
                .collect();
            return Some(json!({"enum": values?}));
        }
        if s == "self==''" {
            return Some(json!({"maxLength": 0}));
        }
        if let Some(re) = s
            .strip_prefix("self.matches(")
            .and_then(|r| r.strip_suffix(')'))
        {
            return Some(json!({"type": "string", "pattern": string(re)?}));
        }
        if let Some(re) = s
            .strip_prefix("self.metadata.name.matches(")
            .and_then(|r| r.strip_suffix(')'))
        {
            let name = json!({"type": "string", "pattern": string(re)?});
            return Some(json!({"properties": {"metadata": {"properties": {"name": name}}}}));
        }
        if let Some(n) = s.strip_prefix("size(self.metadata.name)<=") {
            let name = json!({"maxLength": n.parse::<u64>().ok()?});
            return Some(json!({"properties": {"metadata": {"properties": {"name": name}}}}));
        }
        if let Some(n) = s.strip_prefix("self>=") {
            return Some(json!({"type": "number", "minimum": n.parse::<i64>().ok()?}));
        }
        if let Some(n) = s.strip_prefix("self>") {
            return Some(json!({"type": "number", "exclusiveMinimum": n.parse::<i64>().ok()?}));
        }
        if let Some(rest) = s.strip_prefix('[') {
            // [has(self.a), has(self.b), ...].filter(x, x).size() <= 1: at most one.
            let (list, tail) = rest.split_once(']')?;
            let (_, limit) = tail.split_once(".size()<=")?;
            if limit != "1" || !tail.starts_with(".filter(") {
                return None;
            }
            let fields: Option<Vec<&str>> = split_top(list, ",")
                .into_iter()
                .map(|h| h.strip_prefix("has(self.")?.strip_suffix(')'))
                .collect();
            let fields = fields?;
            if fields.iter().any(|f| f.contains('.')) {
                return None;
            }
            let mut pairs = Vec::new();
            for (i, a) in fields.iter().enumerate() {
                for b in &fields[i + 1..] {
                    pairs.push(json!({"required": [a, b]}));
                }
            }
            return Some(json!({"not": {"anyOf": pairs}}));
        }
        if let Some(rest) = s.strip_prefix("self.") {
            // self.list.all(t, !has(t.a.b) || size(t.a.b) == 0): no item sets a.b.
            let (list, body) = rest.split_once(".all(")?;
            let (var, cond) = body.strip_suffix(')')?.split_once(',')?;
            let [absent, empty] = split_top(cond, "||")[..] else {
                return None;
            };
            let field = absent
                .strip_prefix(&format!("!has({var}."))?
                .strip_suffix(')')?;
            if empty != format!("size({var}.{field})==0") || list.contains('.') {
                return None;
            }
            let leaf = nested(
                &field.split('.').collect::<Vec<_>>(),
                json!({"maxLength": 0}),
            );
            return Some(json!({"properties": {list: {"items": leaf}}}));
        }
        None
    }

    /// `A && B && ...` of `has(self.a.b)`, `self.a.b == 'x'` and
    /// `self.list.exists(x, has(x.f))`, as one schema that requires them all.
    fn conjunction(s: &str) -> Option<Value> {
        let inner = s.strip_prefix('(').and_then(|r| r.strip_suffix(')'));
        let parts: Vec<&str> = split_top(inner.filter(|i| balanced(i)).unwrap_or(s), "&&")
            .into_iter()
            .flat_map(
                |p| match p.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
                    Some(inner) if balanced(inner) => split_top(inner, "&&"),
                    _ => vec![p],
                },
            )
            .collect();
        let mut all = json!({});
        for part in parts {
            let piece = if let Some(p) = part
                .strip_prefix("has(self.")
                .and_then(|r| r.strip_suffix(')'))
            {
                required_path(&p.split('.').collect::<Vec<_>>(), json!({}))
            } else if let Some((lhs, rhs)) = part.split_once("==") {
                let p: Vec<&str> = lhs.strip_prefix("self.")?.split('.').collect();
                required_path(&p, json!({"const": string(rhs)?}))
            } else if let Some(rest) = part.strip_prefix("self.") {
                let (list, body) = rest.split_once(".exists(")?;
                let (var, cond) = body.strip_suffix(')')?.split_once(',')?;
                let field = cond
                    .strip_prefix(&format!("has({var}."))?
                    .strip_suffix(')')?;
                if list.contains('.') || field.contains('.') {
                    return None;
                }
                json!({"required": [list], "properties": {list: {"contains": {"required": [field]}}}})
            } else {
                return None;
            };
            merge(&mut all, piece);
        }
        Some(all)
    }

    /// A schema requiring `path` to exist, its last field matching `leaf`.
    fn required_path(path: &[&str], leaf: Value) -> Value {
        match path {
            [] => leaf,
            [first, rest @ ..] => {
                let inner = required_path(rest, leaf);
                if inner == json!({}) {
                    json!({"required": [first]})
                } else {
                    json!({"required": [first], "properties": {*first: inner}})
                }
            }
        }
    }

    /// A schema whose `path`, when present, matches `leaf`.
    fn nested(path: &[&str], leaf: Value) -> Value {
        match path {
            [] => leaf,
            [first, rest @ ..] => json!({"properties": {*first: nested(rest, leaf)}}),
        }
    }

    /// Merge `b` into `a`: `required` lists joined, `properties` merged field by field.
    fn merge(a: &mut Value, b: Value) {
        let Value::Object(b) = b else { return };
        for (key, value) in b {
            match (key.as_str(), a.get_mut(&key)) {
                ("required", Some(Value::Array(list))) => {
                    for v in value.as_array().into_iter().flatten() {
                        if !list.contains(v) {
                            list.push(v.clone());
                        }
                    }
                }
                ("properties", Some(Value::Object(props))) => {
                    for (name, p) in value.as_object().into_iter().flatten() {
                        match props.get_mut(name) {
                            Some(existing) => merge(existing, p.clone()),
                            None => {
                                props.insert(name.clone(), p.clone());
                            }
                        }
                    }
                }
                _ => {
                    a[key] = value;
                }
            }
        }
    }

    /// A CEL string literal in single or double quotes.
    fn string(literal: &str) -> Option<String> {
        let inner = literal
            .strip_prefix('\'')
            .and_then(|r| r.strip_suffix('\''))
            .or_else(|| literal.strip_prefix('"').and_then(|r| r.strip_suffix('"')))?;
        (!inner.contains(['\'', '"', '\\'])).then(|| inner.to_owned())
    }

    fn balanced(s: &str) -> bool {
        let mut depth = 0i32;
        for c in s.chars() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                _ => {}
            }
            if depth < 0 {
                return false;
            }
        }
        depth == 0
    }

    /// `s` split at `sep` outside brackets and quotes.
    fn split_top<'a>(s: &'a str, sep: &str) -> Vec<&'a str> {
        let mut parts = Vec::new();
        let (mut depth, mut quote, mut start) = (0i32, None, 0);
        let bytes = s.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i];
            match quote {
                Some(q) if c == q => quote = None,
                Some(_) => {}
                None => match c {
                    b'\'' | b'"' => quote = Some(c),
                    b'(' | b'[' => depth += 1,
                    b')' | b']' => depth -= 1,
                    _ if depth == 0 && s[i..].starts_with(sep) => {
                        parts.push(&s[start..i]);
                        i += sep.len();
                        start = i;
                        continue;
                    }
                    _ => {}
                },
            }
            i += 1;
        }
        parts.push(&s[start..]);
        parts
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn the_vendored_rule_shapes_translate() {
            assert_eq!(
                translate("self in ['a', 'b']"),
                Some(json!({"enum": ["a", "b"]}))
            );
            assert_eq!(
                translate("!(has(self.torch) && has(self.mpi))"),
                Some(json!({"not": {"required": ["torch", "mpi"]}}))
            );
            assert_eq!(
                translate("self > 0 || self in ['auto', 'cpu', 'gpu']"),
                Some(json!({"anyOf": [
                    {"type": "number", "exclusiveMinimum": 0},
                    {"enum": ["auto", "cpu", "gpu"]}
                ]}))
            );
            assert_eq!(
                translate("!self.exists(c, c == 'node')"),
                Some(json!({"not": {"contains": {"const": "node"}}}))
            );
            assert_eq!(
                translate(
                    "!(has(self.numNodes) && (has(self.torch) && has(self.torch.elasticPolicy)))"
                ),
                Some(json!({"not": {"required": ["numNodes", "torch"],
                    "properties": {"torch": {"required": ["elasticPolicy"]}}}}))
            );
            assert_eq!(translate("self.size() > 2"), None);
            assert_eq!(translate("has(self.x) ? true : false"), None);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a run decodes is what the committed strict JSON says.
    #[test]
    fn the_strict_binary_forms_are_the_committed_json() {
        for crd in CrdRelease::ALL {
            for kind in [TrainerKind::TrainJob, TrainerKind::TrainingRuntime] {
                let value: Value = serde_json::from_str(crd.strict_embedded(kind)).unwrap();
                assert!(Node::decode(crd.strict_blob(kind)).equals(&value));
                let parsed = Node::parse(crd.strict_embedded(kind)).unwrap();
                assert!(Node::decode(crd.strict_blob(kind)).identical(&parsed));
            }
        }
    }

    fn messages(findings: Vec<Finding>) -> Vec<String> {
        findings
            .into_iter()
            .map(|f| format!("{} {}", f.pointer.unwrap_or_default(), f.message))
            .collect()
    }

    fn runtime(torch: Value) -> Value {
        json!({"apiVersion": API_VERSION, "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "r"},
            "spec": {"mlPolicy": {"numNodes": 1, "torch": torch},
                "template": {"spec": {"replicatedJobs": [{"name": "node",
                    "template": {"spec": {"template": {"spec": {"containers": [
                        {"name": "node", "image": "img"}]}}}}}]}}}})
    }

    #[test]
    fn releases_map_to_the_vendored_crds() {
        assert_eq!(CrdRelease::for_release(Version::new(2, 0)), None);
        assert_eq!(
            CrdRelease::for_release(Version::new(2, 1)),
            Some(CrdRelease::V2_1_0)
        );
        assert_eq!(
            CrdRelease::for_release(Version::parse("2.1.9").unwrap()),
            Some(CrdRelease::V2_1_0)
        );
        assert_eq!(
            CrdRelease::for_release(Version::new(2, 2)),
            Some(CrdRelease::V2_3_0)
        );
        assert_eq!(
            CrdRelease::for_release(Version::new(3, 0)),
            Some(CrdRelease::V2_3_0)
        );
    }

    #[test]
    fn an_unknown_field_is_named_with_the_release_that_dropped_it() {
        let old = runtime(json!({"numProcPerNode": "auto"}));
        assert!(check(&old, Version::new(2, 1)).is_empty());
        assert_eq!(
            messages(check(&old, Version::new(2, 3))),
            [
                "/spec/mlPolicy/torch/numProcPerNode 'numProcPerNode' was unexpected at /spec/mlPolicy/torch: \
              the Trainer v2.3.0 ClusterTrainingRuntime CRD has no such field, so the API server drops it; \
              mlPolicy.torch.numProcPerNode was removed in Trainer v2.2 (kubeflow/trainer#3239): the TrainJob \
              sets spec.trainer.numProcPerNode (an integer), and torch defaults to auto"
            ]
        );
        let ok = runtime(json!({}));
        assert!(check(&ok, Version::new(2, 3)).is_empty());
        assert!(check(&ok, Version::new(2, 1)).is_empty());
    }

    #[test]
    fn cel_rules_are_reported_with_the_crds_message() {
        let job = json!({"apiVersion": API_VERSION, "kind": "TrainJob",
            "metadata": {"name": "Bad_Name"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}, "managedBy": "me"}});
        let mut found = messages(check(&job, LATEST));
        found.sort();
        assert_eq!(
            found,
            [
                "/metadata/name /metadata/name: metadata.name must match RFC 1035 DNS label format (found \"Bad_Name\"); \
                 the v2.3.0 TrainJob CRD's rule `self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')`",
                "/spec/managedBy /spec/managedBy: ManagedBy must be trainer.kubeflow.org/trainjob-controller or \
                 kueue.x-k8s.io/multikueue if set (found \"me\"); the v2.3.0 TrainJob CRD's rule \
                 `self in ['trainer.kubeflow.org/trainjob-controller', 'kueue.x-k8s.io/multikueue']`"
            ]
        );
        let long = json!({"apiVersion": API_VERSION, "kind": "TrainJob",
            "metadata": {"name": "a".repeat(64)}, "spec": {"runtimeRef": {"name": "r"}}});
        assert_eq!(check(&long, LATEST).len(), 1);
        let two = runtime(json!({}));
        let mut two = two;
        two["spec"]["mlPolicy"]["mpi"] = json!({});
        assert_eq!(
            messages(check(&two, LATEST)),
            [
                "/spec/mlPolicy /spec/mlPolicy: Only one of the policy can be configured; the v2.3.0 \
              ClusterTrainingRuntime CRD's rule `[has(self.torch), has(self.mpi), has(self.jax), \
              has(self.xgboost),has(self.flux)].filter(x, x).size() <= 1`"
            ]
        );
    }

    #[test]
    fn int_or_string_and_types() {
        let mut doc = runtime(json!({}));
        let container = &mut doc["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
            ["template"]["spec"]["containers"][0];
        container["resources"] = json!({"limits": {"nvidia.com/gpu": 8, "memory": "64Gi"}});
        assert!(check(&doc, LATEST).is_empty());
        let container = &mut doc["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]
            ["template"]["spec"]["containers"][0];
        container["resources"]["limits"]["cpu"] = json!(0.5);
        assert_eq!(check(&doc, LATEST).len(), 1);
    }

    #[test]
    fn pruning_keeps_what_the_api_server_keeps() {
        let doc = runtime(json!({"numProcPerNode": "auto"}));
        let mut labelled = doc.clone();
        labelled["metadata"]["labels"] = json!({"a": "b"});
        labelled["spec"]["bogus"] = json!(1);
        let kept = prune(&labelled, LATEST);
        assert_eq!(kept["spec"]["mlPolicy"]["torch"], json!({}));
        assert_eq!(kept["spec"].get("bogus"), None);
        assert_eq!(kept["metadata"]["labels"], json!({"a": "b"}));
        assert_eq!(
            kept["spec"]["template"], labelled["spec"]["template"],
            "known fields stay"
        );
        assert_eq!(
            prune(&labelled, Version::new(2, 1))["spec"]["mlPolicy"],
            doc["spec"]["mlPolicy"]
        );
    }

    #[test]
    fn unsupported_releases_and_foreign_documents_are_one_finding() {
        let doc = runtime(json!({}));
        assert_eq!(
            messages(check(&doc, Version::new(2, 0))),
            [
                " Trainer 2.0 is not supported: rdmagen has the CRDs of v2.1.0 (for 2.1) and v2.3.0 \
              (for 2.2 and later); v2.0 had spec.podSpecOverrides, which neither knows"
            ]
        );
        let pod = json!({"apiVersion": "v1", "kind": "Pod"});
        assert_eq!(check(&pod, LATEST).len(), 1);
    }

    #[test]
    fn fields_added_in_v2_3_are_unknown_on_2_2() {
        let doc = runtime(json!({"envInjection": {"targets": []}}));
        assert!(check(&doc, Version::new(2, 3)).is_empty());
        assert_eq!(
            messages(check(&doc, Version::new(2, 2))),
            [
                "/spec/mlPolicy/torch/envInjection 'envInjection' was unexpected at /spec/mlPolicy/torch: \
              Trainer 2.2's ClusterTrainingRuntime CRD has no such field (it arrived in v2.3.0), so the \
              API server drops it"
            ]
        );
        assert!(
            check(&doc, Version::new(2, 4))
                .iter()
                .all(|f| f.message.contains("judged by the v2.3.0 CRD"))
        );
    }
}
