//! Dockerfile snippets that install the RDMA user space, for apt and dnf images.
//!
//! Decisions (family, packages, pins) are made here in Rust; the layout lives in
//! `templates/rdma-install-{apt,dnf}.Dockerfile.j2`. Every string that reaches a
//! Dockerfile is checked first (package names from a fixed list, versions and base
//! images from a safe alphabet), so nothing can inject an instruction.

pub mod heredoc;
pub mod image_check;

use minijinja::value::Value;
use minijinja::{AutoEscape, Environment};
use serde::Serialize;

use crate::packages::{self, Family, PackageSet, Pins, base_image};

const APT: &str = include_str!("../../templates/rdma-install-apt.Dockerfile.j2");
const DNF: &str = include_str!("../../templates/rdma-install-dnf.Dockerfile.j2");

/// What to install.
#[derive(Debug, Clone)]
pub struct Install {
    pub family: Family,
    pub set: PackageSet,
    pub pins: Pins,
}

/// The values the install templates (and a user's Dockerfile template) see.
#[derive(Debug, Serialize)]
struct Layout<'a> {
    family: &'static str,
    set: &'static str,
    /// `name` or the pinned `name=version` (apt) / `name-version` (dnf).
    install: Vec<String>,
    names: &'a [&'static str],
    all_pinned: bool,
}

/// The family for a base image, or the one asked for; an explicit family wins.
pub fn family_for(base: Option<&str>, asked: Option<Family>) -> Result<Family, String> {
    if let Some(family) = asked {
        return Ok(family);
    }
    let Some(base) = base else {
        return Err("name a base image (--base) or a package family (--family apt|dnf)".to_owned());
    };
    base_image::family_of(base).ok_or_else(|| {
        format!("cannot tell whether `{base}` uses apt or dnf; pass --family apt|dnf")
    })
}

impl Install {
    fn layout(&self) -> Layout<'static> {
        let names = packages::packages(self.family, self.set);
        let install = names
            .iter()
            .map(|name| match (self.pins.0.get(*name), self.family) {
                (Some(v), Family::Apt) => format!("{name}={v}"),
                (Some(v), Family::Dnf) => format!("{name}-{v}"),
                (None, _) => (*name).to_owned(),
            })
            .collect();
        Layout {
            family: self.family.name(),
            set: self.set.name(),
            install,
            names,
            all_pinned: names.iter().all(|n| self.pins.0.contains_key(*n)),
        }
    }

    /// The install-and-verify snippet (no FROM).
    pub fn snippet(&self) -> String {
        let source = match self.family {
            Family::Apt => APT,
            Family::Dnf => DNF,
        };
        let env = environment();
        env.render_str(source, Value::from(minijinja::value::Serde(&self.layout())))
            .expect("the built-in install templates render")
    }

    /// A complete Dockerfile: FROM the (checked) base image, then the snippet.
    pub fn full(&self, base: &str, header: &str) -> String {
        format!("{header}FROM {base}\n\n{}", self.snippet())
    }

    /// Render a user's Dockerfile template. It sees `base`, `family`, `set`,
    /// `packages` and the function `rdma_install()`, which expands to the snippet.
    pub fn render_template(
        &self,
        base: Option<&str>,
        name: &str,
        source: &str,
    ) -> Result<String, minijinja::Error> {
        let mut env = environment();
        let snippet = self.snippet();
        env.add_function("rdma_install", move || {
            Value::from_safe_string(snippet.clone())
        });
        let layout = self.layout();
        env.add_template_owned(name.to_owned(), source.to_owned())?;
        crate::render::render_bounded(
            &env.get_template(name)?,
            minijinja::context! {
                base => base,
                family => layout.family,
                set => layout.set,
                packages => layout.names.to_vec(),
            },
        )
    }
}

/// Dockerfiles are not YAML: no escaping (every value is checked before it gets here).
fn environment() -> Environment<'static> {
    let mut env = crate::render::strict_environment();
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env
}

/// Instructions a Dockerfile may hold, for checking rendered output: every logical
/// line must start with one, so a value that smuggled in a line break would show.
const INSTRUCTIONS: &[&str] = &[
    "FROM",
    "RUN",
    "ENV",
    "ARG",
    "COPY",
    "ADD",
    "WORKDIR",
    "USER",
    "LABEL",
    "SHELL",
    "CMD",
    "ENTRYPOINT",
    "EXPOSE",
    "VOLUME",
    "HEALTHCHECK",
    "ONBUILD",
    "STOPSIGNAL",
    "MAINTAINER",
];

/// The instructions of a Dockerfile, one per logical line (continuations joined,
/// comments and blank lines skipped), as (line number, instruction word, rest). A
/// RUN, COPY or ADD that opens here-documents keeps them in its rest: the line, then
/// each body's lines and end line, `\n`-separated, as [`heredoc::split`] reads them;
/// their lines are not instructions.
pub fn instructions(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let trimmed = line.trim();
        if current.is_none() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        if current.is_some() && trimmed.starts_with('#') {
            continue;
        }
        let (start, mut joined) = current.take().unwrap_or((i + 1, String::new()));
        match trimmed.strip_suffix('\\') {
            Some(head) => {
                joined.push_str(head);
                joined.push(' ');
                current = Some((start, joined));
            }
            None => {
                joined.push_str(trimmed);
                let (word, rest) = split_word(&joined);
                let mut rest = rest.to_owned();
                if matches!(word.as_str(), "RUN" | "COPY" | "ADD") {
                    for marker in heredoc::markers(&rest.clone()) {
                        for (_, body_line) in lines.by_ref() {
                            rest.push('\n');
                            rest.push_str(body_line);
                            if heredoc::ends(&marker, body_line) {
                                break;
                            }
                        }
                    }
                }
                out.push((start, word, rest));
            }
        }
    }
    if let Some((start, joined)) = current {
        let (word, rest) = split_word(&joined);
        out.push((start, word, rest.to_owned()));
    }
    out
}

/// An instruction's word (upper case) and the rest of its line.
fn split_word(joined: &str) -> (String, &str) {
    let (word, rest) = joined
        .split_once(char::is_whitespace)
        .unwrap_or((joined, ""));
    (word.to_ascii_uppercase(), rest.trim())
}

/// Lines that do not start with a Dockerfile instruction.
pub fn unknown_instructions(text: &str) -> Vec<(usize, String)> {
    instructions(text)
        .into_iter()
        .filter(|(_, word, _)| !INSTRUCTIONS.contains(&word.as_str()))
        .map(|(line, word, _)| (line, word))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(family: Family, set: PackageSet) -> Install {
        Install {
            family,
            set,
            pins: Pins::default(),
        }
    }

    #[test]
    fn snippets_install_then_verify() {
        let apt = install(Family::Apt, PackageSet::Seed).snippet();
        assert!(apt.contains("# hadolint ignore=DL3008\nRUN apt-get update"));
        assert!(apt.contains("      ibverbs-providers \\\n"));
        assert!(apt.contains("RUN for p in infiniband-diags perftest ibverbs-providers"));
        let words: Vec<String> = instructions(&apt).into_iter().map(|(_, w, _)| w).collect();
        assert_eq!(words, ["RUN", "RUN"]);
        let dnf = install(Family::Dnf, PackageSet::Runtime).snippet();
        assert!(dnf.contains("RUN rpm -q rdma-core libibverbs librdmacm libibumad libnl3\n"));
    }

    #[test]
    fn full_pins_drop_the_ignore_comment() {
        let names = packages::packages(Family::Apt, PackageSet::Runtime);
        let pins = Pins(
            names
                .iter()
                .map(|n| ((*n).to_owned(), "1.0".to_owned()))
                .collect(),
        );
        let snippet = Install {
            family: Family::Apt,
            set: PackageSet::Runtime,
            pins,
        }
        .snippet();
        assert!(!snippet.contains("hadolint ignore"));
        assert!(snippet.contains("libibverbs1=1.0 \\"));
    }

    #[test]
    fn instructions_join_continuations_and_skip_comments() {
        let text = "# c\nFROM x\nRUN a \\\n  # inner\n  b\n\nenv A=1\nbogus line\n";
        let got: Vec<(usize, String)> = instructions(text)
            .into_iter()
            .map(|(l, w, _)| (l, w))
            .collect();
        assert_eq!(
            got,
            [
                (2, "FROM".into()),
                (3, "RUN".into()),
                (7, "ENV".into()),
                (8, "BOGUS".into())
            ]
        );
        assert_eq!(unknown_instructions(text), [(8, "BOGUS".to_owned())]);
    }
}
