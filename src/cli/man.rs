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
    let mut pages = vec![page(cli.clone())];
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
