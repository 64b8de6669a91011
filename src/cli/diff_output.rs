//! How a comparison (render --check, diff) is printed: unified diffs, a structural
//! summary with identical changes grouped across files, or brief/JSON/GitHub forms.

use std::io::Write;

use serde_json::json;

use super::output::{Format, escape_data, escape_property};
use crate::diagnostics::escape::printable;
use crate::golden::semantic::{self, Change};
use crate::golden::unified::{self, Unified};
use crate::golden::{Comparison, FileDiff, Status};

pub struct Labels<'a> {
    /// Prefix of old paths, e.g. the golden directory.
    pub old: &'a str,
    /// Prefix of new paths, or a fixed label such as "rendered".
    pub new: &'a str,
    /// Whether `new` is a directory prefix (diff) or a fixed label (render --check).
    pub new_is_dir: bool,
}

impl Labels<'_> {
    fn old_path(&self, f: &FileDiff) -> String {
        join(self.old, &f.path)
    }

    fn new_path(&self, f: &FileDiff) -> String {
        if self.new_is_dir {
            join(self.new, &f.path)
        } else {
            self.new.to_owned()
        }
    }

    /// The path a reviewer looks at: the new side for files only it has (diff).
    fn shown(&self, f: &FileDiff) -> String {
        if f.status == Status::Missing && self.new_is_dir {
            self.new_path(f)
        } else {
            self.old_path(f)
        }
    }

    /// How a file that only one side has is described.
    fn one_sided(&self, status: Status) -> &'static str {
        match (status, self.new_is_dir) {
            (Status::Missing, false) => "missing: the render produces this file",
            (Status::Stale, false) => "stale: no input renders this file",
            (Status::Missing, true) => "added: only the new side has this file",
            _ => "removed: only the old side has this file",
        }
    }
}

fn join(prefix: &str, path: &str) -> String {
    if prefix.is_empty() {
        path.to_owned()
    } else {
        format!("{}/{path}", prefix.trim_end_matches('/'))
    }
}

/// Print a comparison in the chosen format (the structural summary with --semantic or
/// on a terminal); differences become the run's outcome (exit 1).
pub fn report(
    io: &mut super::Streams<'_>,
    cmp: &Comparison,
    labels: &Labels<'_>,
    args: &super::output::OutputArgs,
    semantic: bool,
) -> Result<(), crate::error::Error> {
    let semantic = semantic || io.terminal.stdout;
    let color = args.colored(io.terminal.stdout);
    write(io.out, cmp, labels, args.format, semantic, color);
    if cmp.is_clean() {
        let _ = writeln!(io.err, "{}", cmp.summary());
        Ok(())
    } else {
        Err(crate::error::Error::Differences {
            summary: cmp.summary(),
        })
    }
}

pub fn write(
    w: &mut dyn Write,
    cmp: &Comparison,
    labels: &Labels<'_>,
    format: Format,
    semantic: bool,
    color: bool,
) {
    match format {
        Format::Human => human(w, cmp, labels, semantic, color),
        Format::Brief => {
            for f in cmp.changed() {
                let mark = match f.status {
                    Status::Differs => 'M',
                    Status::Missing => 'A',
                    Status::Stale => 'D',
                    Status::Same => continue,
                };
                let _ = writeln!(w, "{mark} {}", printable(&labels.shown(f)));
            }
        }
        Format::Json => {
            let files: Vec<_> = cmp
                .changed()
                .map(|f| {
                    let u = unified_of(f, labels);
                    json!({
                        "path": labels.shown(f),
                        "status": f.status,
                        "note": u.note,
                        "changes": changes_of(f).unwrap_or_default(),
                        "diff": u.text,
                    })
                })
                .collect();
            let doc = json!({
                "checked": cmp.files.len() - cmp.count(Status::Stale),
                "differ": cmp.count(Status::Differs),
                "missing": cmp.count(Status::Missing),
                "stale": cmp.count(Status::Stale),
                "files": files,
            });
            let _ = writeln!(
                w,
                "{}",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            );
        }
        Format::Github => {
            for f in cmp.changed() {
                let u = unified_of(f, labels);
                let message = match f.status {
                    Status::Differs => {
                        let first = changes_of(f)
                            .ok()
                            .and_then(|c| c.first().map(ToString::to_string));
                        format!(
                            "differs from the rendered output{}",
                            first.map(|c| format!(": {c}")).unwrap_or_default()
                        )
                    }
                    Status::Missing | Status::Stale => labels.one_sided(f.status).to_owned(),
                    Status::Same => continue,
                };
                let _ = writeln!(
                    w,
                    "::error file={},line={},title={}::{}",
                    escape_property(&labels.shown(f)),
                    u.first_old_line.unwrap_or(1),
                    escape_property("rdmagen golden"),
                    escape_data(&message)
                );
            }
        }
    }
}

fn unified_of(f: &FileDiff, labels: &Labels<'_>) -> Unified {
    let old_name = match f.status {
        Status::Missing => "/dev/null".to_owned(),
        _ => labels.old_path(f),
    };
    let new_name = match f.status {
        Status::Stale => "/dev/null".to_owned(),
        _ => labels.new_path(f),
    };
    // The names go into the `---`/`+++` headers of a text that is later split at line
    // breaks, so a line break in a path must be escaped before, not after.
    unified::diff(
        f.old.as_deref().unwrap_or(""),
        f.new.as_deref().unwrap_or(""),
        &printable(&old_name),
        &printable(&new_name),
    )
}

fn changes_of(f: &FileDiff) -> Result<Vec<Change>, String> {
    match (f.status, &f.old, &f.new) {
        (Status::Differs, Some(old), Some(new)) if is_yaml(&f.path) => semantic::changes(old, new),
        _ => Ok(Vec::new()),
    }
}

fn is_yaml(path: &str) -> bool {
    path.ends_with(".yaml") || path.ends_with(".yml")
}

fn human(w: &mut dyn Write, cmp: &Comparison, labels: &Labels<'_>, semantic: bool, color: bool) {
    if semantic && !cmp.is_clean() {
        summary(w, cmp, labels, color);
    }
    for f in cmp.changed() {
        let u = unified_of(f, labels);
        if let Some(note) = &u.note {
            put(
                w,
                &format!("{}: {note}", labels.old_path(f)),
                Style::Plain,
                color,
            );
        }
        // Split on LF only: a CR left at a line's end is shown (escaped), not dropped.
        for line in u.text.split_terminator('\n') {
            put(w, line, Style::DiffLine, color);
        }
    }
}

/// Files with the same structural changes are listed together, so a pool change that
/// touches 40 manifests reads as one change "in 40 files".
fn summary(w: &mut dyn Write, cmp: &Comparison, labels: &Labels<'_>, color: bool) {
    let mut groups: Vec<(Vec<Change>, Vec<String>)> = Vec::new();
    for f in cmp.files.iter().filter(|f| f.status == Status::Differs) {
        let changes = match changes_of(f) {
            Ok(c) if !c.is_empty() => c,
            Ok(_) => continue,
            Err(e) => {
                let line = format!("{}: not compared structurally ({e})", labels.old_path(f));
                put(w, &line, Style::Plain, color);
                continue;
            }
        };
        match groups.iter_mut().find(|(c, _)| *c == changes) {
            Some((_, files)) => files.push(labels.old_path(f)),
            None => groups.push((changes, vec![labels.old_path(f)])),
        }
    }
    for (changes, files) in &groups {
        let head = match files.as_slice() {
            [one] => one.clone(),
            many => {
                let shown: Vec<&str> = many.iter().take(3).map(String::as_str).collect();
                let more = if many.len() > 3 {
                    format!(", and {} more", many.len() - 3)
                } else {
                    String::new()
                };
                format!(
                    "same change in {} files: {}{more}",
                    many.len(),
                    shown.join(", ")
                )
            }
        };
        put(w, &head, Style::Bold, color);
        for c in changes {
            put(w, &format!("  {c}"), Style::Plain, color);
        }
    }
    for f in cmp.changed().filter(|f| f.status != Status::Differs) {
        let line = format!("{}: {}", labels.shown(f), labels.one_sided(f.status));
        put(w, &line, Style::Bold, color);
    }
    let _ = writeln!(w);
}

#[derive(Clone, Copy)]
enum Style {
    Plain,
    Bold,
    /// Coloured by its unified-diff prefix (`+`, `-`, `@@`, headers).
    DiffLine,
}

/// Every line of human output is written here. Paths, golden-file lines and the
/// values in change descriptions are bytes a pull request chose, so the line is
/// escaped first (no control character reaches the log) and coloured after.
fn put(w: &mut dyn Write, line: &str, style: Style, color: bool) {
    let line = printable(line);
    let code = match style {
        _ if !color => None,
        Style::Plain => None,
        Style::Bold => Some("1"),
        Style::DiffLine => diff_colour(&line),
    };
    let _ = match code {
        Some(code) => writeln!(w, "\x1b[{code}m{line}\x1b[0m"),
        None => writeln!(w, "{line}"),
    };
}

fn diff_colour(line: &str) -> Option<&'static str> {
    if line.starts_with("+++") || line.starts_with("---") {
        Some("1")
    } else if line.starts_with('+') {
        Some("32")
    } else if line.starts_with('-') {
        Some("31")
    } else if line.starts_with("@@") {
        Some("36")
    } else {
        None
    }
}
