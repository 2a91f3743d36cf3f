//! Lock files under sixfold's state directory (the placeholders' and the cache layers'): outside
//! every root, opened never through a link.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens the lock file at `path` for reading and writing, made (mode 0600, empty) when `create`
/// and it does not exist yet; never truncated, never followed if a link.
pub(crate) fn open(path: &Path, create: bool) -> std::io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(create)
        .truncate(false)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(path)
}
