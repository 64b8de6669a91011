//! "Did this run use RDMA?": NCCL_DEBUG logs, nccl-tests and perftest output read
//! into one verdict for the run (`rdmagen nccl-log`).
//!
//! A [`Reader`] takes the lines of one or more files (several pods' logs, as
//! separate files or concatenated) in one pass and keeps only bounded summaries:
//! memory does not grow with the input, and time is linear in it. Every line is
//! classified by [`line`] (NCCL's INFO/WARN token found wherever a launcher's prefix
//! put it), then read by the family it belongs to: NCCL's own lines in
//! [`evidence`] (formats by version as data in [`formats`]), nccl-tests and
//! perftest tables in [`tables`]. [`verdict`] decides, against the pool's line rate
//! ([`rate`]) when a pool is given.

pub mod calibration;
pub mod evidence;
pub mod formats;
pub mod line;
pub mod plot;
pub mod rate;
pub mod split;
pub mod sweep;
pub mod tables;
pub mod verdict;
pub mod version;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diagnostics::{Findings, Sources};
use crate::model::pool::{Fabric, GidIndex, PoolDocument};
use evidence::{Evidence, Loc};

use crate::diagnostics::escape::cut;
use line::Line;
use tables::Tables;
pub use verdict::{Transport, Verdict};

/// The most lines kept for findings to quote, and how much of each.
const MAX_QUOTES: usize = 1024;
const QUOTE_CHARS: usize = 512;

/// What the pool the run used says about its network.
#[derive(Debug, Clone)]
pub struct Expectation {
    pub pool: String,
    pub fabric: Fabric,
    /// `spec.network.label`, e.g. "RoCE 8*400G": the line rate.
    pub label: Option<String>,
    pub gid_index: Option<GidIndex>,
    /// `spec.gpu.model`, e.g. "H100": the GPU generation the bandwidth is judged for.
    pub gpu_model: Option<String>,
}

impl Expectation {
    pub fn from_pool(pool: &PoolDocument) -> Expectation {
        let network = &pool.spec.network;
        Expectation {
            pool: pool.metadata.name.clone(),
            fabric: network.fabric,
            label: network.label.clone(),
            gid_index: network.gid_index,
            gpu_model: pool.spec.gpu.model.clone(),
        }
    }
}

/// Reads lines, file after file, into what the verdict is decided from.
#[derive(Default)]
pub struct Reader {
    file: Option<Arc<str>>,
    first_file: Option<Arc<str>>,
    files: usize,
    lines: u64,
    bytes: u64,
    long_lines: u64,
    /// The host of the last NCCL line of this file, for a bare `NCCL version` line.
    last_host: Option<String>,
    /// Bare version lines seen before any host in this file: given to the next host.
    pending_versions: Vec<(version::Version, String, Loc)>,
    evidence: Evidence,
    tables: Tables,
    quotes: BTreeMap<Arc<str>, BTreeMap<usize, String>>,
    quoted: usize,
}

/// The verdict, its findings, and the lines they quote.
pub struct Outcome {
    pub verdict: Verdict,
    pub findings: Findings,
    pub sources: Sources,
}

impl Reader {
    pub fn new() -> Reader {
        Reader::default()
    }

    /// The lines that follow belong to `name`.
    pub fn start_file(&mut self, name: Arc<str>) {
        self.finish_file();
        self.first_file.get_or_insert_with(|| name.clone());
        self.file = Some(name);
        self.files += 1;
        self.last_host = None;
        self.tables.new_file();
    }

    fn finish_file(&mut self) {
        for (v, text, at) in std::mem::take(&mut self.pending_versions) {
            self.evidence.version(None, v, &text, &at);
        }
    }

    /// What the read of the current file saw (bytes, lines cut at the cap).
    pub fn file_read(&mut self, read: &split::Read) {
        self.bytes += read.bytes;
        self.long_lines += read.cut as u64;
    }

    /// One line (1-based `number`) of the current file.
    pub fn line(&mut self, number: usize, text: &str) {
        self.lines += 1;
        let file = self
            .file
            .get_or_insert_with(|| Arc::from("<input>"))
            .clone();
        let at: Loc = (file, number);
        let ev = &mut self.evidence;
        ev.quote = false;
        match line::classify(text) {
            Line::Info { host, msg } => {
                self.host_seen(host);
                self.evidence.info(host, msg, &at);
            }
            Line::Warn { host, msg, .. } => {
                self.host_seen(host);
                self.evidence.warn(host, msg, &at);
            }
            Line::Other(rest) => {
                if rest.starts_with("NCCL version ")
                    && let Some((v, shown)) = version::printed(rest)
                {
                    // NCCL ≤ 2.21 prints its version bare, once per process
                    // (N@v2.21.5-1:src/init.cc:476): it belongs to the process
                    // whose lines surround it.
                    match self.last_host.clone() {
                        Some(host) => self.evidence.version(Some(&host), v, shown, &at),
                        None => {
                            if self.pending_versions.len() < 8 {
                                self.pending_versions
                                    .push((v, shown.to_owned(), at.clone()));
                                self.evidence.quote = true;
                            }
                        }
                    }
                } else {
                    self.evidence.other(None, rest, &at);
                    self.tables.line(rest, &at, &mut self.evidence);
                }
            }
        }
        if self.evidence.quote && self.quoted < MAX_QUOTES {
            self.quoted += 1;
            self.quotes
                .entry(at.0.clone())
                .or_default()
                .insert(at.1, cut(text, QUOTE_CHARS).into_owned());
        }
    }

    fn host_seen(&mut self, host: Option<&str>) {
        let Some(host) = host else {
            return;
        };
        if self.last_host.as_deref() != Some(host) {
            self.last_host = Some(host.to_owned());
        }
        for (v, text, at) in std::mem::take(&mut self.pending_versions) {
            self.evidence.version(Some(host), v, &text, &at);
        }
    }

    /// Decide, against `expect` when a pool is given.
    pub fn finish(mut self, expect: Option<&Expectation>) -> Outcome {
        self.finish_file();
        let mut findings = Findings::default();
        let inputs = verdict::Inputs {
            ev: &self.evidence,
            tables: &self.tables,
            expect,
            first_file: self.first_file.clone(),
            stats: verdict::InputStats {
                files: self.files,
                lines: self.lines,
                bytes: self.bytes,
                long_lines: self.long_lines,
            },
        };
        let verdict = verdict::decide(&inputs, &mut findings);
        let mut sources = Sources::default();
        for (file, lines) in self.quotes {
            sources.add_lines(file, lines);
        }
        Outcome {
            verdict,
            findings,
            sources,
        }
    }
}

/// Read all of `input` as the file `name`.
pub fn read_into(
    reader: &mut Reader,
    name: Arc<str>,
    input: impl std::io::BufRead,
    limit: impl FnMut(u64) -> std::io::Result<()>,
) -> std::io::Result<()> {
    reader.start_file(name);
    let read = split::lines(input, limit, |n, l| reader.line(n, l))?;
    reader.file_read(&read);
    Ok(())
}

/// Read texts (name, content) into one verdict: for tests and small inputs.
pub fn read_texts(files: &[(&str, &str)], expect: Option<&Expectation>) -> Outcome {
    let mut reader = Reader::new();
    for (name, text) in files {
        let _ = read_into(&mut reader, Arc::from(*name), text.as_bytes(), |_| Ok(()));
    }
    reader.finish(expect)
}

/// The document `nccl-log --format json` writes, for its published schema
/// (`schemas/nccl-log.schema.json`, `rdmagen schema nccl-log`): the verdict's fields
/// beside the findings and their counts.
#[derive(schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct Document {
    /// The version of rdmagen's JSON documents.
    schema_version: u32,
    #[serde(flatten)]
    verdict: Verdict,
    /// What is wrong with the run, as every command's JSON lists findings.
    findings: Vec<FindingDoc>,
    counts: Counts,
}

#[derive(schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct FindingDoc {
    /// `RDG146`
    rule: String,
    severity: SeverityDoc,
    message: String,
    file: Option<String>,
    line: Option<usize>,
    column: Option<usize>,
    /// The rule's one-line summary.
    summary: String,
    /// Where the rule's fact comes from.
    source: String,
}

#[derive(schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum SeverityDoc {
    Error,
    Warning,
    Info,
}

#[derive(schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Counts {
    errors: usize,
    warnings: usize,
    infos: usize,
}

/// The JSON Schema (draft-07) of `nccl-log --format json`, pretty, with a final newline.
pub fn output_schema() -> String {
    let generator = schemars::generate::SchemaSettings::draft07().into_generator();
    let schema = generator.into_root_schema_for::<Document>();
    let mut value = serde_json::to_value(schema).expect("schemas serialise");
    if let serde_json::Value::Object(map) = &mut value {
        map.insert(
            "$id".to_owned(),
            serde_json::json!(format!(
                "{}/raw/main/schemas/nccl-log.schema.json",
                env!("CARGO_PKG_REPOSITORY")
            )),
        );
        map.insert(
            "title".to_owned(),
            serde_json::json!("rdmagen nccl-log --format json"),
        );
    }
    let mut text = serde_json::to_string_pretty(&value).expect("schemas serialise");
    text.push('\n');
    text
}
