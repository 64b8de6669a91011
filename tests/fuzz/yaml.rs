//! YAML: the input loader, both full parsers, the fast path, the manifest linter and
//! the whole pipeline on Jobs and Pools.

use std::sync::Arc;

use proptest::prelude::*;
use rdmagen::diagnostics::Findings;
use rdmagen::model::load;
use rdmagen::pipeline::{self, Collect, Request};
use rdmagen::rules::lint::{Linted, lint_text};
use rdmagen::rules::manifest::ManifestFacts;
use rdmagen::yaml::{fast_yaml, tree, tree_value};

use crate::corpus::{JOB_AND_POOL, YAML};
use crate::guard;
use crate::located::{Layout, Lines};
use crate::mutate::input;

proptest! {
    #![proptest_config(guard::config(256, "tests/proptest-regressions/fuzz-yaml-load.txt"))]

    /// Loading Jobs and Pools never panics, and every finding points inside the file.
    #[test]
    fn loader_findings_point_inside_the_file(text in input(&YAML)) {
        let checked = guard::run("read_documents", move || {
            let name: Arc<str> = Arc::from("fuzz.yaml");
            let mut findings = Findings::default();
            load::read_documents(&name, &text, &mut findings);
            Layout::new("fuzz.yaml", &text, Lines::Yaml)
                .all_inside(&findings)
                .map_err(|e| format!("{e}\n--- input:\n{text:?}"))
        });
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }
}

proptest! {
    #![proptest_config(guard::config(384, "tests/proptest-regressions/fuzz-yaml-parsers.txt"))]

    /// The fast path reads what it accepts exactly as the located tree does.
    #[test]
    fn parsers_agree(text in input(&YAML)) {
        let outcome = guard::run("yaml parsers", move || {
            let located = located(&text);
            let fast = fast_yaml::parse(&text);
            (text, located, fast)
        });
        let (text, located, fast) = outcome;
        if let Some(fast) = fast {
            prop_assert_eq!(Ok(fast), located, "fast path disagrees on {:?}", text);
        }
    }
}

/// Every document of `text` through the located tree, as JSON.
fn located(text: &str) -> Result<Vec<serde_json::Value>, String> {
    tree::parse_documents(&"t.yaml".into(), text)
        .map(|docs| docs.iter().map(|d| tree_value::to_value(&d.root)).collect())
        .map_err(|e| e.message)
}

proptest! {
    #![proptest_config(guard::config(256, "tests/proptest-regressions/fuzz-yaml-lint.txt"))]

    /// `lint` on any text: no panic, findings inside the file, and a source line for
    /// every located finding.
    #[test]
    fn lint_findings_point_inside_the_file(text in input(&YAML)) {
        let checked = guard::run("lint_text", move || {
            let mut report = Linted::default();
            lint_text(&mut report, Arc::from("fuzz.yaml"), text.clone(), &ManifestFacts::default());
            report.finish(&rdmagen::diagnostics::Policy::default());
            let layout = Layout::new("fuzz.yaml", &text, Lines::Yaml);
            let lines = text.lines().count();
            let located = layout.all_inside(&report.findings).and_then(|()| {
                let mut at = report.findings.iter().filter_map(|f| f.location.as_ref());
                match at.find(|at| at.line <= lines && report.sources.line(at).is_none()) {
                    Some(at) => Err(format!("no source line for {at}")),
                    None => Ok(()),
                }
            });
            located.map_err(|e| format!("{e}\n--- input:\n{text:?}"))
        });
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }
}

/// Run the whole pipeline on `text` as one input file: the number of jobs rendered,
/// or what property failed.
fn pipeline_case(text: &str) -> Result<usize, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("job.yaml");
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    let collect = Collect::default();
    let run = pipeline::run_with(
        &Request {
            inputs: vec![path.clone()],
            ..Request::default()
        },
        &collect,
        false,
    );
    // An error that stops the run (no Job in the file, say) is a user error, exit 2.
    let Ok(report) = run else {
        return Ok(0);
    };
    let name = load::display_name(&path);
    Layout::new(&name, text, Lines::Yaml).all_inside(&report.findings)?;
    let jobs = collect.into_jobs();
    for job in &jobs {
        for file in job.files.iter().filter(|f| f.path.ends_with(".yaml")) {
            let docs = rdmagen::verify::parse(&file.text)
                .map_err(|e| format!("{} does not parse back: {e}", file.path))?;
            let full = located(&file.text)?;
            if docs != full {
                return Err(format!("{}: fast and full readers disagree", file.path));
            }
        }
    }
    Ok(jobs.len())
}

proptest! {
    #![proptest_config(guard::config(96, "tests/proptest-regressions/fuzz-yaml-pipeline.txt"))]

    /// Mutated Job + Pool streams through load → resolve → render → verify: no panic,
    /// findings inside the file, and every rendered manifest parses back.
    #[test]
    fn accepted_jobs_render_yaml_that_parses_back(text in input(&JOB_AND_POOL)) {
        let checked = guard::run("pipeline", move || {
            pipeline_case(&text)
                .map(drop)
                .map_err(|e| format!("{e}\n--- input:\n{text:?}"))
        });
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }
}

/// The examples themselves pass the pipeline property, so the target is known to
/// reach rendering and the parse-back check, not only the loader's errors.
#[test]
fn unmutated_examples_render_and_parse_back() {
    for (name, text) in JOB_AND_POOL.iter() {
        let rendered = pipeline_case(text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(rendered > 0, "{name}: no job rendered");
    }
    assert!(JOB_AND_POOL.len() >= 8);
}
