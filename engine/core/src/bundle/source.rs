//! Where bundle files come from: a directory on disk, or the shipped bundle embedded in the binary.

use crate::diag::Diagnostic;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bundle files larger than this are refused: a policy file is small, and untrusted input is bounded.
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;

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

/// One bundle's files, by path relative to the bundle's root (`/`-separated).
#[derive(Debug, Clone)]
pub struct BundleSource {
    /// Where the files come from.
    pub origin: Origin,
    /// Path relative to the bundle root → text.
    pub files: BTreeMap<String, String>,
}

impl BundleSource {
    /// A source from files of a given origin.
    pub fn new<I, P, T>(origin: Origin, files: I) -> BundleSource
    where
        I: IntoIterator<Item = (P, T)>,
        P: Into<String>,
        T: Into<String>,
    {
        BundleSource {
            origin,
            files: files.into_iter().map(|(p, t)| (p.into(), t.into())).collect(),
        }
    }

    /// A source from in-memory files named `label` in diagnostics (tests, benches).
    pub fn from_files<I, P, T>(label: &str, files: I) -> BundleSource
    where
        I: IntoIterator<Item = (P, T)>,
        P: Into<String>,
        T: Into<String>,
    {
        BundleSource::new(Origin::Memory(label.to_string()), files)
    }

    /// How files of this source are named in diagnostics: a directory, `<shipped>`, a name.
    pub fn label(&self) -> String {
        self.origin.label()
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
                match read_bounded(&path) {
                    Ok(text) => {
                        source.files.insert(relative, text);
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

fn collect(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            if recursive {
                collect(&path, recursive, out);
            }
        } else {
            out.push(path);
        }
    }
}

fn read_bounded(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read the file: {e}"))?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "the file is {} bytes, more than the {MAX_FILE_BYTES} a bundle file may have",
            meta.len()
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read the file: {e}"))?;
    String::from_utf8(bytes).map_err(|e| format!("the file is not UTF-8 (byte {})", e.utf8_error().valid_up_to()))
}
