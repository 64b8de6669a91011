//! `rdmagen detect`: a Pool from what a node says.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use super::Streams;
use super::output_args::OutputArgs;
use super::present;
use super::{exit, stderr, stdout};
use crate::detect::decide::{self, Options, RailNames};
use crate::detect::{Observations, affinity, capture, commands};
use crate::diagnostics::escape::printable;
use crate::diagnostics::source::Sources;
use crate::diagnostics::{Findings, Rule, Severity};
use crate::error::Error;
use crate::model::load::display_name;
use crate::model::load::read_documents;
use crate::model::pool::{Attachment, Platform};
use crate::output::Format;
use crate::output::human::summary;
use crate::render::{self, Renderer};

#[derive(Debug, Args)]
pub struct DetectArgs {
    /// A file holding several command outputs one after another (see --print-commands).
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Captures (any subset; - is stdin)"
    )]
    pub capture: Vec<PathBuf>,
    /// Output of show_gids.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Captures (any subset; - is stdin)"
    )]
    pub show_gids: Vec<PathBuf>,
    /// Output of ibstat.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Captures (any subset; - is stdin)"
    )]
    pub ibstat: Vec<PathBuf>,
    /// Output of ibv_devinfo (-v adds GIDs).
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Captures (any subset; - is stdin)"
    )]
    pub ibv_devinfo: Vec<PathBuf>,
    /// Output of rdma link show.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Captures (any subset; - is stdin)"
    )]
    pub rdma_link: Vec<PathBuf>,
    /// Output of ofed_info -s.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Captures (any subset; - is stdin)"
    )]
    pub ofed_info: Vec<PathBuf>,
    /// Output of dpkg -l (the seed's RDMA packages must be `ii`).
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Captures (any subset; - is stdin)"
    )]
    pub dpkg: Vec<PathBuf>,
    /// Output of nvidia-smi topo -m (the GPU↔NIC matrix and its NIC legend).
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Captures (any subset; - is stdin)"
    )]
    pub gpu_topology: Vec<PathBuf>,
    /// Output of nvidia-smi -L or plain nvidia-smi (the GPUs: count and model).
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Captures (any subset; - is stdin)"
    )]
    pub gpu_list: Vec<PathBuf>,
    /// Output of lsmod or cat /proc/modules (is nvidia_peermem loaded?).
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "Captures (any subset; - is stdin)"
    )]
    pub lsmod: Vec<PathBuf>,
    /// Print the commands that capture everything detect reads, and exit.
    #[arg(long)]
    pub print_commands: bool,
    /// Name of the Pool.
    #[arg(long, default_value = "detected")]
    pub name: String,
    /// The platform the nodes belong to.
    #[arg(long, value_enum, default_value_t = Platform::Generic)]
    pub platform: Platform,
    /// The pod's bootstrap interface (the Pool's socketIfname, NCCL_SOCKET_IFNAME).
    /// Default: eth0, the cluster network's; with --attachment hostNetwork the
    /// management netdev.
    #[arg(long, value_name = "IFNAME", help_heading = "Host and pod")]
    pub socket_ifname: Option<String>,
    /// The host netdev of the management NIC (e.g. bond0): the RDMA device behind it is
    /// kept out of hcas. Default: eth0; with --attachment hostNetwork the
    /// --socket-ifname.
    #[arg(long, value_name = "NETDEV", help_heading = "Host and pod")]
    pub management_netdev: Option<String>,
    /// How the pool's pods attach to the fabric. Default: sriov for captures of VFs
    /// taken --in-pod, otherwise none written.
    #[arg(long, value_enum, help_heading = "Host and pod")]
    pub attachment: Option<Attachment>,
    /// Each rail's device-plugin resource (attachment sriov or hostdev), e.g.
    /// nvidia.com/rail{n}: `{n}` is the rail's number, one rail entry each; without
    /// it one entry stands for every rail.
    #[arg(long, value_name = "RESOURCE", help_heading = "Rails (sriov, hostdev)")]
    pub rail_resource: Option<String>,
    /// Each rail's Multus network (NetworkAttachmentDefinition), e.g. gpu-rail{n}.
    #[arg(long, value_name = "NETWORK", help_heading = "Rails (sriov, hostdev)")]
    pub rail_network: Option<String>,
    /// The rails' networks' namespace (default: the pod's).
    #[arg(
        long,
        value_name = "NAMESPACE",
        help_heading = "Rails (sriov, hostdev)"
    )]
    pub rail_namespace: Option<String>,
    /// GPUs per node. Default: as many as nvidia-smi -L (or the topology matrix)
    /// lists, else 8.
    #[arg(long)]
    pub gpus: Option<u32>,
    /// The captures come from inside a pod: prefer NCCL's dynamic GID selection, read
    /// the netdevs as the pod's (no hostInterfaces), and propose attachment sriov when
    /// its RDMA devices are VFs.
    #[arg(long, help_heading = "Host and pod")]
    pub in_pod: bool,
    #[command(flatten)]
    pub print: OutputArgs,
    #[command(flatten)]
    pub rules: super::rule_args::RuleArgs,
}

pub fn run(args: &DetectArgs, s: &super::Settings, io: &mut Streams<'_>) -> Result<(), Error> {
    if args.print_commands {
        return write!(io.out, "{}", commands::text()).map_err(stdout);
    }
    let files: Vec<&PathBuf> = [
        &args.capture,
        &args.show_gids,
        &args.ibstat,
        &args.ibv_devinfo,
        &args.rdma_link,
        &args.ofed_info,
        &args.dpkg,
        &args.gpu_topology,
        &args.gpu_list,
        &args.lsmod,
    ]
    .into_iter()
    .flatten()
    .collect();
    if files.is_empty() {
        return Err(Error::Usage(
            "give at least one capture (--capture, --show-gids, --ibstat, ...); --print-commands says how to take them".to_owned(),
        ));
    }
    let mut obs = Observations::default();
    let mut sources = Sources::default();
    for path in files {
        let (name, text) = read(path)?;
        sources.add(name.clone(), Arc::from(text.as_str()));
        capture::read(&mut obs, &name, &text);
    }
    let options = Options {
        name: args.name.clone(),
        platform: args.platform,
        socket_ifname: args.socket_ifname.clone(),
        management_netdev: args.management_netdev.clone(),
        attachment: args.attachment,
        rails: RailNames {
            resource: args.rail_resource.clone(),
            network: args.rail_network.clone(),
            namespace: args.rail_namespace.clone(),
        },
        gpus_per_node: args.gpus,
        in_pod: args.in_pod,
    };
    let mut findings = Findings::default();
    let draft = decide::detect(&obs, &options, &mut findings)?;
    // A pool is printed whenever one was detected; findings (missing packages, say)
    // still decide the exit code.
    let pool = match &draft {
        Some(d) => verified(d, &mut findings)?,
        None => None,
    };
    // Captures are not YAML: levels apply, comments do not.
    s.rendering_policy()?.apply(&mut findings, 0, &[]);
    findings.sort();
    present::findings_beside(io, &findings, &sources, &s.print)?;
    if s.print.format == Format::Human {
        let what = draft.as_ref().map_or("no pool".to_owned(), |d| {
            format!(
                "{} pool `{}`, {} data NIC(s)",
                d.fabric.name(),
                printable(&d.name),
                d.data_nics
            )
        });
        write_topology(io, &obs, draft.as_ref())?;
        writeln!(io.notes(), "detected {what}: {}", summary(&findings)).map_err(stderr)?;
    }
    let printed = pool.as_ref().is_some_and(|t| !t.is_empty());
    if let Some(text) = pool.filter(|t| !t.is_empty()) {
        write!(io.out, "{text}").map_err(stdout)?;
    }
    let consequence = if printed { "" } else { "; no pool was printed" };
    exit::verdict(&findings, &s.print, consequence, false)
}

/// The affinity map and nvidia_peermem, for the human report: the pool's, or, when no
/// pool was detected, the matrix's own NICs.
fn write_topology(
    io: &mut Streams<'_>,
    obs: &Observations,
    draft: Option<&decide::PoolDraft>,
) -> Result<(), Error> {
    let from_pool = draft.and_then(|d| d.topology.as_ref());
    let nics = match (from_pool, &obs.topology) {
        (Some(t), _) if !t.nics.is_empty() => t.nics.clone(),
        (_, Some(m)) => affinity::map(m, None).nics,
        (_, None) => Vec::new(),
    };
    if !nics.is_empty() {
        writeln!(
            io.err,
            "GPU↔NIC affinity (nvidia-smi topo -m), in rail order:"
        )
        .map_err(stderr)?;
        let width = nics
            .iter()
            .map(|n| printable(&n.name).chars().count())
            .max()
            .unwrap_or(0);
        for nic in &nics {
            let gpus: Vec<String> = nic.gpus.iter().map(|g| format!("GPU{g}")).collect();
            writeln!(
                io.err,
                "  {:width$}  {:4}  {}",
                printable(&nic.name),
                nic.link.name(),
                gpus.join(" ")
            )
            .map_err(stderr)?;
        }
    }
    if let Some(loaded) = from_pool.and_then(|t| t.nvidia_peermem) {
        let state = if loaded { "loaded" } else { "not loaded" };
        writeln!(io.err, "nvidia_peermem: {state}").map_err(stderr)?;
    }
    Ok(())
}

/// Render the pool and read it back as render would: through the loader (schema)
/// and the checks every pool gets before a job uses it (`plan::check_pool`: HCA
/// names, GID index, ...). The loader alone let `hcas: ["", mlx5_0]` through. A pool
/// with errors is reported and not returned, so an unusable pool is never printed.
fn verified(draft: &decide::PoolDraft, findings: &mut Findings) -> Result<Option<String>, Error> {
    let renderer = Renderer::new(None)?;
    let text = match renderer.render(render::POOL, "pool", draft) {
        Ok(t) => t,
        Err(e) => {
            findings.push(Rule::TemplateError, e.to_string(), None);
            return Ok(None);
        }
    };
    let mut check = Findings::default();
    let docs = read_documents(&Arc::from("<detected pool>"), &text, &mut check);
    match docs.pools.as_slice() {
        [(_, pool)] => crate::plan::check_pool(pool, &mut check),
        pools if check.errors() == 0 => check.push(
            Rule::RenderedSchema,
            format!("the rendered text holds {} pools, not one", pools.len()),
            None,
        ),
        _ => {}
    }
    if check.errors() == 0 {
        return Ok(Some(text));
    }
    // Only errors: warnings about the pool are detect's own findings already.
    for f in check
        .iter()
        .filter(|f| f.rule.info().severity == Severity::Error)
    {
        findings.push(f.rule, format!("detected pool: {}", f.message), None);
    }
    Ok(None)
}

fn read(path: &Path) -> Result<(Arc<str>, String), Error> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        let limit = crate::files::max_file_size();
        std::io::stdin()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(path, e))?;
        if bytes.len() as u64 > limit {
            return Err(Error::io(
                path,
                std::io::Error::other(format!(
                    "is larger than {limit} bytes, the most rdmagen reads (--max-file-size)"
                )),
            ));
        }
        return Ok((
            Arc::from("<stdin>"),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
    }
    let bytes = crate::files::read_regular(path).map_err(|e| Error::io(path, e))?;
    Ok((
        display_name(path),
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
}
