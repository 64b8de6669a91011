//! `rdmagen diff OLD NEW`: the same review output as `render --check`, for any two
//! manifest files or directories.

use std::path::{Path, PathBuf};

use clap::Args;

use super::Streams;
use super::input_args::StdinArgs;
use super::output_args::OutputArgs;
use super::present;
use crate::error::Error;
use crate::files;
use crate::golden::compare;
use crate::output::comparison::Labels;

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The old manifest file or directory; `-` is standard input (a file).
    pub old: PathBuf,
    /// The new manifest file or directory; `-` is standard input (a file).
    pub new: PathBuf,
    /// Also print a structural summary (on by default on a terminal).
    #[arg(long)]
    pub semantic: bool,
    #[command(flatten)]
    pub stdin: StdinArgs,
    #[command(flatten)]
    pub print: OutputArgs,
}

pub fn run(args: &DiffArgs, s: &super::Settings, io: &mut Streams<'_>) -> Result<(), Error> {
    present::refuse_for_comparisons(&s.print, "diff")?;
    args.stdin.apply([&args.old, &args.new])?;
    let is_file = |p: &Path| files::is_stdin(p) || p.is_file();
    for (stdin, other) in [(&args.old, &args.new), (&args.new, &args.old)] {
        if files::is_stdin(stdin) && !is_file(other) {
            return Err(Error::Usage(format!(
                "`-` (standard input) is one file, so {} must be a file too",
                shown(other)
            )));
        }
    }
    let cmp = compare::paths(&args.old, &args.new)?;
    let old = shown(&args.old);
    let new = shown(&args.new);
    let labels = if is_file(&args.old) {
        Labels::Files {
            old: &old,
            new: &new,
        }
    } else {
        Labels::Directories {
            old: &old,
            new: &new,
        }
    };
    present::comparison(io, &cmp, &labels, &s.print, args.semantic)
}

/// A path as labelled: as given, standard input by its `--stdin-filename`.
fn shown(path: &Path) -> String {
    match files::is_stdin(path) {
        true => files::stdin_name().to_owned(),
        false => path.to_string_lossy().into_owned(),
    }
}
