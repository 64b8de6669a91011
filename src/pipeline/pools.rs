//! Every pool of a run's inputs, registered before any job is rendered, and what is
//! wrong with them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::diagnostics::Location;
use crate::diagnostics::{Findings, Rule, Suppressions};
use crate::model::{Loaded, PoolDocument};
use crate::pipeline::judge::Judge;
use crate::pipeline::sink::Order;
use crate::plan;
use crate::yaml::tree::Seg;

/// Every pool definition of the inputs. Pools are few; jobs look them up often.
#[derive(Default)]
pub(super) struct Pools {
    /// The definition each name resolves to (the first in input order).
    by_name: BTreeMap<String, Loaded<PoolDocument>>,
    /// Names whose first definition has errors: their jobs are resolved, not rendered.
    broken: BTreeSet<String>,
    /// Names defined more than once, with where each definition names itself.
    duplicated: BTreeMap<String, Vec<Location>>,
    /// Pools that failed to load: name → the files it failed in.
    failed: BTreeMap<String, BTreeSet<Arc<str>>>,
    /// Files that failed to load before their pools' names were known (a syntax error).
    unreadable: BTreeSet<Arc<str>>,
    /// Whether `--pools` was given, so that a missing pool suggests it only when not.
    pools_given: bool,
}

/// Why a job cannot use its pool, and whether that is a consequence of another
/// document's errors (then it is reported after them).
pub(super) struct Missing {
    /// RDG005, or RDG006 when the pool's name is defined twice.
    pub(super) rule: Rule,
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

    /// Register every definition, sorted into input order here: the first of a name
    /// is the one checked and an error (RDG006) for each later one. Findings go to
    /// `findings`; a pool is broken by the errors `judge` leaves.
    pub(super) fn register(
        &mut self,
        mut definitions: Vec<(Order, Loaded<PoolDocument>)>,
        judge: Judge<'_>,
        findings: &mut Findings,
    ) {
        definitions.sort_by_key(|(order, _)| *order);
        let mut names: BTreeMap<String, Vec<Location>> = BTreeMap::new();
        for (_, pool) in definitions {
            let name = pool.value.metadata.name.clone();
            let at = pool.doc.locate(&[Seg::Key("metadata"), Seg::Key("name")]);
            let seen = names.entry(name.clone()).or_default();
            seen.push(at.clone());
            if seen.len() > 1 {
                findings.at(
                    Rule::DuplicateName,
                    format!("pool `{name}` is defined more than once"),
                    at,
                );
                continue;
            }
            let from = findings.len();
            plan::check_pool(&pool, findings);
            if judge.fails(findings, from, &Suppressions::default()) {
                self.broken.insert(name.clone());
            }
            self.by_name.insert(name, pool);
        }
        self.duplicated = names.into_iter().filter(|(_, at)| at.len() > 1).collect();
    }

    /// The pool a job named, and whether it has errors; or why the job cannot use it.
    pub(super) fn get(&self, name: &str) -> Result<(&Loaded<PoolDocument>, bool), Missing> {
        // Which definition the job meant is not known: it is not rendered against
        // either, and says why once (the duplicate itself is an error of its own).
        if let Some(places) = self.duplicated.get(name) {
            let places: Vec<String> = places.iter().map(Location::to_string).collect();
            return Err(Missing {
                rule: Rule::DuplicateName,
                message: format!(
                    "pool `{name}` is defined more than once ({}); job not rendered",
                    places.join(", ")
                ),
                consequence: true,
            });
        }
        match self.by_name.get(name) {
            Some(pool) => Ok((pool, self.broken.contains(name))),
            None => Err(self.missing(name)),
        }
    }

    /// Every pool that loaded without errors, in name order.
    pub(super) fn sound(&self) -> impl Iterator<Item = &Loaded<PoolDocument>> {
        self.by_name
            .iter()
            .filter(|(name, _)| !self.broken.contains(*name))
            .map(|(_, pool)| pool)
    }

    /// A pool whose runtime could not be planned: its jobs are not rendered either.
    pub(super) fn mark_broken(&mut self, name: &str) {
        self.broken.insert(name.to_owned());
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
    fn missing(&self, name: &str) -> Missing {
        let list = |files: &BTreeSet<Arc<str>>| {
            files
                .iter()
                .map(|f| f.as_ref())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if let Some(files) = self.failed.get(name) {
            return Missing {
                rule: Rule::UnknownPool,
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
                rule: Rule::UnknownPool,
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
            rule: Rule::UnknownPool,
            message: format!("pool `{name}` is not defined; known pools: {known}{hint}"),
            consequence: false,
        }
    }
}
