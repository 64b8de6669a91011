//! The mpi-operator's MPIJob CRD: the vendored file is the one SOURCE.md names, and the
//! strict schema rdmagen embeds (crates/upstream/schemas/mpi-operator/) is that CRD's
//! openAPIV3Schema, converted as the Trainer CRDs are.

use rdmagen::kubeflow::mpi::crd::{STRICT, TAG};
use rdmagen::kubeflow::trainer::crd::{cel_rules, strict, unknown_keywords};
use serde_json::Value;

use crate::support::root;
use crate::trainer_crd::{recorded_hashes_match, without_descriptions};

const UPSTREAM: &str = "tests/upstream/mpi-operator";
const EMBEDDED: &str = "crates/upstream/schemas/mpi-operator/v0.8.0/mpijobs.strict.json";

/// The vendored CRD's openAPIV3Schema, without descriptions.
fn upstream_schema() -> Value {
    let file = format!("{UPSTREAM}/crds/{TAG}/kubeflow.org_mpijobs.yaml");
    let text = std::fs::read_to_string(root().join(&file)).unwrap();
    let doc: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(doc["spec"]["names"]["kind"], "MPIJob", "{file}");
    assert_eq!(doc["spec"]["group"], "kubeflow.org", "{file}");
    let versions = doc["spec"]["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1, "{file}: one version");
    assert_eq!(versions[0]["name"], "v2beta1", "{file}");
    without_descriptions(&versions[0]["schema"]["openAPIV3Schema"])
}

/// The embedded strict schema is the vendored CRD's, converted; `RDMAGEN_BLESS=1`
/// rewrites it. Every keyword of the CRD is understood, and it has no CEL rule the
/// conversion would have to translate.
#[test]
fn the_embedded_schema_is_the_vendored_crds() {
    let upstream = upstream_schema();
    assert_eq!(unknown_keywords(&upstream), Vec::<String>::new());
    assert_eq!(
        cel_rules(&upstream),
        Vec::new(),
        "the CRD has CEL rules now"
    );
    let converted = strict(&upstream);
    jsonschema::draft7::new(&converted).expect("the strict schema compiles");
    let mut expected = serde_json::to_string(&converted).unwrap();
    expected.push('\n');
    if std::env::var_os("RDMAGEN_BLESS").is_some() {
        std::fs::write(root().join(EMBEDDED), &expected).unwrap();
    }
    assert!(
        STRICT == expected,
        "{EMBEDDED} is not the vendored CRD's schema; RDMAGEN_BLESS=1 cargo test --test cli mpijob_crd rewrites it"
    );
}

/// Every file tests/upstream/mpi-operator/SOURCE.md lists is there, byte for byte.
#[test]
fn the_vendored_crd_matches_its_recorded_hash() {
    assert_eq!(recorded_hashes_match(UPSTREAM), 1, "files listed");
}
