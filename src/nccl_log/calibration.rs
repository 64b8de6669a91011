//! What a healthy fabric reaches: expected nccl-tests bus bandwidth per fabric × GPU
//! generation × node count × collective (× algorithm where the log shows it), as
//! shares of the nodes' aggregate NIC line rate, each row with the published runs it
//! rests on (`../shared/reference/nccl-bandwidth.md` §2-5; a row marked "derived" is
//! an inference from those figures, not a statement of a source).
//!
//! The rows are data: [`ROWS`] is read top to bottom and the first row whose every
//! condition fits the run is used, so the specific rows come before the general ones.

use serde::Serialize;

use crate::model::pool::Fabric;

/// The GPU generation, which decides how far a 2-node tree goes past the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GpuGeneration {
    /// V100.
    Volta,
    /// A100, A800, A30.
    Ampere,
    /// H100, H200, H800, GH200.
    Hopper,
    /// B100, B200, B300, GB200, GB300.
    Blackwell,
}

impl GpuGeneration {
    /// From a GPU's name as nvidia-smi or nccl-tests print it (`NVIDIA A100-SXM4-40GB`,
    /// `NVIDIA H100 80GB HBM3`) or a pool's `gpu.model` (`H100`, `a100-sxm-40g`).
    pub fn of(name: &str) -> Option<GpuGeneration> {
        let upper = name.to_ascii_uppercase();
        let has = |model: &str| {
            upper.match_indices(model).any(|(at, m)| {
                let before = upper[..at].chars().next_back();
                let after = upper[at + m.len()..].chars().next();
                !before.is_some_and(|c| c.is_ascii_alphanumeric())
                    && !after.is_some_and(|c| c.is_ascii_digit())
            })
        };
        if ["GB200", "GB300", "B100", "B200", "B300"]
            .iter()
            .any(|m| has(m))
        {
            Some(GpuGeneration::Blackwell)
        } else if ["GH200", "H100", "H200", "H800", "H20"]
            .iter()
            .any(|m| has(m))
        {
            Some(GpuGeneration::Hopper)
        } else if ["A100", "A800", "A30"].iter().any(|m| has(m)) {
            Some(GpuGeneration::Ampere)
        } else if has("V100") {
            Some(GpuGeneration::Volta)
        } else {
            None
        }
    }
}

/// How many nodes a row applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nodes {
    /// Exactly two: NCCL's tree (and NVLSTree) can go past the network's rate.
    Two,
    /// Three or more, or a ring forced with NCCL_ALGO: the network is the bottleneck.
    ThreeOrMore,
    Any,
}

/// What the run was, as far as the log and the pool say.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub fabric: Option<Fabric>,
    pub gpu: Option<GpuGeneration>,
    pub nodes: Option<u32>,
    /// nccl-tests' collective, `all_reduce` for `all_reduce_perf`.
    pub collective: Option<String>,
    /// NCCL_ALGO as the log echoes it, lower case.
    pub algorithm: Option<String>,
    /// NICs per node, from the pool's label.
    pub nics: Option<usize>,
}

/// One row of expectations.
#[derive(Debug)]
pub struct Row {
    /// Stable name, reported in the verdict.
    pub id: &'static str,
    /// None: any fabric.
    pub fabric: Option<Fabric>,
    pub gpu: Option<GpuGeneration>,
    pub nodes: Nodes,
    /// None: any collective.
    pub collective: Option<&'static str>,
    /// None: any algorithm; `ring`/`tree` only when the log shows NCCL_ALGO.
    pub algorithm: Option<&'static str>,
    /// At or above this share of the line rate the run is healthy.
    pub healthy: f64,
    /// Below this share it is a finding (RDG146); between the two, short of healthy.
    pub plausible: f64,
    /// Above this share the line rate is wrong (the pool's label understates the NICs).
    pub ceiling: f64,
    /// At or above this share GPUDirect RDMA was in use: without it NCCL stages data
    /// through host memory at about 2/3 of the line rate (sjeaugey, NVIDIA/nccl#412:
    /// 16 of 24 GB/s), about 0.77 with the 1.15 a 2-node tree gives in published runs.
    pub gdr: f64,
    /// The published runs the numbers come from.
    pub source: &'static str,
}

const ANY_GPU: Option<GpuGeneration> = None;

#[rustfmt::skip]
pub static ROWS: &[Row] = &[
    // A ring on any node count is bound by the network (nccl-tests#196: force
    // NCCL_ALGO=RING to measure the network through NCCL on 2 nodes).
    Row { id: "ring-ib", fabric: Some(Fabric::Ib), gpu: ANY_GPU, nodes: Nodes::Any, collective: None, algorithm: Some("ring"),
          healthy: 0.90, plausible: 0.80, ceiling: 1.02, gdr: 0.80,
          source: "NVIDIA/nccl-tests#196 (sjeaugey: ring measures the network); 0.967 of 4x200G HDR in NVIDIA/nccl-tests#119, 0.976 of 1x100G in NVIDIA/nccl-tests#29" },
    Row { id: "ring-roce", fabric: Some(Fabric::Roce), gpu: ANY_GPU, nodes: Nodes::Any, collective: None, algorithm: Some("ring"),
          healthy: 0.80, plausible: 0.75, ceiling: 1.02, gdr: 0.75,
          source: "NVIDIA/nccl#1368 (4x400G RoCE, 5 nodes, ring 190 of 200 GB/s); NVIDIA/nccl#1221 (8x400G RoCE beyond two nodes at 0.80)" },
    Row { id: "ring", fabric: None, gpu: ANY_GPU, nodes: Nodes::Any, collective: None, algorithm: Some("ring"),
          healthy: 0.90, plausible: 0.80, ceiling: 1.02, gdr: 0.80,
          source: "NVIDIA/nccl-tests#196; NVIDIA/nccl-tests#252 (NCCL_ALGO=RING, 2 nodes x 4 H100: 95-97 GB/s, \"looks great with ~24GB/s per NIC\")" },
    // A forced tree beyond two nodes gives up bandwidth to the ring.
    Row { id: "tree-3plus", fabric: None, gpu: ANY_GPU, nodes: Nodes::ThreeOrMore, collective: None, algorithm: Some("tree"),
          healthy: 0.70, plausible: 0.60, ceiling: 1.02, gdr: 0.70,
          source: "NVIDIA/nccl#1368 (4x400G RoCE, 5 x 8 H100: tree 150 vs ring 190 of 200 GB/s)" },
    // Two nodes: tree and NVLS go past the NICs' peak, "up to ~2x the network speed"
    // (sjeaugey, NVIDIA/nccl#946), so the ceiling is 2.0, not the 1.15 the published
    // Hopper runs reach (nccl-bandwidth.md §3 derives 1.15 from those alone).
    Row { id: "2node-blackwell", fabric: None, gpu: Some(GpuGeneration::Blackwell), nodes: Nodes::Two, collective: Some("all_reduce"), algorithm: None,
          healthy: 0.90, plausible: 0.80, ceiling: 2.00, gdr: 0.85,
          source: "coreweave/nccl-tests#92 (B200, 2 x 8, 690.07 GB/s at 8G on 8x400G: 1.73; not re-read); floor derived from the Hopper rows" },
    Row { id: "2node-hopper", fabric: None, gpu: Some(GpuGeneration::Hopper), nodes: Nodes::Two, collective: Some("all_reduce"), algorithm: None,
          healthy: 0.90, plausible: 0.80, ceiling: 2.00, gdr: 0.85,
          source: "SkyPilot on CoreWeave (H200, 8x400G NDR: 455.85 GB/s at 1 GiB, 1.14) and Together (H100: 444.99, 1.11), https://docs.skypilot.co/en/latest/examples/performance/; NVIDIA/nccl-tests#22 (tree on two nodes)" },
    Row { id: "2node-ampere", fabric: None, gpu: Some(GpuGeneration::Ampere), nodes: Nodes::Two, collective: Some("all_reduce"), algorithm: None,
          healthy: 0.90, plausible: 0.80, ceiling: 2.00, gdr: 0.85,
          source: "Azure/aks-rdma-infiniband tests/expected-output.md (ND96asr_v4, 8x200G HDR: 187.22 of 200 GB/s, \"less than 180 ... a problem\"); ceiling NVIDIA/nccl#946 (up to ~2x the network on 2 nodes)" },
    Row { id: "2node", fabric: None, gpu: ANY_GPU, nodes: Nodes::Two, collective: None, algorithm: None,
          healthy: 0.90, plausible: 0.80, ceiling: 2.00, gdr: 0.85,
          source: "derived: the ≥3-node floor, with the 2-node tree's ceiling (NVIDIA/nccl#946: up to ~2x the network; nccl-tests#196)" },
    // Three or more nodes: about the aggregate line rate, healthy from 0.9.
    Row { id: "3plus-roce", fabric: Some(Fabric::Roce), gpu: ANY_GPU, nodes: Nodes::ThreeOrMore, collective: None, algorithm: None,
          healthy: 0.80, plausible: 0.75, ceiling: 1.02, gdr: 0.75,
          source: "NVIDIA/nccl#1221 (8x400G RoCE beyond two nodes at 0.80); NVIDIA/nccl#1368 (ring 0.95 at 5 nodes)" },
    Row { id: "3plus", fabric: None, gpu: ANY_GPU, nodes: Nodes::ThreeOrMore, collective: None, algorithm: None,
          healthy: 0.90, plausible: 0.80, ceiling: 1.02, gdr: 0.80,
          source: "NVIDIA/nccl-tests#119 (3 x 8 A100, 4x200G HDR: 95.5-96.7 GB/s, \"perfect\"); NVIDIA/nccl-tests#29 (12.2 of 12.5 GB/s, \"as good as you can get\"); NVIDIA/nccl#307 (4x100G: 45 expected)" },
    // Nothing says how many nodes: the ≥3-node floor (a low verdict stays honest), the
    // 2-node ceiling (a tree may have run, NVIDIA/nccl#946).
    Row { id: "any", fabric: None, gpu: ANY_GPU, nodes: Nodes::Any, collective: None, algorithm: None,
          healthy: 0.90, plausible: 0.80, ceiling: 2.00, gdr: 0.85,
          source: "derived: the ≥3-node floor (NVIDIA/nccl-tests#119, #29) with the 2-node ceiling (NVIDIA/nccl#946: a tree goes up to ~2x the network), since the log does not say how many nodes ran" },
];

impl Row {
    fn fits(&self, run: &Run) -> bool {
        let nodes = match (self.nodes, run.nodes) {
            (Nodes::Any, _) => true,
            (Nodes::Two, Some(2)) => true,
            (Nodes::ThreeOrMore, Some(n)) => n >= 3,
            _ => false,
        };
        nodes
            && self.fabric.is_none_or(|f| run.fabric == Some(f))
            && self.gpu.is_none_or(|g| run.gpu == Some(g))
            && self
                .collective
                .is_none_or(|c| run.collective.as_deref() == Some(c))
            && self
                .algorithm
                .is_none_or(|a| run.algorithm.as_deref() == Some(a))
    }
}

/// The row for `run`: the first that fits (the last row fits every run).
pub fn row_for(run: &Run) -> &'static Row {
    ROWS.iter()
        .find(|r| r.fits(run))
        .unwrap_or(&ROWS[ROWS.len() - 1])
}

/// How a measured share of the line rate reads against a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Health {
    /// At or above the row's healthy share.
    Healthy,
    /// Between the plausible and the healthy share: RDMA works, short of the best.
    BelowHealthy,
    /// Below the plausible share: a finding (RDG146).
    Degraded,
    /// Below a tenth of the line rate: sockets, or a broken fabric.
    Broken,
    /// Above the row's ceiling: the pool's label understates the NICs.
    AboveLineRate,
    /// The sweep stops before the plateau and the value is not high: no low verdict.
    NotJudged,
}

impl Health {
    pub fn name(self) -> &'static str {
        match self {
            Health::Healthy => "healthy",
            Health::BelowHealthy => "below healthy",
            Health::Degraded => "degraded",
            Health::Broken => "broken",
            Health::AboveLineRate => "above the line rate",
            Health::NotJudged => "not judged",
        }
    }
}

/// Read `share` against `row`; `full_sweep`: the table reaches the sizes where a low
/// value is a verdict (a short sweep withholds only a low one).
pub fn health(row: &Row, share: f64, full_sweep: bool) -> Health {
    if share > row.ceiling {
        Health::AboveLineRate
    } else if share >= row.healthy {
        Health::Healthy
    } else if !full_sweep {
        Health::NotJudged
    } else if share >= row.plausible {
        Health::BelowHealthy
    } else if share < super::rate::SOCKET_SHARE {
        Health::Broken
    } else {
        Health::Degraded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_generations_from_names() {
        assert_eq!(
            GpuGeneration::of("NVIDIA A100-SXM4-40GB"),
            Some(GpuGeneration::Ampere)
        );
        assert_eq!(
            GpuGeneration::of("NVIDIA H100 80GB HBM3"),
            Some(GpuGeneration::Hopper)
        );
        assert_eq!(GpuGeneration::of("h200"), Some(GpuGeneration::Hopper));
        assert_eq!(
            GpuGeneration::of("A100-SXM-40G"),
            Some(GpuGeneration::Ampere)
        );
        assert_eq!(
            GpuGeneration::of("NVIDIA GB200"),
            Some(GpuGeneration::Blackwell)
        );
        assert_eq!(
            GpuGeneration::of("Tesla V100-PCIE-16GB"),
            Some(GpuGeneration::Volta)
        );
        assert_eq!(GpuGeneration::of("NVIDIA GB10"), None);
        assert_eq!(GpuGeneration::of("Tesla T4"), None);
    }

    #[test]
    fn rows_are_chosen_most_specific_first() {
        let run = |nodes, gpu, algorithm: Option<&str>| Run {
            fabric: Some(Fabric::Ib),
            gpu,
            nodes,
            collective: Some("all_reduce".into()),
            algorithm: algorithm.map(str::to_owned),
            nics: Some(8),
        };
        assert_eq!(
            row_for(&run(Some(2), Some(GpuGeneration::Hopper), None)).id,
            "2node-hopper"
        );
        assert_eq!(
            row_for(&run(Some(2), Some(GpuGeneration::Hopper), Some("ring"))).id,
            "ring-ib"
        );
        assert_eq!(
            row_for(&run(Some(3), Some(GpuGeneration::Ampere), None)).id,
            "3plus"
        );
        assert_eq!(row_for(&run(None, None, None)).id, "any");
        assert_eq!(row_for(&run(Some(2), None, None)).id, "2node");
        for r in ROWS {
            assert!(
                r.plausible <= r.healthy && r.healthy <= r.ceiling,
                "{}",
                r.id
            );
            assert!(!r.source.is_empty());
        }
    }

    #[test]
    fn a_short_sweep_withholds_only_a_low_verdict() {
        let row = row_for(&Run::default());
        assert_eq!(health(row, 0.96, false), Health::Healthy);
        assert_eq!(health(row, 0.5, false), Health::NotJudged);
        assert_eq!(health(row, 0.5, true), Health::Degraded);
        assert_eq!(health(row, 0.85, true), Health::BelowHealthy);
        assert_eq!(health(row, 0.02, true), Health::Broken);
        assert_eq!(health(row, 2.3, true), Health::AboveLineRate);
    }
}
