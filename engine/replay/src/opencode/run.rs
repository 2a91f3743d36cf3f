//! `opencode run --format json`: one line per finished part, `{type, timestamp, sessionID,
//! part}` with `type` one of `step_start`, `text`, `reasoning`, `tool_use`, `step_finish`, or
//! `error` (`{type, sessionID, error}`). It carries no working directory: relative paths stay
//! unknown places. The run ended when a step finished for a reason other than calling tools
//! (`stop`), and no step started after it.

use super::Parts;
use crate::reader::{text, LineReader, ReadContext};
use serde_json::Value;
use sixfold_core::trace::Trace;

/// Reads `opencode run --format json` output.
pub(crate) struct RunReader<'a> {
    parts: Parts<'a>,
    /// The run's own session (the first line's): another session's lines (a sub-agent's) add
    /// their calls but neither end the run nor make its claim.
    session: Option<String>,
}

impl<'a> RunReader<'a> {
    /// A reader that maps tools through the bundle in `cx`.
    pub(crate) fn new(cx: &'a ReadContext<'a>) -> Self {
        RunReader {
            parts: Parts::new(cx),
            session: None,
        }
    }
}

impl LineReader for RunReader<'_> {
    fn line(&mut self, trace: &mut Trace, value: Value) {
        let kind = text(&value, "type").unwrap_or("").to_string();
        let session = text(&value, "sessionID").map(String::from);
        if self.session.is_none() {
            self.session = session.clone();
        }
        let own = session.is_none() || session == self.session;
        let part = value.get("part").unwrap_or(&Value::Null);
        match kind.as_str() {
            "tool_use" => self.parts.part(trace, part),
            "text" if own => self.parts.part(trace, part),
            "step_start" if own => {
                trace.ended = false;
                trace.claim = None;
            }
            "step_finish" if own => {
                let reason = text(part, "reason").unwrap_or("");
                if reason != "tool-calls" {
                    trace.ended = true;
                    trace.claim = Some(self.parts.claim(reason == "error"));
                }
            }
            "error" if own => {
                trace.ended = true;
                trace.claim = Some(self.parts.claim(true));
            }
            "text" | "step_start" | "step_finish" | "error" => trace.skip(&format!("{kind} (another session)")),
            other => trace.skip(if other.is_empty() { "untyped" } else { other }),
        }
    }
}
