//! NCCL versions as a log shows them: printed (`NCCL version 2.19.3+cuda12.3`), or
//! bounded by the formats a host's lines use (see `formats::FINGERPRINTS`).

use std::fmt;

/// major.minor.patch
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version(pub u16, pub u16, pub u16);

impl Version {
    pub const MIN: Version = Version(0, 0, 0);
    pub const MAX: Version = Version(u16::MAX, u16::MAX, u16::MAX);

    /// The first `MAJOR.MINOR.PATCH` at the start of `text` (what follows, such as
    /// `+cuda12.3` or `-1`, is ignored).
    pub fn parse_prefix(text: &str) -> Option<Version> {
        let mut parts = [0u16; 3];
        let mut rest = text;
        for (i, part) in parts.iter_mut().enumerate() {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 || digits > 4 {
                return None;
            }
            *part = rest[..digits].parse().ok()?;
            rest = &rest[digits..];
            if i < 2 {
                rest = rest.strip_prefix('.')?;
            }
        }
        Some(Version(parts[0], parts[1], parts[2]))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The versions a host can be running, inclusive at both ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub lo: Version,
    pub hi: Version,
}

impl Range {
    pub const ANY: Range = Range {
        lo: Version::MIN,
        hi: Version::MAX,
    };

    pub const fn new(lo: Version, hi: Version) -> Range {
        Range { lo, hi }
    }

    pub fn point(v: Version) -> Range {
        Range { lo: v, hi: v }
    }

    /// Both at once, or None when they exclude each other.
    pub fn intersect(self, other: Range) -> Option<Range> {
        let lo = self.lo.max(other.lo);
        let hi = self.hi.min(other.hi);
        (lo <= hi).then_some(Range { lo, hi })
    }

    /// Whether two ranges share a release series (major.minor). Ranges come from the
    /// tags where a format first and last appears; widening them to whole series keeps
    /// a build between two tags from being taken for another version.
    pub fn overlaps_series(self, other: Range) -> bool {
        let widen = |r: Range| Range {
            lo: Version(r.lo.0, r.lo.1, 0),
            hi: Version(r.hi.0, r.hi.1, u16::MAX),
        };
        widen(self).intersect(widen(other)).is_some()
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.lo == Version::MIN, self.hi == Version::MAX) {
            (true, true) => f.write_str("any"),
            (true, false) => write!(f, "<= {}", self.hi),
            (false, true) => write!(f, ">= {}", self.lo),
            (false, false) if self.lo == self.hi => write!(f, "{}", self.lo),
            (false, false) => write!(f, "{}-{}", self.lo, self.hi),
        }
    }
}

/// The version a `NCCL version X` text names, and that text (`2.19.3+cuda12.3`), from
/// NCCL's own line (`NCCL version 2.19.3+cuda12.3`, bare or after `NCCL INFO`) or
/// PyTorch's error message (`..., NCCL version 2.18.1`).
pub fn printed(text: &str) -> Option<(Version, &str)> {
    let at = text.find("NCCL version ")?;
    let rest = &text[at + "NCCL version ".len()..];
    let version = Version::parse_prefix(rest)?;
    let word = rest.split(|c: char| c.is_whitespace() || c == ',' || c == ')');
    let shown = word.into_iter().next().unwrap_or(rest);
    Some((version, shown.trim_end_matches('.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_from_every_printed_form() {
        assert_eq!(
            printed("NCCL version 2.19.3+cuda12.3"),
            Some((Version(2, 19, 3), "2.19.3+cuda12.3"))
        );
        assert_eq!(
            printed("unhandled system error, NCCL version 2.18.1"),
            Some((Version(2, 18, 1), "2.18.1"))
        );
        assert_eq!(printed("NCCL version 2.x"), None);
        assert_eq!(printed("NCCL git version master abc"), None);
    }

    #[test]
    fn ranges_intersect_and_print() {
        let old = Range::new(Version(2, 17, 1), Version(2, 18, 6));
        let new = Range::new(Version(2, 19, 1), Version::MAX);
        assert_eq!(old.intersect(new), None);
        assert!(!old.overlaps_series(new));
        assert!(old.overlaps_series(Range::point(Version(2, 18, 7))));
        assert_eq!(old.to_string(), "2.17.1-2.18.6");
        assert_eq!(new.to_string(), ">= 2.19.1");
        assert_eq!(
            Range::new(Version::MIN, Version(2, 6, 4)).to_string(),
            "<= 2.6.4"
        );
    }
}
