//! What a file's bytes were, in 64 bits: how rdmagen tells that a file is still the
//! one it read (an input read again in the second pass) or wrote (an output it may
//! replace).

use std::fmt;
use std::hash::Hasher;

/// FNV-1a (64 bits) of some bytes. It tells an edited file from the one rdmagen read
/// or wrote; it is no defence against someone who crafts a collision, who could as
/// well edit the file between two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint(u64);

impl Fingerprint {
    const PREFIX: &str = "fnv1a64:";

    pub fn of(bytes: &[u8]) -> Self {
        let mut hasher = fnv::FnvHasher::default();
        hasher.write(bytes);
        Fingerprint(hasher.finish())
    }

    /// The form [`Display`](fmt::Display) writes, `fnv1a64:` and 16 hex digits.
    pub fn parse(text: &str) -> Option<Self> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn its_text_form_reads_back_and_nothing_else_does() {
        let print = Fingerprint::of(b"kind: Job\n");
        assert_eq!(Fingerprint::parse(&print.to_string()), Some(print));
        assert_ne!(print, Fingerprint::of(b"kind: Job \n"));
        for bad in [
            "fnv1a64:123",
            "fnv1a64:zzzzzzzzzzzzzzzz",
            "0123456789abcdef",
            "",
        ] {
            assert_eq!(Fingerprint::parse(bad), None, "{bad:?}");
        }
    }
}
