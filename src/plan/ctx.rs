//! The context every resolve helper works with: the job, its pool, the platform, the
//! target, and where findings and decisions go.

use crate::diagnostics::source::Location;
use crate::diagnostics::{Findings, Rule};
use crate::model::pool::Fabric;
use crate::model::{JobDocument, Loaded, PoolDocument};
use crate::plan::decision::Decisions;
use crate::plan::defaults::{Origin, PodInputs};
use crate::plan::target::Target;
use crate::platform::{Profile, Shape};
use crate::yaml::tree::Seg;

/// What every resolve helper works with.
pub struct Ctx<'a> {
    pub job: &'a Loaded<JobDocument>,
    pub pool: &'a Loaded<PoolDocument>,
    pub profile: &'static Profile,
    /// The pool's target with the platform's defaults; decided first.
    pub target: Target,
    pub findings: &'a mut Findings,
    pub decisions: Decisions,
    /// The job's pod fields with the pool's defaults folded in.
    pub inputs: PodInputs,
}

impl Ctx<'_> {
    /// Where `path` (below the job document's root) is written.
    pub fn job_at(&self, path: &[Seg<'_>]) -> Location {
        self.job.doc.locate(path)
    }

    pub fn report(&mut self, rule: Rule, message: impl Into<String>, path: &[Seg<'_>]) {
        let at = self.job_at(path);
        self.findings.at(rule, message, at);
    }

    /// Report at `path` of the document `origin` names: the job, or its pool.
    pub fn report_from(
        &mut self,
        origin: Origin,
        rule: Rule,
        message: impl Into<String>,
        path: &[Seg<'_>],
    ) {
        let at = match origin {
            Origin::Job => self.job.doc.locate(path),
            Origin::Pool => self.pool.doc.locate(path),
        };
        self.findings.at(rule, message, at);
    }

    /// The machine shape of the nodes the job's node selector (the pool's defaults
    /// folded in) picks, where the platform documents NCCL values for it.
    pub fn shape(&self) -> Option<&'static Shape> {
        let selector = self.inputs.node_selector.iter();
        self.profile
            .shape(selector.map(|(key, value)| (key.as_str(), value.value.as_str())))
    }

    /// The shape's reason clause for a value taken from it.
    pub fn shape_reason(&self, shape: &Shape) -> String {
        format!(
            "{}'s NCCL parameters for shape {} (the node selector's {}; {})",
            self.profile.title,
            shape.name,
            self.profile.shape_label.unwrap_or_default(),
            self.profile.source
        )
    }

    pub fn fabric(&self) -> Fabric {
        self.pool.value.spec.network.fabric
    }

    /// Whether the pool's pods are scheduled by Volcano.
    pub fn on_volcano(&self) -> bool {
        self.pool
            .value
            .spec
            .scheduler
            .as_ref()
            .is_some_and(|s| s.is_volcano())
    }

    /// The pool's NCCL floor, as a reason clause.
    pub fn target_nccl(&self) -> String {
        match self.target.nccl {
            Some(v) => format!("the pool's images have NCCL {v} or later"),
            None => "the pool does not say which NCCL its images have".to_owned(),
        }
    }
}
