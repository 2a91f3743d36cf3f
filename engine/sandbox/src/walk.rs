//! Walking a directory tree for a few names (the secrets and protected paths written `**/…`,
//! `.git`) or for sockets, with a cache that makes a walk of an unchanged tree one `lstat` per
//! directory instead of reading every directory.
//!
//! A directory's change time moves whenever an entry is added to it, removed from it or renamed
//! in or out of it (and on any change to the directory itself), and no one but the kernel sets
//! it. So a directory whose device, inode, change and modification times are what the cache
//! recorded holds the entries the cache recorded, and is not read again; any other directory is
//! read. Only what was recorded in time is trusted ("racy git"): a directory that changed less
//! than [`RACY`] before it was read could change again within the same timestamp tick, so it is
//! read again next time, and so is every directory on a filesystem whose clock is not this
//! kernel's (only local filesystems are trusted).
//!
//! The cache is an optimisation, never a source of truth: it lives under sixfold's cache
//! directory (outside every writable root, checked by the caller), is read only as a regular file
//! this user owns and no one else may write, bounded, without following a link, and a cache that
//! cannot be read or does not match the walk exactly is a walk without one.

use crate::layout::MAX_WALK_ENTRIES;
use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A directory changed less than this before it was read is read again next time: more than the
/// coarsest timestamp of the filesystems trusted here (ext4 with small inodes: 1 s) and the
/// kernel's clock tick.
const RACY: Duration = Duration::from_secs(2);

/// A cache file larger than this is not one sixfold wrote.
const MAX_CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// The most tree caches kept; past it the least recently written go.
const MAX_CACHES: usize = 64;

/// A cache is rewritten when a walk read at least this many directories it could have taken
/// from it, or found this many times as many gone: reading a few directories again costs less
/// than writing the file (a busy temp dir changes at every run).
const WORTH_WRITING: usize = 16;

/// The first line of a cache file: its format.
const MAGIC: &[u8] = b"sixfold tree cache 1\n";

/// What kind of entry a name is (never following a link).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A directory.
    Dir,
    /// A symbolic link.
    Link,
    /// A Unix socket.
    Socket,
    /// A regular file, a device, a FIFO.
    Other,
}

impl Kind {
    fn byte(self) -> u8 {
        match self {
            Kind::Dir => b'd',
            Kind::Link => b'l',
            Kind::Socket => b's',
            Kind::Other => b'f',
        }
    }

    fn from_byte(byte: u8) -> Option<Kind> {
        Some(match byte {
            b'd' => Kind::Dir,
            b'l' => Kind::Link,
            b's' => Kind::Socket,
            b'f' => Kind::Other,
            _ => return None,
        })
    }

    fn from_mode(mode: u32) -> Kind {
        match mode & 0o170_000 {
            0o040_000 => Kind::Dir,
            0o120_000 => Kind::Link,
            0o140_000 => Kind::Socket,
            _ => Kind::Other,
        }
    }
}

/// What a walk looks for.
#[derive(Debug)]
pub(crate) struct Spec {
    /// The names looked for at any depth, as written (`.env*`, `.git`), sorted.
    names: Vec<String>,
    matchers: Vec<crate::layout::Name>,
    /// Whether every socket is looked for too.
    sockets: bool,
    /// Directories this deep or deeper are not read (the root is depth 0).
    depth: usize,
}

impl Spec {
    /// A walk for `names` (globs of one component) at any depth, and for sockets when `sockets`,
    /// reading directories down to `depth` (exclusive).
    pub(crate) fn new(names: Vec<String>, sockets: bool, depth: usize) -> Result<Spec, crate::SandboxError> {
        let mut names = names;
        names.sort();
        names.dedup();
        let matchers = names
            .iter()
            .map(|n| crate::layout::matcher(n, n))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Spec {
            names,
            matchers,
            sockets,
            depth,
        })
    }

    fn wants(&self, name: &OsStr, kind: Kind) -> bool {
        (self.sockets && kind == Kind::Socket) || self.matchers.iter().any(|m| m.is_match(name))
    }

    /// What a cache file for `root` must begin with after [`MAGIC`]: everything the walk's
    /// result depends on.
    fn key(&self, root: &Path) -> Vec<u8> {
        let mut key = b"root ".to_vec();
        key.extend_from_slice(root.as_os_str().as_bytes());
        key.extend_from_slice(format!("\ndepth {}\nsockets {}\nnames", self.depth, self.sockets).as_bytes());
        for name in &self.names {
            key.push(b' ');
            key.extend_from_slice(name.as_bytes());
        }
        key
    }
}

/// What identifies a directory's state: device, inode, mode, change and modification times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    ctime: (i64, i64),
    mtime: (i64, i64),
}

impl Stamp {
    fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            mode: meta.mode(),
            ctime: (meta.ctime(), meta.ctime_nsec()),
            mtime: (meta.mtime(), meta.mtime_nsec()),
        }
    }

    /// Whether the directory last changed at least [`RACY`] before `read_at`.
    fn settled(&self, read_at: SystemTime) -> bool {
        let Some(limit) = read_at.checked_sub(RACY) else {
            return false;
        };
        let Ok(limit) = limit.duration_since(UNIX_EPOCH) else {
            return false;
        };
        let before = |(secs, nanos): (i64, i64)| {
            let (Ok(secs), Ok(nanos)) = (u64::try_from(secs), u32::try_from(nanos)) else {
                return false;
            };
            Duration::new(secs, nanos) < limit
        };
        before(self.ctime) && before(self.mtime)
    }
}

/// One directory as read: its stamp, how many entries it has, and the entries that matter (its
/// subdirectories and the entries the walk looks for).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    stamp: Stamp,
    /// Whether the next walk may take this record without reading the directory.
    trusted: bool,
    entries: u64,
    kept: Vec<(OsString, Kind)>,
}

/// A tree as walked: the entries found, and every directory's record for the next walk.
#[derive(Debug, Default)]
pub(crate) struct Tree {
    /// The entries looked for, sorted, as absolute paths with their kinds.
    pub(crate) found: Vec<(PathBuf, Kind)>,
    /// Whether every entry was seen (not more than [`MAX_WALK_ENTRIES`]).
    pub(crate) complete: bool,
    /// The records by path relative to the root (`""` for the root).
    records: HashMap<OsString, Record>,
    /// How many trusted records this walk (and the walks it continued) read that its cache
    /// lacks, and how many of the cache's directories are gone.
    fresh: usize,
    gone: usize,
    /// Whether there was no cache to start from.
    uncached: bool,
}

impl Tree {
    /// Walks `root` for `spec`, taking what `previous` (an earlier walk of the same root for the
    /// same spec) recorded for the directories that did not change since.
    pub(crate) fn walk(root: &Path, spec: &Spec, previous: Tree) -> Tree {
        let mut previous = previous;
        let read_at = SystemTime::now();
        let mut tree = Tree {
            complete: true,
            // What an earlier walk in this run recorded and did not keep yet is still to keep.
            fresh: previous.fresh,
            gone: previous.gone,
            uncached: previous.uncached,
            ..Tree::default()
        };
        let mut seen: u64 = 0;
        let mut local: HashMap<u64, bool> = HashMap::new();
        let mut pending: Vec<(OsString, usize)> = vec![(OsString::new(), 0)];
        while let Some((relative, depth)) = pending.pop() {
            let path = root.join(&relative);
            let old = previous.records.remove(&relative);
            let record = match (old, std::fs::symlink_metadata(&path)) {
                (Some(old), Ok(meta)) if old.trusted && old.stamp == Stamp::of(&meta) => old,
                (old, Ok(meta)) if meta.is_dir() => {
                    let Some(mut record) = read(&path, spec) else { continue };
                    let on_local = *local.entry(record.stamp.dev).or_insert_with(|| is_local(&path));
                    record.trusted = record.trusted && on_local && record.stamp.settled(read_at);
                    if record.trusted && old.as_ref() != Some(&record) {
                        tree.fresh += 1;
                    }
                    record
                }
                _ => continue,
            };
            seen += record.entries;
            if seen > MAX_WALK_ENTRIES as u64 {
                // INVARIANT (fail closed): past the bound the walk says so; nothing it found
                // is taken as all there is.
                tree.complete = false;
                return tree;
            }
            for (name, kind) in &record.kept {
                let below = Path::new(&relative).join(name);
                if spec.wants(name, *kind) {
                    tree.found.push((root.join(&below), *kind));
                }
                if *kind == Kind::Dir && depth + 1 < spec.depth {
                    pending.push((below.into_os_string(), depth + 1));
                }
            }
            tree.records.insert(relative, record);
        }
        // What is left of the previous walk is gone from the disk.
        tree.gone += previous.records.len();
        tree.found.sort_by(|a, b| a.0.cmp(&b.0));
        tree
    }

    /// The tree the cache file `file` holds for `root` and `spec`, or an empty one (every
    /// directory is then read).
    pub(crate) fn cached(file: Option<&Path>, root: &Path, spec: &Spec) -> Tree {
        file.and_then(|f| load(f, &spec.key(root))).unwrap_or(Tree {
            uncached: true,
            ..Tree::default()
        })
    }

    /// Keeps this walk for the next one in `file`, when it recorded something the cache lacks.
    /// A cache that cannot be written is no error: the next walk reads more.
    pub(crate) fn store(&self, file: Option<&Path>, root: &Path, spec: &Spec) {
        let worth = if self.uncached {
            self.fresh > 0
        } else {
            self.fresh >= WORTH_WRITING || self.gone >= WORTH_WRITING * WORTH_WRITING
        };
        if let (Some(file), true) = (file, worth && self.complete) {
            save(file, &spec.key(root), &self.records);
        }
    }
}

/// Reads one directory (not following a link): its stamp taken on the open directory before its
/// entries are read, so a change while it is read shows as a different stamp next time.
fn read(path: &Path, spec: &Spec) -> Option<Record> {
    let (stamp, entries, whole) = read_entries(path)?;
    let mut kept = Vec::new();
    let count = entries.len() as u64;
    for (name, kind) in entries {
        if kind == Kind::Dir || spec.wants(&name, kind) {
            kept.push((name, kind));
        }
    }
    Some(Record {
        stamp,
        trusted: whole,
        entries: count,
        kept,
    })
}

type Entries = (Stamp, Vec<(OsString, Kind)>, bool);

#[cfg(target_os = "linux")]
fn read_entries(path: &Path) -> Option<Entries> {
    use nix::fcntl::OFlag;
    use nix::sys::stat::Mode;
    let fd = nix::fcntl::open(
        path,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let stat = nix::sys::stat::fstat(&fd).ok()?;
    let stamp = Stamp {
        dev: stat.st_dev,
        ino: stat.st_ino,
        mode: stat.st_mode,
        ctime: (stat.st_ctime, stat.st_ctime_nsec),
        mtime: (stat.st_mtime, stat.st_mtime_nsec),
    };
    let dir = nix::dir::Dir::from_fd(fd).ok()?;
    let mut entries = Vec::new();
    let mut whole = true;
    // Owned, so the directory is closed as it is, without the borrowing iterator's rewind.
    for entry in dir {
        let Ok(entry) = entry else {
            // A directory not read to its end is used as far as it was read, and read again.
            whole = false;
            break;
        };
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        use nix::dir::Type;
        let kind = match entry.file_type() {
            Some(Type::Directory) => Kind::Dir,
            Some(Type::Symlink) => Kind::Link,
            Some(Type::Socket) => Kind::Socket,
            Some(_) => Kind::Other,
            None => {
                use std::os::unix::fs::MetadataExt;
                match std::fs::symlink_metadata(path.join(name)) {
                    Ok(meta) => Kind::from_mode(meta.mode()),
                    Err(_) => continue,
                }
            }
        };
        entries.push((name.to_os_string(), kind));
    }
    Some((stamp, entries, whole))
}

#[cfg(not(target_os = "linux"))]
fn read_entries(path: &Path) -> Option<Entries> {
    use std::os::unix::fs::MetadataExt;
    // Without an open directory's own stamp nothing read here is trusted next time.
    let stamp = Stamp::of(&std::fs::symlink_metadata(path).ok()?);
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(path).ok()?.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        entries.push((entry.file_name(), Kind::from_mode(meta.mode())));
    }
    Some((stamp, entries, false))
}

/// Whether the filesystem `path` is on takes its timestamps from this kernel's clock, at a
/// granularity finer than [`RACY`]: only then is a directory's stamp trusted.
#[cfg(target_os = "linux")]
fn is_local(path: &Path) -> bool {
    use nix::sys::statfs as fs;
    let Ok(found) = fs::statfs(path) else { return false };
    let kind = found.filesystem_type();
    [
        fs::EXT4_SUPER_MAGIC,
        fs::XFS_SUPER_MAGIC,
        fs::BTRFS_SUPER_MAGIC,
        fs::TMPFS_MAGIC,
        fs::F2FS_SUPER_MAGIC,
        fs::OVERLAYFS_SUPER_MAGIC,
    ]
    .contains(&kind)
}

#[cfg(not(target_os = "linux"))]
fn is_local(_: &Path) -> bool {
    false
}

/// Where the tree caches live, when sixfold has a cache directory.
pub(crate) fn cache_dir() -> Option<PathBuf> {
    let dir = sixfold_core::user_dirs::cache_dir()?.join("trees");
    sixfold_core::scope::resolve_path(Path::new("/"), &dir).or(Some(dir))
}

/// The cache file of a walk of `root` for `spec`, in `dir`.
pub(crate) fn cache_file(dir: &Path, root: &Path, spec: &Spec) -> PathBuf {
    dir.join(format!(
        "{}.tree",
        crate::layout::fnv(std::iter::once(OsStr::from_bytes(&spec.key(root))))
    ))
}

/// Whether a file or directory is this user's own and no one else may write it (and a file has
/// no other name a command could have written it through).
#[cfg(target_os = "linux")]
fn owned(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    meta.uid() == nix::unistd::getuid().as_raw() && meta.mode() & 0o022 == 0 && (meta.is_dir() || meta.nlink() == 1)
}

#[cfg(not(target_os = "linux"))]
fn owned(_: &std::fs::Metadata) -> bool {
    false
}

/// Reads a cache file: `None` unless it is a regular file this user owns, bounded, whose key is
/// exactly `key` and whose every record reads.
fn load(file: &Path, key: &[u8]) -> Option<Tree> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let dir = file.parent()?;
    if !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && owned(&m)) {
        return None;
    }
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix_flags::NOFOLLOW_NONBLOCK)
        .open(file)
        .ok()?;
    let meta = opened.metadata().ok()?;
    if !meta.is_file() || !owned(&meta) || meta.len() > MAX_CACHE_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    opened.take(MAX_CACHE_BYTES).read_to_end(&mut bytes).ok()?;
    let rest = bytes.strip_prefix(MAGIC)?;
    let mut fields = rest.split(|b| *b == 0);
    if fields.next()? != key {
        return None;
    }
    let mut records = HashMap::new();
    let number = |field: Option<&[u8]>| -> Option<i64> { std::str::from_utf8(field?).ok()?.parse().ok() };
    let mut ended = false;
    while let Some(relative) = fields.next() {
        if relative == b"." {
            // INVARIANT (fail closed): a cache cut short at a record's end is not whole.
            ended = fields.next().is_none();
            break;
        }
        let relative = OsString::from_vec(if relative == b"/" {
            Vec::new()
        } else {
            relative.to_vec()
        });
        let mut next = || number(fields.next());
        let stamp = Stamp {
            dev: u64::try_from(next()?).ok()?,
            ino: u64::try_from(next()?).ok()?,
            mode: u32::try_from(next()?).ok()?,
            ctime: (next()?, next()?),
            mtime: (next()?, next()?),
        };
        let entries = u64::try_from(next()?).ok()?;
        let count = usize::try_from(next()?).ok()?;
        let mut kept = Vec::new();
        for _ in 0..count {
            let field = fields.next()?;
            let (kind, name) = field.split_first()?;
            // A name is one entry of its directory, never a way out of it.
            if name.is_empty() || name.contains(&b'/') || name == b"." || name == b".." {
                return None;
            }
            kept.push((OsString::from_vec(name.to_vec()), Kind::from_byte(*kind)?));
        }
        records.insert(
            relative,
            Record {
                stamp,
                trusted: true,
                entries,
                kept,
            },
        );
    }
    ended.then(|| Tree {
        records,
        ..Tree::default()
    })
}

mod nix_flags {
    /// Open a cache file without following a link or waiting on a FIFO.
    #[cfg(target_os = "linux")]
    pub(super) const NOFOLLOW_NONBLOCK: i32 = nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC;
    #[cfg(not(target_os = "linux"))]
    pub(super) const NOFOLLOW_NONBLOCK: i32 = 0;
}

/// Writes the trusted records to a cache file (through a new file renamed into place), then
/// evicts the oldest caches past [`MAX_CACHES`].
fn save(file: &Path, key: &[u8], records: &HashMap<OsString, Record>) {
    use std::io::Write;
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let Some(dir) = file.parent() else { return };
    if std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .is_err()
        || !std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && owned(&m))
    {
        return;
    }
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(key);
    out.push(0);
    for (relative, record) in records.iter().filter(|(_, r)| r.trusted) {
        let relative = relative.as_bytes();
        out.extend_from_slice(if relative.is_empty() { b"/" } else { relative });
        out.push(0);
        let s = &record.stamp;
        for number in [
            i128::from(s.dev),
            i128::from(s.ino),
            i128::from(s.mode),
            i128::from(s.ctime.0),
            i128::from(s.ctime.1),
            i128::from(s.mtime.0),
            i128::from(s.mtime.1),
            i128::from(record.entries),
            record.kept.len() as i128,
        ] {
            out.extend_from_slice(number.to_string().as_bytes());
            out.push(0);
        }
        for (name, kind) in &record.kept {
            out.push(kind.byte());
            out.extend_from_slice(name.as_bytes());
            out.push(0);
        }
    }
    out.extend_from_slice(b".");
    let partial = dir.join(format!(".{}.partial", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(nix_flags::NOFOLLOW_NONBLOCK)
        .open(&partial)
        .and_then(|mut f| f.write_all(&out));
    let existed = file.exists();
    if written.is_err() || std::fs::rename(&partial, file).is_err() {
        let _ = std::fs::remove_file(&partial);
        return;
    }
    if !existed {
        evict(dir);
    }
}

/// Keeps the [`MAX_CACHES`] most recently written caches (and removes the partial files of a
/// writer that died).
fn evict(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut caches = Vec::new();
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        let written = meta.modified().unwrap_or(UNIX_EPOCH);
        let name = entry.file_name();
        if name.as_bytes().ends_with(b".partial") {
            if written.elapsed().is_ok_and(|age| age > Duration::from_secs(60)) {
                let _ = std::fs::remove_file(entry.path());
            }
        } else if name.as_bytes().ends_with(b".tree") {
            caches.push((written, entry.path()));
        }
    }
    if caches.len() > MAX_CACHES {
        caches.sort_by_key(|c| std::cmp::Reverse(c.0));
        for (_, path) in caches.into_iter().skip(MAX_CACHES) {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec::new(vec![".env*".into(), ".git".into()], true, usize::MAX).unwrap()
    }

    fn names(tree: &Tree, root: &Path) -> Vec<String> {
        tree.found
            .iter()
            .map(|(p, _)| p.strip_prefix(root).unwrap().display().to_string())
            .collect()
    }

    fn clone(tree: &Tree) -> Tree {
        Tree {
            records: tree.records.clone(),
            ..Tree::default()
        }
    }

    /// Walks `root` with the cache `file`, keeps the walk, and walks again.
    fn walk_twice(root: &Path, file: &Path) -> (Tree, Tree) {
        let spec = spec();
        let first = Tree::walk(root, &spec, Tree::cached(Some(file), root, &spec));
        first.store(Some(file), root, &spec);
        let second = Tree::walk(root, &spec, Tree::cached(Some(file), root, &spec));
        (first, second)
    }

    #[test]
    fn a_walk_finds_the_names_at_any_depth_with_or_without_a_cache() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("w");
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::create_dir_all(root.join("sub/.git")).unwrap();
        std::fs::write(root.join("a/b/c/.env.local"), "").unwrap();
        std::fs::write(root.join("a/b/c/plain"), "").unwrap();
        let file = dir.path().join("cache/x.tree");
        let (first, second) = walk_twice(&root, &file);
        assert_eq!(names(&first, &root), vec!["a/b/c/.env.local", "sub/.git"]);
        assert_eq!(names(&second, &root), names(&first, &root));
        assert!(first.complete && second.complete);
        // Made just now: nothing is trusted yet, so nothing is cached.
        assert!(!file.exists());
    }

    #[test]
    fn a_cache_that_does_not_match_or_is_not_a_plain_file_is_not_taken() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("w");
        std::fs::create_dir_all(&root).unwrap();
        let spec = spec();
        let file = dir.path().join("x.tree");
        let mut records = HashMap::new();
        records.insert(
            OsString::new(),
            Record {
                stamp: Stamp::of(&std::fs::symlink_metadata(&root).unwrap()),
                trusted: true,
                entries: 0,
                kept: Vec::new(),
            },
        );
        save(&file, &spec.key(&root), &records);
        assert_eq!(load(&file, &spec.key(&root)).unwrap().records.len(), 1);
        assert!(load(&file, &spec.key(&dir.path().join("other"))).is_none());
        // Truncated, even at a record's end: not a cache.
        let bytes = std::fs::read(&file).unwrap();
        for cut in [1, 4] {
            std::fs::write(&file, &bytes[..bytes.len() - cut]).unwrap();
            assert!(load(&file, &spec.key(&root)).is_none());
        }
        // A link to a good cache is not followed.
        std::fs::write(dir.path().join("good.tree"), &bytes).unwrap();
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(dir.path().join("good.tree"), &file).unwrap();
        assert!(load(&file, &spec.key(&root)).is_none());
        assert!(load(&dir.path().join("good.tree"), &spec.key(&root)).is_some());
        // A second name for it (a hard link a command could write through): not taken.
        std::fs::hard_link(dir.path().join("good.tree"), dir.path().join("linked.tree")).unwrap();
        assert!(load(&dir.path().join("good.tree"), &spec.key(&root)).is_none());
        std::fs::remove_file(dir.path().join("linked.tree")).unwrap();
        assert!(load(&dir.path().join("good.tree"), &spec.key(&root)).is_some());
        // Writable by others: not taken.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path().join("good.tree"), std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(load(&dir.path().join("good.tree"), &spec.key(&root)).is_none());
    }

    #[test]
    fn a_directory_that_changed_within_the_racy_window_is_not_trusted() {
        let now = SystemTime::now();
        let at = |t: SystemTime| {
            let since = t.duration_since(UNIX_EPOCH).unwrap();
            (since.as_secs() as i64, i64::from(since.subsec_nanos()))
        };
        let stamp = |ctime, mtime| Stamp {
            dev: 1,
            ino: 1,
            mode: 0o040_755,
            ctime,
            mtime,
        };
        let old = at(now - Duration::from_secs(3));
        let recent = at(now - Duration::from_millis(1_500));
        assert!(stamp(old, old).settled(now));
        assert!(!stamp(recent, old).settled(now));
        assert!(!stamp(old, recent).settled(now));
        // A time still to come (a `touch -d`, a clock set back) is never trusted.
        assert!(!stamp(old, at(now + Duration::from_secs(60))).settled(now));
    }

    #[test]
    fn a_changed_directory_is_read_again_and_an_unchanged_one_is_taken_from_the_cache() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("w");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join("c")).unwrap();
        let spec = spec();
        let mut previous = Tree::walk(&root, &spec, Tree::default());
        // Pretend every directory was read long after it changed.
        for record in previous.records.values_mut() {
            record.trusted = true;
        }
        // An unchanged directory is taken as recorded: a name slipped into the record is
        // "found" although it is not on disk (so the record, not the disk, was used).
        previous
            .records
            .get_mut(OsStr::new("c"))
            .unwrap()
            .kept
            .push((".env.recorded".into(), Kind::Other));
        let again = Tree::walk(&root, &spec, clone(&previous));
        assert_eq!(names(&again, &root), vec!["c/.env.recorded"]);
        // A directory that changed is read: a secret made deep down is found, and the stale
        // record is not used. (A tick later, so an older kernel's coarse clock moves too.)
        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(root.join("a/b/.env"), "").unwrap();
        std::fs::write(root.join("c/other"), "").unwrap();
        let after = Tree::walk(&root, &spec, previous);
        assert_eq!(names(&after, &root), vec!["a/b/.env"]);
    }
}
