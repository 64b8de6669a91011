//! Label keys and values as Kubernetes validates them (k8s.io/apimachinery v0.33,
//! `pkg/util/validation/validation.go`): `IsQualifiedName` (L41-L69), `IsValidLabelValue`
//! (L165-L174), the prefix an `IsDNS1123Subdomain` (`kubernetes::names`). A toleration's key is a label key
//! and its value a label value (ValidateTolerations).

use super::names::is_dns1123_subdomain;

/// qualifiedNameMaxLength (L33) and LabelValueMaxLength (L158).
const NAME_MAX: usize = 63;

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

/// IsQualifiedName: `name` or `prefix/name`, the prefix a DNS subdomain.
pub fn is_label_key(key: &str) -> bool {
    match key.split_once('/') {
        None => is_name_part(key),
        Some((prefix, name)) => {
            !name.contains('/') && is_dns1123_subdomain(prefix) && is_name_part(name)
        }
    }
}

/// An annotation key (apimachinery pkg/api/validation/objectmeta.go L44-L51): a
/// qualified name "except that case doesn't matter", so it is lowercased first.
pub fn is_annotation_key(key: &str) -> bool {
    is_label_key(&key.to_lowercase())
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

    /// The edges of IsQualifiedName: a 63-character name part and a 253-character
    /// prefix fit, one more does not; the prefix is lowercase, the name need not be.
    #[test]
    fn label_key_lengths_and_prefixes() {
        let name = "N".repeat(63);
        assert!(is_label_key(&name));
        assert!(!is_label_key(&format!("{name}x")));
        let prefix = format!("{}.{}", "a".repeat(63), "b".repeat(189));
        assert_eq!(prefix.len(), 253);
        assert!(is_label_key(&format!("{prefix}/{name}")));
        assert!(!is_label_key(&format!("{prefix}c/x")));
        assert!(!is_label_key("Example.com/x"));
        assert!(!is_label_key("-a.com/x"));
        assert!(!is_label_key("a.com/_x"));
        assert!(is_label_key("a.com/x_y"));
    }

    #[test]
    fn annotation_keys_ignore_case() {
        assert!(is_annotation_key("Example.COM/Note"));
        assert!(is_annotation_key("rdmagen.io/ignore"));
        for bad in ["", "a b", "/x", "a/b/c", "x/", &"a".repeat(64)] {
            assert!(!is_annotation_key(bad), "{bad}");
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
