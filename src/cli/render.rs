//! `rdmagen render`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::input_args::InputArgs;
use super::output_args::OutputArgs;
use super::present;
use super::{Streams, exit, stderr, stdout};
use crate::diagnostics::escape::printable;
use crate::emit::{Access, OldTree, OutputDir, OutputWriter, Waiting};
use crate::error::Error;
use crate::golden::{Blessed, Blessing, Comparator, Status};
use crate::output::comparison::Labels;
use crate::pipeline::{self, Collect, Outcome};

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Job files or directories (walked for *.yaml and *.yml in sorted order).
    #[arg(required = true, value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// Files or directories with Pool documents.
    #[arg(long = "pools", value_name = "PATH")]
    pub pools: Vec<PathBuf>,
    /// Write each job to DIR/<job>/pytorchjob.yaml instead of stdout
    /// (DIR/<job>.<namespace>/ when jobs in several namespaces share the name). The
    /// configuration's `output` is DIR only with --check, --bless or --write: a bare
    /// render prints to stdout.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Use templates from DIR in place of the built-in ones with the same name.
    #[arg(long, value_name = "DIR")]
    pub templates: Option<PathBuf>,
    /// Print every decision and its reason (to stderr when manifests go to stdout).
    #[arg(long)]
    pub explain: bool,
    /// Compare with DIR instead of writing it: exit 0 when identical, 1 when anything
    /// differs (missing and stale files included), 2 on errors.
    #[arg(long, group = "mode", help_heading = "Golden files")]
    pub check: bool,
    /// Write DIR and report what changed; the only way to write when CI is set.
    #[arg(long, group = "mode", help_heading = "Golden files")]
    pub bless: bool,
    /// Write DIR even when CI is set: a pipeline that renders manifests to apply, not
    /// one that checks golden files.
    #[arg(long, group = "mode", help_heading = "Golden files")]
    pub write: bool,
    /// With --bless, delete the files in DIR that rdmagen wrote (listed in
    /// DIR/.rdmagen-owned) and that no input renders any more.
    #[arg(long, requires = "bless", help_heading = "Golden files")]
    pub prune: bool,
    /// Replace files in DIR that rdmagen did not write, or that were edited since it
    /// wrote them (by DIR/.rdmagen-owned), and write into a DIR that holds files but
    /// no record; without it either stops the run and nothing is written. It never
    /// deletes: --prune deletes only files the record proves are rdmagen's.
    #[arg(long, requires = "output", conflicts_with = "check")]
    pub force: bool,
    /// Fail at once when another rdmagen run is using DIR, instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,
    /// Also print a structural summary of differences (on by default on a terminal).
    #[arg(long, help_heading = "Golden files")]
    pub semantic: bool,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub print: OutputArgs,
    #[command(flatten)]
    pub rules: super::rule_args::RuleArgs,
}

/// What `render -o DIR` does with DIR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Write,
    Check,
    Bless,
}

impl RenderArgs {
    /// With CI set, a plain `-o DIR` compares instead of writing (--bless and --write
    /// write).
    pub(super) fn mode(&self, ci: bool) -> Mode {
        match (self.check, self.bless, self.write) {
            (true, ..) => Mode::Check,
            (_, true, _) => Mode::Bless,
            (.., true) => Mode::Write,
            _ if ci => Mode::Check,
            _ => Mode::Write,
        }
    }
}

impl Mode {
    /// Whether `-o DIR` is compared rather than written.
    pub(super) fn compares(self) -> bool {
        self == Mode::Check
    }
}

pub fn run(args: &RenderArgs, s: &super::Settings, io: &mut Streams<'_>) -> Result<(), Error> {
    let request = args
        .input
        .request(&args.inputs, args.templates.as_ref(), s)?;
    if let Some(dir) = &s.output {
        refuse_format_name(dir)?;
        let inputs: Vec<PathBuf> = args
            .inputs
            .iter()
            .chain(&s.pools)
            .chain(&args.templates)
            .cloned()
            .collect();
        crate::emit::refuse_place(dir, &inputs)?;
    }
    let Some(dir) = &s.output else {
        // -o may come from the configuration file, so clap cannot require it.
        let needs_dir = [
            (args.check, "--check"),
            (args.bless, "--bless"),
            (args.write, "--write"),
            (args.no_wait, "--no-wait"),
        ];
        if let Some((_, flag)) = needs_dir.iter().find(|(given, _)| *given) {
            return Err(Error::Usage(format!(
                "{flag} needs an output directory: -o DIR, or `output` in {}",
                super::config::FILE_NAME
            )));
        }
        let collect = Collect::default();
        let outcome = pipeline::run_with(&request, &collect, args.explain)?;
        finish_findings(args, s, &outcome, io, Mode::Write)?;
        return write!(io.out, "{}", pipeline::stream(&collect.into_jobs())).map_err(stdout);
    };
    let mode = args.mode(s.terminal.ci);
    match mode {
        Mode::Write => {
            let writer = waiting(args.no_wait, io.notes(), |w| {
                OutputWriter::open(dir, w, args.force)
            })?;
            let outcome = pipeline::run_with(&request, &writer, args.explain)?;
            finish_findings(args, s, &outcome, io, mode)?;
            let written = writer.commit(false)?;
            writeln!(
                io.notes(),
                "{} rendered to {}: {} created, {} updated, {} unchanged",
                outcome.counted(),
                shown(dir),
                written.created,
                written.updated,
                written.unchanged
            )
            .map_err(stderr)?;
            print_left(&written.left, io)?;
            written.edits().map_or(Ok(()), Err)
        }
        Mode::Check => {
            present::refuse_for_comparisons(&s.print, "render --check")?;
            if !args.check {
                // Comparing with a directory that is not there cannot be what was meant.
                if std::fs::symlink_metadata(dir).is_err() {
                    return Err(Error::Usage(format!(
                        "CI is set, so `render -o {0}` compares with {0} instead of writing it, and {0} does not exist: pass --write to render into it (--check to compare, --bless to update golden files)",
                        shown(dir)
                    )));
                }
                writeln!(
                    io.notes(),
                    "CI is set: comparing with {} instead of writing (pass --write or --bless to write)",
                    shown(dir)
                )
                .map_err(stderr)?;
            }
            // Held until the comparison ends: no writer swaps the tree meanwhile.
            let held = waiting(args.no_wait, io.notes(), |w| {
                OutputDir::open(dir, Access::Shared, false, w)
            })?;
            let old = match &held {
                Some(out) => OldTree::scan(out.path(), dir.clone())?,
                None => OldTree::empty(dir.clone(), dir.clone()),
            };
            let comparator = Comparator::new(old.into(), true);
            let outcome = pipeline::run_with(&request, &comparator, args.explain)?;
            finish_findings(args, s, &outcome, io, mode)?;
            let cmp = comparator.finish()?;
            drop(held);
            let label = dir.to_string_lossy();
            let labels = Labels::Golden { dir: &label };
            present::comparison(io, &cmp, &labels, &s.print, args.semantic)
        }
        Mode::Bless => {
            let blessing = waiting(args.no_wait, io.notes(), |w| {
                Blessing::new(dir, w, args.force)
            })?;
            let outcome = pipeline::run_with(&request, &blessing, args.explain)?;
            finish_findings(args, s, &outcome, io, mode)?;
            let blessed = blessing.finish(args.prune)?;
            print_blessed(dir, &blessed, args.prune, io)
        }
    }
}

/// kubectl's `-o` names an output format: someone who writes `render -o yaml` wants
/// YAML on stdout, not a directory called `yaml`. So a bare format name is refused
/// unless that directory already exists; `-o ./yaml` means the directory.
pub(super) fn refuse_format_name(dir: &Path) -> Result<(), Error> {
    const KUBECTL_FORMATS: [&str; 5] = ["yaml", "yml", "json", "wide", "name"];
    let bare = dir.to_str().filter(|d| KUBECTL_FORMATS.contains(d));
    match bare {
        Some(name)
            if crate::files::kind_of(dir)
                .map_err(|e| Error::io(dir, e))?
                .is_none() =>
        {
            Err(Error::Usage(format!(
                "-o takes a directory, and there is no directory `{name}`: render already prints YAML to stdout without -o (write `-o ./{name}` to create a directory of that name)"
            )))
        }
        _ => Ok(()),
    }
}

/// `open` DIR, waiting for another run on it with a notice on stderr, so the wait is
/// not taken for a hang, or not at all with --no-wait. A notice that cannot be
/// written fails the command like any other write.
pub(super) fn waiting<T>(
    no_wait: bool,
    err: &mut dyn Write,
    open: impl FnOnce(&mut Waiting<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    let mut unwritten = None;
    let opened = open(&mut Waiting {
        no_wait,
        notify: Box::new(|dir: &Path| {
            let notice = writeln!(
                err,
                "waiting for another rdmagen run to finish with {} (--no-wait fails instead)",
                shown(dir)
            );
            unwritten = unwritten.take().or(notice.err());
        }),
    });
    match unwritten {
        Some(e) => Err(stderr(e)),
        None => opened,
    }
}

/// What a clean-up could not remove: said, so that nobody wonders where it came from.
pub(super) fn print_left(left: &[PathBuf], io: &mut Streams<'_>) -> Result<(), Error> {
    for path in left {
        writeln!(
            io.err,
            "warning: could not remove {}, left by rdmagen's clean-up; delete it by hand",
            shown(path)
        )
        .map_err(stderr)?;
    }
    Ok(())
}

/// Print findings and explanations; input errors end the run (exit 2 under --check,
/// where 1 means "differences").
fn finish_findings(
    args: &RenderArgs,
    s: &super::Settings,
    outcome: &Outcome,
    io: &mut Streams<'_>,
    mode: Mode,
) -> Result<(), Error> {
    present::findings_beside(io, &outcome.findings, &outcome.sources, &s.print)?;
    exit::verdict(
        &outcome.findings,
        &s.print,
        "; nothing was written",
        mode == Mode::Check,
    )?;
    if args.explain {
        let target: &mut dyn Write = if s.output.is_some() {
            &mut *io.out
        } else {
            &mut *io.err
        };
        explain(outcome, target).map_err(|e| {
            // --explain goes to stdout beside -o, else to stderr.
            if s.output.is_some() {
                stdout(e)
            } else {
                stderr(e)
            }
        })?;
    }
    Ok(())
}

fn print_blessed(
    dir: &Path,
    blessed: &Blessed,
    prune: bool,
    io: &mut Streams<'_>,
) -> Result<(), Error> {
    let w = &blessed.written;
    let mut kept = 0;
    for f in &blessed.before.files {
        let what = match f.status {
            Status::Differs => "updated",
            Status::Missing => "created",
            Status::Stale if w.pruned.contains(&f.path) => "deleted",
            Status::Stale if w.kept.contains_key(&f.path) => {
                kept += 1;
                let why = w.kept[&f.path].why();
                writeln!(
                    io.err,
                    "stale (kept: {why}; delete it by hand if it should go): {}",
                    shown(&dir.join(&f.path))
                )
                .map_err(stderr)?;
                continue;
            }
            Status::Stale if prune => {
                kept += 1;
                "stale (kept: rdmagen did not write it, by DIR/.rdmagen-owned)"
            }
            Status::Stale => {
                kept += 1;
                "stale (kept; --prune deletes it)"
            }
            Status::Same => continue,
        };
        writeln!(io.notes(), "{what}: {}", shown(&dir.join(&f.path))).map_err(stderr)?;
    }
    let stale = if prune {
        format!("{} deleted, {kept} stale kept", w.pruned.len())
    } else {
        format!("{kept} stale")
    };
    writeln!(
        io.notes(),
        "blessed {}: {} created, {} updated, {} unchanged, {stale}",
        shown(dir),
        w.created,
        w.updated,
        w.unchanged,
    )
    .map_err(stderr)?;
    print_left(&w.left, io)?;
    w.edits().map_or(Ok(()), Err)
}

/// A path as printed: relative to the working directory where it lies below it, and
/// escaped (file names in an output directory come from a repository).
pub(super) fn shown(path: &Path) -> String {
    printable(&crate::files::shown_relative(path).to_string_lossy()).into_owned()
}

fn explain(outcome: &Outcome, w: &mut dyn Write) -> std::io::Result<()> {
    for (job, pool, decisions) in &outcome.decisions {
        writeln!(w, "{} (pool {}):", printable(job), printable(pool))?;
        for d in decisions {
            writeln!(w, "  {d}")?;
        }
    }
    Ok(())
}
