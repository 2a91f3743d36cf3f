//! The checkpoint beside a session's record, `.sixfold/checkpoints/<session>.json` (outside
//! `runs/`, which holds only records, so nothing that replays or lists them meets it): what the
//! record holds so far that the next call needs ([`SoFar`]: started, the last mode, the spawns
//! allowed), and how much of the record that covers (the log's identity and length).
//!
//! A writer holds the log's exclusive lock ([`Log::hold`]), reads the checkpoint, folds in only
//! what other writers appended since it was written (the lines past its length), appends its own
//! events and writes the checkpoint again, all under that one lock. So a call costs the same
//! whether the session is ten events long or a million, and no size stops a session.
//!
//! The record stays the truth. A checkpoint that is missing, torn, unreadable, for another file
//! or for more than the log holds is rebuilt from the record (read once, a line at a time), never
//! taken as an empty session: a count that matters (spawns) is never reset by losing it.

use crate::log::Log;
use sixfold_core::bounded;
use sixfold_core::trace::{Event, SoFar, Trace};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A checkpoint larger than this is not one sixfold wrote (it holds a few counts, and a carve and a
/// read offset per helper): it is rebuilt from the record.
const MAX_CHECKPOINT_BYTES: u64 = 1024 * 1024;

/// A line of the record longer than this is not held in memory whole. One that could change what
/// the checkpoint holds is an error (it cannot be read); any other is skipped.
pub const MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// The checkpoint's version; another is rebuilt from the record.
const VERSION: u32 = 2;

/// The checkpoint as written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Checkpoint {
    version: u32,
    /// The log's device and inode: a log replaced since is read afresh.
    log: (u64, u64),
    /// The log's length the fold covers.
    bytes: u64,
    so_far: SoFar,
}

/// A session's log held under its exclusive lock, with what it holds so far, up to date. Every
/// other writer waits until it is dropped (or has appended).
#[derive(Debug)]
pub struct Held {
    log: PathBuf,
    file: File,
    /// The log's identity, where the platform has one.
    id: Option<(u64, u64)>,
    so_far: SoFar,
    /// The log's length that `so_far` covers.
    covered: u64,
    /// Whether the checkpoint on disk is behind `so_far` (it was missing, stale or rebuilt).
    behind: bool,
    /// The log's stamp for the bundle in force.
    bundle: Option<String>,
}

/// Where a log's checkpoint is: `checkpoints/` beside the log's `runs/`, named as the log.
pub fn path(log: &Log) -> PathBuf {
    checkpoint_of(log.path())
}

fn checkpoint_of(log: &Path) -> PathBuf {
    let dir = log
        .parent()
        .and_then(Path::parent)
        .unwrap_or_else(|| Path::new("."))
        .join("checkpoints");
    let name = log
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.join(format!("{name}.json"))
}

impl Held {
    /// Takes the log's exclusive lock (creating the log) and brings what it holds so far up to
    /// date from the checkpoint and whatever was appended after it.
    pub(crate) fn take(log: &Log) -> Result<Held, String> {
        let file = open_locked(log.path())?;
        let meta = file
            .metadata()
            .map_err(|e| format!("cannot read `{}`: {e}", log.path().display()))?;
        let id = crate::log::identity(&meta);
        let len = meta.len();
        let (mut so_far, from) = match (read(&path(log)), id) {
            // INVARIANT (fail closed): a checkpoint counts only for this very file, and only up
            // to a length the file still has; anything else is rebuilt from the record.
            (Some(c), Some(id)) if c.log == id && c.bytes <= len => (c.so_far, c.bytes),
            _ => (SoFar::default(), 0),
        };
        let behind = from != len || from == 0;
        if from < len {
            (&file)
                .seek(SeekFrom::Start(from))
                .map_err(|e| format!("cannot read `{}`: {e}", log.path().display()))?;
            each_line(BufReader::new(&file), |line, whole| {
                if !SoFar::may_change(line) {
                    return Ok(());
                }
                if !whole {
                    // INVARIANT (fail closed): a line that may hold a spawn cannot go uncounted.
                    return Err(format!(
                        "the session's record `{}` holds a line longer than {} MiB, which cannot be read; start a new session",
                        log.path().display(),
                        MAX_LINE_BYTES / (1024 * 1024)
                    ));
                }
                if let Ok(event) = serde_json::from_slice::<Event>(line) {
                    so_far.apply(&event);
                }
                Ok(())
            })?;
        }
        Ok(Held {
            log: log.path().to_path_buf(),
            file,
            id,
            so_far,
            covered: len,
            behind,
            bundle: log.bundle().map(str::to_string),
        })
    }

    /// What the record holds so far.
    pub fn so_far(&self) -> &SoFar {
        &self.so_far
    }

    /// Appends events, each one line, in one write, and writes the checkpoint after them. The
    /// lock is released when this returns.
    pub fn append(mut self, events: &[Event]) -> Result<(), String> {
        let stamped = crate::log::lines(events, self.bundle.as_deref())?;
        let text = &stamped.text;
        if !text.is_empty() {
            (&self.file)
                .write_all(text.as_bytes())
                .and_then(|_| (&self.file).flush())
                .map_err(|e| format!("cannot append to `{}`: {e}", self.log.display()))?;
            for event in events {
                self.so_far.apply(event);
            }
            self.covered += text.len() as u64;
            self.behind = true;
            stamped.written(&self.log);
        }
        if self.behind {
            // A checkpoint that cannot be written costs the next call a longer read, no more:
            // the record, which was written, is the truth.
            let _ = self.write_checkpoint();
        }
        Ok(())
    }

    /// Every event on the record from its start, read a line at a time (a line that does not
    /// parse is skipped), folded into a trace. A line too long to hold is an error: the trace
    /// would be read in part.
    pub fn trace(&self) -> Result<Trace, String> {
        let mut trace = Trace {
            format: "sixfold-events".into(),
            ..Trace::default()
        };
        (&self.file)
            .seek(SeekFrom::Start(0))
            .map_err(|e| format!("cannot read `{}`: {e}", self.log.display()))?;
        each_line(BufReader::new((&self.file).take(self.covered)), |line, whole| {
            if !whole {
                return Err(format!(
                    "the session's record `{}` holds a line longer than {} MiB, so it cannot all be read",
                    self.log.display(),
                    MAX_LINE_BYTES / (1024 * 1024)
                ));
            }
            if let Ok(event) = serde_json::from_slice::<Event>(line) {
                trace.apply(event);
            }
            Ok(())
        })?;
        Ok(trace)
    }

    /// Writes the checkpoint to a fresh file beside it, then renames it over the old one, so a
    /// reader never sees half of one.
    fn write_checkpoint(&self) -> Result<(), String> {
        let Some(id) = self.id else {
            return Ok(());
        };
        let checkpoint = Checkpoint {
            version: VERSION,
            log: id,
            bytes: self.covered,
            so_far: self.so_far.clone(),
        };
        let text = serde_json::to_string(&checkpoint).map_err(|e| e.to_string())?;
        let target = checkpoint_of(&self.log);
        let partial = target.with_extension("json.partial");
        // Under the lock no other writer makes this file: `create_new` never follows a link
        // planted in its place, and one left by a writer that died (or planted) is removed first.
        // The folder is made only where it is missing. Not written in place: a hard link planted
        // at the checkpoint's name would carry the write into another file; a rename replaces
        // the name, never what it pointed to.
        let create = || OpenOptions::new().write(true).create_new(true).open(&partial);
        let mut file = match create() {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = target.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
                }
                create().map_err(|e| e.to_string())?
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                std::fs::remove_file(&partial).map_err(|e| e.to_string())?;
                create().map_err(|e| e.to_string())?
            }
            Err(e) => return Err(e.to_string()),
        };
        let written = file.write_all(text.as_bytes()).map_err(|e| e.to_string());
        drop(file);
        match written.and_then(|()| std::fs::rename(&partial, &target).map_err(|e| e.to_string())) {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                Err(e)
            }
        }
    }
}

/// The log opened to read and append (created with its folder), under its exclusive lock.
fn open_locked(log: &Path) -> Result<File, String> {
    let open = || bounded::open_with(OpenOptions::new().read(true).create(true).append(true), log);
    let file = match open() {
        Err(bounded::ReadError::Missing) => {
            if let Some(dir) = log.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
            }
            open()
        }
        other => other,
    }
    // INVARIANT (fail closed): a log that is not a regular file is neither read nor appended to.
    .map_err(|e| format!("cannot open `{}`: {e}", log.display()))?;
    file.lock()
        .map_err(|e| format!("cannot lock `{}`: {e}", log.display()))?;
    Ok(file)
}

/// The checkpoint at `path`, where it is one sixfold wrote in full.
fn read(path: &Path) -> Option<Checkpoint> {
    let bytes = bounded::read_bytes(path, MAX_CHECKPOINT_BYTES).ok()?;
    let checkpoint: Checkpoint = serde_json::from_slice(&bytes).ok()?;
    (checkpoint.version == VERSION).then_some(checkpoint)
}

/// Calls `f` with each line of `reader` (without its newline) and whether it is whole: a line
/// longer than [`MAX_LINE_BYTES`] comes cut to that length, so memory stays bounded whatever
/// the record holds. A last line without its newline counts as a line.
pub(crate) fn each_line<R: BufRead>(
    mut reader: R,
    mut f: impl FnMut(&[u8], bool) -> Result<(), String>,
) -> Result<(), String> {
    let mut line = Vec::new();
    let mut cut = false;
    loop {
        let (used, ended) = {
            let buf = match reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("cannot read the session's record: {e}")),
            };
            if buf.is_empty() {
                if !line.is_empty() || cut {
                    f(&line, !cut)?;
                }
                return Ok(());
            }
            let (part, used, ended) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (buf.get(..i).unwrap_or_default(), i + 1, true),
                None => (buf, buf.len(), false),
            };
            let room = MAX_LINE_BYTES.saturating_sub(line.len());
            if part.len() > room {
                line.extend_from_slice(part.get(..room).unwrap_or_default());
                cut = true;
            } else {
                line.extend_from_slice(part);
            }
            (used, ended)
        };
        reader.consume(used);
        if ended {
            f(&line, !cut)?;
            line.clear();
            cut = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sixfold_core::decision::{DecidedBy, Decision, Judgement};
    use sixfold_core::trace::{Step, StepAct};

    fn spawn(decision: Decision) -> Event {
        Event::Judged {
            step: Box::new(Step {
                act: StepAct {
                    kind: "agent".into(),
                    text: "helper".into(),
                },
                ..Step::default()
            }),
            judgement: Judgement {
                decision,
                reason: String::new(),
                rules: Vec::new(),
                mode: "ask".into(),
                by: DecidedBy::Rules,
            },
        }
    }

    fn started() -> Event {
        Event::ModeChanged {
            from: None,
            to: "ask".into(),
        }
    }

    /// What a fresh read of the whole record says, the checkpoint aside.
    fn from_record(log: &Log) -> SoFar {
        SoFar::of(&log.events())
    }

    #[test]
    fn a_checkpoint_follows_the_record_and_is_written_beside_it() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        let held = log.hold().unwrap();
        assert_eq!(held.so_far(), &SoFar::default());
        held.append(&[started(), spawn(Decision::Allow)]).unwrap();
        assert!(path(&log).is_file());
        // Another writer that keeps no checkpoint (PostToolUse, the MCP proxy) appends too.
        log.append(&[spawn(Decision::Allow), spawn(Decision::Refuse)]).unwrap();
        let held = log.hold().unwrap();
        assert_eq!(held.so_far().spawns, 2);
        assert_eq!(held.so_far().mode.as_deref(), Some("ask"));
        let so_far = held.so_far().clone();
        held.append(&[]).unwrap();
        // (The record is read once the lock is released: a second handle would wait for it.)
        assert_eq!(so_far, from_record(&log));
        // The checkpoint now covers the whole record: a read folds nothing more.
        let c = read(&path(&log)).unwrap();
        assert_eq!(c.bytes, std::fs::metadata(log.path()).unwrap().len());
    }

    /// A checkpoint that is missing, torn, unreadable, of another version, for another file or
    /// for more than the record holds is rebuilt from the record, never read as a new session.
    #[test]
    fn a_lost_or_broken_checkpoint_is_rebuilt_never_reset() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        let held = log.hold().unwrap();
        held.append(&[started(), spawn(Decision::Allow), spawn(Decision::Allow)])
            .unwrap();
        let good = std::fs::read_to_string(path(&log)).unwrap();
        let zeroed = good.replace(r#""spawns":2"#, r#""spawns":0"#);
        let other_file = {
            let mut c: Checkpoint = serde_json::from_str(&good).unwrap();
            c.log.1 += 1;
            c.so_far.spawns = 0;
            c.bytes = 0;
            serde_json::to_string(&c).unwrap()
        };
        let too_long = {
            let mut c: Checkpoint = serde_json::from_str(&good).unwrap();
            c.bytes += 1;
            c.so_far.spawns = 0;
            serde_json::to_string(&c).unwrap()
        };
        let brokens = [
            None,
            Some(good.get(..good.len() / 2).unwrap().to_string()),
            Some(String::new()),
            Some("\u{0}garbage".to_string()),
            Some(
                good.replace(r#""version":2"#, r#""version":9"#)
                    .replace(r#""spawns":2"#, r#""spawns":0"#),
            ),
            Some(other_file),
            Some(too_long),
            Some(format!("{zeroed}{}", " ".repeat(1100 * 1024))),
        ];
        for broken in brokens {
            let _ = std::fs::remove_file(path(&log));
            if let Some(text) = &broken {
                std::fs::write(path(&log), text).unwrap();
            }
            let held = log.hold().unwrap();
            assert_eq!(held.so_far().spawns, 2, "{broken:?}");
            assert!(held.so_far().started, "{broken:?}");
            held.append(&[]).unwrap();
            assert_eq!(read(&path(&log)).unwrap().so_far.spawns, 2, "{broken:?}");
        }
        // The checkpoint agrees with the record: a valid one is believed (it is what makes a
        // call cost the same at any length), and it always says what the record says.
        let so_far = log.hold().unwrap().so_far().clone();
        assert_eq!(so_far, from_record(&log));
    }

    /// A checkpoint that is a FIFO or a link to a device is not read (no hang) and is replaced.
    #[cfg(unix)]
    #[test]
    fn a_checkpoint_that_is_not_a_regular_file_is_rebuilt() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        log.hold()
            .unwrap()
            .append(&[started(), spawn(Decision::Allow)])
            .unwrap();
        std::fs::remove_file(path(&log)).unwrap();
        assert!(std::process::Command::new("mkfifo")
            .arg(path(&log))
            .status()
            .unwrap()
            .success());
        let held = log.hold().unwrap();
        assert_eq!(held.so_far().spawns, 1);
        held.append(&[]).unwrap();
        assert!(std::fs::symlink_metadata(path(&log)).unwrap().is_file());
        std::fs::remove_file(path(&log)).unwrap();
        std::os::unix::fs::symlink("/dev/zero", path(&log)).unwrap();
        assert_eq!(log.hold().unwrap().so_far().spawns, 1);
    }

    /// Writers holding the lock one after another never lose a spawn, nor interleave lines, and
    /// the checkpoint ends equal to a fresh read of the record.
    #[test]
    fn concurrent_holders_lose_nothing() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        std::thread::scope(|scope| {
            for w in 0..6 {
                let log = log.clone();
                scope.spawn(move || {
                    for i in 0..40 {
                        if (w + i) % 3 == 0 {
                            // A writer without the checkpoint, between the others.
                            log.append(&[spawn(Decision::Allow)]).unwrap();
                            continue;
                        }
                        let held = log.hold().unwrap();
                        let before = held.so_far().spawns;
                        held.append(&[spawn(Decision::Allow), started()]).unwrap();
                        // Under the lock, the count a writer sees is the record's at that point.
                        assert!(before < 240);
                    }
                });
            }
        });
        let so_far = log.hold().unwrap().so_far().clone();
        assert_eq!(so_far.spawns, 240);
        assert_eq!(so_far, from_record(&log));
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert!(text.lines().all(|l| serde_json::from_str::<Event>(l).is_ok()));
    }

    /// The log replaced by another file (rotated, removed) is read afresh: its checkpoint was
    /// for the old one.
    #[test]
    fn a_replaced_log_is_read_afresh() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        log.hold()
            .unwrap()
            .append(&[started(), spawn(Decision::Allow)])
            .unwrap();
        let other = t.path().join("other.jsonl");
        std::fs::write(&other, "").unwrap();
        std::fs::rename(&other, log.path()).unwrap();
        let held = log.hold().unwrap();
        assert_eq!(held.so_far(), &SoFar::default());
    }

    /// A line too long to hold that could hold a spawn is an error (fail closed); one that
    /// cannot (a prompt) is skipped and the session goes on.
    #[test]
    fn a_line_too_long_to_hold_is_refused_only_where_it_counts() {
        let lines = |text: &[u8]| {
            let mut out = Vec::new();
            each_line(text, |l, whole| {
                out.push((l.len(), whole));
                Ok(())
            })
            .unwrap();
            out
        };
        assert_eq!(lines(b"ab\n\ncd"), vec![(2, true), (0, true), (2, true)]);
        assert_eq!(lines(b""), vec![]);
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        log.hold().unwrap().append(&[started()]).unwrap();
        let mut long = Vec::with_capacity(MAX_LINE_BYTES + 100);
        long.extend_from_slice(br#"{"event":"prompted","prompt":""#);
        long.resize(MAX_LINE_BYTES + 10, b'x');
        long.extend_from_slice(b"\"}\n");
        let mut file = OpenOptions::new().append(true).open(log.path()).unwrap();
        file.write_all(&long).unwrap();
        let held = log.hold().unwrap();
        assert!(held.so_far().started);
        held.append(&[spawn(Decision::Allow)]).unwrap();
        assert_eq!(log.hold().unwrap().so_far().spawns, 1);
        long.splice(..30, br#"{"event":"judged","step":{"xx"#.iter().copied());
        file.write_all(&long).unwrap();
        let why = log.hold().unwrap_err();
        assert!(why.contains("longer than 64 MiB"), "{why}");
    }
}
