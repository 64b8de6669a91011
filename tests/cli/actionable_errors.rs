//! Errors people can act on (issue 12): an enum error lists the accepted values and
//! names the nearest; a pool's problems point into the pool's file; a job whose pool
//! failed to load says so, after the pool's errors. A Pool and a Job in separate
//! files, as `render JOB --pools POOL` reads them; whole stderr compared.

use std::path::Path;
use std::process::Output;

use crate::support::{rdmagen_in, text};

const JOB: &str = "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {name: j}
spec:
  pool: p
  image: img:1
  nodes: 2
  gpusPerNode: 8
  script: t.py
";

/// A valid RoCE pool; each test replaces one of its lines.
const POOL: &str = "apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: p}
spec:
  platform: generic
  gpu: {perNode: 8}
  network:
    fabric: roce
    hcas: [mlx5_1, mlx5_2]
    socketIfname: eth0
    gidIndex: 3
";

fn edit(base: &str, old: &str, new: &str) -> String {
    assert!(base.contains(old), "{old}");
    base.replace(old, new)
}

const WITH_POOLS: &[&str] = &["--pools", "pools.yaml"];

/// `rdmagen render job.yaml EXTRA... -o out --format brief` in a fresh directory
/// holding `files`; checks that nothing was written.
fn render(files: &[(&str, &str)], extra: &[&str]) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let mut args = vec!["render", "job.yaml"];
    args.extend(extra);
    args.extend(["-o", "out", "--format", "brief"]);
    let out = rdmagen_in(dir.path(), &args);
    assert_nothing_written(dir.path(), &out);
    (out.status.code(), text(&out.stderr))
}

fn assert_nothing_written(dir: &Path, out: &Output) {
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(!dir.join("out").exists(), "created the output directory");
}

#[test]
fn enum_errors_list_the_accepted_values_and_the_nearest() {
    let pool = edit(POOL, "platform: generic", "platform: aistuido");
    let pool = edit(&pool, "fabric: roce", "fabric: RoCE");
    let pool = edit(&pool, "gidIndex: 3", "gidIndex: \"3\"");
    let job = format!("{JOB}  restartPolicy: onfailure\n  imagePullPolicy: always\n");
    let (code, stderr) = render(&[("job.yaml", &job), ("pools.yaml", &pool)], WITH_POOLS);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        "\
job.yaml:10:3: error[RDG004]: spec.restartPolicy: expected one of `OnFailure`, `Never`, `Always` or `ExitCode`, got `onfailure`; did you mean `OnFailure`?
job.yaml:11:3: error[RDG004]: spec.imagePullPolicy: expected one of `Always`, `IfNotPresent` or `Never`, got `always`; did you mean `Always`?
pools.yaml:5:3: error[RDG004]: spec.platform: expected one of `generic`, `aistudio`, `cubestudio`, `cce`, `aks` or `oci`, got `aistuido`; did you mean `aistudio`?
pools.yaml:8:5: error[RDG004]: spec.network.fabric: expected one of `roce`, `ib` or `tcp`, got `RoCE`; did you mean `roce`?
pools.yaml:11:5: error[RDG004]: spec.network.gidIndex: expected a non-negative integer or `auto`, got the string `\"3\"` (write 3 without quotes)
error: 5 findings fail the run; nothing was written
"
    );
}

#[test]
fn a_pools_values_are_judged_at_the_pools_line() {
    // Both reach NCCL verbatim; they used to be found only in the rendered manifest,
    // and reported at line 1 of the job file.
    let cases = [
        (
            edit(POOL, "gidIndex: 3", "gidIndex: 300"),
            "pools.yaml:11:5: error[RDG041]: gidIndex is 300; NCCL_IB_GID_INDEX accepts 0-255",
        ),
        (
            edit(POOL, "socketIfname: eth0", "socketIfname: \"eth0,,\""),
            "pools.yaml:10:5: error[RDG045]: socketIfname: NCCL_SOCKET_IFNAME=`eth0,,`: `` is not an interface name or prefix",
        ),
    ];
    for (pool, line) in cases {
        let (code, stderr) = render(&[("job.yaml", JOB), ("pools.yaml", &pool)], WITH_POOLS);
        assert_eq!(code, Some(1));
        assert_eq!(
            stderr,
            format!("{line}\nerror: 1 finding fails the run; nothing was written\n")
        );
    }
}

#[test]
fn a_pool_finding_quotes_the_pools_line() {
    // The text of a --pools file is kept for its pool checks' findings too.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("job.yaml"), JOB).unwrap();
    let pool = edit(POOL, "gidIndex: 3", "gidIndex: 3\n    ibTimeout: 40");
    std::fs::write(dir.path().join("pools.yaml"), pool).unwrap();
    let out = rdmagen_in(
        dir.path(),
        &["render", "job.yaml", "--pools", "pools.yaml", "-o", "out"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_nothing_written(dir.path(), &out);
    assert_eq!(
        text(&out.stderr),
        "\
error[RDG041]: ibTimeout is 40; NCCL_IB_TIMEOUT accepts 0-31
  --> pools.yaml:12:5
   |
12 |     ibTimeout: 40
   |     ^
   = RDG041: an NCCL setting is outside the range NCCL accepts (source: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html)

error: 1 finding fails the run; nothing was written
"
    );
}

#[test]
fn a_job_on_a_pool_that_failed_to_load_says_so_after_the_pools_errors() {
    let pool = edit(POOL, "fabric: roce", "fabric: RoCE");
    // From --pools, or as an input after the job: either way the cause comes first,
    // though job.yaml sorts before pools.yaml.
    for extra in [WITH_POOLS, &["pools.yaml"]] {
        let (code, stderr) = render(&[("job.yaml", JOB), ("pools.yaml", &pool)], extra);
        assert_eq!(code, Some(1));
        assert_eq!(
            stderr,
            "\
pools.yaml:8:5: error[RDG004]: spec.network.fabric: expected one of `roce`, `ib` or `tcp`, got `RoCE`; did you mean `roce`?
job.yaml:5:3: error[RDG005]: pool `p` failed to load (see the errors in pools.yaml above); job not rendered
error: 2 findings fail the run; nothing was written
",
            "{extra:?}"
        );
    }
}

#[test]
fn a_job_beside_a_pool_file_that_could_not_be_parsed_says_it_may_be_there() {
    // A syntax error loses the whole file: which pools it defines is not known.
    let pool = edit(POOL, "metadata: {name: p}", "metadata: {name: p");
    let (code, stderr) = render(&[("job.yaml", JOB), ("pools.yaml", &pool)], WITH_POOLS);
    assert_eq!(code, Some(2), "a syntax error is an input error");
    assert_eq!(
        stderr,
        "\
pools.yaml:4:5: error[RDG001]: while parsing a flow mapping, did not find expected ',' or '}'
job.yaml:5:3: error[RDG005]: pool `p` is not defined; known pools: none; pools.yaml failed to load (see the errors above) and may define it
error: 2 findings fail the run; nothing was written
"
    );
}

#[test]
fn pass_pools_is_suggested_only_when_no_pools_were_passed() {
    let (code, stderr) = render(&[("job.yaml", JOB)], &[]);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        "\
job.yaml:5:3: error[RDG005]: pool `p` is not defined; known pools: none (pass --pools)
error: 1 finding fails the run; nothing was written
"
    );
    let other = edit(POOL, "metadata: {name: p}", "metadata: {name: q}");
    let (code, stderr) = render(&[("job.yaml", JOB), ("pools.yaml", &other)], WITH_POOLS);
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        "\
job.yaml:5:3: error[RDG005]: pool `p` is not defined; known pools: q
error: 1 finding fails the run; nothing was written
"
    );
}
