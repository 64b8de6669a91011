//! `rdmagen nccl-log`: did this run use RDMA?

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;
use globset::GlobSet;
use serde_json::{Value, json};

use super::Streams;
use super::input_args::StdinArgs;
use super::output_args::OutputArgs;
use super::{exit, stderr, stdout};
use crate::diagnostics::escape::printable;
use crate::diagnostics::{Findings, Sources};
use crate::error::Error;
use crate::model::load::{display_name, read_documents, yaml_files};
use crate::nccl_log::verdict::Bandwidth;
use crate::nccl_log::{self, Expectation, Reader, Verdict};
use crate::output::{self, Format};

#[derive(Debug, Args)]
pub struct NcclLogArgs {
    /// Logs of one run: NCCL_DEBUG=INFO output, nccl-tests and perftest output, one
    /// file per pod or concatenated; `-` is standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The pool the run used: its network label gives the line rate the bandwidth is
    /// judged against, its gidIndex the GID index to expect.
    #[arg(long, value_name = "NAME")]
    pub pool: Option<String>,
    /// Files or directories with Pool documents (a single pool needs no --pool).
    #[arg(long = "pools", value_name = "PATH")]
    pub pools: Vec<PathBuf>,
    /// Also draw the nccl-tests tables as an SVG chart: bus bandwidth against message
    /// size (log scale), one curve per table, with the line rate and the healthy band.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    #[command(flatten)]
    pub stdin: StdinArgs,
    #[command(flatten)]
    pub print: OutputArgs,
    #[command(flatten)]
    pub rules: super::rule_args::RuleArgs,
}

pub fn run(args: &NcclLogArgs, s: &super::Settings, io: &mut Streams<'_>) -> Result<(), Error> {
    args.stdin.apply(args.files.iter().chain(&s.pools))?;
    let expect = expectation(args, s)?;
    let mut reader = Reader::new();
    for path in &args.files {
        let name = display_name(path);
        let input: Box<dyn BufRead> = if crate::files::is_stdin(path) {
            Box::new(std::io::stdin().lock())
        } else {
            let (file, _) = crate::files::open_regular(path).map_err(|e| Error::io(path, e))?;
            Box::new(BufReader::with_capacity(64 << 10, file))
        };
        nccl_log::read_into(&mut reader, name, input, crate::files::limited)
            .map_err(|e| Error::io(path, e))?;
    }
    let nccl_log::Outcome {
        verdict,
        mut findings,
        sources,
    } = reader.finish(expect.as_ref());
    // A log has no suppression comments: levels and the floor apply.
    s.reporting_policy().apply(&mut findings, 0, &[]);
    findings.sort();
    if let Some(path) = &args.plot {
        let svg = nccl_log::plot::svg(&verdict)
            .map_err(|why| Error::Usage(format!("--plot {}: {why}", path.display())))?;
        write_replacing(path, svg.as_bytes()).map_err(|e| Error::io(path, e))?;
    }
    present(io, &verdict, &findings, &sources, &s.print)?;
    exit::verdict(&findings, &s.print, "", false)
}

/// Write `bytes` to `path` through a file beside it and a rename, so that a reader
/// never sees half a chart; a symlink at `path` is refused, not followed.
fn write_replacing(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::files::refuse_symlinked_name(path)?;
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"))?;
    let mut aside = name.to_owned();
    aside.push(format!(".rdmagen-{}.tmp", std::process::id()));
    let aside = path.with_file_name(aside);
    // create_new: whatever already has that name (a symlink planted there included) is
    // neither followed nor, on failure, removed; only the file made here is.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&aside)?;
    std::io::Write::write_all(&mut file, bytes)
        .and_then(|()| std::fs::rename(&aside, path))
        .inspect_err(|_| {
            // Best effort: the error that ends the run is the write's or the rename's.
            std::fs::remove_file(&aside).ok();
        })
}

/// The pool named by --pool among --pools (or the only one there).
fn expectation(args: &NcclLogArgs, s: &super::Settings) -> Result<Option<Expectation>, Error> {
    if s.pools.is_empty() {
        return match &args.pool {
            Some(name) => Err(Error::Usage(format!(
                "--pool {name} needs --pools PATH, the files that define it"
            ))),
            None => Ok(None),
        };
    }
    let mut loaded = Vec::new();
    let mut problems = Findings::default();
    let mut failed: Vec<String> = Vec::new();
    for file in yaml_files(&s.pools, &GlobSet::empty())? {
        let name = display_name(&file.path);
        let text = file.read_text().map_err(|e| Error::io(&file.path, e))?;
        let docs = read_documents(&Arc::from(&*name), &text, &mut problems);
        loaded.extend(docs.pools.into_iter().map(|(_, p)| p.value));
        failed.extend(
            docs.failed_pools
                .into_iter()
                .map(|n| n.unwrap_or_else(|| name.to_string())),
        );
    }
    let first_problem = || {
        problems
            .iter()
            .next()
            .map(|f| match &f.location {
                Some(at) => format!(": {at}: {}", f.message),
                None => format!(": {}", f.message),
            })
            .unwrap_or_default()
    };
    let pool = match &args.pool {
        Some(name) => match loaded.iter().find(|p| &p.metadata.name == name) {
            Some(pool) => pool,
            None if failed.contains(name) => {
                return Err(Error::Usage(format!(
                    "pool `{name}` failed to load{}",
                    first_problem()
                )));
            }
            None => {
                let known: Vec<&str> = loaded.iter().map(|p| p.metadata.name.as_str()).collect();
                return Err(Error::Usage(format!(
                    "pool `{name}` is not defined in --pools; known pools: {}{}",
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    },
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!("; {} failed to load{}", failed.join(", "), first_problem())
                    }
                )));
            }
        },
        None => match loaded.as_slice() {
            [pool] if failed.is_empty() => pool,
            [] => {
                return Err(Error::Usage(format!(
                    "--pools defines no pool{}",
                    first_problem()
                )));
            }
            _ => {
                return Err(Error::Usage(
                    "--pools defines several pools: name the run's with --pool".to_owned(),
                ));
            }
        },
    };
    Ok(Some(Expectation::from_pool(pool)))
}

/// The verdict is the product, on stdout; the findings explain it. JSON writes one
/// document with both; SARIF, JUnit and GitLab are reports of findings alone, so the
/// verdict goes to stderr beside them.
fn present(
    io: &mut Streams<'_>,
    verdict: &Verdict,
    findings: &Findings,
    sources: &Sources,
    args: &OutputArgs,
) -> Result<(), Error> {
    let color = args.color.colored(io.terminal.stdout);
    match args.format {
        Format::Json => {
            let mut doc = json!({ "schemaVersion": output::json::SCHEMA_VERSION });
            if let (Value::Object(doc), Ok(Value::Object(fields))) =
                (&mut doc, serde_json::to_value(verdict))
            {
                doc.extend(fields);
                doc.insert(
                    "findings".into(),
                    findings.shown().iter().map(output::json::finding).collect(),
                );
                doc.insert(
                    "counts".into(),
                    json!({
                        "errors": findings.count(crate::diagnostics::Severity::Error),
                        "warnings": findings.count(crate::diagnostics::Severity::Warning),
                        "infos": findings.count(crate::diagnostics::Severity::Info),
                    }),
                );
            }
            output::json::document(io.out, &doc).map_err(stdout)
        }
        Format::Human => {
            output::findings(io.out, findings, sources, args.format, color).map_err(stdout)?;
            write!(io.out, "{}", human(verdict)).map_err(stdout)?;
            writeln!(
                io.notes(),
                "{} file(s), {} lines read: {}",
                verdict.input.files,
                verdict.input.lines,
                output::human::summary(findings)
            )
            .map_err(stderr)
        }
        Format::Brief => {
            output::findings(io.out, findings, sources, args.format, color).map_err(stdout)?;
            writeln!(io.out, "verdict: {}", printable(&one_line(verdict))).map_err(stdout)
        }
        Format::Github => {
            output::findings(io.out, findings, sources, args.format, color).map_err(stdout)?;
            writeln!(
                io.out,
                "::notice title=rdmagen nccl-log::{}",
                output::github::escape_data(&one_line(verdict))
            )
            .map_err(stdout)
        }
        Format::Sarif | Format::Junit | Format::Gitlab => {
            output::findings(io.out, findings, sources, args.format, color).map_err(stdout)?;
            write!(io.err, "{}", human(verdict)).map_err(stderr)
        }
        // The table is the document; the findings and the verdict go beside it.
        Format::Csv => {
            write!(io.out, "{}", nccl_log::sweep::csv(&verdict.sweeps)).map_err(stdout)?;
            output::findings(io.err, findings, sources, args.format, false).map_err(stderr)?;
            writeln!(io.err, "verdict: {}", printable(&one_line(verdict))).map_err(stderr)
        }
    }
}

fn yes_no(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "yes",
        Some(false) => "no",
        None => "unknown",
    }
}

/// `transport=roce rdma=yes gdr=no nccl=2.21.5 ...`
fn one_line(v: &Verdict) -> String {
    let mut parts = vec![
        format!("transport={}", v.transport.name()),
        format!("rdma={}", yes_no(v.rdma)),
        format!("gdr={}", yes_no(v.gdr)),
    ];
    if let Some(version) = &v.nccl_version {
        parts.push(format!("nccl={version}"));
    }
    if let Some(g) = v.gid_index {
        parts.push(format!("gidIndex={g}"));
    }
    if let Some(b) = v.busbw_gbps {
        parts.push(format!("busbw={b}GB/s"));
    }
    if let Some(e) = v.expected_gbps {
        parts.push(format!("expected={e}GB/s"));
    }
    parts.push(format!("errors={}", v.errors.len()));
    parts.join(" ")
}

/// The verdict for people: one fact a line, every value from the log escaped.
fn human(v: &Verdict) -> String {
    let mut out = String::from("NCCL log verdict\n");
    let mut row = |label: &str, value: String| {
        out += &format!("  {label:<12} {}\n", printable(&value));
    };
    let mut transport = v.transport.name().to_owned();
    match (v.link_layer.as_deref(), v.transport) {
        (None, nccl_log::Transport::Ib) => transport += " (link layer not in the log)",
        (Some("IB+RoCE"), _) => transport += " (links of both kinds: IB and RoCE)",
        _ => {}
    }
    if !v.networks.is_empty() {
        transport += &format!("; NCCL network {}", v.networks.join(", "));
    }
    row("transport", transport);
    let basis = |value: Option<bool>, from: Option<nccl_log::verdict::Basis>| {
        let mut text = yes_no(value).to_owned();
        if from == Some(nccl_log::verdict::Basis::Bandwidth) {
            text += " (inferred from the bandwidth)";
        }
        text
    };
    let mut rdma = basis(v.rdma, v.rdma_inferred_from);
    if v.rdma.is_none() && v.rdma_selected {
        rdma += " (an RDMA network was selected, not shown carrying data)";
    }
    row("RDMA", rdma);
    row("GPUDirect", basis(v.gdr, v.gdr_inferred_from));
    let version = match (&v.nccl_version, &v.nccl_version_inferred) {
        _ if v.mixed_versions => "differs between hosts".to_owned(),
        (Some(version), _) => version.clone(),
        (None, Some(range)) => format!("{range} (from the lines' formats)"),
        (None, None) if v.nccl_versions.len() > 1 => "differs between hosts".to_owned(),
        (None, None) => "not in the log".to_owned(),
    };
    row("NCCL", version);
    if v.mixed_versions {
        for h in v.nccl_versions.iter().take(8) {
            let what = h
                .version
                .clone()
                .or_else(|| h.range.as_ref().map(|r| format!("{r} (by format)")));
            row(
                "",
                format!(
                    "{}: {}",
                    h.host.as_deref().unwrap_or("(no host)"),
                    what.unwrap_or_default()
                ),
            );
        }
    }
    if !v.hcas.is_empty() {
        row("HCAs", v.hcas.join(", "));
    }
    match (v.gid_index, v.gid_indexes.is_empty()) {
        (Some(g), _) => row("GID index", g.to_string()),
        (None, false) => row("GID index", format!("several: {:?}", v.gid_indexes)),
        _ => {}
    }
    if !v.socket_interfaces.is_empty() {
        row("sockets", v.socket_interfaces.join(", "));
    }
    if let Some(n) = v.nodes {
        row("nodes", n.to_string());
    }
    if let Some(b) = &v.bandwidth {
        row("bus bw", bandwidth(b, "GB/s"));
    }
    if let Some(p) = &v.perftest {
        let mut what = p.test.clone().unwrap_or_else(|| "perftest".to_owned());
        if let Some(d) = &p.device {
            what += &format!(" on {d}");
        }
        if let Some(b) = &p.bandwidth {
            what += &format!(": {}", bandwidth(b, "Gb/s"));
        }
        row("perftest", what);
    }
    row(
        "errors",
        format!("{} kind(s) of error line", v.errors.len()),
    );
    for note in &v.notes {
        row("note", note.clone());
    }
    out
}

fn bandwidth(b: &Bandwidth, unit: &str) -> String {
    let mut text = format!("{} {unit} at {}", b.value, size(b.at_bytes));
    if let Some(p) = &b.plateau {
        text += &format!(
            ", flat at {}-{} {unit} over {} sizes from {} to {}",
            p.min_gbps,
            p.max_gbps,
            p.rows,
            size(p.from_bytes),
            size(p.to_bytes)
        );
    }
    if let (Some(health), Some(ratio)) = (b.health, b.ratio) {
        text += &format!(
            "; {}: {:.0}% of the line rate",
            health.name(),
            ratio * 100.0
        );
    }
    if let (Some(expected), Some(plausible)) = (b.expected, b.plausible) {
        text += &format!(" (healthy from {expected}, plausible from {plausible} {unit}");
        if let Some(c) = &b.calibration {
            text += &format!(", calibration row `{}`", c.row);
        }
        text += ")";
    }
    if !b.judged {
        text += " (not judged)";
    }
    text
}

/// `8 GiB`, `512 MiB`, `4 KiB`, or bytes.
fn size(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::write_replacing;
    use std::os::unix::fs::symlink;

    /// The chart is written beside its path first: a symlink waiting under that name is
    /// neither followed nor removed, and a symlink at the path itself is refused.
    #[test]
    fn the_chart_never_writes_through_or_removes_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let chart = dir.path().join("chart.svg");
        let aside = dir
            .path()
            .join(format!("chart.svg.rdmagen-{}.tmp", std::process::id()));
        symlink(&victim, &aside).unwrap();
        assert!(write_replacing(&chart, b"<svg/>").is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert!(aside.symlink_metadata().unwrap().file_type().is_symlink());
        assert!(!chart.exists());

        std::fs::remove_file(&aside).unwrap();
        symlink(&victim, &chart).unwrap();
        assert!(write_replacing(&chart, b"<svg/>").is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");

        std::fs::remove_file(&chart).unwrap();
        write_replacing(&chart, b"<svg/>").unwrap();
        assert_eq!(std::fs::read(&chart).unwrap(), b"<svg/>");
        assert!(!aside.exists());
    }
}
