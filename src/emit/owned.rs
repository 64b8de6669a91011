//! The ownership record: `DIR/.rdmagen-owned` lists the files rdmagen wrote into an
//! output directory, each with the fingerprint of the bytes it wrote. It is how
//! rdmagen proves a file is its own before it replaces it or `--prune` deletes it:
//! the record must list the file with the fingerprint of the bytes it holds now. A
//! file the record does not list, lists without a fingerprint, or whose bytes no
//! longer match (someone edited it) is the user's. A name proves nothing: a
//! `services/api/Dockerfile` has the shape of an output and is someone's service.

pub use crate::fingerprint::Fingerprint;
use std::collections::BTreeMap;

/// The record's file name, at the root of the output directory.
pub const RECORD: &str = ".rdmagen-owned";

const HEADER: &str = "# Files rdmagen wrote here, one per line, each with a tab and the fingerprint of\n# what it wrote. rdmagen replaces or (--bless --prune) deletes only files listed\n# here whose bytes still match; everything else in this directory is left alone.\n";

/// What a record line proves about its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proof {
    /// rdmagen wrote these bytes there.
    Bytes(Fingerprint),
    /// The record predates fingerprints (no line has one): it says rdmagen wrote the
    /// file once, but not what, so it proves nothing about the bytes there now.
    Listed,
    /// The line is damaged (a fingerprint cut or garbled, a line without one in a
    /// record with them, the path twice with different proofs): it proves nothing,
    /// and the file is the user's.
    Damaged,
}

/// Files rdmagen wrote, by path.
pub type Record = BTreeMap<String, Proof>;

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
    let lines = || text.lines().filter(|line| !line.starts_with('#'));
    let fingerprinted = lines().any(|line| line.contains('\t'));
    let mut record = Record::new();
    for line in lines() {
        let (path, proof) = match line.split_once('\t') {
            Some((path, rest)) => (
                path,
                Fingerprint::parse(rest).map_or(Proof::Damaged, Proof::Bytes),
            ),
            None if fingerprinted => (line, Proof::Damaged),
            None => (line, Proof::Listed),
        };
        if !is_plain_relative(path) || path == RECORD {
            continue;
        }
        record
            .entry(path.to_owned())
            .and_modify(|seen| {
                if *seen != proof {
                    *seen = Proof::Damaged;
                }
            })
            .or_insert(proof);
    }
    record
}

/// The text of a record (sorted, so the same files give the same bytes).
pub fn format(record: &Record) -> String {
    let mut text = HEADER.to_owned();
    for (file, proof) in record {
        // A damaged line is not written again: the file is the user's now.
        if *proof == Proof::Damaged {
            continue;
        }
        text.push_str(file);
        if let Proof::Bytes(fingerprint) = proof {
            text.push('\t');
            text.push_str(&fingerprint.to_string());
        }
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(files: &[(&str, Option<&[u8]>)]) -> Record {
        files
            .iter()
            .map(|(path, bytes)| {
                let proof = bytes.map_or(Proof::Listed, |b| Proof::Bytes(Fingerprint::of(b)));
                ((*path).to_owned(), proof)
            })
            .collect()
    }

    #[test]
    fn a_record_round_trips_and_ignores_what_could_escape() {
        let files = record(&[
            ("b/pytorchjob.yaml", Some(b"kind: PyTorchJob\n")),
            ("a/Dockerfile", Some(b"")),
            ("a b/storage.yaml", Some(b"x")),
        ]);
        assert_eq!(parse(&format(&files)), files);
        let legacy = record(&[("a/Dockerfile", None), ("b/pytorchjob.yaml", None)]);
        assert_eq!(parse(&format(&legacy)), legacy);
        let hostile =
            "../outside\n/etc/passwd\na//b\n./x\nok/pytorchjob.yaml\n.rdmagen-owned\na\\b\n";
        assert_eq!(parse(hostile), record(&[("ok/pytorchjob.yaml", None)]));
        assert!(parse("../x\tfnv1a64:0000000000000000\n").is_empty());
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

    /// The attack cut fingerprints short, garbled them, and added a bare line for a
    /// fingerprinted path (as a merge might): each once counted as "written by
    /// rdmagen, bytes unknown", and the edited file was replaced or pruned.
    #[test]
    fn a_damaged_line_proves_nothing() {
        let good = "b/x\tfnv1a64:cbf29ce484222325";
        for line in [
            "a/Dockerfile\tfnv1a64:123",
            "a/Dockerfile\tsha256:cbf29ce484222325",
            "a/Dockerfile\tfnv1a64:+bf29ce484222325",
            "a/Dockerfile\tfnv1a64: cbf29ce48422232",
            "a/Dockerfile\t",
            "a/Dockerfile",
        ] {
            let parsed = parse(&format!("{good}\n{line}\n"));
            assert_eq!(parsed["a/Dockerfile"], Proof::Damaged, "{line}");
            assert!(matches!(parsed["b/x"], Proof::Bytes(_)));
        }
        let twice = parse("a/Dockerfile\tfnv1a64:cbf29ce484222325\na/Dockerfile\n");
        assert_eq!(twice["a/Dockerfile"], Proof::Damaged);
        let same_twice = format!("{good}\n{good}\n");
        assert!(matches!(parse(&same_twice)["b/x"], Proof::Bytes(_)));
        assert!(!format(&twice).contains("a/Dockerfile"));
    }

    #[test]
    fn a_job_directory_may_be_name_dot_namespace() {
        // Jobs sharing a name across namespaces are written to `<job>.<namespace>/`.
        let files = record(&[
            ("train.team-a/pytorchjob.yaml", Some(b"x")),
            ("train/Dockerfile", Some(b"y")),
        ]);
        assert_eq!(parse(&format(&files)), files);
    }
}
