//! Judging an overlay against what rdmagen decided: RDG055 where it would change or
//! remove a decision, RDG056 where it adds to one. Everything else it may do.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::diagnostics::Rule;
use crate::diagnostics::escape::{cut, printable};
use crate::kubernetes::definitions::POD_TEMPLATE_SPEC;
use crate::kubernetes::merge::{PATCH_DIRECTIVE, Step, replaced_lists};
use crate::kubernetes::quantity;
use crate::kubernetes::{ListOrder, strategic_merge};
use crate::plan::ctx::Ctx;
use crate::plan::defaults::Origin;
use crate::plan::pod_parts::{SHM_VOLUME, VOLCANO_QUEUE, same_capability, training};
use crate::platform::is_rdma_resource;

const SHM_PATH: &str = "/dev/shm";
const IPC_LOCK: &str = "IPC_LOCK";

/// What rdmagen decided that an overlay must leave as it is, and who decided each
/// thing, for the messages.
pub(in crate::plan) struct Owned {
    /// The pod template as rdmagen built it, before any overlay.
    built: Value,
    /// The training container's name for the target API.
    container: &'static str,
    gpu_resource: String,
    gpus_per_node: u32,
    /// The RDMA resources when RDMA is on (one, or the pod's rails); IPC_LOCK is then
    /// required too.
    rdma_resources: Vec<String>,
    /// The queue of the Volcano annotation, when the plan sets one.
    queue: Option<String>,
    /// Decisions so far, as (topic, value).
    decisions: Vec<(String, String)>,
    /// Where the job's or the pool's `env` set a variable, by name.
    env_sources: BTreeMap<String, Origin>,
}

/// Who decided a value, and where to change it instead.
struct Owner {
    by: String,
    fix: String,
}

/// One finding about an overlay, at a path below its `podTemplate`.
#[derive(Debug, PartialEq)]
pub(super) struct Verdict {
    pub rule: Rule,
    pub at: Vec<Step>,
    pub message: String,
}

impl Owned {
    /// What the pod `built` (before any overlay) holds of rdmagen's decisions.
    pub fn new(
        ctx: &Ctx<'_>,
        built: &Value,
        rdma_resources: &[String],
        queue: Option<&str>,
    ) -> Self {
        Owned {
            built: built.clone(),
            container: ctx.target.training_container(),
            gpu_resource: ctx.pool.value.spec.gpu.resource.clone(),
            gpus_per_node: ctx.job.value.spec.gpus_per_node,
            rdma_resources: rdma_resources.to_vec(),
            queue: queue.map(str::to_owned),
            decisions: ctx
                .decisions
                .0
                .iter()
                .map(|d| (d.topic.clone(), d.value.clone()))
                .collect(),
            env_sources: ctx
                .inputs
                .env
                .iter()
                .map(|(name, v)| (name.clone(), v.origin))
                .collect(),
        }
    }

    /// "rdmagen's decision `rdma resource = rdma/hca: 1`" (the latest with `topic`); a
    /// long value, such as a whole command line, is left to `--explain`.
    fn decision(&self, topic: &str) -> String {
        match self.decisions.iter().rev().find(|(t, _)| t == topic) {
            Some((_, value)) if value.chars().count() > 60 => {
                format!("rdmagen's decision on `{topic}` (`--explain` prints it)")
            }
            Some((_, value)) => format!("rdmagen's decision `{topic} = {value}`"),
            None => format!("rdmagen's decision on `{topic}`"),
        }
    }

    fn training(&self) -> &Value {
        training(&self.built, self.container).unwrap_or(&Value::Null)
    }

    fn ipc_lock(&self) -> bool {
        !self.rdma_resources.is_empty()
    }

    fn gpus(&self) -> Owner {
        Owner {
            by: format!("the job's `spec.gpusPerNode: {}`", self.gpus_per_node),
            fix: "change `spec.gpusPerNode`".to_owned(),
        }
    }

    fn rdma(&self, name: &str) -> Owner {
        match self.rdma_resources.first() {
            None => Owner {
                by: self.decision("rdma"),
                fix: "turn RDMA on with `spec.rdma`".to_owned(),
            },
            Some(_) if self.rdma_resources.iter().any(|mine| mine == name) => Owner {
                by: self.decision("rdma resource"),
                fix: "ask for a count with `spec.rdma`".to_owned(),
            },
            Some(_) => Owner {
                by: self.decision("rdma resource"),
                fix: "name the resource in the pool's `network.rdmaResource`".to_owned(),
            },
        }
    }

    fn capabilities(&self, fix: &str) -> Owner {
        Owner {
            by: self.decision("capabilities"),
            fix: fix.to_owned(),
        }
    }

    fn env(&self, name: &str) -> Owner {
        match self.env_sources.get(name) {
            Some(Origin::Job) => Owner {
                by: format!("the job's `spec.env.{name}`"),
                fix: "change it there".to_owned(),
            },
            Some(Origin::Pool) => Owner {
                by: format!("the pool's `spec.jobDefaults.env.{name}`"),
                fix: "change it there, or in the job's `spec.env`".to_owned(),
            },
            None => Owner {
                by: self.decision(&format!("env {name}")),
                fix: "set it in the job's `spec.env`, where rdmagen checks it".to_owned(),
            },
        }
    }

    fn launcher(&self) -> Owner {
        Owner {
            by: self.decision("command"),
            fix: "set `script` and `args`, or `command` with `launcher: none`, in the job"
                .to_owned(),
        }
    }

    fn shm(&self) -> Owner {
        Owner {
            by: self.decision("/dev/shm"),
            fix: "size it with the job's `spec.shm`".to_owned(),
        }
    }
}

/// Whether a dropped capability takes IPC_LOCK away. `ALL` does not: containerd and
/// CRI-O drop ALL before they add (kubernetes/kubernetes#51980), so IPC_LOCK stays,
/// while a capability dropped by name is dropped after the adds.
fn drops_ipc_lock(cap: &Value) -> bool {
    cap.as_str().is_some_and(|c| {
        let c = c.trim();
        c.eq_ignore_ascii_case(IPC_LOCK)
            || c.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("CAP_"))
                && c[4..].eq_ignore_ascii_case(IPC_LOCK)
    })
}

/// The value at `keys` below `value`, with its path: `Some((path, Null))` when it, or
/// an object on the way to it, is null (a removal); `None` when the overlay leaves it
/// out.
fn walk<'a>(value: &'a Value, keys: &[&str]) -> Option<(Vec<Step>, &'a Value)> {
    let mut at = Vec::new();
    let mut node = value;
    for key in keys {
        if node.is_null() {
            return Some((at, node));
        }
        node = node.get(*key)?;
        at.push(Step::Key((*key).to_owned()));
    }
    Some((at, node))
}

fn joined(base: &[Step], tail: &[Step]) -> Vec<Step> {
    [base, tail].concat()
}

fn key(k: &str) -> Step {
    Step::Key(k.to_owned())
}

/// A path as a user reads it: `resources.limits.rdma/hca`.
fn dotted(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A value as a message quotes it.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn deletes(item: &Value) -> bool {
    item.get(PATCH_DIRECTIVE).and_then(Value::as_str) == Some("delete")
}

/// Two resource quantities are the same amount ("1", 1 and "1.0" are).
fn same_quantity(a: &Value, b: &Value) -> bool {
    let amount = |v: &Value| match v {
        Value::String(s) => quantity::value(s),
        Value::Number(n) => n.as_f64(),
        _ => None,
    };
    a == b || matches!((amount(a), amount(b)), (Some(x), Some(y)) if x == y)
}

/// Collects the verdicts on one overlay.
struct Judge<'a> {
    owned: &'a Owned,
    whose: &'a str,
    verdicts: Vec<Verdict>,
}

impl Judge<'_> {
    fn overrides(&mut self, at: Vec<Step>, action: String, owner: Owner) {
        // A null high up removes several decisions at once; say it once.
        if self
            .verdicts
            .iter()
            .any(|v| v.at == at && v.rule == Rule::PodTemplateOverride)
        {
            return;
        }
        self.verdicts.push(Verdict {
            rule: Rule::PodTemplateOverride,
            at,
            message: format!(
                "{} podTemplate {action}, which would break {}; {}",
                self.whose, owner.by, owner.fix
            ),
        });
    }

    fn adds(&mut self, at: Vec<Step>, message: String) {
        self.verdicts.push(Verdict {
            rule: Rule::PodTemplateAdds,
            at,
            message: format!("{} podTemplate {message}", self.whose),
        });
    }
}

/// What `overlay` would do to the decisions in `owned`: errors where it changes or
/// removes one, infos where it adds to one.
pub(super) fn judge(owned: &Owned, overlay: &Value, whose: &str) -> Vec<Verdict> {
    let mut judge = Judge {
        owned,
        whose,
        verdicts: Vec::new(),
    };
    let mut merged = owned.built.clone();
    strategic_merge(
        &mut merged,
        overlay,
        POD_TEMPLATE_SPEC,
        ListOrder::AddedLast,
    );
    pod_fields(&mut judge, overlay);
    queue(&mut judge, overlay);
    networks(&mut judge, overlay);
    dropped_items(&mut judge, overlay);
    let volume = Keyed {
        list: &["spec", "volumes"],
        key: "name",
        id: SHM_VOLUME,
        what: format!("volume `{SHM_VOLUME}`"),
    };
    keyed_item(&mut judge, &volume, overlay, &[], &owned.built, &merged);
    match walk(overlay, &["spec", "containers"]) {
        Some((at, Value::Null)) => judge.overrides(
            at,
            "removes the containers, the training container among them".to_owned(),
            training_container(owned.container),
        ),
        Some((at, Value::Array(items))) => {
            let merged = training(&merged, owned.container)
                .cloned()
                .unwrap_or(Value::Null);
            for (j, item) in items.iter().enumerate() {
                if item.get("name").and_then(Value::as_str) == Some(owned.container) {
                    let at = joined(&at, &[Step::Index(j)]);
                    container(&mut judge, item, &at, &merged);
                }
            }
        }
        _ => {}
    }
    judge.verdicts
}

/// How many lost items a message quotes, and how many characters of each.
const QUOTED_ITEMS: usize = 3;
const QUOTED_CHARS: usize = 80;

/// RDG164: every list Kubernetes merges whole where the overlay's list lacks items the
/// pod had. The lists rdmagen adds to (tolerations, the training container's envFrom
/// and capabilities.add) lose nothing, and the training container's command and args
/// are RDG055's.
fn dropped_items(judge: &mut Judge<'_>, overlay: &Value) {
    let container = judge.owned.container;
    for replaced in replaced_lists(&judge.owned.built, overlay, POD_TEMPLATE_SPEC) {
        let training = in_training(&replaced.at, overlay, container);
        let added_to_or_judged = is_keys(&replaced.at, &["spec", "tolerations"])
            || training.is_some_and(|rest| {
                is_keys(rest, &["envFrom"])
                    || is_keys(rest, &["securityContext", "capabilities", "add"])
                    || is_keys(rest, &["command"])
                    || is_keys(rest, &["args"])
            });
        if added_to_or_judged {
            continue;
        }
        let capabilities = matches!(replaced.at.last(), Some(Step::Key(k)) if k == "add" || k == "drop")
            && replaced.at.iter().any(|s| *s == key("capabilities"));
        let lost: Vec<&Value> = replaced
            .base
            .iter()
            .filter(|had| {
                !replaced.patch.iter().any(|item| {
                    if capabilities {
                        same_capability(had, item)
                    } else {
                        item == *had
                    }
                })
            })
            .collect();
        if lost.is_empty() {
            continue;
        }
        let mut quoted: Vec<String> = lost.iter().take(QUOTED_ITEMS).map(|v| quote(v)).collect();
        if lost.len() > QUOTED_ITEMS {
            quoted.push(format!("and {} more", lost.len() - QUOTED_ITEMS));
        }
        let items = if lost.len() == 1 { "item" } else { "items" };
        judge.verdicts.push(Verdict {
            rule: Rule::PodTemplateDropsItems,
            message: format!(
                "{} podTemplate replaces `{}`, a list Kubernetes merges whole, and drops {} {items} the job's or pool's fields put there: {}; repeat them in the overlay's list to keep them, or change the job or pool field instead",
                judge.whose,
                dotted(&replaced.at),
                lost.len(),
                quoted.join(", ")
            ),
            at: replaced.at,
        });
    }
}

/// The rest of `at` when it leads into the training container of `overlay`.
fn in_training<'a>(at: &'a [Step], overlay: &Value, container: &str) -> Option<&'a [Step]> {
    match at {
        [
            Step::Key(spec),
            Step::Key(containers),
            Step::Index(i),
            rest @ ..,
        ] if spec == "spec"
            && containers == "containers"
            && overlay["spec"]["containers"][*i]["name"].as_str() == Some(container) =>
        {
            Some(rest)
        }
        _ => None,
    }
}

/// Whether `steps` is exactly the object keys `keys`.
fn is_keys(steps: &[Step], keys: &[&str]) -> bool {
    steps.len() == keys.len()
        && steps
            .iter()
            .zip(keys)
            .all(|(step, k)| matches!(step, Step::Key(s) if s == k))
}

/// An item as a message quotes it: compact JSON, escaped, cut at [`QUOTED_CHARS`].
fn quote(item: &Value) -> String {
    let text = match item {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    format!("`{}`", cut(&printable(&text), QUOTED_CHARS))
}

fn training_container(c: &str) -> Owner {
    Owner {
        by: format!("rdmagen's training container (the operator finds it by the name `{c}`)"),
        fix: "add containers beside it instead".to_owned(),
    }
}

/// hostNetwork, dnsPolicy and schedulerName, where the plan sets them.
fn pod_fields(judge: &mut Judge<'_>, overlay: &Value) {
    let owned = judge.owned;
    for field in ["hostNetwork", "dnsPolicy", "schedulerName"] {
        let Some(mine) = owned.built["spec"].get(field) else {
            continue;
        };
        let Some((at, theirs)) = walk(overlay, &["spec", field]) else {
            continue;
        };
        if theirs == mine {
            continue;
        }
        let owner = match field {
            "hostNetwork" => Owner {
                by: format!("the job's `spec.hostNetwork: {mine}`"),
                fix: "change it there".to_owned(),
            },
            "dnsPolicy" => Owner {
                by: owned.decision("dnsPolicy"),
                fix: "it follows the job's `spec.hostNetwork`".to_owned(),
            },
            _ => Owner {
                by: owned.decision("schedulerName"),
                fix: "the pool's `scheduler.name` sets it".to_owned(),
            },
        };
        judge.overrides(at.clone(), action(&at, theirs), owner);
    }
}

/// "sets `spec.dnsPolicy` to `Default`" or "removes `spec.dnsPolicy`".
fn action(at: &[Step], value: &Value) -> String {
    if value.is_null() {
        format!("removes `{}`", dotted(at))
    } else {
        format!("sets `{}` to `{}`", dotted(at), shown(value))
    }
}

fn queue(judge: &mut Judge<'_>, overlay: &Value) {
    let Some(queue) = &judge.owned.queue else {
        return;
    };
    let Some((at, theirs)) = walk(overlay, &["metadata", "annotations", VOLCANO_QUEUE]) else {
        return;
    };
    if theirs.as_str() == Some(queue.as_str()) {
        return;
    }
    let owner = Owner {
        by: format!("the job's Volcano queue `{queue}`"),
        fix: "set the queue in the job's `runPolicy.schedulingPolicy.queue` or the pool's `scheduler.queue`".to_owned(),
    };
    judge.overrides(at.clone(), action(&at, theirs), owner);
}

/// The Multus annotation rdmagen wrote for the pod's rails: each network takes the
/// next device of its rail's resource (multus k8sclient.go:296-320), so another value
/// leaves devices unattached or networks without a device.
fn networks(judge: &mut Judge<'_>, overlay: &Value) {
    let key = crate::multus::NETWORKS_ANNOTATION;
    let Some(ours) = judge.owned.built["metadata"]["annotations"][key].as_str() else {
        return;
    };
    let Some((at, theirs)) = walk(overlay, &["metadata", "annotations", key]) else {
        return;
    };
    if theirs.as_str() == Some(ours) {
        return;
    }
    let owner = Owner {
        by: format!(
            "the Multus networks of the pool's rails (`{}`), one per rail device the pod requests",
            shown(&Value::from(ours))
        ),
        fix: "change the rails in the pool's `network.rails`".to_owned(),
    };
    judge.overrides(at.clone(), action(&at, theirs), owner);
}

/// An item rdmagen owns in a list merged by key: the dshm volume, the /dev/shm mount.
struct Keyed {
    /// Where the list is, below the object that holds it.
    list: &'static [&'static str],
    key: &'static str,
    id: &'static str,
    /// The item, as a message names it.
    what: String,
}

impl Keyed {
    fn find(&self, holder: &Value) -> Option<Value> {
        let mut node = holder;
        for key in self.list {
            node = node.get(*key)?;
        }
        node.as_array()?
            .iter()
            .find(|item| item.get(self.key).and_then(Value::as_str) == Some(self.id))
            .cloned()
    }
}

/// The overlay may repeat a `Keyed` item, not delete or change it. `patch` is the
/// overlay's object that holds the list, at `at`; `built` and `merged` are that object
/// before and after the merge.
fn keyed_item(
    judge: &mut Judge<'_>,
    keyed: &Keyed,
    patch: &Value,
    at: &[Step],
    built: &Value,
    merged: &Value,
) {
    let mine = keyed.find(built);
    if mine.is_none() {
        return;
    }
    match walk(patch, keyed.list) {
        Some((path, Value::Null)) => {
            let owner = judge.owned.shm();
            judge.overrides(
                joined(at, &path),
                format!("removes `{}`, {} among them", dotted(&path), keyed.what),
                owner,
            );
        }
        Some((path, Value::Array(items))) => {
            for (i, item) in items.iter().enumerate() {
                if item.get(keyed.key).and_then(Value::as_str) != Some(keyed.id) {
                    continue;
                }
                let verb = if deletes(item) {
                    "deletes"
                } else if keyed.find(merged) != mine {
                    "changes"
                } else {
                    continue;
                };
                let owner = judge.owned.shm();
                judge.overrides(
                    joined(at, &joined(&path, &[Step::Index(i)])),
                    format!("{verb} {}", keyed.what),
                    owner,
                );
            }
        }
        _ => {}
    }
}

/// The training container: `item` is its entry in the overlay at `at`; `merged` is
/// it after the merge.
fn container(judge: &mut Judge<'_>, item: &Value, at: &[Step], merged: &Value) {
    let c = judge.owned.container;
    let owned = judge.owned;
    let mine = owned.training();
    if deletes(item) {
        judge.overrides(
            joined(at, &[key(PATCH_DIRECTIVE)]),
            format!("deletes container `{c}`"),
            training_container(owned.container),
        );
        return;
    }
    if let Some(theirs) = item.get("image")
        && Some(theirs) != mine.get("image")
    {
        let owner = Owner {
            by: format!("the job's `spec.image: {}`", shown(&mine["image"])),
            fix: "change it there".to_owned(),
        };
        judge.overrides(
            joined(at, &[key("image")]),
            format!("sets the image of container `{c}` to `{}`", shown(theirs)),
            owner,
        );
    }
    for field in ["command", "args"] {
        if let Some(theirs) = item.get(field)
            && Some(theirs) != mine.get(field)
        {
            let verb = if theirs.is_null() { "removes" } else { "sets" };
            judge.overrides(
                joined(at, &[key(field)]),
                format!("{verb} `{field}` of container `{c}`"),
                owned.launcher(),
            );
        }
    }
    resources(judge, item, at);
    capabilities(judge, item, at);
    env(judge, item, at, merged);
    // volumeMounts merge by mountPath.
    let mount = Keyed {
        list: &["volumeMounts"],
        key: "mountPath",
        id: SHM_PATH,
        what: format!("the /dev/shm mount of container `{c}`"),
    };
    keyed_item(judge, &mount, item, at, owned.training(), merged);
}

fn resources(judge: &mut Judge<'_>, item: &Value, at: &[Step]) {
    let c = judge.owned.container;
    let owned = judge.owned;
    for section in ["limits", "requests"] {
        let Some((path, theirs)) = walk(item, &["resources", section]) else {
            continue;
        };
        let path = joined(at, &path);
        let Value::Object(theirs) = theirs else {
            judge.overrides(
                path.clone(),
                format!("removes `{}` of container `{c}`", dotted(&path[at.len()..])),
                owned.gpus(),
            );
            continue;
        };
        let mine = &owned.training()["resources"][section];
        for (name, value) in theirs {
            let owner = if *name == owned.gpu_resource {
                owned.gpus()
            } else if owned.rdma_resources.iter().any(|mine| mine == name) || is_rdma_resource(name)
            {
                owned.rdma(name)
            } else {
                continue;
            };
            let field = format!("resources.{section}.{name}");
            let action = match (mine.get(name), value) {
                (None, Value::Null) => continue,
                (Some(_), Value::Null) => {
                    format!("removes `{field}` of container `{c}`")
                }
                (Some(m), v) if same_quantity(m, v) => continue,
                (Some(_), v) => format!("sets `{field}` of container `{c}` to `{}`", shown(v)),
                (None, v) => format!(
                    "requests `{name}: {}` in `resources.{section}` of container `{c}`",
                    shown(v)
                ),
            };
            judge.overrides(joined(&path, &[key(name)]), action, owner);
        }
    }
}

fn capabilities(judge: &mut Judge<'_>, item: &Value, at: &[Step]) {
    let c = judge.owned.container;
    let owned = judge.owned;
    let have: Vec<Value> = owned
        .training()
        .pointer("/securityContext/capabilities/add")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if owned.ipc_lock() {
        if let Some((path, Value::Null)) = walk(item, &["securityContext", "capabilities", "add"]) {
            let path = joined(at, &path);
            judge.overrides(
                path.clone(),
                format!(
                    "removes `{}` of container `{c}` and IPC_LOCK with it",
                    dotted(&path[at.len()..])
                ),
                owned.capabilities("add capabilities instead: rdmagen keeps its own"),
            );
        }
        if let Some((path, Value::Array(drops))) =
            walk(item, &["securityContext", "capabilities", "drop"])
        {
            for (k, cap) in drops.iter().enumerate() {
                if drops_ipc_lock(cap) {
                    judge.overrides(
                        joined(at, &joined(&path, &[Step::Index(k)])),
                        format!("drops {IPC_LOCK} from container `{c}`"),
                        owned.capabilities(
                            "leave it out of `capabilities.drop` (`drop: [ALL]` keeps it)",
                        ),
                    );
                }
            }
        }
    }
    if have.is_empty() {
        return;
    }
    if let Some((path, Value::Array(adds))) =
        walk(item, &["securityContext", "capabilities", "add"])
    {
        let new: Vec<String> = adds
            .iter()
            .filter(|cap| !have.iter().any(|h| same_capability(h, cap)))
            .map(shown)
            .collect();
        if !new.is_empty() {
            let kept: Vec<String> = have.iter().map(shown).collect();
            judge.adds(
                joined(at, &path),
                format!(
                    "adds {} {} to container `{c}`, kept beside {}: rdmagen adds to `capabilities.add`, where a strategic merge would replace it",
                    if new.len() == 1 { "capability" } else { "capabilities" },
                    new.join(", "),
                    kept.join(", ")
                ),
            );
        }
    }
}

fn env(judge: &mut Judge<'_>, item: &Value, at: &[Step], merged: &Value) {
    let c = judge.owned.container;
    let owned = judge.owned;
    let entry = |container: &Value, name: &str| -> Option<Value> {
        container
            .get("env")?
            .as_array()?
            .iter()
            .find(|e| e.get("name").and_then(Value::as_str) == Some(name))
            .cloned()
    };
    let mine = owned.training();
    match walk(item, &["env"]) {
        Some((path, Value::Null)) if mine.get("env").is_some() => {
            let names: Vec<&str> = mine["env"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e.get("name").and_then(Value::as_str))
                .collect();
            let first = names.first().copied().unwrap_or_default();
            judge.overrides(
                joined(at, &path),
                format!("removes the env of container `{c}` ({})", names.join(", ")),
                owned.env(first),
            );
        }
        Some((path, Value::Array(entries))) => {
            let mut added = Vec::new();
            for (k, e) in entries.iter().enumerate() {
                let Some(name) = e.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let at_entry = joined(at, &joined(&path, &[Step::Index(k)]));
                let Some(set) = entry(mine, name) else {
                    if !deletes(e) {
                        added.push(name.to_owned());
                    }
                    continue;
                };
                let action = if deletes(e) {
                    format!("deletes env `{name}` of container `{c}`")
                } else if entry(merged, name).as_ref() != Some(&set) {
                    let to = match (e.get("value"), e.get("valueFrom")) {
                        (Some(v), _) if !v.is_null() => format!("to `{}`", shown(v)),
                        (_, Some(v)) if !v.is_null() => "to a valueFrom".to_owned(),
                        _ => "to nothing".to_owned(),
                    };
                    format!("sets env `{name}` of container `{c}` {to}")
                } else {
                    continue;
                };
                let field = ["value", "valueFrom"]
                    .into_iter()
                    .find(|f| e.get(*f).is_some() && !deletes(e));
                let located = match field {
                    Some(f) => joined(&at_entry, &[key(f)]),
                    None => at_entry,
                };
                judge.overrides(located, action, owned.env(name));
            }
            if !added.is_empty() {
                judge.adds(
                    joined(at, &path),
                    format!(
                        "adds env {} to container `{c}`; the variables rdmagen sets are unchanged",
                        added.join(", ")
                    ),
                );
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A pod as rdmagen builds it for an 8-GPU RoCE job on Volcano with hostNetwork.
    fn owned() -> Owned {
        let built = json!({
            "metadata": {"annotations": {VOLCANO_QUEUE: "q1"}},
            "spec": {
                "schedulerName": "volcano",
                "hostNetwork": true,
                "dnsPolicy": "ClusterFirstWithHostNet",
                "containers": [{
                    "name": "pytorch",
                    "image": "img:1",
                    "command": ["torchrun", "t.py"],
                    "env": [
                        {"name": "FOO", "value": "bar"},
                        {"name": "NCCL_IB_HCA", "value": "=mlx5_1,mlx5_2"},
                    ],
                    "resources": {
                        "requests": {"nvidia.com/gpu": "8", "rdma/hca": "1"},
                        "limits": {"nvidia.com/gpu": "8", "rdma/hca": "1"},
                    },
                    "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                    "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}],
                }],
                "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
            }
        });
        let decisions = [
            ("rdma", "on"),
            ("rdma resource", "rdma/hca: 1"),
            ("command", "torchrun t.py"),
            ("env NCCL_IB_HCA", "=mlx5_1,mlx5_2"),
            ("capabilities", "IPC_LOCK"),
            ("/dev/shm", "emptyDir medium Memory, sizeLimit none"),
            ("schedulerName", "volcano"),
            ("dnsPolicy", "ClusterFirstWithHostNet"),
        ];
        Owned {
            built,
            container: "pytorch",
            gpu_resource: "nvidia.com/gpu".to_owned(),
            gpus_per_node: 8,
            rdma_resources: vec!["rdma/hca".to_owned()],
            queue: Some("q1".to_owned()),
            decisions: decisions
                .iter()
                .map(|(t, v)| ((*t).to_owned(), (*v).to_owned()))
                .collect(),
            env_sources: [("FOO".to_owned(), Origin::Job)].into(),
        }
    }

    fn container(fields: Value) -> Value {
        let mut c = json!({"name": "pytorch"});
        c.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        json!({"spec": {"containers": [c]}})
    }

    /// (rule ID, dotted path, message) of each verdict.
    fn verdicts(overlay: Value) -> Vec<(&'static str, String, String)> {
        judge(&owned(), &overlay, "the job's")
            .into_iter()
            .map(|v| (v.rule.info().id, dotted(&v.at), v.message))
            .collect()
    }

    fn one(overlay: Value) -> (&'static str, String, String) {
        let mut all = verdicts(overlay);
        assert_eq!(all.len(), 1, "{all:#?}");
        all.remove(0)
    }

    #[test]
    fn replacing_or_removing_the_rdma_or_gpu_resource_is_an_error() {
        assert_eq!(
            one(container(json!({"resources": {"limits": {"rdma/hca": "2"}}}))),
            (
                "RDG055",
                "spec.containers[0].resources.limits.rdma/hca".to_owned(),
                "the job's podTemplate sets `resources.limits.rdma/hca` of container `pytorch` to `2`, which would break rdmagen's decision `rdma resource = rdma/hca: 1`; ask for a count with `spec.rdma`".to_owned()
            )
        );
        assert_eq!(
            one(container(
                json!({"resources": {"requests": {"rdma/hca": null}}})
            ))
            .2,
            "the job's podTemplate removes `resources.requests.rdma/hca` of container `pytorch`, which would break rdmagen's decision `rdma resource = rdma/hca: 1`; ask for a count with `spec.rdma`"
        );
        assert_eq!(
            one(container(
                json!({"resources": {"limits": {"rdma/shared": 1}}})
            ))
            .2,
            "the job's podTemplate requests `rdma/shared: 1` in `resources.limits` of container `pytorch`, which would break rdmagen's decision `rdma resource = rdma/hca: 1`; name the resource in the pool's `network.rdmaResource`"
        );
        assert_eq!(
            one(container(
                json!({"resources": {"limits": {"nvidia.com/gpu": 4}}})
            ))
            .2,
            "the job's podTemplate sets `resources.limits.nvidia.com/gpu` of container `pytorch` to `4`, which would break the job's `spec.gpusPerNode: 8`; change `spec.gpusPerNode`"
        );
        // The same amount, written another way, and other resources are the overlay's.
        assert_eq!(
            verdicts(container(json!({"resources": {
                "limits": {"nvidia.com/gpu": 8, "rdma/hca": "1", "cpu": "16"},
                "requests": {"memory": "1Gi"}}}))),
            []
        );
    }

    #[test]
    fn an_rdma_resource_on_a_job_without_rdma_is_an_error() {
        let mut owned = owned();
        owned.rdma_resources.clear();
        owned.decisions.retain(|(t, _)| t != "rdma resource");
        owned.decisions[0].1 = "off".to_owned();
        let resources = &mut owned.built["spec"]["containers"][0]["resources"];
        for section in ["limits", "requests"] {
            resources[section]
                .as_object_mut()
                .unwrap()
                .remove("rdma/hca");
        }
        let found = judge(
            &owned,
            &container(json!({"resources": {"limits": {"rdma/hca": "1"}}})),
            "pool `p`'s",
        );
        assert_eq!(
            found[0].message,
            "pool `p`'s podTemplate requests `rdma/hca: 1` in `resources.limits` of container `pytorch`, which would break rdmagen's decision `rdma = off`; turn RDMA on with `spec.rdma`"
        );
    }

    #[test]
    fn dropping_ipc_lock_is_an_error_but_drop_all_keeps_it() {
        assert_eq!(
            one(container(json!({"securityContext": {"capabilities": {"drop": ["NET_RAW", "IPC_LOCK"]}}}))),
            (
                "RDG055",
                "spec.containers[0].securityContext.capabilities.drop[1]".to_owned(),
                "the job's podTemplate drops IPC_LOCK from container `pytorch`, which would break rdmagen's decision `capabilities = IPC_LOCK`; leave it out of `capabilities.drop` (`drop: [ALL]` keeps it)".to_owned()
            )
        );
        assert_eq!(
            one(container(
                json!({"securityContext": {"capabilities": {"drop": ["cap_ipc_lock"]}}})
            ))
            .0,
            "RDG055"
        );
        assert_eq!(
            verdicts(container(
                json!({"securityContext": {"capabilities": {"drop": ["ALL"]}}})
            )),
            []
        );
        assert_eq!(
            one(container(
                json!({"securityContext": {"capabilities": {"add": null}}})
            ))
            .2,
            "the job's podTemplate removes `securityContext.capabilities.add` of container `pytorch` and IPC_LOCK with it, which would break rdmagen's decision `capabilities = IPC_LOCK`; add capabilities instead: rdmagen keeps its own"
        );
        assert_eq!(
            one(container(json!({"securityContext": null}))).1,
            "spec.containers[0].securityContext"
        );
    }

    #[test]
    fn an_extra_capability_is_added_beside_ipc_lock_with_an_info() {
        let overlay = container(
            json!({"securityContext": {"capabilities": {"add": ["SYS_PTRACE", "ipc_lock"]}}}),
        );
        assert_eq!(
            one(overlay),
            (
                "RDG056",
                "spec.containers[0].securityContext.capabilities.add".to_owned(),
                "the job's podTemplate adds capability SYS_PTRACE to container `pytorch`, kept beside IPC_LOCK: rdmagen adds to `capabilities.add`, where a strategic merge would replace it".to_owned()
            )
        );
    }

    #[test]
    fn env_rdmagen_sets_cannot_change_and_new_env_is_an_info() {
        assert_eq!(
            one(container(json!({"env": [{"name": "NCCL_IB_HCA", "value": "mlx5_1"}]}))),
            (
                "RDG055",
                "spec.containers[0].env[0].value".to_owned(),
                "the job's podTemplate sets env `NCCL_IB_HCA` of container `pytorch` to `mlx5_1`, which would break rdmagen's decision `env NCCL_IB_HCA = =mlx5_1,mlx5_2`; set it in the job's `spec.env`, where rdmagen checks it".to_owned()
            )
        );
        assert_eq!(
            one(container(json!({"env": [{"name": "FOO", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}))).2,
            "the job's podTemplate sets env `FOO` of container `pytorch` to a valueFrom, which would break the job's `spec.env.FOO`; change it there"
        );
        assert_eq!(
            one(container(json!({"env": [{"name": "FOO", "$patch": "delete"}]}))),
            (
                "RDG055",
                "spec.containers[0].env[0]".to_owned(),
                "the job's podTemplate deletes env `FOO` of container `pytorch`, which would break the job's `spec.env.FOO`; change it there".to_owned()
            )
        );
        assert_eq!(
            one(container(json!({"env": [
                {"name": "FOO", "value": "bar"},
                {"name": "EXTRA", "value": "1"},
                {"name": "MORE", "value": "2"}]}))),
            (
                "RDG056",
                "spec.containers[0].env".to_owned(),
                "the job's podTemplate adds env EXTRA, MORE to container `pytorch`; the variables rdmagen sets are unchanged".to_owned()
            )
        );
    }

    #[test]
    fn the_launcher_image_and_container_are_rdmagens() {
        let found = verdicts(container(json!({
            "image": "other:2", "command": ["bash"], "args": ["-c", "x"]})));
        let paths: Vec<&str> = found.iter().map(|f| f.1.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.containers[0].image",
                "spec.containers[0].command",
                "spec.containers[0].args"
            ]
        );
        assert_eq!(
            found[0].2,
            "the job's podTemplate sets the image of container `pytorch` to `other:2`, which would break the job's `spec.image: img:1`; change it there"
        );
        assert_eq!(
            found[1].2,
            "the job's podTemplate sets `command` of container `pytorch`, which would break rdmagen's decision `command = torchrun t.py`; set `script` and `args`, or `command` with `launcher: none`, in the job"
        );
        assert_eq!(
            verdicts(container(
                json!({"image": "img:1", "command": ["torchrun", "t.py"]})
            )),
            []
        );
        assert_eq!(
            one(container(json!({"$patch": "delete"}))).2,
            "the job's podTemplate deletes container `pytorch`, which would break rdmagen's training container (the operator finds it by the name `pytorch`); add containers beside it instead"
        );
    }

    #[test]
    fn shm_volume_and_mount_are_rdmagens() {
        let dshm = json!({"spec": {"volumes": [{"name": "dshm", "hostPath": {"path": "/x"}}]}});
        assert_eq!(
            one(dshm),
            (
                "RDG055",
                "spec.volumes[0]".to_owned(),
                "the job's podTemplate changes volume `dshm`, which would break rdmagen's decision `/dev/shm = emptyDir medium Memory, sizeLimit none`; size it with the job's `spec.shm`".to_owned()
            )
        );
        assert_eq!(one(json!({"spec": {"volumes": null}})).1, "spec.volumes");
        assert_eq!(
            one(container(
                json!({"volumeMounts": [{"name": "other", "mountPath": "/dev/shm"}]})
            ))
            .2,
            "the job's podTemplate changes the /dev/shm mount of container `pytorch`, which would break rdmagen's decision `/dev/shm = emptyDir medium Memory, sizeLimit none`; size it with the job's `spec.shm`"
        );
        // Mounting dshm a second time, elsewhere, adds a mount.
        assert_eq!(
            verdicts(container(
                json!({"volumeMounts": [{"name": "dshm", "mountPath": "/shm2"}]})
            )),
            []
        );
    }

    #[test]
    fn pod_fields_the_plan_sets_are_rdmagens() {
        let found = verdicts(json!({
            "metadata": {"annotations": {VOLCANO_QUEUE: "q2", "team": "a"}},
            "spec": {"hostNetwork": false, "dnsPolicy": "Default", "schedulerName": "default-scheduler"}}));
        let messages: Vec<&str> = found.iter().map(|f| f.2.as_str()).collect();
        assert_eq!(
            messages,
            [
                "the job's podTemplate sets `spec.hostNetwork` to `false`, which would break the job's `spec.hostNetwork: true`; change it there",
                "the job's podTemplate sets `spec.dnsPolicy` to `Default`, which would break rdmagen's decision `dnsPolicy = ClusterFirstWithHostNet`; it follows the job's `spec.hostNetwork`",
                "the job's podTemplate sets `spec.schedulerName` to `default-scheduler`, which would break rdmagen's decision `schedulerName = volcano`; the pool's `scheduler.name` sets it",
                "the job's podTemplate sets `metadata.annotations.scheduling.volcano.sh/queue-name` to `q2`, which would break the job's Volcano queue `q1`; set the queue in the job's `runPolicy.schedulingPolicy.queue` or the pool's `scheduler.queue`",
            ]
        );
        // Where the plan leaves a field unset, the overlay may set it.
        let mut owned = owned();
        owned.built["spec"]
            .as_object_mut()
            .unwrap()
            .remove("hostNetwork");
        assert!(judge(&owned, &json!({"spec": {"hostNetwork": true}}), "x").is_empty());
    }

    #[test]
    fn the_multus_networks_of_the_rails_are_rdmagens() {
        let mut owned = owned();
        owned.built["metadata"]["annotations"][crate::multus::NETWORKS_ANNOTATION] =
            "gpu-rail1,gpu-rail2".into();
        let overlay = |value: Value| json!({"metadata": {"annotations": {crate::multus::NETWORKS_ANNOTATION: value}}});
        let found = judge(&owned, &overlay("other-net".into()), "the job's");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].rule, Rule::PodTemplateOverride);
        assert_eq!(
            found[0].message,
            "the job's podTemplate sets `metadata.annotations.k8s.v1.cni.cncf.io/networks` to `other-net`, which would break the Multus networks of the pool's rails (`gpu-rail1,gpu-rail2`), one per rail device the pod requests; change the rails in the pool's `network.rails`"
        );
        assert_eq!(judge(&owned, &overlay(Value::Null), "the job's").len(), 1);
        // Repeating it is no change; a pod without rails may get networks of its own.
        assert!(judge(&owned, &overlay("gpu-rail1,gpu-rail2".into()), "x").is_empty());
        assert!(judge(&self::owned(), &overlay("other-net".into()), "x").is_empty());
    }

    #[test]
    fn everything_else_merges_without_comment() {
        let overlay = json!({
            "metadata": {"labels": {"a": "b"}},
            "spec": {
                "affinity": {"podAntiAffinity": {}},
                "hostIPC": true,
                "tolerations": [{"key": "k", "operator": "Exists"}],
                "containers": [{"name": "side", "image": "s:1", "command": ["sleep"]},
                    {"name": "pytorch", "ports": [{"containerPort": 29500}],
                     "resources": {"limits": {"memory": "1Ti"}}}],
                "volumes": [{"name": "data", "emptyDir": {}}]}});
        assert_eq!(verdicts(overlay), []);
    }

    /// (dotted path, message) of each RDG164 verdict on `overlay` over `built`.
    fn drops(built: &Value, overlay: &Value) -> Vec<(String, String)> {
        let mut owned = owned();
        owned.built = built.clone();
        judge(&owned, overlay, "the job's")
            .into_iter()
            .filter(|v| v.rule == Rule::PodTemplateDropsItems)
            .map(|v| (dotted(&v.at), v.message))
            .collect()
    }

    #[test]
    fn a_whole_list_replaced_without_the_pods_items_is_a_warning_naming_them() {
        let mut built = owned().built;
        built["spec"]["tolerations"] = json!([{"key": "job-taint", "operator": "Exists"}]);
        built["spec"]["affinity"] = json!({"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}});
        built["spec"]["initContainers"] =
            json!([{"name": "fetch", "image": "busybox", "command": ["sh", "-c", "x"]}]);
        built["spec"]["containers"][0]["securityContext"]["capabilities"]["drop"] =
            json!(["NET_RAW"]);
        let overlay = json!({"spec": {
            // Added to, not replaced: nothing is lost.
            "tolerations": [{"key": "other", "operator": "Exists"}],
            "affinity": {"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "rack", "operator": "Exists"}]}]}}},
            "initContainers": [{"name": "fetch", "command": ["sh"]}],
            "containers": [{"name": "pytorch",
                // RDG055's, not this rule's.
                "command": ["bash"],
                // Capabilities are the same whatever their case: nothing is lost.
                "securityContext": {"capabilities": {"drop": ["net_raw", "ALL"]}}}]}});
        let terms = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
        assert_eq!(
            drops(&built, &overlay),
            [
                (
                    terms.to_owned(),
                    format!(
                        "the job's podTemplate replaces `{terms}`, a list Kubernetes merges whole, and drops 1 item the job's or pool's fields put there: `{{\"matchExpressions\":[{{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"a\"]}}]}}`; repeat them in the overlay's list to keep them, or change the job or pool field instead"
                    )
                ),
                (
                    "spec.initContainers[0].command".to_owned(),
                    "the job's podTemplate replaces `spec.initContainers[0].command`, a list Kubernetes merges whole, and drops 2 items the job's or pool's fields put there: `-c`, `x`; repeat them in the overlay's list to keep them, or change the job or pool field instead".to_owned()
                ),
            ]
        );
        // Repeating the pod's items, in any order, with more beside them, loses nothing.
        let kept = json!({"spec": {"initContainers": [
            {"name": "fetch", "command": ["x", "sh", "-c", "y"]}]}});
        assert_eq!(drops(&built, &kept), []);
    }

    #[test]
    fn lost_items_are_quoted_escaped_cut_and_counted() {
        let mut built = owned().built;
        let long = "a".repeat(500);
        built["spec"]["initContainers"] = json!([{"name": "fetch",
            "args": [format!("\u{1b}[31m{long}"), "2", "3", "4", "5"]}]);
        let overlay = json!({"spec": {"initContainers": [{"name": "fetch", "args": []}]}});
        let found = drops(&built, &overlay);
        assert_eq!(found.len(), 1);
        let message = &found[0].1;
        assert!(!message.contains('\u{1b}'), "{message}");
        assert!(message.contains("drops 5 items"), "{message}");
        assert!(message.contains("`2`, `3`, and 2 more;"), "{message}");
        assert!(message.contains("a…`"), "{message}");
        assert!(message.chars().count() < 400, "{message}");
    }
}
