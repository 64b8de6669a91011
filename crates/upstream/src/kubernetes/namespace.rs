//! Whether a namespace is one Kubernetes accepts: a DNS-1123 label
//! (apimachinery's `ValidateNamespaceName`, `IsDNS1123Label`: at most 63 characters,
//! lowercase letters, digits and '-', starting and ending with a letter or digit).
//! rdmagen also names output directories `<job>.<namespace>` with it, which relies on
//! a namespace having no dot or slash.

/// The longest a DNS-1123 label may be.
const DNS_LABEL_MAX: usize = 63;

/// What is wrong with `namespace`, or None when Kubernetes accepts it.
pub fn problem(namespace: &str) -> Option<String> {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    let label = namespace.starts_with(alnum)
        && namespace.ends_with(alnum)
        && namespace.chars().all(|c| alnum(c) || c == '-');
    if !label {
        return Some(format!(
            "namespace `{namespace}` is not a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit)"
        ));
    }
    (namespace.len() > DNS_LABEL_MAX).then(|| {
        format!(
            "namespace `{namespace}` is {} characters; Kubernetes allows at most {DNS_LABEL_MAX}",
            namespace.len()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_1123_labels_only() {
        for good in ["default", "team-a", "0team", "a", &"a".repeat(63)] {
            assert_eq!(problem(good), None, "{good}");
        }
        for bad in [
            "",
            "Team",
            "team.a",
            "a/b",
            "..",
            "-a",
            "a-",
            "a_b",
            &"a".repeat(64),
        ] {
            assert!(problem(bad).is_some(), "{bad}");
        }
    }
}
