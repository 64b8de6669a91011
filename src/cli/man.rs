//! `rdmagen man`: the manual pages, generated from the same clap definitions as
//! `--help`, so the two never disagree.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory};
use clap_mangen::Man;

use super::{Cli, Streams, stdout};
use crate::error::Error;

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write rdmagen.1 and one page per subcommand (rdmagen-render.1, ...) into DIR,
    /// created if missing, instead of printing rdmagen.1.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
}

pub fn run(args: &ManArgs, io: &mut Streams<'_>) -> Result<(), Error> {
    let pages = pages();
    let Some(dir) = &args.output else {
        let (_, top) = &pages[0];
        return io.out.write_all(top).map_err(stdout);
    };
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    for (name, page) in &pages {
        let path = dir.join(name);
        write_page(&path, page).map_err(|e| Error::io(&path, e))?;
    }
    Ok(())
}

/// Every page as (file name, roff text): rdmagen.1 first, then one per subcommand.
fn pages() -> Vec<(String, Vec<u8>)> {
    // As clap_mangen::generate_to does: no page for `help`, and `build` gives each
    // subcommand its display name (`rdmagen-render`), which names its page.
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    let (name, mut top) = page(cli.clone());
    top.extend_from_slice(TOP_SECTIONS.as_bytes());
    let mut pages = vec![(name, top)];
    pages.extend(cli.get_subcommands().cloned().map(page));
    pages
}

fn page(command: clap::Command) -> (String, Vec<u8>) {
    let man = Man::new(command);
    let mut roff = Vec::new();
    man.render(&mut roff)
        .expect("writing to memory cannot fail");
    (man.get_filename(), roff)
}

/// The sections of rdmagen.1 that clap has no field for (man-pages(7)'s EXIT STATUS,
/// ENVIRONMENT and FILES), after clap's own. `cli/exit.rs` decides the codes, and
/// `cli/mod.rs` and `cli/config.rs` read the variables and the file these name.
const TOP_SECTIONS: &str = r#".SH "EXIT STATUS"
.TP
\fB0\fR
Success: nothing failed the run.
.TP
\fB1\fR
Findings fail the run (rule errors, or warnings with \fB\-\-deny\-warnings\fR), or \fBrender \-\-check\fR or \fBdiff\fR found differences.
.TP
\fB2\fR
A usage, I/O or YAML syntax error, nothing to read (unless \fB\-\-allow\-empty\fR), or an input error under \fBrender \-\-check\fR.
.SH ENVIRONMENT
.TP
\fBCI\fR
Set to anything but empty, 0, false, no or off: \fBrender \-o DIR\fR compares with DIR instead of writing it (\fB\-\-write\fR writes).
.TP
\fBGITHUB_ACTIONS\fR
true: echoed text is kept from becoming a workflow command.
.TP
\fBNO_COLOR\fR, \fBCLICOLOR\fR, \fBCLICOLOR_FORCE\fR, \fBTERM\fR
Whether \fB\-\-color auto\fR colours human output.
.SH FILES
.TP
\fB.rdmagen.yaml\fR, \fB.rdmagen.yml\fR
The configuration file, looked for in the working directory and the directories above it up to the repository's root (both in one directory is an error); \fB\-\-config\fR names another, \fB\-\-no\-config\fR reads none.
.TP
\fBDIR/.rdmagen\-owned\fR
What \fBrender \-o DIR\fR wrote, with each file's fingerprint: a file edited since is never replaced or pruned.
"#;

/// Replace the page at `path`, never writing through a symlink planted there.
fn write_page(path: &Path, page: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)?;
    file.write_all(page)
}
