//! Emit: write an output tree atomically. Everything is first written to a staging
//! directory inside the output directory, then renamed into place; a file whose
//! content is unchanged is left alone, so its timestamp survives.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::pipeline::OutputFile;

/// What a write did, for the summary line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub created: usize,
    pub updated: usize,
    pub unchanged: usize,
}

pub fn write_tree(dir: &Path, files: &[OutputFile]) -> Result<Written, Error> {
    let existed = dir.exists();
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let staging = dir.join(format!(".rdmagen-staging-{}", std::process::id()));
    let result = stage_and_commit(dir, &staging, files);
    let _ = fs::remove_dir_all(&staging);
    if result.is_err() && !existed {
        let _ = fs::remove_dir_all(dir);
    }
    result
}

fn stage_and_commit(dir: &Path, staging: &Path, files: &[OutputFile]) -> Result<Written, Error> {
    let mut written = Written::default();
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    for file in files {
        let target = dir.join(&file.path);
        match fs::read(&target) {
            Ok(old) if old == file.text.as_bytes() => {
                written.unchanged += 1;
                continue;
            }
            Ok(_) => written.updated += 1,
            Err(_) => written.created += 1,
        }
        let temp = staging.join(&file.path);
        if let Some(parent) = temp.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        let mut out = fs::File::create(&temp).map_err(|e| Error::io(&temp, e))?;
        out.write_all(file.text.as_bytes())
            .and_then(|()| out.sync_all())
            .map_err(|e| Error::io(&temp, e))?;
        staged.push((temp, target));
    }
    for (temp, target) in staged {
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        fs::rename(&temp, &target).map_err(|e| Error::io(&target, e))?;
    }
    Ok(written)
}
