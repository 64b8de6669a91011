//! The KRM functions specification (kustomize's exec functions, kpt): a function reads
//! one `ResourceList` on standard input and writes it back on stdout, with `results`
//! saying what it found. Transcribed once for lint, which reads a ResourceList's items
//! as a `List`'s, and for `rdmagen krm`, which writes the results.
//!
//! Sources: sigs.k8s.io/kustomize/kyaml@v0.21.2 (kustomize/v5.8.2)
//! `kio/byteio_reader.go:20-21` (kind and apiVersion), `:252-262` (`items`,
//! `functionConfig`, `results` read from a ResourceList), `kio/kioutil/kioutil.go:25-40`
//! (the annotations that say which file and document an item came from),
//! `fn/framework/result.go:15-47` (a result: message, severity error|warning|info,
//! resourceRef, field, file, tags).

use serde_json::Value;

/// A ResourceList's `kind` (byteio_reader.go:20).
pub const KIND: &str = "ResourceList";

/// A ResourceList's `apiVersion` (byteio_reader.go:21).
pub const API_VERSION: &str = "config.kubernetes.io/v1";

/// The annotations of an item naming the file it came from and its document there
/// (kioutil.go:25-28), and the legacy names kustomize still writes beside them
/// (kioutil.go:37-40).
pub const PATH_ANNOTATIONS: [&str; 2] = [
    "internal.config.kubernetes.io/path",
    "config.kubernetes.io/path",
];
pub const INDEX_ANNOTATIONS: [&str; 2] = [
    "internal.config.kubernetes.io/index",
    "config.kubernetes.io/index",
];

/// Whether `value` is a ResourceList of this API version.
pub fn is_resource_list(value: &Value) -> bool {
    value["apiVersion"] == API_VERSION && value["kind"] == KIND
}
