//! Dockerfiles, `dpkg -l` captures for image-check, pin files, base image names and
//! user Dockerfile templates.

use std::sync::Arc;

use proptest::prelude::*;
use rdmagen::diagnostics::Findings;
use rdmagen::dockerfile::image_check;
use rdmagen::dockerfile::{self, Install};
use rdmagen::model::pool::Platform;
use rdmagen::packages::{Family, PackageSet, Pins, base_image};
use rdmagen::platform::profile;

use crate::corpus::{CAPTURES, DOCKERFILES, PINS, TEMPLATES};
use crate::guard;
use crate::located::{Layout, Lines};
use crate::mutate::{arbitrary, input};

const PLATFORMS: [Platform; 4] = [
    Platform::Generic,
    Platform::Aistudio,
    Platform::Cubestudio,
    Platform::Cce,
];
const FAMILIES: [Family; 2] = [Family::Apt, Family::Dnf];
const SETS: [PackageSet; 3] = [
    PackageSet::Seed,
    PackageSet::Runtime,
    PackageSet::Diagnostics,
];

/// A complete Dockerfile for `base` with `pins` must hold only Dockerfile
/// instructions: no value can smuggle in a line.
fn full_dockerfile_is_clean(
    base: &str,
    family: Family,
    set: PackageSet,
    pins: Pins,
) -> Result<(), String> {
    let text = Install { family, set, pins }.full(base, "# fuzz\n");
    let broken = dockerfile::unknown_instructions(&text);
    if !broken.is_empty() {
        return Err(format!("unknown instructions {broken:?} in:\n{text}"));
    }
    Ok(())
}

/// image-check's findings, and every instruction, start on a line of `text`.
fn image_check_case(text: &str, platform: Platform) -> Result<(), String> {
    let name: Arc<str> = Arc::from("Dockerfile");
    let mut findings = Findings::default();
    image_check::dockerfile(&name, text, profile(platform), &mut findings);
    let layout = Layout::new("Dockerfile", text, Lines::Lf);
    layout.all_inside(&findings)?;
    for (line, _, _) in dockerfile::instructions(text) {
        layout.position(line, 1)?;
    }
    Ok(())
}

/// The base image checks never panic, and a name they accept writes a FROM line
/// with exactly that name and nothing else.
fn base_image_case(base: &str, asked: Option<Family>) -> Result<(), String> {
    let family = dockerfile::family_for(Some(base), asked);
    let _ = base_image::family_of(base);
    if base_image::check_reference(base).is_err() || base_image::check_tagged(base).is_err() {
        return Ok(());
    }
    let family = family.unwrap_or(Family::Apt);
    full_dockerfile_is_clean(base, family, PackageSet::Seed, Pins::default())?;
    let install = Install {
        family,
        set: PackageSet::Seed,
        pins: Pins::default(),
    };
    let steps = dockerfile::instructions(&install.full(base, ""));
    match steps.first() {
        Some((_, word, rest)) if word == "FROM" && rest == base => Ok(()),
        other => Err(format!("the first instruction is {other:?}")),
    }
}

proptest! {
    #![proptest_config(guard::config(384, "tests/proptest-regressions/fuzz-dockerfile.txt"))]

    /// image-check on any Dockerfile: no panic, findings inside the file, and every
    /// instruction starts on a line of the file.
    #[test]
    fn image_check_reads_any_dockerfile(
        text in input(&DOCKERFILES),
        platform in prop::sample::select(&PLATFORMS[..]),
    ) {
        let checked = guard::run("image-check", move || image_check_case(&text, platform));
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }

    /// `image-check --dpkg` on any capture: no panic, findings inside the file (a
    /// package missing from the capture is reported at line 1).
    #[test]
    fn image_check_reads_any_dpkg_capture(text in input(&CAPTURES)) {
        let checked = guard::run("image_check::dpkg_capture", move || {
            let name: Arc<str> = Arc::from("dpkg.txt");
            let mut findings = Findings::default();
            image_check::dpkg_capture(&name, &text, &mut findings);
            Layout::new("dpkg.txt", &text, Lines::Lf).all_inside(&findings)
                .map_err(|e| format!("{e}\n--- input:\n{text:?}"))
        });
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }

    /// Any pin file: errors point inside it; accepted pins never break the
    /// Dockerfile they are written into.
    #[test]
    fn pins_are_located_or_safe(
        text in input(&PINS),
        family in prop::sample::select(&FAMILIES[..]),
        set in prop::sample::select(&SETS[..]),
    ) {
        let checked = guard::run("Pins::parse", move || {
            match Pins::parse(&"pins".into(), &text, family) {
                Ok(pins) => full_dockerfile_is_clean("ubuntu:22.04", family, set, pins),
                Err(errors) => {
                    let layout = Layout::new("pins", &text, Lines::Lf);
                    errors.iter().try_for_each(|e| match &e.location {
                        Some(at) if &*at.file == "pins" => layout.inside(at),
                        _ => Err(format!("{} is not placed in the pin file", e.message)),
                    })
                }
            }
            .map_err(|e| format!("{e}\n--- input:\n{text:?}"))
        });
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }

    /// Any base image name: the checks never panic, and a name they accept writes a
    /// FROM line and nothing else.
    #[test]
    fn accepted_base_images_are_one_token(
        base in prop_oneof![
            arbitrary(),
            "[a-z0-9./:@_-]{0,40}",
            "(nvcr.io/nvidia/|docker.io/)?[a-z]{1,12}(:[a-z0-9.-]{0,12})?(@sha256:[0-9a-f]{0,8})?"
        ],
        asked in prop::option::of(prop::sample::select(&FAMILIES[..])),
    ) {
        let checked = guard::run("base_image", move || base_image_case(&base, asked));
        prop_assert!(checked.is_ok(), "{}", checked.unwrap_err());
    }

    /// User Dockerfile templates: rendering any text ends, with the same output or
    /// error each time, never with a panic or a hang.
    #[test]
    fn templates_render_or_fail(
        text in input(&TEMPLATES),
        family in prop::sample::select(&FAMILIES[..]),
    ) {
        let (first, second) = guard::run("render_template", move || {
            let install = Install { family, set: PackageSet::Seed, pins: Pins::default() };
            let render = || {
                install
                    .render_template(Some("ubuntu:22.04"), "fuzz.j2", &text)
                    .map_err(|e| e.to_string())
            };
            (render(), render())
        });
        prop_assert_eq!(first, second);
    }
}
