//! Placeholders: a protected path that does not exist yet (`.mcp.json`, `.claude`, `.git` in
//! a directory that is no repository) is kept from being created by creating it, empty, for the
//! command's lifetime, so the mount namespace can bind it read-only like an existing one. The
//! rest of the root stays writable: `cargo test` makes `target/`, `touch NEWFILE` works.
//!
//! A placeholder is an empty file (nothing can be created at it, nor under it: its path is not a
//! directory), but `.git`, which is an empty directory: git reads a `.git` file as a pointer to
//! a repository and fails on an empty one, while it passes an empty `.git` directory by. A file
//! is also the cheaper of the two to make and remove (no directory block to allocate and
//! discard).
//!
//! Runs of the sandbox share placeholders. An unlinked mountpoint detaches in every namespace
//! that bound it, so a run never removes a placeholder another run still relies on: each run
//! holds a shared lock on the placeholder's lock file (under sixfold's state directory, outside
//! every root, so read-only inside) while its command runs, and the last one out removes it if
//! it is still the same entry it made (empty, or holding the text the environment gives it).
//! Setting up and taking down are serialised by one exclusive lock. A run that dies leaves its
//! placeholder behind; the next run that needs it recognises it (the lock file keeps its device
//! and inode) and removes it when done. A lock file stays once made (cleared when its
//! placeholder goes), so the next run of the same workspace overwrites it in place instead of
//! creating and removing a file; past [`MAX_LOCKS`] the unused ones go.
//!
//! A placeholder file keeps its inode from run to run: a second name for it, its spare, stays
//! beside its lock file, and the next run links the spare in instead of creating a file, once
//! it has looked at it (a regular file with no other name, holding exactly what the placeholder
//! holds). Taking the placeholder down then only removes a name. Making and freeing an inode is
//! most of a placeholder's cost, and on a filesystem without a journal ext4 skips every inode
//! freed in the last minutes when it allocates one, so each run made the next one slower.
//! A placeholder that someone wrote to while it stood is theirs: it stays, and its spare goes.

use crate::error::SandboxError;
use nix::fcntl::{Flock, FlockArg};
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The placeholders one run holds; dropping it lets go of them (and removes those no other run
/// holds).
#[derive(Debug)]
pub(crate) struct Placeholders {
    dir: PathBuf,
    held: Vec<Held>,
}

#[derive(Debug)]
struct Held {
    path: PathBuf,
    /// Set for a file that holds text (or nothing) where a directory would be made.
    text: Option<String>,
    /// Its device and inode when it was made (or found).
    identity: (u64, u64),
    /// Shared while the command runs; made exclusive to take the placeholder down.
    lock: Flock<File>,
}

/// What a lock file records: the placeholder's device and inode, always this wide, so it is
/// overwritten in place (a write is cheaper than truncating the file).
fn record(dev: u64, ino: u64) -> String {
    format!("{dev:020} {ino:020}\n")
}

/// What a lock file holds once its placeholder is gone.
const CLEARED: &[u8; 42] = &[b' '; 42];

fn host(what: &'static str) -> impl Fn(std::io::Error) -> SandboxError {
    move |source| SandboxError::Host { what, source }
}

fn lock_error(what: &'static str) -> impl Fn((File, nix::Error)) -> SandboxError {
    move |(_, e)| SandboxError::Host {
        what,
        source: std::io::Error::from(e),
    }
}

/// A stable name for a placeholder's lock file (FNV-1a of its path: the same in every sixfold
/// version, so runs of two versions still share it).
fn lock_name(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in path.as_os_str().as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}.lock")
}

/// A placeholder's spare, beside its lock file.
fn spare_of(lock_file: &Path) -> PathBuf {
    lock_file.with_extension("spare")
}

/// Links the spare in at `path` and keeps it there when it is a regular file with no other
/// name holding exactly `body`: the entry made, or `AlreadyExists` when something stands at
/// `path` (or was swapped in); `None` makes one afresh (no spare, one that does not hold, which
/// goes, or another filesystem).
fn link_spare(spare: &Path, path: &Path, body: &str) -> Option<std::io::Result<std::fs::Metadata>> {
    // `link(2)` names the spare itself, never what a link standing there points to, and never
    // replaces what stands at `path`.
    match std::fs::hard_link(spare, path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Some(Err(e)),
        Err(_) => return None,
    }
    let (Ok(linked), Ok(kept)) = (std::fs::symlink_metadata(path), std::fs::symlink_metadata(spare)) else {
        return Some(Err(std::io::ErrorKind::AlreadyExists.into()));
    };
    if (linked.dev(), linked.ino()) != (kept.dev(), kept.ino()) {
        // Not the spare linked (one of the two was swapped meanwhile): taken as what stands.
        return Some(Err(std::io::ErrorKind::AlreadyExists.into()));
    }
    let holds = linked.is_file()
        && linked.nlink() == 2
        && linked.len() == body.len() as u64
        && (body.is_empty() || std::fs::read(path).is_ok_and(|held| held == body.as_bytes()));
    if holds {
        return Some(Ok(linked));
    }
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_file(spare);
    None
}

/// A placeholder file made afresh, holding `body`; it becomes its spare too.
fn make_file(path: &Path, body: &str, spare: &Path) -> std::io::Result<std::fs::Metadata> {
    let meta = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path)
        .and_then(|mut file| {
            std::io::Write::write_all(&mut file, body.as_bytes())?;
            file.metadata()
        })?;
    let _ = std::fs::hard_link(path, spare);
    Ok(meta)
}

/// Whether a missing protected name becomes an empty directory (`.git`, see above) rather than
/// an empty file.
fn is_dir_name(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == ".git")
}

fn open_lock(path: &Path) -> Result<File, SandboxError> {
    open_lock_as(path, true)
}

fn open_lock_as(path: &Path, create: bool) -> Result<File, SandboxError> {
    crate::lock_file::open(path, create).map_err(host("open a placeholder lock"))
}

impl Placeholders {
    /// The directory the locks live in.
    fn lock_dir() -> Result<PathBuf, SandboxError> {
        let Some(state) = sixfold_core::user_dirs::state_dir() else {
            // INVARIANT (fail closed): without a place to share locks a placeholder could be
            // removed under another run, so the environment is refused.
            return Err(SandboxError::Unsupported {
                what: "placeholders for missing protected paths need sixfold's state directory for their locks; set \
                       `$HOME` or `$XDG_STATE_HOME`"
                    .to_string(),
            });
        };
        Ok(state.join("placeholders"))
    }

    /// Makes a placeholder for each missing path (those that still do not exist) and holds it;
    /// a file holds its text from `texts`, else nothing.
    pub(crate) fn make(missing: &[PathBuf], texts: &[(PathBuf, String)]) -> Result<Placeholders, SandboxError> {
        if missing.is_empty() {
            return Ok(Placeholders {
                dir: PathBuf::new(),
                held: Vec::new(),
            });
        }
        Self::make_in(Self::lock_dir()?, missing, texts)
    }

    /// [`Placeholders::make`], with the locks in `dir`.
    fn make_in(dir: PathBuf, missing: &[PathBuf], texts: &[(PathBuf, String)]) -> Result<Placeholders, SandboxError> {
        std::fs::create_dir_all(&dir).map_err(host("create the placeholder lock directory"))?;
        let _all = Flock::lock(open_lock(&dir.join("all.lock"))?, FlockArg::LockExclusive)
            .map_err(lock_error("lock the placeholders"))?;
        let mut held = Vec::new();
        let mut made_lock = false;
        for path in missing {
            let text = texts.iter().find(|(p, _)| p == path).map(|(_, t)| t.clone());
            let lock_file = dir.join(lock_name(path));
            // No exclusive lock on a placeholder is taken without `all.lock`, which this run
            // holds: this never waits.
            let shared =
                Flock::lock(open_lock(&lock_file)?, FlockArg::LockShared).map_err(lock_error("lock a placeholder"))?;
            made_lock |= shared.metadata().is_ok_and(|m| m.len() == 0);
            // Made where nothing is; what stands there already is looked at instead.
            let made = if !is_dir_name(path) || text.is_some() {
                let (body, spare) = (text.as_deref().unwrap_or_default(), spare_of(&lock_file));
                link_spare(&spare, path, body).unwrap_or_else(|| make_file(path, body, &spare))
            } else {
                std::fs::create_dir(path).and_then(|()| std::fs::symlink_metadata(path))
            };
            let meta = match made {
                Ok(meta) => {
                    shared
                        .write_all_at(record(meta.dev(), meta.ino()).as_bytes(), 0)
                        .map_err(host("write a placeholder lock"))?;
                    meta
                }
                // It exists now (another run's placeholder, or one that appeared): it is bound
                // read-only as it is.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    std::fs::symlink_metadata(path).map_err(host("read a placeholder"))?
                }
                Err(e) => return Err(host("create a placeholder")(e)),
            };
            if meta.file_type().is_symlink() {
                // INVARIANT (fail closed): a link appeared where a protected path was missing;
                // binding it would land on what it points to.
                return Err(SandboxError::Invalid {
                    what: format!(
                        "protected path `{}` became a symbolic link, which cannot be kept in place",
                        path.display()
                    ),
                });
            }
            held.push(Held {
                path: path.clone(),
                text,
                identity: (meta.dev(), meta.ino()),
                lock: shared,
            });
        }
        if made_lock {
            evict(&dir);
        }
        Ok(Placeholders { dir, held })
    }

    /// The paths held, with their device and inode, to be bound read-only.
    pub(crate) fn held(&self) -> impl Iterator<Item = (&Path, (u64, u64))> {
        self.held.iter().map(|h| (h.path.as_path(), h.identity))
    }

    /// Whether `path` is a placeholder some run made (holding `text`) and none holds now (left
    /// behind).
    pub(crate) fn left_behind(path: &Path, text: Option<&str>) -> bool {
        let Ok(dir) = Self::lock_dir() else { return false };
        // A lock that is gone went with its placeholder (it is not made again here).
        let Ok(file) = open_lock_as(&dir.join(lock_name(path)), false) else {
            return false;
        };
        match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
            Ok(mut lock) => is_placeholder(path, text, &mut lock),
            Err(_) => false,
        }
    }
}

/// Whether `path` is still the entry whose device and inode the lock file records, holding
/// nothing but `text` (an empty directory, or a file with that text).
fn is_placeholder(path: &Path, text: Option<&str>, lock: &mut Flock<File>) -> bool {
    let text = text.unwrap_or_default();
    let mut recorded = String::new();
    if lock.read_to_string(&mut recorded).is_err() {
        return false;
    }
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return false;
    };
    let empty = if meta.is_dir() {
        std::fs::read_dir(path).is_ok_and(|mut entries| entries.next().is_none())
    } else {
        meta.is_file()
            && meta.len() == text.len() as u64
            && (text.is_empty() || std::fs::read(path).is_ok_and(|held| held == text.as_bytes()))
    };
    empty && recorded == record(meta.dev(), meta.ino())
}

/// The most lock files kept; past it, those that record no placeholder and no run holds go.
const MAX_LOCKS: usize = 1024;

/// Removes the lock files that record no placeholder (cleared, or never written) and that no run
/// holds, once there are more than [`MAX_LOCKS`]: each workspace leaves a few behind. Called with
/// `all.lock` held, so no run opens one meanwhile. A lock that records a placeholder a dead run
/// left behind stays: it is how the next run knows the placeholder is sixfold's.
fn evict(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let locks: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "lock") && p.file_name().is_some_and(|n| n != "all.lock"))
        .collect();
    if locks.len() <= MAX_LOCKS {
        return;
    }
    for lock_file in locks {
        let Ok(file) = open_lock_as(&lock_file, false) else {
            continue;
        };
        let Ok(mut alone) = Flock::lock(file, FlockArg::LockExclusiveNonblock) else {
            continue;
        };
        let mut recorded = Vec::new();
        if alone.read_to_end(&mut recorded).is_ok() && recorded.iter().all(|b| *b == b' ') {
            let _ = std::fs::remove_file(spare_of(&lock_file));
            let _ = std::fs::remove_file(&lock_file);
        }
    }
}

impl Drop for Placeholders {
    fn drop(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let Ok(all) = open_lock(&self.dir.join("all.lock")) else {
            return;
        };
        let Ok(_all) = Flock::lock(all, FlockArg::LockExclusive) else {
            return;
        };
        for held in self.held.drain(..) {
            let Held {
                path,
                text,
                mut lock,
                identity,
            } = held;
            // Another run still holding it keeps it: removing a mountpoint would detach it in
            // that run's namespace. (A conversion that fails lets go of this run's shared lock,
            // which is what dropping it does anyway; `all.lock` keeps any run from taking one
            // meanwhile.)
            if lock.relock(FlockArg::LockExclusiveNonblock).is_err() {
                continue;
            }
            if is_placeholder(&path, text.as_deref(), &mut lock) {
                let removed = if path.is_dir() {
                    std::fs::remove_dir(&path)
                } else {
                    std::fs::remove_file(&path)
                };
                if removed.is_ok() {
                    // The lock file stays, cleared, for the next run to overwrite.
                    let _ = lock.write_all_at(CLEARED, 0);
                }
            } else {
                // Written to while it stood: what it holds is someone's now, and so is the
                // spare that names the same file.
                let spare = spare_of(&self.dir.join(lock_name(&path)));
                if std::fs::symlink_metadata(&spare).is_ok_and(|m| (m.dev(), m.ino()) == identity) {
                    let _ = std::fs::remove_file(&spare);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_git_becomes_a_directory() {
        assert!(!is_dir_name(Path::new("/w/.mcp.json")));
        assert!(!is_dir_name(Path::new("/w/.claude")));
        assert!(!is_dir_name(Path::new("/w/.git/info")));
        assert!(is_dir_name(Path::new("/w/.git")));
        assert!(is_dir_name(Path::new("/w/sub/.git")));
    }

    #[test]
    fn past_the_bound_only_locks_that_record_nothing_and_nobody_holds_go() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..MAX_LOCKS {
            std::fs::write(dir.path().join(format!("{i:016x}.lock")), CLEARED).unwrap();
        }
        let recorded = dir.path().join("recorded.lock");
        std::fs::write(&recorded, record(1, 2)).unwrap();
        let held = dir.path().join("held.lock");
        std::fs::write(&held, "").unwrap();
        let _shared = Flock::lock(open_lock(&held).unwrap(), FlockArg::LockShared).unwrap();
        std::fs::write(dir.path().join("all.lock"), "").unwrap();
        evict(dir.path());
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, vec!["all.lock", "held.lock", "recorded.lock"]);
        // Under the bound nothing goes.
        std::fs::write(dir.path().join("cleared.lock"), CLEARED).unwrap();
        evict(dir.path());
        assert!(dir.path().join("cleared.lock").exists());
    }

    /// What is held is what stands at each path once made, or found there: the device and inode
    /// the mount must land on, without looking again. A link standing there is refused.
    #[test]
    fn each_placeholder_is_held_with_the_entry_made_or_found() {
        let t = tempfile::tempdir().unwrap();
        let (locks, w) = (t.path().join("locks"), t.path().join("w"));
        std::fs::create_dir_all(&w).unwrap();
        std::fs::write(w.join(".claude"), "mine").unwrap();
        let missing = [
            w.join(".mcp.json"),
            w.join(".git"),
            w.join("commondir"),
            w.join(".claude"),
        ];
        let texts = [(w.join("commondir"), ".\n".to_string())];
        let held = Placeholders::make_in(locks.clone(), &missing, &texts).unwrap();
        let found: Vec<(PathBuf, (u64, u64))> = held.held().map(|(p, id)| (p.to_path_buf(), id)).collect();
        assert_eq!(found.len(), missing.len());
        for (path, identity) in &found {
            let meta = std::fs::symlink_metadata(path).unwrap();
            assert_eq!(*identity, (meta.dev(), meta.ino()), "{}", path.display());
        }
        assert!(w.join(".git").is_dir());
        assert_eq!(std::fs::read_to_string(w.join("commondir")).unwrap(), ".\n");
        drop(held);
        // The last one out removes what it made, and leaves what it found.
        assert!(!w.join(".mcp.json").exists() && !w.join(".git").exists() && !w.join("commondir").exists());
        assert_eq!(std::fs::read_to_string(w.join(".claude")).unwrap(), "mine");
        std::os::unix::fs::symlink("/etc", w.join(".codex")).unwrap();
        let linked = Placeholders::make_in(locks, &[w.join(".codex")], &[]);
        assert!(matches!(linked, Err(SandboxError::Invalid { .. })), "{linked:?}");
    }

    fn identity_of(path: &Path) -> (u64, u64) {
        let meta = std::fs::symlink_metadata(path).unwrap();
        (meta.dev(), meta.ino())
    }

    /// A placeholder file keeps its inode from run to run through its spare; a spare that does
    /// not hold what the placeholder holds (written to, linked elsewhere, a link) is never
    /// linked in, and one written to through the placeholder stays with its writer.
    #[test]
    fn a_spare_is_linked_in_only_while_it_holds() {
        let t = tempfile::tempdir().unwrap();
        let (locks, w) = (t.path().join("locks"), t.path().join("w"));
        std::fs::create_dir_all(&w).unwrap();
        let (mcp, commondir) = (w.join(".mcp.json"), w.join("commondir"));
        let texts = [(commondir.clone(), ".\n".to_string())];
        let run = |missing: &[PathBuf]| Placeholders::make_in(locks.clone(), missing, &texts).unwrap();
        let spare = |path: &Path| spare_of(&locks.join(lock_name(path)));

        let first = run(&[mcp.clone(), commondir.clone()]);
        let made = (identity_of(&mcp), identity_of(&commondir));
        drop(first);
        assert!(!mcp.exists() && !commondir.exists(), "taken down");
        assert_eq!((identity_of(&spare(&mcp)), identity_of(&spare(&commondir))), made);
        let second = run(&[mcp.clone(), commondir.clone()]);
        assert_eq!(
            (identity_of(&mcp), identity_of(&commondir)),
            made,
            "the same files again"
        );
        assert_eq!(std::fs::read_to_string(&commondir).unwrap(), ".\n");
        drop(second);

        // Written to through its spare, linked elsewhere, or a link: made afresh instead.
        std::fs::write(spare(&mcp), "{\"mcpServers\": {}}").unwrap();
        let third = run(std::slice::from_ref(&mcp));
        assert_eq!(std::fs::read(&mcp).unwrap(), b"");
        drop(third);
        std::fs::hard_link(spare(&mcp), w.join("elsewhere")).unwrap();
        let fourth = run(std::slice::from_ref(&mcp));
        assert_ne!(identity_of(&mcp), identity_of(&w.join("elsewhere")));
        drop(fourth);
        std::fs::remove_file(spare(&mcp)).unwrap();
        std::os::unix::fs::symlink(w.join("elsewhere"), spare(&mcp)).unwrap();
        let fifth = run(std::slice::from_ref(&mcp));
        assert!(std::fs::symlink_metadata(&mcp).unwrap().is_file());
        assert_eq!(std::fs::read(&mcp).unwrap(), b"");

        // Written to while it stood: it stays, and so does what was written; its spare goes.
        std::fs::write(&mcp, "mine").unwrap();
        drop(fifth);
        assert_eq!(std::fs::read_to_string(&mcp).unwrap(), "mine");
        assert!(std::fs::symlink_metadata(spare(&mcp)).is_err());
    }

    #[test]
    fn a_record_and_its_clearing_are_as_wide() {
        assert_eq!(record(u64::MAX, u64::MAX).len(), CLEARED.len());
        assert_eq!(record(1, 2).len(), CLEARED.len());
    }

    #[test]
    fn the_lock_name_is_stable() {
        assert_eq!(
            lock_name(Path::new("/w/.mcp.json")),
            lock_name(Path::new("/w/.mcp.json"))
        );
        assert_ne!(lock_name(Path::new("/w/.mcp.json")), lock_name(Path::new("/w/.claude")));
    }
}
