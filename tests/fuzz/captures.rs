//! Node captures (show_gids, ibstat, ibv_devinfo, rdma link, ofed_info, dpkg -l, and
//! several of them in one file) through `detect`.

use std::sync::{Arc, LazyLock};

use proptest::prelude::*;
use rdmagen::detect::decide::{self, Options};
use rdmagen::detect::{Observations, capture};
use rdmagen::diagnostics::Findings;
use rdmagen::model::load::read_documents;
use rdmagen::model::pool::Platform;
use rdmagen::render::Renderer;

use crate::corpus::CAPTURES;
use crate::guard;
use crate::located::{Layout, Lines};
use crate::mutate::input;

/// Built once: compiling the templates costs more than a case.
static RENDERER: LazyLock<Renderer> =
    LazyLock::new(|| Renderer::new(None).expect("the built-in templates compile"));

const PLATFORMS: [Platform; 4] = [
    Platform::Generic,
    Platform::Aistudio,
    Platform::Cubestudio,
    Platform::Cce,
];

/// Read `text` as a capture and detect a pool from it. Checks that every location is
/// inside the capture, and that a pool detected without errors is one `render`
/// accepts. Returns whether a pool was detected.
fn detect_case(text: &str, platform: Platform, in_pod: bool) -> Result<bool, String> {
    let name: Arc<str> = Arc::from("capture.txt");
    let mut obs = Observations::default();
    capture::read(&mut obs, &name, text);
    let layout = Layout::new(&name, text, Lines::Lf);
    for (at, _) in &obs.unreadable {
        layout.inside(at)?;
    }
    let options = Options {
        name: "fuzz".to_owned(),
        platform,
        gpus_per_node: Some(8),
        in_pod,
        ..Options::default()
    };
    let mut findings = Findings::default();
    let draft = decide::detect(&obs, &options, &mut findings)
        .map_err(|e| format!("detect refused the default flags: {e}"))?;
    layout.all_inside(&findings)?;
    let Some(draft) = draft else {
        return Ok(false);
    };
    if findings.errors() > 0 {
        return Ok(true);
    }
    let pool = RENDERER
        .render(rdmagen::render::POOL, "pool", &draft)
        .map_err(|e| format!("the detected pool does not render: {e}"))?;
    let mut check = Findings::default();
    let docs = read_documents(&Arc::from("pool.yaml"), &pool, &mut check);
    if let [(_, loaded)] = docs.pools.as_slice() {
        rdmagen::plan::check_pool(loaded, &mut check);
    }
    if check.errors() > 0 || docs.pools.len() != 1 {
        return Err(format!(
            "detect reported no error, but render rejects its pool: {:?}\n--- pool:\n{pool}",
            check.iter().map(|f| &f.message).collect::<Vec<_>>()
        ));
    }
    Ok(true)
}

proptest! {
    #![proptest_config(guard::config(384, "tests/proptest-regressions/fuzz-captures.txt"))]

    /// Any capture: no panic, locations inside the file, and a pool detected without
    /// errors is one render accepts.
    #[test]
    fn detect_reads_any_capture(
        text in input(&CAPTURES),
        platform in prop::sample::select(&PLATFORMS[..]),
        in_pod in any::<bool>(),
    ) {
        let checked = guard::run("detect", move || {
            detect_case(&text, platform, in_pod).map_err(|e| format!("{e}\n--- input:\n{text:?}"))
        });
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }
}

/// The samples themselves detect pools, so the property above is exercised.
#[test]
fn unmutated_captures_detect_pools() {
    let detected = CAPTURES
        .iter()
        .filter(|(name, text)| {
            detect_case(text, Platform::Generic, false).unwrap_or_else(|e| panic!("{name}: {e}"))
        })
        .count();
    assert!(detected >= 5, "only {detected} samples detect a pool");
}
