//! How far a long replay has gone, on a terminal: files done and bytes read of the whole, on one
//! line of stderr, redrawn at most every [`EVERY`]. Shown only where a person watches (stderr is a
//! terminal) and the output is for a person (text): never in JSON or the CI formats, never in a log.

use crate::output::err;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The least time between two redraws: a 2 GiB replay reads thousands of buffers a second.
const EVERY: Duration = Duration::from_millis(200);

/// A replay's progress.
#[derive(Debug)]
pub(crate) struct Progress {
    /// What a file done is called (`replayed`, `compared`).
    done_word: &'static str,
    /// Whether anything is drawn.
    shown: bool,
    files: usize,
    /// The bytes the files held when listed; 0 when bytes are not counted.
    total: u64,
    done: AtomicUsize,
    read: AtomicU64,
    /// When the line was last drawn; `None` before the first time.
    drawn: Mutex<Option<Instant>>,
}

impl Progress {
    /// Progress over `files`, drawn when `shown`; with `bytes`, the bytes read of their sizes.
    pub(crate) fn new(files: &[PathBuf], done_word: &'static str, shown: bool, bytes: bool) -> Progress {
        let total = if bytes {
            files
                .iter()
                .filter_map(|f| std::fs::metadata(f).ok())
                .map(|m| m.len())
                .sum()
        } else {
            0
        };
        Progress {
            done_word,
            shown,
            files: files.len(),
            total,
            done: AtomicUsize::new(0),
            read: AtomicU64::new(0),
            drawn: Mutex::new(None),
        }
    }

    /// True when a person is watching: stderr is a terminal.
    pub(crate) fn watched() -> bool {
        std::io::IsTerminal::is_terminal(&std::io::stderr())
    }

    /// `n` more bytes read.
    pub(crate) fn read(&self, n: u64) {
        self.read.fetch_add(n, Ordering::Relaxed);
        self.draw(false);
    }

    /// One more file done.
    pub(crate) fn file_done(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
        // A file done is worth a line when bytes are not counted: few files, each a while.
        self.draw(self.total == 0);
    }

    /// Ends the line, if one was drawn.
    pub(crate) fn finish(&self) {
        if self.shown && self.drawn.lock().is_ok_and(|d| d.is_some()) {
            err!("\r{}\n", self.line());
        }
    }

    fn draw(&self, now: bool) {
        if !self.shown || (self.total == 0 && self.files < 2) {
            return;
        }
        // Another thread drawing is as good as this one drawing.
        let Ok(mut drawn) = self.drawn.try_lock() else {
            return;
        };
        let due = drawn.is_none_or(|at| at.elapsed() >= EVERY);
        if now || due {
            *drawn = Some(Instant::now());
            err!("\r{}", self.line());
        }
    }

    /// The line as it stands.
    fn line(&self) -> String {
        let done = self.done.load(Ordering::Relaxed);
        let mut line = format!(
            "{} {done}/{} file{}",
            self.done_word,
            self.files,
            if self.files == 1 { "" } else { "s" }
        );
        if self.total > 0 {
            let read = self.read.load(Ordering::Relaxed).min(self.total);
            line.push_str(&format!(
                ", {} of {} ({}%)",
                size(read),
                size(self.total),
                read.saturating_mul(100) / self.total
            ));
        }
        line
    }
}

/// Bytes for a person: KiB, MiB or GiB with one decimal.
fn size(bytes: u64) -> String {
    const UNITS: [(&str, f64); 3] = [("GiB", 1073741824.0), ("MiB", 1048576.0), ("KiB", 1024.0)];
    for (unit, scale) in UNITS {
        if bytes as f64 >= scale {
            return format!("{:.1} {unit}", bytes as f64 / scale);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &std::path::Path, sizes: &[usize]) -> Vec<PathBuf> {
        sizes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let f = dir.join(format!("{i}.jsonl"));
                std::fs::write(&f, vec![b'x'; *n]).unwrap();
                f
            })
            .collect()
    }

    #[test]
    fn the_line_counts_files_and_bytes_of_the_whole() {
        let dir = tempfile::tempdir().unwrap();
        let p = Progress::new(&files(dir.path(), &[3 << 20, 1 << 20]), "replayed", false, true);
        assert_eq!(p.line(), "replayed 0/2 files, 0 B of 4.0 MiB (0%)");
        p.read(1 << 20);
        p.file_done();
        assert_eq!(p.line(), "replayed 1/2 files, 1.0 MiB of 4.0 MiB (25%)");
        // A file that grew while read never shows more than all of it.
        p.read(8 << 20);
        assert_eq!(p.line(), "replayed 1/2 files, 4.0 MiB of 4.0 MiB (100%)");
        let counted = Progress::new(&files(dir.path(), &[10]), "compared", false, false);
        assert_eq!(counted.line(), "compared 0/1 file");
    }

    /// Many reads in a burst draw once: the redraw is rate-limited, not per buffer.
    #[test]
    fn redraws_are_rate_limited() {
        let dir = tempfile::tempdir().unwrap();
        let p = Progress::new(&files(dir.path(), &[1 << 20]), "replayed", true, true);
        let before = *p.drawn.lock().unwrap();
        assert!(before.is_none());
        p.read(1);
        let first = p.drawn.lock().unwrap().unwrap();
        for _ in 0..1000 {
            p.read(1);
        }
        assert_eq!(*p.drawn.lock().unwrap(), Some(first), "redrawn within {EVERY:?}");
        std::thread::sleep(EVERY);
        p.read(1);
        assert!(p.drawn.lock().unwrap().unwrap() > first);
    }

    #[test]
    fn nothing_is_drawn_unless_shown() {
        let dir = tempfile::tempdir().unwrap();
        let p = Progress::new(&files(dir.path(), &[100, 100]), "replayed", false, true);
        p.read(100);
        p.file_done();
        assert!(p.drawn.lock().unwrap().is_none());
    }
}
