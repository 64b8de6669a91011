//! Issue 25: the real control plane as the oracle, shared by the test binaries that
//! use it (tests/cli/control_plane.rs, tests/operator_env/real.rs). `.ci/controlplane/up` starts etcd
//! and a kube-apiserver built from `k8s.io/kubernetes` (and the training operator from
//! its own module) on loopback; these tests hand every golden object to them. Required
//! in CI; elsewhere skipped, with the reason printed, unless `RDMAGEN_KUBECONFIG` and
//! `RDMAGEN_KUBECTL` name a running one (`source DIR/env` after `up DIR`).
//!
//! The tests share one API server and swap CRD releases on it, so they hold a lock.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A running API server, and the lock that makes this test its only user.
pub struct Cluster {
    kubectl: PathBuf,
    kubeconfig: PathBuf,
    /// Where `up` wrote its certificates and logs.
    dir: PathBuf,
    /// kubectl's discovery cache, private to this run: a cache in ~/.kube from another
    /// API server would map kinds to resources that are not here.
    cache: tempfile::TempDir,
    _lock: MutexGuard<'static, ()>,
}

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// How long one kubectl may take. The slowest call a test makes, a CRD delete that
/// waits for its objects to go, takes a few seconds.
const KUBECTL_DEADLINE: Duration = Duration::from_secs(120);

impl Cluster {
    /// The running control plane, or `None` (after saying why) outside CI.
    pub fn get(test: &str) -> Option<Cluster> {
        let (Some(kubectl), Some(kubeconfig), Some(dir)) = (
            std::env::var_os("RDMAGEN_KUBECTL"),
            std::env::var_os("RDMAGEN_KUBECONFIG"),
            std::env::var_os("RDMAGEN_CONTROL_PLANE_DIR"),
        ) else {
            assert!(
                std::env::var_os("CI").is_none(),
                "{test}: the control plane must run in CI (.ci/controlplane/up)"
            );
            eprintln!(
                "skipped {test}: no control plane; run .ci/controlplane/up DIR and source DIR/env"
            );
            return None;
        };
        let lock = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        Some(Cluster {
            kubectl: kubectl.into(),
            kubeconfig: kubeconfig.into(),
            dir: dir.into(),
            cache: tempfile::tempdir().unwrap(),
            _lock: lock,
        })
    }

    /// Runs kubectl with `args` (and `stdin`); its exit status, stdout and stderr.
    /// A kubectl that has not finished in [`KUBECTL_DEADLINE`] is killed and the test
    /// fails naming it: a wait on the server (a finalizer no controller is left to
    /// remove, a webhook that never answers) must be a red test, never a hung CI run.
    pub fn kubectl(&self, args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
        let mut child = Command::new(&self.kubectl)
            .arg("--kubeconfig")
            .arg(self.kubeconfig())
            .arg("--cache-dir")
            .arg(self.cache.path())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl runs");
        let mut input = child.stdin.take().unwrap();
        let text = stdin.unwrap_or_default().to_owned();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            // A kubectl killed at its deadline closes the pipe; that error is the
            // deadline's, reported below.
            let _ = input.write_all(text.as_bytes());
        });
        let stdout = drain(child.stdout.take().unwrap());
        let stderr = drain(child.stderr.take().unwrap());
        let start = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > KUBECTL_DEADLINE {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "kubectl {} did not finish in {} s; the server's log: {}",
                    args.join(" "),
                    KUBECTL_DEADLINE.as_secs(),
                    self.dir.join("apiserver.log").display()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        writer.join().unwrap();
        let (stdout, stderr) = (stdout.join().unwrap(), stderr.join().unwrap());
        (
            status.success(),
            String::from_utf8_lossy(&stdout).into_owned(),
            String::from_utf8_lossy(&stderr).into_owned(),
        )
    }

    /// Runs kubectl and requires success; its stdout.
    pub fn ok(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, out, err) = self.kubectl(args, stdin);
        assert!(ok, "kubectl {}:\n{err}{out}", args.join(" "));
        out
    }

    /// Makes `files` the CRDs the server serves: each CRD of the same name is deleted
    /// first (an update could leave the old schema serving for a moment), then created,
    /// and the call returns when each is Established and its kind is served.
    pub fn install_crds(&self, files: &[PathBuf]) {
        for file in files {
            let text = std::fs::read_to_string(file).unwrap();
            let crd = &rdmagen::verify::parse(&text).unwrap()[0];
            let name = crd["metadata"]["name"].as_str().unwrap();
            let plural = crd["spec"]["names"]["plural"].as_str().unwrap();
            self.release_finalizers(&format!(
                "{plural}.{}",
                crd["spec"]["group"].as_str().unwrap()
            ));
            self.ok(
                &["delete", "crd", name, "--ignore-not-found", "--wait"],
                None,
            );
            self.ok(&["create", "-f", "-"], Some(&text));
            self.wait_for(&format!("CRD {name} to be served"), || {
                let (ok, out, _) = self.kubectl(
                    &[
                        "get",
                        "crd",
                        name,
                        "-o",
                        "jsonpath={.status.conditions[?(@.type==\"Established\")].status}",
                    ],
                    None,
                );
                ok && out == "True" && self.kubectl(&["get", plural, "-A"], None).0
            });
        }
    }

    /// Takes the finalizers off every object of `resource` (`plural.group`) a test left
    /// behind. A CRD is deleted only once its objects are, and an object keeps a
    /// finalizer until its controller removes it: Trainer v2.1 puts
    /// `trainer.kubeflow.org/resource-in-use` on a runtime while a TrainJob uses it and
    /// takes it off only when it next reconciles the runtime
    /// (T@v2.1.0 pkg/controller/trainingruntime_controller.go:87-91), and Kueue puts
    /// its own on queues, flavors, topologies and Workloads. A test that stops the
    /// controller first, or fails, leaves the finalizer to no one, and the next test's
    /// CRD delete would wait for ever.
    fn release_finalizers(&self, resource: &str) {
        let (served, out, _) = self.kubectl(&["get", resource, "-A", "-o", "json"], None);
        if !served {
            return; // The CRD is not installed yet: nothing can be left.
        }
        let list: Value = serde_json::from_str(&out).unwrap();
        for item in list["items"].as_array().into_iter().flatten() {
            let metadata = &item["metadata"];
            if metadata["finalizers"].as_array().is_none_or(Vec::is_empty) {
                continue;
            }
            let name = metadata["name"].as_str().unwrap();
            let mut args = vec!["patch", resource, name, "--type=merge"];
            if let Some(namespace) = metadata["namespace"].as_str() {
                args.extend(["-n", namespace]);
            }
            args.extend(["-p", r#"{"metadata":{"finalizers":null}}"#]);
            self.ok(&args, None);
        }
    }

    /// Polls `done` every 100 ms for up to 60 s.
    pub fn wait_for(&self, what: &str, mut done: impl FnMut() -> bool) {
        let start = Instant::now();
        while !done() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "timed out waiting for {what}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until exactly `count` objects of `kind` in `namespace` match `selector`,
    /// and returns them; `what` names them (and the logs to read) in a timeout.
    pub fn wait_for_items(
        &self,
        what: &str,
        kind: &str,
        namespace: &str,
        selector: &str,
        count: usize,
    ) -> Vec<Value> {
        let mut items = Vec::new();
        self.wait_for(what, || {
            let out = self.ok(
                &["get", kind, "-n", namespace, "-l", selector, "-o", "json"],
                None,
            );
            let list: Value = serde_json::from_str(&out).unwrap();
            items = list["items"].as_array().unwrap().clone();
            items.len() == count
        });
        items
    }

    /// Creates each namespace (if missing).
    pub fn namespaces<'a>(&self, names: impl IntoIterator<Item = &'a str>) {
        for name in names {
            let doc = serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
            self.ok(
                &["apply", "--server-side", "-f", "-"],
                Some(&doc.to_string()),
            );
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }
}

/// One object of a golden file.
pub struct Golden {
    pub file: String,
    pub doc: Value,
}

impl Golden {
    pub fn kind(&self) -> &str {
        self.doc["kind"].as_str().unwrap_or_default()
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.doc["metadata"]["annotations"][key].as_str()
    }

    pub fn namespace(&self) -> Option<&str> {
        self.doc["metadata"]["namespace"].as_str()
    }

    /// `Kind ns/name`, as a message names the object.
    pub fn id(&self) -> String {
        format!(
            "{} {}/{}",
            self.kind(),
            self.namespace().unwrap_or(""),
            self.doc["metadata"]["name"].as_str().unwrap_or_default()
        )
    }
}

/// Every object of every golden YAML file, in path order.
pub fn golden_objects() -> Vec<Golden> {
    let mut out = Vec::new();
    let golden = root().join("golden");
    for entry in walkdir::WalkDir::new(&golden).sort_by_file_name() {
        let entry = entry.unwrap();
        if !entry.file_type().is_file() || entry.path().extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let file = entry.path().strip_prefix(root()).unwrap();
        for doc in rdmagen::verify::parse(&text).unwrap() {
            out.push(Golden {
                file: file.to_string_lossy().replace('\\', "/"),
                doc,
            });
        }
    }
    out
}

/// The paths of `expected`'s leaves that `actual` lacks or holds with another value:
/// what the API server dropped or changed on the way in. Maps are compared by key,
/// lists by position; `actual` may hold more (defaults, managedFields), and a
/// quantity under `resources` may be written in another form of the same value.
pub fn lost(expected: &Value, actual: &Value, path: &str, out: &mut Vec<String>) {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (key, value) in e {
                let here = format!("{path}/{key}");
                match a.get(key) {
                    Some(found) => lost(value, found, &here, out),
                    None => out.push(here),
                }
            }
        }
        (Value::Array(e), Value::Array(a)) if e.len() == a.len() => {
            for (i, (value, found)) in e.iter().zip(a).enumerate() {
                lost(value, found, &format!("{path}/{i}"), out);
            }
        }
        (e, a) if e == a => {}
        // A pod's resources are Go `resource.Quantity`s, written back in canonical form
        // ("1024Gi" is stored as "1Ti"): the same quantity.
        (Value::String(e), Value::String(a))
            if path.contains("/resources/")
                && rdmagen::kubernetes::quantity::value(e).is_some()
                && rdmagen::kubernetes::quantity::value(e)
                    == rdmagen::kubernetes::quantity::value(a) => {}
        (e, a) => out.push(format!("{path}: {e} became {a}")),
    }
}

/// A controller started for a test; stopped, and the webhook configurations it was
/// registered with removed, when dropped.
pub struct Controller<'a> {
    cluster: &'a Cluster,
    child: std::process::Child,
    webhooks: Vec<(String, String)>,
}

impl Drop for Controller<'_> {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for (kind, name) in &self.webhooks {
            let _ = self
                .cluster
                .kubectl(&["delete", kind, name, "--ignore-not-found"], None);
        }
    }
}

impl Cluster {
    /// Starts `binary` with `args` (and `env`) against this API server, its output in
    /// `DIR/<name>.log`.
    pub fn start(
        &self,
        name: &str,
        binary: &Path,
        args: &[String],
        env: &[(&str, &str)],
    ) -> Controller<'_> {
        let log = std::fs::File::create(self.dir.join(format!("{name}.log"))).unwrap();
        let child = Command::new(binary)
            .args(args)
            .envs(env.iter().copied())
            .env("KUBECONFIG", &self.kubeconfig)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{name} ({}) starts: {e}", binary.display()));
        Controller {
            cluster: self,
            child,
            webhooks: Vec::new(),
        }
    }

    /// The `webhook-ca.crt` and `webhook.{crt,key}` pair `up` made (the certificate
    /// names 127.0.0.1), written as a controller's webhook server reads them from its
    /// certificate directory.
    pub fn webhook_certificates(&self, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        for (file, from) in [
            ("ca.crt", "webhook-ca.crt"),
            ("tls.crt", "webhook.crt"),
            ("tls.key", "webhook.key"),
        ] {
            std::fs::copy(self.dir.join(from), dir.join(file)).unwrap();
        }
    }
}

impl Controller<'_> {
    /// Applies the webhook configuration `doc` and removes it when the controller stops.
    pub fn register(&mut self, doc: &Value) {
        self.cluster.ok(
            &["apply", "--server-side", "--force-conflicts", "-f", "-"],
            Some(&doc.to_string()),
        );
        let kind = doc["kind"].as_str().unwrap().to_lowercase();
        let name = doc["metadata"]["name"].as_str().unwrap().to_owned();
        self.webhooks.push((kind, name));
    }

    /// Waits until a GET of `path` on 127.0.0.1:`port` answers 200.
    pub fn wait_ready(&mut self, what: &str, port: u16, path: &str) {
        let log = self.cluster.dir.join(format!("{what}.log"));
        let start = Instant::now();
        while !http_ok(port, path) {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("{what} exited ({status}); its log: {}", log.display());
            }
            assert!(
                start.elapsed() < Duration::from_secs(90),
                "{what} not ready; its log: {}",
                log.display()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// Reads `pipe` to its end on a thread of its own, so that a child's output never
/// fills a pipe while it is waited for.
fn drain(mut pipe: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        pipe.read_to_end(&mut out).unwrap();
        out
    })
}

/// A GET on 127.0.0.1:`port` answered 200.
pub fn http_ok(port: u16, path: &str) -> bool {
    use std::io::{Read, Write};
    // Bounded: a port that accepts and never answers is "not ready", not a hang.
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let Ok(mut stream) = std::net::TcpStream::connect_timeout(&address, Duration::from_secs(2))
    else {
        return false;
    };
    let timeout = Some(Duration::from_secs(5));
    if stream.set_read_timeout(timeout).is_err() || stream.set_write_timeout(timeout).is_err() {
        return false;
    }
    let request = format!("GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
    let mut answer = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut answer).is_ok()
        && (answer.starts_with("HTTP/1.0 200") || answer.starts_with("HTTP/1.1 200"))
}

/// The tolerations the API server's DefaultTolerationSeconds admission plugin adds to
/// every pod that has none of its own for these taints (plugin/pkg/admission/
/// defaulttolerationseconds/admission.go, Kubernetes v1.34.3): 300 s on not-ready and
/// unreachable nodes. Removed from `pod` when the template did not write them.
pub fn take_default_tolerations(pod: &mut Value, template: &Value) {
    let written = template["spec"]["tolerations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let Some(tolerations) = pod["spec"]
        .get_mut("tolerations")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    tolerations.retain(|t| {
        let default = matches!(
            t["key"].as_str(),
            Some("node.kubernetes.io/not-ready" | "node.kubernetes.io/unreachable")
        ) && t["effect"] == "NoExecute"
            && t["tolerationSeconds"] == 300;
        !default || written.contains(t)
    });
    if tolerations.is_empty() {
        pod["spec"].as_object_mut().unwrap().remove("tolerations");
    }
}
