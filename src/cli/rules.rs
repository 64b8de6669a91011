//! `rdmagen rules` and `rdmagen explain`.

use clap::Args;

use super::rule_args::{Offering, rule_ids};
use super::{Streams, stdout};
use crate::diagnostics::escape::printable;
use crate::diagnostics::rule::{CATALOGUE, RuleInfo};
use crate::diagnostics::suggest::near_ids;
use crate::error::Error;
use crate::output::json;

#[derive(Debug, Args)]
pub struct RulesArgs {
    /// Print the catalogue as text or JSON.
    #[arg(long, value_enum, default_value_t = RulesFormat::Human)]
    pub format: RulesFormat,
}

/// The formats the catalogue has: the findings formats (brief, github, sarif, ...)
/// describe findings, and clap refuses them here rather than printing text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RulesFormat {
    /// One line per rule: ID, severity, summary.
    Human,
    /// A JSON array with every field of every rule.
    Json,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A rule ID such as RDG020.
    #[arg(value_name = "ID", value_parser = Offering::new(clap::builder::StringValueParser::new(), rule_ids), hide_possible_values = true)]
    pub id: String,
}

pub fn list(args: &RulesArgs, io: &mut Streams<'_>) -> Result<(), Error> {
    if args.format == RulesFormat::Json {
        let rules: Vec<_> = CATALOGUE
            .iter()
            .map(|r| {
                serde_json::json!({
                    "id": r.id,
                    "severity": r.severity,
                    "summary": r.summary,
                    "explanation": r.explanation,
                    "source": r.source,
                })
            })
            .collect();
        return json::document(io.out, &serde_json::Value::Array(rules)).map_err(stdout);
    }
    for r in CATALOGUE {
        writeln!(
            io.out,
            "{}  {:<7}  {}",
            r.id,
            r.severity.to_string(),
            r.summary
        )
        .map_err(stdout)?;
    }
    Ok(())
}

pub fn explain(args: &ExplainArgs, io: &mut Streams<'_>) -> Result<(), Error> {
    let Some(rule) = RuleInfo::by_id(args.id.trim()) else {
        let near = near_ids(&args.id, CATALOGUE.iter().map(|r| r.id));
        let hint = match near.as_slice() {
            [] => {
                // The catalogue is in the order rules were written next to their
                // kin, not by ID; IDs are all RDG and three digits, so text order is ID order.
                let first = CATALOGUE.iter().map(|r| r.id).min().unwrap_or_default();
                let last = CATALOGUE.iter().map(|r| r.id).max().unwrap_or_default();
                format!("; rule IDs run from {first} to {last}, and `rdmagen rules` lists them")
            }
            [id] => format!("; did you mean {id}?"),
            ids => format!("; did you mean one of {}?", ids.join(", ")),
        };
        return Err(Error::Usage(format!(
            "no rule `{}`{hint}",
            printable(&args.id)
        )));
    };
    writeln!(
        io.out,
        "{} ({}): {}\n\n{}\n\nSource: {}\nPage: {}",
        rule.id,
        rule.severity,
        rule.summary,
        rule.explanation,
        rule.source,
        crate::output::rule_page::page_uri(rule.id)
    )
    .map_err(stdout)
}
