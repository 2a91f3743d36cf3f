//! A bundle's content hash: what the event log stamps on every line, so an auditor can tell
//! which policy decided. The build script includes this file too, to hash the shipped bundle
//! once when it is embedded: both sides hash alike because they share this code.
//!
//! A layer's hash covers its files (path and text, in path order); a bundle's covers its layers'
//! hashes in load order. Lengths go in before bytes, so no two different sets of files hash alike.

use crate::sha256::Sha256;

/// `sha256:` and the digest in lowercase hex.
fn hex(digest: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(7 + digest.len() * 2);
    out.push_str("sha256:");
    for b in digest {
        let _ = write!(out, "{b:02x}");
    }
    out
}

fn add(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

/// How many bytes [`add`] hashes for `bytes`.
fn framed(bytes: &[u8]) -> usize {
    8 + bytes.len()
}

/// One layer's hash: its files, `(path relative to the bundle root, text)`, given in path order.
pub(crate) fn layer<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    layer_then(files, None).0
}

/// One layer's hash, and the hash of the same files followed by one more `(name, text)` (the
/// same as the first without it), made in one pass over the files: a project's trust covers its
/// layer and its state, and the hook needs both hashes on every call.
pub(crate) fn layer_then<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
    then: Option<(&str, &str)>,
) -> (String, String) {
    let files: Vec<(&str, &str)> = files.into_iter().collect();
    let len = files
        .iter()
        .chain(then.as_ref())
        .map(|(name, text)| framed(name.as_bytes()) + framed(text.as_bytes()))
        .sum();
    let mut hasher = Sha256::sized(len);
    for (name, text) in files {
        add(&mut hasher, name.as_bytes());
        add(&mut hasher, text.as_bytes());
    }
    let Some((name, text)) = then else {
        let hash = hex(&hasher.finalize());
        return (hash.clone(), hash);
    };
    let layer = hex(&hasher.clone().finalize());
    add(&mut hasher, name.as_bytes());
    add(&mut hasher, text.as_bytes());
    (layer, hex(&hasher.finalize()))
}

/// A bundle's hash: its layers' hashes in load order.
pub(crate) fn layers<'a>(hashes: impl IntoIterator<Item = &'a str>) -> String {
    let hashes: Vec<&str> = hashes.into_iter().collect();
    let mut hasher = Sha256::sized(hashes.iter().map(|h| framed(h.as_bytes())).sum());
    for hash in hashes {
        add(&mut hasher, hash.as_bytes());
    }
    hex(&hasher.finalize())
}
