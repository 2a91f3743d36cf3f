//! An agent CLI's settings file, JSON in and JSON out: sixfold's hook entries registered for the
//! events a provider file's `[hooks]` table names, and removed again.
//!
//! One writer for both users of it: `sixfold install` (the project's or the user's settings) and
//! the hermetic launcher (a scratch config home). It does no I/O: the layers read the file, call
//! this and write the result.
//!
//! The settings format (`settings-json`, Claude Code's) maps each event to a list of entries,
//! `{"matcher"?, "hooks": [{"type": "command", "command"}]}`. An entry is sixfold's when its command
//! is one program followed by exactly the provider file's hook arguments (`… hook claude-code`),
//! whatever the program is called or wherever it is: that is what [`register`] writes, so
//! [`unregister`] finds it even when the binary was installed under another name.

use crate::format::HooksFile;
use crate::shell;
use serde_json::{json, Map, Value};

/// The JSON settings format.
const SETTINGS_JSON: &str = "settings-json";

/// The TOML config format ([`crate::hook_toml`]).
const CONFIG_TOML: &str = "config-toml";

/// The hook command: `program` (the sixfold binary) and the provider file's hook arguments,
/// each quoted for the shell the agent runs it with.
///
/// ```
/// use sixfold_core::format::HooksFile;
/// use sixfold_core::hook_settings::command;
/// let spec = HooksFile { args: vec!["hook".into(), "claude-code".into()], ..HooksFile::default() };
/// assert_eq!(command("/opt/my tools/sixfold", &spec), "'/opt/my tools/sixfold' hook claude-code");
/// ```
pub fn command(program: &str, spec: &HooksFile) -> String {
    shell::join(std::iter::once(program).chain(spec.args.iter().map(String::as_str)))
}

/// The hook command `sixfold install` writes: [`command`] followed by `|| exit 2`, so that a
/// program the shell cannot start (not on PATH, removed by `cargo clean`) blocks the tool call
/// instead of letting it run. The agent CLIs read any exit status but 2 from a hook as "run the
/// tool": without the guard a missing program fails open.
///
/// ```
/// use sixfold_core::format::HooksFile;
/// use sixfold_core::hook_settings::{guarded, is_registered};
/// let spec = HooksFile { args: vec!["hook".into(), "codex".into()], ..HooksFile::default() };
/// assert_eq!(guarded("sixfold", &spec), "sixfold hook codex || exit 2");
/// assert!(is_registered(&guarded("/opt/sixfold", &spec), &spec));
/// ```
pub fn guarded(program: &str, spec: &HooksFile) -> String {
    format!("{} {FAIL_CLOSED}", command(program, spec))
}

/// What [`guarded`] puts after the command.
pub const FAIL_CLOSED: &str = "|| exit 2";

/// Whether a hook command is one [`register`] writes for `spec`: a single simple command, with
/// no redirection, whose words after the program are exactly the provider file's hook
/// arguments, alone or [`guarded`] (`… || exit 2`). The program may be any path or name.
///
/// ```
/// use sixfold_core::format::HooksFile;
/// use sixfold_core::hook_settings::is_registered;
/// let spec = HooksFile { args: vec!["hook".into(), "claude-code".into()], ..HooksFile::default() };
/// assert!(is_registered("'/opt/my tools/tg' hook claude-code", &spec));
/// assert!(is_registered("sixfold hook claude-code || exit 2", &spec));
/// assert!(!is_registered("other-tool hook claude-code --verbose", &spec));
/// assert!(!is_registered("sixfold hook claude-code || exit 0", &spec));
/// assert!(!is_registered("hook claude-code", &spec));
/// ```
pub fn is_registered(command: &str, spec: &HooksFile) -> bool {
    let line = shell::parse(command);
    if line.opaque.is_some() || !line.functions.is_empty() {
        return false;
    }
    let plain = |c: &shell::SimpleCommand| {
        // A word the shell would expand (`$(sixfold)`) is not the program as written.
        c.expanded.is_empty() && c.substitutions.is_empty() && c.redirects.is_empty() && c.scopes.is_empty()
    };
    let hook = match line.commands.as_slice() {
        [only] if only.after.is_empty() => only,
        [first, guard]
            if first.after == ["||"] && guard.after.is_empty() && plain(guard) && guard.words == ["exit", "2"] =>
        {
            first
        }
        _ => return false,
    };
    match hook.words.split_first() {
        Some((_program, args)) => plain(hook) && args == spec.args.as_slice(),
        None => false,
    }
}

/// The program of a hook command [`is_registered`] (its first word, as the shell reads it).
///
/// ```
/// use sixfold_core::hook_settings::program;
/// assert_eq!(program("'/opt/my tools/sixfold' hook codex || exit 2").as_deref(), Some("/opt/my tools/sixfold"));
/// ```
pub fn program(command: &str) -> Option<String> {
    shell::parse(command)
        .commands
        .first()
        .and_then(|c| c.words.first().cloned())
}

/// The commands of an entry's hooks.
fn commands(entry: &Value) -> impl Iterator<Item = &str> {
    entry
        .get("hooks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|h| h.get("command").and_then(Value::as_str))
}

/// The settings with an entry running `command` registered for every event of `spec` (with the
/// provider file's tool matcher, `*` by default, for its tool events). An event that already has
/// an entry running exactly `command` gets none, so registering twice changes nothing. Everything
/// else stays as it was; absent settings (`null`) are an empty object.
///
/// ```
/// use serde_json::json;
/// use sixfold_core::format::HooksFile;
/// use sixfold_core::hook_settings::register;
/// let spec = HooksFile {
///     format: "settings-json".into(),
///     events: vec!["PreToolUse".into()],
///     tool_events: vec!["PreToolUse".into()],
///     args: vec!["hook".into(), "claude-code".into()],
///     ..HooksFile::default()
/// };
/// let once = register(&json!({"model": "x"}), &spec, "sixfold hook claude-code").unwrap();
/// assert_eq!(once["hooks"]["PreToolUse"][0]["matcher"], "*");
/// assert_eq!(register(&once, &spec, "sixfold hook claude-code").unwrap(), once);
/// // What it cannot edit in place is an error, not a rewrite.
/// assert!(register(&json!([1]), &spec, "sixfold hook claude-code").is_err());
/// ```
pub fn register(settings: &Value, spec: &HooksFile, command: &str) -> Result<Value, String> {
    if spec.format != SETTINGS_JSON {
        return Err(format!(
            "the provider file's hooks format `{}` is not one sixfold can write (it knows `{SETTINGS_JSON}` and `{CONFIG_TOML}`)",
            spec.format
        ));
    }
    let mut root = match settings {
        Value::Object(m) => m.clone(),
        Value::Null => Map::new(),
        _ => return Err("the settings file is not a JSON object".into()),
    };
    let hooks = root
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or("`hooks` in the settings is not a JSON object")?;
    for event in &spec.events {
        let list = hooks
            .entry(event.clone())
            .or_insert_with(|| Value::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| format!("`hooks.{event}` in the settings is not a list"))?;
        if list.iter().any(|entry| commands(entry).any(|c| c == command)) {
            continue;
        }
        let mut entry = Map::new();
        if spec.tool_events.contains(event) {
            let matcher = spec.matcher.clone().unwrap_or_else(|| "*".into());
            entry.insert("matcher".into(), Value::String(matcher));
        }
        entry.insert("hooks".into(), json!([{ "type": "command", "command": command }]));
        list.push(Value::Object(entry));
    }
    Ok(Value::Object(root))
}

/// The settings with every hook that [`is_registered`] for `spec` removed, under any event, and
/// the entries, event lists and `hooks` table left empty by that removed too; everything else
/// as it was. The inverse of [`register`].
///
/// ```
/// use serde_json::json;
/// use sixfold_core::format::HooksFile;
/// use sixfold_core::hook_settings::{register, unregister};
/// let spec = HooksFile {
///     format: "settings-json".into(),
///     events: vec!["Stop".into()],
///     args: vec!["hook".into(), "claude-code".into()],
///     ..HooksFile::default()
/// };
/// let mine = json!({"model": "x"});
/// let installed = register(&mine, &spec, "/usr/bin/sixfold hook claude-code").unwrap();
/// assert_eq!(unregister(&installed, &spec), mine);
/// ```
pub fn unregister(settings: &Value, spec: &HooksFile) -> Value {
    let mut settings = settings.clone();
    let Some(hooks) = settings.get_mut("hooks").and_then(Value::as_object_mut) else {
        return settings;
    };
    for list in hooks.values_mut() {
        let Some(entries) = list.as_array_mut() else { continue };
        entries.retain_mut(|entry| {
            let Some(hs) = entry.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let before = hs.len();
            hs.retain(|h| {
                !h.get("command")
                    .and_then(Value::as_str)
                    .is_some_and(|c| is_registered(c, spec))
            });
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

/// The events of `spec` that have no entry running `command` in the settings: what a written
/// file is checked against.
pub fn missing_events(settings: &Value, spec: &HooksFile, command: &str) -> Vec<String> {
    spec.events
        .iter()
        .filter(|event| {
            let entries = settings
                .get("hooks")
                .and_then(|h| h.get(event.as_str()))
                .and_then(Value::as_array);
            !entries.is_some_and(|list| list.iter().any(|entry| commands(entry).any(|c| c == command)))
        })
        .cloned()
        .collect()
}

/// A settings file's text (blank: none yet) read as JSON.
fn json_of(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_str(text).map_err(|e| format!("the file is not valid JSON: {e}"))
}

/// Settings as the file holds them: pretty JSON and a newline.
fn json_text(settings: &Value) -> Result<String, String> {
    serde_json::to_string_pretty(settings)
        .map(|t| t + "\n")
        .map_err(|e| format!("cannot write the settings: {e}"))
}

/// A settings file's text with an entry running `command` registered for every event of
/// `spec`, in the provider file's format (`settings-json` or `config-toml`); the text as it was
/// when nothing changes. The I/O around it (reading bounded, a backup) is the layers'.
///
/// ```
/// use sixfold_core::format::HooksFile;
/// use sixfold_core::hook_settings::{register_text, unregister_text};
/// let spec = HooksFile {
///     format: "settings-json".into(),
///     events: vec!["Stop".into()],
///     args: vec!["hook".into(), "claude-code".into()],
///     ..HooksFile::default()
/// };
/// let text = register_text("", &spec, "sixfold hook claude-code").unwrap();
/// assert!(text.contains("sixfold hook claude-code"));
/// assert_eq!(register_text(&text, &spec, "sixfold hook claude-code").unwrap(), text);
/// assert_eq!(unregister_text("{\"a\": 1}", &spec).unwrap(), "{\"a\": 1}");
/// ```
pub fn register_text(text: &str, spec: &HooksFile, command: &str) -> Result<String, String> {
    if spec.format == CONFIG_TOML {
        return crate::hook_toml::register(text, spec, command);
    }
    let before = json_of(text)?;
    let after = register(&before, spec, command)?;
    if after == before {
        return Ok(text.to_string());
    }
    json_text(&after)
}

/// A settings file's text with every hook that [`is_registered`] for `spec` removed; the text as
/// it was when there is none.
pub fn unregister_text(text: &str, spec: &HooksFile) -> Result<String, String> {
    if spec.format == CONFIG_TOML {
        return crate::hook_toml::unregister(text, &|c| is_registered(c, spec));
    }
    let before = json_of(text)?;
    let after = unregister(&before, spec);
    if after == before {
        return Ok(text.to_string());
    }
    json_text(&after)
}

/// Whether a settings or config file's text holds nothing (blank, or an empty JSON object): a
/// file `uninstall` may remove without losing anything. A comment is something.
///
/// ```
/// use sixfold_core::hook_settings::holds_nothing;
/// assert!(holds_nothing("") && holds_nothing("\n\n") && holds_nothing("{}\n"));
/// assert!(!holds_nothing("# mine\n") && !holds_nothing("model = \"x\"\n") && !holds_nothing("{\"a\": 1}"));
/// ```
pub fn holds_nothing(text: &str) -> bool {
    let t = text.trim();
    t.is_empty() || t == "{}"
}

/// The events of `spec` that have no entry running `command` in a settings file's text.
pub fn missing_events_text(text: &str, spec: &HooksFile, command: &str) -> Result<Vec<String>, String> {
    if spec.format == CONFIG_TOML {
        return crate::hook_toml::missing_events(text, spec, command);
    }
    Ok(missing_events(&json_of(text)?, spec, command))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A provider file's hooks table; the shipped providers' own are tested in the hook layer.
    fn spec() -> HooksFile {
        HooksFile {
            format: SETTINGS_JSON.into(),
            file: "settings.json".into(),
            events: vec!["BeforeTool".into(), "AfterTool".into(), "Stop".into()],
            tool_events: vec!["BeforeTool".into(), "AfterTool".into()],
            matcher: None,
            args: vec!["hook".into(), "agent-x".into()],
            ..HooksFile::default()
        }
    }

    #[test]
    fn register_merges_is_idempotent_and_unregister_removes_exactly_it() {
        let spec = spec();
        let existing = json!({
            "model": "x",
            "hooks": { "BeforeTool": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "other-tool check" }] }] }
        });
        let cmd = command("/usr/local/bin/sixfold", &spec);
        assert_eq!(cmd, "/usr/local/bin/sixfold hook agent-x");
        let once = register(&existing, &spec, &cmd).unwrap();
        assert_eq!(register(&once, &spec, &cmd).unwrap(), once);
        assert_eq!(once["hooks"]["BeforeTool"].as_array().unwrap().len(), 2);
        assert_eq!(once["hooks"]["BeforeTool"][1]["matcher"], "*");
        assert_eq!(once["hooks"]["Stop"][0]["hooks"][0]["command"], cmd);
        assert!(once["hooks"]["Stop"][0].get("matcher").is_none());
        assert_eq!(unregister(&once, &spec), existing);
        assert_eq!(
            unregister(&register(&Value::Null, &spec, &cmd).unwrap(), &spec),
            json!({})
        );
        assert!(missing_events(&once, &spec, &cmd).is_empty());
        assert_eq!(missing_events(&existing, &spec, &cmd), spec.events);
        let narrow = HooksFile {
            matcher: Some("Bash".into()),
            ..spec
        };
        assert_eq!(
            register(&Value::Null, &narrow, &cmd).unwrap()["hooks"]["AfterTool"][0]["matcher"],
            "Bash"
        );
    }

    #[test]
    fn what_register_wrote_is_found_whatever_the_binary_is_called() {
        let spec = spec();
        for program in [
            "/usr/local/bin/sixfold",
            "/home/me/bin/tg-dev",
            "/opt/it's here/x",
            "sixfold",
        ] {
            for cmd in [command(program, &spec), guarded(program, &spec)] {
                assert!(is_registered(&cmd, &spec), "{cmd}");
                assert_eq!(super::program(&cmd).as_deref(), Some(program));
                let installed = register(&json!({ "theme": "dark" }), &spec, &cmd).unwrap();
                assert_eq!(unregister(&installed, &spec), json!({ "theme": "dark" }), "{cmd}");
            }
        }
        // Another tool's hooks, and sixfold run with other arguments by hand, stay.
        for other in [
            "other-tool check",
            "sixfold hook agent-x --debug",
            "sixfold hook agent-x > /tmp/log",
            "sixfold hook agent-x && rm -rf x",
            "sixfold hook agent-y",
            "$(sixfold) hook agent-x",
            "hook agent-x",
            "sixfold hook agent-x || exit 0",
            "sixfold hook agent-x || exit 2 || true",
            "sixfold hook agent-x && exit 2",
            "sixfold hook agent-x; exit 2",
            "sixfold hook agent-x || exit 2 > /tmp/x",
            "(sixfold hook agent-x) || exit 2",
            "f() { x; }; sixfold hook agent-x",
            "",
        ] {
            assert!(!is_registered(other, &spec), "{other}");
        }
    }

    #[test]
    fn settings_it_cannot_edit_in_place_are_errors() {
        let spec = spec();
        assert!(register(&json!("x"), &spec, "c").is_err());
        assert!(register(&json!({ "hooks": [] }), &spec, "c")
            .unwrap_err()
            .contains("`hooks`"));
        assert!(register(&json!({ "hooks": { "Stop": {} } }), &spec, "c")
            .unwrap_err()
            .contains("hooks.Stop"));
        let yaml = HooksFile {
            format: "yaml".into(),
            ..spec
        };
        assert!(register(&Value::Null, &yaml, "c")
            .unwrap_err()
            .contains("settings-json"));
    }
}
