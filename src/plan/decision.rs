//! A decision and the reason for it, as `--explain` prints it.

use std::fmt;

use crate::diagnostics::escape::printable;

#[derive(Debug, Clone)]
pub struct Decision {
    /// What was decided, e.g. `rdma` or `env NCCL_IB_HCA`.
    pub topic: String,
    /// The outcome, e.g. `on` or `mlx5_1,mlx5_2`.
    pub value: String,
    pub reason: String,
}

/// One `--explain` line. Values and reasons quote the job (a command, an environment
/// value), so they are escaped: a line break or terminal escape in a job cannot add a
/// line of its own to a CI log.
impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} = {}: {}",
            printable(&self.topic),
            printable(&self.value),
            printable(&self.reason)
        )
    }
}

/// Decisions of one plan, in the order they were made.
#[derive(Debug, Default)]
pub struct Decisions(pub Vec<Decision>);

impl Decisions {
    pub fn record(
        &mut self,
        topic: impl Into<String>,
        value: impl Into<String>,
        reason: impl Into<String>,
    ) {
        self.0.push(Decision {
            topic: topic.into(),
            value: value.into(),
            reason: reason.into(),
        });
    }
}
