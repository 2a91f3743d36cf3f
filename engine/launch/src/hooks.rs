//! Installing sixfold's own hooks in a scratch config home, so a hermetic run is governed: the
//! hook command is the running sixfold binary with the provider file's arguments, registered for
//! the provider file's events. Only the file format is mechanism here.

use serde_json::{Map, Value};
use sixfold_core::format::HooksFile;
use std::path::Path;

/// Settings files larger than this are not read back.
const MAX_SETTINGS_BYTES: u64 = 4 * 1024 * 1024;

/// What was installed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Installed {
    /// The settings file written.
    pub file: String,
    /// The events registered.
    pub events: Vec<String>,
    /// The command each runs.
    pub command: String,
}

/// Quotes a word for a POSIX shell (hook commands are run by one).
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// The hook command: the sixfold binary and the provider file's arguments, quoted.
pub fn command(exe: &Path, spec: &HooksFile) -> String {
    std::iter::once(shell_quote(&exe.to_string_lossy()))
        .chain(spec.args.iter().map(|a| shell_quote(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Registers the hook command for every event in `spec`, in the settings file under
/// `config_home` (kept, when it is there, with the entries added), then reads it back to check.
pub fn install(config_home: &Path, spec: &HooksFile, exe: &Path) -> Result<Installed, String> {
    if spec.format != "settings-json" {
        return Err(format!(
            "the provider file's hooks format `{}` is not one sixfold can write (it knows `settings-json`)",
            spec.format
        ));
    }
    let path = config_home.join(&spec.file);
    let command = command(exe, spec);
    let mut settings = read_settings(&path)?.unwrap_or_else(|| Value::Object(Map::new()));
    let root = settings
        .as_object_mut()
        .ok_or_else(|| format!("`{}` is not a JSON object", path.display()))?;
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| format!("`hooks` in `{}` is not a JSON object", path.display()))?;
    for event in &spec.events {
        let mut entry = Map::new();
        if spec.tool_events.contains(event) {
            entry.insert(
                "matcher".into(),
                Value::String(spec.matcher.clone().unwrap_or_else(|| "*".into())),
            );
        }
        entry.insert(
            "hooks".into(),
            serde_json::json!([{ "type": "command", "command": command }]),
        );
        let list = hooks
            .entry(event.clone())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| format!("`hooks.{event}` in `{}` is not a list", path.display()))?;
        list.push(Value::Object(entry));
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(&settings).map_err(|e| format!("cannot write the hooks: {e}"))?;
    std::fs::write(&path, text + "\n").map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    let missing = missing_events(&path, spec, &command)?;
    if !missing.is_empty() {
        return Err(format!(
            "`{}` was written but does not register sixfold for {}",
            path.display(),
            missing.join(", ")
        ));
    }
    Ok(Installed {
        file: path.display().to_string(),
        events: spec.events.clone(),
        command,
    })
}

fn read_settings(path: &Path) -> Result<Option<Value>, String> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
        Ok(meta) if meta.len() > MAX_SETTINGS_BYTES => {
            return Err(format!(
                "`{}` is larger than {MAX_SETTINGS_BYTES} bytes",
                path.display()
            ))
        }
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| format!("`{}` is not JSON: {e}", path.display()))
}

/// The events of `spec` whose entries in the settings file do not run `command`.
pub fn missing_events(path: &Path, spec: &HooksFile, command: &str) -> Result<Vec<String>, String> {
    let settings = read_settings(path)?.unwrap_or(Value::Null);
    Ok(spec
        .events
        .iter()
        .filter(|event| {
            let entries = settings
                .get("hooks")
                .and_then(|h| h.get(event.as_str()))
                .and_then(Value::as_array);
            !entries.is_some_and(|list| {
                list.iter().any(|entry| {
                    entry.get("hooks").and_then(Value::as_array).is_some_and(|hs| {
                        hs.iter()
                            .any(|h| h.get("command").and_then(Value::as_str) == Some(command))
                    })
                })
            })
        })
        .cloned()
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    fn spec() -> HooksFile {
        HooksFile {
            format: "settings-json".into(),
            file: "settings.json".into(),
            events: vec!["PreToolUse".into(), "Stop".into()],
            tool_events: vec!["PreToolUse".into()],
            matcher: None,
            args: vec!["hook".into(), "claude-code".into()],
        }
    }

    #[test]
    fn hooks_are_written_and_kept_beside_other_settings() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(
            t.path().join("settings.json"),
            r#"{"model": "x", "hooks": {"Stop": [{"hooks": []}]}}"#,
        )
        .unwrap();
        let exe = Path::new("/opt/my tools/sixfold");
        let done = install(t.path(), &spec(), exe).unwrap();
        assert_eq!(done.command, "'/opt/my tools/sixfold' hook claude-code");
        let v: Value = serde_json::from_str(&std::fs::read_to_string(t.path().join("settings.json")).unwrap()).unwrap();
        assert_eq!(v["model"], "x");
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "*");
        assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["command"], done.command);
        assert!(v["hooks"]["Stop"][1].get("matcher").is_none());
        assert_eq!(v["hooks"]["Stop"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn quoting() {
        assert_eq!(shell_quote("/usr/bin/sixfold"), "/usr/bin/sixfold");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn an_unknown_format_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let mut s = spec();
        s.format = "yaml".into();
        assert!(install(t.path(), &s, Path::new("/t"))
            .unwrap_err()
            .contains("settings-json"));
    }
}
