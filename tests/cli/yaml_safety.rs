//! Any string a user can type comes back unchanged when the rendered YAML is parsed:
//! quotes, `: `, `#`, newlines, `no`, `on`, `~`, `{}`, unicode, control characters.

use proptest::prelude::*;
use rdmagen::diagnostics::policy::Level;
use rdmagen::diagnostics::{Policy, Rule};
use rdmagen::pipeline::{self, Collect, Request};
use rdmagen::render::quote;
use serde_json::Value;

const POOL: &str = "apiVersion: rdmagen/v1alpha1
kind: Pool
metadata: {name: p}
spec:
  gpu: {perNode: 8}
  network: {fabric: roce, hcas: [mlx5_1], socketIfname: eth0}
";

/// Strings that break naive YAML templating, mixed with arbitrary unicode.
fn nasty() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("no".to_owned()),
        Just("on".to_owned()),
        Just("~".to_owned()),
        Just("{}".to_owned()),
        Just("[a, b]".to_owned()),
        Just("key: value # comment".to_owned()),
        Just("\"quoted\" and 'single'".to_owned()),
        Just("line one\nline two\r\n\ttabbed".to_owned()),
        Just("- item".to_owned()),
        Just("*alias &anchor !tag %directive @at `tick` |pipe >fold".to_owned()),
        Just("0o17 0x1F 1e3 .inf .nan null Null NULL y n".to_owned()),
        Just("混合 ünïcödé 🚀 \u{85}\u{2028}\u{feff}\u{7f}".to_owned()),
        any::<String>(),
        "[ -~]{0,40}",
    ]
}

struct Case {
    image: String,
    arg: String,
    env: String,
    label_key: String,
    label: String,
    annotation: String,
}

fn job_yaml(c: &Case) -> String {
    format!(
        "apiVersion: rdmagen/v1alpha1
kind: Job
metadata:
  name: j
  labels: {{{}: {}}}
  annotations: {{example.com/note: {}}}
spec:
  pool: p
  image: {}
  nodes: 2
  gpusPerNode: 8
  script: train.py
  args: [{}]
  env: {{USER_VALUE: {}}}
  podTemplate:
    spec:
      nodeSelector: {{example.com/overlay: {}}}
",
        quote(&c.label_key),
        quote(&c.label),
        quote(&c.annotation),
        quote(&c.image),
        quote(&c.arg),
        quote(&c.env),
        quote(&c.annotation)
    )
}

fn render(job: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("job.yaml");
    std::fs::write(&path, format!("{job}---\n{POOL}")).unwrap();
    let collect = Collect::default();
    // Kubernetes holds label keys and values (the nodeSelector's too) to a format that
    // most of these strings break (RDG166). Waived, they are written as given, which
    // is what this test reads back.
    let mut policy = Policy::default();
    policy
        .config
        .set(Rule::LabelInvalid, Level::Off, "yaml_safety");
    let report = pipeline::run_with(
        &Request {
            inputs: vec![path],
            policy,
            ..Request::default()
        },
        &collect,
        false,
    )
    .unwrap();
    assert_eq!(report.findings.errors(), 0, "{:?}", report.findings);
    let jobs = collect.into_jobs();
    let text = &jobs[0].files[0].text;
    let mut docs = rdmagen::verify::parse(text).unwrap();
    assert_eq!(docs.len(), 1);
    docs.remove(0)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn user_strings_round_trip(
        image in nasty().prop_filter("an image is required", |s| !s.is_empty()),
        arg in nasty(),
        env in nasty(),
        label_key in nasty(),
        label in nasty(),
        annotation in nasty(),
    ) {
        let case = Case { image, arg, env, label_key, label, annotation };
        let doc = render(&job_yaml(&case));
        prop_assert_eq!(&doc["metadata"]["labels"][&case.label_key], &Value::from(case.label.as_str()));
        for role in ["Master", "Worker"] {
            let template = &doc["spec"]["pytorchReplicaSpecs"][role]["template"];
            let container = &template["spec"]["containers"][0];
            prop_assert_eq!(&container["image"], &Value::from(case.image.as_str()));
            // The user's argument comes last, after the launcher's own words.
            let command = container["command"].as_array().unwrap();
            prop_assert_eq!(command.last().unwrap(), &Value::from(case.arg.as_str()));
            let env = container["env"].as_array().unwrap();
            let user = env.iter().find(|v| v["name"] == "USER_VALUE").unwrap();
            prop_assert_eq!(&user["value"], &Value::from(case.env.as_str()));
            prop_assert_eq!(&template["metadata"]["labels"][&case.label_key], &Value::from(case.label.as_str()));
            prop_assert_eq!(
                &template["metadata"]["annotations"]["example.com/note"],
                &Value::from(case.annotation.as_str())
            );
            // A podTemplate overlay is printed by the block writer, not the template.
            prop_assert_eq!(
                &template["spec"]["nodeSelector"]["example.com/overlay"],
                &Value::from(case.annotation.as_str())
            );
        }
    }
}

/// Every manifest rdmagen wrote into golden/ is read by the fast path.
#[test]
fn golden_manifests_take_the_fast_path() {
    let mut checked = 0;
    for (path, bytes) in crate::support::tree(&crate::support::root().join("golden")) {
        // smoke-test's ConfigMaps and the preflight's hold a script as a literal
        // block, outside the fast path's subset: each is parsed once, by the full parser.
        if path.ends_with(".yaml")
            && !path.ends_with("/configmap.yaml")
            && !path.ends_with("/preflight.yaml")
        {
            let text = String::from_utf8(bytes).unwrap();
            assert!(
                rdmagen::yaml::fast_yaml::parse(&text).is_some(),
                "{path} left the fast path"
            );
            checked += 1;
        }
    }
    assert!(checked >= 12);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Whatever the fast path accepts, it reads exactly as the full parser does:
    /// escaped user strings, and raw text that may or may not be valid YAML.
    #[test]
    fn fast_path_agrees_with_the_parser(s in nasty(), raw in "[ -~]{0,24}", key in "[ -~]{0,12}") {
        let q = rdmagen::render::scalar(&s);
        let docs = [
            format!("a: {q}\nb: [{q}, {q}]\nc: {{k: {q}}}\nd:\n  - {q}\n  - e: {q}\n"),
            format!("k: {raw}\n"),
            format!("{key}: v\n"),
            format!("- {raw}\n- [{raw}]\n"),
            format!("m: {{{raw}}}\n"),
        ];
        for text in docs {
            if let Some(fast) = rdmagen::yaml::fast_yaml::parse(&text) {
                let full = rdmagen::yaml::tree::parse_documents(&"t.yaml".into(), &text)
                    .map(|docs| docs.iter().map(|d| rdmagen::yaml::tree_value::to_value(&d.root)).collect::<Vec<_>>());
                prop_assert_eq!(Ok(fast), full.map_err(|e| e.message), "{:?}", text);
            }
        }
    }
}

/// Any JSON value a manifest can hold: nested mappings and sequences (empty ones
/// too) of nasty strings, integers, floats, booleans and nulls, under nasty keys.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        nasty().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON has no NaN or infinity", |f| f.is_finite())
            .prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::from),
            prop::collection::vec((nasty(), inner), 0..5)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// What the direct path writes reads back, by the parser verify uses, as exactly
    /// the value it was built from and checked as: so a built-in manifest is trusted
    /// without being parsed back (issue 23).
    #[test]
    fn the_direct_path_text_reads_back_as_its_value(
        entries in prop::collection::vec((nasty(), any_value()), 0..6),
    ) {
        let manifest = Value::Object(entries.into_iter().collect());
        let text = rdmagen::render::manifest::text(&manifest);
        let back = rdmagen::verify::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, vec![manifest], "{}", text);
    }
}
