//! The rule options of every command that runs rules: `--disable`, `--severity` and
//! `--min-severity`, in hadolint's and ruff's conventions. They go on the
//! configuration file's levels and win over them.

use std::ffi::OsStr;
use std::sync::OnceLock;

use clap::Args;
use clap::builder::{PossibleValue, TypedValueParser};

use crate::diagnostics::policy::{Level, parse_severity};
use crate::diagnostics::rule::CATALOGUE;
use crate::diagnostics::{Policy, Rule, RuleInfo, Severity};

#[derive(Debug, Clone, Default, Args)]
pub struct RuleArgs {
    /// Turn rules off (repeatable, or IDs separated by commas): --disable RDG047.
    #[arg(long, value_name = "RULE", value_delimiter = ',', value_parser = Offering::new(parse_rule, waivable_ids), hide_possible_values = true, help_heading = "Rules")]
    pub disable: Vec<Rule>,
    /// Set a rule's level (repeatable): --severity RDG013=error; LEVEL is off, info,
    /// warning or error.
    #[arg(long, value_name = "RULE=LEVEL", value_parser = Offering::new(parse_rule_level, rule_levels), hide_possible_values = true, help_heading = "Rules")]
    pub severity: Vec<(Rule, Level)>,
    /// Report only findings at LEVEL or above: info (all), warning or error.
    #[arg(long, value_name = "LEVEL", value_parser = parse_floor, help_heading = "Rules")]
    pub min_severity: Option<Severity>,
}

impl RuleArgs {
    /// The levels for a run that writes output (render, validate, detect,
    /// dockerfile): a level set for a rule whose waiver would change that output
    /// without a word is a usage error.
    pub fn rendering_policy(&self, file: &Policy) -> Result<Policy, crate::error::Error> {
        let policy = self.policy(file);
        let refused = policy.refused();
        if refused.is_empty() {
            return Ok(policy);
        }
        Err(crate::error::Error::Usage(format!(
            "{} cannot be turned off or re-graded when rendering: {}",
            refused.join(", "),
            crate::diagnostics::policy::FIXED
        )))
    }

    /// The levels for a run that only reports (lint, image-check): every rule but a
    /// file that cannot be read may be waived.
    pub fn reporting_policy(&self, file: &Policy) -> Policy {
        let mut policy = self.policy(file);
        policy.renders = false;
        policy
    }

    /// The configuration file's levels (`file`) with the command line's on top.
    fn policy(&self, file: &Policy) -> Policy {
        let mut policy = file.clone();
        for rule in &self.disable {
            policy.command_line.set(*rule, Level::Off, "--disable");
        }
        for (rule, level) in &self.severity {
            policy.command_line.set(*rule, *level, "--severity");
        }
        if let Some(floor) = self.min_severity {
            policy.min_severity = floor;
            policy.floor_from_config = false;
        }
        policy
    }
}

fn parse_rule(text: &str) -> Result<Rule, String> {
    match RuleInfo::by_id(text.trim()) {
        Some(info) if info.syntax => Err(format!(
            "{} cannot be turned off or re-graded: {}",
            info.id,
            crate::diagnostics::policy::FIXED
        )),
        Some(info) => Ok(info.rule),
        None => Err(format!("no rule `{text}`; `rdmagen rules` lists them")),
    }
}

fn parse_rule_level(text: &str) -> Result<(Rule, Level), String> {
    let (rule, level) = text
        .split_once('=')
        .ok_or_else(|| format!("`{text}` is not RULE=LEVEL, e.g. RDG013=error"))?;
    let level = Level::parse(level.trim()).ok_or_else(|| {
        format!(
            "`{level}` is not a level: write one of {}",
            Level::NAMES.join(", ")
        )
    })?;
    Ok((parse_rule(rule)?, level))
}

fn parse_floor(text: &str) -> Result<Severity, String> {
    parse_severity(text)
        .ok_or_else(|| format!("`{text}` is not a severity: write info, warning or error"))
}

/// A value parser that parses as `parse` does and offers `offers` to shell completion
/// (clap_complete writes a parser's possible values into the script). The arguments
/// hide them from `--help`: a list of every rule would bury the option.
#[derive(Clone)]
pub(super) struct Offering<F> {
    parse: F,
    offers: fn() -> Vec<PossibleValue>,
}

impl<F> Offering<F> {
    pub(super) fn new(parse: F, offers: fn() -> Vec<PossibleValue>) -> Self {
        Offering { parse, offers }
    }
}

impl<F: TypedValueParser> TypedValueParser for Offering<F> {
    type Value = F::Value;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Self::Value, clap::Error> {
        self.parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new((self.offers)().into_iter()))
    }
}

/// Every rule's ID, with its summary as the help zsh and fish show beside it.
pub(super) fn rule_ids() -> Vec<PossibleValue> {
    CATALOGUE.iter().map(id_value).collect()
}

fn id_value(info: &'static RuleInfo) -> PossibleValue {
    PossibleValue::new(info.id).help(info.summary)
}

/// The IDs `--disable` takes: not those of a file that cannot be read.
fn waivable_ids() -> Vec<PossibleValue> {
    CATALOGUE
        .iter()
        .filter(|r| !r.syntax)
        .map(id_value)
        .collect()
}

/// `RULE=LEVEL` for every rule `--severity` takes and every level.
fn rule_levels() -> Vec<PossibleValue> {
    // clap's values borrow 'static text; the pairs are made once per process.
    static PAIRS: OnceLock<Vec<String>> = OnceLock::new();
    let pairs = PAIRS.get_or_init(|| {
        CATALOGUE
            .iter()
            .filter(|r| !r.syntax)
            .flat_map(|r| Level::NAMES.iter().map(move |l| format!("{}={l}", r.id)))
            .collect()
    });
    pairs
        .iter()
        .map(|p| PossibleValue::new(p.as_str()))
        .collect()
}
