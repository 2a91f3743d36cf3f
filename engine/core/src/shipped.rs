//! The shipped bundle, embedded at build time from the repository's top-level folders.

use crate::bundle::BundleSource;

include!(concat!(env!("OUT_DIR"), "/shipped.rs"));

/// How the shipped bundle's files are named in diagnostics.
pub const LABEL: &str = "<shipped>";

/// The shipped bundle as a source, to load first.
pub fn source() -> BundleSource {
    BundleSource::from_files(LABEL, FILES.iter().map(|(p, t)| (*p, *t)))
}
