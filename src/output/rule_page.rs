//! A rule's page (`docs/rules/RDGnnn.md`) and the index of every page, written from the
//! catalogue entry, so that a page never says what its rule does not (ruff generates
//! each rule's page from its declaration). Pure text in, text out: the caller hands in
//! the rule's fixture pair (`tests/rules/RDGnnn.*`), and the same inputs always give
//! the same bytes.

use crate::diagnostics::Severity;
use crate::diagnostics::policy::FIXED;
use crate::diagnostics::rule::RuleInfo;

use super::sarif::{REPOSITORY, help_uri};

/// Where the pages live in the repository.
pub const DIR: &str = "docs/rules";

/// A snippet longer than this many lines is cut on the page (the file is named, so
/// the whole of it is one click away): RDG176's trigger is 400 KB of documents.
const MAX_LINES: usize = 60;

/// The address of a rule's page, on the repository's main branch: what `explain`
/// prints and SARIF's `helpUri` says.
pub fn page_uri(id: &str) -> String {
    format!("{REPOSITORY}/blob/main/{DIR}/{id}.md")
}

/// One file of a rule's fixture pair.
#[derive(Debug, Clone, Copy)]
pub struct Snippet<'a> {
    /// Its path in the repository, e.g. `tests/rules/RDG020.yaml`.
    pub path: &'a str,
    pub text: &'a str,
}

/// A rule's example: an input that triggers it, and the same input fixed.
#[derive(Debug, Clone, Copy)]
pub struct Example<'a> {
    /// The command and the arguments before the file (`lint --platform aistudio`).
    pub command: &'a str,
    /// The line of `triggering` the finding points at, when the fixture says.
    pub line: Option<u64>,
    pub triggering: Snippet<'a>,
    pub fixed: Snippet<'a>,
}

/// The page of `rule`, with its example when there is one.
pub fn page(rule: &RuleInfo, example: Option<&Example<'_>>) -> String {
    let id = rule.id;
    let summary = inline(rule.summary);
    let mut page = format!(
        "{}\n\n# {id}: {summary}\n\nSeverity: **{}**.\n\n## What\n\nrdmagen reports {id} when {summary}.\n\n## Why\n\n{}\n\n",
        generated_note(),
        rule.severity,
        inline(rule.explanation)
    );
    if let Some(example) = example {
        let at = example
            .line
            .map_or(String::new(), |line| format!(" at line {line}"));
        page.push_str(&format!(
            "## Example\n\n`rdmagen {} {}` reports {id}{at}:\n\n{}\nThe same input fixed, which `rdmagen {} {}` does not report {id} on:\n\n{}\n",
            example.command,
            example.triggering.path,
            block(&example.triggering),
            example.command,
            example.fixed.path,
            block(&example.fixed),
        ));
    }
    page.push_str("## Fix\n\n");
    if let Some(example) = example {
        page.push_str(&change(example));
    }
    page.push_str(&waiver(rule));
    page.push_str(&format!("\n## Source\n\n<{}>\n", help_uri(rule.source)));
    page
}

/// The index of every page, one table row per rule in the catalogue's order.
pub fn index(rules: &[RuleInfo]) -> String {
    let mut index = format!(
        "{}\n\n# rdmagen's rules\n\nEvery rule rdmagen reports, in the order `rdmagen rules` lists them. `rdmagen explain ID` prints a rule's explanation in the terminal.\n\n| Rule | Severity | Reported when |\n|---|---|---|\n",
        generated_note()
    );
    for r in rules {
        index.push_str(&format!(
            "| [{0}]({0}.md) | {1} | {2} |\n",
            r.id,
            r.severity,
            inline(r.summary).replace('|', "\\|")
        ));
    }
    let counts = [Severity::Error, Severity::Warning, Severity::Info].map(|s| {
        let n = rules.iter().filter(|r| r.severity == s).count();
        format!("{n} {s}")
    });
    index.push_str(&format!(
        "\n{} rules: {}.\n",
        rules.len(),
        counts.join(", ")
    ));
    index
}

fn generated_note() -> &'static str {
    "<!-- Written from the rule catalogue (crates/base/src/diagnostics/rule.rs) and tests/rules/ by `RDMAGEN_BLESS=1 cargo test --locked --test cli rule_docs`; edit those, not this page. -->"
}

/// What makes the example pass, as a unified diff of the pair; for files too long to
/// show, the command that shows it.
fn change(example: &Example<'_>) -> String {
    let (bad, good) = (example.triggering, example.fixed);
    if bad.text.lines().count() > MAX_LINES || good.text.lines().count() > MAX_LINES {
        return format!(
            "The fixed input differs from the triggering one as `diff {} {}` shows.\n\n",
            bad.path, good.path
        );
    }
    let diff = similar::TextDiff::from_lines(bad.text, good.text)
        .unified_diff()
        .context_radius(2)
        .header(bad.path, good.path)
        .to_string();
    let mut out = String::from("The change that fixes the example:\n\n");
    out.push_str(&fenced("diff", &diff));
    out.push('\n');
    out
}

/// Whether and how the rule can be turned off, as the configuration and flags allow.
fn waiver(rule: &RuleInfo) -> String {
    let id = rule.id;
    if rule.configurable() {
        format!(
            "Where the finding is deliberate, turn the rule off or re-grade it: `--disable {id}` or `--severity {id}=warning` on the command line, `rules: {{{id}: off}}` in `.rdmagen.yaml`, or the `rdmagen.io/ignore: {id}` annotation on one object.\n"
        )
    } else {
        format!("{id} cannot be turned off or re-graded: {FIXED}.\n")
    }
}

/// A fixture file as a fenced block, cut after [`MAX_LINES`] lines.
fn block(snippet: &Snippet<'_>) -> String {
    let lines: Vec<&str> = snippet.text.lines().collect();
    let mut shown = lines[..lines.len().min(MAX_LINES)].join("\n");
    shown.push('\n');
    let mut out = fenced(language(snippet.path), &shown);
    if lines.len() > MAX_LINES {
        out.push_str(&format!(
            "\n({} more lines: the whole file is `{}`.)\n",
            lines.len() - MAX_LINES,
            snippet.path
        ));
    }
    out
}

/// `text` in a code fence longer than any run of backticks in it, so no line of a
/// fixture can close the fence.
fn fenced(language: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let mut out = format!("{fence}{language}\n{text}");
    if !text.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&fence);
    out.push('\n');
    out
}

/// The fence's language for a fixture's file name.
fn language(path: &str) -> &'static str {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit('.').next() {
        Some("yaml" | "yml") => "yaml",
        Some("Dockerfile") => "dockerfile",
        Some("j2") => "jinja",
        _ => "text",
    }
}

/// Catalogue prose as Markdown text: code spans kept as written, and outside them `<`
/// and `&` escaped, so that `<job>` is shown rather than read as an HTML tag.
fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_code = false;
    for c in text.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '<' if !in_code => out.push_str("&lt;"),
            '&' if !in_code => out.push_str("&amp;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Rule;

    #[test]
    fn fences_outgrow_the_backticks_inside() {
        assert_eq!(fenced("text", "a\n"), "```text\na\n```\n");
        assert_eq!(fenced("", "x ```` y"), "`````\nx ```` y\n`````\n");
    }

    #[test]
    fn prose_outside_code_spans_is_escaped() {
        assert_eq!(
            inline("named <job>-0 & `<job>` & x"),
            "named &lt;job>-0 &amp; `<job>` &amp; x"
        );
    }

    #[test]
    fn long_snippets_are_cut_and_name_their_file() {
        let text: String = (0..100).map(|n| format!("line {n}\n")).collect();
        let shown = block(&Snippet {
            path: "tests/rules/X.yaml",
            text: &text,
        });
        assert!(shown.starts_with("```yaml\nline 0\n"));
        assert!(shown.contains("line 59\n```\n"));
        assert!(!shown.contains("line 60"));
        assert!(shown.ends_with("(40 more lines: the whole file is `tests/rules/X.yaml`.)\n"));
    }

    #[test]
    fn a_refusal_says_it_cannot_be_waived() {
        let page = page(Rule::UnknownPool.info(), None);
        assert!(page.contains("RDG005 cannot be turned off or re-graded"));
        let page = super::page(Rule::IbTcSet.info(), None);
        assert!(page.contains("`--disable RDG020`"));
    }
}
