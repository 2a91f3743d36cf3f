//! An agent CLI's TOML config file (`config-toml`), text in and text out: sixfold's hook entries
//! registered as `[[hooks.EVENT]]` tables and removed again, everything else kept byte for byte
//! (the file is edited in place, never re-serialized).
//!
//! The shape is the settings format's, in TOML: each event is an array of tables
//! `{matcher?, hooks = [{type = "command", command}]}`. Which entries are sixfold's, the caller
//! says (`sixfold_core::hook_settings::is_registered`). New entries go after the file's own, so
//! the positions of the entries already there (which a CLI may key their trust by) do not move.

use crate::format::HooksFile;
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, Value};

/// The file's text parsed, or why it cannot be edited.
fn parse(text: &str) -> Result<DocumentMut, String> {
    text.parse::<DocumentMut>()
        .map_err(|e| format!("the file is not valid TOML: {}", e.to_string().trim_end()))
}

/// The commands of one entry's hooks.
fn commands(entry: &Table) -> Vec<String> {
    match entry.get("hooks") {
        Some(Item::ArrayOfTables(hooks)) => hooks
            .iter()
            .filter_map(|h| h.get("command").and_then(Item::as_str).map(str::to_string))
            .collect(),
        Some(Item::Value(Value::Array(hooks))) => hooks
            .iter()
            .filter_map(|h| h.as_inline_table())
            .filter_map(|h| h.get("command").and_then(Value::as_str).map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// The text with an entry running `command` registered for every event of `spec` (with the
/// provider file's tool matcher, `*` by default, for its tool events). An event that has an entry
/// running exactly `command` already gets none, so registering twice changes nothing.
///
/// ```
/// use sixfold_core::format::HooksFile;
/// use sixfold_core::hook_toml::{register, unregister};
/// let spec = HooksFile {
///     format: "config-toml".into(),
///     events: vec!["PreToolUse".into(), "Stop".into()],
///     tool_events: vec!["PreToolUse".into()],
///     args: vec!["hook".into(), "agent-x".into()],
///     ..HooksFile::default()
/// };
/// let mine = "# mine\nmodel = \"o3\"  # kept\n";
/// let installed = register(mine, &spec, "sixfold hook agent-x").unwrap();
/// assert!(installed.starts_with(mine));
/// assert!(installed.contains("[[hooks.PreToolUse]]\nmatcher = \"*\""));
/// assert_eq!(register(&installed, &spec, "sixfold hook agent-x").unwrap(), installed);
/// let sixfolds = |c: &str| c == "sixfold hook agent-x";
/// assert_eq!(unregister(&installed, &sixfolds).unwrap(), mine);
/// // What it cannot edit in place is an error, not a rewrite.
/// assert!(register("hooks = 3\n", &spec, "sixfold hook agent-x").is_err());
/// ```
pub fn register(text: &str, spec: &HooksFile, command: &str) -> Result<String, String> {
    let mut doc = parse(text)?;
    let hooks = match doc.get_mut("hooks") {
        None => {
            let mut table = Table::new();
            table.set_implicit(true);
            doc.insert("hooks", Item::Table(table));
            doc.get_mut("hooks").and_then(Item::as_table_mut)
        }
        Some(item) => item.as_table_mut(),
    }
    .ok_or("`hooks` in the file is not a table")?;
    let mut changed = false;
    for event in &spec.events {
        let list = match hooks.get_mut(event) {
            None => {
                hooks.insert(event, Item::ArrayOfTables(ArrayOfTables::new()));
                hooks.get_mut(event).and_then(Item::as_array_of_tables_mut)
            }
            Some(item) => item.as_array_of_tables_mut(),
        }
        .ok_or_else(|| format!("`hooks.{event}` in the file is not an array of tables (`[[hooks.{event}]]`)"))?;
        if list.iter().any(|entry| commands(entry).iter().any(|c| c == command)) {
            continue;
        }
        let mut entry = Table::new();
        if spec.tool_events.contains(event) {
            let matcher = spec.matcher.clone().unwrap_or_else(|| "*".into());
            entry.insert("matcher", toml_edit::value(matcher));
        }
        let mut handler = Table::new();
        handler.insert("type", toml_edit::value("command"));
        handler.insert("command", toml_edit::value(command));
        let mut handlers = ArrayOfTables::new();
        handlers.push(handler);
        entry.insert("hooks", Item::ArrayOfTables(handlers));
        list.push(entry);
        changed = true;
    }
    Ok(if changed { doc.to_string() } else { text.to_string() })
}

/// The text with every hook whose command is sixfold's (`mine`) removed, under any event, and the
/// entries and event lists left empty by that removed too (and `hooks` itself, when nothing else
/// is in it); everything else as it was, byte for byte. The inverse of [`register`].
pub fn unregister(text: &str, mine: &dyn Fn(&str) -> bool) -> Result<String, String> {
    let mut doc = parse(text)?;
    let Some(hooks) = doc.get_mut("hooks").and_then(Item::as_table_mut) else {
        return Ok(text.to_string());
    };
    let mut changed = false;
    let mut emptied = Vec::new();
    for (event, item) in hooks.iter_mut() {
        let Some(list) = item.as_array_of_tables_mut() else {
            continue;
        };
        let before = list.len();
        for entry in list.iter_mut() {
            if let Some(handlers) = entry.get_mut("hooks").and_then(Item::as_array_of_tables_mut) {
                let had = handlers.len();
                handlers.retain(|h| !h.get("command").and_then(Item::as_str).is_some_and(mine));
                changed |= handlers.len() != had;
            }
        }
        list.retain(|entry| !matches!(entry.get("hooks"), Some(Item::ArrayOfTables(h)) if h.is_empty()));
        if list.len() != before && list.is_empty() {
            emptied.push(event.get().to_string());
        }
    }
    if !changed {
        return Ok(text.to_string());
    }
    for event in &emptied {
        hooks.remove(event);
    }
    if hooks.is_empty() && hooks.is_implicit() {
        doc.remove("hooks");
    }
    Ok(doc.to_string())
}

/// The text with the `[hooks.state."<key>"]` tables of `keys` removed (where a CLI keeps
/// whether a person trusted a hook: Codex does), and `hooks.state`, then `hooks`, when that leaves
/// them empty and they were never written as tables of their own; everything else byte for byte.
/// `uninstall` forgets the trust given to sixfold's hooks, and no other.
///
/// ```
/// use sixfold_core::hook_toml::forget_trust;
/// let text = "model = \"x\"\n[hooks.state.\"/c.toml:stop:0:0\"]\ntrusted_hash = \"sha256:1\"\n[hooks.state.\"/c.toml:stop:1:0\"]\ntrusted_hash = \"sha256:2\"\n";
/// let out = forget_trust(text, &["/c.toml:stop:1:0".to_string()]).unwrap();
/// assert!(out.contains("stop:0:0") && !out.contains("stop:1:0"));
/// assert_eq!(forget_trust(&out, &["/c.toml:stop:0:0".to_string()]).unwrap(), "model = \"x\"\n");
/// ```
pub fn forget_trust(text: &str, keys: &[String]) -> Result<String, String> {
    let mut doc = parse(text)?;
    let Some(hooks) = doc.get_mut("hooks").and_then(Item::as_table_like_mut) else {
        return Ok(text.to_string());
    };
    let Some(state) = hooks.get_mut("state").and_then(Item::as_table_like_mut) else {
        return Ok(text.to_string());
    };
    let mut changed = false;
    for key in keys {
        changed |= state.remove(key).is_some();
    }
    if !changed {
        return Ok(text.to_string());
    }
    let state_gone = state.is_empty()
        && hooks
            .get("state")
            .and_then(Item::as_table)
            .is_some_and(Table::is_implicit);
    if state_gone {
        hooks.remove("state");
    }
    let hooks_gone = doc
        .get("hooks")
        .and_then(Item::as_table)
        .is_some_and(|h| h.is_empty() && h.is_implicit());
    if hooks_gone {
        doc.remove("hooks");
    }
    Ok(doc.to_string())
}

/// The events of `spec` that have no entry running `command` in the text.
pub fn missing_events(text: &str, spec: &HooksFile, command: &str) -> Result<Vec<String>, String> {
    let doc = parse(text)?;
    let hooks = doc.get("hooks").and_then(Item::as_table);
    Ok(spec
        .events
        .iter()
        .filter(|event| {
            let list = hooks.and_then(|h| h.get(event)).and_then(Item::as_array_of_tables);
            !list.is_some_and(|l| l.iter().any(|entry| commands(entry).iter().any(|c| c == command)))
        })
        .cloned()
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hook_settings::is_registered;

    fn spec() -> HooksFile {
        HooksFile {
            format: "config-toml".into(),
            file: "config.toml".into(),
            events: vec!["PreToolUse".into(), "PostToolUse".into(), "Stop".into()],
            tool_events: vec!["PreToolUse".into(), "PostToolUse".into()],
            args: vec!["hook".into(), "agent-x".into()],
            ..HooksFile::default()
        }
    }

    const THEIRS: &str = r#"# my settings
model = "o3"   # the model

[projects."/home/me/repo"]
trust_level = "trusted"

[[hooks.PreToolUse]]
matcher = "^Bash$"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "other-tool check"   # theirs

[hooks.state."/x/config.toml:pre_tool_use:0:0"]
trusted_hash = "sha256:00"

[mcp_servers.docs]
command = "docs-server"
"#;

    #[test]
    fn install_and_uninstall_round_trip_byte_for_byte() {
        let spec = spec();
        for original in [THEIRS, "", "\n", "model = \"x\"\n", "[hooks]\n", "# only a comment\n"] {
            let cmd = "'/opt/my tools/sixfold' hook agent-x";
            let once = register(original, &spec, cmd).unwrap();
            assert_ne!(once, original);
            assert_eq!(register(&once, &spec, cmd).unwrap(), once, "idempotent");
            assert!(missing_events(&once, &spec, cmd).unwrap().is_empty(), "{once}");
            let parsed: toml::Value = toml::from_str(&once).unwrap();
            let pre = &parsed["hooks"]["PreToolUse"];
            let mine = pre.as_array().unwrap().last().unwrap();
            assert_eq!(mine["matcher"].as_str(), Some("*"));
            assert_eq!(mine["hooks"][0]["command"].as_str(), Some(cmd));
            assert!(parsed["hooks"]["Stop"][0].get("matcher").is_none());
            assert_eq!(
                unregister(&once, &|c| is_registered(c, &spec)).unwrap(),
                original,
                "from:\n{once}"
            );
        }
        // Theirs stays first: its position (its trust key) does not move.
        let once = register(THEIRS, &spec, "sixfold hook agent-x").unwrap();
        let parsed: toml::Value = toml::from_str(&once).unwrap();
        assert_eq!(
            parsed["hooks"]["PreToolUse"][0]["hooks"][0]["command"].as_str(),
            Some("other-tool check")
        );
        assert_eq!(missing_events(THEIRS, &spec, "x").unwrap(), spec.events);
        // A last line without its newline gains one: the only byte that can change.
        let once = register("model = \"x\"", &spec, "sixfold hook agent-x").unwrap();
        assert_eq!(
            unregister(&once, &|c| is_registered(c, &spec)).unwrap(),
            "model = \"x\"\n"
        );
    }

    #[test]
    fn a_hand_added_handler_beside_sixfolds_stays() {
        let spec = spec();
        let text = "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"sixfold hook agent-x\"\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"notify-me\"\n";
        let out = unregister(text, &|c| is_registered(c, &spec)).unwrap();
        assert!(out.contains("notify-me") && !out.contains("hook agent-x"), "{out}");
    }

    #[test]
    fn what_it_cannot_edit_in_place_is_an_error() {
        let spec = spec();
        assert!(register("hooks = 3\n", &spec, "c").unwrap_err().contains("`hooks`"));
        assert!(register("hooks = { Stop = [] }\n", &spec, "c")
            .unwrap_err()
            .contains("`hooks`"));
        assert!(register("[hooks]\nStop = []\n", &spec, "c")
            .unwrap_err()
            .contains("hooks.Stop"));
        assert!(register("not toml = = 1", &spec, "c").unwrap_err().contains("TOML"));
        assert_eq!(unregister("x = 1\n", &|c| is_registered(c, &spec)).unwrap(), "x = 1\n");
    }
}
