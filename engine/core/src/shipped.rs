//! The shipped bundle, embedded at build time from the repository's top-level folders.

use crate::built::{FILES, HASH};
use crate::bundle::{BundleSource, Origin, Text};

/// The shipped bundle as a source, to load first.
pub fn source() -> BundleSource {
    BundleSource {
        origin: Origin::Shipped,
        // Borrowed: a call copies none of it.
        files: FILES.iter().map(|(p, t)| (p.to_string(), Text::Embedded(t))).collect(),
        known_hash: Some(Text::Embedded(HASH)),
    }
}

/// The shipped bundle's content hash (`sha256:…`), made when it was embedded.
pub fn content_hash() -> &'static str {
    HASH
}
