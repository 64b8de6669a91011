//! The quick walk (crates/upstream/src/kubernetes/quick_schema.rs) agrees with jsonschema's compiled
//! validators, for every schema it stands in for: whenever it decides, its verdict is
//! the validator's, and it decides every valid document of the corpus as valid (else a
//! run of valid inputs would compile schemas again). The corpus: every YAML document
//! under examples/, golden/, tests/rules/, tests/bad/, tests/lint/ and tests/inputs/,
//! and documents mutated from them (a field dropped, an unknown field added, values of
//! the wrong type).

use rdmagen::kubeflow::trainer::crd::{CrdRelease, TrainerKind};
use rdmagen::kubernetes::definitions::{POD_TEMPLATE_SPEC, POD_TEMPLATE_SPEC_QUICK, standalone};
use rdmagen::kubernetes::quick_schema::{Dialect, is_valid_at};
use rdmagen::kubernetes::schema_tree::Node;
use rdmagen::model::schema::VALIDATORS;
use rdmagen::verify::OUTPUT_SCHEMA;
use serde_json::{Value, json};

use crate::support::{root, tree};

/// Every YAML document of the corpus (files that do not parse are left out: they are
/// the YAML tests' concern).
fn corpus() -> Vec<(String, Value)> {
    let mut docs = Vec::new();
    for dir in [
        "examples",
        "golden",
        "tests/rules",
        "tests/bad",
        "tests/lint",
        "tests/inputs",
    ] {
        let dir = root().join(dir);
        if !dir.is_dir() {
            continue;
        }
        for (path, bytes) in tree(&dir) {
            if !(path.ends_with(".yaml") || path.ends_with(".yml")) {
                continue;
            }
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            let Ok(parsed): Result<Vec<Value>, _> = serde_saphyr::from_str_multiple(&text) else {
                continue;
            };
            let shown = format!("{}/{path}", dir.display());
            docs.extend(parsed.into_iter().map(|d| (shown.clone(), d)));
        }
    }
    assert!(docs.len() > 100, "{} documents", docs.len());
    docs
}

/// Every object and array in `value`, with its JSON Pointer.
fn nodes(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            out.push(at.clone());
            for (k, v) in map {
                nodes(
                    v,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        Value::Array(items) => {
            out.push(at.clone());
            for (i, v) in items.iter().enumerate() {
                nodes(v, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

/// `doc` changed at each of its objects and arrays: the first field dropped, an
/// unknown field added, each field's value replaced by one of another type, an array
/// emptied or given an item of another type.
fn mutations(doc: &Value) -> Vec<Value> {
    let mut at = Vec::new();
    nodes(doc, String::new(), &mut at);
    let mut out = Vec::new();
    for pointer in at {
        let mut change = |f: &mut dyn FnMut(&mut Value)| {
            let mut changed = doc.clone();
            f(changed.pointer_mut(&pointer).expect("a node of doc"));
            out.push(changed);
        };
        let node = doc.pointer(&pointer).expect("a node of doc");
        match node {
            Value::Object(map) => {
                change(&mut |v| {
                    let map = v.as_object_mut().unwrap();
                    if let Some(first) = map.keys().next().cloned() {
                        map.shift_remove(&first);
                    }
                });
                change(&mut |v| {
                    v.as_object_mut()
                        .unwrap()
                        .insert("surelyUnknownField".into(), json!("x"));
                });
                for key in map.keys() {
                    let wrong = match &map[key] {
                        Value::String(_) => json!(12),
                        Value::Number(_) => json!("12"),
                        Value::Bool(_) => json!("true"),
                        Value::Null => json!({}),
                        Value::Array(_) => json!({"a": 1}),
                        Value::Object(_) => json!(["x"]),
                    };
                    change(&mut |v| {
                        v.as_object_mut().unwrap()[key] = wrong.clone();
                    });
                }
            }
            Value::Array(_) => {
                change(&mut |v| v.as_array_mut().unwrap().clear());
                change(&mut |v| v.as_array_mut().unwrap().push(json!(7.5)));
            }
            _ => {}
        }
    }
    out
}

/// The instances of one corpus document that a schema judges.
type Select = Box<dyn Fn(&Value) -> Vec<Value>>;

/// One schema the walk stands in for: its text for the walk, its compiled validator,
/// and which corpus documents (or parts of them) it judges.
struct Case {
    name: String,
    quick: Node<'static>,
    /// Where in `quick` the schema is (a JSON Pointer; "" for the whole document).
    at: &'static str,
    dialect: Dialect,
    full: jsonschema::Validator,
    select: Select,
}

impl Case {
    fn schema(&self) -> &Node<'static> {
        self.quick
            .pointer(self.at)
            .expect("the schema is in its file")
    }
}

fn cases() -> Vec<Case> {
    let input = Dialect {
        draft7: false,
        formats: false,
    };
    let draft7 = Dialect {
        draft7: true,
        formats: true,
    };
    let json = |text: &str| -> Value { serde_json::from_str(text).unwrap() };
    // The walk reads a tree borrowing from its text, which a case holds to the end.
    let tree = |text: String| -> Node<'static> { Node::parse(text.leak()).unwrap() };
    let read = |file: &str| std::fs::read_to_string(root().join(file)).unwrap();
    let kind_is = |kind: &'static str| -> Select {
        Box::new(move |doc| {
            if doc["kind"] == kind {
                vec![doc.clone()]
            } else {
                Vec::new()
            }
        })
    };
    let mut cases = vec![
        Case {
            name: "job".into(),
            quick: tree(read("schemas/quick/inputs.json")),
            at: "/job",
            dialect: input,
            full: jsonschema::validator_for(&VALIDATORS.job_schema).unwrap(),
            select: kind_is("Job"),
        },
        Case {
            name: "pool".into(),
            quick: tree(read("schemas/quick/inputs.json")),
            at: "/pool",
            dialect: input,
            full: jsonschema::validator_for(&VALIDATORS.pool_schema).unwrap(),
            select: kind_is("Pool"),
        },
        Case {
            name: "pytorchjob".into(),
            quick: Node::parse(OUTPUT_SCHEMA).unwrap(),
            at: "",
            dialect: input,
            full: jsonschema::validator_for(&json(OUTPUT_SCHEMA)).unwrap(),
            select: kind_is("PyTorchJob"),
        },
        Case {
            name: "PodTemplateSpec".into(),
            quick: Node::parse(POD_TEMPLATE_SPEC_QUICK).unwrap(),
            at: "",
            dialect: draft7,
            full: jsonschema::validator_for(&standalone(POD_TEMPLATE_SPEC)).unwrap(),
            // Every pod template in the corpus: an object whose spec has containers.
            select: Box::new(|doc| {
                let mut at = Vec::new();
                nodes(doc, String::new(), &mut at);
                at.iter()
                    .map(|p| doc.pointer(p).unwrap())
                    .filter(|v| v["spec"]["containers"].is_array())
                    .cloned()
                    .collect()
            }),
        },
    ];
    for crd in CrdRelease::ALL {
        for kind in [TrainerKind::TrainJob, TrainerKind::TrainingRuntime] {
            let schema = json(crd.strict_embedded(kind));
            cases.push(Case {
                name: format!("{} {}", crd.tag(), kind.name()),
                full: jsonschema::draft7::new(&schema).unwrap(),
                quick: Node::parse(crd.strict_embedded(kind)).unwrap(),
                at: "",
                dialect: draft7,
                select: Box::new(move |doc| match TrainerKind::of(doc) {
                    Some(k) if k.is_runtime() == kind.is_runtime() => vec![doc.clone()],
                    _ => Vec::new(),
                }),
            });
        }
    }
    cases
}

#[test]
fn the_quick_walk_agrees_with_jsonschema() {
    let corpus = corpus();
    for case in cases() {
        let (mut decided, mut undecided, mut valid) = (0, 0, 0);
        for (path, doc) in &corpus {
            for instance in (case.select)(doc) {
                let full = case.full.is_valid(&instance);
                let quick = is_valid_at(&case.quick, case.schema(), &instance, case.dialect);
                if full {
                    valid += 1;
                    assert_eq!(
                        quick,
                        Some(true),
                        "{}: the walk does not find a valid document of {path} valid",
                        case.name
                    );
                } else {
                    assert_ne!(quick, Some(true), "{}: {path} is invalid", case.name);
                }
                for mutated in mutations(&instance) {
                    match is_valid_at(&case.quick, case.schema(), &mutated, case.dialect) {
                        Some(verdict) => {
                            decided += 1;
                            assert_eq!(
                                verdict,
                                case.full.is_valid(&mutated),
                                "{}: the walk and jsonschema disagree on a mutation of {path}: \
                                 {mutated}",
                                case.name
                            );
                        }
                        None => undecided += 1,
                    }
                }
            }
        }
        assert!(
            valid > 0 && decided > undecided,
            "{}: {valid} valid documents, {decided} mutations decided, {undecided} not",
            case.name
        );
        eprintln!(
            "{}: {valid} valid documents, {decided} mutations decided, {undecided} not",
            case.name
        );
    }
}
