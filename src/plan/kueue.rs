//! A pool whose jobs Kueue queues (`scheduler: {name: kueue}`): the queue label on the
//! job object and never on its pods, the topology request on each pod set's template,
//! and what Kueue cannot work with. The facts are `crate::kueue`'s (Kueue v0.19.2).

use std::collections::BTreeMap;

use crate::diagnostics::{Findings, Rule};
use crate::kueue::{Framework, PREFERRED_TOPOLOGY, QUEUE_LABEL, REQUIRED_TOPOLOGY};
use crate::model::pool::{SchedulerSpec, TopologyRequest};
use crate::model::{Loaded, PoolDocument};
use crate::plan::ctx::Ctx;
use crate::yaml::tree::Seg;

const AT: [Seg<'static>; 3] = [Seg::Key("spec"), Seg::Key("scheduler"), Seg::Key("name")];

fn kueue<'a>(ctx: &Ctx<'a>) -> Option<&'a SchedulerSpec> {
    ctx.pool
        .value
        .spec
        .scheduler
        .as_ref()
        .filter(|s| s.is_kueue())
}

/// The job object's labels on a Kueue pool: the pool's LocalQueue as
/// `kueue.x-k8s.io/queue-name`, unless the job names its own.
pub fn object_labels(ctx: &mut Ctx<'_>, labels: &mut BTreeMap<String, String>) {
    let Some(scheduler) = kueue(ctx) else {
        return;
    };
    let pool = ctx.pool.value.metadata.name.clone();
    let queue = scheduler.queue.clone();
    match (labels.get(QUEUE_LABEL).cloned(), queue) {
        (Some(own), _) => ctx.decisions.record(
            "Kueue queue",
            own,
            format!("the job's own {QUEUE_LABEL} label, on the job object only"),
        ),
        (None, Some(queue)) => {
            ctx.decisions.record(
                "Kueue queue",
                &queue,
                format!("pool `{pool}`'s LocalQueue, as the job object's {QUEUE_LABEL} label (Kueue reads it there, constants.go:23); never on the pods, where the pod webhook would queue each pod on its own"),
            );
            labels.insert(QUEUE_LABEL.to_owned(), queue);
        }
        (None, None) => ctx.decisions.record(
            "Kueue queue",
            "none",
            "the pool names no LocalQueue: Kueue uses the namespace's `default` LocalQueue where there is one",
        ),
    }
}

/// The checks of a Kueue pool's setup against its jobs' kind; once per pool.
pub fn check_pool(pool: &Loaded<PoolDocument>, findings: &mut Findings) {
    let Some(scheduler) = pool.value.spec.scheduler.as_ref().filter(|s| s.is_kueue()) else {
        return;
    };
    let name = &pool.value.metadata.name;
    let at = pool.doc.locate(&AT);
    let trainer = crate::plan::trainer_of(pool);
    if pool.value.spec.target.gang_scheduling == Some(true) && trainer.is_none() {
        findings.at(
            Rule::KueueWithGang,
            format!("pool `{name}` is queued by Kueue but says its operator gang-schedules through Volcano (target.gangScheduling: true): Kueue admits the job by suspending it and lets the default scheduler place its pods, while the operator makes a Volcano PodGroup and sets the pods' schedulerName to volcano; choose one"),
            at.clone(),
        );
    }
    if scheduler
        .topology
        .as_ref()
        .is_some_and(|t| t.name.is_some())
    {
        findings.at(
            Rule::InputShape,
            "scheduler.topology.name is KAI's: Kueue takes the Topology from the ResourceFlavor the ClusterQueue admits the job with, and reads only the level on each pod set",
            pool.doc.locate(&[
                Seg::Key("spec"),
                Seg::Key("scheduler"),
                Seg::Key("topology"),
                Seg::Key("name"),
            ]),
        );
    }
    let off = match scheduler.job_integration {
        Some(false) => "the pool says it is off (scheduler.jobIntegration: false)",
        _ => {
            "Kueue v0.19 ships with it off; say scheduler.jobIntegration: true once the cluster's Kueue config lists it"
        }
    };
    for framework in frameworks(pool, trainer.is_some()) {
        let on = scheduler.job_integration.unwrap_or(framework.on_by_default);
        if !on {
            findings.at(
                Rule::KueueIntegrationOff,
                format!("pool `{name}` is queued by Kueue, which manages a job only where its `{}` integration is enabled, and {off}: without it the job is never suspended and its pods start unqueued, or pod by pod where the namespace has a default LocalQueue", framework.name),
                at.clone(),
            );
        }
    }
}

/// The Kueue frameworks a pool's jobs need: a Trainer pool's are TrainJobs; a pool with
/// the mpi-operator writes MPIJobs for `launcher: mpirun`, and PyTorchJobs too unless it
/// names no training-operator (target.operator), the sign of a pool run for MPI alone.
fn frameworks(pool: &Loaded<PoolDocument>, trainer: bool) -> Vec<Framework> {
    let target = &pool.value.spec.target;
    match (trainer, target.mpi_operator, target.operator) {
        (true, _, _) => vec![Framework::TRAINJOB],
        (false, Some(_), None) => vec![Framework::MPIJOB],
        (false, Some(_), Some(_)) => vec![Framework::PYTORCHJOB, Framework::MPIJOB],
        (false, None, _) => vec![Framework::PYTORCHJOB],
    }
}

/// A pod template's labels and annotations on a Kueue pool: the queue label taken off
/// (it belongs to the job object), and the pool's topology request added.
pub fn pod_metadata(
    ctx: &mut Ctx<'_>,
    labels: &mut BTreeMap<String, String>,
    annotations: &mut BTreeMap<String, String>,
) {
    if labels.remove(QUEUE_LABEL).is_some() {
        ctx.decisions.record(
            "pod labels",
            format!("without {QUEUE_LABEL}"),
            "the queue label goes on the job object only: on a pod it makes Kueue's pod webhook queue that pod as a workload of its own (pod_webhook.go:145-162)",
        );
    }
    let Some(topology) = kueue(ctx).and_then(|s| s.topology.clone()) else {
        return;
    };
    let (key, level, how) = match topology {
        TopologyRequest {
            required: Some(level),
            preferred: None,
            ..
        } => (REQUIRED_TOPOLOGY, level, "all in one domain"),
        TopologyRequest {
            required: None,
            preferred: Some(level),
            ..
        } => (
            PREFERRED_TOPOLOGY,
            level,
            "in one domain if possible, else the fewest that fit",
        ),
        _ => {
            ctx.report_from(
                super::defaults::Origin::Pool,
                Rule::InputShape,
                "scheduler.topology takes one of `required` and `preferred`, a node label of the Kueue Topology's levels",
                &[Seg::Key("spec"), Seg::Key("scheduler"), Seg::Key("topology")],
            );
            return;
        }
    };
    let read_at = if super::mpi::wanted(ctx) && ctx.target.trainer().is_none() {
        "each of the MPIJob's pod sets, Launcher and Worker, on its replica's template (mpijob_controller.go:122-129)"
    } else {
        "each pod set's template (kubeflowjob_controller.go:121-128; a Trainer runtime's replicated job, jobset_controller.go:115-128)"
    };
    ctx.decisions.record(
        format!("annotation {key}"),
        &level,
        format!("the pool's topology request: Kueue places the pods of each replica type (a pod set) {how} of level `{level}` (topology_types.go:28-39); it reads the request on {read_at}"),
    );
    annotations.insert(key.to_owned(), level);
}
