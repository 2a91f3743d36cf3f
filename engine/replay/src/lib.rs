//! Replay: recorded agent runs become traces of facts.
//!
//! Each reader turns one vendor format into a [`Trace`]: Claude Code's headless stream and session
//! file, Codex's `exec --json` stream and rollout file, OpenCode's `run --format json` lines and
//! `export` document, and sixfold's own event log. Files are streamed (line by line, an export
//! message by message), never loaded whole, and only regular files are read, no further than
//! their size when opened; unknown fields and line types are skipped and counted; a malformed
//! line is recorded with its number and the rest still counts. A command's output is kept
//! (bounded) where the record holds it, so rows can read a runner's count of tests run. Which tool
//! does what comes from the bundle's provider files and command classifier, never from here.

mod claude;
mod codex;
mod detect;
mod events;
mod lines;
mod opencode;
mod reader;

use reader::LineReader;
pub use sixfold_core::trace::Trace;
use std::io::BufRead;
use std::path::Path;

pub use claude::call_edits as claude_call_edits;
pub use detect::{detect, Format};
pub use lines::MAX_LINE_BYTES;
pub use reader::ReadContext;

/// The edits a Codex `apply_patch` patch describes (`*** Add File:`, `*** Update File:`, …),
/// before Codex applies it: what its hook's `tool_input.command` holds. Relative paths resolve
/// against `cwd`.
pub fn codex_patch_edits(patch: &str, cwd: &Path) -> Vec<sixfold_core::trace::Edit> {
    codex::patch_edits(patch, cwd)
}

/// Reads a whole recording in a given format.
pub fn read<R: BufRead>(input: R, format: Format, cx: &ReadContext<'_>) -> Trace {
    let mut trace = Trace {
        format: format.name().to_string(),
        ..Trace::default()
    };
    if format == Format::OpenCodeExport {
        opencode::read_export(input, cx, &mut trace);
        return trace;
    }
    let mut reader: Box<dyn LineReader + '_> = match format {
        Format::ClaudeStream => Box::new(claude::Reader::new(cx, false)),
        Format::ClaudeSession => Box::new(claude::Reader::new(cx, true)),
        Format::CodexExec => Box::new(codex::ExecReader::new(cx)),
        Format::CodexRollout => Box::new(codex::RolloutReader::new(cx)),
        Format::OpenCodeRun => Box::new(opencode::RunReader::new(cx)),
        // Read above, as one document.
        Format::OpenCodeExport | Format::Events => Box::new(events::Reader),
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

/// Opens a recording to read: a regular file only (opened without blocking, checked on the open
/// handle, by the core's bounded reader), read no further than the size it had when opened, so a
/// FIFO, a device (`/dev/zero`) or a file that keeps growing cannot hold the reader.
///
/// ```
/// let err = sixfold_replay::open_recording(std::path::Path::new("/dev/zero")).unwrap_err();
/// assert!(err.to_string().contains("not a regular file"));
/// ```
pub fn open_recording(path: &Path) -> std::io::Result<std::io::Take<std::fs::File>> {
    use sixfold_core::bounded::{self, ReadError};
    // INVARIANT (fail closed): a recording that is not a regular file is not read at all.
    let file = bounded::open(path).map_err(|e| match e {
        ReadError::Io(e) => e,
        ReadError::Missing => std::io::Error::new(std::io::ErrorKind::NotFound, e.to_string()),
        other => std::io::Error::new(std::io::ErrorKind::InvalidInput, other.to_string()),
    })?;
    let len = file.metadata()?.len();
    Ok(std::io::Read::take(file, len))
}

/// Reads a file, detecting its format from its content unless one is given. Only a regular
/// file is read, and only as much of it as there was when it was opened ([`open_recording`]).
pub fn read_file(path: &Path, format: Option<Format>, cx: &ReadContext<'_>) -> std::io::Result<Trace> {
    read_file_counted(path, format, cx, &|_| {})
}

/// As [`read_file`], telling `on_read` the number of bytes each time the reader takes more from the
/// file (at most every 256 KiB), so a caller can show how far a long recording is read.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// let b = sixfold_core::bundle::Bundle::load(&[sixfold_core::shipped::source()]).0;
/// let cx = sixfold_replay::ReadContext { bundle: &b };
/// let path = std::env::temp_dir().join(format!("counted-{}.jsonl", std::process::id()));
/// std::fs::write(&path, "{\"type\":\"result\",\"result\":\"done\"}\n").unwrap();
/// let read = AtomicU64::new(0);
/// let add = |n: u64| { read.fetch_add(n, Ordering::Relaxed); };
/// let format = Some(sixfold_replay::Format::ClaudeStream);
/// let trace = sixfold_replay::read_file_counted(&path, format, &cx, &add).unwrap();
/// assert_eq!(read.load(Ordering::Relaxed), std::fs::metadata(&path).unwrap().len());
/// assert_eq!(trace.lines, 1);
/// std::fs::remove_file(path).unwrap();
/// ```
pub fn read_file_counted(
    path: &Path,
    format: Option<Format>,
    cx: &ReadContext<'_>,
    on_read: &dyn Fn(u64),
) -> std::io::Result<Trace> {
    let file = Counted {
        inner: open_recording(path)?,
        read: on_read,
    };
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

/// A reader that tells how many bytes each read gave.
struct Counted<'a, R> {
    inner: R,
    read: &'a dyn Fn(u64),
}

impl<R: std::io::Read> std::io::Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        (self.read)(n as u64);
        Ok(n)
    }
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
        fn arbitrary_input_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2048), which in 0usize..Format::ALL.len()) {
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
                "step_start", "tool_use", "step_finish", "text", "error",
            ]), 1..12),
            payload in "[a-z\"{}\\[\\]:,0-9 ]{0,60}",
            which in 0usize..Format::ALL.len(),
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
