//! Faults against the output directory, with real processes and real file systems
//! (issue 10). After every fault: the output directory holds exactly the old tree or
//! exactly the new one, nothing outside it changed, and no secret reached stdout or
//! stderr.

use std::collections::BTreeMap;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// In every run's environment and in a file beside the output: it must never be printed.
const SECRET: &str = "ghp_SECRET_TOKEN_never_printed_4f1c";

const POOL: &str = "apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: a100-roce}
spec:
  platform: generic
  gpu: {perNode: 8}
  network: {fabric: roce, hcas: [mlx5_1, mlx5_2], socketIfname: eth0, gidIndex: 3}
";

/// One entry of a tree: a file's bytes, a directory, or a symlink's target.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Node {
    File(Vec<u8>),
    Dir(u32),
    Link(PathBuf),
}

type Snapshot = BTreeMap<String, Node>;

/// Every entry below `dir`, without following symlinks; directories with their mode.
fn snapshot(dir: &Path) -> Snapshot {
    let mut out = Snapshot::new();
    if !dir.exists() {
        return out;
    }
    for entry in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let entry = entry.unwrap();
        let rel = entry
            .path()
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let node = if entry.file_type().is_symlink() {
            Node::Link(std::fs::read_link(entry.path()).unwrap())
        } else if entry.file_type().is_dir() {
            Node::Dir(entry.metadata().unwrap().permissions().mode() & 0o777)
        } else {
            Node::File(std::fs::read(entry.path()).unwrap())
        };
        out.insert(rel, node);
    }
    out
}

/// A scratch area: `inputs-<tag>/` (a pool and `n` jobs), a secret file, and the
/// output directory (`out/` unless placed elsewhere).
struct World {
    dir: tempfile::TempDir,
    out: PathBuf,
    binary: PathBuf,
}

impl World {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("secret.txt"), SECRET).unwrap();
        World {
            out: dir.path().join("out"),
            dir,
            binary: PathBuf::from(env!("CARGO_BIN_EXE_rdmagen")),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn out(&self) -> PathBuf {
        self.out.clone()
    }

    /// `inputs-<tag>/`: `n` jobs, each rendering one file whose image ends in `tag`.
    fn inputs(&self, tag: &str, n: usize) -> String {
        let name = format!("inputs-{tag}");
        let dir = self.path(&name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("pool.yaml"), POOL).unwrap();
        for i in 0..n {
            let job = format!(
                "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {{name: job-{i:04}}}\n\
                 spec: {{pool: a100-roce, image: \"registry.example.com/train:{tag}\", \
                 nodes: 2, gpusPerNode: 8, script: train.py}}\n"
            );
            std::fs::write(dir.join(format!("job-{i:04}.yaml")), job).unwrap();
        }
        name
    }

    /// `bad.yaml`: a Job whose pool does not exist (exit 1, nothing written).
    fn bad_job(&self) {
        std::fs::write(
            self.path("bad.yaml"),
            "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: bad}\n\
             spec: {pool: none, image: i, nodes: 2}\n",
        )
        .unwrap();
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(&self.binary);
        command
            .args(args)
            .current_dir(self.dir.path())
            .env_remove("CI")
            .env_remove("GITHUB_ACTIONS")
            .env("GITHUB_TOKEN", SECRET)
            .stdin(Stdio::null());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        let out = self.command(args).output().unwrap();
        assert_no_secret(&out);
        out
    }

    /// Everything but the output directory (and rdmagen's staging areas beside it,
    /// which are checked separately).
    /// Hand the whole world to `nobody`, with a copy of the binary it can run (the
    /// build directory may be out of its reach).
    fn give_to_nobody(&mut self) -> u32 {
        let nobody = 65534;
        let copy = self.path("rdmagen");
        std::fs::copy(&self.binary, &copy).unwrap();
        self.binary = copy;
        for entry in walkdir::WalkDir::new(self.dir.path()) {
            let path = entry.unwrap().into_path();
            std::os::unix::fs::lchown(&path, Some(nobody), Some(nobody)).unwrap();
        }
        nobody
    }

    fn outside(&self) -> Snapshot {
        snapshot(self.dir.path())
            .into_iter()
            .filter(|(rel, _)| rel != "out" && !rel.starts_with("out/"))
            .filter(|(rel, _)| !is_staging(rel))
            .collect()
    }

    fn staging_areas(&self) -> Vec<String> {
        std::fs::read_dir(self.out.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| is_staging(name))
            .collect()
    }
}

/// /proc/self belongs to the process's effective user.
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

fn is_staging(rel: &str) -> bool {
    rel.starts_with(".rdmagen-")
}

fn assert_no_secret(out: &Output) {
    for stream in [&out.stdout, &out.stderr] {
        assert!(
            !String::from_utf8_lossy(stream).contains(SECRET),
            "a secret reached the output:\n{}",
            String::from_utf8_lossy(stream)
        );
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A seeded pseudo-random sequence (xorshift), so a failure names its seed.
struct Random(u64);

impl Random {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// The old and new trees of a 2 000-job render, and the time a whole run takes.
fn old_and_new(world: &World, jobs: usize) -> (String, String, Snapshot, Snapshot, Duration) {
    let (old_in, new_in) = (world.inputs("v1", jobs), world.inputs("v2", jobs));
    let out = world.out();
    let out = out.to_str().unwrap();
    let started = Instant::now();
    assert!(world.run(&["render", &new_in, "-o", out]).status.success());
    let took = started.elapsed();
    let new = snapshot(&world.out());
    std::fs::remove_dir_all(world.out()).unwrap();
    assert!(world.run(&["render", &old_in, "-o", out]).status.success());
    let old = snapshot(&world.out());
    assert_ne!(old, new);
    assert_eq!(
        old.keys()
            .filter(|k| k.ends_with("pytorchjob.yaml"))
            .count(),
        jobs
    );
    (old_in, new_in, old, new, took)
}

#[test]
fn a_kill_at_any_point_of_a_2000_job_render_leaves_the_old_or_the_new_tree() {
    let world = World::new();
    let (old_in, new_in, old, new, took) = old_and_new(&world, 2000);
    let outside = world.outside();
    let seed = Instant::now().elapsed().as_nanos() as u64 ^ 0x9e37_79b9_7f4a_7c15;
    let mut random = Random(seed | 1);
    let out = world.out();
    let out = out.to_str().unwrap();
    let (mut saw_old, mut saw_new) = (0, 0);
    for round in 0..10 {
        // Most kills land late, where files are staged and the tree is swapped.
        let span = took.as_millis() as u64;
        let at = Duration::from_millis(span / 3 + random.below(span));
        let mut child = world
            .command(&["render", &new_in, "-o", out])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        let _ = child.kill();
        child.wait().unwrap();
        let now = snapshot(&world.out());
        assert!(
            now == old || now == new,
            "seed {seed}, round {round}, killed after {at:?}: a mixed tree ({} entries)",
            now.len()
        );
        if now == old {
            saw_old += 1;
        } else {
            saw_new += 1;
        }
        assert_eq!(world.outside(), outside, "seed {seed}: outside changed");
        // The next run finishes or discards what the killed one left, and goes back.
        let again = world.run(&["render", &old_in, "-o", out]);
        assert!(again.status.success(), "{}", stderr(&again));
        assert_eq!(snapshot(&world.out()), old, "seed {seed}");
        assert_eq!(world.staging_areas(), Vec::<String>::new(), "seed {seed}");
    }
    eprintln!("seed {seed}: {saw_old} kills left the old tree, {saw_new} the new one");
}

#[test]
fn a_full_disk_while_staging_leaves_the_old_tree_and_no_staging_area() {
    // A 2 MiB tmpfs: the old tree of 300 jobs (a 4 KiB page per file) fits, a second
    // copy does not.
    full_file_system("size=2m", false);
}

#[test]
fn a_disk_already_full_leaves_no_staging_area_behind() {
    // Full before the run starts: even the staging area's lock file cannot be written.
    full_file_system("size=2m", true);
}

#[test]
fn running_out_of_inodes_while_staging_leaves_the_old_tree_and_no_staging_area() {
    // The old tree takes 602 inodes (300 files, 300 directories, the record, the
    // root); a second tree does not fit in 900.
    full_file_system("nr_inodes=900", false);
}

/// Fill a small tmpfs while staging: exit 2 naming the error, the old tree, nothing
/// else changed, no staging area left.
fn full_file_system(options: &str, fill_first: bool) {
    let base = tempfile::tempdir().unwrap();
    let mount = base.path().join("small");
    std::fs::create_dir(&mount).unwrap();
    let mounted = is_root()
        && Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(&mount)
            .output()
            .is_ok_and(|o| o.status.success());
    if !mounted {
        // Without the right to mount (not root, or a container without it), the
        // staging writes cannot be made to fail for real; the kill test still covers
        // a run that stops while staging.
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mount.clone());
    let mut world = World::new();
    world.out = mount.join("out");
    std::fs::write(mount.join("user-file"), "kept\n").unwrap();
    let old_in = world.inputs("v1", 300);
    let new_in = world.inputs("v2", 300);
    let out = world.out();
    let out = out.to_str().unwrap();
    let first = world.run(&["render", &old_in, "-o", out]);
    assert!(first.status.success(), "{}", stderr(&first));
    if fill_first {
        let mut filler = std::fs::File::create(mount.join("filler")).unwrap();
        let block = vec![b'x'; 4096];
        while std::io::Write::write_all(&mut filler, &block).is_ok() {}
    }
    let old = snapshot(&world.out());
    let outside = world.outside();
    let failed = world.run(&["render", &new_in, "-o", out]);
    assert_eq!(failed.status.code(), Some(2), "{}", stderr(&failed));
    assert!(
        stderr(&failed).contains("No space left on device"),
        "{}",
        stderr(&failed)
    );
    assert_eq!(snapshot(&world.out()), old);
    assert_eq!(world.outside(), outside);
    assert_eq!(
        std::fs::read_to_string(mount.join("user-file")).unwrap(),
        "kept\n"
    );
    assert_eq!(world.staging_areas(), Vec::<String>::new());
}

#[test]
fn a_read_only_job_directory_is_replaced_whole_and_keeps_its_mode() {
    let mut world = World::new();
    let (_, new_in, _, new, _) = old_and_new(&world, 3);
    let job = world.out().join("job-0001");
    std::fs::set_permissions(&job, std::fs::Permissions::from_mode(0o555)).unwrap();
    // As root, permissions do not stop a write: run as nobody where that is possible.
    let nobody = is_root().then(|| world.give_to_nobody());
    let mut command = world.command(&["render", &new_in, "-o", "out"]);
    if let Some(nobody) = nobody {
        command.uid(nobody).gid(nobody);
    }
    let out = command.output().unwrap();
    assert_no_secret(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut expected = new;
    expected.insert("job-0001".into(), Node::Dir(0o555));
    assert_eq!(snapshot(&world.out()), expected);
    assert_eq!(world.staging_areas(), Vec::<String>::new());
}

#[test]
fn an_output_directory_whose_parent_is_read_only_is_left_as_it_was() {
    if is_root() {
        // Root writes through any mode; the case needs an ordinary user.
        let mut world = World::new();
        let (_, new_in, old, _, _) = old_and_new(&world, 3);
        let nobody = world.give_to_nobody();
        let parent = world.dir.path();
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o555)).unwrap();
        let out = world
            .command(&["render", &new_in, "-o", "out"])
            .uid(nobody)
            .gid(nobody)
            .output()
            .unwrap();
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_no_secret(&out);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("cannot create the staging area for out beside it"),
            "{}",
            stderr(&out)
        );
        assert_eq!(snapshot(&world.out()), old);
    } else {
        eprintln!("skipped: needs root to run a case as another user");
    }
}

#[test]
fn concurrent_runs_take_turns_and_a_failing_one_removes_nothing() {
    let world = World::new();
    let (old_in, new_in, old, new, _) = old_and_new(&world, 2000);
    std::fs::remove_dir_all(world.out()).unwrap();
    world.bad_job();
    // Into a new directory: a good run and a failing one at once.
    let good = world
        .command(&["render", &new_in, "-o", "out"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let bad = world.run(&["render", "bad.yaml", "-o", "out"]);
    let good = good.wait_with_output().unwrap();
    assert_no_secret(&good);
    assert!(good.status.success(), "{}", stderr(&good));
    assert_eq!(bad.status.code(), Some(1), "{}", stderr(&bad));
    assert_eq!(snapshot(&world.out()), new);
    // Two good runs with different inputs: the tree is exactly one of them.
    let first = world
        .command(&["render", &old_in, "-o", "out"])
        .spawn()
        .unwrap();
    let second = world.run(&["render", &new_in, "-o", "out"]);
    let first = first.wait_with_output().unwrap();
    assert!(first.status.success() && second.status.success());
    let now = snapshot(&world.out());
    assert!(
        now == old || now == new,
        "interleaved: {} entries",
        now.len()
    );
    assert_eq!(world.staging_areas(), Vec::<String>::new());
}

#[test]
fn no_wait_fails_at_once_while_another_run_holds_the_directory() {
    let world = World::new();
    std::fs::create_dir(world.out()).unwrap();
    let held = std::fs::File::open(world.out()).unwrap();
    rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let inputs = world.inputs("v1", 1);
    let out = world.run(&["render", &inputs, "-o", "out", "--no-wait"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: out: another rdmagen run is using it (--no-wait)\n"
    );
    // Without --no-wait it says why it waits, then goes on once the lock is free.
    let child = world
        .command(&["render", &inputs, "-o", "out"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    drop(held);
    let waited = child.wait_with_output().unwrap();
    assert!(waited.status.success());
    assert!(
        stderr(&waited).starts_with(
            "waiting for another rdmagen run to finish with out (--no-wait fails instead)\n"
        ),
        "{}",
        stderr(&waited)
    );
}

/// `rendered -> .` committed by a pull request: the documented maintainer command
/// once deleted the repository.
#[test]
fn bless_prune_into_a_symlinked_output_directory_deletes_nothing() {
    let world = World::new();
    let inputs = world.inputs("v1", 2);
    std::fs::create_dir(world.path(".git")).unwrap();
    std::fs::write(world.path(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    symlink(".", world.path("rendered")).unwrap();
    let before = snapshot(world.dir.path());
    for extra in [&["--bless", "--prune"][..], &["--check"], &[]] {
        let mut args = vec!["render", inputs.as_str(), "-o", "rendered"];
        args.extend_from_slice(extra);
        let out = world.run(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with("error: rendered: is a symlink;"),
            "{}",
            stderr(&out)
        );
        assert_eq!(snapshot(world.dir.path()), before);
    }
}

#[test]
fn a_symlinked_job_directory_is_refused_and_its_target_untouched() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    std::fs::create_dir_all(world.path("out")).unwrap();
    std::fs::create_dir_all(world.path("elsewhere")).unwrap();
    symlink("../elsewhere", world.path("out/job-0000")).unwrap();
    let before = snapshot(world.dir.path());
    for mode in [&[][..], &["--bless"], &["--check"]] {
        let mut args = vec!["render", inputs.as_str(), "-o", "out"];
        args.extend_from_slice(mode);
        let out = world.run(&args);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert_eq!(
            stderr(&out),
            "error: out/job-0000: is a symlink; rdmagen never follows symlinks in the trees it reads or writes\n"
        );
        assert_eq!(snapshot(world.dir.path()), before);
    }
}

#[test]
fn golden_files_linked_to_secrets_are_never_read() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    std::fs::create_dir_all(world.path("out/job-0000")).unwrap();
    for target in ["/proc/self/environ", "../../secret.txt"] {
        let link = world.path("out/job-0000/pytorchjob.yaml");
        let _ = std::fs::remove_file(&link);
        symlink(target, &link).unwrap();
        let out = world.run(&["render", &inputs, "-o", "out", "--check"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(out.stdout.is_empty());
    }
    // A symlinked stale file too: it used to be printed as "stale".
    std::fs::remove_file(world.path("out/job-0000/pytorchjob.yaml")).unwrap();
    symlink("../../secret.txt", world.path("out/id_ed25519")).unwrap();
    let out = world.run(&["render", &inputs, "-o", "out", "--check"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: out/id_ed25519: is a symlink; rdmagen never follows symlinks in the trees it reads or writes\n"
    );
}

#[test]
fn a_fifo_or_device_in_the_output_directory_never_blocks_or_aborts() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    std::fs::create_dir_all(world.path("out/job-0000")).unwrap();
    let fifo = world.path("out/job-0000/pytorchjob.yaml");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let out = world.run(&["render", &inputs, "-o", "out", "--check"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: out/job-0000/pytorchjob.yaml: is a FIFO; an output directory holds only files and directories\n"
    );
}

#[test]
fn a_template_linked_out_of_the_templates_directory_is_refused() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    std::fs::create_dir(world.path("templates")).unwrap();
    symlink("../secret.txt", world.path("templates/pytorchjob.yaml.j2")).unwrap();
    let out = world.run(&["render", &inputs, "--templates", "templates"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("templates/pytorchjob.yaml.j2: is a symlink"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn dot_dot_after_a_missing_directory_is_refused_and_nothing_is_deleted() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    world.bad_job();
    let before = snapshot(world.dir.path());
    for args in [
        &["render", "bad.yaml", "-o", "newdir/.."][..],
        &[
            "render",
            inputs.as_str(),
            "-o",
            "newdir/..",
            "--bless",
            "--prune",
        ],
        &["render", inputs.as_str(), "-o", "newdir/..", "--check"],
    ] {
        let out = world.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).starts_with("error: newdir/..: `..` follows "),
            "{}",
            stderr(&out)
        );
        assert_eq!(snapshot(world.dir.path()), before, "{args:?}");
    }
}

#[test]
fn a_failed_run_into_a_new_directory_leaves_no_directory() {
    let world = World::new();
    world.bad_job();
    let before = snapshot(world.dir.path());
    let out = world.run(&["render", "bad.yaml", "-o", "out"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(snapshot(world.dir.path()), before);
}

#[test]
fn prune_deletes_only_what_rdmagen_wrote() {
    let world = World::new();
    let two = world.inputs("v1", 2);
    let out = world.run(&["render", &two, "-o", "out"]);
    assert!(out.status.success());
    // The user's own files, one of them named like an output.
    std::fs::write(world.path("out/README.md"), "ours\n").unwrap();
    std::fs::create_dir(world.path("out/notes")).unwrap();
    std::fs::write(world.path("out/notes/pytorchjob.yaml"), "kind: Mine\n").unwrap();
    std::fs::remove_file(world.path("inputs-v1/job-0001.yaml")).unwrap();
    let out = world.run(&["render", &two, "-o", "out", "--bless", "--prune"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let files: Vec<String> = snapshot(&world.out()).into_keys().collect();
    assert_eq!(
        files,
        [
            ".rdmagen-owned",
            "README.md",
            "job-0000",
            "job-0000/pytorchjob.yaml",
            "notes",
            "notes/pytorchjob.yaml"
        ]
    );
    let err = stderr(&out);
    assert!(
        err.contains("deleted: out/job-0001/pytorchjob.yaml\n"),
        "{err}"
    );
    assert!(
        err.contains("stale (kept: rdmagen did not write it, by DIR/.rdmagen-owned): out/notes/pytorchjob.yaml\n"),
        "{err}"
    );
    assert!(err.ends_with("1 deleted, 2 stale kept\n"), "{err}");
}

#[test]
fn check_reports_what_hides_in_old_staging_names() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    assert!(
        world
            .run(&["render", &inputs, "-o", "out"])
            .status
            .success()
    );
    std::fs::create_dir(world.path("out/.rdmagen-staging-1")).unwrap();
    std::fs::write(
        world.path("out/.rdmagen-staging-1/evil.yaml"),
        "kind: Pod\n",
    )
    .unwrap();
    let out = world.run(&["render", &inputs, "-o", "out", "--check"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stderr(&out), "1 checked, 0 differ, 0 missing, 1 stale\n");
}

#[test]
fn a_staging_area_that_only_looks_like_rdmagens_is_left_alone() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    // A committed directory with rdmagen's staging name and a plausible lock file:
    // the lock file cannot name the directory's real inode, so it is not ours.
    let fake = world.path(".rdmagen-out.1-1");
    std::fs::create_dir_all(fake.join("tree/job")).unwrap();
    std::fs::write(fake.join("lock"), "for out\ncontainer 1:1\n").unwrap();
    std::fs::write(fake.join("tree/job/data"), "keep\n").unwrap();
    let before = snapshot(&fake);
    assert!(
        world
            .run(&["render", &inputs, "-o", "out"])
            .status
            .success()
    );
    assert_eq!(snapshot(&fake), before);
}

#[test]
fn an_input_over_the_size_limit_is_refused_before_it_is_read() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    let out = world.run(&["validate", &inputs, "--max-file-size", "100"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {inputs}/job-0000.yaml: is larger than 100 bytes, the most rdmagen reads (--max-file-size)\n"
        )
    );
    let out = world.run(&["validate", "/dev/zero"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: /dev/zero: is a character device; rdmagen reads only regular files\n"
    );
}

#[test]
fn a_symlinked_input_is_refused_and_its_target_never_echoed() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    symlink(
        "../secret.txt",
        world.path(&format!("{inputs}/stolen.yaml")),
    )
    .unwrap();
    let out = world.run(&["validate", &inputs]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {inputs}/stolen.yaml: is a symlink that leads out of {inputs}; rdmagen follows a symlink only within the tree it is given (--exclude skips it)\n"
        )
    );
    // Named on the command line, it is refused by the read itself.
    let out = world.run(&["validate", &format!("{inputs}/stolen.yaml")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).ends_with("stolen.yaml: is a symlink; rdmagen never follows symlinks in the trees it reads or writes\n"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn something_in_the_way_of_an_output_file_stops_the_run_before_any_change() {
    let world = World::new();
    let (old_in, _, _, _, _) = old_and_new(&world, 3);
    // A directory where rdmagen writes a file, and a file where it needs a directory.
    std::fs::remove_file(world.path("out/job-0001/pytorchjob.yaml")).unwrap();
    std::fs::create_dir(world.path("out/job-0001/pytorchjob.yaml")).unwrap();
    let before = snapshot(world.dir.path());
    let out = world.run(&["render", &old_in, "-o", "out"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: out/job-0001/pytorchjob.yaml: rdmagen writes a file here, and something else is in the way; move it\n"
    );
    assert_eq!(snapshot(world.dir.path()), before);
    std::fs::remove_dir_all(world.path("out/job-0002")).unwrap();
    std::fs::write(world.path("out/job-0002"), "a file\n").unwrap();
    std::fs::remove_dir(world.path("out/job-0001/pytorchjob.yaml")).unwrap();
    let before = snapshot(world.dir.path());
    let out = world.run(&["render", &old_in, "-o", "out", "--bless"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: out/job-0002: rdmagen writes a directory here, and something else is in the way; move it\n"
    );
    assert_eq!(snapshot(world.dir.path()), before);
}

/// A hand-written file at a path a job renders, which the record does not list, is
/// the user's: the run stops and names it, and only `--force` replaces it (without
/// leftovers in the old tree's clean-up).
#[test]
fn a_file_rdmagen_did_not_write_at_a_path_it_renders_is_replaced_only_with_force() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    assert!(
        world
            .run(&["render", &inputs, "-o", "out"])
            .status
            .success()
    );
    let expected = snapshot(&world.out());
    std::fs::write(world.path("out/.rdmagen-owned"), "# nothing\n").unwrap();
    std::fs::write(world.path("out/job-0000/pytorchjob.yaml"), "kind: Mine\n").unwrap();
    let theirs = snapshot(&world.out());
    let out = world.run(&["render", &inputs, "-o", "out"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr(&out),
        "error: refusing to replace 1 file(s) that may hold someone's work: out/job-0000/pytorchjob.yaml (not in .rdmagen-owned: rdmagen did not write it). Nothing was written: move the change into the job or pool (a podTemplate overlay), or rerun with --force to replace them\n"
    );
    assert_eq!(snapshot(&world.out()), theirs);
    let out = world.run(&["render", &inputs, "-o", "out", "--force"]);
    assert_eq!(
        stderr(&out),
        "1 job(s) rendered to out: 0 created, 1 updated, 0 unchanged\n"
    );
    assert_eq!(snapshot(&world.out()), expected);
    assert_eq!(world.staging_areas(), Vec::<String>::new());
}

/// A file rdmagen wrote and someone then edited is not rdmagen's any more: writing,
/// blessing and smoke-test refuse to overwrite it and name every such file; `--prune`
/// keeps it when it goes stale. An unedited neighbour is replaced as usual.
#[test]
fn an_edited_output_is_never_overwritten_or_pruned_unasked() {
    let world = World::new();
    let v1 = world.inputs("v1", 3);
    assert!(world.run(&["render", &v1, "-o", "out"]).status.success());
    for job in ["job-0000", "job-0002"] {
        let path = world.path(&format!("out/{job}/pytorchjob.yaml"));
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("# tuned by hand\n");
        std::fs::write(path, text).unwrap();
    }
    let edited = snapshot(&world.out());
    let v2 = world.inputs("v2", 3);
    for mode in [&[][..], &["--bless"][..], &["--bless", "--prune"][..]] {
        let mut args = vec!["render", v2.as_str(), "-o", "out"];
        args.extend_from_slice(mode);
        let out = world.run(&args);
        assert_eq!(out.status.code(), Some(2), "{mode:?}");
        let err = stderr(&out);
        assert!(
            err.contains("refusing to replace 2 file(s) that may hold someone's work: out/job-0000/pytorchjob.yaml (edited since rdmagen wrote it: its bytes no longer match .rdmagen-owned); out/job-0002/pytorchjob.yaml (edited"),
            "{mode:?}: {err}"
        );
        assert_eq!(snapshot(&world.out()), edited, "{mode:?}");
        assert_eq!(world.staging_areas(), Vec::<String>::new());
    }

    // Stale and edited: --prune keeps it, says why, and it stays listed with the
    // fingerprint of what rdmagen wrote, so the next prune keeps it too.
    std::fs::remove_file(world.path("inputs-v1/job-0000.yaml")).unwrap();
    std::fs::remove_file(world.path("inputs-v1/job-0001.yaml")).unwrap();
    std::fs::remove_file(world.path("out/job-0002/pytorchjob.yaml")).unwrap();
    let out = world.run(&["render", &v1, "-o", "out", "--bless", "--prune"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("stale (kept: edited since rdmagen wrote it: its bytes no longer match .rdmagen-owned; delete it by hand if it should go): out/job-0000/pytorchjob.yaml\n"),
        "{err}"
    );
    assert!(
        err.contains("deleted: out/job-0001/pytorchjob.yaml\n"),
        "{err}"
    );
    assert!(err.ends_with("1 deleted, 1 stale kept\n"), "{err}");
    let record = std::fs::read_to_string(world.path("out/.rdmagen-owned")).unwrap();
    assert!(
        record.contains("\njob-0000/pytorchjob.yaml\tfnv1a64:"),
        "{record}"
    );
    let kept = std::fs::read_to_string(world.path("out/job-0000/pytorchjob.yaml")).unwrap();
    assert!(kept.ends_with("# tuned by hand\n"));
    let again = world.run(&["render", &v1, "-o", "out", "--bless", "--prune"]);
    assert!(
        stderr(&again).ends_with("0 deleted, 1 stale kept\n"),
        "{}",
        stderr(&again)
    );

    // --force replaces what a run renders; it never deletes (issue 22): the edited
    // stale file stays until someone deletes it by hand.
    let out = world.run(&["render", &v1, "-o", "out", "--bless", "--prune", "--force"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.ends_with("0 deleted, 1 stale kept\n"), "{err}");
    let files: Vec<String> = snapshot(&world.out()).into_keys().collect();
    assert_eq!(
        files,
        [
            ".rdmagen-owned",
            "job-0000",
            "job-0000/pytorchjob.yaml",
            "job-0002",
            "job-0002/pytorchjob.yaml"
        ]
    );
}

/// A trailing slash once made `lstat` follow a committed symlink (`jobs -> /etc`), and
/// a symlinked parent of a named file or of `-o` was followed silently.
#[test]
fn a_named_path_through_a_symlink_is_refused_with_or_without_a_trailing_slash() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("creds.yaml"),
        format!("token: {SECRET}\n"),
    )
    .unwrap();
    std::fs::create_dir(outside.path().join("rendered")).unwrap();
    std::fs::write(outside.path().join("rendered/keep"), "keep\n").unwrap();
    symlink(outside.path(), world.path("link")).unwrap();
    let before = snapshot(outside.path());
    let refused = |args: &[&str]| {
        let out = world.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("symlink"),
            "{args:?}: {}",
            stderr(&out)
        );
    };
    for named in ["link", "link/", "link/.", "link//"] {
        refused(&["validate", named]);
        refused(&["lint", named]);
        refused(&["diff", &inputs, named]);
        refused(&["render", &inputs, "--templates", named]);
    }
    refused(&["validate", "link/creds.yaml"]);
    refused(&[
        "render",
        &inputs,
        "-o",
        "link/rendered",
        "--bless",
        "--prune",
    ]);
    refused(&["render", &inputs, "-o", "link/rendered", "--check"]);
    assert_eq!(snapshot(outside.path()), before);
}

#[test]
fn a_name_that_is_not_utf8_in_the_output_directory_stops_the_run_before_any_change() {
    use std::os::unix::ffi::OsStrExt;
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    assert!(
        world
            .run(&["render", &inputs, "-o", "out"])
            .status
            .success()
    );
    let odd = std::ffi::OsStr::from_bytes(b"notes\xff");
    std::fs::write(world.out().join(odd), "A").unwrap();
    std::fs::write(world.out().join("notes\u{fffd}"), "B").unwrap();
    let inputs = world.inputs("v2", 1);
    let before = snapshot(world.dir.path());
    let out = world.run(&["render", &inputs, "-o", "out", "--bless", "--prune"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("a name that is not valid UTF-8; rename it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(world.dir.path()), before);
}

/// `##[cmd]` anywhere in a line and `::cmd::` after spaces are workflow commands to the
/// Actions runner, and a golden file's lines reach the log in a diff: on Actions the
/// text for people on both streams is made inert (no `::stop-commands::` frame, which
/// covered stderr only and was dropped when stderr was a file; see
/// tests/cli/hostile_text.rs for every route of the streams).
#[test]
fn on_github_actions_workflow_commands_in_the_output_are_inert() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    assert!(
        world
            .run(&["render", &inputs, "-o", "out"])
            .status
            .success()
    );
    let golden = world.path("out/job-0000/pytorchjob.yaml");
    let text = std::fs::read_to_string(&golden).unwrap();
    std::fs::write(&golden, format!("{text}# ##[add-mask]x\n::error::pwned\n")).unwrap();
    let on_actions = |extra: &[&str]| {
        let mut args = vec!["render", inputs.as_str(), "-o", "out", "--check"];
        args.extend_from_slice(extra);
        let out = world
            .command(&args)
            .env("GITHUB_ACTIONS", "true")
            .output()
            .unwrap();
        assert_no_secret(&out);
        assert_eq!(out.status.code(), Some(1));
        out
    };
    let first = on_actions(&[]);
    let err = stderr(&first);
    assert_eq!(err, "1 checked, 1 differ, 0 missing, 0 stale\n");
    let stdout = String::from_utf8_lossy(&first.stdout).into_owned();
    assert!(
        stdout.ends_with("-# #\\u{23}[add-mask]x\n-::error::pwned\n"),
        "{stdout}"
    );
    // Annotations are the point of --format github (and are percent-encoded).
    let github = String::from_utf8_lossy(&on_actions(&["--format", "github"]).stdout).into_owned();
    assert!(github.starts_with("::error file="), "{github}");
    // A report redirected to a file stays one document.
    let report = world.path("report.json");
    let bad = crate::support::root().join("tests/bad/ib-tc.yaml");
    let out = world
        .command(&["render", bad.to_str().unwrap(), "--format", "json"])
        .env("GITHUB_ACTIONS", "true")
        .stderr(std::fs::File::create(&report).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let written = std::fs::read_to_string(&report).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&written).unwrap_or_else(|e| panic!("{e}: {written}"));
    assert_eq!(json["findings"][0]["rule"], "RDG020");
}

/// Issue 22, F1: a pull request adds `.rdmagen.yaml` with `output: services`, a folder
/// that holds someone's services and no record. `--bless --prune` once deleted them
/// all, exit 0, and a plain render overwrote `services/api/Dockerfile` with one whose
/// `FROM` the same pull request chose. A name is no proof now: the directory is
/// refused, `--force` replaces only what is rendered at the same path, and nothing
/// rdmagen cannot prove it wrote is ever deleted.
#[test]
fn a_pull_requests_output_into_a_folder_without_a_record_deletes_and_replaces_nothing() {
    let world = World::new();
    let jobs = world.path("jobs");
    std::fs::create_dir_all(&jobs).unwrap();
    std::fs::write(jobs.join("pool.yaml"), POOL).unwrap();
    std::fs::write(
        jobs.join("api.yaml"),
        "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: api}\n\
         spec: {pool: a100-roce, image: \"registry.example.com/train:1\", nodes: 2, \
         gpusPerNode: 8, script: train.py, imageBuild: {base: \"evil.example.com/base:1\", \
         family: apt}}\n",
    )
    .unwrap();
    std::fs::write(world.path(".rdmagen.yaml"), "output: services\n").unwrap();
    std::fs::create_dir(world.path(".git")).unwrap();
    for (rel, text) in [
        ("services/api/Dockerfile", "FROM python:3.12\n"),
        ("services/web/Dockerfile", "FROM nginx:1\n"),
        ("services/api/storage.yaml", "kind: PersistentVolumeClaim\n"),
    ] {
        let path = world.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let services = snapshot(&world.path("services"));
    let refused = "error: services: holds 3 file(s) and no .rdmagen-owned, so nothing in it is provably rdmagen's (api/Dockerfile, api/storage.yaml, web/Dockerfile). Nothing was written: name a new or empty directory, or rerun with --force to write into it (--force replaces files only at the paths rdmagen renders, and never deletes one)\n";
    for args in [
        &["render", "jobs", "--bless", "--prune"][..],
        &["render", "jobs", "--bless"],
        &["render", "jobs", "--write"],
    ] {
        let out = world.run(args);
        assert_eq!(
            (out.status.code(), stderr(&out).as_str()),
            (Some(2), refused),
            "{args:?}"
        );
        assert_eq!(snapshot(&world.path("services")), services, "{args:?}");
    }
    // A bare render is a preview: it prints, whatever the configuration says.
    let out = world.run(&["render", "jobs"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("kind: PyTorchJob"));
    assert_eq!(snapshot(&world.path("services")), services);
    // --force writes into it, replacing the one file rendered at its path, and prunes
    // nothing, even with --prune.
    let out = world.run(&[
        "render", "jobs", "--bless", "--prune", "--force", "-o", "services",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let now = snapshot(&world.path("services"));
    assert_eq!(now["web/Dockerfile"], services["web/Dockerfile"]);
    assert_eq!(now["api/storage.yaml"], services["api/storage.yaml"]);
    assert_ne!(
        now["api/Dockerfile"], services["api/Dockerfile"],
        "--force replaces it"
    );
    // Stale now: rdmagen's record lists only what it wrote, and --prune never deletes
    // the rest.
    std::fs::remove_file(jobs.join("api.yaml")).unwrap();
    let out = world.run(&["render", "jobs", "--bless", "--prune", "--allow-empty"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let after = snapshot(&world.path("services"));
    assert_eq!(after["web/Dockerfile"], services["web/Dockerfile"]);
    assert_eq!(after["api/storage.yaml"], services["api/storage.yaml"]);
}

/// Issue 22, F1: `-o .` at a repository's root deleted `app/Dockerfile` and
/// `deploy/storage.yaml` with --bless --prune, though the configuration refuses
/// `output: .`. The command line is judged as the file is, and also refuses a
/// directory above the root and one that holds the inputs.
#[test]
fn an_output_directory_that_is_the_repository_or_holds_the_inputs_is_refused() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    std::fs::create_dir(world.path(".git")).unwrap();
    for rel in ["app/Dockerfile", "deploy/storage.yaml"] {
        std::fs::create_dir_all(world.path(rel).parent().unwrap()).unwrap();
        std::fs::write(world.path(rel), "someone's\n").unwrap();
    }
    std::fs::create_dir(world.path("sub")).unwrap();
    std::fs::create_dir_all(world.path("other/.git")).unwrap();
    let before = snapshot(world.dir.path());
    let cases: Vec<(Vec<&str>, &str, String)> = vec![
        (
            vec!["-o", "."],
            ".",
            ".: is the working directory".to_owned(),
        ),
        (
            vec!["-o", "./"],
            ".",
            "./: is the working directory".to_owned(),
        ),
        (
            vec!["-o", ".."],
            "sub",
            "..: holds the working directory".to_owned(),
        ),
        (
            vec!["-o", "../.."],
            "sub",
            "../..: holds the working directory".to_owned(),
        ),
        (
            vec!["-o", "../other"],
            "sub",
            "../other: is a repository's root (it holds .git)".to_owned(),
        ),
        (
            vec!["-o", &inputs],
            ".",
            format!("{inputs}: holds the input {inputs}"),
        ),
        (
            vec!["-o", ".git/out"],
            ".",
            ".git/out: is inside .git".to_owned(),
        ),
    ];
    for (flags, cwd, why) in cases {
        let input = match cwd {
            "sub" => format!("../{inputs}"),
            _ => inputs.clone(),
        };
        let mut args = vec!["render", &input, "--bless", "--prune"];
        args.extend(flags.iter().copied());
        let out = world
            .command(&args)
            .current_dir(world.path(cwd))
            .output()
            .unwrap();
        assert_eq!(
            (out.status.code(), stderr(&out)),
            (
                Some(2),
                format!(
                    "error: {why}; rendering replaces an output directory's tree whole, so name a directory of its own, e.g. rendered/\n"
                )
            ),
            "{args:?} in {cwd}"
        );
        assert_eq!(snapshot(world.dir.path()), before, "{args:?} in {cwd}");
    }
}

/// Issue 22, F10: with `output: rendered/` in a `.rdmagen.yaml` of a parent directory,
/// `rdmagen render job.yaml` (the README's preview) printed nothing and wrote
/// `rendered/<job>/`. A bare render prints; `--write` uses the configured directory.
#[test]
fn a_preview_never_writes_whatever_the_configuration_says() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    std::fs::write(world.path(".rdmagen.yaml"), "output: rendered/\n").unwrap();
    std::fs::create_dir(world.path(".git")).unwrap();
    let job = format!("../{inputs}");
    std::fs::create_dir(world.path("sub")).unwrap();
    let out = world
        .command(&["render", &job])
        .current_dir(world.path("sub"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .starts_with("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n")
    );
    assert!(!world.path("rendered").exists());
    let out = world.run(&["render", &inputs, "--write"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "1 job(s) rendered to rendered/: 1 created, 0 updated, 0 unchanged\n"
    );
    assert!(world.path("rendered/job-0000/pytorchjob.yaml").is_file());
}

/// Issue 22, F2: an edit made while a 2 000-job render ran was deleted by the next
/// run's clean-up. Now the run stops before its swap and names the edit, which stays
/// in place; killed at any point instead, the run leaves the edit in DIR, and the
/// next run exits non-zero naming it rather than replacing it.
#[test]
fn an_edit_made_while_a_long_render_runs_is_kept_in_place_and_named() {
    let world = World::new();
    let (old_in, new_in, _, _, took) = old_and_new(&world, 2000);
    let edited = world.path("out/job-0005/pytorchjob.yaml");
    let edit = |path: &Path| {
        let mut text = std::fs::read_to_string(path).unwrap();
        text.push_str("# MY-HAND-FIX\n");
        std::fs::write(path, text).unwrap();
    };
    // Not killed: the run notices at the swap. `took` was measured under whatever
    // load the machine had then; a run that has already ended by the time of the edit
    // tested nothing, nor did one whose swap came before the edit (then the edit is in
    // the new tree, where it must have stayed): either is tried again with an earlier
    // edit, on the old tree again.
    let mut delay = took / 2;
    let out = loop {
        let mut child = world
            .command(&["render", &new_in, "-o", "out"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        let running = child.try_wait().unwrap().is_none();
        if running {
            edit(&edited);
        }
        let out = child.wait_with_output().unwrap();
        if running && !out.status.success() {
            break out;
        }
        if running {
            assert!(
                std::fs::read_to_string(&edited)
                    .unwrap()
                    .ends_with("# MY-HAND-FIX\n"),
                "an edit made after the swap was lost"
            );
        }
        std::fs::remove_dir_all(world.out()).unwrap();
        assert!(
            world
                .run(&["render", &old_in, "-o", "out"])
                .status
                .success()
        );
        assert!(
            delay > Duration::from_millis(10),
            "the run always swapped before the edit"
        );
        delay /= 4;
    };
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // Judged before the edit (the usual case, half-way through), or after it; or, on
    // a loaded machine, edited in the moment of the swap itself, when the clean-up
    // finds the edit and puts it back in place of the new file (emit::edits_error).
    let message = stderr(&out);
    assert!(
        message
            == "error: 1 file(s) changed while this run rendered, after it had judged them: out/job-0005/pytorchjob.yaml. Nothing was written, so the change is in place: run again\n"
            || message.contains("out/job-0005/pytorchjob.yaml (edited since rdmagen wrote it")
            || message.contains("error: 1 file(s) edited while this run rendered them are back in place of what it rendered, so the edit is not lost (the next run refuses to replace them until the change is in the job or pool, or --force): out/job-0005/pytorchjob.yaml"),
        "{message}"
    );
    assert!(
        std::fs::read_to_string(&edited)
            .unwrap()
            .ends_with("# MY-HAND-FIX\n")
    );
    assert_eq!(world.staging_areas(), Vec::<String>::new());
    let out = world.run(&["render", &new_in, "-o", "out"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("out/job-0005/pytorchjob.yaml (edited since rdmagen wrote it"),
        "{}",
        stderr(&out)
    );
    // Killed: wherever the kill lands, the edit is in DIR afterwards, and the run
    // that finishes the clean-up says so with a non-zero exit.
    let mut random = Random((Instant::now().elapsed().as_nanos() as u64) | 1);
    for round in 0..3 {
        std::fs::remove_dir_all(world.out()).unwrap();
        assert!(
            world
                .run(&["render", &old_in, "-o", "out"])
                .status
                .success()
        );
        let mut child = world
            .command(&["render", &new_in, "-o", "out"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let span = took.as_millis() as u64;
        std::thread::sleep(took / 10);
        edit(&edited);
        std::thread::sleep(Duration::from_millis(random.below(span)));
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            std::fs::read_to_string(&edited)
                .unwrap()
                .ends_with("# MY-HAND-FIX\n"),
            "round {round}: the edit is gone after the kill"
        );
        let out = world.run(&["render", &new_in, "-o", "out"]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "round {round}: {}",
            stderr(&out)
        );
        assert!(
            stderr(&out).contains("out/job-0005/pytorchjob.yaml"),
            "round {round}: {}",
            stderr(&out)
        );
        assert!(
            std::fs::read_to_string(&edited)
                .unwrap()
                .ends_with("# MY-HAND-FIX\n"),
            "round {round}"
        );
    }
}

/// The state a run killed between its swap and its clean-up leaves, built as
/// `src/emit/swap.rs` writes it (no signal lands reliably in that window): `out/` is
/// the v2 tree, `.rdmagen-out.1-1/tree` the v1 tree with job-0001 edited, and the
/// lock file names both inodes and, with `judged`, what the run judged (job-0001
/// before its edit). Returns the v2 inputs, the edited file and its bytes.
fn killed_after_its_swap(world: &World, judged: bool) -> (String, PathBuf, Vec<u8>) {
    use std::os::unix::fs::MetadataExt;
    let (v1, v2) = (world.inputs("v1", 3), world.inputs("v2", 3));
    assert!(world.run(&["render", &v1, "-o", "out"]).status.success());
    let container = world.path(".rdmagen-out.1-1");
    std::fs::create_dir(&container).unwrap();
    std::fs::rename(world.out(), container.join("tree")).unwrap();
    let edited = container.join("tree/job-0001/pytorchjob.yaml");
    let was: Vec<Vec<u8>> = (0..3)
        .map(|i| std::fs::read(container.join(format!("tree/job-000{i}/pytorchjob.yaml"))).unwrap())
        .collect();
    let mut tuned = was[1].clone();
    tuned.extend_from_slice(b"# MY-HAND-FIX\n");
    std::fs::write(&edited, &tuned).unwrap();
    assert!(world.run(&["render", &v2, "-o", "out"]).status.success());
    let inode = |p: &Path| {
        let m = std::fs::metadata(p).unwrap();
        format!("{}:{}", m.dev(), m.ino())
    };
    let fnv = |bytes: &[u8]| {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        format!("fnv1a64:{h:016x}")
    };
    let judged: String = match judged {
        true => (0..3)
            .map(|i| format!("judged {} job-000{i}/pytorchjob.yaml\n", fnv(&was[i])))
            .collect(),
        false => String::new(),
    };
    std::fs::write(
        container.join("lock"),
        format!(
            "for out\ncontainer {}\nold {}\nnew {}\n{judged}",
            inode(&container),
            inode(&container.join("tree")),
            inode(&world.out())
        ),
    )
    .unwrap();
    (v2, edited, tuned)
}

/// Issue 22, F2, after the swap: a run killed between its swap and its clean-up
/// leaves the old tree in its staging area, with an edit made meanwhile. The next
/// run put that tree's files away by the record alone, edit included.
#[test]
fn a_recovery_after_a_kill_past_the_swap_puts_an_edit_back_and_says_so() {
    let world = World::new();
    let (v2, _, tuned) = killed_after_its_swap(&world, true);
    let out = world.run(&["render", &v2, "-o", "out"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: 1 file(s) edited while a killed rdmagen run rendered them are back in place of what it rendered, so the edit is not lost (the next run refuses to replace them until the change is in the job or pool, or --force): out/job-0001/pytorchjob.yaml\n"
    );
    assert_eq!(
        std::fs::read(world.path("out/job-0001/pytorchjob.yaml")).unwrap(),
        tuned
    );
    assert_eq!(world.staging_areas(), Vec::<String>::new());
    let out = world.run(&["render", &v2, "-o", "out"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("out/job-0001/pytorchjob.yaml (edited since rdmagen wrote it"));
}

/// The attack on the recovery above: the same killed run, but the output directory
/// moved away ("start fresh") before the next run. Its old tree, edit included, was
/// removed whole without proof. Now what the old tree's record proves is rdmagen's
/// goes, and the edit stays where it is, named, exit 2.
#[test]
fn a_killed_runs_old_tree_keeps_its_edit_when_the_output_directory_was_moved() {
    let world = World::new();
    let (v2, edited, tuned) = killed_after_its_swap(&world, false);
    std::fs::rename(world.out(), world.path("out.before")).unwrap();
    let out = world.run(&["render", &v2, "-o", "out"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "error: 1 edited or new file(s) could not be put back and stay where they are; move them by hand: .rdmagen-out.1-1/tree/job-0001/pytorchjob.yaml\n"
    );
    assert_eq!(std::fs::read(&edited).unwrap(), tuned);
    let left: Vec<String> = snapshot(&world.path(".rdmagen-out.1-1/tree"))
        .into_iter()
        .filter(|(_, node)| matches!(node, Node::File(_)))
        .map(|(rel, _)| rel)
        .collect();
    assert_eq!(left, ["job-0001/pytorchjob.yaml"], "the proven files went");
    std::fs::rename(&edited, world.path("my-fix.yaml")).unwrap();
    let out = world.run(&["render", &v2, "-o", "out"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(world.staging_areas(), Vec::<String>::new());
}

/// The attack's `-o up`, where `up/r` is a repository: run from outside it, nothing
/// refused it, and `--force` rebuilt `r/.git` with new inodes.
#[test]
fn an_output_directory_that_holds_a_repository_is_refused() {
    let world = World::new();
    let inputs = world.inputs("v1", 1);
    std::fs::create_dir_all(world.path("up/r/.git")).unwrap();
    std::fs::write(world.path("up/r/main.c"), "code\n").unwrap();
    let before = snapshot(&world.path("up"));
    for force in [&[][..], &["--force"]] {
        let mut args = vec!["render", inputs.as_str(), "-o", "up"];
        args.extend_from_slice(force);
        let out = world.run(&args);
        assert_eq!(
            (out.status.code(), stderr(&out)),
            (
                Some(2),
                "error: up: holds a repository (up/r/.git), so it is not an output directory; name a directory of its own, e.g. rendered/\n".to_owned()
            ),
            "{force:?}"
        );
        assert_eq!(snapshot(&world.path("up")), before);
    }
}

/// Issue 22, F9: a job directory swapped for a symlink while a run rendered came back
/// as `drwxrwxrwx`, its mode copied from the link. Modes come from the directories
/// the run judged; nothing is linked or read through the symlink.
#[test]
fn a_directory_swapped_for_a_symlink_during_a_run_lends_it_nothing() {
    use std::os::unix::fs::PermissionsExt;
    let world = World::new();
    let (_, new_in, _, _, took) = old_and_new(&world, 2000);
    let job = world.path("out/job-0007");
    std::fs::set_permissions(&job, std::fs::Permissions::from_mode(0o750)).unwrap();
    std::fs::create_dir(world.path("elsewhere")).unwrap();
    let child = world
        .command(&["render", &new_in, "-o", "out"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(took / 10);
    std::fs::rename(&job, world.path("elsewhere/job-0007")).unwrap();
    symlink(world.path("elsewhere/job-0007"), &job).unwrap();
    let out = child.wait_with_output().unwrap();
    let now = std::fs::symlink_metadata(&job).unwrap();
    if out.status.success() {
        assert!(now.is_dir(), "the new tree has a real directory there");
        assert_eq!(now.permissions().mode() & 0o7777, 0o750);
    } else {
        assert!(
            now.file_type().is_symlink(),
            "a failed run leaves DIR as it was"
        );
        assert!(stderr(&out).contains("job-0007"), "{}", stderr(&out));
    }
    for entry in walkdir::WalkDir::new(world.out()) {
        let entry = entry.unwrap();
        if entry.file_type().is_dir() {
            let mode = entry.metadata().unwrap().permissions().mode() & 0o777;
            assert_ne!(mode, 0o777, "{}", entry.path().display());
        }
    }
    assert_eq!(world.staging_areas(), Vec::<String>::new());
}
