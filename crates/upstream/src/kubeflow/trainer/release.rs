//! Kubeflow Trainer's releases, and what each does with a TrainJob: which field
//! carries a patch of the runtime's pods, which pod fields that patch has, and
//! whether `resourcesPerNode` replaces the runtime container's resources or merges
//! into them. The plan writes for a release and `lint` judges by one; both read
//! these facts here.

use std::fmt;

use crate::version::Version;

/// The oldest Trainer release rdmagen writes for: v2.0's `podSpecOverrides` is not
/// supported (its CRDs are not vendored), v2.1 has `podTemplateOverrides`.
pub const OLDEST: Version = Version::new(2, 1);
/// The newest Trainer release whose API rdmagen follows (v2.3.0, 2026-08-06).
pub const LATEST: Version = Version::new(2, 3);
/// v2.2 replaced `podTemplateOverrides` with `runtimePatches` (kubeflow/trainer#3309),
/// which can also set the container's securityContext (#3066).
const RUNTIME_PATCHES: Version = Version::new(2, 2);
/// v2.3 merges `resourcesPerNode` into the runtime's resources key by key (#3602);
/// before, it replaced the whole block.
const MERGED_RESOURCES: Version = Version::new(2, 3);
/// v2.3's PodSpecPatch gained terminationGracePeriodSeconds (#3324).
const PATCHED_GRACE_PERIOD: Version = Version::new(2, 3);

/// A Kubeflow Trainer release.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Release {
    pub version: Version,
}

/// The TrainJob field that patches a runtime's pods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchField {
    /// v2.2+: `runtimePatches[].trainingRuntimeSpec.template.spec.replicatedJobs[]`, a
    /// strategic merge patch of the JobSet spec (T@v2.3.0
    /// pkg/runtime/core/trainingruntime.go:251-290).
    RuntimePatches,
    /// v2.1: `podTemplateOverrides[]{targetJobs, metadata, spec}` (T@v2.1.0
    /// pkg/runtime/core/trainingruntime.go `mergePodTemplateOverrides`).
    PodTemplateOverrides,
}

/// What `trainer.resourcesPerNode` does to the `node` container's resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourcesPerNode {
    /// Up to v2.2 it replaces them whole (T@v2.2.0
    /// pkg/runtime/core/trainingruntime.go:178-186).
    Replaces,
    /// From v2.3 it merges into them key by key, the TrainJob's winning (T@v2.3.0
    /// pkg/runtime/core/trainingruntime.go:199-238,
    /// pkg/util/trainingruntime/trainingruntime.go:37-65).
    Merges,
}

impl Release {
    pub const fn new(version: Version) -> Release {
        Release { version }
    }

    /// The field a TrainJob patches the runtime's pods with.
    pub fn patch_field(self) -> PatchField {
        if self.version >= RUNTIME_PATCHES {
            PatchField::RuntimePatches
        } else {
            PatchField::PodTemplateOverrides
        }
    }

    /// v2.2 and later: `runtimePatches` (with container securityContext and
    /// `spec.activeDeadlineSeconds`); before, `podTemplateOverrides` and
    /// `spec.labels`/`spec.annotations`.
    pub fn has_runtime_patches(self) -> bool {
        self.patch_field() == PatchField::RuntimePatches
    }

    pub fn resources_per_node(self) -> ResourcesPerNode {
        if self.version >= MERGED_RESOURCES {
            ResourcesPerNode::Merges
        } else {
            ResourcesPerNode::Replaces
        }
    }

    /// v2.3 and later: `resourcesPerNode` merges into the runtime's resources.
    pub fn merges_resources(self) -> bool {
        self.resources_per_node() == ResourcesPerNode::Merges
    }

    /// The pod-spec fields the release's patch sets whole (PodSpecPatch in v2.2+,
    /// T@v2.3.0 pkg/apis/trainer/v1alpha1/trainjob_types.go:390-494;
    /// PodTemplateSpecOverride's spec in v2.1), beside nodeSelector, volumes and the
    /// containers' volumeMounts, which every release's patch merges.
    pub fn patched_pod_fields(self) -> &'static [&'static str] {
        const V2_1: &[&str] = &[
            "serviceAccountName",
            "tolerations",
            "affinity",
            "imagePullSecrets",
            "schedulingGates",
        ];
        const V2_2: &[&str] = &[
            "serviceAccountName",
            "tolerations",
            "affinity",
            "imagePullSecrets",
            "schedulingGates",
            "securityContext",
        ];
        const V2_3: &[&str] = &[
            "serviceAccountName",
            "tolerations",
            "affinity",
            "imagePullSecrets",
            "schedulingGates",
            "securityContext",
            "terminationGracePeriodSeconds",
        ];
        if self.version >= PATCHED_GRACE_PERIOD {
            V2_3
        } else if self.has_runtime_patches() {
            V2_2
        } else {
            V2_1
        }
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.version.fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_release_says_what_it_does() {
        let r = |minor| Release::new(Version::new(2, minor));
        assert_eq!(r(1).patch_field(), PatchField::PodTemplateOverrides);
        assert_eq!(r(2).patch_field(), PatchField::RuntimePatches);
        assert_eq!(r(3).patch_field(), PatchField::RuntimePatches);
        assert_eq!(r(1).resources_per_node(), ResourcesPerNode::Replaces);
        assert_eq!(r(2).resources_per_node(), ResourcesPerNode::Replaces);
        assert_eq!(r(3).resources_per_node(), ResourcesPerNode::Merges);
        assert!(!r(1).patched_pod_fields().contains(&"securityContext"));
        assert!(r(2).patched_pod_fields().contains(&"securityContext"));
        assert!(
            !r(2)
                .patched_pod_fields()
                .contains(&"terminationGracePeriodSeconds")
        );
        assert!(
            r(3).patched_pod_fields()
                .contains(&"terminationGracePeriodSeconds")
        );
    }
}
