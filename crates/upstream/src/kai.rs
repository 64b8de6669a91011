//! NVIDIA's KAI scheduler (NVIDIA/KAI-Scheduler, read at v0.13.0): the pod grouper
//! makes one PodGroup per training job from its top owner, and reads the queue and the
//! topology request there.

/// The pods' `schedulerName` KAI schedules, and the only pods its pod grouper groups
/// (pkg/common/constants/constants.go:18; pkg/podgrouper/pod_controller.go:89-91 skips
/// a pod with any other).
pub const SCHEDULER_NAME: &str = "kai-scheduler";

/// The label naming a job's queue, the default of the configurable queueLabelKey
/// (pkg/common/constants/constants.go:17; pkg/apis/kai/v1/global.go:93). The grouper
/// reads it on the top owner first, then on the pod
/// (pkg/podgrouper/podgrouper/plugins/defaultgrouper/default_grouper.go:134-147).
pub const QUEUE_LABEL: &str = "kai.scheduler/queue";

/// The queue of a job with no queue label and no `project` label
/// (plugins/constants/constants.go:19; default_grouper.go:141-146).
pub const DEFAULT_QUEUE: &str = "default-queue";

/// The top owner's annotation naming the KAI Topology object (kai.scheduler/v1alpha1)
/// whose levels the placement annotations name (default_grouper.go:86-89;
/// plugins/constants/constants.go:21).
pub const TOPOLOGY: &str = "kai.scheduler/topology";

/// All the job's pods within one domain of this level (a node label of the Topology),
/// or not scheduled (plugins/constants/constants.go:22).
pub const REQUIRED_PLACEMENT: &str = "kai.scheduler/topology-required-placement";

/// The same if possible (plugins/constants/constants.go:23).
pub const PREFERRED_PLACEMENT: &str = "kai.scheduler/topology-preferred-placement";
