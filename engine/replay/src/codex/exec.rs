//! Codex's `exec --json` stream: `thread.started`, then per turn `turn.started`, `item.*` lines
//! and `turn.completed` (or `turn.failed`). An item (a command, a file change, an MCP call, a web
//! search, an agent message) may be seen first in `item.started` and again, finished, in
//! `item.completed`: it is one step, paired by the item's `id`. The stream carries no working
//! directory, and a file change only names its files (`{path, kind}`), not their content.

use super::shared::{change_kind, command_text, cwd_of, item_status, set_writes, EXEC_TOOL, PATCH_TOOL, PROVIDER};
use crate::reader::{map_tool, text, LineReader, ReadContext};
use serde_json::Value;
use sixfold_core::trace::{Claim, Edit, EditKind, Outcome, Status, Step, Trace};
use std::collections::HashMap;

/// Reads the `exec --json` stream.
pub(crate) struct ExecReader<'a> {
    cx: &'a ReadContext<'a>,
    last_text: Option<String>,
    /// Items started and not yet completed: item id → index in `trace.steps`.
    open: HashMap<String, usize>,
}

impl<'a> ExecReader<'a> {
    /// A reader that maps tools through the bundle in `cx`.
    pub(crate) fn new(cx: &'a ReadContext<'a>) -> Self {
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
        let output = (kind == "command_execution" && line == "item.completed")
            .then(|| text(item, "aggregated_output").map(|o| trace.keep_output(o)))
            .flatten();
        if let Some(step) = trace.steps.get_mut(index) {
            update_item(step, kind, item, line == "item.completed");
            if output.is_some() {
                step.output = output;
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codex::test_support::*;
    use crate::Format;

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
}
