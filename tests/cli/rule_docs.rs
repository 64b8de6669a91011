//! docs/rules/: one page per rule of the catalogue, written by
//! `rdmagen::output::rule_page` from the catalogue and the rule's fixture pair in
//! tests/rules/, and an index. The committed pages are what the generator writes now:
//! a page missing, stale, or left for a rule that is not in the catalogue fails here.
//! `RDMAGEN_BLESS=1 cargo test --locked --test cli rule_docs` rewrites them.

use std::collections::BTreeMap;

use rdmagen::diagnostics::rule::{CATALOGUE, RuleInfo};
use rdmagen::output::rule_page::{self, Example, Snippet};

use crate::support::{fixture, root};

/// The rule's fixture pair, `tests/rules/ID.*` and `tests/rules/ID.ok.*`, as
/// (path, text) each.
fn fixture_pair(id: &str) -> Option<((String, String), (String, String))> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("tests/rules"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let find = |stem: &str| {
        let name = names
            .iter()
            .find(|f| f.rsplit_once('.').is_some_and(|(s, _)| s == stem))?;
        let path = format!("tests/rules/{name}");
        let text = std::fs::read_to_string(root().join(&path)).unwrap();
        Some((path, text))
    };
    Some((find(id)?, find(&format!("{id}.ok"))?))
}

/// Every page the generator writes now, by file name (`RDG020.md`, `README.md`).
fn generated() -> BTreeMap<String, String> {
    let mut pages = BTreeMap::new();
    for rule in CATALOGUE {
        pages.insert(format!("{}.md", rule.id), page_of(rule));
    }
    pages.insert("README.md".to_owned(), rule_page::index(CATALOGUE));
    pages
}

fn page_of(rule: &RuleInfo) -> String {
    let Some(((bad_path, bad), (good_path, good))) = fixture_pair(rule.id) else {
        return rule_page::page(rule, None);
    };
    let header = fixture(&bad, &bad_path);
    let command = header.args.join(" ");
    let example = Example {
        command: &command,
        line: header.line,
        triggering: Snippet {
            path: &bad_path,
            text: &bad,
        },
        fixed: Snippet {
            path: &good_path,
            text: &good,
        },
    };
    rule_page::page(rule, Some(&example))
}

#[test]
fn rule_docs_are_one_fresh_page_per_rule() {
    let dir = root().join(rule_page::DIR);
    let pages = generated();
    let committed = || -> BTreeMap<String, String> {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return BTreeMap::new();
        };
        entries
            .map(|e| e.unwrap())
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read_to_string(e.path()).unwrap_or_default())
            })
            .collect()
    };
    if std::env::var_os("RDMAGEN_BLESS").is_some() {
        std::fs::create_dir_all(&dir).unwrap();
        // Only pages: a file of another kind here is not the generator's to remove.
        for name in committed().keys() {
            if name.ends_with(".md") && !pages.contains_key(name) {
                std::fs::remove_file(dir.join(name)).unwrap();
            }
        }
        for (name, text) in &pages {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }
    let committed = committed();
    let bless = "rewrite them with `RDMAGEN_BLESS=1 cargo test --locked --test cli rule_docs`";
    let missing: Vec<&String> = pages
        .keys()
        .filter(|n| !committed.contains_key(*n))
        .collect();
    assert!(missing.is_empty(), "docs/rules/ lacks {missing:?}; {bless}");
    let extra: Vec<&String> = committed
        .keys()
        .filter(|n| !pages.contains_key(*n))
        .collect();
    assert!(
        extra.is_empty(),
        "docs/rules/{extra:?} belong to no rule; {bless}"
    );
    let stale: Vec<&String> = pages
        .iter()
        .filter(|(name, text)| committed[*name] != **text)
        .map(|(name, _)| name)
        .collect();
    assert!(stale.is_empty(), "docs/rules/{stale:?} are stale; {bless}");
}

/// A page says what the catalogue says, shows the fixture pair and the change
/// between them, and links its source; writing it twice gives the same bytes.
#[test]
fn rule_docs_page_carries_the_rule_and_its_example() {
    let rule = RuleInfo::by_id("RDG020").unwrap();
    let page = page_of(rule);
    assert_eq!(page, page_of(rule), "a page is deterministic");
    let bad = std::fs::read_to_string(root().join("tests/rules/RDG020.yaml")).unwrap();
    let good = std::fs::read_to_string(root().join("tests/rules/RDG020.ok.yaml")).unwrap();
    let sections: Vec<&str> = page.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        sections,
        ["## What", "## Why", "## Example", "## Fix", "## Source"]
    );
    assert!(page.contains(&format!("# RDG020: {}\n", rule.summary)));
    assert!(page.contains(&format!("\n{}\n", rule.explanation)));
    assert!(page.contains("`rdmagen validate tests/rules/RDG020.yaml` reports RDG020 at line 15:"));
    assert!(page.contains(&format!("```yaml\n{bad}```\n")), "{page}");
    assert!(page.contains(&format!("```yaml\n{good}```\n")), "{page}");
    assert!(page.contains("\n-    NCCL_IB_TC: \"106\"\n"), "{page}");
    assert!(page.contains("`--disable RDG020`"));
    assert!(page.ends_with(&format!(
        "## Source\n\n<{}/blob/main/docs/sources.md#seed-000-aistudio-rdma-network-page>\n",
        env!("CARGO_PKG_REPOSITORY")
    )));
    // The index links every page, in the catalogue's order.
    let index = rule_page::index(CATALOGUE);
    let linked: Vec<&str> = index
        .lines()
        .filter_map(|l| l.strip_prefix("| ["))
        .filter_map(|l| l.split(']').next())
        .collect();
    let ids: Vec<&str> = CATALOGUE.iter().map(|r| r.id).collect();
    assert_eq!(linked, ids);
}
