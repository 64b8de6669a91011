//! Kubernetes objects inside rdmagen's input schemas: each is a reference to the
//! vendored upstream definition (made strict), so an editor completes `affinity` or a
//! sidecar container exactly as Kubernetes 1.33 defines it.

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{Value, json};

use crate::kubernetes::definitions::{POD_SPEC, closure, strict};

/// How a `$ref` names one of the generator's definitions: `#/$defs/` in the 2020-12
/// schemas the validator uses, `#/definitions/` in the draft-07 ones for editors.
fn prefix(generator: &SchemaGenerator) -> String {
    format!("#{}/", generator.settings().definitions_path)
}

/// Put `name` and everything it refers to among the generator's definitions.
fn register(generator: &mut SchemaGenerator, name: &str) {
    let prefix = prefix(generator);
    let defs = generator.definitions_mut();
    for dep in closure(name) {
        if !defs.contains_key(dep) {
            defs.insert(dep.to_owned(), strict(dep, &prefix));
        }
    }
}

fn reference(generator: &mut SchemaGenerator, name: &str) -> Schema {
    register(generator, name);
    let schema = json!({ "$ref": format!("{}{name}", prefix(generator)) });
    Schema::try_from(schema).expect("a $ref is a schema")
}

macro_rules! kubernetes_type {
    ($($(#[$doc:meta])* $marker:ident = $name:literal;)*) => {$(
        $(#[$doc])*
        pub struct $marker;

        impl JsonSchema for $marker {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> Cow<'static, str> {
                $name.into()
            }

            fn json_schema(generator: &mut SchemaGenerator) -> Schema {
                reference(generator, $name)
            }
        }
    )*};
}

kubernetes_type! {
    /// core/v1 Affinity.
    Affinity = "io.k8s.api.core.v1.Affinity";
    /// core/v1 Container.
    Container = "io.k8s.api.core.v1.Container";
    /// core/v1 EnvFromSource.
    EnvFromSource = "io.k8s.api.core.v1.EnvFromSource";
    /// core/v1 EnvVarSource.
    EnvVarSource = "io.k8s.api.core.v1.EnvVarSource";
    /// core/v1 SecurityContext (of a container).
    SecurityContext = "io.k8s.api.core.v1.SecurityContext";
    /// core/v1 Toleration.
    Toleration = "io.k8s.api.core.v1.Toleration";
}

/// A part of a PodTemplateSpec: `metadata.labels`, `metadata.annotations` and any
/// PodSpec field, none required. Merged last over the rendered pod template.
pub struct PodTemplateOverlay;

impl JsonSchema for PodTemplateOverlay {
    fn schema_name() -> Cow<'static, str> {
        "PodTemplateOverlay".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        register(generator, POD_SPEC);
        let mut spec = strict(POD_SPEC, &prefix(generator));
        if let Value::Object(map) = &mut spec {
            // An overlay adds to rdmagen's pod; containers are there already.
            map.remove("required");
        }
        let string_map = json!({"type": "object", "additionalProperties": {"type": "string"}});
        let schema = json!({
            "description": "A partial Kubernetes PodTemplateSpec, merged last over the pod rdmagen renders, with strategic-merge semantics (containers, env, volumes and mounts by name).",
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "metadata": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {"labels": string_map, "annotations": string_map}
                },
                "spec": spec,
            }
        });
        Schema::try_from(schema).expect("an object is a schema")
    }
}
