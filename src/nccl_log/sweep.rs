//! nccl-tests' result table as data: every row as printed (size, count, type, redop,
//! root, then time, algbw, busbw and #wrong out of place and in place), where the
//! curve is flat, and the table as CSV.

use std::collections::BTreeMap;

use serde::Serialize;

use super::tables::Row;

/// The most rows kept per table, and tables per run; beyond them rows are counted.
pub const MAX_ROWS: usize = 256;
pub const MAX_SWEEPS: usize = 32;

/// A plateau is at least this many consecutive sizes ...
pub const FLAT_ROWS: usize = 3;
/// ... whose bus bandwidth is within this share of the highest of them.
pub const FLAT_TOLERANCE: f64 = 0.05;

/// One placement's columns (nccl-tests prints out-of-place, then in-place).
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Placement {
    /// Average time per operation, microseconds.
    pub time_us: Option<f64>,
    /// Algorithm bandwidth, GB/s (1e9 bytes/s): size / time.
    #[serde(rename = "algbwGBps")]
    pub algbw_gbps: Option<f64>,
    /// Bus bandwidth, GB/s: algbw times the collective's factor (2(n-1)/n for
    /// all_reduce), comparable across rank counts.
    #[serde(rename = "busbwGBps")]
    pub busbw_gbps: Option<f64>,
    /// `#wrong` (or v2.10's `error`); null where nccl-tests printed `N/A` (`-c 0`).
    pub wrong: Option<f64>,
}

/// One row of the table.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SweepRow {
    /// Message size, bytes.
    pub size: u64,
    /// Elements per rank.
    pub count: Option<u64>,
    /// Element type (`float`, `half`, ...), when the table has the column.
    #[serde(rename = "type")]
    pub data_type: Option<String>,
    /// Reduction (`sum`, `none`, ...), when the table has the column.
    pub redop: Option<String>,
    /// Root rank (-1 for collectives without one), when the table has the column.
    pub root: Option<i64>,
    pub out_of_place: Option<Placement>,
    pub in_place: Option<Placement>,
    /// The row's line in its file.
    pub line: usize,
}

impl SweepRow {
    /// The better bus bandwidth of the two placements.
    pub fn best_busbw(&self) -> Option<f64> {
        [&self.out_of_place, &self.in_place]
            .into_iter()
            .flatten()
            .filter_map(|p| p.busbw_gbps)
            .fold(None, |best: Option<f64>, v| {
                Some(best.map_or(v, |b| b.max(v)))
            })
    }
}

/// One result table: the rows between a header (or the first row) and its footer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Sweep {
    pub file: String,
    /// The line of the column header, when the table has one.
    pub header_line: Option<usize>,
    /// `all_reduce` for `all_reduce_perf` (`# Collective test starting:`), when shown.
    pub collective: Option<String>,
    pub rows: Vec<SweepRow>,
    /// Rows beyond [`MAX_ROWS`], counted.
    pub rows_not_listed: u64,
    /// `# Avg bus bandwidth`, GB/s: nccl-tests' average over every size (reported,
    /// never judged: it averages in the latency-bound sizes).
    #[serde(rename = "averageBusbwGBps")]
    pub average_busbw_gbps: Option<f64>,
    /// `# Out of bounds values : N`.
    pub out_of_bounds: Option<u64>,
}

/// A run of consecutive sizes where the curve is flat.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Plateau {
    pub from_bytes: u64,
    pub to_bytes: u64,
    /// How many sizes.
    pub rows: usize,
    #[serde(rename = "minGBps")]
    pub min_gbps: f64,
    #[serde(rename = "maxGBps")]
    pub max_gbps: f64,
}

/// The flat stretch of the curve (best bandwidth per size): of the runs of at least
/// [`FLAT_ROWS`] consecutive sizes within [`FLAT_TOLERANCE`] of their highest, the one
/// that reaches highest (small sizes can be flat too, at a few MB/s), then the longest.
/// Rows at zero (the latency-bound sizes print 0.00) are never a plateau.
pub fn plateau(rows: &BTreeMap<u64, Row>) -> Option<Plateau> {
    let points: Vec<(u64, f64)> = rows.iter().map(|(s, r)| (*s, r.value)).collect();
    let mut best: Option<(usize, usize, f64, f64)> = None;
    for start in 0..points.len() {
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        let mut end = start;
        for (i, (_, v)) in points.iter().enumerate().skip(start) {
            let (l, h) = (lo.min(*v), hi.max(*v));
            if h <= 0.0 || l <= 0.0 || h - l > FLAT_TOLERANCE * h {
                break;
            }
            (lo, hi, end) = (l, h, i + 1);
        }
        let len = end - start;
        if len < FLAT_ROWS {
            continue;
        }
        let better = best.is_none_or(|(s, e, _, h)| hi > h || (hi == h && len > e - s));
        if better {
            best = Some((start, end, lo, hi));
        }
    }
    best.map(|(s, e, lo, hi)| Plateau {
        from_bytes: points[s].0,
        to_bytes: points[e - 1].0,
        rows: e - s,
        min_gbps: super::rate::round(lo),
        max_gbps: super::rate::round(hi),
    })
}

/// The largest size's bus bandwidth more than this share below the plateau's highest
/// is a fall worth a note: beyond [`FLAT_TOLERANCE`], the spread a plateau allows.
pub const FALL_SHARE: f64 = 0.05;

/// Where the curve ends when it falls after its plateau: the largest size, its bus
/// bandwidth and how far below the plateau's highest (a share). None when the
/// plateau reaches the largest size, or the curve ends within [`FALL_SHARE`] of it.
/// A healthy sweep holds its plateau to the end (nccl-tests#119's 95.5-96.7 GB/s
/// over its last sizes; 01's 187 GB/s at 8 GiB), so a fall at the largest sizes is
/// something the fabric or the tuner does under sustained load.
pub fn fall_after(rows: &BTreeMap<u64, Row>, plateau: &Plateau) -> Option<(u64, f64, f64)> {
    let (size, last) = rows.last_key_value()?;
    if *size <= plateau.to_bytes || plateau.max_gbps <= 0.0 {
        return None;
    }
    let share = 1.0 - last.value / plateau.max_gbps;
    (share > FALL_SHARE).then_some((*size, last.value, share))
}

/// The sweeps as CSV (RFC 4180): one line per row, a header first. Text from the log
/// is quoted where it must be, and a cell that a spreadsheet would take for a formula
/// (`=`, `+`, `-`, `@` first) is given a leading `'`.
pub fn csv(sweeps: &[Sweep]) -> String {
    let mut out = String::from(
        "file,size,count,type,redop,root,oop_time_us,oop_algbw_gbps,oop_busbw_gbps,oop_wrong,ip_time_us,ip_algbw_gbps,ip_busbw_gbps,ip_wrong\n",
    );
    let num = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for s in sweeps {
        for r in &s.rows {
            let mut cells = vec![
                text_cell(&s.file),
                r.size.to_string(),
                r.count.map(|c| c.to_string()).unwrap_or_default(),
                r.data_type.as_deref().map(text_cell).unwrap_or_default(),
                r.redop.as_deref().map(text_cell).unwrap_or_default(),
                r.root.map(|c| c.to_string()).unwrap_or_default(),
            ];
            for p in [&r.out_of_place, &r.in_place] {
                let p = p.clone().unwrap_or_default();
                cells.extend([
                    num(p.time_us),
                    num(p.algbw_gbps),
                    num(p.busbw_gbps),
                    num(p.wrong),
                ]);
            }
            out += &cells.join(",");
            out.push('\n');
        }
    }
    out
}

fn text_cell(text: &str) -> String {
    let guarded = if text.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{text}")
    } else {
        text.to_owned()
    };
    if guarded.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", guarded.replace('"', "\"\""))
    } else {
        guarded
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn rows(points: &[(u64, f64)]) -> BTreeMap<u64, Row> {
        points
            .iter()
            .map(|(s, v)| {
                (
                    *s,
                    Row {
                        value: *v,
                        at: (Arc::from("t"), 1),
                    },
                )
            })
            .collect()
    }

    #[test]
    fn a_flat_stretch_is_a_plateau_wherever_it_is() {
        // nccl-tests#119's tail: 1 MiB steps, 95.5-96.7 GB/s.
        let p = plateau(&rows(&[
            (127926280, 95.92),
            (128974856, 96.47),
            (130023432, 96.42),
            (131072008, 96.45),
            (132120584, 96.69),
            (133169160, 95.94),
        ]))
        .unwrap();
        assert_eq!(
            (p.from_bytes, p.to_bytes, p.rows),
            (127926280, 133169160, 6)
        );
        assert_eq!((p.min_gbps, p.max_gbps), (95.92, 96.69));
        // A rising curve has none; zeros are none.
        assert!(plateau(&rows(&[(1, 10.0), (2, 20.0), (4, 40.0), (8, 80.0)])).is_none());
        let falling = rows(&[
            (1, 80.0),
            (2, 95.0),
            (4, 96.0),
            (8, 95.5),
            (16, 90.0),
            (32, 80.0),
        ]);
        let p = plateau(&falling).unwrap();
        let (size, value, share) = fall_after(&falling, &p).unwrap();
        assert_eq!((size, value, (share * 1000.0).round()), (32, 80.0, 167.0));
        // Within the tolerance at the end, or flat to the end: no fall.
        let dipping = rows(&[(2, 95.0), (4, 96.0), (8, 95.5), (16, 85.0), (32, 93.0)]);
        assert_eq!(fall_after(&dipping, &plateau(&dipping).unwrap()), None);
        let flat = rows(&[(2, 95.0), (4, 96.0), (8, 95.5)]);
        assert_eq!(fall_after(&flat, &plateau(&flat).unwrap()), None);
        assert!(plateau(&rows(&[(1, 0.0), (2, 0.0), (4, 0.0)])).is_none());
        // The flat top wins over a flat floor of the same length.
        let p = plateau(&rows(&[
            (1, 1.0),
            (2, 1.01),
            (4, 1.02),
            (8, 50.0),
            (16, 90.0),
            (32, 91.0),
            (64, 92.0),
        ]))
        .unwrap();
        assert_eq!(p.from_bytes, 16);
    }

    #[test]
    fn csv_quotes_and_defuses_log_text() {
        let sweep = Sweep {
            file: "a,b.log".into(),
            header_line: None,
            collective: None,
            rows: vec![SweepRow {
                size: 8,
                count: Some(2),
                data_type: Some("=cmd".into()),
                redop: Some("sum".into()),
                root: Some(-1),
                out_of_place: Some(Placement {
                    time_us: Some(12.5),
                    algbw_gbps: Some(0.0),
                    busbw_gbps: Some(0.0),
                    wrong: None,
                }),
                in_place: None,
                line: 3,
            }],
            rows_not_listed: 0,
            average_busbw_gbps: None,
            out_of_bounds: None,
        };
        let text = csv(&[sweep]);
        assert_eq!(
            text.lines().nth(1).unwrap(),
            "\"a,b.log\",8,2,'=cmd,sum,-1,12.5,0,0,,,,,"
        );
    }
}
