//! Single values with their own syntax: CubeStudio's `N(type)` RDMA request, and
//! Kubernetes quantities (read through a Job, as `render` reads them).

use proptest::prelude::*;
use rdmagen::model::pool::Fabric;
use rdmagen::model::rdma_request::RdmaRequest;
use rdmagen::pipeline::{self, Collect, Request};
use rdmagen::render::quote;
use serde_json::Value;

use crate::guard;
use crate::mutate::arbitrary;

proptest! {
    #![proptest_config(guard::config(2048, "tests/proptest-regressions/fuzz-rdma-request.txt"))]

    /// Any text: never a panic, never a request for zero devices.
    #[test]
    fn rdma_requests_never_ask_for_zero_devices(text in prop_oneof![
        arbitrary(),
        "[ \t]{0,2}[0-9+-]{0,12}[ \t]{0,2}[(（]?[ \t]{0,2}(roce|ib|RoCE|IB|Ib|x|)[ \t]{0,2}[)）]?[ \t]{0,2}",
    ]) {
        let parsed = guard::run("RdmaRequest::parse", move || RdmaRequest::parse(&text));
        if let Ok(RdmaRequest::Typed { count, .. } | RdmaRequest::Count(count)) = parsed {
            prop_assert!(count >= 1);
        }
    }

    /// `N(type)` in either parenthesis style reads as N devices of that fabric.
    #[test]
    fn typed_requests_read_back(count in 1u32.., ib in any::<bool>(), wide in any::<bool>()) {
        let (open, close) = if wide { ('（', '）') } else { ('(', ')') };
        let kind = if ib { "ib" } else { "roce" };
        let fabric = if ib { Fabric::Ib } else { Fabric::Roce };
        prop_assert_eq!(
            RdmaRequest::parse(&format!(" {count}{open}{kind}{close} ")),
            Ok(RdmaRequest::Typed { count, fabric })
        );
    }
}

const POOL: &str = "apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: p}
spec:
  gpu: {perNode: 8}
  network: {fabric: roce, hcas: [mlx5_1], socketIfname: eth0}
";

/// Render a job whose `shm` is `quantity`: Some(sizeLimit as rendered, null when
/// missing) when the job is accepted, None when a finding rejects it at `shm`'s line.
fn shm(quantity: &str) -> Result<Option<Value>, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("job.yaml");
    let job = format!(
        "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {{name: j}}\nspec:\n  pool: p\n  image: i:1\n  nodes: 2\n  gpusPerNode: 8\n  script: t.py\n  shm: {}\n---\n{POOL}",
        quote(quantity)
    );
    std::fs::write(&path, job).map_err(|e| e.to_string())?;
    let collect = Collect::default();
    let report = pipeline::run_with(
        &Request {
            inputs: vec![path],
            ..Request::default()
        },
        &collect,
        false,
    )
    .map_err(|e| e.to_string())?;
    if report.findings.errors() > 0 {
        let lines: Vec<usize> = report
            .findings
            .iter()
            .filter_map(|f| f.location.as_ref().map(|l| l.line))
            .collect();
        return if lines.contains(&10) {
            Ok(None)
        } else {
            Err(format!("rejected, but not at the shm line: {lines:?}"))
        };
    }
    let jobs = collect.into_jobs();
    let doc = rdmagen::verify::parse(&jobs[0].files[0].text)?;
    let volumes = &doc[0]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["volumes"];
    Ok(Some(
        volumes
            .as_array()
            .and_then(|v| v.iter().find_map(|v| v["emptyDir"].get("sizeLimit")))
            .cloned()
            .unwrap_or(Value::Null),
    ))
}

proptest! {
    #![proptest_config(guard::config(48, "tests/proptest-regressions/fuzz-quantity.txt"))]

    /// Any `shm` value is rejected at its line, or rendered unchanged.
    #[test]
    fn quantities_are_rejected_or_rendered_unchanged(q in prop_oneof![
        arbitrary(),
        "[+-]?[0-9.]{0,6}([eE][+-]?[0-9]{0,3}|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[a-zA-Z]{0,2})?",
    ]) {
        let expected = q.clone();
        let rendered = guard::run("shm quantity", move || shm(&q));
        match rendered {
            Ok(Some(limit)) => prop_assert_eq!(limit, Value::from(expected)),
            Ok(None) => {}
            Err(e) => prop_assert!(false, "{e} for {expected:?}"),
        }
    }
}

/// The property above sees both outcomes.
#[test]
fn quantities_both_ways() {
    assert_eq!(shm("64Gi"), Ok(Some(Value::from("64Gi"))));
    assert_eq!(shm("64 GB"), Ok(None));
}
