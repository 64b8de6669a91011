//! A job's pod fields with its pool's `spec.jobDefaults` folded in. Every value keeps
//! where it came from, so `--explain` can say so and a finding points at the file
//! that wrote it.
//!
//! Merge rules (README "Pool defaults"): the job wins. Maps (`env`, `nodeSelector`,
//! `labels`, `annotations`) merge key by key; named lists (`volumes`,
//! `imagePullSecrets`, `initContainers`, `sidecars`) merge by name, a job item
//! replacing the pool's of the same name; `tolerations` and `envFrom` add up (an item
//! both give is kept once); `affinity` merges by kind (`nodeAffinity`, `podAffinity`,
//! `podAntiAffinity`); a single value (`serviceAccountName`, `priorityClassName`) is
//! replaced; `podTemplate` overlays apply pool first, then job.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::job::{EnvValue, JobSpec, ObjectName, Toleration, Volume};
use crate::model::pool::JobDefaults;
use crate::plan::decision::Decisions;
use crate::yaml::tree::Seg;

/// Which input wrote a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Job,
    Pool,
}

impl Origin {
    /// Where `field` of this origin is written, below its document's root.
    pub fn path<'a>(self, field: &'a str) -> Vec<Seg<'a>> {
        match (self, field) {
            (Origin::Job, "labels" | "annotations") => vec![Seg::Key("metadata"), Seg::Key(field)],
            (Origin::Job, _) => vec![Seg::Key("spec"), Seg::Key(field)],
            (Origin::Pool, _) => vec![Seg::Key("spec"), Seg::Key("jobDefaults"), Seg::Key(field)],
        }
    }
}

/// A value and where it came from: its origin and, in a list, its index there.
#[derive(Debug, Clone)]
pub struct Sourced<T> {
    pub value: T,
    pub origin: Origin,
    pub index: usize,
}

/// The job's pod fields after the pool's defaults.
#[derive(Debug, Default)]
pub struct PodInputs {
    pub env: BTreeMap<String, Sourced<EnvValue>>,
    pub env_from: Vec<Sourced<Value>>,
    pub node_selector: BTreeMap<String, Sourced<String>>,
    pub tolerations: Vec<Sourced<Toleration>>,
    pub labels: BTreeMap<String, Sourced<String>>,
    pub annotations: BTreeMap<String, Sourced<String>>,
    pub volumes: Vec<Sourced<Volume>>,
    pub image_pull_secrets: Vec<Sourced<ObjectName>>,
    pub service_account_name: Option<Sourced<String>>,
    pub priority_class_name: Option<Sourced<String>>,
    pub affinity: Option<Value>,
    pub init_containers: Vec<Sourced<Value>>,
    pub sidecars: Vec<Sourced<Value>>,
    /// `podTemplate` overlays in the order they apply: the pool's, then the job's.
    pub overlays: Vec<Sourced<Value>>,
}

impl PodInputs {
    /// The job's labels after the pool's defaults, without where each came from.
    pub fn label_values(&self) -> BTreeMap<String, String> {
        values(&self.labels)
    }

    /// The job's annotations after the pool's defaults, without where each came from.
    pub fn annotation_values(&self) -> BTreeMap<String, String> {
        values(&self.annotations)
    }
}

fn values(map: &BTreeMap<String, Sourced<String>>) -> BTreeMap<String, String> {
    map.iter()
        .map(|(k, v)| (k.clone(), v.value.clone()))
        .collect()
}

struct Merge<'a> {
    pool: &'a str,
    decisions: &'a mut Decisions,
}

impl Merge<'_> {
    fn inherited(&mut self, topic: String, value: &str) {
        let reason = format!("pool `{}` (spec.jobDefaults)", self.pool);
        self.decisions.record(topic, value, reason);
    }

    fn overridden(&mut self, topic: String, value: &str, pool_value: &str) {
        let reason = format!(
            "the job's, over pool `{}`'s default `{pool_value}`",
            self.pool
        );
        self.decisions.record(topic, value, reason);
    }

    fn map<T: Clone + PartialEq>(
        &mut self,
        field: &str,
        pool: &BTreeMap<String, T>,
        job: &BTreeMap<String, T>,
        show: impl Fn(&T) -> String,
    ) -> BTreeMap<String, Sourced<T>> {
        let mut out = BTreeMap::new();
        for (key, value) in pool {
            match job.get(key) {
                Some(own) if own != value => {
                    self.overridden(format!("{field} {key}"), &show(own), &show(value))
                }
                Some(_) => {}
                None => self.inherited(format!("{field} {key}"), &show(value)),
            }
            out.insert(key.clone(), sourced(value.clone(), Origin::Pool, 0));
        }
        for (key, value) in job {
            out.insert(key.clone(), sourced(value.clone(), Origin::Job, 0));
        }
        out
    }

    /// Named items: the pool's first, each replaced by the job's of the same name,
    /// then the job's other items.
    fn named<T: Clone>(
        &mut self,
        field: &str,
        pool: &[T],
        job: &[T],
        name: impl Fn(&T) -> Option<String>,
    ) -> Vec<Sourced<T>> {
        let mut out = Vec::new();
        for (i, item) in pool.iter().enumerate() {
            let id = name(item);
            let own = job
                .iter()
                .enumerate()
                .find(|(_, j)| id.is_some() && name(j) == id);
            let label = id.clone().unwrap_or_default();
            match own {
                Some((j, value)) => {
                    self.overridden(format!("{field} {label}"), "the job's", "the pool's");
                    out.push(sourced(value.clone(), Origin::Job, j));
                }
                None => {
                    self.inherited(format!("{field} {label}"), "the pool's");
                    out.push(sourced(item.clone(), Origin::Pool, i));
                }
            }
        }
        for (j, item) in job.iter().enumerate() {
            let id = name(item);
            if id.is_none() || !pool.iter().any(|p| name(p) == id) {
                out.push(sourced(item.clone(), Origin::Job, j));
            }
        }
        out
    }

    /// Items that add up; one both give is kept once (the pool's).
    fn added<T: Clone + PartialEq>(
        &mut self,
        field: &str,
        pool: &[T],
        job: &[T],
    ) -> Vec<Sourced<T>> {
        if !pool.is_empty() {
            self.inherited(field.to_owned(), &format!("{} item(s)", pool.len()));
        }
        let mut out: Vec<Sourced<T>> = pool
            .iter()
            .enumerate()
            .map(|(i, v)| sourced(v.clone(), Origin::Pool, i))
            .collect();
        for (j, item) in job.iter().enumerate() {
            if !pool.contains(item) {
                out.push(sourced(item.clone(), Origin::Job, j));
            }
        }
        out
    }

    fn single(
        &mut self,
        field: &str,
        pool: &Option<String>,
        job: &Option<String>,
    ) -> Option<Sourced<String>> {
        match (pool, job) {
            (Some(p), Some(j)) => {
                if p != j {
                    self.overridden(field.to_owned(), j, p);
                }
                Some(sourced(j.clone(), Origin::Job, 0))
            }
            (Some(p), None) => {
                self.inherited(field.to_owned(), p);
                Some(sourced(p.clone(), Origin::Pool, 0))
            }
            (None, j) => j.clone().map(|j| sourced(j, Origin::Job, 0)),
        }
    }
}

fn sourced<T>(value: T, origin: Origin, index: usize) -> Sourced<T> {
    Sourced {
        value,
        origin,
        index,
    }
}

fn env_text(value: &EnvValue) -> String {
    match value {
        EnvValue::Text(text) => text.clone(),
        EnvValue::From(source) => format!("valueFrom {source}"),
    }
}

fn container_name(container: &Value) -> Option<String> {
    container
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Fold `defaults` (pool `pool`) under the job's own fields.
pub fn merge(
    pool: &str,
    defaults: &JobDefaults,
    job: &JobSpec,
    labels: &BTreeMap<String, String>,
    annotations: &BTreeMap<String, String>,
    decisions: &mut Decisions,
) -> PodInputs {
    let mut m = Merge { pool, decisions };
    let affinity = match (&defaults.affinity, &job.affinity) {
        (Some(Value::Object(p)), Some(Value::Object(j))) => {
            let mut merged = p.clone();
            for (kind, value) in j {
                merged.insert(kind.clone(), value.clone());
            }
            for kind in p.keys().filter(|k| !j.contains_key(*k)) {
                m.inherited(format!("affinity {kind}"), "the pool's");
            }
            Some(Value::Object(merged))
        }
        (Some(p), None) => {
            m.inherited("affinity".to_owned(), "the pool's");
            Some(p.clone())
        }
        (_, j) => j.clone(),
    };
    let mut overlays = Vec::new();
    if let Some(p) = &defaults.pod_template {
        m.inherited(
            "podTemplate".to_owned(),
            "the pool's overlay, applied first",
        );
        overlays.push(sourced(p.clone(), Origin::Pool, 0));
    }
    if let Some(j) = &job.pod_template {
        overlays.push(sourced(j.clone(), Origin::Job, 0));
    }
    PodInputs {
        env: m.map("env", &defaults.env, &job.env, env_text),
        env_from: m.added("envFrom", &defaults.env_from, &job.env_from),
        node_selector: m.map(
            "nodeSelector",
            &defaults.node_selector,
            &job.node_selector,
            String::clone,
        ),
        tolerations: m.added("tolerations", &defaults.tolerations, &job.tolerations),
        labels: m.map("labels", &defaults.labels, labels, String::clone),
        annotations: m.map(
            "annotations",
            &defaults.annotations,
            annotations,
            String::clone,
        ),
        volumes: m.named("volume", &defaults.volumes, &job.volumes, |v| {
            Some(v.name.clone())
        }),
        image_pull_secrets: m.named(
            "imagePullSecret",
            &defaults.image_pull_secrets,
            &job.image_pull_secrets,
            |s| Some(s.name.clone()),
        ),
        service_account_name: m.single(
            "serviceAccountName",
            &defaults.service_account_name,
            &job.service_account_name,
        ),
        priority_class_name: m.single(
            "priorityClassName",
            &defaults.priority_class_name,
            &job.priority_class_name,
        ),
        affinity,
        init_containers: m.named(
            "initContainer",
            &defaults.init_containers,
            &job.init_containers,
            container_name,
        ),
        sidecars: m.named("sidecar", &defaults.sidecars, &job.sidecars, container_name),
        overlays,
    }
}
