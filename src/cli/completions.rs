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
    if args.shell == Shell::Fish {
        script.extend(fish_explain_ids().bytes());
    }
    io.out.write_all(&script).map_err(stdout)
}

/// clap_complete's fish script offers no positional argument's values (bash's and
/// zsh's do), so `explain`'s rule IDs are added as it writes an option's values: one
/// `ID\t'summary'` a line in a double-quoted list, which `complete -a` reads again
/// (so `'` is escaped for that reading, and `"` and `$` for the first).
fn fish_explain_ids() -> String {
    let quote = |text: &str| {
        text.replace('\\', "\\\\")
            .replace('\'', "\\'")
            .replace('"', "\\\"")
            .replace('$', "\\$")
    };
    let ids: Vec<String> = crate::diagnostics::rule::CATALOGUE
        .iter()
        .map(|r| format!("{}\\t'{}'", r.id, quote(r.summary)))
        .collect();
    format!(
        "complete -c rdmagen -n \"__fish_rdmagen_using_subcommand explain\" -f -a \"{}\"\n",
        ids.join("\n")
    )
}
