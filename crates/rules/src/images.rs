//! RDG253: a training pod's container image that names no version: no tag, or
//! `latest` (Kubernetes' image names and pull-policy defaulting; the reference is
//! read by `packages::base_image::pin_of`, as the Dockerfile's FROM is).

use serde_json::Value;

use crate::diagnostics::escape;
use crate::diagnostics::{Finding, Rule};
use crate::packages::base_image::{Pin, pin_of};

/// Every container of `pod` (a pod spec at `base`) whose image is not pinned.
pub(crate) fn check(pod: &Value, base: &str) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, c) in pod["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        // No image at all is another rule's (RDG067, and Trainer's runtime gives a
        // container its image from the TrainJob).
        let Some(image) = c["image"].as_str().filter(|s| !s.trim().is_empty()) else {
            continue;
        };
        let how = match pin_of(image.trim()) {
            Pin::Digest | Pin::Tag => continue,
            Pin::Latest => "is tagged latest",
            Pin::Untagged => "has no tag, so it is :latest",
        };
        out.push(Finding::at_pointer(
            Rule::ImageUnpinned,
            format!(
                "the image `{}` of container `{}` {how}: with imagePullPolicy Always by default each pod pulls whatever the tag names when it starts, so the ranks of one job may run different builds; name a version tag or a digest",
                escape::shown(image),
                escape::shown(c["name"].as_str().unwrap_or("?"))
            ),
            format!("{base}/containers/{i}/image"),
        ));
    }
    out
}
