//! `sixfold install opencode`: sixfold's plugin in one of OpenCode's config directories, and the
//! permission rule beside it that denies every tool until the plugin has loaded. The plugin's
//! text and the rule are the core's (`sixfold_core::hook_opencode`, shared with the hermetic
//! launcher); this file reads and writes the files. Uninstall removes the plugin and the rule,
//! and a file or directory install created that is left empty.

use sixfold_core::hook_opencode::has_star_rule;
pub use sixfold_core::hook_opencode::{deny_text, is_sixfold_plugin, lift_text, plugin_text, CONFIG_FILE, MARKER};
use std::path::{Path, PathBuf};

/// Config files larger than this are not read: they are untrusted input.
const MAX_CONFIG_BYTES: u64 = 4 * 1024 * 1024;

/// The config directory for a scope: the project's `.opencode/`, or the user's
/// (`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`).
pub fn config_dir(
    project: Option<&Path>,
    xdg_config_home: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Result<PathBuf, String> {
    match project {
        Some(root) => Ok(root.join(".opencode")),
        None => match (xdg_config_home, home) {
            (Some(dir), _) => Ok(dir.join("opencode")),
            (None, Some(home)) => Ok(home.join(".config").join("opencode")),
            (None, None) => Err("neither XDG_CONFIG_HOME nor HOME is set".into()),
        },
    }
}

/// Reads a file's text (absent: `None`), at most 4 MiB of it: it is untrusted.
pub fn read_text(path: &Path) -> Result<Option<String>, String> {
    match sixfold_core::bounded::read_text(path, MAX_CONFIG_BYTES) {
        Ok(text) => Ok(Some(text)),
        Err(sixfold_core::bounded::ReadError::Missing) => Ok(None),
        Err(e) => Err(format!("cannot read `{}`: {e}", path.display())),
    }
}

/// One file's change: its path, its text before and after (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file.
    pub path: PathBuf,
    /// Its text now.
    pub before: Option<String>,
    /// Its text after the change.
    pub after: Option<String>,
}

/// What install changes in the config directory `dir`, for the hook command `command`: the
/// config file first (denying every tool), then the plugin (lifting that once it loads), so a
/// write that fails halfway leaves every tool denied. An error where a plugin file of that name
/// is someone else's, or where a config file OpenCode merges before this one (`earlier`) has a
/// `*` permission rule: the merged rule would keep that earlier place, so rules after it could
/// let a tool through while the plugin is missing.
pub fn install(dir: &Path, plugin_file: &str, command: &str, earlier: &[PathBuf]) -> Result<Vec<Change>, String> {
    for path in earlier {
        if read_text(path)?.is_some_and(|text| has_star_rule(&text)) {
            return Err(format!(
                "`{}` has a `*` permission rule; OpenCode merges it before sixfold's, which would then keep its place, and the rules after it could let a tool through while sixfold's plugin is missing: remove it (OpenCode allows what no rule names) or give the tools it is about their own rules",
                path.display()
            ));
        }
    }
    let config = dir.join(CONFIG_FILE);
    let before = read_text(&config)?;
    let after = deny_text(before.as_deref().unwrap_or_default()).map_err(|e| format!("`{}`: {e}", config.display()))?;
    let plugin = dir.join(plugin_file);
    let old = read_text(&plugin)?;
    if old.as_deref().is_some_and(|t| !is_sixfold_plugin(t)) {
        return Err(format!(
            "`{}` is not sixfold's plugin; sixfold will not overwrite it",
            plugin.display()
        ));
    }
    Ok(vec![
        Change {
            path: config,
            before,
            after: Some(after),
        },
        Change {
            path: plugin,
            before: old,
            after: Some(plugin_text(command)),
        },
    ])
}

/// What uninstall changes in the config directory `dir`: the plugin first (once it is gone,
/// every tool is denied), then the deny-all rule; a config file with nothing else in it is
/// removed.
pub fn uninstall(dir: &Path, plugin_file: &str) -> Result<Vec<Change>, String> {
    let plugin = dir.join(plugin_file);
    let old = read_text(&plugin)?;
    let mut changes = Vec::new();
    match old {
        Some(text) if is_sixfold_plugin(&text) => changes.push(Change {
            path: plugin,
            before: Some(text),
            after: None,
        }),
        _ => {}
    }
    let config = dir.join(CONFIG_FILE);
    if let Some(text) = read_text(&config)? {
        let after = lift_text(&text).map_err(|e| format!("`{}`: {e}", config.display()))?;
        changes.push(Change {
            path: config,
            before: Some(text),
            after,
        });
    }
    Ok(changes)
}

/// Applies changes in order: writes each file (through a temporary file beside it, renamed over
/// it), or removes it and then each directory up to `dir` (included) that it leaves empty.
pub fn apply(dir: &Path, changes: &[Change]) -> Result<(), String> {
    for change in changes {
        if change.before == change.after {
            continue;
        }
        let path = &change.path;
        match &change.after {
            Some(text) => {
                let parent = path
                    .parent()
                    .ok_or_else(|| format!("`{}` has no directory", path.display()))?;
                std::fs::create_dir_all(parent).map_err(|e| format!("cannot create `{}`: {e}", parent.display()))?;
                let tmp = parent.join(format!(".sixfold-{}.tmp", std::process::id()));
                std::fs::write(&tmp, text).map_err(|e| format!("cannot write `{}`: {e}", tmp.display()))?;
                if let Err(e) = std::fs::rename(&tmp, path) {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(format!("cannot write `{}`: {e}", path.display()));
                }
            }
            None => {
                std::fs::remove_file(path).map_err(|e| format!("cannot remove `{}`: {e}", path.display()))?;
                let mut at = path.parent();
                while let Some(d) = at {
                    // Only an empty directory is removed; one with anything in it stays.
                    if !d.starts_with(dir) || std::fs::remove_dir(d).is_err() {
                        break;
                    }
                    at = d.parent();
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_then_uninstall_leaves_the_directory_as_it_was() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join(".opencode");
        apply(
            &dir,
            &install(&dir, "plugin/sixfold.js", "sixfold hook opencode", &[]).unwrap(),
        )
        .unwrap();
        assert!(dir.join("plugin/sixfold.js").is_file());
        assert!(dir.join("opencode.json").is_file());
        apply(&dir, &uninstall(&dir, "plugin/sixfold.js").unwrap()).unwrap();
        assert!(!dir.exists(), "what install created is gone");
        // The user's own files stay, and so do their directories.
        std::fs::create_dir_all(dir.join("plugin")).unwrap();
        std::fs::write(dir.join("plugin/mine.js"), "export const mine = 1;\n").unwrap();
        std::fs::write(dir.join("opencode.json"), "{\"model\": \"a/b\"}\n").unwrap();
        apply(
            &dir,
            &install(&dir, "plugin/sixfold.js", "sixfold hook opencode", &[]).unwrap(),
        )
        .unwrap();
        apply(&dir, &uninstall(&dir, "plugin/sixfold.js").unwrap()).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("opencode.json")).unwrap(),
            "{\n  \"model\": \"a/b\"\n}\n"
        );
        assert!(dir.join("plugin/mine.js").is_file());
        assert!(!dir.join("plugin/sixfold.js").exists());
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "no backup, no temporary file: {names:?}");
        // Someone else's plugin of that name is never overwritten.
        std::fs::write(dir.join("plugin/sixfold.js"), "export const x = 1;\n").unwrap();
        assert!(install(&dir, "plugin/sixfold.js", "sixfold hook opencode", &[]).is_err());
        let left = uninstall(&dir, "plugin/sixfold.js").unwrap();
        // A `*` rule in a file merged before this one would keep the merged rule's place.
        std::fs::remove_file(dir.join("plugin/sixfold.js")).unwrap();
        let root = t.path().join("opencode.json");
        std::fs::write(&root, r#"{"permission": {"*": "allow", "bash": "allow"}}"#).unwrap();
        let why = install(
            &dir,
            "plugin/sixfold.js",
            "sixfold hook opencode",
            std::slice::from_ref(&root),
        )
        .unwrap_err();
        assert!(why.contains("has a `*` permission rule"), "{why}");
        std::fs::write(&root, r#"{"permission": {"bash": {"*": "ask"}}}"#).unwrap();
        assert!(install(&dir, "plugin/sixfold.js", "sixfold hook opencode", &[root]).is_ok());
        assert!(left.iter().all(|c| c.path != dir.join("plugin/sixfold.js")));
    }
}
