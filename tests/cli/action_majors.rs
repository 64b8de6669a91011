//! Every `uses:` of the composite action, the release workflow and the README's
//! snippets names a current major: the Node 20 majors GitHub's runners are retiring
//! (Node 20 is removed from the runners on 2026-09-16; github/codeql-action#3271,
//! actions/checkout#2238) are refused.

use crate::support::root;

/// Majors that run on Node 20 or older, by action.
const RETIRED: &[(&str, u32)] = &[
    ("actions/checkout", 4),
    ("actions/upload-artifact", 4),
    ("actions/download-artifact", 4),
    ("actions/cache", 4),
    ("actions/setup-node", 4),
    ("actions/setup-python", 5),
    ("github/codeql-action", 3),
];

/// `(file, line, action, ref)` of every `uses:` line in the files users copy or run.
fn uses() -> Vec<(String, usize, String, String)> {
    let mut files = vec!["action.yml".to_owned(), "README.md".to_owned()];
    for entry in std::fs::read_dir(root().join(".github/workflows")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        files.push(format!(".github/workflows/{name}"));
    }
    let mut out = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(root().join(&file)).unwrap();
        for (i, line) in text.lines().enumerate() {
            let Some(rest) = line
                .trim_start()
                .trim_start_matches("- ")
                .strip_prefix("uses:")
            else {
                continue;
            };
            let value = rest.split('#').next().unwrap().trim();
            let (action, reference) = value
                .split_once('@')
                .unwrap_or_else(|| panic!("{file}:{}: `uses: {value}` names no ref", i + 1));
            out.push((file.clone(), i + 1, action.to_owned(), reference.to_owned()));
        }
    }
    out
}

#[test]
fn actions_use_current_majors() {
    let all = uses();
    // The lines this test must see: the action's SARIF upload, the release's steps.
    let actions: Vec<&str> = all.iter().map(|(_, _, a, _)| a.as_str()).collect();
    for needed in [
        "github/codeql-action/upload-sarif",
        "actions/checkout",
        "actions/upload-artifact",
        "actions/download-artifact",
    ] {
        assert!(actions.contains(&needed), "{needed} not found: {all:?}");
    }
    for (file, line, action, reference) in &all {
        let major: Option<u32> = reference
            .strip_prefix('v')
            .and_then(|v| v.split('.').next())
            .and_then(|m| m.parse().ok());
        for (retired, last) in RETIRED {
            if action == retired || action.starts_with(&format!("{retired}/")) {
                let major = major
                    .unwrap_or_else(|| panic!("{file}:{line}: {action}@{reference}: no major"));
                assert!(
                    major > *last,
                    "{file}:{line}: {action}@{reference} runs on a retired runtime; use v{} or later",
                    last + 1
                );
            }
        }
    }
}
