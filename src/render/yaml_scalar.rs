//! The YAML-safe value filter: how any value a template prints becomes YAML.
//!
//! A string is written plain only when it is an identifier-like word that no YAML 1.1
//! or 1.2 parser reads as anything but a string (`eth0`, `nvidia.com/gpu`,
//! `/dev/shm`); everything else is double-quoted with every character outside YAML's
//! printable set escaped. No user string (quotes, `: `, `#`, newlines, `no`, `on`,
//! `~`, unicode) can change the document's structure or its type.

use std::fmt::Write;

/// Words YAML 1.1 (go-yaml, which Kubernetes uses) or 1.2 resolve to booleans or null.
const RESERVED: &[&str] = &["y", "n", "yes", "no", "true", "false", "on", "off", "null"];

/// `s` as a YAML scalar that reads back as exactly the string `s`.
///
/// ```
/// use rdmagen::render::scalar;
/// assert_eq!(scalar("eth0"), "eth0");
/// assert_eq!(scalar("no"), "\"no\"");
/// assert_eq!(scalar("a: b # c\n"), "\"a: b # c\\n\"");
/// ```
pub fn scalar(s: &str) -> String {
    let mut out = String::new();
    push_scalar(&mut out, s);
    out
}

/// Append [`scalar`]`(s)` to `out`: the block writer's way, which writes every key and
/// string of a manifest and so allocated two strings a scalar before (`bench/RESULTS.md`,
/// 2026-12-02).
pub fn push_scalar(out: &mut String, s: &str) {
    if is_plain_safe(s) {
        out.push_str(s);
    } else {
        push_quoted(out, s);
    }
}

/// Starts with a letter, `_` or `/`, continues with letters, digits, `_`, `.`, `/`, `-`,
/// and is not a reserved word in any case. Such a scalar can only be a string.
fn is_plain_safe(s: &str) -> bool {
    let mut chars = s.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '/');
    first_ok
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
        && !RESERVED.iter().any(|word| word.eq_ignore_ascii_case(s))
}

/// `s` as a YAML 1.2 double-quoted scalar (also read correctly by YAML 1.1 parsers
/// such as go-yaml, which Kubernetes uses).
///
/// `##[` is written `#\u0023[`: the same string to a parser, but a manifest printed
/// into a GitHub Actions log (`rdmagen render job.yaml` in CI) then holds no workflow
/// command, however a pull request spelt its values. A quoted scalar stays on one
/// line after its key or `- `, so it never starts a line with `::`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_quoted(&mut out, s);
    out
}

/// Append [`quote`]`(s)` to `out`.
fn push_quoted(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    for (i, c) in s.char_indices() {
        match c {
            '#' if s[..i].ends_with('#') && s[i + 1..].starts_with('[') => {
                out.push_str("\\u0023");
            }
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Characters outside YAML's c-printable set, plus those YAML 1.1 treats as line
/// breaks (NEL, LS, PS) and the byte-order mark.
fn needs_escape(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{1F}' | '\u{7F}'..='\u{9F}' | '\u{2028}' | '\u{2029}' | '\u{FEFF}'
        | '\u{FFFE}' | '\u{FFFF}')
        || crate::diagnostics::escape::is_bidi_control(c)
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn plain_only_when_unambiguous() {
        use super::scalar;
        assert_eq!(scalar("eth0"), "eth0");
        assert_eq!(scalar("nvidia.com/gpu"), "nvidia.com/gpu");
        assert_eq!(scalar("/dev/shm"), "/dev/shm");
        for quoted in [
            "No", "ON", "y", "Null", "64Gi", "8", "a b", "a:b", "-x", "~", "", ".inf", "x#",
        ] {
            assert!(scalar(quoted).starts_with('"'), "{quoted}");
        }
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(quote("no"), "\"no\"");
        assert_eq!(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(quote("x\ny\u{7}"), "\"x\\ny\\u0007\"");
        assert_eq!(quote("é 中 \u{85}"), "\"é 中 \\u0085\"");
    }
}
