//! Writes the binary form (src/kubernetes/schema_blob.rs) of each embedded schema a run
//! walks or merges with, into OUT_DIR, from the committed JSON beside the sources.

#[path = "src/kubernetes/schema_blob.rs"]
// The reader's constants (INDEXED, LATER_FROM) are the writer's contract, unused here.
#[allow(dead_code)]
mod schema_blob;

/// The committed JSON files a run reads as trees, relative to this crate.
const SCHEMAS: &[&str] = &[
    "schemas/kubernetes/pod-template-spec.quick.json",
    "schemas/kubernetes/v1.33-merge.json",
    "schemas/trainer/v2.1.0/trainjobs.strict.json",
    "schemas/trainer/v2.1.0/trainingruntimes.strict.json",
    "schemas/trainer/v2.3.0/trainjobs.strict.json",
    "schemas/trainer/v2.3.0/trainingruntimes.strict.json",
    "schemas/mpi-operator/v0.8.0/mpijobs.strict.json",
];

fn main() {
    let out_dir =
        std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for path in SCHEMAS {
        println!("cargo::rerun-if-changed={path}");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let value: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not JSON: {e}"));
        let blob = schema_blob::encode(&value);
        let name = path
            .trim_start_matches("schemas/")
            .replace('/', "-")
            .replace(".json", ".tree");
        std::fs::write(out_dir.join(name), blob).expect("OUT_DIR is writable");
    }
    println!("cargo::rerun-if-changed=src/kubernetes/schema_blob.rs");
}
