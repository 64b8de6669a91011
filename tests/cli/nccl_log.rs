//! `rdmagen nccl-log`: the verdict on every vendored sample is its SOURCES.txt ground
//! truth, and logs of eras no sample covers (written here from NCCL's format strings,
//! tests/nccl_logs/REFERENCE.md §1) get the verdict their lines call for.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::support::{rdmagen, rdmagen_in, root, text};

const SAMPLES: &str = "tests/nccl_logs/samples";
const POOLS: &str = "tests/nccl_logs/pools.yaml";

/// `nccl-log ARGS --format json` from the project root: (exit code, document).
fn verdict(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["nccl-log"];
    all.extend(args);
    all.extend(["--format", "json"]);
    json_of(&rdmagen(&all))
}

fn json_of(out: &Output) -> (i32, Value) {
    let body = text(&out.stdout);
    let doc = serde_json::from_str(&body)
        .unwrap_or_else(|e| panic!("{e}: not JSON:\n{body}\n{}", text(&out.stderr)));
    (out.status.code().unwrap_or(-1), doc)
}

/// Write `files` into a fresh directory and run `nccl-log` on them there.
fn synthetic(files: &[(&str, &str)], extra: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let pools = root().join(POOLS);
    let pools = pools.to_str().unwrap();
    let mut args = vec!["nccl-log"];
    args.extend(files.iter().map(|(n, _)| *n));
    for a in extra {
        args.push(if *a == "POOLS" { pools } else { a });
    }
    args.extend(["--format", "json"]);
    json_of(&rdmagen_in(dir.path(), &args))
}

fn rules(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_owned())
        .collect()
}

// ---------------------------------------------------------------- ground truth

/// One row of samples/SOURCES.txt: `file | thread | what it shows | RDMA used |
/// transport | GDR | NCCL version`.
struct Truth {
    file: String,
    rdma: String,
    transport: String,
    gdr: String,
    version: String,
}

fn truths() -> Vec<Truth> {
    let sources = std::fs::read_to_string(root().join(SAMPLES).join("SOURCES.txt")).unwrap();
    sources
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains(" | "))
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            assert_eq!(c.len(), 7, "SOURCES.txt row: {l}");
            Truth {
                file: c[0].to_owned(),
                rdma: c[3].to_owned(),
                transport: c[4].to_owned(),
                gdr: c[5].to_owned(),
                version: c[6].to_owned(),
            }
        })
        .collect()
}

/// The NCCL release series (major, minor) a ground-truth version column names:
/// `2.25.1+cuda12.8`, `2.7–2.11`, `≤ 2.18`, `2.18.x` (CUDA versions are not NCCL's).
fn series_named(column: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let bytes = column.as_bytes();
    let mut i = 0;
    while i + 2 < bytes.len() {
        let starts = bytes[i] == b'2'
            && bytes[i + 1] == b'.'
            && bytes[i + 2].is_ascii_digit()
            && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric() && bytes[i - 1] != b'.');
        if starts {
            let minor: String = column[i + 2..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            out.push((2, minor.parse().unwrap()));
        }
        i += 1;
    }
    out
}

/// Whether the verdict claims series `s` for some host: a printed version, a range
/// the formats allow (`2.17.1-2.18.6`, `<= 2.6.4`, `>= 2.18.3`), or the inferred one.
fn claims(doc: &Value, s: (u32, u32)) -> bool {
    let series = |v: &str| {
        let mut p = v.split(['.', '+']).map(|n| n.parse::<u32>().unwrap_or(0));
        (p.next().unwrap_or(0), p.next().unwrap_or(0))
    };
    let in_range = |r: &str| {
        if let Some(hi) = r.strip_prefix("<= ") {
            s <= series(hi)
        } else if let Some(lo) = r.strip_prefix(">= ") {
            s >= series(lo)
        } else if let Some((lo, hi)) = r.split_once('-') {
            series(lo) <= s && s <= series(hi)
        } else {
            series(r) == s
        }
    };
    let mut texts: Vec<String> = Vec::new();
    for key in ["ncclVersion", "ncclVersionInferred"] {
        if let Some(t) = doc[key].as_str() {
            texts.push(t.to_owned());
        }
    }
    for h in doc["ncclVersions"].as_array().unwrap() {
        for key in ["version", "range"] {
            if let Some(t) = h[key].as_str() {
                texts.push(t.to_owned());
            }
        }
    }
    texts.iter().any(|t| in_range(t))
}

/// Check a verdict against a SOURCES.txt row.
fn check_truth(t: &Truth, code: i32, doc: &Value) {
    let file = &t.file;
    let rdma = &doc["rdma"];
    let selected_only = || {
        // `Using network IB` with no channel line: chosen at init, not shown carrying
        // data (issue 29), so the verdict stays open and says why (RDG149).
        assert!(rdma.is_null(), "{file}: rdma {rdma}");
        assert_eq!(doc["rdmaSelected"], true, "{file}");
        assert!(rules(doc).contains(&"RDG149".to_owned()), "{file}");
        assert_eq!(code, 1, "{file}");
    };
    match t.rdma.as_str() {
        r if r.starts_with("yes") => {
            if doc["rdmaInferredFrom"] == "channels" || doc["rdmaInferredFrom"] == "perftest" {
                assert_eq!(rdma, true, "{file}: rdma");
            } else {
                selected_only();
            }
        }
        // "selected, then failed (per title)": the excerpt shows only the selection.
        r if r.starts_with("selected") => selected_only(),
        r if r == "no" || r.starts_with("no ") => assert_eq!(rdma, false, "{file}: rdma"),
        r if r.starts_with("failed") => assert_eq!(code, 1, "{file}: a failed run has findings"),
        "n/a" => assert!(rdma.is_null(), "{file}: rdma {rdma}"),
        other => panic!("{file}: unknown RDMA column `{other}`"),
    }
    let transport = doc["transport"].as_str().unwrap();
    if t.transport.starts_with("Socket") {
        assert_eq!(transport, "socket", "{file}");
    } else if t.transport.contains("RoCE") {
        assert_eq!(transport, "roce", "{file}");
    } else if t.transport.starts_with("IB") {
        assert_eq!(transport, "ib", "{file}");
    } else {
        assert_eq!(t.transport, "n/a", "{file}");
        assert_eq!(transport, "unknown", "{file}");
    }
    let gdr = &doc["gdr"];
    match t.gdr.as_str() {
        g if g.starts_with("yes") => assert_eq!(gdr, true, "{file}: gdr"),
        g if g == "no" || g.starts_with("no ") => assert_eq!(gdr, false, "{file}: gdr"),
        _ => assert!(gdr.is_null(), "{file}: gdr {gdr}"),
    }
    // A version only the thread's title names is not in the excerpt.
    let only_title = t.version.contains("(title)") && doc["ncclVersionInferred"].is_null();
    if !only_title && !t.version.starts_with("(see") {
        let named = series_named(&t.version);
        assert!(!named.is_empty(), "{file}: no version in `{}`", t.version);
        for s in named {
            assert!(
                claims(doc, s),
                "{file}: NCCL {}.{} not in {doc:#}",
                s.0,
                s.1
            );
        }
    }
    if rdma == true && code == 0 {
        assert!(rules(doc).is_empty(), "{file}: exit 0 with findings");
    }
}

/// The files of one run: a partial excerpt is read with the file it continues
/// (SOURCES.txt: 01b is "same thread/comment as 01", 05b "same thread, next chunk").
fn run_of(file: &str) -> Vec<String> {
    let path = |f: &str| format!("{SAMPLES}/{f}");
    let companion = |prefix: &str| {
        std::fs::read_dir(root().join(SAMPLES))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with(prefix))
            .unwrap()
    };
    match &file[..2] {
        "01" | "05" if file.as_bytes()[2] == b'-' => {
            vec![path(file), path(&companion(&format!("{}b-", &file[..2])))]
        }
        _ => vec![path(file)],
    }
}

#[test]
fn every_sample_gets_its_ground_truth_verdict() {
    let truths = truths();
    let files: Vec<String> = std::fs::read_dir(root().join(SAMPLES))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    assert_eq!(truths.len(), files.len(), "one SOURCES.txt row per sample");
    for t in &truths {
        let run = run_of(&t.file);
        let args: Vec<&str> = run.iter().map(String::as_str).collect();
        let (code, doc) = verdict(&args);
        if t.rdma.starts_with("(see") {
            // 05b alone: topology lines only.
            assert_eq!(doc["transport"], "unknown", "{}", t.file);
            continue;
        }
        check_truth(t, code, &doc);
    }
}

#[test]
fn samples_details_beyond_the_sources_columns() {
    // 01 + 01b: 8 IB HCAs, the version from 01b, clean.
    let (code, doc) = verdict(&[
        "tests/nccl_logs/samples/01-ib-8rail-k8s-mpijob-aks.log",
        "tests/nccl_logs/samples/01b-ib-8rail-k8s-mpijob-aks-version.log",
    ]);
    // The excerpt has `Using network IB` but no channel line: selected, not shown
    // carrying data.
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(
        (&doc["rdma"], &doc["rdmaSelected"]),
        (&Value::Null, &true.into())
    );
    assert_eq!(rules(&doc), ["RDG149"]);
    assert_eq!(doc["ncclVersion"], "2.25.1+cuda12.8");
    assert_eq!(doc["hcas"].as_array().unwrap().len(), 8);
    assert_eq!(doc["linkLayer"], "IB");
    // 05: the two nodes' versions differ (2.19.3 printed; 2.17-2.18 by format).
    let (code, doc) =
        verdict(&["tests/nccl_logs/samples/05-roce-mixed-nccl-versions-modify-qp-unreachable.log"]);
    assert_eq!(code, 1);
    assert_eq!(doc["mixedVersions"], true);
    assert!(rules(&doc).contains(&"RDG147".to_owned()));
    assert_eq!(doc["hcas"], serde_json::json!(["mlx5_10", "mlx5_11"]));
    // 07: GID index 0 is link-local: the likely cause is the GID index.
    let (_, doc) = verdict(&[
        "tests/nccl_logs/samples/07-roce-gid-index0-k8s-no-gdr-unhandled-system-error.log",
    ]);
    assert_eq!(doc["gidIndex"], 0);
    assert!(rules(&doc).contains(&"RDG142".to_owned()), "{doc:#}");
    assert!(rules(&doc).contains(&"RDG145".to_owned()));
    // 11: TCP over IPoIB because NCCL_IB_DISABLE=1.
    let (_, doc) = verdict(&["tests/nccl_logs/samples/11-socket-ib-disabled-by-env.log"]);
    let r = rules(&doc);
    assert!(
        r.contains(&"RDG140".to_owned()) && r.contains(&"RDG141".to_owned()),
        "{r:?}"
    );
    let socket = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "RDG140")
        .unwrap();
    assert!(
        socket["message"].as_str().unwrap().contains("IPoIB"),
        "{socket}"
    );
    assert_eq!(doc["errors"][0]["count"], 3);
    // 13: libibverbs missing names `rdmagen dockerfile`.
    let (_, doc) = verdict(&["tests/nccl_logs/samples/13-socket-libibverbs-missing.log"]);
    let cause = doc["errors"][0]["cause"].as_str().unwrap();
    assert!(cause.contains("rdmagen dockerfile"), "{cause}");
    assert_eq!(doc["errors"][0]["rule"], "RDG141");
    // 21: EINVAL from ibv_modify_qp points at NCCL_IB_GID_INDEX.
    let (_, doc) =
        verdict(&["tests/nccl_logs/samples/21-ib-modify-qp-invalid-argument-nccl2.5.6.log"]);
    let e = &doc["errors"][0];
    assert_eq!(e["rule"], "RDG142");
    assert!(e["cause"].as_str().unwrap().contains("NCCL_IB_GID_INDEX"));
    assert_eq!(e["line"], 7);
    assert_eq!(doc["ncclVersionInferred"], "<= 2.6.4");
}

#[test]
fn nccl_tests_plateaus_against_the_pool() {
    let pool = ["--pools", POOLS, "--pool", "azure-ndv4"];
    // Healthy 8x HDR: 187.22 GB/s at 8 GiB of 200 (SOURCES: "Healthy RDMA").
    let mut args =
        vec!["tests/nccl_logs/nccl-tests/01-azure-ndv4-8x200g-hdr-ib-2node-allreduce.txt"];
    args.extend(pool);
    let (code, doc) = verdict(&args);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["busbwGBps"], 187.22);
    // The table does not say how many nodes: the `any` row, healthy from 0.9.
    assert_eq!(doc["expectedGBps"], 180.0);
    assert_eq!(doc["bandwidth"]["health"], "healthy");
    assert_eq!(doc["bandwidth"]["calibration"]["row"], "any");
    assert_eq!(doc["bandwidth"]["calibration"]["gpuFrom"], "pool");
    assert_eq!(doc["bandwidth"]["atBytes"], 8589934592u64);
    assert_eq!(doc["rdma"], true);
    assert_eq!(doc["transport"], "ib");
    // The average line is reported by nccl-tests, never used.
    assert_ne!(doc["busbwGBps"], 56.3994);
    // Same nodes over IPoIB: 3.17 GB/s, "NOT RDMA".
    let mut args = vec!["tests/nccl_logs/nccl-tests/02-azure-ndv4-ipoib-tcp-2node-allreduce.txt"];
    args.extend(pool);
    let (code, doc) = verdict(&args);
    assert_eq!(code, 1);
    assert_eq!(doc["rdma"], false);
    assert_eq!(doc["transport"], "socket");
    let low = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "RDG146")
        .unwrap();
    assert!(
        low["message"]
            .as_str()
            .unwrap()
            .contains("TCP sockets rather than RDMA, or a fabric so broken"),
        "{low}"
    );
    assert_eq!(doc["bandwidth"]["health"], "broken");
    assert_eq!(doc["rdmaInferredFrom"], "bandwidth");
    // A sweep that stops at 32 MiB has not reached its plateau: not judged.
    let mut args =
        vec!["tests/nccl_logs/nccl-tests/04-h100-1gpu-per-node-4nic-roce-tree-2node.txt"];
    args.extend(pool);
    let (_, doc) = verdict(&args);
    assert_eq!(doc["busbwGBps"], 41.52);
    assert_eq!(doc["bandwidth"]["judged"], false);
    assert!(!rules(&doc).contains(&"RDG146".to_owned()));
}

#[test]
fn perftest_tables_and_banners() {
    let (code, doc) = verdict(&[
        "tests/nccl_logs/perftest/01-azure-ndv4-hdr200-ib-ib_write_bw-client.txt",
        "--pools",
        POOLS,
        "--pool",
        "azure-ndv4",
    ]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["rdma"], true);
    let b = &doc["perftest"]["bandwidth"];
    assert!(
        (196.0..197.0).contains(&b["value"].as_f64().unwrap()),
        "{b}"
    );
    assert_eq!(b["lineRate"], 200.0);
    let (_, doc) = verdict(&["tests/nccl_logs/perftest/03-roce-gid2-write-postlist-gbits.txt"]);
    assert_eq!(doc["transport"], "roce");
    assert_eq!(doc["gidIndex"], 2);
    assert_eq!(
        doc["perftest"]["bandwidth"]["judged"], false,
        "8-byte messages"
    );
    let (code, doc) = verdict(&["tests/nccl_logs/perftest/06-roce-gid3-server-gbits-header.txt"]);
    assert_eq!(doc["transport"], "roce");
    assert_eq!(doc["gidIndex"], 3);
    assert_eq!(doc["hcas"], serde_json::json!(["mlx5_0"]));
    assert!(doc["rdma"].is_null(), "no result table");
    assert_eq!(code, 1);
    // The pool says gidIndex 3, the test used 2.
    let (_, doc) = verdict(&[
        "tests/nccl_logs/perftest/03-roce-gid2-write-postlist-gbits.txt",
        "--pools",
        POOLS,
        "--pool",
        "h100-roce",
    ]);
    assert!(rules(&doc).contains(&"RDG142".to_owned()), "{doc:#}");
}

// ---------------------------------------------------------------- never-seen eras

/// Lines of `host` in NCCL's INFO format.
fn info(host: &str, lines: &[&str]) -> String {
    lines
        .iter()
        .map(|l| format!("{host}:4242:4300 [0] NCCL INFO {l}\n"))
        .collect()
}

/// A healthy two-node run as NCCL `era` prints it.
fn two_nodes(version_line: &str, body: &[&str]) -> String {
    let mut out = String::new();
    for host in ["node-a", "node-b"] {
        if version_line.starts_with("NCCL version") {
            out += &format!("{version_line}\n");
        }
        out += &info(host, body);
    }
    out
}

#[test]
fn nccl_2_21_merged_devices_and_bare_version() {
    let log = two_nodes(
        "NCCL version 2.21.5+cuda12.4",
        &[
            "Bootstrap : Using eth0:10.0.0.1<0>",
            "NET/Plugin: Using internal network plugin.",
            "NET/IB : Using [0]={[0] mlx5_0:1/IB, [1] mlx5_1:1/IB} [1]={[2] mlx5_2:1/IB, [3] mlx5_3:1/IB} [RO]; OOB eth0:10.0.0.1<0>",
            "Using non-device net plugin version 0",
            "Using network IB",
            "comm 0x55d0 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0",
            "Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA",
            "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA",
            "Channel 01/0 : 0[0] -> 8[0] [send] via NET/IB/1(4)/GDRDMA/Shared",
        ],
    );
    let (code, doc) = synthetic(&[("run.log", &log)], &[]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["transport"], "ib");
    assert_eq!((&doc["rdma"], &doc["gdr"]), (&true.into(), &true.into()));
    assert_eq!(doc["ncclVersion"], "2.21.5+cuda12.4");
    assert_eq!(
        doc["hcas"],
        serde_json::json!(["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"])
    );
    assert_eq!(doc["nodes"], 2);
}

#[test]
fn nccl_2_27_roce_pci_mode_speeds_and_gid() {
    let log = two_nodes(
        "",
        &[
            "Bootstrap: Using eth0:10.0.0.1<0>",
            "NCCL version 2.27.7+cuda12.9",
            "NET/Plugin: Could not find: libnccl-net.so.",
            "NET/IB: [0] mlx5_0:eth1:1/RoCE provider=Mlx5 speed=200000 context=0x1 pciPath=/sys/x ar=0 oooRqSize=0",
            "NET/IB: [1] mlx5_1:eth2:1/RoCE provider=Mlx5 speed=200000 context=0x2 pciPath=/sys/y ar=0 oooRqSize=0",
            "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
            "Using network IB",
            "NET/IB: NCCL Dev 0 IbDev 0 Port 1 qpn 1234 mtu 5 GID 3 (0/B880A00AFFFF0000) fifoRkey=0x1 fifoLkey=0x1",
            "NET/IB: IbDev 0 Port 1 qpn 1234 query_ece={supported=1, vendor_id=0x15b3, options=0x0, comp_mask=0x0}",
            "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA(PCI)",
            "Connected all rings, use ring PXN 0 GDR 1",
        ],
    );
    let table = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n\
                 1073741824     268435456     float     sum      -1    23000   46.68   46.68      0    23000   46.68   46.68      0\n";
    let (code, doc) = synthetic(&[("a.log", &log), ("tests.txt", table)], &[]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["transport"], "roce");
    assert_eq!(doc["gidIndex"], 3);
    assert_eq!(doc["gdr"], true);
    assert_eq!(doc["ncclVersion"], "2.27.7+cuda12.9");
    // 2 x 200 Gb/s from the speed lines: 50 GB/s line rate.
    assert_eq!(doc["bandwidth"]["lineRate"], 50.0);
    // Two nodes, no GPU model: the 2-node row, healthy from 0.9.
    assert_eq!(doc["bandwidth"]["calibration"]["row"], "2node");
    assert_eq!(doc["expectedGBps"], 45.0);
    assert_eq!(doc["bandwidth"]["health"], "healthy");
    // Against a pool with GID index 3 and 8x400G: the GID agrees, the bandwidth not.
    let (code, doc) = synthetic(
        &[("a.log", &log), ("tests.txt", table)],
        &["--pools", "POOLS", "--pool", "h100-roce"],
    );
    assert_eq!(code, 1);
    assert_eq!(rules(&doc), ["RDG146"], "{doc:#}");
}

#[test]
fn nccl_2_30_rails_and_modify_qp_with_gid_details() {
    let mut log = String::from("node-a:7:7 [0] NCCL INFO NCCL version 2.30.7+cuda13.0\n");
    log += "node-a:7:7 [0] NCCL INFO NCCL git version master 73cf112\n";
    log += &info(
        "node-a",
        &[
            "NET/IB: [0] mlx5_0:ibp12s0:1/IB provider=Mlx5 speed=400000 context=0x1 pciPath=/sys/a ar=1 oooRqSize=0",
            "NET/IB : Using [0]mlx5_0:1:0/IB [1]mlx5_1:1:1/IB [2]mlx5_2:1::0/IB [RO]; OOB eth0:10.0.0.1<0>",
            "Using network IB",
            "comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0",
            "Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 0, local GID fe80::1, remote GID fe80::2, retrying 1/3 after 100 msec of sleep",
        ],
    );
    log += "node-a:7:9 [0] misc/ibvwrap.cc:376 (wrap_ibv_modify_qp) NCCL WARN Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 0, local GID fe80::1, remote GID fe80::2\n";
    log += &info(
        "node-a",
        &[
            "HINT: In many cases this error occurs when the incorrect GID index is forced by NCCL_IB_GID_INDEX",
            "misc/ibvwrap.cc:377 -> 2",
        ],
    );
    let (code, doc) = synthetic(&[("n.log", &log)], &[]);
    assert_eq!(code, 1);
    assert_eq!(doc["rdma"], false, "the queue pairs never connected");
    assert_eq!(
        doc["hcas"],
        serde_json::json!(["mlx5_0", "mlx5_1", "mlx5_2"])
    );
    let errors = doc["errors"].as_array().unwrap();
    assert_eq!(
        errors.len(),
        1,
        "the retry INFO line is not an error: {errors:#?}"
    );
    assert_eq!(errors[0]["rule"], "RDG142");
    assert_eq!(errors[0]["line"], 8);
    assert!(errors[0]["cause"].as_str().unwrap().contains("link-local"));
}

#[test]
fn hpcx_ibext_v8_with_gdrdma() {
    let log = two_nodes(
        "",
        &[
            "Plugin Path : /opt/hpcx/nccl_rdma_sharp_plugin/lib/libnccl-net.so",
            "P2P plugin IBext_v8",
            "NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_3:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
            "Using network IBext_v8",
            "Channel 00/0 : 16[0] -> 0[0] [receive] via NET/IBext_v8/1/GDRDMA",
        ],
    );
    let (code, doc) = synthetic(&[("x.log", &log)], &[]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(
        (doc["transport"].as_str(), &doc["gdr"]),
        (Some("roce"), &true.into())
    );
    assert_eq!(doc["networks"], serde_json::json!(["IBext_v8"]));
}

#[test]
fn socket_over_ipoib_and_a_tcp_pool() {
    let log = two_nodes(
        "",
        &[
            "NCCL_IB_DISABLE set by environment to 1.",
            "NET/Socket : Using [0]ibp12s0:192.168.0.1<0>",
            "Using network Socket",
            "Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0",
        ],
    );
    let (code, doc) = synthetic(&[("s.log", &log)], &[]);
    assert_eq!(code, 1);
    assert_eq!(
        (doc["transport"].as_str(), &doc["rdma"], &doc["gdr"]),
        (Some("socket"), &false.into(), &false.into())
    );
    assert_eq!(doc["socketInterfaces"], serde_json::json!(["ibp12s0"]));
    assert_eq!(rules(&doc), ["RDG141", "RDG140"]);
    // On a TCP pool, sockets are what it has.
    let (code, doc) = synthetic(
        &[("s.log", &log)],
        &["--pools", "POOLS", "--pool", "tcp-only"],
    );
    assert_eq!((code, rules(&doc)), (0, Vec::<String>::new()), "{doc:#}");
}

#[test]
fn completion_status_12_in_both_forms() {
    for (version, warn) in [
        (
            "2.23.4",
            "NET/IB: Got completion from peer 10.0.0.2<41234> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_0",
        ),
        (
            "2.28.9",
            "NET/IB: Got completion from peer 10.0.0.2<41234> with status=RETRY_EXC_ERR(12) opcode=RDMA_WRITE(1) reqSize=0 vendor_err=129 req_type=Send localGid ::ffff:10.0.0.1 remoteGids ::ffff:10.0.0.2 hca mlx5_0",
        ),
    ] {
        let mut log = two_nodes(
            "",
            &[
                &format!("NCCL version {version}+cuda12.6"),
                "NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
                "Using network IB",
                "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA",
            ],
        );
        for _ in 0..3 {
            log += &format!("node-b:4242:4400 [0] transport/net_ib.cc:2200 NCCL WARN {warn}\n");
        }
        let (code, doc) = synthetic(&[("c.log", &log)], &[]);
        assert_eq!(code, 1);
        assert_eq!(doc["rdma"], true, "RDMA carried data until it failed");
        let e = &doc["errors"][0];
        assert_eq!(
            (e["rule"].as_str(), e["count"].as_u64()),
            (Some("RDG144"), Some(3)),
            "{version}"
        );
        assert!(e["title"].as_str().unwrap().contains("RETRY_EXC_ERR"));
        assert!(e["cause"].as_str().unwrap().contains("NCCL_IB_TIMEOUT"));
        assert_eq!(e["host"], "node-b");
    }
}

#[test]
fn mixed_versions_across_files_and_hosts() {
    let pod = |host: &str, version: &str| {
        format!(
            "NCCL version {version}\n{}",
            info(
                host,
                &[
                    "Bootstrap : Using eth0:10.0.0.1<0>",
                    "NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB eth0:10.0.0.1<0>",
                    "Using network IB",
                    "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA"
                ]
            )
        )
    };
    // The bare line opens each pod's file, before any of its host's lines.
    let (code, doc) = synthetic(
        &[
            ("pod-0.log", &pod("node-a", "2.19.3+cuda12.2")),
            ("pod-1.log", &pod("node-b", "2.19.3+cuda12.2")),
        ],
        &[],
    );
    assert_eq!(
        (code, doc["mixedVersions"].as_bool()),
        (0, Some(false)),
        "{doc:#}"
    );
    let (code, doc) = synthetic(
        &[
            ("pod-0.log", &pod("node-a", "2.19.3+cuda12.2")),
            ("pod-1.log", &pod("node-b", "2.18.5+cuda12.2")),
        ],
        &[],
    );
    assert_eq!(code, 1);
    assert!(doc["ncclVersion"].is_null());
    let finding = &doc["findings"][0];
    assert_eq!(finding["rule"], "RDG147");
    assert_eq!(finding["file"], "pod-1.log");
    assert_eq!(finding["line"], 1);
}

#[test]
fn launcher_prefixes_timestamps_and_an_interleaved_table() {
    let mut log = String::new();
    let body = [
        "NCCL version 2.26.5+cuda12.8",
        "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.1<0>",
        "Using network IB",
        "comm 0x1 rank 0 nRanks 4 nNodes 2 localRanks 2 localRank 0 MNNVL 0",
        "Channel 00/0 : 0[0] -> 2[0] [send] via NET/IB/0/GDRDMA",
    ];
    for (i, l) in body.iter().enumerate() {
        match i % 3 {
            0 => log += &format!("[0] node-a:1:2 [0] NCCL INFO {l}\n"),
            1 => {
                log += &format!(
                    "2025-03-01T10:00:00.123456789Z [2025-03-01 10:00:00] node-b:3:4 [1] NCCL INFO {l}\n"
                )
            }
            _ => log += &format!("[1,0]<stdout>:node-a:1:2 [0] NCCL INFO {l}\n"),
        }
    }
    // The smoke test's table, rows interleaved with NCCL lines.
    log += "[1,0]<stdout>:#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n";
    log += "[1,0]<stdout>:#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)\n";
    log += "[1,0]<stdout>:   268435456      67108864     float     sum      -1   5500.0   48.81   73.21    N/A   5500.0   48.81   73.21    N/A\n";
    log += "[0] node-a:1:2 [0] NCCL INFO Channel 01/0 : 0[0] -> 2[0] [send] via NET/IB/1/GDRDMA\n";
    log += "[1,0]<stdout>:  1073741824     268435456     float     sum      -1    21000   51.13   76.69    N/A    21100   50.89   76.33    N/A\n";
    log += "[1,0]<stdout>:# Avg bus bandwidth    : 12.5\n";
    // Pool "RoCE 2*100G": 25 GB/s line rate; 76.69 is above it (not an error: only
    // the lower bound is judged).
    let (code, doc) = synthetic(&[("mpirun.log", &log)], &[]);
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["ncclVersion"], "2.26.5+cuda12.8");
    assert_eq!(doc["busbwGBps"], 76.69);
    assert_eq!(doc["gdr"], true);
    let (code, doc) = synthetic(
        &[("mpirun.log", &log)],
        &["--pools", "POOLS", "--pool", "azure-ndv4"],
    );
    assert_eq!(code, 1, "76.69 of 200 GB/s");
    assert_eq!(rules(&doc), ["RDG146"]);
    assert_eq!(doc["findings"][0]["line"], 10);
}

#[test]
fn no_net_lines_is_unknown_and_one_node_says_so() {
    let (code, doc) = synthetic(
        &[("train.log", "epoch 1 loss 2.3\nepoch 2 loss 1.9\n")],
        &[],
    );
    assert_eq!(code, 1);
    assert_eq!(doc["transport"], "unknown");
    assert!(doc["rdma"].is_null() && doc["gdr"].is_null());
    assert_eq!(rules(&doc), ["RDG149"]);
    let log = info(
        "node-a",
        &[
            "Using network IB",
            "comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0",
            "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read",
        ],
    );
    let (code, doc) = synthetic(&[("one.log", &log)], &[]);
    assert_eq!(code, 1);
    assert_eq!(doc["singleNode"], true);
    assert!(doc["rdma"].is_null());
    let message = doc["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("single node"), "{message}");
    // Re-graded, it no longer fails the run.
    let (code, _) = synthetic(&[("one.log", &log)], &["--severity", "RDG149=warning"]);
    assert_eq!(code, 0);
}

#[test]
fn perftest_mib_per_second_against_one_nic() {
    let table = |avg: &str| {
        format!(
            "---------------------------------------------------------------------------------------\n\
             \x20                   RDMA_Write BW Test\n\
             \x20Dual-port       : OFF\t\tDevice         : mlx5_1\n\
             \x20Link type       : Ethernet\n\
             \x20GID index       : 3\n\
             \x20#bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n\
             \x20524288     1000             {avg}            {avg}\t\t     0.020000\n\
             \x201048576    1000             {avg}            {avg}\t\t     0.010000\n\
             ---------------------------------------------------------------------------------------\n"
        )
    };
    // 11 000 MiB/s = 92.3 Gb/s on a 100G NIC.
    let (code, doc) = synthetic(
        &[("bw.txt", &table("11000.00"))],
        &["--pools", "POOLS", "--pool", "roce-2x100"],
    );
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["perftest"]["bandwidth"]["lineRate"], 100.0);
    // 3 000 MiB/s = 25 Gb/s.
    let (code, doc) = synthetic(
        &[("bw.txt", &table("3000.00"))],
        &["--pools", "POOLS", "--pool", "roce-2x100"],
    );
    assert_eq!((code, rules(&doc)), (1, vec!["RDG146".to_owned()]));
}

// ---------------------------------------------------------------- the command

#[test]
fn json_has_the_contract_keys() {
    let (_, doc) = verdict(&["tests/nccl_logs/samples/08-roce-gdr-disabled-for-hca.log"]);
    for key in [
        "schemaVersion",
        "transport",
        "rdma",
        "gdr",
        "ncclVersion",
        "hcas",
        "gidIndex",
        "errors",
        "busbwGBps",
        "expectedGBps",
        "findings",
    ] {
        assert!(doc.get(key).is_some(), "no `{key}` in {doc:#}");
    }
    assert!(doc["errors"].is_array() && doc["hcas"].is_array());
    assert_eq!(doc["schemaVersion"], 1);
}

#[test]
fn exit_codes() {
    let ok = rdmagen(&[
        "nccl-log",
        "tests/nccl_logs/samples/03-ib-gdrdma-channels-k8s-pod.log",
    ]);
    assert_eq!(ok.status.code(), Some(0), "{}", text(&ok.stderr));
    let stdout = text(&ok.stdout);
    assert!(
        stdout.contains("transport    ib") && stdout.contains("GPUDirect    yes"),
        "{stdout}"
    );
    let findings = rdmagen(&[
        "nccl-log",
        "tests/nccl_logs/samples/12-socket-no-ib-device-with-ibext-plugin.log",
    ]);
    assert_eq!(findings.status.code(), Some(1));
    for args in [
        &["nccl-log", "tests/nccl_logs/missing.log"][..],
        &["nccl-log", "tests/nccl_logs"],
        &[
            "nccl-log",
            "--max-file-size",
            "100",
            "tests/nccl_logs/samples/01-ib-8rail-k8s-mpijob-aks.log",
        ],
        &["nccl-log", "-", "-"],
        &["nccl-log", "x.log", "--pool", "azure-ndv4"],
        &[
            "nccl-log",
            "tests/nccl_logs/samples/03-ib-gdrdma-channels-k8s-pod.log",
            "--pools",
            POOLS,
        ],
        &[
            "nccl-log",
            "tests/nccl_logs/samples/03-ib-gdrdma-channels-k8s-pod.log",
            "--pools",
            POOLS,
            "--pool",
            "nope",
        ],
    ] {
        let out = rdmagen(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).starts_with("error: "),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let big = rdmagen(&[
        "nccl-log",
        "--max-file-size",
        "100",
        "tests/nccl_logs/samples/01-ib-8rail-k8s-mpijob-aks.log",
        "--format",
        "json",
    ]);
    let (code, doc) = json_of(&big);
    assert_eq!(code, 2);
    assert!(doc["error"].as_str().unwrap().contains("--max-file-size"));
}

fn with_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmagen"))
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(input);
    drop(stdin);
    child.wait_with_output().unwrap()
}

#[test]
fn standard_input_and_bytes_that_are_not_utf8() {
    let log =
        std::fs::read(root().join("tests/nccl_logs/samples/13-socket-libibverbs-missing.log"))
            .unwrap();
    let mut input = b"\xff\xfe binary noise\n".to_vec();
    input.extend(&log);
    let out = with_stdin(
        &root(),
        &[
            "nccl-log",
            "-",
            "--stdin-filename",
            "pod-3.log",
            "--format",
            "json",
        ],
        &input,
    );
    let (code, doc) = json_of(&out);
    assert_eq!(code, 1);
    assert_eq!(doc["transport"], "socket");
    assert_eq!(doc["errors"][0]["file"], "pod-3.log");
    assert_eq!(
        doc["errors"][0]["line"], 5,
        "one line more than in the file"
    );
}

#[test]
fn github_and_sarif_locate_findings_at_the_log_line() {
    let file = "tests/nccl_logs/samples/11-socket-ib-disabled-by-env.log";
    let out = rdmagen(&["nccl-log", file, "--format", "github"]);
    let annotations = text(&out.stdout);
    assert!(
        annotations.contains(&format!("::error file={file},line=11,")),
        "{annotations}"
    );
    assert!(
        annotations.contains(&format!("::error file={file},line=9,")),
        "{annotations}"
    );
    assert!(
        annotations.contains("::notice title=rdmagen nccl-log::transport=socket rdma=no"),
        "{annotations}"
    );
    let out = rdmagen(&["nccl-log", file, "--format", "sarif"]);
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    let lines: Vec<u64> = results
        .iter()
        .map(|r| {
            r["locations"][0]["physicalLocation"]["region"]["startLine"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(lines, [9, 11]);
    assert!(
        text(&out.stderr).contains("NCCL log verdict"),
        "the verdict goes beside the report"
    );
}

#[test]
fn human_output_escapes_what_the_log_says() {
    let log = info(
        "evil\u{1b}[31m",
        &[
            "Using network IB",
            "NET/IB : Using [0]mlx5\u{1b}]0;x\u{7}_0:1/IB ; OOB eth0:1.2.3.4<0>",
        ],
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("e.log"), log).unwrap();
    let out = rdmagen_in(dir.path(), &["nccl-log", "e.log"]);
    let shown = text(&out.stdout);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
}

#[test]
fn some_ranks_on_sockets_is_a_socket_run() {
    let mut log = info(
        "node-a",
        &[
            "Using network IB",
            "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA",
        ],
    );
    log += &info(
        "node-b",
        &[
            "NET/IB : No device found.",
            "Using network Socket",
            "Channel 00/0 : 8[0] -> 0[0] [send] via NET/Socket/0",
        ],
    );
    let (code, doc) = synthetic(&[("m.log", &log)], &[]);
    assert_eq!(code, 1);
    assert_eq!(
        (doc["transport"].as_str(), &doc["rdma"]),
        (Some("socket"), &false.into())
    );
    let socket = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "RDG140")
        .unwrap();
    assert!(
        socket["message"]
            .as_str()
            .unwrap()
            .starts_with("some ranks"),
        "{socket}"
    );
    assert_eq!(socket["line"], 5, "at the first Socket channel");
}

// ---------------------------------------------------------------- issue 29

const TABLES: &str = "tests/nccl_logs/nccl-tests";

fn table(file: &str, pool: Option<&str>) -> (i32, Value) {
    let path = std::fs::read_dir(root().join(TABLES))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with(file))
        .unwrap();
    let path = format!("{TABLES}/{path}");
    let mut args = vec![path.as_str()];
    if let Some(pool) = pool {
        args.extend(["--pools", POOLS, "--pool", pool]);
    }
    verdict(&args)
}

#[test]
fn nccl_tests_119_tail_is_rdma_from_bandwidth_and_healthy() {
    // 3 x 8 A100, 4x200G HDR, no NCCL_DEBUG line; sjeaugey: "perfect".
    let (code, doc) = table("05-", Some("a100-hdr-4x200"));
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(
        (&doc["rdma"], &doc["rdmaInferredFrom"]),
        (&true.into(), &"bandwidth".into())
    );
    assert_eq!(
        (&doc["gdr"], &doc["gdrInferredFrom"]),
        (&true.into(), &"bandwidth".into())
    );
    assert_eq!(doc["transport"], "ib", "from the pool's fabric");
    let b = &doc["bandwidth"];
    assert_eq!(b["health"], "healthy");
    assert_eq!(
        b["judged"], true,
        "a short sweep withholds only a low verdict"
    );
    assert_eq!(
        (b["value"].as_f64(), b["ratio"].as_f64()),
        (Some(96.69), Some(0.967))
    );
    assert_eq!(
        b["plateau"],
        serde_json::json!({"fromBytes": 127926280u64, "toBytes": 133169160u64, "rows": 6, "minGBps": 95.92, "maxGBps": 96.69})
    );
    let c = &b["calibration"];
    assert_eq!(
        (c["row"].as_str(), c["gpu"].as_str(), c["gpuFrom"].as_str()),
        (Some("any"), Some("ampere"), Some("pool"))
    );
    assert_eq!(
        (c["collective"].as_str(), c["collectiveFrom"].as_str()),
        (Some("all_reduce"), Some("rows"))
    );
    assert!(c["source"].as_str().unwrap().contains("nccl-tests#119"));
    assert!(rules(&doc).is_empty());
    // Without a pool: RDMA still (no socket reaches 96 GB/s), health not judged.
    let (code, doc) = table("05-", None);
    assert_eq!((code, &doc["rdma"]), (0, &true.into()), "{doc:#}");
    assert!(doc["bandwidth"]["health"].is_null());
    assert!(doc["gdr"].is_null(), "no line rate, no GPUDirect inference");
}

#[test]
fn vendored_tables_get_their_threads_verdicts() {
    // nccl-tests#252, ring on 2 x 4 H100: "looks great with ~24GB/s per NIC".
    let (code, doc) = table("06-", Some("h100-4x200"));
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["bandwidth"]["health"], "healthy");
    assert_eq!(doc["rdmaInferredFrom"], "bandwidth");
    assert_eq!(doc["bandwidth"]["plateau"]["rows"], 5);
    assert_eq!(doc["busbwGBps"], 97.54);
    // NVIDIA/nccl#1453, 3 nodes across racks: "severely degraded". The 29.5 GB/s at
    // 32 MiB is more than sockets carry, so it was RDMA, and far short of 200 GB/s.
    let (code, doc) = table("07-", Some("h100-roce-8x200"));
    assert_eq!(code, 1);
    assert_eq!(
        (&doc["rdma"], &doc["transport"]),
        (&true.into(), &"roce".into())
    );
    assert_eq!(doc["bandwidth"]["health"], "degraded");
    assert!(doc["gdr"].is_null(), "{doc:#}");
    assert_eq!(rules(&doc), ["RDG146"]);
    let message = doc["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("calibration row `any`"), "{message}");
    // nccl-tests#82: libibverbs missing, IB disabled: not RDMA, from the error lines.
    let (code, doc) = table("08-", None);
    assert_eq!(code, 1);
    assert_eq!(
        (&doc["rdma"], &doc["rdmaInferredFrom"]),
        (&false.into(), &"errors".into())
    );
    assert_eq!(doc["ncclVersion"], "2.9.6+cuda11.2");
    assert_eq!(
        doc["sweeps"][0]["rows"][0]["root"], 0,
        "broadcast's root column"
    );
    assert!(
        doc["sweeps"][0]["rows"][0]["outOfPlace"]["wrong"].is_null(),
        "N/A"
    );
    // nccl-tests#150, a failed run whose excerpt ends at 64 bytes: nothing shown.
    let (code, doc) = table("09-", Some("azure-ndv4"));
    assert_eq!(code, 1);
    assert!(doc["rdma"].is_null());
    assert_eq!(doc["bandwidth"]["health"], "not-judged");
    assert_eq!(rules(&doc), ["RDG149"]);
    // nccl-tests#232 (04): 41.5 GB/s is RDMA, but a sweep stopping at 32 MiB is not
    // judged low.
    let (_, doc) = table("04-", Some("h100-roce"));
    assert_eq!(doc["rdmaInferredFrom"], "bandwidth");
    assert_eq!(doc["bandwidth"]["health"], "not-judged");
    assert!(!rules(&doc).contains(&"RDG146".to_owned()));
}

#[test]
fn status_12_on_roce_leads_with_the_gid_index() {
    // NVIDIA/nccl#426: solved by NCCL_IB_GID_INDEX=3.
    let log = "tests/nccl_logs/samples/25-roce-completion-error-12-gid-index.log";
    let (code, doc) = verdict(&[log, "--pools", POOLS, "--pool", "roce-2x100"]);
    assert_eq!(code, 1);
    let cause = doc["errors"][0]["cause"].as_str().unwrap();
    assert!(
        cause.starts_with("on RoCE usually a GID index or RoCE version"),
        "{cause}"
    );
    assert!(
        cause.contains("raising NCCL_IB_TIMEOUT does not help"),
        "{cause}"
    );
    assert!(cause.find("GID").unwrap() < cause.find("PFC").unwrap());
    // On IB the timeout reading stays first.
    let (_, doc) = verdict(&[log, "--pools", POOLS, "--pool", "azure-ndv4"]);
    let cause = doc["errors"][0]["cause"].as_str().unwrap();
    assert!(cause.starts_with("the peer did not acknowledge"), "{cause}");
}

#[test]
fn the_gid_index_of_a_modify_qp_warning_is_read() {
    // 2.24+: `... local GID index N, local GID G, remote GID ...` (NCCL 2.27 included).
    let mut log = two_nodes(
        "",
        &[
            "NCCL version 2.27.7+cuda12.9",
            "NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
            "Using network IB",
        ],
    );
    log += "node-a:7:9 [0] misc/ibvwrap.cc:376 (wrap_ibv_modify_qp) NCCL WARN Call to ibv_modify_qp failed with 113 No route to host, on dev mlx5_0:1, curr state INIT, next state RTR, local GID index 5, local GID ::ffff:10.0.0.1, remote GID ::ffff:10.0.1.2\n";
    let (code, doc) = synthetic(
        &[("q.log", &log)],
        &["--pools", "POOLS", "--pool", "h100-roce"],
    );
    assert_eq!(code, 1);
    assert_eq!(doc["gidIndex"], 5, "{doc:#}");
    let pool_gid = doc["findings"].as_array().unwrap().iter().any(|f| {
        f["message"]
            .as_str()
            .unwrap()
            .contains("GID index 5, but pool `h100-roce` says `gidIndex: 3`")
    });
    assert!(pool_gid, "{doc:#}");
}

#[test]
fn using_network_ib_alone_is_selected_not_shown_carrying_data() {
    let log = two_nodes(
        "",
        &[
            "NCCL version 2.21.5+cuda12.4",
            "NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB eth0:10.0.0.1<0>",
            "Using network IB",
        ],
    );
    let (code, doc) = synthetic(&[("s.log", &log)], &[]);
    assert_eq!(code, 1, "{doc:#}");
    assert_eq!(
        (&doc["rdma"], &doc["rdmaSelected"]),
        (&Value::Null, &true.into())
    );
    assert_eq!(rules(&doc), ["RDG149"]);
    assert!(
        doc["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("selected the RDMA network `IB`")
    );
    // The same log with a channel line: shown carrying data.
    let log = log
        + &info(
            "node-a",
            &["Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA"],
        );
    let (code, doc) = synthetic(&[("s.log", &log)], &[]);
    assert_eq!(
        (code, &doc["rdma"], &doc["rdmaInferredFrom"]),
        (0, &true.into(), &"channels".into())
    );
}

#[test]
fn csv_writes_every_row() {
    let out = rdmagen(&[
        "nccl-log",
        "tests/nccl_logs/nccl-tests/01-azure-ndv4-8x200g-hdr-ib-2node-allreduce.txt",
        "tests/nccl_logs/nccl-tests/05-a100-3node-4x200g-hdr-allreduce-tail.txt",
        "--format",
        "csv",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "file,size,count,type,redop,root,oop_time_us,oop_algbw_gbps,oop_busbw_gbps,oop_wrong,ip_time_us,ip_algbw_gbps,ip_busbw_gbps,ip_wrong"
    );
    assert_eq!(lines.len(), 1 + 16 + 6);
    assert_eq!(
        lines[16],
        "tests/nccl_logs/nccl-tests/01-azure-ndv4-8x200g-hdr-ib-2node-allreduce.txt,8589934592,2147483648,float,sum,-1,86026,99.85,187.22,,86106,99.76,187.05,"
    );
    assert!(
        lines[17].ends_with(
            ",127926280,31981570,float,sum,-1,2560.7,49.96,95.75,0,2556.2,50.05,95.92,0"
        ),
        "{}",
        lines[17]
    );
    assert!(text(&out.stderr).contains("verdict: transport="));
    // Only nccl-log writes CSV.
    let out = rdmagen(&["rules", "--format", "csv"]);
    assert_ne!(out.status.code(), Some(0));
}

#[test]
fn plot_draws_one_curve_per_log_with_labelled_axes() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("sweep.svg");
    let out = rdmagen(&[
        "nccl-log",
        "tests/nccl_logs/nccl-tests/01-azure-ndv4-8x200g-hdr-ib-2node-allreduce.txt",
        "tests/nccl_logs/nccl-tests/02-azure-ndv4-ipoib-tcp-2node-allreduce.txt",
        "--pools",
        POOLS,
        "--pool",
        "azure-ndv4",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert!(out.status.code().is_some(), "{}", text(&out.stderr));
    let body = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&body).expect("valid XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let width = rdmagen::nccl_log::plot::CURVE_WIDTH.to_string();
    let curves: Vec<_> = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("polyline") && n.attribute("stroke-width") == Some(width.as_str())
        })
        .collect();
    assert_eq!(curves.len(), 2, "one polyline per log");
    assert_eq!(
        curves[0]
            .attribute("points")
            .unwrap()
            .split_whitespace()
            .count(),
        16,
        "one point per row of the first table"
    );
    let texts: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_owned()))
        .collect();
    for want in [
        rdmagen::nccl_log::plot::X_LABEL,
        rdmagen::nccl_log::plot::Y_LABEL,
        "line rate 200 GB/s",
        "healthy band (calibration row any)",
        "01-azure-ndv4-8x200g-hdr-ib-2node-allreduce.txt",
        "02-azure-ndv4-ipoib-tcp-2node-allreduce.txt",
    ] {
        assert!(texts.iter().any(|t| t == want), "no `{want}` in {texts:?}");
    }
    // Deterministic: the same input draws the same bytes.
    let again = dir.path().join("again.svg");
    rdmagen(&[
        "nccl-log",
        "tests/nccl_logs/nccl-tests/01-azure-ndv4-8x200g-hdr-ib-2node-allreduce.txt",
        "tests/nccl_logs/nccl-tests/02-azure-ndv4-ipoib-tcp-2node-allreduce.txt",
        "--pools",
        POOLS,
        "--pool",
        "azure-ndv4",
        "--plot",
        again.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read_to_string(&again).unwrap(), body);
    // Nothing to draw is a usage error.
    let out = rdmagen(&[
        "nccl-log",
        "tests/nccl_logs/samples/11-socket-ib-disabled-by-env.log",
        "--plot",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// Issue 29: a curve that falls after its plateau at the largest sizes gets a note,
/// and the plateau is still what is judged. The table is constructed (no public
/// thread shows the shape): 3 nodes' worth of all_reduce rows at 4x200G, flat at
/// 93.8-96.2 GB/s from 128 MiB to 2 GiB, then 88.1 and 79.4 GB/s at 4 and 8 GiB.
#[test]
fn a_curve_that_falls_after_its_plateau_gets_a_note() {
    let rows = "\
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
   134217728      33554432     float     sum      -1   2742.5   48.94   93.80      0   2742.5   48.94   93.80      0
   268435456      67108864     float     sum      -1   5375.6   49.94   95.71      0   5375.6   49.94   95.71      0
   536870912     134217728     float     sum      -1  10696.5   50.19   96.20      0  10696.5   50.19   96.20      0
  1073741824     268435456     float     sum      -1  21451.0   50.06   95.94      0  21451.0   50.06   95.94      0
  2147483648     536870912     float     sum      -1  43045.5   49.89   95.62      0  43045.5   49.89   95.62      0
  4294967296    1073741824     float     sum      -1  93439.5   45.97   88.10      0  93439.5   45.97   88.10      0
  8589934592    2147483648     float     sum      -1 207277.4   41.44   79.43      0 207277.4   41.44   79.43      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 92.9714
";
    let (code, doc) = synthetic(
        &[("falling.txt", rows)],
        &["--pools", "POOLS", "--pool", "a100-hdr-4x200"],
    );
    assert_eq!(code, 0, "{doc:#}");
    let b = &doc["bandwidth"];
    assert_eq!(
        (b["value"].as_f64(), b["health"].as_str()),
        (Some(96.2), Some("healthy")),
        "the plateau is judged, not the fall: {doc:#}"
    );
    let falls: Vec<&str> = doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|n| n.contains("falls after its plateau"))
        .collect();
    assert_eq!(
        falls,
        [
            "the bus bandwidth falls after its plateau (96.20 GB/s at most, 134217728 to 2147483648 bytes): 79.43 GB/s at 8589934592 bytes, 17% lower. A healthy sweep holds its plateau to the largest size; a fall there comes under sustained load: congestion (PFC pauses or ECN marks on RoCE, a shared uplink) or the tuner changing algorithm or protocol at that size (run again with NCCL_ALGO and NCCL_PROTO fixed to compare). The plateau is what is judged"
        ],
        "{doc:#}"
    );
    // A curve flat to its largest size (nccl-tests#119's tail, 01's 8 GiB) gets none.
    for file in ["05-", "01-"] {
        let (_, doc) = table(file, None);
        let notes = doc["notes"].as_array().unwrap();
        assert!(
            notes
                .iter()
                .all(|n| !n.as_str().unwrap().contains("falls after")),
            "{file}: {notes:#?}"
        );
    }
}
