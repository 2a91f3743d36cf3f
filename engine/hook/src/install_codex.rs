//! `sixfold install codex`: where Codex's config file is, and whether Codex trusts the hooks
//! sixfold registered there.
//!
//! Codex skips, silently, a hook nobody trusted: it runs a command hook only when the config's
//! `[hooks.state."<key>"] trusted_hash` equals the hash of the hook as configured (set with
//! `/hooks` in its TUI), or when it runs with `--dangerously-bypass-hook-trust`, or when the hook
//! is managed (`/etc/codex/requirements.toml`). So sixfold computes the hash Codex computes and
//! says whether its hooks are trusted, so a skip is never silent to the user.
//!
//! What Codex 0.171 does, read from its source (`codex-rs/hooks/src/engine/discovery.rs` and
//! `codex-rs/config/src/fingerprint.rs`): the key is `<config file's absolute path>:<event in
//! snake case>:<entry index>:<handler index>`; the hash is `sha256:` and the hex SHA-256 of the
//! compact JSON, keys sorted, of `{event_name, matcher?, hooks: [{type: "command", command,
//! timeout, async}]}`, with `timeout` 600 where none is set and no matcher for `Stop` and
//! `UserPromptSubmit`.

use sixfold_core::format::HooksFile;
use sixfold_core::hook_settings::is_registered;
use sixfold_core::sha256::Sha256;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What to tell a person who installed Codex hooks: Codex skips hooks it does not trust.
pub const TRUST_HINT: &str =
    "Codex runs a hook only once it is trusted, and skips an untrusted one without a word, so \
these hooks do nothing until you trust them: run `codex`, type `/hooks` and trust each sixfold \
hook (or install them as managed hooks in /etc/codex/requirements.toml, which need no trust). \
`sixfold providers` says whether they are trusted.";

/// What to tell a person who installed Codex hooks in a project: Codex reads a project's
/// `.codex/` only for a project it trusts.
pub const PROJECT_HINT: &str = "Codex also reads a project's .codex/config.toml only for a project its own config trusts (`[projects.\"<path>\"] trust_level = \"trusted\"`, set when you first run `codex` there); `sixfold install codex --user` installs for every project instead.";

/// Codex's config file for a scope: the project's `.codex/config.toml` (which Codex loads only
/// for a project it trusts), or the user's (`$CODEX_HOME/config.toml` when set, else
/// `~/.codex/config.toml`).
pub fn config_path(
    project: Option<&Path>,
    codex_home: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Result<PathBuf, String> {
    match project {
        Some(root) => Ok(root.join(".codex").join("config.toml")),
        None => match (codex_home, home) {
            (Some(dir), _) => Ok(dir.join("config.toml")),
            (None, Some(home)) => Ok(home.join(".codex").join("config.toml")),
            (None, None) => Err("neither CODEX_HOME nor HOME is set".into()),
        },
    }
}

/// Whether Codex runs one of sixfold's hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Trust {
    /// Trusted as it is now: Codex runs it.
    Trusted,
    /// Never trusted: Codex skips it.
    Untrusted,
    /// Trusted once, changed since: Codex skips it.
    Modified,
    /// Turned off (`enabled = false`): Codex skips it.
    Disabled,
}

impl Trust {
    /// The word printed for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Trust::Trusted => "trusted",
            Trust::Untrusted => "untrusted",
            Trust::Modified => "modified",
            Trust::Disabled => "disabled",
        }
    }
}

/// One of sixfold's hooks found in a Codex config file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InstalledHook {
    /// The event (`PreToolUse`).
    pub event: String,
    /// Codex's key for its state (`<file>:pre_tool_use:0:0`).
    pub key: String,
    /// The hash Codex computes for it now.
    pub hash: String,
    /// Whether Codex runs it.
    pub trust: Trust,
}

/// An event's name as Codex keys it: `PreToolUse` is `pre_tool_use`.
fn snake(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// JSON with every object's keys sorted and no whitespace: what Codex hashes.
fn canonical(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::Object(map) => {
            let sorted: BTreeMap<&String, &serde_json::Value> = map.iter().collect();
            let fields: Vec<String> = sorted
                .into_iter()
                .map(|(k, v)| format!("{}:{}", serde_json::Value::String(k.clone()), canonical(v)))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        serde_json::Value::Array(items) => {
            format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(","))
        }
        other => other.to_string(),
    }
}

/// The hash Codex computes for a command hook of `event` with `matcher`, as its trust identity.
///
/// ```
/// use sixfold_hook::install_codex::hook_hash;
/// let h = hook_hash("Stop", Some("*"), &toml::toml! { type = "command"
///     command = "sixfold hook codex" }.into());
/// assert!(h.starts_with("sha256:") && h.len() == 71);
/// // Codex ignores a Stop hook's matcher, so its hash does too.
/// assert_eq!(h, hook_hash("Stop", None, &toml::toml! { type = "command"
///     command = "sixfold hook codex" }.into()));
/// ```
pub fn hook_hash(event: &str, matcher: Option<&str>, handler: &toml::Value) -> String {
    let mut hook = serde_json::Map::new();
    hook.insert("type".into(), "command".into());
    let field = |name: &str| handler.get(name);
    let command = field("command").and_then(toml::Value::as_str).unwrap_or_default();
    hook.insert("command".into(), command.into());
    let timeout = field("timeout").and_then(toml::Value::as_integer).unwrap_or(600).max(1);
    hook.insert("timeout".into(), timeout.into());
    let asynchronous = field("async").and_then(toml::Value::as_bool).unwrap_or(false);
    hook.insert("async".into(), asynchronous.into());
    if let Some(message) = field("statusMessage").and_then(toml::Value::as_str) {
        hook.insert("statusMessage".into(), message.into());
    }
    let mut identity = serde_json::Map::new();
    identity.insert("event_name".into(), snake(event).into());
    if let Some(m) = matcher.filter(|_| !matches!(event, "Stop" | "UserPromptSubmit")) {
        identity.insert("matcher".into(), m.into());
    }
    identity.insert(
        "hooks".into(),
        serde_json::Value::Array(vec![serde_json::Value::Object(hook)]),
    );
    let digest = Sha256::digest(canonical(&serde_json::Value::Object(identity)).as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// sixfold's hooks in a Codex config file (`path` is the file, as Codex keys it; `text` its
/// content), each with whether Codex trusts it. A file that is not TOML has none.
pub fn installed(path: &Path, text: &str, spec: &HooksFile) -> Vec<InstalledHook> {
    installed_trusted_in(path, text, &[text], spec)
}

/// [`installed`], with whether Codex trusts each hook read from the `[hooks.state]` of every
/// text of `states` (the file's own, and for a project's file the user's config, where `/hooks`
/// keeps what a person trusted).
pub fn installed_trusted_in(path: &Path, text: &str, states: &[&str], spec: &HooksFile) -> Vec<InstalledHook> {
    let Ok(config) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(hooks) = config.get("hooks").and_then(toml::Value::as_table) else {
        return Vec::new();
    };
    let mut kept_state = toml::Table::new();
    for other in states {
        let parsed = other.parse::<toml::Table>().ok();
        let found = parsed
            .as_ref()
            .and_then(|c| c.get("hooks"))
            .and_then(|h| h.get("state"))
            .and_then(toml::Value::as_table);
        for (key, value) in found.into_iter().flatten() {
            kept_state.insert(key.clone(), value.clone());
        }
    }
    let state = Some(&kept_state);
    let mut found = Vec::new();
    for (event, entries) in hooks {
        let Some(entries) = entries.as_array() else { continue };
        for (e, entry) in entries.iter().enumerate() {
            let matcher = entry.get("matcher").and_then(toml::Value::as_str);
            let handlers = entry.get("hooks").and_then(toml::Value::as_array);
            for (h, handler) in handlers.into_iter().flatten().enumerate() {
                let command = handler.get("command").and_then(toml::Value::as_str);
                if !command.is_some_and(|c| is_registered(c, spec)) {
                    continue;
                }
                let key = format!("{}:{}:{e}:{h}", path.display(), snake(event));
                let hash = hook_hash(event, matcher, handler);
                let kept = state.and_then(|s| s.get(&key));
                let enabled = kept.and_then(|k| k.get("enabled")).and_then(toml::Value::as_bool);
                let trusted = kept.and_then(|k| k.get("trusted_hash")).and_then(toml::Value::as_str);
                let trust = match (enabled, trusted) {
                    (Some(false), _) => Trust::Disabled,
                    (_, Some(t)) if t == hash => Trust::Trusted,
                    (_, Some(_)) => Trust::Modified,
                    (_, None) => Trust::Untrusted,
                };
                found.push(InstalledHook {
                    event: event.clone(),
                    key,
                    hash,
                    trust,
                });
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use sixfold_core::hook_settings::register_text;

    fn spec() -> HooksFile {
        HooksFile {
            format: "config-toml".into(),
            file: "config.toml".into(),
            events: vec!["PreToolUse".into(), "Stop".into()],
            tool_events: vec!["PreToolUse".into()],
            matcher: Some("*".into()),
            args: vec!["hook".into(), "codex".into()],
            ..HooksFile::default()
        }
    }

    #[test]
    fn events_are_keyed_in_snake_case() {
        assert_eq!(snake("PreToolUse"), "pre_tool_use");
        assert_eq!(snake("UserPromptSubmit"), "user_prompt_submit");
        assert_eq!(snake("Stop"), "stop");
    }

    #[test]
    fn canonical_json_sorts_keys_and_has_no_whitespace() {
        let v = serde_json::json!({"b": [1, {"z": "x y", "a": true}], "a": null});
        assert_eq!(canonical(&v), r#"{"a":null,"b":[1,{"a":true,"z":"x y"}]}"#);
    }

    #[test]
    fn installed_hooks_are_untrusted_until_their_hash_is_kept() {
        let path = Path::new("/h/config.toml");
        let text = register_text("model = \"x\"\n", &spec(), "/bin/sixfold hook codex").unwrap();
        let found = installed(path, &text, &spec());
        assert_eq!(found.len(), 2);
        assert!(found.iter().all(|h| h.trust == Trust::Untrusted));
        let pre = found.iter().find(|h| h.event == "PreToolUse").unwrap();
        assert_eq!(pre.key, "/h/config.toml:pre_tool_use:0:0");
        let trusted = format!(
            "{text}\n[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n[hooks.state.\"/h/config.toml:stop:0:0\"]\ntrusted_hash = \"sha256:0\"\n",
            pre.key, pre.hash
        );
        let found = installed(path, &trusted, &spec());
        let trust: Vec<(&str, Trust)> = found.iter().map(|h| (h.event.as_str(), h.trust)).collect();
        assert!(trust.contains(&("PreToolUse", Trust::Trusted)), "{trust:?}");
        assert!(trust.contains(&("Stop", Trust::Modified)), "{trust:?}");
        assert!(installed(path, "not = = toml", &spec()).is_empty());
    }

    #[test]
    fn config_paths() {
        assert_eq!(
            config_path(Some(Path::new("/r")), None, None).unwrap(),
            PathBuf::from("/r/.codex/config.toml")
        );
        assert_eq!(
            config_path(None, Some("/c".into()), Some("/h".into())).unwrap(),
            PathBuf::from("/c/config.toml")
        );
        assert_eq!(
            config_path(None, None, Some("/h".into())).unwrap(),
            PathBuf::from("/h/.codex/config.toml")
        );
        assert!(config_path(None, None, None).is_err());
    }
}
