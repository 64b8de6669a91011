//! The output options of every command that prints findings or differences.

use clap::Args;

use crate::output::{ColorChoice, Format};

/// How findings and differences are printed, and whether warnings fail the run.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// How findings are printed.
    #[arg(long, value_enum, default_value_t = Format::Human, help_heading = "Output")]
    pub format: Format,
    /// When to colour human output (auto follows NO_COLOR, CLICOLOR, CLICOLOR_FORCE and TERM).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, help_heading = "Output")]
    pub color: ColorChoice,
    /// Exit 1 when there are warnings, not only errors.
    #[arg(long, help_heading = "Output")]
    pub deny_warnings: bool,
}

impl Default for OutputArgs {
    /// The defaults clap gives, for the commands that take no output options.
    fn default() -> Self {
        OutputArgs {
            format: Format::Human,
            color: ColorChoice::Auto,
            deny_warnings: false,
        }
    }
}
