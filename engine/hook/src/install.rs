//! `sixfold install claude-code`: sixfold's hook entries in Claude Code's `settings.json`,
//! merged with what is there, idempotent, a backup kept; `uninstall` removes exactly them.

use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The hook events sixfold registers, and whether they take a tool matcher.
pub const EVENTS: [(&str, bool); 5] = [
    ("PreToolUse", true),
    ("PostToolUse", true),
    ("Stop", false),
    ("SessionStart", false),
    ("UserPromptSubmit", false),
];

/// The arguments after the binary that mark a hook command as sixfold's.
const MARK: &str = "hook claude-code";

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

/// The hook command for a sixfold binary.
pub fn command_for(binary: &Path) -> String {
    let shown = binary.to_string_lossy();
    let quoted = if shown.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        shown.into_owned()
    } else {
        format!("'{}'", shown.replace('\'', "'\\''"))
    };
    format!("{quoted} {MARK}")
}

fn is_ours(hook: &Value) -> bool {
    let Some(command) = hook.get("command").and_then(|c| c.as_str()) else {
        return false;
    };
    command
        .trim_end()
        .strip_suffix(MARK)
        .is_some_and(|program| program.trim().trim_matches('\'').ends_with("sixfold"))
}

/// The settings with sixfold's entries added (nothing added twice).
pub fn install(settings: &Value, command: &str) -> Result<Value, String> {
    let mut root = match settings {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        _ => return Err("the settings file is not a JSON object".into()),
    };
    let hooks = root.entry("hooks").or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks
        .as_object_mut()
        .ok_or("`hooks` in the settings is not an object")?;
    for (event, matcher) in EVENTS {
        let list = hooks.entry(event).or_insert_with(|| Value::Array(Vec::new()));
        let list = list
            .as_array_mut()
            .ok_or_else(|| format!("`hooks.{event}` in the settings is not a list"))?;
        let present = list.iter().any(|entry| {
            entry.get("hooks").and_then(|h| h.as_array()).is_some_and(|hs| {
                hs.iter()
                    .any(|h| h.get("command").and_then(|c| c.as_str()) == Some(command))
            })
        });
        if present {
            continue;
        }
        let mut entry = json!({ "hooks": [{ "type": "command", "command": command }] });
        if matcher {
            if let Some(obj) = entry.as_object_mut() {
                obj.insert("matcher".into(), "*".into());
            }
        }
        list.push(entry);
    }
    Ok(Value::Object(root))
}

/// The settings with sixfold's hooks removed, and entries, lists and `hooks` left empty by
/// that removed too; everything else as it was.
pub fn uninstall(settings: &Value) -> Value {
    let mut settings = settings.clone();
    let Some(hooks) = settings.get_mut("hooks").and_then(|h| h.as_object_mut()) else {
        return settings;
    };
    for list in hooks.values_mut() {
        let Some(entries) = list.as_array_mut() else { continue };
        entries.retain_mut(|entry| {
            let Some(hs) = entry.get_mut("hooks").and_then(|h| h.as_array_mut()) else {
                return true;
            };
            let before = hs.len();
            hs.retain(|h| !is_ours(h));
            !(hs.is_empty() && before > 0)
        });
    }
    hooks.retain(|_, list| list.as_array().is_none_or(|l| !l.is_empty()));
    if hooks.is_empty() {
        if let Some(obj) = settings.as_object_mut() {
            obj.remove("hooks");
        }
    }
    settings
}

/// Reads a settings file (absent: empty).
pub fn read(path: &Path) -> Result<Value, String> {
    match std::fs::read_to_string(path) {
        Ok(text) if text.trim().is_empty() => Ok(Value::Null),
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("`{}` is not valid JSON: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Null),
        Err(e) => Err(format!("cannot read `{}`: {e}", path.display())),
    }
}

/// Writes settings, keeping the previous file as `settings.json.bak`.
pub fn write(path: &Path, settings: &Value) -> Result<Option<PathBuf>, String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    let backup = if path.exists() {
        let backup = path.with_extension("json.bak");
        std::fs::copy(path, &backup).map_err(|e| format!("cannot keep a backup at `{}`: {e}", backup.display()))?;
        Some(backup)
    } else {
        None
    };
    let text = serde_json::to_string_pretty(settings).map_err(|e| format!("cannot write the settings: {e}"))?;
    std::fs::write(path, text + "\n").map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    Ok(backup)
}

/// Pretty JSON of settings as the file would hold it (`""` for none).
pub fn pretty(settings: &Value) -> String {
    if settings.is_null() {
        return String::new();
    }
    serde_json::to_string_pretty(settings)
        .map(|t| t + "\n")
        .unwrap_or_default()
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

    #[test]
    fn install_merges_is_idempotent_and_uninstall_removes_exactly_it() {
        let existing = json!({
            "model": "x",
            "hooks": { "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "other-tool check" }] }] }
        });
        let cmd = command_for(Path::new("/usr/local/bin/sixfold"));
        let once = install(&existing, &cmd).unwrap();
        let twice = install(&once, &cmd).unwrap();
        assert_eq!(once, twice);
        assert_eq!(once["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
        assert_eq!(
            once["hooks"]["Stop"][0]["hooks"][0]["command"],
            "/usr/local/bin/sixfold hook claude-code"
        );
        assert!(once["hooks"]["Stop"][0].get("matcher").is_none());
        assert_eq!(uninstall(&once), existing);
        assert_eq!(uninstall(&install(&Value::Null, &cmd).unwrap()), json!({}));
    }

    #[test]
    fn odd_paths_are_quoted() {
        assert_eq!(
            command_for(Path::new("/opt/my tools/sixfold")),
            "'/opt/my tools/sixfold' hook claude-code"
        );
        assert!(is_ours(&json!({"command": "'/opt/my tools/sixfold' hook claude-code"})));
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
