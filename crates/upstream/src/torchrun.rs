//! What a container's command starts, as far as PyTorch's launcher is concerned:
//! torchrun (`python -m torch.distributed.run`, and the legacy
//! `torch.distributed.launch`, which shares its parser since PyTorch 1.10) with the
//! `--nnodes` and `--nproc-per-node` it was given, or one plain Python process, or
//! something this reader does not judge. Options from torch v2.5.1
//! torch/distributed/run.py get_args_parser: `--nnodes` is `N` or `MIN:MAX`
//! (parse_min_max_nnodes), `--nproc-per-node` (also `--nproc_per_node`) is an integer
//! or `auto`, `cpu`, `gpu`, `xpu` (determine_local_world_size), default 1; each
//! option not given is read from `PET_<NAME>`, which the training operator sets, so
//! only what the command line says is known. Read conservatively: a script this
//! reader is not sure of is [`Start::Unknown`], and a rule then says nothing.

use crate::shell;

/// What a container's `command` + `args` start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// torchrun or the legacy launcher, with the options the command line gives.
    Launcher(Options),
    /// One Python process running a script or module that is not a launcher, with no
    /// sign that it starts processes of its own.
    SinglePython,
    /// Anything else: another launcher (mpirun, deepspeed, accelerate), a shell script
    /// with loops, background jobs or several programs, a program lint does not know.
    Unknown,
}

/// The launcher's options that say how many nodes and processes it expects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `--nnodes` as written, and what it means when it is a literal.
    pub nnodes: Option<(String, Option<Nnodes>)>,
    /// `--nproc-per-node` as written, and what it means when it is a literal.
    pub nproc_per_node: Option<(String, Option<NprocPerNode>)>,
}

/// `--nnodes`: a fixed count, or the elastic range `MIN:MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nnodes {
    Fixed(u64),
    Range(u64, u64),
}

impl Nnodes {
    /// Whether `nodes` pods satisfy it.
    pub fn admits(self, nodes: u64) -> bool {
        match self {
            Nnodes::Fixed(n) => n == nodes,
            Nnodes::Range(min, max) => (min..=max).contains(&nodes),
        }
    }
}

/// `--nproc-per-node`: a count, or a word the launcher turns into one from the node
/// (`auto` and `gpu`: the visible GPUs; `cpu`, `xpu`: other devices).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NprocPerNode {
    Count(u64),
    FromDevices,
}

/// Programs that start several processes their own way; lint reads none of their
/// options here.
const OTHER_LAUNCHERS: &[&str] = &[
    "mpirun",
    "mpiexec",
    "deepspeed",
    "accelerate",
    "horovodrun",
    "srun",
    "torchx",
    "composer",
    "ray",
];

/// Words that make a shell script more than a sequence of simple commands: a loop or
/// a condition may start the same program many times.
const SHELL_KEYWORDS: &[&str] = &[
    "for", "while", "until", "if", "case", "select", "do", "then", "function", "xargs", "parallel",
    "wait",
];

/// Commands a script may run around its one training process without starting
/// another process that trains.
const SETUP_COMMANDS: &[&str] = &[
    "cd",
    "echo",
    "export",
    "set",
    "unset",
    "source",
    ".",
    "ls",
    "cat",
    "mkdir",
    "cp",
    "mv",
    "rm",
    "ln",
    "sleep",
    "nvidia-smi",
    "ibstat",
    "ibv_devinfo",
    "env",
    "printenv",
    "true",
    "pip",
    "pip3",
    "ulimit",
    "hostname",
    "date",
    "df",
    "ip",
    "wget",
    "curl",
    "tar",
    "git",
    "chmod",
    "touch",
    "umask",
    "pwd",
    "test",
    "[",
    "trap",
];

/// What `argv` (a container's `command` then `args`) starts.
pub fn start(argv: &[&str]) -> Start {
    let Some(s) = shell::script_index(argv) else {
        return start_of_command(argv).unwrap_or(Start::Unknown);
    };
    let script = argv[s];
    if backgrounds(script) {
        return Start::Unknown;
    }
    let Some(commands) = shell::commands(script) else {
        return Start::Unknown;
    };
    let mut found = Vec::new();
    for command in &commands {
        let words: Vec<&str> = command.iter().map(String::as_str).collect();
        let words = strip_prefixes(&words);
        let Some(first) = words.first() else { continue };
        if SHELL_KEYWORDS.contains(first) {
            return Start::Unknown;
        }
        if SETUP_COMMANDS.contains(first) {
            continue;
        }
        match start_of_command(words) {
            Some(start) => found.push(start),
            None => return Start::Unknown,
        }
    }
    match found.as_slice() {
        [one] => one.clone(),
        _ => Start::Unknown,
    }
}

/// Whether `script` runs something in the background (`&` that is not `&&`, `>&` or
/// `&>`): several processes, which the words alone do not show.
fn backgrounds(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    chars.iter().enumerate().any(|(i, &c)| {
        c == '&'
            && chars.get(i + 1) != Some(&'&')
            && chars.get(i + 1) != Some(&'>')
            && (i == 0 || !matches!(chars[i - 1], '&' | '>' | '<'))
    })
}

/// The command without what only changes how it runs: `exec`, `nohup`, `env` and
/// `NAME=value` assignments before it.
fn strip_prefixes<'a, 'b>(mut words: &'b [&'a str]) -> &'b [&'a str] {
    loop {
        match words.first() {
            Some(&("exec" | "nohup")) => words = &words[1..],
            Some(&"env") => words = &words[1..],
            Some(w) if is_assignment(w) => words = &words[1..],
            _ => return words,
        }
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// What one simple command starts; `None` for a program this reader does not know.
fn start_of_command(words: &[&str]) -> Option<Start> {
    let words = strip_prefixes(words);
    let program = words.first()?.rsplit('/').next()?;
    if program == "torchrun" {
        return Some(Start::Launcher(options(&words[1..])));
    }
    if OTHER_LAUNCHERS.contains(&program) {
        return Some(Start::Unknown);
    }
    if !is_python(program) {
        return None;
    }
    // Python's own options before the script or `-m`: those that take a value.
    let mut i = 1;
    while let Some(w) = words.get(i) {
        match *w {
            "-m" => {
                let module = words.get(i + 1)?;
                return Some(match *module {
                    "torch.distributed.run" | "torch.distributed.launch" => {
                        Start::Launcher(options(&words[i + 2..]))
                    }
                    m if OTHER_LAUNCHERS
                        .iter()
                        .any(|l| m.split('.').next() == Some(*l)) =>
                    {
                        Start::Unknown
                    }
                    _ => single(&words[i + 2..]),
                });
            }
            // Inline code may do anything.
            "-c" => return Some(Start::Unknown),
            "-W" | "-X" => i += 2,
            w if w.starts_with('-') => i += 1,
            script => {
                let name = script.rsplit('/').next().unwrap_or(script);
                // A script of that name may itself be a launcher.
                if name.starts_with("launch") || shell::expands(script) {
                    return Some(Start::Unknown);
                }
                return Some(single(&words[i + 1..]));
            }
        }
    }
    None
}

/// One Python process, unless its arguments ask it to spawn its own (PyTorch's
/// ImageNet example: `--multiprocessing-distributed`, one process per GPU through
/// torch.multiprocessing.spawn).
fn single(args: &[&str]) -> Start {
    if args.iter().any(|a| {
        a.starts_with("--multiprocessing-distributed")
            || a.starts_with("--multiprocessing_distributed")
    }) {
        Start::Unknown
    } else {
        Start::SinglePython
    }
}

/// `python`, `python3`, `python3.11`.
fn is_python(program: &str) -> bool {
    program
        .strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Options of the launcher that never take a value (store_true in get_args_parser).
const LAUNCHER_FLAGS: &[&str] = &[
    "--standalone",
    "--use-env",
    "--use_env",
    "-m",
    "--module",
    "--no-python",
    "--no_python",
    "--run-path",
    "--run_path",
];

/// The launcher's `--nnodes` and `--nproc-per-node`, read up to the training script
/// (the first word that is neither an option nor an option's value).
fn options(args: &[&str]) -> Options {
    let mut out = Options::default();
    let mut i = 0;
    while let Some(&w) = args.get(i) {
        if !w.starts_with('-') {
            break;
        }
        let (flag, value) = match w.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None if LAUNCHER_FLAGS.contains(&w) => (w, None),
            None => {
                i += 1;
                (w, args.get(i).copied())
            }
        };
        i += 1;
        let Some(value) = value else { continue };
        match flag {
            "--nnodes" => out.nnodes = Some((value.to_owned(), nnodes(value))),
            "--nproc-per-node" | "--nproc_per_node" => {
                out.nproc_per_node = Some((value.to_owned(), nproc_per_node(value)));
            }
            _ => {}
        }
    }
    out
}

fn nnodes(value: &str) -> Option<Nnodes> {
    match value.split_once(':') {
        Some((min, max)) => Some(Nnodes::Range(min.parse().ok()?, max.parse().ok()?)),
        None => value.parse().ok().map(Nnodes::Fixed),
    }
}

fn nproc_per_node(value: &str) -> Option<NprocPerNode> {
    match value {
        "auto" | "gpu" | "cpu" | "xpu" => Some(NprocPerNode::FromDevices),
        v => v.parse().ok().map(NprocPerNode::Count),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(line: &str) -> Start {
        let argv: Vec<&str> = line.split(' ').collect();
        start(&argv)
    }

    fn launch(
        nnodes: Option<(&str, Option<Nnodes>)>,
        nproc: Option<(&str, Option<NprocPerNode>)>,
    ) -> Start {
        Start::Launcher(Options {
            nnodes: nnodes.map(|(s, n)| (s.to_owned(), n)),
            nproc_per_node: nproc.map(|(s, n)| (s.to_owned(), n)),
        })
    }

    #[test]
    fn launchers_are_read_with_their_counts() {
        assert_eq!(
            of("torchrun --nnodes=2 --nproc-per-node 8 train.py --nnodes 9"),
            launch(
                Some(("2", Some(Nnodes::Fixed(2)))),
                Some(("8", Some(NprocPerNode::Count(8))))
            )
        );
        assert_eq!(
            of(
                "python3 -u -m torch.distributed.launch --use_env --nproc_per_node=4 --nnodes 1:4 t.py"
            ),
            launch(
                Some(("1:4", Some(Nnodes::Range(1, 4)))),
                Some(("4", Some(NprocPerNode::Count(4))))
            )
        );
        assert_eq!(
            of("/usr/bin/torchrun --nnodes=$(WORLD_SIZE) --nproc_per_node=auto t.py"),
            launch(
                Some(("$(WORLD_SIZE)", None)),
                Some(("auto", Some(NprocPerNode::FromDevices)))
            )
        );
        assert_eq!(of("torchrun t.py"), launch(None, None));
        assert!(Nnodes::Range(1, 4).admits(4) && !Nnodes::Range(1, 4).admits(5));
        assert!(Nnodes::Fixed(2).admits(2) && !Nnodes::Fixed(2).admits(3));
    }

    #[test]
    fn one_python_process_is_told_from_everything_else() {
        assert_eq!(of("python train.py --epochs 3"), Start::SinglePython);
        assert_eq!(of("python3.11 -u -m mypkg.train"), Start::SinglePython);
        for other in [
            "python -c import_torch",
            "python main.py --multiprocessing-distributed",
            "python launch.py",
            "deepspeed train.py",
            "accelerate launch train.py",
            "python -m deepspeed.launcher.runner t.py",
            "mpirun -np 8 python t.py",
            "/usr/sbin/sshd -De",
            "python $SCRIPT",
        ] {
            assert_eq!(of(other), Start::Unknown, "{other}");
        }
    }

    #[test]
    fn shell_scripts_are_judged_only_when_plain() {
        let sh = |script: &str| start(&["/bin/bash", "-c", script]);
        assert_eq!(
            sh("cd /work && pip install -r req.txt\nexec python train.py"),
            Start::SinglePython
        );
        assert_eq!(
            sh("nvidia-smi; NCCL_DEBUG=INFO torchrun --nproc-per-node=8 t.py"),
            launch(None, Some(("8", Some(NprocPerNode::Count(8)))))
        );
        for unclear in [
            "for i in 0 1 2 3; do CUDA_VISIBLE_DEVICES=$i python t.py & done; wait",
            "python t.py & python t.py",
            "python prep.py && python train.py",
            "./run.sh",
            "python t.py <<EOF\nx\nEOF",
        ] {
            assert_eq!(sh(unclear), Start::Unknown, "{unclear}");
        }
        assert_eq!(sh("python t.py > log 2>&1"), Start::SinglePython);
    }
}
