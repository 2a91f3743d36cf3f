//! A layer's documents as parsed, kept under the user's cache directory in the tree the build
//! makes of the shipped documents (`built`), so a later load of the same files reads them as a
//! shipped document is read, in place, without parsing their TOML again: a project's `.sixfold/`
//! (its kept rules and its own modes) or a `--bundle` directory, never the shipped bundle, which
//! holds every mode's ceiling and is only ever read from the binary.
//!
//! An entry is named by sixfold's build (the format's source, so a changed format never reads
//! an old entry) and by the layer's content hash: it can only ever stand for exactly the files
//! it was made from. It is read like any file the engine reads (a regular file, bounded) and is
//! untrusted: an entry whose stored key is not this one is ignored whole, a document whose tree
//! does not read (checked as it is read: `built::Reading`) is parsed from its TOML instead,
//! and a document that did not parse, or whose tree does not read back as it parsed, is never
//! stored (its diagnostic comes from parsing it again). Entries are written whole, to a fresh
//! file renamed over the old, and only the 64 written last are kept.
//!
//! A mode with rules of place globs alone, and a policy with kept command rules, is stored three
//! times over: whole, the index of those rules (`unread_rules`, `unread_acts`), and its slim
//! twin, the document without them. One judgement's load reads the twin and the index; the tree
//! whole is written last in the entry and left in the file until a step reaches one of those
//! rules (a project mode of a thousand path rules: 296 KB of entry, of which a hook call reads
//! 35 KB).

use super::source::BundleSource;
use crate::built::make::Built;
use crate::built::{Leave, Tree};
use crate::format::{ModeFile, PatternFile, PolicyFile, ProviderFile};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

include!(concat!(env!("OUT_DIR"), "/parsed_format.rs"));

/// An entry larger than this is not read (a bundle's files are at most 32 MiB).
const MAX_ENTRY_BYTES: u64 = 64 * 1024 * 1024;

/// What the first read of an entry takes, for its directory: what a load reads of the entry is
/// read next, whole, and a tree left for later when it is needed.
const FIRST_READ: usize = 4096;

/// Entries kept; older ones are removed when one is written.
const KEEP: usize = 64;

/// The first line of every entry.
const MAGIC: &str = "sixfold parsed layer 3";

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
#[derive(Debug, Clone)]
#[cfg_attr(test, derive(serde::Serialize))]
pub(crate) enum ParsedDoc {
    Mode(ModeFile),
    Policy(PolicyFile),
    Pattern(PatternFile),
    /// Boxed: a provider's file is several times the size of the others.
    Provider(Box<ProviderFile>),
}

/// One layer's entry: each document found stored in it or made now, and whether any was made
/// now (then the entry is written again when the load is done).
#[derive(Debug)]
pub(crate) struct Stored {
    file: PathBuf,
    key: String,
    /// The entry as opened, for the trees left in it until they are needed.
    opened: Option<Arc<File>>,
    docs: BTreeMap<String, Bytes>,
    changed: bool,
}

/// A stored document's tree: read from the entry, left in it, or made now.
#[derive(Debug)]
enum Bytes {
    /// Its place in bytes read from the entry, shared with the rules left unread of a tree whole
    /// read with the rest ([`Whole::Read`]).
    Read(Arc<Vec<u8>>, Range<usize>),
    /// Its place in the entry's file, not read yet: a tree whole, where one judgement's load
    /// reads its slim twin instead ([`slim_name`]).
    Later(Range<u64>),
    Made(Vec<u8>),
}

impl Bytes {
    /// The bytes in memory: `None` for a tree still left in the file.
    fn held(&self) -> Option<&[u8]> {
        match self {
            Bytes::Read(read, range) => read.get(range.clone()),
            Bytes::Made(made) => Some(made),
            Bytes::Later(_) => None,
        }
    }
}

/// A stored tree whole, for the rules one judgement's load left in it: read already, or read
/// from the entry's file the first time a step comes near one of them.
#[derive(Debug)]
pub(crate) enum Whole {
    Read(Arc<Vec<u8>>, Range<usize>),
    Later {
        file: Arc<File>,
        at: Range<u64>,
        read: std::sync::OnceLock<Option<Vec<u8>>>,
    },
}

impl Whole {
    /// Its length in bytes, known without reading it.
    pub(crate) fn len(&self) -> usize {
        match self {
            Whole::Read(_, range) => range.len(),
            Whole::Later { at, .. } => usize::try_from(at.end - at.start).unwrap_or(usize::MAX),
        }
    }

    /// Its bytes, read now if they were not; `None` when they cannot be.
    pub(crate) fn bytes(&self) -> Option<&[u8]> {
        match self {
            Whole::Read(read, range) => read.get(range.clone()),
            Whole::Later { file, at, read } => read.get_or_init(|| read_part(file, at.clone())).as_deref(),
        }
    }
}

impl Stored {
    /// The entry for `source` in `cache`: what it holds, or nothing yet.
    pub(crate) fn open(cache: &ParseCache, source: &BundleSource) -> Stored {
        let hash = source.content_hash();
        let hash = hash.strip_prefix("sha256:").unwrap_or(&hash);
        let key = format!("{}-{hash}", FORMAT);
        let file = cache.dir.join(&key);
        let (opened, docs) = match read_entry(&file, &key) {
            Some((opened, docs)) => (Some(Arc::new(opened)), docs),
            None => (None, BTreeMap::new()),
        };
        Stored {
            file,
            key,
            opened,
            docs,
            changed: false,
        }
    }

    /// The bytes of the document `name`, read from the file now if they were left in it.
    fn bytes(&mut self, name: &str) -> Option<&[u8]> {
        let bytes = self.docs.get_mut(name)?;
        if let Bytes::Later(at) = bytes {
            let read = read_part(self.opened.as_ref()?, at.clone())?;
            let len = read.len();
            *bytes = Bytes::Read(Arc::new(read), 0..len);
        }
        bytes.held()
    }

    /// Whether the document `name` is left in the entry's file, not read yet.
    #[cfg(test)]
    pub(crate) fn left_in_file(&self, name: &str) -> bool {
        matches!(self.docs.get(name), Some(Bytes::Later(_)))
    }

    /// Forgets what is stored of the document at `relative` (not ours, torn, or forged): it is
    /// parsed from its TOML, and stored again.
    fn forget(&mut self, relative: &str) {
        self.docs.remove(relative);
        self.docs.remove(&index_name(relative));
        self.docs.remove(&slim_name(relative));
    }

    /// The stored document at `relative` without what `unread` names, if there is one and it
    /// reads as `T`. The rules left unread ([`Stored::unread_rules`], [`Stored::unread_acts`])
    /// are read from its slim twin: the tree made without exactly those rules, so none of their
    /// nodes is read at all.
    pub(crate) fn get<T: DeserializeOwned>(&mut self, relative: &str, unread: Leave<'_>) -> Option<T> {
        let (name, unread) = match unread.items {
            Some(_) if self.docs.contains_key(&slim_name(relative)) => {
                (slim_name(relative), Leave { items: None, ..unread })
            }
            _ => (relative.to_string(), unread),
        };
        // Checked as it is read (`built::Reading`): a load pays for the nodes it reads, not for
        // the rules it leaves in the tree.
        let found = self
            .bytes(&name)
            .and_then(Tree::stored_again)
            .and_then(|(tree, root)| tree.document_without::<T>(root, unread));
        if found.is_none() {
            self.forget(relative);
        }
        found
    }

    /// The kept command rules of the stored policy at `relative`, as the entry has them, for a
    /// bundle to read when a step names them (`None` when it has none, or was not read from the
    /// entry). Take it before reading the policy without them: the policy is then read from its
    /// slim twin, and its tree whole only when a step names one.
    pub(crate) fn unread_acts(&mut self, relative: &str) -> Option<super::unread_acts::UnreadActs> {
        let (whole, index) = self.indexed(relative)?;
        let acts = super::unread_acts::UnreadActs::from_index(whole, index)?;
        self.twin_holds(relative, "acts", acts.read_count()).then_some(acts)
    }

    /// The rules of place globs alone of the stored mode at `relative`, as the entry has them,
    /// for a bundle to read when a step's places reach them (`None` when it has none, or was
    /// not read from the entry). Take it before reading the mode without them: the mode is then
    /// read from its slim twin, and its tree whole only when a step's place reaches one.
    pub(crate) fn unread_rules(&mut self, relative: &str) -> Option<super::unread_rules::UnreadRules> {
        let (whole, index) = self.indexed(relative)?;
        let rules = super::unread_rules::UnreadRules::from_index(whole, index)?;
        self.twin_holds(relative, "rules", rules.read_count()).then_some(rules)
    }

    /// The tree whole of the stored document at `relative`, left in the file or read, and the
    /// index stored with it (a tree stored without one is read whole).
    fn indexed(&mut self, relative: &str) -> Option<(Whole, &[u8])> {
        let whole = match self.docs.get(relative)? {
            Bytes::Read(read, range) => Whole::Read(Arc::clone(read), range.clone()),
            Bytes::Later(at) => Whole::Later {
                file: Arc::clone(self.opened.as_ref()?),
                at: at.clone(),
                read: std::sync::OnceLock::new(),
            },
            Bytes::Made(_) => return None,
        };
        Some((whole, self.bytes(&index_name(relative))?))
    }

    /// Whether the slim twin of the document at `relative` holds `read` items of its array
    /// `key`, as the index counts those read with it. One that does not is not the twin the
    /// index was made with (a torn or forged entry): the document is forgotten, parsed from its
    /// TOML, and stored again.
    fn twin_holds(&mut self, relative: &str, key: &str, read: usize) -> bool {
        let count = self
            .bytes(&slim_name(relative))
            .and_then(Tree::stored_again)
            .and_then(|(tree, root)| tree.top_array(root, key))
            .map(|items| items.len());
        if count != Some(read) {
            self.forget(relative);
            return false;
        }
        true
    }

    /// Keeps the tree of `text`, a document that just parsed as `T` from its TOML, when the tree
    /// reads back as `T` (one that would not is parsed at every load instead).
    pub(crate) fn put<T: DeserializeOwned>(&mut self, relative: &str, text: &str) {
        let mut built = Built::default();
        let Some(bytes) = built.document(text).and_then(|root| built.stored(root)) else {
            return;
        };
        let reads = Tree::stored(&bytes).and_then(|(tree, root)| tree.document::<T>(root));
        if reads.is_none() {
            return;
        }
        self.forget(relative);
        // A mode's rules of place globs alone, or a policy's kept command rules, found once here
        // rather than at every load, and the document without them, which one judgement's load
        // reads in place of the whole.
        let indexed = match relative.split('/').next() {
            Some("modes") => Some(("rules", super::unread_rules::UnreadRules::index(&bytes))),
            Some("policies") => Some(("acts", super::unread_acts::UnreadActs::index(&bytes))),
            _ => None,
        };
        if let Some((key, index)) = indexed {
            let found = index.and_then(|(index, left)| Some((index, slim::<T>(text, key, &left)?)));
            let index = match found {
                Some((index, slim)) => {
                    self.docs.insert(slim_name(relative), Bytes::Made(slim));
                    index
                }
                // None left, or no twin to read in the document's place: it is read whole.
                None => Vec::new(),
            };
            self.docs.insert(index_name(relative), Bytes::Made(index));
        }
        self.docs.insert(relative.to_string(), Bytes::Made(bytes));
        self.changed = true;
    }

    /// Writes the entry when a document was added; a cache that cannot be written is no error.
    pub(crate) fn save(mut self) {
        if !self.changed {
            return;
        }
        let Some(dir) = self.file.parent().map(Path::to_path_buf) else {
            return;
        };
        if std::fs::create_dir_all(&dir).is_err() {
            return;
        }
        // The trees left in the file are read now, to be written again; one that cannot be is
        // forgotten, and parsed at the next load.
        let names: Vec<String> = self.docs.keys().cloned().collect();
        for name in &names {
            if self.bytes(name).is_none() {
                self.docs.remove(name);
            }
        }
        let docs: BTreeMap<&str, &[u8]> = self
            .docs
            .iter()
            .filter_map(|(name, bytes)| Some((name.as_str(), bytes.held()?)))
            .collect();
        let fresh = dir.join(format!(".{}.{}", self.key, std::process::id()));
        if std::fs::write(&fresh, pack(&self.key, &docs)).is_err() {
            let _ = std::fs::remove_file(&fresh);
            return;
        }
        if std::fs::rename(&fresh, &self.file).is_err() {
            let _ = std::fs::remove_file(&fresh);
            return;
        }
        evict(&dir);
    }
}

/// The stored tree of the document `text` without the items at `left` of its array `key` (their
/// places in it, in order), when it reads as `T`.
fn slim<T: DeserializeOwned>(text: &str, key: &str, left: &[u32]) -> Option<Vec<u8>> {
    let mut built = Built::default();
    let bytes = built
        .document_without(text, key, left)
        .and_then(|root| built.stored(root))?;
    Tree::stored(&bytes).and_then(|(tree, root)| tree.document::<T>(root))?;
    Some(bytes)
}

/// The name in an entry of the index of the rules left unread of the document stored as
/// `relative` (`UnreadRules::index`, `UnreadActs::index`): no file's path holds a NUL.
fn index_name(relative: &str) -> String {
    format!("{relative}\0index")
}

/// The name in an entry of the document stored as `relative` without the rules its index names.
fn slim_name(relative: &str) -> String {
    format!("{relative}\0slim")
}

/// Whether the document `name` is read only when needed: a tree whole with a slim twin.
fn later(name: &str, names: &dyn Fn(&str) -> bool) -> bool {
    !name.contains('\0') && names(&slim_name(name))
}

/// `part` of `file`, bounded by the entry's own bound.
fn read_part(file: &File, part: Range<u64>) -> Option<Vec<u8>> {
    let len = part.end.checked_sub(part.start).filter(|len| *len <= MAX_ENTRY_BYTES)?;
    let mut read = vec![0u8; usize::try_from(len).ok()?];
    crate::bounded::read_at(file, part.start, &mut read).ok()?;
    Some(read)
}

/// Writes `text`'s tree for `relative` into `source`'s entry, whatever `relative` holds: a
/// forged entry, for the tests of what a load makes of one.
#[cfg(test)]
pub(crate) fn forge(cache: &ParseCache, source: &BundleSource, relative: &str, text: &str) {
    forge_tree(cache, source, relative, tree_of(text));
}

/// The stored tree of `text`, as an entry keeps it (empty when it is not TOML).
#[cfg(test)]
pub(crate) fn tree_of(text: &str) -> Vec<u8> {
    let mut built = Built::default();
    built
        .document(text)
        .and_then(|root| built.stored(root))
        .unwrap_or_default()
}

/// As [`forge`], with the tree's bytes as given (torn, or with a node changed).
#[cfg(test)]
pub(crate) fn forge_tree(cache: &ParseCache, source: &BundleSource, relative: &str, bytes: Vec<u8>) {
    let mut entry = Stored::open(cache, source);
    entry.docs.insert(relative.to_string(), Bytes::Made(bytes));
    entry.changed = true;
    entry.save();
}

/// The bytes `source`'s entry holds under `name` (a document, its index or its twin), for the
/// tests that forge one.
#[cfg(test)]
pub(crate) fn stored_bytes(cache: &ParseCache, source: &BundleSource, name: &str) -> Option<Vec<u8>> {
    Stored::open(cache, source).bytes(name).map(<[u8]>::to_vec)
}

/// `MAGIC`, the key and the number of documents, each on a line; then each document's
/// `NAME_LEN BYTES_LEN`, a newline and its name; then the documents' bytes in the same order,
/// the trees read only when needed last ([`later`]), so a load reads the entry up to them.
fn pack(key: &str, docs: &BTreeMap<&str, &[u8]>) -> Vec<u8> {
    let is_later = |name: &str| later(name, &|twin| docs.contains_key(twin));
    let mut order: Vec<(&str, &[u8])> = docs.iter().map(|(n, b)| (*n, *b)).collect();
    // Stable: by name within each part.
    order.sort_by_key(|(name, _)| is_later(name));
    let mut out = format!("{MAGIC}\n{key}\n{}\n", order.len()).into_bytes();
    for (name, bytes) in &order {
        out.extend_from_slice(format!("{} {}\n", name.len(), bytes.len()).as_bytes());
        out.extend_from_slice(name.as_bytes());
    }
    for (_, bytes) in &order {
        out.extend_from_slice(bytes);
    }
    out
}

/// The documents of the entry at `path` made for `key`: read up to the trees left for later,
/// which are read when needed from the file returned. `None` for anything else.
fn read_entry(path: &Path, key: &str) -> Option<(File, BTreeMap<String, Bytes>)> {
    let (file, size) = crate::bounded::open_regular(std::fs::OpenOptions::new().read(true), path).ok()?;
    if size > MAX_ENTRY_BYTES {
        return None;
    }
    // The directory first, then what a load reads in one read into a buffer of its size: not
    // grown and copied (a layer's entry is read on every hook call).
    let mut first = [0u8; FIRST_READ];
    let first = first.get_mut(..usize::try_from(size).unwrap_or(FIRST_READ).min(FIRST_READ))?;
    crate::bounded::read_at(&file, 0, first).ok()?;
    let mut whole = None;
    let (directory, mut at) = match unpack(first, key) {
        Some(found) => found,
        // A directory longer than the first read: the whole entry.
        None if (first.len() as u64) < size => {
            let read = read_part(&file, 0..size)?;
            let found = unpack(&read, key)?;
            whole = Some(read);
            found
        }
        None => return None,
    };
    let names: std::collections::HashSet<&str> = directory.iter().map(|(name, _)| name.as_str()).collect();
    let mut places = Vec::with_capacity(directory.len());
    let mut read_to = at;
    for (name, len) in &directory {
        let end = at.checked_add(*len).filter(|end| *end <= size)?;
        if !later(name, &|twin| names.contains(twin)) {
            read_to = read_to.max(end);
        }
        places.push(at..end);
        at = end;
    }
    let head = match whole {
        Some(read) => read,
        None => read_part(&file, 0..read_to)?,
    };
    let head = Arc::new(head);
    let docs = directory
        .into_iter()
        .zip(places)
        .map(|((name, _), place)| {
            let bytes = match (usize::try_from(place.start), usize::try_from(place.end)) {
                (Ok(start), Ok(end)) if end <= head.len() => Bytes::Read(Arc::clone(&head), start..end),
                _ => Bytes::Later(place),
            };
            (name, bytes)
        })
        .collect();
    Some((file, docs))
}

/// The directory of an entry made for `key` (each document's name and length, in order) and
/// where its documents' bytes start; `None` for anything else, or a directory cut short.
fn unpack(bytes: &[u8], key: &str) -> Option<(Vec<(String, u64)>, u64)> {
    let (magic, rest) = line(bytes)?;
    let (stored_key, rest) = line(rest)?;
    // INVARIANT: an entry stands only for the files it was made from, by this build.
    if magic != MAGIC.as_bytes() || stored_key != key.as_bytes() {
        return None;
    }
    let (count, mut rest) = line(rest)?;
    let count: usize = std::str::from_utf8(count).ok()?.parse().ok()?;
    // Each document takes at least four bytes of the directory: bounded before anything is reserved.
    let mut directory = Vec::with_capacity(count.min(rest.len() / 4));
    for _ in 0..count {
        let (lengths, after) = line(rest)?;
        let (name_len, bytes_len) = std::str::from_utf8(lengths).ok()?.split_once(' ')?;
        let name_len: usize = name_len.parse().ok()?;
        let bytes_len: u64 = bytes_len.parse().ok()?;
        let name = std::str::from_utf8(after.get(..name_len)?).ok()?;
        directory.push((name.to_string(), bytes_len));
        rest = after.get(name_len..)?;
    }
    Some((directory, (bytes.len() - rest.len()) as u64))
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
    /// the stored tree carries every kind of table the formats have.
    #[test]
    fn the_stored_form_of_every_shipped_document_is_its_parse() {
        fn round<T: DeserializeOwned + std::fmt::Debug>(stored: &mut Stored, relative: &str, text: &str) {
            let parsed: T = toml::from_str(text).unwrap();
            stored.put::<T>(relative, text);
            let back = stored
                .get::<T>(relative, Leave::default())
                .unwrap_or_else(|| panic!("{relative} does not read back"));
            assert_eq!(format!("{back:?}"), format!("{parsed:?}"), "{relative}");
        }
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
            match relative.split('/').next().unwrap() {
                "modes" => round::<ModeFile>(&mut stored, relative, text),
                "policies" if relative.ends_with(".toml") => round::<PolicyFile>(&mut stored, relative, text),
                "patterns" => round::<PatternFile>(&mut stored, relative, text),
                "providers" => round::<ProviderFile>(&mut stored, relative, text),
                _ => continue,
            }
            n += 1;
        }
        assert!(n > 20, "{n}");
        stored.save();
        let again = Stored::open(&cache, &shipped);
        // Each mode and policy with the index of its rules read by need beside it (and, where
        // it leaves some, the document without them).
        let docs: Vec<&String> = again.docs.keys().filter(|k| !k.contains('\0')).collect();
        let indexes: Vec<&String> = again.docs.keys().filter(|k| k.ends_with("\0index")).collect();
        assert_eq!(docs.len(), n);
        let indexed = |d: &&&String| d.starts_with("modes/") || d.starts_with("policies/");
        assert_eq!(indexes.len(), docs.iter().filter(indexed).count());
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
        assert_eq!(
            names,
            [
                "modes/mine.toml",
                "modes/mine.toml\0index",
                "modes/mine.toml\0slim",
                "modes/role.md",
                "modes/role.md\0index",
                "policies/kept.toml",
                "policies/kept.toml\0index",
                "policies/kept.toml\0slim"
            ]
        );
        assert!(entry.get::<ModeFile>("modes/mine.toml", Leave::default()).is_some());
        assert!(entry.get::<ModeFile>("modes/role.md", Leave::default()).is_some());
        assert!(entry
            .get::<PolicyFile>("policies/kept.toml", Leave::default())
            .is_some());
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
        // out of reach here; torn, garbage and malformed trees are not.
        let mine_text = "id = \"mine\"\nextends = \"read-only\"\n";
        let mut good = Built::default();
        let good = good.document(mine_text).and_then(|root| good.stored(root)).unwrap();
        let word = |at: usize| u32::from_le_bytes(good[at..at + 4].try_into().unwrap());
        let set = |bytes: &mut Vec<u8>, at: usize, value: u32| bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
        let node = |i: usize, field: usize| 8 + 20 * i + 4 * field;
        let mut malformed = Vec::new();
        // Garbage; torn anywhere.
        malformed.push(b"\xff\x00garbage".to_vec());
        malformed.extend((0..good.len()).step_by(7).map(|cut| good[..cut].to_vec()));
        // The root table's entries start at itself: a cycle.
        let mut cycle = good.clone();
        set(&mut cycle, node(word(0) as usize, 1), word(0));
        malformed.push(cycle);
        // A string past the strings.
        let mut long = good.clone();
        set(&mut long, node(1, 2), 1 << 20);
        malformed.push(long);
        // A node of no kind; a root past the nodes.
        let mut kind = good.clone();
        set(&mut kind, node(1, 0), 99);
        malformed.push(kind);
        let mut root = good.clone();
        set(&mut root, 0, 1000);
        malformed.push(root);
        for bytes in malformed {
            assert!(Tree::stored(&bytes)
                .and_then(|(t, r)| t.document::<ModeFile>(r))
                .is_none());
            let mut forged = Stored::open(&cache, &mine);
            forged.docs.insert("modes/mine.toml".into(), Bytes::Made(bytes));
            forged.changed = true;
            forged.save();
            assert_eq!(seen(&Bundle::load_cached(&sources, None, &cache)), plain);
        }
        // Two tables claiming the same children (a tree that would read in exponential time).
        let mut shared = Built::default();
        let shared_root = shared.document("a = { b = 1 }\nc = { d = 2 }\n").unwrap();
        let mut shared = shared.stored(shared_root).unwrap();
        let tables: Vec<usize> = (0..word_of(&shared, 4) as usize)
            .filter(|i| word_of(&shared, node(*i, 0)) == 5 && *i != shared_root as usize)
            .collect();
        let first = word_of(&shared, node(tables[0], 1));
        set(&mut shared, node(tables[1], 1), first);
        assert!(Tree::stored(&shared).is_none());
        std::fs::write(name(&mine), b"sixfold parsed layer 2\n").unwrap();
        assert_eq!(seen(&Bundle::load_cached(&sources, None, &cache)), plain);
    }

    fn word_of(bytes: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
    }

    /// A tree too deep to read on the stack is refused; one as deep as TOML gives is read.
    #[test]
    fn a_stored_tree_is_bounded_in_depth() {
        let nested = |n: usize| format!("a = {}1{}\n", "[".repeat(n), "]".repeat(n));
        let mut shallow = Built::default();
        let root = shallow.document(&nested(20)).unwrap();
        let bytes = shallow.stored(root).unwrap();
        assert!(Tree::stored(&bytes).is_some());
        // Made by hand: toml's own parser stops well before this depth.
        let depth = 200u32;
        let mut deep = Vec::new();
        deep.extend_from_slice(&0u32.to_le_bytes());
        deep.extend_from_slice(&(depth + 1).to_le_bytes());
        for i in 0..depth {
            for w in [4u32, i + 1, 1, 0, 0] {
                deep.extend_from_slice(&w.to_le_bytes());
            }
        }
        for w in [1u32, 0, 1, 0, 0] {
            deep.extend_from_slice(&w.to_le_bytes());
        }
        assert!(Tree::stored(&deep).is_none());
        // Read as it goes, as a load reads one: the same bounds.
        let read = |bytes: &[u8]| Tree::stored_again(bytes).and_then(|(t, r)| t.document::<toml::Value>(r));
        assert!(read(&bytes).is_some());
        assert!(read(&deep).is_none());
    }

    /// The words of a stored tree made by hand: its root, its nodes, its strings.
    fn tree_of_nodes(root: u32, nodes: &[[u32; 5]], strings: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for w in [root, nodes.len() as u32].iter().chain(nodes.iter().flatten()) {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(strings.as_bytes());
        out
    }

    proptest::proptest! {
        /// Any nodes at all, read as a load reads a stored tree (as any format, and leaving items
        /// out as one judgement's load does): no panic, no hang.
        #[test]
        fn any_stored_tree_reads_in_bounds(
            root in 0u32..12,
            nodes in proptest::collection::vec((0u32..7, 0u32..14, 0u32..6), 0..24),
            strings in "[a-z]{0,8}",
        ) {
            let nodes: Vec<[u32; 5]> = nodes.iter().map(|(k, a, b)| [*k, *a, *b, 0, 0]).collect();
            let bytes = tree_of_nodes(root, &nodes, &strings);
            let leave = Leave { keys: &["x"], all_but: Some(("t", "u")), items: Some(("acts", &[2, 3, 9])) };
            if let Some((tree, root)) = Tree::stored_again(&bytes) {
                let _ = tree.document::<toml::Value>(root);
                let _ = tree.document_without::<ModeFile>(root, leave);
                let _ = tree.document_without::<PolicyFile>(root, leave);
                let _ = tree.acts(root);
                for at in tree.top_array(root, "rules").into_iter().flatten() {
                    let _ = tree.item::<toml::Value>(at);
                }
            }
        }
    }

    /// A stored tree is read as it goes (`built::Reading`), never checked whole first: one whose
    /// tables share their entries level after level (read in time exponential in its size) runs
    /// out of steps, and one whose table holds itself is refused; neither hangs.
    #[test]
    fn a_tree_read_as_it_goes_is_bounded_in_time() {
        // Level `i` is four nodes from `1 + 4 i`: a key, a table of level `i + 1`'s entries, the
        // same key, and the same table again (shared) or a number (not); the root is the first
        // level's table.
        let levels = 60u32;
        let tree = |shared: bool| {
            let mut nodes = vec![[5, 1, 2, 0, 0]];
            for i in 0..levels {
                let table = match i + 1 < levels {
                    true => [5, 1 + 4 * (i + 1), 2, 0, 0],
                    false => [1, 7, 0, 0, 0],
                };
                let second = if shared { table } else { [1, 7, 0, 0, 0] };
                nodes.extend([[0, 0, 1, 0, 0], table, [0, 1, 1, 0, 0], second]);
            }
            tree_of_nodes(0, &nodes, "ab")
        };
        let shared = tree(true);
        assert!(Tree::stored(&shared).is_none());
        let read = |bytes: &[u8]| Tree::stored_again(bytes).and_then(|(t, r)| t.document::<toml::Value>(r));
        assert!(read(&shared).is_none());
        // The same levels, each table with entries of its own: read.
        let own = tree(false);
        assert!(read(&own).is_some());
        // A table whose entries start at itself.
        let cycle = tree_of_nodes(0, &[[5, 0, 1, 0, 0], [0, 0, 1, 0, 0]], "a");
        assert!(read(&cycle).is_none());
    }

    /// An entry reads back whole and only under its own key; a tree with a slim twin is left
    /// in the file until it is needed, and read then as it was written; an entry cut anywhere
    /// reads as none.
    #[test]
    fn an_entry_reads_back_only_under_its_own_key() {
        let whole = vec![7u8; 3 * FIRST_READ];
        let docs = BTreeMap::from([
            ("modes/a.toml", &whole[..]),
            ("modes/a.toml\0slim", &[1u8, 2][..]),
            ("modes/a.toml\0rules", &[3u8][..]),
            ("policies/p.toml", &[4u8, 5, 6][..]),
            ("x", &[][..]),
        ]);
        let packed = pack("k1", &docs);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("entry");
        std::fs::write(&path, &packed).unwrap();
        let (file, found) = read_entry(&path, "k1").unwrap();
        assert!(matches!(found["modes/a.toml"], Bytes::Later(_)));
        assert!(found
            .iter()
            .filter(|(n, _)| *n != "modes/a.toml")
            .all(|(_, b)| matches!(b, Bytes::Read(..))));
        let mut stored = Stored {
            file: path.clone(),
            key: "k1".into(),
            opened: Some(Arc::new(file)),
            docs: found,
            changed: false,
        };
        for (name, bytes) in &docs {
            assert_eq!(stored.bytes(name).unwrap(), *bytes, "{name:?}");
        }
        assert!(read_entry(&path, "k2").is_none());
        for cut in (0..packed.len()).step_by(61).chain([packed.len() - 1]) {
            std::fs::write(&path, &packed[..cut]).unwrap();
            assert!(read_entry(&path, "k1").is_none(), "{cut}");
        }
        std::fs::write(&path, b"sixfold parsed layer 3\nk1\n99\n1 1\nab").unwrap();
        assert!(read_entry(&path, "k1").is_none());
        // A directory longer than the first read: the entry is read whole.
        let names: Vec<String> = (0..FIRST_READ / 8).map(|i| format!("policies/p{i}.toml")).collect();
        let many: BTreeMap<&str, &[u8]> = names.iter().map(|n| (n.as_str(), n.as_bytes())).collect();
        std::fs::write(&path, pack("k1", &many)).unwrap();
        let (_, found) = read_entry(&path, "k1").unwrap();
        assert_eq!(found.len(), many.len());
        for (name, bytes) in found {
            let Bytes::Read(read, range) = bytes else {
                panic!("{name} not read")
            };
            assert_eq!(&read[range], name.as_bytes());
        }
    }
}
