//! `rdmagen completions`: a shell's completion script, generated from the same clap
//! definitions as `--help`, so completion never offers a flag that does not exist.

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{Cli, Streams, stdout};
use crate::error::Error;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn run(args: &CompletionsArgs, io: &mut Streams<'_>) -> Result<(), Error> {
    // clap_complete panics when a write fails; a closed pipe is a normal end here, so
    // the script is built in memory and written through `io.out`.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "rdmagen", &mut script);
    io.out.write_all(&script).map_err(stdout)
}
