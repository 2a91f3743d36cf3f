//! A layer's documents as parsed, kept in a compact form (CBOR) under the user's cache
//! directory, so a later load of the same files does not parse their TOML again: a project's
//! `.sixfold/` (its kept rules and its own modes) or a `--bundle` directory, never the shipped
//! bundle, which holds every mode's ceiling and is only ever read from the binary.
//!
//! An entry is named by sixfold's build (the format's source, so a changed format never reads
//! an old entry) and by the layer's content hash: it can only ever stand for exactly the files
//! it was made from. It is read like any file the engine reads (a regular file, bounded) and is
//! untrusted: an entry whose stored key is not this one is ignored whole, a document that does
//! not decode is parsed from its TOML instead, and a document that did not parse is never
//! stored (its diagnostic comes from parsing it again). Entries are written whole, to a fresh
//! file renamed over the old, and only the 64 written last are kept.

use super::source::BundleSource;
use crate::format::{ModeFile, PatternFile, PolicyFile, ProviderFile};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

include!(concat!(env!("OUT_DIR"), "/parsed_format.rs"));

/// An entry larger than this is not read (a bundle's files are at most 32 MiB).
const MAX_ENTRY_BYTES: u64 = 64 * 1024 * 1024;

/// Entries kept; older ones are removed when one is written.
const KEEP: usize = 64;

/// The first line of every entry.
const MAGIC: &str = "sixfold parsed layer 1";

/// Where parsed layers are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseCache {
    dir: PathBuf,
}

impl ParseCache {
    /// Parsed layers kept in `dir` (made when first written).
    pub fn in_dir(dir: impl Into<PathBuf>) -> ParseCache {
        ParseCache { dir: dir.into() }
    }

    /// The user's: `$XDG_CACHE_HOME/sixfold/parsed` (else `~/.cache/sixfold/parsed`); `None`
    /// when neither is set.
    pub fn user() -> Option<ParseCache> {
        crate::user_dirs::cache_dir().map(|dir| ParseCache::in_dir(dir.join("parsed")))
    }
}

/// One document as parsed, by kind.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum ParsedDoc {
    Mode(ModeFile),
    Policy(PolicyFile),
    Pattern(PatternFile),
    /// Boxed: a provider's file is several times the size of the others.
    Provider(Box<ProviderFile>),
}

/// One layer's entry: the documents found stored, and whether any was parsed afresh (then the
/// entry is written again when the load is done).
#[derive(Debug)]
pub(crate) struct Stored {
    file: PathBuf,
    key: String,
    docs: BTreeMap<String, Vec<u8>>,
    changed: bool,
}

impl Stored {
    /// The entry for `source` in `cache`: what it holds, or nothing yet.
    pub(crate) fn open(cache: &ParseCache, source: &BundleSource) -> Stored {
        let hash = source.content_hash();
        let hash = hash.strip_prefix("sha256:").unwrap_or(&hash);
        let key = format!("{}-{hash}", FORMAT);
        let file = cache.dir.join(&key);
        let docs = crate::bounded::read_bytes(&file, MAX_ENTRY_BYTES)
            .ok()
            .and_then(|bytes| unpack(&bytes, &key))
            .unwrap_or_default();
        Stored {
            file,
            key,
            docs,
            changed: false,
        }
    }

    /// The stored document at `relative`, if there is one and it decodes.
    pub(crate) fn get(&mut self, relative: &str) -> Option<ParsedDoc> {
        let bytes = self.docs.get(relative)?;
        match ciborium::from_reader::<ParsedDoc, _>(bytes.as_slice()) {
            Ok(doc) => Some(doc),
            Err(_) => {
                // Not ours, or torn: parsed from its TOML, and stored again.
                self.docs.remove(relative);
                None
            }
        }
    }

    /// Keeps a document just parsed from its TOML.
    pub(crate) fn put(&mut self, relative: &str, doc: &ParsedDoc) {
        let mut bytes = Vec::new();
        if ciborium::into_writer(doc, &mut bytes).is_ok() {
            self.docs.insert(relative.to_string(), bytes);
            self.changed = true;
        }
    }

    /// Writes the entry when a document was added; a cache that cannot be written is no error.
    pub(crate) fn save(self) {
        if !self.changed {
            return;
        }
        let Some(dir) = self.file.parent() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let fresh = dir.join(format!(".{}.{}", self.key, std::process::id()));
        if std::fs::write(&fresh, pack(&self.key, &self.docs)).is_err() {
            let _ = std::fs::remove_file(&fresh);
            return;
        }
        if std::fs::rename(&fresh, &self.file).is_err() {
            let _ = std::fs::remove_file(&fresh);
            return;
        }
        evict(dir);
    }
}

/// `MAGIC`, the key, then each document as `NAME_LEN BYTES_LEN`, a newline, the name, the bytes.
fn pack(key: &str, docs: &BTreeMap<String, Vec<u8>>) -> Vec<u8> {
    let mut out = format!("{MAGIC}\n{key}\n").into_bytes();
    for (name, bytes) in docs {
        out.extend_from_slice(format!("{} {}\n", name.len(), bytes.len()).as_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(bytes);
    }
    out
}

/// The documents of an entry made for `key`; `None` for anything else.
fn unpack(bytes: &[u8], key: &str) -> Option<BTreeMap<String, Vec<u8>>> {
    let (magic, rest) = line(bytes)?;
    let (stored_key, mut rest) = line(rest)?;
    // INVARIANT: an entry stands only for the files it was made from, by this build.
    if magic != MAGIC.as_bytes() || stored_key != key.as_bytes() {
        return None;
    }
    let mut docs = BTreeMap::new();
    while !rest.is_empty() {
        let (lengths, after) = line(rest)?;
        let (name_len, bytes_len) = std::str::from_utf8(lengths).ok()?.split_once(' ')?;
        let name_len: usize = name_len.parse().ok()?;
        let bytes_len: usize = bytes_len.parse().ok()?;
        let name = std::str::from_utf8(after.get(..name_len)?).ok()?;
        let end = name_len.checked_add(bytes_len)?;
        docs.insert(name.to_string(), after.get(name_len..end)?.to_vec());
        rest = after.get(end..)?;
    }
    Some(docs)
}

fn line(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let at = bytes.iter().position(|b| *b == b'\n')?;
    Some((bytes.get(..at)?, bytes.get(at + 1..)?))
}

/// Removes all but the [`KEEP`] entries written last.
fn evict(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            meta.is_file().then_some(())?;
            Some((meta.modified().ok()?, e.path()))
        })
        .collect();
    if found.len() <= KEEP {
        return;
    }
    found.sort();
    for (_, path) in found.iter().take(found.len() - KEEP) {
        let _ = std::fs::remove_file(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::{Bundle, Needs};
    use crate::diag::Diagnostic;
    use crate::effects::EffectProfile;
    use crate::judge::Context;

    /// What a load gives that a caller can see, as text: diagnostics and every item's shape.
    fn seen(loaded: &(Bundle, Vec<Diagnostic>)) -> String {
        let (b, d) = loaded;
        let mut out = format!("{d:#?}");
        for mode in b.modes() {
            out.push_str(&format!("{mode:#?}"));
        }
        out.push_str(&format!("{:#?}", b.policies().collect::<Vec<_>>()));
        out.push_str(&format!("{:#?}", b.patterns().collect::<Vec<_>>()));
        out.push_str(&format!("{:#?}", b.providers().collect::<Vec<_>>()));
        out.push_str(&format!("{:#?}", b.rows().collect::<Vec<_>>()));
        out.push_str(&format!("{:#?}", b.environments().collect::<Vec<_>>()));
        let step: EffectProfile =
            serde_json::from_str(r#"{"writes":["./src/x", "/etc/hosts"], "reads": ["~/.ssh/id_rsa"]}"#).unwrap();
        for mode in b.modes() {
            out.push_str(&format!("{:?}", b.judge(&mode.id, &step, &Context::example())));
        }
        out
    }

    /// Every shipped document stored and read back is what parsing its TOML gives, span for span:
    /// the compact form carries every kind of table the formats have.
    #[test]
    fn the_stored_form_of_every_shipped_document_is_its_parse() {
        let shipped = crate::shipped::source();
        let dir = tempfile::tempdir().unwrap();
        let cache = ParseCache::in_dir(dir.path());
        let mut stored = Stored::open(&cache, &shipped);
        let mut n = 0;
        for (relative, text) in &shipped.files {
            let text = match relative.ends_with(".md") {
                true => crate::bundle::read::front_matter(text).unwrap().0,
                false => text.as_ref(),
            };
            let parsed = match relative.split('/').next().unwrap() {
                "modes" => ParsedDoc::Mode(toml::from_str(text).unwrap()),
                "policies" if relative.ends_with(".toml") => ParsedDoc::Policy(toml::from_str(text).unwrap()),
                "patterns" => ParsedDoc::Pattern(toml::from_str(text).unwrap()),
                "providers" => ParsedDoc::Provider(Box::new(toml::from_str(text).unwrap())),
                _ => continue,
            };
            stored.put(relative, &parsed);
            let back = stored
                .get(relative)
                .unwrap_or_else(|| panic!("{relative} does not decode"));
            assert_eq!(format!("{back:?}"), format!("{parsed:?}"), "{relative}");
            n += 1;
        }
        assert!(n > 20, "{n}");
        stored.save();
        let again = Stored::open(&cache, &shipped);
        assert_eq!(again.docs.len(), n);
    }

    #[test]
    fn a_cached_load_is_the_load() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ParseCache::in_dir(dir.path());
        let project = BundleSource::from_files(
            "project",
            [
                ("modes/mine.toml", "id = \"mine\"\nextends = \"workspace-write\"\ninclude = [\"nope\"]\n\n[[rules]]\nid = \"r\"\ndecision = \"refuse\"\nreason = \"x\"\nwhen.writes = [\"/etc/**\"]\n"),
                ("modes/broken.toml", "id = \"broken\"\n[[rules]]\nid = 3\n"),
                ("modes/role.md", "+++\nid = \"role\"\nextends = \"wat\"\n+++\nYou review.\n"),
                ("policies/kept.toml", "id = \"kept\"\n\n[[acts]]\nid = \"k\"\ndecision = \"allow\"\ncommand = \"tool run\"\n"),
            ],
        );
        let sources = [crate::shipped::source(), project];
        let plain = seen(&Bundle::load(&sources));
        assert!(
            plain.contains("nope") && plain.contains("wat") && plain.contains("broken"),
            "{plain}"
        );
        // Stored on the first load, read on the second; the same both times.
        assert_eq!(seen(&Bundle::load_cached(&sources, None, &cache)), plain);
        // The project's layer only: the shipped bundle is never read from a file.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // Every document that parsed is stored and decodes; the broken one is not stored.
        let mut entry = Stored::open(&cache, &sources[1]);
        let names: Vec<String> = entry.docs.keys().cloned().collect();
        assert_eq!(names, ["modes/mine.toml", "modes/role.md", "policies/kept.toml"]);
        assert!(names.iter().all(|n| entry.get(n).is_some()));
        assert_eq!(seen(&Bundle::load_cached(&sources, None, &cache)), plain);
        // One judgement's load, stored and not.
        let needs = Needs::mode("mine").with_pattern("single");
        let lean = seen(&Bundle::load_for(&sources, &needs));
        let fresh = tempfile::tempdir().unwrap();
        let fresh = ParseCache::in_dir(fresh.path());
        assert_eq!(seen(&Bundle::load_cached(&sources, Some(&needs), &fresh)), lean);
        assert_eq!(seen(&Bundle::load_cached(&sources, Some(&needs), &fresh)), lean);
        assert_eq!(seen(&Bundle::load_cached(&sources, Some(&needs), &cache)), lean);
        // A layer loaded by need first, whole next: the entry grows to every document.
        assert_eq!(seen(&Bundle::load_cached(&sources, None, &fresh)), plain);
        assert_eq!(seen(&Bundle::load_cached(&sources, None, &fresh)), plain);
    }

    /// A corrupt entry, another layer's entry under this one's name, or a document of another
    /// kind: each is ignored and the TOML parsed, so nothing stored can change what loads.
    #[test]
    fn a_foreign_or_corrupt_entry_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ParseCache::in_dir(dir.path());
        let mine = BundleSource::from_files("p", [("modes/mine.toml", "id = \"mine\"\nextends = \"read-only\"\n")]);
        let other = BundleSource::from_files("p", [("modes/mine.toml", "id = \"mine\"\nextends = \"full\"\n")]);
        let sources = [crate::shipped::source(), mine.clone()];
        let plain = seen(&Bundle::load(&sources));
        let name = |s: &BundleSource| Stored::open(&cache, s).file;
        // The other layer's entry, copied to this one's name: its key is not this one's.
        let _ = Bundle::load_cached(&[crate::shipped::source(), other.clone()], None, &cache);
        std::fs::copy(name(&other), name(&mine)).unwrap();
        assert_eq!(seen(&Bundle::load_cached(&sources, None, &cache)), plain);
        // The other layer's document under this one's key (as a forger would write it) is
        // out of reach here; torn, garbage and wrong-kind documents are not.
        let mut forged = Stored::open(&cache, &mine);
        forged
            .docs
            .insert("modes/mine.toml".into(), b"\xff\x00garbage".to_vec());
        forged.changed = true;
        forged.save();
        assert_eq!(seen(&Bundle::load_cached(&sources, None, &cache)), plain);
        let mut kind = Stored::open(&cache, &mine);
        let pattern: crate::format::PatternFile = toml::from_str("id = \"mine\"\n").unwrap_or_else(|_| {
            toml::from_str(
                crate::built::FILES
                    .iter()
                    .find(|(p, _)| p.starts_with("patterns/"))
                    .unwrap()
                    .1,
            )
            .unwrap()
        });
        kind.put("modes/mine.toml", &ParsedDoc::Pattern(pattern));
        kind.save();
        assert_eq!(seen(&Bundle::load_cached(&sources, None, &cache)), plain);
        std::fs::write(name(&mine), b"sixfold parsed layer 1\n").unwrap();
        assert_eq!(seen(&Bundle::load_cached(&sources, None, &cache)), plain);
    }

    #[test]
    fn an_entry_reads_back_only_under_its_own_key() {
        let docs = BTreeMap::from([("modes/a.toml".to_string(), vec![1, 2, 3]), ("x".to_string(), vec![])]);
        let packed = pack("k1", &docs);
        assert_eq!(unpack(&packed, "k1"), Some(docs));
        assert_eq!(unpack(&packed, "k2"), None);
        // Torn anywhere: at most the documents before the tear, each whole.
        for cut in 0..packed.len() - 1 {
            let got = unpack(&packed[..cut], "k1");
            assert!(got.is_none() || got.is_some_and(|d| d.len() < 2), "{cut}");
        }
        assert_eq!(unpack(b"sixfold parsed layer 1\nk1\n99 1\nab", "k1"), None);
    }
}
