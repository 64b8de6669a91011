//! What an MPIJob launcher's `mpirun` command line says: how many ranks it starts
//! and which variables it hands them. The mpi-operator runs whatever command the
//! launcher has; these are the MPI implementations' own facts, read at:
//!
//! - Open MPI v4.1.6 (commit 439b23db6288f0370f6fcc80c8c0a06ad86d6873),
//!   `orte/tools/orterun/orterun.1in` ("orterun.1in"), the mpirun(1) page, and
//!   `opal/mca/base/mca_base_var.c`;
//! - MPICH v4.3.2 (commit 15f59ab2b740539472dfd130f7fe01b61c28bba4), Hydra's
//!   `src/pm/hydra/mpiexec/options.c` (the option table) and
//!   `src/pm/hydra/mansrc/mpiexec.txt`; Intel MPI's mpiexec.hydra is Hydra, with
//!   `-perhost` beside `-ppn`, and passes "the entire launching node environment" to
//!   the processes by default ([Intel oneMKL developer guide, "Setting Environment
//!   Variables on a Cluster"](https://intel.com/content/www/us/en/docs/onemkl/developer-guide-linux/2025-1/setting-environment-variables-on-a-cluster.html));
//! - OpenSSH 9.6p1 (commit 8241b9c0529228b4b86d88b1a6076fb9f97e4a99) `session.c`, for
//!   why a worker's own env never reaches a rank ([`SSHD_SESSION_ENV`]).
//!
//! A command line is read only where every option before the program is one these
//! tables know, with its values: an unknown option might take the next word, and then
//! the program, and every `-x` after it, would be misread. What is not read with
//! confidence is `None`, and the rules say nothing about it.

use super::Implementation;
use crate::shell;

/// A rank is a child of an sshd session on its worker, and sshd builds a session's
/// environment from nothing (session.c:993-996, do_setup_env): the client's accepted
/// variables, USER, LOGNAME, HOME, PATH, MAIL, SHELL, and TZ and KRB5CCNAME from its
/// own (:1019-1079), then ~/.ssh/environment only under PermitUserEnvironment
/// (:1119-1124). The worker container's `env`, which sshd itself runs with, is not
/// among them, so ranks see only what mpirun hands them.
pub const SSHD_SESSION_ENV: &str = "session.c:993-996";

/// Prefixes of the variables the libraries in a rank read (NCCL, UCX, libfabric),
/// which configure the ranks and nothing on the worker around them.
pub const RANK_ENV_PREFIXES: [&str; 3] = ["NCCL_", "UCX_", "FI_"];

/// Open MPI exports every `OMPI_*` variable to the ranks by itself (orterun.1in:1649-1650).
const OPEN_MPI_AUTO_EXPORT: &str = "OMPI_";

/// An MCA parameter set in mpirun's environment (orterun.1in:1694-1709): the
/// variables to forward, `;`-separated by default (mca_base_var.c:70-71, 346-358).
pub const OPEN_MPI_ENV_LIST_VARIABLE: &str = "OMPI_MCA_mca_base_env_list";

/// A read mpirun command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mpirun {
    /// `-np N` and its synonyms (Open MPI `-c`, `-n`, `--n`, `-np`: orterun.1in:356-364;
    /// Hydra `-n`, `-np`: options.c:1673-1674): the word of the value, and the value
    /// where it is a number as written (not `$NP` or `$(NP)`).
    pub np: Option<(usize, Option<u32>)>,
    /// A per-node count (`-N`, `-npernode`, `-pernode`, `--map-by ppr:..`, `--ppr`,
    /// Hydra `-ppn`, Intel `-perhost`) is given: without `-np`, it decides the count.
    pub per_node: bool,
    /// Open MPI's `--oversubscribe` (orterun.1in:434-437): more ranks than slots are
    /// started rather than refused.
    pub oversubscribe: bool,
    /// A host list or hostfile other than the operator's is given: the slots are then
    /// not the MPIJob's.
    pub other_hosts: bool,
    /// Names mpirun hands every rank: Open MPI `-x NAME[=VALUE]` (orterun.1in:644-652)
    /// and `mca_base_env_list`; Hydra `-genv`/`-env NAME VALUE`, `-genvlist`/`-envlist`.
    pub exported: Vec<String>,
    /// Hydra passes the launcher's whole environment unless `-genvnone`/`-envnone`
    /// (mpiexec.txt:65-69; Intel's guide); Open MPI never does.
    pub passes_environment: bool,
    /// The index of the program's word: the first word that is not an option.
    pub program: usize,
    pub implementation: Implementation,
}

impl Mpirun {
    /// Whether a rank gets variable `name`, given whether the launcher's env sets it.
    pub fn forwards(&self, name: &str, in_launcher_env: bool) -> bool {
        self.exported.iter().any(|e| e == name)
            || (self.implementation == Implementation::OpenMpi
                && name.starts_with(OPEN_MPI_AUTO_EXPORT))
            || (self.passes_environment && in_launcher_env)
    }
}

/// The number of values an option takes, or `None` for an option this reader does not
/// follow (it reads a file of options or environment, or it is not in the table).
fn open_mpi_arity(name: &str) -> Option<usize> {
    // orterun.1in:236-948, the options with their values.
    Some(match name {
        "h"
        | "help"
        | "q"
        | "quiet"
        | "v"
        | "verbose"
        | "V"
        | "version"
        | "display-map"
        | "display-allocation"
        | "output-proctable"
        | "dvm"
        | "novm"
        | "pernode"
        | "bycore"
        | "byslot"
        | "nolocal"
        | "nooversubscribe"
        | "oversubscribe"
        | "bynode"
        | "bind-to-core"
        | "bind-to-socket"
        | "report-bindings"
        | "merge-stderr-to-stdout"
        | "tag-output"
        | "timestamp-output"
        | "xml"
        | "noprefix"
        | "s"
        | "preload-binary"
        | "set-cwd-to-session-dir"
        | "debug"
        | "get-stack-traces"
        | "tv"
        | "allow-run-as-root"
        | "continuous"
        | "disable-recovery"
        | "do-not-launch"
        | "do-not-resolve"
        | "enable-recovery"
        | "index-argv-by-rank"
        | "leave-session-attached"
        | "report-child-jobs-separately"
        | "show-progress"
        | "terminate"
        | "use-hwthread-cpus"
        | "use-regexp"
        | "d"
        | "debug-devel"
        | "debug-daemons"
        | "debug-daemons-file"
        | "display-devel-allocation"
        | "display-devel-map"
        | "display-diffable-map"
        | "display-topo"
        | "report-state-on-timeout" => 0,
        "N" | "max-vm-size" | "hnp" | "H" | "host" | "hostfile" | "default-hostfile"
        | "machinefile" | "cpu-set" | "c" | "n" | "np" | "npersocket" | "npernode" | "map-by"
        | "cpu-list" | "rank-by" | "bind-to" | "cpus-per-proc" | "cpus-per-rank" | "rf"
        | "rankfile" | "output-filename" | "stdin" | "xml-file" | "xterm" | "path" | "prefix"
        | "preload-files" | "wd" | "wdir" | "x" | "timeout" | "cf" | "cartofile"
        | "max-restarts" | "ompi-server" | "personality" | "ppr" | "report-events"
        | "report-pid" | "report-uri" | "launch-agent" => 1,
        "mca" | "gmca" => 2,
        // -am and -tune read MCA parameters and environment variables from files
        // (orterun.1in:675-686), --app an application context: not followed.
        _ => return None,
    })
}

/// Hydra's options (options.c:1633-1726) this reader follows, with their values;
/// Intel MPI adds `-perhost` and `-print-rank-map`.
fn hydra_arity(name: &str) -> Option<usize> {
    Some(match name {
        "genvall"
        | "genvnone"
        | "envall"
        | "envnone"
        | "l"
        | "prepend-rank"
        | "v"
        | "verbose"
        | "debug"
        | "info"
        | "version"
        | "print-all-exitcodes"
        | "enable-x"
        | "disable-x"
        | "print-rank-map" => 0,
        "genvlist" | "envlist" | "f" | "hostfile" | "machinefile" | "host" | "hosts"
        | "hostlist" | "ppn" | "perhost" | "wdir" | "n" | "np" | "launcher" | "launcher-exec"
        | "bootstrap" | "bootstrap-exec" | "iface" | "binding" | "bind-to" | "map-by"
        | "outfile-pattern" | "errfile-pattern" => 1,
        "genv" | "env" => 2,
        _ => return None,
    })
}

/// Whether `word` runs mpirun: Open MPI's `mpirun`, `mpiexec` and `orterun` are one
/// program (orterun.1in:17-22), as are Hydra's `mpiexec`, `mpiexec.hydra` and `mpirun`.
pub fn is_mpirun(word: &str) -> bool {
    matches!(
        word.rsplit('/').next(),
        Some("mpirun" | "mpiexec" | "orterun" | "mpiexec.hydra")
    )
}

/// The command line `argv` (its first word runs mpirun) as `implementation` reads it,
/// with `env_list` the value of [`OPEN_MPI_ENV_LIST_VARIABLE`] in the launcher's env
/// (`Some(None)` where it is set from a reference, its value unknown). `None` where
/// it cannot be read with confidence.
pub fn read(
    argv: &[&str],
    implementation: Implementation,
    env_list: Option<Option<&str>>,
) -> Option<Mpirun> {
    if !is_mpirun(argv.first()?) {
        return None;
    }
    let open_mpi = implementation == Implementation::OpenMpi;
    let mut run = Mpirun {
        np: None,
        per_node: false,
        oversubscribe: false,
        other_hosts: false,
        exported: Vec::new(),
        passes_environment: !open_mpi,
        program: 0,
        implementation,
    };
    if open_mpi && let Some(list) = env_list {
        run.exported.extend(env_list_names(list?)?);
    }
    let mut i = 1;
    while i < argv.len() {
        let word = argv[i];
        let Some(option) = word.strip_prefix('-') else {
            break;
        };
        // Both read `-np` and `--np` alike (Open MPI's single-dash long options,
        // orterun.1in:356; Hydra strips the dashes); `--np=16` is read as `--np 16`.
        let option = option.strip_prefix('-').unwrap_or(option);
        let (name, inline) = match option.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (option, None),
        };
        let arity = if open_mpi {
            open_mpi_arity(name)
        } else {
            hydra_arity(name)
        }?;
        if inline.is_some() && arity != 1 {
            return None;
        }
        let value_at = if inline.is_some() { i } else { i + 1 };
        let values: Vec<&str> = match inline {
            Some(v) => vec![v],
            None => argv.get(i + 1..i + 1 + arity)?.to_vec(),
        };
        match (open_mpi, name) {
            (true, "c" | "n" | "np") | (false, "n" | "np") => {
                run.np = Some((value_at, values[0].parse().ok()));
            }
            (true, "N" | "npernode" | "pernode" | "ppr") | (false, "ppn" | "perhost") => {
                run.per_node = true;
            }
            (true, "map-by") if values[0].starts_with("ppr") => run.per_node = true,
            (true, "oversubscribe") => run.oversubscribe = true,
            (true, "H" | "host" | "hostfile" | "default-hostfile" | "machinefile")
            | (false, "f" | "hostfile" | "machinefile" | "host" | "hosts" | "hostlist") => {
                run.other_hosts |= values[0] != super::HOSTFILE;
            }
            (true, "x") => {
                let name = values[0].split_once('=').map_or(values[0], |(n, _)| n);
                if shell::expands(name) || name.is_empty() {
                    return None;
                }
                run.exported.push(name.to_owned());
            }
            (true, "mca" | "gmca") => match values[0] {
                "mca_base_env_list" => run.exported.extend(env_list_names(values[1])?),
                // Another separator than the default `;` (mca_base_var.c:346-351).
                "mca_base_env_list_sep" => return None,
                _ => {}
            },
            (false, "genv" | "env") => {
                if shell::expands(values[0]) {
                    return None;
                }
                run.exported.push(values[0].to_owned());
            }
            (false, "genvlist" | "envlist") => {
                if shell::expands(values[0]) {
                    return None;
                }
                run.exported.extend(values[0].split(',').map(str::to_owned));
            }
            (false, "genvnone" | "envnone") => run.passes_environment = false,
            _ => {}
        }
        // An option word or a value that expands at run time may stand for anything,
        // options included. The count's value may: then it is only unknown.
        let counted = matches!(name, "c" | "n" | "np");
        if shell::expands(word)
            || values.iter().any(|v| {
                shell::expands(v) && !counted && name != "x" && name != "genv" && name != "env"
            })
        {
            return None;
        }
        i += 1 + if inline.is_some() { 0 } else { arity };
    }
    let program = argv.get(i)?;
    // A program word that starts as an expansion may be more options; MIMD's `:`
    // starts another program with options of its own.
    if program.starts_with('$') || program.starts_with('`') || argv[i..].contains(&":") {
        return None;
    }
    run.program = i;
    Some(run)
}

/// The names in a `mca_base_env_list` value: `NAME` or `NAME=VALUE` items separated
/// by `;` (mca_base_var.c:346-358, the -x syntax: orterun.1in:1651-1654).
fn env_list_names(list: &str) -> Option<Vec<String>> {
    let mut names = Vec::new();
    for item in list.split(';').filter(|s| !s.is_empty()) {
        let name = item.split_once('=').map_or(item, |(n, _)| n);
        if shell::expands(name) {
            return None;
        }
        names.push(name.to_owned());
    }
    Some(names)
}

/// How many GPUs each rank of `program` drives, where the program says so: nccl-tests'
/// `-g`/`--ngpus` (default 1: nccl-tests v2.19.6 src/common.cu:91, 1169, 1214-1215),
/// and torchrun's `--nproc-per-node`/`--nproc_per_node` (torch distributed/run.py
/// get_args_parser), which starts that many processes under one rank. A shell's `-c`
/// script is read for the one such command in it. `None`: not known.
pub fn gpus_per_rank(program: &[&str]) -> Option<u32> {
    if let Some(s) = shell::script_index(program) {
        let commands = shell::commands(program[s])?;
        let mut found = commands.iter().filter_map(|c| {
            let words: Vec<&str> = c.iter().map(String::as_str).collect();
            let start = words
                .iter()
                .position(|w| is_nccl_test(w) || is_torchrun(w))?;
            Some(gpus_per_rank(&words[start..]))
        });
        let first = found.next()?;
        return if found.next().is_none() { first } else { None };
    }
    let first = *program.first()?;
    let (flags, default): (&[&str], Option<u32>) = if is_nccl_test(first) {
        (&["-g", "--ngpus"], Some(1))
    } else if is_torchrun(first) {
        (&["--nproc-per-node", "--nproc_per_node"], None)
    } else {
        return None;
    };
    let mut value = default;
    for (i, w) in program.iter().enumerate().skip(1) {
        for flag in flags {
            if w == flag {
                value = program.get(i + 1).and_then(|v| v.parse().ok());
            } else if let Some(v) = w.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                value = v.parse().ok();
            }
        }
    }
    value
}

/// nccl-tests' binaries are `<collective>_perf` (and `_perf_mpi` in some images).
fn is_nccl_test(word: &str) -> bool {
    let base = word.rsplit('/').next().unwrap_or(word);
    base.ends_with("_perf") || base.ends_with("_perf_mpi")
}

fn is_torchrun(word: &str) -> bool {
    word.rsplit('/').next() == Some("torchrun")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(line: &str) -> Option<Mpirun> {
        let argv: Vec<&str> = line.split(' ').collect();
        read(&argv, Implementation::OpenMpi, None)
    }

    fn hydra(line: &str) -> Option<Mpirun> {
        let argv: Vec<&str> = line.split(' ').collect();
        read(&argv, Implementation::Intel, None)
    }

    #[test]
    fn the_count_is_read_in_each_of_its_forms() {
        for line in [
            "mpirun -np 16 prog",
            "mpirun --np 16 prog",
            "mpirun --np=16 prog",
            "mpirun -n 16 prog",
            "mpirun -c 16 prog",
            "/opt/amazon/openmpi/bin/mpirun --allow-run-as-root -np 16 -N 8 prog -n 100",
        ] {
            let run = open(line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(run.np.map(|(_, n)| n), Some(Some(16)), "{line}");
        }
        let run = open("mpirun --np=16 prog").unwrap();
        assert_eq!((run.np, run.program), (Some((1, Some(16))), 2));
        let run = open("mpirun -np 16 -N 8 prog -np 3").unwrap();
        assert_eq!(
            (run.np, run.per_node, run.program),
            (Some((2, Some(16))), true, 5)
        );
        // A count the shell or the kubelet fills in is unknown, not a reason to stop.
        let run = open("mpirun -np $(NP) -x NCCL_DEBUG prog").unwrap();
        assert_eq!(
            (run.np, run.exported.as_slice()),
            (Some((2, None)), &["NCCL_DEBUG".to_owned()][..])
        );
        assert_eq!(
            hydra("mpirun -n 16 -ppn 8 prog").unwrap().np,
            Some((2, Some(16)))
        );
        assert_eq!(open("mpirun prog").unwrap().np, None);
        assert!(
            open("mpirun --oversubscribe -np 4 prog")
                .unwrap()
                .oversubscribe
        );
    }

    #[test]
    fn exported_names_are_read_from_x_and_the_mca_list() {
        let run = open(
            "mpirun -x NCCL_IB_HCA=mlx5 -x LD_LIBRARY_PATH --mca mca_base_env_list NCCL_DEBUG;UCX_TLS=rc -mca pml ucx prog",
        )
        .unwrap();
        assert_eq!(
            run.exported,
            ["NCCL_IB_HCA", "LD_LIBRARY_PATH", "NCCL_DEBUG", "UCX_TLS"]
        );
        assert!(run.forwards("NCCL_DEBUG", false));
        // Open MPI never passes the launcher's env on, OMPI_* aside.
        assert!(!run.forwards("NCCL_SOCKET_IFNAME", true));
        assert!(run.forwards("OMPI_MCA_pml", false));
        let listed = read(
            &["mpirun", "prog"],
            Implementation::OpenMpi,
            Some(Some("A;B=1")),
        )
        .unwrap();
        assert_eq!(listed.exported, ["A", "B"]);
        assert_eq!(
            read(&["mpirun", "prog"], Implementation::OpenMpi, Some(None)),
            None
        );
        // The value may come from the shell; the name must not.
        assert_eq!(
            open("mpirun -x NCCL_DEBUG=${LEVEL} prog").unwrap().exported,
            ["NCCL_DEBUG"]
        );
        assert_eq!(open("mpirun -x $VARS prog"), None);
    }

    #[test]
    fn hydra_passes_the_launchers_env_unless_told_not_to() {
        let run = hydra("mpirun -n 16 -genv NCCL_DEBUG $(NCCL_DEBUG) -genvlist A,B prog").unwrap();
        assert_eq!(run.exported, ["NCCL_DEBUG", "A", "B"]);
        assert!(run.forwards("NCCL_IB_HCA", true) && !run.forwards("NCCL_IB_HCA", false));
        let none = hydra("mpirun -genvnone -genv NCCL_DEBUG INFO prog").unwrap();
        assert!(!none.forwards("NCCL_IB_HCA", true) && none.forwards("NCCL_DEBUG", false));
        // Open MPI's -x means nothing to Hydra: not read rather than misread.
        assert_eq!(hydra("mpirun -x NCCL_DEBUG prog"), None);
    }

    #[test]
    fn what_cannot_be_read_with_confidence_is_none() {
        for line in [
            "mpirun --unknown-option value prog",
            "mpirun -np 2 $MPI_OPTS prog",
            "mpirun -np 2 ${OPTS} prog",
            "mpirun -np 2 -tune file prog",
            "mpirun -np 2 prog : -np 2 other",
            "mpirun -np",
            "mpirun -np 2",
            "mpirun --mca mca_base_env_list_sep , prog",
            "python train.py",
        ] {
            assert_eq!(open(line), None, "{line}");
        }
    }

    #[test]
    fn gpus_per_rank_is_read_from_nccl_tests_and_torchrun() {
        let g = |line: &str| gpus_per_rank(&line.split(' ').collect::<Vec<_>>());
        assert_eq!(
            g("/opt/nccl_tests/build/all_reduce_perf -b 8 -e 8G"),
            Some(1)
        );
        assert_eq!(g("all_reduce_perf -b 8 -g 8"), Some(8));
        assert_eq!(g("all_gather_perf --ngpus=4"), Some(4));
        assert_eq!(g("torchrun --nproc-per-node 8 train.py"), Some(8));
        assert_eq!(g("torchrun --nproc_per_node=4 train.py"), Some(4));
        assert_eq!(g("torchrun train.py"), None);
        assert_eq!(g("python train.py"), None);
        let script = [
            "bash",
            "-c",
            "source /env.sh; /usr/local/bin/all_reduce_perf -g 2 -b 1K",
        ];
        assert_eq!(gpus_per_rank(&script), Some(2));
    }
}
