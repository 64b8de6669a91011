//! Network Operator attachments (issue 24): what a pod on each mode requests, and the
//! Multus annotation read back as Multus reads it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{rdmagen, root, text};

const NETWORKS: &str = "k8s.v1.cni.cncf.io/networks";

/// One annotation entry as Multus holds it: namespace (the pod's filled in), name, and
/// the interface asked for.
#[derive(Debug, PartialEq)]
struct Entry {
    namespace: String,
    name: String,
    interface: Option<String>,
}

/// An independent transcription of Multus's reader, kept apart from rdmagen's writer
/// (`crates/upstream/src/multus.rs`) so that the one does not vouch for the other:
/// multus-cni@v4.3.0 pkg/k8sclient/k8sclient.go:230-250 (`parsePodNetworkAnnotation`:
/// JSON when the value holds `[`, `{` or `"`, else split on `,` and trimmed; the pod's
/// namespace where none is given) and 175-216 (`parsePodNetworkObjectName`: one `/` at
/// most, one `@` at most, DNS-1123 labels, an interface name of at most 15 bytes with
/// no `/` or whitespace).
fn multus_parse(value: &str, pod_namespace: &str) -> Result<Vec<Entry>, String> {
    if value.is_empty() {
        return Err("pod annotation does not have \"network\" as key".into());
    }
    let label = regex::Regex::new("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").unwrap();
    let mut out = Vec::new();
    if value.contains(['[', '{', '"']) {
        let items: Vec<Value> = serde_json::from_str(value).map_err(|e| e.to_string())?;
        for item in items {
            let field = |k: &str| item[k].as_str().unwrap_or("").to_owned();
            let interface = match field("interface") {
                i if i.is_empty() => field("interfaceRequest"),
                i => i,
            };
            out.push(Entry {
                namespace: field("namespace"),
                name: field("name"),
                interface: (!interface.is_empty()).then_some(interface),
            });
        }
    } else {
        for item in value.split(',') {
            let item = item.trim();
            let slash: Vec<&str> = item.split('/').collect();
            let (ns, network) = match slash.len() {
                2 => (slash[0].trim(), slash[1]),
                1 => ("", slash[0]),
                _ => return Err(format!("{item}: Invalid network object (failed at '/')")),
            };
            let at: Vec<&str> = network.split('@').collect();
            let name = at[0].trim();
            let ifname = match at.len() {
                1 => "",
                2 => at[1].trim(),
                _ => return Err(format!("{item}: Invalid network object (failed at '@')")),
            };
            for part in [ns, name] {
                if !label.is_match(part) && !part.is_empty() {
                    return Err(format!("mismatch @ '{part}'"));
                }
            }
            if !ifname.is_empty()
                && (ifname.len() > 15
                    || ifname.contains(['/', ' ', '\t', '\n', '\x0b', '\x0c', '\r']))
            {
                return Err(format!("interface name '{ifname}'"));
            }
            out.push(Entry {
                namespace: ns.to_owned(),
                name: name.to_owned(),
                interface: (!ifname.is_empty()).then(|| ifname.to_owned()),
            });
        }
    }
    for e in &mut out {
        if e.namespace.is_empty() {
            e.namespace = pod_namespace.to_owned();
        }
    }
    Ok(out)
}

fn docs(path: &std::path::Path) -> Vec<Value> {
    rdmagen::verify::parse(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A pool's rails one per device, in GPU order: (resource, network, namespace).
fn rails(pool: &Value) -> Vec<(String, Option<String>, Option<String>)> {
    let mut out = Vec::new();
    for rail in pool["spec"]["network"]["rails"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let count = rail["count"].as_u64().unwrap_or(1);
        for _ in 0..count {
            out.push((
                rail["resource"].as_str().unwrap().to_owned(),
                rail["network"].as_str().map(str::to_owned),
                rail["namespace"].as_str().map(str::to_owned),
            ));
        }
    }
    out
}

fn pools_of(example: &str) -> BTreeMap<String, Value> {
    let mut pools = BTreeMap::new();
    for entry in std::fs::read_dir(root().join("examples").join(example)).unwrap() {
        for doc in docs(&entry.unwrap().path()) {
            if doc["kind"] == "Pool" {
                pools.insert(doc["metadata"]["name"].as_str().unwrap().to_owned(), doc);
            }
        }
    }
    pools
}

fn training(template: &Value) -> &Value {
    template["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "pytorch" || c["name"] == "node")
        .unwrap()
}

/// Every golden pod that carries a Multus annotation: each network is one of its pool's
/// rails, rail by rail in order (namespace as Multus resolves it, the interface the pool
/// names), and each rail resource is requested and limited exactly as many times as
/// the annotation lists its networks.
#[test]
fn golden_multus_annotations_read_back_rail_by_rail() {
    let mut pods = 0;
    let mut annotated = 0;
    let mut examples_seen = Vec::new();
    for example in crate::support::examples() {
        let example = example.file_name().unwrap().to_string_lossy().into_owned();
        let pools = pools_of(&example);
        // Rails attached through Multus (AKS's InfiniBand rails take no network).
        let networked = |p: &&Value| rails(p).iter().any(|(_, network, _)| network.is_some());
        let Some(pool) = pools.values().find(networked) else {
            continue;
        };
        assert_eq!(
            pools.len(),
            1,
            "{example}: one pool per Multus rails example"
        );
        let all = rails(pool);
        let interfaces: Vec<String> = pool["spec"]["network"]["podInterfaces"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default();
        let golden = root().join("golden").join(&example);
        for entry in walkdir::WalkDir::new(&golden).sort_by_file_name() {
            let entry = entry.unwrap();
            let path = entry.path();
            // Each PyTorchJob's replicas, and each Trainer runtime's `node` pods (a
            // TrainJob on it adds no network: the runtime of its shape has them).
            let templates: Vec<(String, String, Value)> = if entry.file_name() == "pytorchjob.yaml"
            {
                docs(path)
                    .iter()
                    .flat_map(|doc| {
                        let namespace = doc["metadata"]["namespace"].as_str().unwrap_or("default");
                        doc["spec"]["pytorchReplicaSpecs"]
                            .as_object()
                            .unwrap()
                            .iter()
                            .map(|(role, r)| {
                                (role.clone(), namespace.to_owned(), r["template"].clone())
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect()
            } else if path.parent().is_some_and(|d| d.ends_with("runtimes")) {
                docs(path)
                    .iter()
                    .map(|doc| {
                        let namespace = doc["metadata"]["namespace"].as_str().unwrap_or("default");
                        let name = doc["metadata"]["name"].as_str().unwrap();
                        let node = doc["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]
                            ["spec"]["template"]
                            .clone();
                        (format!("runtime {name}"), namespace.to_owned(), node)
                    })
                    .collect()
            } else {
                continue;
            };
            for (role, namespace, template) in templates {
                let value = template["metadata"]["annotations"][NETWORKS].as_str();
                // A pod without the annotation (a runtime without RDMA) has no rail.
                let entries = value
                    .map_or(Ok(Vec::new()), |v| multus_parse(v, &namespace))
                    .unwrap_or_else(|e| {
                        panic!("{example} {role}: Multus refuses `{value:?}`: {e}")
                    });
                assert!(
                    entries.len() <= all.len(),
                    "{example}: more networks than rails"
                );
                let mut want: BTreeMap<&str, u64> = BTreeMap::new();
                for (i, e) in entries.iter().enumerate() {
                    let (resource, network, rail_ns) = &all[i];
                    assert_eq!(
                        Some(&e.name),
                        network.as_ref(),
                        "{example} {role} rail {}",
                        i + 1
                    );
                    assert_eq!(
                        e.namespace,
                        rail_ns.as_deref().unwrap_or(&namespace),
                        "{example} {role} rail {}: namespace",
                        i + 1
                    );
                    assert_eq!(
                        e.interface.as_ref(),
                        interfaces.get(i),
                        "{example} {role} rail {}",
                        i + 1
                    );
                    *want.entry(resource.as_str()).or_default() += 1;
                }
                let c = training(&template);
                for section in ["requests", "limits"] {
                    let got: BTreeMap<&str, u64> = c["resources"][section]
                        .as_object()
                        .unwrap()
                        .iter()
                        .filter(|(name, _)| all.iter().any(|(r, _, _)| r == *name))
                        .map(|(name, v)| (name.as_str(), v.as_str().unwrap().parse().unwrap()))
                        .collect();
                    assert_eq!(
                        got, want,
                        "{example} {role} {section}: rail resources against networks"
                    );
                }
                pods += 1;
                if value.is_some() {
                    annotated += 1;
                }
            }
        }
        examples_seen.push(example);
    }
    assert_eq!(
        examples_seen,
        [
            "mpijob-nccl-tests-sriov",
            "network-operator-sriov-pool",
            "network-operator-sriov-rails",
            "trainer-v2-sriov-rails"
        ],
        "the examples with rails"
    );
    // sriov-rails: 2 jobs × (Master, Worker); sriov-pool: 1 job × (Master, Worker);
    // trainer-v2-sriov-rails: 3 runtimes, one of them without RDMA.
    assert_eq!((pods, annotated), (9, 8));
}

/// Render `pool` (YAML text) with one job whose spec ends with `job_spec`; return the
/// rendered documents.
fn render(pool: &str, job_spec: &str) -> Vec<Value> {
    render_all(pool, job_spec)
        .into_iter()
        .filter(|d| d["kind"] == "PyTorchJob")
        .collect()
}

/// A pool for every attachment mode: the four examples' pools and a host-device and
/// an IPoIB one.
fn mode_pools() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = [
        "network-operator-sriov-rails",
        "network-operator-sriov-pool",
        "network-operator-shared",
        "hostnetwork-roce",
    ]
    .iter()
    .map(|e| {
        let text =
            std::fs::read_to_string(root().join("examples").join(e).join("pool.yaml")).unwrap();
        (e.to_string(), text)
    })
    .collect();
    // The platform profiles: OCI on the host's network, and AKS's two device plugins.
    let oci = root().join("examples/oci-roce-hostnetwork/pool.yaml");
    out.push(("oci".to_owned(), std::fs::read_to_string(oci).unwrap()));
    let aks = std::fs::read_to_string(root().join("examples/aks-ib/pools.yaml")).unwrap();
    for (i, pool) in aks.split("\n---\n").enumerate() {
        out.push((format!("aks pool {}", i + 1), pool.to_owned()));
    }
    out.push((
        "hostdev".to_owned(),
        "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {name: hd}\nspec:\n  gpu: {perNode: 8}\n  network:\n    fabric: ib\n    attachment: hostdev\n    rails: [{resource: nvidia.com/hostdev, count: 4, network: hostdev-net}]\n".to_owned(),
    ));
    out.push((
        "ipoib".to_owned(),
        "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {name: ipoib}\nspec:\n  gpu: {perNode: 8}\n  network:\n    fabric: ib\n    attachment: ipoib\n    hcas: [mlx5_1, mlx5_2]\n    rails: [{resource: rdma/rdma_shared_device_a, network: example-ipoibnetwork}]\n".to_owned(),
    ));
    out
}

/// A single-node job and an `rdma: off` job on every mode: no RDMA resource (only the
/// GPUs), no Multus network, no IPC_LOCK, and of NCCL's RDMA variables only
/// NCCL_IB_DISABLE=1.
#[test]
fn rdma_off_pods_get_nothing_of_the_attachment() {
    for (mode, pool) in mode_pools() {
        for job in [
            "  nodes: 1\n  gpusPerNode: 8\n",
            "  nodes: 2\n  gpusPerNode: 8\n  rdma: off\n",
        ] {
            for doc in render(&pool, job) {
                for (role, replica) in doc["spec"]["pytorchReplicaSpecs"].as_object().unwrap() {
                    let template = &replica["template"];
                    let at = format!("{mode} {role} ({})", job.trim().replace('\n', ","));
                    assert!(
                        template["metadata"]["annotations"][NETWORKS].is_null(),
                        "{at}: a Multus network"
                    );
                    let c = training(template);
                    for section in ["requests", "limits"] {
                        let names: Vec<&String> = c["resources"][section]
                            .as_object()
                            .unwrap()
                            .keys()
                            .collect();
                        assert_eq!(names, ["nvidia.com/gpu"], "{at}: {section}");
                    }
                    assert!(
                        c["securityContext"]["capabilities"].is_null(),
                        "{at}: capabilities"
                    );
                    let env: Vec<(String, String)> = c["env"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| {
                            (
                                v["name"].as_str().unwrap().to_owned(),
                                v["value"].as_str().unwrap_or("").to_owned(),
                            )
                        })
                        .filter(|(name, _)| name.starts_with("NCCL_IB") || name == "NCCL_CROSS_NIC")
                        .collect();
                    assert_eq!(
                        env,
                        [("NCCL_IB_DISABLE".to_owned(), "1".to_owned())],
                        "{at}: env"
                    );
                }
            }
        }
    }
}

/// A mode's pool, the resources a pod requests, and its Multus annotation.
type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);

/// A 2-node × 4-GPU job gets the rails of its GPUs: the first half, in GPU order.
#[test]
fn a_job_on_half_of_each_node_gets_the_rails_of_its_gpus() {
    let pools = mode_pools();
    let pool = |name: &str| &pools.iter().find(|(m, _)| m == name).unwrap().1;
    let job = "  nodes: 2\n  gpusPerNode: 4\n";
    let cases: [Case; 2] = [
        (
            "network-operator-sriov-rails",
            &[
                ("nvidia.com/gpu", "4"),
                ("nvidia.com/rail1", "1"),
                ("nvidia.com/rail2", "1"),
                ("nvidia.com/rail3", "1"),
                ("nvidia.com/rail4", "1"),
            ],
            "gpu-rail1,gpu-rail2,gpu-rail3,gpu-rail4",
        ),
        (
            "network-operator-sriov-pool",
            &[("nvidia.com/gpu", "4"), ("nvidia.com/sriov_rdma", "4")],
            "network-operator/sriov-ib@ib1,network-operator/sriov-ib@ib2,network-operator/sriov-ib@ib3,network-operator/sriov-ib@ib4",
        ),
    ];
    for (mode, resources, networks) in cases {
        let docs = render(pool(mode), job);
        assert_eq!(docs.len(), 1);
        for (role, replica) in docs[0]["spec"]["pytorchReplicaSpecs"].as_object().unwrap() {
            let template = &replica["template"];
            assert_eq!(
                template["metadata"]["annotations"][NETWORKS], *networks,
                "{mode} {role}"
            );
            let want: serde_json::Map<String, Value> = resources
                .iter()
                .map(|(k, v)| ((*k).to_owned(), Value::from(*v)))
                .collect();
            let c = training(template);
            assert_eq!(
                c["resources"]["requests"],
                Value::Object(want.clone()),
                "{mode} {role}"
            );
            assert_eq!(
                c["resources"]["limits"],
                Value::Object(want),
                "{mode} {role}"
            );
        }
    }
}

/// The pod template of the PyTorchJob in `docs`, with what the smoke test adds removed
/// (its script volume and mount, its command, its NCCL logging variables: src/smoke's
/// SCRIPT_VOLUME and ADDED_ENV) and the command, which differs between any two jobs.
fn comparable_pod(docs: &[Value]) -> Value {
    let job = docs
        .iter()
        .find(|d| d["kind"] == "PyTorchJob")
        .expect("a PyTorchJob");
    let mut template = job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"].clone();
    // The nccl test's suppression of RDG047 for its NCCL_ALGO=Ring (a job annotation).
    if let Some(annotations) = template["metadata"]["annotations"].as_object_mut() {
        annotations.remove("rdmagen.io/ignore");
    }
    let volumes = template["spec"]["volumes"].as_array_mut().unwrap();
    volumes.retain(|v| v["name"] != rdmagen::smoke::SCRIPT_VOLUME);
    let containers = template["spec"]["containers"].as_array_mut().unwrap();
    for c in containers.iter_mut().filter(|c| c["name"] == "pytorch") {
        let obj = c.as_object_mut().unwrap();
        obj.remove("command");
        if let Some(Value::Array(mounts)) = obj.get_mut("volumeMounts") {
            mounts.retain(|m| m["name"] != rdmagen::smoke::SCRIPT_VOLUME);
        }
        if let Some(Value::Array(env)) = obj.get_mut("env") {
            env.retain(|e| !rdmagen::smoke::ADDED_ENV.contains(&e["name"].as_str().unwrap_or("")));
            if env.is_empty() {
                obj.remove("env");
            }
        }
    }
    template
}

/// `smoke-test` on each mode's pool gives its pods the template a real whole-node,
/// two-node job on that pool gets: every rail resource, every Multus network, the
/// same NCCL variables, hostNetwork where the pool says.
#[test]
fn smoke_test_pods_are_a_real_jobs_pods_on_every_mode() {
    for (mode, pool) in mode_pools() {
        let dir = tempfile::tempdir().unwrap();
        let pools = dir.path().join("pools");
        std::fs::create_dir(&pools).unwrap();
        std::fs::write(pools.join("pool.yaml"), &pool).unwrap();
        let name = pool
            .lines()
            .find_map(|l| l.strip_prefix("metadata: {name: "))
            .and_then(|l| l.strip_suffix('}'))
            .unwrap();
        let out = rdmagen(&[
            "smoke-test",
            "--pool",
            name,
            "--pools",
            pools.to_str().unwrap(),
            "--image",
            "img:1",
        ]);
        assert!(out.status.success(), "{mode}: {}", text(&out.stderr));
        let smoke = comparable_pod(&rdmagen::verify::parse(&text(&out.stdout)).unwrap());
        let real = comparable_pod(&render(&pool, "  nodes: 2\n  gpusPerNode: 8\n"));
        assert_eq!(smoke, real, "{mode}: smoke-test pod against a real job's");
        let annotated = !real["metadata"]["annotations"][NETWORKS].is_null();
        let has_networks = rails(&rdmagen::verify::parse(&pool).unwrap()[0])
            .iter()
            .any(|(_, network, _)| network.is_some());
        assert_eq!(annotated, has_networks, "{mode}: the Multus annotation");
    }
}

/// `validate` of `pool` with a two-node, whole-node job: the rule IDs of its findings.
fn validate_rules(pool: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let job = "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {name: j}\nspec:\n  pool: p\n  image: img:1\n  script: t.py\n  nodes: 2\n  gpusPerNode: 8\n";
    std::fs::write(dir.path().join("pool.yaml"), pool).unwrap();
    std::fs::write(dir.path().join("job.yaml"), job).unwrap();
    let out = rdmagen(&["validate", dir.path().to_str().unwrap(), "--format", "json"]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_owned())
        .collect()
}

/// The env of the first pod's training container, as name → value.
fn env_of(docs: &[Value]) -> BTreeMap<String, String> {
    let master = &docs[0]["spec"]["pytorchReplicaSpecs"]["Master"]["template"];
    training(master)["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let value = e["value"].as_str().unwrap_or_default().to_owned();
            (e["name"].as_str().unwrap().to_owned(), value)
        })
        .collect()
}

/// OCI: Oracle's values for the shape the node selector names, where the pool sets
/// none; the pool's own values win; a shape Oracle lists no values for gets none of
/// them, and the pool is then asked for its GID decision (RDG052) as anywhere else.
#[test]
fn oci_writes_oracles_values_for_the_pools_shape() {
    let pool =
        std::fs::read_to_string(root().join("examples/oci-roce-hostnetwork/pool.yaml")).unwrap();
    let env = env_of(&render(&pool, "  nodes: 2\n  gpusPerNode: 8\n"));
    for (name, value) in [
        ("NCCL_IB_GID_INDEX", "3"),
        ("NCCL_IB_TC", "41"),
        ("NCCL_IB_SL", "0"),
        ("NCCL_IB_TIMEOUT", "22"),
        ("NCCL_SOCKET_IFNAME", "eth0"),
        ("NCCL_CUMEM_ENABLE", "0"),
        ("NCCL_IGNORE_CPU_AFFINITY", "1"),
        ("NCCL_IB_SPLIT_DATA_ON_QPS", "0"),
        (
            "NCCL_IB_HCA",
            "=mlx5_0,mlx5_1,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7,mlx5_8,mlx5_9,mlx5_10,mlx5_12,mlx5_13,mlx5_14,mlx5_15,mlx5_16,mlx5_17",
        ),
    ] {
        assert_eq!(env.get(name).map(String::as_str), Some(value), "{name}");
    }
    assert_eq!(
        validate_rules(&pool.replace("oke-h100-roce", "p")),
        Vec::<String>::new()
    );

    let own = pool.replace(
        "    rdmaResource:",
        "    gidIndex: 5\n    trafficClass: 106\n    hcas: [mlx5_1, mlx5_2]\n    socketIfname: eth0\n    rdmaResource:",
    );
    let env = env_of(&render(&own, "  nodes: 2\n  gpusPerNode: 8\n"));
    assert_eq!(env["NCCL_IB_GID_INDEX"], "5");
    assert_eq!(env["NCCL_IB_TC"], "106");
    assert_eq!(env["NCCL_IB_HCA"], "=mlx5_1,mlx5_2");
    assert_eq!(
        env["NCCL_IB_TIMEOUT"], "22",
        "the shape's, where the pool sets none"
    );

    let unknown = pool.replace("BM.GPU.H100.8", "BM.GPU.X.8");
    let env = env_of(&render(&unknown, "  nodes: 2\n  gpusPerNode: 8\n"));
    for name in ["NCCL_IB_TC", "NCCL_IB_GID_INDEX", "NCCL_CUMEM_ENABLE"] {
        assert!(!env.contains_key(name), "{name} without a known shape");
    }
    // hostNetwork's own default: every host HCA but the management NIC.
    assert_eq!(env["NCCL_IB_HCA"], "^=mlx5_0");
    assert!(validate_rules(&unknown.replace("oke-h100-roce", "p")).contains(&"RDG052".to_owned()));
}

/// A hostNetwork pod bootstraps on a host interface: `eth0` is one only where the
/// pool lists it among the host's interfaces or the platform documents it (OCI).
#[test]
fn a_hostnetwork_pool_on_eth0_needs_a_host_that_has_it() {
    let pool = |platform: &str| {
        format!(
            "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {{name: p}}\nspec:\n  platform: {platform}\n  gpu: {{perNode: 8}}\n  network:\n    fabric: roce\n    attachment: hostNetwork\n    socketIfname: eth0\n    gidIndex: 3\n    hcas: [mlx5_1]\n"
        )
    };
    assert!(validate_rules(&pool("generic")).contains(&"RDG177".to_owned()));
    assert!(!validate_rules(&pool("oci")).contains(&"RDG177".to_owned()));
    let listed = pool("generic").replace(
        "    socketIfname",
        "    hostInterfaces: [eth0]\n    socketIfname",
    );
    assert!(!validate_rules(&listed).contains(&"RDG177".to_owned()));
}

/// Rails without a Multus network: AKS documents them for InfiniBand (`rdma/ib`, no
/// Multus); elsewhere, and on RoCE, an SR-IOV device reaches the pod only through its
/// network (RDG179).
#[test]
fn rails_without_networks_only_where_the_platform_documents_them() {
    let pool = |platform: &str, fabric: &str| {
        format!(
            "apiVersion: rdmagen/v1alpha1\nkind: Pool\nmetadata: {{name: p}}\nspec:\n  platform: {platform}\n  gpu: {{perNode: 8}}\n  network:\n    fabric: {fabric}\n    attachment: sriov\n    gidIndex: auto\n    rails: [{{resource: rdma/ib, count: 8}}]\n  target: {{nccl: \"2.21\"}}\n"
        )
    };
    assert_eq!(validate_rules(&pool("aks", "ib")), Vec::<String>::new());
    assert!(validate_rules(&pool("generic", "ib")).contains(&"RDG179".to_owned()));
    assert!(validate_rules(&pool("aks", "roce")).contains(&"RDG179".to_owned()));
    let docs = render(
        &pool("aks", "ib")
            .replace("name: p", "name: q")
            .replace("pool: p", "pool: q"),
        "  nodes: 2\n  gpusPerNode: 8\n",
    );
    let c = training(&docs[0]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]);
    assert_eq!(c["resources"]["limits"]["rdma/ib"], "8");
    assert!(
        docs[0]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["metadata"]["annotations"]
            [NETWORKS]
            .is_null()
    );
}

/// AKS's shared device plugin: `rdma/shared_ib: 1` where the pool names no resource.
#[test]
fn aks_shared_pods_request_its_shared_resource() {
    let pools = std::fs::read_to_string(root().join("examples/aks-ib/pools.yaml")).unwrap();
    let shared = pools.split("\n---\n").next().unwrap();
    let docs = render(shared, "  nodes: 2\n  gpusPerNode: 8\n");
    let c = training(&docs[0]["spec"]["pytorchReplicaSpecs"]["Master"]["template"]);
    assert_eq!(c["resources"]["requests"]["rdma/shared_ib"], "1");
    assert_eq!(c["securityContext"]["capabilities"]["add"][0], "IPC_LOCK");
}

/// Every mode under Kubeflow Trainer (2.3 and 2.1): a whole-node job, a single-node
/// job, an `rdma: off` job and a 2-node × 4-GPU job each get, from runtime and TrainJob
/// as Trainer merges them, the pod the same job gets as a PyTorchJob on the same pool
/// (operator 1.9), and no job inherits from a runtime what it does not ask for
/// (RDG137). The jobs with less RDMA than a whole node name a runtime of their own
/// shape.
#[test]
fn trainjobs_on_every_mode_get_the_pods_of_their_shape() {
    use rdmagen::kubeflow::trainer::{NODE, Release, effective_pod};
    use rdmagen::version::Version;

    let jobs = [
        ("whole", "  nodes: 2\n  gpusPerNode: 8\n", ""),
        ("single", "  nodes: 1\n  gpusPerNode: 8\n", "-no-rdma"),
        (
            "off",
            "  nodes: 2\n  gpusPerNode: 8\n  rdma: off\n",
            "-no-rdma",
        ),
        ("half", "  nodes: 2\n  gpusPerNode: 4\n", "?"),
    ];
    let mut narrowed = 0;
    for (mode, pool) in mode_pools() {
        let pool: Value = rdmagen::verify::parse(&pool).unwrap().remove(0);
        let name = pool["metadata"]["name"].as_str().unwrap().to_owned();
        for minor in [3, 1] {
            let with_target = |api: &str, key: &str, release: &str| {
                let mut pool = pool.clone();
                let target = &mut pool["spec"]["target"];
                if target.is_null() {
                    *target = serde_json::json!({});
                }
                target["api"] = api.into();
                target[key] = release.into();
                // A ClusterTrainingRuntime: usable from the jobs' namespace.
                if key == "trainer" {
                    target["clusterScoped"] = true.into();
                }
                serde_json::to_string(&pool).unwrap()
            };
            let trainer_pool = with_target(
                "trainer.kubeflow.org/v1alpha1",
                "trainer",
                &format!("2.{minor}"),
            );
            let operator_pool = with_target("kubeflow.org/v1", "operator", "1.9");
            let release = Release::new(Version::new(2, minor));
            for (job, spec, suffix) in jobs {
                let at = format!("{mode} on Trainer 2.{minor}, {job} job");
                let docs = render_all(&trainer_pool, spec);
                let by_kind = |kind: &str| -> Vec<&Value> {
                    docs.iter()
                        .filter(|d| d["kind"].as_str().unwrap().ends_with(kind))
                        .collect()
                };
                let train_job = by_kind("TrainJob")[0];
                let named = train_job["spec"]["runtimeRef"]["name"].as_str().unwrap();
                match suffix {
                    "?" => {
                        assert!(
                            named == name || named == format!("{name}-4gpu"),
                            "{at}: {named}"
                        );
                        narrowed += usize::from(named != name);
                    }
                    suffix => assert_eq!(named, format!("{name}{suffix}"), "{at}"),
                }
                let runtime = by_kind("TrainingRuntime")
                    .into_iter()
                    .find(|r| r["metadata"]["name"] == named)
                    .unwrap_or_else(|| panic!("{at}: runtime {named} is written"));
                let base = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"].clone();
                let mut made = effective_pod(NODE, &base, &train_job["spec"], release);
                made["spec"]["containers"][0]["name"] = "pytorch".into();
                let pytorch = render(&operator_pool, spec).remove(0);
                let mut want = pytorch["spec"]["pytorchReplicaSpecs"]["Master"]["template"].clone();
                for pod in [&mut made, &mut want] {
                    if let Some(env) = pod["spec"]["containers"][0]["env"].as_array_mut() {
                        env.sort_by_key(|e| e["name"].as_str().unwrap_or_default().to_owned());
                    }
                }
                assert_eq!(made, want, "{at}");
            }
        }
    }
    // Part of a node narrows the runtime on the per-rail pool only: elsewhere the
    // TrainJob's resourcesPerNode and annotation patch carry the smaller counts.
    assert_eq!(narrowed, 2, "per-rail pool, on 2.3 and 2.1");
}

/// Render `pool` with one job whose spec ends with `job_spec`; every rendered
/// document, runtimes included. No job may inherit from a runtime (RDG137).
fn render_all(pool: &str, job_spec: &str) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let name = rdmagen::verify::parse(pool).unwrap()[0]["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    let job = format!(
        "apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {{name: j, namespace: team}}\nspec:\n  pool: {name}\n  image: img:1\n  script: t.py\n{job_spec}"
    );
    std::fs::write(dir.path().join("pool.yaml"), pool).unwrap();
    std::fs::write(dir.path().join("job.yaml"), job).unwrap();
    let out = rdmagen(&["render", dir.path().to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("RDG137"), "{stderr}");
    rdmagen::verify::parse(&text(&out.stdout)).unwrap()
}

/// A job's own `hostNetwork: true` on a pool whose pods attach through Multus: no
/// Multus network would be attached (RDG179, an error, nothing written); on a pool of
/// the shared device plugin it bootstraps on the host's netdevs, where the pool's
/// `eth0` is the pod network's (RDG177).
#[test]
fn a_jobs_own_host_network_on_an_attached_pool_is_reported() {
    for (mode, pool) in mode_pools() {
        let dir = tempfile::tempdir().unwrap();
        let name = rdmagen::verify::parse(&pool).unwrap()[0]["metadata"]["name"]
            .as_str()
            .unwrap()
            .to_owned();
        std::fs::write(dir.path().join("pool.yaml"), &pool).unwrap();
        std::fs::write(
            dir.path().join("job.yaml"),
            format!("apiVersion: rdmagen/v1alpha1\nkind: Job\nmetadata: {{name: j, namespace: team}}\nspec:\n  pool: {name}\n  image: img:1\n  script: t.py\n  nodes: 2\n  gpusPerNode: 8\n  hostNetwork: true\n"),
        )
        .unwrap();
        let out = rdmagen(&["validate", dir.path().to_str().unwrap()]);
        // Findings (stdout) and the summary (stderr).
        let stderr = format!("{}{}", text(&out.stdout), text(&out.stderr));
        let on_host = pool.contains("attachment: hostNetwork");
        let multus = rails(&rdmagen::verify::parse(&pool).unwrap()[0])
            .iter()
            .any(|(_, network, _)| network.is_some());
        let eth0 = stderr.contains("warning[RDG177]: the job sets hostNetwork: true");
        let attached = stderr.contains("error[RDG179]: the job sets hostNetwork: true");
        assert_eq!(attached, multus && !on_host, "{mode}: {stderr}");
        assert_eq!(
            out.status.code(),
            Some(if attached { 1 } else { 0 }),
            "{mode}: {stderr}"
        );
        // Every pool here bootstraps its pods on eth0 but the host-network ones.
        assert_eq!(eth0, !on_host, "{mode}: {stderr}");
        if attached {
            assert!(stderr.contains("job.yaml:10:"), "{mode}: {stderr}");
        }
    }
}
