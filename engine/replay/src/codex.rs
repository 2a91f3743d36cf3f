//! Codex: the `exec --json` stream and the rollout file.
//!
//! The `exec --json` stream is `thread.started`, then per turn `turn.started`, `item.*` lines and
//! `turn.completed` (or `turn.failed`). An item (a command, a file change, an MCP call, a web
//! search, an agent message) may be seen first in `item.started` and again, finished, in
//! `item.completed`: it is one step, paired by the item's `id`. The stream carries no working
//! directory, and a file change only names its files (`{path, kind}`), not their content.
//!
//! The rollout file is `{timestamp, type, payload}` lines: `session_meta` (the vendor's record,
//! with the cwd), `response_item` (what the model called — `function_call`, `custom_tool_call` —
//! and the calls' outputs, paired by `call_id`), and `event_msg` (what Codex did: `item_completed`
//! with a `FileChange`, whose `unified_diff` per file shows the edit, or a `CommandExecution`,
//! with its exit code; `task_complete` with the last agent message). The event for a call carries
//! the call's id, so a patch Codex intercepted from a shell command still lands on that command.

use crate::{map_tool, text, LineReader, ReadContext};
use serde_json::Value;
use sixfold_core::trace::{Claim, Edit, EditKind, EditLine, Outcome, Status, Step, StepAct, Trace};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The provider file both readers map tools through.
const PROVIDER: &str = "codex";

/// The tool a shell command runs through (its `cmd` field holds the command line).
const EXEC_TOOL: &str = "exec_command";

/// The tool that edits files with a patch.
const PATCH_TOOL: &str = "apply_patch";

// ---------------------------------------------------------------------------------------------
// `codex exec --json`
// ---------------------------------------------------------------------------------------------

pub struct ExecReader<'a> {
    cx: &'a ReadContext<'a>,
    last_text: Option<String>,
    /// Items started and not yet completed: item id → index in `trace.steps`.
    open: HashMap<String, usize>,
}

impl<'a> ExecReader<'a> {
    pub fn new(cx: &'a ReadContext<'a>) -> Self {
        ExecReader {
            cx,
            last_text: None,
            open: HashMap::new(),
        }
    }

    fn item(&mut self, trace: &mut Trace, line: &str, item: &Value) {
        let kind = text(item, "type").unwrap_or("");
        match kind {
            "command_execution" | "file_change" | "mcp_tool_call" | "web_search" => {}
            "agent_message" => {
                let said = text(item, "text").unwrap_or("").trim();
                if line == "item.completed" && !said.is_empty() {
                    self.last_text = Some(said.to_string());
                }
                return;
            }
            other => {
                // reasoning, todo_list, error and what later versions add.
                trace.skip(&format!("{line}/{}", if other.is_empty() { "untyped" } else { other }));
                return;
            }
        }
        let id = text(item, "id").unwrap_or("").to_string();
        let index = match self.open.get(&id).copied().filter(|i| *i < trace.steps.len()) {
            Some(i) => i,
            None => {
                let step = self.new_step(trace, &id, kind, item);
                trace.steps.push(step);
                let i = trace.steps.len() - 1;
                if !id.is_empty() {
                    self.open.insert(id.clone(), i);
                }
                i
            }
        };
        if let Some(step) = trace.steps.get_mut(index) {
            update_item(step, kind, item, line == "item.completed");
        }
        if line == "item.completed" {
            self.open.remove(&id);
        }
    }

    /// A step for an item first seen: the tool call it stands for, mapped through the provider.
    fn new_step(&self, trace: &Trace, id: &str, kind: &str, item: &Value) -> Step {
        let cwd = cwd_of(trace);
        let mut step = Step {
            id: id.to_string(),
            cwd: trace.cwd.clone(),
            ..Step::default()
        };
        match kind {
            "command_execution" => {
                let command = command_text(item.get("command"));
                map_tool(
                    self.cx,
                    PROVIDER,
                    &mut step,
                    EXEC_TOOL,
                    &serde_json::json!({ "cmd": command }),
                    &cwd,
                );
            }
            "file_change" => {
                map_tool(
                    self.cx,
                    PROVIDER,
                    &mut step,
                    PATCH_TOOL,
                    &Value::Object(serde_json::Map::new()),
                    &cwd,
                );
                let paths = exec_changes(item).into_iter().map(|(path, _)| path).collect::<Vec<_>>();
                set_writes(&mut step, &paths);
            }
            "mcp_tool_call" => {
                let server = text(item, "server").unwrap_or("");
                let tool = text(item, "tool").unwrap_or("");
                let input = item.get("arguments").cloned().unwrap_or(Value::Null);
                map_tool(
                    self.cx,
                    PROVIDER,
                    &mut step,
                    &format!("mcp__{server}__{tool}"),
                    &input,
                    &cwd,
                );
            }
            _ => {
                let query = text(item, "query").unwrap_or("");
                map_tool(
                    self.cx,
                    PROVIDER,
                    &mut step,
                    "web_search",
                    &serde_json::json!({ "query": query }),
                    &cwd,
                );
            }
        }
        step
    }
}

/// What a later line of an item says: its status, exit code, changed files.
fn update_item(step: &mut Step, kind: &str, item: &Value, completed: bool) {
    let exit_code = item.get("exit_code").and_then(Value::as_i64);
    let mut status = text(item, "status").map(item_status).unwrap_or(Status::Unknown);
    if status == Status::Unknown && completed {
        status = match exit_code {
            Some(0) | None => Status::Completed,
            Some(_) => Status::Failed,
        };
    }
    if kind == "mcp_tool_call" && completed && item.get("error").is_some_and(|e| !e.is_null()) {
        status = Status::Failed;
    }
    step.outcome = Outcome {
        status,
        exit_code: exit_code.or(step.outcome.exit_code),
    };
    if kind == "file_change" {
        let changes = exec_changes(item);
        if !changes.is_empty() {
            let paths = changes.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
            set_writes(step, &paths);
        }
        step.edits = if status == Status::Refused {
            Vec::new()
        } else {
            changes
                .into_iter()
                .map(|(path, kind)| match kind {
                    // That the file is gone is the whole of the change: it is visible.
                    EditKind::Delete => Edit {
                        visible: true,
                        ..Edit::invisible(path, kind)
                    },
                    _ => Edit::invisible(path, kind),
                })
                .collect()
        };
    }
}

/// A file change item's `changes`: `[{path, kind: add|delete|update}]`.
fn exec_changes(item: &Value) -> Vec<(String, EditKind)> {
    let Some(changes) = item.get("changes").and_then(Value::as_array) else {
        return Vec::new();
    };
    changes
        .iter()
        .filter_map(|c| {
            let path = text(c, "path")?;
            Some((path.to_string(), change_kind(text(c, "kind").unwrap_or(""))))
        })
        .collect()
}

impl LineReader for ExecReader<'_> {
    fn line(&mut self, trace: &mut Trace, value: Value) {
        let kind = text(&value, "type").unwrap_or("").to_string();
        match kind.as_str() {
            "thread.started" => {
                if trace.record.is_none() {
                    trace.record = Some(value);
                }
            }
            "turn.started" => {
                // A new turn: the run has not ended until it does, and its claim is its own.
                trace.ended = false;
                trace.claim = None;
                self.last_text = None;
            }
            "item.started" | "item.updated" | "item.completed" => match value.get("item") {
                Some(item) if item.is_object() => self.item(trace, &kind, item),
                _ => trace.skip(&kind),
            },
            "turn.completed" => {
                trace.ended = true;
                trace.claim = Some(Claim {
                    message: self.last_text.clone().unwrap_or_default(),
                    result: None,
                    is_error: false,
                });
            }
            "turn.failed" => {
                trace.ended = true;
                trace.claim = Some(Claim {
                    message: self.last_text.clone().unwrap_or_default(),
                    result: value
                        .pointer("/error/message")
                        .and_then(Value::as_str)
                        .map(String::from),
                    is_error: true,
                });
            }
            other => trace.skip(if other.is_empty() { "untyped" } else { other }),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The rollout file
// ---------------------------------------------------------------------------------------------

pub struct RolloutReader<'a> {
    cx: &'a ReadContext<'a>,
    last_text: Option<String>,
}

impl<'a> RolloutReader<'a> {
    pub fn new(cx: &'a ReadContext<'a>) -> Self {
        RolloutReader { cx, last_text: None }
    }

    fn response_item(&mut self, trace: &mut Trace, payload: &Value) {
        let kind = text(payload, "type").unwrap_or("");
        match kind {
            "function_call" => {
                let name = text(payload, "name").unwrap_or("");
                let input = match payload.get("arguments") {
                    Some(Value::String(s)) => serde_json::from_str(s).unwrap_or(Value::Null),
                    Some(v) => v.clone(),
                    None => Value::Null,
                };
                self.call(trace, payload, name, input);
            }
            "custom_tool_call" => {
                let name = text(payload, "name").unwrap_or("");
                let input = serde_json::json!({ "input": payload.get("input").cloned().unwrap_or(Value::Null) });
                self.call(trace, payload, name, input);
            }
            "local_shell_call" => {
                // Older versions: `{action: {type: exec, command: [..], working_directory}}`.
                let action = payload.get("action").cloned().unwrap_or(Value::Null);
                let mut input = serde_json::json!({ "command": command_text(action.get("command")) });
                if let (Some(dir), Some(obj)) = (text(&action, "working_directory"), input.as_object_mut()) {
                    obj.insert("workdir".into(), dir.into());
                }
                self.call(trace, payload, "shell", input);
            }
            "web_search_call" => {
                let query = payload.pointer("/action/query").and_then(Value::as_str).unwrap_or("");
                let input = serde_json::json!({ "query": query });
                let step = self.call(trace, payload, "web_search", input);
                if let (Some(step), Some(status)) = (step, text(payload, "status").map(item_status)) {
                    step.outcome.status = status;
                }
            }
            "function_call_output" | "custom_tool_call_output" => call_output(trace, payload),
            "message" if text(payload, "role") == Some("assistant") => {
                let said = message_text(payload.get("content"));
                if !said.is_empty() {
                    self.last_text = Some(said);
                }
            }
            other => trace.skip(&format!(
                "response_item/{}",
                if other.is_empty() { "untyped" } else { other }
            )),
        }
    }

    /// A tool call: a new step, or (when an event for it came first) the step that event made.
    fn call<'t>(
        &mut self,
        trace: &'t mut Trace,
        payload: &Value,
        name: &str,
        mut input: Value,
    ) -> Option<&'t mut Step> {
        let id = text(payload, "call_id")
            .or_else(|| text(payload, "id"))
            .unwrap_or("")
            .to_string();
        // `shell` takes its command as an argument vector; the provider reads a command line.
        if let Some(obj) = input.as_object_mut() {
            if let Some(words @ Value::Array(_)) = obj.get("command") {
                let line = command_text(Some(words));
                obj.insert("command".into(), line.into());
            }
        }
        let base = cwd_of(trace);
        let workdir = text(&input, "workdir").map(|w| absolute(&base, w));
        let cwd = workdir.clone().unwrap_or(base);
        let step_cwd = workdir
            .map(|w| w.to_string_lossy().into_owned())
            .or_else(|| trace.cwd.clone());
        let existing = !id.is_empty() && trace.steps.iter().any(|s| s.id == id);
        if !existing {
            trace.steps.push(Step {
                id: id.clone(),
                ..Step::default()
            });
        }
        let step = if existing {
            trace.step_mut(&id)
        } else {
            trace.steps.last_mut()
        };
        let step = step?;
        let known_edits = !step.edits.is_empty();
        let known_writes = known_edits.then(|| step.effects.writes.clone());
        if step.cwd.is_none() {
            step.cwd = step_cwd;
        }
        map_tool(self.cx, PROVIDER, step, name, &input, &cwd);
        if name == PATCH_TOOL {
            if let Some(patch) = text(&input, "input").or_else(|| text(&input, "patch")) {
                let edits = patch_edits(patch, &cwd);
                let paths = edits.iter().map(|e| e.path.clone()).collect::<Vec<_>>();
                set_writes(step, &paths);
                if !known_edits {
                    step.edits = edits;
                }
            }
        }
        // An event that came first showed the files: they stay.
        if let Some(writes) = known_writes {
            if step.tool == PATCH_TOOL {
                step.effects.writes = writes;
            }
        }
        Some(step)
    }

    fn event(&mut self, trace: &mut Trace, payload: &Value) {
        let kind = text(payload, "type").unwrap_or("");
        match kind {
            "item_completed" => {
                let Some(item) = payload.get("item") else {
                    return trace.skip("event_msg/item_completed");
                };
                match text(item, "type").unwrap_or("") {
                    "FileChange" => self.file_change(trace, item),
                    "CommandExecution" => self.command_execution(trace, item),
                    "AgentMessage" => {
                        let said = message_text(item.get("content"));
                        if !said.is_empty() {
                            self.last_text = Some(said);
                        }
                    }
                    other => trace.skip(&format!("event_msg/item_completed/{other}")),
                }
            }
            "agent_message" => {
                let said = text(payload, "message").unwrap_or("").trim();
                if !said.is_empty() {
                    self.last_text = Some(said.to_string());
                }
            }
            "task_started" => {
                trace.ended = false;
                trace.claim = None;
                self.last_text = None;
            }
            "task_complete" => {
                let message = text(payload, "last_agent_message")
                    .map(|m| m.trim().to_string())
                    .or_else(|| self.last_text.clone())
                    .unwrap_or_default();
                trace.ended = true;
                trace.claim = Some(Claim {
                    message,
                    result: None,
                    is_error: false,
                });
            }
            // Older versions report commands and patches as begin/end events.
            "exec_command_end" => {
                let Some(id) = text(payload, "call_id") else { return };
                let Some(step) = trace.step_mut(id) else { return };
                let exit_code = payload.get("exit_code").and_then(Value::as_i64);
                let status = match text(payload, "status").map(item_status) {
                    Some(s) if s != Status::Unknown => s,
                    _ => code_status(exit_code),
                };
                step.outcome = Outcome { status, exit_code };
            }
            "patch_apply_begin" => {
                let Some(id) = text(payload, "call_id") else { return };
                let edits = rollout_changes(payload.get("changes"));
                if let Some(step) = trace.step_mut(id) {
                    if !edits.is_empty() {
                        set_patch_edits(step, edits);
                    }
                }
            }
            "patch_apply_end" => {
                let Some(id) = text(payload, "call_id") else { return };
                let Some(step) = trace.step_mut(id) else { return };
                let success = payload.get("success").and_then(Value::as_bool);
                step.outcome.status = match success {
                    Some(true) => Status::Completed,
                    Some(false) => Status::Failed,
                    None => step.outcome.status,
                };
                let edits = rollout_changes(payload.get("changes"));
                if !edits.is_empty() {
                    set_patch_edits(step, edits);
                }
            }
            other => trace.skip(&format!(
                "event_msg/{}",
                if other.is_empty() { "untyped" } else { other }
            )),
        }
    }

    /// The step an event is about: the call with its id, or a new step when there was no call
    /// (a command the user ran, or an event that came before its call).
    fn event_step<'t>(&self, trace: &'t mut Trace, id: &str, tool: &str, input: &Value) -> Option<&'t mut Step> {
        if id.is_empty() || trace.steps.iter().all(|s| s.id != id) {
            let cwd = cwd_of(trace);
            let mut step = Step {
                id: id.to_string(),
                cwd: trace.cwd.clone(),
                ..Step::default()
            };
            map_tool(self.cx, PROVIDER, &mut step, tool, input, &cwd);
            trace.steps.push(step);
            return trace.steps.last_mut();
        }
        trace.step_mut(id)
    }

    fn file_change(&mut self, trace: &mut Trace, item: &Value) {
        let id = text(item, "id").unwrap_or("");
        let edits = rollout_changes(item.get("changes"));
        let status = text(item, "status").map(item_status).unwrap_or(Status::Unknown);
        let input = Value::Object(serde_json::Map::new());
        let Some(step) = self.event_step(trace, id, PATCH_TOOL, &input) else {
            return;
        };
        if status != Status::Unknown {
            step.outcome.status = status;
        }
        match status {
            // Never ran: nothing changed.
            Status::Refused => step.edits.clear(),
            // It may have changed some files, and how is not known.
            Status::Failed => {
                let kinds = edits
                    .into_iter()
                    .map(|e| Edit::invisible(e.path, e.kind))
                    .collect::<Vec<_>>();
                if !kinds.is_empty() {
                    set_patch_edits(step, kinds);
                }
            }
            _ => {
                if !edits.is_empty() {
                    set_patch_edits(step, edits);
                }
            }
        }
    }

    fn command_execution(&mut self, trace: &mut Trace, item: &Value) {
        let id = text(item, "id").unwrap_or("");
        let input = serde_json::json!({ "cmd": command_text(item.get("command")) });
        let cwd = text(item, "cwd").map(uri_path);
        let Some(step) = self.event_step(trace, id, EXEC_TOOL, &input) else {
            return;
        };
        if cwd.is_some() {
            step.cwd = cwd;
        }
        let exit_code = item.get("exit_code").and_then(Value::as_i64);
        let status = match text(item, "status").map(item_status) {
            Some(s) if s != Status::Unknown => s,
            _ if exit_code.is_some() => code_status(exit_code),
            _ => step.outcome.status,
        };
        step.outcome = Outcome {
            status,
            exit_code: exit_code.or(step.outcome.exit_code),
        };
    }
}

impl LineReader for RolloutReader<'_> {
    fn line(&mut self, trace: &mut Trace, value: Value) {
        let kind = text(&value, "type").unwrap_or("").to_string();
        let payload = value.get("payload").filter(|p| p.is_object());
        match (kind.as_str(), payload) {
            ("session_meta", Some(payload)) => {
                if trace.cwd.is_none() {
                    trace.cwd = text(payload, "cwd").map(String::from);
                }
                if trace.record.is_none() {
                    trace.record = Some(payload.clone());
                }
            }
            ("turn_context", Some(payload)) => {
                if trace.cwd.is_none() {
                    trace.cwd = text(payload, "cwd").map(String::from);
                }
                trace.skip("turn_context");
            }
            ("response_item", Some(payload)) => self.response_item(trace, payload),
            ("event_msg", Some(payload)) => self.event(trace, payload),
            // Early rollouts hold the response items themselves, without the envelope.
            (
                "function_call"
                | "custom_tool_call"
                | "local_shell_call"
                | "function_call_output"
                | "custom_tool_call_output"
                | "message",
                None,
            ) => self.response_item(trace, &value),
            (other, _) => trace.skip(if other.is_empty() { "untyped" } else { other }),
        }
    }
}

/// A call's output: the exit code the text states, and how the call ended when no event said.
fn call_output(trace: &mut Trace, payload: &Value) {
    let Some(id) = text(payload, "call_id") else { return };
    let Some(step) = trace.step_mut(id) else { return };
    let output = match payload.get("output") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| text(i, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other @ Value::Object(_)) => text(other, "content").unwrap_or("").to_string(),
        _ => String::new(),
    };
    let exit_code = output_exit_code(&output);
    if step.outcome.exit_code.is_none() {
        step.outcome.exit_code = exit_code;
    }
    if step.outcome.status == Status::Unknown {
        let refused = ["rejected by user", "declined by user", "blocked by"]
            .iter()
            .any(|needle| output.contains(needle));
        step.outcome.status = if refused {
            Status::Refused
        } else if exit_code.is_some() {
            code_status(exit_code)
        } else if step.act.kind == "command" {
            // Still running (`Process running with session ID …`) or not said.
            Status::Unknown
        } else {
            Status::Completed
        };
    }
}

/// The exit code at the head of a call's output: `Exit code: N` (a patch, older commands),
/// `Process exited with code N` (a command), or the older JSON `{"metadata": {"exit_code": N}}`.
/// Only the header lines count (and those of one nested output: a patch Codex intercepted from a
/// command reports it inside the command's output), never the program's own output.
fn output_exit_code(output: &str) -> Option<i64> {
    if output.trim_start().starts_with('{') {
        if let Ok(value) = serde_json::from_str::<Value>(output) {
            return value.pointer("/metadata/exit_code").and_then(Value::as_i64);
        }
    }
    const HEADERS: [&str; 4] = [
        "Chunk ID:",
        "Wall time:",
        "Original token count:",
        "Total output lines:",
    ];
    let mut sections = 0;
    for line in output.lines() {
        let line = line.trim();
        if line.starts_with("Process running") {
            // Not exited yet: what follows is the program's output so far.
            return None;
        }
        let code = line
            .strip_prefix("Exit code: ")
            .or_else(|| line.strip_prefix("Process exited with code "));
        if let Some(code) = code {
            return code
                .split(|c: char| !c.is_ascii_digit() && c != '-')
                .next()?
                .parse()
                .ok();
        }
        if line == "Output:" {
            sections += 1;
            if sections > 1 {
                return None;
            }
        } else if !HEADERS.iter().any(|h| line.starts_with(h)) {
            return None;
        }
    }
    None
}

/// A FileChange's (or an older patch event's) `changes`: path → `{type, unified_diff, move_path}`
/// (or `{add: {content}}`, `{delete: {content}}`, `{update: {unified_diff, move_path}}`).
fn rollout_changes(changes: Option<&Value>) -> Vec<Edit> {
    let Some(changes) = changes.and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut edits = Vec::new();
    for (path, change) in changes {
        let (kind, body) = match text(change, "type") {
            Some(kind) => (change_kind(kind), change),
            None => match ["add", "delete", "update"]
                .iter()
                .find_map(|k| change.get(*k).map(|b| (*k, b)))
            {
                Some((kind, body)) => (change_kind(kind), body),
                None => (EditKind::Unknown, change),
            },
        };
        let mut edit = Edit {
            path: path.clone(),
            kind,
            removed: Vec::new(),
            added: Vec::new(),
            visible: true,
        };
        if let Some(diff) = text(body, "unified_diff") {
            let (removed, added) = hunk_lines(diff);
            edit.removed = removed;
            edit.added = added;
        } else if let Some(content) = text(body, "content") {
            match kind {
                EditKind::Delete => edit.removed = numbered(content),
                _ => edit.added = numbered(content),
            }
        } else if kind != EditKind::Delete {
            edit.visible = false;
        }
        edits.push(edit.bounded());
        if let Some(to) = text(body, "move_path").filter(|p| !p.is_empty()) {
            edits.push(Edit::invisible(to, EditKind::Create));
        }
    }
    edits
}

/// The removed and added lines of a diff's `@@` hunks, numbered (old numbering for removed
/// lines, new for added). Anything before the first hunk (headers) is ignored.
fn hunk_lines(diff: &str) -> (Vec<EditLine>, Vec<EditLine>) {
    let mut edit = Edit::invisible("", EditKind::Update);
    let (mut old, mut new) = (0u64, 0u64);
    let mut in_hunk = false;
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("@@") {
            let mut parts = rest.split_whitespace();
            let start =
                |s: Option<&str>, sign: char| -> Option<u64> { s?.strip_prefix(sign)?.split(',').next()?.parse().ok() };
            match (start(parts.next(), '-'), start(parts.next(), '+')) {
                (Some(o), Some(n)) => {
                    (old, new) = (o, n);
                    in_hunk = true;
                }
                _ => in_hunk = false,
            }
            continue;
        }
        if in_hunk {
            edit.take_hunk_line(line, &mut old, &mut new);
        }
    }
    (edit.removed, edit.added)
}

/// The edits an `apply_patch` patch describes (`*** Add File:`, `*** Update File:`,
/// `*** Delete File:`, `*** Move to:`), before Codex reports them: lines of an update are not
/// numbered (the patch locates them by context), lines of a new file are.
fn patch_edits(patch: &str, cwd: &Path) -> Vec<Edit> {
    let mut edits: Vec<Edit> = Vec::new();
    let path = |p: &str| absolute(cwd, p.trim()).to_string_lossy().into_owned();
    for line in patch.lines() {
        if let Some(p) = line.strip_prefix("*** Add File: ") {
            edits.push(Edit {
                path: path(p),
                kind: EditKind::Create,
                removed: vec![],
                added: vec![],
                visible: true,
            });
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            edits.push(Edit {
                path: path(p),
                kind: EditKind::Update,
                removed: vec![],
                added: vec![],
                visible: true,
            });
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            edits.push(Edit {
                path: path(p),
                kind: EditKind::Delete,
                removed: vec![],
                added: vec![],
                visible: true,
            });
        } else if let Some(p) = line.strip_prefix("*** Move to: ") {
            edits.push(Edit::invisible(path(p), EditKind::Create));
        } else if line.starts_with("***") || line.starts_with("@@") {
            continue;
        } else if let Some(edit) = edits.last_mut().filter(|e| e.visible) {
            match edit.kind {
                EditKind::Create => {
                    if let Some(t) = line.strip_prefix('+') {
                        let n = edit.added.len() as u64 + 1;
                        edit.added.push(EditLine {
                            line: Some(n),
                            text: t.to_string(),
                        });
                    }
                }
                EditKind::Update => {
                    if let Some(t) = line.strip_prefix('-') {
                        edit.removed.push(EditLine {
                            line: None,
                            text: t.to_string(),
                        });
                    } else if let Some(t) = line.strip_prefix('+') {
                        edit.added.push(EditLine {
                            line: None,
                            text: t.to_string(),
                        });
                    }
                }
                _ => {}
            }
        }
    }
    edits.into_iter().map(Edit::bounded).collect()
}

/// Puts a patch's edits on a step, with the files they touch as its writes when the step is the
/// patch tool (a command's writes stay as its classification says).
fn set_patch_edits(step: &mut Step, edits: Vec<Edit>) {
    if step.tool == PATCH_TOOL {
        let paths = edits.iter().map(|e| e.path.clone()).collect::<Vec<_>>();
        set_writes(step, &paths);
    }
    step.edits = edits;
}

// ---------------------------------------------------------------------------------------------
// Shared
// ---------------------------------------------------------------------------------------------

/// Replaces a patch step's writes (the provider's broad scope) with the files it names.
fn set_writes(step: &mut Step, paths: &[String]) {
    if paths.is_empty() {
        return;
    }
    step.effects.writes = paths.to_vec();
    if step.act.kind != "command" {
        if let Some(first) = paths.first() {
            step.act = StepAct {
                kind: "path".into(),
                text: first.clone(),
            };
        }
    }
}

/// Where relative paths resolve: the recorded cwd, or unknown (`*`, which the classifier keeps
/// as an unknown place) when the record has none — the exec stream never says.
fn cwd_of(trace: &Trace) -> PathBuf {
    PathBuf::from(trace.cwd.clone().unwrap_or_else(|| "*".into()))
}

fn absolute(cwd: &Path, path: &str) -> PathBuf {
    if path.starts_with('/') {
        PathBuf::from(path)
    } else {
        cwd.join(path)
    }
}

/// A command as one shell line: a string as it is, an argument vector quoted and joined.
fn command_text(command: Option<&Value>) -> String {
    match command {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(words)) => words
            .iter()
            .filter_map(Value::as_str)
            .map(quote)
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// Quotes a word for a POSIX shell when it needs it.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// `completed`, `failed`, `declined`, `in_progress`, as a status.
fn item_status(status: &str) -> Status {
    match status {
        "completed" | "success" => Status::Completed,
        "failed" | "error" => Status::Failed,
        "declined" | "rejected" | "denied" => Status::Refused,
        _ => Status::Unknown,
    }
}

fn code_status(exit_code: Option<i64>) -> Status {
    match exit_code {
        Some(0) => Status::Completed,
        Some(_) => Status::Failed,
        None => Status::Unknown,
    }
}

fn change_kind(kind: &str) -> EditKind {
    match kind {
        "add" => EditKind::Create,
        "delete" => EditKind::Delete,
        "update" => EditKind::Update,
        _ => EditKind::Unknown,
    }
}

/// A message's text: its text blocks (`output_text`, `Text`, …) joined.
fn message_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| text(b, "text"))
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_string(),
        _ => String::new(),
    }
}

fn numbered(content: &str) -> Vec<EditLine> {
    content
        .lines()
        .enumerate()
        .map(|(i, l)| EditLine {
            line: Some(i as u64 + 1),
            text: l.to_string(),
        })
        .collect()
}

/// `file:///tmp/a%20b` → `/tmp/a b`; anything else as it is.
fn uri_path(uri: &str) -> String {
    let Some(rest) = uri.strip_prefix("file://") else {
        return uri.to_string();
    };
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |j: usize| bytes.get(j).and_then(|c| (*c as char).to_digit(16));
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{read, Format};
    use sixfold_core::bundle::Bundle;
    use std::io::BufReader;

    fn bundle() -> Bundle {
        Bundle::load(&[sixfold_core::shipped::source()]).0
    }

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/../../tests/fixtures/replay/codex/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The working directory a run was recorded in, as its `.meta.json` says.
    fn recorded_cwd(scenario: &str) -> String {
        let meta: serde_json::Value = serde_json::from_str(&fixture(&format!("{scenario}.meta.json")))
            .unwrap_or_else(|e| panic!("{scenario}.meta.json: {e}"));
        meta["cwd"]
            .as_str()
            .unwrap_or_else(|| panic!("{scenario}.meta.json: no cwd"))
            .to_owned()
    }

    fn read_text(text: &str, format: Format) -> Trace {
        let bundle = bundle();
        read(
            BufReader::new(text.as_bytes()),
            format,
            &ReadContext { bundle: &bundle },
        )
    }

    fn tools(trace: &Trace) -> Vec<&str> {
        trace.steps.iter().map(|s| s.tool.as_str()).collect()
    }

    fn suite(trace: &Trace) -> &Step {
        let suites: Vec<&Step> = trace
            .steps
            .iter()
            .filter(|s| s.commands.iter().any(|c| c == "cargo test"))
            .collect();
        assert_eq!(suites.len(), 1, "{:#?}", trace.steps);
        suites[0]
    }

    fn claim(trace: &Trace) -> Option<&str> {
        trace.claim.as_ref().map(|c| c.message.as_str())
    }

    /// The first half of the lines of a fixture.
    fn first_half(text: &str) -> String {
        let lines: Vec<&str> = text.lines().collect();
        lines[..lines.len() / 2].iter().map(|l| format!("{l}\n")).collect()
    }

    /// A fixture with a garbage line put in the middle.
    fn with_garbage(text: &str) -> (String, u64) {
        let mut lines: Vec<&str> = text.lines().collect();
        let at = lines.len() / 2;
        lines.insert(at, "{not json at all");
        (lines.iter().map(|l| format!("{l}\n")).collect(), at as u64 + 1)
    }

    #[test]
    fn exec_fix_then_suite_pass() {
        let t = read_text(&fixture("fix-then-suite-pass.jsonl"), Format::CodexExec);
        assert_eq!(tools(&t), ["apply_patch", "exec_command"]);
        assert_eq!(t.steps[0].id, "item_0");
        assert_eq!(t.steps[1].id, "item_1");
        assert_eq!(t.cwd, None);
        assert_eq!(
            t.record.as_ref().and_then(|r| r.get("type")).and_then(Value::as_str),
            Some("thread.started")
        );
        let patch = &t.steps[0];
        assert_eq!(patch.outcome.status, Status::Completed);
        assert_eq!(
            patch.edits,
            vec![Edit::invisible(
                format!("{}/src/lib.rs", recorded_cwd("fix-then-suite-pass")),
                EditKind::Update
            )]
        );
        assert_eq!(
            patch.effects.writes,
            vec![format!("{}/src/lib.rs", recorded_cwd("fix-then-suite-pass"))]
        );
        let suite = suite(&t);
        assert_eq!(suite.act.kind, "command");
        assert_eq!(suite.act.text, "/bin/bash -lc 'cargo test'");
        assert_eq!(
            suite.outcome,
            Outcome {
                status: Status::Completed,
                exit_code: Some(0)
            }
        );
        assert!(suite.edits.is_empty());
        assert!(t.ended);
        assert_eq!(claim(&t), Some("Fixed the bug; all tests pass."));
        assert_eq!(
            t.claim.as_ref().map(|c| (c.result.clone(), c.is_error)),
            Some((None, false))
        );
        assert!(t.malformed.is_empty());
        assert!(t.skipped.is_empty(), "{:?}", t.skipped);
    }

    #[test]
    fn exec_suite_failed_then_claim() {
        let t = read_text(&fixture("suite-failed-then-claim.jsonl"), Format::CodexExec);
        assert_eq!(tools(&t), ["apply_patch", "exec_command"]);
        assert_eq!(
            t.steps[0].edits,
            vec![Edit::invisible(
                format!("{}/src/lib.rs", recorded_cwd("suite-failed-then-claim")),
                EditKind::Update
            )]
        );
        assert_eq!(
            suite(&t).outcome,
            Outcome {
                status: Status::Failed,
                exit_code: Some(101)
            }
        );
        assert!(t.ended);
        assert_eq!(claim(&t), Some("Fixed."));
    }

    #[test]
    fn exec_claim_without_suite() {
        let t = read_text(&fixture("claim-without-suite.jsonl"), Format::CodexExec);
        assert_eq!(tools(&t), ["apply_patch"]);
        assert!(t.steps.iter().all(|s| s.commands.is_empty()));
        assert_eq!(
            t.steps[0].edits,
            vec![Edit::invisible(
                format!("{}/src/lib.rs", recorded_cwd("claim-without-suite")),
                EditKind::Update
            )]
        );
        assert!(t.ended);
        assert_eq!(claim(&t), Some("Done — all tests pass."));
    }

    #[test]
    fn exec_gpt5_heredoc_patch_is_a_file_change() {
        let t = read_text(&fixture("fix-then-suite-pass-gpt5.jsonl"), Format::CodexExec);
        assert_eq!(tools(&t), ["apply_patch", "exec_command"]);
        assert_eq!(
            t.steps[0].edits,
            vec![Edit::invisible(
                format!("{}/src/lib.rs", recorded_cwd("fix-then-suite-pass-gpt5")),
                EditKind::Update
            )]
        );
        assert_eq!(
            suite(&t).outcome,
            Outcome {
                status: Status::Completed,
                exit_code: Some(0)
            }
        );
        // The "model metadata not found" error item is counted, not a step.
        assert_eq!(t.skipped.get("item.completed/error"), Some(&1));
        assert!(t.ended);
        assert_eq!(claim(&t), Some("Fixed the bug; all tests pass."));
    }

    /// The removed and added lines of a rollout's patch of `mul`.
    fn assert_mul_edit(step: &Step, ws: &str, new: &str) {
        assert_eq!(step.edits.len(), 1, "{:#?}", step.edits);
        let edit = &step.edits[0];
        assert_eq!(edit.path, format!("{ws}/src/lib.rs"));
        assert_eq!(edit.kind, EditKind::Update);
        assert!(edit.visible);
        assert_eq!(
            edit.removed,
            vec![EditLine {
                line: Some(10),
                text: "    a + b".into()
            }]
        );
        assert_eq!(
            edit.added,
            vec![EditLine {
                line: Some(10),
                text: new.into()
            }]
        );
    }

    #[test]
    fn rollout_fix_then_suite_pass() {
        let t = read_text(&fixture("rollout-fix-then-suite-pass.jsonl"), Format::CodexRollout);
        assert_eq!(t.cwd.as_deref(), Some(recorded_cwd("fix-then-suite-pass").as_str()));
        assert_eq!(
            t.record.as_ref().and_then(|r| text(r, "cwd")),
            Some(recorded_cwd("fix-then-suite-pass").as_str())
        );
        assert_eq!(tools(&t), ["apply_patch", "exec_command"]);
        assert_eq!(t.steps[0].id, "call_tg00000");
        assert_eq!(t.steps[1].id, "call_tg00100");
        let patch = &t.steps[0];
        assert_mul_edit(patch, &recorded_cwd("fix-then-suite-pass"), "    a * b");
        assert_eq!(
            patch.effects.writes,
            vec![format!("{}/src/lib.rs", recorded_cwd("fix-then-suite-pass"))]
        );
        assert_eq!(
            patch.outcome,
            Outcome {
                status: Status::Completed,
                exit_code: Some(0)
            }
        );
        let suite = suite(&t);
        assert_eq!(suite.act.text, "cargo test");
        assert_eq!(suite.cwd.as_deref(), Some(recorded_cwd("fix-then-suite-pass").as_str()));
        assert_eq!(
            suite.outcome,
            Outcome {
                status: Status::Completed,
                exit_code: Some(0)
            }
        );
        assert!(suite.edits.is_empty());
        assert!(t.ended);
        assert_eq!(claim(&t), Some("Fixed the bug; all tests pass."));
        assert!(t.malformed.is_empty());
        assert_eq!(t.skipped.get("event_msg/token_count"), Some(&3));
    }

    #[test]
    fn rollout_suite_failed_then_claim() {
        let t = read_text(&fixture("rollout-suite-failed-then-claim.jsonl"), Format::CodexRollout);
        assert_eq!(t.cwd.as_deref(), Some(recorded_cwd("suite-failed-then-claim").as_str()));
        assert_eq!(tools(&t), ["apply_patch", "exec_command"]);
        assert_mul_edit(&t.steps[0], &recorded_cwd("suite-failed-then-claim"), "    a - b");
        assert_eq!(
            suite(&t).outcome,
            Outcome {
                status: Status::Failed,
                exit_code: Some(101)
            }
        );
        assert!(t.ended);
        assert_eq!(claim(&t), Some("Fixed."));
    }

    #[test]
    fn rollout_claim_without_suite() {
        let t = read_text(&fixture("rollout-claim-without-suite.jsonl"), Format::CodexRollout);
        assert_eq!(t.cwd.as_deref(), Some(recorded_cwd("claim-without-suite").as_str()));
        assert_eq!(tools(&t), ["apply_patch"]);
        assert!(t.steps.iter().all(|s| s.commands.is_empty()));
        assert_mul_edit(&t.steps[0], &recorded_cwd("claim-without-suite"), "    a * b");
        assert!(t.ended);
        assert_eq!(claim(&t), Some("Done — all tests pass."));
    }

    #[test]
    fn rollout_gpt5_heredoc_patch_gets_the_file_change() {
        let t = read_text(&fixture("rollout-fix-then-suite-pass-gpt5.jsonl"), Format::CodexRollout);
        assert_eq!(
            t.cwd.as_deref(),
            Some(recorded_cwd("fix-then-suite-pass-gpt5").as_str())
        );
        assert_eq!(tools(&t), ["exec_command", "exec_command"]);
        let patch = &t.steps[0];
        assert_eq!(patch.act.kind, "command");
        assert!(patch.act.text.starts_with("apply_patch <<'PATCH'"));
        assert_eq!(patch.commands, ["apply_patch"]);
        assert_mul_edit(patch, &recorded_cwd("fix-then-suite-pass-gpt5"), "    a * b");
        // The intercepted patch reports its exit code inside the command's output.
        assert_eq!(
            patch.outcome,
            Outcome {
                status: Status::Completed,
                exit_code: Some(0)
            }
        );
        assert_eq!(
            suite(&t).outcome,
            Outcome {
                status: Status::Completed,
                exit_code: Some(0)
            }
        );
        assert!(t.ended);
        assert_eq!(claim(&t), Some("Fixed the bug; all tests pass."));
    }

    const ALL: [(&str, Format); 8] = [
        ("fix-then-suite-pass.jsonl", Format::CodexExec),
        ("suite-failed-then-claim.jsonl", Format::CodexExec),
        ("claim-without-suite.jsonl", Format::CodexExec),
        ("fix-then-suite-pass-gpt5.jsonl", Format::CodexExec),
        ("rollout-fix-then-suite-pass.jsonl", Format::CodexRollout),
        ("rollout-suite-failed-then-claim.jsonl", Format::CodexRollout),
        ("rollout-claim-without-suite.jsonl", Format::CodexRollout),
        ("rollout-fix-then-suite-pass-gpt5.jsonl", Format::CodexRollout),
    ];

    #[test]
    fn truncated_recordings_have_not_ended_and_make_no_claim() {
        for (name, format) in ALL {
            let t = read_text(&first_half(&fixture(name)), format);
            assert!(!t.ended, "{name}");
            assert_eq!(t.claim, None, "{name}");
            assert!(t.malformed.is_empty(), "{name}");
        }
        // What was read of a truncated rollout still counts: the patch and its edit.
        let t = read_text(
            &first_half(&fixture("rollout-fix-then-suite-pass.jsonl")),
            Format::CodexRollout,
        );
        assert_eq!(tools(&t), ["apply_patch"]);
        assert_mul_edit(&t.steps[0], &recorded_cwd("fix-then-suite-pass"), "    a * b");
    }

    #[test]
    fn a_garbage_line_is_counted_and_the_rest_read() {
        for (name, format) in ALL {
            let whole = read_text(&fixture(name), format);
            let (text, at) = with_garbage(&fixture(name));
            let t = read_text(&text, format);
            assert_eq!(t.malformed.len(), 1, "{name}");
            assert_eq!(t.malformed[0].line, at, "{name}");
            assert_eq!(t.steps, whole.steps, "{name}");
            assert_eq!(t.claim, whole.claim, "{name}");
            assert!(t.ended, "{name}");
            assert_eq!(t.lines, whole.lines + 1, "{name}");
        }
    }

    #[test]
    fn both_formats_are_detected() {
        for (name, format) in ALL {
            let path = format!(
                "{}/../../tests/fixtures/replay/codex/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            let mut input = BufReader::new(std::fs::File::open(&path).unwrap());
            assert_eq!(crate::detect(&mut input).unwrap(), Some(format), "{name}");
        }
    }

    #[test]
    fn read_file_detects_and_reads() {
        let bundle = bundle();
        let cx = ReadContext { bundle: &bundle };
        let path = format!(
            "{}/../../tests/fixtures/replay/codex/rollout-fix-then-suite-pass.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        let t = crate::read_file(Path::new(&path), None, &cx).unwrap();
        assert_eq!(t.format, "codex-rollout");
        assert_eq!(t.steps.len(), 2);
    }

    #[test]
    fn an_item_seen_only_started_is_one_step_of_unknown_outcome() {
        let text = concat!(
            r#"{"type":"thread.started","thread_id":"t"}"#,
            "\n",
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"bash -lc 'cargo test'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
            "\n",
            r#"{"type":"item.updated","item":{"id":"item_0","type":"command_execution","command":"bash -lc 'cargo test'","aggregated_output":"x","exit_code":null,"status":"in_progress"}}"#,
            "\n",
        );
        let t = read_text(text, Format::CodexExec);
        assert_eq!(t.steps.len(), 1);
        assert_eq!(t.steps[0].commands, ["cargo test"]);
        assert_eq!(
            t.steps[0].outcome,
            Outcome {
                status: Status::Unknown,
                exit_code: None
            }
        );
        assert!(!t.ended);
        assert_eq!(t.claim, None);
    }

    #[test]
    fn exec_items_map_their_kinds() {
        let text = concat!(
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'rm -rf build'","aggregated_output":"","exit_code":null,"status":"declined"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_1","type":"file_change","changes":[{"path":"/w/a.rs","kind":"add"},{"path":"/w/b.rs","kind":"delete"}],"status":"completed"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"q":"x"},"status":"failed","error":{"message":"no"}}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_3","type":"web_search","query":"rust"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_4","type":"reasoning","text":"hmm"}}"#,
            "\n",
            r#"{"type":"item.updated","item":{"id":"item_5","type":"todo_list","items":[]}}"#,
            "\n",
            r#"{"type":"item.completed","item":"not an object"}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_6","type":"agent_message","text":"  Working on it.  "}}"#,
            "\n",
            r#"{"type":"something.new"}"#,
            "\n",
            r#"{"no_type":true}"#,
            "\n",
            r#"{"type":"turn.failed","error":{"message":"stream disconnected"}}"#,
            "\n",
        );
        let t = read_text(text, Format::CodexExec);
        assert_eq!(
            tools(&t),
            ["exec_command", "apply_patch", "mcp__docs__search", "web_search"]
        );
        assert_eq!(t.steps[0].outcome.status, Status::Refused);
        assert_eq!(t.steps[0].commands, ["rm -rf build"]);
        let edits = &t.steps[1].edits;
        assert_eq!(edits[0], Edit::invisible("/w/a.rs", EditKind::Create));
        assert_eq!(
            edits[1],
            Edit {
                visible: true,
                ..Edit::invisible("/w/b.rs", EditKind::Delete)
            }
        );
        assert_eq!(t.steps[1].effects.writes, ["/w/a.rs", "/w/b.rs"]);
        // An MCP tool the provider file does not know gets the conservative profile.
        assert_eq!(t.steps[2].effects, sixfold_core::effects::EffectProfile::unknown());
        assert_eq!(t.steps[2].outcome.status, Status::Failed);
        assert!(t.steps[3].effects.reaches);
        assert_eq!(t.steps[3].outcome.status, Status::Completed);
        assert_eq!(t.skipped.get("item.completed/reasoning"), Some(&1));
        assert_eq!(t.skipped.get("item.updated/todo_list"), Some(&1));
        assert_eq!(t.skipped.get("item.completed"), Some(&1));
        assert_eq!(t.skipped.get("something.new"), Some(&1));
        assert_eq!(t.skipped.get("untyped"), Some(&1));
        assert!(t.ended);
        let claim = t.claim.unwrap();
        assert!(claim.is_error);
        assert_eq!(claim.message, "Working on it.");
        assert_eq!(claim.result.as_deref(), Some("stream disconnected"));
    }

    #[test]
    fn a_new_turn_reopens_the_run() {
        let text = concat!(
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"one"}}"#,
            "\n",
            r#"{"type":"turn.completed","usage":{}}"#,
            "\n",
            r#"{"type":"turn.started"}"#,
            "\n",
        );
        let t = read_text(text, Format::CodexExec);
        assert!(!t.ended);
        assert_eq!(t.claim, None);
    }

    #[test]
    fn rollout_shapes_without_a_fixture() {
        let text = concat!(
            r#"{"type":"session_meta","payload":{"cwd":"/w","id":"s"}}"#,
            "\n",
            // An event before its call: the call joins the step the event made.
            r#"{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"c1","command":["/bin/bash","-lc","cargo test"],"cwd":"file:///w/sub%20dir","status":"failed","exit_code":101}}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cargo test\",\"workdir\":\"sub dir\"}","call_id":"c1"}}"#,
            "\n",
            // `shell` with an argument vector; the older JSON output with its exit code.
            r#"{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"echo hi > out.txt\"]}","call_id":"c2"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c2","output":"{\"output\":\"\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"}}"#,
            "\n",
            // A patch whose event never came: its edits from the patch text.
            r#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Add File: notes.md\n+# Notes\n+hi\n*** Delete File: old.rs\n*** Update File: src/a.rs\n@@ fn f()\n-    1\n+    2\n*** End Patch\n","call_id":"c3"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"not json","call_id":"c4"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c4","output":"Plan updated"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call","name":"mystery","arguments":"{}","call_id":"c5"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c5","output":"exec command rejected by user"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"nobody","output":"x"}}"#,
            "\n",
            r#"{"type":"response_item","payload":"not an object"}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"item_completed"}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"agent_message","message":"All done."}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":null}}"#,
            "\n",
        );
        let t = read_text(text, Format::CodexRollout);
        assert_eq!(t.cwd.as_deref(), Some("/w"));
        assert_eq!(
            tools(&t),
            ["exec_command", "shell", "apply_patch", "update_plan", "mystery"]
        );
        let suite = &t.steps[0];
        assert_eq!(suite.commands, ["cargo test"]);
        assert_eq!(suite.cwd.as_deref(), Some("/w/sub dir"));
        assert_eq!(
            suite.outcome,
            Outcome {
                status: Status::Failed,
                exit_code: Some(101)
            }
        );
        let shell = &t.steps[1];
        assert_eq!(shell.act.text, "bash -lc 'echo hi > out.txt'");
        assert_eq!(shell.commands, ["echo hi"]);
        assert_eq!(shell.edits, vec![Edit::invisible("/w/out.txt", EditKind::Unknown)]);
        assert_eq!(
            shell.outcome,
            Outcome {
                status: Status::Completed,
                exit_code: Some(0)
            }
        );
        let patch = &t.steps[2];
        assert_eq!(patch.effects.writes, ["/w/notes.md", "/w/old.rs", "/w/src/a.rs"]);
        assert_eq!(patch.edits[0].kind, EditKind::Create);
        assert_eq!(
            patch.edits[0].added[1],
            EditLine {
                line: Some(2),
                text: "hi".into()
            }
        );
        assert_eq!(
            patch.edits[1],
            Edit {
                visible: true,
                ..Edit::invisible("/w/old.rs", EditKind::Delete)
            }
        );
        assert_eq!(
            patch.edits[2].removed,
            vec![EditLine {
                line: None,
                text: "    1".into()
            }]
        );
        assert_eq!(
            patch.edits[2].added,
            vec![EditLine {
                line: None,
                text: "    2".into()
            }]
        );
        assert_eq!(patch.outcome.status, Status::Unknown);
        assert_eq!(
            t.steps[3].outcome,
            Outcome {
                status: Status::Completed,
                exit_code: None
            }
        );
        assert_eq!(t.steps[4].effects, sixfold_core::effects::EffectProfile::unknown());
        assert_eq!(t.steps[4].outcome.status, Status::Refused);
        assert_eq!(t.skipped.get("response_item"), Some(&1));
        assert_eq!(t.skipped.get("event_msg/item_completed"), Some(&1));
        assert!(t.ended);
        assert_eq!(claim(&t), Some("All done."));
    }

    #[test]
    fn older_patch_events_carry_the_changes() {
        let text = concat!(
            r#"{"type":"session_meta","payload":{"cwd":"/w"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call","name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\\n*** Update File: t.rs\\n@@\\n-a\\n+b\\n*** End Patch\"}","call_id":"p1"}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"patch_apply_begin","call_id":"p1","changes":{"/w/t.rs":{"update":{"unified_diff":"@@ -3 +3 @@\n-a\n+b\n","move_path":null}},"/w/n.rs":{"add":{"content":"x\ny\n"}}}}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"patch_apply_end","call_id":"p1","success":true}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cargo test\"}","call_id":"e1"}}"#,
            "\n",
            r#"{"type":"event_msg","payload":{"type":"exec_command_end","call_id":"e1","exit_code":101}}"#,
            "\n",
        );
        let t = read_text(text, Format::CodexRollout);
        assert_eq!(tools(&t), ["apply_patch", "exec_command"]);
        let patch = &t.steps[0];
        assert_eq!(patch.outcome.status, Status::Completed);
        let n = patch.edits.iter().find(|e| e.path == "/w/n.rs").unwrap();
        assert_eq!((n.kind, n.added.len()), (EditKind::Create, 2));
        let u = patch.edits.iter().find(|e| e.path == "/w/t.rs").unwrap();
        assert_eq!(
            u.removed,
            vec![EditLine {
                line: Some(3),
                text: "a".into()
            }]
        );
        assert_eq!(
            t.steps[1].outcome,
            Outcome {
                status: Status::Failed,
                exit_code: Some(101)
            }
        );
    }

    #[test]
    fn exit_codes_are_read_from_output_headers() {
        assert_eq!(
            output_exit_code("Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n"),
            Some(0)
        );
        assert_eq!(
            output_exit_code("Chunk ID: a\nWall time: 1 seconds\nProcess exited with code 101\nOutput:\n"),
            Some(101)
        );
        assert_eq!(
            output_exit_code("Wall time: 0 seconds\nOutput:\nExit code: 0\nWall time: 0.2 seconds\n"),
            Some(0)
        );
        assert_eq!(
            output_exit_code("Chunk ID: a\nProcess running with session ID 3\nOutput:\nExit code: 5\n"),
            None
        );
        assert_eq!(
            output_exit_code("Wall time: 1 seconds\nOutput:\nhello\nExit code: 7\n"),
            None
        );
        assert_eq!(
            output_exit_code(r#"{"output":"x","metadata":{"exit_code":2}}"#),
            Some(2)
        );
        assert_eq!(output_exit_code("Plan updated"), None);
        assert_eq!(output_exit_code(""), None);
    }

    #[test]
    fn hunks_are_numbered() {
        let (removed, added) =
            hunk_lines("@@ -1,3 +1,4 @@\n a\n-b\n+c\n+d\n e\n\\ No newline at end of file\n@@ -10 +11 @@\n-x\n+y\n");
        assert_eq!(
            removed,
            vec![
                EditLine {
                    line: Some(2),
                    text: "b".into()
                },
                EditLine {
                    line: Some(10),
                    text: "x".into()
                }
            ]
        );
        assert_eq!(
            added,
            vec![
                EditLine {
                    line: Some(2),
                    text: "c".into()
                },
                EditLine {
                    line: Some(3),
                    text: "d".into()
                },
                EditLine {
                    line: Some(11),
                    text: "y".into()
                }
            ]
        );
        assert_eq!(hunk_lines("--- a\n+++ b\nno hunk\n"), (vec![], vec![]));
        assert_eq!(hunk_lines("@@ garbage @@\n-x\n"), (vec![], vec![]));
    }

    #[test]
    fn small_helpers() {
        assert_eq!(uri_path("file:///tmp/a%20b/ws"), "/tmp/a b/ws");
        assert_eq!(uri_path("/plain"), "/plain");
        assert_eq!(uri_path("file:///x%2"), "/x%2");
        assert_eq!(
            command_text(Some(&serde_json::json!(["/bin/bash", "-lc", "it's"]))),
            r"/bin/bash -lc 'it'\''s'"
        );
        assert_eq!(command_text(Some(&serde_json::json!("ls -l"))), "ls -l");
        assert_eq!(command_text(None), "");
    }
}
