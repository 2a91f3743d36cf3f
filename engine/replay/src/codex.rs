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

use crate::{text, LineReader, ReadContext};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tollgate_core::trace::{Claim, Edit, EditKind, EditLine, Outcome, Status, Step, StepAct, Trace};

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
        ExecReader { cx, last_text: None, open: HashMap::new() }
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
        let mut step = Step { id: id.to_string(), cwd: trace.cwd.clone(), ..Step::default() };
        match kind {
            "command_execution" => {
                let command = command_text(item.get("command"));
                map_tool(self.cx, &mut step, EXEC_TOOL, &serde_json::json!({ "cmd": command }), &cwd);
            }
            "file_change" => {
                map_tool(self.cx, &mut step, PATCH_TOOL, &Value::Object(serde_json::Map::new()), &cwd);
                let paths = exec_changes(item).into_iter().map(|(path, _)| path).collect::<Vec<_>>();
                set_writes(&mut step, &paths);
            }
            "mcp_tool_call" => {
                let server = text(item, "server").unwrap_or("");
                let tool = text(item, "tool").unwrap_or("");
                let input = item.get("arguments").cloned().unwrap_or(Value::Null);
                map_tool(self.cx, &mut step, &format!("mcp__{server}__{tool}"), &input, &cwd);
            }
            _ => {
                let query = text(item, "query").unwrap_or("");
                map_tool(self.cx, &mut step, "web_search", &serde_json::json!({ "query": query }), &cwd);
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
    step.outcome = Outcome { status, exit_code: exit_code.or(step.outcome.exit_code) };
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
                    EditKind::Delete => Edit { visible: true, ..Edit::invisible(path, kind) },
                    _ => Edit::invisible(path, kind),
                })
                .collect()
        };
    }
}

/// A file change item's `changes`: `[{path, kind: add|delete|update}]`.
fn exec_changes(item: &Value) -> Vec<(String, EditKind)> {
    let Some(changes) = item.get("changes").and_then(Value::as_array) else { return Vec::new() };
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
                // A new turn: the run has not ended until it does.
                trace.ended = false;
                trace.claim = None;
            }
            "item.started" | "item.updated" | "item.completed" => match value.get("item") {
                Some(item) if item.is_object() => self.item(trace, &kind, item),
                _ => trace.skip(&kind),
            },
            "turn.completed" => {
                trace.ended = true;
                trace.claim = Some(Claim { message: self.last_text.clone().unwrap_or_default(), result: None, is_error: false });
            }
            "turn.failed" => {
                trace.ended = true;
                trace.claim = Some(Claim {
                    message: self.last_text.clone().unwrap_or_default(),
                    result: value.pointer("/error/message").and_then(Value::as_str).map(String::from),
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
            other => trace.skip(&format!("response_item/{}", if other.is_empty() { "untyped" } else { other })),
        }
    }

    /// A tool call: a new step, or (when an event for it came first) the step that event made.
    fn call<'t>(&mut self, trace: &'t mut Trace, payload: &Value, name: &str, mut input: Value) -> Option<&'t mut Step> {
        let id = text(payload, "call_id").or_else(|| text(payload, "id")).unwrap_or("").to_string();
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
        let step_cwd = workdir.map(|w| w.to_string_lossy().into_owned()).or_else(|| trace.cwd.clone());
        let existing = !id.is_empty() && trace.steps.iter().any(|s| s.id == id);
        if !existing {
            trace.steps.push(Step { id: id.clone(), ..Step::default() });
        }
        let step = if existing { trace.step_mut(&id) } else { trace.steps.last_mut() };
        let step = step?;
        let known_edits = !step.edits.is_empty();
        let known_writes = known_edits.then(|| step.effects.writes.clone());
        if step.cwd.is_none() {
            step.cwd = step_cwd;
        }
        map_tool(self.cx, step, name, &input, &cwd);
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
                let Some(item) = payload.get("item") else { return trace.skip("event_msg/item_completed") };
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
            }
            "task_complete" => {
                let message = text(payload, "last_agent_message")
                    .map(|m| m.trim().to_string())
                    .or_else(|| self.last_text.clone())
                    .unwrap_or_default();
                trace.ended = true;
                trace.claim = Some(Claim { message, result: None, is_error: false });
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
            other => trace.skip(&format!("event_msg/{}", if other.is_empty() { "untyped" } else { other })),
        }
    }

    /// The step an event is about: the call with its id, or a new step when there was no call
    /// (a command the user ran, or an event that came before its call).
    fn event_step<'t>(&self, trace: &'t mut Trace, id: &str, tool: &str, input: &Value) -> Option<&'t mut Step> {
        if id.is_empty() || trace.steps.iter().all(|s| s.id != id) {
            let cwd = cwd_of(trace);
            let mut step = Step { id: id.to_string(), cwd: trace.cwd.clone(), ..Step::default() };
            map_tool(self.cx, &mut step, tool, input, &cwd);
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
        let Some(step) = self.event_step(trace, id, PATCH_TOOL, &input) else { return };
        if status != Status::Unknown {
            step.outcome.status = status;
        }
        match status {
            // Never ran: nothing changed.
            Status::Refused => step.edits.clear(),
            // It may have changed some files, and how is not known.
            Status::Failed => {
                let kinds = edits.into_iter().map(|e| Edit::invisible(e.path, e.kind)).collect::<Vec<_>>();
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
        let Some(step) = self.event_step(trace, id, EXEC_TOOL, &input) else { return };
        if cwd.is_some() {
            step.cwd = cwd;
        }
        let exit_code = item.get("exit_code").and_then(Value::as_i64);
        let status = match text(item, "status").map(item_status) {
            Some(s) if s != Status::Unknown => s,
            _ if exit_code.is_some() => code_status(exit_code),
            _ => step.outcome.status,
        };
        step.outcome = Outcome { status, exit_code: exit_code.or(step.outcome.exit_code) };
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
                "function_call" | "custom_tool_call" | "local_shell_call" | "function_call_output"
                | "custom_tool_call_output" | "message",
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
        Some(Value::Array(items)) => items.iter().filter_map(|i| text(i, "text")).collect::<Vec<_>>().join("\n"),
        Some(other @ Value::Object(_)) => text(other, "content").unwrap_or("").to_string(),
        _ => String::new(),
    };
    let exit_code = output_exit_code(&output);
    if step.outcome.exit_code.is_none() {
        step.outcome.exit_code = exit_code;
    }
    if step.outcome.status == Status::Unknown {
        let refused =
            ["rejected by user", "declined by user", "blocked by"].iter().any(|needle| output.contains(needle));
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
    const HEADERS: [&str; 6] =
        ["Chunk ID:", "Wall time:", "Original token count:", "Total output lines:", "Process running", "Output:"];
    let mut sections = 0;
    for line in output.lines() {
        let line = line.trim();
        let code = line.strip_prefix("Exit code: ").or_else(|| line.strip_prefix("Process exited with code "));
        if let Some(code) = code {
            return code.split(|c: char| !c.is_ascii_digit() && c != '-').next()?.parse().ok();
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
    let Some(changes) = changes.and_then(Value::as_object) else { return Vec::new() };
    let mut edits = Vec::new();
    for (path, change) in changes {
        let (kind, body) = match text(change, "type") {
            Some(kind) => (change_kind(kind), change),
            None => match ["add", "delete", "update"].iter().find_map(|k| change.get(*k).map(|b| (*k, b))) {
                Some((kind, body)) => (change_kind(kind), body),
                None => (EditKind::Unknown, change),
            },
        };
        let mut edit = Edit { path: path.clone(), kind, removed: Vec::new(), added: Vec::new(), visible: true };
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
    let (mut removed, mut added) = (Vec::new(), Vec::new());
    let (mut old, mut new) = (0u64, 0u64);
    let mut in_hunk = false;
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("@@") {
            let mut parts = rest.split_whitespace();
            let start = |s: Option<&str>, sign: char| -> Option<u64> {
                s?.strip_prefix(sign)?.split(',').next()?.parse().ok()
            };
            match (start(parts.next(), '-'), start(parts.next(), '+')) {
                (Some(o), Some(n)) => {
                    (old, new) = (o, n);
                    in_hunk = true;
                }
                _ => in_hunk = false,
            }
            continue;
        }
        if !in_hunk {
            continue;
        }
        if let Some(t) = line.strip_prefix('-') {
            removed.push(EditLine { line: Some(old), text: t.to_string() });
            old += 1;
        } else if let Some(t) = line.strip_prefix('+') {
            added.push(EditLine { line: Some(new), text: t.to_string() });
            new += 1;
        } else if !line.starts_with('\\') {
            old += 1;
            new += 1;
        }
    }
    (removed, added)
}

/// The edits an `apply_patch` patch describes (`*** Add File:`, `*** Update File:`,
/// `*** Delete File:`, `*** Move to:`), before Codex reports them: lines of an update are not
/// numbered (the patch locates them by context), lines of a new file are.
fn patch_edits(patch: &str, cwd: &Path) -> Vec<Edit> {
    let mut edits: Vec<Edit> = Vec::new();
    let path = |p: &str| absolute(cwd, p.trim()).to_string_lossy().into_owned();
    for line in patch.lines() {
        if let Some(p) = line.strip_prefix("*** Add File: ") {
            edits.push(Edit { path: path(p), kind: EditKind::Create, removed: vec![], added: vec![], visible: true });
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            edits.push(Edit { path: path(p), kind: EditKind::Update, removed: vec![], added: vec![], visible: true });
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            edits.push(Edit { path: path(p), kind: EditKind::Delete, removed: vec![], added: vec![], visible: true });
        } else if let Some(p) = line.strip_prefix("*** Move to: ") {
            edits.push(Edit::invisible(path(p), EditKind::Create));
        } else if line.starts_with("***") || line.starts_with("@@") {
            continue;
        } else if let Some(edit) = edits.last_mut().filter(|e| e.visible) {
            match edit.kind {
                EditKind::Create => {
                    if let Some(t) = line.strip_prefix('+') {
                        let n = edit.added.len() as u64 + 1;
                        edit.added.push(EditLine { line: Some(n), text: t.to_string() });
                    }
                }
                EditKind::Update => {
                    if let Some(t) = line.strip_prefix('-') {
                        edit.removed.push(EditLine { line: None, text: t.to_string() });
                    } else if let Some(t) = line.strip_prefix('+') {
                        edit.added.push(EditLine { line: None, text: t.to_string() });
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

/// Maps a tool call through the provider file: the act, its effects and, for a command, its
/// parts and the files it writes by name (unless the step already shows edits).
fn map_tool(cx: &ReadContext<'_>, step: &mut Step, tool: &str, input: &Value, cwd: &Path) {
    step.tool = tool.to_string();
    match cx.bundle.provider(PROVIDER) {
        Some(provider) => {
            let mapped = provider.tool_effects(tool, input, cwd, cx.bundle.classifier());
            step.act = StepAct { kind: mapped.act.kind.to_string(), text: mapped.act.text };
            step.effects = mapped.effects;
            if let Some(classified) = mapped.classified {
                step.commands = classified.parts.iter().map(|p| p.text.clone()).collect();
                step.command_rules = classified.parts.iter().map(|p| p.rule.clone().unwrap_or_default()).collect();
                if step.edits.is_empty() {
                    step.edits = command_edits(&step.effects.writes, cwd);
                }
            }
        }
        None => {
            step.act = StepAct { kind: "tool".into(), text: tool.to_string() };
            step.effects = tollgate_core::effects::EffectProfile::unknown();
        }
    }
}

/// Replaces a patch step's writes (the provider's broad scope) with the files it names.
fn set_writes(step: &mut Step, paths: &[String]) {
    if paths.is_empty() {
        return;
    }
    step.effects.writes = paths.to_vec();
    if step.act.kind != "command" {
        if let Some(first) = paths.first() {
            step.act = StepAct { kind: "path".into(), text: first.clone() };
        }
    }
}

/// Files a shell command writes by name: their content is not in the record. The working
/// directory itself (a build tool's output) and unknown places are not files.
fn command_edits(writes: &[String], cwd: &Path) -> Vec<Edit> {
    writes
        .iter()
        .filter(|w| w.as_str() != "*" && Path::new(w.as_str()) != cwd && !w.ends_with('/'))
        .map(|w| Edit::invisible(w.clone(), EditKind::Unknown))
        .collect()
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
        Some(Value::Array(words)) => words.iter().filter_map(Value::as_str).map(quote).collect::<Vec<_>>().join(" "),
        _ => String::new(),
    }
}

/// Quotes a word for a POSIX shell when it needs it.
fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word.chars().all(|c| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c));
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
        Some(Value::Array(blocks)) => {
            blocks.iter().filter_map(|b| text(b, "text")).collect::<Vec<_>>().join("\n").trim().to_string()
        }
        _ => String::new(),
    }
}

fn numbered(content: &str) -> Vec<EditLine> {
    content.lines().enumerate().map(|(i, l)| EditLine { line: Some(i as u64 + 1), text: l.to_string() }).collect()
}

/// `file:///tmp/a%20b` → `/tmp/a b`; anything else as it is.
fn uri_path(uri: &str) -> String {
    let Some(rest) = uri.strip_prefix("file://") else { return uri.to_string() };
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
    use std::io::BufReader;
    use tollgate_core::bundle::Bundle;

    fn bundle() -> Bundle {
        Bundle::load(&[tollgate_core::shipped::source()]).0
    }

    fn fixture(name: &str) -> String {
        let path = format!("{}/../../tests/fixtures/replay/codex/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn read_text(text: &str, format: Format) -> Trace {
        let bundle = bundle();
        read(BufReader::new(text.as_bytes()), format, &ReadContext { bundle: &bundle })
    }

    fn tools(trace: &Trace) -> Vec<&str> {
        trace.steps.iter().map(|s| s.tool.as_str()).collect()
    }

    #[test]
    fn dump() {
        for name in ["fix-then-suite-pass-gpt5.jsonl", "rollout-fix-then-suite-pass-gpt5.jsonl", "rollout-fix-then-suite-pass.jsonl"] {
            let format = if name.starts_with("rollout") { Format::CodexRollout } else { Format::CodexExec };
            let mut t = read_text(&fixture(name), format);
            t.record = None;
            eprintln!("{name}: {}", serde_json::to_string_pretty(&t).unwrap());
        }
    }
}
