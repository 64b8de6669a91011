//! Findings must point inside the file they name.

use rdmagen::diagnostics::Findings;
use rdmagen::diagnostics::source::Location;

/// How a format breaks lines: at `\n` (captures, Dockerfiles, pin files), or also at
/// a lone `\r`, as YAML does (the YAML parser counts lines that way).
#[derive(Clone, Copy)]
pub enum Lines {
    Lf,
    Yaml,
}

/// The width (in characters) of each line of one file, computed once.
pub struct Layout<'a> {
    file: &'a str,
    widths: Vec<usize>,
}

impl<'a> Layout<'a> {
    pub fn new(file: &'a str, text: &str, lines: Lines) -> Self {
        let width = |l: &str| l.strip_suffix('\r').unwrap_or(l).chars().count();
        let widths = match lines {
            Lines::Lf => text.split('\n').map(width).collect(),
            Lines::Yaml => text
                .split('\n')
                .flat_map(|l| l.strip_suffix('\r').unwrap_or(l).split('\r'))
                .map(width)
                .collect(),
        };
        Layout { file, widths }
    }

    /// Whether (line, column) is in the text: a line of it (or the one just past its
    /// end, where "unexpected end of input" is found), and a column at most one past
    /// that line's end.
    pub fn position(&self, line: usize, column: usize) -> Result<(), String> {
        let Some(width) = line.checked_sub(1).and_then(|i| self.widths.get(i)) else {
            return Err(format!(
                "{line}:{column}: line outside 1..={}",
                self.widths.len()
            ));
        };
        if column == 0 || column > width + 1 {
            return Err(format!(
                "{line}:{column}: column outside 1..={} on that line",
                width + 1
            ));
        }
        Ok(())
    }

    /// Whether `at` names this file and a position in it.
    pub fn inside(&self, at: &Location) -> Result<(), String> {
        if &*at.file != self.file {
            return Err(format!("{at} names another file than {}", self.file));
        }
        self.position(at.line, at.column)
            .map_err(|e| format!("{}: {e}", at.file))
    }

    /// Every located finding is inside this file.
    pub fn all_inside(&self, findings: &Findings) -> Result<(), String> {
        for f in findings.iter() {
            if let Some(at) = &f.location {
                self.inside(at)
                    .map_err(|e| format!("{} {}: {e}", f.rule.info().id, f.message))?;
            }
        }
        Ok(())
    }
}
