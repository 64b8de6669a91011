//! The in-pod preflight (issue 28). The script rdmagen ships is taken from a rendered
//! ConfigMap and run, with the variables the plan gave the pod, under `sh` (and dash
//! and busybox where installed) against fake /sys, /dev and /proc trees built here,
//! with `ulimit -l` stubbed (RDMAGEN_PREFLIGHT_MEMLOCK, a test hook). Each broken
//! tree must give its own exit code and one line; the good one one line and the
//! command, exec'd with the right NCCL_IB_GID_INDEX. Then what `render` does with
//! the setting: the ConfigMap, the wrapped command where the RDMA device is, and
//! `--explain`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{rdmagen, text, write};

/// The exec'd command of every run: it prints the GID index NCCL would read.
const PRINT_GID: [&str; 3] = ["sh", "-c", "echo \"gid=${NCCL_IB_GID_INDEX:-unset}\""];

/// `rdmagen render` of an example directory: its documents, and stderr.
fn render(args: &[&str]) -> (Vec<Value>, String) {
    let out = rdmagen(&[&["render"][..], args].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let docs = serde_saphyr::from_str_multiple(&text(&out.stdout)).unwrap();
    (docs, text(&out.stderr))
}

fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// The preflight's script as rendered into `docs`' ConfigMap, and the variables the
/// worker container of the PyTorchJob `job` gets for it (with NCCL_SOCKET_IFNAME).
fn planned(docs: &[Value], job: &str) -> (String, Vec<(String, String)>) {
    let map = find(docs, "ConfigMap", &format!("{job}-preflight"));
    let script = map["data"]["preflight.sh"].as_str().unwrap().to_owned();
    let pj = find(docs, "PyTorchJob", job);
    let c = &pj["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0];
    let env = c["env"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| {
            let name = v["name"].as_str().unwrap();
            name.starts_with("RDMAGEN_PREFLIGHT_") || name == "NCCL_SOCKET_IFNAME"
        })
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_owned(),
                v["value"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (script, env)
}

/// The RoCE example's script and variables: four HCAs, gidIndex auto, NCCL 2.18.
fn roce() -> (String, Vec<(String, String)>) {
    let (docs, _) = render(&["examples/preflight-roce"]);
    planned(&docs, "gpt-preflight")
}

/// The shells the script must run under, each as a command line to which the script
/// and its arguments are added.
fn shells() -> Vec<Vec<String>> {
    let on_path = |name: &str| {
        std::env::var_os("PATH")
            .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
    };
    let mut out = vec![vec!["sh".to_owned()]];
    if on_path("dash") {
        out.push(vec!["dash".to_owned()]);
    }
    if on_path("busybox") {
        out.push(vec!["busybox".to_owned(), "sh".to_owned()]);
    }
    out
}

/// The pod's own IPv4 address in the fake trees, and its GID in sysfs's form.
const POD_IP: &str = "10.0.0.5";
const POD_GID: &str = "0000:0000:0000:0000:0000:ffff:0a00:0005";
/// Another pod's address on a shared GID table.
const OTHER_GID: &str = "0000:0000:0000:0000:0000:ffff:0a00:0009";
const LINK_LOCAL: &str = "fe80:0000:0000:0000:0000:0000:0000:0001";

/// A fake node as one pod sees it: /sys, /dev and /proc below a tempdir.
struct Node {
    dir: tempfile::TempDir,
    script: PathBuf,
    env: Vec<(String, String)>,
}

impl Node {
    /// Every check passes: the HCAs the plan names, each with port 1 ACTIVE over
    /// Ethernet and a GID table whose lowest RoCE v2 IPv4 entry on the pod's address
    /// is index 3 (0: v1 link-local, 1: v2 link-local, 2: v1 IPv4, 3: v2 IPv4), the
    /// verbs device, nvidia_peermem loaded, eth0 up, memlock unlimited.
    fn good((script, env): (String, Vec<(String, String)>)) -> Node {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("preflight.sh");
        std::fs::write(&path, script).unwrap();
        let node = Node {
            dir,
            script: path,
            env,
        };
        node.write("dev/infiniband/uverbs0", "");
        for hca in node.hcas() {
            node.port(
                &hca,
                "4: ACTIVE",
                &[
                    (0, "IB/RoCE v1", LINK_LOCAL),
                    (1, "RoCE v2", LINK_LOCAL),
                    (2, "IB/RoCE v1", POD_GID),
                    (3, "RoCE v2", POD_GID),
                ],
            );
        }
        node.write(
            "proc/net/fib_trie",
            &format!(
                "Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 0.0.0.0\n        /0 universe UNICAST\n     +-- 10.0.0.0/24 2 0 2\n        |-- 10.0.0.0\n           /32 link BROADCAST\n        |-- {POD_IP}\n           /32 host LOCAL\n     |-- 127.0.0.1\n        /32 host LOCAL\n"
            ),
        );
        node.write(
            "proc/modules",
            "nvidia_peermem 16384 0 - Live 0x0000000000000000 (OE)\nnvidia 56823808 2 nvidia_peermem, Live 0x0000000000000000 (POE)\n",
        );
        node.write("proc/self/status", "Name:\tsh\nCapEff:\t0000000000000000\n");
        node.write("sys/class/net/eth0/operstate", "up\n");
        node.write("sys/class/net/lo/operstate", "unknown\n");
        let mut node = node;
        node.set("RDMAGEN_PREFLIGHT_MEMLOCK", "unlimited");
        node
    }

    /// The HCAs the plan names.
    fn hcas(&self) -> Vec<String> {
        let list = self
            .var("RDMAGEN_PREFLIGHT_HCAS")
            .expect("the plan names HCAs");
        list.split(' ').map(str::to_owned).collect()
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, body: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, body).unwrap();
    }

    fn remove(&self, rel: &str) {
        let path = self.path(rel);
        if path.is_dir() {
            std::fs::remove_dir_all(path).unwrap();
        } else {
            std::fs::remove_file(path).unwrap();
        }
    }

    /// Port 1 of `hca` in `state`, over Ethernet, with GID table `gids`.
    fn port(&self, hca: &str, state: &str, gids: &[(u32, &str, &str)]) {
        let port = format!("sys/class/infiniband/{hca}/ports/1");
        if Path::new(&self.path(&port)).exists() {
            self.remove(&port);
        }
        self.write(&format!("{port}/state"), &format!("{state}\n"));
        self.write(&format!("{port}/link_layer"), "Ethernet\n");
        for (index, kind, gid) in gids {
            self.write(
                &format!("{port}/gid_attrs/types/{index}"),
                &format!("{kind}\n"),
            );
            self.write(&format!("{port}/gids/{index}"), &format!("{gid}\n"));
        }
    }

    /// Set `name` to `value` for the script (replacing the plan's value).
    fn set(&mut self, name: &str, value: &str) {
        self.env = self.with(name, value);
    }

    /// The node's variables with `name` set to `value`.
    fn with(&self, name: &str, value: &str) -> Vec<(String, String)> {
        let mut env = self.env.clone();
        env.retain(|(n, _)| n != name);
        env.push((name.to_owned(), value.to_owned()));
        env
    }

    /// Run the script with `env` and `command` under every shell: its exit code,
    /// stdout and stderr, which every shell must give alike.
    fn run_env(&self, env: &[(String, String)], command: &[&str]) -> (Option<i32>, String, String) {
        let mut results = Vec::new();
        for shell in shells() {
            let out = Command::new(&shell[0])
                .args(&shell[1..])
                .arg(&self.script)
                .args(command)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("RDMAGEN_PREFLIGHT_SYSFS", self.path("sys"))
                .env("RDMAGEN_PREFLIGHT_DEV", self.path("dev"))
                .env("RDMAGEN_PREFLIGHT_PROC", self.path("proc"))
                .envs(env.iter().map(|(k, v)| (k, v)))
                .output()
                .unwrap();
            results.push((
                shell.join(" "),
                (out.status.code(), text(&out.stdout), text(&out.stderr)),
            ));
        }
        let (first_shell, first) = results[0].clone();
        for (shell, result) in &results[1..] {
            assert_eq!(result, &first, "{shell} differs from {first_shell}");
        }
        first
    }

    fn run_with(&self, command: &[&str]) -> (Option<i32>, String, String) {
        self.run_env(&self.env, command)
    }

    fn run(&self) -> (Option<i32>, String, String) {
        self.run_with(&PRINT_GID)
    }

    fn run_with_env(&self, name: &str, value: &str) -> (Option<i32>, String, String) {
        self.run_env(&self.with(name, value), &PRINT_GID)
    }

    /// A run that must fail with `code`: its one line, which starts as every
    /// failure's does.
    fn fails(&self, code: i32) -> String {
        let (status, out, err) = self.run();
        assert_eq!(status, Some(code), "stdout: {out}\nstderr: {err}");
        assert_eq!(out, "", "the command must not run");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.starts_with("rdmagen preflight: FAIL: "), "{err}");
        err.trim_end().to_owned()
    }
}

#[test]
fn the_plan_gives_the_script_what_the_pool_says() {
    let (_, env) = roce();
    let names: Vec<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "NCCL_SOCKET_IFNAME",
            "RDMAGEN_PREFLIGHT_HCAS",
            "RDMAGEN_PREFLIGHT_LINK_LAYER",
            "RDMAGEN_PREFLIGHT_GID_INDEX",
            "RDMAGEN_PREFLIGHT_EXPORT_GID",
            "RDMAGEN_PREFLIGHT_GPUDIRECT",
            "RDMAGEN_PREFLIGHT_MEMLOCK_MIN_KIB",
        ]
    );
    let value = |name: &str| &env.iter().find(|(n, _)| n == name).unwrap().1;
    // The pool: hcas mlx5_1..mlx5_4, fabric roce, gidIndex auto, NCCL 2.18.
    assert_eq!(
        value("RDMAGEN_PREFLIGHT_HCAS"),
        "mlx5_1 mlx5_2 mlx5_3 mlx5_4"
    );
    assert_eq!(value("RDMAGEN_PREFLIGHT_LINK_LAYER"), "Ethernet");
    assert_eq!(value("RDMAGEN_PREFLIGHT_GID_INDEX"), "auto");
    assert_eq!(value("RDMAGEN_PREFLIGHT_EXPORT_GID"), "1");
    assert_eq!(value("RDMAGEN_PREFLIGHT_GPUDIRECT"), "1");
}

#[test]
fn a_good_pod_prints_one_line_and_execs_with_the_gid_it_found() {
    let node = Node::good(roce());
    let (code, out, err) = node.run();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "gid=3\n");
    let hcas: Vec<String> = node.hcas().iter().map(|h| format!("{h}:1")).collect();
    assert_eq!(
        err,
        format!(
            "rdmagen preflight: ok: uverbs0, {} ACTIVE Ethernet, GID index 3 RoCE v2 on {POD_IP} (exported NCCL_IB_GID_INDEX), memlock unlimited, GPUDirect nvidia_peermem, NCCL_SOCKET_IFNAME eth0 up; exec sh\n",
            hcas.join(" ")
        )
    );
    // exec: the command replaces the shell, so its status is the pod's.
    let (code, ..) = node.run_with(&["sh", "-c", "exit 42"]);
    assert_eq!(code, Some(42));
}

#[test]
fn the_pods_address_at_another_index_is_found_and_a_fixed_wrong_index_fails() {
    let node = Node::good(roce());
    // A GID table shared by pods: index 3 is another pod's address, 5 this one's.
    for hca in node.hcas() {
        node.port(
            &hca,
            "4: ACTIVE",
            &[
                (0, "IB/RoCE v1", LINK_LOCAL),
                (1, "RoCE v2", LINK_LOCAL),
                (3, "RoCE v2", OTHER_GID),
                (4, "IB/RoCE v1", POD_GID),
                (5, "RoCE v2", POD_GID),
            ],
        );
    }
    let (code, out, err) = node.run();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out, "gid=5\n");
    let first = node.hcas()[0].clone();
    let mut fixed = node;
    fixed.set("RDMAGEN_PREFLIGHT_GID_INDEX", "3");
    assert_eq!(
        fixed.fails(13),
        format!(
            "rdmagen preflight: FAIL: GID index 3 of {first} port 1: address {OTHER_GID}, not an IPv4 address of this pod ({POD_IP}); this pod's address is at index 5"
        )
    );
    // An index a platform sets at run time is checked as a fixed one.
    let mut preset = Node::good(roce());
    preset.set("NCCL_IB_GID_INDEX", "2");
    assert_eq!(
        preset.fails(13),
        format!(
            "rdmagen preflight: FAIL: GID index 2 of {first} port 1: type IB/RoCE v1, not RoCE v2; this pod's address is at index 3"
        )
    );
}

#[test]
fn a_v1_only_table_fails() {
    let node = Node::good(roce());
    let first = node.hcas()[0].clone();
    node.port(
        &first,
        "4: ACTIVE",
        &[(0, "IB/RoCE v1", LINK_LOCAL), (1, "IB/RoCE v1", POD_GID)],
    );
    assert_eq!(
        node.fails(14),
        format!(
            "rdmagen preflight: FAIL: no RoCE v2 GID on {first} port 1 (RoCE v1 only): NCCL needs RoCE v2 across subnets; the node's RoCE mode is wrong"
        )
    );
    // RoCE v2 entries, none on the pod's address.
    node.port(
        &first,
        "4: ACTIVE",
        &[(0, "RoCE v2", LINK_LOCAL), (1, "RoCE v2", OTHER_GID)],
    );
    assert_eq!(
        node.fails(14),
        format!(
            "rdmagen preflight: FAIL: no RoCE v2 GID of {first} port 1 holds an IPv4 address of this pod ({POD_IP}): the pod's interface on this NIC has no IPv4 address, or the table is another pod's"
        )
    );
}

#[test]
fn an_8_mib_memlock_names_the_runtimes_limit() {
    let mut node = Node::good(roce());
    node.set("RDMAGEN_PREFLIGHT_MEMLOCK", "8192");
    let line = node.fails(15);
    assert!(
        line.starts_with("rdmagen preflight: FAIL: memlock (ulimit -l) is 8192 KiB (8 MiB), the container runtime's LimitMEMLOCK default"),
        "{line}"
    );
    assert!(line.contains("LimitMEMLOCK=infinity"), "{line}");
    let floor = node
        .var("RDMAGEN_PREFLIGHT_MEMLOCK_MIN_KIB")
        .unwrap()
        .to_owned();
    node.set("RDMAGEN_PREFLIGHT_MEMLOCK", "65536");
    assert_eq!(
        node.fails(15),
        format!(
            "rdmagen preflight: FAIL: memlock (ulimit -l) is 65536 KiB, below {floor} KiB, and the process lacks CAP_IPC_LOCK: NCCL cannot pin its buffers; raise the container runtime's LimitMEMLOCK on the node"
        )
    );
    // CAP_IPC_LOCK (bit 14 of CapEff) lifts the limit for the kernel's pinning.
    node.write("proc/self/status", "Name:\tsh\nCapEff:\t000001ffffffffff\n");
    let (code, _, err) = node.run();
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains(", memlock 65536 KiB with CAP_IPC_LOCK,"),
        "{err}"
    );
    // At the floor is enough.
    let at = Node::good(roce());
    let (code, _, err) = at.run_with_env("RDMAGEN_PREFLIGHT_MEMLOCK", &floor);
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn a_missing_verbs_device_fails() {
    let node = Node::good(roce());
    node.remove("dev/infiniband/uverbs0");
    assert_eq!(
        node.fails(10),
        "rdmagen preflight: FAIL: no /dev/infiniband/uverbs* in this container: the pod holds no RDMA device (its RDMA resource was not granted, or the node's device plugin gives none), so NCCL cannot use the fabric"
    );
}

#[test]
fn a_down_port_fails() {
    let node = Node::good(roce());
    let last = node.hcas().last().unwrap().clone();
    node.port(&last, "1: DOWN", &[(3, "RoCE v2", POD_GID)]);
    assert_eq!(
        node.fails(12),
        format!(
            "rdmagen preflight: FAIL: HCA {last} has no ACTIVE Ethernet port (port 1: 1: DOWN Ethernet): the link is down or the port runs another link layer"
        )
    );
    // The link layer counts: an ACTIVE InfiniBand port on a RoCE pool is not one.
    node.port(&last, "4: ACTIVE", &[(3, "RoCE v2", POD_GID)]);
    node.write(
        &format!("sys/class/infiniband/{last}/ports/1/link_layer"),
        "InfiniBand\n",
    );
    assert_eq!(
        node.fails(12),
        format!(
            "rdmagen preflight: FAIL: HCA {last} has no ACTIVE Ethernet port (port 1: 4: ACTIVE InfiniBand): the link is down or the port runs another link layer"
        )
    );
}

#[test]
fn a_missing_hca_fails() {
    let node = Node::good(roce());
    let hcas = node.hcas();
    node.remove(&format!("sys/class/infiniband/{}", hcas[1]));
    let left: Vec<&str> = hcas
        .iter()
        .filter(|h| **h != hcas[1])
        .map(String::as_str)
        .collect();
    assert_eq!(
        node.fails(11),
        format!(
            "rdmagen preflight: FAIL: HCA {}, one of the pool's, is not in this container (/sys/class/infiniband has: {}): the node's NICs differ from the pool's network.hcas, or the device plugin gave other devices",
            hcas[1],
            left.join(" ")
        )
    );
}

#[test]
fn no_nvidia_peermem_fails_unless_dma_buf_is_usable() {
    let node = Node::good(roce());
    node.write(
        "proc/modules",
        "nvidia 56823808 0 - Live 0x0000000000000000 (POE)\n",
    );
    node.write("proc/sys/kernel/osrelease", "5.15.0-91-generic\n");
    node.write(
        "proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n",
    );
    assert_eq!(
        node.fails(16),
        "rdmagen preflight: FAIL: GPUDirect RDMA is expected, but nvidia_peermem is not loaded (/proc/modules) and dma-buf is not usable (kernel 5.15.0-91-generic; it needs NVIDIA's open kernel module and Linux 5.12 or later): NCCL would copy every transfer through host memory; load nvidia_peermem on the node (the GPU Operator's driver.rdma.enabled)"
    );
    node.write(
        "proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build\n",
    );
    let (code, _, err) = node.run();
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains(", GPUDirect dma-buf,"), "{err}");
    // Where the job turns GPUDirect off, it is not checked.
    node.write("proc/driver/nvidia/version", "");
    let (code, _, err) = node.run_with_env("RDMAGEN_PREFLIGHT_GPUDIRECT", "0");
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn the_socket_interface_must_be_up() {
    let node = Node::good(roce());
    assert_eq!(node.var("NCCL_SOCKET_IFNAME"), Some("eth0"));
    node.write("sys/class/net/eth0/operstate", "down\n");
    assert_eq!(
        node.fails(17),
        "rdmagen preflight: FAIL: NCCL_SOCKET_IFNAME=eth0 matches no interface that is up (eth0 down): NCCL could not bootstrap; name the pod's interface (eth0 on the cluster network)"
    );
    // NCCL's forms: a prefix list matches net1, an exclusion anything else but lo,
    // an exact name only itself.
    node.write("sys/class/net/net1/operstate", "up\n");
    for names in ["eth,net", "^eth0,docker", "=net1"] {
        let (code, _, err) = node.run_with_env("NCCL_SOCKET_IFNAME", names);
        assert_eq!(code, Some(0), "{names}: {err}");
        assert!(err.contains("NCCL_SOCKET_IFNAME net1 up"), "{names}: {err}");
    }
    // A virtual interface that reports no state is usable.
    node.write("sys/class/net/eth0/operstate", "unknown\n");
    assert_eq!(node.run().0, Some(0));
    let (code, _, err) = node.run_with_env("NCCL_SOCKET_IFNAME", "=eth");
    assert_eq!(code, Some(17), "{err}");
    assert!(err.contains("(no interface matches)"), "{err}");
}

#[test]
fn without_a_command_it_is_a_usage_error() {
    let node = Node::good(roce());
    let (code, out, err) = node.run_with(&[]);
    assert_eq!((code, out.as_str()), (Some(2), ""));
    assert_eq!(
        err,
        "rdmagen preflight: usage: sh preflight.sh COMMAND [ARG...]: nothing to run after the checks\n"
    );
}

/// The pod template of replica `role` of the PyTorchJob or MPIJob in `doc`.
fn pod<'a>(doc: &'a Value, role: &str) -> &'a Value {
    let specs = doc["spec"]
        .get("pytorchReplicaSpecs")
        .or_else(|| doc["spec"].get("mpiReplicaSpecs"))
        .expect("a PyTorchJob or an MPIJob");
    &specs[role]["template"]["spec"]
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| i["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_configmap_holds_the_script_and_every_rank_pod_mounts_it() {
    let (docs, _) = render(&["examples/preflight-roce"]);
    let shipped =
        std::fs::read_to_string(crate::support::root().join("templates/preflight/preflight.sh"))
            .unwrap();
    for job in ["gpt-preflight", "nccl-preflight"] {
        let map = find(&docs, "ConfigMap", &format!("{job}-preflight"));
        assert_eq!(map["data"]["preflight.sh"], shipped.as_str(), "{job}");
        assert_eq!(map["metadata"]["namespace"], "training");
    }
    let script = "/rdmagen-preflight/preflight.sh";
    // torchrun: the container's command is the script's, then the launcher's own.
    let pj = find(&docs, "PyTorchJob", "gpt-preflight");
    for role in ["Master", "Worker"] {
        let spec = pod(pj, role);
        let c = &spec["containers"][0];
        let command: Vec<&str> = c["command"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert_eq!(command[..3], ["sh", script, "torchrun"], "{role}");
        assert!(names(&spec["volumes"]).contains(&"rdmagen-preflight".to_owned()));
        let mount = c["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == "rdmagen-preflight")
            .unwrap();
        assert_eq!(mount["mountPath"], "/rdmagen-preflight");
        assert_eq!(mount["readOnly"], true);
    }
    // mpirun: the launcher has no RDMA device, so no script; mpirun runs it before
    // each rank's program on the workers, with its variables forwarded.
    let mpi = find(&docs, "MPIJob", "nccl-preflight");
    let launcher = pod(mpi, "Launcher");
    let line: Vec<&str> = launcher["containers"][0]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(line[0], "mpirun");
    let at = line
        .iter()
        .position(|w| *w == "sh")
        .expect("sh in the mpirun line");
    assert_eq!(
        line[at + 1..at + 3],
        [script, "/opt/nccl_tests/build/all_reduce_perf"]
    );
    let worker = pod(mpi, "Worker");
    let worker_env = names(&worker["containers"][0]["env"]);
    for name in worker_env
        .iter()
        .filter(|n| n.starts_with("RDMAGEN_PREFLIGHT_"))
    {
        let forwarded = line
            .windows(2)
            .any(|w| w[0] == "-x" && w[1] == name.as_str());
        assert!(forwarded, "{name} is not forwarded: {}", line.join(" "));
    }
    assert!(names(&worker["volumes"]).contains(&"rdmagen-preflight".to_owned()));
    assert!(!names(&launcher["volumes"]).contains(&"rdmagen-preflight".to_owned()));
}

#[test]
fn explain_gives_every_fact_with_its_reason() {
    let (docs, explain) = render(&["examples/preflight-roce", "--explain"]);
    let (_, env) = planned(&docs, "gpt-preflight");
    let job: Vec<&str> = explain
        .lines()
        .skip_while(|l| !l.contains("gpt-preflight"))
        .collect();
    let on = job
        .iter()
        .find(|l| l.trim_start().starts_with("preflight = on: "))
        .unwrap_or_else(|| panic!("no preflight decision:\n{explain}"));
    assert!(
        on.contains("pool `a100-roce-preflight`'s network.preflight"),
        "{on}"
    );
    for (name, value) in env.iter().filter(|(n, _)| n.starts_with("RDMAGEN_")) {
        let line = format!("preflight {name} = {value}: ");
        assert!(
            job.iter().any(|l| l.trim_start().starts_with(&line)),
            "no `{line}` in:\n{explain}"
        );
    }
}

const TRAINER: &str = "examples/preflight-trainer-ib";

/// The example's job rendered with its `preflight:` line replaced by `line`.
fn trainer_job(line: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let root = crate::support::root().join(TRAINER);
    let job = std::fs::read_to_string(root.join("job.yaml")).unwrap();
    assert!(job.contains("  preflight: true\n"));
    let job = write(
        dir.path(),
        "job.yaml",
        &job.replace("  preflight: true\n", line),
    );
    let pool = root.join("pool.yaml");
    let (docs, _) = render(&[job.as_str(), "--pools", pool.to_str().unwrap()]);
    docs
}

#[test]
fn a_trainjob_differs_from_one_without_only_by_the_preflight() {
    let on = trainer_job("  preflight: true\n");
    let off = trainer_job("");
    let tj = |docs: &[Value]| find(docs, "TrainJob", "llama-ib-checked").clone();
    let (mut on_tj, off_tj) = (tj(&on), tj(&off));
    // The runtime is the pool's, the same for both: the preflight is each job's.
    let runtime = |docs: &[Value]| {
        docs.iter()
            .filter(|d| d["kind"] == "TrainingRuntime" || d["kind"] == "ClusterTrainingRuntime")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(runtime(&on), runtime(&off));
    assert!(!off.iter().any(|d| d["kind"] == "ConfigMap"));
    let map = find(&on, "ConfigMap", "llama-ib-checked-preflight");
    assert_eq!(map["metadata"]["namespace"], "research");
    let trainer = &mut on_tj["spec"]["trainer"];
    let command: Vec<String> = serde_json::from_value(trainer["command"].clone()).unwrap();
    let plain: Vec<String> =
        serde_json::from_value(off_tj["spec"]["trainer"]["command"].clone()).unwrap();
    assert_eq!(command[..2], ["sh", "/rdmagen-preflight/preflight.sh"]);
    assert_eq!(command[2..], plain[..]);
    trainer["command"] = off_tj["spec"]["trainer"]["command"].clone();
    let env = trainer["env"].as_array_mut().unwrap();
    let before = env.len();
    env.retain(|v| {
        !v["name"]
            .as_str()
            .unwrap()
            .starts_with("RDMAGEN_PREFLIGHT_")
    });
    assert!(
        env.len() < before,
        "the script's variables are in trainer.env"
    );
    if env.is_empty() {
        trainer.as_object_mut().unwrap().remove("env");
    }
    // The volume and its mount reach the pods through the TrainJob's patches of the
    // runtime (runtimePatches from Trainer 2.2, podTemplateOverrides before).
    let patches = |tj: &mut Value| {
        let spec = tj["spec"].as_object_mut().unwrap();
        let taken: Vec<Value> = ["runtimePatches", "podTemplateOverrides"]
            .iter()
            .filter_map(|k| spec.remove(*k))
            .collect();
        serde_json::to_string(&taken).unwrap()
    };
    let mut off_tj = off_tj;
    let (on_patches, off_patches) = (patches(&mut on_tj), patches(&mut off_tj));
    assert!(on_patches.contains("\"rdmagen-preflight\""), "{on_patches}");
    assert!(!off_patches.contains("rdmagen-preflight"), "{off_patches}");
    assert_eq!(on_tj, off_tj);
}

#[test]
fn a_job_that_turns_off_the_preflight_its_pools_gid_relies_on_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = crate::support::root().join("examples/preflight-roce");
    let pool = root.join("pool.yaml");
    let job = write(
        dir.path(),
        "job.yaml",
        "apiVersion: rdmagen/v1alpha1
kind: Job
metadata: {name: unchecked}
spec:
  pool: a100-roce-preflight
  image: img:1
  nodes: 2
  gpusPerNode: 8
  script: t.py
  preflight: false
",
    );
    let out = rdmagen(&["render", &job, "--pools", pool.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("RDG048"), "{err}");
    assert!(err.contains("job.yaml:10:"), "at the preflight line: {err}");
}

/// Rails of SR-IOV VFs: the VFs keep names the host chose, so the plan gives a count
/// (RDMAGEN_PREFLIGHT_HCA_COUNT) and every device the pod holds is checked.
#[test]
fn rail_devices_are_counted_where_their_names_are_unknown() {
    let mut node = Node::good(roce());
    let hcas = node.hcas();
    node.env.retain(|(n, _)| n != "RDMAGEN_PREFLIGHT_HCAS");
    node.set("RDMAGEN_PREFLIGHT_HCA_COUNT", &hcas.len().to_string());
    let (code, out, err) = node.run();
    assert_eq!((code, out.as_str()), (Some(0), "gid=3\n"), "{err}");
    node.port(&hcas[0], "1: DOWN", &[(3, "RoCE v2", POD_GID)]);
    let rest = hcas[1..].join(" ");
    let all = hcas.join(" ");
    assert_eq!(
        node.fails(12),
        format!(
            "rdmagen preflight: FAIL: {} of the container's RDMA devices ({all}) have an ACTIVE Ethernet port, where {} should: the link is down or the port runs another link layer",
            hcas.len() - 1,
            hcas.len()
        )
    );
    node.remove(&format!("sys/class/infiniband/{}", hcas[0]));
    assert_eq!(
        node.fails(11),
        format!(
            "rdmagen preflight: FAIL: {} RDMA device(s) in this container (/sys/class/infiniband has: {rest}), where the pod's rails give {}: a VF was not attached",
            hcas.len() - 1,
            hcas.len()
        )
    );
}
