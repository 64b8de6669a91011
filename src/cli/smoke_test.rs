//! `rdmagen smoke-test`: a ready-to-apply job that tests a pool's network, with the
//! pod shape of a real job on the pool (src/smoke/), plus the ConfigMap holding its
//! script. The job is an ordinary rdmagen Job run through the pipeline in memory.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use globset::GlobSet;

use super::input_args::StdinArgs;
use super::output_args::OutputArgs;
use super::render::{print_left, refuse_format_name, shown, waiting};
use super::rule_args::RuleArgs;
use super::{Streams, exit, present, stderr, stdout};
use crate::diagnostics::Findings;
use crate::diagnostics::escape::printable;
use crate::diagnostics::suggest::closest;
use crate::emit::OutputWriter;
use crate::error::Error;
use crate::model::PoolDocument;
use crate::model::load::{dedupe, display_name, read_documents, yaml_files};
use crate::pipeline::{self, Collect, MemoryInput, Outcome, OutputFile, Request};
use crate::render::Renderer;
use crate::smoke::{self, JOB_SOURCE, Options, SmokeTest, Tool};

#[derive(Debug, Args)]
pub struct SmokeTestArgs {
    /// The pool whose network to test, by name.
    #[arg(long, value_name = "NAME")]
    pub pool: String,
    /// Files or directories with Pool documents (default: `pools` in .rdmagen.yaml).
    #[arg(long = "pools", value_name = "PATH")]
    pub pools: Vec<PathBuf>,
    /// Pods, one per node: at least 2; perftest runs between exactly 2.
    #[arg(long, value_name = "N", default_value_t = 2)]
    pub nodes: u32,
    /// GPUs per pod [default: every GPU of a node, the pool's gpu.perNode].
    #[arg(long, value_name = "G")]
    pub gpus: Option<u32>,
    /// The container image [nccl default: nvcr.io/nvidia/pytorch:24.10-py3 under
    /// torchrun, ghcr.io/coreweave/nccl-tests under mpirun; perftest: required, an
    /// image with ib_write_bw]. Your training image tests what your jobs run.
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// nccl: an all-reduce bandwidth sweep with torch.distributed, printed as
    /// nccl-tests' all_reduce_perf table; perftest: ib_write_bw between two pods.
    #[arg(long, value_enum, default_value_t = Tool::Nccl)]
    pub tool: Tool,
    /// How the nccl test starts a rank per GPU [default: mpirun where the pool sets
    /// target.mpiOperator, else torchrun]. mpirun: nccl-tests' all_reduce_perf as an
    /// MPIJob; torchrun: the all-reduce script with torch.distributed.
    #[arg(long, value_enum, value_name = "LAUNCHER")]
    pub launcher: Option<smoke::Launcher>,
    /// Write DIR/<name>/configmap.yaml and the job's manifests instead of stdout,
    /// replacing DIR's tree in one step as `render -o` does.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Print every decision and its reason (to stderr when manifests go to stdout).
    #[arg(long)]
    pub explain: bool,
    /// Fail at once when another rdmagen run is using DIR, instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,
    /// Replace files in DIR that rdmagen did not write, or that were edited since
    /// (by DIR/.rdmagen-owned), and write into a DIR that holds files but no record;
    /// without it either stops the run. It never deletes.
    #[arg(long, requires = "output")]
    pub force: bool,
    #[command(flatten)]
    pub stdin: StdinArgs,
    #[command(flatten)]
    pub print: OutputArgs,
    #[command(flatten)]
    pub rules: RuleArgs,
}

pub fn run(args: &SmokeTestArgs, s: &super::Settings, io: &mut Streams<'_>) -> Result<(), Error> {
    args.stdin.apply(&s.pools)?;
    if s.pools.is_empty() {
        return Err(Error::Usage(format!(
            "smoke-test needs the pools: --pools PATH, or `pools` in {}",
            super::config::FILE_NAME
        )));
    }
    if let Some(dir) = &args.output {
        refuse_format_name(dir)?;
        crate::emit::refuse_place(dir, &s.pools)?;
    }
    let policy = s.rendering_policy()?;
    let pool = find_pool(args, s)?;
    let options = Options {
        pool: args.pool.clone(),
        nodes: args.nodes,
        gpus: args.gpus,
        image: args.image.clone(),
        tool: args.tool,
        launcher: args.launcher,
    };
    let smoke = smoke::prepare(&options, pool.as_ref()).map_err(Error::Usage)?;
    let renderer = Renderer::new(None)?;
    let job = smoke
        .job_document(&renderer, &policy)
        .map_err(Error::Usage)?;
    let request = Request {
        documents: vec![MemoryInput {
            name: JOB_SOURCE.to_owned(),
            text: job,
        }],
        pools: s.pools.clone(),
        policy,
        ..Request::default()
    };
    let Some(dir) = &args.output else {
        let collect = Collect::default();
        let outcome = pipeline::run_with(&request, &collect, true)?;
        let config_map = finish(args, s, &smoke, &renderer, &outcome, io)?;
        let jobs = collect.into_jobs();
        return write!(io.out, "{config_map}---\n{}", pipeline::stream(&jobs)).map_err(stdout);
    };
    let writer = waiting(args.no_wait, io.notes(), |w| {
        OutputWriter::open(dir, w, args.force)
    })?;
    let outcome = pipeline::run_with(&request, &writer, true)?;
    let config_map = finish(args, s, &smoke, &renderer, &outcome, io)?;
    writer.put(&OutputFile {
        path: format!("{}/configmap.yaml", smoke.name),
        text: config_map,
    })?;
    let written = writer.commit(false)?;
    writeln!(
        io.notes(),
        "smoke test {} rendered to {}: {} created, {} updated, {} unchanged",
        smoke.name,
        shown(dir),
        written.created,
        written.updated,
        written.unchanged
    )
    .map_err(stderr)?;
    print_left(&written.left, io)?;
    written.edits().map_or(Ok(()), Err)
}

/// The named pool, when one definition of it loaded. None when it is defined twice,
/// or none loaded and a file that failed to load may hold it: the pipeline then
/// reports why, at the file and line, as `render` would. A name no pool file defines
/// is a usage error naming those it does.
fn find_pool(args: &SmokeTestArgs, s: &super::Settings) -> Result<Option<PoolDocument>, Error> {
    let files = dedupe(
        yaml_files(&s.pools, &GlobSet::empty())?,
        &mut BTreeSet::new(),
    );
    let mut found = Vec::new();
    let mut known = BTreeSet::new();
    let mut failed = false;
    for file in &files {
        let name = display_name(&file.path);
        let text = file
            .read_text()
            .map_err(|e| Error::io(std::path::Path::new(&*name), e))?;
        // The pipeline reads these files again and reports what is wrong with them.
        let docs = read_documents(&name, &text, &mut Findings::default());
        failed |= docs
            .failed_pools
            .iter()
            .any(|p| p.as_deref().is_none_or(|p| p == args.pool));
        for (_, pool) in docs.pools {
            let pool_name = pool.value.metadata.name.clone();
            if pool_name == args.pool {
                found.push(pool.value);
            }
            known.insert(pool_name);
        }
    }
    if found.len() == 1 {
        return Ok(found.pop());
    }
    if !found.is_empty() || failed {
        return Ok(None);
    }
    let searched: Vec<String> = s.pools.iter().map(|p| shown(p)).collect();
    let hint = closest(&args.pool, known.iter().map(String::as_str))
        .map(|near| format!(" (did you mean {near}?)"))
        .unwrap_or_default();
    let known = match known.is_empty() {
        true => "none".to_owned(),
        false => known.into_iter().collect::<Vec<_>>().join(", "),
    };
    Err(Error::Usage(format!(
        "--pool {}: no such pool in {}; pools there: {known}{hint}",
        printable(&args.pool),
        searched.join(", "),
    )))
}

/// Print findings and, with --explain, every decision; refuse a perftest whose pods
/// get no RDMA device; return the ConfigMap, rendered and checked. Nothing is written
/// before this succeeds.
fn finish(
    args: &SmokeTestArgs,
    s: &super::Settings,
    smoke: &SmokeTest,
    renderer: &Renderer,
    outcome: &Outcome,
    io: &mut Streams<'_>,
) -> Result<String, Error> {
    present::findings_beside(io, &outcome.findings, &outcome.sources, &s.print)?;
    exit::verdict(&outcome.findings, &s.print, "; nothing was written", false)?;
    let decisions: Vec<_> = outcome
        .decisions
        .iter()
        .flat_map(|(.., d)| d.iter())
        .collect();
    if outcome.rendered != 1 {
        return Err(Error::Usage(format!(
            "the smoke test's job did not render ({} jobs); nothing was written",
            outcome.rendered
        )));
    }
    let rdma = decisions.iter().find(|d| d.topic == "rdma");
    if args.tool == Tool::Perftest
        && let Some(off) = rdma.filter(|d| d.value == "off")
    {
        return Err(Error::Usage(format!(
            "--tool perftest: a job of {} GPUs per node on pool `{}` gets no RDMA device ({}), so ib_write_bw has nothing to test; nothing was written",
            smoke.gpus,
            printable(&smoke.pool),
            printable(&off.reason)
        )));
    }
    let own: Vec<String> = smoke
        .notes
        .iter()
        .map(|n| format!("{} = {}: {}", n.topic, n.value, n.reason))
        .collect();
    if args.explain {
        let to_stdout = args.output.is_some();
        let target: &mut dyn Write = if to_stdout {
            &mut *io.out
        } else {
            &mut *io.err
        };
        let explained = explain(outcome, &own, target);
        explained.map_err(|e| if to_stdout { stdout(e) } else { stderr(e) })?;
    }
    let mut noted: Vec<String> = rdma.iter().map(|d| d.to_string()).collect();
    noted.extend(own);
    let pools: Vec<String> = s.pools.iter().map(|p| shown(p)).collect();
    smoke
        .config_map(renderer, &noted, &pools.join(" --pools "))
        .map_err(Error::Usage)
}

fn explain(outcome: &Outcome, own: &[String], w: &mut dyn Write) -> std::io::Result<()> {
    for (job, pool, decisions) in &outcome.decisions {
        writeln!(w, "{} (pool {}):", printable(job), printable(pool))?;
        for d in decisions {
            writeln!(w, "  {d}")?;
        }
    }
    for line in own {
        writeln!(w, "  smoke-test {}", printable(line))?;
    }
    Ok(())
}
