//! Kueue (kubernetes-sigs/kueue, read at v0.19.2): the label that puts a job in a
//! queue, and the annotations of topology-aware scheduling.

/// The job object's label naming its LocalQueue (pkg/controller/constants/constants.go:23).
/// On a pod it makes the pod webhook gate that pod as a workload of its own when no
/// owner is a job Kueue manages (pkg/controller/jobs/pod/pod_webhook.go:145-162), so it
/// belongs on the job only.
pub const QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";

/// All pods of a pod set in one domain of this topology level (a node label), or not
/// admitted (apis/kueue/v1beta2/topology_types.go:28).
pub const REQUIRED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-required-topology";

/// The same, falling back level by level, then to spreading (topology_types.go:39).
pub const PREFERRED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-preferred-topology";

/// The Kueue framework that manages PyTorchJobs. Kueue v0.19.0 to v0.19.2 ship with it
/// commented out of the manager's config (config/components/manager/
/// controller_manager_config.yaml; "kubeflow training v1 is being deprecated", #12606);
/// v0.6 to v0.18 had it on.
pub const PYTORCHJOB_FRAMEWORK: &str = "kubeflow.org/pytorchjob";

/// The Kueue framework that manages TrainJobs, on by default from v0.14.
pub const TRAINJOB_FRAMEWORK: &str = "trainer.kubeflow.org/trainjob";

/// The Kueue framework that manages MPIJobs (kubeflow/mpi-operator v2beta1), on in the
/// shipped manager config from v0.6 through v0.19.2 (config/components/manager/
/// controller_manager_config.yaml). Kueue suspends an MPIJob through
/// `spec.runPolicy.suspend` and makes one pod set per replica type, Launcher then Worker
/// (pkg/controller/jobs/mpijob/mpijob_controller.go:88-133).
pub const MPIJOB_FRAMEWORK: &str = "kubeflow.org/mpijob";

/// A Kueue framework and whether the manager config Kueue v0.19.2 ships enables it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Framework {
    pub name: &'static str,
    pub on_by_default: bool,
}

impl Framework {
    pub const PYTORCHJOB: Framework = Framework {
        name: PYTORCHJOB_FRAMEWORK,
        on_by_default: false,
    };
    pub const MPIJOB: Framework = Framework {
        name: MPIJOB_FRAMEWORK,
        on_by_default: true,
    };
    pub const TRAINJOB: Framework = Framework {
        name: TRAINJOB_FRAMEWORK,
        on_by_default: true,
    };
}
