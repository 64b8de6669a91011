//! The cluster a plan is for: the pool's `spec.target`, with the platform's defaults
//! filled in. Every later decision that depends on it reads it from here.

use crate::model::pool::Platform;
use crate::model::target::{OperatorGeneration, Version};
use crate::model::{Loaded, PoolDocument};
use crate::plan::decision::Decisions;
use crate::platform::Profile;

/// What the job's cluster runs, as far as it is known.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub platform: Platform,
    /// The training-operator version; None when neither the pool nor the platform says.
    pub operator: Option<Version>,
    /// The NCCL version floor of the pool's images, when the pool says.
    pub nccl: Option<Version>,
    /// Whether the operator gang-schedules through Volcano, when the pool says.
    pub gang_scheduling: Option<bool>,
}

impl Target {
    /// The operator generation, when known. Unknown means: write what both run.
    pub fn generation(&self) -> Option<OperatorGeneration> {
        self.operator.map(OperatorGeneration::of)
    }
}

/// The pool's target with `profile`'s defaults, each recorded in `decisions`.
pub fn decide(
    pool_doc: &Loaded<PoolDocument>,
    profile: &Profile,
    decisions: &mut Decisions,
) -> Target {
    let spec = &pool_doc.value.spec;
    let asked = &spec.target;
    let pool = &pool_doc.value.metadata.name;
    let operator = match (asked.operator, profile.operator) {
        (Some(v), _) => {
            let why = format!("pool `{pool}` sets target.operator");
            decisions.record("target operator", describe_operator(v), why);
            Some(v)
        }
        (None, Some((v, source))) => {
            let why = format!("the {} platform default: {source}", profile.name);
            decisions.record("target operator", describe_operator(v), why);
            Some(v)
        }
        (None, None) => {
            decisions.record(
                "target operator",
                "unknown",
                format!("pool `{pool}` sets no target.operator and the {} platform has no default; the launcher uses the form both operator generations run", profile.name),
            );
            None
        }
    };
    let nccl = asked.nccl;
    decisions.record(
        "target nccl",
        nccl.map_or("unknown".to_owned(), |v| format!("{v} or later")),
        match nccl {
            Some(_) => format!("pool `{pool}` sets target.nccl"),
            None => format!("pool `{pool}` sets no target.nccl"),
        },
    );
    Target {
        platform: spec.platform,
        operator,
        nccl,
        gang_scheduling: asked.gang_scheduling,
    }
}

fn describe_operator(v: Version) -> String {
    match OperatorGeneration::of(v) {
        OperatorGeneration::PodWorld => {
            format!("{v} (before 1.7: no nprocPerNode, no PET_* variables)")
        }
        OperatorGeneration::Pet => format!("{v} (1.7 or later: nprocPerNode and PET_*)"),
    }
}
