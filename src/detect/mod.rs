//! Diagnostics: read what a node says (`show_gids`, `ibstat`, `ibv_devinfo`,
//! `rdma link show`, `ibdev2netdev`, a `physfn` listing, `ofed_info -s`, `dpkg -l`,
//! `nvidia-smi topo -m`, `nvidia-smi -L`, `nvidia-smi`, `lsmod`) and decide a Pool from it.
//!
//! Formats: reference/rdma-nccl.md §2 and the samples in reference/diag-samples/.
//! Parsers accept tabs or spaces, blank lines, trailers, several ports per device and
//! truncated output; a line they cannot read is reported with its number, never a
//! panic.

pub mod affinity;
pub mod capture;
pub mod commands;
pub mod decide;
mod device;
pub mod gid;
mod gid_index;
pub mod topology;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diagnostics::escape::MAX_QUOTED_TEXT;
use crate::diagnostics::source::Location;

/// What the link layer of a port says about the fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkLayer {
    Ethernet,
    InfiniBand,
}

/// One port of one RDMA device, merged from every capture that mentions it.
#[derive(Debug, Clone, Default)]
pub struct Port {
    pub link_layer: Option<(LinkLayer, Location)>,
    /// `Active`, `Down`, `Initializing`, ... (ibstat spelling; others are mapped).
    pub state: Option<(String, Location)>,
    /// `LinkUp`, `Disabled`, `Polling`, ...
    pub physical: Option<(String, Location)>,
    pub base_lid: Option<u32>,
    pub sm_lid: Option<u32>,
    /// The port's netdev and the line that named it (`rdma link`, `ibdev2netdev`, or
    /// show_gids' DEV column).
    pub netdev: Option<(String, Location)>,
    /// The port's line rate in Gb/s and where it was read: ibstat's `Rate:`, sysfs'
    /// `ports/N/rate`, or ibv_devinfo -v's `active_width` x `active_speed`; the first
    /// read stands (they are the same kernel value).
    pub rate: Option<(u32, Location)>,
    /// Which of those the rate was read from (`ibstat's Rate`, ...).
    pub rate_from: &'static str,
    /// ibv_devinfo -v's `active_width` (lanes: 1, 2, 4, 8, 12), until its
    /// `active_speed` (per lane) gives the rate.
    pub width: Option<u32>,
}

/// One row of a GID table.
#[derive(Debug, Clone)]
pub struct GidRow {
    pub device: String,
    pub port: u32,
    pub index: u32,
    pub gid: String,
    /// RoCE version (1 or 2) when the capture says.
    pub version: Option<u8>,
    pub netdev: Option<String>,
    pub at: Location,
}

/// Everything read from the captures.
#[derive(Debug, Default)]
pub struct Observations {
    pub ports: BTreeMap<(String, u32), Port>,
    pub gids: Vec<GidRow>,
    pub ofed: Option<String>,
    /// Package → (dpkg status such as `ii`, where).
    pub dpkg: Option<BTreeMap<String, (String, Location)>>,
    /// Device → whether it is an SR-IOV VF, from a listing of
    /// `/sys/class/infiniband/<dev>/device/physfn` (a VF has the link, a PF has none),
    /// and where the listing said so.
    pub physfn: BTreeMap<String, (bool, Location)>,
    /// `nvidia-smi topo -m`: the GPU↔NIC matrix.
    pub topology: Option<topology::Matrix>,
    /// `nvidia-smi -L`: each GPU's index, model and line.
    pub gpus: Vec<(u32, String, Location)>,
    /// Plain `nvidia-smi`'s table: each GPU's index, its model unless the table cut
    /// the name, and its line.
    pub gpu_table: Vec<(u32, Option<String>, Location)>,
    /// `lsmod` or `/proc/modules`: the loaded kernel modules, when a list was captured.
    pub modules: Option<BTreeMap<String, Location>>,
    /// Lines that could not be read.
    pub unreadable: Vec<(Location, String)>,
    /// Lines read in part, with why the rest could not be (the location names the
    /// column): a matrix cell nvidia-smi does not write, a row cut short.
    pub damaged: Vec<(Location, String)>,
    /// Where each capture file starts, for findings about a whole file.
    pub files: Vec<Arc<str>>,
}

impl Observations {
    /// Notes line `text` at `at` as one detect did not understand, its first
    /// [`MAX_QUOTED_TEXT`] characters kept for the message.
    pub fn unreadable(&mut self, at: Location, text: &str) {
        self.unreadable
            .push((at, text.chars().take(MAX_QUOTED_TEXT).collect()));
    }

    pub fn port(&mut self, device: &str, port: u32) -> &mut Port {
        self.ports.entry((device.to_owned(), port)).or_default()
    }
}

/// `mlx5_2` before `mlx5_10`: compare the text before trailing digits, then the number.
pub fn natural_key(name: &str) -> (String, u64) {
    let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (stem, number) = name.split_at(name.len() - digits);
    (stem.to_owned(), number.parse().unwrap_or(0))
}
