//! The committed input schemas are the ones the code generates.

use rdmagen::spec::schema::{InputKind, pretty};

use crate::support::root;

#[test]
fn committed_schemas_are_fresh() {
    for (kind, file) in [
        (InputKind::Job, "job.schema.json"),
        (InputKind::Pool, "pool.schema.json"),
    ] {
        let path = root().join("schemas").join(file);
        let generated = pretty(kind);
        if std::env::var_os("RDMAGEN_BLESS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "schemas/{file} is stale; regenerate with `RDMAGEN_BLESS=1 cargo test --test cli schemas`"
        );
    }
}
