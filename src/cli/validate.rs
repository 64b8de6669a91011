//! `rdmagen validate`.

use std::path::PathBuf;

use clap::Args;

use super::Streams;
use super::input_args::InputArgs;
use super::output_args::OutputArgs;
use crate::error::Error;
use crate::pipeline::{self, Discard};

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Job files or directories (walked for *.yaml and *.yml in sorted order).
    #[arg(required = true, value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// Files or directories with Pool documents.
    #[arg(long = "pools", value_name = "PATH")]
    pub pools: Vec<PathBuf>,
    /// Verify with templates from DIR in place of the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub print: OutputArgs,
    #[command(flatten)]
    pub rules: super::rule_args::RuleArgs,
}

pub fn run(args: &ValidateArgs, s: &super::Settings, io: &mut Streams<'_>) -> Result<(), Error> {
    let request = args
        .input
        .request(&args.inputs, args.templates.as_ref(), s)?;
    let outcome = pipeline::run_with(&request, &Discard, false)?;
    let what = format!("{} checked", outcome.checked());
    super::present::findings_as_product(io, &outcome.findings, &outcome.sources, &s.print, &what)
}
