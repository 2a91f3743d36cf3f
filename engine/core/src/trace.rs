//! Traces: what the layers observed of a run, in one normalised shape, and the facts rows read.
//!
//! A trace is ordered steps (the act, its effects, its outcome, the edits it made where they are
//! visible), the vendor's record (its init line), and the final claim. Readers of vendor formats
//! live in the replay layer; the hook adapters write sixfold's own event log ([`Event`]), which
//! folds into a trace here, so the live hooks and replay see the same facts.

use crate::effects::EffectProfile;
use crate::scope::{Place, Workspace};
use serde::{Deserialize, Serialize};

/// Lines kept per edit: an edit larger than this is kept as not visible rather than held whole.
pub const MAX_EDIT_LINES: usize = 20_000;

/// Bytes of edit content one trace keeps in all. Past it, further edits are kept as not visible,
/// so memory stays flat however long the recording grows; rows that need the content say unk.
pub const MAX_EDIT_BYTES: usize = 8 * 1024 * 1024;

/// Bytes of a command's output one step keeps: its start and its end (where runners print
/// their summaries), with the middle cut out.
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// Bytes of command output one trace keeps in all; past it, outputs are not kept (rows that
/// read them say unk).
pub const MAX_TRACE_OUTPUT_BYTES: usize = 16 * 1024 * 1024;

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
            *old += 1;
            *new += 1;
        }
    }

    /// What the edit's lines weigh against a trace's budget.
    pub fn content_bytes(&self) -> usize {
        self.removed.iter().chain(&self.added).map(|l| l.text.len() + 16).sum()
    }

    /// Drops the content of an edit too large to keep; it is then not visible.
    pub fn bounded(mut self) -> Edit {
        if self.removed.len() + self.added.len() > MAX_EDIT_LINES {
            self.removed.clear();
            self.added.clear();
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
        if self.output_bytes + kept.text.len() > MAX_TRACE_OUTPUT_BYTES {
            return Output {
                text: String::new(),
                cut: true,
            };
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
        })
    }
}

/// One step as facts: what rows read of it. Its raw effects are summed up by where its writes
/// land (`writes`, classified, and `writes_workspace`); the step is built once, without the
/// copies a whole-trace conversion would make, since a long run has many steps.
pub fn step_facts(step: &Step, workspace: &Workspace) -> serde_json::Value {
    let resolved = step.effects.resolve(workspace);
    let writes: Vec<serde_json::Value> = resolved
        .write_places
        .iter()
        .map(|t| place_json(t.path.as_deref(), &t.place))
        .collect();
    let writes_workspace = resolved
        .write_places
        .iter()
        .any(|t| matches!(t.place, Place::Root { .. }));
    let mut obj = serde_json::Map::new();
    obj.insert("tool".into(), step.tool.clone().into());
    obj.insert(
        "act".into(),
        serde_json::json!({ "kind": step.act.kind, "text": step.act.text }),
    );
    obj.insert("commands".into(), step.commands.clone().into());
    obj.insert("command_rules".into(), step.command_rules.clone().into());
    obj.insert("parts".into(), parts_facts(step, workspace));
    obj.insert(
        "output".into(),
        match &step.output {
            Some(o) => serde_json::json!({ "text": o.text, "cut": o.cut }),
            None => serde_json::Value::Null,
        },
    );
    obj.insert(
        "outcome".into(),
        serde_json::to_value(&step.outcome).unwrap_or_default(),
    );
    obj.insert("writes".into(), writes.into());
    obj.insert("writes_workspace".into(), writes_workspace.into());
    obj.insert("reaches".into(), step.effects.reaches.into());
    obj.insert("edits".into(), edits_facts(&step.edits, workspace));
    serde_json::Value::Object(obj)
}

/// Edits as facts: `path`, `kind`, `visible`, `relative` (its path below the workspace root it
/// lies in; absent when it lies in none), and its lines as plain string arrays — `removed` and
/// `added`, with their line numbers in `removed_lines` and `added_lines` (`()` where unknown).
/// Strings, not a map per line: a long run has many lines, and a map costs twenty times more.
pub fn edits_facts(edits: &[Edit], workspace: &Workspace) -> serde_json::Value {
    edits
        .iter()
        .map(|edit| {
            let texts = |lines: &[EditLine]| -> serde_json::Value { lines.iter().map(|l| l.text.clone()).collect() };
            let numbers = |lines: &[EditLine]| -> serde_json::Value { lines.iter().map(|l| l.line).collect() };
            let mut obj = serde_json::Map::new();
            obj.insert("path".into(), edit.path.clone().into());
            obj.insert("kind".into(), serde_json::to_value(edit.kind).unwrap_or_default());
            obj.insert("visible".into(), edit.visible.into());
            obj.insert("removed".into(), texts(&edit.removed));
            obj.insert("removed_lines".into(), numbers(&edit.removed));
            obj.insert("added".into(), texts(&edit.added));
            obj.insert("added_lines".into(), numbers(&edit.added));
            let place = match workspace.resolve(std::slice::from_ref(&edit.path)) {
                crate::scope::Scopes::Paths(p) => p.iter().next().map(|p| workspace.place(p)),
                crate::scope::Scopes::Everything => None,
            };
            if let Some(Place::Root { relative, .. }) = place {
                obj.insert("relative".into(), relative.into());
            }
            serde_json::Value::Object(obj)
        })
        .collect()
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

/// A simple command as facts: its text and rule, where its writes land, the place it ran in,
/// whether its exit status is the step's, and whether a `cd` moved it out of the step's own
/// directory (`moved`).
fn part_facts(part: &crate::classify::Part, moved: bool, workspace: &Workspace) -> serde_json::Value {
    let places = |paths: &[String]| -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        let mut known = Vec::new();
        for path in paths {
            match path.strip_prefix("*/") {
                // Where the record has no working directory (Codex's exec stream), a path
                // relative to the step's own directory lies in the run's workspace.
                Some(rest) if !moved && !rest.split('/').any(|c| c == ".." || c == "*") => {
                    out.push(serde_json::json!({ "path": path, "place": "workspace", "relative": rest }));
                }
                // INVARIANT (fail closed): a path under a directory nobody knows (`cd "$X";
                // rm f` leaves `*/f`) is an unknown place, never one inside the workspace.
                Some(_) => return vec![place_json(None, &Place::Unknown)],
                None => known.push(path.clone()),
            }
        }
        if known.is_empty() && !out.is_empty() {
            return out;
        }
        match workspace.resolve(&known) {
            crate::scope::Scopes::Everything => vec![place_json(None, &Place::Unknown)],
            crate::scope::Scopes::Paths(set) => {
                out.extend(set.iter().map(|p| place_json(Some(p), &workspace.place(p))));
                out
            }
        }
    };
    let dir = if part.dir == "*" && !moved {
        serde_json::json!({ "path": "*", "place": "workspace", "relative": "" })
    } else {
        places(std::slice::from_ref(&part.dir))
            .into_iter()
            .next()
            .unwrap_or_default()
    };
    serde_json::json!({
        "text": part.text,
        "rule": part.rule,
        "writes": places(&part.writes),
        "dir": dir,
        "decides_status": part.decides_status,
        "moved": moved,
    })
}

/// Each part of a step as facts; a part after a `cd`, or in another directory than the step's
/// own (which, where the record does not say, is the run's), is `moved`.
fn parts_facts(step: &Step, workspace: &Workspace) -> serde_json::Value {
    let own = step.cwd.as_deref().unwrap_or("*");
    let mut cd = false;
    let mut out = Vec::new();
    for part in &step.parts {
        out.push(part_facts(part, cd || part.dir != own, workspace));
        cd |= part.rule.as_deref() == Some("cd");
    }
    out.into()
}

fn place_json(path: Option<&std::path::Path>, place: &Place) -> serde_json::Value {
    let mut obj = serde_json::Map::new();
    obj.insert(
        "path".into(),
        path.map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|| "*".into())
            .into(),
    );
    obj.insert("place".into(), place.class().into());
    if let Place::Root { name, relative } = place {
        obj.insert("root".into(), name.clone().into());
        obj.insert("relative".into(), relative.clone().into());
    }
    serde_json::Value::Object(obj)
}

/// Reads the `@@` hunks of a unified diff, line by line, into an edit: a hunk header
/// (`@@ -a,b +c,d @@`) sets the line numbers, the body lines that follow are taken (numbered: old
/// numbering for removed lines, new for added), and [`HunkReader::end`] closes the hunk at a file
/// header. The one hunk reader: `git diff` output and the diffs in vendors' records both use it.
#[derive(Debug, Default)]
pub struct HunkReader {
    old: u64,
    new: u64,
    in_hunk: bool,
}

impl HunkReader {
    /// Closes the current hunk: what follows (a file header, say) is not a body line.
    pub fn end(&mut self) {
        self.in_hunk = false;
    }

    /// Takes one line of the diff into `edit`: a hunk header opens a hunk, a line inside one is
    /// a body line, anything else before the first hunk is ignored.
    pub fn line(&mut self, edit: &mut Edit, line: &str) {
        if let Some(rest) = line.strip_prefix("@@") {
            let mut parts = rest.split_whitespace();
            let start =
                |s: Option<&str>, sign: char| -> Option<u64> { s?.strip_prefix(sign)?.split(',').next()?.parse().ok() };
            match (start(parts.next(), '-'), start(parts.next(), '+')) {
                (Some(old), Some(new)) => {
                    (self.old, self.new) = (old, new);
                    self.in_hunk = true;
                }
                _ => {
                    // INVARIANT (fail closed): a header that cannot be read leaves the file's
                    // lines unknown, so the edit is not visible (rows say unk, never ok).
                    self.in_hunk = false;
                    edit.visible = false;
                }
            }
            return;
        }
        if self.in_hunk {
            edit.take_hunk_line(line, &mut self.old, &mut self.new);
        }
    }
}

/// Parses a unified diff (as `git diff` or `diff -u` print it) into edits, one per file.
/// Paths are as the diff names them (`a/`/`b/` prefixes removed); `base` makes them absolute.
pub fn parse_unified_diff(text: &str, base: &std::path::Path) -> Vec<Edit> {
    let mut edits: Vec<Edit> = Vec::new();
    let mut old_path: Option<String> = None;
    let strip = |p: &str| -> Option<String> {
        let p = p.split('\t').next().unwrap_or(p).trim();
        if p == "/dev/null" {
            return None;
        }
        let p = p.strip_prefix("a/").or_else(|| p.strip_prefix("b/")).unwrap_or(p);
        Some(if p.starts_with('/') {
            p.to_string()
        } else {
            base.join(p).to_string_lossy().into_owned()
        })
    };
    let mut hunks = HunkReader::default();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("--- ") {
            old_path = strip(rest);
            hunks.end();
            continue;
        }
        if let Some(rest) = line.strip_prefix("+++ ") {
            let new_path = strip(rest);
            let (path, kind) = match (&old_path, new_path) {
                (Some(old), None) => (old.clone(), EditKind::Delete),
                (None, Some(new)) => (new, EditKind::Create),
                (_, Some(new)) => (new, EditKind::Update),
                (None, None) => continue,
            };
            edits.push(Edit {
                path,
                kind,
                removed: Vec::new(),
                added: Vec::new(),
                visible: true,
            });
            hunks.end();
            continue;
        }
        if line.starts_with("diff ") {
            hunks.end();
            continue;
        }
        if let Some(edit) = edits.last_mut() {
            hunks.line(edit, line);
        }
    }
    edits.into_iter().map(Edit::bounded).collect()
}

/// One line of sixfold's own event log (`.sixfold/runs/<session>.jsonl`), written by the hook
/// adapters and read back by replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The session started.
    Started {
        /// The session's id.
        session: String,
        /// Its working directory.
        #[serde(default)]
        cwd: Option<String>,
        /// The active mode.
        #[serde(default)]
        mode: Option<String>,
        /// The agent CLI.
        #[serde(default)]
        provider: Option<String>,
        /// The vendor's record, when the adapter saw one.
        #[serde(default)]
        record: Option<serde_json::Value>,
    },
    /// A step was judged before it ran.
    Judged {
        /// The step, as far as it was known then.
        step: Box<Step>,
        /// The judgement: its decision, reason, rules, mode and what decided it, as fields of
        /// the event.
        #[serde(flatten)]
        judgement: crate::decision::Judgement,
    },
    /// A step's outcome was observed after it ran.
    Observed {
        /// The step's id.
        id: String,
        /// How it ended.
        outcome: Outcome,
        /// The edits it made, where visible.
        #[serde(default)]
        edits: Vec<Edit>,
    },
    /// The active mode changed.
    ModeChanged {
        /// The mode before.
        #[serde(default)]
        from: Option<String>,
        /// The mode after.
        to: String,
    },
    /// A person's prompt was submitted (kept short: the log is not a transcript).
    Prompted {
        /// The prompt's first characters.
        prompt: String,
    },
    /// The agent made its final claim (it tried to stop).
    Claimed {
        /// The claim.
        claim: Claim,
    },
    /// Rows were evaluated.
    Verdict {
        /// The results.
        rows: Vec<crate::verdict::RowResult>,
    },
    /// The session ended.
    Ended {},
}

impl Trace {
    /// Folds one event of sixfold's own log into the trace.
    pub fn apply(&mut self, event: Event) {
        match event {
            Event::Started { cwd, record, .. } => {
                if cwd.is_some() {
                    self.cwd = cwd;
                }
                if record.is_some() {
                    self.record = record;
                }
            }
            Event::Judged { mut step, judgement } => {
                if judgement.decision == crate::decision::Decision::Refuse {
                    step.outcome.status = Status::Refused;
                }
                // A step after a claim means the run went on: it has not ended yet.
                self.ended = false;
                self.steps.push(*step);
            }
            Event::Observed { id, outcome, edits } => {
                if let Some(step) = self.step_mut(&id) {
                    step.outcome = outcome;
                    if !edits.is_empty() {
                        step.edits = edits;
                    }
                }
            }
            // A claim is where the agent said it was finished: the record reaches an end there.
            Event::Claimed { claim } => {
                self.claim = Some(claim);
                self.ended = true;
            }
            Event::Ended {} => self.ended = true,
            Event::ModeChanged { .. } | Event::Verdict { .. } | Event::Prompted { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn unified_diffs_become_edits_with_line_numbers() {
        let diff = "diff --git a/tests/t.rs b/tests/t.rs\n--- a/tests/t.rs\n+++ b/tests/t.rs\n@@ -3,3 +3,2 @@ fn f() {\n     let x = 1;\n-    assert_eq!(x, 1);\n+    // gone\n }\n--- a/old.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-fn a() {}\n";
        let edits = parse_unified_diff(diff, Path::new("/w"));
        assert_eq!(edits.len(), 2);
        assert_eq!(edits[0].path, "/w/tests/t.rs");
        assert_eq!(edits[0].kind, EditKind::Update);
        assert_eq!(
            edits[0].removed,
            vec![EditLine {
                line: Some(4),
                text: "    assert_eq!(x, 1);".into()
            }]
        );
        assert_eq!(edits[0].added[0].line, Some(4));
        assert_eq!(edits[1].kind, EditKind::Delete);
        assert_eq!(edits[1].path, "/w/old.rs");
    }

    #[test]
    fn a_hunk_header_it_cannot_read_leaves_the_edit_not_visible() {
        let edits = parse_unified_diff("--- a/t.rs\n+++ b/t.rs\n@@ garbage @@\n-assert!(x);\n", Path::new("/w"));
        assert_eq!(edits.len(), 1);
        assert!(!edits[0].visible);
        assert!(edits[0].removed.is_empty());
    }

    #[test]
    fn garbage_is_no_edits() {
        assert!(parse_unified_diff("not a diff\n+++\n@@ x", Path::new("/")).is_empty());
    }

    #[test]
    fn a_judged_event_holds_the_judgement_as_its_own_fields() {
        let judged = Event::Judged {
            step: Box::default(),
            judgement: crate::decision::Judgement::refuse_unjudgeable("m", "x"),
        };
        let line = serde_json::to_value(&judged).unwrap();
        assert_eq!(line["event"], "judged");
        assert_eq!(line["decision"], "refuse");
        assert_eq!(line["mode"], "m");
        assert_eq!(line["by"], "unjudgeable");
        assert_eq!(serde_json::from_value::<Event>(line).unwrap(), judged);
    }

    #[test]
    fn events_fold_into_a_trace() {
        let mut t = Trace::default();
        t.apply(Event::Started {
            session: "s".into(),
            cwd: Some("/w".into()),
            mode: None,
            provider: None,
            record: None,
        });
        let step = Step {
            id: "1".into(),
            tool: "Bash".into(),
            ..Step::default()
        };
        t.apply(Event::Judged {
            step: Box::new(step),
            judgement: crate::decision::Judgement {
                decision: crate::decision::Decision::Allow,
                reason: String::new(),
                rules: vec![],
                mode: "m".into(),
                by: crate::decision::DecidedBy::Default,
            },
        });
        t.apply(Event::Observed {
            id: "1".into(),
            outcome: Outcome {
                status: Status::Completed,
                exit_code: Some(0),
            },
            edits: vec![],
        });
        t.apply(Event::Claimed {
            claim: Claim {
                message: "done".into(),
                ..Claim::default()
            },
        });
        assert_eq!(t.cwd.as_deref(), Some("/w"));
        assert_eq!(t.steps[0].outcome.exit_code, Some(0));
        assert_eq!(t.claim.as_ref().map(|c| c.message.as_str()), Some("done"));
        let line = serde_json::to_string(&Event::Ended {}).unwrap();
        assert_eq!(line, r#"{"event":"ended"}"#);
    }

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
    }

    #[test]
    fn parts_in_an_unknown_directory_lie_in_the_workspace_unless_moved() {
        let part = |text: &str, rule: &str, writes: &[&str], dir: &str| crate::classify::Part {
            program: String::new(),
            text: text.into(),
            rule: Some(rule.into()),
            writes: writes.iter().map(|w| w.to_string()).collect(),
            dir: dir.into(),
            decides_status: true,
        };
        let step = Step {
            parts: vec![
                part("rm tests/a.rs", "commands/remove", &["*/tests/a.rs"], "*"),
                part("cd x", "cd", &[], "*"),
                part("rm b.rs", "commands/remove", &["*/b.rs"], "*"),
            ],
            ..Step::default()
        };
        let facts = step_facts(&step, &Workspace::new("/"));
        let parts = &facts["parts"];
        assert_eq!(parts[0]["writes"][0]["place"], "workspace");
        assert_eq!(parts[0]["writes"][0]["relative"], "tests/a.rs");
        assert_eq!(parts[0]["moved"], false);
        // After a `cd` nobody can follow, a relative path is nowhere known.
        assert_eq!(parts[2]["moved"], true);
        assert_eq!(parts[2]["writes"][0]["place"], "unknown");
    }

    #[test]
    fn facts_classify_places_and_relative_edit_paths() {
        let mut t = Trace::default();
        t.steps.push(Step {
            tool: "Write".into(),
            effects: EffectProfile {
                writes: vec!["/w/tests/a.rs".into()],
                ..EffectProfile::default()
            },
            edits: vec![Edit::invisible("/w/tests/a.rs", EditKind::Unknown)],
            ..Step::default()
        });
        let facts = t.facts(&Workspace::new("/w"));
        assert_eq!(facts["steps"][0]["writes_workspace"], true);
        assert_eq!(facts["steps"][0]["writes"][0]["relative"], "tests/a.rs");
        assert_eq!(facts["steps"][0]["edits"][0]["relative"], "tests/a.rs");
    }
}
