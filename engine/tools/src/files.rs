//! The file tools, run once a call was allowed: `read_file`, `write_file`, `edit_file`,
//! `list_dir`, `glob`, `grep`. Every file is read through the core's bounded reader (regular files
//! only, size-bounded), every walk is bounded in entries and never follows a symlink, and every
//! result is bounded (see `page`).

use crate::edits;
use crate::page;
use serde_json::Value;
use sixfold_core::bounded::{self, ReadError};
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

/// A path argument resolved as the judgement resolved it: absolute, or relative to the primary
/// root, with existing symlinks followed, so the file touched is the one that was judged.
pub(crate) fn resolve(primary: &Path, written: &str) -> Result<PathBuf, String> {
    sixfold_core::scope::resolve_path(primary, Path::new(written))
        .ok_or_else(|| format!("`{written}` passes through too many symlinks"))
}

fn read_text(path: &Path) -> Result<String, String> {
    bounded::read_text(path, MAX_FILE_BYTES).map_err(|e| match e {
        ReadError::Missing => format!("`{}` does not exist", path.display()),
        other => format!("`{}` cannot be read: {other}", path.display()),
    })
}

/// `read_file {path, offset?, limit?}`: a page of the file's lines.
pub(crate) fn read_file(primary: &Path, args: &Value) -> Result<Done, String> {
    let path = resolve(primary, field(args, "path").unwrap_or_default())?;
    let text = read_text(&path)?;
    Ok(Done {
        text: page::lines(&text, number(args, "offset"), number(args, "limit"), text.len() as u64),
        edits: Vec::new(),
    })
}

/// Writes `content` to `path` through a temporary file renamed into place, so a reader never
/// sees half of it; a symlink or a special file in place is refused (not written through).
fn write_whole(path: &Path, content: &str) -> Result<(), String> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_file() {
            return Err(format!("`{}` is not a regular file", path.display()));
        }
    }
    let dir = path
        .parent()
        .ok_or_else(|| format!("`{}` has no directory", path.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.sixfold-{}", std::process::id()));
    std::fs::write(&tmp, content).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write `{}`: {e}", path.display())
    })
}

/// `write_file {path, content}`: the whole file, created or replaced.
pub(crate) fn write_file(primary: &Path, args: &Value) -> Result<Done, String> {
    let path = resolve(primary, field(args, "path").unwrap_or_default())?;
    let content = field(args, "content").ok_or("`write_file` needs `content`, a string")?;
    if content.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("the content is larger than {} MiB", MAX_FILE_BYTES >> 20));
    }
    let old = match bounded::read_text(&path, MAX_FILE_BYTES) {
        Ok(text) => Some(text),
        Err(ReadError::Missing) => None,
        Err(e) => return Err(format!("`{}` cannot be replaced: {e}", path.display())),
    };
    write_whole(&path, content)?;
    let shown = path.to_string_lossy().into_owned();
    Ok(Done {
        text: format!("wrote {} bytes to {shown}", content.len()),
        edits: vec![edits::between(&shown, old.as_deref(), content)],
    })
}

/// `edit_file {path, old_string, new_string, replace_all?}`: an exact replacement; `old_string`
/// must occur once (or `replace_all` be true).
pub(crate) fn edit_file(primary: &Path, args: &Value) -> Result<Done, String> {
    let path = resolve(primary, field(args, "path").unwrap_or_default())?;
    let old_string = field(args, "old_string").ok_or("`edit_file` needs `old_string`, a string")?;
    let new_string = field(args, "new_string").ok_or("`edit_file` needs `new_string`, a string")?;
    let all = args.get("replace_all").and_then(Value::as_bool).unwrap_or(false);
    if old_string.is_empty() {
        return Err("`old_string` is empty; use `write_file` to create a file".into());
    }
    let old = read_text(&path)?;
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
    write_whole(&path, &new)?;
    let shown = path.to_string_lossy().into_owned();
    Ok(Done {
        text: format!("replaced {} occurrence(s) in {shown}", if all { count } else { 1 }),
        edits: vec![edits::between(&shown, Some(&old), &new)],
    })
}

/// `list_dir {path?}`: the entries of a directory, directories marked with `/`.
pub(crate) fn list_dir(primary: &Path, args: &Value) -> Result<Done, String> {
    let path = resolve(primary, field(args, "path").unwrap_or("."))?;
    let entries = std::fs::read_dir(&path).map_err(|e| format!("cannot list `{}`: {e}", path.display()))?;
    let mut names = Vec::new();
    let mut more = 0usize;
    for entry in entries.take(MAX_WALK_ENTRIES).flatten() {
        if names.len() >= MAX_LISTED {
            more += 1;
            continue;
        }
        let mut name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            name.push('/');
        }
        names.push(name);
    }
    names.sort();
    let mut text = names.join("\n");
    if more > 0 {
        text.push_str(&format!("\n[{more} more entries not listed]"));
    }
    Ok(Done {
        text: page::preview(&text),
        edits: Vec::new(),
    })
}

/// Every regular file under `dir`, depth first, without following symlinks, at most
/// [`MAX_WALK_ENTRIES`] entries visited; the second value says whether the walk was cut.
fn walk(dir: &Path) -> (Vec<PathBuf>, bool) {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut visited = 0usize;
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        let mut here: Vec<_> = entries.flatten().collect();
        here.sort_by_key(|e| e.file_name());
        for entry in here.into_iter().rev() {
            visited += 1;
            if visited > MAX_WALK_ENTRIES {
                return (files, true);
            }
            match entry.file_type() {
                Ok(t) if t.is_dir() && entry.file_name() != ".git" => stack.push(entry.path()),
                Ok(t) if t.is_file() => files.push(entry.path()),
                _ => {}
            }
        }
    }
    files.sort();
    (files, false)
}

/// `glob {pattern, path?}`: files under `path` whose path relative to it matches `pattern`.
pub(crate) fn glob(primary: &Path, args: &Value) -> Result<Done, String> {
    let base = resolve(primary, field(args, "path").unwrap_or("."))?;
    let pattern = field(args, "pattern").ok_or("`glob` needs `pattern`, a string")?;
    let matcher = globset::Glob::new(pattern)
        .map_err(|e| format!("`{pattern}` is not a glob: {e}"))?
        .compile_matcher();
    let (files, cut) = walk(&base);
    let mut found = Vec::new();
    for f in &files {
        if let Ok(rel) = f.strip_prefix(&base) {
            if matcher.is_match(rel) {
                found.push(f.to_string_lossy().into_owned());
            }
        }
    }
    Ok(Done {
        text: listing(found, cut),
        edits: Vec::new(),
    })
}

fn listing(found: Vec<String>, cut: bool) -> String {
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
    page::preview(&text)
}

/// `grep {pattern, path?, glob?}`: lines matching a regular expression, as `path:line:text`.
pub(crate) fn grep(primary: &Path, args: &Value) -> Result<Done, String> {
    let base = resolve(primary, field(args, "path").unwrap_or("."))?;
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
    let (files, cut) = if base.is_file() {
        (vec![base], false)
    } else {
        walk(&base)
    };
    let mut found = Vec::new();
    for f in files {
        if let Some(m) = &only {
            if !f.file_name().is_some_and(|n| m.is_match(n)) {
                continue;
            }
        }
        let Ok(text) = bounded::read_text(&f, MAX_GREP_FILE_BYTES) else {
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
        text: listing(found, cut),
        edits: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_edit_replaces_exactly_once_and_records_its_lines() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.rs"), "fn t() {\n    assert_eq!(f(), 2);\n}\n").unwrap();
        let done = edit_file(
            t.path(),
            &json!({"path": "a.rs", "old_string": "assert_eq!(f(), 2)", "new_string": "assert!(true)"}),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(t.path().join("a.rs")).unwrap(),
            "fn t() {\n    assert!(true);\n}\n"
        );
        assert_eq!(done.edits[0].removed[0].text, "    assert_eq!(f(), 2);");
        assert_eq!(done.edits[0].added[0].text, "    assert!(true);");
        let twice = edit_file(t.path(), &json!({"path": "a.rs", "old_string": "t", "new_string": "u"}));
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
        let err = write_file(t.path(), &json!({"path": "p", "content": "x"})).unwrap_err();
        assert!(err.contains("FIFO") || err.contains("not a regular"), "{err}");
        let err = read_file(t.path(), &json!({"path": "p"})).unwrap_err();
        assert!(err.contains("FIFO"), "{err}");
    }

    #[test]
    fn glob_and_grep_find_files_and_lines() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("src")).unwrap();
        std::fs::write(t.path().join("src/lib.rs"), "one\nneedle here\n").unwrap();
        let g = glob(t.path(), &json!({"pattern": "**/*.rs"})).unwrap();
        assert!(g.text.ends_with("src/lib.rs"), "{}", g.text);
        let m = grep(t.path(), &json!({"pattern": "needle"})).unwrap();
        assert!(m.text.contains("lib.rs:2:needle here"), "{}", m.text);
        let l = list_dir(t.path(), &json!({})).unwrap();
        assert_eq!(l.text, "src/");
    }
}
