//! `dpkg -l` output: the status column and the package name of each row.

/// `(status, package)` of a `dpkg -l` row such as
/// `ii  libibverbs1:amd64  44.0-2  amd64  Library ...`; None for headers and others.
pub fn row(line: &str) -> Option<(&str, &str)> {
    let mut parts = line.split_whitespace();
    let (state, package) = (parts.next()?, parts.next()?);
    let desired = matches!(state.chars().next()?, 'u' | 'i' | 'h' | 'r' | 'p');
    let is_state =
        (2..=3).contains(&state.len()) && desired && state.chars().all(|c| c.is_ascii_alphabetic());
    is_state.then(|| (state, package.split(':').next().unwrap_or(package)))
}

/// Lines of the dpkg -l header, which carry no package.
pub fn is_header(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("Desired=") || t.starts_with('|') || t.starts_with("+++")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_headers() {
        assert_eq!(
            row("ii  libibverbs1:amd64 44.0-2 amd64 Library"),
            Some(("ii", "libibverbs1"))
        );
        assert_eq!(row("rc  perftest 4.5 amd64 x"), Some(("rc", "perftest")));
        assert_eq!(row("Desired=Unknown/Install"), None);
        assert_eq!(row("CA 'mlx5_0'"), None);
        assert!(is_header("||/ Name   Version"));
    }
}
