//! Which format a recording is in, from its content.

use std::io::BufRead;

/// The formats replay reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `claude -p … --output-format stream-json --verbose`.
    ClaudeStream,
    /// Claude Code's session file (`<config dir>/projects/<dir>/<session>.jsonl`).
    ClaudeSession,
    /// `codex exec --json`.
    CodexExec,
    /// Codex's rollout file (`$CODEX_HOME/sessions/…/rollout-*.jsonl`).
    CodexRollout,
    /// `opencode run --format json`.
    OpenCodeRun,
    /// `opencode export <session>`: one JSON document.
    OpenCodeExport,
    /// sixfold's own event log (`.sixfold/runs/<session>.jsonl`).
    Events,
}

impl Format {
    /// Every format, for `--help` and parsing.
    pub const ALL: [Format; 7] = [
        Format::ClaudeStream,
        Format::ClaudeSession,
        Format::CodexExec,
        Format::CodexRollout,
        Format::OpenCodeRun,
        Format::OpenCodeExport,
        Format::Events,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeStream => "claude-stream-json",
            Format::ClaudeSession => "claude-session",
            Format::CodexExec => "codex-exec-json",
            Format::CodexRollout => "codex-rollout",
            Format::OpenCodeRun => "opencode-run-json",
            Format::OpenCodeExport => "opencode-export",
            Format::Events => "sixfold-events",
        }
    }

    /// Parses a name.
    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// What the first lines say, if they are enough to tell.
    fn from_line(value: &serde_json::Value) -> Option<Format> {
        if value.get("event").and_then(|e| e.as_str()).is_some() {
            return Some(Format::Events);
        }
        let kind = value.get("type").and_then(|t| t.as_str())?;
        match kind {
            "session_meta" | "response_item" | "event_msg" | "turn_context" => Some(Format::CodexRollout),
            "thread.started" | "turn.started" | "turn.completed" | "turn.failed" | "item.started" | "item.updated"
            | "item.completed" => Some(Format::CodexExec),
            // Every line of the run carries the part it reports.
            "step_start" | "step_finish" | "tool_use" | "text" | "reasoning" | "error"
                if value.get("sessionID").is_some() =>
            {
                Some(Format::OpenCodeRun)
            }
            "queue-operation" | "attachment" | "last-prompt" | "summary" | "file-history-snapshot" => {
                Some(Format::ClaudeSession)
            }
            "system" | "assistant" | "user" | "result" => {
                // Session files carry `parentUuid` on every message line; the stream does not.
                if value.get("parentUuid").is_some() || value.get("toolUseResult").is_some() {
                    Some(Format::ClaudeSession)
                } else {
                    Some(Format::ClaudeStream)
                }
            }
            _ => None,
        }
    }
}

/// Looks at the first lines (without consuming them) and says which format they are in.
pub fn detect<R: BufRead>(input: &mut R) -> std::io::Result<Option<Format>> {
    let buf = input.fill_buf()?;
    // An export is one document whose first key is the session's `info`, indented or not.
    let start = buf.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(buf.len());
    if let Some(rest) = buf.get(start..).and_then(|b| b.strip_prefix(b"{")) {
        let key = rest.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(rest.len());
        if rest.get(key..).is_some_and(|r| r.starts_with(b"\"info\"")) {
            return Ok(Some(Format::OpenCodeExport));
        }
    }
    // Enough to see a few lines; a first line longer than the buffer still has its start.
    for line in buf.split(|b| *b == b'\n').take(32) {
        let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        if let Some(format) = Format::from_line(&value) {
            return Ok(Some(format));
        }
    }
    // A first line cut by the buffer: look for the type near its start.
    let head = String::from_utf8_lossy(buf.get(..buf.len().min(4096)).unwrap_or(&[]));
    for (needle, format) in [
        ("\"type\":\"system\"", Format::ClaudeStream),
        ("\"type\":\"session_meta\"", Format::CodexRollout),
        ("\"type\":\"thread.started\"", Format::CodexExec),
        ("{\"event\":", Format::Events),
    ] {
        if head.contains(needle) {
            return Ok(Some(format));
        }
    }
    Ok(None)
}
