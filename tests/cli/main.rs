//! rdmagen's integration tests: one binary, one module per behaviour.

mod actionable_errors;
mod bad_inputs;
mod detect;
mod determinism;
mod dockerfile;
mod golden;
mod golden_review;
mod hostile_text;
mod inputs;
mod kubernetes_schema;
mod layers;
mod lint_and_report;
mod lint_targets;
mod namespaces;
mod output_safety;
mod pipes;
mod pod_fields;
mod pod_template;
mod real_clusters;
mod render_options;
mod rules;
mod schemas;
mod snapshots;
mod support;
mod user_templates;
mod yaml_safety;
