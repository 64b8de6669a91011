//! Multus CNI's pod annotation: how a pod asks for secondary networks
//! (NetworkAttachmentDefinitions), transcribed once for the plan that writes it and the
//! checks that read it back.
//!
//! Sources (`../shared/reference/network-operator.md` §2): multus-cni@v4.3.0
//! `pkg/k8sclient/k8sclient.go:175-250` (`parsePodNetworkObjectName`,
//! `parsePodNetworkAnnotation`), `pkg/multus/multus.go:94-106` (interface names), and
//! the vendored network-attachment-definition-client `types.go:189` (the key).

use std::fmt;

use serde::Deserialize;

/// The pod annotation Multus reads (network-attachment-definition-client types.go:189).
pub const NETWORKS_ANNOTATION: &str = "k8s.v1.cni.cncf.io/networks";

/// The longest interface name Multus accepts after `@`: IFNAMSIZ − 1
/// (k8sclient.go:212-216).
pub const MAX_IFNAME: usize = 15;

/// One entry of the annotation: a NetworkAttachmentDefinition, its namespace (the
/// pod's when absent, k8sclient.go:247-250) and the interface name asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub namespace: Option<String>,
    pub name: String,
    pub interface: Option<String>,
}

/// `[<namespace>/]<name>[@<ifname>]`, the comma form's item (k8sclient.go:175-197).
impl fmt::Display for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(ns) = &self.namespace {
            write!(f, "{ns}/")?;
        }
        f.write_str(&self.name)?;
        if let Some(ifname) = &self.interface {
            write!(f, "@{ifname}")?;
        }
        Ok(())
    }
}

/// The annotation's value in the comma form, one item per selection in order. Every
/// name rdmagen writes is checked by [`name_problem`] and [`ifname_problem`] first, so
/// the value never holds `[`, `{` or `"` and Multus reads it in the comma form.
pub fn format(selections: &[Selection]) -> String {
    selections
        .iter()
        .map(Selection::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// Multus's check of a namespace or network name: a DNS-1123 label
/// (`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`, k8sclient.go:199-210).
pub fn name_problem(name: &str) -> Option<String> {
    let bytes = name.as_bytes();
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let ok = match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            alnum(first) && alnum(last) && bytes.iter().all(|b| alnum(b) || *b == b'-')
        }
        _ => false,
    };
    (!ok).then(|| {
        format!("`{name}` is not a DNS-1123 label (lower-case letters, digits and `-`, starting and ending with a letter or digit), which Multus requires of a network and its namespace")
    })
}

/// Multus's check of an interface name after `@` (k8sclient.go:212-216): at most 15
/// bytes, no `/`, no whitespace.
pub fn ifname_problem(ifname: &str) -> Option<String> {
    if ifname.is_empty() {
        return Some("an interface name is empty".to_owned());
    }
    (ifname.len() > MAX_IFNAME || ifname.contains(['/', ' ', '\t', '\n', '\x0b', '\x0c', '\r']))
        .then(|| format!("interface name `{ifname}` is longer than {MAX_IFNAME} characters or holds `/` or whitespace, which Multus refuses"))
}

/// A JSON-form entry; only the keys rdmagen's checks need (types.go
/// NetworkSelectionElement; `interfaceRequest` is the pre-3.2 key, still honoured,
/// k8sclient.go:281-284).
#[derive(Deserialize)]
struct JsonSelection {
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    interface: String,
    #[serde(default, rename = "interfaceRequest")]
    interface_request: String,
}

/// The annotation as Multus reads it, with `default_namespace` (the pod's) filled in
/// where an entry names none. A transcription of `parsePodNetworkAnnotation` and
/// `parsePodNetworkObjectName` (k8sclient.go:175-250): the JSON form when the value
/// holds `[`, `{` or `"`, else items split on `,` and trimmed, each
/// `[<ns>/]<name>[@<ifname>]` with at most one `/` and one `@`, names DNS-1123 labels.
pub fn parse(value: &str, default_namespace: &str) -> Result<Vec<Selection>, String> {
    if value.is_empty() {
        return Err("the annotation is empty".to_owned());
    }
    let mut out = if value.contains(['[', '{', '"']) {
        let items: Vec<JsonSelection> =
            serde_json::from_str(value).map_err(|e| format!("JSON form: {e}"))?;
        items
            .into_iter()
            .map(|j| {
                let interface = if j.interface.is_empty() {
                    j.interface_request
                } else {
                    j.interface
                };
                Selection {
                    namespace: (!j.namespace.is_empty()).then_some(j.namespace),
                    name: j.name,
                    interface: (!interface.is_empty()).then_some(interface),
                }
            })
            .collect()
    } else {
        value
            .split(',')
            .map(|item| object_name(item.trim()))
            .collect::<Result<Vec<_>, _>>()?
    };
    for s in &mut out {
        if s.namespace.is_none() {
            s.namespace = Some(default_namespace.to_owned());
        }
    }
    Ok(out)
}

/// `parsePodNetworkObjectName`: one comma-form item.
fn object_name(item: &str) -> Result<Selection, String> {
    let slash: Vec<&str> = item.split('/').collect();
    let (namespace, rest) = match slash.as_slice() {
        [ns, rest] => (ns.trim(), *rest),
        [rest] => ("", *rest),
        _ => return Err(format!("`{item}`: more than one `/`")),
    };
    let at: Vec<&str> = rest.split('@').collect();
    let (name, ifname) = match at.as_slice() {
        [name] => (name.trim(), ""),
        [name, ifname] => (name.trim(), ifname.trim()),
        _ => return Err(format!("`{item}`: more than one `@`")),
    };
    // Multus skips the check of an empty item (`len(...) > 0`), so an empty name passes
    // here as it does there, and fails later when no NAD of that name is found.
    for part in [namespace, name] {
        if !part.is_empty()
            && let Some(problem) = name_problem(part)
        {
            return Err(problem);
        }
    }
    if !ifname.is_empty()
        && let Some(problem) = ifname_problem(ifname)
    {
        return Err(problem);
    }
    Ok(Selection {
        namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
        name: name.to_owned(),
        interface: (!ifname.is_empty()).then(|| ifname.to_owned()),
    })
}

/// The interface Multus gives the k-th entry (0-based) of the annotation when it asks
/// for none: `net<k+1>`, the cluster network being delegate 0 (`eth0`)
/// (multus.go:94-106).
pub fn auto_ifname(k: usize) -> String {
    format!("net{}", k + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(ns: Option<&str>, name: &str, ifname: Option<&str>) -> Selection {
        Selection {
            namespace: ns.map(str::to_owned),
            name: name.to_owned(),
            interface: ifname.map(str::to_owned),
        }
    }

    #[test]
    fn the_comma_form_round_trips_with_the_pods_namespace_filled_in() {
        let written = vec![
            sel(None, "rail1", None),
            sel(Some("netops"), "rail2", Some("net2")),
        ];
        let value = format(&written);
        assert_eq!(value, "rail1,netops/rail2@net2");
        assert_eq!(
            parse(&value, "team-a").unwrap(),
            vec![
                sel(Some("team-a"), "rail1", None),
                sel(Some("netops"), "rail2", Some("net2"))
            ]
        );
        // Items are trimmed, as strings.TrimSpace does.
        assert_eq!(parse(" a , b ", "d").unwrap().len(), 2);
    }

    #[test]
    fn multus_refusals_are_refused() {
        assert!(parse("a/b/c", "d").is_err());
        assert!(parse("a@x@y", "d").is_err());
        assert!(parse("Rail1", "d").is_err());
        assert!(parse("rail-", "d").is_err());
        assert!(parse("rail1@averyveryverylongname", "d").is_err());
        assert!(parse("", "d").is_err());
    }

    #[test]
    fn the_json_form_is_chosen_by_its_characters() {
        let value = r#"[{"name":"rail1","namespace":"netops","interface":"net1"},{"name":"rail2","interfaceRequest":"net2"}]"#;
        assert_eq!(
            parse(value, "d").unwrap(),
            vec![
                sel(Some("netops"), "rail1", Some("net1")),
                sel(Some("d"), "rail2", Some("net2"))
            ]
        );
    }

    #[test]
    fn auto_names_start_at_net1() {
        assert_eq!(auto_ifname(0), "net1");
        assert_eq!(auto_ifname(7), "net8");
    }
}
