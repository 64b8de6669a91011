//! `rdmagen dockerfile` and `rdmagen image-check`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{ArgGroup, Args};

use super::Streams;
use super::input_args::StdinArgs;
use super::output_args::OutputArgs;
use super::present;
use crate::diagnostics::Suppressions;
use crate::diagnostics::source::{Location, Sources};
use crate::diagnostics::{Findings, Rule};
use crate::dockerfile::{self, Install, image_check};
use crate::error::Error;
use crate::model::load::display_name;
use crate::model::pool::Platform;
use crate::packages::{Family, PackageSet, Pins, base_image};
use crate::platform::profile;

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("target").required(true).multiple(true).args(["base", "family"])))]
pub struct DockerfileArgs {
    /// Base image: decides the package family, and is the FROM line with --full.
    #[arg(long, value_name = "IMAGE")]
    pub base: Option<String>,
    /// Package family, when the base image does not tell it (or to override it).
    #[arg(long, value_enum)]
    pub family: Option<Family>,
    /// Which packages: the seed's eight, the NCCL runtime minimum, or runtime plus diagnostics.
    #[arg(long, value_enum, default_value_t = PackageSet::Seed)]
    pub set: PackageSet,
    /// Pin versions from a file of `name=version` lines.
    #[arg(long, value_name = "FILE")]
    pub pin: Option<PathBuf>,
    /// Render your own Dockerfile template; `{{ rdma_install() }}` expands to the snippet.
    #[arg(long, value_name = "FILE", conflicts_with = "full")]
    pub template: Option<PathBuf>,
    /// Print a complete Dockerfile (FROM the base image, then the snippet).
    #[arg(long, requires = "base")]
    pub full: bool,
    /// The platform the image runs on: AIStudio requires seed 000's eight packages in a
    /// custom image, which the runtime set lacks (warning RDG081, as image-check says).
    #[arg(long, value_enum, default_value_t = Platform::Generic)]
    pub platform: Platform,
    #[command(flatten)]
    pub print: OutputArgs,
    #[command(flatten)]
    pub rules: super::rule_args::RuleArgs,
}

pub fn run(args: &DockerfileArgs, s: &super::Settings, io: &mut Streams<'_>) -> Result<(), Error> {
    if let Some(base) = &args.base {
        base_image::check_reference(base).map_err(|e| Error::Usage(format!("--base: {e}")))?;
        if args.full || args.template.is_some() {
            base_image::check_tagged(base).map_err(|e| Error::Usage(format!("--base: {e}")))?;
        }
    }
    let family = dockerfile::family_for(args.base.as_deref(), args.family).map_err(Error::Usage)?;
    let mut findings = Findings::default();
    let mut sources = Sources::default();
    let pins = match &args.pin {
        None => Pins::default(),
        Some(path) => {
            let text = crate::files::read_regular_text(path).map_err(|e| Error::io(path, e))?;
            let name = display_name(path);
            sources.add(name.clone(), Arc::from(text.as_str()));
            Pins::parse(&name, &text, family).unwrap_or_else(|errors| {
                errors.into_iter().for_each(|e| findings.add(e));
                Pins::default()
            })
        }
    };
    if let Some(message) = image_check::set_lacks(profile(args.platform), family, args.set) {
        findings.push(Rule::ImageMissingPackages, message, None);
    }
    let install = Install {
        family,
        set: args.set,
        pins,
    };
    // Pin files and templates are not Dockerfiles: levels apply, comments do not.
    let policy = s.rendering_policy()?;
    policy.apply(&mut findings, 0, &[]);
    let text = if findings.errors() == 0 {
        produce(args, &install, &mut findings, &mut sources)?
    } else {
        None
    };
    policy.apply(&mut findings, 0, &[]);
    present::findings_beside(io, &findings, &sources, &s.print)?;
    super::exit::verdict(&findings, &s.print, "; nothing was printed", false)?;
    if let Some(text) = text {
        write!(io.out, "{text}").map_err(super::stdout)?;
    }
    Ok(())
}

/// The Dockerfile text, or None when a user template failed (findings say why).
fn produce(
    args: &DockerfileArgs,
    install: &Install,
    findings: &mut Findings,
    sources: &mut Sources,
) -> Result<Option<String>, Error> {
    // Findings from before (a writer's warning) do not withhold the text; the
    // template's own do.
    let before = findings.len();
    let Some(path) = &args.template else {
        return Ok(Some(match &args.base {
            Some(base) if args.full => install.full(
                base,
                &format!("# {base} with the RDMA user space, written by rdmagen.\n"),
            ),
            _ => install.snippet(),
        }));
    };
    let source = crate::files::read_regular_text(path).map_err(|e| Error::io(path, e))?;
    let name = display_name(path);
    sources.add(name.clone(), Arc::from(source.as_str()));
    let at = |line: usize| Location {
        file: name.clone(),
        line: line.max(1),
        column: 1,
    };
    match install.render_template(args.base.as_deref(), &name, &source) {
        Ok(text) => {
            for (line, word) in dockerfile::unknown_instructions(&text) {
                findings.at(
                    Rule::DockerfileShape,
                    format!(
                        "rendered line {line} starts with `{word}`, not a Dockerfile instruction"
                    ),
                    at(1),
                );
            }
            Ok((findings.len() == before).then_some(text))
        }
        Err(e) => {
            findings.at(
                Rule::TemplateError,
                e.to_string(),
                at(e.line().unwrap_or(1)),
            );
            Ok(None)
        }
    }
}

#[derive(Debug, Args)]
pub struct ImageCheckArgs {
    /// Dockerfiles to check; `-` is standard input.
    #[arg(required = true, value_name = "DOCKERFILE")]
    pub dockerfiles: Vec<PathBuf>,
    /// A captured `dpkg -l` from the image; every seed package must be `ii`.
    #[arg(long, value_name = "FILE")]
    pub dpkg: Option<PathBuf>,
    /// The platform the image runs on; decides which NCCL variables it presets.
    #[arg(long, value_enum, default_value_t = Platform::Generic)]
    pub platform: Platform,
    #[command(flatten)]
    pub stdin: StdinArgs,
    /// Succeed (exit 0, with the format's empty output) when no file given holds a
    /// Dockerfile instruction, instead of failing with exit 2.
    #[arg(long, help_heading = "Input")]
    pub allow_empty: bool,
    #[command(flatten)]
    pub print: OutputArgs,
    #[command(flatten)]
    pub rules: super::rule_args::RuleArgs,
}

pub fn image_check(
    args: &ImageCheckArgs,
    s: &super::Settings,
    io: &mut Streams<'_>,
) -> Result<(), Error> {
    let mut findings = Findings::default();
    let mut sources = Sources::default();
    let profile = profile(args.platform);
    let mut suppressions = Suppressions::default();
    args.stdin
        .apply(args.dockerfiles.iter().chain(&args.dpkg))?;
    let read = |path: &PathBuf| {
        let name = display_name(path);
        crate::files::read_input_text(path)
            .map(|text| (name.clone(), text))
            .map_err(|e| Error::io(Path::new(&*name), e))
    };
    let mut checked = 0;
    for path in &args.dockerfiles {
        let (name, text) = read(path)?;
        sources.add(name.clone(), Arc::from(text.as_str()));
        suppressions.dockerfile_comments(&name, &text);
        if image_check::dockerfile(&name, &text, profile, &mut findings) {
            checked += 1;
        }
    }
    if checked == 0 && !args.allow_empty {
        let named: Vec<String> = args
            .dockerfiles
            .iter()
            .map(|p| display_name(p).to_string())
            .collect();
        return Err(Error::Usage(format!(
            "nothing to check: no Dockerfile instruction in {} (--allow-empty accepts that)",
            named.join(", ")
        )));
    }
    if let Some(path) = &args.dpkg {
        let (name, text) = read(path)?;
        sources.add(name.clone(), Arc::from(text.as_str()));
        image_check::dpkg_capture(&name, &text, &mut findings);
    }
    let policy = s.reporting_policy();
    policy.apply(&mut findings, 0, &[&suppressions]);
    policy.finish(&mut findings, &suppressions);
    findings.sort();
    let what = format!("{checked} Dockerfile(s) checked");
    present::findings_as_product(io, &findings, &sources, &s.print, &what)
}
