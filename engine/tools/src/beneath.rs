//! File access bounded by the kernel, not by a check before it: every path the file tools touch
//! is opened with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` from the root that holds it,
//! one directory handle at a time. The path a call names was resolved once, before it was
//! judged (`pinned`); from then on no symlink is followed and nothing climbs out of its root, so a
//! directory swapped for a symlink mid-call (by the agent's own shell) makes the call fail
//! instead of landing elsewhere. A directory already opened stays the one judged, wherever it is
//! moved.

use nix::dir::{Dir, Type};
use nix::errno::Errno;
use nix::fcntl::{openat, openat2, renameat, OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::{fstat, fstatat, mkdirat, Mode, SFlag};
use nix::unistd::{unlinkat, UnlinkatFlags};
use sixfold_core::bounded::ReadError;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Resolution that follows no symlink (magic links included) and never leaves its start.
fn strict() -> ResolveFlag {
    ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS | ResolveFlag::RESOLVE_NO_MAGICLINKS
}

/// Opens `name` (a path relative to `dir`) with `flags`, strictly.
fn open_in(dir: &OwnedFd, name: &Path, flags: OFlag) -> Result<OwnedFd, Errno> {
    // No `O_NOFOLLOW`: a symlink as the last part is refused by the resolution itself (`ELOOP`),
    // where `O_NOFOLLOW` with `O_PATH` would open the link.
    let how = OpenHow::new().flags(flags | OFlag::O_CLOEXEC).resolve(strict());
    loop {
        match openat2(dir, name, how) {
            // The kernel asks a resolution raced by a rename to be tried again.
            Err(Errno::EAGAIN | Errno::EINTR) => continue,
            other => return other,
        }
    }
}

/// Why an open failed, in words.
fn said(path: &Path, e: Errno) -> String {
    match e {
        Errno::ELOOP => format!(
            "`{}` passes through a symlink, which the governed tools do not follow (name its target)",
            path.display()
        ),
        Errno::EXDEV => format!("`{}` leads out of its root", path.display()),
        Errno::ENOENT => format!("`{}` does not exist", path.display()),
        Errno::ENOTDIR => format!("`{}`: a part of it is not a directory", path.display()),
        other => format!("`{}`: {}", path.display(), other.desc()),
    }
}

/// The roots the file tools open from: a path is opened beneath the deepest one that holds it
/// (else beneath `/`, still with no symlink followed).
#[derive(Debug, Clone)]
pub(crate) struct Roots {
    roots: Vec<PathBuf>,
}

impl Roots {
    /// The roots, resolved as judged paths are (symlinks in a root's own path are the user's).
    pub(crate) fn new<'a>(roots: impl IntoIterator<Item = &'a Path>) -> Roots {
        let mut roots: Vec<PathBuf> = roots
            .into_iter()
            .filter_map(|r| std::fs::canonicalize(r).ok())
            .collect();
        // The deepest first, so a root inside another is the one opened from.
        roots.sort_by_key(|r| std::cmp::Reverse(r.components().count()));
        roots.push(PathBuf::from("/"));
        Roots { roots }
    }

    /// The open root holding `path` (absolute, without `..`), and the path beneath it.
    fn anchor(&self, path: &Path) -> Result<(OwnedFd, PathBuf), String> {
        if !path.is_absolute() || path.components().any(|c| matches!(c, Component::ParentDir)) {
            return Err(format!("`{}` is not a resolved absolute path", path.display()));
        }
        let (root, rest) = self
            .roots
            .iter()
            .find_map(|r| path.strip_prefix(r).ok().map(|rest| (r, rest)))
            .ok_or_else(|| format!("`{}` lies under no root", path.display()))?;
        let fd = nix::fcntl::open(
            root,
            OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| said(root, e))?;
        let rest = if rest.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            rest.to_path_buf()
        };
        Ok((fd, rest))
    }

    /// The directory at `path`, opened to list or walk.
    pub(crate) fn dir(&self, path: &Path) -> Result<OwnedFd, String> {
        let (root, rest) = self.anchor(path)?;
        open_in(&root, &rest, OFlag::O_RDONLY | OFlag::O_DIRECTORY).map_err(|e| said(path, e))
    }

    /// The directory at `path` as a handle to work in, made (with its parents) when `create`.
    fn work_dir(&self, path: &Path, create: bool) -> Result<OwnedFd, String> {
        let (mut dir, rest) = self.anchor(path)?;
        for part in rest.components() {
            let Component::Normal(name) = part else { continue };
            let name = Path::new(name);
            let flags = OFlag::O_PATH | OFlag::O_DIRECTORY;
            dir = match open_in(&dir, name, flags) {
                Ok(next) => next,
                Err(Errno::ENOENT) if create => {
                    match mkdirat(&dir, name, Mode::from_bits_truncate(0o777)) {
                        Ok(()) | Err(Errno::EEXIST) => {}
                        Err(e) => return Err(format!("cannot create `{}`: {}", path.display(), e.desc())),
                    }
                    open_in(&dir, name, flags).map_err(|e| said(path, e))?
                }
                Err(e) => return Err(said(path, e)),
            };
        }
        Ok(dir)
    }

    /// A file to write: its directory's handle (made as needed when `create`) and its name.
    pub(crate) fn parent(&self, path: &Path, create: bool) -> Result<Parent, String> {
        let name = path
            .file_name()
            .ok_or_else(|| format!("`{}` names no file", path.display()))?
            .to_os_string();
        let dir_path = path
            .parent()
            .ok_or_else(|| format!("`{}` has no directory", path.display()))?;
        Ok(Parent {
            dir: self.work_dir(dir_path, create)?,
            name: PathBuf::from(name),
            path: path.to_path_buf(),
        })
    }

    /// Reads the whole regular file at `path`, at most `limit` bytes, as text.
    pub(crate) fn read_text(&self, path: &Path, limit: u64) -> Result<String, ReadError> {
        let (root, rest) = self.anchor(path).map_err(|e| ReadError::Io(std::io::Error::other(e)))?;
        read_at(&root, &rest, path, limit)
    }
}

/// Opens `name` beneath `dir` to read: a regular file only (a FIFO is opened without waiting and
/// then refused), read to `limit` bytes as UTF-8 text.
pub(crate) fn read_at(dir: &OwnedFd, name: &Path, shown: &Path, limit: u64) -> Result<String, ReadError> {
    let fd = match open_in(dir, name, OFlag::O_RDONLY | OFlag::O_NONBLOCK) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Err(ReadError::Missing),
        Err(e) => return Err(ReadError::Io(std::io::Error::other(said(shown, e)))),
    };
    let stat = fstat(&fd).map_err(|e| ReadError::Io(e.into()))?;
    regular(stat.st_mode)?;
    let mut bytes = Vec::new();
    File::from(fd)
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    String::from_utf8(bytes).map_err(|e| ReadError::NotText {
        valid_up_to: e.utf8_error().valid_up_to(),
    })
}

/// A file's type from its mode: an error unless it is a regular file.
fn regular(mode: nix::libc::mode_t) -> Result<(), ReadError> {
    let kind = SFlag::from_bits_truncate(mode & SFlag::S_IFMT.bits());
    match kind {
        SFlag::S_IFREG => Ok(()),
        SFlag::S_IFIFO => Err(ReadError::NotRegular("a FIFO")),
        SFlag::S_IFDIR => Err(ReadError::NotRegular("a directory")),
        SFlag::S_IFCHR | SFlag::S_IFBLK => Err(ReadError::NotRegular("a device")),
        SFlag::S_IFSOCK => Err(ReadError::NotRegular("a socket")),
        _ => Err(ReadError::NotRegular("not a regular file")),
    }
}

/// A file's directory, held open, and its name in it.
#[derive(Debug)]
pub(crate) struct Parent {
    dir: OwnedFd,
    name: PathBuf,
    path: PathBuf,
}

impl Parent {
    /// The file's text as it is, `None` when there is none yet.
    pub(crate) fn read_text(&self, limit: u64) -> Result<Option<String>, ReadError> {
        match read_at(&self.dir, &self.name, &self.path, limit) {
            Ok(text) => Ok(Some(text)),
            Err(ReadError::Missing) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Replaces the file with `content` through a temporary file renamed into place in the same
    /// directory handle, so a reader never sees half of it; a symlink or a special file in place
    /// is refused (not written through).
    pub(crate) fn write_whole(&self, content: &str) -> Result<(), String> {
        let shown = self.path.display();
        match fstatat(&self.dir, &self.name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(stat) if regular(stat.st_mode).is_err() => {
                return Err(format!("`{shown}` is not a regular file"));
            }
            _ => {}
        }
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(self.name.as_os_str());
        tmp_name.push(format!(".sixfold-{}", std::process::id()));
        let tmp = Path::new(&tmp_name);
        let _ = unlinkat(&self.dir, tmp, UnlinkatFlags::NoRemoveDir);
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = openat(&self.dir, tmp, flags, Mode::from_bits_truncate(0o666))
            .map_err(|e| format!("cannot write `{shown}`: {}", e.desc()))?;
        let written = File::from(fd).write_all(content.as_bytes());
        let renamed = written
            .map_err(|e| e.to_string())
            .and_then(|()| renameat(&self.dir, tmp, &self.dir, &self.name).map_err(|e| e.desc().to_string()));
        renamed.map_err(|e| {
            let _ = unlinkat(&self.dir, tmp, UnlinkatFlags::NoRemoveDir);
            format!("cannot write `{shown}`: {e}")
        })
    }
}

/// One entry of a directory.
#[derive(Debug)]
pub(crate) struct Entry {
    pub(crate) name: std::ffi::OsString,
    pub(crate) is_dir: bool,
    pub(crate) is_file: bool,
}

/// The entries of an open directory (without `.` and `..`), at most `max`, by name.
pub(crate) fn entries(dir: &OwnedFd, max: usize) -> Result<Vec<Entry>, String> {
    let copy = dir.try_clone().map_err(|e| e.to_string())?;
    let mut listing = Dir::from_fd(copy).map_err(|e| e.desc().to_string())?;
    let mut out = Vec::new();
    for entry in listing.iter().flatten() {
        let name = OsStr::from_bytes(entry.file_name().to_bytes()).to_os_string();
        if name == "." || name == ".." {
            continue;
        }
        if out.len() >= max {
            break;
        }
        let kind = match entry.file_type() {
            Some(t) => Some(t),
            // Some filesystems leave the type out of the listing: asked without following.
            None => fstatat(dir, Path::new(&name), nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
                .ok()
                .map(|s| match SFlag::from_bits_truncate(s.st_mode & SFlag::S_IFMT.bits()) {
                    SFlag::S_IFDIR => Type::Directory,
                    SFlag::S_IFREG => Type::File,
                    _ => Type::Symlink,
                }),
        };
        out.push(Entry {
            name,
            is_dir: kind == Some(Type::Directory),
            is_file: kind == Some(Type::File),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_anywhere_on_the_way_is_refused_and_a_plain_path_opens() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::write(root.join("d/a"), "inside").unwrap();
        std::fs::write(out.path().join("a"), "outside").unwrap();
        std::os::unix::fs::symlink(out.path(), root.join("link")).unwrap();
        std::os::unix::fs::symlink("d", root.join("near")).unwrap();
        let roots = Roots::new([root.as_path()]);
        assert_eq!(roots.read_text(&root.join("d/a"), 100).unwrap(), "inside");
        for through in ["link/a", "near/a"] {
            let err = roots.read_text(&root.join(through), 100).unwrap_err().to_string();
            assert!(err.contains("symlink"), "{through}: {err}");
            assert!(roots.parent(&root.join(through), true).is_err(), "{through}");
        }
        assert!(roots.parent(&root.join("link/new/b"), true).is_err());
        assert!(!out.path().join("new").exists());
        assert!(roots.parent(&root.join("x/y.txt"), false).is_err());
        assert!(!root.join("x").exists());
        let p = roots.parent(&root.join("e/f/g.txt"), true).unwrap();
        p.write_whole("made").unwrap();
        assert_eq!(std::fs::read_to_string(root.join("e/f/g.txt")).unwrap(), "made");
        assert!(roots.read_text(Path::new("relative"), 10).is_err());
    }
}
