//! Which RDMA data NICs a job uses, and how to name them to NCCL.

use std::collections::HashSet;

use crate::diagnostics::{Findings, Rule};
use crate::model::pool::{DEFAULT_MANAGEMENT_NIC, NetworkSpec, PartialNodeHcas};
use crate::model::{Loaded, PoolDocument};
use crate::plan::ctx::Ctx;
use crate::rules::manifest::MANAGEMENT_NIC_ANNOTATION;
use crate::yaml::tree::Seg;

/// The first ceil(k·H/G) of the pool's H data NICs for a job on k of G GPUs
/// (seed 001's CCE table: 8 GPUs → mlx5_1..mlx5_8, 4 GPUs → mlx5_1..mlx5_4).
pub fn share(hcas: &[String], gpus: u32, per_node: u32) -> &[String] {
    if per_node == 0 || gpus >= per_node {
        return hcas;
    }
    let wanted = (u64::from(gpus) * hcas.len() as u64).div_ceil(u64::from(per_node));
    &hcas[..(wanted as usize).min(hcas.len())]
}

/// NCCL_IB_HCA for the chosen devices, always in the exact-match form `=a,b`: NCCL
/// matches names as prefixes (src/misc/utils.cc:218-222), so a bare `mlx5_1` also
/// selects mlx5_10..mlx5_19, which may be a storage NIC the pool does not list. The
/// NCCL docs (env.rst, NCCL_IB_HCA) recommend always adding the `=`.
pub fn nccl_value(chosen: &[String]) -> String {
    format!("={}", chosen.join(","))
}

/// NCCL_IB_HCA for this job, or None when it is not written (RDMA off, no NICs listed).
pub fn for_job(ctx: &mut Ctx<'_>, rdma_on: bool) -> Option<String> {
    if !rdma_on {
        return None;
    }
    let network = &ctx.pool.value.spec.network;
    // The pool's data NICs, else the exact list its platform documents for the shape
    // (OCI: Oracle's `NCCL_IB_HCA==mlx5_0,...`).
    let from_shape: Vec<String> = match ctx.shape().and_then(|s| s.value("NCCL_IB_HCA")) {
        Some(list) if network.hcas.is_empty() => list
            .trim_start_matches('=')
            .split(',')
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    };
    let all = if from_shape.is_empty() {
        &network.hcas
    } else {
        &from_shape
    };
    if let Some(mode) = network.attachment {
        if !mode.host_device_names() {
            ctx.decisions.record(
                "hcas",
                "(unset)",
                format!(
                    "attachment: {}: the pod has only the devices of its rails, under names the host chose when it made them (not the host's `hcas`); NCCL uses every RDMA device it sees, which are exactly those",
                    mode.name()
                ),
            );
            return None;
        }
        let management = network.management_device();
        if all.is_empty() && management != "none" {
            let value = format!("^={management}");
            ctx.decisions.record(
                "hcas",
                &value,
                format!(
                    "attachment: {}: the pod sees every HCA of the host under the host's names, the management NIC {management} among them; the pool lists no hcas, so NCCL takes all but that one (`^=` excludes the exact name)",
                    mode.name()
                ),
            );
            return Some(value);
        }
    }
    if all.is_empty() {
        let pool = ctx.pool.value.metadata.name.clone();
        ctx.report(
            Rule::RdmaWithoutHcas,
            format!("pool `{pool}` lists no hcas; NCCL will use every RDMA device, the management NIC included"),
            &[Seg::Key("spec"), Seg::Key("pool")],
        );
        return None;
    }
    let gpus = ctx.job.value.spec.gpus_per_node;
    let per_node = ctx.pool.value.spec.gpu.per_node;
    let (choice, chosen_by) = match network.partial_node_hcas {
        Some(choice) => (choice, "the pool's partialNodeHcas".to_owned()),
        None => (
            ctx.profile.partial_node_hcas,
            format!("the {} platform default", ctx.profile.name),
        ),
    };
    let partial = gpus < per_node;
    let chosen = match choice {
        PartialNodeHcas::First => share(all, gpus, per_node),
        PartialNodeHcas::All => all.as_slice(),
    };
    let value = nccl_value(chosen);
    // Where the platform sets NCCL_IB_HCA itself, the NIC choice is its own.
    let platform_chooses = ctx.profile.presets(ctx.fabric(), true, "NCCL_IB_HCA");
    let shape = ctx.shape().filter(|_| !from_shape.is_empty());
    let reason = if let (false, Some(shape)) = (partial, shape) {
        format!(
            "every one of the shape's {} data NICs for a whole node, from {}; `=` so that no name matches longer ones as a prefix",
            all.len(),
            ctx.shape_reason(shape)
        )
    } else if !partial {
        format!(
            "every one of the pool's {} data NICs for a whole node; `=` so that no name matches longer ones as a prefix",
            all.len()
        )
    } else if platform_chooses {
        format!(
            "{} of the pool's data NICs; the {} platform sets NCCL_IB_HCA itself",
            chosen.len(),
            ctx.profile.name
        )
    } else {
        let how = match choice {
            PartialNodeHcas::First => format!(
                "the first ceil({gpus}*{}/{per_node}) = {} of the pool's data NICs",
                all.len(),
                chosen.len()
            ),
            PartialNodeHcas::All => {
                "every data NIC, so that NCCL uses the one nearest each GPU".to_owned()
            }
        };
        let pool = ctx.pool.value.metadata.name.clone();
        let message = match choice {
            PartialNodeHcas::First => format!(
                "the pod takes {gpus} of {per_node} GPUs and gets {how} ({chosen_by}); which GPUs it gets is not known, so these NICs may be far from them (no GPUDirect RDMA); `partialNodeHcas: all` on pool `{pool}` lets NCCL pick the nearest"
            ),
            PartialNodeHcas::All => format!(
                "the pod takes {gpus} of {per_node} GPUs and lists {how} ({chosen_by}); pods sharing a node may then share NICs"
            ),
        };
        ctx.report(
            Rule::PartialNodeNics,
            message,
            &[Seg::Key("spec"), Seg::Key("gpusPerNode")],
        );
        format!("{how} for {gpus} of {per_node} GPUs ({chosen_by}); `=` for exact names")
    };
    ctx.decisions.record("hcas", &value, reason);
    Some(value)
}

/// Pool `hcas` must be plain, distinct device names, and not the management NIC.
pub fn check_pool_names(pool: &Loaded<PoolDocument>, findings: &mut Findings) {
    let hcas = &pool.value.spec.network.hcas;
    let management = pool.value.spec.network.management_device();
    // A set, not `hcas[..i].contains`: that was 71 % of `detect` over 100 000 GID
    // rows, and a pool may list 10 000 HCAs (issue 22, bench/RESULTS.md).
    let mut seen: HashSet<&str> = HashSet::with_capacity(hcas.len());
    for (i, name) in hcas.iter().enumerate() {
        let at = || {
            pool.doc.locate(&[
                Seg::Key("spec"),
                Seg::Key("network"),
                Seg::Key("hcas"),
                Seg::Index(i),
            ])
        };
        let plain = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
        if !plain {
            findings.at(
                Rule::HcaNamingConflict,
                format!("`{name}` is not a plain device name such as mlx5_1"),
                at(),
            );
        } else if !seen.insert(name.as_str()) {
            findings.at(
                Rule::HcaNamingConflict,
                format!("`{name}` is listed twice"),
                at(),
            );
        } else if *name == management {
            findings.at(
                Rule::HcaManagementNic,
                format!("`{name}` is the management NIC (set `managementNic` if these nodes use another one)"),
                at(),
            );
        }
    }
}

/// The annotation that tells `lint` the pool's management NIC, when the pool named one
/// other than mlx5_0 (`none` among them): without it RDG043 would doubt an NCCL_IB_HCA
/// that lists mlx5_0, a data NIC by the pool's word.
pub fn management_annotation(net: &NetworkSpec) -> Option<(&'static str, String)> {
    net.management_nic
        .as_deref()
        .filter(|nic| *nic != DEFAULT_MANAGEMENT_NIC)
        .map(|nic| (MANAGEMENT_NIC_ANNOTATION, nic.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nics(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("mlx5_{i}")).collect()
    }

    #[test]
    fn share_follows_the_cce_table() {
        let all = nics(8);
        assert_eq!(share(&all, 8, 8).len(), 8);
        assert_eq!(share(&all, 4, 8), &all[..4]);
        assert_eq!(share(&all, 1, 8), &all[..1]);
        let four = nics(4);
        assert_eq!(share(&four, 1, 8).len(), 1);
        assert_eq!(share(&four, 3, 8).len(), 2);
    }

    #[test]
    fn names_are_always_exact() {
        // Issue 11: `mlx5_1` alone would also select mlx5_10..mlx5_19 (e.g. a storage
        // NIC outside the pool), whether or not the pool lists them.
        let all = nics(12);
        assert_eq!(nccl_value(&all[..2]), "=mlx5_1,mlx5_2");
        let eight = nics(8);
        assert_eq!(nccl_value(&eight), format!("={}", eight.join(",")));
    }
}
