//! What the jobs of a run found, gathered per worker and merged at the end.

use crate::diagnostics::Findings;
use crate::error::Error;
use crate::pipeline::sink::Order;
use crate::plan::Decision;

/// What one worker found while rendering its share of the jobs.
#[derive(Default)]
pub(super) struct Partial {
    pub(super) findings: Findings,
    /// Findings caused by another document's errors (a job whose pool failed to load
    /// or is defined twice): reported after every other finding, so that the cause
    /// comes first.
    pub(super) consequences: Findings,
    pub(super) rendered: usize,
    /// Jobs judged, rendered or stopped by their findings.
    pub(super) checked: usize,
    /// Trainer runtimes rendered (before any job).
    pub(super) runtimes: usize,
    /// (order, output directory, pool, decisions) of each rendered job, with `explain`.
    pub(super) decisions: Vec<(Order, String, String, Vec<Decision>)>,
    /// The first error that stopped this worker, with the job it stopped at.
    pub(super) error: Option<(Order, Error)>,
}

impl Partial {
    pub(super) fn merge(&mut self, other: Partial) {
        self.findings.extend(other.findings);
        self.consequences.extend(other.consequences);
        self.rendered += other.rendered;
        self.checked += other.checked;
        self.runtimes += other.runtimes;
        self.decisions.extend(other.decisions);
        // The error of the earliest job, whichever worker met it first.
        if let Some((order, e)) = other.error
            && self.error.as_ref().is_none_or(|(o, _)| order < *o)
        {
            self.error = Some((order, e));
        }
    }
}
