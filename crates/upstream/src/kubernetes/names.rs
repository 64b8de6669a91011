//! The name formats the API server demands, transcribed from k8s.io/apimachinery
//! v0.33.3 (the apimachinery of Kubernetes v1.33.3): `pkg/util/validation/validation.go`
//! `IsDNS1123Label` (L176-L203), `IsDNS1123Subdomain` (L205-L230), `IsValidPortName`
//! (L341-L369) and `IsRelaxedEnvVarName` (L401-L433); `pkg/api/validation/generic.go`
//! `NameIsDNSSubdomain` (L37-L42) with `maskTrailingDash` (L74-L79); and
//! `pkg/api/validation/objectmeta.go` `ValidateAnnotationsSize` (L36, L58-L67). Label keys
//! and values, and annotation keys, are `kubernetes::labels`. `rules::names` applies them to objects and pods.

/// DNS1123LabelMaxLength (validation.go L182).
const DNS_LABEL_MAX: usize = 63;
/// DNS1123SubdomainMaxLength (validation.go L212).
const DNS_SUBDOMAIN_MAX: usize = 253;
/// IsValidPortName (validation.go L353): an IANA service name is at most 15 characters.
const PORT_NAME_MAX: usize = 15;
/// TotalAnnotationSizeLimitB (objectmeta.go L36): 256 KiB of keys and values together.
pub const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// dns1123LabelFmt (L176) `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub fn is_dns1123_label(text: &str) -> bool {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    text.len() <= DNS_LABEL_MAX
        && edge(text.chars().next())
        && edge(text.chars().last())
        && text
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// dns1123SubdomainFmt (L205): DNS-1123 labels (of any length) joined by dots, at most
/// 253 characters in all.
pub fn is_dns1123_subdomain(text: &str) -> bool {
    text.len() <= DNS_SUBDOMAIN_MAX
        && text.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
}

/// NameIsDNSSubdomain (generic.go L37-L42): the name of a ConfigMap, Secret,
/// ServiceAccount, PersistentVolume(Claim) or custom resource. With `prefix` (a name
/// something is appended to: envFrom's references, validation.go L2805, L2817) a
/// trailing '-' is allowed: maskTrailingDash (L74-L79) replaces the last two
/// characters with `a`, as written upstream.
pub fn is_object_name(name: &str, prefix: bool) -> bool {
    if prefix && name.len() > 1 && name.ends_with('-') {
        // Byte slicing as Go does; a name with a multi-byte character there is no
        // subdomain either way, so it fails below.
        return match name.get(..name.len() - 2) {
            Some(head) => is_dns1123_subdomain(&format!("{head}a")),
            None => false,
        };
    }
    is_dns1123_subdomain(name)
}

/// IsValidPortName (L351-L369): 1 to 15 of `[-a-z0-9]`, at least one letter, no
/// `--`, no '-' at either end.
pub fn is_port_name(name: &str) -> bool {
    name.len() <= PORT_NAME_MAX
        && !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && name.chars().any(|c| c.is_ascii_lowercase())
        && !name.contains("--")
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// IsRelaxedEnvVarName (L418-L433): not empty, printable ASCII only (Go's
/// unicode.IsPrint on ASCII: space through `~`), no '='. The API server of v1.33.3
/// uses it, not the older C-identifier-like IsEnvVarName, because the
/// RelaxedEnvironmentVariableValidation gate is beta and on by default since 1.32
/// (pkg/features/kube_features.go L1650-L1653; ValidateEnv, validation.go
/// L2616-L2637, reads it through pkg/api/pod/util.go L393, L433-L436).
pub fn is_env_var_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| matches!(c, ' '..='~') && c != '=')
}

/// ValidateAnnotationsSize (objectmeta.go L58-L67): the bytes of every key and value.
pub fn annotations_size<'a>(entries: impl Iterator<Item = (&'a str, &'a str)>) -> usize {
    entries.map(|(k, v)| k.len() + v.len()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns1123_labels() {
        for good in ["a", "0", "pytorch", "a-b", "1a", &"a".repeat(63)] {
            assert!(is_dns1123_label(good), "{good}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "A",
            "Pytorch",
            "a.b",
            "a_b",
            "*alias_vol",
            "a b",
            "é",
            &"a".repeat(64),
        ] {
            assert!(!is_dns1123_label(bad), "{bad}");
        }
    }

    #[test]
    fn dns1123_subdomains() {
        let labels_of_63 = [&"a".repeat(63)[..]; 4].join("."); // 255
        for good in [
            "a",
            "my-claim",
            "a.b.c",
            "0.0",
            &"a".repeat(253),
            &labels_of_63[..253],
        ] {
            assert!(is_dns1123_subdomain(good), "{good}");
        }
        for bad in [
            "",
            ".",
            "a.",
            ".a",
            "a..b",
            "a.-b",
            "a-.b",
            "Not A Claim!",
            "My-Claim",
            "yes no",
            &"a".repeat(254),
            &labels_of_63,
        ] {
            assert!(!is_dns1123_subdomain(bad), "{bad}");
        }
    }

    #[test]
    fn a_prefix_may_end_in_a_dash_as_mask_trailing_dash_allows() {
        assert!(!is_object_name("team-", false));
        assert!(is_object_name("team-", true));
        // Go's mask drops the character before the dash too: `a.-` is checked as `aa`.
        assert!(is_object_name("a.-", true));
        // A lone "-" is left as it is (len > 1 is required), and fails.
        assert!(!is_object_name("-", true));
        assert!(!is_object_name("Team-", true));
        assert!(is_object_name("cfg", true));
    }

    #[test]
    fn port_names() {
        for good in ["http", "nccl-1", "a", "1a", &"a".repeat(15)] {
            assert!(is_port_name(good), "{good}");
        }
        for bad in [
            "",
            "80",
            "-http",
            "http-",
            "a--b",
            "HTTP",
            "my_port",
            &"a".repeat(16),
        ] {
            assert!(!is_port_name(bad), "{bad}");
        }
    }

    #[test]
    fn relaxed_env_var_names() {
        for good in ["NCCL_IB_HCA", "1abc", "a b", "a.b-c", "~!@#$%^&*()", " "] {
            assert!(is_env_var_name(good), "{good}");
        }
        for bad in ["", "A=B", "=", "A\u{2028}B", "A\nB", "A\tB", "é", "A\u{7f}"] {
            assert!(!is_env_var_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn annotations_size_counts_keys_and_values() {
        assert_eq!(annotations_size([("ab", "cde"), ("", "")].into_iter()), 5);
    }
}
