//! A fast reader for the plain subset of YAML that rdmagen's templates write: block
//! mappings and sequences indented with spaces, plain and double-quoted single-line
//! scalars, single-line flow collections. Verifying 10 000 rendered manifests spends
//! most of its time parsing them back, and a general YAML parser reads ~30 bytes/µs.
//!
//! Anything outside the subset (anchors, tags, block scalars, single quotes,
//! multi-line scalars, comments after content, tabs, duplicate keys, odd indentation)
//! returns None and the caller falls back to the full parser. In debug builds every
//! result is compared with the full parser's, so the whole test suite checks it.

use serde_json::{Map, Value};

use crate::yaml::core_schema::{key_string, plain_scalar};
use crate::yaml::tree::{DOCUMENT_BUDGET, NODE_BUDGET};

/// The documents of `text`, or None when it leaves the subset or may pass the budgets
/// of the located parser (which then reports where). Nodes are bounded rather than
/// counted: a line holds at most three outside flow collections (`- key: value`),
/// and a flow collection at most one a byte.
pub fn parse(text: &str) -> Option<Vec<Value>> {
    if !printable(text) {
        return None;
    }
    let mut docs = Vec::new();
    let mut lines: Vec<Line<'_>> = Vec::new();
    let mut most_nodes = 0;
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw == "---" {
            docs.push(document(&mut lines)?);
            if docs.len() >= DOCUMENT_BUDGET {
                return None;
            }
            continue;
        }
        let content = raw.trim_end_matches(' ');
        let body = content.trim_start_matches(' ');
        if body.is_empty() || body.starts_with('#') {
            continue;
        }
        if body.starts_with(['%', '\t']) || content.contains('\t') || raw.starts_with("...") {
            return None;
        }
        let indent = content.len() - body.len();
        if indent > MAX_INDENT {
            return None;
        }
        most_nodes += 3 + if body.contains(['[', '{']) {
            body.len()
        } else {
            0
        };
        if most_nodes > NODE_BUDGET {
            return None;
        }
        lines.push(match body.strip_prefix('-') {
            Some(rest) if rest.is_empty() || rest.starts_with(' ') => {
                let item = rest.trim_start_matches(' ');
                Line {
                    indent,
                    dash: true,
                    text: item,
                    item_indent: indent + 1 + (rest.len() - item.len()),
                }
            }
            _ => Line {
                indent,
                dash: false,
                text: body,
                item_indent: indent,
            },
        });
    }
    docs.push(document(&mut lines)?);
    Some(docs.into_iter().flatten().collect())
}

/// Nesting the parser rejects ("recursion limit exceeded", at a depth of 256) must
/// not be accepted here, nor recursed into: a block level needs at least one more
/// column of indentation, so these bound the depth to 128 + 1 + 64. rdmagen's output
/// nests about 12 deep. Found by tests/fuzz.
const MAX_INDENT: usize = 128;
const MAX_FLOW_OPEN: usize = 64;

/// YAML limits an implicit key to 1024 characters; the parser rejects a longer one
/// ("mapping values are not allowed in this context"). Bytes are at least
/// characters, so this bound is safe. Found by tests/fuzz.
const MAX_KEY: usize = 1000;

/// Whether every character is one YAML allows in a document (C0 controls but tab and
/// line breaks, DEL, C1 controls but NEL, U+FFFE, U+FFFF and a BOM are errors), and
/// every CR ends a CRLF (the parser reads a lone CR as a line break). Found by
/// tests/fuzz: the fast path accepted `# \0` and a BOM that the parser rejects.
fn printable(text: &str) -> bool {
    let b = text.as_bytes();
    !b.iter().enumerate().any(|(i, &c)| match c {
        b'\t' | b'\n' => false,
        b'\r' => b.get(i + 1) != Some(&b'\n'),
        0..=0x1f | 0x7f => true,
        // U+0080..U+009F are C2 80..C2 9F in UTF-8; U+0085 (NEL) is allowed.
        0xc2 => matches!(b.get(i + 1), Some(&n) if (0x80..=0x9f).contains(&n) && n != 0x85),
        // U+FFFE and U+FFFF are EF BF BE and EF BF BF; a BOM (EF BB BF) is an
        // error inside a document.
        0xef => matches!(
            (b.get(i + 1), b.get(i + 2)),
            (Some(0xbf), Some(0xbe | 0xbf)) | (Some(0xbb), Some(0xbf))
        ),
        _ => false,
    })
}

#[derive(Clone, Copy, Debug)]
struct Line<'a> {
    indent: usize,
    /// A sequence item (`- ...`): `text` is what follows the dash.
    dash: bool,
    text: &'a str,
    /// Column where `text` starts on a dash line.
    item_indent: usize,
}

/// One document from the collected lines (None: empty document, skipped).
fn document(lines: &mut Vec<Line<'_>>) -> Option<Option<Value>> {
    if lines.is_empty() {
        return Some(None);
    }
    let mut pos = 0;
    let indent = lines[0].indent;
    let value = block(lines, &mut pos, indent)?;
    let done = pos == lines.len();
    lines.clear();
    done.then_some(Some(value))
}

fn block(lines: &mut [Line<'_>], pos: &mut usize, indent: usize) -> Option<Value> {
    let first = lines.get(*pos)?;
    if first.indent != indent {
        return None;
    }
    if first.dash {
        sequence(lines, pos, indent)
    } else {
        mapping(lines, pos, indent)
    }
}

fn sequence(lines: &mut [Line<'_>], pos: &mut usize, indent: usize) -> Option<Value> {
    let mut items = Vec::new();
    while let Some(line) = lines.get(*pos).copied() {
        if line.indent != indent || !line.dash {
            break;
        }
        if line.text.is_empty() {
            *pos += 1;
            let next = lines.get(*pos)?.indent;
            if next <= indent {
                return None;
            }
            items.push(block(lines, pos, next)?);
        } else if line.text.starts_with('-')
            && (line.text.len() == 1 || line.text[1..].starts_with(' '))
        {
            return None; // `- - x`: nested sequences on one line
        } else if split_key(line.text).is_some() {
            // `- key: value` opens a mapping at the item's column.
            lines[*pos] = Line {
                indent: line.item_indent,
                dash: false,
                text: line.text,
                item_indent: line.item_indent,
            };
            items.push(mapping(lines, pos, line.item_indent)?);
        } else {
            items.push(scalar(line.text)?);
            *pos += 1;
        }
    }
    Some(Value::Array(items))
}

fn mapping(lines: &mut [Line<'_>], pos: &mut usize, indent: usize) -> Option<Value> {
    let mut map = Map::new();
    while let Some(line) = lines.get(*pos).copied() {
        if line.indent != indent || line.dash {
            break;
        }
        let (key, rest) = split_key(line.text)?;
        *pos += 1;
        let value = if rest.is_empty() {
            match lines.get(*pos) {
                Some(next) if next.indent > indent => {
                    let at = next.indent;
                    block(lines, pos, at)?
                }
                Some(next) if next.indent == indent && next.dash => sequence(lines, pos, indent)?,
                _ => Value::Null,
            }
        } else {
            scalar(rest)?
        };
        if map.insert(key, value).is_some() {
            return None; // duplicate key: the full parser reports it
        }
    }
    Some(Value::Object(map))
}

/// `key: rest` or `key:` → (key, rest).
fn split_key(text: &str) -> Option<(String, &str)> {
    if text.starts_with('"') {
        let (key, len) = double_quoted(text)?;
        if len > MAX_KEY {
            return None;
        }
        let rest = text[len..].strip_prefix(':')?;
        return (rest.is_empty() || rest.starts_with(' '))
            .then(|| (key, rest.trim_start_matches(' ')));
    }
    let end = colon_space(text).or_else(|| text.strip_suffix(':').map(str::len))?;
    if end > MAX_KEY {
        return None;
    }
    let key = text[..end].trim_end_matches(' ');
    if !plain_ok(key) {
        return None;
    }
    let key = key_string(plain_scalar(key));
    Some((key, text[end + 1..].trim_start_matches(' ')))
}

/// A whole value on one line: double-quoted, flow collection, or plain.
fn scalar(text: &str) -> Option<Value> {
    match text.as_bytes().first()? {
        b'"' => {
            let (s, len) = double_quoted(text)?;
            text[len..].is_empty().then_some(Value::String(s))
        }
        b'[' | b'{' => {
            if text.bytes().filter(|b| matches!(b, b'[' | b'{')).count() > MAX_FLOW_OPEN {
                return None;
            }
            let (value, len) = flow(text)?;
            text[len..].is_empty().then_some(value)
        }
        _ => plain_ok(text).then(|| plain_scalar(text)),
    }
}

/// Byte offset of the first `: ` in `text`.
fn colon_space(text: &str) -> Option<usize> {
    text.as_bytes().windows(2).position(|w| w == b": ")
}

/// Plain scalars that can only mean themselves in block context: no leading
/// indicator, no `: ` or ` #`, no trailing `:`, no control characters. One pass.
fn plain_ok(s: &str) -> bool {
    let bytes = s.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    let leading_ok = !b"-?:,[]{}#&*!|>'\"%@`".contains(&first)
        || (first == b'-'
            && bytes
                .get(1)
                .is_some_and(|b| b.is_ascii_digit() || *b == b'.'));
    if !leading_ok || bytes[bytes.len() - 1] == b':' {
        return false;
    }
    let mut prev = 0u8;
    for &b in bytes {
        let control = b < 0x20 || b == 0x7f || (prev == 0xc2 && (0x80..=0x9f).contains(&b));
        if control || (prev == b':' && b == b' ') || (prev == b' ' && b == b'#') {
            return false;
        }
        prev = b;
    }
    true
}

/// A double-quoted scalar at the start of `text`: (value, bytes consumed).
fn double_quoted(text: &str) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut chars = text.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, i + 1)),
            '\\' => {
                let (_, e) = chars.next()?;
                let hex = |n: usize, chars: &mut dyn Iterator<Item = (usize, char)>| {
                    let digits: String = chars.take(n).map(|(_, c)| c).collect();
                    (digits.len() == n).then(|| {
                        u32::from_str_radix(&digits, 16)
                            .ok()
                            .and_then(char::from_u32)
                    })?
                };
                out.push(match e {
                    '"' => '"',
                    '\\' => '\\',
                    '/' => '/',
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'e' => '\u{1b}',
                    'f' => '\u{c}',
                    'v' => '\u{b}',
                    ' ' => ' ',
                    'N' => '\u{85}',
                    '_' => '\u{a0}',
                    'L' => '\u{2028}',
                    'P' => '\u{2029}',
                    'x' => hex(2, &mut chars)?,
                    'u' => hex(4, &mut chars)?,
                    'U' => hex(8, &mut chars)?,
                    _ => return None,
                });
            }
            c if c.is_control() && c != '\t' => return None,
            c => out.push(c),
        }
    }
    None
}

/// A single-line flow collection at the start of `text`: (value, bytes consumed).
fn flow(text: &str) -> Option<(Value, usize)> {
    let (open, close) = if text.starts_with('[') {
        ('[', ']')
    } else {
        ('{', '}')
    };
    let mut pos = 1;
    let mut seq = Vec::new();
    let mut map = Map::new();
    loop {
        pos += text[pos..].len() - text[pos..].trim_start_matches(' ').len();
        if text[pos..].starts_with(close) {
            pos += 1;
            break;
        }
        let (first, len) = flow_item(&text[pos..])?;
        pos += len;
        if open == '{' {
            if len > MAX_KEY {
                return None;
            }
            let key = key_string(first);
            let rest = text[pos..].strip_prefix(':')?;
            pos += 1;
            let skip = rest.len() - rest.trim_start_matches(' ').len();
            if skip == 0 {
                return None;
            }
            pos += skip;
            let (value, len) = flow_item(&text[pos..])?;
            pos += len;
            if map.insert(key, value).is_some() {
                return None;
            }
        } else {
            seq.push(first);
        }
        pos += text[pos..].len() - text[pos..].trim_start_matches(' ').len();
        if let Some(after) = text[pos..].strip_prefix(',') {
            pos += 1;
            if after.trim_start_matches(' ').starts_with(close) {
                return None; // a trailing comma: leave it to the full parser
            }
        } else if !text[pos..].starts_with(close) {
            return None;
        }
    }
    let value = if open == '[' {
        Value::Array(seq)
    } else {
        Value::Object(map)
    };
    Some((value, pos))
}

/// One flow item: quoted, nested collection, or a plain word up to `,` `]` `}` `:`.
fn flow_item(text: &str) -> Option<(Value, usize)> {
    match text.as_bytes().first()? {
        b'"' => double_quoted(text).map(|(s, len)| (Value::String(s), len)),
        b'[' | b'{' => flow(text),
        _ => {
            let end = text.find([',', ']', '}', ':']).unwrap_or(text.len());
            let word = text[..end].trim_end_matches(' ');
            if text[end..].starts_with(':') && !text[end + 1..].starts_with(' ') {
                return None; // `a:b` inside a flow collection
            }
            (plain_ok(word) && !word.contains(['[', '{', '#']))
                .then(|| (plain_scalar(word), word.len()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse;
    use serde_json::json;

    #[test]
    fn the_subset() {
        let text = "a: 1\nb:\n  - x\n  - name: n\n    value: \"v\\n\\u00e9\"\n  -\n    deep: true\nc: {k: v, \"q\": [1, \"2\"]}\nd: []\ne:\nf:\n- 1\n";
        assert_eq!(
            parse(text).unwrap(),
            [
                json!({"a": 1, "b": ["x", {"name": "n", "value": "v\né"}, {"deep": true}], "c": {"k": "v", "q": [1, "2"]}, "d": [], "e": null, "f": [1]})
            ]
        );
        assert_eq!(parse("a: 1\n---\n---\nb: 2\n").unwrap().len(), 2);
    }

    #[test]
    fn leaves_the_rest_to_the_full_parser() {
        for text in [
            "a: &x 1\n",
            "a: *x\n",
            "a: !!str 1\n",
            "a: |\n  x\n",
            "a: 'q'\n",
            "a: b # c\n",
            "a:\n\tb: 1\n",
            "a: 1\na: 2\n",
            "a: [1,\n 2]\n",
            "a: b: c\n",
            "- - x\n",
            "%YAML 1.2\n---\na: 1\n",
            "a: x\n  y\n",
            "a: {b: 1,}\n",
            "? a\n: b\n",
            "a: @x\n",
        ] {
            assert!(parse(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn characters_yaml_forbids_are_left_to_the_parser() {
        for text in [
            "# \0\na: 1\n",
            "a: x\u{1b}y\n",
            "a: \"\u{7f}\"\n",
            "a: x\u{9b}\n",
            "a: x\u{fffe}\n",
            "a: 1\rb: 2\n",
            "a: \u{feff}x\n",
        ] {
            assert!(parse(text).is_none(), "{text:?}");
            assert!(
                crate::yaml::tree_value::parse_values(text).is_err() || text.contains('\r'),
                "{text:?}"
            );
        }
        assert!(parse("a: é\u{a0}x\r\nb: 1\n").is_some());
    }

    #[test]
    fn nesting_and_keys_the_parser_rejects_are_left_to_it() {
        let block: String = (0..300).map(|i| format!("{}k:\n", " ".repeat(i))).collect();
        let flow = format!("a: {}x{}\n", "[".repeat(300), "]".repeat(300));
        let key = "k".repeat(1100);
        for text in [
            block,
            flow,
            format!("{key}: v\n"),
            format!("\"{key}\": v\n"),
            format!("a: {{{key}: v}}\n"),
        ] {
            assert!(parse(&text).is_none());
            assert!(crate::yaml::tree_value::parse_values(&text).is_err());
        }
    }
}
