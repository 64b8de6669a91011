//! `rdmagen schema`.

use clap::{Args, ValueEnum};

use super::Streams;
use crate::error::Error;
use crate::model::schema::{InputKind, pretty};
use crate::verify::OUTPUT_SCHEMA;

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Which {
    /// The Job input document.
    Job,
    /// The Pool input document.
    Pool,
    /// PyTorchJob manifests as rdmagen renders them.
    Pytorchjob,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    #[arg(value_enum)]
    pub which: Which,
}

pub fn run(args: &SchemaArgs, io: &mut Streams<'_>) -> Result<(), Error> {
    let text = match args.which {
        Which::Job => pretty(InputKind::Job),
        Which::Pool => pretty(InputKind::Pool),
        Which::Pytorchjob => OUTPUT_SCHEMA.to_owned(),
    };
    write!(io.out, "{text}").map_err(super::stdout)
}
