//! `nccl-log`'s reader: arbitrary text, mutated real logs, and real lines shuffled
//! with junk and very long lines never panic; every finding points at a line of its
//! file (none without one); the verdict always serializes.

use std::sync::Arc;

use proptest::prelude::*;
use rdmagen::model::pool::{Fabric, GidIndex};
use rdmagen::nccl_log::split::MAX_LINE_BYTES;
use rdmagen::nccl_log::{Expectation, read_texts};

use crate::corpus::NCCL_LOGS;
use crate::guard;
use crate::mutate::input;

/// Every real line of the corpus, for mixing with junk.
fn real_lines() -> Vec<String> {
    NCCL_LOGS
        .iter()
        .flat_map(|(_, text)| text.lines().map(str::to_owned))
        .collect()
}

fn expectation(pick: u8) -> Option<Expectation> {
    let (fabric, label, gid) = match pick % 4 {
        0 => return None,
        1 => (Fabric::Ib, "IB 8*200G", None),
        2 => (Fabric::Roce, "RoCE 8*400G", Some(GidIndex::Index(3))),
        _ => (Fabric::Tcp, "x", Some(GidIndex::Auto)),
    };
    Some(Expectation {
        pool: "fuzz".into(),
        fabric,
        label: Some(label.into()),
        gid_index: gid,
        gpu_model: pick.is_multiple_of(2).then(|| "H100".into()),
    })
}

/// Read `files` and check what the verdict says about them.
fn case(files: &[(String, String)], pick: u8) -> Result<(), String> {
    let named: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let outcome = read_texts(&named, expectation(pick).as_ref());
    for f in outcome.findings.iter() {
        // GitHub code scanning refuses a SARIF result without a file.
        let Some(at) = &f.location else {
            return Err(format!("{}: a finding with no location", f.rule.info().id));
        };
        let Some((_, text)) = files.iter().find(|(n, _)| **n == *at.file) else {
            return Err(format!(
                "{}: a finding in an unknown file: {at}",
                f.rule.info().id
            ));
        };
        let lines = text.split('\n').count().max(1);
        if at.line == 0 || at.line > lines {
            return Err(format!(
                "{} at {at}, beyond the {lines} lines",
                f.rule.info().id
            ));
        }
    }
    serde_json::to_string(&outcome.verdict).map_err(|e| e.to_string())?;
    Ok(())
}

/// Real lines in a random order, with junk, prefixes and long lines among them.
fn mixed() -> impl Strategy<Value = String> {
    let lines = Arc::new(real_lines());
    let piece = prop_oneof![
        6 => any::<prop::sample::Index>().prop_map({
            let lines = lines.clone();
            move |i| lines[i.index(lines.len())].clone()
        }),
        1 => ".{0,80}",
        1 => (any::<prop::sample::Index>(), "\\[[0-9,]{1,5}\\](<stdout>:)? ?").prop_map({
            let lines = lines.clone();
            move |(i, prefix)| format!("{prefix}{}", lines[i.index(lines.len())])
        }),
        1 => (1usize..4, " NCCL (INFO|WARN) [a-zA-Z/ :\\[\\]0-9=]{0,40}").prop_map(|(n, unit)| unit.repeat(n * MAX_LINE_BYTES / unit.len().max(1) / 2 + 1)),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.join("\n"))
}

proptest! {
    #![proptest_config(guard::config(256, "tests/proptest-regressions/fuzz-nccl-log.txt"))]

    /// Any text, as one file.
    #[test]
    fn any_text_reads(text in input(&NCCL_LOGS), pick in any::<u8>()) {
        let checked = guard::run("nccl-log", move || {
            case(&[("run.log".to_owned(), text.clone())], pick).map_err(|e| format!("{e}\n--- input:\n{text:?}"))
        });
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }

    /// Real lines shuffled with junk and long lines, over one to three files.
    #[test]
    fn shuffled_real_lines_read(parts in prop::collection::vec(mixed(), 1..4), pick in any::<u8>()) {
        let files: Vec<(String, String)> = parts
            .into_iter()
            .enumerate()
            .map(|(i, t)| (format!("pod-{i}.log"), t))
            .collect();
        let checked = guard::run("nccl-log", move || case(&files, pick));
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }
}

/// The real samples give verdicts, so the properties above run the deciding code.
#[test]
fn every_real_log_reads() {
    for (name, text) in NCCL_LOGS.iter() {
        case(&[(name.clone(), text.clone())], 1).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
