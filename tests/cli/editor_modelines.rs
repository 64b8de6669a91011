//! Editors see every document (issue 30 item 4): yaml-language-server reads a modeline
//! from the comments that open a document, not the file, so every document of every
//! example and of every README input snippet opens with one naming the schema of its
//! kind; and the real yaml-language-server 1.25 (npm; `.ci/run` installs it and names
//! its executable in RDMAGEN_YAML_LANGUAGE_SERVER), driven over LSP stdio, reports a
//! typo in the second document of a mixed file and nothing in a clean one.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::root;

const MODELINE: &str = "# yaml-language-server: $schema=";

/// A YAML text's documents, each as its first line number (0-based) and its lines.
fn documents(text: &str) -> Vec<(usize, Vec<&str>)> {
    let mut docs = vec![(0, Vec::new())];
    for (n, line) in text.lines().enumerate() {
        if line == "---" || line.starts_with("--- ") {
            docs.push((n + 1, Vec::new()));
        } else {
            docs.last_mut().expect("one document").1.push(line);
        }
    }
    docs
}

/// The schema a document's opening comments name, if any: what yaml-language-server
/// 1.25 reads (`documentHeaderComments` in its modelineUtil), the comment lines before
/// the document's first content.
fn modeline<'a>(lines: &[&'a str]) -> Option<&'a str> {
    lines
        .iter()
        .take_while(|l| l.starts_with('#') || l.trim().is_empty())
        .find_map(|l| l.strip_prefix(MODELINE))
}

/// Checks that every Job or Pool document of `text`, found in `dir`, opens with a
/// modeline naming the published schema of its kind by a path that leads there.
/// Returns how many documents were checked.
fn check_modelines(text: &str, dir: &Path, shown: &str) -> usize {
    let mut checked = 0;
    for (first, lines) in documents(text) {
        let body = lines.join("\n");
        let doc: Value = serde_saphyr::from_str(&body).unwrap_or(Value::Null);
        let kind = match doc.get("kind").and_then(Value::as_str) {
            Some(kind @ ("Job" | "Pool")) => kind,
            _ => continue,
        };
        let line = first + 1;
        let schema = modeline(&lines)
            .unwrap_or_else(|| panic!("{shown}:{line}: a {kind} document opens with no modeline"));
        let want = format!("{}.schema.json", kind.to_lowercase());
        assert!(
            schema.ends_with(&format!("schemas/{want}")),
            "{shown}:{line}: a {kind} document names {schema}, not schemas/{want}"
        );
        let target = dir.join(schema);
        assert_eq!(
            target.canonicalize().ok(),
            root().join("schemas").join(&want).canonicalize().ok(),
            "{shown}:{line}: {schema} does not lead to schemas/{want}"
        );
        checked += 1;
    }
    checked
}

/// Every YAML file under examples/ (the smoke pools too).
fn example_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(root().join("examples"))
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.expect("walkable").into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
        .collect();
    files.sort();
    files
}

/// The README's YAML snippets that hold a Job or a Pool, with their first line.
fn readme_snippets() -> Vec<(usize, String)> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut snippets = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (n, line) in readme.lines().enumerate() {
        match open.take() {
            None if line == "```yaml" => open = Some((n + 2, String::new())),
            None => {}
            Some(snippet) if line == "```" => snippets.push(snippet),
            Some((first, mut body)) => {
                body.push_str(line);
                body.push('\n');
                open = Some((first, body));
            }
        }
    }
    snippets.retain(|(_, body)| body.contains("apiVersion: rdmagen/v1alpha1"));
    snippets
}

#[test]
fn every_example_document_opens_with_a_modeline_of_its_kind() {
    let mut checked = 0;
    for file in example_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let shown = file.strip_prefix(root()).unwrap().display().to_string();
        checked += check_modelines(&text, file.parent().unwrap(), &shown);
    }
    // 80 files, some of two to four documents.
    assert!(checked >= 90, "only {checked} example documents checked");
}

/// The README's snippets name the schemas as a file of examples/<scenario>/ would.
#[test]
fn every_readme_input_snippet_opens_each_document_with_a_modeline_of_its_kind() {
    let snippets = readme_snippets();
    let beside = root().join("examples").join("smoke");
    let mut checked = 0;
    for (first, body) in &snippets {
        checked += check_modelines(body, &beside, &format!("README.md snippet at line {first}"));
    }
    assert!(checked >= 4, "only {checked} README documents checked");
}

/// The checker finds what yaml-language-server would miss: a second document without
/// its own modeline, and one naming the other kind's schema.
#[test]
fn the_modeline_check_refuses_a_document_without_its_own() {
    let dir = root().join("examples").join("smoke");
    let pool = "# yaml-language-server: $schema=../../schemas/pool.schema.json\nkind: Pool\n";
    let only_top = format!("{pool}---\nkind: Job\n");
    let run = |text: String| std::panic::catch_unwind(|| check_modelines(&text, &dir, "t.yaml"));
    let message = |e: Box<dyn std::any::Any + Send>| *e.downcast::<String>().unwrap();
    assert_eq!(
        message(run(only_top).unwrap_err()),
        "t.yaml:4: a Job document opens with no modeline"
    );
    let wrong = format!(
        "{pool}---\n# yaml-language-server: $schema=../../schemas/pool.schema.json\nkind: Job\n"
    );
    assert_eq!(
        message(run(wrong).unwrap_err()),
        "t.yaml:4: a Job document names ../../schemas/pool.schema.json, not schemas/job.schema.json"
    );
    let right = format!(
        "{pool}---\n# yaml-language-server: $schema=../../schemas/job.schema.json\nkind: Job\n"
    );
    assert_eq!(run(right).unwrap(), 2);
}

/// A yaml-language-server over LSP stdio: Content-Length framed JSON-RPC on the
/// child's stdin and stdout, read by a thread so that every wait has a deadline.
struct LanguageServer {
    child: Child,
    stdin: ChildStdin,
    messages: Receiver<Value>,
    next_id: u64,
}

impl LanguageServer {
    fn start(exe: &Path) -> LanguageServer {
        let mut child = Command::new(exe)
            .arg("--stdio")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
        let stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, messages) = channel();
        std::thread::spawn(move || {
            loop {
                let mut length = None;
                loop {
                    let mut header = String::new();
                    if stdout.read_line(&mut header).unwrap_or(0) == 0 {
                        return; // the server ended
                    }
                    let header = header.trim_end();
                    if header.is_empty() {
                        break;
                    }
                    if let Some((name, value)) = header.split_once(':')
                        && name.eq_ignore_ascii_case("content-length")
                    {
                        length = value.trim().parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.expect("a Content-Length header")];
                if stdout.read_exact(&mut body).is_err() {
                    return;
                }
                let message: Value = serde_json::from_slice(&body).expect("JSON-RPC");
                if tx.send(message).is_err() {
                    return;
                }
            }
        });
        let mut server = LanguageServer {
            child,
            stdin,
            messages,
            next_id: 1,
        };
        let id = server.request(
            "initialize",
            json!({"processId": std::process::id(), "rootUri": null, "capabilities": {}}),
        );
        let reply = server.wait_for(|m| m["id"] == id && m.get("method").is_none());
        assert_eq!(
            reply["result"]["serverInfo"]["version"], "1.25.0",
            "{reply}"
        );
        server.notify("initialized", json!({}));
        server
    }

    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message `wanted` accepts, answering the server's own requests
    /// (`workspace/configuration`: no settings, so only modelines name schemas) on the
    /// way; panics after 60 s.
    fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .messages
                .recv_timeout(left)
                .expect("yaml-language-server answered within 60 s");
            if wanted(&message) {
                return message;
            }
            if let (Some(id), Some(_)) = (message.get("id"), message.get("method")) {
                let items = message["params"]["items"].as_array().map_or(0, Vec::len);
                let result = if items > 0 {
                    Value::Array(vec![Value::Null; items])
                } else {
                    Value::Null
                };
                self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
            }
        }
    }

    /// Opens `path` with `text` and returns the diagnostics the server publishes.
    fn diagnostics(&mut self, path: &Path, text: &str) -> Vec<Value> {
        let uri = format!("file://{}", path.display());
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
        );
        let published = self.wait_for(|m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        });
        published["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

impl Drop for LanguageServer {
    fn drop(&mut self) {
        // Ending the test's own child; a kill error means it has already gone.
        if let Err(e) = self.child.kill() {
            eprintln!("yaml-language-server: {e}");
        }
        if let Err(e) = self.child.wait() {
            eprintln!("yaml-language-server: {e}");
        }
    }
}

fn language_server() -> Option<PathBuf> {
    let Some(exe) = std::env::var_os("RDMAGEN_YAML_LANGUAGE_SERVER") else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true and no yaml-language-server: .ci/run installs it (RDMAGEN_YAML_LANGUAGE_SERVER)"
        );
        eprintln!("skipped: no yaml-language-server (set RDMAGEN_YAML_LANGUAGE_SERVER)");
        return None;
    };
    Some(PathBuf::from(exe))
}

const POOL: &str = "\
apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: a100-roce}
spec:
  platform: generic
  gpu: {resource: nvidia.com/gpu, perNode: 8}
  network: {fabric: tcp}
";

const JOB: &str = "\
apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {name: swin}
spec:
  pool: a100-roce
  image: registry.example.com/swin:v2
  nodes: 2
  gpusPerNode: 8
  script: main.py
";

/// A Pool + Job file whose Job says `gpusPerNod`: with a modeline per document the
/// server reports the key, on its line in the second document, and nothing else; with
/// one modeline at the top (what the examples had) it reports nothing at all, which is
/// why each document carries its own. A clean mixed file, every example file and every
/// README snippet get no diagnostic.
#[test]
fn yaml_language_server_checks_every_document() {
    let Some(exe) = language_server() else { return };
    // The schemas by a relative path, as the examples name them: a file:// URI.
    let beside = root().join("examples").join("smoke");
    let pool_line = format!("{MODELINE}../../schemas/pool.schema.json\n");
    let job_line = format!("{MODELINE}../../schemas/job.schema.json\n");
    let typo = JOB.replace("gpusPerNode:", "gpusPerNod:");
    let mut server = LanguageServer::start(&exe);

    let mixed = format!("{pool_line}{POOL}---\n{job_line}{typo}");
    let found = server.diagnostics(&beside.join("mixed-typo.yaml"), &mixed);
    let typo_line = mixed
        .lines()
        .position(|l| l.contains("gpusPerNod:"))
        .unwrap();
    let second = mixed.lines().position(|l| l == "---").unwrap();
    assert!(!found.is_empty(), "no diagnostic for the typo");
    for diagnostic in &found {
        let line = diagnostic["range"]["start"]["line"].as_u64().unwrap() as usize;
        assert!(
            line > second,
            "a diagnostic in the first document: {diagnostic}"
        );
        assert_eq!(
            diagnostic["data"]["schemaUri"][0],
            format!(
                "file://{}",
                root().join("schemas/job.schema.json").display()
            ),
            "{diagnostic}"
        );
    }
    let on_typo: Vec<&Value> = found
        .iter()
        .filter(|d| d["range"]["start"]["line"] == typo_line)
        .collect();
    assert_eq!(on_typo.len(), 1, "{found:?}");
    assert_eq!(on_typo[0]["message"], "Property gpusPerNod is not allowed.");
    assert_eq!(on_typo[0]["severity"], 1, "an error");

    let top_only = format!("{pool_line}{POOL}---\n{typo}");
    let found = server.diagnostics(&beside.join("top-only.yaml"), &top_only);
    assert_eq!(
        found,
        Vec::<Value>::new(),
        "one modeline checks the first document only"
    );

    let clean = format!("{pool_line}{POOL}---\n{job_line}{JOB}");
    let found = server.diagnostics(&beside.join("mixed-clean.yaml"), &clean);
    assert_eq!(found, Vec::<Value>::new());

    for file in example_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            server.diagnostics(&file, &text),
            Vec::<Value>::new(),
            "{}",
            file.display()
        );
    }
    // Whole documents only: the snippet that shows the modelines elides its fields.
    for (first, body) in readme_snippets()
        .into_iter()
        .filter(|(_, b)| !b.contains("# ..."))
    {
        let path = beside.join(format!("readme-{first}.yaml"));
        assert_eq!(
            server.diagnostics(&path, &body),
            Vec::<Value>::new(),
            "README.md:{first}"
        );
    }
}
