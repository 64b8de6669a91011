//! A node's GPU↔NIC topology, as `rdmagen detect` reads it from `nvidia-smi topo -m`
//! and writes it into a Pool. It records what the node showed; no decision reads it
//! yet (which GPUs a device plugin gives a pod on part of a node is not known here).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What `nvidia-smi topo -m`, `nvidia-smi -L` and `lsmod` showed on one of the pool's
/// nodes.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NodeTopology {
    /// The data NICs in rail order (ordered by the GPUs they serve, GPU0's first), each
    /// with its nearest GPUs and the link to them.
    #[serde(default)]
    pub nics: Vec<NicAffinity>,
    /// Whether `nvidia_peermem` (GPUDirect RDMA's kernel module) was loaded; unset when
    /// no module list was captured.
    #[serde(default)]
    pub nvidia_peermem: Option<bool>,
}

/// One data NIC and the GPUs nearest it.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NicAffinity {
    /// The RDMA device, e.g. mlx5_0.
    pub name: String,
    /// The NIC's best link to any GPU, as nvidia-smi names it.
    pub link: TopoLink,
    /// The GPUs (nvidia-smi's indices) at that link.
    pub gpus: Vec<u32>,
}

/// A link in `nvidia-smi topo -m`, nearest first: NVLink, then PCIe through at most
/// one bridge (PIX), several bridges (PXB), a host bridge (PHB), across host bridges
/// of one NUMA node (NODE), across NUMA nodes (SYS; `SOC` in old releases). The
/// legend nvidia-smi prints below the matrix gives these meanings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TopoLink {
    /// A bonded set of N NVLinks (`NV12`).
    Nv(u32),
    Pix,
    Pxb,
    Phb,
    Node,
    Sys,
}

impl TopoLink {
    pub fn parse(text: &str) -> Option<TopoLink> {
        Some(match text {
            "PIX" => TopoLink::Pix,
            "PXB" => TopoLink::Pxb,
            "PHB" => TopoLink::Phb,
            "NODE" => TopoLink::Node,
            "SYS" | "SOC" => TopoLink::Sys,
            _ => {
                let n = text.strip_prefix("NV")?;
                if n.is_empty() || n.len() > 3 || !n.chars().all(|c| c.is_ascii_digit()) {
                    return None;
                }
                TopoLink::Nv(n.parse().ok()?)
            }
        })
    }

    /// NODE or SYS: the path leaves the PCIe tree the GPU is on (through the CPU's
    /// interconnect), where GPUDirect RDMA is slow or off: NCCL_NET_GDR_LEVEL's default
    /// stops short of such paths (NCCL env docs).
    pub fn far(self) -> bool {
        matches!(self, TopoLink::Node | TopoLink::Sys)
    }

    pub fn name(self) -> String {
        match self {
            TopoLink::Nv(n) => format!("NV{n}"),
            TopoLink::Pix => "PIX".to_owned(),
            TopoLink::Pxb => "PXB".to_owned(),
            TopoLink::Phb => "PHB".to_owned(),
            TopoLink::Node => "NODE".to_owned(),
            TopoLink::Sys => "SYS".to_owned(),
        }
    }
}

impl Serialize for TopoLink {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for TopoLink {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        TopoLink::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "invalid link `{text}`: expected PIX, PXB, PHB, NODE, SYS or NV<n>, as nvidia-smi topo -m writes them"
            ))
        })
    }
}

impl JsonSchema for TopoLink {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "TopoLink".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A link as nvidia-smi topo -m names it: NV<n> (NVLink), PIX, PXB, PHB, NODE or SYS.",
            "type": "string",
            "pattern": "^(PIX|PXB|PHB|NODE|SYS|NV[0-9]{1,3})$"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_parse_and_order_nearest_first() {
        let links: Vec<TopoLink> = ["NV18", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC"]
            .iter()
            .map(|t| TopoLink::parse(t).unwrap())
            .collect();
        assert!(links.windows(2).all(|w| w[0] <= w[1]), "{links:?}");
        assert_eq!(links[6], TopoLink::Sys, "SOC is old nvidia-smi's SYS");
        for bad in ["NV", "NVx", "NV12345", "pix", "X", ""] {
            assert_eq!(TopoLink::parse(bad), None, "{bad}");
        }
        assert!(TopoLink::Node.far() && TopoLink::Sys.far() && !TopoLink::Phb.far());
    }
}
