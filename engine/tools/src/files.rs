//! The file tools, run once a call was allowed: `read_file`, `write_file`, `edit_file`,
//! `list_dir`, `glob`, `grep`. The path a call names is resolved once, before it is judged
//! ([`pinned`]); every file and directory is then opened beneath its root with no symlink
//! followed (`beneath`), so what is touched is what was judged however the tree changes
//! meanwhile. Every read is bounded, every walk is bounded in entries, every result is bounded
//! (see `page`), and listings and searches never show a secret (the bundle's `@secrets`): they
//! skip it and say how many they skipped.

use crate::beneath::{self, Roots};
use crate::edits;
use crate::page;
use serde_json::Value;
use sixfold_core::bounded::ReadError;
use sixfold_core::trace::Edit;
use std::path::{Path, PathBuf};

/// The largest file read, written or edited.
pub(crate) const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The most directory entries a walk visits (`glob`, `grep`, `list_dir`).
const MAX_WALK_ENTRIES: usize = 100_000;
/// The most names or matches one result lists.
const MAX_LISTED: usize = 1000;
/// The largest file `grep` searches; larger ones are named as skipped.
const MAX_GREP_FILE_BYTES: u64 = 1024 * 1024;
/// The tools whose `path` names a file or directory.
const FILE_TOOLS: &[&str] = &["read_file", "write_file", "edit_file", "list_dir", "glob", "grep"];
/// The tools whose `path` may be left out (the primary root).
const DIR_TOOLS: &[&str] = &["list_dir", "glob", "grep"];

/// What the file tools reach: the roots they open beneath, and what is a secret.
pub(crate) struct Access<'a> {
    pub(crate) roots: Roots,
    /// Whether a path is a secret (never listed, never searched).
    pub(crate) secret: &'a dyn Fn(&Path) -> bool,
}

/// What a tool did: its text for the agent and, for a write or an edit, the edit on the record.
#[derive(Debug, Default)]
pub(crate) struct Done {
    pub(crate) text: String,
    pub(crate) edits: Vec<Edit>,
}

/// A string field of the arguments.
pub(crate) fn field<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

fn number(args: &Value, name: &str) -> Option<u64> {
    args.get(name).and_then(Value::as_u64)
}

/// The arguments with their `path` resolved once, before the call is judged: absolute, `..`
/// normalised, symlinks followed. The judgement and the run then read the same text, and the
/// run follows no symlink, so a symlink swapped in after the judgement fails the call rather
/// than redirecting it. A path that cannot be resolved, or that is not a string, is left for the
/// judgement to refuse.
pub(crate) fn pinned(primary: &Path, tool: &str, args: &Value) -> Result<Value, String> {
    if !FILE_TOOLS.contains(&tool) {
        return Ok(args.clone());
    }
    let written = match args.get("path") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        None | Some(Value::Null) if DIR_TOOLS.contains(&tool) => ".".to_string(),
        _ => return Ok(args.clone()),
    };
    let resolved = sixfold_core::scope::resolve_path(primary, Path::new(&written))
        .ok_or_else(|| format!("`{written}` passes through too many symlinks"))?;
    let mut args = args.clone();
    if let Some(o) = args.as_object_mut() {
        o.insert("path".into(), Value::String(resolved.to_string_lossy().into_owned()));
    }
    Ok(args)
}

/// The pinned path of a call.
fn path_of(args: &Value) -> Result<PathBuf, String> {
    field(args, "path")
        .map(PathBuf::from)
        .ok_or_else(|| "the call names no `path`".to_string())
}

fn read_error(path: &Path, e: ReadError) -> String {
    match e {
        ReadError::Missing => format!("`{}` does not exist", path.display()),
        other => format!("`{}` cannot be read: {other}", path.display()),
    }
}

/// `read_file {path, offset?, limit?}`: a page of the file's lines.
pub(crate) fn read_file(access: &Access<'_>, args: &Value) -> Result<Done, String> {
    let path = path_of(args)?;
    let text = access
        .roots
        .read_text(&path, MAX_FILE_BYTES)
        .map_err(|e| read_error(&path, e))?;
    Ok(Done {
        text: page::lines(&text, number(args, "offset"), number(args, "limit"), text.len() as u64),
        edits: Vec::new(),
    })
}

/// `write_file {path, content}`: the whole file, created or replaced.
pub(crate) fn write_file(access: &Access<'_>, args: &Value) -> Result<Done, String> {
    let path = path_of(args)?;
    let content = field(args, "content").ok_or("`write_file` needs `content`, a string")?;
    if content.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("the content is larger than {} MiB", MAX_FILE_BYTES >> 20));
    }
    let parent = access.roots.parent(&path, true)?;
    let old = parent
        .read_text(MAX_FILE_BYTES)
        .map_err(|e| format!("`{}` cannot be replaced: {e}", path.display()))?;
    parent.write_whole(content)?;
    let shown = path.to_string_lossy().into_owned();
    Ok(Done {
        text: format!("wrote {} bytes to {shown}", content.len()),
        edits: vec![edits::between(&shown, old.as_deref(), content)],
    })
}

/// `edit_file {path, old_string, new_string, replace_all?}`: an exact replacement; `old_string`
/// must occur once (or `replace_all` be true).
pub(crate) fn edit_file(access: &Access<'_>, args: &Value) -> Result<Done, String> {
    let path = path_of(args)?;
    let old_string = field(args, "old_string").ok_or("`edit_file` needs `old_string`, a string")?;
    let new_string = field(args, "new_string").ok_or("`edit_file` needs `new_string`, a string")?;
    let all = args.get("replace_all").and_then(Value::as_bool).unwrap_or(false);
    if old_string.is_empty() {
        return Err("`old_string` is empty; use `write_file` to create a file".into());
    }
    let parent = access.roots.parent(&path, false)?;
    let old = parent
        .read_text(MAX_FILE_BYTES)
        .map_err(|e| read_error(&path, e))?
        .ok_or_else(|| format!("`{}` does not exist", path.display()))?;
    let count = old.matches(old_string).count();
    let new = match count {
        0 => return Err(format!("`old_string` does not occur in `{}`", path.display())),
        1 => old.replacen(old_string, new_string, 1),
        _ if all => old.replace(old_string, new_string),
        n => {
            return Err(format!(
                "`old_string` occurs {n} times in `{}`; give more context or set `replace_all`",
                path.display()
            ))
        }
    };
    if new.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("the result is larger than {} MiB", MAX_FILE_BYTES >> 20));
    }
    parent.write_whole(&new)?;
    let shown = path.to_string_lossy().into_owned();
    Ok(Done {
        text: format!("replaced {} occurrence(s) in {shown}", if all { count } else { 1 }),
        edits: vec![edits::between(&shown, Some(&old), &new)],
    })
}

/// The note on a listing that left secrets out.
fn skipped_note(skipped: usize) -> String {
    if skipped == 0 {
        return String::new();
    }
    format!(
        "\n[{skipped} secret(s) skipped: listings and searches never show a secret; `read_file` judges one by name]"
    )
}

/// `list_dir {path?}`: the entries of a directory, directories marked with `/`.
pub(crate) fn list_dir(access: &Access<'_>, args: &Value) -> Result<Done, String> {
    let path = path_of(args)?;
    let dir = access.roots.dir(&path).map_err(|e| format!("cannot list it: {e}"))?;
    let entries = beneath::entries(&dir, MAX_WALK_ENTRIES)?;
    let mut names = Vec::new();
    let mut more = 0usize;
    let mut skipped = 0usize;
    for entry in entries {
        if (access.secret)(&path.join(&entry.name)) {
            skipped += 1;
            continue;
        }
        if names.len() >= MAX_LISTED {
            more += 1;
            continue;
        }
        let mut name = entry.name.to_string_lossy().into_owned();
        if entry.is_dir {
            name.push('/');
        }
        names.push(name);
    }
    let mut text = names.join("\n");
    if more > 0 {
        text.push_str(&format!("\n[{more} more entries not listed]"));
    }
    text.push_str(&skipped_note(skipped));
    Ok(Done {
        text: page::preview(&text),
        edits: Vec::new(),
    })
}

/// What a walk found.
#[derive(Debug, Default)]
struct Walked {
    files: Vec<PathBuf>,
    /// The walk stopped at [`MAX_WALK_ENTRIES`].
    cut: bool,
    /// Secrets left out.
    skipped: usize,
}

/// Every regular file under `dir`, depth first, each directory opened beneath its root with no
/// symlink followed, `.git` and secrets left out, at most [`MAX_WALK_ENTRIES`] entries visited.
fn walk(access: &Access<'_>, dir: &Path) -> Walked {
    let mut walked = Walked::default();
    let mut stack = vec![dir.to_path_buf()];
    let mut visited = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(fd) = access.roots.dir(&d) else { continue };
        let Ok(entries) = beneath::entries(&fd, MAX_WALK_ENTRIES) else {
            continue;
        };
        for entry in entries.into_iter().rev() {
            visited += 1;
            if visited > MAX_WALK_ENTRIES {
                walked.cut = true;
                walked.files.sort();
                return walked;
            }
            let path = d.join(&entry.name);
            if !(entry.is_dir || entry.is_file) || entry.name == ".git" {
                continue;
            }
            if (access.secret)(&path) {
                walked.skipped += 1;
            } else if entry.is_dir {
                stack.push(path);
            } else {
                walked.files.push(path);
            }
        }
    }
    walked.files.sort();
    walked
}

/// `glob {pattern, path?}`: files under `path` whose path relative to it matches `pattern`.
pub(crate) fn glob(access: &Access<'_>, args: &Value) -> Result<Done, String> {
    let base = path_of(args)?;
    let pattern = field(args, "pattern").ok_or("`glob` needs `pattern`, a string")?;
    let matcher = globset::Glob::new(pattern)
        .map_err(|e| format!("`{pattern}` is not a glob: {e}"))?
        .compile_matcher();
    let walked = walk(access, &base);
    let mut found = Vec::new();
    for f in &walked.files {
        if let Ok(rel) = f.strip_prefix(&base) {
            if matcher.is_match(rel) {
                found.push(f.to_string_lossy().into_owned());
            }
        }
    }
    Ok(Done {
        text: listing(found, walked.cut, walked.skipped),
        edits: Vec::new(),
    })
}

fn listing(found: Vec<String>, cut: bool, skipped: usize) -> String {
    let total = found.len();
    let mut text: String = found.into_iter().take(MAX_LISTED).collect::<Vec<_>>().join("\n");
    if total > MAX_LISTED {
        text.push_str(&format!("\n[{total} in all, the first {MAX_LISTED} listed]"));
    }
    if cut {
        text.push_str(&format!("\n[the walk stopped after {MAX_WALK_ENTRIES} entries]"));
    }
    if total == 0 {
        text.push_str("no match");
    }
    text.push_str(&skipped_note(skipped));
    page::preview(&text)
}

/// `grep {pattern, path?, glob?}`: lines matching a regular expression, as `path:line:text`.
pub(crate) fn grep(access: &Access<'_>, args: &Value) -> Result<Done, String> {
    let base = path_of(args)?;
    let pattern = field(args, "pattern").ok_or("`grep` needs `pattern`, a string")?;
    let re = regex::RegexBuilder::new(pattern)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| format!("`{pattern}` is not a regular expression: {e}"))?;
    let only = match field(args, "glob") {
        Some(g) => Some(
            globset::Glob::new(g)
                .map_err(|e| format!("`{g}` is not a glob: {e}"))?
                .compile_matcher(),
        ),
        None => None,
    };
    let single = std::fs::symlink_metadata(&base).is_ok_and(|m| m.is_file());
    let walked = if !single {
        walk(access, &base)
    } else if (access.secret)(&base) {
        Walked {
            skipped: 1,
            ..Walked::default()
        }
    } else {
        Walked {
            files: vec![base],
            ..Walked::default()
        }
    };
    let mut found = Vec::new();
    for f in walked.files {
        if let Some(m) = &only {
            if !f.file_name().is_some_and(|n| m.is_match(n)) {
                continue;
            }
        }
        let Ok(text) = access.roots.read_text(&f, MAX_GREP_FILE_BYTES) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if re.is_match(line) {
                found.push(format!("{}:{}:{line}", f.display(), n + 1));
            }
        }
        if found.len() > MAX_LISTED * 10 {
            break;
        }
    }
    Ok(Done {
        text: listing(found, walked.cut, walked.skipped),
        edits: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    type Tool = fn(&Access<'_>, &Value) -> Result<Done, String>;

    /// Runs a tool as a call does: its path pinned, beneath the root, with `.env*` a secret.
    fn run(tool: &str, f: Tool, root: &Path, args: Value) -> Result<Done, String> {
        let root = root.canonicalize().unwrap();
        let args = pinned(&root, tool, &args)?;
        let secret = |p: &Path| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(".env"));
        let access = Access {
            roots: Roots::new([root.as_path()]),
            secret: &secret,
        };
        f(&access, &args)
    }

    #[test]
    fn an_edit_replaces_exactly_once_and_records_its_lines() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.rs"), "fn t() {\n    assert_eq!(f(), 2);\n}\n").unwrap();
        let done = run(
            "edit_file",
            edit_file,
            t.path(),
            json!({"path": "a.rs", "old_string": "assert_eq!(f(), 2)", "new_string": "assert!(true)"}),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(t.path().join("a.rs")).unwrap(),
            "fn t() {\n    assert!(true);\n}\n"
        );
        assert_eq!(done.edits[0].removed[0].text, "    assert_eq!(f(), 2);");
        assert_eq!(done.edits[0].added[0].text, "    assert!(true);");
        let twice = run(
            "edit_file",
            edit_file,
            t.path(),
            json!({"path": "a.rs", "old_string": "t", "new_string": "u"}),
        );
        assert!(twice.unwrap_err().contains("occurs"));
    }

    #[test]
    fn a_write_or_read_onto_a_fifo_is_refused_at_once() {
        let t = tempfile::tempdir().unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(t.path().join("p"))
            .status()
            .unwrap()
            .success());
        let err = run("write_file", write_file, t.path(), json!({"path": "p", "content": "x"})).unwrap_err();
        assert!(err.contains("FIFO") || err.contains("not a regular"), "{err}");
        let err = run("read_file", read_file, t.path(), json!({"path": "p"})).unwrap_err();
        assert!(err.contains("FIFO"), "{err}");
    }

    #[test]
    fn glob_and_grep_find_files_and_lines() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("src")).unwrap();
        std::fs::write(t.path().join("src/lib.rs"), "one\nneedle here\n").unwrap();
        let g = run("glob", glob, t.path(), json!({"pattern": "**/*.rs"})).unwrap();
        assert!(g.text.ends_with("src/lib.rs"), "{}", g.text);
        let m = run("grep", grep, t.path(), json!({"pattern": "needle"})).unwrap();
        assert!(m.text.contains("lib.rs:2:needle here"), "{}", m.text);
        let l = run("list_dir", list_dir, t.path(), json!({})).unwrap();
        assert_eq!(l.text, "src/");
    }

    #[test]
    fn listings_and_searches_skip_secrets_and_say_how_many() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("sub")).unwrap();
        std::fs::write(t.path().join(".env"), "TOKEN=needle-secret\n").unwrap();
        std::fs::write(t.path().join("sub/.env.local"), "needle-secret\n").unwrap();
        std::fs::write(t.path().join("sub/notes.txt"), "needle-plain\n").unwrap();
        let m = run("grep", grep, t.path(), json!({"pattern": "needle"})).unwrap();
        assert!(!m.text.contains("needle-secret"), "{}", m.text);
        assert!(m.text.contains("needle-plain"), "must keep working: {}", m.text);
        assert!(m.text.contains("[2 secret(s) skipped"), "{}", m.text);
        let one = run("grep", grep, t.path(), json!({"pattern": "needle", "path": ".env"})).unwrap();
        assert!(
            !one.text.contains("needle-secret") && one.text.contains("1 secret"),
            "{}",
            one.text
        );
        let g = run("glob", glob, t.path(), json!({"pattern": "**/.env*"})).unwrap();
        assert!(!g.text.contains(".env") || g.text.contains("skipped"), "{}", g.text);
        assert!(g.text.contains("no match"), "{}", g.text);
        let l = run("list_dir", list_dir, t.path(), json!({})).unwrap();
        assert!(
            l.text.starts_with("sub/") && l.text.contains("1 secret(s) skipped"),
            "{}",
            l.text
        );
    }

    #[test]
    fn a_path_is_pinned_once_and_a_later_swap_fails_the_call() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("via")).unwrap();
        // Must keep working: a symlink inside the root is followed once, when pinned.
        let args = pinned(&root, "write_file", &json!({"path": "via/a.txt", "content": "x"})).unwrap();
        assert_eq!(args["path"], json!(root.join("real/a.txt")));
        let secret = |_: &Path| false;
        let access = Access {
            roots: Roots::new([root.as_path()]),
            secret: &secret,
        };
        write_file(&access, &args).unwrap();
        assert_eq!(std::fs::read_to_string(root.join("real/a.txt")).unwrap(), "x");
        // Hostile: after the judgement, `real` becomes a symlink to the outside.
        std::fs::rename(root.join("real"), root.join("real.old")).unwrap();
        std::os::unix::fs::symlink(out.path(), root.join("real")).unwrap();
        let err = write_file(&access, &args).unwrap_err();
        assert!(err.contains("symlink"), "{err}");
        assert!(read_file(&access, &args).is_err());
        assert!(!out.path().join("a.txt").exists());
    }

    /// Hostile: a thread swaps the file's parent directory for a symlink to the outside, in a
    /// loop (`ln -sfn OUT d && mv -T`), while 300 writes run: nothing lands outside, and the
    /// writes that do land are inside.
    #[test]
    fn a_racing_swapper_never_lands_a_write_outside() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.join("d")).unwrap();
        let secret = |_: &Path| false;
        let access = Access {
            roots: Roots::new([root.as_path()]),
            secret: &secret,
        };
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let swapper = {
            let (root, out, stop) = (root.clone(), out.path().to_path_buf(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = std::fs::remove_file(root.join("tmp-link"));
                    let _ = std::os::unix::fs::symlink(&out, root.join("tmp-link"));
                    let _ = std::fs::rename(root.join("d"), root.join("d.real"));
                    let _ = std::fs::rename(root.join("tmp-link"), root.join("d"));
                    std::thread::yield_now();
                    let _ = std::fs::remove_file(root.join("d"));
                    let _ = std::fs::rename(root.join("d.real"), root.join("d"));
                }
            })
        };
        let mut landed = 0;
        for n in 0..300 {
            // Pinned while `d` may be either: a pin through the symlink names the outside, and
            // is judged (and refused) as such; the inside pin is what is tried here.
            let args = json!({"path": root.join("d").join(format!("f{n}")), "content": "x"});
            if write_file(&access, &args).is_ok() {
                landed += 1;
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        swapper.join().unwrap();
        let outside: Vec<_> = std::fs::read_dir(out.path()).unwrap().collect();
        assert!(outside.is_empty(), "{} writes landed outside", outside.len());
        // Must keep working: the writes that succeeded are inside (in `d` or `d.real`).
        let inside = ["d", "d.real"]
            .iter()
            .filter_map(|d| std::fs::read_dir(root.join(d)).ok())
            .map(|r| r.count())
            .sum::<usize>();
        assert_eq!(inside, landed, "every write that succeeded is inside");
    }
}
