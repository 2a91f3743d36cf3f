//! The shipped bundle, embedded at build time from the repository's top-level folders.

use crate::bundle::{BundleSource, Facts, Origin, Tree};

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

/// The index in [`FILES`] of the shipped file at `relative` when `text` is still its embedded
/// text: what the build read of it stands for it only then.
fn embedded(relative: &str, text: &str) -> Option<usize> {
    let at = FILES.iter().position(|(path, _)| *path == relative)?;
    FILES
        .get(at)
        .is_some_and(|(_, embedded)| *embedded == text)
        .then_some(at)
}

/// What a selection reads of a shipped file, as the build read it; `None` when `text` is not the
/// embedded one (it is then read as any file is).
pub(crate) fn facts(relative: &str, text: &str) -> Option<Facts> {
    FACTS.get(embedded(relative, text)?).copied()
}

/// A shipped document as the build parsed it, when `text` (the whole file, a mode's front
/// matter, the text before the command rules) is the one it parsed; `None` otherwise, and the
/// text is then parsed.
pub(crate) fn document<T: serde::de::DeserializeOwned>(relative: &str, text: &str) -> Option<T> {
    let at = FILES.iter().position(|(path, _)| *path == relative)?;
    let (_, whole) = FILES.get(at)?;
    let (_, start, end, root) = DOCUMENTS.iter().find(|(file, ..)| *file == at)?;
    (whole.get(*start..*end)? == text).then_some(())?;
    Tree {
        nodes: NODES,
        strings: STRINGS,
    }
    .document(*root)
}
