//! Installing sixfold's own hooks in a scratch config home, so a hermetic run is governed: the
//! hook command is the running sixfold binary with the provider file's `[hooks]` arguments,
//! registered for its events. The entries are the core's (`hook_settings`, the one writer of
//! them; `hook_opencode` for OpenCode's plugin); this file reads and writes the files.

use sixfold_core::format::HooksFile;
use sixfold_core::{hook_opencode, hook_settings};
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

/// The hook command: the sixfold binary and the provider file's arguments, quoted.
pub fn command(exe: &Path, spec: &HooksFile) -> String {
    hook_settings::command(&exe.to_string_lossy(), spec)
}

/// Registers the hook command for every event in `spec`, in the settings file under
/// `config_home` (kept, when it is there, with the entries added; in the provider file's
/// format, `settings-json` or `config-toml`), then reads it back to check.
pub fn install(config_home: &Path, spec: &HooksFile, exe: &Path) -> Result<Installed, String> {
    if spec.format == OPENCODE_PLUGIN {
        return install_plugin(config_home, spec, exe);
    }
    let path = config_home.join(&spec.file);
    let command = command(exe, spec);
    let before = read_settings(&path)?;
    let text =
        hook_settings::register_text(&before, spec, &command).map_err(|e| format!("`{}`: {e}", path.display()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
    }
    std::fs::write(&path, text).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
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

/// OpenCode's hooks format: a plugin of its own, not a settings entry.
pub const OPENCODE_PLUGIN: &str = "opencode-plugin";

/// OpenCode: the deny-all permission rule in the config directory's `opencode.json` first, then
/// sixfold's plugin (`spec.file`), which lifts that rule once OpenCode has loaded it, so a
/// plugin that does not load leaves no tool able to run. Both read back.
fn install_plugin(config_home: &Path, spec: &HooksFile, exe: &Path) -> Result<Installed, String> {
    let command = command(exe, spec);
    let config = config_home.join(hook_opencode::CONFIG_FILE);
    let denied =
        hook_opencode::deny_text(&read_settings(&config)?).map_err(|e| format!("`{}`: {e}", config.display()))?;
    let plugin = config_home.join(&spec.file);
    let text = hook_opencode::plugin_text(&command);
    for (path, text) in [(&config, &denied), (&plugin, &text)] {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        }
        std::fs::write(path, text).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    }
    let config_back = read_settings(&config)?;
    if hook_opencode::deny_text(&config_back).ok().as_ref() != Some(&config_back) {
        return Err(format!(
            "`{}` was written but does not deny every tool until sixfold's plugin loads",
            config.display()
        ));
    }
    if read_settings(&plugin)? != text {
        return Err(format!(
            "`{}` was written but is not sixfold's plugin",
            plugin.display()
        ));
    }
    Ok(Installed {
        file: plugin.display().to_string(),
        events: spec.events.clone(),
        command,
    })
}

/// A settings file's text; absent, empty.
fn read_settings(path: &Path) -> Result<String, String> {
    match sixfold_core::bounded::read_text(path, MAX_SETTINGS_BYTES) {
        Ok(text) => Ok(text),
        Err(sixfold_core::bounded::ReadError::Missing) => Ok(String::new()),
        Err(e) => Err(format!("cannot read `{}`: {e}", path.display())),
    }
}

/// The events of `spec` whose entries in the settings file do not run `command`.
pub fn missing_events(path: &Path, spec: &HooksFile, command: &str) -> Result<Vec<String>, String> {
    let text = read_settings(path)?;
    hook_settings::missing_events_text(&text, spec, command).map_err(|e| format!("`{}`: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;
    use serde_json::Value;

    fn spec() -> HooksFile {
        HooksFile {
            format: "settings-json".into(),
            file: "settings.json".into(),
            events: vec!["PreToolUse".into(), "Stop".into()],
            tool_events: vec!["PreToolUse".into()],
            matcher: None,
            args: vec!["hook".into(), "claude-code".into()],
            ..HooksFile::default()
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
    fn a_toml_config_is_edited_in_place() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("config.toml"), "model = \"x\" # mine\n").unwrap();
        let mut s = spec();
        s.format = "config-toml".into();
        s.file = "config.toml".into();
        let done = install(t.path(), &s, Path::new("/usr/bin/sixfold")).unwrap();
        let text = std::fs::read_to_string(t.path().join("config.toml")).unwrap();
        assert!(text.starts_with("model = \"x\" # mine\n"), "{text}");
        assert!(text.contains(&format!("command = \"{}\"", done.command)), "{text}");
    }

    #[test]
    fn opencodes_plugin_goes_in_with_the_rule_it_lifts() {
        let t = tempfile::tempdir().unwrap();
        let mut s = spec();
        s.format = OPENCODE_PLUGIN.into();
        s.file = "plugin/sixfold.js".into();
        s.args = vec!["hook".into(), "opencode".into()];
        let done = install(t.path(), &s, Path::new("/opt/my tools/sixfold")).unwrap();
        assert_eq!(done.file, t.path().join("plugin/sixfold.js").display().to_string());
        let plugin = std::fs::read_to_string(t.path().join("plugin/sixfold.js")).unwrap();
        assert!(hook_opencode::is_sixfold_plugin(&plugin));
        assert!(
            plugin.contains(r#"const COMMAND = "'/opt/my tools/sixfold' hook opencode";"#),
            "{plugin}"
        );
        let v: Value = serde_json::from_str(&std::fs::read_to_string(t.path().join("opencode.json")).unwrap()).unwrap();
        assert_eq!(v["permission"]["*"][hook_opencode::MARKER], "deny");
        assert_eq!(v["permission"]["*"]["*"], "deny");
        // A config of the directory's own with a `*` rule cannot be made to fail closed: refused.
        let u = tempfile::tempdir().unwrap();
        std::fs::write(u.path().join("opencode.json"), r#"{"permission": {"*": "allow"}}"#).unwrap();
        assert!(install(u.path(), &s, Path::new("/t")).is_err());
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
