//! Golden files: compare rendered output with a directory (`render --check`), update it
//! (`render --bless`), and diff any two manifest trees (`rdmagen diff`), line by line
//! and structurally.

pub mod compare;
pub mod semantic;
pub mod unified;

use std::path::{Path, PathBuf};

use crate::emit::{self, Staging};
use crate::error::Error;
use crate::pipeline::{Order, RenderedJob, Sink};

pub use compare::{Comparator, Comparison, FileDiff, Status};

/// `--bless`: stage every rendered file and note how each compares with the directory.
pub struct Blessing {
    dir: PathBuf,
    comparator: Comparator,
    staging: Staging,
}

/// What a bless did.
#[derive(Debug)]
pub struct Blessed {
    /// How the directory compared before the bless (paths and statuses).
    pub before: Comparison,
    pub written: emit::Written,
    pub pruned: bool,
}

impl Blessing {
    pub fn new(dir: &Path) -> Result<Self, Error> {
        Ok(Blessing {
            dir: dir.to_path_buf(),
            comparator: Comparator::new(dir, false),
            staging: Staging::new(dir)?,
        })
    }

    /// Nothing is written: the directory is left as it was.
    pub fn abort(self) {
        self.staging.abort();
    }

    /// Move the staged files into place and, with `prune`, delete the files no input
    /// renders.
    pub fn finish(self, prune: bool) -> Result<Blessed, Error> {
        let before = match self.comparator.finish() {
            Ok(c) => c,
            Err(e) => {
                self.staging.abort();
                return Err(e);
            }
        };
        let written = self.staging.commit()?;
        if prune {
            for f in before.files.iter().filter(|f| f.status == Status::Stale) {
                let full = self.dir.join(&f.path);
                std::fs::remove_file(&full).map_err(|e| Error::io(&full, e))?;
                remove_empty_parents(&self.dir, &full);
            }
        }
        Ok(Blessed {
            before,
            written,
            pruned: prune,
        })
    }
}

impl Sink for Blessing {
    fn accept(&self, order: Order, job: RenderedJob) -> Result<(), Error> {
        for file in &job.files {
            self.staging.put(file)?;
        }
        self.comparator.accept(order, job)
    }
}

fn remove_empty_parents(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}
