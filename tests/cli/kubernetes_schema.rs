//! Rendered pod templates, PersistentVolumes and PersistentVolumeClaims are checked
//! against Kubernetes 1.33's own core/v1 schema (crates/upstream/schemas/kubernetes/), strict as
//! kubeconform -strict: a `--templates` override may add any field Kubernetes has, and
//! one it does not have is a located finding (RDG095).

use std::path::Path;

use rdmagen::kubernetes::definitions::{
    PERSISTENT_VOLUME, PERSISTENT_VOLUME_CLAIM, POD_TEMPLATE_SPEC, standalone,
};

use crate::support::{rdmagen, root, text, tree};

/// One job, a Master only: each finding is reported once.
const INPUT: &str = "examples/single-node";

/// The line of the built-in template that prints the pod spec, at indent 10.
const POD_SPEC_LINE: &str = "{{ job.pod.template.spec|yaml(10) }}\n";

/// A copy of the built-in `pytorchjob.yaml.j2` that writes `lines` (YAML at indent 10)
/// into the pod spec, as a user's `--templates` override would.
fn pod_spec_override(dir: &Path, lines: &str) -> String {
    let builtin = std::fs::read_to_string(root().join("templates/pytorchjob.yaml.j2")).unwrap();
    assert!(
        builtin.contains(POD_SPEC_LINE),
        "the built-in template changed"
    );
    let custom = builtin.replace(POD_SPEC_LINE, &format!("{POD_SPEC_LINE}{lines}"));
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("pytorchjob.yaml.j2"), custom).unwrap();
    dir.to_str().unwrap().to_owned()
}

/// What `render INPUT --templates DIR -o OUT` prints when verification refuses the
/// rendered pod template: `message` at the job, exit 1, and no OUT.
fn assert_refused(templates: &str, message: &str) {
    assert_render_refused(INPUT, templates, "pytorchjob.yaml", message);
}

/// `render input --templates DIR -o OUT` refuses `file` with one RDG095 finding,
/// `message`, located at the job (`input`/job.yaml, line 4): exit 1, nothing written.
fn assert_render_refused(input: &str, templates: &str, file: &str, message: &str) {
    let out_dir = tempfile::tempdir().unwrap();
    let out_path = out_dir.path().join("out");
    let out = out_path.to_str().unwrap();
    let run = rdmagen(&["render", input, "--templates", templates, "-o", out]);
    assert_eq!(run.status.code(), Some(1), "{}", text(&run.stderr));
    assert_eq!(text(&run.stdout), "");
    assert_eq!(
        text(&run.stderr),
        format!(
            "error[RDG095]: rendered {file}: {message}
 --> {input}/job.yaml:4:1
  |
4 | apiVersion: rdmagen/v1alpha1
  | ^
  = RDG095: a rendered pod template, PersistentVolume or PersistentVolumeClaim does not match Kubernetes' own schema (source: crates/upstream/schemas/kubernetes/v1.33-core.json)

error: 1 finding fails the run; nothing was written
"
        )
    );
    assert!(!out_path.exists(), "{out} was written");
}

#[test]
fn a_template_may_add_a_pod_field_kubernetes_has() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "          imagePullSecrets:\n            - name: regcred\n";
    let templates = pod_spec_override(&dir.path().join("t"), extra);
    let builtin = rdmagen(&["render", INPUT]);
    assert!(builtin.status.success(), "{}", text(&builtin.stderr));
    let custom = rdmagen(&["render", INPUT, "--templates", &templates]);
    assert!(custom.status.success(), "{}", text(&custom.stderr));
    assert_eq!(text(&custom.stderr), "");
    // The pod spec is the end of a single-node job's manifest.
    assert_eq!(
        text(&custom.stdout),
        format!("{}{extra}", text(&builtin.stdout))
    );
}

#[test]
fn a_template_adding_a_field_kubernetes_does_not_have_is_refused_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let templates = pod_spec_override(
        &dir.path().join("typo"),
        "          imagePullSecret: regcred\n",
    );
    assert_refused(
        &templates,
        "/spec/pytorchReplicaSpecs/Master/template/spec/imagePullSecret: unknown field, not in Kubernetes 1.33's PodSpec (did you mean imagePullSecrets?)",
    );

    let templates = pod_spec_override(
        &dir.path().join("wrong-type"),
        "          hostNetwork: \"yes\"\n",
    );
    assert_refused(
        &templates,
        "/spec/pytorchReplicaSpecs/Master/template/spec/hostNetwork: \"yes\" is not of type \"boolean\"",
    );

    // A pod field written into a container is in the wrong place.
    let templates = pod_spec_override(
        &dir.path().join("misplaced"),
        "          initContainers:
            - name: warmup
              image: busybox
              imagePullSecrets:
                - name: regcred
",
    );
    assert_refused(
        &templates,
        "/spec/pytorchReplicaSpecs/Master/template/spec/initContainers/0/imagePullSecrets: unknown field, not in Kubernetes 1.33's Container",
    );
}

#[test]
fn a_storage_template_is_checked_against_kubernetes_too() {
    let builtin = std::fs::read_to_string(root().join("templates/storage.yaml.j2")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let custom = builtin.replace(
        "  volumeName: {{ s.volume_name }}\n",
        "  volumeName: {{ s.volume_name }}\n  volumeMode: Filesystem\n  accessMode: ReadWriteMany\n",
    );
    assert_ne!(custom, builtin);
    std::fs::write(dir.path().join("storage.yaml.j2"), custom).unwrap();
    assert_render_refused(
        "examples/pv-pvc",
        dir.path().to_str().unwrap(),
        "storage.yaml",
        "document 2 (PersistentVolumeClaim) at /spec/accessMode: unknown field, not in Kubernetes 1.33's PersistentVolumeClaimSpec (did you mean accessModes?)",
    );
}

/// Every pod template and PersistentVolume/Claim rdmagen's examples render is valid
/// Kubernetes 1.33 (the acceptance: checked here directly against the vendored
/// schema, not through rdmagen's verification).
#[test]
fn every_golden_pod_template_and_volume_is_valid_kubernetes() {
    let compile = |root: &str| jsonschema::validator_for(&standalone(root)).unwrap();
    let pod_template = compile(POD_TEMPLATE_SPEC);
    let volume = compile(PERSISTENT_VOLUME);
    let claim = compile(PERSISTENT_VOLUME_CLAIM);
    let errors = |validator: &jsonschema::Validator, value: &serde_json::Value| {
        validator
            .iter_errors(value)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect::<Vec<_>>()
    };
    let (mut manifests, mut templates, mut volumes, mut claims) = (0, 0, 0, 0);
    for (path, bytes) in tree(&root().join("golden")) {
        let is_manifest = path.ends_with("/pytorchjob.yaml");
        if !is_manifest && !path.ends_with("/storage.yaml") {
            continue;
        }
        let docs = rdmagen::verify::parse(&String::from_utf8(bytes).unwrap()).unwrap();
        for doc in docs {
            if is_manifest {
                manifests += 1;
                let replicas = doc["spec"]["pytorchReplicaSpecs"].as_object().unwrap();
                for (role, replica) in replicas {
                    let found = errors(&pod_template, &replica["template"]);
                    assert!(found.is_empty(), "golden/{path} {role}: {found:#?}");
                    templates += 1;
                }
                continue;
            }
            let (validator, count) = match doc["kind"].as_str() {
                Some("PersistentVolume") => (&volume, &mut volumes),
                Some("PersistentVolumeClaim") => (&claim, &mut claims),
                other => panic!("golden/{path}: a {other:?} in storage.yaml"),
            };
            let found = errors(validator, &doc);
            assert!(found.is_empty(), "golden/{path}: {found:#?}");
            *count += 1;
        }
    }
    // 16 manifests when this was written, 15 of them with a Worker; pv-pvc renders one
    // PersistentVolume and its claim.
    assert!(manifests >= 16, "only {manifests} golden manifests");
    assert!(templates >= 31, "only {templates} pod templates checked");
    assert!(
        volumes >= 1 && claims >= 1,
        "{volumes} PVs, {claims} PVCs checked"
    );
}
