//! Running the real binary and finding the project's files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run `rdmagen` with `args` from the project root.
pub fn rdmagen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdmagen"))
        .args(args)
        .current_dir(root())
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("rdmagen runs")
}

/// Run `rdmagen` with `args` from `dir`, so that findings name files as `args` do.
pub fn rdmagen_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rdmagen"))
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .expect("rdmagen runs")
}

/// Run `rdmagen args` from `dir` with `input` on its standard input.
pub fn with_stdin(dir: &Path, args: &[&str], input: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rdmagen"))
        .args(args)
        .current_dir(dir)
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rdmagen runs");
    let mut stdin = child.stdin.take().unwrap();
    // rdmagen may refuse before reading (a usage error): a closed pipe is no failure.
    let written = stdin.write_all(input);
    assert!(
        written.is_ok()
            || written
                .as_ref()
                .is_err_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe),
        "{written:?}"
    );
    drop(stdin);
    child.wait_with_output().unwrap()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every example directory holding Job/Pool YAML, sorted (examples/dockerfile holds
/// inputs of `rdmagen dockerfile` instead, examples/smoke the pools of `rdmagen
/// smoke-test`, tests/cli/smoke_test.rs).
pub fn examples() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples/ exists")
        .map(|e| e.expect("readable").path())
        .filter(|p| !p.ends_with("examples/smoke"))
        .filter(|p| p.is_dir() && tree(p).iter().any(|(name, _)| name.ends_with(".yaml")))
        .collect();
    dirs.sort();
    dirs
}

/// All files under `dir`, as (relative path, bytes), sorted.
pub fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let entry = entry.expect("walkable");
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(dir).expect("below dir");
            out.push((
                rel.to_string_lossy().replace('\\', "/"),
                std::fs::read(entry.path()).expect("readable"),
            ));
        }
    }
    out
}

/// Write `body` to `dir/name`; its path as a string, for a command line.
pub fn write(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The two header lines every fixture in tests/bad/ and tests/rules/ starts with:
///
/// ```text
/// # run: <command> [flags that come before the file]
/// # expect: [<rule>] at <line> [exit <code>]
/// ```
///
/// The expect line is optional (a tests/rules `.ok` file expects nothing); in
/// tests/rules the rule is the file's name, so it may be left out.
pub struct Fixture {
    pub args: Vec<String>,
    pub rule: Option<String>,
    pub line: Option<u64>,
    pub exit: Option<i32>,
}

pub fn fixture(source: &str, file: &str) -> Fixture {
    let mut lines = source.lines();
    let run = lines
        .next()
        .and_then(|l| l.strip_prefix("# run: "))
        .unwrap_or_else(|| panic!("{file}: first line must be `# run: <command> ...`"));
    let mut fixture = Fixture {
        args: run.split_whitespace().map(str::to_owned).collect(),
        rule: None,
        line: None,
        exit: None,
    };
    let Some(expect) = lines.next().and_then(|l| l.strip_prefix("# expect: ")) else {
        return fixture;
    };
    let bad = || -> ! { panic!("{file}: malformed `# expect: [RULE] at LINE [exit CODE]`") };
    let mut words = expect.split_whitespace().peekable();
    if words.peek().is_some_and(|w| w.starts_with("RDG")) {
        fixture.rule = words.next().map(str::to_owned);
    }
    match (words.next(), words.next()) {
        (Some("at"), Some(line)) => fixture.line = Some(line.parse().unwrap_or_else(|_| bad())),
        _ => bad(),
    }
    match (words.next(), words.next()) {
        (None, _) => {}
        (Some("exit"), Some(code)) => fixture.exit = Some(code.parse().unwrap_or_else(|_| bad())),
        _ => bad(),
    }
    if words.next().is_some() {
        bad();
    }
    fixture
}
