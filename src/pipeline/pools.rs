//! Pool definitions found during a run, and what is wrong with them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::diagnostics::{Findings, Rule};
use crate::model::{Loaded, PoolDocument};
use crate::pipeline::Order;
use crate::pipeline::worker::Partial;
use crate::plan;
use crate::yaml::tree::Seg;

/// Every pool definition seen so far. Pools are few; jobs look them up often.
#[derive(Default)]
pub(super) struct Pools {
    /// The definition each name resolves to (the first registered).
    pub(super) by_name: BTreeMap<String, Arc<Loaded<PoolDocument>>>,
    /// Findings of each registered pool's own checks, and whether any is an error.
    pub(super) checks: BTreeMap<String, (Findings, bool)>,
    /// Every definition, in no particular order, for duplicate detection.
    pub(super) all: Vec<(Order, Arc<Loaded<PoolDocument>>)>,
    /// Pools that failed to load: name → the files it failed in.
    failed: BTreeMap<String, BTreeSet<Arc<str>>>,
    /// Files that failed to load before their pools' names were known (a syntax error).
    unreadable: BTreeSet<Arc<str>>,
    /// Whether `--pools` was given, so that a missing pool suggests it only when not.
    pools_given: bool,
}

/// Why a job's pool is not there, and whether that is a consequence of another
/// file's errors (then it is reported after them).
pub(super) struct Missing {
    pub(super) message: String,
    pub(super) consequence: bool,
}

impl Pools {
    pub(super) fn new(pools_given: bool) -> Self {
        Pools {
            pools_given,
            ..Pools::default()
        }
    }

    /// Add a definition; true when a finding may point into it (its checks found
    /// something, or its name is taken), so that its file's text must be kept.
    pub(super) fn register(&mut self, order: Order, pool: Loaded<PoolDocument>) -> bool {
        let pool = Arc::new(pool);
        let name = pool.value.metadata.name.clone();
        let cited = if self.by_name.contains_key(&name) {
            true
        } else {
            let mut findings = Findings::default();
            plan::check_pool(&pool, &mut findings);
            let broken = findings.errors() > 0;
            let cited = !findings.is_empty();
            self.checks.insert(name.clone(), (findings, broken));
            self.by_name.insert(name, pool.clone());
            cited
        };
        self.all.push((order, pool));
        cited
    }

    pub(super) fn broken(&self, name: &str) -> bool {
        self.checks.get(name).is_some_and(|(_, broken)| *broken)
    }

    /// Note the pools of `file` that failed to load (None: a name not known).
    pub(super) fn failed_to_load(&mut self, file: &Arc<str>, names: Vec<Option<String>>) {
        for name in names {
            match name {
                Some(name) => {
                    self.failed.entry(name).or_default().insert(file.clone());
                }
                None => {
                    self.unreadable.insert(file.clone());
                }
            }
        }
    }

    /// What to tell a job whose pool `name` is not defined.
    pub(super) fn missing(&self, name: &str) -> Missing {
        let list = |files: &BTreeSet<Arc<str>>| {
            files
                .iter()
                .map(|f| f.as_ref())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(files) = self.failed.get(name) {
            return Missing {
                message: format!(
                    "pool `{name}` failed to load (see the errors in {} above); job not rendered",
                    list(files)
                ),
                consequence: true,
            };
        }
        let known = if self.by_name.is_empty() {
            "none".to_owned()
        } else {
            self.by_name.keys().cloned().collect::<Vec<_>>().join(", ")
        };
        if !self.unreadable.is_empty() {
            return Missing {
                message: format!(
                    "pool `{name}` is not defined; known pools: {known}; {} failed to load (see the errors above) and may define it",
                    list(&self.unreadable)
                ),
                consequence: true,
            };
        }
        let hint = if self.by_name.is_empty() && !self.pools_given {
            " (pass --pools)"
        } else {
            ""
        };
        Missing {
            message: format!("pool `{name}` is not defined; known pools: {known}{hint}"),
            consequence: false,
        }
    }
}

/// Each pool name's checks, and an error for every definition after the first (in
/// input order). Jobs on a name defined twice keep no findings of their own.
pub(super) fn pool_findings(mut pools: Pools, total: &mut Partial) {
    pools.all.sort_by_key(|(order, _)| *order);
    let mut first: BTreeMap<String, Arc<Loaded<PoolDocument>>> = BTreeMap::new();
    let mut duplicated = BTreeSet::new();
    for (_, pool) in &pools.all {
        let name = pool.value.metadata.name.clone();
        match first.entry(name) {
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(pool.clone());
            }
            std::collections::btree_map::Entry::Occupied(slot) => {
                total.findings.at(
                    Rule::DuplicateName,
                    format!("pool `{}` is defined more than once", slot.key()),
                    pool.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]),
                );
                duplicated.insert(slot.key().clone());
            }
        }
    }
    for (name, pool) in &first {
        if duplicated.contains(name) {
            plan::check_pool(pool, &mut total.findings);
        } else if let Some((findings, _)) = pools.checks.remove(name) {
            total.findings.extend(findings);
        }
    }
    for (pool, findings) in std::mem::take(&mut total.job_findings) {
        if !duplicated.contains(&pool) {
            total.findings.extend(findings);
        }
    }
}
