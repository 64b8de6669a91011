//! The cluster a plan is for: the pool's `spec.target`, with the platform's defaults
//! filled in. Every later decision that depends on it reads it from here.

use crate::kubeflow::operator::OperatorGeneration;
use crate::kubeflow::trainer::Release;
use crate::kubeflow::trainer::release::LATEST as LATEST_TRAINER;
use crate::model::pool::Platform;
use crate::model::target::{TargetApi, Version};
use crate::model::{Loaded, PoolDocument};
use crate::plan::decision::Decisions;
use crate::platform::Profile;

/// What the job's cluster runs, as far as it is known.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    pub platform: Platform,
    /// The training API the manifests are written for.
    pub api: Api,
    /// The training-operator version; None when neither the pool nor the platform says.
    pub operator: Option<Version>,
    /// The Kubernetes version of the cluster, when the pool says.
    pub kubernetes: Option<Version>,
    /// The mpi-operator release, when the pool says one is installed.
    pub mpi_operator: Option<Version>,
    /// The NCCL version floor of the pool's images, when the pool says.
    pub nccl: Option<Version>,
    /// Whether the operator gang-schedules through Volcano, when the pool says.
    pub gang_scheduling: Option<bool>,
}

impl Target {
    /// The annotations a manifest for this target carries about it, for `lint` to judge
    /// the manifest by when no flag says otherwise (`rules::manifest`): the platform,
    /// the Kubernetes version (when known), and the operator version (PyTorchJob, when
    /// known) or the Trainer release.
    pub fn written_for(&self) -> Vec<(&'static str, String)> {
        use crate::rules::manifest::{
            OPERATOR_ANNOTATION, PLATFORM_ANNOTATION, TRAINER_ANNOTATION,
        };
        let mut out = vec![(PLATFORM_ANNOTATION, self.platform.name().to_owned())];
        match self.api {
            Api::PyTorchJob => {
                out.extend(self.operator.map(|v| (OPERATOR_ANNOTATION, v.to_string())))
            }
            Api::Trainer(t) => out.push((TRAINER_ANNOTATION, t.release.version.to_string())),
        }
        out
    }

    /// The annotations of an MPIJob: the platform and the mpi-operator release (the
    /// training-operator's version says nothing about it).
    pub fn written_for_mpi(&self) -> Vec<(&'static str, String)> {
        use crate::rules::manifest::{MPI_OPERATOR_ANNOTATION, PLATFORM_ANNOTATION};
        let mut out = vec![(PLATFORM_ANNOTATION, self.platform.name().to_owned())];
        out.extend(
            self.mpi_operator
                .map(|v| (MPI_OPERATOR_ANNOTATION, v.to_string())),
        );
        out
    }
}

/// The training API of a target, and what each needs to know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Kubeflow training-operator v1: one PyTorchJob per job.
    PyTorchJob,
    /// Kubeflow Trainer v2: a (Cluster)TrainingRuntime per pool, a TrainJob per job.
    Trainer(TrainerTarget),
}

/// A Kubeflow Trainer v2 cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrainerTarget {
    /// The release whose API rdmagen writes (the pool's, or the latest it knows);
    /// releases above [`LATEST_TRAINER`] are written as that one. What it does with a
    /// TrainJob is the release's to say ([`Release`]).
    pub release: Release,
    /// A ClusterTrainingRuntime rather than a namespaced TrainingRuntime.
    pub cluster_scoped: bool,
}

impl TrainerTarget {
    /// The kind of the runtime rdmagen writes for the pool.
    pub fn runtime_kind(&self) -> &'static str {
        if self.cluster_scoped {
            "ClusterTrainingRuntime"
        } else {
            "TrainingRuntime"
        }
    }
}

impl Target {
    /// The operator generation, when known. Unknown means: write what both run.
    /// Trainer v2 has no operator generation: its torch plugin sets only PET_*.
    pub fn generation(&self) -> Option<OperatorGeneration> {
        match self.api {
            Api::PyTorchJob => self.operator.map(OperatorGeneration::of),
            Api::Trainer(_) => Some(OperatorGeneration::Pet),
        }
    }

    /// The trainer release, for a Trainer v2 target.
    pub fn trainer(&self) -> Option<TrainerTarget> {
        match self.api {
            Api::Trainer(t) => Some(t),
            Api::PyTorchJob => None,
        }
    }

    /// The training container's name: the PyTorchJob operator finds `pytorch`
    /// (pkg/controller.v1/pytorch), Trainer's torch plugin `node` (constants.go:68-69).
    pub fn training_container(&self) -> &'static str {
        match self.api {
            Api::PyTorchJob => crate::plan::pod_parts::TRAINING_CONTAINER,
            Api::Trainer(_) => crate::plan::pod_parts::TRAINER_CONTAINER,
        }
    }
}

/// The pool's target with `profile`'s defaults, each recorded in `decisions`.
pub fn decide(
    pool_doc: &Loaded<PoolDocument>,
    profile: &Profile,
    decisions: &mut Decisions,
) -> Target {
    let spec = &pool_doc.value.spec;
    let asked = &spec.target;
    let pool = &pool_doc.value.metadata.name;
    let api = decide_api(pool_doc, decisions);
    if let Api::Trainer(_) = api {
        // Trainer v2 has no training-operator; check_pool reports a target.operator.
        return Target {
            platform: spec.platform,
            api,
            operator: None,
            kubernetes: asked.kubernetes,
            mpi_operator: None,
            nccl: asked.nccl,
            gang_scheduling: asked.gang_scheduling,
        };
    }
    let operator = match (asked.operator, profile.operator) {
        (Some(v), _) => {
            let why = format!("pool `{pool}` sets target.operator");
            decisions.record("target operator", describe_operator(v), why);
            Some(v)
        }
        (None, Some((v, source))) => {
            let why = format!("the {} platform default: {source}", profile.name);
            decisions.record("target operator", describe_operator(v), why);
            Some(v)
        }
        (None, None) => {
            let then = if asked.mpi_operator.is_some() {
                "its jobs with `launcher: mpirun` are MPIJobs, which the training-operator does not run; any other job's launcher"
            } else {
                "the launcher"
            };
            decisions.record(
                "target operator",
                "unknown",
                format!("pool `{pool}` sets no target.operator and the {} platform has no default; {then} uses the form both operator generations run", profile.name),
            );
            None
        }
    };
    let nccl = asked.nccl;
    decisions.record(
        "target nccl",
        nccl.map_or("unknown".to_owned(), |v| format!("{v} or later")),
        match nccl {
            Some(_) => format!("pool `{pool}` sets target.nccl"),
            None => format!("pool `{pool}` sets no target.nccl"),
        },
    );
    let mpi_operator = asked.mpi_operator;
    if let Some(v) = mpi_operator {
        use crate::kubeflow::mpi::LATEST as LATEST_MPI;
        let newer = if v > LATEST_MPI {
            format!(
                "; newer than {LATEST_MPI}, the latest release rdmagen knows: written for {LATEST_MPI}'s API"
            )
        } else {
            String::new()
        };
        decisions.record(
            "target mpi-operator",
            v.to_string(),
            format!("pool `{pool}` sets target.mpiOperator: a job with `launcher: mpirun` becomes an MPIJob (kubeflow.org/v2beta1){newer}"),
        );
    }
    Target {
        platform: spec.platform,
        api,
        operator,
        kubernetes: asked.kubernetes,
        mpi_operator,
        nccl,
        gang_scheduling: asked.gang_scheduling,
    }
}

/// The Trainer target of a pool, when it has one (decided as for its jobs).
pub fn trainer_of(pool_doc: &Loaded<PoolDocument>) -> Option<TrainerTarget> {
    match decide_api(pool_doc, &mut Decisions::default()) {
        Api::Trainer(t) => Some(t),
        Api::PyTorchJob => None,
    }
}

fn decide_api(pool_doc: &Loaded<PoolDocument>, decisions: &mut Decisions) -> Api {
    let asked = &pool_doc.value.spec.target;
    let pool = &pool_doc.value.metadata.name;
    match asked.api {
        // The default says nothing worth a line of its own.
        None => return Api::PyTorchJob,
        Some(TargetApi::KubeflowV1) => {
            decisions.record(
                "target api",
                "kubeflow.org/v1 (PyTorchJob)",
                format!("pool `{pool}` sets target.api"),
            );
            return Api::PyTorchJob;
        }
        Some(TargetApi::TrainerV1Alpha1) => {}
    }
    let release = match asked.trainer {
        Some(v) if v > LATEST_TRAINER => {
            decisions.record(
                "target trainer",
                LATEST_TRAINER.to_string(),
                format!("pool `{pool}` sets target.trainer {v}, newer than the latest release rdmagen knows; written for {LATEST_TRAINER}'s API"),
            );
            LATEST_TRAINER
        }
        Some(v) => {
            decisions.record(
                "target trainer",
                v.to_string(),
                format!("pool `{pool}` sets target.trainer"),
            );
            v
        }
        None => {
            decisions.record(
                "target trainer",
                LATEST_TRAINER.to_string(),
                format!("pool `{pool}` sets no target.trainer: the latest release rdmagen knows"),
            );
            LATEST_TRAINER
        }
    };
    let trainer = TrainerTarget {
        release: Release::new(release),
        cluster_scoped: asked.cluster_scoped.unwrap_or(false),
    };
    decisions.record(
        "target api",
        format!("trainer.kubeflow.org/v1alpha1 ({} + TrainJob)", trainer.runtime_kind()),
        format!("pool `{pool}` sets target.api; the pool's pod shape goes into its runtime, each job's own values into its TrainJob"),
    );
    Api::Trainer(trainer)
}

fn describe_operator(v: Version) -> String {
    match OperatorGeneration::of(v) {
        OperatorGeneration::PodWorld => {
            format!("{v} (before 1.7: no nprocPerNode, no PET_* variables)")
        }
        OperatorGeneration::Pet => format!("{v} (1.7 or later: nprocPerNode and PET_*)"),
    }
}
