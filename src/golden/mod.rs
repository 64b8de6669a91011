//! Golden files: compare rendered output with a directory (`render --check`), update it
//! (`render --bless`), and diff any two manifest trees (`rdmagen diff`), line by line
//! and structurally.

pub mod compare;
pub mod semantic;
pub mod unified;

use std::path::Path;

use crate::emit;
use crate::error::Error;
use crate::pipeline::OutputFile;

pub use compare::{Comparison, FileDiff, Status};

/// What a bless did.
#[derive(Debug, Default)]
pub struct Blessed {
    pub written: emit::Written,
    /// Stale files deleted (with --prune) or left in place (without).
    pub stale: Vec<String>,
    pub pruned: bool,
}

/// Write the rendered files into `dir` (unchanged files keep their timestamps) and,
/// with `prune`, delete the files no input produces.
pub fn bless(dir: &Path, rendered: &[OutputFile], prune: bool) -> Result<Blessed, Error> {
    let before = compare::against_dir(dir, rendered)?;
    let written = emit::write_tree(dir, rendered)?;
    let stale: Vec<String> = before
        .files
        .iter()
        .filter(|f| f.status == Status::Stale)
        .map(|f| f.path.clone())
        .collect();
    if prune {
        for path in &stale {
            let full = dir.join(path);
            std::fs::remove_file(&full).map_err(|e| Error::io(&full, e))?;
            remove_empty_parents(dir, &full);
        }
    }
    Ok(Blessed {
        written,
        stale,
        pruned: prune,
    })
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
