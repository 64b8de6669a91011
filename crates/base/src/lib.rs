//! rdmagen's base layer: what every other layer reports in and reads with. The
//! diagnostics vocabulary (one finding type, the rule catalogue, the user's policy),
//! the error that stops a command, release numbers, the one way a file is read, and
//! located YAML. It depends on no other layer (ARCHITECTURE.md).

#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod diagnostics;
pub mod error;
pub mod files;
pub mod fingerprint;
pub mod version;
pub mod yaml;
