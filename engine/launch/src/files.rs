//! The launcher's file work: copying a tree into a working directory it owns, hashing the
//! governing documents, and walking the directories above the working directory for memory files.

use sixfold_core::launch_facts::{CopyFacts, MemoryWalkFacts};
use sixfold_core::sha256::Sha256;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Directories the governing-document walk does not enter: they hold no governing documents and
/// can be huge.
pub(crate) const WALK_SKIPS: [&str; 3] = [".git", "node_modules", "target"];

/// Entries the governing-document walk looks at before it stops (and says it stopped).
pub(crate) const WALK_LIMIT: usize = 200_000;

/// The value of a hashed path that did not exist.
pub(crate) const ABSENT: &str = "absent";

/// Copies the tree at `src` into `dst` (which must not exist). Links are recreated as links.
pub(crate) fn copy_tree(src: &Path, dst: &Path) -> Result<CopyFacts, String> {
    let src = src
        .canonicalize()
        .map_err(|e| format!("cannot read `{}`: {e}", src.display()))?;
    if !src.is_dir() {
        return Err(format!("`{}` is not a directory", src.display()));
    }
    let mut stats = CopyFacts::default();
    copy_dir(&src, &src, dst, &mut stats)?;
    Ok(stats)
}

fn copy_dir(root: &Path, from: &Path, to: &Path, stats: &mut CopyFacts) -> Result<(), String> {
    std::fs::create_dir(to).map_err(|e| format!("cannot create `{}`: {e}", to.display()))?;
    stats.dirs += 1;
    let entries = std::fs::read_dir(from).map_err(|e| format!("cannot read `{}`: {e}", from.display()))?;
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry
            .file_type()
            .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        if kind.is_symlink() {
            let link =
                std::fs::read_link(&path).map_err(|e| format!("cannot read the link `{}`: {e}", path.display()))?;
            let resolved = if link.is_absolute() {
                link.clone()
            } else {
                from.join(&link)
            };
            let inside = resolved.canonicalize().map(|r| r.starts_with(root)).unwrap_or(false);
            if !inside {
                let shown = path.strip_prefix(root).unwrap_or(&path).display().to_string();
                stats.symlinks_outside.push(shown);
            }
            make_link(&link, &target)?;
            stats.symlinks += 1;
        } else if kind.is_dir() {
            copy_dir(root, &path, &target, stats)?;
        } else {
            let n = std::fs::copy(&path, &target)
                .map_err(|e| format!("cannot copy `{}` to `{}`: {e}", path.display(), target.display()))?;
            stats.files += 1;
            stats.bytes += n;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn make_link(link: &Path, at: &Path) -> Result<(), String> {
    std::os::unix::fs::symlink(link, at).map_err(|e| format!("cannot create the link `{}`: {e}", at.display()))
}

#[cfg(not(unix))]
fn make_link(link: &Path, at: &Path) -> Result<(), String> {
    std::fs::copy(link, at)
        .map(|_| ())
        .map_err(|e| format!("cannot copy `{}`: {e}", link.display()))
}

/// The SHA-256 of a file's content, in hex; `absent` when it does not exist.
pub(crate) fn hash_file(path: &Path) -> Result<String, String> {
    let mut file = match sixfold_core::bounded::open(path) {
        Ok(f) => f,
        Err(sixfold_core::bounded::ReadError::Missing) => return Ok(ABSENT.into()),
        Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    let mut hasher = Sha256::sized(usize::try_from(len).unwrap_or(usize::MAX));
    let mut buf = [0u8; 64 * 1024];
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        if n == 0 {
            break;
        }
        hasher.update(buf.get(..n).unwrap_or_default());
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The governing documents of a working directory, found and hashed.
#[derive(Debug, Clone, Default)]
pub(crate) struct Governing {
    /// Path (relative to the working directory when inside it) → SHA-256, `absent`, or
    /// `unreadable: …`.
    pub(crate) hashes: BTreeMap<String, String>,
    /// False when the walk stopped at [`WALK_LIMIT`] entries.
    pub(crate) complete: bool,
}

/// The project whose `.sixfold/` bundle governs a run in `workdir`, found by the rule the hook
/// uses (bounded by the repository, never at or above the home), when it has one.
pub(crate) fn bundle_project(workdir: &Path) -> Option<PathBuf> {
    let project = sixfold_core::project::place(workdir).ok()?;
    sixfold_core::project::dir(&project).is_dir().then_some(project)
}

/// Finds and hashes the governing documents of `workdir`: every file named like a name in
/// `names` without `/` anywhere in the tree (but in [`WALK_SKIPS`]), each name with `/` at that
/// path, the policy bundle in `.sixfold/` of the project that governs it (see
/// [`bundle_project`]; it may lie above `workdir`), and the `extra` paths (relative to `workdir`,
/// or absolute).
pub(crate) fn governing(workdir: &Path, names: &[String], extra: &[PathBuf]) -> Governing {
    let mut found: Vec<(String, PathBuf)> = Vec::new();
    let bare: Vec<&str> = names.iter().filter(|n| !n.contains('/')).map(String::as_str).collect();
    let mut seen = 0usize;
    let mut complete = true;
    let mut pending = vec![workdir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            seen += 1;
            if seen > WALK_LIMIT {
                complete = false;
                pending.clear();
                break;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if !WALK_SKIPS.contains(&name.as_ref()) && name != ".sixfold" {
                    pending.push(entry.path());
                }
            } else if bare.contains(&name.as_ref()) {
                found.push((relative(workdir, &entry.path()), entry.path()));
            }
        }
    }
    for name in names.iter().filter(|n| n.contains('/')) {
        let path = workdir.join(name);
        if path.exists() {
            found.push((name.clone(), path));
        }
    }
    if let Some(project) = bundle_project(workdir) {
        let bundle = project.join(".sixfold");
        let mut bundle_files = Vec::new();
        collect_files(&bundle, &mut bundle_files);
        for path in bundle_files {
            let rel = path
                .strip_prefix(&bundle)
                .map(|r| r.to_string_lossy().replace('\\', "/"))
                .unwrap_or_default();
            if sixfold_core::bundle::source::is_bundle_file(&rel) {
                found.push((relative(workdir, &path), path));
            }
        }
    }
    for path in extra {
        let absolute = if path.is_absolute() {
            path.clone()
        } else {
            workdir.join(path)
        };
        found.push((relative(workdir, &absolute), absolute));
    }
    let hashes = found
        .into_iter()
        .map(|(key, path)| {
            let hash = hash_file(&path).unwrap_or_else(|e| format!("unreadable: {e}"));
            (key, hash)
        })
        .collect();
    Governing { hashes, complete }
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(Result::ok) {
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_files(&entry.path(), out),
            Ok(kind) if kind.is_file() => out.push(entry.path()),
            _ => {}
        }
    }
}

/// `path` relative to `base` (`/`-separated) when inside it, else absolute.
pub(crate) fn relative(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(r) => r.to_string_lossy().replace('\\', "/"),
        Err(_) => path.display().to_string(),
    }
}

/// Before and after, side by side: every path either saw, `absent` on the side it was missing.
pub(crate) fn pair(before: &Governing, after: &Governing) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let mut b = before.hashes.clone();
    let mut a = after.hashes.clone();
    for key in before.hashes.keys() {
        a.entry(key.clone()).or_insert_with(|| ABSENT.into());
    }
    for key in after.hashes.keys() {
        b.entry(key.clone()).or_insert_with(|| ABSENT.into());
    }
    (b, a)
}

/// Walks the ancestors of `workdir` for memory files.
pub(crate) fn memory_above(workdir: &Path, names: &[String]) -> MemoryWalkFacts {
    let mut walk = MemoryWalkFacts {
        from: workdir.display().to_string(),
        names: names.to_vec(),
        ..MemoryWalkFacts::default()
    };
    for dir in workdir.ancestors().skip(1) {
        walk.dirs.push(dir.display().to_string());
        for name in names {
            let path = dir.join(name);
            if path.is_file() {
                walk.found.push(path.display().to_string());
            }
        }
    }
    walk
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn a_copy_is_whole_and_links_stay_links() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("src");
        std::fs::create_dir_all(src.join("a/b")).unwrap();
        std::fs::write(src.join("a/b/f.txt"), "hello").unwrap();
        std::fs::write(src.join("top"), "x").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("top", src.join("inner-link")).unwrap();
            std::os::unix::fs::symlink("/etc/hostname", src.join("outer-link")).unwrap();
        }
        let dst = t.path().join("dst");
        let stats = copy_tree(&src, &dst).unwrap();
        assert_eq!(std::fs::read_to_string(dst.join("a/b/f.txt")).unwrap(), "hello");
        assert_eq!(stats.files, 2);
        #[cfg(unix)]
        {
            assert_eq!(stats.symlinks, 2);
            assert_eq!(stats.symlinks_outside, vec!["outer-link".to_string()]);
            assert!(dst
                .join("inner-link")
                .symlink_metadata()
                .unwrap()
                .file_type()
                .is_symlink());
        }
        assert!(copy_tree(&src, &dst).is_err(), "the destination must be new");
    }

    #[test]
    fn governing_documents_are_found_and_hashed() {
        let t = tempfile::tempdir().unwrap();
        let w = t.path();
        std::fs::create_dir_all(w.join("sub/.claude")).unwrap();
        std::fs::create_dir_all(w.join("node_modules/x")).unwrap();
        std::fs::create_dir_all(w.join(".sixfold/policies")).unwrap();
        std::fs::write(w.join("CLAUDE.md"), "a").unwrap();
        std::fs::write(w.join("sub/CLAUDE.md"), "b").unwrap();
        std::fs::write(w.join("node_modules/x/CLAUDE.md"), "skipped").unwrap();
        std::fs::write(w.join(".sixfold/policies/p.toml"), "id = 'p'").unwrap();
        std::fs::write(w.join(".sixfold/state.toml"), "mode = 'ask'").unwrap();
        std::fs::write(w.join("extra.txt"), "e").unwrap();
        let names = vec!["CLAUDE.md".to_string(), ".claude/CLAUDE.md".to_string()];
        let g = governing(w, &names, &[PathBuf::from("extra.txt")]);
        let keys: Vec<&str> = g.hashes.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [".sixfold/policies/p.toml", "CLAUDE.md", "extra.txt", "sub/CLAUDE.md"]
        );
        assert!(g.complete);
        assert_eq!(
            g.hashes["CLAUDE.md"],
            "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
        );
        std::fs::write(w.join("sub/CLAUDE.md"), "changed").unwrap();
        std::fs::write(w.join(".claude-new"), "").unwrap();
        std::fs::create_dir_all(w.join(".claude")).unwrap();
        std::fs::write(w.join(".claude/CLAUDE.md"), "new").unwrap();
        let after = governing(w, &names, &[PathBuf::from("extra.txt")]);
        let (b, a) = pair(&g, &after);
        assert_eq!(b[".claude/CLAUDE.md"], ABSENT);
        assert_ne!(a[".claude/CLAUDE.md"], ABSENT);
        assert_ne!(b["sub/CLAUDE.md"], a["sub/CLAUDE.md"]);
        assert_eq!(b["CLAUDE.md"], a["CLAUDE.md"]);
    }

    #[test]
    fn the_governing_bundle_may_lie_above() {
        let t = tempfile::tempdir().unwrap();
        let inner = t.path().join("a/b");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::create_dir_all(t.path().join("a/.sixfold/modes")).unwrap();
        std::fs::write(t.path().join("a/.sixfold/modes/m.toml"), "id = 'm'").unwrap();
        assert_eq!(bundle_project(&inner), Some(t.path().join("a")));
        let g = governing(&inner, &[], &[]);
        let above = t.path().join("a/.sixfold/modes/m.toml").display().to_string();
        assert_eq!(g.hashes.keys().collect::<Vec<_>>(), [&above]);
    }

    #[test]
    fn memory_files_above_are_found() {
        let t = tempfile::tempdir().unwrap();
        let inner = t.path().join("a/b");
        std::fs::create_dir_all(&inner).unwrap();
        std::fs::write(t.path().join("a/CLAUDE.md"), "x").unwrap();
        std::fs::write(inner.join("CLAUDE.md"), "inside: not counted").unwrap();
        let walk = memory_above(&inner, &["CLAUDE.md".into()]);
        assert_eq!(walk.found, vec![t.path().join("a/CLAUDE.md").display().to_string()]);
        assert_eq!(walk.dirs.first().unwrap(), &t.path().join("a").display().to_string());
    }
}
