//! The pod template: resources, capabilities, /dev/shm, volumes, scheduling, and the
//! PersistentVolume/Claim pairs a job asks for.

use std::collections::BTreeMap;

use crate::check::Rule;
use crate::plan::quantity;
use crate::plan::rdma::Rdma;
use crate::plan::resolve::Ctx;
use crate::plan::{
    Container, CsiPlan, EnvVar, MemoryVolume, Mount, NfsPlan, Pod, PodVolume, Storage,
    TolerationPlan,
};
use crate::spec::tree::Seg;

const SHM_VOLUME: &str = "dshm";
const ISTIO_INJECT: &str = "sidecar.istio.io/inject";
/// volcano.sh/apis pkg/apis/scheduling/v1beta1/labels.go:48.
const VOLCANO_QUEUE: &str = "scheduling.volcano.sh/queue-name";

pub fn decide(
    ctx: &mut Ctx<'_>,
    rdma: &Rdma,
    command: Vec<String>,
    env: Vec<EnvVar>,
    queue: Option<String>,
) -> Pod {
    let spec = ctx.job.value.spec.clone();
    let pool = ctx.pool.value.spec.clone();

    let mut resources = BTreeMap::new();
    resources.insert(pool.gpu.resource.clone(), spec.gpus_per_node.to_string());
    let mut capabilities = Vec::new();
    if let Some((name, count)) = &rdma.resource {
        resources.insert(name.clone(), count.to_string());
        capabilities.push("IPC_LOCK");
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
    let mut volumes = vec![PodVolume {
        name: SHM_VOLUME.to_owned(),
        memory: Some(MemoryVolume {
            size_limit: spec.shm.clone(),
        }),
        ..PodVolume::default()
    }];
    let mut mounts = vec![Mount {
        name: SHM_VOLUME.to_owned(),
        mount_path: "/dev/shm".to_owned(),
        read_only: false,
    }];
    for (i, v) in spec.volumes.iter().enumerate() {
        let at = [Seg::Key("spec"), Seg::Key("volumes"), Seg::Index(i)];
        let clash = v.name == SHM_VOLUME
            || v.mount_path == "/dev/shm"
            || spec.volumes[..i]
                .iter()
                .any(|o| o.name == v.name || o.mount_path == v.mount_path);
        if clash {
            ctx.report(
                Rule::InvalidValue,
                format!(
                    "volume `{}` at `{}` repeats a name or mount path (`{SHM_VOLUME}` and /dev/shm are rdmagen's)",
                    v.name, v.mount_path
                ),
                &at,
            );
        }
        let sources = [v.claim.is_some(), v.nfs.is_some(), v.csi.is_some()];
        let problem = match (
            sources.iter().filter(|s| **s).count(),
            &v.csi,
            &v.persistent_volume,
        ) {
            (n, _, _) if n != 1 => Some("needs exactly one of `claim`, `nfs` or `csi`"),
            (_, Some(_), None) => Some(
                "a `csi` volume needs `persistentVolume`: rdmagen mounts CSI storage through a PV and PVC",
            ),
            (_, _, Some(_)) if v.claim.is_some() => Some(
                "`persistentVolume` creates a claim; it cannot be combined with an existing `claim`",
            ),
            _ => None,
        };
        if let Some(problem) = problem {
            ctx.report(
                Rule::VolumeSource,
                format!("volume `{}` {problem}", v.name),
                &at,
            );
        }
        let mut volume = PodVolume {
            name: v.name.clone(),
            read_only: v.read_only,
            ..PodVolume::default()
        };
        if let Some(pv) = &v.persistent_volume {
            volume.claim = Some(pv.claim_name.clone());
        } else if let Some(claim) = &v.claim {
            volume.claim = Some(claim.clone());
        } else if let Some(nfs) = &v.nfs {
            volume.nfs = Some(NfsPlan {
                server: nfs.server.clone(),
                path: nfs.path.clone(),
            });
        }
        volumes.push(volume);
        mounts.push(Mount {
            name: v.name.clone(),
            mount_path: v.mount_path.clone(),
            read_only: v.read_only,
        });
    }

    let mut annotations = spec.annotations.clone();
    annotations
        .entry(ISTIO_INJECT.to_owned())
        .or_insert_with(|| "false".to_owned());
    // Without gang scheduling, Volcano's podgroup controller takes the queue only from
    // this annotation (pg_controller_handler.go:400-402); with it the annotation is
    // skipped (pods already carry a group name), so it is written in both cases.
    if let Some(queue) = queue {
        match annotations.get(VOLCANO_QUEUE) {
            Some(own) if *own != queue => ctx.report(
                Rule::InvalidValue,
                format!("annotation {VOLCANO_QUEUE} is `{own}` but the job's queue is `{queue}`; set the queue in one place (runPolicy.schedulingPolicy.queue or the pool)"),
                &[Seg::Key("spec"), Seg::Key("annotations"), Seg::Key(VOLCANO_QUEUE)],
            ),
            _ => {
                annotations.insert(VOLCANO_QUEUE.to_owned(), queue);
            }
        }
    }
    let scheduler_name = pool.scheduler.as_ref().map(|s| s.name.clone());
    if let Some(name) = &scheduler_name {
        let gang = if name.eq_ignore_ascii_case("volcano") {
            "; gang scheduling (a PodGroup) also needs the operator started with --gang-scheduler-name=volcano, a cluster setting"
        } else {
            ""
        };
        ctx.decisions
            .record("schedulerName", name, format!("the pool's scheduler{gang}"));
    }
    let dns_policy = spec.host_network.then_some("ClusterFirstWithHostNet");
    if spec.host_network {
        ctx.decisions.record(
            "dnsPolicy",
            "ClusterFirstWithHostNet",
            "hostNetwork pods must still resolve <job>-master-0 through cluster DNS",
        );
    }
    let tolerations = spec
        .tolerations
        .iter()
        .map(|t| TolerationPlan {
            key: t.key.clone(),
            operator: t.operator,
            value: t.value.clone(),
            effect: t.effect,
            toleration_seconds: t.toleration_seconds,
        })
        .collect();

    Pod {
        labels: spec.labels.clone(),
        annotations,
        scheduler_name,
        host_network: spec.host_network,
        dns_policy,
        node_selector: spec.node_selector.clone(),
        tolerations,
        container: Container {
            image: spec.image.clone(),
            image_pull_policy: spec.image_pull_policy,
            command,
            working_dir: spec.working_dir.clone(),
            env,
            resources,
            capabilities,
            mounts,
        },
        volumes,
    }
}

/// PV + PVC pairs for volumes with `persistentVolume`.
pub fn storage(ctx: &mut Ctx<'_>) -> Vec<Storage> {
    let spec = ctx.job.value.spec.clone();
    let mut out = Vec::new();
    for (i, v) in spec.volumes.iter().enumerate() {
        let Some(pv) = &v.persistent_volume else {
            continue;
        };
        if v.nfs.is_none() && v.csi.is_none() {
            continue;
        }
        check_quantity(
            ctx,
            &pv.capacity,
            &[
                Seg::Key("spec"),
                Seg::Key("volumes"),
                Seg::Index(i),
                Seg::Key("persistentVolume"),
                Seg::Key("capacity"),
            ],
        );
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

/// A resource quantity: the Kubernetes syntax, and never negative (the API server
/// rejects a negative request or limit). Returns its value when it is usable.
fn check_quantity(ctx: &mut Ctx<'_>, text: &str, path: &[Seg<'_>]) -> Option<f64> {
    match quantity::value(text) {
        None => {
            ctx.report(
                Rule::InvalidValue,
                format!("`{text}` is not a Kubernetes quantity such as 64Gi or 500m"),
                path,
            );
            None
        }
        Some(v) if v < 0.0 => {
            ctx.report(
                Rule::InvalidValue,
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
            Rule::InvalidValue,
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
