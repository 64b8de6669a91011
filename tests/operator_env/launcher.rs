//! What the process a pod starts makes of its argv and environment: torchrun (and
//! `python -m torch.distributed.run` / `.launch`, the same parser) or a plain script.
//!
//! Transcribed from pytorch at 010929fd: `torch/distributed/run.py` (get_args_parser,
//! parse_min_max_nnodes, determine_local_world_size, get_rdzv_endpoint,
//! config_from_args, run) and `torch/distributed/argparse_util.py` (class `env`,
//! :43-57: the default of every `action=env` option is the environment variable
//! `PET_<DEST>` when set; a flag on the command line wins over both). The `launch`
//! module's parse_args is run.py's get_args_parser plus `--use-env`; its `launch(args)`
//! calls run(args). (Before torch 1.9, launch.py had its own parser with the same
//! defaults and no PET_ fallback; with every flag given, both agree.)

use std::collections::BTreeMap;

/// How a pod's process joins the job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// An elastic agent (torchrun) that starts `nproc` workers.
    Agent {
        nnodes: u32,
        /// None: the rendezvous assigns it (c10d).
        node_rank: Option<u32>,
        nproc: u32,
        backend: Backend,
        /// `host:port` of the rendezvous.
        endpoint: String,
    },
    /// One process that calls init_process_group itself (`env://`, torch's
    /// `_env_rendezvous_handler` in torch/distributed/rendezvous.py: MASTER_ADDR,
    /// MASTER_PORT, RANK and WORLD_SIZE from the environment).
    Process {
        world_size: u32,
        rank: u32,
        endpoint: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// rdzv_backend "static" (the default): the agent with node rank 0 hosts the store
    /// at master_addr:master_port (config_from_args: `rdzv_configs["rank"] =
    /// args.node_rank`; get_rdzv_endpoint: `f"{args.master_addr}:{args.master_port}"`).
    Static,
    /// c10d, which `--standalone` selects with endpoint localhost:0 (run()).
    C10d,
}

/// The process a pod runs for `argv`, with `env` and `gpus` visible GPUs.
pub fn launch(
    argv: &[String],
    env: &BTreeMap<String, String>,
    gpus: u32,
) -> Result<Launch, String> {
    let Some(program) = argv.first() else {
        return Err("no command: the image's entrypoint runs, not transcribed".into());
    };
    let base = program.rsplit('/').next().unwrap_or(program);
    // rdmagen's in-pod preflight checks the pod and execs the rest of argv with the
    // same environment (tests/cli/preflight.rs runs it): the process is that one.
    let preflight = format!(
        "{}/{}",
        rdmagen::plan::preflight::DIR,
        rdmagen::plan::preflight::SCRIPT_FILE
    );
    if base == "sh" && argv.get(1) == Some(&preflight) {
        return launch(&argv[2..], env, gpus);
    }
    if base == "torchrun" {
        return torchrun(&argv[1..], env, gpus, false);
    }
    if base == "python" || base.starts_with("python3") {
        let mut rest = &argv[1..];
        // Interpreter options before the script or -m.
        while let Some(opt) = rest.first() {
            match opt.as_str() {
                "-u" | "-B" | "-O" | "-OO" | "-E" | "-s" | "-S" => rest = &rest[1..],
                _ => break,
            }
        }
        return match rest {
            [m, module, args @ ..] if m == "-m" => match module.as_str() {
                "torch.distributed.run" => torchrun(args, env, gpus, false),
                "torch.distributed.launch" => torchrun(args, env, gpus, true),
                _ => env_process(env),
            },
            [opt, ..] if opt.starts_with('-') => {
                Err(format!("python option {opt}: not transcribed"))
            }
            [_script, ..] => env_process(env),
            [] => Err("python without a script".into()),
        };
    }
    Err(format!(
        "command `{program}` is not transcribed (a shell, another launcher); simulate it by hand"
    ))
}

/// A script started without a launcher: one process, its rank and world from the env.
fn env_process(env: &BTreeMap<String, String>) -> Result<Launch, String> {
    let get = |name: &str| {
        env.get(name).cloned().ok_or_else(|| {
            format!("init_process_group(env://) fails: environment variable {name} expected, but not set")
        })
    };
    let number = |name: &str| -> Result<u32, String> {
        let v = get(name)?;
        v.parse()
            .map_err(|_| format!("init_process_group(env://) fails: {name}={v:?} is not a number"))
    };
    Ok(Launch::Process {
        world_size: number("WORLD_SIZE")?,
        rank: number("RANK")?,
        endpoint: format!("{}:{}", get("MASTER_ADDR")?, number("MASTER_PORT")?),
    })
}

/// An option of get_args_parser: its option strings, and whether it takes a value
/// (`action=env` or a plain valued option) or is a flag (`action=check_env` or
/// store_true). `env` says whether PET_<DEST> supplies its default.
struct Opt {
    names: &'static [&'static str],
    dest: &'static str,
    valued: bool,
    env: bool,
}

const fn valued(names: &'static [&'static str], dest: &'static str) -> Opt {
    Opt {
        names,
        dest,
        valued: true,
        env: true,
    }
}

const fn flag(names: &'static [&'static str], dest: &'static str) -> Opt {
    Opt {
        names,
        dest,
        valued: false,
        env: true,
    }
}

/// run.py get_args_parser, every option, in its order.
const OPTIONS: &[Opt] = &[
    valued(&["--nnodes"], "nnodes"),
    valued(&["--nproc-per-node", "--nproc_per_node"], "nproc_per_node"),
    valued(&["--rdzv-backend", "--rdzv_backend"], "rdzv_backend"),
    valued(&["--rdzv-endpoint", "--rdzv_endpoint"], "rdzv_endpoint"),
    valued(&["--rdzv-id", "--rdzv_id"], "rdzv_id"),
    valued(&["--rdzv-conf", "--rdzv_conf"], "rdzv_conf"),
    flag(&["--standalone"], "standalone"),
    valued(&["--max-restarts", "--max_restarts"], "max_restarts"),
    valued(
        &["--monitor-interval", "--monitor_interval"],
        "monitor_interval",
    ),
    valued(&["--start-method", "--start_method"], "start_method"),
    valued(
        &["--event-log-handler", "--event_log_handler"],
        "event_log_handler",
    ),
    valued(&["--role"], "role"),
    flag(&["-m", "--module"], "module"),
    flag(&["--no-python", "--no_python"], "no_python"),
    flag(&["--run-path", "--run_path"], "run_path"),
    valued(&["--log-dir", "--log_dir"], "log_dir"),
    valued(&["-r", "--redirects"], "redirects"),
    valued(&["-t", "--tee"], "tee"),
    valued(
        &["--local-ranks-filter", "--local_ranks_filter"],
        "local_ranks_filter",
    ),
    valued(&["--node-rank", "--node_rank"], "node_rank"),
    valued(&["--master-addr", "--master_addr"], "master_addr"),
    valued(&["--master-port", "--master_port"], "master_port"),
    valued(&["--local-addr", "--local_addr"], "local_addr"),
    Opt {
        names: &["--logs-specs", "--logs_specs"],
        dest: "logs_specs",
        valued: true,
        env: false,
    },
    Opt {
        names: &["--numa-binding", "--numa_binding"],
        dest: "numa_binding",
        valued: true,
        env: false,
    },
    valued(
        &["--signals-to-handle", "--signals_to_handle"],
        "signals_to_handle",
    ),
];

/// launch.py parse_args adds `--use-env`/`--use_env` (store_true, no PET_ fallback).
const USE_ENV: Opt = Opt {
    names: &["--use-env", "--use_env"],
    dest: "use_env",
    valued: false,
    env: false,
};

/// run.py defaults of the options the world depends on.
fn default(dest: &str) -> Option<&'static str> {
    Some(match dest {
        "nnodes" => "1:1",
        "nproc_per_node" => "1",
        "rdzv_backend" => "static",
        "rdzv_endpoint" => "",
        "node_rank" => "0",
        "master_addr" => "127.0.0.1",
        "master_port" => "29500",
        _ => return None,
    })
}

fn torchrun(
    args: &[String],
    env: &BTreeMap<String, String>,
    gpus: u32,
    legacy_launch: bool,
) -> Result<Launch, String> {
    let options: Vec<&Opt> = OPTIONS
        .iter()
        .chain(legacy_launch.then_some(&USE_ENV))
        .collect();
    // argparse: options until the first positional (training_script); the rest is
    // training_script_args (REMAINDER).
    let mut given: BTreeMap<&str, String> = BTreeMap::new();
    let mut flags: BTreeMap<&str, bool> = BTreeMap::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        if !arg.starts_with('-') {
            break;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let opt = options
            .iter()
            .find(|o| o.names.contains(&name))
            .ok_or_else(|| format!("torchrun option {arg}: not transcribed (or unknown)"))?;
        if opt.valued {
            let value = match inline {
                Some(v) => v,
                None => {
                    i += 1;
                    args.get(i)
                        .cloned()
                        .ok_or_else(|| format!("torchrun: {name} expects a value"))?
                }
            };
            given.insert(opt.dest, value);
        } else {
            flags.insert(opt.dest, true);
        }
        i += 1;
    }
    if i >= args.len() {
        return Err("torchrun: the following arguments are required: training_script".into());
    }
    // argparse_util.env: an absent option takes PET_<DEST> from the environment, then the
    // parser's default. argparse converts a string default with the option's `type`.
    let value = |dest: &str| -> Option<String> {
        let opt = options.iter().find(|o| o.dest == dest)?;
        given
            .get(dest)
            .cloned()
            .or_else(|| {
                opt.env
                    .then(|| env.get(&format!("PET_{}", dest.to_uppercase())).cloned())
                    .flatten()
            })
            .or_else(|| default(dest).map(str::to_owned))
    };
    let int = |dest: &str| -> Result<u32, String> {
        let v = value(dest).unwrap_or_default();
        v.parse().map_err(|_| {
            format!(
                "torchrun: argument --{}: invalid int value: {v:?}",
                dest.replace('_', "-")
            )
        })
    };
    // check_env (argparse_util.py): PET_STANDALONE etc. set the flag's default with int().
    let standalone = flags.get("standalone").copied().unwrap_or(false)
        || match env.get("PET_STANDALONE") {
            None => false,
            Some(v) => {
                v.parse::<i64>()
                    .map_err(|_| format!("torchrun: int({v:?}) fails for PET_STANDALONE"))?
                    != 0
            }
        };

    // parse_min_max_nnodes: "N" or "MIN:MAX".
    let nnodes_text = value("nnodes").unwrap_or_default();
    let parse = |s: &str| {
        s.parse::<u32>()
            .map_err(|_| format!("torchrun: nnodes={nnodes_text:?}: int() fails"))
    };
    let (min, max) = match nnodes_text.split(':').collect::<Vec<_>>().as_slice() {
        [n] => (parse(n)?, parse(n)?),
        [a, b] => (parse(a)?, parse(b)?),
        _ => return Err(format!("nnodes={nnodes_text} is not in \"MIN:MAX\" format")),
    };
    if !(0 < min && min <= max) {
        return Err(format!(
            "torchrun: assert 0 < min_nodes <= max_nodes fails for {nnodes_text:?}"
        ));
    }
    if min != max {
        return Err(format!(
            "nnodes={nnodes_text}: an elastic range; the world is decided at run time, not transcribed"
        ));
    }
    // determine_local_world_size: an integer, or "gpu"/"auto": the visible GPUs (the
    // pod's, through the device plugin). "cpu" and the rest depend on the node.
    let nproc_text = value("nproc_per_node").unwrap_or_default();
    let nproc = match nproc_text.parse::<u32>() {
        Ok(n) => n,
        Err(_) if (nproc_text == "gpu" || nproc_text == "auto") && gpus > 0 => gpus,
        Err(_) => {
            return Err(format!(
                "nproc_per_node={nproc_text:?} on a pod with {gpus} GPU(s): the count depends on the node, not transcribed"
            ));
        }
    };
    let (backend, endpoint, node_rank) = if standalone {
        // run(): --standalone means c10d at localhost:0 (a free port of this pod).
        (Backend::C10d, "localhost:0".to_owned(), None)
    } else {
        match value("rdzv_backend").unwrap_or_default().as_str() {
            "static" => {
                // get_rdzv_endpoint: master_addr:master_port unless an endpoint is given.
                let endpoint = match value("rdzv_endpoint").unwrap_or_default() {
                    e if e.is_empty() => format!(
                        "{}:{}",
                        value("master_addr").unwrap_or_default(),
                        int("master_port")?
                    ),
                    e => e,
                };
                (Backend::Static, endpoint, Some(int("node_rank")?))
            }
            "c10d" => {
                let e = value("rdzv_endpoint").unwrap_or_default();
                // A c10d endpoint without a port uses 29400 (run.py docs).
                let e = if e.contains(':') {
                    e
                } else {
                    format!("{e}:29400")
                };
                (Backend::C10d, e, None)
            }
            other => return Err(format!("rdzv_backend {other}: not transcribed")),
        }
    };
    Ok(Launch::Agent {
        nnodes: min,
        node_rank,
        nproc,
        backend,
        endpoint,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> BTreeMap<String, String> {
        vars.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn argv(words: &str) -> Vec<String> {
        words.split_whitespace().map(str::to_owned).collect()
    }

    /// run.py's defaults with no flag and no PET_*: one node, one process, 127.0.0.1:29500.
    #[test]
    fn bare_torchrun_takes_the_parser_defaults() {
        assert_eq!(
            launch(&argv("torchrun train.py --epochs 3"), &env(&[]), 8),
            Ok(Launch::Agent {
                nnodes: 1,
                node_rank: Some(0),
                nproc: 1,
                backend: Backend::Static,
                endpoint: "127.0.0.1:29500".into(),
            })
        );
    }

    /// argparse_util.env: PET_<DEST> supplies what the command line leaves out; a flag
    /// on the command line wins; "auto" is the pod's GPU count.
    #[test]
    fn pet_variables_fill_in_and_flags_win() {
        let pet = env(&[
            ("PET_NNODES", "4"),
            ("PET_NODE_RANK", "2"),
            ("PET_NPROC_PER_NODE", "auto"),
            ("PET_MASTER_ADDR", "j-master-0"),
            ("PET_MASTER_PORT", "23456"),
        ]);
        assert_eq!(
            launch(&argv("torchrun train.py"), &pet, 8),
            Ok(Launch::Agent {
                nnodes: 4,
                node_rank: Some(2),
                nproc: 8,
                backend: Backend::Static,
                endpoint: "j-master-0:23456".into(),
            })
        );
        assert_eq!(
            launch(
                &argv(
                    "python -m torch.distributed.launch --nnodes=2 --nproc_per_node 4 --use_env main.py --nnodes=9"
                ),
                &pet,
                8
            ),
            Ok(Launch::Agent {
                nnodes: 2,
                node_rank: Some(2),
                nproc: 4,
                backend: Backend::Static,
                endpoint: "j-master-0:23456".into(),
            }),
            "the script's own --nnodes=9 is its argument, not torchrun's"
        );
    }

    /// An undefined `$(RANK)` reaches torchrun literally and argparse's int() rejects it.
    #[test]
    fn an_unexpanded_reference_fails_the_parser() {
        assert_eq!(
            launch(&argv("torchrun --node_rank=$(RANK) t.py"), &env(&[]), 1),
            Err("torchrun: argument --node-rank: invalid int value: \"$(RANK)\"".into())
        );
    }
}
