//! `rdmagen lint`.

use std::path::PathBuf;

use clap::Args;

use super::Streams;
use super::input_args::InputArgs;
use super::output_args::OutputArgs;
use crate::error::Error;
use crate::kubeflow::trainer::crd;
use crate::model::pool::Platform;
use crate::model::target::Version;
use crate::platform::profile;
use crate::rules::lint;
use crate::rules::manifest::ManifestFacts;
use crate::rules::trainer::TrainerRelease;

#[derive(Debug, Args)]
pub struct LintArgs {
    /// PyTorchJob and Kubeflow Trainer v2 manifests (TrainJob, TrainingRuntime,
    /// ClusterTrainingRuntime), and their PersistentVolumes and claims: files, or
    /// directories walked for *.yaml and *.yml.
    #[arg(required = true, value_name = "MANIFEST")]
    pub manifests: Vec<PathBuf>,
    /// The training-operator version the manifests are for, e.g. 1.6 or 1.9; below 1.7
    /// `spec.nprocPerNode` is an error. Default: the platform's, else unknown.
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    pub operator: Option<Version>,
    /// The Kubeflow Trainer release the TrainJobs and (Cluster)TrainingRuntimes are
    /// for, e.g. 2.1 or 2.3 (2.1 and later); each is checked against that release's
    /// CRDs. Default: 2.3, the latest, and findings that depend on it say it was
    /// assumed.
    #[arg(long, value_name = "VERSION", value_parser = parse_trainer_version)]
    pub trainer: Option<Version>,
    /// The Kubernetes version of the cluster, e.g. 1.28; below 1.29 a native sidecar
    /// (an init container with restartPolicy: Always) is an error. Default: what each
    /// manifest says it was written for, else unknown.
    #[arg(long, value_name = "VERSION", value_parser = parse_version)]
    pub kubernetes: Option<Version>,
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

fn parse_trainer_version(text: &str) -> Result<Version, String> {
    let version = parse_version(text)?;
    if crd::supported(version) {
        Ok(version)
    } else {
        Err(crd::unsupported(version))
    }
}

impl LintArgs {
    /// The cluster the flags describe; the platform's operator when none is named.
    fn facts(&self) -> ManifestFacts {
        let operator = self.operator.or_else(|| {
            self.platform
                .and_then(|p| profile(p).operator.map(|(v, _)| v))
        });
        ManifestFacts {
            operator,
            platform: self.platform,
            kubernetes: self.kubernetes,
            management_nic: None,
        }
    }
}

pub fn run(args: &LintArgs, s: &super::Settings, io: &mut Streams<'_>) -> Result<(), Error> {
    let exclude = args.input.apply(&args.manifests)?;
    let policy = s.reporting_policy();
    let trainer = args
        .trainer
        .map_or_else(TrainerRelease::default, TrainerRelease::given);
    let linted = lint::lint(&args.manifests, &exclude, &args.facts(), trainer, &policy)?;
    if let Some(why) = linted.nothing_linted(&args.manifests)
        && !args.input.allow_empty
    {
        return Err(Error::Usage(format!("{why} (--allow-empty accepts that)")));
    }
    let storage = match linted.volumes_and_claims {
        0 => String::new(),
        n => format!(" and {n} PersistentVolume(Claim)(s)"),
    };
    let mut objects = Vec::new();
    let others = linted.train_jobs + linted.runtimes + linted.mpi_jobs;
    if linted.jobs > linted.mpi_jobs || others == 0 {
        objects.push(format!("{} PyTorchJob(s)", linted.jobs - linted.mpi_jobs));
    }
    if linted.mpi_jobs > 0 {
        objects.push(format!("{} MPIJob(s)", linted.mpi_jobs));
    }
    if linted.train_jobs > 0 {
        objects.push(format!("{} TrainJob(s)", linted.train_jobs));
    }
    if linted.runtimes > 0 {
        objects.push(format!("{} (Cluster)TrainingRuntime(s)", linted.runtimes));
    }
    if linted.train_jobs + linted.runtimes > 0 {
        let releases: Vec<String> = linted
            .trainer_releases
            .iter()
            .map(|r| match r.assumed {
                true => format!("{}, assumed", r.release),
                false => r.release.to_string(),
            })
            .collect();
        let last = objects.pop().unwrap_or_default();
        objects.push(format!("{last} (Trainer {})", releases.join("; ")));
    }
    let what = format!(
        "{}{storage} in {} file(s) linted",
        objects.join(", "),
        linted.files
    );
    super::present::findings_as_product(io, &linted.findings, &linted.sources, &s.print, &what)
}
