//! What every job of a run shares while it is rendered.

use std::collections::BTreeMap;

use crate::pipeline::judge::Judge;
use crate::pipeline::placement::Placement;
use crate::pipeline::pools::Pools;
use crate::pipeline::sink::Sink;
use crate::plan::trainer::RuntimePlan;
use crate::render::Renderer;
use crate::verify::Verifier;

/// Shared, read-only state of the second pass: everything read in the first.
pub(super) struct Run<'a> {
    pub(super) renderer: &'a Renderer,
    pub(super) verifier: &'a Verifier,
    /// Every pool of the inputs, registered before any job is rendered.
    pub(super) pools: &'a Pools,
    /// The runtime of each Trainer pool, planned before any job.
    pub(super) runtimes: &'a BTreeMap<String, RuntimePlan>,
    pub(super) sink: &'a dyn Sink,
    /// Each job's directory, from the names of every job of the inputs.
    pub(super) placement: &'a Placement,
    pub(super) explain: bool,
    /// The rule levels and the suppressions of every file read.
    pub(super) judge: Judge<'a>,
}
