//! Replay: recorded agent runs become traces of facts.
//!
//! Each reader turns one vendor format into a [`Trace`]: Claude Code's headless stream and session
//! file, Codex's `exec --json` stream and rollout file, and sixfold's own event log. Files are
//! streamed line by line, never loaded whole; unknown fields and line types are skipped and
//! counted; a malformed line is recorded with its number and the rest still counts. Which tool
//! does what comes from the bundle's provider files and command classifier, never from here.

mod claude;
mod codex;
mod detect;
mod events;
mod lines;

use sixfold_core::bundle::Bundle;
pub use sixfold_core::trace::Trace;
use std::io::BufRead;
use std::path::Path;

pub use claude::call_edits as claude_call_edits;
pub use detect::{detect, Format};
pub use lines::MAX_LINE_BYTES;

/// What a reader needs besides the lines: the bundle (for tool maps and the classifier).
#[derive(Debug)]
pub struct ReadContext<'a> {
    /// The loaded bundle.
    pub bundle: &'a Bundle,
}

/// Reads a whole recording in a given format.
pub fn read<R: BufRead>(input: R, format: Format, cx: &ReadContext<'_>) -> Trace {
    let mut trace = Trace {
        format: format.name().to_string(),
        ..Trace::default()
    };
    let mut reader: Box<dyn LineReader + '_> = match format {
        Format::ClaudeStream => Box::new(claude::Reader::new(cx, false)),
        Format::ClaudeSession => Box::new(claude::Reader::new(cx, true)),
        Format::CodexExec => Box::new(codex::ExecReader::new(cx)),
        Format::CodexRollout => Box::new(codex::RolloutReader::new(cx)),
        Format::Events => Box::new(events::Reader),
    };
    lines::for_each(input, |number, line| {
        trace.lines = number;
        match line {
            Ok(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => {}
            Ok(bytes) => match serde_json::from_slice::<serde_json::Value>(bytes) {
                Ok(value) => reader.line(&mut trace, value),
                Err(e) => trace.malformed.push(sixfold_core::trace::Malformed {
                    line: number,
                    error: e.to_string(),
                }),
            },
            Err(error) => trace
                .malformed
                .push(sixfold_core::trace::Malformed { line: number, error }),
        }
    });
    reader.finish(&mut trace);
    trace
}

/// Reads a file, detecting its format from its content unless one is given.
pub fn read_file(path: &Path, format: Option<Format>, cx: &ReadContext<'_>) -> std::io::Result<Trace> {
    let file = std::fs::File::open(path)?;
    let mut input = std::io::BufReader::with_capacity(256 * 1024, file);
    let format = match format {
        Some(f) => f,
        None => detect(&mut input)?.ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the format could not be recognised from the content (pass --format)",
            )
        })?,
    };
    Ok(read(input, format, cx))
}

/// One format's reader: fed each parsed line in order, then finished.
trait LineReader {
    fn line(&mut self, trace: &mut Trace, value: serde_json::Value);
    fn finish(&mut self, _trace: &mut Trace) {}
}

/// Maps a tool call through a provider file: the act, its effects and, for a command, its parts
/// and the files it writes by name (unless the step already shows edits). Without the provider
/// file, the conservative profile.
fn map_tool(
    cx: &ReadContext<'_>,
    provider: &str,
    step: &mut sixfold_core::trace::Step,
    tool: &str,
    input: &serde_json::Value,
    cwd: &Path,
) {
    use sixfold_core::trace::StepAct;
    step.tool = tool.to_string();
    let Some(provider) = cx.bundle.provider(provider) else {
        step.act = StepAct {
            kind: "tool".into(),
            text: tool.to_string(),
        };
        step.effects = sixfold_core::effects::EffectProfile::unknown();
        return;
    };
    let mapped = provider.tool_effects(tool, input, cwd, cx.bundle.classifier());
    step.act = StepAct {
        kind: mapped.act.kind.to_string(),
        text: mapped.act.text,
    };
    step.effects = mapped.effects;
    if let Some(classified) = mapped.classified {
        step.commands = classified.parts.iter().map(|p| p.text.clone()).collect();
        step.command_rules = classified
            .parts
            .iter()
            .map(|p| p.rule.clone().unwrap_or_default())
            .collect();
        if step.edits.is_empty() {
            step.edits = command_edits(&step.effects.writes, cwd);
        }
    }
}

/// Files a shell command writes by name: their content is not in the record. The working
/// directory itself (a build tool's output) and unknown places are not files.
fn command_edits(writes: &[String], cwd: &Path) -> Vec<sixfold_core::trace::Edit> {
    use sixfold_core::trace::{Edit, EditKind};
    writes
        .iter()
        .filter(|w| w.as_str() != "*" && Path::new(w.as_str()) != cwd && !w.ends_with('/'))
        .map(|w| Edit::invisible(w.clone(), EditKind::Unknown))
        .collect()
}

/// The string at `key`, if it is one.
fn text<'v>(value: &'v serde_json::Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(|v| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use sixfold_core::bundle::Bundle;

    fn bundle() -> Bundle {
        Bundle::load(&[sixfold_core::shipped::source()]).0
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Untrusted transcripts: any bytes, in any format, never panic, and every line is
        /// accounted for.
        #[test]
        fn arbitrary_input_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048), which in 0usize..5) {
            let b = bundle();
            let cx = ReadContext { bundle: &b };
            let trace = read(std::io::Cursor::new(&bytes), Format::ALL[which], &cx);
            prop_assert!(trace.lines as usize <= bytes.iter().filter(|c| **c == b'\n').count() + 1);
        }

        /// JSON-shaped lines with the vendors' type names but random content.
        #[test]
        fn json_with_known_types_never_panics(
            kinds in prop::collection::vec(prop::sample::select(vec![
                "system", "assistant", "user", "result", "item.completed", "item.started", "turn.completed",
                "session_meta", "response_item", "event_msg", "judged", "observed",
            ]), 1..12),
            payload in "[a-z\"{}\\[\\]:,0-9 ]{0,60}",
            which in 0usize..5,
        ) {
            let text: String = kinds
                .iter()
                .map(|k| format!("{{\"type\":\"{k}\",\"event\":\"{k}\",\"message\":{{\"content\":[{{\"type\":\"tool_use\",\"x\":\"{payload}\"}}]}}}}\n"))
                .collect();
            let b = bundle();
            let cx = ReadContext { bundle: &b };
            let _ = read(std::io::Cursor::new(text.as_bytes()), Format::ALL[which], &cx);
        }
    }
}
