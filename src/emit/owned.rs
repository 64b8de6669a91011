//! The ownership record: `DIR/.rdmagen-owned` lists the files rdmagen wrote into an
//! output directory, each with the fingerprint of the bytes it wrote. It is how
//! rdmagen proves a file is its own before it replaces it or `--prune` deletes it: a
//! file the record does not list, or whose bytes no longer match the fingerprint
//! (someone edited it), is the user's, and is kept unless the run says `--force`.

use std::collections::BTreeMap;
use std::fmt;
use std::hash::Hasher;

/// The record's file name, at the root of the output directory.
pub const RECORD: &str = ".rdmagen-owned";

const HEADER: &str = "# Files rdmagen wrote here, one per line, each with a tab and the fingerprint of\n# what it wrote. rdmagen replaces or (--bless --prune) deletes only files listed\n# here whose bytes still match; everything else in this directory is left alone.\n";

/// Files rdmagen wrote, each with the fingerprint of what it wrote (None for a line
/// without one: records before fingerprints, or a damaged fingerprint).
pub type Record = BTreeMap<String, Option<Fingerprint>>;

/// FNV-1a (64 bits) of a file's bytes. It tells an edited file from the one rdmagen
/// wrote; it is no defence against someone who crafts a collision, who could as well
/// edit the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(u64);

impl Fingerprint {
    const PREFIX: &str = "fnv1a64:";

    pub fn of(bytes: &[u8]) -> Self {
        let mut hasher = fnv::FnvHasher::default();
        hasher.write(bytes);
        Fingerprint(hasher.finish())
    }

    fn parse(text: &str) -> Option<Self> {
        let hex = text.strip_prefix(Self::PREFIX)?;
        let exact = hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit());
        exact
            .then(|| u64::from_str_radix(hex, 16).ok().map(Fingerprint))
            .flatten()
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{:016x}", Self::PREFIX, self.0)
    }
}

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
/// edited by hand can only make rdmagen touch less, never something outside. A path
/// is followed by a tab and its fingerprint (a tab is a control character, which no
/// plain path holds).
pub fn parse(text: &str) -> Record {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (path, fingerprint) = match line.split_once('\t') {
                Some((path, rest)) => (path, Fingerprint::parse(rest)),
                None => (line, None),
            };
            (is_plain_relative(path) && path != RECORD).then(|| (path.to_owned(), fingerprint))
        })
        .collect()
}

/// The text of a record (sorted, so the same files give the same bytes).
pub fn format(record: &Record) -> String {
    let mut text = HEADER.to_owned();
    for (file, fingerprint) in record {
        text.push_str(file);
        if let Some(fingerprint) = fingerprint {
            text.push('\t');
            text.push_str(&fingerprint.to_string());
        }
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

    fn record(files: &[(&str, Option<&[u8]>)]) -> Record {
        files
            .iter()
            .map(|(path, bytes)| ((*path).to_owned(), bytes.map(Fingerprint::of)))
            .collect()
    }

    #[test]
    fn a_record_round_trips_and_ignores_what_could_escape() {
        let files = record(&[
            ("b/pytorchjob.yaml", Some(b"kind: PyTorchJob\n")),
            ("a/Dockerfile", Some(b"")),
            ("a b/storage.yaml", None),
        ]);
        assert_eq!(parse(&format(&files)), files);
        let hostile = "../outside\n/etc/passwd\na//b\n./x\nok/pytorchjob.yaml\n.rdmagen-owned\na\\b\n../x\tfnv1a64:0000000000000000\n";
        assert_eq!(parse(hostile), record(&[("ok/pytorchjob.yaml", None)]));
    }

    /// FNV-1a's published test vectors (the empty string is the offset basis), so the
    /// fingerprint never changes with the crate or the machine.
    #[test]
    fn fingerprints_are_fnv_1a_64() {
        assert_eq!(Fingerprint::of(b"").to_string(), "fnv1a64:cbf29ce484222325");
        assert_eq!(
            Fingerprint::of(b"a").to_string(),
            "fnv1a64:af63dc4c8601ec8c"
        );
        assert_eq!(
            Fingerprint::of(b"foobar").to_string(),
            "fnv1a64:85944171f73967e8"
        );
    }

    #[test]
    fn a_damaged_fingerprint_proves_nothing_about_the_bytes() {
        for line in [
            "a/Dockerfile\tfnv1a64:123",
            "a/Dockerfile\tsha256:cbf29ce484222325",
            "a/Dockerfile\tfnv1a64:+bf29ce484222325",
            "a/Dockerfile\t",
        ] {
            assert_eq!(parse(line), record(&[("a/Dockerfile", None)]), "{line}");
        }
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
        let files = record(&[
            ("train.team-a/pytorchjob.yaml", Some(b"x")),
            ("train/Dockerfile", Some(b"y")),
        ]);
        assert_eq!(parse(&format(&files)), files);
    }
}
