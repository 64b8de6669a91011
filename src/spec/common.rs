//! Pieces shared by Job and Pool documents.

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
}
