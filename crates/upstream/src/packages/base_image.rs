//! Base images: which package family they use, and whether a reference is safe to
//! write into a Dockerfile.

use crate::packages::Family;

/// A reference that can only be one token after `FROM`: registry, path, tag and
/// digest characters, nothing a shell or the Dockerfile parser would interpret.
pub fn check_reference(image: &str) -> Result<(), String> {
    if image.is_empty() {
        return Err("the base image is empty".to_owned());
    }
    match image
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':' | '@')))
    {
        Some(c) => Err(format!(
            "the base image `{}` contains {}; an image reference is registry/name:tag[@digest]",
            image.escape_debug(),
            describe(c)
        )),
        None => Ok(()),
    }
}

/// A base image written into FROM must name a tag or digest other than `latest`
/// (hadolint DL3006, DL3007): a rebuild must not silently change the OS underneath.
pub fn check_tagged(image: &str) -> Result<(), String> {
    match pin_of(image) {
        Pin::Digest | Pin::Tag => Ok(()),
        Pin::Latest | Pin::Untagged => Err(format!(
            "the base image `{image}` needs a tag other than latest, or a digest"
        )),
    }
}

/// What an image reference pins: `name@sha256:...` a digest, `name:1.4` a tag,
/// `name:latest` or `name` (a registry's port, `localhost:5000/name`, is no tag)
/// whatever the registry's latest is when the image is pulled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pin {
    Digest,
    Tag,
    Latest,
    Untagged,
}

pub fn pin_of(image: &str) -> Pin {
    if image.contains('@') {
        return Pin::Digest;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':').map(|(_, t)| t) {
        Some("latest") => Pin::Latest,
        Some(t) if !t.is_empty() => Pin::Tag,
        _ => Pin::Untagged,
    }
}

fn describe(c: char) -> String {
    match c {
        '\n' | '\r' => "a line break".to_owned(),
        c if c.is_whitespace() => "whitespace".to_owned(),
        c => format!("`{c}`"),
    }
}

/// The package family of a base image, from its name and tag. NGC images
/// (nvcr.io/nvidia/...) and pytorch/pytorch are Ubuntu-based unless the tag names
/// another distribution (e.g. cuda:12.4.0-devel-rockylinux8).
/// Whether the image is one of NVIDIA's NGC PyTorch images, which ship the RDMA user
/// space NCCL loads (rdma-core's libibverbs, librdmacm, libibumad and the mlx5
/// provider, with HPC-X) beside torch and NCCL: the image rdmagen's smoke test runs
/// and the README calls complete. It has no perftest or infiniband-diags.
pub fn has_rdma_runtime(image: &str) -> bool {
    let name = image.split(['@', ':']).next().unwrap_or_default();
    name.eq_ignore_ascii_case("nvcr.io/nvidia/pytorch")
}

pub fn family_of(image: &str) -> Option<Family> {
    let lower = image.to_ascii_lowercase();
    let without_digest = lower.split('@').next().unwrap_or_default();
    let (path, tag) = match without_digest.rsplit_once(':') {
        Some((p, t)) if !t.contains('/') => (p, t),
        _ => (without_digest, ""),
    };
    let name = path.rsplit('/').next().unwrap_or_default();
    const DNF: &[&str] = &[
        "rockylinux",
        "rocky",
        "almalinux",
        "alma",
        "centos",
        "ubi",
        "rhel",
        "fedora",
        "redhat",
    ];
    const APT: &[&str] = &["ubuntu", "debian"];
    let mentions = |text: &str, words: &[&str]| words.iter().any(|w| text.contains(w));
    if mentions(tag, DNF) {
        return Some(Family::Dnf);
    }
    if mentions(tag, APT) {
        return Some(Family::Apt);
    }
    if mentions(name, DNF) || path.contains("registry.access.redhat.com") {
        return Some(Family::Dnf);
    }
    if mentions(name, APT) || path.starts_with("nvcr.io/nvidia/") || path == "pytorch/pytorch" {
        return Some(Family::Apt);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_from_names_and_tags() {
        let cases = [
            ("ubuntu:22.04", Some(Family::Apt)),
            ("debian:bookworm-slim", Some(Family::Apt)),
            ("nvcr.io/nvidia/pytorch:24.10-py3", Some(Family::Apt)),
            (
                "nvcr.io/nvidia/cuda:12.4.0-devel-ubuntu22.04",
                Some(Family::Apt),
            ),
            (
                "nvcr.io/nvidia/cuda:12.4.0-devel-rockylinux8",
                Some(Family::Dnf),
            ),
            (
                "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime",
                Some(Family::Apt),
            ),
            ("rockylinux:9", Some(Family::Dnf)),
            ("almalinux:9", Some(Family::Dnf)),
            ("quay.io/centos/centos:stream9", Some(Family::Dnf)),
            ("registry.access.redhat.com/ubi9/ubi:9.4", Some(Family::Dnf)),
            ("fedora:40", Some(Family::Dnf)),
            ("localhost:5000/ubuntu", Some(Family::Apt)),
            ("registry.example.com/team/trainer:1.0", None),
            ("alpine:3.20", None),
        ];
        for (image, family) in cases {
            assert_eq!(family_of(image), family, "{image}");
        }
    }

    #[test]
    fn references_cannot_carry_instructions() {
        assert!(check_reference("nvcr.io/nvidia/pytorch:24.10-py3").is_ok());
        assert!(check_reference("ubuntu@sha256:abc123").is_ok());
        for bad in [
            "ubuntu\nRUN rm -rf /",
            "ubuntu; rm -rf /",
            "ubuntu $(id)",
            "",
            "a b",
            "x`y`",
            "ubuntu\\",
        ] {
            assert!(check_reference(bad).is_err(), "{bad:?}");
        }
        assert!(check_tagged("ubuntu:22.04").is_ok());
        assert!(check_tagged("localhost:5000/ubuntu@sha256:ab").is_ok());
        for untagged in ["ubuntu", "ubuntu:latest", "localhost:5000/ubuntu"] {
            assert!(check_tagged(untagged).is_err(), "{untagged}");
        }
        assert_eq!(pin_of("localhost:5000/ubuntu"), Pin::Untagged);
        assert_eq!(pin_of("ubuntu:latest"), Pin::Latest);
        assert_eq!(pin_of("r.io/a/b:1.4"), Pin::Tag);
        assert_eq!(pin_of("r.io/a/b@sha256:ab"), Pin::Digest);
    }
}
