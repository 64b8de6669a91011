//! Platform profiles: what each platform injects by itself, how it names RDMA
//! resources, when it turns RDMA on, and what it runs when the pool does not say. The
//! resolve step asks the profile; templates never do.

mod aistudio;
mod aks;
pub mod attachment;
mod cce;
mod cubestudio;
mod generic;
mod oci;
mod vocabulary;

pub use attachment::Attachment;
pub use vocabulary::{DEFAULT_MANAGEMENT_NIC, Fabric, PartialNodeHcas, Platform};

use crate::version::Version;

/// What rdmagen must know about a platform.
#[derive(Debug)]
pub struct Profile {
    pub name: &'static str,
    /// How the platform writes its own name, for messages about its conventions.
    pub title: &'static str,
    /// NCCL variables the platform sets itself for a fabric when RDMA is on; rdmagen
    /// leaves them out and warns when a job overrides them.
    pub presets: fn(Fabric, bool) -> &'static [&'static str],
    /// The RDMA extended resource for `on`/`auto`/a plain count, when the pool names none.
    pub rdma_resource: fn(Fabric) -> &'static str,
    /// The RDMA extended resource for CubeStudio's typed `N(roce)` / `N(ib)`.
    pub typed_rdma_resource: fn(Fabric) -> &'static str,
    /// When `rdma: auto` turns RDMA on (on an RDMA fabric, for more than one node).
    pub auto_rdma: AutoRdma,
    /// Whether the platform owns the fabric's QoS (traffic class, service level): then
    /// NCCL_IB_TC / NCCL_IB_SL are not the user's to set.
    pub owns_qos: bool,
    /// Whether the platform injects variables into PID 1 only (children started through
    /// a shell may not inherit them).
    pub injects_into_pid1: bool,
    /// NCCL_SOCKET_IFNAME when the pool does not name one, and why.
    pub socket_ifname: Option<(&'static str, &'static str)>,
    /// Netdevs every host of the platform is documented to have, so that a pod on the
    /// host's network may name them (OCI's GPU shapes bootstrap on the host's `eth0`).
    /// Empty: unknown, and only the pool's `hostInterfaces` says.
    pub host_interfaces: &'static [&'static str],
    /// The shared device plugin's resource on this platform, and why, where it is not
    /// the Network Operator's example name (`attachment: shared`, `ipoib`).
    pub shared_resource: Option<(&'static str, &'static str)>,
    /// Why rails may name no Multus network on InfiniBand, where the platform documents
    /// that its device plugin's devices reach the pod without one.
    pub rails_without_networks: Option<&'static str>,
    /// The node label that names a node's machine shape, read from the pool's
    /// `jobDefaults.nodeSelector` to find its [`Shape`].
    pub shape_label: Option<&'static str>,
    /// NCCL values the platform documents per machine shape.
    pub shapes: &'static [Shape],
    /// Data NICs of a job on part of a node, when the pool does not say.
    pub partial_node_hcas: PartialNodeHcas,
    /// The training-operator version the platform installs, and the source, when known.
    pub operator: Option<(Version, &'static str)>,
    /// Debugging-section NCCL variables the platform itself recommends setting.
    pub recommends: &'static [&'static str],
    /// Why these presets and names: the fact and its source, printed by `--explain`.
    pub source: &'static str,
}

/// A machine shape and the NCCL values its platform documents for it.
#[derive(Debug)]
pub struct Shape {
    pub name: &'static str,
    /// Variable and value, as the platform writes them.
    pub nccl: &'static [(&'static str, &'static str)],
}

impl Shape {
    /// The value the shape gives `variable`, if any.
    pub fn value(&self, variable: &str) -> Option<&'static str> {
        self.nccl
            .iter()
            .find(|(name, _)| *name == variable)
            .map(|(_, value)| *value)
    }
}

/// When `rdma: auto` means on. A single node never gets RDMA from `auto` (seed 001: RDMA
/// training needs at least 2 nodes; NCCL does not use the NIC inside one node).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AutoRdma {
    /// On for every multi-node job.
    MultiNode,
    /// On from 8 GPUs per pod, off below (AIStudio), or from a whole node where a
    /// node has fewer: [`AutoRdma::on_from`].
    WholeNodes,
}

/// The GPUs per pod from which AIStudio turns RDMA on. Seed 000: "RDMA 配置在规格为
/// 8 卡时自动开启、小于 8 卡时自动关闭" (on automatically for an 8-GPU spec, off below
/// 8) and "RoCE 网络下使用小于 8 卡规格时若开启 RDMA 配置，可能会造成通信问题" (RDMA on
/// below 8 GPUs over RoCE may cause communication problems). The spec is the job's,
/// not the node's: an 8-GPU job on a 16-GPU node gets RDMA.
pub const WHOLE_NODE_RDMA_GPUS: u32 = 8;

impl AutoRdma {
    /// The GPUs per pod from which `rdma: auto` turns RDMA on, on nodes of `per_node`
    /// GPUs: 8 on AIStudio (seed 000), a whole node where a node has fewer than 8 (the
    /// seed's specs stop at 8; rdmagen's decision for smaller nodes); 1 for MultiNode.
    pub fn on_from(self, per_node: u32) -> u32 {
        match self {
            AutoRdma::MultiNode => 1,
            AutoRdma::WholeNodes => per_node.min(WHOLE_NODE_RDMA_GPUS),
        }
    }
}

pub fn profile(platform: Platform) -> &'static Profile {
    match platform {
        Platform::Generic => &generic::PROFILE,
        Platform::Aistudio => &aistudio::PROFILE,
        Platform::Cubestudio => &cubestudio::PROFILE,
        Platform::Cce => &cce::PROFILE,
        Platform::Aks => &aks::PROFILE,
        Platform::Oci => &oci::PROFILE,
    }
}

/// CubeStudio's RDMA_RESOURCE map as seed 001 describes it (admin-configured in
/// myapp/config.py; the public code ships none): ib → rdma/hca, roce → rdma/shared.
fn by_fabric(fabric: Fabric) -> &'static str {
    match fabric {
        Fabric::Roce => "rdma/shared",
        Fabric::Ib | Fabric::Tcp => "rdma/hca",
    }
}

fn always_hca(_: Fabric) -> &'static str {
    "rdma/hca"
}

/// The platform and machine shape that document `value` as their exact NCCL_IB_HCA
/// list, if one does.
pub fn documented_hca_list(value: &str) -> Option<(&'static Profile, &'static Shape)> {
    let platforms = <Platform as clap::ValueEnum>::value_variants();
    platforms.iter().map(|p| profile(*p)).find_map(|p| {
        let shape = p
            .shapes
            .iter()
            .find(|s| s.value("NCCL_IB_HCA") == Some(value))?;
        Some((p, shape))
    })
}

/// Device-plugin resources that hand out RDMA devices: rdma/* (shared and legacy
/// plugins), SR-IOV pools with `rdma` in the name, NVIDIA's hostdev pool.
pub fn is_rdma_resource(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with("rdma/") || lower.contains("rdma") || lower == "nvidia.com/hostdev"
}

fn no_presets(_: Fabric, _: bool) -> &'static [&'static str] {
    &[]
}

impl Profile {
    /// The shape the nodes `node_selector` picks have, when the platform documents
    /// values for it: None without a shape label, or for a shape it does not list.
    pub fn shape<'a>(
        &self,
        mut node_selector: impl Iterator<Item = (&'a str, &'a str)>,
    ) -> Option<&'static Shape> {
        let label = self.shape_label?;
        let (_, name) = node_selector.find(|(key, _)| *key == label)?;
        self.shapes.iter().find(|s| s.name == name)
    }

    pub fn presets_for(&self, fabric: Fabric, rdma_on: bool) -> &'static [&'static str] {
        (self.presets)(fabric, rdma_on)
    }

    pub fn presets(&self, fabric: Fabric, rdma_on: bool, name: &str) -> bool {
        self.presets_for(fabric, rdma_on).contains(&name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rdma_resources() {
        assert!(is_rdma_resource("rdma/hca"));
        assert!(is_rdma_resource("rdma/rdma_shared_device_a"));
        assert!(is_rdma_resource("nvidia.com/hostdev"));
        assert!(is_rdma_resource("mellanox.com/mlnx_rdma"));
        assert!(!is_rdma_resource("nvidia.com/gpu"));
    }

    #[test]
    fn presets_follow_the_seeds() {
        let ai = profile(Platform::Aistudio);
        assert!(ai.presets(Fabric::Roce, true, "NCCL_IB_HCA"));
        assert!(!ai.presets(Fabric::Roce, true, "NCCL_SOCKET_IFNAME"));
        assert!(!ai.presets(Fabric::Ib, true, "NCCL_IB_HCA"));
        let cce = profile(Platform::Cce);
        assert!(cce.presets(Fabric::Roce, true, "NCCL_IB_QPS_PER_CONNECTION"));
        assert!(!cce.presets(Fabric::Roce, false, "NCCL_SOCKET_IFNAME"));
        assert!(
            profile(Platform::Generic)
                .presets_for(Fabric::Roce, true)
                .is_empty()
        );
        let cube = profile(Platform::Cubestudio);
        assert_eq!((cube.typed_rdma_resource)(Fabric::Roce), "rdma/shared");
        assert_eq!((cube.rdma_resource)(Fabric::Roce), "rdma/hca");
        assert!(cube.operator.is_some_and(|(v, _)| v < Version::new(1, 7)));
        assert!(ai.owns_qos && !cube.owns_qos);
    }
}
