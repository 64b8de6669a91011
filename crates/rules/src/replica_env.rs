//! RDG252: the NCCL variables of one PyTorchJob's replicas, compared. Every rank reads
//! NCCL's variables from its own environment (NCCL's environment-variable docs), so a
//! GID index, an HCA list or a transport set on the Master's training container and
//! not on the Workers' (or to another value) makes the ranks of one communicator
//! connect in different ways.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::diagnostics::escape;
use crate::diagnostics::{Finding, Rule};
use crate::pod_templates::{PodTemplate, of_pytorchjob};

/// One replica's `pytorch` container: its NCCL_* variables with a literal value (name
/// → value and the entry's pointer), whether envFrom may set others, and where its
/// env list is.
struct Replica<'a> {
    name: &'a str,
    nccl: BTreeMap<&'a str, (&'a str, String)>,
    env_from: bool,
    env_at: String,
    /// Names set through valueFrom: their values are not known.
    from_refs: Vec<&'a str>,
}

fn replica<'a>(t: &PodTemplate<'a>) -> Option<Replica<'a>> {
    let (i, c) = t.spec()["containers"]
        .as_array()?
        .iter()
        .enumerate()
        .find(|(_, c)| c["name"] == "pytorch")?;
    let at = format!("{}/containers/{i}", t.spec_at());
    let mut nccl = BTreeMap::new();
    let mut from_refs = Vec::new();
    for (j, var) in c["env"].as_array().into_iter().flatten().enumerate() {
        let Some(name) = var["name"].as_str().filter(|n| n.starts_with("NCCL_")) else {
            continue;
        };
        match var["value"].as_str() {
            // A later entry of the same name wins, as the kubelet builds the
            // environment.
            Some(value) => {
                nccl.insert(name, (value, format!("{at}/env/{j}")));
            }
            None if var.get("valueFrom").is_some() => from_refs.push(name),
            None => {
                nccl.insert(name, ("", format!("{at}/env/{j}")));
            }
        }
    }
    Some(Replica {
        name: t.name,
        nccl,
        env_from: c["envFrom"].as_array().is_some_and(|f| !f.is_empty()),
        env_at: format!("{at}/env"),
        from_refs,
    })
}

/// Each NCCL variable on which a replica differs from the first one (Master, where
/// the manifest lists it first), once per variable and replica.
pub(crate) fn check(doc: &Value) -> Vec<Finding> {
    let replicas: Vec<Replica> = of_pytorchjob(doc).iter().filter_map(replica).collect();
    let Some((first, rest)) = replicas.split_first() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for other in rest {
        let names: std::collections::BTreeSet<&str> = first
            .nccl
            .keys()
            .chain(other.nccl.keys())
            .copied()
            .collect();
        for name in names {
            if first.from_refs.contains(&name) || other.from_refs.contains(&name) {
                continue;
            }
            let message = match (first.nccl.get(name), other.nccl.get(name)) {
                (Some((a, _)), Some((b, at))) if a != b => (
                    format!(
                        "{} is `{}` on replica `{}` but `{}` on `{}`",
                        escape::shown(name),
                        escape::shown(a),
                        escape::shown(first.name),
                        escape::shown(b),
                        escape::shown(other.name)
                    ),
                    at.clone(),
                ),
                (Some((a, _)), None) if !other.env_from => (
                    format!(
                        "{} is `{}` on replica `{}` but not set on `{}`",
                        escape::shown(name),
                        escape::shown(a),
                        escape::shown(first.name),
                        escape::shown(other.name)
                    ),
                    other.env_at.clone(),
                ),
                (None, Some((b, at))) if !first.env_from => (
                    format!(
                        "{} is `{}` on replica `{}` but not set on `{}`",
                        escape::shown(name),
                        escape::shown(b),
                        escape::shown(other.name),
                        escape::shown(first.name)
                    ),
                    at.clone(),
                ),
                _ => continue,
            };
            out.push(Finding::at_pointer(
                Rule::ReplicaNcclEnvDiffers,
                format!(
                    "{}: the ranks of one communicator then connect in different ways; set it the same on every replica's pytorch container",
                    message.0
                ),
                message.1,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn job(master: Value, worker: Value) -> Value {
        let pod = |env: Value| json!({"template": {"spec": {"containers": [{"name": "pytorch", "env": env}]}}});
        json!({"spec": {"pytorchReplicaSpecs": {"Master": pod(master), "Worker": pod(worker)}}})
    }

    #[test]
    fn replicas_must_agree_on_nccl() {
        let gid = json!([{"name": "NCCL_IB_GID_INDEX", "value": "3"}]);
        let found = check(&job(gid.clone(), json!([])));
        assert_eq!(found.len(), 1);
        assert_eq!(
            found[0].message,
            "NCCL_IB_GID_INDEX is `3` on replica `Master` but not set on `Worker`: the ranks of one communicator then connect in different ways; set it the same on every replica's pytorch container"
        );
        assert_eq!(
            found[0].pointer.as_deref(),
            Some("/spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/env")
        );
        let other = json!([{"name": "NCCL_IB_GID_INDEX", "value": "1"}]);
        let found = check(&job(gid.clone(), other));
        assert!(
            found[0]
                .message
                .starts_with("NCCL_IB_GID_INDEX is `3` on replica `Master` but `1` on `Worker`")
        );
        assert!(check(&job(gid.clone(), gid.clone())).is_empty());
        // Not NCCL's, or not known: not compared.
        assert!(
            check(&job(
                json!([{"name": "OMP_NUM_THREADS", "value": "4"}]),
                json!([])
            ))
            .is_empty()
        );
        let from = json!([{"name": "NCCL_IB_GID_INDEX", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}]);
        assert!(check(&job(gid, from)).is_empty());
    }
}
