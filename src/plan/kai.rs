//! A pool whose pods NVIDIA's KAI scheduler schedules (`scheduler: {name:
//! kai-scheduler}`): the queue label and the topology request on the job object, where
//! KAI's pod grouper reads them, and what KAI cannot work with. The facts are
//! `crate::kai`'s (KAI-Scheduler v0.13.0).

use std::collections::BTreeMap;

use crate::diagnostics::{Findings, Rule};
use crate::kai::{PREFERRED_PLACEMENT, QUEUE_LABEL, REQUIRED_PLACEMENT, TOPOLOGY};
use crate::model::pool::{SchedulerSpec, TopologyRequest};
use crate::model::{Loaded, PoolDocument};
use crate::plan::ctx::Ctx;
use crate::yaml::tree::Seg;

fn kai<'a>(ctx: &Ctx<'a>) -> Option<&'a SchedulerSpec> {
    ctx.pool
        .value
        .spec
        .scheduler
        .as_ref()
        .filter(|s| s.is_kai())
}

/// The job object's labels and annotations on a KAI pool: the pool's queue as
/// `kai.scheduler/queue` unless the job names its own, and the topology request. KAI
/// groups a PyTorchJob's or an MPIJob's pods by the job object (its top owner), and a
/// TrainJob's by its JobSet, onto which it copies the TrainJob's labels and annotations
/// (hub.go:315-320, skiptopowner.go:64-96): on every kind, the job object is where
/// they are read.
pub fn object_metadata(
    ctx: &mut Ctx<'_>,
    labels: &mut BTreeMap<String, String>,
    annotations: &mut BTreeMap<String, String>,
) {
    let Some(scheduler) = kai(ctx) else {
        return;
    };
    let pool = ctx.pool.value.metadata.name.clone();
    match (labels.get(QUEUE_LABEL).cloned(), scheduler.queue.clone()) {
        (Some(own), _) => ctx.decisions.record(
            "KAI queue",
            own,
            format!("the job's own {QUEUE_LABEL} label"),
        ),
        (None, Some(queue)) => {
            ctx.decisions.record(
                "KAI queue",
                &queue,
                format!("pool `{pool}`'s queue, as the job object's {QUEUE_LABEL} label: KAI's pod grouper reads the queue there before the pod's (default_grouper.go:134-147); runPolicy.schedulingPolicy.queue and the Volcano queue annotation are not written, KAI reads neither"),
            );
            labels.insert(QUEUE_LABEL.to_owned(), queue);
        }
        (None, None) => ctx.decisions.record(
            "KAI queue",
            crate::kai::DEFAULT_QUEUE,
            "the pool names no queue: KAI puts the job in the queue of its `project` label, or in `default-queue` (default_grouper.go:141-146)",
        ),
    }
    ctx.decisions.record(
        "KAI gang",
        "all the job's pods",
        "KAI's grouper makes one PodGroup per job whose minAvailable is every replica's pods (kubeflow/distributed_common.go:45-50; a TrainJob's JobSet: jobset_grouper.go:93-105) unless runPolicy.schedulingPolicy.minAvailable says otherwise, and takes its priority from the pods' priorityClassName (default_grouper.go:275-283)",
    );
    let Some(TopologyRequest {
        name: Some(topology),
        required,
        preferred,
    }) = scheduler.topology.clone()
    else {
        return;
    };
    let (key, level, how) = match (required, preferred) {
        (Some(level), None) => (REQUIRED_PLACEMENT, level, "all in one domain"),
        (None, Some(level)) => (PREFERRED_PLACEMENT, level, "in one domain if possible"),
        // Refused by check_pool, once for the pool.
        _ => return,
    };
    ctx.decisions.record(
        format!("annotations {TOPOLOGY}, {key}"),
        format!("{topology}, {level}"),
        format!("the pool's topology request: KAI places the job's pods {how} of level `{level}` of its Topology `{topology}`, read from the job object's annotations (default_grouper.go:86-89)"),
    );
    annotations.insert(TOPOLOGY.to_owned(), topology);
    annotations.insert(key.to_owned(), level);
}

/// The checks of a KAI pool's setup; once per pool.
pub fn check_pool(pool: &Loaded<PoolDocument>, findings: &mut Findings) {
    let Some(scheduler) = pool.value.spec.scheduler.as_ref().filter(|s| s.is_kai()) else {
        return;
    };
    let name = &pool.value.metadata.name;
    if pool.value.spec.target.gang_scheduling == Some(true) {
        findings.at(
            Rule::KaiWithGang,
            format!("pool `{name}` is scheduled by KAI but says its operator gang-schedules through Volcano (target.gangScheduling: true): an operator started with --gang-scheduler-name=volcano sets every pod's schedulerName to volcano and makes a Volcano PodGroup, and KAI's pod grouper skips pods of any schedulerName but its own (pod_controller.go:89-91); KAI gang-schedules the job by itself, so say gangScheduling: false"),
            pool.doc.locate(&[Seg::Key("spec"), Seg::Key("target"), Seg::Key("gangScheduling")]),
        );
    }
    let Some(topology) = &scheduler.topology else {
        return;
    };
    let at = |field: &'static str| {
        pool.doc.locate(&[
            Seg::Key("spec"),
            Seg::Key("scheduler"),
            Seg::Key("topology"),
            Seg::Key(field),
        ])
    };
    if topology.required.is_some() == topology.preferred.is_some() {
        findings.at(
            Rule::InputShape,
            "scheduler.topology takes one of `required` and `preferred`, a level (node label) of the KAI Topology `name`",
            pool.doc.locate(&[Seg::Key("spec"), Seg::Key("scheduler"), Seg::Key("topology")]),
        );
    }
    if topology.name.is_none() {
        let field = match topology.required.is_some() {
            true => "required",
            false => "preferred",
        };
        findings.at(
            Rule::InputShape,
            format!("scheduler.topology.name is needed on KAI: the placement names a level of a KAI Topology object, and KAI ignores it without the job's {TOPOLOGY} annotation naming that Topology (default_grouper.go:86-89)"),
            at(field),
        );
    }
}
