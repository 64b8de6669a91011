//! How training processes start: the container command and spec.nprocPerNode, for
//! the operator generation the pool targets.
//!
//! - 1.7 and later set WORLD_SIZE = pods × nprocPerNode (an integer) and PET_NNODES,
//!   PET_NODE_RANK, PET_NPROC_PER_NODE, PET_MASTER_*; torchrun needs no flags at all.
//! - Before 1.7 (and CubeStudio's v1-8a066f9) the CRD has no nprocPerNode (pruned) and
//!   there are no PET_* variables: WORLD_SIZE counts pods and RANK is the pod index. A
//!   bare `torchrun script` then trains each pod alone (nnodes 1, 1 process, master
//!   127.0.0.1). The launcher takes its flags from $(WORLD_SIZE), $(RANK),
//!   $(MASTER_ADDR) and $(MASTER_PORT), which Kubernetes expands from the container's
//!   env, with nprocPerNode unset.
//! - When the operator version is unknown, the second form: with nprocPerNode unset,
//!   1.7+ also sets WORLD_SIZE to the pod count, so it is right on both generations.
//!
//! rdmagen never emits `--nnodes $(WORLD_SIZE)` with an integer nprocPerNode (the
//! rendezvous would wait for pods × G nodes).

use crate::diagnostics::Rule;
use crate::kubeflow::operator::OperatorGeneration;
use crate::model::job::{Launcher, LocalRank};
use crate::plan::ctx::Ctx;
use crate::yaml::tree::Seg;

pub struct Launch {
    pub command: Vec<String>,
    pub nproc_per_node: Option<String>,
}

pub fn decide(ctx: &mut Ctx<'_>) -> Launch {
    let spec = &ctx.job.value.spec;
    let launcher = spec.launcher.unwrap_or(if spec.command.is_some() {
        Launcher::None
    } else {
        Launcher::Torchrun
    });
    let conflict = match (&spec.command, &spec.script) {
        (Some(_), Some(_)) => Some("set either `script` (with `args`) or `command`, not both"),
        (None, None) => Some("set `script` (run by the launcher) or `command` (run as given)"),
        (Some(_), None) if !matches!(launcher, Launcher::None | Launcher::Mpirun) => Some(
            "`command` is run as given and needs `launcher: none` (or `mpirun`, which runs it once per GPU); use `script` with this launcher",
        ),
        (Some(_), None) if !spec.args.is_empty() => {
            Some("`args` go with `script`; put them in `command` instead")
        }
        _ => None,
    };
    if let Some(message) = conflict {
        let field = if spec.command.is_some() {
            "command"
        } else {
            "script"
        };
        ctx.report(
            Rule::CommandConflict,
            message,
            &[Seg::Key("spec"), Seg::Key(field)],
        );
    }
    if launcher == Launcher::Mpirun {
        // The workers run no command of their own: the MPIJob's launcher starts every
        // rank (plan/mpi.rs).
        return Launch {
            command: Vec::new(),
            nproc_per_node: None,
        };
    }
    let gpus = spec.gpus_per_node.to_string();
    let local_rank = local_rank(ctx, launcher);
    // With a local-rank argument the script runs under a shell the launcher starts
    // without python (`--no_python`), which adds the one form it declares from
    // LOCAL_RANK; the script's name and arguments reach it as $0 and "$@", so
    // nothing in them is read by the shell.
    let (no_python, script, args): (Vec<String>, String, Vec<String>) =
        match local_rank.and_then(LocalRank::flag) {
            Some(flag) => (
                vec!["--no_python".to_owned()],
                "sh".to_owned(),
                [
                    "-c".to_owned(),
                    format!("exec python \"$0\" {flag}=\"$LOCAL_RANK\" \"$@\""),
                    spec.script.clone().unwrap_or_default(),
                ]
                .into_iter()
                .chain(spec.args.iter().cloned())
                .collect(),
            ),
            None => (
                Vec::new(),
                spec.script.clone().unwrap_or_default(),
                spec.args.clone(),
            ),
        };
    // The legacy launcher passes its own local-rank argument unless `--use_env`.
    let use_env: Vec<String> = if local_rank.is_some() {
        vec!["--use_env".to_owned()]
    } else {
        Vec::new()
    };
    let args = args.into_iter();
    let wrapped = local_rank.and_then(LocalRank::flag).is_some();
    let exec_note = if wrapped {
        "; exec form: the launcher is PID 1, and the shell it starts for each process inherits its environment".to_owned()
    } else if ctx.profile.injects_into_pid1 {
        format!(
            "; exec form, so the launcher inherits what {} injects into PID 1",
            ctx.profile.title
        )
    } else {
        "; exec form, no shell in between".to_owned()
    };
    let generation = ctx.target.generation();
    // The flags both generations can feed, from the variables both set.
    let pod_world_flags = [
        format!("--nproc_per_node={gpus}"),
        "--nnodes=$(WORLD_SIZE)".to_owned(),
        "--node_rank=$(RANK)".to_owned(),
        "--master_addr=$(MASTER_ADDR)".to_owned(),
        "--master_port=$(MASTER_PORT)".to_owned(),
    ];
    let pod_world_reason = match generation {
        Some(OperatorGeneration::PodWorld) => {
            "the target operator is before 1.7: no nprocPerNode and no PET_* variables, so the flags come from WORLD_SIZE (pods), RANK (pod index) and MASTER_*"
        }
        _ => {
            "the target operator's version is unknown: with nprocPerNode unset, every generation sets WORLD_SIZE to the pod count and RANK to the pod index, so these flags are right on all of them"
        }
    };

    let (command, nproc, reason): (Vec<String>, Option<String>, String) = match launcher {
        Launcher::Torchrun if generation == Some(OperatorGeneration::Pet) => (
            std::iter::once("torchrun".to_owned())
                .chain(no_python.clone())
                .chain([script])
                .chain(args)
                .collect(),
            Some(gpus.clone()),
            match ctx.target.trainer() {
                Some(_) => format!(
                    "Kubeflow Trainer's torch plugin sets PET_NNODES, PET_NPROC_PER_NODE, PET_NODE_RANK and PET_MASTER_ADDR/PORT (<job>-node-0-0.<job>:29500) in the `node` container (T@v2.3.0 pkg/runtime/framework/plugins/torch/torch.go:145-176), and torchrun reads every option it is not given from PET_<OPTION>; numProcPerNode = {gpus}{exec_note}"
                ),
                None => format!(
                    "the target operator is 1.7 or later: torchrun reads nnodes, node rank, nproc and master address from its PET_* variables; nprocPerNode = {gpus}{exec_note}"
                ),
            },
        ),
        Launcher::Torchrun => (
            std::iter::once("torchrun".to_owned())
                .chain(pod_world_flags)
                .chain(no_python.clone())
                .chain([script])
                .chain(args)
                .collect(),
            None,
            format!(
                "{pod_world_reason}; Kubernetes expands $(VAR) from the container's env; nprocPerNode unset{exec_note}"
            ),
        ),
        Launcher::Legacy if ctx.target.trainer().is_some() => {
            ctx.report(
                Rule::LegacyLauncher,
                "torch.distributed.launch is deprecated; on Kubeflow Trainer its flags come from the torch plugin's PET_* variables",
                &[Seg::Key("spec"), Seg::Key("launcher")],
            );
            // Explicit flags: launch.py before torch 1.9 does not read PET_* itself.
            let flags = [
                format!("--nproc_per_node={gpus}"),
                "--nnodes=$(PET_NNODES)".to_owned(),
                "--node_rank=$(PET_NODE_RANK)".to_owned(),
                "--master_addr=$(PET_MASTER_ADDR)".to_owned(),
                "--master_port=$(PET_MASTER_PORT)".to_owned(),
            ];
            (
                ["python", "-m", "torch.distributed.launch"]
                    .map(str::to_owned)
                    .into_iter()
                    .chain(use_env.clone())
                    .chain(flags)
                    .chain(no_python.clone())
                    .chain([script])
                    .chain(args)
                    .collect(),
                Some(gpus.clone()),
                format!(
                    "the seed's torch.distributed.launch form; Trainer sets only PET_* (no WORLD_SIZE or RANK), so the flags name them, and Kubernetes expands $(VAR) from the container's env, where the torch plugin puts them; numProcPerNode = {gpus}{exec_note}"
                ),
            )
        }
        Launcher::Legacy => {
            ctx.report(
                Rule::LegacyLauncher,
                "torch.distributed.launch is deprecated; rdmagen leaves nprocPerNode unset so that --nnodes $(WORLD_SIZE) counts pods",
                &[Seg::Key("spec"), Seg::Key("launcher")],
            );
            let fixed = ["python", "-m", "torch.distributed.launch"]
                .map(str::to_owned)
                .into_iter()
                .chain(use_env.clone())
                .chain(pod_world_flags)
                .chain(no_python.clone())
                .chain([script]);
            (
                fixed.chain(args).collect(),
                None,
                format!(
                    "the seed's torch.distributed.launch form; nprocPerNode unset so WORLD_SIZE counts pods on every operator generation; Kubernetes expands $(VAR) from the operator's variables{exec_note}"
                ),
            )
        }
        Launcher::Mpirun => unreachable!("returned above"),
        Launcher::None => match &spec.command {
            Some(command) => {
                // Seed 001: CCE injects its NCCL variables into PID 1, "由 PID 1 创建的子进程
                // 会继承这些变量，但通过 sh 启动的进程可能无法继承" (children of PID 1
                // inherit them, processes started through sh may not): what lint says of
                // the manifest (rules/manifest.rs, RDG035), said at render and validate.
                let first = command.first().map(|w| w.rsplit('/').next().unwrap_or(w));
                if ctx.profile.injects_into_pid1
                    && matches!(first, Some("sh" | "bash" | "dash" | "zsh"))
                    && command.iter().any(|w| w == "-c")
                {
                    ctx.report(
                        Rule::ShellWrapper,
                        format!(
                            "processes started through `sh -c` may not inherit the NCCL variables {} injects into PID 1",
                            ctx.profile.title
                        ),
                        &[Seg::Key("spec"), Seg::Key("command")],
                    );
                }
                (
                    command.clone(),
                    None,
                    "launcher: none runs `command` as given, one process per pod".to_owned(),
                )
            }
            None => (
                ["python".to_owned(), spec.script.clone().unwrap_or_default()]
                    .into_iter()
                    .chain(args)
                    .collect(),
                None,
                "launcher: none runs the script with python, one process per pod".to_owned(),
            ),
        },
    };
    ctx.decisions.record("command", command.join(" "), reason);
    Launch {
        command,
        nproc_per_node: nproc,
    }
}

/// What the launcher tells the script of its local rank, recorded as a decision, and
/// the form the job says its script reads (`spec.localRank`), if it says one.
///
/// torchrun passes no argument, only LOCAL_RANK (its parser has no use_env, so
/// torch/distributed/run.py get_use_env is true); torch.distributed.launch appends
/// `--local_rank=N` before PyTorch 2.0 (v1.13.1 run.py config_from_args) and
/// `--local-rank=N` from 2.0 (v2.0.0, the same function), unless `--use_env`. Seed 001
/// runs Swin-Transformer's main.py, which declares `--local_rank` required, under the
/// legacy launcher: under torchrun, or the legacy launcher of PyTorch 2.0, it exits at
/// argument parsing on every rank.
fn local_rank(ctx: &mut Ctx<'_>, launcher: Launcher) -> Option<LocalRank> {
    let stated = ctx.job.value.spec.local_rank;
    let passes = match launcher {
        Launcher::Torchrun => {
            "torchrun passes the script no local-rank argument, only the LOCAL_RANK variable"
        }
        Launcher::Legacy => {
            "python -m torch.distributed.launch passes the script `--local_rank=N` before PyTorch 2.0 and `--local-rank=N` from 2.0 (torch/distributed/run.py config_from_args), and LOCAL_RANK"
        }
        Launcher::None | Launcher::Mpirun => {
            if stated.is_some() {
                ctx.report(
                    Rule::CommandConflict,
                    "`localRank` says how a launcher's script reads its rank; with this launcher rdmagen starts no script launcher to pass it",
                    &[Seg::Key("spec"), Seg::Key("localRank")],
                );
            }
            return None;
        }
    };
    let (value, reason) = match stated.and_then(LocalRank::flag) {
        Some(flag) => (
            flag.to_owned(),
            format!(
                "the job says its script declares {flag}; {passes}, so rdmagen starts the script through `sh -c` with --no_python{}, which passes {flag}=$LOCAL_RANK and nothing else, on every PyTorch",
                if launcher == Launcher::Legacy {
                    " and --use_env"
                } else {
                    ""
                }
            ),
        ),
        None if stated == Some(LocalRank::Env) => (
            "LOCAL_RANK".to_owned(),
            format!(
                "the job says its script reads only LOCAL_RANK; {passes}{}",
                if launcher == Launcher::Legacy {
                    "; --use_env stops the argument"
                } else {
                    ""
                }
            ),
        ),
        None => {
            if launcher == Launcher::Legacy {
                ctx.report(
                    Rule::LaunchLocalRank,
                    "python -m torch.distributed.launch passes the script `--local_rank=N` before PyTorch 2.0 and `--local-rank=N` from 2.0; a script that declares only one exits at argument parsing on the other: say which it reads (`localRank`)",
                    &[Seg::Key("spec"), Seg::Key("launcher")],
                );
            }
            (
                "(what the launcher passes)".to_owned(),
                format!("{passes}; the job does not say which form its script reads (`localRank`)"),
            )
        }
    };
    ctx.decisions.record("local rank", value, reason);
    stated
}
