//! Where errors stop a pool or a job: after the user's rule levels and suppressions.

use std::collections::BTreeSet;

use crate::diagnostics::{Findings, Location, Policy, Rule, Suppressions};

/// What decides, at each point where errors stop a pool or a job, whether they do:
/// the user's rule levels and the suppressions that apply there.
#[derive(Clone, Copy)]
pub(super) struct Judge<'a> {
    pub(super) policy: &'a Policy,
    pub(super) suppressions: &'a Suppressions,
}

impl Judge<'_> {
    /// Judge the findings from `from` on (with `own`, a job's annotation, too);
    /// whether errors are left among them, and the suppressions used.
    pub(super) fn judge(
        &self,
        findings: &mut Findings,
        from: usize,
        own: &Suppressions,
    ) -> (bool, BTreeSet<(Location, Rule)>) {
        let used = self.policy.apply(findings, from, &[self.suppressions, own]);
        (findings.errors_from(from) > 0, used)
    }

    /// Whether errors are left among the findings from `from` on, once judged.
    pub(super) fn fails(&self, findings: &mut Findings, from: usize, own: &Suppressions) -> bool {
        self.judge(findings, from, own).0
    }
}
