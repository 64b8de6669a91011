//! The input options of every command that reads files: standard input's name, what
//! a directory walk leaves out, and whether finding nothing is an error.

use std::path::PathBuf;

use clap::Args;
use globset::{GlobSet, GlobSetBuilder};

use crate::error::Error;
use crate::pipeline::Request;

/// What `-` (standard input) is called in messages.
#[derive(Debug, Args)]
pub struct StdinArgs {
    /// The file name standard input (`-`) goes by in findings and errors, e.g. the
    /// chart template it came from.
    #[arg(long, value_name = "NAME", default_value = crate::files::DEFAULT_STDIN_NAME, help_heading = "Input")]
    pub stdin_filename: String,
}

impl StdinArgs {
    /// Name standard input, and refuse `-` named more than once among `paths`: a
    /// stream can be read only once.
    pub fn apply<'a>(&self, paths: impl IntoIterator<Item = &'a PathBuf>) -> Result<(), Error> {
        let stdin = paths
            .into_iter()
            .filter(|p| crate::files::is_stdin(p))
            .count();
        if stdin > 1 {
            return Err(Error::Usage(format!(
                "`-` (standard input) is named {stdin} times; it can be read only once"
            )));
        }
        crate::files::set_stdin_name(&self.stdin_filename);
        Ok(())
    }
}

/// The options of a command that walks directories for its inputs.
#[derive(Debug, Args)]
pub struct InputArgs {
    #[command(flatten)]
    pub stdin: StdinArgs,
    /// Skip the files and directories below a walked directory whose path matches GLOB
    /// (repeatable). The path is the one findings print: the directory as given on the
    /// command line joined with the names below it (`jobs/old/a.yaml` for `jobs`,
    /// `./jobs/old/a.yaml` for `./jobs`). `*` and `?` never match `/`; `**` matches
    /// any number of directories: `--exclude 'jobs/old'` skips that directory,
    /// `--exclude '**/draft-*.yaml'` such files anywhere. A file named on the command
    /// line is always read.
    #[arg(long, value_name = "GLOB", help_heading = "Input")]
    pub exclude: Vec<String>,
    /// Succeed (exit 0, with the format's empty output) when there is nothing to read
    /// instead of failing with exit 2.
    #[arg(long, help_heading = "Input")]
    pub allow_empty: bool,
}

impl InputArgs {
    /// [`StdinArgs::apply`], then the `--exclude` patterns compiled into one set.
    pub fn apply<'a>(
        &self,
        paths: impl IntoIterator<Item = &'a PathBuf>,
    ) -> Result<GlobSet, Error> {
        self.stdin.apply(paths)?;
        exclusions(&self.exclude)
    }

    /// What `render` and `validate` ask of the pipeline: the Jobs in `inputs` (less
    /// `--exclude`), the configured pools, the templates and the rule levels.
    pub fn request(
        &self,
        inputs: &[PathBuf],
        templates: Option<&PathBuf>,
        s: &super::Settings,
    ) -> Result<Request, Error> {
        Ok(Request {
            inputs: inputs.to_vec(),
            documents: Vec::new(),
            pools: s.pools.clone(),
            templates: templates.cloned(),
            exclude: self.apply(inputs.iter().chain(&s.pools))?,
            allow_empty: self.allow_empty,
            policy: s.rendering_policy()?,
        })
    }
}

/// `--exclude` patterns as one set; a malformed pattern is a usage error naming it.
fn exclusions(patterns: &[String]) -> Result<GlobSet, Error> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let glob = crate::diagnostics::policy::path_glob(pattern)
            .map_err(|why| Error::Usage(format!("--exclude {pattern}: {why}")))?;
        set.add(glob);
    }
    set.build()
        .map_err(|e| Error::Usage(format!("--exclude: {e}")))
}
