//! `sixfold install claude-code|codex`: the I/O around the core's writer of hook settings
//! (`sixfold_core::hook_settings`): where Claude Code's settings file is (Codex's config file is
//! [`crate::install_codex`]'s), reading a settings file bounded, writing it with a backup kept,
//! and showing a change as a diff. What is registered, and what `uninstall` removes, is the
//! provider file's `[hooks]` table.

use sixfold_core::bundle::Bundle;
use sixfold_core::format::HooksFile;
use std::path::{Path, PathBuf};

/// Settings files larger than this are not read: they are untrusted input.
const MAX_SETTINGS_BYTES: u64 = 4 * 1024 * 1024;

/// The `[hooks]` table of a provider in a bundle: what install registers and uninstall removes.
pub fn spec<'b>(bundle: &'b Bundle, provider: &str) -> Result<&'b HooksFile, String> {
    bundle
        .provider(provider)
        .ok_or_else(|| format!("the bundle has no provider `{provider}`"))?
        .spec
        .hooks
        .as_ref()
        .ok_or_else(|| format!("providers/{provider}.toml has no `[hooks]` table, so sixfold cannot install its hooks"))
}

/// The settings file for a scope: the project's `.claude/settings.json`, or the user's
/// (`$CLAUDE_CONFIG_DIR/settings.json` when set, else `~/.claude/settings.json`).
pub fn settings_path(
    project: Option<&Path>,
    config_dir: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Result<PathBuf, String> {
    match project {
        Some(root) => Ok(root.join(".claude").join("settings.json")),
        None => match (config_dir, home) {
            (Some(dir), _) => Ok(dir.join("settings.json")),
            (None, Some(home)) => Ok(home.join(".claude").join("settings.json")),
            (None, None) => Err("neither CLAUDE_CONFIG_DIR nor HOME is set".into()),
        },
    }
}

/// Claude Code's local settings beside a project's shared `.claude/settings.json`:
/// `.claude/settings.local.json`, which stays on this machine (it is not meant to be committed),
/// so the only place for a hook that names this machine's binary by its path.
pub fn local_settings_path(project: &Path) -> PathBuf {
    project.join(".claude").join("settings.local.json")
}

/// Whether two settings texts say the same (as JSON, else as TOML), however they are laid out.
pub fn same_content(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    if let (Ok(x), Ok(y)) = (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        return x == y;
    }
    matches!((a.parse::<toml::Table>(), b.parse::<toml::Table>()), (Ok(x), Ok(y)) if x == y)
}

/// What [`write_without_litter`] removed besides writing.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tidied {
    /// The file itself, which then held nothing.
    pub file: bool,
    /// Its `<name>.bak`, which held nothing but what the file holds now and sixfold's hooks.
    pub backup: Option<PathBuf>,
    /// Its directory, left empty.
    pub dir: Option<PathBuf>,
}

/// Writes what `uninstall` leaves of a settings file, and no litter: no backup of sixfold's own
/// hooks, a file that then holds nothing removed (`{}` is nothing), a `<name>.bak` that says
/// nothing the file does not say now once sixfold's hooks are taken from it (`strip`) removed,
/// and with `tidy_dir`, the file's directory when that leaves it empty.
pub fn write_without_litter(
    path: &Path,
    text: &str,
    strip: &dyn Fn(&str) -> Result<String, String>,
    tidy_dir: bool,
) -> Result<Tidied, String> {
    let mut tidied = Tidied::default();
    let empty = sixfold_core::hook_settings::holds_nothing(text);
    if empty {
        match std::fs::remove_file(path) {
            Ok(()) => tidied.file = true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot remove `{}`: {e}", path.display())),
        }
    } else {
        std::fs::write(path, text).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    }
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".bak");
    let backup = path.with_file_name(name);
    if let Ok(kept) = read_text(&backup) {
        let redundant = backup.is_file()
            && strip(&kept)
                .is_ok_and(|k| same_content(&k, text) || (empty && sixfold_core::hook_settings::holds_nothing(&k)));
        if redundant && std::fs::remove_file(&backup).is_ok() {
            tidied.backup = Some(backup);
        }
    }
    if let (true, Some(dir)) = (tidy_dir, path.parent()) {
        // Only an empty directory is removed; one with anything in it stays.
        if std::fs::remove_dir(dir).is_ok() {
            tidied.dir = Some(dir.to_path_buf());
        }
    }
    Ok(tidied)
}

/// sixfold's hook commands in a settings file's text (JSON or TOML), each once: what `sixfold
/// doctor` runs to see whether they answer.
pub fn sixfold_commands(text: &str, spec: &HooksFile) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut consider = |c: &str| {
        if sixfold_core::hook_settings::is_registered(c, spec) && !found.iter().any(|f| f == c) {
            found.push(c.to_string());
        }
    };
    if let Ok(json) = serde_json::from_str::<serde_json::Value>(text) {
        let events = json.get("hooks").and_then(serde_json::Value::as_object);
        for entries in events.into_iter().flat_map(|h| h.values()) {
            for entry in entries.as_array().into_iter().flatten() {
                let handlers = entry.get("hooks").and_then(serde_json::Value::as_array);
                for hook in handlers.into_iter().flatten() {
                    consider(
                        hook.get("command")
                            .and_then(serde_json::Value::as_str)
                            .unwrap_or_default(),
                    );
                }
            }
        }
    } else if let Ok(toml) = text.parse::<toml::Table>() {
        for (_, entries) in toml.get("hooks").and_then(toml::Value::as_table).into_iter().flatten() {
            for entry in entries.as_array().into_iter().flatten() {
                let handlers = entry.get("hooks").and_then(toml::Value::as_array);
                for hook in handlers.into_iter().flatten() {
                    consider(hook.get("command").and_then(toml::Value::as_str).unwrap_or_default());
                }
            }
        }
    }
    found
}

/// Reads a settings file's text (absent: empty), at most 4 MiB of it: it is untrusted.
pub fn read_text(path: &Path) -> Result<String, String> {
    match sixfold_core::bounded::read_text(path, MAX_SETTINGS_BYTES) {
        Ok(text) => Ok(text),
        Err(sixfold_core::bounded::ReadError::Missing) => Ok(String::new()),
        Err(e) => Err(format!("cannot read `{}`: {e}", path.display())),
    }
}

/// Writes a settings file's text, keeping the previous file beside it as `<name>.bak`.
pub fn write_text(path: &Path, text: &str) -> Result<Option<PathBuf>, String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    let backup = if path.exists() {
        let mut name = path.file_name().unwrap_or_default().to_os_string();
        name.push(".bak");
        let backup = path.with_file_name(name);
        std::fs::copy(path, &backup).map_err(|e| format!("cannot keep a backup at `{}`: {e}", backup.display()))?;
        Some(backup)
    } else {
        None
    };
    std::fs::write(path, text).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    Ok(backup)
}

/// A line diff: `-` old, `+` new, ` ` both.
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // Longest common subsequence table; settings files are small.
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            let v = if a.get(i) == b.get(j) {
                lcs.get(i + 1).and_then(|r| r.get(j + 1)).copied().unwrap_or(0) + 1
            } else {
                let down = lcs.get(i + 1).and_then(|r| r.get(j)).copied().unwrap_or(0);
                let right = lcs.get(i).and_then(|r| r.get(j + 1)).copied().unwrap_or(0);
                down.max(right)
            };
            if let Some(cell) = lcs.get_mut(i).and_then(|r| r.get_mut(j)) {
                *cell = v;
            }
        }
    }
    let at = |i: usize, j: usize| lcs.get(i).and_then(|r| r.get(j)).copied().unwrap_or(0);
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if x == y => {
                out.push_str(&format!("  {x}\n"));
                i += 1;
                j += 1;
            }
            (Some(x), _) if j >= b.len() || at(i + 1, j) >= at(i, j + 1) => {
                out.push_str(&format!("- {x}\n"));
                i += 1;
            }
            (_, Some(y)) => {
                out.push_str(&format!("+ {y}\n"));
                j += 1;
            }
            _ => break,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::{json, Value};
    use sixfold_core::hook_settings::{command, is_registered, register, unregister};

    /// The shipped Claude Code provider file's `[hooks]` table: the data install reads.
    fn claude_code() -> HooksFile {
        let (bundle, diagnostics) = Bundle::load(&[sixfold_core::shipped::source()]);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        spec(&bundle, crate::claude_code::PROVIDER).unwrap().clone()
    }

    #[test]
    fn install_merges_is_idempotent_and_uninstall_removes_exactly_it() {
        let spec = claude_code();
        let existing = json!({
            "model": "x",
            "hooks": { "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "other-tool check" }] }] }
        });
        let cmd = command("/usr/local/bin/sixfold", &spec);
        let once = register(&existing, &spec, &cmd).unwrap();
        let twice = register(&once, &spec, &cmd).unwrap();
        assert_eq!(once, twice);
        assert_eq!(once["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            once["hooks"]["Stop"][0]["hooks"][0]["command"],
            "/usr/local/bin/sixfold hook claude-code"
        );
        assert!(once["hooks"]["Stop"][0].get("matcher").is_none());
        assert_eq!(unregister(&once, &spec), existing);
        assert_eq!(
            unregister(&register(&Value::Null, &spec, &cmd).unwrap(), &spec),
            json!({})
        );
        let events: Vec<&str> = spec.events.iter().map(String::as_str).collect();
        assert_eq!(
            events,
            ["PreToolUse", "PostToolUse", "Stop", "SessionStart", "UserPromptSubmit"]
        );
    }

    #[test]
    fn odd_paths_are_quoted() {
        let spec = claude_code();
        assert_eq!(
            command("/opt/my tools/sixfold", &spec),
            "'/opt/my tools/sixfold' hook claude-code"
        );
        assert!(is_registered("'/opt/my tools/sixfold' hook claude-code", &spec));
    }

    #[test]
    fn a_settings_file_past_the_limit_is_not_read() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("settings.json");
        assert_eq!(read_text(&path).unwrap(), "");
        let big = vec![b' '; usize::try_from(MAX_SETTINGS_BYTES).unwrap() + 2];
        std::fs::write(&path, big).unwrap();
        assert!(read_text(&path).unwrap_err().contains("larger than"));
    }

    #[test]
    fn a_write_keeps_the_previous_file() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("d/config.toml");
        assert_eq!(write_text(&path, "a = 1\n").unwrap(), None);
        let backup = write_text(&path, "a = 2\n").unwrap().unwrap();
        assert_eq!(backup, t.path().join("d/config.toml.bak"));
        assert_eq!(std::fs::read_to_string(backup).unwrap(), "a = 1\n");
        assert_eq!(read_text(&path).unwrap(), "a = 2\n");
        assert_eq!(read_text(&t.path().join("none")).unwrap(), "");
    }

    #[test]
    fn diffs_show_added_lines() {
        let d = diff("a\nb\n", "a\nx\nb\n");
        assert_eq!(d, "  a\n+ x\n  b\n");
    }

    #[test]
    fn settings_paths() {
        assert_eq!(
            settings_path(Some(Path::new("/r")), None, None).unwrap(),
            PathBuf::from("/r/.claude/settings.json")
        );
        assert_eq!(
            settings_path(None, Some("/c".into()), Some("/h".into())).unwrap(),
            PathBuf::from("/c/settings.json")
        );
        assert_eq!(
            settings_path(None, None, Some("/h".into())).unwrap(),
            PathBuf::from("/h/.claude/settings.json")
        );
    }
}
