//! Result tables: nccl-tests (`all_reduce_perf` and the other collectives, and the
//! smoke test, which prints the same table) and perftest's `ib_write_bw`.
//!
//! nccl-tests (NT@src/util.cu:737-780): a header naming its columns, today
//! `# size count type redop root time algbw busbw #wrong time algbw busbw #wrong`
//! (out-of-place, then in-place; `cputime` with -C, per-iteration columns with -R,
//! a timestamp column), in v2.10 without `root` and with `error` for `#wrong`; rows
//! `%12li %12li %8s %6s %6s` then `%7s %6s %6s %6g` per placement, `N/A` in the
//! `#wrong` column under `-c 0`; a footer `# Out of bounds values : N OK|FAILED` and
//! `# Avg bus bandwidth : X`. Columns are read by the header's names, so every
//! variant is one parser; rows keep the best bus bandwidth per message size.
//!
//! perftest (PT@src/perftest_parameters.h:191-222): the banner (`Link type`, `GID
//! index`, `Device`), then ` #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec]
//! MsgRate[Mpps]` (`[MiB/sec]` without --report_gbits, `[MB/sec]` before 2024, a
//! `#sl` column with QoS) and rows of numbers.

use std::collections::{BTreeMap, BTreeSet};

use super::evidence::{Evidence, Loc, MAX_HOSTS};
use super::sweep::{self, Placement, Sweep, SweepRow};
use crate::diagnostics::Rule;
use crate::diagnostics::escape::cut;

/// The most message sizes kept per table kind; the smallest go first.
const MAX_SIZES: usize = 128;

/// The best bandwidth seen at one message size, and its first line.
#[derive(Debug, Clone)]
pub struct Row {
    pub value: f64,
    pub at: Loc,
}

/// Where nccl-tests' columns are: one entry per placement (out-of-place, in-place)
/// in the `time`, `algbw`, `busbw` and `#wrong` lists.
#[derive(Debug, Clone)]
struct Columns {
    size: usize,
    count: usize,
    data_type: Option<usize>,
    redop: Option<usize>,
    root: Option<usize>,
    time: Vec<usize>,
    algbw: Vec<usize>,
    busbw: Vec<usize>,
    wrong: Vec<usize>,
}

impl Columns {
    /// From a header's words (after its `#`), or None when it is not one.
    fn from_header(words: &[&str]) -> Option<Columns> {
        let size = words.iter().position(|w| *w == "size")?;
        let count = words.iter().position(|w| *w == "count")?;
        let one = |name: &str| words.iter().position(|w| *w == name);
        let busbw: Vec<usize> = positions(words, |w| w == "busbw");
        let wrong = positions(words, |w| w == "#wrong" || w == "error");
        (!busbw.is_empty()).then_some(Columns {
            size,
            count,
            data_type: one("type"),
            redop: one("redop"),
            root: one("root"),
            time: positions(words, |w| w == "time"),
            algbw: positions(words, |w| w == "algbw"),
            busbw,
            wrong,
        })
    }

    /// The layout of a row seen without its header: today's 13 columns, or v2.10's 12.
    fn guess(words: &[&str]) -> Option<Columns> {
        let number = |i: usize| words.get(i).is_some_and(|w| w.parse::<u64>().is_ok());
        let word = |i: usize| {
            words.get(i).is_some_and(|w| {
                w.bytes().all(|b| b.is_ascii_alphanumeric()) && w.parse::<f64>().is_err()
            })
        };
        if !(number(0) && number(1) && word(2) && word(3)) {
            return None;
        }
        let (root, first) = match words.len() {
            13 => (Some(4), 5),
            12 => (None, 4),
            _ => return None,
        };
        let at = |k: usize| vec![first + k, first + 4 + k];
        Some(Columns {
            size: 0,
            count: 1,
            data_type: Some(2),
            redop: Some(3),
            root,
            time: at(0),
            algbw: at(1),
            busbw: at(2),
            wrong: at(3),
        })
    }

    /// One placement's columns of a row.
    fn placement(&self, words: &[&str], k: usize) -> Option<Placement> {
        let float = |list: &Vec<usize>| {
            list.get(k)
                .and_then(|&i| words.get(i)?.parse::<f64>().ok())
                .filter(|v| v.is_finite())
        };
        let p = Placement {
            time_us: float(&self.time),
            algbw_gbps: float(&self.algbw),
            busbw_gbps: float(&self.busbw).filter(|v| *v >= 0.0),
            wrong: float(&self.wrong),
        };
        (p.time_us.is_some() || p.busbw_gbps.is_some()).then_some(p)
    }
}

fn positions(words: &[&str], want: impl Fn(&str) -> bool) -> Vec<usize> {
    words
        .iter()
        .enumerate()
        .filter(|(_, w)| want(w))
        .map(|(i, _)| i)
        .collect()
}

/// What perftest printed.
#[derive(Debug, Default, Clone)]
pub struct Perftest {
    /// `RDMA_Write BW Test`
    pub test: Option<String>,
    pub device: Option<String>,
    /// `IB` or `Ethernet` (RoCE)
    pub link_type: Option<String>,
    pub gid_index: Option<u32>,
    /// The GID lines' kinds: link-local (fe80::), IPv4-mapped.
    pub link_local_gid: Option<Loc>,
    /// `--use_cuda`: the buffers were GPU memory (GPUDirect RDMA).
    pub cuda: bool,
    /// `Gb/sec`, `MiB/sec` or `MB/sec`
    pub unit: Option<String>,
    /// Average bandwidth per message size, in Gb/s.
    pub rows: BTreeMap<u64, Row>,
    pub first: Option<Loc>,
}

#[derive(Debug, Default)]
pub struct Tables {
    columns: Option<Columns>,
    header_in_file: bool,
    /// nccl-tests' best bus bandwidth per message size, GB/s.
    pub rows: BTreeMap<u64, Row>,
    /// nccl-tests' `# Avg bus bandwidth` (reported, never judged).
    pub average: Option<(f64, Loc)>,
    /// Hosts of nccl-tests' `#  Rank N Group G Pid P on HOST device D` lines.
    pub hosts: BTreeSet<String>,
    /// The GPU names of those lines (`NVIDIA A100-SXM4-40GB`), a few.
    pub gpus: BTreeSet<String>,
    /// `# Collective test starting: all_reduce_perf` → `all_reduce`.
    pub collective: Option<String>,
    /// Every table, row by row.
    pub sweeps: Vec<Sweep>,
    pub sweeps_not_listed: u64,
    /// The sweep rows go to, when a table is open.
    open: Option<usize>,
    /// perftest's average column, when a table is open.
    perf_average: Option<usize>,
    perf_rows_in_table: usize,
    pub perftest: Perftest,
}

impl Tables {
    pub fn new_file(&mut self) {
        self.columns = None;
        self.open = None;
        self.header_in_file = false;
        self.perf_average = None;
    }

    /// A line that is not NCCL's (launcher prefixes removed).
    pub fn line(&mut self, text: &str, at: &Loc, ev: &mut Evidence) {
        let text = text.trim_start();
        if let Some(body) = text.strip_prefix('#') {
            self.comment(body, at, ev);
            return;
        }
        if self.perf_average.is_some() && text.starts_with("---") && self.perf_rows_in_table > 0 {
            self.perf_average = None;
            return;
        }
        let Some(first) = text.as_bytes().first() else {
            return;
        };
        if first.is_ascii_digit() {
            if !self.perf_row(text, at) {
                self.test_row(text, at, ev);
            }
            return;
        }
        self.perftest_banner(text, at, ev);
    }

    fn comment(&mut self, body: &str, at: &Loc, ev: &mut Evidence) {
        let words: Vec<&str> = body.split_whitespace().collect();
        if let Some(columns) = Columns::from_header(&words) {
            self.columns = Some(columns);
            self.header_in_file = true;
            self.open_sweep(at, true);
            ev.quote = true;
            return;
        }
        if let Some(name) = body.trim().strip_prefix("Collective test starting:") {
            let name = name.trim();
            let name = name.strip_suffix("_perf").unwrap_or(name);
            if !name.is_empty() && name.len() <= 40 {
                self.collective = Some(name.to_owned());
            }
            return;
        }
        if words.first() == Some(&"bytes") || words.first().is_some_and(|w| w.starts_with("bytes"))
        {
            self.perf_header(body, at, ev);
            return;
        }
        let body = body.trim();
        if let Some(rest) = body.strip_prefix("Out of bounds values") {
            let n = rest
                .trim_start_matches([' ', ':'])
                .split_whitespace()
                .next();
            let n = n.and_then(|n| n.parse::<u64>().ok());
            if let Some(sweep) = self.open.and_then(|i| self.sweeps.get_mut(i)) {
                sweep.out_of_bounds = n;
            }
            if n.is_some_and(|n| n > 0) {
                wrong_results(ev, body, at);
            }
        } else if let Some(rest) = body.strip_prefix("Avg bus bandwidth") {
            let value = rest
                .trim_start_matches([' ', ':'])
                .split_whitespace()
                .next();
            if let Some(v) = value.and_then(|v| v.parse::<f64>().ok()) {
                self.average = Some((v, at.clone()));
                if let Some(sweep) = self.open.and_then(|i| self.sweeps.get_mut(i)) {
                    sweep.average_busbw_gbps = Some(v);
                }
            }
            self.columns = None;
            self.open = None;
        } else if body.starts_with("Rank ") {
            // `Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s` (NT@src/util.cu:687)
            if let Some(host) = body
                .split_once(" on ")
                .and_then(|(_, r)| r.split_whitespace().next())
                && self.hosts.len() < MAX_HOSTS
            {
                self.hosts.insert(host.to_owned());
            }
            if let Some((_, name)) = body
                .split_once(" device ")
                .and_then(|(_, r)| r.split_once("] "))
                && self.gpus.len() < 8
            {
                self.gpus.insert(cut(name.trim(), 80).into_owned());
            }
        }
    }

    fn test_row(&mut self, text: &str, at: &Loc, ev: &mut Evidence) {
        let words: Vec<&str> = text.split_whitespace().collect();
        let guessed;
        let columns = match &self.columns {
            Some(c) => c,
            None if !self.header_in_file => match Columns::guess(&words) {
                Some(c) => {
                    guessed = c;
                    &guessed
                }
                None => return,
            },
            None => return,
        };
        let number = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
        let (Some(size), Some(count)) = (number(columns.size), number(columns.count)) else {
            return;
        };
        let word = |i: Option<usize>| {
            i.and_then(|i| words.get(i))
                .map(|w| cut(w, 16).into_owned())
        };
        let row = SweepRow {
            size,
            count: Some(count),
            data_type: word(columns.data_type),
            redop: word(columns.redop),
            root: columns.root.and_then(|i| words.get(i)?.parse::<i64>().ok()),
            out_of_place: columns.placement(&words, 0),
            in_place: columns.placement(&words, 1),
            line: at.1,
        };
        let Some(best) = row.best_busbw() else {
            return;
        };
        let wrong = [&row.out_of_place, &row.in_place]
            .into_iter()
            .flatten()
            .any(|p| p.wrong.is_some_and(|w| w > 0.0));
        if wrong {
            wrong_results(ev, text, at);
        }
        if self.open.is_none() {
            self.open_sweep(at, false);
        }
        if let Some(sweep) = self.open.and_then(|i| self.sweeps.get_mut(i)) {
            if sweep.rows.len() < sweep::MAX_ROWS {
                sweep.rows.push(row);
            } else {
                sweep.rows_not_listed += 1;
            }
        }
        if keep(&mut self.rows, size, best, at) {
            ev.quote = true;
        }
    }

    /// A new table starts at `at` (its header, or its first row when it has none).
    fn open_sweep(&mut self, at: &Loc, header: bool) {
        if self.sweeps.len() >= sweep::MAX_SWEEPS {
            self.sweeps_not_listed += 1;
            self.open = None;
            return;
        }
        self.sweeps.push(Sweep {
            file: at.0.to_string(),
            header_line: header.then_some(at.1),
            collective: self.collective.clone(),
            rows: Vec::new(),
            rows_not_listed: 0,
            average_busbw_gbps: None,
            out_of_bounds: None,
        });
        self.open = Some(self.sweeps.len() - 1);
    }

    /// ` #bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]`
    fn perf_header(&mut self, body: &str, at: &Loc, ev: &mut Evidence) {
        let Some((_, rest)) = body.split_once("BW average[") else {
            return;
        };
        let unit = rest.split(']').next().unwrap_or("").to_owned();
        self.perf_average = Some(if body.contains("#sl") { 4 } else { 3 });
        self.perf_rows_in_table = 0;
        self.perftest.unit = Some(unit);
        if self.perftest.first.is_none() {
            self.perftest.first = Some(at.clone());
            ev.quote = true;
        }
    }

    /// A perftest row: bytes, iterations, then numbers; true when it was one.
    fn perf_row(&mut self, text: &str, at: &Loc) -> bool {
        let Some(average) = self.perf_average else {
            return false;
        };
        let words: Vec<&str> = text.split_whitespace().collect();
        let float = |i: usize| words.get(i).and_then(|w| w.parse::<f64>().ok());
        let (Some(bytes), Some(_), Some(_), Some(value)) = (
            words.first().and_then(|w| w.parse::<u64>().ok()),
            words.get(1).and_then(|w| w.parse::<u64>().ok()),
            float(2),
            float(average),
        ) else {
            return false;
        };
        let unit = self.perftest.unit.as_deref().unwrap_or("");
        // Gb = 1e9 bits (PT@src/perftest_parameters.c:718-721); MiB (MB before 2024) = 2^20 bytes.
        let gbps = if unit.starts_with("Gb") {
            value
        } else {
            value * 1_048_576.0 * 8.0 / 1e9
        };
        self.perf_rows_in_table += 1;
        keep(&mut self.perftest.rows, bytes, gbps, at);
        true
    }

    fn perftest_banner(&mut self, text: &str, at: &Loc, ev: &mut Evidence) {
        let value = |after: &str| {
            text.split_once(after)
                .and_then(|(_, r)| r.split_once(':'))
                .and_then(|(_, v)| v.split_whitespace().next())
                .map(str::to_owned)
        };
        let p = &mut self.perftest;
        if text.ends_with(" BW Test") {
            p.test = Some(cut(text, 80).into_owned());
        } else if text.starts_with("Link type") {
            p.link_type = value("Link type");
            ev.quote = true;
            p.first.get_or_insert_with(|| at.clone());
        } else if text.starts_with("GID index ") {
            p.gid_index = value("GID index").and_then(|v| v.parse().ok());
        } else if text.contains("Device ") && text.starts_with("Dual-port") {
            p.device = value("Device ");
        } else if let Some(gid) = text.strip_prefix("GID: ") {
            if gid.starts_with("254:128:") && p.link_local_gid.is_none() {
                p.link_local_gid = Some(at.clone());
                ev.quote = true;
            }
        } else if text.contains("allocated GPU buffer")
            || text.contains("using DMA-BUF for GPU buffer")
        {
            p.cuda = true;
        } else {
            perftest_error(text, at, ev);
        }
    }
}

/// Keep `value` as the best at `size`; true when it is the size's first row.
fn keep(rows: &mut BTreeMap<u64, Row>, size: u64, value: f64, at: &Loc) -> bool {
    if let Some(row) = rows.get_mut(&size) {
        if value > row.value {
            row.value = value;
        }
        return false;
    }
    rows.insert(
        size,
        Row {
            value,
            at: at.clone(),
        },
    );
    if rows.len() > MAX_SIZES {
        rows.pop_first();
    }
    true
}

fn wrong_results(ev: &mut Evidence, text: &str, at: &Loc) {
    ev.error(
        "tests-wrong".into(),
        Rule::NcclOtherError,
        "nccl-tests found wrong results".into(),
        "the collective returned wrong data (#wrong > 0, or out-of-bounds values): a broken GPU, NIC or GPUDirect RDMA path (ACS, a faulty peer-memory setup); rerun with NCCL_NET_GDR_LEVEL=0 and on other node pairs to find which".into(),
        text,
        None,
        at,
    );
}

/// perftest's failures (PT@src/perftest_resources.c, perftest_communication.c).
fn perftest_error(text: &str, at: &Loc, ev: &mut Evidence) {
    let own = |s: &str| s.to_owned();
    let (key, rule, title, cause) = if let Some(rest) = text.strip_prefix("Failed status") {
        // ` Failed status-%s (%d): wr_id %d syndrom 0x%x` (PT@src/perftest_resources.h:120)
        let status = rest
            .split_once('(')
            .and_then(|(_, r)| r.split(')').next())
            .and_then(|n| n.parse::<u32>().ok());
        let name = status.map_or("an error status".to_owned(), |s| {
            format!("status {s} ({})", super::formats::wc_status_name(s))
        });
        (
            format!("perftest-completion:{status:?}"),
            Rule::NcclCompletionError,
            format!("ib_write_bw: a completion with {name}"),
            own(super::formats::wc_status_cause(status.unwrap_or(u32::MAX))),
        )
    } else if text.starts_with("Failed to modify QP") {
        (
            "perftest-modify-qp".into(),
            Rule::NcclQpConnect,
            cut(&format!("ib_write_bw: {text}"), 120).into_owned(),
            own(
                "the queue pair could not reach the peer: on RoCE give -x with the RoCE v2 IPv4 GID index `show_gids` lists (the pool's `gidIndex`), the same on both sides, and check that the two addresses route to each other",
            ),
        )
    } else if [
        "Couldn't allocate MR",
        "Failed to create QP",
        "Unable to create QP",
        "Couldn't create CQ",
        "Couldn't allocate PD",
        "Couldn't create rdma",
        "failed to create mr",
        "Failed to create MR",
    ]
    .iter()
    .any(|p| text.starts_with(p))
    {
        (
            format!("perftest-resources:{}", cut(text, 40)),
            Rule::NcclVerbsResources,
            cut(&format!("ib_write_bw: {text}"), 120).into_owned(),
            own(
                "usually the locked-memory limit: the container needs the IPC_LOCK capability and an unlimited memlock ulimit; with --use_cuda, GPU memory registration needs nvidia-peermem",
            ),
        )
    } else if text.starts_with("Unable to find the Infiniband/RoCE device")
        || text.starts_with("No IB devices found")
        || text.starts_with("Couldn't get context for the device")
        || (text.starts_with("IB device ") && text.ends_with(" not found"))
    {
        (
            "perftest-device".into(),
            Rule::NcclIbUnavailable,
            cut(&format!("ib_write_bw: {text}"), 120).into_owned(),
            own(
                "the pod sees no such RDMA device: it was not given one (the RDMA device plugin's resource in its limits), -d names another device, or the image lacks the provider library (ibverbs-providers)",
            ),
        )
    } else if text.starts_with("Couldn't connect to ") {
        (
            "perftest-connect".into(),
            Rule::NcclOtherError,
            cut(&format!("ib_write_bw: {text}"), 120).into_owned(),
            own(
                "the client could not reach the server's TCP port to exchange addresses: start the server first, and check the address, the port (-p) and any network policy between the pods",
            ),
        )
    } else {
        return;
    };
    ev.error(key, rule, title, cause, text, None, at);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn read(lines: &[&str]) -> (Tables, Evidence) {
        let mut t = Tables::default();
        let mut ev = Evidence::default();
        for (n, l) in lines.iter().enumerate() {
            t.line(l, &(Arc::from("t"), n + 1), &mut ev);
        }
        (t, ev)
    }

    #[test]
    fn nccl_tests_new_and_old_headers() {
        let (t, _) = read(&[
            "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
            "  8589934592    2147483648     float     sum      -1    86026   99.85  187.22    N/A    86106   99.76  187.05    N/A",
        ]);
        assert_eq!(t.rows[&8589934592].value, 187.22);
        let (t, ev) = read(&[
            "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
            "   1073741824     268435456     float     sum    10345  103.79  194.61  5e-07    10312  104.13  195.24  5e-07",
        ]);
        assert_eq!(t.rows[&1073741824].value, 195.24);
        assert_eq!(ev.errors.len(), 1, "error column above 0 is wrong results");
    }

    #[test]
    fn rows_without_a_header_and_the_average() {
        let (t, _) = read(&[
            "    33554432       8388608     float     sum      -1    812.3   41.31   41.31      0    808.2   41.52   41.52      0",
            "# Avg bus bandwidth    : 56.3994",
        ]);
        assert_eq!(t.rows[&33554432].value, 41.52);
        assert_eq!(t.average.as_ref().map(|a| a.0), Some(56.3994));
    }

    #[test]
    fn perftest_gbits_and_mib() {
        let (t, _) = read(&[
            " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]",
            " 8388608    5000             196.56             196.55             0.002929",
            "---------------------------------------------------------------------------------------",
        ]);
        assert_eq!(t.perftest.rows[&8388608].value, 196.55);
        let (t, _) = read(&[
            " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]",
            " 65536      1000             11000.00            10000.00            0.160000",
        ]);
        let gbps = t.perftest.rows[&65536].value;
        assert!((gbps - 83.886).abs() < 0.01, "{gbps}");
    }

    #[test]
    fn perftest_banner() {
        let (t, _) = read(&[
            "                    RDMA_Write BW Test",
            " Dual-port       : OFF          Device         : mlx5_0",
            " Link type       : Ethernet",
            " GID index       : 3",
            " GID: 254:128:00:00:00:00:00:00:02:66:74:255:254:01:02:03",
        ]);
        let p = &t.perftest;
        assert_eq!(p.device.as_deref(), Some("mlx5_0"));
        assert_eq!(p.link_type.as_deref(), Some("Ethernet"));
        assert_eq!(p.gid_index, Some(3));
        assert!(p.link_local_gid.is_some());
    }
}
