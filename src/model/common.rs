//! Pieces shared by Job and Pool documents.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// The only input version so far.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
pub enum ApiVersion {
    #[serde(rename = "rdmagen/v1alpha1")]
    V1alpha1,
}

pub const API_VERSION: &str = "rdmagen/v1alpha1";

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Metadata {
    pub name: String,
    /// Namespace of the generated objects; omitted when absent.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Labels. A Job's land on the PyTorchJob and on its pods; a Pool's describe the
    /// Pool only (labels for its jobs go in `spec.jobDefaults.labels`).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ScalarString>")]
    pub labels: BTreeMap<String, String>,
    /// Annotations. A Job's land on the PyTorchJob and on its pods; a Pool's describe
    /// the Pool only (annotations for its jobs go in `spec.jobDefaults.annotations`).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ScalarString>")]
    pub annotations: BTreeMap<String, String>,
}

/// Schema of a string that YAML lets users write bare: `128`, `22`, `true` and `1.5`
/// are read as the strings "128", "22", "true" and "1.5".
pub struct ScalarString;

impl JsonSchema for ScalarString {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ScalarString".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A string; a bare number or boolean is read as its text.",
            "type": ["string", "number", "boolean"]
        })
    }
}
