//! `rdmagen completions` and `rdmagen man` say what `--help` says: the same commands,
//! the same flags, the same description.

use std::collections::BTreeSet;
use std::process::Command;

use clap::CommandFactory;
use rdmagen::cli::Cli;

use crate::support::{rdmagen, text};

/// The subcommands, as clap defines them (`help` is clap's own).
fn subcommands() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect()
}

fn stdout_of(args: &[&str]) -> String {
    let out = rdmagen(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{args:?}: {}",
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// Run `script` in bash after sourcing the printed completion script; its stdout.
fn bash_with_completions(script: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let completions = dir.path().join("rdmagen.bash");
    std::fs::write(&completions, stdout_of(&["completions", "bash"])).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("source \"$1\" || exit 9\n{script}"))
        .arg("bash")
        .arg(&completions)
        .output()
        .expect("bash runs");
    assert!(out.status.success(), "bash: {}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn bash_sources_the_completion_script_and_completes() {
    let registered = bash_with_completions("complete -p rdmagen");
    assert!(
        registered.starts_with("complete ")
            && registered.contains(" -F _rdmagen ")
            && registered.trim_end().ends_with(" rdmagen"),
        "{registered}"
    );
    // What a user sees after `rdmagen sch<TAB>` and `rdmagen render --ch<TAB>`.
    let complete = |words: &str| {
        bash_with_completions(&format!(
            "COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
             COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; \
             _rdmagen rdmagen \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\""
        ))
    };
    assert_eq!(complete("rdmagen sch"), "schema\n");
    assert_eq!(complete("rdmagen render --chec"), "--check\n");
}

#[test]
fn zsh_fish_elvish_and_powershell_scripts_name_every_subcommand() {
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let script = stdout_of(&["completions", shell]);
        for command in subcommands() {
            assert!(
                script.contains(&command),
                "{shell} completion lacks {command}"
            );
        }
    }
    let refused = rdmagen(&["completions", "tcsh"]);
    assert_eq!(refused.status.code(), Some(2));
}

/// Long flags a help text lists (`--check`, `--format`), in option lines.
fn long_flags(help: &str) -> BTreeSet<String> {
    help.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .flat_map(|l| l.split([' ', ',', '=', '[', '<']))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(str::to_owned)
        .collect()
}

/// A man page as the text it shows: roff requests dropped, escapes undone, spaces
/// collapsed.
fn man_text(roff: &str) -> String {
    let text: Vec<&str> = roff.lines().filter(|l| !l.starts_with('.')).collect();
    let text = text
        .join(" ")
        .replace("\\-", "-")
        .replace("\\(aq", "'")
        .replace("\\(ga", "`")
        .replace("\\fB", "")
        .replace("\\fI", "")
        .replace("\\fR", "")
        .replace("\\&", "")
        .replace("\\\\", "\\");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The description `--help` prints above `Usage:`, spaces collapsed.
fn about(help: &str) -> String {
    let head = help.split("\nUsage:").next().unwrap();
    head.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn man_pages_list_every_command_and_flag_that_help_lists() {
    let dir = tempfile::tempdir().unwrap();
    let out = rdmagen(&["man", "-o", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let page = |name: &str| {
        let path = dir.path().join(format!("{name}.1"));
        let roff = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}.1: {e}"));
        man_text(&roff)
    };

    let top = page("rdmagen");
    assert_eq!(
        stdout_of(&["man"]),
        std::fs::read_to_string(dir.path().join("rdmagen.1")).unwrap(),
        "`rdmagen man` prints the page -o writes"
    );
    let help = stdout_of(&["--help"]);
    assert!(
        top.contains(&about(&help)),
        "rdmagen.1 lacks --help's description"
    );
    let short = stdout_of(&["-h"]);
    let summary = short.lines().next().unwrap();
    assert!(
        top.contains(&format!("rdmagen - {summary}")),
        "rdmagen.1's NAME is not -h's summary {summary:?}"
    );
    for flag in long_flags(&help) {
        assert!(top.contains(&flag), "rdmagen.1 lacks {flag}");
    }

    let mut pages = 1;
    for command in subcommands() {
        let help = stdout_of(&[&command, "--help"]);
        assert!(
            top.contains(&format!("rdmagen-{command}(1)")),
            "rdmagen.1 lacks {command}"
        );
        let sub = page(&format!("rdmagen-{command}"));
        assert!(
            sub.contains(&about(&help)),
            "rdmagen-{command}.1 lacks `{command} --help`'s description"
        );
        let flags = long_flags(&help);
        assert!(flags.contains("--help"), "{command}: {flags:?}");
        for flag in flags {
            assert!(sub.contains(&flag), "rdmagen-{command}.1 lacks {flag}");
        }
        pages += 1;
    }
    let written = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(written, pages, "a page per command and no other file");
}

/// Where `man` is installed, it renders the page without a warning. (Not required:
/// CI machines may lack man.)
#[test]
fn man_renders_the_page_where_man_is_installed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rdmagen.1");
    std::fs::write(&path, stdout_of(&["man"])).unwrap();
    let Ok(out) = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(&path)
        .env("MANWIDTH", "80")
        .env("LC_ALL", "C")
        .env_remove("MAN_KEEP_FORMATTING")
        .output()
    else {
        eprintln!("skipped: man is not installed");
        return;
    };
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stderr.is_empty(), "man warns: {}", text(&out.stderr));
    assert!(text(&out.stdout).contains("max-file-size"));
}

/// A symlink where a page goes is not written through.
#[test]
fn man_output_does_not_follow_a_planted_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").unwrap();
    let pages = dir.path().join("man1");
    std::fs::create_dir(&pages).unwrap();
    std::os::unix::fs::symlink(&victim, pages.join("rdmagen-render.1")).unwrap();
    let out = rdmagen(&["man", "-o", pages.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("rdmagen-render.1"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
}

/// rdmagen.1 has the sections man-pages(7) expects of a command that clap has no field
/// for: EXIT STATUS (the three codes), ENVIRONMENT (the variables rdmagen reads) and
/// FILES (the configuration file, both spellings, and the ownership record).
#[test]
fn the_man_page_has_exit_status_environment_and_files() {
    let out = crate::support::rdmagen(&["man"]);
    assert_eq!(out.status.code(), Some(0));
    let page = crate::support::text(&out.stdout);
    let sections: Vec<&str> = page
        .lines()
        .filter_map(|l| l.strip_prefix(".SH "))
        .collect();
    for wanted in ["\"EXIT STATUS\"", "ENVIRONMENT", "FILES"] {
        assert!(sections.contains(&wanted), "{sections:?}");
    }
    let exit = page.split(".SH \"EXIT STATUS\"").nth(1).unwrap();
    for code in ["\\fB0\\fR", "\\fB1\\fR", "\\fB2\\fR"] {
        assert!(exit.contains(code), "{exit}");
    }
    for name in [
        "\\fBCI\\fR",
        "\\fBNO_COLOR\\fR",
        "\\fB.rdmagen.yml\\fR",
        ".rdmagen\\-owned",
    ] {
        assert!(page.contains(name), "{name}");
    }
    // man(1) reads it: no warning from groff's checks where groff is installed.
    if let Ok(groff) = std::process::Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    {
        use std::io::Write;
        let mut groff = groff;
        groff
            .stdin
            .take()
            .unwrap()
            .write_all(page.as_bytes())
            .unwrap();
        let done = groff.wait_with_output().unwrap();
        assert!(done.status.success());
    }
}

/// The rule IDs whose summaries start with RDG02 and which `--disable` takes.
fn ids_starting(prefix: &str, waivable_only: bool) -> Vec<&'static str> {
    let mut ids: Vec<&str> = rdmagen::diagnostics::rule::CATALOGUE
        .iter()
        .filter(|r| r.id.starts_with(prefix) && !(waivable_only && r.syntax))
        .map(|r| r.id)
        .collect();
    ids.sort();
    ids
}

/// Whether `shell` runs here; CI installs bash, zsh and fish (.ci/run).
fn shell_present(shell: &str) -> bool {
    let found = Command::new(shell)
        .args(["-c", "exit 0"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "{shell} must be installed in CI (.ci/run)"
        );
        eprintln!("skipped: {shell} is not installed");
    }
    found
}

/// What bash offers after `words` (the last one being completed).
fn bash_complete(words: &str) -> Vec<String> {
    let out = bash_with_completions(&format!(
        "COMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); \
         COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; \
         _rdmagen rdmagen \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\""
    ));
    let mut offered: Vec<String> = out.lines().map(str::to_owned).collect();
    offered.sort();
    offered
}

#[test]
fn bash_completes_rule_ids() {
    if !shell_present("bash") {
        return;
    }
    let rdg02 = ids_starting("RDG02", false);
    assert!(rdg02.len() > 3, "{rdg02:?}");
    assert_eq!(bash_complete("rdmagen explain RDG02"), rdg02);
    assert_eq!(
        bash_complete("rdmagen lint --disable RDG02"),
        ids_starting("RDG02", true)
    );
    assert_eq!(
        bash_complete("rdmagen validate x.yaml --severity RDG013=w"),
        ["RDG013=warning"]
    );
    // RDG001 (the file is not YAML) cannot be turned off, so it is not offered.
    assert!(
        bash_complete("rdmagen lint --disable RDG00")
            .iter()
            .all(|id| id != "RDG001")
    );
}

#[test]
fn fish_completes_rule_ids_with_their_summaries() {
    if !shell_present("fish") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("rdmagen.fish");
    std::fs::write(&script, stdout_of(&["completions", "fish"])).unwrap();
    let complete = |line: &str| -> Vec<String> {
        let out = Command::new("fish")
            .args(["--no-config", "-c"])
            .arg(format!("source $argv[1]; complete -C '{line}'"))
            .arg(&script)
            .output()
            .expect("fish runs");
        assert!(out.status.success(), "fish: {}", text(&out.stderr));
        let mut lines: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
        lines.sort();
        lines
    };
    let summary = |id: &str| rdmagen::diagnostics::RuleInfo::by_id(id).unwrap().summary;
    let expected: Vec<String> = ids_starting("RDG02", false)
        .into_iter()
        .map(|id| format!("{id}\t{}", summary(id)))
        .collect();
    assert_eq!(complete("rdmagen explain RDG02"), expected);
    let offered = complete("rdmagen lint --disable RDG02");
    let ids: Vec<&str> = offered
        .iter()
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    assert_eq!(ids, ids_starting("RDG02", true));
    assert_eq!(
        complete("rdmagen render x.yaml --severity RDG013=w"),
        ["RDG013=warning"]
    );
}

/// zsh completes only inside the line editor, so a pseudo-terminal (zsh's own zpty
/// module) runs an interactive zsh with the script loaded and records what
/// completion adds for each line.
#[test]
fn zsh_completes_rule_ids() {
    if !shell_present("zsh") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("_rdmagen"),
        stdout_of(&["completions", "zsh"]),
    )
    .unwrap();
    let complete = |line: &str| -> Vec<String> {
        // compadd is wrapped so that every candidate it adds (the calls that only
        // filter into an array, -O, -A and -D, aside) is also written to a file.
        let driver = format!(
            r#"zmodload zsh/zpty
# Waits (at most 10 s) until the inner shell has made the file $1, reading what it
# echoes meanwhile so that it never blocks on a full terminal.
await() {{
  for i in {{1..100}}; do
    while zpty -r -t z echoed; do :; done
    [[ -e $DIR/$1 ]] && return
    sleep 0.1
  done
}}
zpty z zsh -f -i
zpty -w z 'fpath=("$DIR" $fpath); autoload -U compinit; compinit -u -D'
zpty -w z 'compadd() {{ builtin compadd "$@"; if (( ! ${{@[(I)-[OAD]]}} )); then local -a o; builtin compadd -O o "$@"; print -rl -- "${{o[@]}}" >> "$DIR/offered"; fi }}'
zpty -w z "bindkey '^I' complete-word"
zpty -w z 'print > "$DIR/ready"'
await ready
# Typed ahead of a running completion, the next line would cut it short.
zpty -n -w z '{line}'$'\t'
await offered
sleep 0.3
zpty -w z $'\C-u''print > "$DIR/ended"'
await ended
zpty -d z
"#
        );
        let out = Command::new("zsh")
            .args(["-f", "-c", &driver])
            .env("DIR", dir.path())
            .output()
            .expect("zsh runs");
        assert!(out.status.success(), "zsh: {}", text(&out.stderr));
        let offered = std::fs::read_to_string(dir.path().join("offered")).unwrap_or_default();
        for made in ["offered", "ready", "ended"] {
            let _ = std::fs::remove_file(dir.path().join(made));
        }
        let mut ids: Vec<String> = offered
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_owned)
            .collect();
        ids.sort();
        ids.dedup();
        ids
    };
    let offered = complete("rdmagen explain RDG02");
    assert_eq!(offered, ids_starting("RDG02", false), "{offered:?}");
    let offered = complete("rdmagen lint --disable RDG02");
    assert_eq!(offered, ids_starting("RDG02", true), "{offered:?}");
}
