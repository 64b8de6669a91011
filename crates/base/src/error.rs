//! Errors that stop a command, each carrying its exit code.
//!
//! Exit codes: 0 success; 1 inputs were read but are invalid (rule errors), or
//! `--check`/`diff` found differences; 2 usage, I/O or YAML syntax errors, and any
//! input error during `--check` (so 1 always means "differences" there).

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub enum Error {
    /// Reading or writing a file failed.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The command line asks for something impossible.
    Usage(String),
    /// Findings were reported (already printed by the caller): `errors` of them fail
    /// the run (warnings too under --deny-warnings); `code` is 2 when a file could not
    /// be parsed or when 1 already means "differences" (`--check`), else 1;
    /// `consequence` says what was not done, e.g. "; nothing was written".
    Findings {
        errors: usize,
        code: i32,
        consequence: &'static str,
        /// What the configuration file hid that `--deny-warnings` counted among
        /// `errors` (`1 warning below minSeverity, not shown`), so that a run failed by
        /// findings nobody sees says what they were.
        hidden: Vec<String>,
        /// The findings were printed as JSON or annotations: no trailing prose.
        quiet: bool,
    },
    /// `--check` or `diff` found differences (already printed).
    Differences { summary: String },
}

impl Error {
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The process exit code for this error.
    pub fn code(&self) -> i32 {
        match self {
            Error::Io { .. } | Error::Usage(_) => 2,
            Error::Findings { code, .. } => *code,
            Error::Differences { .. } => 1,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Usage(message) => f.write_str(message),
            Error::Differences { summary } => write!(f, "{summary}"),
            Error::Findings {
                errors,
                consequence,
                hidden,
                ..
            } => {
                write!(
                    f,
                    "{errors} {} the run",
                    if *errors == 1 {
                        "finding fails"
                    } else {
                        "findings fail"
                    }
                )?;
                if !hidden.is_empty() {
                    write!(f, " (counted by --deny-warnings: {})", hidden.join("; "))?;
                }
                f.write_str(consequence)
            }
        }
    }
}

impl std::error::Error for Error {}
