//! The rule options of every command that runs rules: `--disable`, `--severity` and
//! `--min-severity`, in hadolint's and ruff's conventions. They go on the
//! configuration file's levels and win over them.

use clap::Args;

use crate::diagnostics::policy::{Level, parse_severity};
use crate::diagnostics::{Policy, Rule, RuleInfo, Severity};

#[derive(Debug, Clone, Default, Args)]
pub struct RuleArgs {
    /// Turn rules off (repeatable, or IDs separated by commas): --disable RDG047.
    #[arg(long, value_name = "RULE", value_delimiter = ',', value_parser = parse_rule, help_heading = "Rules")]
    pub disable: Vec<Rule>,
    /// Set a rule's level (repeatable): --severity RDG013=error; LEVEL is off, info,
    /// warning or error.
    #[arg(long, value_name = "RULE=LEVEL", value_parser = parse_rule_level, help_heading = "Rules")]
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
