//! The words of a POSIX shell script, read conservatively: what `bash -c "..."` in a
//! container's command runs, for the rules that judge the command (an MPIJob
//! launcher's mpirun). Quoting and token rules from POSIX.1-2017 XCU 2.2 (Quoting) and
//! 2.3 (Token Recognition): a backslash quotes the next character and drops a newline
//! after it, single quotes keep everything literal, double quotes keep everything but
//! `$`, `` ` ``, `\` and `"`, an unquoted `#` at the start of a word comments out the
//! rest of the line, and `;`, `&`, `|`, `(`, `)` and a newline end a command.
//!
//! Expansions are not performed: a word keeps its `$NAME`, `${...}`, `$(...)` and
//! backquoted text, so a caller can see that the word's value is not known before the
//! script runs. A script this reader cannot split with confidence (an unterminated
//! quote, a here-document) is `None`: a rule then says nothing rather than guess.

/// The simple commands of `script` in order, each as its words (quotes removed,
/// expansions left as written, redirections dropped), or `None` where the script is
/// not read with confidence.
pub fn commands(script: &str) -> Option<Vec<Vec<String>>> {
    let mut out = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    // The next word is a redirection's target, not an argument.
    let mut redirect = false;
    let mut chars = script.chars().peekable();
    let end_word =
        |words: &mut Vec<String>, word: &mut String, in_word: &mut bool, r: &mut bool| {
            if *in_word {
                if *r {
                    *r = false;
                } else {
                    words.push(std::mem::take(word));
                }
                word.clear();
                *in_word = false;
            }
        };
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') => {}
                Some(q) => {
                    word.push(q);
                    in_word = true;
                }
                None => return None,
            },
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        q => word.push(q),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            '\n' => {}
                            q @ ('$' | '`' | '"' | '\\') => word.push(q),
                            q => {
                                word.push('\\');
                                word.push(q);
                            }
                        },
                        q => word.push(q),
                    }
                }
            }
            '$' if matches!(chars.peek(), Some('(' | '{')) => {
                // `$(...)` and `${...}` stay in the word as written, spaces and all.
                let open = chars.next()?;
                let close = if open == '(' { ')' } else { '}' };
                word.push('$');
                word.push(open);
                let mut depth = 1;
                while depth > 0 {
                    let q = chars.next()?;
                    if q == open {
                        depth += 1;
                    } else if q == close {
                        depth -= 1;
                    }
                    word.push(q);
                }
                in_word = true;
            }
            '`' => {
                word.push('`');
                loop {
                    let q = chars.next()?;
                    word.push(q);
                    if q == '`' {
                        break;
                    }
                }
                in_word = true;
            }
            '#' if !in_word => {
                while chars.peek().is_some_and(|&q| q != '\n') {
                    chars.next();
                }
            }
            '<' | '>' => {
                if c == '<' && chars.peek() == Some(&'<') {
                    // A here-document's body is text, not words: not read.
                    return None;
                }
                // `2>` names a file descriptor, not an argument.
                if in_word && !word.is_empty() && word.chars().all(|d| d.is_ascii_digit()) {
                    word.clear();
                    in_word = false;
                }
                end_word(&mut words, &mut word, &mut in_word, &mut redirect);
                while chars.peek().is_some_and(|&q| matches!(q, '>' | '&' | '|')) {
                    chars.next();
                }
                // `2>&1` duplicates a descriptor; anything else names a file.
                if chars.peek().is_some_and(char::is_ascii_digit) {
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                } else {
                    redirect = true;
                }
            }
            ';' | '&' | '|' | '(' | ')' | '\n' => {
                end_word(&mut words, &mut word, &mut in_word, &mut redirect);
                if !words.is_empty() {
                    out.push(std::mem::take(&mut words));
                }
            }
            c if c.is_whitespace() => end_word(&mut words, &mut word, &mut in_word, &mut redirect),
            c => {
                word.push(c);
                in_word = true;
            }
        }
    }
    end_word(&mut words, &mut word, &mut in_word, &mut redirect);
    if !words.is_empty() {
        out.push(words);
    }
    Some(out)
}

/// Whether a word's value is only known when the script runs: it holds a parameter
/// expansion or a command substitution (or the text of one, quoted: read alike, to be
/// safe).
pub fn expands(word: &str) -> bool {
    word.contains('$') || word.contains('`')
}

/// The words of a shell that runs its `-c` script, as a container's `command` + `args`
/// give them (`["/bin/bash", "-c", "..."]`, `["sh", "-ec", "..."]`): the index of the
/// script among `argv`. Options before `-c` that also take no value (`-e`, `-x`,
/// `-l`, combined as `-ex`) are allowed; anything else is not a `-c` script.
pub fn script_index(argv: &[&str]) -> Option<usize> {
    let shell = argv.first()?.rsplit('/').next()?;
    if !matches!(shell, "sh" | "bash" | "dash" | "zsh" | "ash") {
        return None;
    }
    for (i, w) in argv.iter().enumerate().skip(1) {
        let flags = w.strip_prefix('-')?;
        if flags.is_empty()
            || !flags
                .chars()
                .all(|f| matches!(f, 'c' | 'e' | 'x' | 'l' | 'u'))
        {
            return None;
        }
        if flags.contains('c') {
            return (i + 1 < argv.len()).then_some(i + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(script: &str) -> Vec<Vec<String>> {
        commands(script).unwrap()
    }

    #[test]
    fn quotes_continuations_and_comments_are_read_as_the_shell_reads_them() {
        assert_eq!(
            words("mpirun \\\n  -np 16 \\\n  -x 'A B' -x \"C=$D\" prog #-n 200\n"),
            [["mpirun", "-np", "16", "-x", "A B", "-x", "C=$D", "prog"]]
        );
        assert_eq!(
            words("set -ex; sleep 5\nexec mpirun -np 2 prog 2>/dev/null && echo ok"),
            [
                vec!["set", "-ex"],
                vec!["sleep", "5"],
                vec!["exec", "mpirun", "-np", "2", "prog"],
                vec!["echo", "ok"]
            ]
        );
        assert_eq!(
            words("a \"x \\\"y\\\" \\n\" $(seq 1 $N) ${A:-b c} `date +%s`"),
            [["a", "x \"y\" \\n", "$(seq 1 $N)", "${A:-b c}", "`date +%s`"]]
        );
        assert_eq!(words("p > out.txt 2>&1 x"), [["p", "x"]]);
    }

    #[test]
    fn what_is_not_read_with_confidence_is_none() {
        assert_eq!(commands("echo 'unterminated"), None);
        assert_eq!(commands("cat <<EOF\nmpirun -np 2\nEOF"), None);
        assert_eq!(commands("echo $(unclosed"), None);
    }

    #[test]
    fn a_shell_script_is_found_after_its_flags() {
        assert_eq!(script_index(&["/bin/bash", "-c", "s"]), Some(2));
        assert_eq!(script_index(&["sh", "-ec", "s", "arg0"]), Some(2));
        assert_eq!(script_index(&["bash", "-e", "-c", "s"]), Some(3));
        assert_eq!(script_index(&["bash", "-c"]), None);
        assert_eq!(script_index(&["bash", "/launcher.sh"]), None);
        assert_eq!(script_index(&["python", "-c", "s"]), None);
        assert!(expands("${NP}") && expands("`n`") && !expands("16"));
    }
}
