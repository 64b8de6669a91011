//! How findings read on a terminal: rustc-style, with the line they point at.

use std::fmt::Write;

use crate::check::Finding;
use crate::source::Sources;

/// One finding as text, e.g.
///
/// ```text
/// error[RDG020]: NCCL_IB_TC must match the switches' QoS setup; ...
///   --> job.yaml:14:5
///    |
/// 14 |     NCCL_IB_TC: "106"
///    |     ^
/// ```
pub fn human(finding: &Finding, sources: &Sources) -> String {
    let info = finding.rule.info();
    let mut out = format!("{}[{}]: {}\n", info.severity, info.id, finding.message);
    let gutter = finding
        .location
        .as_ref()
        .map_or(1, |at| at.line.to_string().len());
    let pad = " ".repeat(gutter);
    if let Some(at) = &finding.location {
        let _ = writeln!(out, "{pad}--> {at}");
        if let Some(line) = sources.line(at) {
            let caret_pad: String = line
                .chars()
                .take(at.column.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            let _ = writeln!(out, "{pad} |");
            let _ = writeln!(out, "{} | {line}", at.line);
            let _ = writeln!(out, "{pad} | {caret_pad}^");
        }
    }
    let _ = writeln!(
        out,
        "{pad} = {}: {} (source: {})",
        info.id, info.summary, info.source
    );
    out
}
