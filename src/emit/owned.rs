//! The ownership record: `DIR/.rdmagen-owned` lists the files rdmagen wrote into an
//! output directory. It is how rdmagen proves a file is its own before `--prune`
//! deletes it; everything else in the directory is the user's and is kept.

use std::collections::BTreeSet;

/// The record's file name, at the root of the output directory.
pub const RECORD: &str = ".rdmagen-owned";

const HEADER: &str = "# Files rdmagen wrote here, one per line. `rdmagen render --bless --prune` deletes\n# only files listed here; everything else in this directory is left alone.\n";

/// File names rdmagen renders inside `DIR/<job>/`. In a directory without a record
/// (written before records existed), these names at that depth are taken as
/// rdmagen's own.
const OUTPUT_NAMES: &[&str] = &["pytorchjob.yaml", "storage.yaml", "Dockerfile"];

/// Whether `rel` is a plain relative path: `/`-separated names, none empty, `.` or
/// `..`, no backslash or control character. Only such paths are written, read or
/// deleted below an output directory.
pub fn is_plain_relative(rel: &str) -> bool {
    !rel.is_empty()
        && rel.split('/').all(|name| {
            !name.is_empty()
                && name != "."
                && name != ".."
                && !name.contains('\\')
                && !name.chars().any(char::is_control)
        })
}

/// Parse a record. Lines that are not plain relative paths are ignored: a record
/// edited by hand can only make rdmagen delete less, never something outside.
pub fn parse(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter(|line| is_plain_relative(line) && *line != RECORD)
        .map(str::to_owned)
        .collect()
}

/// The text of a record listing `files` (sorted, so the same files give the same bytes).
pub fn format(files: &BTreeSet<String>) -> String {
    let mut text = HEADER.to_owned();
    for file in files {
        text.push_str(file);
        text.push('\n');
    }
    text
}

/// Whether `rel` has the shape of a file rdmagen renders: `<job>/<output name>`.
pub fn is_output_name(rel: &str) -> bool {
    match rel.split_once('/') {
        Some((job, file)) => {
            is_plain_relative(job) && !job.starts_with('.') && OUTPUT_NAMES.contains(&file)
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_ignores_what_could_escape() {
        let files: BTreeSet<String> = ["b/pytorchjob.yaml", "a/Dockerfile"]
            .map(str::to_owned)
            .into();
        assert_eq!(parse(&format(&files)), files);
        let hostile =
            "../outside\n/etc/passwd\na//b\n./x\nok/pytorchjob.yaml\n.rdmagen-owned\na\\b\n";
        assert_eq!(
            parse(hostile),
            BTreeSet::from(["ok/pytorchjob.yaml".to_owned()])
        );
    }

    #[test]
    fn output_names_are_two_levels_deep() {
        assert!(is_output_name("job/pytorchjob.yaml"));
        assert!(is_output_name("job/Dockerfile"));
        assert!(!is_output_name("pytorchjob.yaml"));
        assert!(!is_output_name("job/notes.md"));
        assert!(!is_output_name("a/b/pytorchjob.yaml"));
        assert!(!is_output_name(".git/Dockerfile"));
    }

    #[test]
    fn a_job_directory_may_be_name_dot_namespace() {
        // Jobs sharing a name across namespaces are written to `<job>.<namespace>/`.
        assert!(is_output_name("train.team-a/pytorchjob.yaml"));
        assert!(is_output_name("train.team-a/storage.yaml"));
        let files: BTreeSet<String> = ["train.team-a/pytorchjob.yaml", "train/Dockerfile"]
            .map(str::to_owned)
            .into();
        assert_eq!(parse(&format(&files)), files);
    }
}
