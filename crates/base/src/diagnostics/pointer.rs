//! JSON Pointers (RFC 6901), the paths findings point at inside a document and the
//! paths jsonschema reports: written and read here only, so that a key holding `/` or
//! `~` (a label `example.com/x`, a resource `rdma/hca`) means one thing everywhere.

use std::borrow::Cow;

/// `key` as one pointer segment: `~` written `~0`, `/` written `~1`.
pub fn segment(key: &str) -> Cow<'_, str> {
    if key.contains(['~', '/']) {
        Cow::Owned(key.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(key)
    }
}

/// The keys and indexes `pointer` steps through, unescaped; none for the root (`""`).
pub fn segments(pointer: &str) -> impl Iterator<Item = Cow<'_, str>> {
    pointer.split('/').skip(1).map(unescape)
}

fn unescape(segment: &str) -> Cow<'_, str> {
    if segment.contains('~') {
        // RFC 6901 §4: `~1` before `~0`, so that `~01` reads `~1`, not `/`.
        Cow::Owned(segment.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(segment)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_with_slashes_and_tildes_go_there_and_back() {
        for key in ["plain", "rdma/hca", "a~b", "~1", "~0/~1", ""] {
            let pointer = format!("/spec/{}", segment(key));
            let back: Vec<_> = segments(&pointer).collect();
            assert_eq!(back, ["spec", key], "{pointer}");
        }
        assert_eq!(segment("rdma/hca"), "rdma~1hca");
        assert_eq!(segments("").count(), 0);
    }
}
