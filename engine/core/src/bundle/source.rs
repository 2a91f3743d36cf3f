//! Where bundle files come from: a directory on disk, or the shipped bundle embedded in the binary.

use crate::diag::Diagnostic;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Bundle files larger than this are refused: a policy file is small, and untrusted input is bounded.
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// A bundle directory whose files add up to more than this is not read whole: with the bound on
/// each file and on the entries, it keeps reading a bundle within a fixed memory.
pub(crate) const MAX_BUNDLE_BYTES: u64 = 32 * 1024 * 1024;

/// The four folders a bundle is made of.
pub(crate) const FOLDERS: [&str; 4] = ["modes", "policies", "patterns", "providers"];

/// Where a bundle's files come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The shipped bundle, embedded in the binary. Its scripts were checked when it was built and
    /// tested, so they compile on first use.
    Shipped,
    /// A bundle directory on disk.
    Directory(PathBuf),
    /// Files held in memory under a name (tests, benches, a copy made elsewhere).
    Memory(String),
}

impl Origin {
    /// How files of this origin are named in diagnostics: `<shipped>`, the directory, the name.
    pub fn label(&self) -> String {
        match self {
            Origin::Shipped => SHIPPED_LABEL.to_string(),
            Origin::Directory(dir) => dir.display().to_string(),
            Origin::Memory(name) => name.clone(),
        }
    }
}

/// How the shipped bundle's files are named in diagnostics.
pub(crate) const SHIPPED_LABEL: &str = "<shipped>";

/// A bundle file's text: the shipped bundle's borrowed from the binary (so a call neither copies
/// it nor, for a file still as embedded, reads it again: see `built::facts`), any other read once
/// and shared (a source's copy, a parsed document and the diagnostics pointing into it hold the
/// one text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Text {
    /// The binary's own.
    Embedded(&'static str),
    /// Read from a file (or made in memory): kept as read, so a long file is not copied again.
    Read(Arc<String>),
}

impl Text {
    /// `part`, a slice of this text, as a text of its own: still the binary's where it is, a copy
    /// otherwise.
    pub(crate) fn part(&self, part: &str) -> Text {
        if let Text::Embedded(whole) = self {
            let at = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
            let within = at.checked_add(part.len()).and_then(|end| whole.get(at..end));
            if let Some(within) = within.filter(|w| std::ptr::eq(w.as_ptr(), part.as_ptr())) {
                return Text::Embedded(within);
            }
        }
        Text::from(part)
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            Text::Embedded(text) => text,
            Text::Read(text) => text,
        }
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self
    }
}

impl From<String> for Text {
    fn from(text: String) -> Text {
        Text::Read(Arc::new(text))
    }
}

/// A copy: only the shipped bundle's texts are the binary's (`Text::Embedded`, made there).
impl From<&str> for Text {
    fn from(text: &str) -> Text {
        Text::Read(Arc::new(text.to_string()))
    }
}

/// One bundle's files, by path relative to the bundle's root (`/`-separated).
#[derive(Debug, Clone)]
pub struct BundleSource {
    /// Where the files come from.
    pub origin: Origin,
    /// Path relative to the bundle root → text.
    pub files: BTreeMap<String, Text>,
    /// The content hash of `files` when it is known already (the shipped bundle's, made by the
    /// build script; a project layer's, made once when it is read), so a call does not hash them
    /// again. Whoever changes `files` after setting it sets it to `None`.
    pub known_hash: Option<Text>,
}

impl BundleSource {
    /// A source from files of a given origin.
    pub fn new<I, P, T>(origin: Origin, files: I) -> BundleSource
    where
        I: IntoIterator<Item = (P, T)>,
        P: Into<String>,
        T: Into<Text>,
    {
        BundleSource {
            origin,
            files: files.into_iter().map(|(p, t)| (p.into(), t.into())).collect(),
            known_hash: None,
        }
    }

    /// A source from in-memory files named `label` in diagnostics (tests, benches).
    pub fn from_files<I, P, T>(label: &str, files: I) -> BundleSource
    where
        I: IntoIterator<Item = (P, T)>,
        P: Into<String>,
        T: Into<Text>,
    {
        BundleSource::new(Origin::Memory(label.to_string()), files)
    }

    /// How files of this source are named in diagnostics: a directory, `<shipped>`, a name.
    pub fn label(&self) -> String {
        self.origin.label()
    }

    /// This layer's content hash (`sha256:…`): its files' paths and texts, wherever they were
    /// read from. The shipped bundle's was made when it was embedded.
    pub fn content_hash(&self) -> String {
        match &self.known_hash {
            Some(hash) => hash.to_string(),
            None => super::digest::layer(self.files.iter().map(|(n, t)| (n.as_str(), t.as_ref()))),
        }
    }

    /// [`BundleSource::content_hash`], and from the same pass over the files the hash of the
    /// files followed by `then` (`(name, text)`, framed as a file is): a project's trust covers
    /// its layer and its state, and the hook needs both on every call. Without `then` the two
    /// are the same.
    pub fn content_hashes(&self, then: Option<(&str, &str)>) -> (String, String) {
        super::digest::layer_then(self.files.iter().map(|(n, t)| (n.as_str(), t.as_ref())), then)
    }

    /// Reads a bundle directory: `modes/*.toml|*.md`, `policies/**/*.toml|*.rhai`,
    /// `patterns/*.toml`, `providers/*.toml`. Files that cannot be read are diagnostics;
    /// the rest still load.
    pub fn read_dir(dir: &Path) -> (BundleSource, Vec<Diagnostic>) {
        let mut source = BundleSource::new(Origin::Directory(dir.to_path_buf()), BTreeMap::<String, String>::new());
        let label = source.label();
        let mut diagnostics = Vec::new();
        if !dir.is_dir() {
            diagnostics.push(
                Diagnostic::file(&label, format!("bundle directory `{label}` does not exist"))
                    .with_hint("a bundle is a directory holding modes/, policies/, patterns/ and providers/"),
            );
            return (source, diagnostics);
        }
        let mut total: u64 = 0;
        for folder in FOLDERS {
            let recursive = folder == "policies";
            let mut found = Vec::new();
            collect(&dir.join(folder), recursive, &mut found);
            for path in found {
                let Ok(relative) = path.strip_prefix(dir) else { continue };
                let relative = relative.to_string_lossy().replace('\\', "/");
                if !is_bundle_file(&relative) {
                    continue;
                }
                let shown = format!("{}/{relative}", label.trim_end_matches('/'));
                if total > MAX_BUNDLE_BYTES {
                    diagnostics.push(Diagnostic::file(
                        shown,
                        format!(
                            "not read: the bundle's files are more than the {MAX_BUNDLE_BYTES} bytes a bundle may have"
                        ),
                    ));
                    continue;
                }
                match read_bounded(&path) {
                    Ok(text) => {
                        total += text.len() as u64;
                        source.files.insert(relative, Text::from(text));
                    }
                    Err(message) => diagnostics.push(Diagnostic::file(shown, message)),
                }
            }
        }
        (source, diagnostics)
    }
}

/// True for the files a bundle is made of.
pub fn is_bundle_file(relative: &str) -> bool {
    let mut parts = relative.split('/');
    let folder = parts.next().unwrap_or("");
    let depth = relative.matches('/').count();
    match folder {
        "modes" => {
            depth == 1 && (relative.ends_with(".toml") || relative.ends_with(".md") || relative.ends_with(".rhai"))
        }
        "policies" => relative.ends_with(".toml") || relative.ends_with(".rhai"),
        "patterns" | "providers" => depth == 1 && relative.ends_with(".toml"),
        _ => false,
    }
}

/// How deep `policies/` may nest, and how many entries a bundle directory may list: a bundle is
/// small, and a directory the engine walks is untrusted.
const MAX_DEPTH: usize = 16;
const MAX_ENTRIES: usize = 10_000;

/// The files under `dir`, sorted. A symlink to a directory is not followed (two links to `.`
/// would make the walk endless); a symlink to a file is listed, and the bounded reader decides.
fn collect(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) {
    collect_within(dir, recursive, 0, out);
}

fn collect_within(dir: &Path, recursive: bool, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<(PathBuf, bool)> = entries
        .filter_map(|e| e.ok())
        .take(MAX_ENTRIES)
        .map(|e| (e.path(), e.file_type().is_ok_and(|t| t.is_dir())))
        .collect();
    entries.sort();
    for (path, is_dir) in entries {
        if out.len() >= MAX_ENTRIES {
            return;
        }
        if is_dir {
            if recursive && depth < MAX_DEPTH {
                collect_within(&path, recursive, depth + 1, out);
            }
        } else {
            out.push(path);
        }
    }
}

fn read_bounded(path: &Path) -> Result<String, String> {
    crate::bounded::read_text(path, MAX_FILE_BYTES).map_err(|e| match e {
        crate::bounded::ReadError::TooLarge { limit } => {
            format!("the file is more than the {limit} bytes a bundle file may have")
        }
        crate::bounded::ReadError::NotText { valid_up_to } => format!("the file is not UTF-8 (byte {valid_up_to})"),
        other => format!("cannot read the file: {other}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle_dir() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for folder in FOLDERS {
            std::fs::create_dir_all(t.path().join(folder)).unwrap();
        }
        std::fs::write(t.path().join("modes/fine.toml"), "id = \"fine\"\n").unwrap();
        t
    }

    /// Each file kind the engine must not read is a diagnostic naming the file; the others load.
    #[cfg(unix)]
    #[test]
    fn files_that_are_not_regular_or_too_large_are_diagnostics_and_the_rest_load() {
        let t = bundle_dir();
        std::os::unix::fs::symlink("/dev/zero", t.path().join("modes/zero.toml")).unwrap();
        let fifo = t.path().join("policies/hang.rhai");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        std::fs::write(
            t.path().join("patterns/big.toml"),
            vec![b'#'; usize::try_from(MAX_FILE_BYTES).unwrap() + 1],
        )
        .unwrap();
        let (source, diagnostics) = BundleSource::read_dir(t.path());
        assert!(source.files.contains_key("modes/fine.toml"));
        assert_eq!(source.files.len(), 1, "{:?}", source.files.keys());
        let messages: Vec<String> = diagnostics.iter().map(|d| d.to_string()).collect();
        assert_eq!(messages.len(), 3, "{messages:?}");
        for (file, says) in [
            ("zero.toml", "a device"),
            ("hang.rhai", "a FIFO"),
            ("big.toml", "more than"),
        ] {
            assert!(
                messages.iter().any(|m| m.contains(file) && m.contains(says)),
                "{file}: {messages:?}"
            );
        }
    }

    /// Many files each within the bound still add up to a bounded read.
    #[test]
    fn a_bundle_is_read_to_a_total_bound() {
        let t = bundle_dir();
        let files = MAX_BUNDLE_BYTES / MAX_FILE_BYTES + 4;
        for i in 0..files {
            let file = std::fs::File::create(t.path().join(format!("policies/p{i:03}.toml"))).unwrap();
            // Sparse: read as zeros, nothing on disk.
            file.set_len(MAX_FILE_BYTES).unwrap();
        }
        let (source, diagnostics) = BundleSource::read_dir(t.path());
        let read: u64 = source.files.values().map(|t| t.len() as u64).sum();
        assert!(read <= MAX_BUNDLE_BYTES + MAX_FILE_BYTES, "{read}");
        assert!(diagnostics.iter().any(|d| d.to_string().contains("a bundle may have")));
    }

    /// The shipped bundle's hash, made by the build script, is the one made of its files now.
    #[test]
    fn the_shipped_hash_is_the_hash_of_its_files() {
        let shipped = crate::shipped::source();
        let now = super::super::digest::layer(shipped.files.iter().map(|(n, t)| (n.as_str(), t.as_ref())));
        assert_eq!(shipped.content_hash(), now);
        let mut changed = BundleSource::from_files("copy", shipped.files);
        assert_eq!(changed.content_hash(), now);
        changed.files.insert("modes/x.toml".into(), Text::Embedded(""));
        assert_ne!(changed.content_hash(), now);
        // Lengths go in first: moving a byte from a path to its text changes the hash.
        let a = BundleSource::from_files("a", [("ab", "c")]);
        let b = BundleSource::from_files("b", [("a", "bc")]);
        assert_ne!(a.content_hash(), b.content_hash());
    }

    /// Two symlinks to `.` would make a walk that follows them endless (2^40 paths).
    #[cfg(unix)]
    #[test]
    fn symlinked_directories_are_not_walked() {
        let t = bundle_dir();
        std::os::unix::fs::symlink(".", t.path().join("policies/a")).unwrap();
        std::os::unix::fs::symlink(".", t.path().join("policies/b")).unwrap();
        std::fs::write(t.path().join("policies/p.toml"), "id = \"p\"\n").unwrap();
        let (source, _) = BundleSource::read_dir(t.path());
        assert!(source.files.contains_key("policies/p.toml"));
        assert_eq!(source.files.len(), 2);
    }
}
