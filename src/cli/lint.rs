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
use crate::rules::lint::{self, Linted};
use crate::rules::manifest::ManifestFacts;
use crate::rules::trainer::TrainerRelease;

#[derive(Debug, Args)]
pub struct LintArgs {
    /// PyTorchJob and Kubeflow Trainer v2 manifests (TrainJob, TrainingRuntime,
    /// ClusterTrainingRuntime), and their PersistentVolumes and claims: files, or
    /// directories walked for *.yaml and *.yml.
    #[arg(required_unless_present = "post_renderer", value_name = "MANIFEST")]
    pub manifests: Vec<PathBuf>,
    /// Run as a Helm post-renderer (`helm template|install CHART --post-renderer
    /// rdmagen --post-renderer-args lint --post-renderer-args --post-renderer`): lint
    /// the manifest stream on standard input; when no finding fails the run, write it
    /// to stdout unchanged, byte for byte, else nothing. Findings go to stderr; a
    /// stream without a training job passes (as --allow-empty).
    #[arg(long, conflicts_with = "manifests", help_heading = "Integration")]
    pub post_renderer: bool,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub print: OutputArgs,
    #[command(flatten)]
    pub rules: super::rule_args::RuleArgs,
}

/// The cluster the manifests are for, which `lint` and `krm` judge them by.
#[derive(Debug, Args)]
pub struct ClusterArgs {
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

impl ClusterArgs {
    /// The cluster the flags describe; the platform's operator when none is named.
    pub fn facts(&self) -> ManifestFacts {
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

    /// The Trainer release Trainer objects are judged by: `--trainer`, else each
    /// object's own mark, else the latest, assumed.
    pub fn trainer(&self) -> TrainerRelease {
        self.trainer
            .map_or_else(TrainerRelease::default, TrainerRelease::given)
    }
}

pub fn run(args: &LintArgs, s: &super::Settings, io: &mut Streams<'_>) -> Result<(), Error> {
    let stdin = [PathBuf::from(crate::files::STDIN)];
    let manifests = match args.post_renderer {
        true => &stdin[..],
        false => &args.manifests[..],
    };
    let exclude = args.input.apply(manifests)?;
    let policy = s.reporting_policy();
    let facts = args.cluster.facts();
    let linted = lint::lint(manifests, &exclude, &facts, args.cluster.trainer(), &policy)?;
    if args.post_renderer {
        return post_render(&linted, s, io);
    }
    if let Some(why) = linted.nothing_linted(manifests)
        && !args.input.allow_empty
    {
        return Err(Error::Usage(format!("{why} (--allow-empty accepts that)")));
    }
    let what = what_was_linted(&linted);
    super::present::findings_as_product(io, &linted.findings, &linted.sources, &s.print, &what)
}

/// What the summary line says was linted: `2 PyTorchJob(s) in 1 file(s) linted`.
fn what_was_linted(linted: &Linted) -> String {
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
    format!(
        "{}{storage} in {} file(s) linted",
        objects.join(", "),
        linted.files
    )
}

/// `lint --post-renderer`: findings on stderr; standard input on stdout, as it was
/// read, when they do not fail the run. Helm reads stdout as the chart's manifests and
/// puts stderr in its error when the exit status is not 0 (helm.sh/helm/v3@v3.21.4
/// pkg/postrender/exec.go `execRender.Run`).
fn post_render(linted: &Linted, s: &super::Settings, io: &mut Streams<'_>) -> Result<(), Error> {
    super::present::findings_beside(io, &linted.findings, &linted.sources, &s.print)?;
    super::exit::verdict(
        &linted.findings,
        &s.print,
        "; nothing was written to stdout",
        false,
    )?;
    let stream = crate::files::read_stdin()
        .map_err(|e| Error::io(std::path::Path::new(crate::files::stdin_name()), e))?;
    io.out.write_all(&stream).map_err(super::stdout)
}
