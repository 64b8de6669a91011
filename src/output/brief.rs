//! One line per finding (`file:line:col: error[RDG020]: …`) or per changed file
//! (`M path`, `A path`, `D path`).

use std::io::{self, Write};

use super::comparison::Labels;
use crate::diagnostics::Findings;
use crate::diagnostics::escape::printable;
use crate::golden::{Comparison, Status};

pub fn findings(w: &mut dyn Write, findings: &Findings) -> io::Result<()> {
    for f in findings.iter() {
        let info = f.rule.info();
        let at = f
            .location
            .as_ref()
            .map_or(String::new(), |l| format!("{l}: "));
        writeln!(
            w,
            "{}{}[{}]: {}",
            printable(&at),
            f.severity(),
            info.id,
            printable(&f.message)
        )?;
    }
    Ok(())
}

pub fn comparison(w: &mut dyn Write, cmp: &Comparison, labels: &Labels<'_>) -> io::Result<()> {
    for f in cmp.changed() {
        let mark = match f.status {
            Status::Differs => 'M',
            Status::Missing => 'A',
            Status::Stale => 'D',
            Status::Same => continue,
        };
        writeln!(w, "{mark} {}", printable(&labels.shown(f)))?;
    }
    Ok(())
}
