//! The crate's layers, as README.md's "Layout" table writes them down, are the layers
//! the code has: a module imports only from lower layers, and no group of files inside
//! a module imports itself in a circle.
//!
//! Imports are read from the source text: `use` trees and inline `crate::`/`super::`
//! paths, resolved to the file that defines what they name (through `pub use`
//! re-exports), and a parent module's bare references to its own children. Unit tests
//! (`#[cfg(test)]`, always the end of a file here) may drive code from any layer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::root;

type Module = Vec<String>;

struct Crate {
    /// Each module (one file) and its source, comments removed.
    files: BTreeMap<Module, String>,
    /// Per module: name re-exported with `pub use` → the module that defines it.
    reexports: BTreeMap<Module, BTreeMap<String, Module>>,
}

impl Crate {
    fn read(src: &Path) -> Crate {
        let mut files = BTreeMap::new();
        for entry in walkdir::WalkDir::new(src) {
            let entry = entry.unwrap();
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(src).unwrap().with_extension("");
            let mut module: Module = rel
                .components()
                .map(|c| c.as_os_str().to_str().unwrap().to_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod") {
                module.pop();
            }
            if module == ["lib"] || module == ["main"] {
                continue;
            }
            let text = std::fs::read_to_string(path).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            files.insert(module, strip_comments(code));
        }
        let mut krate = Crate {
            files,
            reexports: BTreeMap::new(),
        };
        let mut reexports = BTreeMap::new();
        for (module, text) in &krate.files {
            let mut names = BTreeMap::new();
            for tree in use_trees(text, true) {
                for path in expand(&tree) {
                    let (path, alias) = split_alias(path);
                    let Some(name) = alias.or_else(|| path.last().cloned()) else {
                        continue;
                    };
                    if let Some(target) = krate.resolve_plain(module, &path) {
                        names.insert(name, target);
                    }
                }
            }
            reexports.insert(module.clone(), names);
        }
        krate.reexports = reexports;
        krate
    }

    /// The module a path names, by the longest prefix that is a module file; no
    /// re-export lookup. Relative paths start at `module`'s children.
    fn resolve_plain(&self, module: &Module, path: &[String]) -> Option<Module> {
        let (mut base, rest) = match path.first().map(String::as_str) {
            Some("crate") => (Vec::new(), &path[1..]),
            Some("self") => (module.clone(), &path[1..]),
            Some("super") => {
                let mut base = module.clone();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                (base, rest)
            }
            Some(first) => {
                let mut child = module.clone();
                child.push(first.to_owned());
                if !self.files.contains_key(&child) {
                    return None;
                }
                (module.clone(), path)
            }
            None => return None,
        };
        let mut best = None;
        for segment in rest {
            base.push(segment.clone());
            if self.files.contains_key(&base) {
                best = Some(base.clone());
            } else {
                break;
            }
        }
        best
    }

    /// Like [`Crate::resolve_plain`], then through the module's `pub use` re-exports.
    fn resolve(&self, module: &Module, path: &[String]) -> Option<Module> {
        let mut target = self.resolve_plain(module, path)?;
        let consumed = path
            .iter()
            .position(|s| *s == target[target.len() - 1])
            .map_or(path.len(), |i| i + 1);
        let mut seen = 0;
        let mut next = path.get(consumed).cloned();
        while let Some(name) = next.take() {
            match self.reexports.get(&target).and_then(|r| r.get(&name)) {
                Some(found) if *found != target && seen < 8 => {
                    target = found.clone();
                    seen += 1;
                    next = Some(name);
                }
                _ => break,
            }
        }
        Some(target)
    }

    /// Every module each module imports (itself excluded; a parent's `mod` and `pub
    /// use` lines are declarations, not imports).
    fn imports(&self) -> BTreeMap<Module, BTreeSet<Module>> {
        let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
        for (module, text) in &self.files {
            let out = edges.entry(module.clone()).or_default();
            for tree in use_trees(text, false) {
                for path in expand(&tree) {
                    let (path, _) = split_alias(path);
                    out.extend(self.resolve(module, &path));
                }
            }
            for path in inline_paths(&without_reexports(text)) {
                let relative = !matches!(path[0].as_str(), "crate" | "super" | "self");
                if relative && path.len() < 2 {
                    continue;
                }
                out.extend(self.resolve(module, &path));
            }
            out.remove(module);
        }
        edges
    }
}

/// Source without `//` comments (doc comments name modules in prose).
fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The trees of `use` items; `reexports` picks `pub use` lines only, otherwise
/// everything but them.
fn use_trees(text: &str, reexports: bool) -> Vec<String> {
    let mut trees = Vec::new();
    let mut rest = text;
    while let Some(i) = find_word(rest, "use ") {
        let before = rest[..i].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')');
        let after = &rest[i + 4..];
        let Some(end) = after.find(';') else { break };
        if public == reexports {
            let words = after[..end]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            trees.push(words.replace(" as ", ALIAS).replace(' ', ""));
        }
        rest = &after[end..];
    }
    trees
}

/// The text without its `pub use` items, which [`use_trees`] reads apart.
fn without_reexports(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = find_word(rest, "pub use ") {
        out.push_str(&rest[..i]);
        rest = rest[i..].split_once(';').map_or("", |(_, after)| after);
    }
    out.push_str(rest);
    out
}

fn find_word(text: &str, word: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(word) {
        let at = from + i;
        let ok = text[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if ok {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// `a::{b, c::{d as e}}` → `a::b`, `a::c::d as e`.
fn expand(tree: &str) -> Vec<Vec<String>> {
    fn split_top(text: &str) -> Vec<&str> {
        let (mut depth, mut start, mut parts) = (0, 0, Vec::new());
        for (i, c) in text.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&text[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&text[start..]);
        parts.into_iter().filter(|p| !p.is_empty()).collect()
    }
    fn walk(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
        for part in split_top(tree) {
            if let Some(open) = part.find('{') {
                let head = part[..open].trim_end_matches("::");
                let mut next = prefix.to_vec();
                next.extend(head.split("::").filter(|s| !s.is_empty()).map(String::from));
                walk(&next, &part[open + 1..part.len() - 1], out);
            } else {
                let mut path = prefix.to_vec();
                path.extend(part.split("::").map(String::from));
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                out.push(path);
            }
        }
    }
    let tree: String = tree.split_whitespace().collect();
    let mut out = Vec::new();
    walk(&[], &tree, &mut out);
    out
}

/// Marks `as` in a use tree whose whitespace was removed.
const ALIAS: &str = "@as@";

/// `x as y` → (`x`, `y`).
fn split_alias(mut path: Vec<String>) -> (Vec<String>, Option<String>) {
    let Some(last) = path.pop() else {
        return (path, None);
    };
    match last.split_once(ALIAS) {
        Some((name, alias)) => {
            path.push(name.to_owned());
            (path, Some(alias.to_owned()))
        }
        None => {
            path.push(last);
            (path, None)
        }
    }
}

/// Paths written inline: `crate::a::b`, `super::x`, `child::item`.
fn inline_paths(text: &str) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let starts = (c.is_ascii_alphabetic() || c == b'_')
            && (i == 0
                || !(bytes[i - 1].is_ascii_alphanumeric()
                    || bytes[i - 1] == b'_'
                    || bytes[i - 1] == b':'));
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        let mut segments = Vec::new();
        loop {
            let start = j;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            segments.push(text[start..j].to_owned());
            if text[j..].starts_with("::")
                && text[j + 2..]
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            {
                j += 2;
            } else {
                break;
            }
        }
        if segments.len() > 1 {
            paths.push(segments);
        }
        i = j.max(i + 1);
    }
    paths
}

/// The README's layer table: `| N | `a`, `b` | ... |` rows under "## Layout".
fn readme_layers() -> BTreeMap<String, usize> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let layout = readme
        .split("\n## Layout")
        .nth(1)
        .expect("README.md has a Layout section");
    let mut layers = BTreeMap::new();
    for line in layout.lines().take_while(|l| !l.starts_with("## ")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(layer) = cells.get(1).and_then(|c| c.parse::<usize>().ok()) else {
            continue;
        };
        for name in cells[2].split(',') {
            let name = name.trim().trim_matches('`').trim_end_matches('/');
            let name = name.trim_end_matches(".rs");
            layers.insert(name.to_owned(), layer);
        }
    }
    assert!(
        !layers.is_empty(),
        "README.md's Layout section has no layer table"
    );
    layers
}

#[test]
fn modules_import_only_from_lower_layers() {
    let krate = Crate::read(&root().join("src"));
    let layers = readme_layers();
    let top: BTreeSet<&String> = krate.files.keys().map(|m| &m[0]).collect();
    let listed: BTreeSet<&String> = layers.keys().collect();
    assert_eq!(
        top, listed,
        "README.md's layer table must list exactly the crate's top-level modules"
    );
    let mut wrong = Vec::new();
    for (from, targets) in krate.imports() {
        for to in targets {
            if from[0] != to[0] && layers[&from[0]] <= layers[&to[0]] {
                wrong.push(format!(
                    "{} (layer {}) imports {} (layer {})",
                    from.join("::"),
                    layers[&from[0]],
                    to.join("::"),
                    layers[&to[0]]
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_files_import_each_other_in_a_circle() {
    let krate = Crate::read(&root().join("src"));
    let edges = krate.imports();
    let cycles = cycles(&edges);
    assert!(
        cycles.is_empty(),
        "files that import each other in a circle:\n{}",
        cycles
            .iter()
            .map(|c| c
                .iter()
                .map(|m| m.join("::"))
                .collect::<Vec<_>>()
                .join(" → "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Strongly connected components with more than one module (Tarjan).
fn cycles(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    struct State<'a> {
        edges: &'a BTreeMap<Module, BTreeSet<Module>>,
        index: BTreeMap<&'a Module, usize>,
        low: BTreeMap<&'a Module, usize>,
        stack: Vec<&'a Module>,
        on_stack: BTreeSet<&'a Module>,
        found: Vec<Vec<Module>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a Module) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.edges.get(v).into_iter().flatten() {
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.clone());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut state = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !state.index.contains_key(v) {
            visit(&mut state, v);
        }
    }
    state.found
}

#[test]
fn the_import_reader_sees_what_rust_sees() {
    assert_eq!(
        expand("crate::a::{self, b::{C, D}, e}"),
        [
            vec!["crate", "a"],
            vec!["crate", "a", "b", "C"],
            vec!["crate", "a", "b", "D"],
            vec!["crate", "a", "e"]
        ]
    );
    assert_eq!(
        inline_paths("let x = crate::plan::resolve(y); z::w"),
        [vec!["crate", "plan", "resolve"], vec!["z", "w"]]
    );
    let mut edges = BTreeMap::new();
    let m = |s: &str| vec![s.to_owned()];
    edges.insert(m("a"), BTreeSet::from([m("b")]));
    edges.insert(m("b"), BTreeSet::from([m("c")]));
    edges.insert(m("c"), BTreeSet::from([m("a")]));
    edges.insert(m("d"), BTreeSet::from([m("a")]));
    assert_eq!(cycles(&edges), [vec![m("a"), m("b"), m("c")]]);
}
