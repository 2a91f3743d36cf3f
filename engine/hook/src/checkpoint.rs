//! The checkpoint beside a session's record, `.sixfold/checkpoints/<session>.checkpoint` (outside
//! `runs/`, which holds only records, so nothing that replays or lists them meets it): what the
//! record holds so far that the next call needs ([`SoFar`]: started, the last mode, the spawns
//! allowed), and how much of the record that covers (the log's identity and length).
//!
//! A writer holds the log's exclusive lock ([`Log::hold`]), reads the checkpoint, folds in only
//! what other writers appended since it was written (the lines past its length), appends its own
//! events and writes the checkpoint again, all under that one lock. So a call costs the same
//! whether the session is ten events long or a million, and no size stops a session.
//!
//! The file holds two slots, at offset 0 and at 128 KiB, each a header (a mark, a sequence
//! number, the body's length and the SHA-256 of all three) and a body (the checkpoint as JSON). A
//! writer writes the slot that does not hold the newest whole checkpoint, in place: no file is made
//! or renamed per call (on ext4 a rename over a file starts the old one's write-back), and a write
//! torn by a crash leaves the other slot whole. A reader takes the whole slot with the higher number.
//!
//! The record stays the truth. A checkpoint that is missing, torn, unreadable, for another file
//! or for more than the log holds is rebuilt from the record (read once, a line at a time), never
//! taken as an empty session: a count that matters (spawns) is never reset by losing it.

use crate::log::Log;
use sixfold_core::bounded;
use sixfold_core::sha256::Sha256;
use sixfold_core::trace::{Event, SoFar, Trace};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Where the second slot starts, and so the most a slot holds. A body larger than a slot is not
/// one sixfold wrote (it holds a few counts, and a carve and a read offset per helper): the
/// checkpoint is then not written, and the next call reads the record from the start.
const SLOT_BYTES: u64 = 128 * 1024;

/// What starts a slot sixfold wrote; its last byte is the layout's version.
const MARK: [u8; 8] = *b"sixfold\x03";

/// A slot's header: the mark, the sequence number (u64), the body's length (u32), and the SHA-256
/// of those and the body.
const HEADER_BYTES: usize = 8 + 8 + 4 + 32;

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

/// The checkpoint's file as a writer holds it.
#[derive(Debug)]
struct Slots {
    /// The file, open to read and write, where it is a regular file with one name (`None`: it is
    /// missing, or is something else, which is replaced when written).
    file: Option<File>,
    /// The slot holding the newest whole checkpoint, and its sequence number.
    newest: Option<(u64, u64)>,
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
    /// The checkpoint's file, as read.
    slots: Slots,
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
    dir.join(format!("{name}.checkpoint"))
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
        let mut slots = Slots::open(&path(log));
        let (mut so_far, from) = match (slots.read(), id) {
            // INVARIANT (fail closed): a checkpoint counts only for this very file, and only up
            // to a length the file still has; anything else is rebuilt from the record.
            (Some(c), Some(id)) if c.version == VERSION && c.log == id && c.bytes <= len => (c.so_far, c.bytes),
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
            slots,
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

    /// Writes the checkpoint into the slot that does not hold the newest one.
    fn write_checkpoint(&mut self) -> Result<(), String> {
        let Some(id) = self.id else {
            return Ok(());
        };
        let checkpoint = Checkpoint {
            version: VERSION,
            log: id,
            bytes: self.covered,
            so_far: self.so_far.clone(),
        };
        let body = serde_json::to_vec(&checkpoint).map_err(|e| e.to_string())?;
        self.slots.write(&checkpoint_of(&self.log), &body)
    }
}

/// Whether an opened checkpoint may be read and written in place: a regular file with no other
/// name, and the very file at `path` itself, not one a symlink there leads to (a hard link or a
/// symlink planted at its name would carry an in-place write into another file).
fn is_ours(file: &File, path: &Path) -> bool {
    let (Ok(meta), Ok(named)) = (file.metadata(), std::fs::symlink_metadata(path)) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.is_file() && named.is_file() && meta.nlink() == 1 && (meta.dev(), meta.ino()) == (named.dev(), named.ino())
    }
    #[cfg(not(unix))]
    {
        meta.is_file() && named.is_file()
    }
}

/// The SHA-256 of a slot's sequence number, length and body.
fn digest(seq: u64, body: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::sized(MARK.len() + 16 + body.len());
    hasher.update(&MARK);
    hasher.update(&seq.to_le_bytes());
    hasher.update(&(body.len() as u64).to_le_bytes());
    hasher.update(body);
    hasher.finalize()
}

/// A slot as written: its header, then `body`.
fn encode(seq: u64, body: &[u8]) -> Option<Vec<u8>> {
    let len = u32::try_from(body.len()).ok()?;
    if (HEADER_BYTES + body.len()) as u64 > SLOT_BYTES {
        return None;
    }
    let mut slot = Vec::with_capacity(HEADER_BYTES + body.len());
    slot.extend_from_slice(&MARK);
    slot.extend_from_slice(&seq.to_le_bytes());
    slot.extend_from_slice(&len.to_le_bytes());
    slot.extend_from_slice(&digest(seq, body));
    slot.extend_from_slice(body);
    Some(slot)
}

impl Slots {
    /// Opens the checkpoint at `path` where it is a regular file with one name; else no file.
    fn open(path: &Path) -> Slots {
        // Opened non-blocking and only where it is a regular file (a FIFO does not block).
        let file = bounded::open_with(OpenOptions::new().read(true).write(true), path)
            .ok()
            .filter(|file| is_ours(file, path));
        Slots { file, newest: None }
    }

    /// The sequence number and body of slot `n`, where it is whole.
    fn slot(file: &File, n: u64) -> Option<(u64, Vec<u8>)> {
        let mut header = [0u8; HEADER_BYTES];
        read_at(file, &mut header, n * SLOT_BYTES)?;
        let (mark, rest) = header.split_first_chunk::<8>()?;
        let (seq, rest) = rest.split_first_chunk::<8>()?;
        let (len, sum) = rest.split_first_chunk::<4>()?;
        let len = u64::from(u32::from_le_bytes(*len));
        if *mark != MARK || HEADER_BYTES as u64 + len > SLOT_BYTES {
            return None;
        }
        let seq = u64::from_le_bytes(*seq);
        let mut body = vec![0u8; usize::try_from(len).ok()?];
        read_at(file, &mut body, n * SLOT_BYTES + HEADER_BYTES as u64)?;
        (digest(seq, &body).as_slice() == sum).then_some((seq, body))
    }

    /// The newest whole checkpoint of the two slots (an older whole one where the newest is
    /// torn or does not parse).
    fn read(&mut self) -> Option<Checkpoint> {
        let file = self.file.as_ref()?;
        let mut found: Vec<(u64, u64, Vec<u8>)> = (0..2)
            .filter_map(|n| Slots::slot(file, n).map(|(seq, body)| (seq, n, body)))
            .collect();
        found.sort_by_key(|(seq, _, _)| std::cmp::Reverse(*seq));
        for (seq, n, body) in found {
            if let Ok(checkpoint) = serde_json::from_slice::<Checkpoint>(&body) {
                self.newest = Some((n, seq));
                return Some(checkpoint);
            }
        }
        None
    }

    /// Writes `body` into the slot that does not hold the newest checkpoint, with the next
    /// sequence number; where there is no file to write in place, a fresh one is made.
    fn write(&mut self, path: &Path, body: &[u8]) -> Result<(), String> {
        let (slot, seq) = match self.newest {
            Some((n, seq)) => (1 - n, seq.wrapping_add(1)),
            None => (0, 1),
        };
        let bytes = encode(seq, body).ok_or("the checkpoint is larger than a slot")?;
        let file = match self.file.take() {
            Some(file) => file,
            None => fresh(path)?,
        };
        write_at(&file, &bytes, slot * SLOT_BYTES).map_err(|e| e.to_string())?;
        self.newest = Some((slot, seq));
        self.file = Some(file);
        Ok(())
    }
}

/// A fresh, empty checkpoint file at `path`: whatever is at the name (a file with another name,
/// a FIFO, a symlink, one torn) is removed first, and `create_new` never follows a link planted
/// in its place (under the log's lock no other writer makes it). The folder is made only where
/// it is missing.
fn fresh(path: &Path) -> Result<File, String> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.to_string()),
        _ => {}
    }
    let create = || OpenOptions::new().read(true).write(true).create_new(true).open(path);
    match create() {
        Ok(file) => Ok(file),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
            }
            create().map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Reads exactly `buf.len()` bytes at `offset`; `None` where the file holds fewer.
#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> Option<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, offset).ok()
}

#[cfg(not(unix))]
fn read_at(mut file: &File, buf: &mut [u8], offset: u64) -> Option<()> {
    file.seek(SeekFrom::Start(offset)).ok()?;
    file.read_exact(buf).ok()
}

/// Writes all of `buf` at `offset`.
#[cfg(unix)]
fn write_at(file: &File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(buf, offset)
}

#[cfg(not(unix))]
fn write_at(mut file: &File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    file.seek(SeekFrom::Start(offset))?;
    file.write_all(buf)
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

    /// The newest whole checkpoint at `path`, as a writer reads it.
    fn read(path: &Path) -> Option<Checkpoint> {
        Slots::open(path).read()
    }

    /// A checkpoint file of one slot holding `body`, as a writer writes it.
    fn one_slot(body: &[u8]) -> Vec<u8> {
        encode(1, body).unwrap()
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
        let good = read(&path(&log)).unwrap();
        let body = |c: &Checkpoint| serde_json::to_vec(c).unwrap();
        let zeroed = Checkpoint {
            so_far: SoFar {
                spawns: 0,
                ..good.so_far.clone()
            },
            ..good
        };
        let other_file = Checkpoint {
            log: (good.log.0, good.log.1 + 1),
            bytes: 0,
            ..zeroed.clone()
        };
        let too_long = Checkpoint {
            bytes: good.bytes + 1,
            ..zeroed.clone()
        };
        let other_version = Checkpoint {
            version: 9,
            ..zeroed.clone()
        };
        let whole = one_slot(&body(&zeroed));
        let mut flipped = whole.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let mut old_mark = whole.clone();
        old_mark[7] = 2;
        let brokens: Vec<(&str, Option<Vec<u8>>)> = vec![
            ("missing", None),
            ("torn", Some(whole.get(..whole.len() / 2).unwrap().to_vec())),
            ("header only", Some(whole.get(..HEADER_BYTES).unwrap().to_vec())),
            ("empty", Some(Vec::new())),
            ("garbage", Some(b"\0garbage".to_vec())),
            ("a flipped bit", Some(flipped)),
            ("another layout", Some(old_mark)),
            ("the old JSON", Some(body(&zeroed))),
            ("another version", Some(one_slot(&body(&other_version)))),
            ("another file", Some(one_slot(&body(&other_file)))),
            ("more than the log", Some(one_slot(&body(&too_long)))),
            ("not JSON", Some(one_slot(b"{\"spawns\":0"))),
        ];
        for (what, broken) in brokens {
            let _ = std::fs::remove_file(path(&log));
            if let Some(bytes) = &broken {
                std::fs::write(path(&log), bytes).unwrap();
            }
            let held = log.hold().unwrap();
            assert_eq!(held.so_far().spawns, 2, "{what}");
            assert!(held.so_far().started, "{what}");
            held.append(&[]).unwrap();
            assert_eq!(read(&path(&log)).unwrap().so_far.spawns, 2, "{what}");
        }
        // A slot's length past the slot's end is not read (the read stays bounded).
        let mut huge = whole;
        huge[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(path(&log), &huge).unwrap();
        assert_eq!(read(&path(&log)), None);
        // The checkpoint agrees with the record: a valid one is believed (it is what makes a
        // call cost the same at any length), and it always says what the record says.
        let so_far = log.hold().unwrap().so_far().clone();
        assert_eq!(so_far, from_record(&log));
    }

    /// The two slots are written in turn, each in place: a write torn in the newest slot (a
    /// crash mid-write) leaves the other whole, and the reader takes that one and folds in what
    /// the record holds past it, so nothing is lost. No file is made or renamed per call.
    #[cfg(unix)]
    #[test]
    fn a_torn_slot_leaves_the_other_and_nothing_is_lost() {
        use std::os::unix::fs::{FileExt, MetadataExt};
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        log.hold()
            .unwrap()
            .append(&[started(), spawn(Decision::Allow)])
            .unwrap();
        let inode = std::fs::metadata(path(&log)).unwrap().ino();
        log.hold().unwrap().append(&[spawn(Decision::Allow)]).unwrap();
        log.hold().unwrap().append(&[spawn(Decision::Allow)]).unwrap();
        // Written in place: the same file all along, and both slots hold a whole checkpoint.
        assert_eq!(std::fs::metadata(path(&log)).unwrap().ino(), inode);
        let file = File::open(path(&log)).unwrap();
        let (newest, older) = (Slots::slot(&file, 0).unwrap(), Slots::slot(&file, 1).unwrap());
        assert_eq!((newest.0, older.0), (3, 2));
        // Tear the newest slot (slot 0, written third) at every kind of place.
        for at in [0, 9, 17, 30, HEADER_BYTES + 3, HEADER_BYTES + newest.1.len() - 1] {
            let mut bytes = std::fs::read(path(&log)).unwrap();
            bytes[at] ^= 0x5a;
            std::fs::write(path(&log), &bytes).unwrap();
            let mut slots = Slots::open(&path(&log));
            let c = slots.read().unwrap();
            assert_eq!(c.so_far.spawns, 2, "torn at {at}: the older slot is read");
            assert_eq!(slots.newest, Some((1, 2)), "torn at {at}");
            let held = log.hold().unwrap();
            assert_eq!(held.so_far().spawns, 3, "torn at {at}: the record past it is folded in");
            // The next write goes into the torn slot, never over the whole one.
            held.append(&[]).unwrap();
            let file = File::open(path(&log)).unwrap();
            assert_eq!(Slots::slot(&file, 0).unwrap().0, 3, "torn at {at}");
            assert_eq!(Slots::slot(&file, 1).unwrap().0, 2, "torn at {at}");
            // Put the torn slot back as it was for the next case.
            let writable = OpenOptions::new().write(true).open(path(&log)).unwrap();
            writable.write_all_at(&encode(3, &newest.1).unwrap(), 0).unwrap();
        }
        let so_far = log.hold().unwrap().so_far().clone();
        assert_eq!(so_far, from_record(&log));
    }

    /// A checkpoint name that is a hard link to another file, or a symlink to one, is never
    /// written through: the other file stays as it was, and a fresh checkpoint takes the name.
    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_the_checkpoint_is_never_written_through() {
        let t = tempfile::tempdir().unwrap();
        let log = Log::new(t.path(), "s");
        log.hold()
            .unwrap()
            .append(&[started(), spawn(Decision::Allow)])
            .unwrap();
        let victim = t.path().join("victim");
        let planted = |link: &dyn Fn(&Path, &Path) -> std::io::Result<()>| {
            std::fs::write(&victim, "keep me").unwrap();
            std::fs::remove_file(path(&log)).unwrap();
            link(&victim, &path(&log)).unwrap();
            let expected = from_record(&log);
            let held = log.hold().unwrap();
            assert_eq!(held.so_far(), &expected);
            held.append(&[spawn(Decision::Allow)]).unwrap();
            assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
            let meta = std::fs::symlink_metadata(path(&log)).unwrap();
            assert!(meta.is_file());
            assert_eq!(read(&path(&log)).unwrap().so_far, from_record(&log));
        };
        planted(&|from, to| std::fs::hard_link(from, to));
        planted(&|from, to| std::os::unix::fs::symlink(from, to));
        assert_eq!(log.hold().unwrap().so_far().spawns, 3);
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
