//! Render: a plan → the bytes of each file. A job's manifest is built as a value
//! ([`manifest`]) and written as block YAML; the other files, and a manifest whose
//! template a user replaced, go through minijinja templates.
//!
//! Templates are embedded in the binary; `--templates DIR` overrides any of them by
//! file name. Every printed value goes through the YAML-safe escaper, and undefined
//! variables are errors.
//!
//! A user template is code from a repository anyone can change, so each render has a
//! work budget ([`TEMPLATE_FUEL`]) and a size limit ([`MAX_RENDERED_BYTES`]): a loop
//! that never ends, or output that grows without bound, fails that job's render
//! instead of hanging or exhausting memory.

mod block;
pub mod manifest;
mod yaml_scalar;

use std::path::Path;

use minijinja::value::Value;
use minijinja::{AutoEscape, Environment, ErrorKind, Output, State, UndefinedBehavior};
use rustix::fs::FileType;

pub use yaml_scalar::{quote, scalar};

use crate::diagnostics::suggest::closest;
use crate::error::Error;

pub const PYTORCHJOB: &str = "pytorchjob.yaml.j2";
pub const MPIJOB: &str = "mpijob.yaml.j2";
pub const STORAGE: &str = "storage.yaml.j2";
pub const POOL: &str = "pool.yaml.j2";
pub const TRAINJOB: &str = "trainjob.yaml.j2";
pub const TRAINING_RUNTIME: &str = "trainingruntime.yaml.j2";
/// `rdmagen smoke-test`: the rdmagen Job it hands the pipeline, and the ConfigMap
/// holding its script. Not overridable: they are inputs and a fixed script, not the
/// layout of a manifest.
pub const SMOKE_JOB: &str = "smoke/job.yaml.j2";
pub const SMOKE_CONFIGMAP: &str = "smoke/configmap.yaml.j2";
/// The ConfigMap holding the in-pod preflight's script (plan/preflight.rs). Not
/// overridable: a fixed script, not the layout of a manifest.
pub const PREFLIGHT_CONFIGMAP: &str = "preflight/configmap.yaml.j2";

const EMBEDDED: &[(&str, &str)] = &[
    (
        PYTORCHJOB,
        include_str!("../../templates/pytorchjob.yaml.j2"),
    ),
    (MPIJOB, include_str!("../../templates/mpijob.yaml.j2")),
    (STORAGE, include_str!("../../templates/storage.yaml.j2")),
    (POOL, include_str!("../../templates/pool.yaml.j2")),
    (TRAINJOB, include_str!("../../templates/trainjob.yaml.j2")),
    (
        TRAINING_RUNTIME,
        include_str!("../../templates/trainingruntime.yaml.j2"),
    ),
    (SMOKE_JOB, include_str!("../../templates/smoke/job.yaml.j2")),
    (
        SMOKE_CONFIGMAP,
        include_str!("../../templates/smoke/configmap.yaml.j2"),
    ),
    (
        PREFLIGHT_CONFIGMAP,
        include_str!("../../templates/preflight/configmap.yaml.j2"),
    ),
];

/// The template environment, built once per run.
pub struct Renderer {
    env: Environment<'static>,
    /// The templates `--templates` replaced: their output is parsed back to be
    /// checked, where the built-in ones' is built as a value ([`manifest`]).
    overridden: Vec<&'static str>,
}

impl Renderer {
    /// Embedded templates, each replaced by `DIR/<name>` when `overrides` holds one.
    pub fn new(overrides: Option<&Path>) -> Result<Self, Error> {
        let mut env = strict_environment();
        env.set_auto_escape_callback(|_| AutoEscape::Custom("yaml".into()));
        env.set_formatter(format_value);
        env.add_filter("comment", comment);
        env.add_filter("yaml", yaml_block);
        env.add_filter("literal", literal_block);
        let mut overridden = Vec::new();
        // A user's template is compiled now, so that a mistake in it is a usage error
        // before any job; an embedded one when first used (a run of PyTorchJobs uses
        // none: they are built as values), by the loader.
        if let Some(dir) = overrides {
            for (name, text) in user_templates(dir)? {
                env.add_template_owned(name, text)
                    .map_err(|e| Error::Usage(format!("template {name}: {e}")))?;
                overridden.push(name);
            }
        }
        env.set_loader(|name| {
            Ok(EMBEDDED
                .iter()
                .find(|(embedded, _)| *embedded == name)
                .map(|(_, text)| (*text).to_owned()))
        });
        Ok(Renderer { env, overridden })
    }

    /// Whether `template` is a user's (`--templates`), not the embedded one.
    pub fn is_overridden(&self, template: &str) -> bool {
        self.overridden.contains(&template)
    }

    /// Render `template` with `value` bound to the template variable `binding` (`job`
    /// for a Plan, `pool` for a detected pool). The renderer knows templates, not what
    /// they lay out.
    pub fn render(
        &self,
        template: &str,
        binding: &str,
        value: &impl serde::Serialize,
    ) -> Result<String, minijinja::Error> {
        let t = self.env.get_template(template)?;
        let context = std::collections::BTreeMap::from([(
            binding,
            Value::from(minijinja::value::Serde(value)),
        )]);
        render_bounded(&t, Value::from(context))
    }
}

/// The work one render may do, in minijinja fuel: about one unit per instruction
/// executed and per 64 bytes of data created. The built-in templates use under 1 000
/// for the largest example (measured over examples/ with minijinja 3.1's
/// `State::fuel_levels`); 1 000 000 leaves room for any reasonable user template and
/// stops a runaway one within about a second.
pub const TEMPLATE_FUEL: u64 = 1_000_000;

/// The largest file one render may produce: 1 MiB. A PyTorchJob is a few KiB, and the
/// Kubernetes API server rejects objects over 1.5 MiB anyway.
pub const MAX_RENDERED_BYTES: usize = 1 << 20;

/// Render `template` within [`TEMPLATE_FUEL`] and [`MAX_RENDERED_BYTES`]; running
/// out of either is an error that says which limit was hit, and where.
pub fn render_bounded(
    template: &minijinja::Template<'_, '_>,
    context: Value,
) -> Result<String, minijinja::Error> {
    let mut out = BoundedText::default();
    match template.render_captured_to(context, &mut out) {
        Ok(_) => Ok(String::from_utf8_lossy(&out.bytes).into_owned()),
        Err(e) if e.kind() == ErrorKind::OutOfFuel => Err(minijinja::Error::new(
            ErrorKind::OutOfFuel,
            format!(
                "the template did more than {TEMPLATE_FUEL} units of work, the most one \
                 render may do{}; a loop that does not end or grows too fast?",
                e.line()
                    .map(|n| format!(" (stopped at line {n})"))
                    .unwrap_or_default()
            ),
        )),
        Err(_) if out.overflowed => Err(minijinja::Error::new(
            ErrorKind::WriteFailure,
            format!(
                "the template wrote more than {MAX_RENDERED_BYTES} bytes, the most one \
                 rendered file may hold"
            ),
        )),
        Err(e) => Err(e),
    }
}

/// Rendered text that refuses to grow past [`MAX_RENDERED_BYTES`]: the write fails,
/// which stops the render at once.
#[derive(Default)]
struct BoundedText {
    bytes: Vec<u8>,
    overflowed: bool,
}

impl std::io::Write for BoundedText {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len() + buf.len() > MAX_RENDERED_BYTES {
            self.overflowed = true;
            return Err(std::io::Error::other("rendered output too large"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The built-in templates `--templates DIR` may replace: those of a job's files.
/// `pool.yaml.j2` is detect's, which takes no `--templates`; a Trainer runtime is a
/// platform team's object, written once per pool.
const OVERRIDABLE: &[&str] = &[PYTORCHJOB, MPIJOB, TRAINJOB, STORAGE];

/// The templates in `dir` that replace built-in ones, by name.
///
/// `--templates` that provides nothing is an error, not a silent fall-back to the
/// built-ins: a directory that is missing, not a directory, or holds none of the
/// [`OVERRIDABLE`] names. A `*.j2` file with any other name is an error too, not a
/// warning: it is certainly meant as a template and would never be used (e.g.
/// `pytorchjob.yml.j2`), and the run would otherwise succeed with the built-in one.
/// Other files (a README) are left alone. Templates are read as regular files only,
/// never through a symlink, and within `--max-file-size`.
fn user_templates(dir: &Path) -> Result<Vec<(&'static str, String)>, Error> {
    let usage = |what: String| {
        Error::Usage(format!(
            "--templates {}: {what}; rdmagen takes templates named {} from it",
            dir.display(),
            OVERRIDABLE.join(", ")
        ))
    };
    crate::files::refuse_symlinked_name(dir).map_err(|e| Error::io(dir, e))?;
    match crate::files::kind_of(dir).map_err(|e| Error::io(dir, e))? {
        None => return Err(usage("no such directory".to_owned())),
        Some(FileType::Directory) => {}
        Some(kind) => {
            return Err(usage(format!(
                "is {}, not a directory",
                crate::files::kind_name(kind)
            )));
        }
    }
    let mut entries: Vec<String> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(dir, e))?
        .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()
        .map_err(|e| Error::io(dir, e))?;
    entries.sort();
    let mut found = Vec::new();
    for file in &entries {
        if let Some(name) = OVERRIDABLE.iter().find(|name| *name == file) {
            found.push((*name, read(&dir.join(name))?));
        } else if file.ends_with(".j2") {
            let hint = closest(file, OVERRIDABLE.iter().copied())
                .map(|name| format!(" (did you mean {name}?)"))
                .unwrap_or_default();
            return Err(usage(format!(
                "{file} is not the name of a template rdmagen uses{hint}"
            )));
        }
    }
    if found.is_empty() {
        return Err(usage("holds no template".to_owned()));
    }
    Ok(found)
}

/// A template environment as rdmagen uses them: block tags leave no blank lines, the
/// final newline is kept, and an undefined value is an error, never an empty string.
pub fn strict_environment() -> Environment<'static> {
    let mut env = Environment::new();
    let mut syntax = minijinja::syntax::SyntaxConfig::builder();
    syntax
        .trim_blocks(true)
        .lstrip_blocks(true)
        .keep_trailing_newline(true);
    if let Ok(config) = syntax.build() {
        env.set_syntax(config);
    }
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_fuel(Some(TEMPLATE_FUEL));
    env
}

fn read(path: &Path) -> Result<String, Error> {
    crate::files::read_regular_text(path).map_err(|e| Error::io(path, e))
}

/// Text for a `# ...` comment line: control characters (line breaks among them)
/// become spaces, so a comment can never end early.
fn comment(text: &str) -> Value {
    let clean: String = text
        .chars()
        .map(|c| {
            if c.is_control() || crate::diagnostics::escape::is_bidi_control(c) {
                ' '
            } else {
                c
            }
        })
        .collect();
    // Nor can it hold a workflow command for a CI log the manifest is printed into.
    Value::from_safe_string(clean.replace("##[", "# #["))
}

/// `value` as block YAML, each line indented by `indent` spaces, without a final
/// newline: `{{ pod.spec|yaml(10) }}` on a line of its own. Every string goes through
/// [`scalar`], so no value can change the document's structure.
fn yaml_block(value: &Value, indent: usize) -> Result<Value, minijinja::Error> {
    let json: serde_json::Value = serde_json::to_value(value)
        .map_err(|e| minijinja::Error::new(ErrorKind::InvalidOperation, format!("yaml: {e}")))?;
    let mut out = String::new();
    block::write(&mut out, &json, indent);
    if out.ends_with('\n') {
        out.pop();
    }
    Ok(Value::from_safe_string(out))
}

/// `text` as a YAML literal block scalar (`|`) whose lines are indented by `indent`
/// spaces, for a file held in a manifest (a script in a ConfigMap) that people read:
/// `key: {{ script|literal(4) }}`. Only text a literal block holds exactly takes that
/// form: it ends with one line break, its first line does not start with a space
/// (that would need an indentation indicator), no line starts with a tab or ends
/// with whitespace, and it holds no other control character but tab and none of the
/// characters YAML 1.1 reads as line breaks. Anything else is written as a
/// double-quoted scalar ([`quote`]), which holds any text.
fn literal_block(text: &str, indent: usize) -> Value {
    let body = text.strip_suffix('\n').unwrap_or("");
    let fits = indent > 0
        && !body.is_empty()
        && !body.ends_with('\n')
        && !body.starts_with(' ')
        // A line of a literal block is printed as it is: one that would be a GitHub
        // workflow command in a CI log is quoted instead (see `quote`).
        && !body.contains("##[")
        && body.split('\n').all(|line| {
            !line
                .trim_start_matches(crate::diagnostics::escape::may_precede_a_command)
                .starts_with("::")
                && !line.starts_with('\t')
                && !line.ends_with([' ', '\t'])
                && !line.chars().any(|c| {
                    (c.is_control() && c != '\t')
                        || crate::diagnostics::escape::is_bidi_control(c)
                        || matches!(
                            c,
                            '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'
                        )
                })
        });
    if !fits {
        return Value::from_safe_string(quote(text));
    }
    let mut out = String::from("|");
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.extend(std::iter::repeat_n(' ', indent));
            out.push_str(line);
        }
    }
    Value::from_safe_string(out)
}

/// Writes every interpolated value as YAML: strings plain when unambiguous, otherwise double-quoted and escaped,
/// numbers and booleans bare, none as null, sequences and maps in flow style.
fn format_value(
    out: &mut Output<'_>,
    state: &mut State<'_, '_>,
    value: &Value,
) -> Result<(), minijinja::Error> {
    if value.is_safe() || !matches!(state.auto_escape(), AutoEscape::Custom(name) if name == "yaml")
    {
        return write!(out, "{value}").map_err(minijinja::Error::from);
    }
    if let Some(s) = value.as_str() {
        return out.write_str(&scalar(s)).map_err(minijinja::Error::from);
    }
    write!(out, "{}", yaml_flow(value)).map_err(minijinja::Error::from)
}

fn yaml_flow(value: &Value) -> String {
    use minijinja::value::ValueKind;
    match value.kind() {
        ValueKind::Undefined | ValueKind::None => "null".to_owned(),
        // minijinja writes booleans as Jinja does (`True`); YAML's own spelling is
        // lower-case, and YAML 1.2 parsers need not read `True`.
        ValueKind::Bool => if value.is_true() { "true" } else { "false" }.to_owned(),
        ValueKind::Number => value.to_string(),
        ValueKind::Seq | ValueKind::Iterable => {
            let items: Vec<String> = value
                .try_iter()
                .map(|it| it.map(|v| yaml_flow(&v)).collect())
                .unwrap_or_default();
            format!("[{}]", items.join(", "))
        }
        ValueKind::Map => {
            let entries: Vec<String> = value
                .try_iter()
                .map(|it| {
                    it.map(|k| {
                        let v = value.get_item(&k).unwrap_or_default();
                        format!("{}: {}", yaml_flow(&k), yaml_flow(&v))
                    })
                    .collect()
                })
                .unwrap_or_default();
            format!("{{{}}}", entries.join(", "))
        }
        _ => match value.as_str() {
            Some(s) => scalar(s),
            None => scalar(&value.to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `key: {{ text|literal(4) }}` reads back as exactly `text`: a literal block when
    /// it can be one, a double-quoted scalar otherwise.
    #[test]
    fn literal_blocks_read_back_as_the_text() {
        let mut env = strict_environment();
        env.add_filter("literal", literal_block);
        env.add_template("t", "a:\n  key: {{ text|literal(4) }}\n")
            .unwrap();
        let cases = [
            ("#!/bin/sh\n\nif x; then\n  echo \"a: b # c\"\nfi\n", true),
            ("one line\n", true),
            ("no final newline", false),
            ("two final newlines\n\n", false),
            (" leading space\n", false),
            ("trailing space \n", false),
            ("\ttab first\n", false),
            ("line\n\tindented by a tab\n", false),
            ("bell \u{7}\n", false),
            ("line separator \u{2028}\n", false),
            ("", false),
        ];
        for (text, literal) in cases {
            let rendered = env
                .get_template("t")
                .unwrap()
                .render(minijinja::context! {text})
                .unwrap();
            assert_eq!(
                rendered.contains("key: |\n"),
                literal,
                "{text:?}: {rendered}"
            );
            let back = crate::yaml::tree_value::parse_values(&rendered).unwrap();
            assert_eq!(back[0]["a"]["key"], text, "{text:?}: {rendered}");
        }
    }
}
