//! `image-check`: what an existing Dockerfile (and a captured `dpkg -l`) says about an
//! image's fitness for RDMA training. An image needs the verbs user space NCCL loads
//! (rdmagen's `runtime` set); seed 000 warns that images migrated from other platforms
//! may carry preset variables that break training.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::diagnostics::source::Location;
use crate::diagnostics::{Findings, Rule};
use crate::dockerfile::{heredoc, instructions};
use crate::model::pool::Fabric;
use crate::nccl::{self, EnvFacts};
use crate::packages::base_image;
use crate::packages::dpkg;
use crate::packages::{Family, PackageSet, packages};
use crate::platform::Profile;

/// Check one Dockerfile's text; false when it holds no instruction at all (an empty
/// file, only comments): nothing was checked, and nothing is reported.
pub fn dockerfile(
    name: &Arc<str>,
    text: &str,
    profile: &'static Profile,
    findings: &mut Findings,
) -> bool {
    let at = |line: usize| Location {
        file: name.clone(),
        line,
        column: 1,
    };
    let steps = instructions(text);
    if steps.is_empty() {
        return false;
    }
    let mut family = None;
    let mut installed: Vec<String> = Vec::new();
    let mut first_from = None;
    let mut runtime_base = false;
    for (line, word, rest) in &steps {
        match word.as_str() {
            "FROM" => {
                let image = rest
                    .split_whitespace()
                    .find(|w| !w.starts_with("--"))
                    .unwrap_or_default();
                family = family.or_else(|| base_image::family_of(image));
                first_from.get_or_insert(*line);
                // The last stage is the image that runs.
                runtime_base = base_image::has_rdma_runtime(image);
            }
            "ENV" => {
                for (var, value) in env_pairs(rest) {
                    if var.starts_with("NCCL_") {
                        env_finding(&var, &value, profile, at(*line), findings);
                    }
                }
            }
            "RUN" => {
                let (found, used) = install_words(&run_script(rest));
                installed.extend(found);
                family = family.or(used);
            }
            _ => {}
        }
    }
    let family = family.unwrap_or(Family::Apt);
    let missing: Vec<&str> = packages(family, required_set(profile))
        .iter()
        .copied()
        .filter(|p| !(runtime_base && packages(family, PackageSet::Runtime).contains(p)))
        .filter(|p| !installed.iter().any(|w| is_package(w, p, family)))
        .collect();
    let runtime = packages(family, PackageSet::Runtime);
    let (needed, tools): (Vec<&str>, Vec<&str>) = missing.iter().partition(|p| runtime.contains(p));
    let mut parts = Vec::new();
    if !needed.is_empty() {
        parts.push(format!(
            "{} ({} names), which NCCL needs to use RDMA; unless the base image has them, NCCL finds no verbs device and falls back to sockets",
            needed.join(", "),
            family.name()
        ));
    }
    if !tools.is_empty() {
        parts.push(required_tools(&tools, profile));
    }
    if !parts.is_empty() {
        findings.at(
            Rule::ImageMissingPackages,
            format!(
                "no install line in this Dockerfile installs {}",
                parts.join("; nor ")
            ),
            at(first_from.unwrap_or(1)),
        );
    }
    true
}

/// The packages a Dockerfile must install for `profile`: one list, the one `--dpkg`
/// holds a capture to as well on that platform.
///
/// On AIStudio, seed 000's eight: "若使用自定义镜像并启用 RDMA（如 InfiniBand 或 RoCE
/// 网络），请确保镜像包含以下依赖" (a custom image with RDMA must contain these), the
/// list of its `dpkg -l` check, infiniband-diags and perftest among them. Elsewhere what
/// NCCL needs at run time (verbs, the device providers and their libraries): the two
/// tools check the fabric by hand, and training runs just as well without them. Every
/// set `rdmagen dockerfile` writes contains the runtime set; `--set seed` the eight.
pub fn required_set(profile: &'static Profile) -> PackageSet {
    if std::ptr::eq(
        profile,
        crate::platform::profile(crate::platform::Platform::Aistudio),
    ) {
        PackageSet::Seed
    } else {
        PackageSet::Runtime
    }
}

/// What `tools` (missing packages outside the runtime set) are to `profile`: one
/// phrase, so that image-check and the Dockerfile writers say the same.
fn required_tools(tools: &[&str], profile: &'static Profile) -> String {
    format!(
        "{}, which {} requires in a custom image with RDMA (seed 000's list of eight, the one its `dpkg -l` check names): tools for checking the fabric by hand",
        tools.join(", "),
        profile.title
    )
}

/// RDG081's message when a package set rdmagen is asked to write lacks packages
/// `profile` requires ([`required_set`]): only the runtime set on AIStudio. The
/// Dockerfile writers (`rdmagen dockerfile`, a job's `imageBuild`) report it, so
/// nothing rdmagen writes without a warning fails its own image-check.
pub fn set_lacks(profile: &'static Profile, family: Family, set: PackageSet) -> Option<String> {
    let have = packages(family, set);
    let lacking: Vec<&str> = packages(family, required_set(profile))
        .iter()
        .copied()
        .filter(|p| !have.contains(p))
        .collect();
    (!lacking.is_empty()).then(|| {
        format!(
            "the {} set does not install {}; the seed or diagnostics set does",
            set.name(),
            required_tools(&lacking, profile)
        )
    })
}

fn env_finding(
    var: &str,
    value: &str,
    profile: &'static Profile,
    at: Location,
    findings: &mut Findings,
) {
    let preset = [Fabric::Roce, Fabric::Ib]
        .iter()
        .any(|f| profile.presets(*f, true, var));
    // A pod's env overrides the image's ENV, so what rdmagen writes always wins. The
    // image's value stands where the pod leaves the variable unset, and rdmagen does
    // that on purpose: for platform presets, gidIndex: auto, NCCL's own defaults.
    let why = if preset {
        format!(
            "rdmagen leaves {var} to the {} platform, so wherever the platform does not set it the image's value stands",
            profile.title
        )
    } else {
        format!(
            "env in the pod overrides it, but where the pod leaves {var} unset (rdmagen does on purpose, e.g. for a platform preset, `gidIndex: auto` or an NCCL default) the image's value stands"
        )
    };
    findings.at(
        Rule::ImageNcclEnv,
        format!("the image bakes in {var}={value}; {why}"),
        at.clone(),
    );
    let facts = EnvFacts {
        profile: Some(profile),
        ..EnvFacts::default()
    };
    for mut finding in nccl::check(var, value, &facts) {
        if finding.rule != Rule::DebugOnlyVariable {
            finding.location = Some(at.clone());
            findings.add(finding);
        }
    }
}

/// `KEY=VALUE KEY2="a b"` or the legacy `KEY VALUE` form.
fn env_pairs(rest: &str) -> Vec<(String, String)> {
    let words = shell_words(rest);
    match words.first() {
        Some(first) if !first.contains('=') => {
            vec![(first.clone(), words[1..].join(" "))]
        }
        _ => words
            .iter()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    }
}

/// Split on whitespace, honouring double and single quotes (no escapes beyond `\"`).
fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut chars = text.chars().peekable();
    let mut in_word = false;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some('"'), '\\') if chars.peek() == Some(&'"') => {
                current.push('"');
                chars.next();
            }
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            (None, c) => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}

/// What a RUN executes as one shell command line: its command, then the body of each
/// here-document that is a script ([`heredoc::is_script`]; `RUN cat <<EOF > file`
/// writes its body, it does not run it), a body's lines joined as the shell joins
/// them: `\` continues a line, a line break ends a command.
fn run_script(rest: &str) -> String {
    let run = heredoc::split(rest);
    let mut script = run.command.to_owned();
    for (marker, body) in &run.bodies {
        if !heredoc::is_script(run.command, marker) {
            continue;
        }
        for line in body.lines() {
            match line.trim_end().strip_suffix('\\') {
                Some(head) => {
                    script.push(' ');
                    script.push_str(head);
                }
                None => {
                    script.push(' ');
                    script.push_str(line);
                    script.push_str(" ;");
                }
            }
        }
    }
    script
}

/// Package words of `apt-get install`, `apt install`, `dnf install`, `yum install`,
/// `microdnf install` commands in a RUN line, and the family they imply.
fn install_words(run: &str) -> (Vec<String>, Option<Family>) {
    let words = shell_words(run);
    let mut found = Vec::new();
    let mut family = None;
    let mut i = 0;
    while i < words.len() {
        let tool = words[i].rsplit('/').next().unwrap_or_default();
        let this = match tool {
            "apt-get" | "apt" => Some(Family::Apt),
            "dnf" | "yum" | "microdnf" => Some(Family::Dnf),
            _ => None,
        };
        if let Some(f) = this
            && let Some(offset) = words[i + 1..].iter().position(|w| w == "install")
        {
            family = family.or(Some(f));
            let mut j = i + 1 + offset + 1;
            while j < words.len() && !matches!(words[j].as_str(), "&&" | "||" | ";" | "|") {
                let w = words[j].trim_end_matches(';');
                if !w.starts_with('-') && !w.is_empty() && w != "\\" {
                    found.push(w.to_owned());
                }
                if words[j].ends_with(';') {
                    break;
                }
                j += 1;
            }
            i = j;
        }
        i += 1;
    }
    (found, family)
}

/// Whether an install word names `package` (apt `name=version`, dnf `name-version`).
fn is_package(word: &str, package: &str, family: Family) -> bool {
    let name = match family {
        Family::Apt => word.split('=').next().unwrap_or_default(),
        Family::Dnf => word,
    };
    name == package
        || (family == Family::Dnf
            && name
                .strip_prefix(package)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_digit())))
}

/// Check a captured `dpkg -l` against the seed's packages: each must be `ii`. A
/// package the capture lacks is reported at its first line.
pub fn dpkg_capture(name: &Arc<str>, text: &str, findings: &mut Findings) {
    let at = |line: usize| Location {
        file: name.clone(),
        line,
        column: 1,
    };
    let mut status = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let row = dpkg::row(line).or_else(|| dpkg::not_found(line).map(|p| (dpkg::NOT_FOUND, p)));
        if let Some((state, package)) = row {
            status.insert(package.to_owned(), (state.to_owned(), at(i + 1)));
        }
    }
    dpkg::check_installed(&status, Some(&at(1)), findings);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_forms() {
        assert_eq!(
            env_pairs("A=1 B=\"x y\""),
            [("A".into(), "1".into()), ("B".into(), "x y".into())]
        );
        assert_eq!(
            env_pairs("NCCL_DEBUG INFO"),
            [("NCCL_DEBUG".into(), "INFO".into())]
        );
    }

    #[test]
    fn a_heredoc_script_installs_what_it_names() {
        let rest = "<<EOF\nset -e\napt-get update\napt-get install -y --no-install-recommends \\\n    libibverbs1 \\\n    rdma-core\nrm -rf /var/lib/apt/lists/*\nEOF";
        let (words, family) = install_words(&run_script(rest));
        assert_eq!(words, ["libibverbs1", "rdma-core"]);
        assert_eq!(family, Some(Family::Apt));
        let data = "cat <<EOF > /notes\napt-get install -y rdma-core\nEOF";
        assert_eq!(install_words(&run_script(data)).0, Vec::<String>::new());
    }

    #[test]
    fn install_lines() {
        let (words, family) = install_words(
            "apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libibverbs1=44.0-2 perftest && rm -rf /x",
        );
        assert_eq!(words, ["libibverbs1=44.0-2", "perftest"]);
        assert_eq!(family, Some(Family::Apt));
        let (words, family) =
            install_words("dnf install -y rdma-core libibverbs-54.0 && dnf clean all");
        assert_eq!(words, ["rdma-core", "libibverbs-54.0"]);
        assert_eq!(family, Some(Family::Dnf));
        assert!(is_package("libibverbs-54.0", "libibverbs", Family::Dnf));
        assert!(!is_package("libibverbs-utils", "libibverbs", Family::Dnf));
        assert!(is_package("libibverbs1=44.0-2", "libibverbs1", Family::Apt));
    }
}
