//! Release numbers, `MAJOR.MINOR[.PATCH]`: every upstream room (Kubeflow Trainer,
//! the training operator, NCCL) keys its facts by one, and the model reads them from
//! a Pool's `spec.target`.

use std::fmt;

use serde::Deserialize;

/// A release version, `MAJOR.MINOR[.PATCH]`, with an optional leading `v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32) -> Self {
        Version {
            major,
            minor,
            patch: 0,
        }
    }

    pub fn parse(text: &str) -> Option<Version> {
        let text = text.trim();
        let text = text.strip_prefix(['v', 'V']).unwrap_or(text);
        let parts: Vec<&str> = text.split('.').collect();
        let number = |s: &str| {
            (!s.is_empty() && s.len() <= 6 && s.bytes().all(|b| b.is_ascii_digit()))
                .then(|| s.parse::<u32>().ok())
                .flatten()
        };
        match parts.as_slice() {
            [major, minor] => Some(Version::new(number(major)?, number(minor)?)),
            [major, minor, patch] => Some(Version {
                major: number(major)?,
                minor: number(minor)?,
                patch: number(patch)?,
            }),
            _ => None,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.patch == 0 {
            write!(f, "{}.{}", self.major, self.minor)
        } else {
            write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
        }
    }
}

/// Read as text: the located tree hands a bare `1.10` over as "1.10", never as the
/// float 1.1.
impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Version::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "invalid version `{text}`: expected MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. \"1.9\" \
                 (for a commit build, give the release it is based on)"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(Version::parse("1.9"), Some(Version::new(1, 9)));
        assert_eq!(Version::parse("v1.7.0"), Some(Version::new(1, 7)));
        assert_eq!(
            Version::parse("2.21.5").map(|v| v.to_string()).as_deref(),
            Some("2.21.5")
        );
        assert!(Version::parse("1.10") > Version::parse("1.9"));
        for bad in ["", "1", "1.", "v1-8a066f9", "1.9.0.1", "1.x", "-1.2", " . "] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
    }
}
