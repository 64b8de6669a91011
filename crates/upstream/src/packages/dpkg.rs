//! `dpkg -l` output: the status column and the package name of each row, and whether
//! the seed's RDMA packages are installed.

use std::collections::BTreeMap;

use crate::diagnostics::{Findings, Location, Rule};
use crate::packages::{Family, PackageSet, packages};

/// `(status, package)` of a `dpkg -l` row such as
/// `ii  libibverbs1:amd64  44.0-2  amd64  Library ...`; None for headers and others.
pub fn row(line: &str) -> Option<(&str, &str)> {
    let mut parts = line.split_whitespace();
    let (state, package) = (parts.next()?, parts.next()?);
    let desired = matches!(state.chars().next()?, 'u' | 'i' | 'h' | 'r' | 'p');
    let is_state =
        (2..=3).contains(&state.len()) && desired && state.chars().all(|c| c.is_ascii_alphabetic());
    is_state.then(|| (state, package.split(':').next().unwrap_or(package)))
}

/// The package of dpkg-query's `dpkg-query: no packages found matching perftest`, which
/// `dpkg -l NAME...` prints (on stderr: rdmagen's capture command takes both streams)
/// for a name it has never seen: that package is not installed.
pub fn not_found(line: &str) -> Option<&str> {
    line.trim()
        .strip_prefix("dpkg-query: no packages found matching ")
        .map(str::trim)
        .filter(|p| !p.is_empty() && !p.contains(char::is_whitespace))
}

/// The state `check_installed` is handed for a package dpkg-query says it never saw.
pub const NOT_FOUND: &str = "no packages found";

/// Lines of the dpkg -l header, which carry no package.
pub fn is_header(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("Desired=") || t.starts_with('|') || t.starts_with("+++")
}

/// Every package of the seed's set must be `ii` (installed) in a captured `dpkg -l`
/// (`status`: package → its state and row). A finding for each that is not, at its
/// row; a package the capture lacks is reported at `missing_at`, when given.
pub fn check_installed(
    status: &BTreeMap<String, (String, Location)>,
    missing_at: Option<&Location>,
    findings: &mut Findings,
) {
    let runtime = packages(Family::Apt, PackageSet::Runtime);
    for package in packages(Family::Apt, PackageSet::Seed) {
        // Seed 000's two tools (infiniband-diags, perftest) check the fabric by hand;
        // NCCL trains without them, so their absence does not fail the check.
        let (rule, tool) = if runtime.contains(package) {
            (Rule::DpkgNotInstalled, "")
        } else {
            (
                Rule::DpkgToolMissing,
                ": a tool for checking the fabric by hand, which NCCL does not need",
            )
        };
        match status.get(*package) {
            Some((state, _)) if state == "ii" => {}
            Some((state, at)) if state == NOT_FOUND => findings.at(
                rule,
                format!(
                    "{package} is not installed (dpkg-query: no packages found matching it){tool}"
                ),
                at.clone(),
            ),
            Some((state, at)) => findings.at(
                rule,
                format!("{package} is `{state}`, not installed (`ii`){tool}"),
                at.clone(),
            ),
            None => {
                if let Some(at) = missing_at {
                    findings.at(
                        rule,
                        format!("{package} is not in the dpkg -l capture: not installed{tool}"),
                        at.clone(),
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_headers() {
        assert_eq!(
            row("ii  libibverbs1:amd64 44.0-2 amd64 Library"),
            Some(("ii", "libibverbs1"))
        );
        assert_eq!(row("rc  perftest 4.5 amd64 x"), Some(("rc", "perftest")));
        assert_eq!(row("Desired=Unknown/Install"), None);
        assert_eq!(row("CA 'mlx5_0'"), None);
        assert!(is_header("||/ Name   Version"));
    }
}
