//! `rdmagen diff OLD NEW`: the same review output as `render --check`, for any two
//! manifest files or directories.

use std::path::PathBuf;

use clap::Args;

use super::Streams;
use super::output_args::OutputArgs;
use super::present;
use crate::error::Error;
use crate::golden::compare;
use crate::output::comparison::Labels;

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The old manifest file or directory.
    pub old: PathBuf,
    /// The new manifest file or directory.
    pub new: PathBuf,
    /// Also print a structural summary (on by default on a terminal).
    #[arg(long)]
    pub semantic: bool,
    #[command(flatten)]
    pub print: OutputArgs,
}

pub fn run(args: &DiffArgs, io: &mut Streams<'_>) -> Result<(), Error> {
    present::refuse_for_comparisons(&args.print, "diff")?;
    let cmp = compare::paths(&args.old, &args.new)?;
    let old = args.old.to_string_lossy();
    let new = args.new.to_string_lossy();
    let labels = if args.old.is_file() {
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
    present::comparison(io, &cmp, &labels, &args.print, args.semantic)
}
