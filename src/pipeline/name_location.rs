//! Where the job or the pool wrote the name a `rules::names` finding is about.
//! rdmagen copies names verbatim from any of several fields (a job's, a pool's
//! `jobDefaults`, a podTemplate overlay, a sidecar, a runtime's pool), so a name is
//! looked for as it was written, in the inputs in the order given. Render and the
//! Trainer runtimes place their findings here; lint has the manifest's own lines.

use std::borrow::Cow;

use serde_json::Value;

use crate::diagnostics::{Finding, Location, Rule, pointer};
use crate::yaml::tree::Document;

/// The rules whose findings point at a name (rules::names).
const NAME_RULES: [Rule; 8] = [
    Rule::LabelInvalid,
    Rule::AnnotationInvalid,
    Rule::VolumeNameInvalid,
    Rule::ContainerNameInvalid,
    Rule::PortNameInvalid,
    Rule::ReferenceNameInvalid,
    Rule::ObjectNameInvalid,
    Rule::InvalidEnvName,
];

/// Where the first of `inputs` wrote the name `finding` is about; `rendered` is the
/// text its pointer points into. A label's or annotation's finding points at its key
/// (the pointer's last segment, looked for among mapping keys); any other at the
/// string the pointer reaches.
pub(super) fn written(finding: &Finding, rendered: &str, inputs: &[&Document]) -> Option<Location> {
    if !NAME_RULES.contains(&finding.rule) {
        return None;
    }
    let pointer = finding.pointer.as_deref()?;
    let segments: Vec<String> = pointer::segments(pointer).map(Cow::into_owned).collect();
    let keyed = segments.len() >= 2
        && matches!(
            segments[segments.len() - 2].as_str(),
            "labels" | "annotations" | "nodeSelector"
        );
    let text = if keyed {
        segments.last()?.clone()
    } else {
        // Parsed only for a names finding: rare, and a rendered file is small.
        let docs = crate::verify::parse(rendered).ok()?;
        docs.first()?
            .pointer(pointer)
            .and_then(Value::as_str)?
            .to_owned()
    };
    if text.is_empty() {
        return None;
    }
    // A key under a mapping of the same name first (a nodeSelector key is written
    // under the input's `nodeSelector:`, whatever label shares its text).
    let under = keyed.then(|| segments[segments.len() - 2].as_str());
    under
        .and_then(|parent| {
            inputs
                .iter()
                .find_map(|doc| doc.find_key_under(parent, &text))
        })
        .or_else(|| inputs.iter().find_map(|doc| doc.find_scalar(&text, keyed)))
}
