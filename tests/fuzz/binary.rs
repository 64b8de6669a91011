//! The real binary on generated files, for every command that reads a file: it must
//! exit with 0, 1 or 2 (never a signal, never a panic's 101), within a time limit,
//! with bounded stderr. A failing batch is re-run file by file, and the file that
//! fails is kept under the target directory for reproduction.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;

use crate::corpus::{CAPTURES, DOCKERFILES, JOB_AND_POOL, PINS, Samples, TEMPLATES, YAML};
use crate::mutate::input;

/// How many files each command reads: `RDMAGEN_FUZZ_FILES`, default 200.
fn file_count() -> usize {
    std::env::var("RDMAGEN_FUZZ_FILES")
        .ok()
        .map(|v| v.parse().expect("RDMAGEN_FUZZ_FILES is a number"))
        .unwrap_or(200)
}

/// Files per invocation for commands that take several.
const BATCH: usize = 25;

/// One invocation of a debug binary on a batch may take this long before it is a
/// hang.
const TIME_LIMIT: Duration = Duration::from_secs(60);

const FORMATS: [&str; 4] = ["human", "brief", "json", "github"];

/// `count` mutated samples (or arbitrary text), written to files in a new directory.
fn generate(
    samples: &'static Samples,
    count: usize,
    ext: &str,
) -> (tempfile::TempDir, Vec<PathBuf>) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let strategy = input(samples);
    let mut runner = TestRunner::default();
    let files = (0..count)
        .map(|i| {
            let text = strategy
                .new_tree(&mut runner)
                .expect("a generated input")
                .current();
            let path = dir.path().join(format!("f{i:05}{ext}"));
            std::fs::write(&path, text).expect("the file is written");
            path
        })
        .collect();
    (dir, files)
}

/// What went wrong with one invocation, or None.
fn failure(args: &[String], inputs: &[PathBuf]) -> Option<String> {
    let input_bytes: u64 = inputs
        .iter()
        .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum();
    let errors = tempfile::tempfile().expect("a file for stderr");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmagen"))
        .args(args)
        .env_remove("CI")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(errors.try_clone().expect("a second handle"))
        .spawn()
        .expect("rdmagen starts");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waitable") {
            break status;
        }
        if started.elapsed() > TIME_LIMIT {
            child.kill().expect("killable");
            child.wait().expect("reaped");
            return Some(format!("still running after {TIME_LIMIT:?}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stderr_len = errors.metadata().expect("stat").len();
    // Diagnostics may quote each input line once, truncated; several KiB per input
    // byte would mean quadratic output.
    let stderr_limit = (1 << 20) + 64 * input_bytes;
    match status.code() {
        Some(0..=2) if stderr_len <= stderr_limit => None,
        Some(0..=2) => Some(format!(
            "{stderr_len} bytes on stderr for {input_bytes} bytes of input (limit {stderr_limit})"
        )),
        Some(code) => Some(format!("exit code {code}")),
        None => Some(format!("killed by a signal: {status}")),
    }
}

/// Run `args_for(files)` on each batch of `files`; on a failure, find the single
/// file that fails and keep it.
fn run_batches(
    command: &str,
    files: &[PathBuf],
    batch: usize,
    args_for: impl Fn(&[PathBuf], usize) -> Vec<String>,
) {
    for (n, chunk) in files.chunks(batch).enumerate() {
        let args = args_for(chunk, n);
        let Some(why) = failure(&args, chunk) else {
            continue;
        };
        let culprit = chunk.iter().find_map(|f| {
            failure(
                &args_for(std::slice::from_ref(f), n),
                std::slice::from_ref(f),
            )
            .map(|w| (f, w))
        });
        match culprit {
            Some((file, why)) => panic!(
                "`rdmagen {}`: {why}; input kept at {}",
                args_for(std::slice::from_ref(file), n).join(" "),
                keep(command, file).display()
            ),
            None => panic!(
                "`rdmagen {}`: {why} (no single file fails alone)",
                args.join(" ")
            ),
        }
    }
}

/// Copy a failing input where it survives the test, for reproduction.
fn keep(command: &str, file: &Path) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-failures");
    std::fs::create_dir_all(&dir).expect("the failure directory");
    let to = dir.join(format!(
        "{command}-{}",
        file.file_name().expect("a file name").to_string_lossy()
    ));
    std::fs::copy(file, &to).expect("the failing input is kept");
    to
}

fn strings(parts: &[&str], files: &[PathBuf]) -> Vec<String> {
    parts
        .iter()
        .map(|s| (*s).to_owned())
        .chain(files.iter().map(|f| f.display().to_string()))
        .collect()
}

#[test]
fn validate_and_render_exit_cleanly() {
    let (_dir, files) = generate(&JOB_AND_POOL, file_count(), ".yaml");
    run_batches("validate", &files, BATCH, |chunk, n| {
        strings(&["validate", "--format", FORMATS[n % 4]], chunk)
    });
    run_batches("render", &files, BATCH, |chunk, _| {
        strings(&["render", "--explain"], chunk)
    });
}

#[test]
fn lint_exits_cleanly() {
    let (_dir, files) = generate(&YAML, file_count(), ".yaml");
    run_batches("lint", &files, BATCH, |chunk, n| {
        strings(&["lint", "--format", FORMATS[n % 4]], chunk)
    });
}

#[test]
fn detect_exits_cleanly() {
    const FLAGS: [&str; 7] = [
        "--capture",
        "--show-gids",
        "--ibstat",
        "--ibv-devinfo",
        "--rdma-link",
        "--ofed-info",
        "--dpkg",
    ];
    let (_dir, files) = generate(&CAPTURES, file_count(), ".txt");
    run_batches("detect", &files, BATCH, |chunk, n| {
        let mut args = vec![
            "detect".to_owned(),
            "--format".to_owned(),
            FORMATS[n % 4].to_owned(),
        ];
        for (i, f) in chunk.iter().enumerate() {
            args.push(FLAGS[(n + i) % FLAGS.len()].to_owned());
            args.push(f.display().to_string());
        }
        args
    });
}

#[test]
fn image_check_exits_cleanly() {
    let (_dir, files) = generate(&DOCKERFILES, file_count(), ".Dockerfile");
    let (_dpkg_dir, captures) = generate(&CAPTURES, files.len().div_ceil(BATCH), ".txt");
    run_batches("image-check", &files, BATCH, |chunk, n| {
        let dpkg = captures[n % captures.len()].display().to_string();
        strings(
            &["image-check", "--format", FORMATS[n % 4], "--dpkg", &dpkg],
            chunk,
        )
    });
}

#[test]
fn diff_exits_cleanly() {
    // Two trees of the same file names: each pair differs by its own mutations.
    let count = file_count();
    let (old, _) = generate(&YAML, count, ".yaml");
    let (new, _) = generate(&YAML, count, ".yaml");
    let trees = [old.path().to_path_buf(), new.path().to_path_buf()];
    for format in FORMATS {
        let args = strings(&["diff", "--semantic", "--format", format], &trees);
        if let Some(why) = failure(&args, &[]) {
            // Find the pair that fails, file by file.
            for i in 0..count {
                let name = format!("f{i:05}.yaml");
                let pair = [old.path().join(&name), new.path().join(&name)];
                let args = strings(&["diff", "--semantic", "--format", format], &pair);
                if let Some(why) = failure(&args, &pair) {
                    keep("diff-old", &pair[0]);
                    panic!(
                        "`rdmagen {}`: {why}; inputs kept as diff-{{old,new}}-{name} in {}",
                        args.join(" "),
                        keep("diff-new", &pair[1]).parent().unwrap().display()
                    );
                }
            }
            panic!(
                "`rdmagen {}`: {why} (no single pair fails alone)",
                args.join(" ")
            );
        }
    }
}

#[test]
fn dockerfile_pins_and_templates_exit_cleanly() {
    let count = file_count().div_ceil(4);
    let (_pins_dir, pins) = generate(&PINS, count, ".pins");
    run_batches("dockerfile-pin", &pins, 1, |chunk, n| {
        let family = if n % 2 == 0 { "apt" } else { "dnf" };
        strings(
            &[
                "dockerfile",
                "--family",
                family,
                "--set",
                "diagnostics",
                "--pin",
            ],
            chunk,
        )
    });
    let (_templates_dir, templates) = generate(&TEMPLATES, count, ".j2");
    run_batches("dockerfile-template", &templates, 1, |chunk, _| {
        strings(
            &["dockerfile", "--base", "ubuntu:22.04", "--template"],
            chunk,
        )
    });
}
