//! Where a gang-scheduled PyTorchJob's priority comes from (issue 26): the PodGroup
//! the training operator makes for it, and the priority Volcano gives the job from
//! that PodGroup. Both transcribed from their source; the test renders the example
//! whose two jobs have different priority classes and checks that Volcano would order
//! them apart.

use std::collections::BTreeMap;

use serde_json::Value;

/// The Volcano PodGroup spec the operator writes for a job, as far as priority and
/// queue go (training-operator@v1.9.4 pkg/controller.v1/common/job.go:250-296, the
/// `GangSchedulerVolcano` arm).
#[derive(Debug, PartialEq)]
pub struct PodGroup {
    pub min_member: u64,
    pub queue: String,
    pub priority_class_name: String,
}

/// job.go:251-253 start from every replica, queue "default" and no priority class;
/// :257-272 take minAvailable, queue and priorityClass from runPolicy.schedulingPolicy
/// when set and non-empty. The pods' `priorityClassName` is never read.
pub fn pod_group(job: &Value) -> PodGroup {
    let replicas: u64 = job["spec"]["pytorchReplicaSpecs"]
        .as_object()
        .map(|r| {
            r.values()
                .map(|s| s["replicas"].as_u64().unwrap_or(1))
                .sum()
        })
        .unwrap_or(0);
    let mut group = PodGroup {
        min_member: replicas,
        queue: "default".to_owned(),
        priority_class_name: String::new(),
    };
    let policy = &job["spec"]["runPolicy"]["schedulingPolicy"];
    if let Some(n) = policy["minAvailable"].as_u64() {
        group.min_member = n;
    }
    if let Some(q) = policy["queue"].as_str().filter(|q| !q.is_empty()) {
        group.queue = q.to_owned();
    }
    if let Some(pc) = policy["priorityClass"].as_str().filter(|p| !p.is_empty()) {
        group.priority_class_name = pc.to_owned();
    }
    group
}

/// A job's priority in Volcano's scheduler: the default priority, unless the
/// PodGroup's priorityClassName names a PriorityClass the cluster has
/// (volcano@v1.15.1 pkg/scheduler/cache/cache.go:1537-1543).
pub fn job_priority(group: &PodGroup, classes: &BTreeMap<&str, i32>, default: i32) -> i32 {
    classes
        .get(group.priority_class_name.as_str())
        .copied()
        .unwrap_or(default)
}

/// The priority plugin's job order: the higher priority first, equal ones tied
/// (pkg/scheduler/plugins/priority/priority.go:71-89).
pub fn job_order(left: i32, right: i32) -> std::cmp::Ordering {
    right.cmp(&left)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cluster's PriorityClasses the example's jobs name (values are the cluster's
    /// to choose; any two different ones show the point).
    fn classes() -> BTreeMap<&'static str, i32> {
        BTreeMap::from([("training-low", 100), ("training-normal", 1000)])
    }

    fn rendered(example: &str) -> Vec<Value> {
        let bin = env!("CARGO_BIN_EXE_rdmagen");
        let out = std::process::Command::new(bin)
            .arg("render")
            .arg(super::super::root().join("examples").join(example))
            .output()
            .expect("rdmagen runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        rdmagen::verify::parse(&String::from_utf8(out.stdout).unwrap())
            .unwrap()
            .into_iter()
            .filter(|d| d["kind"] == "PyTorchJob")
            .collect()
    }

    /// examples/pool-defaults: `pretrain` keeps the pool's priority class
    /// (training-normal), `finetune` sets its own (training-low). On an operator that
    /// gang-schedules through Volcano (the pool says gangScheduling: true), their
    /// PodGroups get those classes, and Volcano puts pretrain first. Take the field
    /// away and both fall to the default priority: the pods' priorityClassName alone
    /// does not reach the gang.
    #[test]
    fn two_jobs_with_different_priority_classes_get_different_podgroup_priorities() {
        let jobs = rendered("pool-defaults");
        let by_name = |name: &str| {
            jobs.iter()
                .find(|j| j["metadata"]["name"] == name)
                .unwrap_or_else(|| panic!("job {name}"))
        };
        let (pretrain, finetune) = (by_name("pretrain"), by_name("finetune"));
        let classes = classes();
        let default = 0;
        let (high, low) = (pod_group(pretrain), pod_group(finetune));
        assert_eq!(high.priority_class_name, "training-normal");
        assert_eq!(low.priority_class_name, "training-low");
        assert_eq!(high.queue, "training");
        let (p, f) = (
            job_priority(&high, &classes, default),
            job_priority(&low, &classes, default),
        );
        assert_eq!((p, f), (1000, 100));
        assert_eq!(job_order(p, f), std::cmp::Ordering::Less, "pretrain first");
        // Each pod names its class too, as Kubernetes' own scheduler reads it.
        for (job, class) in [(pretrain, "training-normal"), (finetune, "training-low")] {
            for replica in job["spec"]["pytorchReplicaSpecs"]
                .as_object()
                .unwrap()
                .values()
            {
                assert_eq!(replica["template"]["spec"]["priorityClassName"], class);
            }
        }

        // Without runPolicy.schedulingPolicy.priorityClass (rdmagen before issue 26):
        // the same default priority for both, whatever the pods say.
        let mut stripped = [pretrain.clone(), finetune.clone()];
        for job in &mut stripped {
            job["spec"]["runPolicy"]["schedulingPolicy"]
                .as_object_mut()
                .unwrap()
                .remove("priorityClass");
        }
        let priorities: Vec<i32> = stripped
            .iter()
            .map(|j| job_priority(&pod_group(j), &classes, default))
            .collect();
        assert_eq!(priorities, [default, default]);
        assert_eq!(
            job_order(priorities[0], priorities[1]),
            std::cmp::Ordering::Equal
        );
    }
}
