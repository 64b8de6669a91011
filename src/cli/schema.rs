//! `rdmagen schema`.

use clap::{Args, ValueEnum};

use super::Streams;
use crate::error::Error;
use crate::model::schema::{Published, pretty};
use crate::verify::OUTPUT_SCHEMA;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Which {
    /// The Job input document.
    Job,
    /// The Pool input document.
    Pool,
    /// A file of Jobs and Pools in any mix, each document checked as its `kind` says.
    Inputs,
    /// PyTorchJob manifests as rdmagen renders them.
    Pytorchjob,
    /// The document `nccl-log --format json` writes.
    NcclLog,
    /// The configuration file, `.rdmagen.yaml` or `.rdmagen.yml`.
    Config,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    #[arg(value_enum)]
    pub which: Which,
}

pub fn run(args: &SchemaArgs, io: &mut Streams<'_>) -> Result<(), Error> {
    let text = match args.which {
        Which::Job => pretty(Published::Job),
        Which::Pool => pretty(Published::Pool),
        Which::Inputs => pretty(Published::Inputs),
        Which::Pytorchjob => OUTPUT_SCHEMA.to_owned(),
        Which::NcclLog => crate::nccl_log::output_schema(),
        Which::Config => super::config::schema(),
    };
    write!(io.out, "{text}").map_err(super::stdout)
}
