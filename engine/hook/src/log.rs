//! The session's event log, `.sixfold/runs/<session>.jsonl`: one JSON event per line, appended
//! under an exclusive lock in a single write, so concurrent hook processes never interleave or
//! lose lines. Replay reads it as one of its formats.

use sixfold_core::bounded;
use sixfold_core::trace::{Event, Trace};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// A log larger than this is not read back whole by a hook (its start is enough to fold).
pub const MAX_LOG_BYTES: u64 = 64 * 1024 * 1024;

/// A session's log.
#[derive(Debug, Clone)]
pub struct Log {
    path: PathBuf,
}

/// The events as the log's lines, each ending in a newline.
fn lines(events: &[Event]) -> Result<String, String> {
    let mut text = String::new();
    for event in events {
        let line = serde_json::to_string(event).map_err(|e| format!("cannot write an event: {e}"))?;
        text.push_str(&line);
        text.push('\n');
    }
    Ok(text)
}

/// A log kept open for a long-running writer (the MCP proxy), so an append is a lock and one
/// write rather than an open, a lock, a write and a close. The handle is opened with `O_APPEND`
/// and each append is still whole lines in one write under the exclusive lock, so it interleaves
/// with hook processes appending to the same file exactly as they do with each other.
#[derive(Debug)]
pub struct Appender {
    log: Log,
    /// The open handle and the file it is (device, inode), while it is still the log's path.
    file: Option<(File, (u64, u64))>,
}

impl Appender {
    /// An appender to `log`; the file is opened at the first append.
    pub fn new(log: Log) -> Appender {
        Appender { log, file: None }
    }

    /// Appends events, each one line, in one locked write (see [`Log::append`]).
    pub fn append(&mut self, events: &[Event]) -> Result<(), String> {
        if events.is_empty() {
            return Ok(());
        }
        let text = lines(events)?;
        // INVARIANT (fail closed): a log moved or removed since it was opened is opened afresh
        // (one stat), so the record never goes on into a file nobody reads.
        let current = std::fs::symlink_metadata(self.log.path())
            .ok()
            .and_then(|m| identity(&m));
        let held = match self.file.take() {
            Some((file, id)) if Some(id) == current => (file, id),
            _ => {
                let file = self.log.open()?;
                let id = file.metadata().ok().and_then(|m| identity(&m));
                let written = self.log.write_locked(&file, &text);
                if let (Ok(()), Some(id)) = (&written, id) {
                    self.file = Some((file, id));
                }
                return written;
            }
        };
        let written = self.log.write_locked(&held.0, &text);
        // A handle that failed is dropped: the next append opens the log again.
        if written.is_ok() {
            self.file = Some(held);
        }
        written
    }
}

/// A file's device and inode: what tells it from another at the same path.
#[cfg(unix)]
fn identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

/// No inode to compare: the handle is never reused.
#[cfg(not(unix))]
fn identity(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// A session id made safe as a file name: anything but letters, digits, `-` and `_` becomes `_`.
pub fn file_name(session: &str) -> String {
    let cleaned: String = session
        .chars()
        .take(128)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "unknown-session".to_string()
    } else {
        cleaned
    }
}

impl Log {
    /// The log of a session in a project.
    pub fn new(project: &Path, session: &str) -> Log {
        Log {
            path: crate::project::dir(project)
                .join("runs")
                .join(format!("{}.jsonl", file_name(session))),
        }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends events, each one line, in one locked write.
    pub fn append(&self, events: &[Event]) -> Result<(), String> {
        if events.is_empty() {
            return Ok(());
        }
        let text = lines(events)?;
        let file = self.open()?;
        self.write_locked(&file, &text)
    }

    /// Opens the log for appending (`O_APPEND`), creating it and its folders (`.sixfold/runs`)
    /// one level at a time: never a directory above the project's, so a working directory that
    /// does not exist is not made.
    fn open(&self) -> Result<File, String> {
        let runs = self.path.parent();
        for dir in [runs.and_then(Path::parent), runs].into_iter().flatten() {
            match std::fs::create_dir(dir) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(format!("cannot create `{}`: {e}", dir.display()));
                }
                _ => {}
            }
        }
        // INVARIANT (fail closed): a log that is not a regular file (a FIFO would block, a device
        // would swallow the record) cannot be appended to, and the hook refuses the call.
        bounded::open_with(OpenOptions::new().create(true).append(true), &self.path)
            .map_err(|e| format!("cannot open `{}`: {e}", self.path.display()))
    }

    /// Writes whole lines in one write under the exclusive lock.
    fn write_locked(&self, mut file: &File, text: &str) -> Result<(), String> {
        file.lock()
            .map_err(|e| format!("cannot lock `{}`: {e}", self.path.display()))?;
        let written = file.write_all(text.as_bytes()).and_then(|_| file.flush());
        let _ = file.unlock();
        written.map_err(|e| format!("cannot append to `{}`: {e}", self.path.display()))
    }

    /// The first [`MAX_LOG_BYTES`] of the log, read under a shared lock. A log that is missing or
    /// not a regular file reads as empty: appending to it then fails, so a call is never judged
    /// without its record.
    ///
    /// The second value says whether the log went on past the bound (and so was not read whole).
    fn text(&self) -> (String, bool) {
        let Ok(file) = bounded::open(&self.path) else {
            return (String::new(), false);
        };
        let _ = file.lock_shared();
        let mut bytes = Vec::new();
        let _ = (&file).take(MAX_LOG_BYTES + 1).read_to_end(&mut bytes);
        let _ = file.unlock();
        let cut = bytes.len() as u64 > MAX_LOG_BYTES;
        bytes.truncate(MAX_LOG_BYTES as usize);
        (String::from_utf8_lossy(&bytes).into_owned(), cut)
    }

    /// The events so far (lines that do not parse are skipped: the log is still read).
    pub fn events(&self) -> Vec<Event> {
        let (text, _) = self.text();
        text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
    }

    /// Only the events a tool call needs to be judged: the session's start, mode changes, and
    /// judged spawns. Other lines are skipped before they are parsed.
    ///
    /// A log larger than [`MAX_LOG_BYTES`] is an error: the events past the bound (a spawn that
    /// counts against a pattern's limit, say) would go unseen.
    pub fn judging_events(&self) -> Result<Vec<Event>, String> {
        let (text, cut) = self.text();
        // INVARIANT (fail closed): a record read only in part cannot be judged from.
        if cut {
            return Err(format!(
                "the session's record `{}` is larger than {} MiB, so what it holds cannot all be read; start a new session",
                self.path.display(),
                MAX_LOG_BYTES / (1024 * 1024)
            ));
        }
        Ok(text
            .lines()
            .filter(|l| {
                l.starts_with(r#"{"event":"started""#)
                    || l.starts_with(r#"{"event":"mode_changed""#)
                    || (l.starts_with(r#"{"event":"judged""#) && l.contains(r#""kind":"agent""#))
            })
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect())
    }

    /// The events folded into a trace.
    pub fn trace(events: &[Event]) -> Trace {
        let mut trace = Trace {
            format: "sixfold-events".into(),
            ..Trace::default()
        };
        for e in events {
            trace.apply(e.clone());
        }
        trace
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_become_safe_file_names() {
        assert_eq!(file_name("abc-123_x"), "abc-123_x");
        assert_eq!(file_name("../../etc/passwd"), "______etc_passwd");
        assert_eq!(file_name(""), "unknown-session");
    }

    #[test]
    fn concurrent_appends_lose_and_interleave_nothing() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        std::thread::scope(|scope| {
            for w in 0..8 {
                let log = log.clone();
                scope.spawn(move || {
                    for i in 0..50 {
                        let big = "x".repeat(10_000 + w * 100 + i);
                        log.append(&[Event::Prompted { prompt: big }]).unwrap();
                    }
                });
            }
        });
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert_eq!(text.lines().count(), 400);
        assert!(text.lines().all(|l| serde_json::from_str::<Event>(l).is_ok()));
        assert_eq!(log.events().len(), 400);
    }

    /// An appender keeps its file open, appends whole lines among other writers, and opens the
    /// log afresh when it was removed.
    #[test]
    fn an_appender_appends_whole_lines_and_follows_a_removed_log() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        let mut appender = Appender::new(log.clone());
        std::thread::scope(|scope| {
            let other = log.clone();
            scope.spawn(move || {
                for i in 0..50 {
                    other
                        .append(&[Event::Prompted {
                            prompt: "y".repeat(10_000 + i),
                        }])
                        .unwrap();
                }
            });
            for i in 0..50 {
                appender
                    .append(&[Event::Prompted {
                        prompt: "x".repeat(10_000 + i),
                    }])
                    .unwrap();
            }
        });
        assert_eq!(log.events().len(), 100);
        std::fs::remove_file(log.path()).unwrap();
        appender.append(&[Event::Ended {}]).unwrap();
        assert_eq!(log.events().len(), 1);
    }

    /// A log past the bound is not judged from: a spawn recorded past it would go uncounted.
    #[test]
    fn a_log_too_large_to_read_whole_is_not_judged_from() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        log.append(&[Event::Ended {}]).unwrap();
        assert_eq!(log.judging_events().unwrap().len(), 0);
        let file = std::fs::OpenOptions::new().write(true).open(log.path()).unwrap();
        file.set_len(MAX_LOG_BYTES + 1).unwrap();
        let why = log.judging_events().unwrap_err();
        assert!(why.contains("larger than 64 MiB"), "{why}");
    }

    /// A working directory that does not exist is never made: the log is not written there.
    #[test]
    fn a_missing_project_is_not_made() {
        let t = tempfile::tempdir().unwrap();
        let gone = t.path().join("no/such/dir");
        let log = Log::new(&gone, "s");
        assert!(log.append(&[Event::Ended {}]).is_err());
        assert!(!t.path().join("no").exists());
        // An existing project gets its `.sixfold/runs`.
        let log = Log::new(t.path(), "s");
        log.append(&[Event::Ended {}]).unwrap();
        assert!(log.path().is_file());
    }

    /// A log that is a FIFO or a symlink to a device is neither read (no hang) nor appended to.
    #[cfg(unix)]
    #[test]
    fn a_log_that_is_not_a_regular_file_is_refused_at_once() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        std::fs::create_dir_all(log.path().parent().unwrap()).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(log.path())
            .status()
            .unwrap()
            .success());
        assert!(log.events().is_empty());
        assert!(log.append(&[Event::Ended {}]).unwrap_err().contains("FIFO"));
        std::fs::remove_file(log.path()).unwrap();
        std::os::unix::fs::symlink("/dev/zero", log.path()).unwrap();
        assert!(log.judging_events().unwrap().is_empty());
        assert!(log.append(&[Event::Ended {}]).is_err());
    }
}
