//! OpenCode's hooks: the shared judgement path ([`crate::adapter`]) with OpenCode's provider file.
//!
//! OpenCode runs no hook commands, only plugins. sixfold's plugin (the core's `opencode_plugin.js`, written
//! by `sixfold install opencode`) sends each of its plugin events as JSON on the hook command's
//! standard input: `{hook_event_name, session_id, call_id, tool, args, directory, mcp_servers,
//! result?}`, where `hook_event_name` is `tool.execute.before` or `tool.execute.after`. This reads
//! it as the shared path's PreToolUse and PostToolUse and answers the plugin in its own shape,
//! `{decision, reason, args?}`: `allow` (with `args`, the input to run instead, where the call
//! is rewritten to run inside the sandbox) or `deny`, whose reason the plugin throws so the model
//! reads it as the tool's error. Anything that is not an `allow` is a refusal to the plugin.
//!
//! OpenCode names an MCP server's tool `<server>_<tool>`; where `<server>` is one of the
//! configured servers the plugin names, the call is judged as `mcp__<server>__<tool>`, through
//! the bundle's MCP maps, like the other agents' MCP tools.

use crate::trust::TrustStore;
use crate::Records;
use serde::Deserialize;
use serde_json::{json, Value};
use sixfold_core::call::Sandboxes;
use std::path::PathBuf;

/// The provider file this adapter maps tools through.
pub const PROVIDER: &str = "opencode";

/// The plugin event before a tool runs.
pub const BEFORE: &str = "tool.execute.before";
/// The plugin event after a tool ran.
pub const AFTER: &str = "tool.execute.after";
/// The plugin's second question about a call answered `ask`: has a person answered it?
pub const APPROVAL: &str = "approval";

/// What sixfold's plugin sends; the rest is ignored.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PluginEvent {
    /// [`BEFORE`], [`AFTER`] or [`APPROVAL`].
    pub hook_event_name: String,
    /// OpenCode's session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The call's id.
    #[serde(default)]
    pub call_id: Option<String>,
    /// The tool, as OpenCode names it.
    #[serde(default)]
    pub tool: Option<String>,
    /// The tool's input.
    #[serde(default)]
    pub args: Option<Value>,
    /// OpenCode's working directory (the plugin's `ctx.directory`).
    #[serde(default)]
    pub directory: Option<PathBuf>,
    /// The names of OpenCode's configured MCP servers.
    #[serde(default)]
    pub mcp_servers: Vec<String>,
    /// What a tool that ran gave back (`{title, metadata}`).
    #[serde(default)]
    pub result: Option<Value>,
}

impl PluginEvent {
    /// Where the call runs: the shell tool's `workdir` where it names one (relative to OpenCode's
    /// directory), else OpenCode's directory.
    pub fn cwd(&self) -> Option<PathBuf> {
        let directory = self.directory.clone()?;
        let workdir = self
            .args
            .as_ref()
            .and_then(|a| a.get("workdir"))
            .and_then(Value::as_str)
            .filter(|w| !w.is_empty());
        Some(match workdir {
            Some(w) => directory.join(w),
            None => directory,
        })
    }

    /// The tool's name as the shared path judges it: an MCP server's tool as `mcp__S__T`.
    pub fn tool_name(&self) -> Option<String> {
        let tool = self.tool.as_deref()?;
        Some(mcp_name(tool, &self.mcp_servers).unwrap_or_else(|| tool.to_string()))
    }
}

/// A server's name as OpenCode writes it in its tools' names: characters other than ASCII
/// letters, digits, `_` and `-` become `_`.
fn sanitized(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `<server>_<tool>` as `mcp__<server>__<tool>`, for the longest configured server it starts
/// with; `None` when it is no server's.
pub fn mcp_name(tool: &str, servers: &[String]) -> Option<String> {
    servers
        .iter()
        .filter_map(|server| {
            let rest = tool.strip_prefix(&sanitized(server))?.strip_prefix('_')?;
            (!rest.is_empty()).then_some((server, rest))
        })
        .max_by_key(|(server, _)| server.len())
        .map(|(server, rest)| format!("mcp__{server}__{rest}"))
}

/// The plugin's answer: `{decision, reason, args?, wait_secs?}`.
pub fn plugin_answer(decision: &str, reason: &str, args: Option<&Value>) -> String {
    let mut out = json!({ "decision": decision, "reason": reason });
    if let (Some(args), Some(map)) = (args, out.as_object_mut()) {
        map.insert("args".into(), args.clone());
    }
    out.to_string()
}

/// The shared path's PreToolUse answer (Claude Code's shape) in the plugin's shape. An answer
/// that cannot be read is a refusal.
pub fn from_hook_answer(answer: &str) -> String {
    let parsed: Value = serde_json::from_str(answer).unwrap_or(Value::Null);
    let said = parsed.get("hookSpecificOutput").unwrap_or(&Value::Null);
    let reason = said
        .get("permissionDecisionReason")
        .and_then(Value::as_str)
        .unwrap_or("sixfold: could not judge this call, so it is refused: no answer");
    match said.get("permissionDecision").and_then(Value::as_str) {
        Some("allow") => plugin_answer("allow", reason, said.get("updatedInput")),
        Some("ask") => plugin_answer("ask", reason, said.get("updatedInput")),
        _ => plugin_answer("deny", reason, None),
    }
}

/// The plugin event as the shared path's hook event (Claude Code's shape); `None` for an event
/// it does not handle.
pub fn as_hook_event(event: &PluginEvent) -> Option<Value> {
    let name = match event.hook_event_name.as_str() {
        BEFORE => "PreToolUse",
        AFTER => "PostToolUse",
        _ => return None,
    };
    Some(json!({
        "hook_event_name": name,
        "session_id": event.session_id,
        "cwd": event.cwd(),
        "tool_name": event.tool_name(),
        "tool_input": event.args,
        "tool_use_id": event.call_id,
        "tool_response": event.result,
    }))
}

/// Handles one plugin event: the text to print on stdout, and notes for stderr. Project bundles
/// are trusted as the user's trust store (`TrustStore::from_env`) says; command steps run inside
/// the active mode's environment where `sandboxes` proves it (`None`: never contained).
pub fn handle(input: &[u8], records: &dyn Records, sandboxes: Option<&dyn Sandboxes>) -> (String, Vec<String>) {
    let store = TrustStore::from_env();
    let event: PluginEvent = match serde_json::from_slice(input) {
        Ok(e) => e,
        // The shared path refuses what is not an event, and puts it on the record.
        Err(_) => {
            let (answer, notes) = crate::adapter::handle(PROVIDER, input, records, store.as_ref(), sandboxes);
            return (from_hook_answer(&answer), notes);
        }
    };
    let Some(hook_event) = as_hook_event(&event) else {
        let why = format!(
            "sixfold: could not judge this call, so it is refused: `{}` is not a plugin event sixfold handles",
            event.hook_event_name
        );
        return (plugin_answer("deny", &why, None), vec![why]);
    };
    let (answer, notes) = crate::adapter::handle(
        PROVIDER,
        hook_event.to_string().as_bytes(),
        records,
        store.as_ref(),
        sandboxes,
    );
    if event.hook_event_name == AFTER {
        // The call ran: there is nothing left to refuse, only the outcome to record.
        return (plugin_answer("allow", "recorded", None), notes);
    }
    (from_hook_answer(&answer), notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mcp_tool_is_its_servers_where_the_server_is_configured() {
        let servers = vec!["up".to_string(), "up_more".to_string(), "my.docs".to_string()];
        assert_eq!(mcp_name("up_write_file", &servers).unwrap(), "mcp__up__write_file");
        // The longest server wins: `up_more_x` is `up_more`'s tool `x`.
        assert_eq!(mcp_name("up_more_x", &servers).unwrap(), "mcp__up_more__x");
        assert_eq!(mcp_name("my_docs_search", &servers).unwrap(), "mcp__my.docs__search");
        // A built-in tool, or a server's name alone, stays as it is.
        for own in ["bash", "up", "up_", "apply_patch", "read"] {
            assert_eq!(mcp_name(own, &servers), None, "{own}");
        }
    }

    #[test]
    fn the_working_directory_is_the_shell_tools_workdir_where_it_names_one() {
        let mut event = PluginEvent {
            directory: Some("/w".into()),
            args: Some(json!({"command": "ls", "workdir": "sub"})),
            ..PluginEvent::default()
        };
        assert_eq!(event.cwd().unwrap(), PathBuf::from("/w/sub"));
        event.args = Some(json!({"command": "ls", "workdir": "/elsewhere"}));
        assert_eq!(event.cwd().unwrap(), PathBuf::from("/elsewhere"));
        event.args = Some(json!({"command": "ls"}));
        assert_eq!(event.cwd().unwrap(), PathBuf::from("/w"));
        event.directory = None;
        assert_eq!(event.cwd(), None);
    }

    #[test]
    fn only_an_allow_runs_and_unreadable_answers_refuse() {
        let allow = r#"{"hookSpecificOutput":{"permissionDecision":"allow","permissionDecisionReason":"sixfold: ok","updatedInput":{"command":"x"}}}"#;
        let a: Value = serde_json::from_str(&from_hook_answer(allow)).unwrap();
        assert_eq!(
            (a["decision"].as_str(), a["args"]["command"].as_str()),
            (Some("allow"), Some("x"))
        );
        let deny = r#"{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"sixfold: no","updatedInput":{"command":"x"}}}"#;
        let d: Value = serde_json::from_str(&from_hook_answer(deny)).unwrap();
        assert_eq!(d["decision"], "deny");
        assert_eq!(d["reason"], "sixfold: no");
        assert!(d.get("args").is_none());
        for odd in [
            "",
            "null",
            "{}",
            r#"{"hookSpecificOutput":{"permissionDecision":"maybe"}}"#,
        ] {
            let o: Value = serde_json::from_str(&from_hook_answer(odd)).unwrap();
            assert_eq!(o["decision"], "deny", "{odd}");
        }
    }

    fn project() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join(".sixfold")).unwrap();
        std::fs::write(t.path().join(".sixfold/state.toml"), "mode = \"workspace-write\"\n").unwrap();
        t
    }

    struct NoRecords;
    impl Records for NoRecords {
        fn edits(&self, _: &str, _: &Value, _: &Value) -> Vec<sixfold_core::trace::Edit> {
            Vec::new()
        }
        fn transcript(
            &self,
            _: &std::path::Path,
            _: &sixfold_core::bundle::Bundle,
        ) -> Option<sixfold_core::trace::Trace> {
            None
        }
    }

    /// The plugin's answer to a call in the trusted project at `root`.
    fn before(root: &std::path::Path, tool: &str, args: Value, servers: &[&str]) -> Value {
        let event = json!({"hook_event_name": BEFORE, "session_id": "ses_1", "call_id": "call_1",
            "tool": tool, "args": args, "directory": root, "mcp_servers": servers});
        let store = TrustStore::at(root.join(".trust.json"));
        store.record(root).unwrap();
        let (out, _) = crate::adapter::handle(
            PROVIDER,
            as_hook_event(&serde_json::from_value(event).unwrap())
                .unwrap()
                .to_string()
                .as_bytes(),
            &NoRecords,
            Some(&store),
            None,
        );
        serde_json::from_str(&from_hook_answer(&out)).unwrap()
    }

    #[test]
    fn opencodes_tools_are_judged_by_their_effects() {
        let t = project();
        let root = t.path().canonicalize().unwrap();
        let inside = root.join("a.txt");
        assert_eq!(
            before(&root, "read", json!({"filePath": inside}), &[])["decision"],
            "allow"
        );
        assert_eq!(
            before(&root, "write", json!({"filePath": inside, "content": "x"}), &[])["decision"],
            "allow"
        );
        let refused = before(&root, "write", json!({"filePath": "/etc/x", "content": "x"}), &[]);
        assert_eq!(refused["decision"], "deny", "{refused}");
        assert!(
            refused["reason"].as_str().unwrap().starts_with("sixfold: "),
            "{refused}"
        );
        // sixfold's own state is protected from OpenCode's tools as from the others'.
        let state = root.join(".sixfold/state.toml");
        let own = before(
            &root,
            "edit",
            json!({"filePath": state, "oldString": "a", "newString": "b"}),
            &[],
        );
        assert_eq!(own["decision"], "deny", "{own}");
        // A tool nobody describes, and an MCP tool of a server nobody mapped, are judged
        // conservatively: never allowed on a guess.
        assert_eq!(before(&root, "brand_new_tool", json!({}), &[])["decision"], "deny");
        assert_eq!(
            before(&root, "up_write_file", json!({"path": "x"}), &["up"])["decision"],
            "deny"
        );
    }
}
