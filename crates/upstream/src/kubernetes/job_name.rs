//! Whether a PyTorchJob name fits every object the operator names after it. The
//! webhook wants a DNS-1035 label (pytorchjob_webhook.go:80), and the operator names
//! one Service per pod `<job>-<replica type, lowercased>-<index>`
//! (pkg/controller.v1/common/service.go:243, util.go:50-52); a Service name is a
//! DNS-1035 label of at most 63 characters. A name the webhook accepts can still fail
//! Service creation. `render` (from a plan) and `lint` (from a manifest) both ask here.

use crate::diagnostics::escape::shown;

/// The longest a DNS-1035 label may be.
const DNS_LABEL_MAX: usize = 63;

/// The longest Service name the operator makes for a job named `name` with
/// `replicas` (replica type, pod count): the type lowercased, the highest index.
fn longest_service(name: &str, replicas: &[(&str, u32)]) -> Option<String> {
    replicas
        .iter()
        .filter(|(_, count)| *count > 0)
        .map(|(role, count)| format!("{name}-{}-{}", role.to_ascii_lowercase(), count - 1))
        .max_by_key(String::len)
}

/// What is wrong with `name` for a job with `replicas`, or None when it fits.
pub fn problem(name: &str, replicas: &[(&str, u32)]) -> Option<String> {
    let dns_1035 = name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !dns_1035 {
        return Some(format!(
            "`{}` is not a DNS-1035 label (lowercase letters, digits and '-', starting with a letter)",
            shown(name)
        ));
    }
    let service = longest_service(name, replicas)?;
    if service.len() <= DNS_LABEL_MAX {
        return None;
    }
    // A manifest's replica type can be any length: its suffix alone may not fit.
    let suffix = service.len() - name.len();
    let bound = match DNS_LABEL_MAX.checked_sub(suffix) {
        Some(room) if room > 0 => format!("so the name can be at most {room}"),
        _ => format!("and the suffix alone is {suffix}, so no name fits"),
    };
    Some(format!(
        "`{}` is {} characters; the operator names a Service `{}` ({} characters), which must fit in {DNS_LABEL_MAX}, {bound}",
        shown(name),
        name.len(),
        shown(&service),
        service.len(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_service_index_decides() {
        // 10 Workers are indexed 0..9: 54 + "-worker-9" = 63 fits; an 11th Worker
        // makes `-worker-10`, 64.
        let name = "a".repeat(54);
        assert_eq!(problem(&name, &[("Master", 1), ("Worker", 10)]), None);
        let long = problem(&name, &[("Master", 1), ("Worker", 11)]).unwrap();
        assert_eq!(
            long,
            format!(
                "`{name}` is 54 characters; the operator names a Service `{name}-worker-10` (64 characters), which must fit in 63, so the name can be at most 53"
            )
        );
        // A lone Master: `-master-0` is the longest suffix.
        assert_eq!(problem(&"a".repeat(54), &[("Master", 1)]), None);
        assert!(problem(&"a".repeat(55), &[("Master", 1)]).is_some());
    }

    /// A linted manifest may name a replica type longer than any Service name (the
    /// fuzzer's input panicked on the subtraction); the message stays short.
    #[test]
    fn a_replica_type_too_long_for_any_name() {
        let role = "A".repeat(5000);
        let message = problem("j", &[(role.as_str(), 1)]).unwrap();
        assert!(
            message
                .ends_with("which must fit in 63, and the suffix alone is 5003, so no name fits"),
            "{message}"
        );
        assert!(message.len() < 300, "{message}");
        // Exactly 63 characters of suffix leave no room either.
        let role = "a".repeat(60);
        let message = problem("j", &[(role.as_str(), 1)]).unwrap();
        assert!(
            message.ends_with("the suffix alone is 63, so no name fits"),
            "{message}"
        );
    }

    #[test]
    fn dns_1035() {
        for bad in ["Job", "1job", "job-", "job_x", ""] {
            assert!(problem(bad, &[("Master", 1)]).is_some(), "{bad}");
        }
        assert_eq!(problem("job-1", &[("Master", 1), ("Worker", 3)]), None);
    }
}
