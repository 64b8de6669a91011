//! A YAML document as a tree of nodes that remember where they were written.
//!
//! Typed deserialisation (serde-saphyr) tells us whether a document has the right
//! shape; this tree answers the other question every later diagnostic asks: "where in
//! the file is `spec.env.NCCL_IB_TC`?". It is also where syntax errors and duplicate
//! keys are caught, so they are reported before any typed error.

use std::sync::Arc;

use serde_saphyr::granit_parser::{Event, Parser, ScanError, Span};

use crate::source::Location;

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
    Scalar(String),
    Sequence(Vec<Node>),
    /// Entries in source order; each key keeps its own position.
    Mapping(Vec<(Node, Node)>),
    /// An alias (`*name`); its target is not expanded here.
    Alias,
}

impl Node {
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar(s) => Some(s),
            _ => None,
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

/// A parsed document of a file: its tree and where its text starts and ends.
#[derive(Debug)]
pub struct Document {
    pub file: Arc<str>,
    pub root: Node,
    /// Byte offset of the start of the line holding the document's first node.
    pub start: usize,
    /// Byte offset just past the document's last byte.
    pub end: usize,
    /// Line number (1-based) at `start`.
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
        let segments: Vec<String> = pointer
            .split('/')
            .skip(1)
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect();
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

    /// The key whose mapping value holds the position `(line, column)`: the deepest
    /// mapping that contains it (the root when no key owns it).
    pub fn owner_of_mapping_at(&self, line: usize, column: usize) -> Location {
        let pos = (line, column);
        let mut node = &self.root;
        let mut at = (node.line, node.column);
        while let NodeKind::Mapping(entries) = &node.kind {
            let inner = entries.iter().rev().find(|(_, v)| {
                matches!(v.kind, NodeKind::Mapping(_)) && (v.line, v.column) <= pos && pos < v.end
            });
            match inner {
                Some((k, v)) => {
                    at = (k.line, k.column);
                    node = v;
                }
                None => break,
            }
        }
        self.location(at.0, at.1)
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
    pub duplicate_key: bool,
}

impl SyntaxError {
    /// This error as a finding of `file`: RDG002 for a duplicate key, else RDG001.
    pub fn report(self, file: Arc<str>, findings: &mut crate::check::Findings) {
        use crate::check::Rule;
        let rule = if self.duplicate_key {
            Rule::DuplicateKey
        } else {
            Rule::YamlSyntax
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
    let mut builder = Builder {
        text,
        stack: Vec::new(),
        docs: Vec::new(),
        current: None,
    };
    let mut parser = Parser::new_from_str(text);
    while let Some(event) = parser.next_event() {
        let (event, span) = event.map_err(scan_error)?;
        builder.event(file, event, span)?;
    }
    Ok(builder.docs)
}

fn scan_error(e: ScanError) -> SyntaxError {
    let mark = e.marker();
    SyntaxError {
        line: mark.line(),
        column: mark.col() + 1,
        message: e.info().to_string(),
        duplicate_key: false,
    }
}

enum Open {
    Sequence(Node),
    Mapping(Node, Option<Node>),
}

struct Builder<'t> {
    text: &'t str,
    stack: Vec<Open>,
    docs: Vec<Document>,
    current: Option<Node>,
}

impl Builder<'_> {
    fn event(&mut self, file: &Arc<str>, event: Event<'_>, span: Span) -> Result<(), SyntaxError> {
        let line = span.start.line();
        let column = span.start.col() + 1;
        let blank = |kind| Node {
            line,
            column,
            end: (line, column),
            kind,
        };
        match event {
            // An absent value (`key:` or an empty document) is an empty scalar.
            Event::Scalar(..) if span.start.index() == span.end.index() => {
                self.push(blank(NodeKind::Scalar(String::new())))?;
            }
            Event::Scalar(value, ..) => self.push(blank(NodeKind::Scalar(value.into_owned())))?,
            Event::Alias(..) => self.push(blank(NodeKind::Alias))?,
            Event::SequenceStart(..) => self
                .stack
                .push(Open::Sequence(blank(NodeKind::Sequence(Vec::new())))),
            Event::MappingStart(..) => self
                .stack
                .push(Open::Mapping(blank(NodeKind::Mapping(Vec::new())), None)),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(open) = self.stack.pop() {
                    let mut node = match open {
                        Open::Sequence(n) | Open::Mapping(n, _) => n,
                    };
                    node.end = (line, column);
                    self.push(node)?;
                }
            }
            Event::DocumentEnd => {
                let root = self.current.take();
                // An empty document (`---` with nothing after it) is skipped.
                if let Some(root) = root.filter(|r| r.as_str() != Some("")) {
                    let end = span.end.byte_offset().unwrap_or(self.text.len());
                    let start = line_start(self.text, &root);
                    self.docs.push(Document {
                        file: file.clone(),
                        first_line: root.line,
                        root,
                        start,
                        end: end.max(start),
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn push(&mut self, node: Node) -> Result<(), SyntaxError> {
        match self.stack.last_mut() {
            None => self.current = Some(node),
            Some(Open::Sequence(seq)) => {
                if let NodeKind::Sequence(items) = &mut seq.kind {
                    items.push(node);
                }
            }
            Some(Open::Mapping(map, pending)) => match pending.take() {
                None => *pending = Some(node),
                Some(key) => {
                    if let NodeKind::Mapping(entries) = &mut map.kind {
                        if let Some(name) = key.as_str()
                            && entries.iter().any(|(k, _)| k.as_str() == Some(name))
                        {
                            return Err(SyntaxError {
                                line: key.line,
                                column: key.column,
                                message: format!("duplicate key `{name}`"),
                                duplicate_key: true,
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

/// Byte offset of the start of the line where `node` begins.
fn line_start(text: &str, node: &Node) -> usize {
    let mut offset = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if i + 1 == node.line {
            return offset;
        }
        offset += line.len();
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Document>, SyntaxError> {
        parse_documents(&Arc::from("t.yaml"), text)
    }

    #[test]
    fn locates_keys_items_and_missing_paths() {
        let docs = parse("a: 1\n---\nspec:\n  env:\n    X: y\n  list: [p, q]\n").unwrap();
        assert_eq!(docs.len(), 2);
        let d = &docs[1];
        assert_eq!(d.first_line, 3);
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
        assert_eq!(&"a: 1\n---\nspec:\n"[d.start..d.start + 5], "spec:");
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
    fn owner_of_mapping_is_the_deepest_enclosing_key() {
        let docs = parse("a: 1\nspec:\n  x: 1\n  inner:\n    y: 2\n  z: 3\n").unwrap();
        let at = |l, c| {
            let loc = docs[0].owner_of_mapping_at(l, c);
            (loc.line, loc.column)
        };
        assert_eq!(at(6, 3), (2, 1));
        assert_eq!(at(5, 5), (4, 3));
        assert_eq!(at(1, 1), (1, 1));
    }

    #[test]
    fn duplicate_keys_are_syntax_errors_with_position() {
        let e = parse("spec:\n  a: 1\n  a: 2\n").unwrap_err();
        assert!(e.duplicate_key);
        assert_eq!((e.line, e.column), (3, 3));
        assert!(e.message.contains("`a`"));
    }

    #[test]
    fn scan_errors_carry_position() {
        let e = parse("a: [1, 2\nb: c\n").unwrap_err();
        assert!(!e.duplicate_key);
        assert!(e.line >= 1);
    }

    #[test]
    fn empty_documents_are_skipped() {
        assert_eq!(parse("---\n---\na: 1\n---\n").unwrap().len(), 1);
        assert!(parse("").unwrap().is_empty());
    }
}
