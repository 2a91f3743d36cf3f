//! The session's event log, `.sixfold/runs/<session>.jsonl`: one JSON event per line, appended
//! under an exclusive lock in a single write, so concurrent hook processes never interleave or
//! lose lines. Replay reads it as one of its formats. What a call needs of it so far is kept
//! beside it in a checkpoint ([`Log::hold`]), so no call reads the whole log.
//!
//! Every writer (the hooks, the governed tools, the MCP proxy) appends through this file, and
//! every line is made by one function (`lines`): the event with its stamp (when, under which bundle, its id;
//! see [`Stamp`]), so no writer can leave one out.

use crate::checkpoint::Held;
use sixfold_core::bounded;
use sixfold_core::trace::{Event, Line, Stamp};
use std::fs::{File, OpenOptions};
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A session's log.
#[derive(Debug, Clone)]
pub struct Log {
    path: PathBuf,
    /// The content hash of the bundle in force, stamped on each line.
    bundle: Option<String>,
}

/// Lines made and ready to append, as text and as lines.
#[derive(Debug)]
pub(crate) struct Stamped {
    /// The lines, each ending in a newline.
    pub(crate) text: String,
    lines: Vec<Line>,
}

/// The events as the log's lines: each one stamped with the time now, `bundle` (the content
/// hash of the bundle in force) and an id of its own.
pub(crate) fn lines(events: &[Event], bundle: Option<&str>) -> Result<Stamped, String> {
    let mut text = String::new();
    let mut lines = Vec::with_capacity(events.len());
    for event in events {
        let line = Line {
            event: event.clone(),
            stamp: stamp(bundle),
        };
        let json = serde_json::to_string(&line).map_err(|e| format!("cannot write an event: {e}"))?;
        text.push_str(&json);
        text.push('\n');
        lines.push(line);
    }
    Ok(Stamped { text, lines })
}

/// What sees each line once it is on the record, with the session's name (the log's file name):
/// the CLI's OpenTelemetry export. It runs on the writer's path, so it must not block.
pub type Observer = Box<dyn Fn(&str, &Line) + Send + Sync>;

static OBSERVER: OnceLock<Observer> = OnceLock::new();

/// Sets the observer of every line written from now on, in this process (once; `false` when one
/// was set already). What it does cannot change a line, nor whether it was written.
pub fn observe(observer: Observer) -> bool {
    OBSERVER.set(observer).is_ok()
}

impl Stamped {
    /// The lines are on the record of `log`: the observer sees them.
    pub(crate) fn written(&self, log: &Path) {
        let Some(observer) = OBSERVER.get() else { return };
        let session = log
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        for line in &self.lines {
            observer(&session, line);
        }
    }
}

/// A line's stamp, now.
fn stamp(bundle: Option<&str>) -> Stamp {
    Stamp {
        timestamp: Some(humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string()),
        bundle: bundle.map(str::to_string),
        decision_id: Some(uuid::Uuid::new_v4().to_string()),
    }
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

    /// Stamps the lines appended from now on with `bundle`'s content hash: a long-running writer
    /// reads the bundle afresh when it changes.
    pub fn set_bundle(&mut self, bundle: String) {
        self.log.bundle = Some(bundle);
    }

    /// Appends events, each one line, in one locked write (see [`Log::append`]).
    pub fn append(&mut self, events: &[Event]) -> Result<(), String> {
        if events.is_empty() {
            return Ok(());
        }
        let stamped = self.log.lines(events)?;
        let text = &stamped.text;
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
                let written = self.log.write_locked(&file, text);
                if written.is_ok() {
                    stamped.written(self.log.path());
                }
                if let (Ok(()), Some(id)) = (&written, id) {
                    self.file = Some((file, id));
                }
                return written;
            }
        };
        let written = self.log.write_locked(&held.0, text);
        // A handle that failed is dropped: the next append opens the log again.
        if written.is_ok() {
            stamped.written(self.log.path());
            self.file = Some(held);
        }
        written
    }
}

/// A file's device and inode: what tells it from another at the same path.
#[cfg(unix)]
pub(crate) fn identity(meta: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

/// No inode to compare: the handle is never reused.
#[cfg(not(unix))]
pub(crate) fn identity(_meta: &std::fs::Metadata) -> Option<(u64, u64)> {
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
            bundle: None,
        }
    }

    /// The same log, its lines stamped with `bundle`, the content hash of the bundle in force
    /// (see [`crate::ProjectLayer::bundle_hash`]).
    pub fn with_bundle(mut self, bundle: String) -> Log {
        self.bundle = Some(bundle);
        self
    }

    /// The content hash its lines are stamped with.
    pub fn bundle(&self) -> Option<&str> {
        self.bundle.as_deref()
    }

    /// The events as this log's lines (see [`lines`]).
    pub(crate) fn lines(&self, events: &[Event]) -> Result<Stamped, String> {
        lines(events, self.bundle.as_deref())
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
        let stamped = self.lines(events)?;
        let file = self.open()?;
        self.write_locked(&file, &stamped.text)?;
        stamped.written(&self.path);
        Ok(())
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

    /// The log under its exclusive lock (created where missing), with what it holds so far
    /// brought up to date from its checkpoint: what a writer that judges or starts the record
    /// needs, read and written in O(1) whatever the log's length (see [`crate::checkpoint`]).
    /// The lock belongs to the handle: while it is held, this process reads the log through it
    /// ([`Held::trace`]), never through another handle, which would wait for it.
    pub fn hold(&self) -> Result<Held, String> {
        Held::take(self)
    }

    /// Every event so far, read a line at a time (lines that do not parse are skipped); a
    /// missing log, or one that is not a regular file, reads as empty.
    pub fn events(&self) -> Vec<Event> {
        let Ok(file) = bounded::open(&self.path) else {
            return Vec::new();
        };
        let _ = file.lock_shared();
        let mut events = Vec::new();
        let _ = crate::checkpoint::each_line(BufReader::new(&file), |line, whole| {
            if let (true, Ok(event)) = (whole, serde_json::from_slice(line)) {
                events.push(event);
            }
            Ok(())
        });
        let _ = file.unlock();
        events
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

    /// Every line, whichever way it is appended, carries its time, the bundle's hash and an id
    /// of its own; the event comes first.
    #[test]
    fn every_line_is_stamped_whichever_way_it_is_appended() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s").with_bundle("sha256:abc".into());
        let before = std::time::SystemTime::now();
        log.append(&[Event::Ended {}, Event::Ended {}]).unwrap();
        log.hold().unwrap().append(&[Event::Ended {}]).unwrap();
        let mut appender = Appender::new(log.clone());
        appender.append(&[Event::Ended {}]).unwrap();
        appender.set_bundle("sha256:def".into());
        appender.append(&[Event::Ended {}]).unwrap();
        let text = std::fs::read_to_string(log.path()).unwrap();
        let lines: Vec<Line> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 5);
        assert!(text.lines().all(|l| l.starts_with(r#"{"event":"ended","timestamp":""#)));
        let mut ids = std::collections::BTreeSet::new();
        for (i, line) in lines.iter().enumerate() {
            let time = line.stamp.timestamp.as_deref().unwrap();
            assert!(time.ends_with('Z'), "{time}");
            let at = humantime::parse_rfc3339(time).unwrap();
            assert!(at + std::time::Duration::from_secs(1) >= before, "{time}");
            let id = uuid::Uuid::parse_str(line.stamp.decision_id.as_deref().unwrap()).unwrap();
            assert_eq!(id.get_version_num(), 4);
            assert!(ids.insert(id));
            let bundle = if i < 4 { "sha256:abc" } else { "sha256:def" };
            assert_eq!(line.stamp.bundle.as_deref(), Some(bundle));
        }
    }

    /// The observer sees each line once it is on the record, whichever way it was appended, and
    /// no line that could not be written.
    #[cfg(unix)]
    #[test]
    fn the_observer_sees_each_line_written_and_none_that_was_not() {
        static SEEN: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
        // The only observer of this test process; other tests' lines are told apart by session.
        assert!(observe(Box::new(|session, line| {
            if session.starts_with("observed-") {
                let id = line.stamp.decision_id.clone().unwrap_or_default();
                SEEN.lock().unwrap().push((session.to_string(), id));
            }
        })));
        assert!(!observe(Box::new(|_, _| {})));
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "observed-1");
        log.append(&[Event::Ended {}, Event::Ended {}]).unwrap();
        log.hold().unwrap().append(&[Event::Ended {}]).unwrap();
        Appender::new(log.clone()).append(&[Event::Ended {}]).unwrap();
        let refused = Log::new(t.path(), "observed-2");
        assert!(std::process::Command::new("mkfifo")
            .arg(refused.path())
            .status()
            .unwrap()
            .success());
        assert!(refused.append(&[Event::Ended {}]).is_err());
        assert!(Appender::new(refused).append(&[Event::Ended {}]).is_err());
        let written: Vec<String> = std::fs::read_to_string(log.path())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Line>(l).unwrap().stamp.decision_id.unwrap())
            .collect();
        let seen = SEEN.lock().unwrap().clone();
        assert!(seen.iter().all(|(s, _)| s == "observed-1"), "{seen:?}");
        assert_eq!(seen.into_iter().map(|(_, id)| id).collect::<Vec<_>>(), written);
    }

    /// A log written before lines were stamped, with stamped lines after: every reader takes
    /// every line (the events, the checkpoint's count of spawns).
    #[test]
    fn old_lines_without_a_stamp_are_read_beside_new_ones() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s").with_bundle("sha256:abc".into());
        std::fs::create_dir_all(log.path().parent().unwrap()).unwrap();
        // What the writer before stamps wrote: each event as it serialises alone.
        let spawn = Event::Judged {
            step: Box::new(sixfold_core::trace::Step {
                act: sixfold_core::trace::StepAct {
                    kind: "agent".into(),
                    text: "helper".into(),
                },
                ..Default::default()
            }),
            judgement: sixfold_core::decision::Judgement {
                decision: sixfold_core::decision::Decision::Allow,
                reason: String::new(),
                rules: Vec::new(),
                mode: "ask".into(),
                by: sixfold_core::decision::DecidedBy::Rules,
            },
        };
        let old = format!(
            "{}\n{}\n",
            r#"{"event":"started","session":"s","cwd":"/w","mode":"ask","provider":"claude-code"}"#,
            serde_json::to_string(&spawn).unwrap()
        );
        assert!(!old.contains("timestamp"));
        std::fs::write(log.path(), old).unwrap();
        let held = log.hold().unwrap();
        assert_eq!(held.so_far().spawns, 1);
        assert_eq!(held.trace().unwrap().steps.len(), 1);
        held.append(&[Event::Ended {}]).unwrap();
        assert_eq!(log.events().len(), 3);
        std::fs::remove_file(crate::checkpoint::path(&log)).unwrap();
        assert_eq!(log.hold().unwrap().so_far().spawns, 1);
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
        assert!(log.events().is_empty());
        assert!(log.append(&[Event::Ended {}]).is_err());
        assert!(log.hold().is_err());
    }
}
