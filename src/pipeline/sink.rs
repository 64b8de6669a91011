//! Where rendered jobs go.

use std::sync::Mutex;

use crate::error::Error;
use crate::pipeline::rendered::RenderedJob;

/// Where each rendered job goes as soon as it is verified: collected in memory, staged
/// into an output directory, compared with one, or just counted. Called from several
/// threads.
pub trait Sink: Sync {
    fn accept(&self, order: Order, job: RenderedJob) -> Result<(), Error>;
}

/// Position of a job in the inputs (file index, document index): output streams
/// follow it, whatever order threads finish in.
pub type Order = (usize, usize);

/// Keeps every rendered job (stdout, tests).
#[derive(Default)]
pub struct Collect(Mutex<Vec<(Order, RenderedJob)>>);

impl Sink for Collect {
    fn accept(&self, order: Order, job: RenderedJob) -> Result<(), Error> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((order, job));
        Ok(())
    }
}

impl Collect {
    /// The jobs in input order.
    pub fn into_jobs(self) -> Vec<RenderedJob> {
        let mut jobs = self.0.into_inner().unwrap_or_else(|p| p.into_inner());
        jobs.sort_by_key(|(order, _)| *order);
        jobs.into_iter().map(|(_, job)| job).collect()
    }
}

/// Counts jobs and keeps nothing (validate).
pub struct Discard;

impl Sink for Discard {
    fn accept(&self, _: Order, _: RenderedJob) -> Result<(), Error> {
        Ok(())
    }
}
