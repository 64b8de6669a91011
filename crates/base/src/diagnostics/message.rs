//! How findings about rendered or linted documents quote them: paths, JSON Pointer
//! segments and values, short and safe to print (shared by the schema checks and the
//! Trainer CRD checks, the manifest rules and `render`'s verification).

use serde_json::Value;

use crate::diagnostics::Finding;

pub use crate::diagnostics::pointer::segment as pointer_segment;

/// The longest value a finding quotes from rendered output, in bytes of JSON.
pub const MAX_QUOTED: usize = 160;

/// A schema error as a message, quoting the offending value only when it is short.
/// A user template can render any text, a whole file even, where an object belongs;
/// a finding then names the problem and the value's size, and never replays the file
/// into a CI log.
pub fn schema_message(e: &jsonschema::ValidationError<'_>) -> String {
    let size = e.instance().to_string().len();
    if size <= MAX_QUOTED {
        e.to_string()
    } else {
        e.masked_with(format!("a value of {size} bytes"))
            .to_string()
    }
}

/// `value` as JSON when short, else its size (see [`schema_message`]).
pub fn quoted(value: &Value) -> String {
    let json = value.to_string();
    if json.len() <= MAX_QUOTED {
        json
    } else {
        format!("a value of {} bytes", json.len())
    }
}

pub fn path_or_root(path: &str) -> &str {
    if path.is_empty() { "/" } else { path }
}

/// `'FIELD' was unexpected at PATH`, the start of a strict CRD check's message (the
/// words jsonschema uses), with a field name too long to quote given by its length.
pub fn unexpected_field(field: &str, path: &str) -> String {
    let at = path_or_root(path);
    if field.len() <= MAX_QUOTED {
        format!("'{field}' was unexpected at {at}")
    } else {
        format!(
            "a field name of {} bytes was unexpected at {at}",
            field.len()
        )
    }
}

/// The first `max` of `found`, the last saying how many more there were `about` (a
/// subject: "this container's resources"). A manifest may hold tens of thousands of
/// keys, and each finding is located in the file and printed.
pub fn capped(mut found: Vec<Finding>, max: usize, about: &str) -> Vec<Finding> {
    let more = found.len().saturating_sub(max);
    found.truncate(max);
    say_more(&mut found, more, about);
    found
}

fn say_more(found: &mut [Finding], more: usize, about: &str) {
    if let Some(last) = found.last_mut().filter(|_| more > 0) {
        last.message
            .push_str(&format!(" ({more} more findings about {about} not shown)"));
    }
}

/// Findings kept as [`capped`] keeps them, for a check that may find very many: one
/// past the cap is counted, never made (100 000 bad labels made 200 000 messages only
/// to drop them).
pub struct Bounded {
    found: Vec<Finding>,
    more: usize,
    max: usize,
}

impl Bounded {
    pub fn new(max: usize) -> Self {
        Bounded {
            found: Vec::new(),
            more: 0,
            max,
        }
    }

    pub fn push(&mut self, make: impl FnOnce() -> Finding) {
        if self.found.len() < self.max {
            self.found.push(make());
        } else {
            self.more += 1;
        }
    }

    /// The findings, the last saying how many more there were `about`.
    pub fn finish(mut self, about: &str) -> Vec<Finding> {
        say_more(&mut self.found, self.more, about);
        self.found
    }
}
