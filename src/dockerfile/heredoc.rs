//! BuildKit here-documents in RUN, COPY and ADD (Dockerfile syntax 1.4+, "Here-Documents"
//! in Docker's Dockerfile reference): `RUN <<EOF` followed by lines up to one that is
//! exactly `EOF`. `<<-EOF` strips leading tabs from the body and its end line, a quoted
//! delimiter (`<<"EOF"`, `<<'EOF'`) only turns off expansion, and one instruction may
//! open several, whose bodies follow in order.

/// One `<<[-]WORD` opened on an instruction's line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    /// The word that ends the body, without quotes.
    pub delimiter: String,
    /// `<<-`: leading tabs are removed from the body's lines and the end line.
    pub strip_tabs: bool,
    /// Where the marker (`<<` to the end of the word) is in the line, in bytes.
    pub span: (usize, usize),
}

/// The here-document markers of an instruction's line, in order. A here-string
/// (`<<<`) is not one, nor is `<<` inside quotes.
pub fn markers(line: &str) -> Vec<Marker> {
    let bytes = line.as_bytes();
    let mut out = Vec::new();
    let mut quote = None;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            // Bytes, not `line[i..]`: `i` may be inside a multi-byte character.
            None if bytes[i..].starts_with(b"<<") && !bytes[i..].starts_with(b"<<<") => {
                if let Some(marker) = marker_at(line, i) {
                    i = marker.span.1;
                    out.push(marker);
                    continue;
                }
                i += 2;
                continue;
            }
            None => {}
        }
        i += 1;
    }
    out
}

fn marker_at(line: &str, start: usize) -> Option<Marker> {
    let mut rest = &line[start + 2..];
    let strip_tabs = rest.starts_with('-');
    if strip_tabs {
        rest = &rest[1..];
    }
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'');
    if let Some(q) = quote {
        rest = &rest[1..];
        let end = rest.find(q)?;
        let delimiter = &rest[..end];
        let consumed = line.len() - rest.len() + end + 1;
        return is_word(delimiter).then(|| Marker {
            delimiter: delimiter.to_owned(),
            strip_tabs,
            span: (start, consumed),
        });
    }
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let delimiter = &rest[..end];
    let consumed = line.len() - rest.len() + end;
    is_word(delimiter).then(|| Marker {
        delimiter: delimiter.to_owned(),
        strip_tabs,
        span: (start, consumed),
    })
}

fn is_word(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
}

/// Whether `line` ends the body that `marker` opened.
pub fn ends(marker: &Marker, line: &str) -> bool {
    let line = line.strip_suffix('\r').unwrap_or(line);
    match marker.strip_tabs {
        true => line.trim_start_matches('\t') == marker.delimiter,
        false => line == marker.delimiter,
    }
}

/// A RUN instruction split into its command line and the body of each marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run<'a> {
    pub command: &'a str,
    pub bodies: Vec<(Marker, String)>,
}

/// Split a RUN's text as [`super::instructions`] keeps it (the instruction's line,
/// then each body's lines and end line) into its command and bodies.
pub fn split(text: &str) -> Run<'_> {
    let mut lines = text.split('\n');
    let command = lines.next().unwrap_or_default();
    let mut bodies = Vec::new();
    for marker in markers(command) {
        let mut body = String::new();
        for line in lines.by_ref() {
            if ends(&marker, line) {
                break;
            }
            let line = match marker.strip_tabs {
                true => line.trim_start_matches('\t'),
                false => line,
            };
            body.push_str(line);
            body.push('\n');
        }
        bodies.push((marker, body));
    }
    Run { command, bodies }
}

/// Whether a body is a script the RUN executes, rather than data a command reads: the
/// whole command is the marker (`RUN <<EOF`, which Docker runs with the shell), or a
/// shell reads it (`RUN bash -ex <<EOF`). `RUN cat <<EOF > file` writes its body, and
/// `RUN python3 <<EOF` runs it as Python: neither is a shell script.
pub fn is_script(command: &str, marker: &Marker) -> bool {
    let before = &command[..marker.span.0];
    // The simple command the marker belongs to starts after the last operator.
    let segment_start = ["&&", "||", ";", "|"]
        .iter()
        .filter_map(|op| before.rfind(op).map(|i| i + op.len()))
        .max()
        .unwrap_or(0);
    let after = &command[marker.span.1..];
    let segment_end = ["&&", "||", ";", "|"]
        .iter()
        .filter_map(|op| after.find(op))
        .min()
        .unwrap_or(after.len());
    let segment = format!(
        "{} {}",
        &command[segment_start..marker.span.0],
        &after[..segment_end]
    );
    let program = segment.split_whitespace().find(|w| {
        // RUN's own flags (--mount=..., --network=...) come before the first command.
        let run_flag = segment_start == 0 && w.starts_with("--");
        let assignment = w.contains('=');
        !(run_flag || assignment || w.starts_with("<<"))
    });
    match program {
        None => true,
        Some(program) => {
            let name = program.rsplit('/').next().unwrap_or_default();
            matches!(name, "sh" | "bash" | "dash" | "ash" | "zsh")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_of_every_documented_form() {
        let delimiters = |line: &str| -> Vec<(String, bool)> {
            markers(line)
                .into_iter()
                .map(|m| (m.delimiter, m.strip_tabs))
                .collect()
        };
        assert_eq!(delimiters("<<EOF"), [("EOF".to_owned(), false)]);
        assert_eq!(delimiters("<<-EOT bash"), [("EOT".to_owned(), true)]);
        assert_eq!(delimiters(r#"<<"EOF" cat"#), [("EOF".to_owned(), false)]);
        assert_eq!(delimiters("<<'END'"), [("END".to_owned(), false)]);
        assert_eq!(
            delimiters("<<FILE1 cat > file1 && <<FILE2 cat > file2"),
            [("FILE1".to_owned(), false), ("FILE2".to_owned(), false)]
        );
        assert!(markers("cat <<< word").is_empty());
        assert!(markers("echo '<<EOF'").is_empty());
        assert!(markers("echo a << b").is_empty());
        assert_eq!(delimiters("echo é <<É\u{e9}"), []);
        assert_eq!(delimiters("echo é <<EOF"), [("EOF".to_owned(), false)]);
    }

    #[test]
    fn bodies_are_split_and_judged() {
        let run = split("<<FILE1 cat > file1 && <<-FILE2 bash\nfirst\nFILE1\n\tsecond\n\tFILE2");
        assert_eq!(run.command, "<<FILE1 cat > file1 && <<-FILE2 bash");
        let bodies: Vec<&str> = run.bodies.iter().map(|(_, b)| b.as_str()).collect();
        assert_eq!(bodies, ["first\n", "second\n"]);
        let scripts: Vec<bool> = run
            .bodies
            .iter()
            .map(|(m, _)| is_script(run.command, m))
            .collect();
        assert_eq!(scripts, [false, true]);
        let script = |command: &str| is_script(command, &markers(command)[0]);
        assert!(script("<<EOF"));
        assert!(script("--mount=type=cache,target=/var/cache/apt <<EOF"));
        assert!(script("set -e && /bin/bash -ex <<'EOF'"));
        assert!(!script("cat <<EOF > /etc/apt/sources.list"));
        assert!(!script("python3 <<EOF"));
    }
}
