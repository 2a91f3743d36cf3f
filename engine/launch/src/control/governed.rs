//! The governed controls (`--governed`): the vendor's own file and shell tools off and sixfold's
//! governed tools (`sixfold serve-tools`) offered instead, as the provider file's `[governed]`
//! says: the flags, the files (an MCP config, a model catalog) and the configuration values.
//! Everything here is rendered from data; nothing names a vendor.

use crate::error::LaunchError;
use serde_json::Value;
use sixfold_core::format::GovernedFile;
use sixfold_core::launch_facts::GovernedFacts;
use std::path::Path;

/// How the governed tools run: what the operator asked.
#[derive(Debug, Clone, Default)]
pub struct Governed {
    /// Pin the tools' mode (`--mode`); `None` follows the project's active mode.
    pub mode: Option<String>,
    /// `--ask-timeout` for the tools, in seconds.
    pub ask_timeout: Option<u64>,
    /// The session the tools record under.
    pub session: String,
}

/// What the launch needs: the arguments and variables to add, and the facts.
#[derive(Debug)]
pub(crate) struct Imposed {
    pub(crate) args: Vec<String>,
    /// Variables set in the vendor's environment.
    pub(crate) env: Vec<(String, String)>,
    pub(crate) facts: GovernedFacts,
}

struct Values<'a> {
    sixfold: String,
    workdir: String,
    session: &'a str,
    run_dir: &'a Path,
    serve_args: Vec<String>,
}

impl Values<'_> {
    fn text(&self, text: &str) -> String {
        let mut out = text
            .replace("{sixfold}", &self.sixfold)
            .replace("{workdir}", &self.workdir)
            .replace("{session}", self.session);
        while let Some(start) = out.find("{file:") {
            let Some(len) = out.get(start..).and_then(|rest| rest.find('}')) else {
                break;
            };
            let name = out.get(start + 6..start + len).unwrap_or_default().to_string();
            let path = self.run_dir.join(&name).display().to_string();
            out.replace_range(start..start + len + 1, &path);
        }
        out
    }

    fn list(&self, items: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        for item in items {
            if item == "{serve_args}" {
                out.extend(self.serve_args.iter().cloned());
            } else {
                out.push(self.text(item));
            }
        }
        out
    }

    fn value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.text(s)),
            Value::Array(items) => {
                let mut out = Vec::new();
                for item in items {
                    if item.as_str() == Some("{serve_args}") {
                        out.extend(self.serve_args.iter().cloned().map(Value::String));
                    } else {
                        out.push(self.value(item));
                    }
                }
                Value::Array(out)
            }
            Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), self.value(v))).collect()),
            other => other.clone(),
        }
    }
}

/// A file name from the provider file: a plain name, never a path.
fn plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && name != "." && name != ".."
}

/// Writes the governed files into the run directory and renders the arguments.
pub(crate) fn impose(
    provider: &str,
    spec: Option<&GovernedFile>,
    asked: &Governed,
    sixfold: &Path,
    workdir: &Path,
    run_dir: &Path,
) -> Result<Imposed, LaunchError> {
    // INVARIANT (fail closed): a governed launch the provider cannot impose is refused, never run
    // with the vendor's own tools.
    let spec = spec.ok_or_else(|| {
        LaunchError::new(format!(
            "the provider `{provider}` has no `[governed]` section, so it cannot run governed"
        ))
        .hint(format!(
            "add `[governed]` to providers/{provider}.toml (see docs/governed.md)"
        ))
    })?;
    let mut serve_args = Vec::new();
    if let Some(mode) = &asked.mode {
        serve_args.extend(["--mode".to_string(), mode.clone()]);
    }
    if let Some(secs) = asked.ask_timeout {
        serve_args.extend(["--ask-timeout".to_string(), secs.to_string()]);
    }
    let values = Values {
        sixfold: sixfold.display().to_string(),
        workdir: workdir.display().to_string(),
        session: &asked.session,
        run_dir,
        serve_args,
    };
    let mut files = Vec::new();
    let mut contents = std::collections::BTreeMap::new();
    for (name, content) in &spec.files {
        if !plain_name(name) {
            return Err(LaunchError::new(format!(
                "providers/{provider}.toml: `[governed.files]` names `{name}`, which is not a plain file name"
            )));
        }
        let path = run_dir.join(name);
        let rendered = values.value(content);
        let text =
            serde_json::to_string_pretty(&rendered).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
        contents.insert(name.clone(), rendered.to_string());
        std::fs::write(&path, text).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
        files.push(path.display().to_string());
    }
    let mut args = values.list(&spec.args);
    if !spec.config.is_empty() {
        let flag = spec.config_flag.clone().ok_or_else(|| {
            LaunchError::new(format!(
                "providers/{provider}.toml: `[governed.config]` without `config_flag`"
            ))
            .hint("name the flag that sets one configuration value, e.g. `config_flag = \"-c\"`")
        })?;
        for (key, value) in &spec.config {
            let rendered = toml_value(&values.value(value)).ok_or_else(|| {
                LaunchError::new(format!(
                    "providers/{provider}.toml: `[governed.config]` `{key}` cannot be written as TOML"
                ))
            })?;
            args.push(flag.clone());
            args.push(format!("{key}={rendered}"));
        }
    }
    // A variable whose value is exactly `{content:NAME}` holds that file's JSON itself (written
    // by serde: paths inside it are escaped, never spliced into the text).
    let mut env = Vec::new();
    for (key, value) in &spec.env {
        let value = match value.strip_prefix("{content:").and_then(|v| v.strip_suffix('}')) {
            Some(name) => contents.get(name).cloned().ok_or_else(|| {
                LaunchError::new(format!(
                    "providers/{provider}.toml: `[governed.env]` `{key}` names no file `{name}` of `[governed.files]`"
                ))
            })?,
            None => values.text(value),
        };
        env.push((key.clone(), value));
    }
    Ok(Imposed {
        env,
        facts: GovernedFacts {
            imposed: true,
            args: args.clone(),
            servers: spec.servers.clone(),
            files,
            offered_prefixes: spec.offered_prefixes.clone(),
            mode: asked.mode.clone(),
            session: asked.session.clone(),
        },
        args,
    })
}

/// A JSON value written as one TOML value (inline tables and arrays); `None` for `null`.
fn toml_value(value: &Value) -> Option<String> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        // A JSON string literal is a valid TOML basic string.
        Value::String(s) => serde_json::to_string(s).ok()?,
        Value::Array(items) => {
            let parts: Option<Vec<String>> = items.iter().map(toml_value).collect();
            format!("[{}]", parts?.join(", "))
        }
        Value::Object(map) => {
            let parts: Option<Vec<String>> = map
                .iter()
                .map(|(k, v)| Some(format!("{}={}", serde_json::to_string(k).ok()?, toml_value(v)?)))
                .collect();
            format!("{{{}}}", parts?.join(", "))
        }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[test]
    fn a_variable_holds_a_files_json_escaped_or_a_rendered_text() {
        let t = tempfile::tempdir().unwrap();
        let spec: GovernedFile = toml::from_str(
            r#"
            [env]
            CONFIG = "{content:c.json}"
            WHERE = "{file:c.json}"
            [files."c.json".mcp.s]
            command = ["{sixfold}", "serve-tools", "--root", "{workdir}", "{serve_args}"]
            "#,
        )
        .unwrap();
        let asked = Governed {
            session: "s1".into(),
            ..Governed::default()
        };
        let odd = Path::new("/w/a \"quoted\" dir");
        let done = impose("p", Some(&spec), &asked, Path::new("/bin/sixfold"), odd, t.path()).unwrap();
        let env: BTreeMap<_, _> = done.env.into_iter().collect();
        let config: Value = serde_json::from_str(&env["CONFIG"]).unwrap();
        assert_eq!(
            config["mcp"]["s"]["command"],
            json!(["/bin/sixfold", "serve-tools", "--root", "/w/a \"quoted\" dir"])
        );
        assert_eq!(env["WHERE"], t.path().join("c.json").display().to_string());
        let missing: GovernedFile = toml::from_str("[env]\nX = \"{content:none.json}\"").unwrap();
        assert!(impose("p", Some(&missing), &asked, Path::new("/bin/sixfold"), odd, t.path()).is_err());
    }

    #[test]
    fn arguments_files_and_config_are_rendered_from_the_provider_file() {
        let t = tempfile::tempdir().unwrap();
        let spec: GovernedFile = toml::from_str(
            r#"
            args = ["--tools", "", "--mcp-config={file:mcp.json}"]
            config_flag = "-c"
            servers = ["sixfold"]
            [files."mcp.json".mcpServers.sixfold]
            command = "{sixfold}"
            args = ["serve-tools", "--root", "{workdir}", "{serve_args}"]
            [config."mcp_servers.sixfold"]
            command = "{sixfold}"
            args = ["serve-tools", "{serve_args}", "--session", "{session}"]
            "#,
        )
        .unwrap();
        let asked = Governed {
            mode: Some("ask".into()),
            ask_timeout: None,
            session: "s1".into(),
        };
        let done = impose(
            "p",
            Some(&spec),
            &asked,
            Path::new("/bin/sixfold"),
            Path::new("/w"),
            t.path(),
        )
        .unwrap();
        let mcp = t.path().join("mcp.json");
        assert_eq!(done.args[2], format!("--mcp-config={}", mcp.display()));
        let written: Value = serde_json::from_str(&std::fs::read_to_string(&mcp).unwrap()).unwrap();
        assert_eq!(
            written["mcpServers"]["sixfold"]["args"],
            json!(["serve-tools", "--root", "/w", "--mode", "ask"])
        );
        assert_eq!(done.args[3], "-c");
        assert_eq!(
            done.args[4],
            r#"mcp_servers.sixfold={"args"=["serve-tools", "--mode", "ask", "--session", "s1"], "command"="/bin/sixfold"}"#
        );
        assert_eq!(done.facts.servers, vec!["sixfold".to_string()]);
    }

    #[test]
    fn a_provider_without_a_governed_mode_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let err = impose(
            "p",
            None,
            &Governed::default(),
            Path::new("/s"),
            Path::new("/w"),
            t.path(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("cannot run governed"), "{err}");
    }
}
