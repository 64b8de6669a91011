//! `rdmagen krm`: lint as a kustomize KRM function (`kustomize build
//! --enable-alpha-plugins --enable-exec`, an exec function in `validators:` or
//! `transformers:`).

use std::path::Path;
use std::sync::Arc;

use clap::Args;

use super::Streams;
use super::lint::ClusterArgs;
use super::output_args::OutputArgs;
use crate::diagnostics::escape::shown;
use crate::error::Error;
use crate::krm;
use crate::rules::lint;
use crate::yaml::tree::parse_documents;
use crate::yaml::tree_value::to_value;

#[derive(Debug, Args)]
pub struct KrmArgs {
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub print: OutputArgs,
    #[command(flatten)]
    pub rules: super::rule_args::RuleArgs,
}

/// Read a ResourceList on stdin, lint its items as `lint` lints a `List`, and write
/// it to stdout with a result per finding; findings also go to stderr, in `--format`.
/// The items are written back as they were read (the same values; comments and
/// layout are not kept, as kustomize keeps none). `functionConfig` is read by no rule:
/// settings come from the function's `args` and .rdmagen.yaml.
pub fn run(args: &KrmArgs, s: &super::Settings, io: &mut Streams<'_>) -> Result<(), Error> {
    let name: Arc<str> = Arc::from(crate::files::stdin_name());
    let failed = |e| Error::io(Path::new(&*name), e);
    let bytes = crate::files::read_stdin().map_err(failed)?;
    let text = String::from_utf8(bytes)
        .map_err(|e| failed(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    let not_a_list = |what: String| {
        Error::Usage(format!(
            "{name}: a KRM function reads one ResourceList (kind {}, apiVersion {}); {what}",
            krm::KIND,
            krm::API_VERSION
        ))
    };
    let documents = parse_documents(&name, &text)
        .map_err(|e| not_a_list(format!("line {}: {}", e.line, shown(&e.message))))?;
    let [document] = &documents[..] else {
        return Err(not_a_list(format!(
            "it holds {} documents",
            documents.len()
        )));
    };
    let list = to_value(&document.root);
    if !krm::is_resource_list(&list) {
        let said = |key: &str| list[key].as_str().map_or("none".into(), shown);
        return Err(not_a_list(format!(
            "this one says kind {} and apiVersion {}",
            said("kind"),
            said("apiVersion")
        )));
    }
    let facts = args.cluster.facts();
    let policy = s.reporting_policy();
    let linted = lint::lint_stream(name, text, &facts, args.cluster.trainer(), &policy);
    let answer = crate::output::krm::resource_list(&list, &document.root, &linted.findings);
    let yaml = serde_saphyr::to_string(&answer)
        .map_err(|e| Error::io(Path::new("<stdout>"), std::io::Error::other(e.to_string())))?;
    io.out.write_all(yaml.as_bytes()).map_err(super::stdout)?;
    super::present::findings_beside(io, &linted.findings, &linted.sources, &s.print)?;
    super::exit::verdict(&linted.findings, &s.print, "", false)
}
