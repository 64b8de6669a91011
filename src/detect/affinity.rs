//! What the topology captures mean for the pool: each data NIC's nearest GPUs, the
//! rail order, the GPUs, nvidia_peermem and the line rate, and the findings about
//! them (RDG210-RDG212). detect's decisions about topology are made here.

use std::collections::BTreeMap;

use crate::detect::topology::{Matrix, NicColumn};
use crate::detect::{Observations, natural_key};
use crate::diagnostics::source::Location;
use crate::diagnostics::{Findings, Rule};
use crate::model::pool::Fabric;
use crate::model::topology::{NicAffinity, TopoLink};

/// The kernel modules that give GPUDirect RDMA: nvidia_peermem (driver 470 and later)
/// and nv_peer_mem (Mellanox's older module). The GPU Operator loads the first with
/// `driver.rdma.enabled=true`.
const PEERMEM_MODULES: &[&str] = &["nvidia_peermem", "nv_peer_mem"];

/// The GPU driver's own module: a node whose list lacks it is no GPU node (or the
/// list is a container's view), and GPUDirect is not expected of it.
const GPU_DRIVER_MODULE: &str = "nvidia";

/// The matrix read against the data NICs.
#[derive(Debug, Clone)]
pub struct Affinity {
    /// The judged NICs in rail order, each with its nearest GPUs.
    pub nics: Vec<NicAffinity>,
    /// Each judged NIC's GPUs: those whose best link to any judged NIC is to this one.
    pub served: BTreeMap<String, Vec<u32>>,
    /// The GPUs the header names, and how many rows were read whole.
    pub gpus: usize,
    pub rows: usize,
    /// Whether the matrix's names were matched to the data NICs; false when no RDMA
    /// capture names them (then every NIC of the matrix is judged).
    pub matched: bool,
}

impl Affinity {
    /// Every GPU the header names has a row.
    pub fn complete(&self) -> bool {
        self.rows == self.gpus
    }
}

/// The affinity of the data NICs (`data`), or of every NIC in the matrix when `data`
/// is None or names none of them.
pub fn map(matrix: &Matrix, data: Option<&[String]>) -> Affinity {
    let all = matrix.nics();
    let in_data = |n: &NicColumn| data.is_some_and(|d| d.contains(&n.name));
    let matched = all.iter().any(in_data);
    let judged: Vec<&NicColumn> = all.iter().filter(|n| !matched || in_data(n)).collect();

    let link =
        |cells: &[Option<TopoLink>], nic: &NicColumn| cells.get(nic.index).copied().flatten();
    let mut nics: Vec<NicAffinity> = judged
        .iter()
        .filter_map(|nic| {
            let links: Vec<(TopoLink, u32)> = matrix
                .gpu_rows
                .iter()
                .filter_map(|(g, (cells, _))| link(cells, nic).map(|l| (l, *g)))
                .collect();
            let best = links.iter().map(|(l, _)| *l).min()?;
            Some(NicAffinity {
                name: nic.name.clone(),
                link: best,
                gpus: links
                    .iter()
                    .filter(|(l, _)| *l == best)
                    .map(|(_, g)| *g)
                    .collect(),
            })
        })
        .collect();

    let mut served: BTreeMap<String, Vec<u32>> =
        nics.iter().map(|n| (n.name.clone(), Vec::new())).collect();
    for (g, (cells, _)) in &matrix.gpu_rows {
        let links: Vec<(TopoLink, &str)> = judged
            .iter()
            .filter_map(|nic| link(cells, nic).map(|l| (l, nic.name.as_str())))
            .collect();
        if let Some(best) = links.iter().map(|(l, _)| *l).min() {
            for (_, name) in links.iter().filter(|(l, _)| *l == best) {
                served.entry((*name).to_owned()).or_default().push(*g);
            }
        }
    }
    // Rail order: the NIC that serves GPU0 first, then GPU1's, ...; NICs that serve no
    // GPU last, far ones after near ones. A pod on part of a node that takes the first
    // rails then takes the NICs of the lowest GPUs.
    nics.sort_by_key(|n| {
        let first = served
            .get(&n.name)
            .and_then(|g| g.first().copied())
            .unwrap_or(u32::MAX);
        (first, n.link.far(), natural_key(&n.name), n.name.clone())
    });
    Affinity {
        nics,
        served,
        gpus: matrix.gpu_count(),
        rows: matrix.gpu_rows.len(),
        matched,
    }
}

fn gpu_list(gpus: &[u32]) -> String {
    gpus.iter()
        .map(|g| format!("GPU{g}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a finding about one NIC points: its line in the NIC legend, else the header.
fn nic_at(matrix: &Matrix, name: &str) -> Location {
    matrix
        .legend
        .values()
        .find(|(device, _)| device == name)
        .map_or_else(|| matrix.at.clone(), |(_, at)| at.clone())
}

/// RDG210 (a NIC far from every GPU) and RDG211 (GPUs share the NICs unevenly), on a
/// matrix with a row for every GPU.
pub fn judge(
    matrix: &Matrix,
    affinity: &Affinity,
    notes: &mut Vec<String>,
    findings: &mut Findings,
) {
    if !affinity.complete() {
        notes.push(format!(
            "nvidia-smi topo -m: rows of {} of its {} GPUs read; no NIC is judged far or shared unevenly on part of a matrix (a NIC far from these GPUs may serve the others)",
            affinity.rows, affinity.gpus
        ));
    }
    if !affinity.matched {
        notes.push(
            "nvidia-smi topo -m: no RDMA capture names its NICs, so every NIC of the matrix is judged (the management NIC too)"
                .to_owned(),
        );
    }
    if !affinity.complete() {
        return;
    }
    for nic in affinity.nics.iter().filter(|n| n.link.far()) {
        findings.at(
            Rule::TopoFarNic,
            format!(
                "{} is far from every GPU: its nearest link is {} (to {}), which crosses the CPU's interconnect, so GPUDirect RDMA through it is slow or off and its GPUs' traffic is staged through host memory; if it is not meant for training (storage, management), keep it out of hcas",
                nic.name,
                nic.link.name(),
                gpu_list(&nic.gpus)
            ),
            nic_at(matrix, &nic.name),
        );
    }
    // Far NICs are reported above; among the others, each should serve as many GPUs.
    let near: Vec<(&str, usize)> = affinity
        .nics
        .iter()
        .filter(|n| !n.link.far())
        .map(|n| {
            (
                n.name.as_str(),
                affinity.served.get(&n.name).map_or(0, Vec::len),
            )
        })
        .collect();
    let most = near.iter().map(|(_, c)| *c).max().unwrap_or(0);
    let least = near.iter().map(|(_, c)| *c).min().unwrap_or(0);
    if most != least {
        let shares: Vec<String> = near
            .iter()
            .map(|(name, _)| {
                let gpus = affinity.served.get(*name).map_or(&[][..], Vec::as_slice);
                if gpus.is_empty() {
                    format!("{name}: none")
                } else {
                    format!("{name}: {}", gpu_list(gpus))
                }
            })
            .collect();
        findings.at(
            Rule::TopoUnevenNics,
            format!(
                "the GPUs share the data NICs unevenly ({}): a NIC nearest to {most} GPUs gives each of them 1/{most} of its rate while others give theirs 1/{}, and collectives run at the pace of the busiest NIC",
                shares.join("; "),
                least.max(1)
            ),
            matrix.at.clone(),
        );
    }
}

/// Whether nvidia_peermem is loaded, when a module list was captured; RDG212 when it
/// is not and GPUDirect RDMA is expected: an RDMA fabric on a node whose GPU driver is
/// loaded.
pub fn peermem(obs: &Observations, fabric: Fabric, findings: &mut Findings) -> Option<bool> {
    let modules = obs.modules.as_ref()?;
    let loaded = PEERMEM_MODULES.iter().any(|m| modules.contains_key(*m));
    if !loaded
        && fabric != Fabric::Tcp
        && let Some(at) = modules.get(GPU_DRIVER_MODULE)
    {
        findings.at(
            Rule::PeermemMissing,
            "the nvidia driver is loaded but nvidia_peermem is not: the NIC cannot read or write GPU memory, so NCCL stages every transfer through host memory (about 2/3 of the bandwidth). Load it (`modprobe nvidia_peermem`; the GPU Operator: driver.rdma.enabled=true), or check that the images' NCCL uses dma-buf, which no module list shows",
            at.clone(),
        );
    }
    Some(loaded)
}

/// The GPUs `nvidia-smi -L` lists (else plain `nvidia-smi`'s table): how many, their
/// model when they agree, and which listed them.
pub fn gpus(
    obs: &Observations,
    notes: &mut Vec<String>,
) -> Option<(u32, Option<String>, &'static str)> {
    if obs.gpus.is_empty() {
        return table_gpus(obs, notes);
    }
    let first = obs.gpus.first()?;
    let mut indices: Vec<u32> = obs.gpus.iter().map(|(i, _, _)| *i).collect();
    indices.sort_unstable();
    indices.dedup();
    let count = u32::try_from(indices.len()).unwrap_or(u32::MAX);
    let same = obs.gpus.iter().all(|(_, m, _)| *m == first.1);
    if !same {
        notes
            .push("nvidia-smi -L lists GPUs of more than one model: gpu.model left out".to_owned());
    }
    Some((count, same.then(|| first.1.clone()), "nvidia-smi -L"))
}

/// The GPUs of plain `nvidia-smi`'s table, when no `nvidia-smi -L` was captured.
fn table_gpus(
    obs: &Observations,
    notes: &mut Vec<String>,
) -> Option<(u32, Option<String>, &'static str)> {
    let (_, first, _) = obs.gpu_table.first()?;
    let mut indices: Vec<u32> = obs.gpu_table.iter().map(|(i, _, _)| *i).collect();
    indices.sort_unstable();
    indices.dedup();
    let count = u32::try_from(indices.len()).unwrap_or(u32::MAX);
    let model = if obs.gpu_table.iter().any(|(_, m, _)| m.is_none()) {
        notes.push("nvidia-smi cuts the GPU name to fit its table (`...`): gpu.model left out (capture nvidia-smi -L for the whole name)".to_owned());
        None
    } else if obs.gpu_table.iter().any(|(_, m, _)| m != first) {
        notes.push("nvidia-smi lists GPUs of more than one model: gpu.model left out".to_owned());
        None
    } else {
        first.clone()
    };
    Some((count, model, "nvidia-smi"))
}

/// The pool's line-rate label (`IB 4*200G`), the field nccl-log's calibration reads
/// (nccl_log/rate.rs `nics`), from the data NICs' ports' rates (ibstat's `Rate:`,
/// sysfs' `rate`, or ibv_devinfo -v's width x speed), when each has one and they
/// agree; and what the rates were read from.
pub fn line_rate_label(
    obs: &Observations,
    fabric: Fabric,
    data: &[String],
    notes: &mut Vec<String>,
) -> Option<(String, Vec<&'static str>)> {
    let mut rates: Vec<u32> = Vec::new();
    let mut from: Vec<&'static str> = Vec::new();
    for name in data {
        let port_rates: Vec<(u32, &'static str)> = obs
            .ports
            .iter()
            .filter(|((d, _), _)| d == name)
            .filter_map(|(_, p)| p.rate.as_ref().map(|(r, _)| (*r, p.rate_from)))
            .collect();
        let (rate, source) = port_rates.first().copied()?;
        rates.push(rate);
        if !from.contains(&source) {
            from.push(source);
        }
    }
    let first = *rates.first()?;
    if rates.iter().any(|r| *r != first) {
        notes.push("the data NICs' port rates differ: no network.label".to_owned());
        return None;
    }
    let fabric = match fabric {
        Fabric::Ib => "IB",
        Fabric::Roce => "RoCE",
        Fabric::Tcp => return None,
    };
    Some((format!("{fabric} {}*{first}G", data.len()), from))
}
