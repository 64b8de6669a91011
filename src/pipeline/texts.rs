//! What a run keeps of each input's text between its passes: for a file, only the
//! fingerprint of what the first pass read, since holding every file's text was
//! 34 MB of the heap at 50 000 jobs (bench/RESULTS.md). The second pass reads each
//! job's document again from its bytes, and the end of the run the files that
//! findings quote; each read is refused unless it is what the first pass read, so a
//! file edited during a run fails it rather than mix its old and new text.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use crate::diagnostics::Findings;
use crate::diagnostics::source::Sources;
use crate::error::Error;
use crate::files::InputFile;
use crate::fingerprint::Fingerprint;
use crate::yaml::tree::DocumentSpan;

/// One input, as the run knows it after the first pass.
pub(super) struct InputText<'a> {
    /// The name findings give it.
    pub(super) name: Arc<str>,
    held: Held<'a>,
}

enum Held<'a> {
    /// A document handed over in memory: there is no file to read again.
    Text(Arc<str>),
    /// A file, with the fingerprint of its whole text as the first pass read it.
    File {
        input: &'a InputFile,
        whole: Fingerprint,
    },
}

impl<'a> InputText<'a> {
    pub(super) fn in_memory(name: Arc<str>, text: Arc<str>) -> Self {
        InputText {
            name,
            held: Held::Text(text),
        }
    }

    pub(super) fn file(name: Arc<str>, input: &'a InputFile, whole: Fingerprint) -> Self {
        InputText {
            name,
            held: Held::File { input, whole },
        }
    }

    /// The text of `span`, whose bytes had the fingerprint `read`, or the whole text
    /// for `None`.
    pub(super) fn read(
        &self,
        span: Option<(&DocumentSpan, Fingerprint)>,
    ) -> Result<Cow<'_, str>, Error> {
        match &self.held {
            Held::Text(text) => Ok(Cow::Borrowed(match span {
                Some((span, _)) => text.get(span.bytes.clone()).unwrap_or_default(),
                None => text,
            })),
            Held::File { input, whole } => {
                let (range, expected) = match span {
                    Some((span, read)) => (Some(span.bytes.clone()), read),
                    None => (None, *whole),
                };
                input
                    .reread_text(range, expected)
                    .map(Cow::Owned)
                    .map_err(|e| Error::io(Path::new(&*self.name), e))
            }
        }
    }
}

/// Every input's name, and the text of those that `findings` quote (read again, and
/// checked): a report of the files checked (JUnit) names each, clean ones too.
pub(super) fn sources(texts: Vec<InputText<'_>>, findings: &Findings) -> Result<Sources, Error> {
    let quoted: BTreeSet<&str> = findings
        .iter()
        .filter_map(|f| f.location.as_ref())
        .map(|at| &*at.file)
        .collect();
    let mut sources = Sources::default();
    for input in texts {
        let text = match &input.held {
            Held::Text(text) => Some(text.clone()),
            Held::File { .. } if quoted.contains(&*input.name) => {
                Some(Arc::from(input.read(None)?.into_owned()))
            }
            Held::File { .. } => None,
        };
        match text {
            Some(text) => sources.add(input.name, text),
            None => sources.add_unread(input.name),
        }
    }
    Ok(sources)
}
