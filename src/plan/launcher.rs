//! How training processes start: the container command and spec.nprocPerNode.
//!
//! The operator (>= 1.7) sets WORLD_SIZE = pods × nprocPerNode when nprocPerNode is an
//! integer. torchrun needs no distributed flags at all: it reads PET_NNODES,
//! PET_NODE_RANK, PET_NPROC_PER_NODE and PET_MASTER_* from the operator. The legacy
//! `torch.distributed.launch` form passes `--nnodes $WORLD_SIZE`, which is only right
//! while WORLD_SIZE counts pods, i.e. nprocPerNode unset. rdmagen never emits the
//! combination that hangs.

use crate::check::Rule;
use crate::plan::resolve::Ctx;
use crate::spec::job::Launcher;
use crate::spec::tree::Seg;

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
        (Some(_), None) if launcher != Launcher::None => Some(
            "`command` is run as given and needs `launcher: none`; use `script` with this launcher",
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
    let gpus = spec.gpus_per_node.to_string();
    let script = spec.script.clone().unwrap_or_default();
    let args = spec.args.iter().cloned();
    let exec_note = if ctx.profile.name == "cce" {
        "; exec form, so the launcher inherits what CCE injects into PID 1"
    } else {
        "; exec form, no shell in between"
    };

    let (command, nproc, reason): (Vec<String>, Option<String>, String) = match launcher {
        Launcher::Torchrun => (
            ["torchrun".to_owned(), script]
                .into_iter()
                .chain(args)
                .collect(),
            Some(gpus.clone()),
            format!(
                "torchrun reads nnodes, node rank, nproc and master address from the operator's PET_* variables; nprocPerNode = {gpus}{exec_note}"
            ),
        ),
        Launcher::Legacy => {
            ctx.report(
                Rule::LegacyLauncher,
                "torch.distributed.launch is deprecated; rdmagen leaves nprocPerNode unset so that --nnodes $(WORLD_SIZE) counts pods",
                &[Seg::Key("spec"), Seg::Key("launcher")],
            );
            let fixed = [
                "python".to_owned(),
                "-m".to_owned(),
                "torch.distributed.launch".to_owned(),
                format!("--nproc_per_node={gpus}"),
                "--nnodes=$(WORLD_SIZE)".to_owned(),
                "--node_rank=$(RANK)".to_owned(),
                "--master_addr=$(MASTER_ADDR)".to_owned(),
                "--master_port=$(MASTER_PORT)".to_owned(),
                script,
            ];
            (
                fixed.into_iter().chain(args).collect(),
                None,
                format!(
                    "the seed's torch.distributed.launch form; nprocPerNode unset so WORLD_SIZE counts pods; Kubernetes expands $(VAR) from the operator's variables{exec_note}"
                ),
            )
        }
        Launcher::None => match &spec.command {
            Some(command) => (
                command.clone(),
                None,
                "launcher: none runs `command` as given, one process per pod".to_owned(),
            ),
            None => (
                ["python".to_owned(), script]
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
