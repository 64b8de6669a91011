//! The pod template: resources, capabilities, /dev/shm, volumes, scheduling, and the
//! PersistentVolume/Claim pairs a job asks for.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::diagnostics::Rule;
use crate::kubernetes::quantity;
use crate::model::job::Volume;
use crate::model::pool::Attachment;
use crate::multus;
use crate::plan::ctx::Ctx;
use crate::plan::defaults::Origin;
use crate::plan::pod_parts::{SHM_VOLUME, VOLCANO_QUEUE};
use crate::plan::rdma::Rdma;
use crate::plan::{Container, CsiPlan, EnvVar, NfsPlan, Pod, Storage, overlay};
use crate::yaml::tree::Seg;

const ISTIO_INJECT: &str = "sidecar.istio.io/inject";

pub(super) fn decide(
    ctx: &mut Ctx<'_>,
    rdma: &Rdma,
    command: Vec<String>,
    env: Vec<EnvVar>,
    queue: Option<String>,
) -> Pod {
    // Borrowed through the documents' own references, so `ctx` stays free to report.
    let (job, pool) = (ctx.job, ctx.pool);
    let (spec, pool) = (&job.value.spec, &pool.value.spec);

    let mut resources = BTreeMap::new();
    resources.insert(pool.gpu.resource.clone(), spec.gpus_per_node.to_string());
    let mut capabilities = Vec::new();
    for (name, count) in &rdma.resources {
        resources.insert(name.clone(), count.to_string());
    }
    if !rdma.resources.is_empty() {
        capabilities.push("IPC_LOCK".to_owned());
        ctx.decisions.record(
            "capabilities",
            "IPC_LOCK",
            "RDMA registers pinned (page-locked) memory, which needs IPC_LOCK (seed 001)",
        );
    }
    for (field, value) in [
        ("cpu", &spec.resources.cpu),
        ("memory", &spec.resources.memory),
    ] {
        if let Some(q) = value {
            check_quantity(
                ctx,
                q,
                &[Seg::Key("spec"), Seg::Key("resources"), Seg::Key(field)],
            );
            resources.insert(field.to_owned(), q.clone());
        }
    }

    if let Some(size) = &spec.shm {
        check_shm(ctx, size, spec.resources.memory.as_deref());
    }
    ctx.decisions.record(
        "/dev/shm",
        format!("emptyDir medium Memory, sizeLimit {}", spec.shm.as_deref().unwrap_or("none")),
        "NCCL and data loaders share memory through /dev/shm; the container default of 64 MiB makes NCCL fail",
    );
    let mut shm = Map::new();
    shm.insert("medium".to_owned(), json!("Memory"));
    if let Some(size) = &spec.shm {
        shm.insert("sizeLimit".to_owned(), json!(size));
    }
    let mut volumes = vec![json!({"name": SHM_VOLUME, "emptyDir": shm})];
    let mut mounts = vec![json!({"name": SHM_VOLUME, "mountPath": "/dev/shm"})];
    let inputs = std::mem::take(&mut ctx.inputs.volumes);
    for (i, sourced) in inputs.iter().enumerate() {
        let v = &sourced.value;
        let field = sourced.origin.path("volumes");
        let mut at = field.clone();
        at.push(Seg::Index(sourced.index));
        let clash = v.name == SHM_VOLUME
            || v.mount_path == "/dev/shm"
            || inputs[..i]
                .iter()
                .any(|o| o.value.name == v.name || o.value.mount_path == v.mount_path);
        if clash {
            ctx.report_from(
                sourced.origin,
                Rule::VolumeClash,
                format!(
                    "volume `{}` at `{}` repeats a name or mount path (`{SHM_VOLUME}` and /dev/shm are rdmagen's)",
                    v.name, v.mount_path
                ),
                &at,
            );
        }
        if let Some(problem) = volume_problem(v) {
            ctx.report_from(
                sourced.origin,
                Rule::VolumeSource,
                format!("volume `{}` {problem}", v.name),
                &at,
            );
        }
        if let Some(sub) = &v.sub_path
            && (sub.starts_with('/') || sub.split('/').any(|part| part == ".."))
        {
            let mut sub_at = at.clone();
            sub_at.push(Seg::Key("subPath"));
            ctx.report_from(
                sourced.origin,
                Rule::VolumeSubPath,
                format!(
                    "subPath `{sub}` must be a relative path without `..` (Kubernetes validation)"
                ),
                &sub_at,
            );
        }
        volumes.push(pod_volume(v));
        let mut mount = Map::new();
        mount.insert("name".to_owned(), json!(v.name));
        mount.insert("mountPath".to_owned(), json!(v.mount_path));
        if let Some(sub) = &v.sub_path {
            mount.insert("subPath".to_owned(), json!(sub));
        }
        if v.read_only {
            mount.insert("readOnly".to_owned(), json!(true));
        }
        mounts.push(Value::Object(mount));
    }
    ctx.inputs.volumes = inputs;

    let mut labels: BTreeMap<String, String> = ctx.inputs.label_values();
    let mut annotations: BTreeMap<String, String> = ctx.inputs.annotation_values();
    super::kueue::pod_metadata(ctx, &mut labels, &mut annotations);
    annotations
        .entry(ISTIO_INJECT.to_owned())
        .or_insert_with(|| "false".to_owned());
    let owned_queue = queue.clone();
    // Without gang scheduling, Volcano's podgroup controller takes the queue only from
    // this annotation (pg_controller_handler.go:400-402); with it the annotation is
    // skipped (pods already carry a group name), so it is written in both cases.
    if let Some(queue) = queue {
        match annotations.get(VOLCANO_QUEUE) {
            Some(own) if *own != queue => {
                let origin = ctx
                    .inputs
                    .annotations
                    .get(VOLCANO_QUEUE)
                    .map_or(Origin::Job, |a| a.origin);
                let mut at = origin.path("annotations");
                at.push(Seg::Key(VOLCANO_QUEUE));
                ctx.report_from(
                    origin,
                    Rule::QueueConflict,
                    format!("annotation {VOLCANO_QUEUE} is `{own}` but the job's queue is `{queue}`; set the queue in one place (runPolicy.schedulingPolicy.queue or the pool)"),
                    &at,
                )
            }
            _ => {
                annotations.insert(VOLCANO_QUEUE.to_owned(), queue);
            }
        }
    }
    if !rdma.networks.is_empty() {
        annotations.insert(
            multus::NETWORKS_ANNOTATION.to_owned(),
            multus::format(&rdma.networks),
        );
    }
    // Kueue admits jobs for the default scheduler: no schedulerName.
    let scheduler = pool.scheduler.as_ref().filter(|s| !s.is_kueue());
    let scheduler_name = scheduler.map(|s| s.name.clone());
    if let Some(name) = &scheduler_name {
        let gang = if ctx.target.trainer().is_some() {
            "; with Volcano the runtime's podGroupPolicy gang-schedules each TrainJob"
        } else if scheduler.is_some_and(|s| s.is_volcano()) {
            "; gang scheduling (a PodGroup) also needs the operator started with --gang-scheduler-name=volcano, a cluster setting"
        } else {
            ""
        };
        ctx.decisions
            .record("schedulerName", name, format!("the pool's scheduler{gang}"));
    }
    let pool_host_network = pool.network.attachment == Some(Attachment::HostNetwork);
    let host_network = spec.host_network || pool_host_network;
    super::attachment::check_job_host_network(ctx, &rdma.networks);
    if pool_host_network {
        ctx.decisions.record(
            "hostNetwork",
            "true",
            format!(
                "pool `{}` has attachment: hostNetwork: the pod uses the host's interfaces, HCAs and GID table (oci-hpc-oke's hostNetwork guide)",
                ctx.pool.value.metadata.name
            ),
        );
    }
    if host_network {
        ctx.decisions.record(
            "dnsPolicy",
            "ClusterFirstWithHostNet",
            "hostNetwork pods must still resolve <job>-master-0 through cluster DNS",
        );
    }

    let security_context = security_context(ctx, &capabilities);
    let mut container = job_container(
        ctx,
        ctx.target.training_container(),
        &command,
        &env,
        &json!(resources),
    );
    if let Some(sc) = security_context {
        container.insert("securityContext".to_owned(), sc);
    }
    container.insert("volumeMounts".to_owned(), Value::Array(mounts));

    let mut pod_spec = Map::new();
    let mut put = |key: &str, value: Value| {
        pod_spec.insert(key.to_owned(), value);
    };
    if let Some(name) = &scheduler_name {
        put("schedulerName", json!(name));
    }
    if let Some(p) = &ctx.inputs.priority_class_name {
        put("priorityClassName", json!(p.value));
    }
    if let Some(a) = &ctx.inputs.service_account_name {
        put("serviceAccountName", json!(a.value));
    }
    if host_network {
        put("hostNetwork", json!(true));
        put("dnsPolicy", json!("ClusterFirstWithHostNet"));
    }
    if !ctx.inputs.node_selector.is_empty() {
        let selector: Map<String, Value> = ctx
            .inputs
            .node_selector
            .iter()
            .map(|(k, v)| (k.clone(), json!(v.value)))
            .collect();
        put("nodeSelector", Value::Object(selector));
    }
    if let Some(affinity) = &ctx.inputs.affinity {
        put("affinity", affinity.clone());
    }
    if !ctx.inputs.tolerations.is_empty() {
        put(
            "tolerations",
            ctx.inputs
                .tolerations
                .iter()
                .map(|t| serde_json::to_value(&t.value).unwrap_or_default())
                .collect(),
        );
    }
    if !ctx.inputs.image_pull_secrets.is_empty() {
        put(
            "imagePullSecrets",
            ctx.inputs
                .image_pull_secrets
                .iter()
                .map(|s| json!({"name": s.value.name}))
                .collect(),
        );
    }
    let init: Vec<Value> = ctx
        .inputs
        .init_containers
        .iter()
        .map(|c| c.value.clone())
        .chain(ctx.inputs.sidecars.iter().map(|c| native_sidecar(&c.value)))
        .collect();
    check_sidecars(ctx);
    if !ctx.inputs.sidecars.is_empty() {
        ctx.decisions.record(
            "sidecars",
            "initContainers with restartPolicy: Always",
            "Kubernetes native sidecars (GA in 1.33) stop when the training container ends; a plain extra container would keep the pod, and so the job, running",
        );
    }
    if !init.is_empty() {
        put("initContainers", Value::Array(init));
    }
    put("containers", json!([Value::Object(container)]));
    put("volumes", Value::Array(volumes));

    let mut metadata = Map::new();
    if !labels.is_empty() {
        metadata.insert("labels".to_owned(), json!(labels));
    }
    metadata.insert("annotations".to_owned(), json!(annotations));
    let mut template = json!({"metadata": metadata, "spec": pod_spec});
    let rdma_resources: Vec<String> = rdma
        .resources
        .iter()
        .map(|(name, _)| name.clone())
        .collect();
    let owned = overlay::Owned::new(ctx, &template, &rdma_resources, owned_queue.as_deref());
    for overlay in ctx.inputs.overlays.clone() {
        overlay::apply(ctx, &mut template, &overlay, &owned);
    }

    Pod {
        template,
        container: Container {
            image: spec.image.clone(),
            command,
            env,
            resources,
            capabilities,
        },
    }
}
/// The job's container of a pod, in the order its template lays it out: `name`, the
/// job's image and pull policy, `command` (none when empty: an MPIJob's worker gets
/// its sshd from the controller, plan/mpi.rs), the working directory, `env`, the job's
/// envFrom, and `resources` as both requests and limits. A rank's pod adds its
/// security context and mounts; the MPI launcher's has nothing more.
pub(super) fn job_container(
    ctx: &Ctx<'_>,
    name: &str,
    command: &[String],
    env: &[EnvVar],
    resources: &Value,
) -> Map<String, Value> {
    let spec = &ctx.job.value.spec;
    let mut container = Map::new();
    container.insert("name".to_owned(), json!(name));
    container.insert("image".to_owned(), json!(spec.image));
    if let Some(policy) = spec.image_pull_policy {
        container.insert("imagePullPolicy".to_owned(), json!(policy));
    }
    if !command.is_empty() {
        container.insert("command".to_owned(), json!(command));
    }
    if let Some(dir) = &spec.working_dir {
        container.insert("workingDir".to_owned(), json!(dir));
    }
    if !env.is_empty() {
        container.insert(
            "env".to_owned(),
            env.iter().map(EnvVar::to_kubernetes).collect(),
        );
    }
    if !ctx.inputs.env_from.is_empty() {
        container.insert(
            "envFrom".to_owned(),
            ctx.inputs
                .env_from
                .iter()
                .map(|e| e.value.clone())
                .collect(),
        );
    }
    container.insert(
        "resources".to_owned(),
        json!({"requests": resources, "limits": resources}),
    );
    container
}

/// The training container's securityContext: the job's, with rdmagen's capabilities
/// added to (never replacing) its `capabilities.add`.
fn security_context(ctx: &mut Ctx<'_>, capabilities: &[String]) -> Option<Value> {
    let mut sc = ctx
        .job
        .value
        .spec
        .security_context
        .clone()
        .unwrap_or(json!({}));
    if !capabilities.is_empty() {
        let caps = &mut sc["capabilities"];
        if !caps.is_object() {
            *caps = json!({});
        }
        let add = &mut caps["add"];
        let mut list: Vec<Value> = add.as_array().cloned().unwrap_or_default();
        for cap in capabilities.iter().rev() {
            if !list.iter().any(|c| c == cap.as_str()) {
                list.insert(0, json!(cap));
            }
        }
        *add = Value::Array(list);
    }
    (sc.as_object().is_some_and(|m| !m.is_empty())).then_some(sc)
}

/// RDG187: native sidecars where the cluster drops `restartPolicy: Always` from an init
/// container: a PyTorchJob CRD before training-operator 1.8, or Kubernetes before 1.29.
fn check_sidecars(ctx: &mut Ctx<'_>) {
    let Some(first) = ctx.inputs.sidecars.first() else {
        return;
    };
    let (origin, index) = (first.origin, first.index);
    // Trainer's CRDs keep the field; only a PyTorchJob's operator matters.
    let operator = ctx
        .target
        .operator
        .filter(|_| ctx.target.trainer().is_none());
    let Some(why) = crate::kubernetes::sidecars::why_dropped(ctx.target.kubernetes, operator)
    else {
        return;
    };
    let pool = ctx.pool.value.metadata.name.clone();
    let mut path = origin.path("sidecars");
    path.push(Seg::Index(index));
    ctx.report_from(
        origin,
        Rule::SidecarDropped,
        format!(
            "the job's sidecars are native sidecars (init containers with restartPolicy: Always), but on pool `{pool}`'s cluster {why}: each becomes an init container that never exits and the pods stay in Init; move its work into the training container, or target a newer cluster"
        ),
        &path,
    );
}

/// A sidecar as Kubernetes runs it natively: an init container that keeps running.
fn native_sidecar(container: &Value) -> Value {
    let mut c = container.clone();
    if let Value::Object(map) = &mut c {
        map.insert("restartPolicy".to_owned(), json!("Always"));
    }
    c
}

/// What is wrong with a volume's source, if anything.
fn volume_problem(v: &Volume) -> Option<&'static str> {
    let sources = [
        v.claim.is_some(),
        v.nfs.is_some(),
        v.csi.is_some(),
        v.config_map.is_some(),
        v.secret.is_some(),
        v.host_path.is_some(),
        v.empty_dir.is_some(),
    ];
    if sources.iter().filter(|s| **s).count() != 1 {
        return Some(
            "needs exactly one of `claim`, `nfs`, `csi`, `configMap`, `secret`, `hostPath` or `emptyDir`",
        );
    }
    match v.host_path.as_deref() {
        Some("") => return Some("has a `hostPath` without a path: give a directory on the node"),
        Some(path) if !path.starts_with('/') => {
            return Some("has a `hostPath` that is not an absolute path on the node");
        }
        _ => {}
    }
    for name in [&v.config_map, &v.secret, &v.claim].into_iter().flatten() {
        if name.is_empty() {
            return Some("names no object: `configMap`, `secret` and `claim` take a name");
        }
    }
    match (&v.csi, &v.persistent_volume) {
        (Some(_), None) => Some(
            "a `csi` volume needs `persistentVolume`: rdmagen mounts CSI storage through a PV and PVC",
        ),
        (_, Some(_)) if v.nfs.is_none() && v.csi.is_none() => {
            Some("`persistentVolume` needs an `nfs` or `csi` source: it creates a claim for one")
        }
        _ => None,
    }
}

/// A volume as the pod spec lists it.
fn pod_volume(v: &Volume) -> Value {
    let read_only = |mut source: Map<String, Value>| {
        if v.read_only {
            source.insert("readOnly".to_owned(), json!(true));
        }
        Value::Object(source)
    };
    let source = if let Some(pv) = &v.persistent_volume {
        (
            "persistentVolumeClaim",
            read_only(obj(json!({"claimName": pv.claim_name}))),
        )
    } else if let Some(claim) = &v.claim {
        (
            "persistentVolumeClaim",
            read_only(obj(json!({"claimName": claim}))),
        )
    } else if let Some(nfs) = &v.nfs {
        (
            "nfs",
            read_only(obj(json!({"server": nfs.server, "path": nfs.path}))),
        )
    } else if let Some(name) = &v.config_map {
        ("configMap", json!({"name": name}))
    } else if let Some(name) = &v.secret {
        ("secret", json!({"secretName": name}))
    } else if let Some(path) = &v.host_path {
        ("hostPath", json!({"path": path}))
    } else if let Some(dir) = &v.empty_dir {
        let mut source = Map::new();
        if let Some(medium) = dir.medium {
            source.insert("medium".to_owned(), json!(medium));
        }
        if let Some(size) = &dir.size_limit {
            source.insert("sizeLimit".to_owned(), json!(size));
        }
        ("emptyDir", Value::Object(source))
    } else {
        ("emptyDir", json!({}))
    };
    let mut volume = Map::new();
    volume.insert("name".to_owned(), json!(v.name));
    volume.insert(source.0.to_owned(), source.1);
    Value::Object(volume)
}

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// PV + PVC pairs for volumes with `persistentVolume`.
pub(super) fn storage(ctx: &mut Ctx<'_>) -> Vec<Storage> {
    let volumes = ctx.inputs.volumes.clone();
    let mut out = Vec::new();
    for sourced in &volumes {
        let v = &sourced.value;
        let Some(pv) = &v.persistent_volume else {
            continue;
        };
        if v.nfs.is_none() && v.csi.is_none() {
            continue;
        }
        let mut at = sourced.origin.path("volumes");
        at.extend([
            Seg::Index(sourced.index),
            Seg::Key("persistentVolume"),
            Seg::Key("capacity"),
        ]);
        check_quantity_from(ctx, sourced.origin, &pv.capacity, &at);
        let volume_name =
            pv.volume_name
                .clone()
                .unwrap_or_else(|| match pv.claim_name.strip_suffix("-pvc") {
                    Some(stem) => format!("{stem}-pv"),
                    None => format!("{}-pv", pv.claim_name),
                });
        ctx.decisions.record(
            format!("volume {}", v.name),
            format!(
                "PersistentVolume {volume_name} + PersistentVolumeClaim {}",
                pv.claim_name
            ),
            "the job asks for persistentVolume; the claim binds to this volume by name",
        );
        out.push(Storage {
            volume_name,
            claim_name: pv.claim_name.clone(),
            namespace: ctx.job.value.metadata.namespace.clone(),
            capacity: pv.capacity.clone(),
            access_mode: pv.access_mode,
            storage_class_name: pv.storage_class_name.clone(),
            read_only: v.read_only,
            nfs: v.nfs.as_ref().map(|n| NfsPlan {
                server: n.server.clone(),
                path: n.path.clone(),
            }),
            csi: v.csi.as_ref().map(|c| CsiPlan {
                driver: c.driver.clone(),
                volume_handle: c.volume_handle.clone(),
                volume_attributes: c.volume_attributes.clone(),
            }),
        });
    }
    out
}

fn check_quantity(ctx: &mut Ctx<'_>, text: &str, path: &[Seg<'_>]) -> Option<f64> {
    check_quantity_from(ctx, Origin::Job, text, path)
}

/// A resource quantity: the Kubernetes syntax, and never negative (the API server
/// rejects a negative request or limit). Returns its value when it is usable.
fn check_quantity_from(
    ctx: &mut Ctx<'_>,
    origin: Origin,
    text: &str,
    path: &[Seg<'_>],
) -> Option<f64> {
    match quantity::value(text) {
        None => {
            ctx.report_from(
                origin,
                Rule::InvalidQuantity,
                format!("`{text}` is not a Kubernetes quantity such as 64Gi or 500m"),
                path,
            );
            None
        }
        Some(v) if v < 0.0 => {
            ctx.report_from(
                origin,
                Rule::InvalidQuantity,
                format!("`{text}` is negative; a resource quantity is at least 0"),
                path,
            );
            None
        }
        Some(v) => Some(v),
    }
}

/// Below this, /dev/shm runs out as soon as a few GPUs or loader workers share it.
const SHM_FLOOR: f64 = 1024.0 * 1024.0 * 1024.0;

/// `shm`: a positive quantity, at least 1Gi, and within the memory limit (a memory
/// emptyDir is capped by it and counts toward it: EmptyDirVolumeSource.sizeLimit).
fn check_shm(ctx: &mut Ctx<'_>, size: &str, memory: Option<&str>) {
    let at = [Seg::Key("spec"), Seg::Key("shm")];
    let Some(bytes) = check_quantity(ctx, size, &at) else {
        return;
    };
    if bytes <= 0.0 {
        ctx.report(
            Rule::InvalidQuantity,
            format!("shm is `{size}`; a /dev/shm of size 0 holds nothing (leave shm out for no size limit)"),
            &at,
        );
    } else if bytes < SHM_FLOOR {
        let hint = if size.bytes().all(|b| b.is_ascii_digit()) {
            format!(" (a bare number is bytes: did you mean {size}Gi?)")
        } else {
            String::new()
        };
        ctx.report(
            Rule::ShmTooSmall,
            format!("shm is `{size}`, below 1Gi: NCCL and data loaders on this GPU job will run out of /dev/shm{hint}"),
            &at,
        );
    } else if let Some(limit) = memory.and_then(quantity::value)
        && limit > 0.0
        && bytes > limit
    {
        ctx.report(
            Rule::ShmAboveMemory,
            format!("shm is `{size}` but the pod's memory limit is `{}`: /dev/shm is capped by it and counts toward it, so the pod is OOM-killed first", memory.unwrap_or_default()),
            &at,
        );
    }
}
