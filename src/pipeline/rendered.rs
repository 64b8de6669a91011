//! What the pipeline hands a sink: a job's generated files and its decisions.

use crate::plan::Decision;

/// One generated file, relative to the output directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputFile {
    pub path: String,
    pub text: String,
}

#[derive(Debug)]
pub struct RenderedJob {
    pub name: String,
    pub pool: String,
    pub files: Vec<OutputFile>,
    pub decisions: Vec<Decision>,
}

/// Jobs' manifests as one multi-document YAML stream, in the order given (a
/// [`Collect`] gives input order). Dockerfiles are only written with `-o`.
pub fn stream(jobs: &[RenderedJob]) -> String {
    let docs: Vec<&str> = jobs
        .iter()
        .flat_map(|j| j.files.iter())
        .filter(|f| f.path.ends_with(".yaml"))
        .map(|f| f.text.as_str())
        .collect();
    docs.join("---\n")
}
