//! Traces: what the layers observed of a run, in one normalised shape, and the facts rows read.
//!
//! A trace is ordered steps (the act, its effects, its outcome, the edits it made where they are
//! visible), the vendor's record (its init line), and the final claim. Readers of vendor formats
//! live in the replay layer; the hook adapters write sixfold's own event log ([`Event`]), which
//! folds into a trace here, so the live hooks and replay see the same facts.

use crate::effects::EffectProfile;
use crate::scope::Workspace;
use serde::{Deserialize, Serialize};

mod diff;
mod events;
mod facts;
mod so_far;

pub use diff::{parse_unified_diff, HunkReader};
pub use events::{preamble, Event, SessionStart};
pub use facts::{edits_facts, step_facts};
pub use so_far::SoFar;

/// Lines kept per edit: an edit larger than this is kept as not visible rather than held whole.
pub const MAX_EDIT_LINES: usize = 20_000;

/// Bytes of edit content one trace keeps in all. Past it, further edits are kept as not visible,
/// so memory stays flat however long the recording grows; rows that need the content say unk.
pub const MAX_EDIT_BYTES: usize = 8 * 1024 * 1024;

/// Bytes of a command's output one step keeps: its start and its end (where runners print
/// their summaries), with the middle cut out.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// Bytes of command output one trace keeps in all; past it, the oldest outputs are dropped
/// (a row that reads one says unk).
pub const MAX_TRACE_OUTPUT_BYTES: usize = 8 * 1024 * 1024;

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It ran and succeeded.
    Completed,
    /// It ran and failed.
    Failed,
    /// It was stopped before running (by a hook, a person or the agent CLI).
    Refused,
    /// The record does not say.
    #[default]
    Unknown,
}

/// A step's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Outcome {
    /// How it ended.
    pub status: Status,
    /// The exit code, where the record has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
}

/// One line of an edit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditLine {
    /// 1-based line number in the file (old numbering for removed lines, new for added), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The text, without its newline.
    pub text: String,
}

/// What an edit did to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EditKind {
    /// The file was created.
    Create,
    /// The file was changed.
    Update,
    /// The file was deleted.
    Delete,
    /// The file was written, and how is not known.
    Unknown,
}

/// A change to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    /// The file, absolute where the record allows.
    pub path: String,
    /// What happened to it.
    pub kind: EditKind,
    /// Lines removed.
    #[serde(default)]
    pub removed: Vec<EditLine>,
    /// Lines added.
    #[serde(default)]
    pub added: Vec<EditLine>,
    /// Lines the record shows around the change, unchanged (a hunk's context, numbered as in the
    /// new file): what the change sits beside, such as the `#[test]` a new `#[ignore]` sits on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<EditLine>,
    /// False when the record shows that the file changed but not how.
    pub visible: bool,
}

impl Edit {
    /// An edit whose content the record does not show.
    pub fn invisible(path: impl Into<String>, kind: EditKind) -> Edit {
        Edit {
            path: path.into(),
            kind,
            removed: Vec::new(),
            added: Vec::new(),
            context: Vec::new(),
            visible: false,
        }
    }

    /// Takes one line of a hunk's body (`-removed`, `+added`, ` context`, `\ No newline…`),
    /// numbering it from the running old and new line numbers, which it advances.
    pub fn take_hunk_line(&mut self, line: &str, old: &mut u64, new: &mut u64) {
        if let Some(text) = line.strip_prefix('-') {
            self.removed.push(EditLine {
                line: Some(*old),
                text: text.to_string(),
            });
            *old += 1;
        } else if let Some(text) = line.strip_prefix('+') {
            self.added.push(EditLine {
                line: Some(*new),
                text: text.to_string(),
            });
            *new += 1;
        } else if !line.starts_with('\\') {
            // A context line (` text`, or an empty line where a tool trimmed the space).
            self.context.push(EditLine {
                line: Some(*new),
                text: line.strip_prefix(' ').unwrap_or(line).to_string(),
            });
            *old += 1;
            *new += 1;
        }
    }

    /// What the edit's lines weigh against a trace's budget.
    pub fn content_bytes(&self) -> usize {
        self.removed
            .iter()
            .chain(&self.added)
            .chain(&self.context)
            .map(|l| l.text.len() + 16)
            .sum()
    }

    /// Drops the content of an edit too large to keep; it is then not visible.
    pub fn bounded(mut self) -> Edit {
        if self.removed.len() + self.added.len() + self.context.len() > MAX_EDIT_LINES {
            self.removed.clear();
            self.added.clear();
            self.context.clear();
            self.visible = false;
        }
        self
    }
}

/// What a step does, in words: a command, a path, a URL, a sub-agent, a tool.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct StepAct {
    /// `command`, `path`, `url`, `agent` or `tool`.
    pub kind: String,
    /// The text.
    pub text: String,
}

/// One step of a run.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Step {
    /// The vendor's id for the call (e.g. a tool-use id), to pair it with its result.
    #[serde(default)]
    pub id: String,
    /// The tool's name as the vendor called it.
    pub tool: String,
    /// What it does.
    pub act: StepAct,
    /// Its effects.
    pub effects: EffectProfile,
    /// For a command: each simple command's text after wrappers (`cargo test`), what suite
    /// patterns match.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<String>,
    /// For a command: the classifier's rule for each simple command (`commands/remove`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_rules: Vec<String>,
    /// For a command: each simple command as the classifier read it, in order: what it
    /// writes, where it ran, whether its exit status is the step's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<crate::classify::Part>,
    /// For a command: what it printed, as the record shows it (bounded by
    /// [`MAX_OUTPUT_BYTES`]); `None` when the record has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<Output>,
    /// How it ended.
    pub outcome: Outcome,
    /// The edits it made, where the record shows them (or that it made them).
    #[serde(default)]
    pub edits: Vec<Edit>,
    /// The working directory it ran in, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// What a command printed, as far as it was kept.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Output {
    /// The text kept: all of it, or its start and end.
    pub text: String,
    /// True when part of it was cut (its middle, or all of it past the trace's budget).
    #[serde(default)]
    pub cut: bool,
}

/// The run's final claim.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Claim {
    /// The last assistant message.
    #[serde(default)]
    pub message: String,
    /// The vendor's final result text, where it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Whether the vendor reported the run as an error.
    #[serde(default)]
    pub is_error: bool,
}

/// A line the reader could not use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Malformed {
    /// 1-based line number.
    pub line: u64,
    /// Why.
    pub error: String,
}

/// A run, normalised.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Trace {
    /// The format it was read from.
    pub format: String,
    /// The vendor's own record of the run's set-up (e.g. the init line), as it was.
    #[serde(default)]
    pub record: Option<serde_json::Value>,
    /// The working directory of the run, from the record.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The final claim; `None` when the record ends without one.
    #[serde(rename = "final")]
    pub claim: Option<Claim>,
    /// True when the record shows the run ended (a result line, a completed turn).
    pub ended: bool,
    /// Lines read.
    pub lines: u64,
    /// What the run charged to its leases (sixfold's own record only).
    #[serde(default)]
    pub lease: Option<crate::lease::Run>,
    /// Lines of types the reader does not use, by type.
    pub skipped: std::collections::BTreeMap<String, u64>,
    /// Lines that could not be read.
    pub malformed: Vec<Malformed>,
    /// Bytes of edit content kept so far (bounded by [`MAX_EDIT_BYTES`]).
    #[serde(skip)]
    pub edit_bytes: usize,
    /// Bytes of command output kept so far (bounded by [`MAX_TRACE_OUTPUT_BYTES`]).
    #[serde(skip)]
    pub output_bytes: usize,
    /// Steps before this index have had their output dropped to keep within the budget.
    #[serde(skip)]
    pub output_evicted: usize,
}

impl Trace {
    /// A step by the vendor's id, newest first.
    pub fn step_mut(&mut self, id: &str) -> Option<&mut Step> {
        self.steps.iter_mut().rev().find(|s| s.id == id)
    }

    /// Keeps an edit within the trace's content budget: past [`MAX_EDIT_BYTES`] its lines are
    /// dropped and it is kept as not visible.
    pub fn budget(&mut self, edit: Edit) -> Edit {
        let edit = edit.bounded();
        let size = edit.content_bytes();
        if self.edit_bytes + size > MAX_EDIT_BYTES {
            return Edit {
                removed: Vec::new(),
                added: Vec::new(),
                context: Vec::new(),
                visible: false,
                ..edit
            };
        }
        self.edit_bytes += size;
        edit
    }

    /// Gives back the budget of edits that are being replaced (e.g. an edit read from a tool's
    /// input, superseded by the same edit read from its result).
    pub fn release(&mut self, edits: &[Edit]) {
        let size: usize = edits.iter().map(Edit::content_bytes).sum();
        self.edit_bytes = self.edit_bytes.saturating_sub(size);
    }

    /// Keeps a command's output within the step's and the trace's bounds: a long one keeps its
    /// start and its end; past the trace's budget only that something was cut.
    pub fn keep_output(&mut self, text: &str) -> Output {
        let kept = if text.len() <= MAX_OUTPUT_BYTES {
            Output {
                text: text.to_string(),
                cut: false,
            }
        } else {
            let head = floor_boundary(text, MAX_OUTPUT_BYTES / 4);
            let tail = ceil_boundary(text, text.len() - (MAX_OUTPUT_BYTES - MAX_OUTPUT_BYTES / 4));
            Output {
                text: format!(
                    "{}\n…\n{}",
                    text.get(..head).unwrap_or(""),
                    text.get(tail..).unwrap_or("")
                ),
                cut: true,
            }
        };
        // Past the trace's budget the oldest outputs go first: the suite run that decides a
        // claim is a late one.
        while self.output_bytes + kept.text.len() > MAX_TRACE_OUTPUT_BYTES {
            let Some(step) = self.steps.get_mut(self.output_evicted) else {
                return Output {
                    text: String::new(),
                    cut: true,
                };
            };
            self.output_evicted += 1;
            if let Some(old) = step.output.as_mut() {
                self.output_bytes = self.output_bytes.saturating_sub(old.text.len());
                *old = Output {
                    text: String::new(),
                    cut: true,
                };
            }
        }
        self.output_bytes += kept.text.len();
        kept
    }

    /// Counts a skipped line of a type.
    pub fn skip(&mut self, kind: &str) {
        *self.skipped.entry(kind.to_string()).or_default() += 1;
    }

    /// The facts rows read: the run's record, claim and end, and each step's tool, act, commands,
    /// outcome, where its writes land (classified against the workspace) and its edits (each
    /// path made relative to its root).
    pub fn facts(&self, workspace: &Workspace) -> serde_json::Value {
        let mut facts = self.head_facts();
        let steps: Vec<serde_json::Value> = self.steps.iter().map(|step| step_facts(step, workspace)).collect();
        if let Some(obj) = facts.as_object_mut() {
            obj.insert("steps".into(), steps.into());
        }
        facts
    }

    /// The facts without the steps: the record, the claim, whether the run ended.
    pub fn head_facts(&self) -> serde_json::Value {
        serde_json::json!({
            "format": self.format,
            "record": self.record,
            "cwd": self.cwd,
            "final": self.claim,
            "ended": self.ended,
            "lines": self.lines,
            "lease": self.lease,
        })
    }
}

/// The largest char boundary at or before `at`.
fn floor_boundary(text: &str, at: usize) -> usize {
    (0..=at.min(text.len()))
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(0)
}

/// The smallest char boundary at or after `at`.
fn ceil_boundary(text: &str, at: usize) -> usize {
    (at..=text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_output_keeps_its_start_and_end_and_a_trace_its_budget() {
        let mut t = Trace::default();
        let long = format!(
            "running 3 tests\n{}test result: ok. 3 passed",
            "x".repeat(MAX_OUTPUT_BYTES * 2)
        );
        let kept = t.keep_output(&long);
        assert!(kept.cut);
        assert!(kept.text.len() <= MAX_OUTPUT_BYTES + 8);
        assert!(kept.text.starts_with("running 3 tests") && kept.text.ends_with("3 passed"));
        assert_eq!(
            t.keep_output("short"),
            Output {
                text: "short".into(),
                cut: false
            }
        );
        t.output_bytes = MAX_TRACE_OUTPUT_BYTES;
        assert_eq!(
            t.keep_output("more"),
            Output {
                text: String::new(),
                cut: true
            }
        );
        // Past the budget, the oldest outputs make room for the newest.
        let mut t = Trace::default();
        let chunk = "y".repeat(MAX_OUTPUT_BYTES);
        for _ in 0..(MAX_TRACE_OUTPUT_BYTES / MAX_OUTPUT_BYTES + 2) {
            let output = Some(t.keep_output(&chunk));
            t.steps.push(Step {
                output,
                ..Step::default()
            });
        }
        assert!(t.output_bytes <= MAX_TRACE_OUTPUT_BYTES);
        assert!(t.steps[0].output.as_ref().is_some_and(|o| o.cut && o.text.is_empty()));
        assert!(t
            .steps
            .last()
            .and_then(|s| s.output.as_ref())
            .is_some_and(|o| !o.cut && o.text == chunk));
    }
}
