//! Reading files sixfold does not trust, bounded: every file the engine reads (the project's
//! state, kept rules, a bundle's files, a session log, a settings file, a transcript) is untrusted,
//! and one that is not a regular file or is too large must not hang the engine or grow it without
//! bound. Every layer reads through here.
//!
//! A file is opened non-blocking (so a FIFO does not block the open), then checked to be a regular
//! file with `fstat` on the opened handle (so nothing can swap it between a check and the open),
//! then read at most up to the bound.
//!
//! ```
//! use sixfold_core::bounded::{read_text, ReadError};
//! let dir = std::env::temp_dir();
//! // A directory is not a regular file: refused, never read.
//! assert!(matches!(read_text(&dir, 1024), Err(ReadError::NotRegular(_))));
//! // A file that is not there is told apart, so a caller can use its default.
//! assert!(matches!(read_text(&dir.join("sixfold-no-such-file"), 1024), Err(ReadError::Missing)));
//! ```

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::path::Path;

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// Nothing is there.
    Missing,
    /// Something is there but it is not a regular file: a directory, a FIFO, a device, a socket.
    NotRegular(&'static str),
    /// The file is larger than the bound.
    TooLarge {
        /// The bound, in bytes.
        limit: u64,
    },
    /// The file is not UTF-8 text.
    NotText {
        /// How many bytes from the start are valid UTF-8.
        valid_up_to: usize,
    },
    /// It could not be opened or read.
    Io(std::io::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Missing => write!(f, "there is no such file"),
            ReadError::NotRegular(kind) => write!(f, "it is {kind}, not a regular file, so it is not read"),
            ReadError::TooLarge { limit } => write!(f, "the file is larger than the {limit} bytes allowed"),
            ReadError::NotText { valid_up_to } => write!(f, "the file is not UTF-8 (byte {valid_up_to})"),
            ReadError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<std::io::Error> for ReadError {
    fn from(e: std::io::Error) -> ReadError {
        if e.kind() == std::io::ErrorKind::NotFound {
            ReadError::Missing
        } else {
            ReadError::Io(e)
        }
    }
}

/// `O_NONBLOCK` where it is known: opening a FIFO then returns at once. Elsewhere 0, and the check
/// before the open is what keeps a FIFO from being opened.
const O_NONBLOCK: i32 = if cfg!(all(
    any(target_os = "linux", target_os = "android"),
    not(any(
        target_arch = "mips",
        target_arch = "mips64",
        target_arch = "sparc",
        target_arch = "sparc64"
    ))
)) {
    0o4000
} else if cfg!(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
)) {
    0x4
} else {
    0
};

/// What a file that is not regular is, in words.
fn kind_of(file_type: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        }
        if file_type.is_char_device() || file_type.is_block_device() {
            return "a device";
        }
        if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// Opens `path` with `options` (non-blocking added) and returns the handle only when it is a
/// regular file (symlinks are followed; what they lead to must be regular). Use it to append to or
/// read from a file by hand; [`read_text`] and [`read_bytes`] do the whole read.
///
/// ```
/// use std::fs::OpenOptions;
/// use sixfold_core::bounded::{open_with, ReadError};
/// let dir = tempfile::tempdir().unwrap();
/// let log = dir.path().join("log");
/// assert!(open_with(OpenOptions::new().create(true).append(true), &log).is_ok());
/// assert!(matches!(open_with(OpenOptions::new().read(true), dir.path()), Err(ReadError::NotRegular(_))));
/// ```
pub fn open_with(options: &mut OpenOptions, path: &Path) -> Result<File, ReadError> {
    open_regular(options, path).map(|(file, _)| file)
}

/// [`open_with`], with the size the opened file had.
pub(crate) fn open_regular(options: &mut OpenOptions, path: &Path) -> Result<(File, u64), ReadError> {
    // A first look, so a FIFO or a device is not even opened where the kernel allows it.
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return Err(ReadError::NotRegular(kind_of(meta.file_type()))),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e.into()),
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(O_NONBLOCK);
    }
    let file = options.open(path)?;
    // INVARIANT (fail closed): what decides is the handle's own type, not the look before the open.
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_of(meta.file_type())));
    }
    Ok((file, meta.len()))
}

/// Opens a regular file for reading (see [`open_with`]).
pub fn open(path: &Path) -> Result<File, ReadError> {
    open_with(OpenOptions::new().read(true), path)
}

/// Fills `buf` from `file` at `at`, without moving any offset a caller relies on where the
/// platform has a positioned read: a file read in parts, a part when it is needed.
pub(crate) fn read_at(file: &File, at: u64, buf: &mut [u8]) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, at)
    }
    #[cfg(not(unix))]
    {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = file;
        file.seek(SeekFrom::Start(at))?;
        file.read_exact(buf)
    }
}

/// Reads a whole regular file of at most `limit` bytes.
///
/// ```
/// use sixfold_core::bounded::{read_bytes, ReadError};
/// let dir = tempfile::tempdir().unwrap();
/// let file = dir.path().join("f");
/// std::fs::write(&file, b"0123456789").unwrap();
/// assert_eq!(read_bytes(&file, 10).unwrap(), b"0123456789");
/// assert!(matches!(read_bytes(&file, 9), Err(ReadError::TooLarge { limit: 9 })));
/// ```
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let (mut file, size) = open_regular(OpenOptions::new().read(true), path)?;
    // The size on record is only a hint (the file may grow): the read itself is what is bounded.
    // Sized by it, the buffer is read into whole, not grown and copied as it fills nor read in
    // the doubling probes `read_to_end` makes of a reader whose size it is not told (a hook
    // reads a project's mode files and its parsed layer on every call: a 100 KB file is one read
    // and one at its end, not five). `calloc` takes memory fresh from the system already zero.
    let bound = usize::try_from(limit.saturating_add(1)).unwrap_or(usize::MAX);
    let first = usize::try_from(size.saturating_add(1)).unwrap_or(usize::MAX).min(bound);
    let mut bytes = vec![0u8; first];
    let mut len = 0;
    loop {
        if len == bytes.len() {
            if len >= bound {
                return Err(ReadError::TooLarge { limit });
            }
            // It grew since its size was read: on, up to the bound.
            bytes.resize(len.saturating_mul(2).max(8192).min(bound), 0);
        }
        let Some(rest) = bytes.get_mut(len..) else { break };
        match file.read(rest) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    bytes.truncate(len);
    Ok(bytes)
}

/// Reads a whole regular file of at most `limit` bytes as UTF-8 text.
///
/// ```
/// use sixfold_core::bounded::{read_text, ReadError};
/// let dir = tempfile::tempdir().unwrap();
/// let file = dir.path().join("f.toml");
/// std::fs::write(&file, "mode = \"ask\"\n").unwrap();
/// assert_eq!(read_text(&file, 1024).unwrap(), "mode = \"ask\"\n");
/// std::fs::write(&file, [0xff, 0xfe]).unwrap();
/// assert!(matches!(read_text(&file, 1024), Err(ReadError::NotText { valid_up_to: 0 })));
/// ```
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_bytes(path, limit)?;
    String::from_utf8(bytes).map_err(|e| ReadError::NotText {
        valid_up_to: e.utf8_error().valid_up_to(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_flag_is_the_platforms() {
        assert_eq!(O_NONBLOCK, libc::O_NONBLOCK);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_to_an_endless_device_is_refused_at_once() {
        let t = tempfile::tempdir().unwrap();
        let link = t.path().join("state.toml");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        assert!(matches!(read_text(&link, 1024), Err(ReadError::NotRegular("a device"))));
        assert!(matches!(open(&link), Err(ReadError::NotRegular(_))));
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("state.toml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        // No writer ever opens it: a blocking open would hang this test.
        assert!(matches!(read_text(&fifo, 1024), Err(ReadError::NotRegular("a FIFO"))));
        // The handle's own type decides even when the look before the open is skipped.
        use std::os::unix::fs::OpenOptionsExt;
        let handle = OpenOptions::new()
            .read(true)
            .custom_flags(O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        assert!(!handle.metadata().unwrap().is_file());
    }

    /// A file larger than its recorded size (one that grew after it was looked at; here a proc
    /// file, which records none) is read whole, and still only up to the bound.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_file_larger_than_it_says_is_read_up_to_the_bound() {
        let status = Path::new("/proc/self/status");
        assert_eq!(std::fs::metadata(status).unwrap().len(), 0);
        let whole = read_text(status, 1024 * 1024).unwrap();
        assert!(whole.len() > 100 && whole.contains("Pid:"), "{whole}");
        assert!(matches!(read_bytes(status, 50), Err(ReadError::TooLarge { limit: 50 })));
    }

    #[test]
    fn an_oversized_file_is_refused_and_a_missing_one_told_apart() {
        let t = tempfile::tempdir().unwrap();
        let big = t.path().join("big");
        std::fs::write(&big, vec![b'a'; 4097]).unwrap();
        assert!(matches!(
            read_text(&big, 4096),
            Err(ReadError::TooLarge { limit: 4096 })
        ));
        assert_eq!(read_text(&big, 4097).unwrap().len(), 4097);
        assert!(matches!(read_text(&t.path().join("nope"), 1), Err(ReadError::Missing)));
    }

    #[cfg(unix)]
    #[test]
    fn appending_to_a_fifo_or_device_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("log");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        let append = || OpenOptions::new().create(true).append(true).clone();
        assert!(open_with(&mut append(), &fifo).is_err());
        let link = t.path().join("null");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        assert!(matches!(open_with(&mut append(), &link), Err(ReadError::NotRegular(_))));
    }
}
