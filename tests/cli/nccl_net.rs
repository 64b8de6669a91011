//! Fail closed (issue 28): a multi-node RDMA job pins NCCL's network with NCCL_NET, so
//! that a fabric NCCL cannot use fails communicator init instead of carrying the job
//! over TCP sockets. The value is the pool's `network.ncclNet` (default `IB`), the job's
//! `ncclNet` over it, or nothing with `off`; what a pin selects among the names NCCL
//! and its plugins report is `nccl::net_selects`, tested in crates/upstream.

use serde_json::Value;

use crate::support::{rdmagen, text, write};

const POOL: &str = "apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: p}
spec:
  gpu: {perNode: 8}
  target: {mpiOperator: \"0.8\"}
  network: {fabric: roce, hcas: [mlx5_1, mlx5_2], socketIfname: eth0, gidIndex: 3NET}
";

/// A job on the pool with `extra` lines in its spec.
fn job(nodes: u32, extra: &str) -> String {
    format!(
        "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {{name: j}}
spec:
  pool: p
  image: img:1
  nodes: {nodes}
  gpusPerNode: 8
  script: t.py
{extra}"
    )
}

/// `render --explain` of `job` on the pool (its network given `pool_net`): every
/// container's NCCL_NET (None where unset), in document order, and the explanation.
fn render(job: &str, pool_net: &str) -> (Vec<Option<String>>, String) {
    let dir = tempfile::tempdir().unwrap();
    let pool = write(dir.path(), "pool.yaml", &POOL.replace("NET", pool_net));
    let job = write(dir.path(), "job.yaml", job);
    let out = rdmagen(&["render", &job, "--pools", &pool, "--explain"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let docs: Vec<Value> = serde_saphyr::from_str_multiple(&text(&out.stdout)).unwrap();
    let mut values = Vec::new();
    for doc in &docs {
        let specs = doc["spec"]
            .get("pytorchReplicaSpecs")
            .or_else(|| doc["spec"].get("mpiReplicaSpecs"))
            .and_then(Value::as_object)
            .expect("a PyTorchJob or an MPIJob");
        for replica in specs.values() {
            let c = &replica["template"]["spec"]["containers"][0];
            let env = c["env"].as_array().cloned().unwrap_or_default();
            values.push(
                env.iter()
                    .find(|v| v["name"] == "NCCL_NET")
                    .map(|v| v["value"].as_str().unwrap().to_owned()),
            );
        }
    }
    (values, text(&out.stderr))
}

/// The explanation's line for NCCL_NET.
fn decision(explain: &str) -> &str {
    explain
        .lines()
        .find(|l| l.contains("env NCCL_NET"))
        .unwrap_or_else(|| panic!("no NCCL_NET decision in:\n{explain}"))
}

#[test]
fn a_multi_node_rdma_job_is_pinned_to_ib_and_says_why() {
    let (values, explain) = render(&job(2, ""), "");
    assert_eq!(values, [Some("IB".to_owned()), Some("IB".to_owned())]);
    let line = decision(&explain);
    assert!(
        line.contains("= IB: fail closed on a 2-node RDMA job"),
        "{line}"
    );
    assert!(line.contains("src/plugin/net.cc:319-350"), "{line}");
}

#[test]
fn the_pools_plugin_name_is_written_and_the_jobs_wins_over_it() {
    let (values, explain) = render(&job(2, ""), ", ncclNet: IBext_v8");
    assert_eq!(
        values,
        [Some("IBext_v8".to_owned()), Some("IBext_v8".to_owned())]
    );
    assert!(decision(&explain).contains("pool `p`'s network.ncclNet"));

    let (values, explain) = render(&job(2, "  ncclNet: gIB\n"), ", ncclNet: IBext_v8");
    assert_eq!(values, [Some("gIB".to_owned()), Some("gIB".to_owned())]);
    assert!(decision(&explain).contains("the job's ncclNet"));
}

#[test]
fn off_a_single_node_and_rdma_off_write_no_pin() {
    let (values, explain) = render(&job(2, "  ncclNet: \"off\"\n"), "");
    assert_eq!(values, [None, None]);
    assert!(decision(&explain).contains("(unset): the job's ncclNet is off"));

    let (values, explain) = render(&job(2, ""), ", ncclNet: \"off\"");
    assert_eq!(values, [None, None]);
    assert!(decision(&explain).contains("(unset): pool `p`'s network.ncclNet is off"));

    // One node: NCCL moves nothing over the network; forced RDMA or not, no pin.
    let (values, _) = render(&job(1, "  rdma: \"on\"\n"), "");
    assert_eq!(values, [None]);
    let (values, explain) = render(&job(1, "  rdma: \"on\"\n"), ", ncclNet: IBext_v8");
    assert_eq!(values, [None]);
    assert!(decision(&explain).contains("is not written: a one-node job"));

    let (values, _) = render(&job(2, "  rdma: \"off\"\n"), "");
    assert_eq!(values, [None, None]);
}

#[test]
fn an_mpijob_forwards_the_pin_to_every_rank() {
    let (values, _) = render(&job(2, "  launcher: mpirun\n"), "");
    // The launcher carries the workers' variables, which mpirun forwards by name.
    assert_eq!(values, [Some("IB".to_owned()), Some("IB".to_owned())]);
    let dir = tempfile::tempdir().unwrap();
    let pool = write(dir.path(), "pool.yaml", &POOL.replace("NET", ""));
    let job = write(dir.path(), "job.yaml", &job(2, "  launcher: mpirun\n"));
    let out = rdmagen(&["render", &job, "--pools", &pool]);
    let mpijob: Value = serde_saphyr::from_str(&text(&out.stdout)).unwrap();
    let launcher =
        &mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0];
    let words: Vec<&str> = launcher["command"]
        .as_array()
        .unwrap()
        .iter()
        .chain(launcher["args"].as_array().into_iter().flatten())
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        words.windows(2).any(|w| w == ["-x", "NCCL_NET"]),
        "mpirun forwards NCCL_NET: {words:?}"
    );
}

#[test]
fn a_name_that_selects_nothing_or_sockets_is_refused_where_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let pool = write(dir.path(), "pool.yaml", &POOL.replace("NET", ""));
    for (value, expect) in [
        ("\" IB\"", "is not a value this field takes"),
        ("\"\"", "spec.ncclNet"),
        ("Socket", "error[RDG199]"),
    ] {
        let job = write(
            dir.path(),
            "job.yaml",
            &job(2, &format!("  ncclNet: {value}\n")),
        );
        let out = rdmagen(&["render", &job, "--pools", &pool]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{value}: {stderr}");
        assert!(stderr.contains(expect), "{value}: {stderr}");
        assert!(
            stderr.contains("job.yaml:10:"),
            "{value}: names the line: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{value}: nothing written");
    }
}

/// What render leaves unpinned, lint reports (info), and what it pins lints clean.
#[test]
fn lint_reports_the_unpinned_render_and_not_the_pinned_one() {
    let dir = tempfile::tempdir().unwrap();
    let pool = write(dir.path(), "pool.yaml", &POOL.replace("NET", ""));
    for (extra, infos) in [("", 0), ("  ncclNet: \"off\"\n", 2)] {
        let job = write(dir.path(), "job.yaml", &job(2, extra));
        let out = rdmagen(&["render", &job, "--pools", &pool]);
        let manifest = write(dir.path(), "out.yaml", &text(&out.stdout));
        let lint = rdmagen(&["lint", &manifest, "--format", "json"]);
        let report: Value = serde_json::from_str(&text(&lint.stdout)).unwrap();
        let found = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "RDG198")
            .count();
        assert_eq!(found, infos, "{extra:?}: {report}");
    }
}
