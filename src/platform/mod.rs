//! Platform profiles: what each platform injects by itself, and how it names RDMA
//! resources. The resolve step asks the profile; templates never do.

mod aistudio;
mod cce;
mod cubestudio;
mod generic;

use crate::spec::pool::{Fabric, Platform};

/// What rdmagen must know about a platform.
#[derive(Debug)]
pub struct Profile {
    pub name: &'static str,
    /// NCCL variables the platform sets itself for a fabric when RDMA is on; rdmagen
    /// leaves them out and warns when a job overrides them.
    pub presets: fn(Fabric, bool) -> &'static [&'static str],
    /// The RDMA extended resource when the pool does not name one.
    pub rdma_resource: fn(Fabric) -> &'static str,
    /// Debugging-section NCCL variables the platform itself recommends setting.
    pub recommends: &'static [&'static str],
    /// Why these presets and names: the fact and its source, printed by `--explain`.
    pub source: &'static str,
}

pub fn profile(platform: Platform) -> &'static Profile {
    match platform {
        Platform::Generic => &generic::PROFILE,
        Platform::Aistudio => &aistudio::PROFILE,
        Platform::Cubestudio => &cubestudio::PROFILE,
        Platform::Cce => &cce::PROFILE,
    }
}

/// CubeStudio's RDMA_RESOURCE map (myapp/config.py, quoted in seed 001):
/// ib → rdma/hca, roce → rdma/shared.
fn cubestudio_resource(fabric: Fabric) -> &'static str {
    match fabric {
        Fabric::Roce => "rdma/shared",
        Fabric::Ib | Fabric::Tcp => "rdma/hca",
    }
}

fn no_presets(_: Fabric, _: bool) -> &'static [&'static str] {
    &[]
}

impl Profile {
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
        assert_eq!(
            (profile(Platform::Cubestudio).rdma_resource)(Fabric::Roce),
            "rdma/shared"
        );
    }
}
