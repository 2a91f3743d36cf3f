//! Claude Code: the headless stream (`--output-format stream-json --verbose`) and the session file.
//!
//! Both hold `assistant` lines whose content has `tool_use` blocks and `user` lines whose content
//! has `tool_result` blocks, with the tool's structured result beside them (`tool_use_result` in
//! the stream, `toolUseResult` in the session file). The stream starts with a `system/init` line
//! (the vendor's record) and ends with a `result` line; the session file has neither.

use crate::reader::{map_tool, text, LineReader, ReadContext};
use serde_json::Value;
use sixfold_core::trace::{Claim, Edit, EditKind, EditLine, Outcome, Status, Step, Trace};
use std::path::PathBuf;

/// The provider file this reader maps tools through.
const PROVIDER: &str = "claude-code";

/// Reads Claude Code's stream-json output or session file.
pub(crate) struct Reader<'a> {
    cx: &'a ReadContext<'a>,
    session: bool,
    last_text: Option<String>,
}

impl<'a> Reader<'a> {
    /// A reader of the session file when `session`, else of the stream.
    pub(crate) fn new(cx: &'a ReadContext<'a>, session: bool) -> Self {
        Reader {
            cx,
            session,
            last_text: None,
        }
    }

    fn cwd(&self, trace: &Trace) -> PathBuf {
        PathBuf::from(trace.cwd.clone().unwrap_or_else(|| "/".into()))
    }

    fn tool_use(&mut self, trace: &mut Trace, block: &Value) {
        let tool = text(block, "name").unwrap_or("").to_string();
        let input = block.get("input").cloned().unwrap_or(Value::Null);
        let cwd = self.cwd(trace);
        let mut step = Step {
            id: text(block, "id").unwrap_or("").to_string(),
            tool: tool.clone(),
            cwd: trace.cwd.clone(),
            ..Step::default()
        };
        map_tool(self.cx, PROVIDER, &mut step, &tool, &input, &cwd);
        // A command sent to the background answers at once: its status is not the command's.
        if input.get("run_in_background").and_then(Value::as_bool) == Some(true) {
            for part in &mut step.parts {
                part.decides_status = false;
            }
        }
        if step.edits.is_empty() {
            step.edits = input_edits(&tool, &input)
                .into_iter()
                .map(|e| trace.budget(e))
                .collect();
        }
        trace.steps.push(step);
    }

    fn tool_result(&mut self, trace: &mut Trace, block: &Value, structured: Option<&Value>) {
        let Some(id) = text(block, "tool_use_id") else { return };
        // The result's edits replace the ones read from the input: give their budget back first.
        if structured.is_some() {
            let replaced = trace.step_mut(id).map(|s| s.edits.clone()).unwrap_or_default();
            trace.release(&replaced);
        }
        let edits = trace
            .step_mut(id)
            .and_then(|step| structured.and_then(|s| result_edits(&step.tool, s)))
            .map(|edits| edits.into_iter().map(|e| trace.budget(e)).collect::<Vec<_>>());
        let content = result_text(block.get("content"));
        let command = trace.step_mut(id).is_some_and(|s| s.act.kind == "command");
        let output = command.then(|| trace.keep_output(&content));
        let Some(step) = trace.step_mut(id) else { return };
        if output.is_some() {
            step.output = output;
        }
        let is_error = block.get("is_error").and_then(|e| e.as_bool());
        let interrupted = structured
            .and_then(|s| s.get("interrupted"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        step.outcome = if is_error == Some(true) {
            let refused = [
                "hook error",
                "denied",
                "doesn't want to proceed",
                "Permission to use",
                "blocked by",
            ]
            .iter()
            .any(|needle| content.contains(needle));
            Outcome {
                status: if refused { Status::Refused } else { Status::Failed },
                exit_code: exit_code(&content),
            }
        } else if command && (is_error.is_none() || interrupted) {
            // INVARIANT (fail closed): a command's result that says neither that it failed nor
            // that it did not (no `is_error`), or that it was cut short, is not a pass.
            Outcome {
                status: Status::Unknown,
                exit_code: None,
            }
        } else {
            Outcome {
                status: Status::Completed,
                exit_code: command.then_some(0),
            }
        };
        if let Some(edits) = edits {
            step.edits = edits;
        }
    }
}

impl LineReader for Reader<'_> {
    fn line(&mut self, trace: &mut Trace, value: Value) {
        let kind = text(&value, "type").unwrap_or("").to_string();
        match kind.as_str() {
            "system" if text(&value, "subtype") == Some("init") => {
                trace.cwd = text(&value, "cwd").map(String::from);
                trace.record = Some(value);
            }
            "assistant" => {
                if self.session && trace.cwd.is_none() {
                    trace.cwd = text(&value, "cwd").map(String::from);
                }
                let Some(blocks) = value.pointer("/message/content").and_then(|c| c.as_array()) else {
                    return;
                };
                for block in blocks {
                    match text(block, "type") {
                        Some("tool_use") => self.tool_use(trace, block),
                        Some("text") => {
                            let said = text(block, "text").unwrap_or("").trim();
                            if !said.is_empty() {
                                self.last_text = Some(said.to_string());
                            }
                        }
                        _ => {}
                    }
                }
            }
            "user" => {
                if self.session && trace.cwd.is_none() {
                    trace.cwd = text(&value, "cwd").map(String::from);
                }
                let structured = value.get("tool_use_result").or_else(|| value.get("toolUseResult"));
                let Some(blocks) = value.pointer("/message/content").and_then(|c| c.as_array()) else {
                    return;
                };
                for block in blocks {
                    if text(block, "type") == Some("tool_result") {
                        self.tool_result(trace, block, structured);
                    }
                }
            }
            "result" => {
                trace.ended = true;
                trace.claim = Some(Claim {
                    message: self.last_text.clone().unwrap_or_default(),
                    result: text(&value, "result").map(String::from),
                    is_error: value.get("is_error").and_then(|e| e.as_bool()).unwrap_or(false),
                });
            }
            other => trace.skip(if other.is_empty() { "untyped" } else { other }),
        }
    }

    fn finish(&mut self, trace: &mut Trace) {
        // A session file has no result line: the run's claim is its last assistant text, and a
        // file that was read to its end without a broken last line ended there.
        if self.session && trace.claim.is_none() {
            let last_line_broken = trace.malformed.last().is_some_and(|m| m.line == trace.lines);
            if let Some(message) = self.last_text.clone() {
                if !last_line_broken {
                    trace.ended = true;
                    trace.claim = Some(Claim {
                        message,
                        result: None,
                        is_error: false,
                    });
                }
            }
        }
    }
}

/// A tool result's text, whether the content is a string or a list of text blocks.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| text(b, "text"))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// `Exit code N` at the start of a failed command's output.
fn exit_code(content: &str) -> Option<i64> {
    let rest = content
        .trim_start()
        .strip_prefix("Error: ")
        .unwrap_or(content.trim_start());
    let rest = rest.strip_prefix("Exit code ")?;
    rest.split(|c: char| !c.is_ascii_digit() && c != '-')
        .next()?
        .parse()
        .ok()
}

fn lines(text: &str, first: Option<u64>) -> Vec<EditLine> {
    text.lines()
        .enumerate()
        .map(|(i, l)| EditLine {
            line: first.map(|f| f + i as u64),
            text: l.to_string(),
        })
        .collect()
}

/// Edits as the tool's input describes them, before (or without) a result.
fn input_edits(tool: &str, input: &Value) -> Vec<Edit> {
    let path = text(input, "file_path")
        .or_else(|| text(input, "notebook_path"))
        .unwrap_or("")
        .to_string();
    match tool {
        "Write" => vec![Edit {
            path,
            kind: EditKind::Unknown,
            removed: vec![],
            added: lines(text(input, "content").unwrap_or(""), Some(1)),
            context: vec![],
            visible: true,
        }
        .bounded()],
        "Edit" => vec![Edit {
            path,
            kind: EditKind::Update,
            removed: lines(text(input, "old_string").unwrap_or(""), None),
            added: lines(text(input, "new_string").unwrap_or(""), None),
            context: vec![],
            visible: true,
        }
        .bounded()],
        "MultiEdit" => {
            let edits = input
                .get("edits")
                .and_then(|e| e.as_array())
                .cloned()
                .unwrap_or_default();
            let mut edit = Edit {
                path,
                kind: EditKind::Update,
                removed: vec![],
                added: vec![],
                context: vec![],
                visible: true,
            };
            for e in &edits {
                edit.removed.extend(lines(text(e, "old_string").unwrap_or(""), None));
                edit.added.extend(lines(text(e, "new_string").unwrap_or(""), None));
            }
            vec![edit.bounded()]
        }
        "NotebookEdit" => vec![Edit::invisible(path, EditKind::Update)],
        _ => vec![],
    }
}

/// Edits from the tool's structured result: hunks with line numbers, or a created file's content.
fn result_edits(tool: &str, result: &Value) -> Option<Vec<Edit>> {
    if !matches!(tool, "Write" | "Edit" | "MultiEdit") {
        return None;
    }
    let path = text(result, "filePath")?.to_string();
    if text(result, "type") == Some("create") {
        let content = text(result, "content").unwrap_or("");
        return Some(vec![Edit {
            path,
            kind: EditKind::Create,
            removed: vec![],
            added: lines(content, Some(1)),
            context: vec![],
            visible: true,
        }
        .bounded()]);
    }
    let hunks = result.get("structuredPatch")?.as_array()?;
    let mut edit = Edit {
        path,
        kind: EditKind::Update,
        removed: vec![],
        added: vec![],
        context: vec![],
        visible: true,
    };
    for hunk in hunks {
        let mut old = hunk.get("oldStart").and_then(|n| n.as_u64()).unwrap_or(0);
        let mut new = hunk.get("newStart").and_then(|n| n.as_u64()).unwrap_or(0);
        for line in hunk.get("lines").and_then(|l| l.as_array()).into_iter().flatten() {
            if let Some(line) = line.as_str() {
                edit.take_hunk_line(line, &mut old, &mut new);
            }
        }
    }
    Some(vec![edit.bounded()])
}

/// The edits a finished Claude Code tool call made: from its response where it has them
/// (hunks with line numbers), else from its input.
pub fn call_edits(tool: &str, input: &Value, response: &Value) -> Vec<Edit> {
    result_edits(tool, response).unwrap_or_else(|| input_edits(tool, input))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &[serde_json::Value]) -> Trace {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let bundle = sixfold_core::bundle::Bundle::load(&[sixfold_core::shipped::source()]).0;
        let cx = ReadContext { bundle: &bundle };
        crate::read(std::io::Cursor::new(text), crate::Format::ClaudeStream, &cx)
    }

    fn bash(id: &str, input: Value, result: Value) -> [Value; 2] {
        [
            serde_json::json!({"type": "assistant", "message": {"content": [{"type": "tool_use", "id": id, "name": "Bash", "input": input}]}}),
            serde_json::json!({"type": "user", "message": {"content": [result]}}),
        ]
    }

    #[test]
    fn a_command_result_that_says_neither_pass_nor_fail_is_unknown() {
        let init = serde_json::json!({"type": "system", "subtype": "init", "cwd": "/w"});
        let [a, b] = bash(
            "t1",
            serde_json::json!({"command": "cargo test"}),
            serde_json::json!({"type": "tool_result", "tool_use_id": "t1", "content": "running 1 test"}),
        );
        let [c, d] = bash(
            "t2",
            serde_json::json!({"command": "cargo test"}),
            serde_json::json!({"type": "tool_result", "tool_use_id": "t2", "content": "running 1 test", "is_error": false}),
        );
        let t = read(&[init, a, b, c, d]);
        assert_eq!(
            t.steps[0].outcome,
            Outcome {
                status: Status::Unknown,
                exit_code: None
            }
        );
        assert_eq!(t.steps[1].outcome.exit_code, Some(0));
        assert_eq!(
            t.steps[1].output.as_ref().map(|o| o.text.as_str()),
            Some("running 1 test")
        );
    }

    #[test]
    fn a_command_sent_to_the_background_does_not_decide_its_status() {
        let init = serde_json::json!({"type": "system", "subtype": "init", "cwd": "/w"});
        let [a, b] = bash(
            "t1",
            serde_json::json!({"command": "cargo test", "run_in_background": true}),
            serde_json::json!({"type": "tool_result", "tool_use_id": "t1", "content": "started", "is_error": false}),
        );
        let t = read(&[init, a, b]);
        assert!(t.steps[0].parts.iter().all(|p| !p.decides_status));
    }

    #[test]
    fn exit_codes_are_read_from_failed_output() {
        assert_eq!(exit_code("Exit code 101\n   Compiling"), Some(101));
        assert_eq!(exit_code("Error: Exit code 2\n"), Some(2));
        assert_eq!(exit_code("some failure"), None);
    }
}
