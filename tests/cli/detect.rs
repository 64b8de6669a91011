//! `rdmagen detect`: every reference sample and constructed captures, the detected
//! pool in use, the capture commands, and robustness against arbitrary text.

use std::sync::Arc;

use proptest::prelude::*;
use rdmagen::detect::decide::{Options, detect};
use rdmagen::detect::{Observations, affinity, capture};
use rdmagen::diagnostics::Findings;
use rdmagen::model::pool::Platform;
use serde_json::Value;

use crate::support::{rdmagen, root, text};

struct Detected {
    code: i32,
    pool: Value,
    /// (rule, line) of every finding.
    findings: Vec<(String, u64)>,
    /// The findings' messages, in the same order.
    messages: Vec<String>,
    /// The findings' columns, in the same order.
    columns: Vec<u64>,
}

fn run(args: &[&str]) -> Detected {
    let mut all = vec!["detect"];
    all.extend_from_slice(args);
    all.extend(["--format", "json"]);
    let out = rdmagen(&all);
    let stderr = text(&out.stderr);
    let report: Value = serde_json::from_str(&stderr).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    let findings = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_owned(),
                f["line"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let messages = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["message"].as_str().unwrap().to_owned())
        .collect();
    let columns = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["column"].as_u64().unwrap_or(0))
        .collect();
    let pool = if out.stdout.is_empty() {
        Value::Null
    } else {
        serde_saphyr::from_str::<Value>(&text(&out.stdout)).expect("detect prints YAML")
    };
    Detected {
        code: out.status.code().unwrap(),
        pool,
        findings,
        messages,
        columns,
    }
}

fn capture(file: &str) -> Detected {
    run(&["--capture", file])
}

fn net(d: &Detected) -> &Value {
    &d.pool["spec"]["network"]
}

fn has(d: &Detected, rule: &str, line: u64) -> bool {
    d.findings.iter().any(|(r, l)| r == rule && *l == line)
}

/// A public capture quoted in tests/diag/reference (each file says where from).
fn sample(name: &str) -> String {
    format!("tests/diag/reference/{name}")
}

#[test]
fn reference_samples() {
    let ibstat = sample("ib-ibstat.txt");
    let d = run(&["--ibstat", &ibstat]);
    assert_eq!(d.code, 0);
    assert_eq!(net(&d)["fabric"], "ib");
    assert_eq!(
        net(&d)["hcas"],
        serde_json::json!(["mlx5_0"]),
        "mlx5_1 is down"
    );
    assert!(net(&d).get("gidIndex").is_none(), "no GID index on IB");
    assert_eq!(
        net(&d)["label"],
        "IB 1*200G",
        "ibstat's `Rate: 200` of the one data NIC"
    );
    assert!(has(&d, "RDG101", 30), "{:?}", d.findings);

    let d = run(&["--ibv-devinfo", &sample("ib-ibv_devinfo.txt")]);
    assert_eq!(
        net(&d)["fabric"],
        "ib",
        "from link_layer, not from `transport: InfiniBand`"
    );
    assert_eq!(net(&d)["hcas"], serde_json::json!([]));
    assert!(has(&d, "RDG101", 15), "{:?}", d.findings);

    let d = run(&["--rdma-link", &sample("roce-rdma-link.txt")]);
    assert_eq!(net(&d)["fabric"], "roce");
    assert_eq!(net(&d)["hcas"], serde_json::json!(["mlx5_0", "mlx5_1"]));
    assert_eq!(net(&d)["gidIndex"], "auto", "no GID table captured");

    let d = run(&["--show-gids", &sample("roce-show_gids.txt")]);
    assert_eq!(net(&d)["fabric"], "roce");
    assert_eq!(net(&d)["gidIndex"], 3, "the v2 row with an IPv4 address");
    assert_eq!(d.code, 0);
    assert!(
        d.findings.iter().all(|(r, _)| r == "RDG106"),
        "{:?}",
        d.findings
    );
}

#[test]
fn roce_host_with_tabs_or_spaces() {
    for file in [
        "tests/diag/roce-host.txt",
        "tests/diag/roce-host-spaces.txt",
    ] {
        let d = capture(file);
        assert_eq!(d.code, 0, "{file}");
        assert!(d.findings.is_empty(), "{file}: {:?}", d.findings);
        assert_eq!(net(&d)["fabric"], "roce");
        assert_eq!(
            net(&d)["hcas"],
            serde_json::json!(["mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4"]),
            "mlx5_0 carries eth0"
        );
        assert_eq!(net(&d)["gidIndex"], 3);
        assert!(
            net(&d).get("managementNic").is_none(),
            "mlx5_0 is the default"
        );
    }
}

#[test]
fn roce_in_a_pod_prefers_dynamic_gid_selection() {
    let d = run(&[
        "--show-gids",
        "tests/diag/roce-pod.txt",
        "--socket-ifname",
        "eth0",
    ]);
    assert_eq!(net(&d)["gidIndex"], "auto");
    assert!(has(&d, "RDG105", 4), "{:?}", d.findings);
    let d = run(&["--show-gids", "tests/diag/roce-host.txt", "--in-pod"]);
    assert_eq!(net(&d)["gidIndex"], "auto", "--in-pod says so explicitly");
}

#[test]
fn ib_host() {
    let d = capture("tests/diag/ib-host.txt");
    assert_eq!(d.code, 0);
    assert_eq!(net(&d)["fabric"], "ib");
    assert_eq!(
        net(&d)["hcas"],
        serde_json::json!(["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"])
    );
    assert_eq!(
        net(&d)["managementNic"],
        "none",
        "eth0 is not an RDMA device here"
    );
    assert_eq!(d.findings, [("RDG106".to_owned(), 1)]);
}

#[test]
fn mixed_fabrics_missing_sm_and_natural_order() {
    let d = capture("tests/diag/mixed-fabrics.txt");
    assert_eq!(net(&d)["fabric"], "ib");
    assert_eq!(
        net(&d)["hcas"],
        serde_json::json!(["mlx5_2", "mlx5_10"]),
        "mlx5_2 before mlx5_10"
    );
    assert!(has(&d, "RDG102", 22), "{:?}", d.findings);
    assert!(has(&d, "RDG107", 8), "{:?}", d.findings);
}

#[test]
fn gid_indices_that_disagree_and_devices_without_ipv4() {
    let d = capture("tests/diag/gid-disagree.txt");
    assert_eq!(net(&d)["gidIndex"], "auto");
    assert!(has(&d, "RDG104", 7), "{:?}", d.findings);
    assert!(has(&d, "RDG103", 12), "{:?}", d.findings);
}

fn rules(d: &Detected) -> Vec<(&str, u64)> {
    d.findings.iter().map(|(r, l)| (r.as_str(), *l)).collect()
}

/// Seed 001's own show_gids (issue 11, item 5): every GID is RoCE v1, the IPv4 one at
/// index 2 on every NIC. NCCL's dynamic selection takes that GID too (connect.cc:279-280),
/// so detect proposes 2, and warns that RoCE v1 does not route. The devices are not
/// also reported for lacking a v2 GID: RDG109 says it once for all of them.
#[test]
fn seed_001_roce_v1_only_proposes_the_v1_ipv4_index() {
    let d = run(&["--show-gids", "tests/diag/seed-001-roce-v1.txt"]);
    assert_eq!(d.code, 0);
    assert_eq!(net(&d)["gidIndex"], 2);
    assert_eq!(
        net(&d)["hcas"],
        serde_json::json!(["mlx5_1", "mlx5_2", "mlx5_8"]),
        "mlx5_0 carries eth0; the seed elides mlx5_3..7"
    );
    assert_eq!(
        rules(&d),
        [("RDG109", 8), ("RDG100", 10)],
        "RDG100: the seed's `...`"
    );
    assert_eq!(
        d.messages[0],
        "no data NIC has a RoCE v2 GID with an IPv4 address, only RoCE v1 ones; the RoCE v1 IPv4 GID is at index 2 on every data NIC (mlx5_1, mlx5_2, mlx5_8), so gidIndex: 2. RoCE v1 is not routable: training works only while every node is in one L2 domain; enable RoCE v2 on the NICs for a routed fabric"
    );
    assert!(
        d.pool["spec"].get("target").is_none(),
        "the captures show no operator or NCCL version: {}",
        d.pool
    );

    // The printed pool is used as it is: render writes the index.
    let out = rdmagen(&[
        "detect",
        "--show-gids",
        "tests/diag/seed-001-roce-v1.txt",
        "--name",
        "seed",
    ]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pool.yaml"), &out.stdout).unwrap();
    std::fs::write(
        dir.path().join("job.yaml"),
        "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: probe}\nspec:\n  pool: seed\n  image: img:1\n  nodes: 2\n  gpusPerNode: 8\n  script: t.py\n",
    )
    .unwrap();
    let out = rdmagen(&["render", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let docs = rdmagen::verify::parse(&text(&out.stdout)).unwrap();
    let env = &docs[0]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
        [0]["env"];
    let gid: Vec<&Value> = env
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["name"] == "NCCL_IB_GID_INDEX")
        .map(|v| &v["value"])
        .collect();
    assert_eq!(gid, [&Value::from("2")]);
}

/// RoCE v1 only, but in a pod, or at different indices on different NICs: `auto`
/// (NCCL 2.21+ picks the IPv4 GID on each device), and still the RoCE v1 warning.
#[test]
fn roce_v1_in_a_pod_or_at_different_indices_is_auto() {
    let d = run(&["--show-gids", "tests/diag/seed-001-roce-v1.txt", "--in-pod"]);
    assert_eq!(net(&d)["gidIndex"], "auto");
    assert_eq!(rules(&d), [("RDG105", 6), ("RDG109", 8), ("RDG100", 10)]);
    assert!(
        d.messages[1].contains("; the capture comes from a pod, so gidIndex: auto"),
        "{}",
        d.messages[1]
    );

    let d = capture("tests/diag/roce-v1-disagree.txt");
    assert_eq!(net(&d)["gidIndex"], "auto");
    assert_eq!(
        rules(&d),
        [("RDG106", 1), ("RDG109", 6)],
        "no RDG104: that one is about RoCE v2"
    );
    assert_eq!(
        d.messages[1],
        "no data NIC has a RoCE v2 GID with an IPv4 address, only RoCE v1 ones; the RoCE v1 IPv4 GIDs sit at different indices (2 on mlx5_1; 3 on mlx5_2) and NCCL takes one global index, so gidIndex: auto (NCCL 2.21 and later picks the IPv4 GID on each device, RoCE v1 included). RoCE v1 is not routable: training works only while every node is in one L2 domain; enable RoCE v2 on the NICs for a routed fabric"
    );
}

/// When some NIC has a RoCE v2 IPv4 GID, v2 wins (NCCL prefers it, connect.cc:290) and a
/// NIC with only a v1 one is reported: v1 and v2 do not talk to each other. A NIC with no
/// IPv4 GID at all is told what NCCL really does there (index 0, link-local), not that
/// NCCL "finds nothing".
#[test]
fn a_nic_with_only_roce_v1_beside_roce_v2_ones_is_reported() {
    let d = capture("tests/diag/roce-v1-and-v2.txt");
    assert_eq!(net(&d)["gidIndex"], 3);
    assert_eq!(rules(&d), [("RDG106", 1), ("RDG103", 8)]);
    assert_eq!(
        d.messages[1],
        "mlx5_2 has no RoCE v2 GID with an IPv4 address, only a RoCE v1 one (index 2); RoCE v1 and v2 do not interoperate, so it cannot reach the other NICs' RoCE v2 GIDs"
    );

    let d = capture("tests/diag/gid-disagree.txt");
    let at = d.findings.iter().position(|(r, _)| r == "RDG103").unwrap();
    assert_eq!(
        d.messages[at],
        "mlx5_3 has no GID with an IPv4 address: its netdev has no IPv4 address, and NCCL's dynamic selection keeps index 0, the link-local GID, which does not leave the L2 segment"
    );
}

#[test]
fn missing_packages_damaged_lines_and_truncation() {
    let d = capture("tests/diag/packages-and-damage.txt");
    assert_eq!(d.code, 1, "missing RDMA packages are errors");
    assert!(
        has(&d, "RDG100", 4),
        "the stray line, by number: {:?}",
        d.findings
    );
    assert!(has(&d, "RDG082", 16), "librdmacm1 rc: {:?}", d.findings);
    assert!(
        d.findings.iter().any(|(r, _)| r == "RDG082"),
        "perftest missing"
    );
    assert!(has(&d, "RDG101", 3), "mlx5_2 DOWN: {:?}", d.findings);
    assert_eq!(
        net(&d)["hcas"],
        serde_json::json!(["mlx5_1"]),
        "the pool is still printed"
    );
}

#[test]
fn nothing_to_detect_is_an_error_and_no_capture_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "# nothing here\n").unwrap();
    let d = capture(empty.to_str().unwrap());
    assert_eq!(d.code, 1);
    assert_eq!(d.pool, Value::Null);
    assert_eq!(d.findings[0].0, "RDG108");
    assert_eq!(rdmagen(&["detect"]).status.code(), Some(2));
}

/// detect never prints a pool that render rejects (issue 10, defect 17: `hcas: ["",
/// mlx5_0]` once went out with exit 0). A device name no pool accepts is an unreadable
/// line, and the printed pool goes through the checks render makes (`check_pool`).
#[test]
fn a_device_name_render_would_reject_never_reaches_the_pool() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("links.txt");
    std::fs::write(
        &path,
        "$ rdma link show\n\
         link /1 state ACTIVE physical_state LINK_UP netdev eth1\n\
         link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev eth0\n",
    )
    .unwrap();
    let file = path.to_str().unwrap();
    // eth9 carries no device: every device is a data NIC.
    let out = rdmagen(&["detect", "--capture", file, "--management-netdev", "eth9"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!(
            "warning[RDG100]: cannot read `link /1 state ACTIVE physical_state LINK_UP netdev eth1`; skipped\n --> {file}:2:1\n"
        )),
        "{}",
        text(&out.stderr)
    );
    let pool = dir.path().join("pool.yaml");
    std::fs::write(&pool, &out.stdout).unwrap();
    assert!(text(&out.stdout).contains("    hcas: [mlx5_0]\n"));
    let job = dir.path().join("job.yaml");
    std::fs::write(
        &job,
        "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: j}\n\
         spec: {pool: detected, image: i, nodes: 2, gpusPerNode: 8, script: t.py}\n",
    )
    .unwrap();
    let validate = rdmagen(&[
        "validate",
        job.to_str().unwrap(),
        "--pools",
        pool.to_str().unwrap(),
    ]);
    assert!(
        !text(&validate.stderr).contains("error["),
        "{}",
        text(&validate.stderr)
    );
}

/// The detected pool, used with a job, renders the NCCL variables the capture implies.
#[test]
fn a_detected_pool_renders_what_the_capture_implies() {
    let out = rdmagen(&[
        "detect",
        "--capture",
        "tests/diag/roce-host.txt",
        "--name",
        "lab-roce",
    ]);
    assert!(out.status.success());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pool.yaml"), &out.stdout).unwrap();
    std::fs::write(
        dir.path().join("job.yaml"),
        "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: probe}\nspec:\n  pool: lab-roce\n  image: img:1\n  nodes: 2\n  gpusPerNode: 8\n  script: t.py\n",
    )
    .unwrap();
    let out = rdmagen(&["render", dir.path().to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let docs = rdmagen::verify::parse(&text(&out.stdout)).unwrap();
    let env = docs[0]["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
        ["env"]
        .as_array()
        .unwrap()
        .clone();
    let get = |name: &str| {
        env.iter()
            .find(|v| v["name"] == name)
            .map(|v| v["value"].clone())
    };
    assert_eq!(
        get("NCCL_IB_HCA"),
        Some("=mlx5_1,mlx5_2,mlx5_3,mlx5_4".into())
    );
    assert_eq!(get("NCCL_IB_GID_INDEX"), Some("3".into()));
    assert_eq!(get("NCCL_SOCKET_IFNAME"), Some("eth0".into()));
    // NCCL_IB_DISABLE=0 is NCCL's default: not written.
    assert_eq!(get("NCCL_IB_DISABLE"), None);
}

/// Render a two-node whole-node job on the pool detect printed (`pool`, named
/// `name`): the training container's env, the worker pod, and render's stderr.
fn render_on(pool: &[u8], name: &str) -> (Vec<Value>, Value, String) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("pool.yaml"), pool).unwrap();
    std::fs::write(
        dir.path().join("job.yaml"),
        format!("apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {{name: probe}}\nspec:\n  pool: {name}\n  image: img:1\n  nodes: 2\n  gpusPerNode: 8\n  script: t.py\n"),
    )
    .unwrap();
    let out = rdmagen(&["render", dir.path().to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let docs = rdmagen::verify::parse(&text(&out.stdout)).unwrap();
    let pod = docs[0]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"].clone();
    let env = pod["spec"]["containers"][0]["env"]
        .as_array()
        .unwrap()
        .clone();
    (env, pod, stderr)
}

fn env_value(env: &[Value], name: &str) -> Option<Value> {
    env.iter()
        .find(|v| v["name"] == name)
        .map(|v| v["value"].clone())
}

/// Issue 24: a host whose management NIC is bond0 (over mlx5_bond_0). Its host netdev
/// is named by --management-netdev and recorded as the host's (hostInterfaces,
/// managementNic); pods on the cluster network bootstrap on eth0, which the host does
/// not have. The pool renders without RDG177.
#[test]
fn a_bonded_management_nic_stays_on_the_host_and_pods_bootstrap_on_eth0() {
    let bond = "tests/diag/roce-host-bond.txt";
    let d = run(&["--capture", bond, "--management-netdev", "bond0"]);
    assert_eq!(d.code, 0);
    assert!(d.findings.is_empty(), "{:?}", d.findings);
    assert_eq!(
        *net(&d),
        serde_json::json!({
            "fabric": "roce",
            "hcas": ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"],
            "socketIfname": "eth0",
            "hostInterfaces": ["bond0", "ens1np0", "ens2np0", "ens3np0", "ens4np0"],
            "gidIndex": 3,
            "managementNic": "mlx5_bond_0",
        })
    );
    let out = rdmagen(&[
        "detect",
        "--capture",
        bond,
        "--management-netdev",
        "bond0",
        "--name",
        "bonded",
    ]);
    let (env, _, stderr) = render_on(&out.stdout, "bonded");
    assert!(!stderr.contains("RDG177"), "{stderr}");
    assert_eq!(env_value(&env, "NCCL_SOCKET_IFNAME"), Some("eth0".into()));
    assert_eq!(
        env_value(&env, "NCCL_IB_HCA"),
        Some("=mlx5_0,mlx5_1,mlx5_2,mlx5_3".into())
    );

    // The old spelling, --socket-ifname for the management netdev, would give pods a
    // host netdev: a usage error that names the capture line and both ways out.
    let out = rdmagen(&["detect", "--capture", bond, "--socket-ifname", "bond0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(
        text(&out.stderr),
        "error: --socket-ifname bond0: tests/diag/roce-host-bond.txt:10:1 shows bond0 as a host netdev of mlx5_bond_0. --socket-ifname is the pod's bootstrap interface (eth0 for pods on the cluster network); name the host's management netdev with --management-netdev bond0, or give --attachment hostNetwork for pods on the host's network, which bootstrap on bond0\n"
    );
}

/// On hostNetwork the pod has the host's netdevs: socketIfname is the management
/// netdev, named by either flag, and one of hostInterfaces.
#[test]
fn a_host_network_pool_bootstraps_on_the_host_netdev() {
    let bond = "tests/diag/roce-host-bond.txt";
    for flag in ["--management-netdev", "--socket-ifname"] {
        let d = run(&[
            "--capture",
            bond,
            "--attachment",
            "hostNetwork",
            flag,
            "bond0",
        ]);
        assert_eq!(d.code, 0, "{flag}");
        assert!(d.findings.is_empty(), "{flag}: {:?}", d.findings);
        assert_eq!(
            *net(&d),
            serde_json::json!({
                "fabric": "roce",
                "attachment": "hostNetwork",
                "hcas": ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"],
                "socketIfname": "bond0",
                "hostInterfaces": ["bond0", "ens1np0", "ens2np0", "ens3np0", "ens4np0"],
                "gidIndex": 3,
                "managementNic": "mlx5_bond_0",
            }),
            "{flag}"
        );
    }
    let out = rdmagen(&[
        "detect",
        "--capture",
        bond,
        "--attachment",
        "hostNetwork",
        "--management-netdev",
        "bond0",
        "--name",
        "hostnet",
    ]);
    let (env, pod, stderr) = render_on(&out.stdout, "hostnet");
    assert!(!stderr.contains("RDG177"), "{stderr}");
    assert_eq!(pod["spec"]["hostNetwork"], true);
    assert_eq!(env_value(&env, "NCCL_SOCKET_IFNAME"), Some("bond0".into()));
}

/// Issue 24: inside a pod with 8 SR-IOV VFs (physfn links, net1..net8), detect proposes
/// attachment: sriov, one rail per VF in netN order, podInterfaces auto, eth0 for
/// bootstrap and no hcas (the VFs' names are the host's choice). The rails' names are
/// not in any capture: without --rail-resource/--rail-network no pool is printed and
/// RDG179 says which flags to give, at the first VF's physfn line.
#[test]
fn an_in_pod_capture_of_eight_vfs_proposes_sriov() {
    let pod = "tests/diag/sriov-pod.txt";
    let d = run(&["--in-pod", "--capture", pod]);
    assert_eq!(d.code, 1);
    assert_eq!(d.pool, Value::Null);
    assert_eq!(rules(&d), [("RDG179", 24), ("RDG105", 35)]);
    assert_eq!(
        d.messages[0],
        "attachment: sriov: the pool needs 8 rail(s), each a device-plugin resource and the Multus network that attaches it, which no capture shows; give --rail-resource and --rail-network (`{n}` stands for the rail's number: --rail-resource nvidia.com/rail{n} --rail-network gpu-rail{n}; without it one entry stands for every rail)"
    );

    let per_rail = [
        "--in-pod",
        "--capture",
        pod,
        "--rail-resource",
        "nvidia.com/rail{n}",
        "--rail-network",
        "gpu-rail{n}",
    ];
    let d = run(&per_rail);
    assert_eq!(d.code, 0);
    assert_eq!(rules(&d), [("RDG105", 35)]);
    let rails: Vec<Value> = (1..=8)
        .map(|n| serde_json::json!({"resource": format!("nvidia.com/rail{n}"), "network": format!("gpu-rail{n}")}))
        .collect();
    assert_eq!(
        *net(&d),
        serde_json::json!({
            "fabric": "roce",
            "attachment": "sriov",
            "rails": rails,
            "podInterfaces": "auto",
            "socketIfname": "eth0",
            "gidIndex": "auto",
        })
    );
    let mut args = vec!["detect"];
    args.extend_from_slice(&per_rail);
    args.extend(["--name", "vfs"]);
    let out = rdmagen(&args);
    let (env, pod_template, stderr) = render_on(&out.stdout, "vfs");
    assert!(!stderr.contains("error["), "{stderr}");
    assert_eq!(env_value(&env, "NCCL_SOCKET_IFNAME"), Some("eth0".into()));
    assert_eq!(
        env_value(&env, "NCCL_IB_HCA"),
        None,
        "the pod's VFs are all it has"
    );
    assert_eq!(
        pod_template["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"],
        (1..=8)
            .map(|n| format!("gpu-rail{n}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let limits = &pod_template["spec"]["containers"][0]["resources"]["limits"];
    for n in 1..=8 {
        assert_eq!(limits[format!("nvidia.com/rail{n}")], "1", "{limits}");
    }

    // One pool of VFs: one entry with a count.
    let d = run(&[
        "--in-pod",
        "--capture",
        pod,
        "--rail-resource",
        "nvidia.com/sriov_rdma",
        "--rail-network",
        "sriov-rdma",
        "--rail-namespace",
        "netops",
    ]);
    assert_eq!(d.code, 0);
    assert_eq!(
        net(&d)["rails"],
        serde_json::json!([{"resource": "nvidia.com/sriov_rdma", "count": 8, "network": "sriov-rdma", "namespace": "netops"}])
    );
}

/// Rail names on a pool without rails are a usage error, as is a rail name the
/// Multus annotation cannot hold (the pool is checked before it is printed).
#[test]
fn rail_flags_need_a_rail_attachment_and_valid_names() {
    let out = rdmagen(&[
        "detect",
        "--capture",
        "tests/diag/roce-host.txt",
        "--rail-network",
        "gpu-rail{n}",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: --rail-resource, --rail-network and --rail-namespace describe the rails of attachment sriov or hostdev, and the pool's attachment is (unset); give --attachment sriov or hostdev, or --in-pod with captures of the pod's VFs\n"
    );
    let d = run(&[
        "--in-pod",
        "--capture",
        "tests/diag/sriov-pod.txt",
        "--rail-resource",
        "nvidia.com/rail{n}",
        "--rail-network",
        "GPU_rail{n}",
    ]);
    assert_eq!(d.code, 1);
    assert_eq!(d.pool, Value::Null, "a pool render rejects is not printed");
    assert!(
        d.findings.iter().any(|(r, _)| r == "RDG179"),
        "{:?}",
        d.findings
    );
}

/// The printed capture script's sysfs loop, run against a fake sysfs tree, produces
/// lines detect reads (show_gids' format).
#[test]
fn the_capture_commands_work_on_a_fake_sysfs() {
    let script = text(&rdmagen(&["detect", "--print-commands"]).stdout);
    assert!(
        script.contains("rdma link show")
            && script.contains("ibstat")
            && script.contains("dpkg -l infiniband-diags")
    );
    let start = script.find("for p in /sys/class/infiniband").unwrap();
    let end = script[start..].find("\n  fi").unwrap() + start;
    let dir = tempfile::tempdir().unwrap();
    let sys = dir.path().join("infiniband");
    for (dev, ndev, host) in [("mlx5_1", "eth1", 1), ("mlx5_2", "eth2", 2)] {
        let port = sys.join(dev).join("ports/1");
        for sub in ["gids", "gid_attrs/types", "gid_attrs/ndevs"] {
            std::fs::create_dir_all(port.join(sub)).unwrap();
        }
        let rows = [
            (
                0,
                "fe80:0000:0000:0000:0c42:a1ff:fe00:0001".to_owned(),
                "IB/RoCE v1",
            ),
            (
                1,
                "fe80:0000:0000:0000:0c42:a1ff:fe00:0001".to_owned(),
                "RoCE v2",
            ),
            (
                2,
                format!("0000:0000:0000:0000:0000:ffff:0a00:000{host}"),
                "IB/RoCE v1",
            ),
            (
                3,
                format!("0000:0000:0000:0000:0000:ffff:0a00:000{host}"),
                "RoCE v2",
            ),
            (4, "0000:0000:0000:0000:0000:0000:0000:0000".to_owned(), ""),
        ];
        for (i, gid, kind) in rows {
            std::fs::write(port.join(format!("gids/{i}")), format!("{gid}\n")).unwrap();
            if !kind.is_empty() {
                std::fs::write(
                    port.join(format!("gid_attrs/types/{i}")),
                    format!("{kind}\n"),
                )
                .unwrap();
                std::fs::write(
                    port.join(format!("gid_attrs/ndevs/{i}")),
                    format!("{ndev}\n"),
                )
                .unwrap();
            }
        }
    }
    let body = script[start..end].replace("/sys/class/infiniband", sys.to_str().unwrap());
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(&body)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let capture_file = dir.path().join("capture.txt");
    std::fs::write(
        &capture_file,
        format!(
            "DEV\tPORT\tINDEX\tGID\tIPv4\tVER\tDEV\n{}",
            text(&out.stdout)
        ),
    )
    .unwrap();
    let d = capture(capture_file.to_str().unwrap());
    assert_eq!(net(&d)["gidIndex"], 3, "{}", text(&out.stdout));
    assert_eq!(net(&d)["hcas"], serde_json::json!(["mlx5_1", "mlx5_2"]));
    assert!(
        d.findings.iter().all(|(r, _)| r == "RDG106"),
        "{:?}",
        d.findings
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Arbitrary text, and arbitrary mixtures of real capture lines, never panic.
    #[test]
    fn arbitrary_text_never_panics(
        noise in any::<String>(),
        lines in proptest::collection::vec(prop_oneof![
            Just("CA 'mlx5_0'".to_owned()),
            Just("\tPort 1:".to_owned()),
            Just("\t\tLink layer: Ethernet".to_owned()),
            Just("\t\tState: Active".to_owned()),
            Just("hca_id: mlx5_1".to_owned()),
            Just("\tport:\t1".to_owned()),
            Just("\tGID[  3]:\t::ffff:10.0.0.1, RoCE v2".to_owned()),
            Just("DEV\tPORT\tINDEX\tGID\tIPv4\tVER\tDEV".to_owned()),
            Just("mlx5_1\t1\t3\t0000:0000:0000:0000:0000:ffff:0a00:0001\t10.0.0.1\tv2\teth1".to_owned()),
            Just("link mlx5_2/1 state ACTIVE physical_state LINK_UP netdev eth0".to_owned()),
            Just("link /".to_owned()),
            Just("ii  perftest 1 amd64 x".to_owned()),
            Just("\tGPU0\tGPU1\tNIC0\tCPU Affinity".to_owned()),
            Just("GPU0\t X \tNV4\tPIX\t0-31".to_owned()),
            Just("GPU1\tNV4\t X \tSYS".to_owned()),
            Just("NIC Legend:".to_owned()),
            Just("  NIC0: mlx5_1".to_owned()),
            Just("GPU 0: NVIDIA H100 (UUID: GPU-1)".to_owned()),
            Just("Module                  Size  Used by".to_owned()),
            Just("nvidia 56807424 1 - Live 0x0 (POE)".to_owned()),
            "[ -~\\t]{0,60}",
        ], 0..40),
    ) {
        let text = format!("{}\n{noise}", lines.join("\n"));
        let mut obs = Observations::default();
        capture::read(&mut obs, &Arc::from("fuzz.txt"), &text);
        let options = Options {
            name: "p".into(),
            platform: Platform::Generic,
            gpus_per_node: Some(8),
            ..Options::default()
        };
        let mut findings = Findings::default();
        let _ = detect(&obs, &options, &mut findings);
    }
}

#[test]
fn a_capture_can_come_from_stdin() {
    use std::io::Write;
    let capture = std::fs::read(root().join("tests/diag/roce-host.txt")).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rdmagen"))
        .args(["detect", "--capture", "-", "--name", "from-stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&capture).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let pool: Value = serde_saphyr::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(pool["metadata"]["name"], "from-stdin");
    assert_eq!(pool["spec"]["network"]["gidIndex"], 3);
}

/// Found by tests/fuzz: `CA '---<TAB>mlx5_0'` became an HCA of the detected pool,
/// which detect printed without an error and render then rejected.
#[test]
fn a_device_name_no_pool_accepts_is_an_unreadable_line() {
    let text = "CA 'mlx5_0\tbroken'\n\tPort 1:\n\t\tLink layer: InfiniBand\n\
                hca_id:\tml'x\n\
                link ml x/1 state ACTIVE physical_state LINK_UP netdev eth1\n\
                link mlx5_1/1 state ACTIVE physical_state LINK_UP netdev eth1\n";
    let mut obs = Observations::default();
    capture::read(&mut obs, &Arc::from("capture.txt"), text);
    let devices: Vec<&str> = obs.ports.keys().map(|(d, _)| d.as_str()).collect();
    assert_eq!(devices, ["mlx5_1"]);
    let lines: Vec<usize> = obs.unreadable.iter().map(|(at, _)| at.line).collect();
    assert_eq!(lines, [1, 2, 3, 4, 5]);
}

/// `--attachment` on a host capture: `shared` and `ipoib` pods see the host's HCAs and
/// GID table, so hcas and the host's index stay; `sriov` pods have their own VFs,
/// whose GID tables hold the pod's addresses, so no hcas, one rail per data NIC, and
/// `gidIndex: auto` rather than the host's index.
#[test]
fn an_attachment_on_a_host_capture_decides_what_the_host_tells_about_the_pod() {
    let bond = "tests/diag/roce-host-bond.txt";
    let d = run(&[
        "--capture",
        bond,
        "--management-netdev",
        "bond0",
        "--attachment",
        "shared",
    ]);
    assert_eq!(d.code, 0);
    assert_eq!(net(&d)["attachment"], "shared");
    assert_eq!(
        net(&d)["hcas"],
        serde_json::json!(["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"])
    );
    assert_eq!(net(&d)["gidIndex"], 3, "the host's index");
    // IPoIB is InfiniBand's: on a RoCE capture it is a usage error, naming the line
    // that shows the link layer; on an InfiniBand capture the pods keep host names.
    let out = rdmagen(&[
        "detect",
        "--capture",
        bond,
        "--management-netdev",
        "bond0",
        "--attachment",
        "ipoib",
    ]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--attachment ipoib: tests/diag/roce-host-bond.txt:")
            && stderr.contains("shows a roce link layer, and IPoIB runs only on InfiniBand ports"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    let d = run(&[
        "--capture",
        "tests/diag/ib-host.txt",
        "--attachment",
        "ipoib",
    ]);
    assert_eq!(d.code, 0, "{:?}", d.messages);
    assert_eq!(net(&d)["attachment"], "ipoib");
    assert!(net(&d)["hcas"].as_array().is_some_and(|h| !h.is_empty()));
    let d = run(&[
        "--capture",
        bond,
        "--management-netdev",
        "bond0",
        "--attachment",
        "sriov",
        "--rail-resource",
        "nvidia.com/rail{n}",
        "--rail-network",
        "rail{n}",
    ]);
    assert_eq!(d.code, 0);
    assert!(net(&d)["hcas"].is_null());
    assert_eq!(net(&d)["gidIndex"], "auto");
    assert_eq!(net(&d)["socketIfname"], "eth0");
    let rails = net(&d)["rails"].as_array().unwrap();
    assert_eq!(rails.len(), 4);
    assert_eq!(
        rails[3],
        serde_json::json!({"resource": "nvidia.com/rail4", "network": "rail4"})
    );
}

/// Each real `nvidia-smi topo -m` (tests/diag/reference/SOURCE.md) read alone: every
/// NIC of the matrix with its nearest GPUs and link, in rail order (the NIC of GPU0
/// first, NICs that serve no GPU last).
#[test]
fn real_topology_captures_give_the_affinity_map() {
    /// (NIC, link, GPUs) of one NIC.
    type Nic = (String, String, Vec<u32>);
    let map = |file: &str| -> (Vec<Nic>, usize, usize) {
        let text = std::fs::read_to_string(root().join(sample(file))).unwrap();
        let mut obs = Observations::default();
        capture::read(&mut obs, &Arc::from(file), &text);
        let matrix = obs.topology.as_ref().expect("a matrix");
        let a = affinity::map(matrix, None);
        let nics = a
            .nics
            .iter()
            .map(|n| (n.name.clone(), n.link.name(), n.gpus.clone()))
            .collect();
        (nics, a.rows, a.gpus)
    };
    let nic =
        |name: &str, link: &str, gpus: &[u32]| (name.to_owned(), link.to_owned(), gpus.to_vec());

    // 8 GPUs, each on its own NIC's switch, in reverse order; NIC0 on no GPU's tree.
    let (nics, rows, gpus) = map("topo-nccl-1453.txt");
    assert_eq!((rows, gpus), (8, 8));
    assert_eq!(
        nics,
        [
            nic("NIC8", "PIX", &[0]),
            nic("NIC7", "PIX", &[1]),
            nic("NIC6", "PIX", &[2]),
            nic("NIC5", "PIX", &[3]),
            nic("NIC4", "PIX", &[4]),
            nic("NIC3", "PIX", &[5]),
            nic("NIC2", "PIX", &[6]),
            nic("NIC1", "PIX", &[7]),
            nic("NIC0", "SYS", &[0, 1, 2, 3, 4, 5, 6, 7]),
        ]
    );

    // The NIC legend names the devices.
    let (nics, rows, gpus) = map("topo-nccl-tests-320.txt");
    assert_eq!((rows, gpus), (3, 3));
    assert_eq!(
        nics,
        [nic("mlx5_0", "PHB", &[2]), nic("mlx5_1", "PHB", &[2])]
    );

    // The older form names the devices as columns; 5 of 16 GPU rows quoted.
    let (nics, rows, gpus) = map("topo-nccl-tests-78.txt");
    assert_eq!((rows, gpus), (5, 16));
    assert_eq!(
        nics[..4],
        [
            nic("mlx5_0", "PIX", &[0, 1]),
            nic("mlx5_1", "PIX", &[2, 3]),
            nic("mlx5_2", "PIX", &[4]),
            nic("mlx5_3", "PXB", &[4]),
        ]
    );
    assert!(
        nics[4..].iter().all(|(_, link, _)| link == "SYS"),
        "{nics:?}"
    );

    // Rows damaged in pasting are left out; GPU4's and GPU5's still read.
    let (nics, rows, _) = map("topo-nccl-820.txt");
    assert_eq!(rows, 2);
    assert_eq!(nics[0], nic("mlx5_6", "PXB", &[4, 5]));
}

/// NVIDIA/nccl#1453's NIC0 is SYS to every GPU: RDG210 at the header (no legend names
/// it), and the report shows the map. No RDMA capture names a device, so no pool.
#[test]
fn a_real_nic_far_from_every_gpu_is_reported() {
    let file = sample("topo-nccl-1453.txt");
    let d = run(&["--gpu-topology", &file]);
    assert_eq!(d.code, 1, "no RDMA device: RDG108");
    assert_eq!(rules(&d), [("RDG108", 1), ("RDG210", 5)]);
    assert_eq!(
        d.messages[1],
        "NIC0 is far from every GPU: its nearest link is SYS (to GPU0, GPU1, GPU2, GPU3, GPU4, GPU5, GPU6, GPU7), which crosses the CPU's interconnect, so GPUDirect RDMA through it is slow or off and its GPUs' traffic is staged through host memory; if it is not meant for training (storage, management), keep it out of hcas"
    );
    let out = rdmagen(&["detect", "--gpu-topology", &file]);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(
            "GPU↔NIC affinity (nvidia-smi topo -m), in rail order:\n  NIC8  PIX   GPU0\n  NIC7  PIX   GPU1\n"
        ) && stderr.contains("\n  NIC0  SYS   GPU0 GPU1 GPU2 GPU3 GPU4 GPU5 GPU6 GPU7\ndetected no pool"),
        "{stderr}"
    );

    // Part of a matrix (5 of 16 GPU rows) judges nothing: its SYS NICs may serve the
    // GPUs whose rows are missing. The echoed command line is an unreadable line.
    let d = run(&["--gpu-topology", &sample("topo-nccl-tests-78.txt")]);
    assert_eq!(rules(&d), [("RDG108", 1), ("RDG100", 5)]);
}

/// A matrix damaged in pasting (NVIDIA/nccl#820: `NODENODE`) is reported at the cell's
/// line and column, as every capture line detect cannot read, and the row left out.
#[test]
fn a_damaged_matrix_names_the_line_and_column() {
    let file = sample("topo-nccl-820.txt");
    let d = run(&["--gpu-topology", &file]);
    let text = std::fs::read_to_string(root().join(&file)).unwrap();
    let line5 = text.lines().nth(5).unwrap();
    let column = line5.find("NODENODE").unwrap() as u64 + 1;
    assert_eq!(
        rules(&d),
        [
            ("RDG108", 1),
            ("RDG100", 6),
            ("RDG100", 7),
            ("RDG100", 8),
            ("RDG100", 9)
        ]
    );
    assert_eq!(d.columns[1..], [column; 4]);
    assert_eq!(
        d.messages[1],
        "`NODENODE` in row GPU0, column mlx5_4 of nvidia-smi topo -m is no link (X, NV#, PIX, PXB, PHB, NODE, SYS); row left out"
    );

    // Cut short, and far too wide: the row's end, and the 1025th column, by number;
    // a header of 100 000 columns is not read past its limit.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("topo.txt");
    let wide: Vec<String> = (0..100_000).map(|i| format!("GPU{}", i % 8)).collect();
    std::fs::write(
        &path,
        format!(
            "\tGPU0\tGPU1\tNIC0\tCPU Affinity\nGPU0\t X \tNV4\nGPU0 {}\n",
            wide.join(" ")
        ),
    )
    .unwrap();
    let d = run(&["--gpu-topology", path.to_str().unwrap()]);
    assert_eq!(rules(&d), [("RDG108", 1), ("RDG100", 2), ("RDG100", 3)]);
    // One past the last cell; the 1025th column, each `GPUn ` five characters wide.
    assert_eq!(d.columns[1..], [13, 1 + 1024 * 5]);
    assert_eq!(
        d.messages[1..],
        [
            "row GPU0 of nvidia-smi topo -m has 2 of 3 cells (cut short?); left out",
            "a topology matrix of more than 1024 devices; not read (nvidia-smi topo -m shows at most a few dozen)"
        ]
    );
}

/// A host capture with the topology (synthetic, around NVIDIA/nccl#1453's real matrix):
/// the pool gets the GPUs' count and model, the line-rate label, hcas in rail order,
/// the affinity map and nvidia_peermem; the far NIC and the missing nvidia_peermem are
/// reported; and the pool is one render accepts.
#[test]
fn a_topology_capture_completes_the_pool() {
    let host = "tests/diag/topology-host.txt";
    let d = capture(host);
    assert_eq!(d.code, 0, "{:?}", d.messages);
    assert_eq!(rules(&d), [("RDG106", 1), ("RDG210", 115), ("RDG212", 136)]);
    let spec = &d.pool["spec"];
    assert_eq!(
        spec["gpu"],
        serde_json::json!({"model": "NVIDIA H100 80GB HBM3", "perNode": 8})
    );
    assert_eq!(spec["network"]["label"], "IB 9*400G");
    let rail_order: Vec<String> = (1..=8)
        .rev()
        .map(|n| format!("mlx5_{n}"))
        .chain(["mlx5_0".to_owned()])
        .collect();
    assert_eq!(spec["network"]["hcas"], serde_json::json!(rail_order));
    let nics = spec["topology"]["nics"].as_array().unwrap();
    assert_eq!(nics.len(), 9);
    assert_eq!(
        nics[0],
        serde_json::json!({"name": "mlx5_8", "link": "PIX", "gpus": [0]})
    );
    assert_eq!(
        nics[8],
        serde_json::json!({"name": "mlx5_0", "link": "SYS", "gpus": [0, 1, 2, 3, 4, 5, 6, 7]})
    );
    assert_eq!(spec["topology"]["nvidiaPeermem"], false);

    let out = rdmagen(&["detect", "--capture", host, "--name", "h100-ib"]);
    let (env, _, stderr) = render_on(&out.stdout, "h100-ib");
    assert!(!stderr.contains("error["), "{stderr}");
    assert_eq!(
        env_value(&env, "NCCL_IB_HCA"),
        Some(format!("={}", rail_order.join(",")).into())
    );

    // --gpus wins over nvidia-smi -L, and says so.
    let out = rdmagen(&["detect", "--capture", host, "--gpus", "4"]);
    let pool = text(&out.stdout);
    assert!(
        pool.contains("    perNode: 4\n")
            && pool.contains("#   gpu.perNode 4 as --gpus says; nvidia-smi -L lists 8\n"),
        "{pool}"
    );
}

/// 8 GPUs over 3 data NICs (synthetic): RDG211 names each NIC's GPUs.
#[test]
fn gpus_sharing_nics_unevenly_are_reported() {
    let d = capture("tests/diag/topology-uneven.txt");
    assert_eq!(rules(&d), [("RDG211", 7)]);
    assert_eq!(
        d.messages[0],
        "the GPUs share the data NICs unevenly (mlx5_1: GPU0, GPU1, GPU2, GPU3; mlx5_2: GPU4, GPU5; mlx5_3: GPU6, GPU7): a NIC nearest to 4 GPUs gives each of them 1/4 of its rate while others give theirs 1/2, and collectives run at the pace of the busiest NIC"
    );
    assert_eq!(
        net(&d)["hcas"],
        serde_json::json!(["mlx5_1", "mlx5_2", "mlx5_3"])
    );
}

/// `nvidia-smi -L`, lsmod and /proc/modules as detect reads them.
#[test]
fn gpu_list_and_module_lists() {
    let text = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-aaaa)\n  MIG 3g.40gb     Device  0: (UUID: MIG-bbbb)\nGPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-cccc)\nModule                  Size  Used by\nnvidia_peermem         16384  0\nnv_peer_mem x\nib_core 450560 1 - Live 0x0000000000000000\n";
    let mut obs = Observations::default();
    capture::read(&mut obs, &Arc::from("c.txt"), text);
    let gpus: Vec<(u32, &str, usize)> = obs
        .gpus
        .iter()
        .map(|(i, m, at)| (*i, m.as_str(), at.line))
        .collect();
    assert_eq!(
        gpus,
        [
            (0, "NVIDIA A100-SXM4-80GB", 1),
            (1, "NVIDIA A100-SXM4-80GB", 3)
        ]
    );
    let modules: Vec<(&str, usize)> = obs
        .modules
        .as_ref()
        .unwrap()
        .iter()
        .map(|(m, at)| (m.as_str(), at.line))
        .collect();
    assert_eq!(modules, [("ib_core", 7), ("nvidia_peermem", 5)]);
    let unreadable: Vec<usize> = obs.unreadable.iter().map(|(at, _)| at.line).collect();
    assert_eq!(unreadable, [6]);
}

/// --print-commands captures what detect now reads: its nvidia-smi and lsmod lines, run
/// with stand-ins that print a real matrix (NVIDIA/nccl-tests#320), a GPU list and a
/// module list, give lines detect reads; without nvidia-smi they print nothing.
#[test]
fn the_capture_commands_take_the_topology() {
    use std::os::unix::fs::PermissionsExt;
    let script = text(&rdmagen(&["detect", "--print-commands"]).stdout);
    let lines: Vec<&str> = script
        .lines()
        .filter(|l| l.contains("nvidia-smi topo -m;") || l.contains("lsmod 2>/dev/null"))
        .collect();
    assert_eq!(lines.len(), 2, "{script}");
    let dir = tempfile::tempdir().unwrap();
    let matrix = root().join(sample("topo-nccl-tests-320.txt"));
    let stub = |name: &str, body: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    // Plain nvidia-smi prints the (constructed) table of tests/diag/nvidia-smi-h100.txt.
    let table = root().join("tests/diag/nvidia-smi-h100.txt");
    stub(
        "nvidia-smi",
        format!(
            "case \"$1\" in '') grep -v -e '^#' -e '^/sys' '{}';; topo) grep -v '^#' '{}';; -L) echo 'GPU 0: NVIDIA A30 (UUID: GPU-0)'; echo 'GPU 1: NVIDIA A30 (UUID: GPU-1)'; echo 'GPU 2: NVIDIA A30 (UUID: GPU-2)';; esac",
            table.display(),
            matrix.display()
        ),
    );
    stub(
        "lsmod",
        "printf 'Module                  Size  Used by\\nnvidia_peermem         16384  0\\n'"
            .to_owned(),
    );
    let run_with = |path: &str| {
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(lines.join("\n"))
            .env("PATH", path)
            .output()
            .unwrap();
        text(&out.stdout)
    };
    let captured = run_with(&format!("{}:/usr/bin:/bin", dir.path().display()));
    let mut obs = Observations::default();
    capture::read(&mut obs, &Arc::from("capture.txt"), &captured);
    assert!(
        obs.unreadable.is_empty() && obs.damaged.is_empty(),
        "{captured}"
    );
    let a = affinity::map(obs.topology.as_ref().expect(&captured), None);
    let names: Vec<&str> = a.nics.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(names, ["mlx5_0", "mlx5_1"]);
    assert_eq!(obs.gpus.len(), 3);
    assert_eq!(
        obs.gpu_table.len(),
        8,
        "plain nvidia-smi's rows: {captured}"
    );
    assert!(obs.modules.unwrap().contains_key("nvidia_peermem"));

    // No nvidia-smi (an image without the driver's tools) and no lsmod: nothing from
    // the first, and /proc/modules (read here by a stand-in `cat`) for the second.
    let bare = tempfile::tempdir().unwrap();
    let cat = bare.path().join("cat");
    std::fs::write(
        &cat,
        "#!/bin/sh\n[ \"$1\" = /proc/modules ] && printf 'nvidia 56807424 0 - Live 0x0 (POE)\\n'\n",
    )
    .unwrap();
    std::fs::set_permissions(&cat, std::fs::Permissions::from_mode(0o755)).unwrap();
    let captured = run_with(bare.path().to_str().unwrap());
    let mut obs = Observations::default();
    capture::read(&mut obs, &Arc::from("capture.txt"), &captured);
    assert!(
        obs.topology.is_none() && obs.gpus.is_empty() && obs.gpu_table.is_empty(),
        "{captured}"
    );
    let modules: Vec<String> = obs.modules.unwrap().into_keys().collect();
    assert_eq!(modules, ["nvidia"], "{captured}");
}

/// Issue 29: perftest is one of seed 000's two tools, which NCCL does not need, so a
/// node without it is no failure; and the line its own capture command prints for it
/// (`dpkg -l` with `2>&1`: "dpkg-query: no packages found matching perftest") is read,
/// not reported as unreadable.
#[test]
fn a_missing_perftest_is_a_warning_read_from_dpkg_querys_own_line() {
    let text = std::fs::read_to_string(crate::support::root().join("tests/diag/roce-host.txt"))
        .unwrap()
        .replace(
            "ii  perftest                44.0-2         amd64        package",
            "dpkg-query: no packages found matching perftest",
        );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("capture.txt");
    std::fs::write(&file, text).unwrap();
    let d = capture(file.to_str().unwrap());
    assert_eq!(d.code, 0, "{:?}", d.findings);
    assert!(has(&d, "RDG233", 48), "{:?}", d.findings);
    assert!(
        d.findings
            .iter()
            .all(|(r, _)| r != "RDG100" && r != "RDG082"),
        "{:?}",
        d.findings
    );
}

/// Issue 29, seed 001's `nvidia-smi` check: --print-commands captures plain nvidia-smi,
/// and detect reads the GPUs from its table (a capture constructed in the documented
/// layout, tests/diag/nvidia-smi-h100.txt) when no nvidia-smi -L says them: their
/// count and model go into the pool. The same file's rate files give network.label,
/// the field nccl-log's calibration reads, with the RoCE host's other captures.
#[test]
fn plain_nvidia_smi_and_the_rate_files_complete_the_pool() {
    let script = text(&rdmagen(&["detect", "--print-commands"]).stdout);
    assert!(
        script.contains("then nvidia-smi; nvidia-smi topo -m; nvidia-smi -L; fi")
            && script.contains("  grep -H . /sys/class/infiniband/*/ports/*/rate\n"),
        "{script}"
    );
    let table = "tests/diag/nvidia-smi-h100.txt";
    let d = run(&["--capture", "tests/diag/roce-host.txt", "--gpu-list", table]);
    assert_eq!(d.code, 0, "{:?}", d.messages);
    assert!(
        d.findings.iter().all(|(r, _)| r != "RDG108"),
        "every line of the table is read: {:?}",
        d.messages
    );
    let spec = &d.pool["spec"];
    assert_eq!(
        spec["gpu"],
        serde_json::json!({"model": "NVIDIA H100 80GB HBM3", "perNode": 8})
    );
    assert_eq!(
        spec["network"]["label"], "RoCE 4*200G",
        "the data NICs' rate files (mlx5_0, management, is 25G)"
    );
    let out = rdmagen(&[
        "detect",
        "--capture",
        "tests/diag/roce-host.txt",
        "--gpu-list",
        table,
    ]);
    let pool = text(&out.stdout);
    assert!(
        pool.contains("#   gpu.perNode 8: the GPUs nvidia-smi lists\n")
            && pool.contains("#   network.label RoCE 4*200G: sysfs' rate of each data NIC\n"),
        "{pool}"
    );
}

/// nvidia-smi cuts a name longer than its column to `...`, as in seed 001's own
/// `nvidia-smi` (tests/diag/seed-001-nvidia-smi.txt, driver 470, GPUs 1-7 elided by
/// the page): the row counts the GPU and gives no model (a note says to capture
/// nvidia-smi -L), and every line of the table is read. nvidia-smi -L, when captured
/// too, wins.
#[test]
fn a_cut_gpu_name_gives_the_count_and_no_model() {
    let file = "tests/diag/seed-001-nvidia-smi.txt";
    let table = std::fs::read_to_string(root().join(file)).unwrap();
    let mut obs = Observations::default();
    capture::read(&mut obs, &Arc::from(file), &table);
    assert!(obs.unreadable.is_empty(), "{:?}", obs.unreadable);
    let rows: Vec<(u32, Option<String>, usize)> = obs
        .gpu_table
        .iter()
        .map(|(i, m, at)| (*i, m.clone(), at.line))
        .collect();
    assert_eq!(rows, [(0, None, 10)]);
    let mut notes = Vec::new();
    assert_eq!(
        affinity::gpus(&obs, &mut notes),
        Some((1, None, "nvidia-smi"))
    );
    assert_eq!(
        notes,
        [
            "nvidia-smi cuts the GPU name to fit its table (`...`): gpu.model left out (capture nvidia-smi -L for the whole name)"
        ]
    );
    capture::read(
        &mut obs,
        &Arc::from("list.txt"),
        "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-a)\nGPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-b)\n",
    );
    let mut notes = Vec::new();
    assert_eq!(
        affinity::gpus(&obs, &mut notes),
        Some((2, Some("NVIDIA A100-SXM4-80GB".to_owned()), "nvidia-smi -L"))
    );
    assert!(notes.is_empty(), "{notes:?}");
}

/// Issue 29: the line rate from `ibv_devinfo -vv` (a real HDR capture, openucx/ucx#9908):
/// the active port's active_width 4X x active_speed 50.0 Gbps is 200 Gb/s, the
/// device's capability flags `-v` lists one a line are read, and the disabled port's
/// `invalid speed (0)` gives no rate. The same rate from sysfs' rate file alone, and
/// ibstat's `Rate:` (tests/diag/reference/ib-ibstat.txt) stays the first read.
#[test]
fn the_line_rate_comes_from_ibv_devinfo_and_sysfs() {
    let devinfo = sample("ib-ibv_devinfo-vv-hdr.txt");
    let d = run(&["--ibv-devinfo", &devinfo]);
    assert_eq!(d.code, 0, "{:?}", d.messages);
    assert!(
        d.findings.iter().all(|(r, _)| r != "RDG108"),
        "{:?}",
        d.messages
    );
    assert_eq!(net(&d)["fabric"], "ib");
    assert_eq!(
        net(&d)["hcas"],
        serde_json::json!(["mlx5_0"]),
        "mlx5_1 is disabled"
    );
    assert_eq!(net(&d)["label"], "IB 1*200G");
    let out = rdmagen(&["detect", "--ibv-devinfo", &devinfo]);
    assert!(
        text(&out.stdout).contains("#   network.label IB 1*200G: ibv_devinfo's active_width x active_speed of each data NIC\n"),
        "{}",
        text(&out.stdout)
    );
    let mut obs = Observations::default();
    capture::read(
        &mut obs,
        &Arc::from("d.txt"),
        &std::fs::read_to_string(root().join(&devinfo)).unwrap(),
    );
    let rates: Vec<(&str, Option<u32>)> = obs
        .ports
        .iter()
        .map(|((dev, _), p)| (dev.as_str(), p.rate.as_ref().map(|(r, _)| *r)))
        .collect();
    assert_eq!(rates, [("mlx5_0", Some(200)), ("mlx5_1", None)]);

    // The kernel's rate file, and the forms it takes: SDR's `2.5` is no whole rate,
    // the unmatched glob adds nothing, a damaged line is reported.
    let mut obs = Observations::default();
    capture::read(
        &mut obs,
        &Arc::from("rate.txt"),
        "/sys/class/infiniband/mlx5_3/ports/1/rate:400 Gb/sec (4X NDR)\n\
/sys/class/infiniband/mlx5_4/ports/1/rate:2.5 Gb/sec (1X SDR)\n\
grep: /sys/class/infiniband/*/ports/*/rate: No such file or directory\n\
/sys/class/infiniband/mlx5_5/ports/x/rate:400 Gb/sec (4X NDR)\n",
    );
    let rates: Vec<(&str, Option<u32>, &str)> = obs
        .ports
        .iter()
        .map(|((dev, _), p)| (dev.as_str(), p.rate.as_ref().map(|(r, _)| *r), p.rate_from))
        .collect();
    assert_eq!(
        rates,
        [("mlx5_3", Some(400), "sysfs' rate"), ("mlx5_4", None, "")]
    );
    let unreadable: Vec<usize> = obs.unreadable.iter().map(|(at, _)| at.line).collect();
    assert_eq!(unreadable, [4]);

    // ibstat read first keeps its rate; a later source does not replace it.
    let d = run(&[
        "--ibstat",
        &sample("ib-ibstat.txt"),
        "--ibv-devinfo",
        &devinfo,
    ]);
    assert_eq!(net(&d)["label"], "IB 1*200G");
}
