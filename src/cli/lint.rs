//! `rdmagen lint`.

use std::path::PathBuf;

use clap::Args;

use super::Streams;
use super::input_args::InputArgs;
use super::output_args::OutputArgs;
use crate::error::Error;
use crate::model::pool::Platform;
use crate::model::target::{OperatorGeneration, Version};
use crate::platform::profile;
use crate::verify::lint;
use crate::verify::manifest::ManifestFacts;

#[derive(Debug, Args)]
pub struct LintArgs {
    /// PyTorchJob manifests (and their PersistentVolumes and claims): files, or
    /// directories walked for *.yaml and *.yml.
    #[arg(required = true, value_name = "MANIFEST")]
    pub manifests: Vec<PathBuf>,
    /// The training-operator version the manifests are for, e.g. 1.6 or 1.9; below 1.7
    /// `spec.nprocPerNode` is an error. Default: the platform's, else unknown.
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    pub operator: Option<Version>,
    /// The platform the manifests run on; rules about one platform's conventions apply
    /// only there. Default: unknown.
    #[arg(long, value_enum)]
    pub platform: Option<Platform>,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub print: OutputArgs,
    #[command(flatten)]
    pub rules: super::rule_args::RuleArgs,
}

fn parse_version(text: &str) -> Result<Version, String> {
    Version::parse(text)
        .ok_or_else(|| format!("`{text}` is not a version: expected MAJOR.MINOR, e.g. 1.9"))
}

impl LintArgs {
    /// The cluster the flags describe; the platform's operator when none is named.
    fn facts(&self) -> ManifestFacts {
        let operator = self.operator.or_else(|| {
            self.platform
                .and_then(|p| profile(p).operator.map(|(v, _)| v))
        });
        ManifestFacts {
            operator: operator.map(OperatorGeneration::of),
            platform: self.platform,
        }
    }
}

pub fn run(args: &LintArgs, io: &mut Streams<'_>) -> Result<(), Error> {
    let exclude = args.input.apply(&args.manifests)?;
    let policy = args.rules.reporting_policy();
    let linted = lint::lint(&args.manifests, &exclude, &args.facts(), &policy)?;
    if let Some(why) = linted.nothing_linted(&args.manifests)
        && !args.input.allow_empty
    {
        return Err(Error::Usage(format!("{why} (--allow-empty accepts that)")));
    }
    let storage = match linted.volumes_and_claims {
        0 => String::new(),
        n => format!(" and {n} PersistentVolume(Claim)(s)"),
    };
    let what = format!(
        "{} PyTorchJob(s){storage} in {} file(s) linted",
        linted.jobs, linted.files
    );
    super::present::findings_as_product(io, &linted.findings, &linted.sources, &args.print, &what)
}
