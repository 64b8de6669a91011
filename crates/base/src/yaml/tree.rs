//! A YAML document as a tree of nodes that remember where they were written.
//!
//! Typed deserialisation (serde-saphyr) tells us whether a document has the right
//! shape; this tree answers the other question every later diagnostic asks: "where in
//! the file is `spec.env.NCCL_IB_TC`?". It is also where syntax errors and duplicate
//! keys are caught, so they are reported before any typed error.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle, ScanError, Span};

use crate::diagnostics::source::Location;

/// One YAML node with the position of its first character and, for collections,
/// of the event that closes it.
#[derive(Clone, Debug)]
pub struct Node {
    pub line: usize,
    pub column: usize,
    pub end: (usize, usize),
    pub kind: NodeKind,
}

#[derive(Clone, Debug)]
pub enum NodeKind {
    /// `plain` when unquoted and untagged: only then can it be a number, bool or null.
    Scalar {
        text: String,
        plain: bool,
    },
    Sequence(Vec<Node>),
    /// Entries in source order; each key keeps its own position.
    Mapping(Vec<(Node, Node)>),
}

impl Node {
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// How many nodes this subtree holds (for the alias-expansion budget).
    fn size(&self) -> usize {
        match &self.kind {
            NodeKind::Scalar { .. } => 1,
            NodeKind::Sequence(items) => 1 + items.iter().map(Node::size).sum::<usize>(),
            NodeKind::Mapping(entries) => {
                1 + entries
                    .iter()
                    .map(|(k, v)| k.size() + v.size())
                    .sum::<usize>()
            }
        }
    }

    /// The value under `key` when this node is a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    fn entry(&self, key: &str) -> Option<(&Node, &Node)> {
        match &self.kind {
            NodeKind::Mapping(entries) => entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(k, v)| (k, v)),
            _ => None,
        }
    }
}

/// One step of a path into a document.
#[derive(Clone, Copy, Debug)]
pub enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// A parsed document of a file: its tree, the file it came from, and where in that
/// file's text it is written.
#[derive(Clone, Debug)]
pub struct Document {
    pub file: Arc<str>,
    pub root: Node,
    /// None when the parser gave no byte offsets.
    pub span: Option<DocumentSpan>,
}

/// Where a document is written in its file's text: from the start of the line of its
/// `---` (the file's start for the first document) to where the next one begins.
/// [`parse_span`] reads it again from its bytes alone, with the file's lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentSpan {
    pub bytes: std::ops::Range<usize>,
    /// The file's line (from 1) the span starts on.
    pub first_line: usize,
}

impl Document {
    /// Where `path` is written: the key of a mapping entry, the item of a sequence.
    /// A path that does not exist resolves to its deepest existing ancestor, so a
    /// missing field is reported at the mapping that should hold it.
    pub fn locate(&self, path: &[Seg<'_>]) -> Location {
        let mut node = &self.root;
        let mut at = (node.line, node.column);
        for seg in path {
            let next = match (*seg, &node.kind) {
                (Seg::Key(key), NodeKind::Mapping(_)) => node.entry(key).map(|(k, v)| {
                    at = (k.line, k.column);
                    v
                }),
                (Seg::Index(i), NodeKind::Sequence(items)) => items.get(i).inspect(|item| {
                    at = (item.line, item.column);
                }),
                _ => None,
            };
            match next {
                Some(n) => node = n,
                None => break,
            }
        }
        self.location(at.0, at.1)
    }

    /// Where the JSON Pointer `pointer` (as jsonschema reports instance paths) is
    /// written; like [`Document::locate`], a missing tail resolves to its ancestor.
    pub fn locate_pointer(&self, pointer: &str) -> Location {
        let segments: Vec<_> = crate::diagnostics::pointer::segments(pointer).collect();
        let mut path = Vec::with_capacity(segments.len());
        let mut node = Some(&self.root);
        for seg in &segments {
            let step = match node.map(|n| &n.kind) {
                Some(NodeKind::Sequence(items)) => match seg.parse::<usize>() {
                    Ok(i) => {
                        node = items.get(i);
                        Seg::Index(i)
                    }
                    Err(_) => break,
                },
                _ => {
                    node = node.and_then(|n| n.get(seg));
                    Seg::Key(seg)
                }
            };
            path.push(step);
        }
        self.locate(&path)
    }

    /// Where the first scalar (in source order) that reads `text` is written: a
    /// mapping key only, with `keys_only`, else a key or a value. For a rendered value
    /// whose path the input does not share: a name rdmagen copied verbatim from the
    /// job or pool is found where it was written.
    pub fn find_scalar(&self, text: &str, keys_only: bool) -> Option<Location> {
        // (node, whether it is a key); a stack rather than recursion: a document may
        // nest deeply.
        let mut stack = vec![(&self.root, false)];
        while let Some((node, is_key)) = stack.pop() {
            match &node.kind {
                NodeKind::Scalar { text: t, .. } if t == text && (is_key || !keys_only) => {
                    return Some(self.location(node.line, node.column));
                }
                NodeKind::Scalar { .. } => {}
                NodeKind::Sequence(items) => stack.extend(items.iter().rev().map(|i| (i, false))),
                NodeKind::Mapping(entries) => {
                    stack.extend(
                        entries
                            .iter()
                            .rev()
                            .flat_map(|(k, v)| [(v, false), (k, true)]),
                    );
                }
            }
        }
        None
    }

    /// Where `key` is written as a key of a mapping that is itself the value of a key
    /// `parent` (a label `key` under some `labels:`), first in document order.
    pub fn find_key_under(&self, parent: &str, key: &str) -> Option<Location> {
        // (node, the text of the key whose value it is); a stack, as in find_scalar.
        let mut stack: Vec<(&Node, Option<&str>)> = vec![(&self.root, None)];
        while let Some((node, under)) = stack.pop() {
            match &node.kind {
                NodeKind::Scalar { .. } => {}
                NodeKind::Sequence(items) => stack.extend(items.iter().rev().map(|i| (i, None))),
                NodeKind::Mapping(entries) => {
                    for (k, _) in entries.iter() {
                        if let NodeKind::Scalar { text, .. } = &k.kind
                            && under == Some(parent)
                            && text == key
                        {
                            return Some(self.location(k.line, k.column));
                        }
                    }
                    stack.extend(entries.iter().rev().map(|(k, v)| {
                        let name = match &k.kind {
                            NodeKind::Scalar { text, .. } => Some(text.as_str()),
                            _ => None,
                        };
                        (v, name)
                    }));
                }
            }
        }
        None
    }

    pub fn location(&self, line: usize, column: usize) -> Location {
        Location {
            file: self.file.clone(),
            line,
            column,
        }
    }
}

/// Why a file could not be read as YAML.
#[derive(Debug)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub kind: SyntaxErrorKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyntaxErrorKind {
    /// Not YAML, or an alias past its budget.
    Syntax,
    DuplicateKey,
    /// More documents or nodes than [`DOCUMENT_BUDGET`] or [`NODE_BUDGET`].
    OverBudget,
}

impl SyntaxError {
    /// This error as a finding of `file`: RDG002 for a duplicate key, RDG176 for a
    /// file over its budget, else RDG001.
    pub fn report(self, file: Arc<str>, findings: &mut crate::diagnostics::Findings) {
        use crate::diagnostics::Rule;
        let rule = match self.kind {
            SyntaxErrorKind::Syntax => Rule::YamlSyntax,
            SyntaxErrorKind::DuplicateKey => Rule::DuplicateKey,
            SyntaxErrorKind::OverBudget => Rule::YamlBudget,
        };
        let at = Location {
            file,
            line: self.line,
            column: self.column,
        };
        findings.at(rule, self.message, at);
    }
}

/// Parse every document of `text`. Empty documents (a trailing `---`) are skipped.
pub fn parse_documents(file: &Arc<str>, text: &str) -> Result<Vec<Document>, SyntaxError> {
    let mut docs = Vec::new();
    each_document(file, text, |doc| docs.push(doc))?;
    Ok(docs)
}

/// Hand each document of `text` to `each` as soon as it is read, so that a caller
/// that needs only what it finds in a document holds one at a time. On an error,
/// the documents before it have been handed over; empty ones are skipped.
pub fn each_document(
    file: &Arc<str>,
    text: &str,
    each: impl FnMut(Document),
) -> Result<(), SyntaxError> {
    each_document_from(file, text, 1, each).map(|_| ())
}

/// The documents of `text`, the bytes of the [`DocumentSpan`] `span` of `file` alone
/// (as read again from the file): each node keeps the line, and each document the
/// span, that the whole file has it at.
pub fn parse_span(
    file: &Arc<str>,
    text: &str,
    span: &DocumentSpan,
) -> Result<Vec<Document>, SyntaxError> {
    let mut docs = Vec::new();
    each_in_span(file, text, span, |doc| docs.push(doc))?;
    Ok(docs)
}

/// [`each_document`] over the [`DocumentSpan`] `span` of `text` alone (a piece of a
/// file that [`pieces`] cut), each document with its lines and span in the whole
/// file; with what it counted against the file's budgets.
pub fn each_document_at(
    file: &Arc<str>,
    text: &str,
    span: &DocumentSpan,
    each: impl FnMut(Document),
) -> Result<Counted, SyntaxError> {
    let slice = text.get(span.bytes.clone()).ok_or_else(|| SyntaxError {
        line: span.first_line,
        column: 1,
        message: "the document's span is not in the text".to_owned(),
        kind: SyntaxErrorKind::Syntax,
    })?;
    each_in_span(file, slice, span, each)
}

/// The documents of `slice`, the text of `span`, placed where `span` is in its file.
fn each_in_span(
    file: &Arc<str>,
    slice: &str,
    span: &DocumentSpan,
    mut each: impl FnMut(Document),
) -> Result<Counted, SyntaxError> {
    each_document_from(file, slice, span.first_line, |mut doc| {
        if let Some(own) = &mut doc.span {
            own.bytes = own.bytes.start + span.bytes.start..own.bytes.end + span.bytes.start;
        }
        each(doc);
    })
}

/// What a read counted against a file's budgets ([`DOCUMENT_BUDGET`],
/// [`NODE_BUDGET`], [`ALIAS_BUDGET`]): pieces of one file read apart are within the
/// file's budgets when their sums are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counted {
    pub documents: usize,
    pub nodes: usize,
    pub expanded: usize,
}

impl std::ops::Add for Counted {
    type Output = Counted;

    fn add(self, other: Counted) -> Counted {
        Counted {
            documents: self.documents + other.documents,
            nodes: self.nodes + other.nodes,
            expanded: self.expanded + other.expanded,
        }
    }
}

impl Counted {
    /// Whether a file that counts this is within every budget.
    pub fn within_budgets(&self) -> bool {
        self.documents <= DOCUMENT_BUDGET
            && self.nodes <= NODE_BUDGET
            && self.expanded <= ALIAS_BUDGET
    }
}

/// `text` cut into pieces of about `size` bytes or more, each from the start of a
/// line that opens a document (`---` alone or before a space or tab) to the next
/// piece, so that the documents of a large file can be read on several cores. A
/// document marker at the start of a line ends whatever came before it outside a
/// quoted or flow scalar (YAML 1.2, 9.1.4), where it is an error, and an error
/// shows in the piece that holds the scalar's start: a caller reads the whole file
/// again when any piece fails (or the sums of their [`Counted`] leave a budget), so
/// what it reports is the whole file's. None when a line begins with `%` (a
/// directive, which applies to the documents after it) or the text is one piece.
pub fn pieces(text: &str, size: usize) -> Option<Vec<DocumentSpan>> {
    // Lines as the parser counts them: other line breaks than `\n` are left to it.
    if text.contains(['\r', '\u{85}', '\u{2028}', '\u{2029}']) {
        return None;
    }
    let mut cuts = vec![(0, 1)];
    let (mut at, mut line) = (0, 1);
    for row in text.split_inclusive('\n') {
        if row.starts_with('%') {
            return None;
        }
        let marker = row
            .strip_prefix("---")
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n']));
        if marker && at >= cuts.last().map_or(0, |c| c.0) + size {
            cuts.push((at, line));
        }
        at += row.len();
        line += 1;
    }
    if cuts.len() < 2 {
        return None;
    }
    let ends = cuts.iter().skip(1).map(|c| c.0).chain([text.len()]);
    Some(
        cuts.iter()
            .zip(ends)
            .map(|(&(from, first_line), to)| DocumentSpan {
                bytes: from..to,
                first_line,
            })
            .collect(),
    )
}

fn each_document_from(
    file: &Arc<str>,
    text: &str,
    first_line: usize,
    mut each: impl FnMut(Document),
) -> Result<Counted, SyntaxError> {
    let mut builder = Builder {
        stack: Vec::new(),
        current: None,
        anchors: HashMap::new(),
        expanded: 0,
        documents: 0,
        nodes: 0,
        key_hasher: RandomState::new(),
        lines_before: first_line - 1,
    };
    let mut parser = Parser::new_from_str(text);
    // Where the document being read starts: the file's start for the first.
    let mut start = Some((0, first_line));
    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(|e| scan_error(e, first_line - 1))?;
        if let Event::DocumentStart(..) = event
            && builder.documents > 0
        {
            start = span.start.byte_offset().map(|at| {
                let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
                (line_start, span.start.line() + first_line - 1)
            });
        }
        let ends = matches!(event, Event::DocumentEnd);
        if let Some(root) = builder.event(event, span)? {
            let end = span.start.byte_offset();
            let span = start.zip(end).map(|((from, first_line), to)| DocumentSpan {
                bytes: from..to,
                first_line,
            });
            each(Document {
                file: file.clone(),
                root,
                span,
            });
        }
        if ends {
            start = None;
        }
    }
    Ok(Counted {
        documents: builder.documents,
        nodes: builder.nodes,
        expanded: builder.expanded,
    })
}

fn scan_error(e: ScanError, lines_before: usize) -> SyntaxError {
    let mark = e.marker();
    SyntaxError {
        line: mark.line() + lines_before,
        column: mark.col() + 1,
        message: e.info().to_string(),
        kind: SyntaxErrorKind::Syntax,
    }
}

/// Nodes an alias may expand to, in all, per file: a guard against alias bombs
/// (`a: &a [*b, *b, ...]` nested), as YAML parsers' budgets are.
const ALIAS_BUDGET: usize = 100_000;

/// Documents one file may hold. Each costs parsing and judging however small it is:
/// 3 700 000 documents of `a: 1` (33 MB, under `--max-file-size`) took 38 s and
/// 2.3 GB in `lint` (issue 22). A `kubectl get -o yaml` dump is one `List` document,
/// and a Helm chart's output holds hundreds. A generated file of inputs can hold one
/// Job per run of a sweep: `bench/run` reads one of 20 000 Jobs. 100 000 leaves room
/// for that five times over, and 100 000 one-line documents, a finding each, take
/// under a second (`bench/hostile`).
pub const DOCUMENT_BUDGET: usize = 100_000;

/// Scalars, sequences and mappings one file may hold, aliases aside (they have their
/// own budget). Manifests take about 10 bytes of YAML a node (`key: value` is two),
/// so the 32 MiB `--max-file-size` of such YAML is about 3 000 000 nodes; a node
/// held in the tree costs about 100 bytes. The budget bounds a file of one-character
/// items (`- a`, `[a,a,…]`), where the size cap alone allows 16 000 000.
pub const NODE_BUDGET: usize = 3_000_000;

enum Open {
    Sequence(Node, usize),
    Mapping(Node, Option<Node>, usize, Option<KeyHashes>),
}

/// The hashes of a mapping's string keys so far, once it holds [`LINEAR_KEYS`]. A new
/// key is compared only with the keys whose hash it shares: comparing it with every
/// key before it cost 25 s for a mapping of 100 000 keys. Hashes, not the keys, so no
/// key is copied.
type KeyHashes = HashSet<u64>;

/// Up to this many keys, a new key is compared with each key before it instead: a
/// manifest's mappings hold a few keys each, and hashing every key (and allocating a
/// set per mapping) was 1.3 % of `validate`'s CPU (perf, 10 000 jobs).
const LINEAR_KEYS: usize = 16;

struct Builder {
    stack: Vec<Open>,
    current: Option<Node>,
    /// Anchored nodes by anchor id, for aliases.
    anchors: HashMap<usize, Node>,
    /// Nodes created by expanding aliases so far.
    expanded: usize,
    /// Documents begun and nodes read so far, for [`DOCUMENT_BUDGET`] and
    /// [`NODE_BUDGET`].
    documents: usize,
    nodes: usize,
    /// Hashes mapping keys for [`KeyHashes`].
    key_hasher: RandomState,
    /// Lines of the file before the text being read ([`parse_span`]).
    lines_before: usize,
}

impl Builder {
    /// Take one event; returns a document's root when the event ends a document.
    fn event(&mut self, event: Event<'_>, span: Span) -> Result<Option<Node>, SyntaxError> {
        let line = span.start.line() + self.lines_before;
        let column = span.start.col() + 1;
        if matches!(
            event,
            Event::Scalar(..) | Event::SequenceStart(..) | Event::MappingStart(..)
        ) {
            self.nodes += 1;
            if self.nodes > NODE_BUDGET {
                return Err(self.over_budget(
                    line,
                    column,
                    format!("this file holds more than {NODE_BUDGET} YAML nodes (scalars, sequences and mappings), the most rdmagen reads from one file; this is the first past that: split the file"),
                ));
            }
        }
        let blank = |kind| Node {
            line,
            column,
            end: (line, column),
            kind,
        };
        match event {
            Event::Scalar(value, style, anchor, tag) => {
                // An absent value (`key:` or an empty document) is an empty plain scalar.
                let text = if span.start.index() == span.end.index() {
                    String::new()
                } else {
                    value.into_owned()
                };
                let plain = style == ScalarStyle::Plain && tag.is_none();
                let node = blank(NodeKind::Scalar { text, plain });
                self.anchor(anchor, &node);
                self.push(node)?;
            }
            Event::Alias(id) => {
                let Some(target) = self.anchors.get(&id) else {
                    return Err(self.error(line, column, "alias to an unknown anchor"));
                };
                self.expanded += target.size();
                if self.expanded > ALIAS_BUDGET {
                    return Err(self.error(line, column, "aliases expand to too many nodes"));
                }
                let mut node = target.clone();
                (node.line, node.column) = (line, column);
                self.push(node)?;
            }
            Event::SequenceStart(_, anchor, _) => self.stack.push(Open::Sequence(
                blank(NodeKind::Sequence(Vec::new())),
                anchor,
            )),
            Event::MappingStart(_, anchor, _) => self.stack.push(Open::Mapping(
                blank(NodeKind::Mapping(Vec::new())),
                None,
                anchor,
                None,
            )),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(open) = self.stack.pop() {
                    let (mut node, anchor) = match open {
                        Open::Sequence(n, a) | Open::Mapping(n, _, a, _) => (n, a),
                    };
                    node.end = (line, column);
                    self.anchor(anchor, &node);
                    self.push(node)?;
                }
            }
            Event::DocumentStart(..) => {
                self.documents += 1;
                if self.documents > DOCUMENT_BUDGET {
                    return Err(self.over_budget(
                        line,
                        column,
                        format!("this file holds more than {DOCUMENT_BUDGET} YAML documents, the most rdmagen reads from one file; this is the first past that: split the file"),
                    ));
                }
            }
            Event::DocumentEnd => {
                let root = self.current.take();
                self.anchors.clear();
                // An empty document (`---` with nothing after it) is skipped.
                return Ok(root.filter(|r| r.as_str() != Some("")));
            }
            _ => {}
        }
        Ok(None)
    }

    fn over_budget(&self, line: usize, column: usize, message: String) -> SyntaxError {
        SyntaxError {
            line,
            column,
            message,
            kind: SyntaxErrorKind::OverBudget,
        }
    }

    fn anchor(&mut self, id: usize, node: &Node) {
        if id != 0 {
            self.anchors.insert(id, node.clone());
        }
    }

    fn error(&self, line: usize, column: usize, message: &str) -> SyntaxError {
        SyntaxError {
            line,
            column,
            message: message.to_owned(),
            kind: SyntaxErrorKind::Syntax,
        }
    }

    fn push(&mut self, node: Node) -> Result<(), SyntaxError> {
        match self.stack.last_mut() {
            None => self.current = Some(node),
            Some(Open::Sequence(seq, _)) => {
                if let NodeKind::Sequence(items) = &mut seq.kind {
                    items.push(node);
                }
            }
            Some(Open::Mapping(map, pending, _, key_hashes)) => match pending.take() {
                None => *pending = Some(node),
                Some(key) => {
                    if let NodeKind::Mapping(entries) = &mut map.kind {
                        if let Some(name) = key.as_str()
                            && written_before(entries, key_hashes, &self.key_hasher, name)
                        {
                            return Err(SyntaxError {
                                line: key.line,
                                column: key.column,
                                message: format!("duplicate key `{name}`"),
                                kind: SyntaxErrorKind::DuplicateKey,
                            });
                        }
                        entries.push((key, node));
                    }
                }
            },
        }
        Ok(())
    }
}

/// Whether `entries` hold a string key `name`, looked for as [`KeyHashes`] and
/// [`LINEAR_KEYS`] say.
fn written_before(
    entries: &[(Node, Node)],
    hashes: &mut Option<KeyHashes>,
    hasher: &RandomState,
    name: &str,
) -> bool {
    let written = |name| entries.iter().any(|(k, _)| k.as_str() == Some(name));
    if entries.len() < LINEAR_KEYS {
        return written(name);
    }
    let hashes = hashes.get_or_insert_with(|| {
        let keys = entries.iter().filter_map(|(k, _)| k.as_str());
        keys.map(|k| hasher.hash_one(k)).collect()
    });
    !hashes.insert(hasher.hash_one(name)) && written(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Document>, SyntaxError> {
        parse_documents(&Arc::from("t.yaml"), text)
    }

    /// Each document read again from its span alone is the same tree, at the same
    /// lines and columns, as read with its file: whatever starts or ends it.
    #[test]
    fn a_document_reads_again_from_its_span_alone() {
        let texts = [
            "a: 1\n---\nspec:\n  env:\n    X: y\n  list: [p, q]\n",
            "# lead\n  a: {b: c}\n--- # marker comment\nx: |\n  text\n\n...\n---\n- 1\n- [2, 3]\n",
            "---\n---\nk: v\n---\n\n---\nlast: one",
            "k: &a [1, 2]\nl: *a\n---\nm: {n: \"--- not a marker\"}\n",
        ];
        for text in texts {
            let docs = parse(text).unwrap();
            assert!(!docs.is_empty());
            for doc in docs {
                let span = doc.span.clone().expect("byte offsets");
                let again =
                    parse_span(&Arc::from("t.yaml"), &text[span.bytes.clone()], &span).unwrap();
                let [one] = again.as_slice() else {
                    panic!("{text:?} {span:?}: {} documents", again.len());
                };
                assert_eq!(
                    format!("{:?}", one.root),
                    format!("{:?}", doc.root),
                    "{text:?}"
                );
                assert_eq!(one.span.as_ref(), Some(&span), "{text:?}");
            }
        }
    }

    /// Read piece by piece, a file is the documents, spans and counts it is read
    /// whole, wherever it is cut.
    #[test]
    fn a_file_read_in_pieces_is_the_file_read_whole() {
        let texts = [
            "a: 1\n---\nspec:\n  env:\n    X: y\n  list: [p, q]\n",
            "# lead\n  a: {b: c}\n--- # marker comment\nx: |\n  text\n\n...\n# between\n---\n- 1\n- [2, 3]\n",
            "---\n---\nk: v\n---\n\n---\nlast: one",
            "k: &a [1, 2]\nl: *a\n---\nm: {n: \"--- not a marker\"}\n---\t\nx: 1\n--- |\ntop\n---\ny: 2\n",
            "---\na: 1\n# trailing\n\n---\nb: 2\n...\n---\nc: 3\n",
        ];
        let file: Arc<str> = Arc::from("t.yaml");
        for text in texts {
            let mut whole = Vec::new();
            let counted = each_document_from(&file, text, 1, |d| whole.push(d)).unwrap();
            for size in [1, 8, 20] {
                let Some(pieces) = pieces(text, size) else {
                    continue;
                };
                let mut docs = Vec::new();
                let mut sum = Counted::default();
                for piece in &pieces {
                    sum = sum + each_document_at(&file, text, piece, |d| docs.push(d)).unwrap();
                }
                assert_eq!(format!("{docs:?}"), format!("{whole:?}"), "{text:?} {size}");
                assert_eq!(sum, counted, "{text:?} {size}");
            }
        }
        assert!(pieces("%YAML 1.2\n---\na: 1\n---\nb: 2\n", 1).is_none());
        assert!(pieces("a: 1\r\n---\r\nb: 2\r\n", 1).is_none());
        assert_eq!(pieces("a: 1\n---\nb: 2\n", 1).map(|p| p.len()), Some(2));
        assert!(pieces("a: 1\n---x\nb: 2\n", 1).is_none());
    }

    /// A marker inside a quoted or flow scalar fails the piece that holds the
    /// scalar's start, so a caller reads the file whole.
    #[test]
    fn a_piece_cut_inside_a_scalar_fails() {
        let file: Arc<str> = Arc::from("t.yaml");
        for text in ["a: \"x\n---\ny\"\n", "a: [x,\n---\n]\n", "a: 'x\n---\n'\n"] {
            let pieces = pieces(text, 1).unwrap();
            let failed = pieces
                .iter()
                .any(|p| each_document_at(&file, text, p, |_| {}).is_err());
            assert!(failed, "{text:?}");
        }
    }

    #[test]
    fn locates_keys_items_and_missing_paths() {
        let docs = parse("a: 1\n---\nspec:\n  env:\n    X: y\n  list: [p, q]\n").unwrap();
        assert_eq!(docs.len(), 2);
        let d = &docs[1];
        let at = |p: &[Seg<'_>]| {
            let l = d.locate(p);
            (l.line, l.column)
        };
        assert_eq!(
            at(&[Seg::Key("spec"), Seg::Key("env"), Seg::Key("X")]),
            (5, 5)
        );
        assert_eq!(
            at(&[Seg::Key("spec"), Seg::Key("list"), Seg::Index(1)]),
            (6, 13)
        );
        assert_eq!(at(&[Seg::Key("spec"), Seg::Key("nope")]), (3, 1));
    }

    #[test]
    fn pointers_resolve_through_maps_and_sequences() {
        let docs =
            parse("spec:\n  volumes:\n    - name: a\n    - name: b\n      x/y: 1\n").unwrap();
        let at = |p: &str| {
            let l = docs[0].locate_pointer(p);
            (l.line, l.column)
        };
        assert_eq!(at("/spec/volumes/1"), (4, 7));
        assert_eq!(at("/spec/volumes/1/x~1y"), (5, 7));
        assert_eq!(at(""), (1, 1));
        assert_eq!(at("/spec/missing/deeper"), (1, 1));
    }

    #[test]
    fn duplicate_keys_are_syntax_errors_with_position() {
        let e = parse("spec:\n  a: 1\n  a: 2\n").unwrap_err();
        assert_eq!(e.kind, SyntaxErrorKind::DuplicateKey);
        assert_eq!((e.line, e.column), (3, 3));
        assert!(e.message.contains("`a`"));
    }

    #[test]
    fn a_duplicate_among_many_keys_is_found_at_its_own_position() {
        let mut text = String::from("labels:\n");
        for i in 0..2_000 {
            text.push_str(&format!("  k{i}: v\n"));
        }
        text.push_str("  k1234: again\n");
        let e = parse(&text).unwrap_err();
        assert_eq!(e.kind, SyntaxErrorKind::DuplicateKey);
        assert_eq!((e.line, e.column), (2_002, 3));
        assert_eq!(e.message, "duplicate key `k1234`");
    }

    /// Below, at and past [`LINEAR_KEYS`] alike: a duplicate of any earlier key is
    /// found where it is written, and distinct keys are none.
    #[test]
    fn duplicates_are_found_whatever_the_size_of_the_mapping() {
        for keys in 1..2 * LINEAR_KEYS + 2 {
            let mut text = String::new();
            for i in 0..keys {
                text.push_str(&format!("k{i}: v\n[x]: y{i}\n"));
            }
            assert!(parse(&text).is_ok(), "{keys} keys");
            for again in 0..keys {
                let e = parse(&format!("{text}k{again}: w\n")).unwrap_err();
                assert_eq!(e.kind, SyntaxErrorKind::DuplicateKey);
                assert_eq!(
                    (e.line, e.column),
                    (2 * keys + 1, 1),
                    "{keys} keys, k{again}"
                );
            }
        }
    }

    #[test]
    fn the_same_key_in_different_mappings_is_no_duplicate() {
        let docs = parse("a: {x: 1, y: 2}\nb: {x: 3, y: 4}\nc: [{x: 5}, {x: 6}]\n").unwrap();
        let b = docs[0].root.get("b").unwrap();
        assert_eq!(b.get("x").and_then(Node::as_str), Some("3"));
    }

    #[test]
    fn scan_errors_carry_position() {
        let e = parse("a: [1, 2\nb: c\n").unwrap_err();
        assert_eq!(e.kind, SyntaxErrorKind::Syntax);
        assert!(e.line >= 1);
    }

    #[test]
    fn aliases_expand_within_a_budget() {
        let docs = parse("base: &b {x: 1}\nuse: *b\n").unwrap();
        assert_eq!(
            docs[0]
                .root
                .get("use")
                .and_then(|n| n.get("x"))
                .and_then(Node::as_str),
            Some("1")
        );
        let bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n";
        assert!(parse(bomb).unwrap_err().message.contains("too many nodes"));
    }

    #[test]
    fn empty_documents_are_skipped() {
        assert_eq!(parse("---\n---\na: 1\n---\n").unwrap().len(), 1);
        assert!(parse("").unwrap().is_empty());
    }
}
