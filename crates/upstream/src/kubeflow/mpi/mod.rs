//! The Kubeflow mpi-operator (`MPIJob`, `kubeflow.org/v2beta1`): what its controller
//! makes of an MPIJob, transcribed once for the plan, the rules and the tests.
//!
//! Read at kubeflow/mpi-operator tag v0.8.0 (commit 101db144e019e1de65aaded07745e9d805c2852a,
//! 2026-02-18, the newest release). Line numbers are those files' at that tag:
//! `pkg/controller/mpi_job_controller.go` (the controller, "controller:"),
//! `pkg/apis/kubeflow/v2beta1/{types,default,constants}.go` and
//! `pkg/apis/kubeflow/validation/validation.go`. The CRD is vendored beside the other
//! upstream schemas ([`crd`]). Releases from v0.6.0 have every field rdmagen writes
//! (slotsPerWorker, runPolicy, sshAuthMountPath, mpiImplementation; v0.6.0's CRD read).

pub mod crd;
pub mod mpirun;

use crate::version::Version;

/// The group and version of MPIJob v2beta1 (the CRD's one served version, :17).
pub const API_VERSION: &str = "kubeflow.org/v2beta1";
pub const KIND: &str = "MPIJob";

/// The release whose API rdmagen writes and whose CRD it validates against.
pub const LATEST: Version = Version::new(0, 8);
/// The oldest release whose CRD has every field rdmagen writes.
pub const OLDEST: Version = Version::new(0, 6);

/// The replica types (types.go:209-215); validation.go:118-119 reads only these two.
pub const LAUNCHER: &str = "Launcher";
pub const WORKER: &str = "Worker";

/// The implementations `mpiImplementation` takes (types.go:217-223; the CRD's enum,
/// default OpenMPI: types.go:199-203, default.go:68-70).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Implementation {
    #[default]
    OpenMpi,
    Intel,
    Mpich,
}

impl Implementation {
    pub const ALL: [Implementation; 3] = [
        Implementation::OpenMpi,
        Implementation::Intel,
        Implementation::Mpich,
    ];

    /// The value of `spec.mpiImplementation`.
    pub fn name(self) -> &'static str {
        match self {
            Implementation::OpenMpi => "OpenMPI",
            Implementation::Intel => "Intel",
            Implementation::Mpich => "MPICH",
        }
    }

    /// The implementation `spec.mpiImplementation` names (case-sensitive, as the enum).
    pub fn from_name(name: &str) -> Option<Implementation> {
        Implementation::ALL.into_iter().find(|i| i.name() == name)
    }
}

/// `sshAuthMountPath`'s default (types.go:189-192, default.go:65-67): root's `.ssh`.
pub const DEFAULT_SSH_AUTH_MOUNT_PATH: &str = "/root/.ssh";

/// `slotsPerWorker`'s default (types.go:170-174, default.go:62-64).
pub const DEFAULT_SLOTS_PER_WORKER: u32 = 1;

/// The restart policies validation accepts for either replica (validation.go:40-42,
/// 153-155), although the CRD's field takes any string.
pub const RESTART_POLICIES: [&str; 2] = ["Never", "OnFailure"];

/// The values `runPolicy.managedBy` takes (types.go:96-102, validation.go:44-46,104-108).
pub const MANAGED_BY: [&str; 2] = ["kubeflow.org/mpi-operator", "kueue.x-k8s.io/multikueue"];

/// `runPolicy.cleanPodPolicy` when the MPIJob gives none: `None` (default.go:52-55),
/// although types.go:108-110 says Running: the worker pods are then left running when
/// the launcher finishes.
pub const DEFAULT_CLEAN_POD_POLICY: &str = "None";

/// Where the controller mounts the hostfile ConfigMap, on the launcher only
/// (controller:74-77, 1618-1633).
pub const CONFIG_MOUNT_PATH: &str = "/etc/mpi";
pub const HOSTFILE: &str = "/etc/mpi/hostfile";

/// The command the controller gives a worker's first container that has neither a
/// command nor args (controller:1502-1505): an ssh daemon for the launcher's mpirun.
pub const WORKER_DEFAULT_COMMAND: [&str; 2] = ["/usr/sbin/sshd", "-De"];

/// The variable the controller sets in the first container of every pod, to its role
/// (controller:169-180, 1506, 1582).
pub const ROLE_ENV: &str = "K_MPI_JOB_ROLE";

/// The labels the controller puts on every pod it makes, the launcher's and the
/// workers' (defaultLabels, controller:1743-1749, applied at :1482 and :1564; the keys
/// at v2beta1/constants.go:41-45): the MPIJob's name, and the pod's role, [`ROLE_LAUNCHER`]
/// or [`ROLE_WORKER`] (controller:82-83).
pub const JOB_NAME_LABEL: &str = "training.kubeflow.org/job-name";
pub const JOB_ROLE_LABEL: &str = "training.kubeflow.org/job-role";
pub const ROLE_LAUNCHER: &str = "launcher";
pub const ROLE_WORKER: &str = "worker";

/// The condition of an MPIJob whose launcher finished successfully (types.go:328-331).
pub const SUCCEEDED: &str = "Succeeded";

/// The launcher Job's name, also its pod's hostname: `<job>-launcher`
/// (controller:84, 1531, 1557, 1574).
pub fn launcher_name(job: &str) -> String {
    format!("{job}-launcher")
}

/// Worker `index`'s pod name and hostname: `<job>-worker-<index>` (controller:85,
/// 1453-1455, 1486), index from 0.
pub fn worker_name(job: &str, index: u32) -> String {
    format!("{job}-worker-{index}")
}

/// A pod's name as the hostfile writes it: `<pod>.<job>.<namespace>.svc`, resolved
/// through the headless Service `<job>` that every pod's subdomain names
/// (controller:1312-1315, 1384-1411, 1487, 1575). A cluster domain the operator is
/// started with is appended after `svc` (:1313-1315); rdmagen assumes none.
pub fn host(pod: &str, job: &str, namespace: &str) -> String {
    format!("{pod}.{job}.{namespace}.svc")
}

/// The hostfile the controller writes into the ConfigMap `<job>-config` (newConfigMap,
/// controller:1309-1337): the launcher first when it runs as a worker, then every
/// worker in index order, each with `slots` slots. OpenMPI's lines are `<host>
/// slots=<n>`, Intel MPI's and MPICH's `<host>:<n>`.
pub fn hostfile(
    job: &str,
    namespace: &str,
    workers: u32,
    slots: u32,
    implementation: Implementation,
    launcher_as_worker: bool,
) -> String {
    let line = |pod: &str| match implementation {
        Implementation::OpenMpi => format!("{} slots={slots}\n", host(pod, job, namespace)),
        Implementation::Intel | Implementation::Mpich => {
            format!("{}:{slots}\n", host(pod, job, namespace))
        }
    };
    let mut out = String::new();
    if launcher_as_worker {
        out.push_str(&line(&launcher_name(job)));
    }
    for i in 0..workers {
        out.push_str(&line(&worker_name(job, i)));
    }
    out
}

/// The variables the controller appends to the env of the launcher's first container,
/// in its order (newLauncherPodTemplate, controller:1581-1606, the values at :169-219):
/// the role, then the implementation's hostfile and ssh settings (OpenMPI and Intel
/// also the slots), then, unless the launcher runs as a worker, NVIDIA_VISIBLE_DEVICES
/// and NVIDIA_DRIVER_CAPABILITIES set empty so the launcher gets no GPU.
pub fn launcher_env(
    implementation: Implementation,
    slots: u32,
    launcher_as_worker: bool,
) -> Vec<(&'static str, String)> {
    let mut env = vec![(ROLE_ENV, ROLE_LAUNCHER.to_owned())];
    let ssh_args = "-o ConnectionAttempts=10".to_owned();
    match implementation {
        Implementation::OpenMpi => env.extend([
            ("OMPI_MCA_orte_keep_fqdn_hostnames", "true".to_owned()),
            ("OMPI_MCA_orte_default_hostfile", HOSTFILE.to_owned()),
            ("OMPI_MCA_plm_rsh_args", ssh_args),
            ("OMPI_MCA_orte_set_default_slots", slots.to_string()),
        ]),
        Implementation::Intel => env.extend([
            ("I_MPI_HYDRA_HOST_FILE", HOSTFILE.to_owned()),
            ("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", ssh_args),
            ("I_MPI_PERHOST", slots.to_string()),
        ]),
        Implementation::Mpich => env.extend([
            ("HYDRA_HOST_FILE", HOSTFILE.to_owned()),
            ("HYDRA_LAUNCH_EXTRA_ARGS", ssh_args),
        ]),
    }
    if !launcher_as_worker {
        env.extend([
            ("NVIDIA_VISIBLE_DEVICES", String::new()),
            ("NVIDIA_DRIVER_CAPABILITIES", String::new()),
        ]);
    }
    env
}

/// The variables the controller appends to the env of each worker's first container
/// (controller:175-180, 1506).
pub fn worker_env() -> Vec<(&'static str, String)> {
    vec![(ROLE_ENV, ROLE_WORKER.to_owned())]
}

/// Every variable the controller sets in some pod, for any implementation: a job that
/// sets one itself is overridden (the controller appends, and the last entry wins).
pub fn controller_env_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Implementation::ALL
        .into_iter()
        .flat_map(|i| launcher_env(i, 1, false))
        .map(|(name, _)| name)
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The longest pod hostname the controller makes for `workers` workers,
/// `<job>-worker-<workers-1>`, must be a DNS-1035 label (validateMPIJobName,
/// validation.go:55-66): the replica list [`crate::kubernetes::job_name::problem`]
/// judges, which names the same suffix.
pub fn name_replicas(workers: u32) -> [(&'static str, u32); 1] {
    [(WORKER, workers.max(1))]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hostfile_lists_each_worker_with_its_slots_in_the_implementations_form() {
        assert_eq!(
            hostfile("j", "ns", 2, 8, Implementation::OpenMpi, false),
            "j-worker-0.j.ns.svc slots=8\nj-worker-1.j.ns.svc slots=8\n"
        );
        assert_eq!(
            hostfile("j", "ns", 1, 4, Implementation::Intel, true),
            "j-launcher.j.ns.svc:4\nj-worker-0.j.ns.svc:4\n"
        );
        assert_eq!(
            hostfile("j", "ns", 1, 4, Implementation::Mpich, false),
            "j-worker-0.j.ns.svc:4\n"
        );
    }

    #[test]
    fn the_launcher_env_follows_the_implementation() {
        let names = |i, as_worker| -> Vec<&str> {
            launcher_env(i, 8, as_worker)
                .into_iter()
                .map(|(n, _)| n)
                .collect()
        };
        assert_eq!(
            names(Implementation::Mpich, true),
            [ROLE_ENV, "HYDRA_HOST_FILE", "HYDRA_LAUNCH_EXTRA_ARGS"]
        );
        assert_eq!(
            launcher_env(Implementation::OpenMpi, 8, false)[4],
            ("OMPI_MCA_orte_set_default_slots", "8".to_owned())
        );
        assert_eq!(names(Implementation::Intel, false).len(), 6);
        assert!(controller_env_names().contains(&"I_MPI_PERHOST"));
    }
}
