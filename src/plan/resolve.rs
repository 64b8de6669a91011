//! The resolve step for one job: the order in which decisions are made.

use crate::diagnostics::{Findings, Rule};
use crate::kubeflow::trainer::release::{LATEST as LATEST_TRAINER, OLDEST as OLDEST_TRAINER};
use crate::model::pool::{Fabric, GidIndex};
use crate::model::target::TargetApi;
use crate::model::{JobDocument, Loaded, PoolDocument};
use crate::nccl::DYNAMIC_GID_NCCL;
use crate::nccl::{self, EnvFacts};
use crate::plan::ctx::Ctx;
use crate::plan::decision::Decisions;
use crate::plan::defaults;
use crate::plan::{
    Plan, Replica, RunPolicyPlan, SchedulingPlan, attachment, hca, image_build, launcher, mpi,
    nccl_env, pod, preflight, rdma, target,
};
use crate::platform::{Profile, profile};
use crate::yaml::tree::Seg;
use std::collections::BTreeMap;

/// Decide everything about one job on its pool. Findings go to `findings`; the plan is
/// returned even when some are errors, so that one run reports every problem.
pub fn resolve(
    job: &Loaded<JobDocument>,
    pool: &Loaded<PoolDocument>,
    findings: &mut Findings,
) -> Plan {
    let profile = profile(pool.value.spec.platform);
    let mut decisions = Decisions::default();
    decisions.record(
        "platform",
        profile.name,
        format!("pool `{}`: {}", pool.value.metadata.name, profile.source),
    );
    let target = target::decide(pool, profile, &mut decisions);
    let inputs = defaults::merge(
        &pool.value.metadata.name,
        &pool.value.spec.job_defaults,
        &job.value.spec,
        &job.value.metadata.labels,
        &job.value.metadata.annotations,
        &mut decisions,
    );
    let mut ctx = Ctx {
        job,
        pool,
        profile,
        target,
        findings,
        decisions,
        inputs,
    };
    let spec = &job.value.spec;
    let meta = &job.value.metadata;
    check_job_name(&mut ctx, &meta.name, spec.nodes);
    check_counts(&mut ctx);
    let mpi_job = mpi::check(&mut ctx);

    let rdma = rdma::decide(&mut ctx);
    let hcas = hca::for_job(&mut ctx, rdma.on);
    let launch = launcher::decide(&mut ctx);
    let program = mpi_job.then(|| mpi::program(&mut ctx));
    let mut env = nccl_env::decide(&mut ctx, &rdma, hcas.as_deref());
    let preflight = preflight::decide(&mut ctx, &rdma, hcas.as_deref(), &env);
    let (command, program) = match &preflight {
        Some(check) => check.apply(&mut ctx, &mut env, launch.command, program),
        None => (launch.command, program),
    };
    let mut run_policy = run_policy(&mut ctx);
    let queue = run_policy
        .scheduling_policy
        .as_ref()
        .and_then(|s| s.queue.clone());
    let pod = pod::decide(&mut ctx, &rdma, command, env, queue);
    let storage = pod::storage(&mut ctx);
    let mpi_job = program.map(|program| mpi::decide(&mut ctx, &pod, program, &mut run_policy));

    let mut replicas = vec![Replica {
        role: "Master",
        count: 1,
    }];
    if spec.nodes > 1 {
        replicas.push(Replica {
            role: "Worker",
            count: spec.nodes - 1,
        });
    }
    if let Some(mpi) = mpi_job.as_ref().filter(|_| ctx.target.trainer().is_none()) {
        replicas = vec![
            Replica {
                role: crate::kubeflow::mpi::LAUNCHER,
                count: mpi.launcher_replicas,
            },
            Replica {
                role: crate::kubeflow::mpi::WORKER,
                count: mpi.worker_replicas,
            },
        ];
    } else if let Some(trainer) = ctx.target.trainer().filter(|_| mpi_job.is_none()) {
        ctx.decisions.record(
            "numNodes",
            spec.nodes.to_string(),
            format!(
                "one pod per node in the {}'s replicated job `node`; Trainer counts them (PET_NNODES) and names them `<job>-node-0-<index>`",
                trainer.runtime_kind()
            ),
        );
    } else if mpi_job.is_none() {
        ctx.decisions.record(
            "replicas",
            format!("Master 1, Worker {}", spec.nodes.saturating_sub(1)),
            format!(
                "{} node(s): the operator requires exactly one Master; the others are Workers{}",
                spec.nodes,
                if spec.nodes == 1 { " (none here)" } else { "" }
            ),
        );
    }
    let image_build = image_build::decide(&mut ctx);
    let mut written_for = if mpi_job.is_some() && ctx.target.trainer().is_none() {
        ctx.target.written_for_mpi()
    } else {
        ctx.target.written_for()
    };
    written_for.extend(hca::management_annotation(&ctx.pool.value.spec.network));
    ctx.decisions.record(
        "annotations",
        written_for
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", "),
        "what the manifest was written for, on its metadata: `rdmagen lint` judges it by these where no --platform, --operator or --trainer says otherwise",
    );
    let mut annotations: BTreeMap<String, String> = ctx.inputs.annotation_values();
    annotations.extend(
        written_for
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone())),
    );
    let mut labels: BTreeMap<String, String> = ctx.inputs.label_values();
    crate::plan::kueue::object_labels(&mut ctx, &mut labels);
    crate::plan::kai::object_metadata(&mut ctx, &mut labels, &mut annotations);

    Plan {
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        labels,
        annotations,
        written_for,
        nproc_per_node: launch.nproc_per_node,
        run_policy,
        replicas,
        restart_policy: spec.restart_policy,
        pod,
        storage,
        preflight,
        mpi_job,
        train_job: None,
        image_build,
        target,
        rdma,
        decisions: ctx.decisions.0,
    }
}

/// The webhook's and the Services' naming rules, shared with `lint` (check::job_name).
/// On Trainer v2 the JobSet names each pod's hostname `<job>-node-0-<index>`
/// (PET_MASTER_ADDR is `<job>-node-0-0.<job>`), a DNS label too.
fn check_job_name(ctx: &mut Ctx<'_>, name: &str, nodes: u32) {
    let replicas: Vec<(&str, u32)> = match ctx.target.trainer() {
        // An MPI runtime's launcher is `<job>-launcher-0-0`.
        Some(_) if mpi::wanted(ctx) => vec![("node-0", nodes), ("launcher-0", 1)],
        Some(_) => vec![("node-0", nodes)],
        _ if mpi::wanted(ctx) => crate::kubeflow::mpi::name_replicas(nodes).to_vec(),
        None => vec![("Master", 1), ("Worker", nodes.saturating_sub(1))],
    };
    if let Some(problem) = crate::kubernetes::job_name::problem(name, &replicas) {
        ctx.report(
            Rule::InvalidJobName,
            problem,
            &[Seg::Key("metadata"), Seg::Key("name")],
        );
    }
}

/// The schema guarantees nodes, gpusPerNode and perNode are at least 1.
fn check_counts(ctx: &mut Ctx<'_>) {
    let gpus = ctx.job.value.spec.gpus_per_node;
    let per_node = ctx.pool.value.spec.gpu.per_node;
    if gpus > per_node {
        let pool = ctx.pool.value.metadata.name.clone();
        ctx.report(
            Rule::GpusAbovePool,
            format!("gpusPerNode is {gpus} but the nodes of pool `{pool}` have {per_node} GPUs"),
            &[Seg::Key("spec"), Seg::Key("gpusPerNode")],
        );
    }
}

/// spec.runPolicy, always written: the Python SDK's model refuses a PyTorchJob without
/// it (kubeflow-training 1.9.4 `KubeflowOrgV1PyTorchJobSpec.run_policy` must not be
/// None), and one such job breaks `list_jobs` for its whole namespace.
/// `runPolicy.schedulingPolicy.priorityClass` of a PyTorchJob: the job's own, else, on a
/// Volcano pool, the pods' priority class.
/// The operator fills the PodGroup's priority from this field alone and ignores the
/// pods' `priorityClassName` (training-operator@v1.9.4
/// pkg/controller.v1/common/job.go:250-296), and Volcano orders and preempts gangs by
/// the PodGroup's priority (volcano@v1.15.1 pkg/scheduler/cache/cache.go:1537-1543,
/// plugins/priority/priority.go:71-89): without it every gang has the default.
fn gang_priority(ctx: &mut Ctx<'_>, asked: Option<String>, on_volcano: bool) -> Option<String> {
    if asked.is_some() || ctx.target.trainer().is_some() {
        return asked;
    }
    if !on_volcano {
        return None;
    }
    let class = ctx.inputs.priority_class_name.as_ref()?.value.clone();
    if mpi::wanted(ctx) {
        ctx.decisions.record(
            "schedulingPolicy.priorityClass",
            &class,
            "the pods' priority class, for the MPIJob's PodGroup: the mpi-operator reads runPolicy.schedulingPolicy.priorityClass first and falls back to the Launcher's, then the Worker's priorityClassName (mpi-operator@v0.8.0 pkg/controller/podgroup.go:109-137); written here so that the gang's priority, by which Volcano orders and preempts gangs (cache.go:1537-1543), is stated rather than inferred",
        );
        return Some(class);
    }
    ctx.decisions.record(
        "schedulingPolicy.priorityClass",
        &class,
        match ctx.target.gang_scheduling {
            Some(false) => "the pods' priority class, which Volcano reads for the PodGroup it makes per pod (target.gangScheduling: false); written to runPolicy.schedulingPolicy too, as the queue is, for an operator that gang-schedules (it reads only that field, job.go:250-296)",
            _ => "the pods' priority class, for the job's PodGroup: a gang-scheduling operator takes the PodGroup's priority from runPolicy.schedulingPolicy.priorityClass only (job.go:250-296), and Volcano orders and preempts gangs by it (cache.go:1537-1543); without it every gang has the default priority",
        },
    );
    Some(class)
}

fn run_policy(ctx: &mut Ctx<'_>) -> RunPolicyPlan {
    let asked = ctx.job.value.spec.run_policy.clone().unwrap_or_default();
    let asked_scheduling = asked.scheduling_policy.unwrap_or_default();
    // A Kueue pool's queue is a LocalQueue and a KAI pool's a KAI queue, each the job
    // object's label (`kueue`, `kai`), not Volcano's.
    let pool_queue = ctx
        .pool
        .value
        .spec
        .scheduler
        .as_ref()
        .and_then(|s| s.volcano_queue())
        .map(str::to_owned);
    let gang = ctx.target.gang_scheduling;
    let where_read = match (ctx.target.trainer(), gang) {
        (None, _) if mpi::wanted(ctx) => {
            "runPolicy.schedulingPolicy.queue, which the mpi-operator copies into the MPIJob's PodGroup when it gang-schedules (before the MPIJob's own scheduling.volcano.sh/queue-name annotation, mpi-operator@v0.8.0 pkg/controller/podgroup.go:109-137), and the pods' scheduling.volcano.sh/queue-name annotation, which Volcano reads when the operator does not"
        }
        (Some(_), _) => {
            "the JobSet's scheduling.volcano.sh/queue-name annotation, from which Trainer's Volcano plugin sets the PodGroup's queue (volcano.go:180-184), and the pods' annotation"
        }
        (None, gang) => match gang {
            Some(true) => {
                "runPolicy.schedulingPolicy.queue, which the gang-scheduling operator copies into the job's PodGroup (target.gangScheduling), and the pods' scheduling.volcano.sh/queue-name annotation, which Volcano skips for pods already in a group"
            }
            Some(false) => {
                "the pods' scheduling.volcano.sh/queue-name annotation, which Volcano reads for the PodGroup it makes per pod (target.gangScheduling: false, so the operator makes none); also runPolicy.schedulingPolicy.queue"
            }
            None => {
                "runPolicy.schedulingPolicy.queue (read by the operator when it gang-schedules) and the pods' scheduling.volcano.sh/queue-name annotation (read by Volcano when it does not)"
            }
        },
    };
    let queue = match (asked_scheduling.queue, pool_queue) {
        (Some(q), _) => {
            ctx.decisions.record(
                "queue",
                &q,
                format!("set by the job's runPolicy.schedulingPolicy; written to {where_read}"),
            );
            Some(q)
        }
        (None, Some(q)) => {
            ctx.decisions.record(
                "queue",
                &q,
                format!("the pool's scheduler queue; written to {where_read}"),
            );
            Some(q)
        }
        (None, None) => None,
    };
    let on_volcano = ctx.on_volcano();
    let nodes = ctx.job.value.spec.nodes;
    if gang == Some(false) && on_volcano && nodes > 1 && ctx.target.trainer().is_none() {
        let pool = ctx.pool.value.metadata.name.clone();
        ctx.report(
            Rule::VolcanoWithoutGang,
            format!(
                "the job's {nodes} pods are scheduled one by one: pool `{pool}` schedules with Volcano but says its operator does not gang-schedule (target.gangScheduling: false), so Volcano gives each pod a PodGroup of its own; two such jobs can each hold part of the GPUs and wait for the rest forever"
            ),
            &[Seg::Key("spec"), Seg::Key("nodes")],
        );
    }
    if gang == Some(false) {
        let pool = ctx.pool.value.metadata.name.clone();
        for (field, set) in [
            ("minAvailable", asked_scheduling.min_available.is_some()),
            ("priorityClass", asked_scheduling.priority_class.is_some()),
        ] {
            if set {
                ctx.report(
                    Rule::SchedulingWithoutGang,
                    format!("schedulingPolicy.{field} is ignored: pool `{pool}` says its operator does not gang-schedule (target.gangScheduling: false)"),
                    &[
                        Seg::Key("spec"),
                        Seg::Key("runPolicy"),
                        Seg::Key("schedulingPolicy"),
                        Seg::Key(field),
                    ],
                );
            }
        }
    }
    let priority_class = gang_priority(ctx, asked_scheduling.priority_class, on_volcano);
    let scheduling =
        (queue.is_some() || asked_scheduling.min_available.is_some() || priority_class.is_some())
            .then_some(SchedulingPlan {
                min_available: asked_scheduling.min_available,
                queue,
                priority_class,
            });
    let managed_by = managed_by(ctx, asked.managed_by);
    let empty = asked.clean_pod_policy.is_none()
        && asked.backoff_limit.is_none()
        && asked.ttl_seconds_after_finished.is_none()
        && asked.active_deadline_seconds.is_none()
        && asked.suspend.is_none()
        && managed_by.is_none()
        && scheduling.is_none();
    RunPolicyPlan {
        empty,
        clean_pod_policy: asked.clean_pod_policy,
        backoff_limit: asked.backoff_limit,
        ttl_seconds_after_finished: asked.ttl_seconds_after_finished,
        active_deadline_seconds: asked.active_deadline_seconds,
        scheduling_policy: scheduling,
        suspend: asked.suspend,
        managed_by,
    }
}

/// The job's `runPolicy.managedBy`, when its target's CRD has the field and takes the
/// value (RDG190 otherwise): a PyTorchJob's from training-operator 1.9 (v1.9.4
/// pkg/apis/kubeflow.org/v1/common_types.go:40-43,239), a TrainJob's on every Trainer
/// release (trainjob_types.go:143-152).
fn managed_by(ctx: &mut Ctx<'_>, asked: Option<String>) -> Option<String> {
    use crate::kubeflow::operator::MANAGED_BY_CRD;
    let value = asked?;
    let at = [
        Seg::Key("spec"),
        Seg::Key("runPolicy"),
        Seg::Key("managedBy"),
    ];
    let (allowed, since) = match ctx.target.trainer() {
        Some(_) => (crate::kubeflow::trainer::MANAGED_BY, None),
        _ if mpi::wanted(ctx) => (crate::kubeflow::mpi::MANAGED_BY, None),
        None => (crate::kubeflow::operator::MANAGED_BY, Some(MANAGED_BY_CRD)),
    };
    if let (Some(since), Some(v)) = (since, ctx.target.operator)
        && v < since
    {
        ctx.report(
            Rule::FieldNotInRelease,
            format!("runPolicy.managedBy is not in the PyTorchJob CRD of training-operator {v} (it came in {since}): the API server prunes it, and the operator reconciles the job itself"),
            &at,
        );
        return None;
    }
    if !allowed.contains(&value.as_str()) {
        ctx.report(
            Rule::FieldNotInRelease,
            format!(
                "runPolicy.managedBy is `{}`; the CRD takes `{}` or `{}`",
                crate::diagnostics::escape::shown(&value),
                allowed[0],
                allowed[1]
            ),
            &at,
        );
        return None;
    }
    Some(value)
}

/// Checks of a pool that do not depend on any job; run once per pool.
pub fn check_pool(pool: &Loaded<PoolDocument>, findings: &mut Findings) {
    crate::plan::kueue::check_pool(pool, findings);
    crate::plan::kai::check_pool(pool, findings);
    let net = &pool.value.spec.network;
    let at = |field: &str| {
        pool.doc
            .locate(&[Seg::Key("spec"), Seg::Key("network"), Seg::Key(field)])
    };
    let gid_index = match net.gid_index {
        Some(GidIndex::Index(i)) => Some(i),
        _ => None,
    };
    let fields: [(&str, &str, Option<u32>); 6] = [
        ("gidIndex", "NCCL_IB_GID_INDEX", gid_index),
        ("ibTimeout", "NCCL_IB_TIMEOUT", net.ib_timeout),
        (
            "qpsPerConnection",
            "NCCL_IB_QPS_PER_CONNECTION",
            net.qps_per_connection,
        ),
        ("crossNic", "NCCL_CROSS_NIC", net.cross_nic),
        ("trafficClass", "NCCL_IB_TC", net.traffic_class),
        ("serviceLevel", "NCCL_IB_SL", net.service_level),
    ];
    for (field, var, value) in fields {
        let (min, max) = nccl::integer_range(var).expect("every field's variable has a range");
        // A Pool's fields are unsigned: NCCL's -1 is `gidIndex: auto` (pick the GID),
        // or leaving the traffic class or service level out (unset).
        let min = min.max(0);
        if let Some(v) = value
            && !(min..=max).contains(&i64::from(v))
        {
            findings.at(
                Rule::NcclValueRange,
                format!("{field} is {v}; {var} accepts {min}-{max}"),
                at(field),
            );
        }
    }
    // Checked here, at the pool's line, by the rule the rendered manifest is verified
    // against; found only there, it would point at line 1 of every job on the pool.
    if let Some(name) = &net.socket_ifname {
        for problem in nccl::check("NCCL_SOCKET_IFNAME", name, &EnvFacts::default()) {
            let message = format!("socketIfname: {}", problem.message);
            findings.at(problem.rule, message, at("socketIfname"));
        }
    }
    if net.ib_timeout == Some(0) {
        findings.at(
            Rule::IbTimeoutInfinite,
            "ibTimeout 0 sets NCCL_IB_TIMEOUT=0, which waits forever on a lost link",
            at("ibTimeout"),
        );
    }
    let profile = profile(pool.value.spec.platform);
    if profile.owns_qos {
        for (field, value) in [
            ("trafficClass", net.traffic_class),
            ("serviceLevel", net.service_level),
        ] {
            if value.is_some() {
                findings.at(
                    Rule::IbTcSet,
                    format!(
                        "{field} is set, but {} owns the fabric's QoS (no need to set NCCL_IB_TC, do not change it)",
                        profile.title
                    ),
                    at(field),
                );
            }
        }
    }
    check_gid(pool, profile, findings);
    check_target(pool, findings);
    if net.rdma_resource.as_deref() == Some(pool.value.spec.gpu.resource.as_str()) {
        findings.at(
            Rule::RdmaResourceIsGpu,
            format!(
                "rdmaResource is `{}`, the GPU resource: one resource line cannot request both the GPUs and the RDMA device",
                pool.value.spec.gpu.resource
            ),
            at("rdmaResource"),
        );
    }
    if net.fabric == Fabric::Ib && matches!(net.gid_index, Some(GidIndex::Index(_))) {
        findings.at(
            Rule::GidIndexOnIb,
            "gidIndex is set on an InfiniBand pool; NCCL ignores NCCL_IB_GID_INDEX there and rdmagen does not write it",
            at("gidIndex"),
        );
    }
    hca::check_pool_names(pool, findings);
    attachment::check_pool(pool, findings);
}

/// Target fields that the pool's API does not read, and Trainer releases rdmagen cannot
/// write for.
fn check_target(pool: &Loaded<PoolDocument>, findings: &mut Findings) {
    let target = &pool.value.spec.target;
    let at = |field: &str| {
        pool.doc
            .locate(&[Seg::Key("spec"), Seg::Key("target"), Seg::Key(field)])
    };
    let trainer = target.api == Some(TargetApi::TrainerV1Alpha1);
    if trainer {
        if target.operator.is_some() {
            findings.at(
                Rule::TargetFieldIgnored,
                "target.operator is the PyTorchJob operator's version; Kubeflow Trainer v2 (api: trainer.kubeflow.org/v1alpha1) does not read it: its release is target.trainer",
                at("operator"),
            );
        }
        if let Some(v) = target.trainer.filter(|v| *v > LATEST_TRAINER) {
            findings.at(
                Rule::TargetFieldIgnored,
                format!(
                    "target.trainer is {v}, newer than the latest Kubeflow Trainer release rdmagen knows; the output is written for {LATEST_TRAINER}'s API, which {v} may have changed"
                ),
                at("trainer"),
            );
        }
        let volcano = pool
            .value
            .spec
            .scheduler
            .as_ref()
            .is_some_and(|s| s.is_volcano());
        if target.gang_scheduling == Some(true) && !volcano {
            findings.at(
                Rule::TargetFieldIgnored,
                "target.gangScheduling: true needs `scheduler: {name: volcano}`: on Kubeflow Trainer the runtime's podGroupPolicy.volcano gang-schedules, and this pool names no Volcano scheduler",
                at("gangScheduling"),
            );
        }
        if let Some(v) = target.trainer.filter(|v| *v < OLDEST_TRAINER) {
            findings.at(
                Rule::TrainerReleaseUnsupported,
                format!(
                    "target.trainer is {v}; rdmagen writes for Kubeflow Trainer {OLDEST_TRAINER} to {LATEST_TRAINER} (v2.0's podSpecOverrides and spec.labels were replaced in v2.1)"
                ),
                at("trainer"),
            );
        }
        if target.mpi_operator.is_some() {
            findings.at(
                Rule::TargetFieldIgnored,
                "target.mpiOperator applies to PyTorchJob-API pools, whose jobs with `launcher: mpirun` become MPIJobs; on Kubeflow Trainer they become TrainJobs on Trainer's own MPI runtime (mlPolicy.mpi), which needs no mpi-operator",
                at("mpiOperator"),
            );
        }
    } else {
        for (field, set) in [
            ("trainer", target.trainer.is_some()),
            ("clusterScoped", target.cluster_scoped.is_some()),
        ] {
            if set {
                findings.at(
                    Rule::TargetFieldIgnored,
                    format!("target.{field} applies to Kubeflow Trainer v2 only; this pool writes PyTorchJobs (set `target.api: trainer.kubeflow.org/v1alpha1` for TrainJobs)"),
                    at(field),
                );
            }
        }
    }
}

/// The RoCE GID decision against the NCCL in the pool's images: dynamic selection
/// (`auto`, or no index at all) exists only since NCCL 2.21; before, the index is 0.
fn check_gid(pool: &Loaded<PoolDocument>, profile: &Profile, findings: &mut Findings) {
    let spec = &pool.value.spec;
    let net = &spec.network;
    // Platforms that preset the GID index (AIStudio, CCE) decide it themselves.
    if net.fabric != Fabric::Roce || profile.presets(Fabric::Roce, true, "NCCL_IB_GID_INDEX") {
        return;
    }
    // A shape the platform documents an index for (OCI: 3) decides it where the pool
    // does not.
    let selector = spec.job_defaults.node_selector.iter();
    let shape = profile.shape(selector.map(|(k, v)| (k.as_str(), v.as_str())));
    if net.gid_index.is_none() && shape.is_some_and(|s| s.value("NCCL_IB_GID_INDEX").is_some()) {
        return;
    }
    // With the pool's preflight on, `auto` is found in each pod and exported before
    // NCCL starts (plan/preflight.rs); a job that turns it off is judged there.
    if net.gid_index == Some(GidIndex::Auto) && net.preflight == Some(true) {
        return;
    }
    let nccl = spec.target.nccl;
    let old = nccl.filter(|v| *v < DYNAMIC_GID_NCCL);
    let name = &pool.value.metadata.name;
    let network = [Seg::Key("spec"), Seg::Key("network")];
    let gid_at = [Seg::Key("spec"), Seg::Key("network"), Seg::Key("gidIndex")];
    let nccl_at = [Seg::Key("spec"), Seg::Key("target"), Seg::Key("nccl")];
    match (net.gid_index, old) {
        (Some(GidIndex::Index(_)), _) => {}
        (gid, Some(v)) => {
            let what = match gid {
                Some(_) => "gidIndex: auto leaves the GID to NCCL's dynamic selection",
                None => "no gidIndex leaves the GID to NCCL's default",
            };
            findings.at(
                Rule::GidNeedsNewerNccl,
                format!(
                    "{what}, but pool `{name}` has NCCL {v}: before 2.21 NCCL uses GID index 0, usually the link-local GID; set the RoCE v2 IPv4 index (`rdmagen detect` finds it)"
                ),
                pool.doc.locate(if gid.is_some() { &gid_at } else { &nccl_at }),
            );
        }
        (Some(GidIndex::Auto), None) if nccl.is_none() => findings.at(
            Rule::GidNcclUnknown,
            format!(
                "gidIndex: auto needs NCCL 2.21 or later (dynamic GID selection; index 0 before), and pool `{name}` sets no target.nccl"
            ),
            pool.doc.locate(&gid_at),
        ),
        (Some(GidIndex::Auto), None) => {}
        (None, None) => findings.at(
            Rule::GidUndecided,
            format!(
                "RoCE pool `{name}` sets no gidIndex: NCCL then picks dynamically from 2.21 and uses index 0 before{}; write `gidIndex: auto` or the index `rdmagen detect` proposes",
                match nccl {
                    Some(v) => format!(" (its images have {v})"),
                    None => ", and the pool sets no target.nccl".to_owned(),
                }
            ),
            pool.doc.locate(&network),
        ),
    }
}
