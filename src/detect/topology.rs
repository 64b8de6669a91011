//! Read `nvidia-smi topo -m` (the GPU↔NIC matrix and its NIC legend), `nvidia-smi -L`
//! and plain `nvidia-smi` (the GPUs) and `lsmod` or `/proc/modules` (the loaded kernel modules).
//!
//! The matrix's header names its columns: `GPU0 .. GPUn`, then the NICs, as `NIC0 ..`
//! with a `NIC Legend:` block below that maps them to RDMA devices (`NIC0: mlx5_0`;
//! nvidia-smi from driver 510 or so), or as the devices themselves (`mlx5_0`, older
//! releases), then `CPU Affinity`, `NUMA Affinity` and `GPU NUMA ID`. Each row starts
//! with a column's name and has one cell per column: `X` on the diagonal, else a link
//! (model/topology.rs). A row cut short or a cell nvidia-smi does not write is reported
//! at its column and the row left out.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::detect::Observations;
use crate::diagnostics::escape::shown;
use crate::diagnostics::source::Location;
use crate::model::topology::TopoLink;

/// The most columns a matrix may have: 8 GPUs with 76 NICs is the largest in the
/// public captures (vllm-project/vllm#14537, whose nvidia-smi shows 56 of them); a
/// header wider than this is damage, and reading it would only cost time.
pub const MAX_COLUMNS: usize = 1024;

/// The matrix, as read.
#[derive(Debug, Clone)]
pub struct Matrix {
    /// The device columns in header order (`GPU0`, `NIC0`, `mlx5_0`).
    pub columns: Vec<String>,
    /// Each GPU row that was read whole: its index, its cells (None on the diagonal),
    /// and its line.
    pub gpu_rows: BTreeMap<u32, (Vec<Option<TopoLink>>, Location)>,
    /// `NIC Legend:`: `NIC0` → (`mlx5_0`, line).
    pub legend: BTreeMap<String, (String, Location)>,
    /// The header's line.
    pub at: Location,
}

/// A NIC column of the matrix and the RDMA device it stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NicColumn {
    pub index: usize,
    /// The legend's device for `NICn`; the column's own name in older outputs, and when
    /// no legend was captured.
    pub name: String,
}

impl Matrix {
    /// How many GPUs the header names.
    pub fn gpu_count(&self) -> usize {
        self.columns
            .iter()
            .filter(|c| gpu_index(c).is_some())
            .count()
    }

    pub fn nics(&self) -> Vec<NicColumn> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| gpu_index(c).is_none())
            .map(|(index, c)| NicColumn {
                index,
                name: self
                    .legend
                    .get(c)
                    .map_or_else(|| c.clone(), |(n, _)| n.clone()),
            })
            .collect()
    }
}

/// `GPU12` → 12.
fn gpu_index(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("GPU")?;
    (!digits.is_empty() && digits.len() <= 4 && digits.chars().all(|c| c.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// A device column: a GPU, `NICn`, or an RDMA device's name (`mlx5_0`, `mlx4_0`).
fn device_column(word: &str) -> bool {
    gpu_index(word).is_some()
        || (word.len() <= 64
            && word.starts_with(|c: char| c.is_ascii_alphabetic())
            && word.chars().any(|c| c.is_ascii_digit())
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
}

/// Terminals get nvidia-smi's header underlined (`ESC[4m`); a capture piped through
/// `script` or copied from a terminal keeps the escapes. They carry nothing.
fn without_escapes(line: &str) -> Cow<'_, str> {
    if !line.contains('\u{1b}') {
        return Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ parameters, then one final letter.
            if chars.clone().next() == Some('[') {
                chars.next();
                for f in chars.by_ref() {
                    if f.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    Cow::Owned(out)
}

/// The words of a line with the column (1-based, in characters) each starts at.
fn words(line: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut column = 0;
    let mut start: Option<(usize, usize)> = None;
    let mut out = Vec::new();
    for (byte, c) in line.char_indices() {
        column += 1;
        match (c.is_whitespace(), start) {
            (false, None) => start = Some((byte, column)),
            (true, Some((b, col))) => {
                out.push((col, &line[b..byte]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some((b, col)) = start {
        out.push((col, &line[b..]));
    }
    out.into_iter()
}

fn at_column(at: &Location, column: usize) -> Location {
    Location {
        column,
        ..at.clone()
    }
}

/// Whether the line is a matrix's header: `Some(true)` when read (the matrix starts),
/// `Some(false)` when it is too wide to read (reported), None when it is no header. A
/// header starts with `GPU0` and names only devices until `CPU Affinity` (or the
/// line's end).
pub fn header(obs: &mut Observations, line: &str, at: &Location) -> Option<bool> {
    let line = without_escapes(line);
    let mut columns = Vec::new();
    for (i, (column, word)) in words(&line).enumerate() {
        if i == 0 && word != "GPU0" {
            return None;
        }
        if word == "CPU" || word == "NUMA" {
            break;
        }
        if !device_column(word) {
            return None;
        }
        if columns.len() == MAX_COLUMNS {
            obs.damaged.push((
                at_column(at, column),
                format!(
                    "a topology matrix of more than {MAX_COLUMNS} devices; not read (nvidia-smi topo -m shows at most a few dozen)"
                ),
            ));
            return Some(false);
        }
        columns.push(word.to_owned());
    }
    // One GPU alone has no pairs to show; nvidia-smi prints no matrix then.
    if columns.len() < 2 {
        return None;
    }
    obs.topology = Some(Matrix {
        columns,
        gpu_rows: BTreeMap::new(),
        legend: BTreeMap::new(),
        at: at.clone(),
    });
    Some(true)
}

/// A row of the matrix. False when the line is no row (its first word names no
/// column); a row with a bad cell is read (true) but left out, and reported.
pub fn row(obs: &mut Observations, line: &str, at: &Location) -> bool {
    let line = without_escapes(line);
    let Some(matrix) = obs.topology.as_mut() else {
        return false;
    };
    let mut all = words(&line);
    let Some((_, name)) = all.next() else {
        return false;
    };
    if !matrix.columns.iter().any(|c| c == name) {
        return false;
    }
    let mut cells = Vec::with_capacity(matrix.columns.len());
    let mut last_column = 1;
    for (i, column_name) in matrix.columns.iter().enumerate() {
        let Some((column, word)) = all.next() else {
            obs.damaged.push((
                at_column(at, last_column),
                format!(
                    "row {name} of nvidia-smi topo -m has {i} of {} cells (cut short?); left out",
                    matrix.columns.len()
                ),
            ));
            return true;
        };
        last_column = column + word.chars().count();
        if word == "X" {
            cells.push(None);
            continue;
        }
        match TopoLink::parse(word) {
            Some(link) => cells.push(Some(link)),
            None => {
                obs.damaged.push((
                    at_column(at, column),
                    format!(
                        "`{}` in row {name}, column {column_name} of nvidia-smi topo -m is no link (X, NV#, PIX, PXB, PHB, NODE, SYS); row left out",
                        shown(word)
                    ),
                ));
                return true;
            }
        }
    }
    if let Some(gpu) = gpu_index(name) {
        matrix.gpu_rows.insert(gpu, (cells, at.clone()));
    }
    true
}

/// A line of the link legend (`  SYS  = Connection traversing PCIe ...`).
pub fn legend_line(t: &str) -> bool {
    t.split_once('=')
        .is_some_and(|(key, _)| !key.trim().is_empty() && !key.trim().contains(' '))
}

/// `  NIC0: mlx5_0` below `NIC Legend:`.
pub fn nic_legend_line(obs: &mut Observations, t: &str, at: &Location) -> bool {
    let Some((nic, device)) = t.split_once(':') else {
        return false;
    };
    let (nic, device) = (nic.trim(), device.trim());
    let plain = device_column(device)
        || device
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !nic.starts_with("NIC") || device.is_empty() || !plain {
        return false;
    }
    match obs.topology.as_mut() {
        Some(m) => {
            m.legend
                .insert(nic.to_owned(), (device.to_owned(), at.clone()));
            true
        }
        None => false,
    }
}

/// `GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-...)` (nvidia-smi -L); MIG devices below
/// a GPU (`  MIG 3g.40gb Device 0: (UUID: MIG-...)`) are read and add nothing.
pub fn gpu_list_line(obs: &mut Observations, t: &str, at: &Location) -> Option<bool> {
    if t.starts_with("MIG ") && t.contains("(UUID: MIG-") {
        return Some(true);
    }
    let rest = t.strip_prefix("GPU ")?;
    let (index, rest) = rest.split_once(':')?;
    let index: u32 = index.trim().parse().ok()?;
    let model = rest
        .split_once("(UUID:")
        .map_or(rest, |(model, _)| model)
        .trim();
    if model.is_empty() || model.chars().any(char::is_control) {
        return Some(false);
    }
    obs.gpus
        .push((index, shown(model).into_owned(), at.clone()));
    Some(true)
}

/// A line of plain `nvidia-smi` (seed 001's check of the GPUs and their driver):
/// Some(true) for the table's frames, headers, the process table and the time stamp
/// above it, after noting a GPU's row; None for a line that is not the table's.
///
/// A GPU's row has three cells, the second its PCI bus id:
/// `|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |    0 |`:
/// its index, its name and Persistence-M (`On`/`Off`). The name column is as wide as
/// the table: nvidia-smi cuts a longer name to `...` (`NVIDIA A100-SXM...`), which
/// is no model, so the row gives the GPU and no model.
pub fn smi_table_line(obs: &mut Observations, t: &str, at: &Location) -> Option<bool> {
    if t.len() > 1 && t.starts_with('+') && t.ends_with('+') {
        return t
            .chars()
            .all(|c| matches!(c, '+' | '-' | '='))
            .then_some(true);
    }
    if smi_time_stamp(t) {
        return Some(true);
    }
    let inner = t.strip_prefix('|')?.strip_suffix('|')?;
    let cells: Vec<&str> = inner.split('|').collect();
    let bus = cells.get(1).and_then(|c| c.split_whitespace().next());
    let (Some(first), Some(bus)) = (cells.first(), bus) else {
        return Some(true);
    };
    if cells.len() != 3 || !pci_bus_id(bus) {
        return Some(true);
    }
    let mut words: Vec<&str> = first.split_whitespace().collect();
    let Some(index) = words.first().and_then(|w| w.parse::<u32>().ok()) else {
        return Some(false);
    };
    if matches!(words.last(), Some(&"On" | &"Off")) {
        words.pop();
    }
    let name = words[1..].join(" ");
    if name.is_empty() || name.chars().any(char::is_control) {
        return Some(false);
    }
    let model = (!name.ends_with("...")).then(|| shown(&name).into_owned());
    obs.gpu_table.push((index, model, at.clone()));
    Some(true)
}

/// `00000000:18:00.0`: domain, bus, device and function in hex.
fn pci_bus_id(word: &str) -> bool {
    let parts: Vec<&str> = word.split([':', '.']).collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_hexdigit()))
}

/// nvidia-smi's first line, `Tue Dec  8 01:10:42 2026` (ctime's form).
fn smi_time_stamp(t: &str) -> bool {
    const DAYS: &[&str] = &["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let w: Vec<&str> = t.split_whitespace().collect();
    w.len() == 5
        && DAYS.contains(&w[0])
        && w[3].split(':').count() == 3
        && w[4].len() == 4
        && number(w[4])
}

/// `lsmod`'s header.
pub fn lsmod_header(t: &str) -> bool {
    let w: Vec<&str> = t.split_whitespace().collect();
    w == ["Module", "Size", "Used", "by"]
}

fn module_name(word: &str) -> bool {
    !word.is_empty()
        && word.len() <= 64
        && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn number(word: &str) -> bool {
    !word.is_empty() && word.chars().all(|c| c.is_ascii_digit())
}

/// A row of `lsmod` (`nvidia_peermem  16384  0`).
pub fn lsmod_row(obs: &mut Observations, t: &str, at: &Location) -> bool {
    let w: Vec<&str> = t.split_whitespace().collect();
    if w.len() < 3 || !module_name(w[0]) || !number(w[1]) || !(number(w[2]) || w[2] == "-") {
        return false;
    }
    add_module(obs, w[0], at);
    true
}

/// A line of `/proc/modules`
/// (`nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)`), recognised anywhere.
pub fn proc_modules_line(obs: &mut Observations, t: &str, at: &Location) -> bool {
    let w: Vec<&str> = t.split_whitespace().collect();
    let is = w.len() >= 6
        && module_name(w[0])
        && number(w[1])
        && number(w[2])
        && matches!(w[4], "Live" | "Loading" | "Unloading");
    if is {
        add_module(obs, w[0], at);
    }
    is
}

fn add_module(obs: &mut Observations, name: &str, at: &Location) {
    obs.modules
        .get_or_insert_with(BTreeMap::new)
        .entry(name.to_owned())
        .or_insert_with(|| at.clone());
}

/// An `lsmod` capture with no rows still says "nothing loaded".
pub fn modules_listed(obs: &mut Observations) {
    obs.modules.get_or_insert_with(BTreeMap::new);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_know_their_columns() {
        let w: Vec<(usize, &str)> = words("GPU0\t X \tPIX  é SYS").collect();
        assert_eq!(
            w,
            [(1, "GPU0"), (7, "X"), (10, "PIX"), (15, "é"), (17, "SYS")]
        );
    }

    #[test]
    fn escapes_are_dropped() {
        assert_eq!(
            without_escapes("\u{1b}[4m\tGPU0\tGPU1\u{1b}[0m"),
            "\tGPU0\tGPU1"
        );
    }
}
