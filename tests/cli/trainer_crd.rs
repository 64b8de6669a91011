//! Kubeflow Trainer v2 CRDs: the embedded schemas are the vendored CRDs' (crates/upstream/schemas/trainer/,
//! from tests/upstream/trainer-v2/crds/), the strict checker translates every CEL rule
//! a manifest alone can break, and real upstream manifests pass it: the control the
//! issue asks for (the default torch-distributed runtime validates with the same
//! checker as rdmagen's own output).

use rdmagen::kubeflow::trainer::crd::{
    self, CelHandling, CrdRelease, TrainerKind, cel_rules, check, strict, unknown_keywords,
};
use rdmagen::model::target::Version;
use serde_json::Value;

use crate::support::root;

const UPSTREAM: &str = "tests/upstream/trainer-v2";

fn crd_file(crd: CrdRelease, kind: TrainerKind) -> String {
    let plural = match kind {
        TrainerKind::TrainJob => "trainjobs",
        TrainerKind::TrainingRuntime => "trainingruntimes",
        TrainerKind::ClusterTrainingRuntime => "clustertrainingruntimes",
    };
    format!(
        "{UPSTREAM}/crds/{}/trainer.kubeflow.org_{plural}.yaml",
        crd.tag()
    )
}

fn embedded_file(crd: CrdRelease, kind: TrainerKind) -> String {
    let name = if kind.is_runtime() {
        "trainingruntimes"
    } else {
        "trainjobs"
    };
    format!("crates/upstream/schemas/trainer/{}/{name}.json", crd.tag())
}

/// A schema node without its `description` keyword, recursively (property names,
/// which are data, stay).
pub(crate) fn without_descriptions(schema: &Value) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = serde_json::Map::new();
    for (key, value) in map {
        let converted = match (key.as_str(), value) {
            ("description", Value::String(_)) => continue,
            ("properties", Value::Object(props)) => Value::Object(
                props
                    .iter()
                    .map(|(k, v)| (k.clone(), without_descriptions(v)))
                    .collect(),
            ),
            ("items" | "additionalProperties" | "not", v) => without_descriptions(v),
            ("anyOf" | "allOf" | "oneOf", Value::Array(list)) => {
                Value::Array(list.iter().map(without_descriptions).collect())
            }
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    Value::Object(out)
}

/// The openAPIV3Schema of a vendored CRD, as embedded.
fn extracted(crd: CrdRelease, kind: TrainerKind) -> String {
    let file = crd_file(crd, kind);
    let text = std::fs::read_to_string(root().join(&file)).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(doc["spec"]["names"]["kind"], kind.name(), "{file}");
    let versions = doc["spec"]["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1, "{file}: one version");
    assert_eq!(versions[0]["name"], "v1alpha1", "{file}");
    let schema = &versions[0]["schema"]["openAPIV3Schema"];
    format!(
        "{}\n",
        serde_json::to_string(&without_descriptions(schema)).unwrap()
    )
}

/// crates/upstream/schemas/trainer/ is the vendored CRDs' openAPIV3Schema without descriptions;
/// `RDMAGEN_BLESS=1` rewrites it from them.
#[test]
fn embedded_schemas_are_the_vendored_crds() {
    let bless = std::env::var_os("RDMAGEN_BLESS").is_some();
    for crd in CrdRelease::ALL {
        for kind in TrainerKind::ALL {
            let expected = extracted(crd, kind);
            let file = embedded_file(crd, kind);
            if bless && kind != TrainerKind::ClusterTrainingRuntime {
                std::fs::write(root().join(&file), &expected).unwrap();
            }
            // The two runtime kinds differ only in descriptions: one file serves both.
            assert!(
                crd.embedded(kind) == expected,
                "{file} is not {}'s schema; RDMAGEN_BLESS=1 cargo test embedded_schemas rewrites it",
                crd_file(crd, kind)
            );
        }
    }
}

/// crates/upstream/schemas/trainer/*/*.strict.json is the strict schema of the file beside it, as
/// `strict` makes it; `RDMAGEN_BLESS=1` rewrites it.
#[test]
fn strict_schemas_are_generated_from_the_embedded_ones() {
    let bless = std::env::var_os("RDMAGEN_BLESS").is_some();
    let mut stale = Vec::new();
    for crd in CrdRelease::ALL {
        for kind in TrainerKind::ALL {
            let expected = crd::strict_text(crd, kind);
            let file = embedded_file(crd, kind).replace(".json", ".strict.json");
            if bless && kind != TrainerKind::ClusterTrainingRuntime {
                std::fs::write(root().join(&file), &expected).unwrap();
            }
            if crd.strict_embedded(kind) != expected {
                stale.push(file);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "{stale:?} stale; RDMAGEN_BLESS=1 cargo test --test cli strict_schemas rewrites them"
    );
}

/// Every keyword of the vendored schemas is understood, and every CEL rule is checked
/// or compares with the stored object (immutability), which a manifest cannot break.
#[test]
fn every_cel_rule_of_the_vendored_crds_is_translated() {
    let mut checked = 0;
    for crd in CrdRelease::ALL {
        for kind in [TrainerKind::TrainJob, TrainerKind::TrainingRuntime] {
            let upstream: Value = serde_json::from_str(crd.embedded(kind)).unwrap();
            assert_eq!(
                unknown_keywords(&upstream),
                Vec::<String>::new(),
                "{crd:?} {kind:?}"
            );
            for rule in cel_rules(&upstream) {
                assert_ne!(
                    rule.handling,
                    CelHandling::Ignored,
                    "{crd:?} {kind:?}: a CEL rule of a new shape at {}: {}",
                    rule.at,
                    rule.rule
                );
                checked += usize::from(rule.handling == CelHandling::Checked);
            }
            // The strict schema compiles.
            jsonschema::draft7::new(&strict(&upstream)).unwrap();
        }
    }
    assert!(checked >= 15, "{checked} CEL rules checked");
}

/// The values NVIDIA/aicr's validator fills the placeholders of its runtimes with at
/// apply time (validators/performance: its test data map and buildEFAResourceLine).
fn aicr_placeholders(text: &str) -> String {
    let efa = "                      vpc.amazonaws.com/efa: \"32\"";
    [
        ("${NAMESPACE}", "aicr-validation"),
        ("${WORKER_COUNT}", "2"),
        ("${GPU_COUNT_PER_NODE}", "8"),
        ("${GPU_COUNT}", "16"),
        ("${TEST_TYPE}", "all_reduce_perf"),
        ("${MIN_MESSAGE_SIZE}", "1K"),
        ("${MAX_MESSAGE_SIZE}", "16G"),
        ("${INSTANCE_TYPE}", "p5.48xlarge"),
        ("${EFA_RESOURCE_LIMITS}", efa),
        ("${EFA_RESOURCE_REQUESTS}", efa),
    ]
    .iter()
    .fold(text.to_owned(), |t, (from, to)| t.replace(from, to))
}

fn documents(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    let text = aicr_placeholders(&text);
    assert!(!text.contains("${"), "{file}: a placeholder is left");
    rdmagen::verify::parse(&text).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn messages(doc: &Value, release: Version) -> Vec<String> {
    check(doc, release).into_iter().map(|f| f.message).collect()
}

const V2_1: Version = Version::new(2, 1);
const V2_3: Version = Version::new(2, 3);

/// Every upstream example passes strict validation against the CRDs of the release it
/// was written for (v2.3.0; AICR's pin v2.2.0, which v2.3.0's CRDs judge). The Helm
/// template is skipped: it is not YAML until Helm renders it (`{{ }}`).
#[test]
fn the_upstream_examples_validate_strictly() {
    let mut checked = 0;
    for entry in std::fs::read_dir(root().join(UPSTREAM).join("examples")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if !name.ends_with(".yaml") || name.contains(".helm-template.") {
            continue;
        }
        let file = format!("{UPSTREAM}/examples/{name}");
        for doc in documents(&file) {
            assert!(TrainerKind::of(&doc).is_some(), "{file}: {}", doc["kind"]);
            for release in [V2_3, Version::new(2, 2)] {
                assert_eq!(
                    messages(&doc, release),
                    Vec::<String>::new(),
                    "{file} on {release}"
                );
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 8, "documents checked");
}

/// The control: the default torch-distributed ClusterTrainingRuntime of each release
/// validates against its own release's CRDs, and v2.1.0's fails on v2.3.0, whose torch
/// policy has no numProcPerNode.
#[test]
fn the_default_torch_runtime_validates_for_its_release_only() {
    let [new] = &documents(&format!("{UPSTREAM}/torch_distributed.v2.3.0.yaml"))[..] else {
        panic!("one document");
    };
    let [old] = &documents(&format!("{UPSTREAM}/torch_distributed.v2.1.0.yaml"))[..] else {
        panic!("one document");
    };
    assert_eq!(
        TrainerKind::of(new),
        Some(TrainerKind::ClusterTrainingRuntime)
    );
    assert!(check(new, V2_3).is_empty());
    assert!(check(new, Version::new(2, 2)).is_empty());
    assert!(
        check(new, V2_1).is_empty(),
        "v2.3.0's runtime is valid on 2.1 too"
    );
    assert!(check(old, V2_1).is_empty());
    let found = check(old, V2_3);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].pointer.as_deref(),
        Some("/spec/mlPolicy/torch/numProcPerNode")
    );
    assert!(
        found[0].message.starts_with(
            "'numProcPerNode' was unexpected at /spec/mlPolicy/torch: the Trainer v2.3.0"
        ),
        "{}",
        found[0].message
    );
}

fn yaml(text: &str) -> Value {
    let [doc] = &rdmagen::verify::parse(text).unwrap()[..] else {
        panic!("one document");
    };
    doc.clone()
}

/// runtimePatches is 2.2 and later, podTemplateOverrides 2.1 only; each is an unknown
/// field on the other release, named with what replaced it.
#[test]
fn each_release_knows_only_its_own_patch_field() {
    let patches = yaml(
        r#"
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: patched}
spec:
  runtimeRef: {name: torch-distributed}
  trainer: {numNodes: 2}
  runtimePatches:
    - manager: rdmagen.io/cli
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: node
                template:
                  spec:
                    template:
                      spec:
                        containers:
                          - name: node
                            securityContext: {capabilities: {add: [IPC_LOCK]}}
"#,
    );
    assert!(check(&patches, V2_3).is_empty());
    let found = check(&patches, V2_1);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].pointer.as_deref(), Some("/spec/runtimePatches"));
    assert!(
        found[0]
            .message
            .contains("runtimePatches arrived in Trainer v2.2"),
        "{}",
        found[0].message
    );

    let overrides = yaml(
        r#"
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: overridden}
spec:
  runtimeRef: {name: torch-distributed}
  labels: {team: ml}
  trainer: {numNodes: 2, numProcPerNode: auto}
  podTemplateOverrides:
    - targetJobs: [{name: node}]
      metadata: {annotations: {k8s.v1.cni.cncf.io/networks: rdma-net}}
      spec:
        nodeSelector: {fabric: roce}
        containers:
          - name: node
            volumeMounts: [{name: dshm, mountPath: /dev/shm}]
"#,
    );
    assert!(check(&overrides, V2_1).is_empty());
    let mut found = messages(&overrides, V2_3);
    found.sort();
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found[0].starts_with("'labels' was unexpected at /spec"));
    assert!(found[1].starts_with("'podTemplateOverrides' was unexpected at /spec"));
    assert!(found[1].contains("replaced podTemplateOverrides with spec.runtimePatches"));
    // v2.2 made numProcPerNode an integer.
    assert!(found[2].starts_with("/spec/trainer/numProcPerNode: \"auto\" is not of type"));
}

/// A misspelt field deep in a runtime's pod template is unknown, with the field it
/// probably meant; so is a field in the wrong place.
#[test]
fn a_misspelt_field_deep_in_the_pod_template_fails() {
    let runtime = yaml(
        r#"
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: rdma, namespace: ml}
spec:
  mlPolicy: {numNodes: 2, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: img:1
                      securityContext: {capabilities: {add: [IPC_LOCK]}}
                      volumeMounts: [{name: dshm, mountPath: /dev/shm, readonly: true}]
                      resources: {limits: {nvidia.com/gpu: 8, rdma/hca: 1}}
                  volumes: [{name: dshm, emptyDir: {medium: Memory}}]
"#,
    );
    for release in [V2_1, V2_3] {
        let found = check(&runtime, release);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].pointer.as_deref(),
            Some(
                "/spec/template/spec/replicatedJobs/0/template/spec/template/spec/containers/0/volumeMounts/0/readonly"
            )
        );
        assert!(
            found[0].message.ends_with("(did you mean readOnly?)"),
            "{}",
            found[0].message
        );
    }
    // A Kubernetes field that only the pod, not the CRD's pod template, has.
    let mut status = runtime.clone();
    status["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["status"] =
        serde_json::json!({"phase": "Running"});
    let found = check(&status, V2_3);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[1]
            .message
            .starts_with("'status' was unexpected at /spec/template/spec/replicatedJobs/0/template/spec/template:"),
        "{}",
        found[1].message
    );
}

/// The module's API as the render path calls it: the kind, the CRDs for a release.
#[test]
fn releases_kinds_and_the_api() {
    assert_eq!(crd::API_VERSION, "trainer.kubeflow.org/v1alpha1");
    assert_eq!(crd::LATEST, V2_3);
    assert_eq!(CrdRelease::for_release(V2_1), Some(CrdRelease::V2_1_0));
    assert_eq!(
        CrdRelease::for_release(Version::new(2, 2)),
        Some(CrdRelease::V2_3_0)
    );
    assert_eq!(CrdRelease::for_release(Version::new(2, 0)), None);
    assert!(!crd::supported(Version::new(1, 9)));
}

/// A minimal SHA-256 (FIPS 180-4), to check the vendored files against SOURCE.md.
fn sha256(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut message = data.to_vec();
    let bits = (data.len() as u64).wrapping_mul(8);
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&bits.to_be_bytes());
    for block in message.chunks(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..64 {
            let s1 = v[4].rotate_right(6) ^ v[4].rotate_right(11) ^ v[4].rotate_right(25);
            let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
            let t1 = v[7]
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[i])
                .wrapping_add(w[i]);
            let s0 = v[0].rotate_right(2) ^ v[0].rotate_right(13) ^ v[0].rotate_right(22);
            let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            let t2 = s0.wrapping_add(maj);
            v = [
                t1.wrapping_add(t2),
                v[0],
                v[1],
                v[2],
                v[3].wrapping_add(t1),
                v[4],
                v[5],
                v[6],
            ];
        }
        for (a, b) in h.iter_mut().zip(v) {
            *a = a.wrapping_add(b);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

/// Every file tests/upstream/trainer-v2/SOURCE.md lists is there, byte for byte.
#[test]
fn vendored_files_match_their_recorded_hashes() {
    assert_eq!(
        sha256(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(recorded_hashes_match(UPSTREAM), 16, "files listed");
}

/// Checks every file the table of `upstream`/SOURCE.md lists (a row starting with its
/// path in backticks, the sha256 in its last cell) against its hash; returns how many.
pub(crate) fn recorded_hashes_match(upstream: &str) -> usize {
    let source = std::fs::read_to_string(root().join(upstream).join("SOURCE.md")).unwrap();
    let mut checked = 0;
    for line in source.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let file = cells[1].trim_matches('`');
        let recorded = cells[cells.len() - 2].trim_matches('`');
        let bytes = std::fs::read(root().join(upstream).join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(sha256(&bytes), recorded, "{file} changed");
        checked += 1;
    }
    checked
}

/// lint finds nothing wrong in NVIDIA AICR's runtimes, each with the TrainJob that
/// uses it, on the Trainer release AICR pins (2.2): IB through `nvidia.com/mlnxnics`,
/// RoCE through a DRA claim, EFA; IPC_LOCK and a memory /dev/shm in each.
#[test]
fn lint_passes_aicr_runtimes_with_their_job() {
    let dir = tempfile::tempdir().unwrap();
    let job = "aicr-nccl-all-reduce-trainjob.yaml";
    let fill = |name: &str| {
        let text =
            std::fs::read_to_string(root().join(UPSTREAM).join("examples").join(name)).unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, aicr_placeholders(&text)).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let job = fill(job);
    for runtime in [
        "aicr-gb200-oke-ib-net-trainingruntime.yaml",
        "aicr-roce-eks-net-trainingruntime.yaml",
        "aicr-h100-eks-efa-trainingruntime.yaml",
    ] {
        let runtime = fill(runtime);
        let out = crate::support::rdmagen(&["lint", "--trainer", "2.2", &runtime, &job]);
        assert_eq!(
            crate::support::text(&out.stderr),
            "1 TrainJob(s), 1 (Cluster)TrainingRuntime(s) (Trainer 2.2) in 2 file(s) linted: 0 errors, 0 warnings, 0 infos\n",
            "{runtime}: {}",
            crate::support::text(&out.stdout)
        );
    }
}
