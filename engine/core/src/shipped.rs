//! The shipped bundle, embedded at build time from the repository's top-level folders.

use crate::bundle::{BundleSource, Facts, Origin, Tree};
use std::borrow::Cow;

include!(concat!(env!("OUT_DIR"), "/shipped.rs"));

/// The shipped bundle as a source, to load first.
pub fn source() -> BundleSource {
    BundleSource {
        origin: Origin::Shipped,
        // Borrowed: a call copies none of it.
        files: FILES.iter().map(|(p, t)| (p.to_string(), Cow::Borrowed(*t))).collect(),
        embedded_hash: Some(HASH),
    }
}

/// The shipped bundle's content hash (`sha256:…`), made when it was embedded.
pub fn content_hash() -> &'static str {
    HASH
}

/// What a selection reads of a shipped file, as the build read it, when `text` (borrowed from the
/// binary: a copy or a change is read as any file is) is the embedded text itself. Telling is a
/// comparison of two addresses: the text is not read.
pub(crate) fn facts(relative: &str, text: &'static str) -> Option<Facts> {
    let at = FILES.iter().position(|(path, _)| *path == relative)?;
    let (_, embedded) = FILES.get(at)?;
    std::ptr::eq(*embedded, text).then_some(())?;
    FACTS.get(at).copied()
}

/// A shipped document as the build parsed it, when `text` (the whole file, a mode's front
/// matter, the text before the command rules, one command rule) is one it parsed; `None` otherwise, and the
/// text is then parsed.
pub(crate) fn document<T: serde::de::DeserializeOwned>(relative: &str, text: &str) -> Option<T> {
    let at = FILES.iter().position(|(path, _)| *path == relative)?;
    let (_, whole) = FILES.get(at)?;
    let (_, _, _, root) = DOCUMENTS.iter().find(|(file, start, end, _)| {
        *file == at && end - start == text.len() && whole.get(*start..*end) == Some(text)
    })?;
    Tree {
        nodes: NODES,
        strings: STRINGS,
    }
    .document(*root)
}
