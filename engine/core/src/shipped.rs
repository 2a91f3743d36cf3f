//! The shipped bundle, embedded at build time from the repository's top-level folders.

use crate::bundle::{BundleSource, Origin};

include!(concat!(env!("OUT_DIR"), "/shipped.rs"));

/// The shipped bundle as a source, to load first.
pub fn source() -> BundleSource {
    let mut source = BundleSource::new(Origin::Shipped, FILES.iter().map(|(p, t)| (*p, *t)));
    source.embedded_hash = Some(HASH);
    source
}

/// The shipped bundle's content hash (`sha256:…`), made when it was embedded.
pub fn content_hash() -> &'static str {
    HASH
}
