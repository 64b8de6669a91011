//! `rdmagen lint`.

use std::path::PathBuf;

use clap::Args;

use super::Streams;
use super::output::OutputArgs;
use crate::check::lint;
use crate::error::Error;

#[derive(Debug, Args)]
pub struct LintArgs {
    /// PyTorchJob manifests: files, or directories walked for *.yaml and *.yml.
    #[arg(required = true, value_name = "MANIFEST")]
    pub manifests: Vec<PathBuf>,
    #[command(flatten)]
    pub report: OutputArgs,
}

pub fn run(args: &LintArgs, io: &mut Streams<'_>) -> Result<(), Error> {
    let report = lint::lint(&args.manifests)?;
    if let Some(why) = report.nothing_linted(&args.manifests) {
        return Err(Error::Usage(why));
    }
    let what = format!(
        "{} PyTorchJob(s) in {} file(s) linted",
        report.jobs, report.files
    );
    super::report_findings(io, &report.findings, &report.sources, &args.report, &what)
}
