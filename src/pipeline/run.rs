//! What every job of a run shares while it is rendered.

use crate::pipeline::judge::Judge;
use crate::pipeline::placement::Placement;
use crate::pipeline::pools::Pools;
use crate::pipeline::runtimes::{Runtimes, Writer};
use crate::pipeline::sink::Sink;
use crate::render::Renderer;
use crate::verify::Verifier;

/// Shared, read-only state of the second pass: everything read in the first.
pub(super) struct Run<'a> {
    pub(super) renderer: &'a Renderer,
    pub(super) verifier: &'a Verifier,
    /// Every pool of the inputs, registered before any job is rendered.
    pub(super) pools: &'a Pools,
    /// The runtimes of the Trainer pools: each pool's planned before any job, the
    /// narrower shapes when a job first needs one.
    pub(super) runtimes: &'a Runtimes,
    pub(super) sink: &'a dyn Sink,
    /// Each job's directory, from the names of every job of the inputs.
    pub(super) placement: &'a Placement,
    pub(super) explain: bool,
    /// The rule levels and the suppressions of every file read.
    pub(super) judge: Judge<'a>,
}

impl<'a> Run<'a> {
    /// What rendering a Trainer runtime needs.
    pub(super) fn writer(&self) -> Writer<'a> {
        Writer {
            renderer: self.renderer,
            verifier: self.verifier,
            judge: self.judge,
            sink: self.sink,
            explain: self.explain,
        }
    }
}
