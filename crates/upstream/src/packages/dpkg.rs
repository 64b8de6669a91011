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
    for package in packages(Family::Apt, PackageSet::Seed) {
        match status.get(*package) {
            Some((state, _)) if state == "ii" => {}
            Some((state, at)) => findings.at(
                Rule::DpkgNotInstalled,
                format!("{package} is `{state}`, not installed (`ii`)"),
                at.clone(),
            ),
            None => {
                if let Some(at) = missing_at {
                    findings.at(
                        Rule::DpkgNotInstalled,
                        format!("{package} is not in the dpkg -l capture: not installed"),
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
