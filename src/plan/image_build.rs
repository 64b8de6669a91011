//! The job's optional Dockerfile: which base image, package family and set.

use crate::diagnostics::Rule;
use crate::dockerfile::{self, Install, image_check};
use crate::packages::{Pins, base_image};
use crate::plan::ctx::Ctx;
use crate::yaml::tree::Seg;

/// What DIR/<job>/Dockerfile holds.
#[derive(Debug, Clone)]
pub struct ImageBuildPlan {
    pub base: String,
    pub install: Install,
}

impl ImageBuildPlan {
    pub fn dockerfile(&self, job: &str) -> String {
        let header = format!(
            "# Image for job {job}: {} with the RDMA user space, written by rdmagen.\n",
            self.base
        );
        self.install.full(&self.base, &header)
    }
}

pub fn decide(ctx: &mut Ctx<'_>) -> Option<ImageBuildPlan> {
    let build = ctx.job.value.spec.image_build.clone()?;
    let at = [Seg::Key("spec"), Seg::Key("imageBuild"), Seg::Key("base")];
    if let Err(e) = base_image::check_reference(&build.base)
        .and_then(|()| base_image::check_tagged(&build.base))
    {
        ctx.report(Rule::BaseImageInvalid, e, &at);
        return None;
    }
    let family = match dockerfile::family_for(Some(&build.base), build.family) {
        Ok(f) => f,
        Err(e) => {
            let e = e.replace("pass --family apt|dnf", "set imageBuild.family: apt or dnf");
            ctx.report(Rule::BaseImageInvalid, e, &at);
            return None;
        }
    };
    let how = if build.family.is_some() {
        "as the job says"
    } else {
        "from the base image's name"
    };
    ctx.decisions.record(
        "Dockerfile",
        format!(
            "FROM {} + {} set ({})",
            build.base,
            build.set.name(),
            family.name()
        ),
        format!(
            "imageBuild asks for it; package family {} {how}",
            family.name()
        ),
    );
    if let Some(message) = image_check::set_lacks(ctx.profile, family, build.set) {
        let at = [Seg::Key("spec"), Seg::Key("imageBuild"), Seg::Key("set")];
        ctx.report(Rule::ImageMissingPackages, message, &at);
    }
    Some(ImageBuildPlan {
        base: build.base,
        install: Install {
            family,
            set: build.set,
            pins: Pins::default(),
        },
    })
}
