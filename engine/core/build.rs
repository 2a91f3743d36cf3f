//! Embeds the shipped bundle (the repository's top-level `modes/`, `policies/`, `patterns/`,
//! `providers/`) so an installed `sixfold` works from any directory.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

// The content hash, shared with the core so the shipped bundle's hash, made here once, is the
// one the core would make of the same files.
#[allow(dead_code)]
#[path = "src/bundle/digest.rs"]
mod digest;

// The SHA-256 the content hash is made with (`crate::sha256` in both crates).
#[allow(dead_code, unreachable_pub)]
#[path = "src/sha256.rs"]
mod sha256;

// What a selection reads of a file's text, read here once for every shipped file.
#[allow(dead_code)]
#[path = "src/bundle/written.rs"]
mod written;

// The kinds of a built node, the same list `built` reads them by.
#[path = "src/built/kinds.rs"]
mod kinds;

// The tree a document is built into, made the same way for a stored parsed layer at run time.
#[allow(dead_code)]
#[path = "src/built/make.rs"]
mod make;
use make::Built;

/// Splits `+++\n<toml>\n+++\n<body>` as `bundle::read::front_matter` does: the TOML's place.
fn front_matter(text: &str) -> Option<(usize, usize)> {
    let start = if text.starts_with("+++\n") {
        4
    } else if text.starts_with("+++\r\n") {
        5
    } else {
        return None;
    };
    let end = text.get(start..)?.find("\n+++")?;
    Some((start, start + end + 1))
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// One rule of `policies/commands.toml`: its byte range, its id, the programs it is for.
type Block = (usize, usize, String, Vec<String>);

/// Cuts `policies/commands.toml` at its `[[commands]]` lines: the length of the text before the
/// first, and each rule with its `id` and the programs of its `prefix`'s first word, read from
/// lines of their own. `None` when any of it is not certain from the text (a multi-line string,
/// another table, a key spelt otherwise, an escape): the file is then read whole. The core's tests
/// check the cut against the file as parsed.
fn cut_commands(text: &str) -> Option<(usize, Vec<Block>)> {
    if text.contains("\"\"\"") || text.contains("'''") || text.contains('\r') {
        return None;
    }
    let mut starts = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        if line.trim_end() == "[[commands]]" {
            starts.push(at);
        } else if t.starts_with('[') || t.starts_with("commands") || t.starts_with("\"commands") {
            return None;
        }
        at += line.len();
    }
    let header = *starts.first()?;
    let mut blocks = Vec::new();
    for (i, start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        let block = text.get(*start..end)?;
        let (mut id, mut programs) = (None, None);
        for line in block.lines().skip(1) {
            let t = line.trim_start();
            // A quoted key could be `id` or `prefix` spelt otherwise (values of multi-line
            // arrays start with a quote too).
            let quoted = t.strip_prefix(['"', '\'']);
            if quoted.is_some_and(|q| {
                q.starts_with("id") || q.starts_with("prefix") || q.contains("\\u") || q.contains("\\U")
            }) {
                return None;
            }
            if let Some(value) = t.strip_prefix("id = \"") {
                if id.is_some() {
                    return None;
                }
                id = Some(plain(value)?);
            } else if t.starts_with("id") {
                return None;
            }
            if let Some(value) = t.strip_prefix("prefix = [\"") {
                if programs.is_some() {
                    return None;
                }
                programs = Some(plain(value)?.split('|').map(String::from).collect::<Vec<_>>());
            } else if t.starts_with("prefix") {
                return None;
            }
        }
        blocks.push((*start, end, id?, programs?));
    }
    Some((header, blocks))
}

/// The text up to the closing quote of a basic string without escapes.
fn plain(value: &str) -> Option<String> {
    let (inner, _) = value.split_once('"')?;
    (!inner.contains('\\') && !inner.is_empty()).then(|| inner.to_string())
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../..");
    let mut code = String::from("/// The shipped bundle's files: path relative to the bundle root, and text.\npub(crate) static FILES: &[(&str, &str)] = &[\n");
    // The files as embedded, for their hash (in path order, as a loaded source holds them).
    let mut hashed: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    let mut commands_path = String::new();
    let mut facts = String::from(
        "/// What a selection reads of each of [`FILES`] (its written id, whether it may add to the\n\
         /// whole bundle), read by the build with `bundle::written`.\n\
         pub(crate) static FACTS: &[Facts] = &[\n",
    );
    let mut documents = String::from(
        "/// The documents of [`FILES`] parsed by the build: the file's index, the place of the text\n\
         /// parsed, its root in [`NODES`].\n\
         pub(crate) static DOCUMENTS: &[(usize, usize, usize, u32)] = &[\n",
    );
    let mut built = Built::default();
    let mut index = 0usize;
    let mut files = Vec::new();
    for folder in ["modes", "policies", "patterns", "providers"] {
        let dir = root.join(folder);
        println!("cargo:rerun-if-changed={}", dir.display());
        collect(&dir, &mut files);
    }
    // In the order of their paths as text, so a file is found by a binary search.
    let mut files: Vec<(String, PathBuf)> = files
        .into_iter()
        .filter_map(|file| {
            let name = file.strip_prefix(&root).ok()?.to_string_lossy().replace('\\', "/");
            let keep = name.ends_with(".toml") || name.ends_with(".md") || name.ends_with(".rhai");
            (keep && !name.ends_with("README.md")).then_some((name, file))
        })
        .collect();
    files.sort();
    for (name, file) in files {
        let absolute = file.canonicalize().unwrap_or(file.clone());
        let text = std::fs::read_to_string(&absolute).unwrap_or_default();
        let _ = writeln!(
            facts,
            "    ({:?}, {}),",
            written::written_id(&text),
            written::adds_to_the_whole_bundle(&text)
        );
        // The document a load parses: a `.md` mode's front matter; of the command rules, the
        // text before them (the classifier reads the rules from their cut).
        let place = if name.ends_with(".md") {
            front_matter(&text)
        } else if name == "policies/commands.toml" {
            cut_commands(&text).map(|(header, _)| (0, header))
        } else if name.ends_with(".toml") {
            Some((0, text.len()))
        } else {
            None
        };
        let mut places: Vec<(usize, usize)> = place.into_iter().collect();
        // Each command rule, which the classifier parses when a step names its program.
        if name == "policies/commands.toml" {
            let blocks = cut_commands(&text).map(|(_, blocks)| blocks).unwrap_or_default();
            places.extend(blocks.iter().map(|(start, end, _, _)| (*start, *end)));
        }
        for (start, end) in places {
            if let Some(root) = text.get(start..end).and_then(|t| built.document(t)) {
                let _ = writeln!(documents, "    ({index}, {start}, {end}, {root}),");
            }
        }
        index += 1;
        hashed.insert(name.clone(), text);
        // The command rules' text lives with their cut, in the classifier (`commands_cut.rs`).
        if name == "policies/commands.toml" {
            let _ = writeln!(code, "    ({name:?}, COMMANDS),");
            commands_path = absolute.display().to_string();
            continue;
        }
        let _ = writeln!(
            code,
            "    ({name:?}, include_str!({:?})),",
            absolute.display().to_string()
        );
    }
    code.push_str("];\n");
    let _ = writeln!(
        code,
        "/// The shipped `policies/commands.toml`.\npub(crate) static COMMANDS: &str = include_str!({commands_path:?});"
    );
    code.push_str(&facts);
    code.push_str("];\n");
    code.push_str(&documents);
    code.push_str("];\n");
    let _ = writeln!(
        code,
        "/// The built documents' nodes (see `bundle::built`).\npub(crate) static NODES: &[[u32; 5]] = &["
    );
    for node in &built.nodes {
        let _ = writeln!(code, "    {node:?},");
    }
    let _ = writeln!(
        code,
        "];\n/// The strings the built nodes hold.\npub(crate) static STRINGS: &str = {:?};",
        built.strings
    );
    let hash = digest::layer(hashed.iter().map(|(n, t)| (n.as_str(), t.as_str())));
    let _ = writeln!(
        code,
        "/// The content hash of [`FILES`] (see `bundle::digest`).\npub(crate) static HASH: &str = {hash:?};"
    );
    // The build of the formats a parsed layer is stored in (`bundle::parsed`): the core's source
    // and the locked crates' versions (the TOML parser's spans among them). A change to either
    // names every stored layer anew, so none made by another build is ever read.
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=../../Cargo.lock");
    let mut sources = Vec::new();
    collect(&manifest.join("src"), &mut sources);
    let mut formed: Vec<(String, String)> = sources
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .map(|p| {
            let name = p
                .strip_prefix(&manifest)
                .unwrap_or(p)
                .to_string_lossy()
                .replace('\\', "/");
            (name, std::fs::read_to_string(p).unwrap_or_default())
        })
        .collect();
    formed.push((
        "Cargo.lock".into(),
        std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default(),
    ));
    formed.push(("version".into(), std::env::var("CARGO_PKG_VERSION").unwrap_or_default()));
    let format = digest::layer(formed.iter().map(|(n, t)| (n.as_str(), t.as_str())));
    let format = format
        .strip_prefix("sha256:")
        .unwrap_or(&format)
        .get(..16)
        .unwrap_or_default()
        .to_string();
    // Its own file: `bundle::parsed` includes it without importing `shipped`, which imports
    // `bundle`.
    let formed =
        format!("/// The build of the stored parsed layers' format.\npub(crate) static FORMAT: &str = {format:?};\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let commands = hashed
        .get("policies/commands.toml")
        .map(String::as_str)
        .unwrap_or_default();
    let cut = format!(
        "/// The shipped `policies/commands.toml` (embedded once, in `built`).\npub(crate) static TEXT: &str = crate::built::COMMANDS;\n\
         /// Where its first rule starts, and each rule's byte range, id and the programs its prefix\n\
         /// starts with; `None` when it could not be cut for certain (it is then read whole).\n\
         pub(crate) static CUT: Option<(usize, &[Block])> = {};\n",
        cut_commands(commands)
            .map(|(header, blocks)| {
                let blocks: Vec<String> = blocks
                    .iter()
                    .map(|(start, end, id, programs)| format!("({start}, {end}, {id:?}, &{programs:?})"))
                    .collect();
                format!("Some(({header}, &[{}]))", blocks.join(", "))
            })
            .unwrap_or_else(|| "None".into())
    );
    for (name, text) in [
        ("shipped.rs", &code),
        ("parsed_format.rs", &formed),
        ("commands_cut.rs", &cut),
    ] {
        if let Err(err) = std::fs::write(out.join(name), text) {
            println!("cargo:warning=cannot write the embedded {name}: {err}");
        }
    }
}
