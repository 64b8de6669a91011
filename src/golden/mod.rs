//! Golden files: compare rendered output with a directory (`render --check`), update it
//! (`render --bless`), and diff any two manifest trees (`rdmagen diff`), line by line
//! and structurally.

pub mod compare;
mod line_ops;
pub mod semantic;
pub mod unified;

use std::path::Path;

use crate::emit::{self, OutputWriter, Waiting};
use crate::error::Error;
use crate::pipeline::{Order, RenderedJob, Sink};

pub use compare::{Comparator, Comparison, FileDiff, Status};

/// `--bless`: stage every rendered file and note how each compares with the directory.
pub struct Blessing {
    comparator: Comparator,
    writer: OutputWriter,
}

/// What a bless did.
#[derive(Debug)]
pub struct Blessed {
    /// How the directory compared before the bless (paths and statuses).
    pub before: Comparison,
    pub written: emit::Written,
}

impl Blessing {
    pub fn new(dir: &Path, waiting: &mut Waiting<'_>, force: bool) -> Result<Self, Error> {
        let writer = OutputWriter::open(dir, waiting, force)?;
        Ok(Blessing {
            comparator: Comparator::new(writer.old_tree(), false),
            writer,
        })
    }

    /// Swap the new tree in; with `prune`, rdmagen's own files that no input renders
    /// are left out of it.
    pub fn finish(self, prune: bool) -> Result<Blessed, Error> {
        let before = self.comparator.finish()?;
        let written = self.writer.commit(prune)?;
        Ok(Blessed { before, written })
    }
}

impl Sink for Blessing {
    fn accept(&self, order: Order, job: RenderedJob) -> Result<(), Error> {
        for file in &job.files {
            self.writer.put(file)?;
        }
        self.comparator.accept(order, job)
    }
}
