//! `rdmagen render`.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::Streams;
use super::output::{OutputArgs, write_findings};
use crate::emit;
use crate::error::Error;
use crate::pipeline::{self, Outcome, Request};

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Job files or directories (walked for *.yaml and *.yml in sorted order).
    #[arg(required = true, value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// Files or directories with Pool documents.
    #[arg(long = "pools", value_name = "PATH")]
    pub pools: Vec<PathBuf>,
    /// Write each job to DIR/<job>/pytorchjob.yaml instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Use templates from DIR in place of the built-in ones with the same name.
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
    /// Print every decision and its reason (to stderr when manifests go to stdout).
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub report: OutputArgs,
}

pub fn run(args: &RenderArgs, io: &mut Streams<'_>) -> Result<(), Error> {
    let request = Request {
        inputs: args.inputs.clone(),
        pools: args.pools.clone(),
        templates: args.templates.clone(),
    };
    let outcome = pipeline::run(&request)?;
    let color = args.report.colored(io.terminal.stderr);
    write_findings(
        io.err,
        &outcome.findings,
        &outcome.sources,
        args.report.format,
        color,
    );
    super::verdict(&outcome.findings, &args.report, "; nothing was written")?;
    if args.explain {
        let target: &mut dyn Write = if args.output.is_some() {
            &mut *io.out
        } else {
            &mut *io.err
        };
        explain(&outcome, target);
    }
    match &args.output {
        None => {
            write!(io.out, "{}", outcome.stream())
                .map_err(|e| Error::io(&PathBuf::from("<stdout>"), e))?;
        }
        Some(dir) => {
            let files: Vec<_> = outcome
                .jobs
                .iter()
                .flat_map(|j| j.files.iter().cloned())
                .collect();
            let written = emit::write_tree(dir, &files)?;
            let _ = writeln!(
                io.err,
                "{} job(s) rendered to {}: {} created, {} updated, {} unchanged",
                outcome.jobs.len(),
                dir.display(),
                written.created,
                written.updated,
                written.unchanged
            );
        }
    }
    Ok(())
}

fn explain(outcome: &Outcome, w: &mut dyn Write) {
    for job in &outcome.jobs {
        let _ = writeln!(w, "{} (pool {}):", job.name, job.pool);
        for d in &job.decisions {
            let _ = writeln!(w, "  {d}");
        }
    }
}
