//! One log line, its prefixes set aside.
//!
//! NCCL writes `<host>:<pid>:<tid> [<cudaDev>] NCCL INFO <msg>` and
//! `<host>:<pid>:<tid> [<cudaDev>] <file>:<line>[ (<func>)] NCCL WARN <msg>`
//! (N@v2.30.7-1:src/debug.cc:328-354; N@v2.18.6-1:src/debug.cc:172-183), optionally
//! after a `[date time] ` (NCCL_DEBUG_TIMESTAMP_FORMAT). Launchers and log collectors
//! add their own prefixes in front: mpirun's `[0] ` or `[1,0]<stdout>:`, torchrun's
//! `[rank0]:`, `kubectl logs --prefix`'s `[pod/name/container] `, `--timestamps`'
//! RFC 3339 time, a terminal UI's `│`. So NCCL lines are found by their ` NCCL INFO `
//! / ` NCCL WARN ` token wherever it is, and other lines (nccl-tests and perftest
//! output) have those prefixes stripped.

/// What a line is.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// An NCCL INFO line.
    Info { host: Option<&'a str>, msg: &'a str },
    /// An NCCL WARN line; `site` is the `file:line` NCCL printed.
    Warn {
        host: Option<&'a str>,
        site: Option<&'a str>,
        msg: &'a str,
    },
    /// Anything else, launcher prefixes removed.
    Other(&'a str),
}

const INFO: &str = " NCCL INFO ";
const WARN: &str = " NCCL WARN ";

pub fn classify(raw: &str) -> Line<'_> {
    if let Some((before, msg)) = split_token(raw, INFO) {
        return Line::Info {
            host: host_of(before),
            msg: tidy_end(msg),
        };
    }
    if let Some((before, msg)) = split_token(raw, WARN) {
        return Line::Warn {
            host: host_of(before),
            site: site_of(before),
            msg: tidy_end(msg),
        };
    }
    Line::Other(tidy_end(strip_prefixes(raw)))
}

/// The text before and after the first `token` (also at the very start, without its
/// leading space).
fn split_token<'a>(raw: &'a str, token: &str) -> Option<(&'a str, &'a str)> {
    if let Some(at) = raw.find(token) {
        return Some((&raw[..at], &raw[at + token.len()..]));
    }
    raw.strip_prefix(&token[1..]).map(|msg| ("", msg))
}

/// Trailing spaces and a terminal UI's closing `│`.
fn tidy_end(text: &str) -> &str {
    text.trim_end_matches(|c: char| c.is_whitespace() || is_box(c))
}

fn is_box(c: char) -> bool {
    matches!(c, '│' | '┃' | '║')
}

/// The host of `host:pid:tid [dev]`: the last word before a `[dev]` word that has the
/// `:pid:tid` tail.
fn host_of(before: &str) -> Option<&str> {
    let words: Vec<&str> = before.split_whitespace().collect();
    (0..words.len().saturating_sub(1))
        .rev()
        .filter(|&i| is_dev(words[i + 1]))
        .find_map(|i| host_pid_tid(strip_prefixes(words[i])))
}

/// `[3]`, `[-1]`
fn is_dev(word: &str) -> bool {
    word.strip_prefix('[')
        .and_then(|w| w.strip_suffix(']'))
        .is_some_and(|n| {
            let n = n.strip_prefix('-').unwrap_or(n);
            !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
        })
}

fn host_pid_tid(word: &str) -> Option<&str> {
    let (rest, tid) = word.rsplit_once(':')?;
    let (host, pid) = rest.rsplit_once(':')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(tid) && digits(pid) && !host.is_empty()).then_some(host)
}

/// The `file:line` word after `[dev]` in a WARN line's prefix.
fn site_of(before: &str) -> Option<&str> {
    let words: Vec<&str> = before.split_whitespace().collect();
    let dev = words.iter().rposition(|w| is_dev(w))?;
    words
        .get(dev + 1)
        .copied()
        .filter(|w| w.contains(':') && !w.starts_with('('))
}

/// Remove the prefixes launchers put before a program's output: spaces, box-drawing
/// bars, `[...]` groups (mpirun, torchrun, kubectl --prefix, NCCL's timestamp) with
/// their `:` or `<stdout>:` tail, and an RFC 3339 timestamp word.
pub fn strip_prefixes(raw: &str) -> &str {
    let mut rest = raw;
    loop {
        let before = rest.len();
        rest = rest.trim_start_matches(|c: char| c == ' ' || c == '\t' || is_box(c));
        if rest.starts_with('[')
            // `]` is ASCII: its byte position is a character boundary.
            && let Some(end) = rest.bytes().take(160).position(|b| b == b']')
            && !rest[1..end].contains('[')
        {
            rest = &rest[end + 1..];
            for tail in ["<stdout>:", "<stderr>:", ":"] {
                if let Some(r) = rest.strip_prefix(tail) {
                    rest = r;
                    break;
                }
            }
        }
        let word_end = rest.find(' ').unwrap_or(rest.len());
        if is_timestamp(&rest[..word_end]) {
            rest = &rest[word_end..];
        }
        if rest.len() == before {
            return rest;
        }
    }
}

/// `2024-05-01T12:00:00.123456789Z`, `2024-05-01T12:00:00+02:00`
fn is_timestamp(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() >= 19
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_lines_with_every_prefix() {
        let lines = [
            "host-0:63:105 [0] NCCL INFO Using network IB",
            "[155] host-0:63:105 [3] NCCL INFO Using network IB",
            "│ host-0:63:105 [0] NCCL INFO Using network IB     │",
            "[2024-05-01 12:00:00] host-0:63:105 [0] NCCL INFO Using network IB",
            "2024-05-01T12:00:00.1Z host-0:63:105 [0] NCCL INFO Using network IB",
            "[1,0]<stdout>:host-0:63:105 [0] NCCL INFO Using network IB",
        ];
        for line in lines {
            assert_eq!(
                classify(line),
                Line::Info {
                    host: Some("host-0"),
                    msg: "Using network IB"
                },
                "{line}"
            );
        }
    }

    #[test]
    fn warn_lines_old_and_new() {
        assert_eq!(
            classify("h:1:2 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]"),
            Line::Warn {
                host: Some("h"),
                site: Some("misc/ibvwrap.cc:63"),
                msg: "Failed to open libibverbs.so[.1]"
            }
        );
        assert_eq!(
            classify("h:1:2 [0] misc/ibvwrap.cc:376 (wrap_ibv_modify_qp) NCCL WARN Call to x"),
            Line::Warn {
                host: Some("h"),
                site: Some("misc/ibvwrap.cc:376"),
                msg: "Call to x"
            }
        );
    }

    #[test]
    fn other_lines_lose_launcher_prefixes() {
        assert_eq!(
            classify("[1,0]<stdout>:#       size         count"),
            Line::Other("#       size         count")
        );
        assert_eq!(
            classify("[pod/launcher/x] 2024-05-01T12:00:00Z       8   2"),
            Line::Other("8   2")
        );
        assert_eq!(
            classify("[rank0]: NCCL version 2.21.5+cuda12.4"),
            Line::Other("NCCL version 2.21.5+cuda12.4")
        );
        assert_eq!(
            classify(" #bytes  #iterations"),
            Line::Other("#bytes  #iterations")
        );
    }

    #[test]
    fn hosts_need_the_pid_and_tid() {
        assert_eq!(host_of("plain text [0]"), None);
        assert_eq!(host_of("a:b:c [0]"), None);
        assert_eq!(
            host_of("<cluster_name>:919:1150 [0]"),
            Some("<cluster_name>")
        );
    }
}
