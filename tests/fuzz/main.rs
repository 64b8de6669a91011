//! Randomized harness over every parser: YAML inputs and manifests, captures,
//! Dockerfiles, pin files, `dpkg -l`, `rdma` requests, quantities and the golden diff.
//! Each target is fed (a) arbitrary text and (b) structure-aware mutations of the
//! project's own samples, and must not panic, hang or blow up its memory; where a
//! property holds (the fast YAML path agrees with the full parser, findings point
//! inside the file, accepted jobs render YAML that parses back), it is checked.
//!
//! `cargo test` runs the fast configuration. For a long run:
//! `RDMAGEN_FUZZ_CASES=6000 RDMAGEN_FUZZ_FILES=1500 cargo test --test fuzz` (about
//! 10 minutes on 2 cores; a debug build keeps the fast-path assertion on).

mod binary;
mod captures;
mod corpus;
mod dockerfile;
mod golden_diff;
mod guard;
mod located;
mod mutate;
mod nccl_log;
mod values;
mod yaml;

/// Counts the bytes each thread holds, so [`guard`] can bound a case's memory.
#[global_allocator]
static ALLOCATOR: guard::Counting = guard::Counting;
