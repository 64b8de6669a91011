//! Label keys and values as Kubernetes validates them (k8s.io/apimachinery v0.33,
//! `pkg/util/validation/validation.go`): `IsQualifiedName` (L41-L69), `IsValidLabelValue`
//! (L165-L174) and `IsDNS1123Subdomain` (L219-L230). A toleration's key is a label key
//! and its value a label value (ValidateTolerations).

/// qualifiedNameMaxLength (L33) and LabelValueMaxLength (L158).
const NAME_MAX: usize = 63;
/// DNS1123SubdomainMaxLength (L212).
const SUBDOMAIN_MAX: usize = 253;

/// qualifiedNameFmt (L29-L31): alphanumeric at both ends, `-`, `_` and `.` inside.
fn is_name_part(name: &str) -> bool {
    let alphanumeric = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    name.len() <= NAME_MAX
        && alphanumeric(name.chars().next())
        && alphanumeric(name.chars().last())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// IsDNS1123Subdomain: lowercase DNS labels joined by dots, at most 253 characters.
fn is_dns_subdomain(text: &str) -> bool {
    text.len() <= SUBDOMAIN_MAX
        && text.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
}

/// IsQualifiedName: `name` or `prefix/name`, the prefix a DNS subdomain.
pub fn is_label_key(key: &str) -> bool {
    match key.split_once('/') {
        None => is_name_part(key),
        Some((prefix, name)) => {
            !name.contains('/') && is_dns_subdomain(prefix) && is_name_part(name)
        }
    }
}

/// IsValidLabelValue: empty, or a name part.
pub fn is_label_value(value: &str) -> bool {
    value.is_empty() || is_name_part(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_keys() {
        for good in ["gpu", "nvidia.com/gpu", "a", "My_Key.1", "x.y-z/A-1"] {
            assert!(is_label_key(good), "{good}");
        }
        let long = "a".repeat(64);
        for bad in [
            "", "-a", "a-", "/a", "a/", "a/b/c", "Ex.com/a", "a b", &long,
        ] {
            assert!(!is_label_key(bad), "{bad}");
        }
    }

    #[test]
    fn label_values() {
        assert!(is_label_value(""));
        assert!(is_label_value("true"));
        assert!(is_label_value("v1.2_3-x"));
        for bad in ["a b", "-a", "a/b", "é", &"a".repeat(64)] {
            assert!(!is_label_value(bad), "{bad}");
        }
    }
}
