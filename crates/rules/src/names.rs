//! Names as the API server validates them on create: an object's metadata
//! (ValidateObjectMeta: labels, annotations, and the name of a custom resource) and
//! the names inside a pod spec (ValidatePodSpec: volumes, containers and their ports,
//! env and envFrom, the objects they refer to, serviceAccountName, nodeSelector). A
//! transcription of Kubernetes v1.33.3 `pkg/apis/core/validation/validation.go` and
//! apimachinery v0.33.3, with the predicates in `kubernetes::names` and
//! `kubernetes::labels`. Rendered output (PyTorchJobs, the Trainer runtime's pods and
//! the pod a TrainJob gets, the smoke test's job) and linted manifests come here
//! through `manifest` and `trainer`, as the tolerations do.
//!
//! Not transcribed: ephemeral volumes' generated claim names (L746-L753), projected
//! volume sources, imagePullSecrets, finalizers and owner references.

use std::collections::HashSet;

use serde_json::Value;

use crate::diagnostics::escape::quoted_ascii;
use crate::diagnostics::message::{Bounded, pointer_segment};
use crate::diagnostics::{Finding, Rule};
use crate::kubernetes::labels::{is_annotation_key, is_label_key, is_label_value};
use crate::kubernetes::names::{
    ANNOTATIONS_MAX_BYTES, annotations_size, is_dns1123_label, is_env_var_name, is_object_name,
    is_port_name,
};

/// The most findings one object's metadata, or one pod's names, give: a manifest may
/// hold tens of thousands of labels or env entries, and each finding is located in
/// the file (as `resources` caps per container).
const MAX_FINDINGS: usize = 16;

const QUALIFIED_NAME: &str = "`name` or `prefix/name`: the name at most 63 letters, digits, `-`, `_`, `.`, starting and ending with a letter or digit, the prefix a lowercase DNS subdomain";
const DNS_LABEL: &str =
    "at most 63 lowercase letters, digits and `-`, starting and ending with a letter or digit";
const DNS_SUBDOMAIN: &str = "a DNS-1123 subdomain: at most 253 lowercase letters, digits, `-` and `.`, starting and ending with a letter or digit";

/// A name as a message quotes it: a name is wrong for a character the reader may not
/// see (U+2028, a trailing space), so all but printable ASCII is escaped; at most 80
/// characters.
fn shown(text: &str) -> String {
    quoted_ascii(text, 80)
}

fn entries(map: &Value) -> impl Iterator<Item = (&str, &str)> {
    map.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
}

fn items(list: &Value) -> impl Iterator<Item = (usize, &Value)> {
    list.as_array().into_iter().flatten().enumerate()
}

/// The findings about `meta` (an object's or a pod template's metadata, at JSON
/// Pointer `base`): its labels and annotations (apimachinery objectmeta.go L188-L189;
/// a pod template's, validation.go L6401-L6402).
pub(crate) fn object_meta(meta: &Value, base: &str) -> Vec<Finding> {
    let mut out = Bounded::new(MAX_FINDINGS);
    labels(
        &mut out,
        &meta["labels"],
        &format!("{base}/labels"),
        "label",
    );
    // ValidateAnnotations (objectmeta.go L44-L56).
    let annotations = &meta["annotations"];
    for (key, _) in entries(annotations) {
        if !is_annotation_key(key) {
            out.push(|| Finding::at_pointer(
                Rule::AnnotationInvalid,
                format!(
                    "annotation key {} is not a qualified name, even lowercased ({QUALIFIED_NAME}); the API server refuses the object",
                    shown(key)
                ),
                format!("{base}/annotations/{}", pointer_segment(key)),
            ));
        }
    }
    let size = annotations_size(entries(annotations));
    if size > ANNOTATIONS_MAX_BYTES {
        out.push(|| Finding::at_pointer(
            Rule::AnnotationInvalid,
            format!(
                "the annotations' keys and values add up to {size} bytes, over the API server's limit of {ANNOTATIONS_MAX_BYTES} (256 KiB); it refuses the object"
            ),
            format!("{base}/annotations"),
        ));
    }
    out.finish("this object's metadata")
}

/// The finding about the name of a custom resource whose metadata is `meta`
/// (apiextensions-apiserver v0.33.3 customresource/validator.go L53: NameIsDNSSubdomain).
pub(crate) fn custom_resource_name(meta: &Value, base: &str) -> Option<Finding> {
    let name = meta["name"].as_str().filter(|n| !n.is_empty())?;
    (!is_object_name(name, false)).then(|| {
        Finding::at_pointer(
            Rule::ObjectNameInvalid,
            format!(
                "name {} is not {DNS_SUBDOMAIN}; the API server refuses the object",
                shown(name)
            ),
            format!("{base}/name"),
        )
    })
}

/// ValidateLabels (apimachinery meta/v1/validation/validation.go L113-L122) on `map`
/// at `at`; `what` says what kind of map it is in messages.
fn labels(out: &mut Bounded, map: &Value, at: &str, what: &str) {
    for (key, value) in entries(map) {
        let pointer = format!("{at}/{}", pointer_segment(key));
        if !is_label_key(key) {
            out.push(|| Finding::at_pointer(
                Rule::LabelInvalid,
                format!(
                    "{what} key {} is not a qualified name ({QUALIFIED_NAME}); the API server refuses it",
                    shown(key)
                ),
                pointer.clone(),
            ));
        }
        if !is_label_value(value) {
            out.push(|| Finding::at_pointer(
                Rule::LabelInvalid,
                format!(
                    "{what} {} has the value {}, which is not a label value (empty, or at most 63 letters, digits, `-`, `_`, `.`, starting and ending with a letter or digit); the API server refuses it",
                    shown(key),
                    shown(value)
                ),
                pointer,
            ));
        }
    }
}

/// The findings about the names in `pod`, a pod spec at JSON Pointer `base`
/// (ValidatePodSpec, validation.go L4245-L4286).
pub(crate) fn pod(pod: &Value, base: &str) -> Vec<Finding> {
    let mut out = Bounded::new(MAX_FINDINGS);
    volumes(&mut out, &pod["volumes"], &format!("{base}/volumes"));
    containers(&mut out, pod, base);
    // L4272.
    labels(
        &mut out,
        &pod["nodeSelector"],
        &format!("{base}/nodeSelector"),
        "nodeSelector label",
    );
    // L4282-L4286.
    if let Some(account) = pod["serviceAccountName"].as_str().filter(|a| !a.is_empty()) {
        reference(
            &mut out,
            "serviceAccountName",
            "ServiceAccount",
            account,
            false,
            format!("{base}/serviceAccountName"),
            true,
        );
    }
    out.finish("this pod's names")
}

/// A reference to a `kind` object named `name`, at `pointer`: `checked` when the API
/// server refuses the pod for it, else the pod is created and waits for an object
/// that can never exist. `prefix` as NameIsDNSSubdomain takes it.
fn reference(
    out: &mut Bounded,
    field: &str,
    kind: &str,
    name: &str,
    prefix: bool,
    pointer: String,
    checked: bool,
) {
    if is_object_name(name, prefix) {
        return;
    }
    let outcome = if checked {
        "the API server refuses the pod".to_owned()
    } else {
        format!(
            "the API server accepts the pod, which then waits forever for a {kind} that cannot exist"
        )
    };
    out.push(|| {
        Finding::at_pointer(
            Rule::ReferenceNameInvalid,
            format!(
                "{field} {} is no {kind} name ({DNS_SUBDOMAIN}); {outcome}",
                shown(name)
            ),
            pointer,
        )
    });
}

/// ValidateVolumes (L409-L452): each name a DNS-1123 label, a valid name never twice
/// (only a volume without errors joins the set, L444-L446). The sources' references
/// are only required to be non-empty (validatePersistentClaimVolumeSource L982-L988,
/// validateConfigMapVolumeSource L947-L965, validateSecretVolumeSource L928-L945).
fn volumes(out: &mut Bounded, list: &Value, at: &str) {
    let mut seen = HashSet::new();
    for (i, volume) in items(list) {
        let Some(name) = volume["name"].as_str() else {
            continue;
        };
        let pointer = format!("{at}/{i}/name");
        if !is_dns1123_label(name) {
            out.push(|| Finding::at_pointer(
                Rule::VolumeNameInvalid,
                format!(
                    "volume name {} is not a DNS-1123 label ({DNS_LABEL}); the API server refuses the pod",
                    shown(name)
                ),
                pointer,
            ));
        } else if !seen.insert(name) {
            out.push(|| {
                Finding::at_pointer(
                    Rule::VolumeNameInvalid,
                    format!(
                        "volume name {} is given twice; the API server refuses the pod",
                        shown(name)
                    ),
                    pointer,
                )
            });
        }
        let sources = [
            (
                "persistentVolumeClaim",
                "claimName",
                "PersistentVolumeClaim",
            ),
            ("configMap", "name", "ConfigMap"),
            ("secret", "secretName", "Secret"),
        ];
        for (source, field, kind) in sources {
            if let Some(target) = volume[source][field].as_str().filter(|n| !n.is_empty()) {
                reference(
                    out,
                    &format!("{source}.{field}"),
                    kind,
                    target,
                    false,
                    format!("{at}/{i}/{source}/{field}"),
                    false,
                );
            }
        }
    }
}

/// Every container's and init container's name (validateContainerCommon L3617-L3621),
/// unique across both lists (L3700-L3707, L3568-L3574), with its ports and env.
fn containers(out: &mut Bounded, pod: &Value, base: &str) {
    let regular: Vec<&str> = items(&pod["containers"])
        .map(|(_, c)| c["name"].as_str().unwrap_or_default())
        .collect();
    let mut seen: HashSet<&str> = HashSet::new();
    for list in ["containers", "initContainers"] {
        if list == "initContainers" {
            // L3551-L3554: the init containers are judged against every regular name.
            seen = regular.iter().copied().collect();
        }
        for (i, c) in items(&pod[list]) {
            let at = format!("{base}/{list}/{i}");
            if let Some(name) = c["name"].as_str() {
                if !is_dns1123_label(name) {
                    out.push(|| Finding::at_pointer(
                        Rule::ContainerNameInvalid,
                        format!(
                            "container name {} is not a DNS-1123 label ({DNS_LABEL}); the API server refuses the pod",
                            shown(name)
                        ),
                        format!("{at}/name"),
                    ));
                }
                // Regular containers insert every name; init containers a non-empty one.
                let fresh = if list == "containers" || !name.is_empty() {
                    seen.insert(name)
                } else {
                    !seen.contains(name)
                };
                if !fresh {
                    out.push(|| Finding::at_pointer(
                        Rule::ContainerNameInvalid,
                        format!(
                            "container name {} is used by another container or init container of the pod; the API server refuses it",
                            shown(name)
                        ),
                        format!("{at}/name"),
                    ));
                }
            }
            ports(out, &c["ports"], &format!("{at}/ports"));
            env(out, c, &at);
        }
    }
}

/// validateContainerPorts (L2577-L2592): a named port's name, unique in the container.
fn ports(out: &mut Bounded, list: &Value, at: &str) {
    let mut seen = HashSet::new();
    for (i, port) in items(list) {
        let Some(name) = port["name"].as_str().filter(|n| !n.is_empty()) else {
            continue;
        };
        let problem = if !is_port_name(name) {
            "is not an IANA service name (1 to 15 lowercase letters, digits and `-`, at least one letter, no `--`, no `-` at either end)"
        } else if !seen.insert(name) {
            "is given twice in the container"
        } else {
            continue;
        };
        out.push(|| {
            Finding::at_pointer(
                Rule::PortNameInvalid,
                format!(
                    "port name {} {problem}; the API server refuses the pod",
                    shown(name)
                ),
                format!("{at}/{i}/name"),
            )
        });
    }
}

/// ValidateEnv (L2616-L2637) and ValidateEnvFrom (L2765-L2798) of container `c` at
/// `at`: names and prefixes relaxed (IsRelaxedEnvVarName), and the objects they read.
fn env(out: &mut Bounded, c: &Value, at: &str) {
    let bad_name = |what: &str, name: &str, pointer: String| {
        Finding::at_pointer(
            Rule::InvalidEnvName,
            format!(
                "{what} {} is not a variable name the API server accepts (printable ASCII other than `=`, not empty); it refuses the pod",
                shown(name)
            ),
            pointer,
        )
    };
    for (j, var) in items(&c["env"]) {
        if let Some(name) = var["name"].as_str()
            && !is_env_var_name(name)
        {
            out.push(|| bad_name("env name", name, format!("{at}/env/{j}/name")));
        }
        // validateConfigMapKeySelector, validateSecretKeySelector (L2866-L2899): the
        // name is checked even when empty.
        for (selector, kind) in [("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")] {
            let source = &var["valueFrom"][selector];
            if source.is_object() {
                let name = source["name"].as_str().unwrap_or_default();
                reference(
                    out,
                    &format!("valueFrom.{selector}.name"),
                    kind,
                    name,
                    false,
                    format!("{at}/env/{j}/valueFrom/{selector}/name"),
                    true,
                );
            }
        }
    }
    for (j, source) in items(&c["envFrom"]) {
        if let Some(prefix) = source["prefix"].as_str().filter(|p| !p.is_empty())
            && !is_env_var_name(prefix)
        {
            out.push(|| bad_name("envFrom prefix", prefix, format!("{at}/envFrom/{j}/prefix")));
        }
        // validateConfigMapEnvSource, validateSecretEnvSource (L2800-L2822): a
        // non-empty name, checked as a prefix.
        for (reference_field, kind) in [("configMapRef", "ConfigMap"), ("secretRef", "Secret")] {
            if let Some(name) = source[reference_field]["name"]
                .as_str()
                .filter(|n| !n.is_empty())
            {
                reference(
                    out,
                    &format!("envFrom {reference_field}.name"),
                    kind,
                    name,
                    true,
                    format!("{at}/envFrom/{j}/{reference_field}/name"),
                    true,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn found(findings: Vec<Finding>) -> Vec<(&'static str, String)> {
        findings
            .into_iter()
            .map(|f| (f.rule.info().id, f.pointer.unwrap_or_default()))
            .collect()
    }

    fn at(id: &'static str, pointer: &str) -> (&'static str, String) {
        (id, pointer.to_owned())
    }

    /// The attack's five names, each refused where it sits.
    #[test]
    fn what_the_api_server_refuses() {
        let meta = json!({"labels": {"team": "a: b\nc"}});
        assert_eq!(
            found(object_meta(&meta, "/metadata")),
            [at("RDG166", "/metadata/labels/team")]
        );
        let spec = json!({
            "serviceAccountName": "yes no",
            "volumes": [
                {"name": "*Alias_Vol", "emptyDir": {}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "Not A Claim!"}},
            ],
            "containers": [{"name": "pytorch", "image": "i", "env": [{"name": "A\u{2028}B", "value": "1"}]}],
        });
        assert_eq!(
            found(pod(&spec, "/spec")),
            [
                at("RDG168", "/spec/volumes/0/name"),
                at("RDG171", "/spec/volumes/1/persistentVolumeClaim/claimName"),
                at("RDG114", "/spec/containers/0/env/0/name"),
                at("RDG171", "/spec/serviceAccountName"),
            ]
        );
    }

    #[test]
    fn what_it_accepts() {
        let meta = json!({
            "name": "a.b-c",
            "labels": {"app": "", "example.com/Key_1": "V.1", "x": "a".repeat(63)},
            "annotations": {"Example.COM/Note": "anything: at all\n", "rdmagen.io/ignore": "RDG001 x"},
        });
        assert!(object_meta(&meta, "/metadata").is_empty());
        assert!(custom_resource_name(&meta, "/metadata").is_none());
        let spec = json!({
            "serviceAccountName": "trainer.sa",
            "nodeSelector": {"nvidia.com/gpu.product": "H100-SXM"},
            "volumes": [
                {"name": "dshm", "emptyDir": {"medium": "Memory"}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "my.claim"}},
                {"name": "cfg", "configMap": {"name": "cfg-1"}},
            ],
            "containers": [{
                "name": "pytorch", "image": "i",
                "ports": [{"name": "http", "containerPort": 80}, {"containerPort": 81}, {"containerPort": 82}],
                "env": [{"name": "my.var-1 x", "value": "1"}, {"name": "K", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
                "envFrom": [{"prefix": "P_", "configMapRef": {"name": "team-"}}],
            }],
            "initContainers": [{"name": "init", "image": "i"}],
        });
        assert!(pod(&spec, "/spec").is_empty());
    }

    #[test]
    fn labels_and_annotations() {
        let long = "a".repeat(64);
        let meta = json!({
            "labels": {"": "x", "a/b/c": "x", "Ex.com/a": "x", &long: "x", "ok": &long, "v": "-a"},
            "annotations": {"a b": "x"},
        });
        let mut pointers: Vec<_> = found(object_meta(&meta, "/m"));
        pointers.sort();
        assert_eq!(
            pointers,
            [
                at("RDG166", "/m/labels/"),
                at("RDG166", "/m/labels/Ex.com~1a"),
                at("RDG166", &format!("/m/labels/{long}")),
                at("RDG166", "/m/labels/a~1b~1c"),
                at("RDG166", "/m/labels/ok"),
                at("RDG166", "/m/labels/v"),
                at("RDG167", "/m/annotations/a b"),
            ]
        );
        // 256 KiB exactly is allowed; one byte more is not.
        let fits = json!({"annotations": {"k": "v".repeat(ANNOTATIONS_MAX_BYTES - 1)}});
        assert!(object_meta(&fits, "/m").is_empty());
        let over = json!({"annotations": {"k": "v".repeat(ANNOTATIONS_MAX_BYTES)}});
        assert_eq!(
            found(object_meta(&over, "/m")),
            [at("RDG167", "/m/annotations")]
        );
        assert_eq!(
            found(
                custom_resource_name(&json!({"name": "My_Job"}), "/metadata")
                    .into_iter()
                    .collect()
            ),
            [at("RDG172", "/metadata/name")]
        );
    }

    #[test]
    fn duplicates_as_upstream_counts_them() {
        let spec = json!({
            "volumes": [{"name": "a"}, {"name": "a"}, {"name": "B"}, {"name": "B"}],
            "containers": [
                {"name": "c", "ports": [{"name": "p"}, {"name": "p"}, {"name": "P"}]},
                {"name": "c"},
            ],
            "initContainers": [{"name": "c"}, {"name": "i"}, {"name": "i"}],
        });
        assert_eq!(
            found(pod(&spec, "/s")),
            [
                at("RDG168", "/s/volumes/1/name"),
                // An invalid name never joins the set (L444-L446): no duplicate finding.
                at("RDG168", "/s/volumes/2/name"),
                at("RDG168", "/s/volumes/3/name"),
                at("RDG170", "/s/containers/0/ports/1/name"),
                at("RDG170", "/s/containers/0/ports/2/name"),
                at("RDG169", "/s/containers/1/name"),
                at("RDG169", "/s/initContainers/0/name"),
                at("RDG169", "/s/initContainers/2/name"),
            ]
        );
    }

    #[test]
    fn references_and_env_from() {
        let spec = json!({
            "volumes": [
                {"name": "c", "configMap": {"name": "Cfg"}},
                {"name": "s", "secret": {"secretName": "a_b"}},
            ],
            "containers": [{
                "name": "c",
                "env": [
                    {"name": "", "value": "x"},
                    {"name": "A=B"},
                    {"name": "K", "valueFrom": {"configMapKeyRef": {"key": "k"}}},
                ],
                "envFrom": [
                    {"prefix": "a\tb", "secretRef": {"name": "Sec"}},
                    {"configMapRef": {"name": "team-"}},
                ],
            }],
        });
        assert_eq!(
            found(pod(&spec, "/s")),
            [
                at("RDG171", "/s/volumes/0/configMap/name"),
                at("RDG171", "/s/volumes/1/secret/secretName"),
                at("RDG114", "/s/containers/0/env/0/name"),
                at("RDG114", "/s/containers/0/env/1/name"),
                // A key selector's name is checked even when missing (empty).
                at(
                    "RDG171",
                    "/s/containers/0/env/2/valueFrom/configMapKeyRef/name"
                ),
                at("RDG114", "/s/containers/0/envFrom/0/prefix"),
                at("RDG171", "/s/containers/0/envFrom/0/secretRef/name"),
            ]
        );
    }

    #[test]
    fn findings_are_capped_per_pod() {
        let env: Vec<Value> = (0..5000)
            .map(|i| json!({"name": format!("A={i}")}))
            .collect();
        let spec = json!({"containers": [{"name": "c", "env": env}]});
        let findings = pod(&spec, "/s");
        assert_eq!(findings.len(), MAX_FINDINGS);
        assert!(
            findings[MAX_FINDINGS - 1]
                .message
                .ends_with("(4984 more findings about this pod's names not shown)"),
            "{}",
            findings[MAX_FINDINGS - 1].message
        );
    }
}
