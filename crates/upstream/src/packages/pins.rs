//! `--pin FILE`: `name=version` lines that pin RDMA packages.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diagnostics::{Finding, Location, Rule};
use crate::packages::{Family, all};

/// Package versions by name.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pins(pub BTreeMap<String, String>);

impl Pins {
    /// Parse a pin file: `name=version` per line, `#` comments and blank lines
    /// ignored. A name must be one rdmagen installs for `family`; a version may hold
    /// only characters package versions use, so nothing can reach the shell. Each line
    /// that cannot be used is an RDG finding at its place in `file`.
    pub fn parse(file: &Arc<str>, text: &str, family: Family) -> Result<Pins, Vec<Finding>> {
        let known = all(family);
        let mut pins = BTreeMap::new();
        let mut errors = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let indent = raw.len() - raw.trim_start().len();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err = |column: usize, message: String| {
                let at = Location {
                    file: file.clone(),
                    line: i + 1,
                    column: indent + column + 1,
                };
                Finding::new(Rule::PinInvalid, message, Some(at))
            };
            let Some((name, version)) = line.split_once('=') else {
                errors.push(err(
                    0,
                    format!("`{}` is not `name=version`", line.escape_debug()),
                ));
                continue;
            };
            let (name, version) = (name.trim(), version.trim());
            if !known.contains(&name) {
                errors.push(err(
                    0,
                    format!(
                        "`{}` is not an RDMA package rdmagen installs with {} ({})",
                        name.escape_debug(),
                        family.name(),
                        known.join(", ")
                    ),
                ));
            } else if !valid_version(version) {
                errors.push(err(
                    line.find('=').unwrap_or(0) + 1,
                    format!(
                        "version `{}` of {name} may hold only letters, digits and . + ~ : _ -",
                        version.escape_debug()
                    ),
                ));
            } else if pins.insert(name.to_owned(), version.to_owned()).is_some() {
                errors.push(err(0, format!("{name} is pinned twice")));
            }
        }
        if errors.is_empty() {
            Ok(Pins(pins))
        } else {
            Err(errors)
        }
    }
}

fn valid_version(v: &str) -> bool {
    !v.is_empty()
        && v.starts_with(|c: char| c.is_ascii_alphanumeric())
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '~' | ':' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, family: Family) -> Result<Pins, Vec<Finding>> {
        Pins::parse(&Arc::from("pins.txt"), text, family)
    }

    #[test]
    fn parses_pins_and_rejects_injection() {
        let pins = parse(
            "# bookworm\nlibibverbs1=44.0-2\n\nperftest = 4.5+0.17-1\n",
            Family::Apt,
        )
        .unwrap();
        assert_eq!(pins.0["perftest"], "4.5+0.17-1");
        let errors = parse(
            "libibverbs1=44.0-2; rm -rf /\nnot-a-pkg=1\nnoequals\n",
            Family::Apt,
        )
        .unwrap_err();
        let places: Vec<_> = errors
            .iter()
            .map(|e| (e.rule, e.location.as_ref().map(|at| (at.line, at.column))))
            .collect();
        let at = |line, column| (Rule::PinInvalid, Some((line, column)));
        assert_eq!(places, [at(1, 13), at(2, 1), at(3, 1)]);
        assert!(parse("libibverbs1=$(id)\n", Family::Apt).is_err());
        assert!(parse("libibverbs1=1\nlibibverbs1=2\n", Family::Apt).is_err());
        assert!(parse("libibverbs=54.0-1.el9\n", Family::Dnf).is_ok());
    }
}
