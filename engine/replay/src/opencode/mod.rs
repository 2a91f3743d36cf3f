//! OpenCode: the `opencode run --format json` lines and `opencode export <session>`. Both carry
//! the session's parts as OpenCode stores them (`text`, `tool`, `step-start`, `step-finish`,
//! …): the run prints each finished part as a line (`{type, sessionID, part}`), the export
//! holds the session (`info`) and its messages, each `{info, parts}`. A `tool` part is one
//! call: its `callID`, `tool` and `state` (`status`, `input`, `output` or `error`, `metadata`).
//! A shell command that sixfold's plugin rewrote into the sandbox is recorded rewritten, and is
//! read as the agent wrote it ([`wrapper`]).

mod export;
mod run;
mod wrapper;

pub(crate) use export::read as read_export;
pub(crate) use run::RunReader;

use crate::reader::{map_tool, text, ReadContext};
use serde_json::Value;
use sixfold_core::trace::{parse_unified_diff, Claim, Edit, EditKind, EditLine, Outcome, Status, Step, Trace};
use std::path::PathBuf;

/// The provider file both readers map tools through.
const PROVIDER: &str = "opencode";

/// How sixfold's plugin begins the reason it refuses a call with (its hook throws it, and
/// OpenCode records it as the tool's error).
const SIXFOLD_REFUSAL: &str = "sixfold: ";

/// What else a tool's error says when the call never ran: a permission rule denied it, a person
/// (or `opencode run`, which rejects every ask) rejected it, or the tool was not offered.
const REFUSALS: [&str; 3] = ["rejected permission", "prevents you from using", "unavailable tool"];

/// The parts of one session, in order, whichever record they come from.
pub(crate) struct Parts<'a> {
    cx: &'a ReadContext<'a>,
    last_text: Option<String>,
}

impl<'a> Parts<'a> {
    pub(crate) fn new(cx: &'a ReadContext<'a>) -> Self {
        Parts { cx, last_text: None }
    }

    /// One part. `line` names where it came from when the part's type is not read (a skip).
    fn part(&mut self, trace: &mut Trace, part: &Value) {
        match text(part, "type").unwrap_or("") {
            "text" => {
                // A synthetic text (a reminder OpenCode adds) is not what the agent said.
                if part.get("synthetic").and_then(Value::as_bool) == Some(true) {
                    return;
                }
                let said = text(part, "text").unwrap_or("").trim();
                if !said.is_empty() {
                    self.last_text = Some(said.to_string());
                }
            }
            "tool" => self.tool(trace, part),
            "step-start" | "step-finish" => {}
            other => trace.skip(&format!("part/{}", if other.is_empty() { "untyped" } else { other })),
        }
    }

    /// The run's claim: what the agent said last.
    fn claim(&self, is_error: bool) -> Claim {
        Claim {
            message: self.last_text.clone().unwrap_or_default(),
            result: None,
            is_error,
        }
    }

    fn tool(&mut self, trace: &mut Trace, part: &Value) {
        let tool = text(part, "tool").unwrap_or("").to_string();
        let id = text(part, "callID").unwrap_or("").to_string();
        let state = part.get("state").unwrap_or(&Value::Null);
        let mut input = state.get("input").cloned().unwrap_or(Value::Null);
        if let Some(original) = text(&input, "command").and_then(wrapper::unwrapped) {
            if let Some(slot) = input.get_mut("command") {
                *slot = Value::String(original);
            }
        }
        let cwd = PathBuf::from(trace.cwd.clone().unwrap_or_else(|| "*".into()));
        let mut step = Step {
            id: id.clone(),
            cwd: trace.cwd.clone(),
            ..Step::default()
        };
        map_tool(self.cx, PROVIDER, &mut step, &tool, &input, &cwd);
        let command = step.act.kind == "command";
        step.outcome = outcome(state, command);
        if command {
            let printed = state
                .pointer("/metadata/output")
                .and_then(Value::as_str)
                .or_else(|| text(state, "output"));
            step.output = printed.map(|o| trace.keep_output(o));
        }
        let edits = if step.outcome.status == Status::Refused {
            Vec::new()
        } else if step.edits.is_empty() {
            tool_edits(&tool, &input, state, &cwd)
        } else {
            std::mem::take(&mut step.edits)
        };
        step.edits = edits.into_iter().map(|e| trace.budget(e)).collect();
        // A call seen again (a later state of it) replaces what was read of it.
        if !id.is_empty() {
            if let Some(index) = trace.steps.iter().rposition(|s| s.id == id) {
                let old = trace.steps.remove(index);
                trace.release(&old.edits);
                trace.steps.insert(index, step);
                return;
            }
        }
        trace.steps.push(step);
    }
}

/// How a call ended, from its state: a command's exit code decides a completed command.
fn outcome(state: &Value, command: bool) -> Outcome {
    match text(state, "status") {
        Some("completed") if command => {
            // INVARIANT (fail closed): a command whose record has no exit code is not a pass.
            let exit_code = state.pointer("/metadata/exit").and_then(Value::as_i64);
            Outcome {
                status: match exit_code {
                    Some(0) => Status::Completed,
                    Some(_) => Status::Failed,
                    None => Status::Unknown,
                },
                exit_code,
            }
        }
        Some("completed") => Outcome {
            status: Status::Completed,
            exit_code: None,
        },
        Some("error") => {
            let error = text(state, "error").unwrap_or("");
            let refused =
                error.trim_start().starts_with(SIXFOLD_REFUSAL) || REFUSALS.iter().any(|needle| error.contains(needle));
            Outcome {
                status: if refused { Status::Refused } else { Status::Failed },
                exit_code: None,
            }
        }
        // `pending`, `running`: the record stopped before the call ended.
        _ => Outcome::default(),
    }
}

/// The edits a file tool made: the diff OpenCode recorded where there is one, else its input.
fn tool_edits(tool: &str, input: &Value, state: &Value, cwd: &std::path::Path) -> Vec<Edit> {
    let path = text(input, "filePath").unwrap_or("").to_string();
    let path = if path.is_empty() || path.starts_with('/') {
        path
    } else {
        cwd.join(&path).to_string_lossy().into_owned()
    };
    match tool {
        "edit" => {
            let diff = state
                .pointer("/metadata/filediff/patch")
                .or_else(|| state.pointer("/metadata/diff"))
                .and_then(Value::as_str);
            if let Some(edits) = diff.map(|d| parse_unified_diff(d, cwd)).filter(|e| !e.is_empty()) {
                return edits;
            }
            vec![Edit {
                path,
                kind: EditKind::Update,
                removed: lines(text(input, "oldString").unwrap_or(""), None),
                added: lines(text(input, "newString").unwrap_or(""), None),
                context: vec![],
                visible: true,
            }]
        }
        "write" => {
            let existed = state.pointer("/metadata/exists").and_then(Value::as_bool);
            vec![Edit {
                path,
                kind: if existed == Some(false) {
                    EditKind::Create
                } else {
                    EditKind::Unknown
                },
                removed: vec![],
                added: lines(text(input, "content").unwrap_or(""), Some(1)),
                context: vec![],
                visible: true,
            }]
        }
        "apply_patch" => crate::codex::patch_edits(text(input, "patchText").unwrap_or(""), cwd),
        _ => vec![],
    }
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

#[cfg(test)]
mod tests;
