//! The RDMA user-space packages: sets per package family, version pins, which family
//! a base image uses, and reading `dpkg -l`. A leaf: used by the input model, the
//! Dockerfile writer, image checks and detect.
//!
//! apt names: seed 000 (AIStudio's custom-image list) and Debian bookworm's rdma-core
//! 44.0-2 source packages (ibverbs-utils, rdmacm-utils, ...), same names on Ubuntu.
//! dnf names: linux-rdma/rdma-core `redhat/rdma-core.spec` (v65.0) subpackages
//! rdma-core, libibverbs (carries the providers: libmlx5, ...), libibverbs-utils,
//! librdmacm, librdmacm-utils, libibumad, infiniband-diags; perftest and libnl3 are
//! separate distro packages.

pub mod base_image;
pub mod dpkg;
pub mod pins;

pub use pins::Pins;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How a base image installs packages.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    /// Debian, Ubuntu and images built on them (NGC, pytorch/pytorch): apt-get + dpkg.
    Apt,
    /// Rocky, Alma, CentOS Stream, RHEL/UBI, Fedora: dnf + rpm.
    Dnf,
}

/// Which packages to install.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum PackageSet {
    /// Exactly the eight packages AIStudio asks custom images to contain (seed 000).
    #[default]
    Seed,
    /// The minimum NCCL needs to use verbs: libraries and device providers.
    Runtime,
    /// Runtime plus the diagnostic tools (ibv_devinfo, ibstat, ib_write_bw, rping).
    Diagnostics,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Apt => "apt",
            Family::Dnf => "dnf",
        }
    }
}

impl PackageSet {
    pub fn name(self) -> &'static str {
        match self {
            PackageSet::Seed => "seed",
            PackageSet::Runtime => "runtime",
            PackageSet::Diagnostics => "diagnostics",
        }
    }
}

/// Seed 000, in its order. `--no-install-recommends` would drop ibverbs-providers (only
/// a Recommends of libibverbs1), so it is always listed explicitly.
const APT_SEED: &[&str] = &[
    "infiniband-diags",
    "perftest",
    "ibverbs-providers",
    "libibumad3",
    "libibverbs1",
    "libnl-3-200",
    "libnl-route-3-200",
    "librdmacm1",
];
const APT_RUNTIME: &[&str] = &[
    "ibverbs-providers",
    "libibverbs1",
    "librdmacm1",
    "libibumad3",
    "libnl-3-200",
    "libnl-route-3-200",
];
const APT_DIAGNOSTICS: &[&str] = &[
    "ibverbs-providers",
    "libibverbs1",
    "librdmacm1",
    "libibumad3",
    "libnl-3-200",
    "libnl-route-3-200",
    "ibverbs-utils",
    "rdmacm-utils",
    "infiniband-diags",
    "perftest",
];
/// The seed's list in rdma-core.spec names: providers live in libibverbs, both libnl
/// libraries in libnl3.
const DNF_SEED: &[&str] = &[
    "infiniband-diags",
    "perftest",
    "rdma-core",
    "libibumad",
    "libibverbs",
    "libnl3",
    "librdmacm",
];
const DNF_RUNTIME: &[&str] = &[
    "rdma-core",
    "libibverbs",
    "librdmacm",
    "libibumad",
    "libnl3",
];
const DNF_DIAGNOSTICS: &[&str] = &[
    "rdma-core",
    "libibverbs",
    "librdmacm",
    "libibumad",
    "libnl3",
    "libibverbs-utils",
    "librdmacm-utils",
    "infiniband-diags",
    "perftest",
];

pub fn packages(family: Family, set: PackageSet) -> &'static [&'static str] {
    match (family, set) {
        (Family::Apt, PackageSet::Seed) => APT_SEED,
        (Family::Apt, PackageSet::Runtime) => APT_RUNTIME,
        (Family::Apt, PackageSet::Diagnostics) => APT_DIAGNOSTICS,
        (Family::Dnf, PackageSet::Seed) => DNF_SEED,
        (Family::Dnf, PackageSet::Runtime) => DNF_RUNTIME,
        (Family::Dnf, PackageSet::Diagnostics) => DNF_DIAGNOSTICS,
    }
}

/// Every package name rdmagen may install for a family.
pub fn all(family: Family) -> Vec<&'static str> {
    let mut names: Vec<&str> = [
        PackageSet::Seed,
        PackageSet::Runtime,
        PackageSet::Diagnostics,
    ]
    .iter()
    .flat_map(|s| packages(family, *s).iter().copied())
    .collect();
    names.sort_unstable();
    names.dedup();
    names
}
