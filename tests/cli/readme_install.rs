//! README's install section names only what resolves today: no crate is published
//! and no version tagged, so its first install command builds from the repository,
//! and every published form (crates.io, a tag's `rev:`, `@v…`, `version:`) is marked
//! as what exists once a tag does.

use crate::support::root;

#[test]
fn install_section_names_what_exists_today() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let install = readme
        .split("\n## Install\n")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("an Install section");
    let first = install
        .lines()
        .find(|l| l.trim_start().starts_with("cargo install"))
        .expect("an install command");
    assert!(
        first.contains("--git ") || first.contains("--path "),
        "the first install command needs a published crate: {first}"
    );
    assert!(install.contains("once a `v*` tag"), "{install}");
    // Every line of a snippet that pins a release says it needs the tag.
    let mut in_code = false;
    for line in install.lines() {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        let pins = in_code
            && (line.contains("rev: v")
                || line.contains("rdmagen/rdmagen@v")
                || line.trim_start().starts_with("version: 0"));
        assert!(!pins || line.contains("once tagged"), "{line}");
    }
}
