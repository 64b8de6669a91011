//! Render: Plan → text through minijinja templates.
//!
//! Templates are embedded in the binary; `--templates DIR` overrides any of them by
//! file name. Every printed value goes through the YAML-safe escaper, and undefined
//! variables are errors.

mod yaml_scalar;

use std::path::Path;

use minijinja::value::Value;
use minijinja::{AutoEscape, Environment, Output, State, UndefinedBehavior};

pub use yaml_scalar::{quote, scalar};

use crate::diag::detect::PoolDraft;
use crate::error::Error;
use crate::plan::Plan;

pub const PYTORCHJOB: &str = "pytorchjob.yaml.j2";
pub const STORAGE: &str = "storage.yaml.j2";
pub const POOL: &str = "pool.yaml.j2";

const EMBEDDED: &[(&str, &str)] = &[
    (
        PYTORCHJOB,
        include_str!("../../templates/pytorchjob.yaml.j2"),
    ),
    (STORAGE, include_str!("../../templates/storage.yaml.j2")),
    (POOL, include_str!("../../templates/pool.yaml.j2")),
];

/// The template environment, built once per run.
pub struct Renderer {
    env: Environment<'static>,
}

impl Renderer {
    /// Embedded templates, each replaced by `DIR/<name>` when `overrides` holds one.
    pub fn new(overrides: Option<&Path>) -> Result<Self, Error> {
        let mut env = strict_environment();
        env.set_auto_escape_callback(|_| AutoEscape::Custom("yaml".into()));
        env.set_formatter(format_value);
        env.add_filter("comment", comment);
        for (name, embedded) in EMBEDDED {
            let source = match overrides.map(|dir| dir.join(name)) {
                Some(path) if path.is_file() => read(&path)?,
                _ => (*embedded).to_owned(),
            };
            env.add_template_owned(*name, source)
                .map_err(|e| Error::Usage(format!("template {name}: {e}")))?;
        }
        Ok(Renderer { env })
    }

    /// Render one template for one plan.
    pub fn render(&self, template: &str, plan: &Plan) -> Result<String, minijinja::Error> {
        let t = self.env.get_template(template)?;
        t.render(minijinja::context! { job => Value::from(minijinja::value::Serde(plan)) })
    }

    /// Render the pool template for a detected pool.
    pub fn render_pool(&self, pool: &PoolDraft) -> Result<String, minijinja::Error> {
        let t = self.env.get_template(POOL)?;
        t.render(minijinja::context! { pool => Value::from(minijinja::value::Serde(pool)) })
    }
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
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    Value::from_safe_string(clean)
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
        ValueKind::Bool | ValueKind::Number => value.to_string(),
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
