//! Codex's rollout file: `{timestamp, type, payload}` lines. `session_meta` is the vendor's
//! record, with the cwd; `response_item` is what the model called (`function_call`,
//! `custom_tool_call`) and the calls' outputs, paired by `call_id`; `event_msg` is what Codex did
//! (`item_completed` with a `FileChange`, whose `unified_diff` per file shows the edit, or a
//! `CommandExecution`, with its exit code; `task_complete` with the last agent message). The event
//! for a call carries the call's id, so a patch Codex intercepted from a shell command still lands
//! on that command.

use super::patch::{patch_edits, rollout_changes, set_patch_edits};
use super::shared::{
    absolute, code_status, command_text, cwd_of, item_status, message_text, set_writes, uri_path, EXEC_TOOL,
    PATCH_TOOL, PROVIDER,
};
use crate::reader::{map_tool, text, LineReader, ReadContext};
use serde_json::Value;
use sixfold_core::trace::{Claim, Edit, Outcome, Status, Step, Trace};

/// Reads the rollout file.
pub(crate) struct RolloutReader<'a> {
    cx: &'a ReadContext<'a>,
    last_text: Option<String>,
}

impl<'a> RolloutReader<'a> {
    /// A reader that maps tools through the bundle in `cx`.
    pub(crate) fn new(cx: &'a ReadContext<'a>) -> Self {
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
        let output = text(item, "aggregated_output").map(|o| trace.keep_output(o));
        let Some(step) = self.event_step(trace, id, EXEC_TOOL, &input) else {
            return;
        };
        if cwd.is_some() {
            step.cwd = cwd;
        }
        // The event's output is the command's own; a call's output wraps it in headers.
        if output.is_some() {
            step.output = output;
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
    let wants_output = step.act.kind == "command" && step.output.is_none();
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
    if wants_output {
        let kept = trace.keep_output(&output);
        if let Some(step) = trace.step_mut(id) {
            step.output = Some(kept);
        }
    }
    let Some(step) = trace.step_mut(id) else { return };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codex::test_support::*;
    use crate::Format;
    use sixfold_core::trace::{EditKind, EditLine};

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
}
