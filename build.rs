//! Writes the binary form (crates/upstream/src/kubernetes/schema_blob.rs) of the
//! product's embedded schemas a run walks, into OUT_DIR, from the committed JSON: the
//! Job and Pool input schemas and the PyTorchJob envelope. Tokenising their 55 KB of
//! JSON was 15 % of a one-job render's instructions (callgrind, issue 23).

#[path = "crates/upstream/src/kubernetes/schema_blob.rs"]
// The reader's constants (INDEXED, LATER_FROM) are the writer's contract, unused here.
#[allow(dead_code)]
mod schema_blob;

/// The committed JSON files a run reads as trees, and the blob each becomes.
const SCHEMAS: &[(&str, &str)] = &[
    ("schemas/quick/inputs.json", "quick-inputs.tree"),
    ("schemas/pytorchjob.schema.json", "pytorchjob.tree"),
];

fn main() {
    let out_dir =
        std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (path, name) in SCHEMAS {
        println!("cargo::rerun-if-changed={path}");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let value: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not JSON: {e}"));
        std::fs::write(out_dir.join(name), schema_blob::encode(&value))
            .expect("OUT_DIR is writable");
    }
    println!("cargo::rerun-if-changed=crates/upstream/src/kubernetes/schema_blob.rs");
}
