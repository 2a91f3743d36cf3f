//! Plugins: exactly the declared set. A name is declared as it is; a plugin directory is loaded
//! by the provider file's `plugin_args`, named by its manifest (else its directory's name).

use super::Scratch;
use crate::error::LaunchError;
use serde_json::Value;
use sixfold_core::launch_facts::PluginFacts;
use std::path::Path;

/// The declared plugins and the arguments that load their directories.
#[derive(Debug, Default)]
pub(crate) struct Plugins {
    /// Each declared plugin.
    pub(crate) facts: Vec<PluginFacts>,
    /// Their names, the set the record must show.
    pub(crate) names: Vec<String>,
    /// Arguments for the vendor's argv.
    pub(crate) args: Vec<String>,
}

/// Declares each plugin given (`--plugin NAME|DIR`).
pub(crate) fn impose(scratch: &Scratch<'_>, given: &[String]) -> Result<Plugins, LaunchError> {
    let spec = scratch.spec;
    let mut plugins = Plugins::default();
    for item in given {
        let path = Path::new(item);
        if !path.is_dir() {
            plugins.facts.push(PluginFacts {
                name: item.clone(),
                path: None,
            });
            continue;
        }
        let args = spec.plugin_args.as_ref().ok_or_else(|| {
            LaunchError::new(format!(
                "the provider `{}` gives no way to load a plugin directory, so `--plugin {item}` cannot be used",
                scratch.provider
            ))
            .hint("give the plugin's name instead, or add `plugin_args` to the provider file")
        })?;
        let dir = path.canonicalize().map_err(|e| format!("cannot read `{item}`: {e}"))?;
        let shown = dir.display().to_string();
        plugins.args.extend(args.iter().map(|a| a.replace("{path}", &shown)));
        plugins.facts.push(PluginFacts {
            name: name_of(&dir, spec.plugin_manifest.as_deref()),
            path: Some(shown),
        });
    }
    plugins.names = plugins.facts.iter().map(|p| p.name.clone()).collect();
    Ok(plugins)
}

/// The `name` in the plugin's manifest, else the directory's name.
fn name_of(dir: &Path, manifest: Option<&str>) -> String {
    let from_manifest = manifest.and_then(|m| {
        // A manifest is a few lines: a larger one, or one that is not a regular file, is not read.
        let text = sixfold_core::bounded::read_text(&dir.join(m), 1024 * 1024).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        v.get("name").and_then(Value::as_str).map(str::to_string)
    });
    from_manifest.unwrap_or_else(|| {
        dir.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;
    use crate::control::spec_for_test;

    #[test]
    fn names_and_directories_are_declared() {
        let t = tempfile::tempdir().unwrap();
        let run = t.path().join("run");
        std::fs::create_dir_all(&run).unwrap();
        let dir = t.path().join("reviewer-dir");
        std::fs::create_dir_all(dir.join(".claude-plugin")).unwrap();
        std::fs::write(dir.join(".claude-plugin/plugin.json"), r#"{"name": "reviewer"}"#).unwrap();
        let spec = spec_for_test(
            "config_home_env = \"C\"\nplugin_args = [\"--plugin-dir\", \"{path}\"]\nplugin_manifest = \".claude-plugin/plugin.json\"",
        );
        let scratch = Scratch::make("p", &spec, &run, run.clone()).unwrap();
        let given = ["by-name".to_string(), dir.display().to_string()];
        let plugins = impose(&scratch, &given).unwrap();
        assert_eq!(plugins.names, ["by-name", "reviewer"]);
        assert_eq!(
            plugins.args,
            [
                "--plugin-dir".to_string(),
                dir.canonicalize().unwrap().display().to_string()
            ]
        );
        let bare = spec_for_test("config_home_env = \"C\"");
        let scratch = Scratch { spec: &bare, ..scratch };
        assert!(impose(&scratch, &given)
            .unwrap_err()
            .message
            .contains("no way to load a plugin directory"));
        assert_eq!(impose(&scratch, &given[..1]).unwrap().names, ["by-name"]);
    }
}
