//! Emit: write an output tree atomically. Files are first written to a staging
//! directory inside the output directory, as they are rendered, and renamed into place
//! only when the whole run succeeded; otherwise the staging directory is removed and
//! the output directory is as it was. A file whose content is unchanged is left alone,
//! so its timestamp survives.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::Error;
use crate::pipeline::OutputFile;

/// What a write did, for the summary line.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Written {
    pub created: usize,
    pub updated: usize,
    pub unchanged: usize,
}

/// Files being written into `dir`, safe to use from several threads.
pub struct Staging {
    dir: PathBuf,
    staging: PathBuf,
    existed: bool,
    /// (serial number of the staged file, its path relative to `dir`).
    staged: Mutex<Vec<(usize, Box<str>)>>,
    serial: AtomicUsize,
    committed: std::sync::atomic::AtomicBool,
    created: AtomicUsize,
    updated: AtomicUsize,
    unchanged: AtomicUsize,
}

impl Staging {
    pub fn new(dir: &Path) -> Result<Self, Error> {
        let existed = dir.exists();
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let staging = dir.join(format!(".rdmagen-staging-{}", std::process::id()));
        if let Err(e) = fs::create_dir(&staging) {
            if !existed {
                let _ = fs::remove_dir_all(dir);
            }
            return Err(Error::io(&staging, e));
        }
        Ok(Staging {
            dir: dir.to_path_buf(),
            staging,
            existed,
            staged: Mutex::new(Vec::new()),
            serial: AtomicUsize::new(0),
            committed: std::sync::atomic::AtomicBool::new(false),
            created: AtomicUsize::new(0),
            updated: AtomicUsize::new(0),
            unchanged: AtomicUsize::new(0),
        })
    }

    /// Stage one file (or count it unchanged).
    pub fn put(&self, file: &OutputFile) -> Result<(), Error> {
        let target = self.dir.join(&file.path);
        // A directory this run created holds nothing to compare with.
        let old = if self.existed {
            crate::files::read_regular(&target).ok()
        } else {
            None
        };
        let counter = match old {
            Some(old) if old == file.text.as_bytes() => {
                self.unchanged.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
            Some(_) => &self.updated,
            None => &self.created,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        // Staged files are flat (numbered): one directory, no mkdir per job.
        let n = self.serial.fetch_add(1, Ordering::Relaxed);
        let temp = self.staging.join(n.to_string());
        let mut out = fs::File::create(&temp).map_err(|e| Error::io(&temp, e))?;
        out.write_all(file.text.as_bytes())
            .map_err(|e| Error::io(&temp, e))?;
        self.staged
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((n, file.path.as_str().into()));
        Ok(())
    }

    /// Move every staged file into place.
    pub fn commit(self) -> Result<Written, Error> {
        let staged = std::mem::take(&mut *self.staged.lock().unwrap_or_else(|p| p.into_inner()));
        let place = |(n, path): &(usize, Box<str>)| {
            let target = self.dir.join(&**path);
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
            let temp = self.staging.join(n.to_string());
            fs::rename(&temp, &target).map_err(|e| Error::io(&target, e))
        };
        // mkdir and rename wait on the filesystem, not the CPU: a few threads overlap them.
        let threads = if staged.len() < 64 { 1 } else { 4 };
        let chunk = staged.len().div_ceil(threads).max(1);
        let result = std::thread::scope(|scope| {
            let handles: Vec<_> = staged
                .chunks(chunk)
                .map(|part| scope.spawn(move || part.iter().try_for_each(place)))
                .collect();
            handles
                .into_iter()
                .try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        });
        let written = Written {
            created: self.created.load(Ordering::Relaxed),
            updated: self.updated.load(Ordering::Relaxed),
            unchanged: self.unchanged.load(Ordering::Relaxed),
        };
        if result.is_ok() {
            let _ = fs::remove_dir_all(&self.staging);
            self.committed.store(true, Ordering::Relaxed);
        }
        result.map(|()| written)
    }

    /// Drop everything staged; the output directory is left as it was.
    pub fn abort(self) {}
}

/// Whatever ends a run early (an error, a panic) leaves the output directory as it
/// was: the staging directory goes, and so does an output directory this run created.
impl Drop for Staging {
    fn drop(&mut self) {
        if self.committed.load(Ordering::Relaxed) {
            return;
        }
        let _ = fs::remove_dir_all(&self.staging);
        if !self.existed {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

impl crate::pipeline::Sink for Staging {
    fn accept(
        &self,
        _: crate::pipeline::Order,
        job: crate::pipeline::RenderedJob,
    ) -> Result<(), Error> {
        job.files.iter().try_for_each(|f| self.put(f))
    }
}
