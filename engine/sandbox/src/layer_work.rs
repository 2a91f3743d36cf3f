//! A cache layer's directories: its upper directory as it was left (unless it is not a
//! directory any more), and a fresh, empty work directory for every mount.
//!
//! An overlay mount empties the work directory it is given (removing what it finds there) and,
//! mounted `volatile`, leaves a mark in it (`work/incompat/volatile/dirty`, the directories mode
//! 000) that makes the kernel refuse the next mount until it is removed. Each removal frees
//! inodes and directory blocks, which some filesystems pay for at once (a discard waited for).
//! So the run renames the previous work directory aside (`stale.<n>`) and makes a new one before
//! its sandbox is built, and removes what is stale in a thread of its own while the sandbox is
//! built and the command runs ([`Removal`]), off the path to the command and to its end.

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};

/// The prefix of a work directory set aside.
const STALE: &str = "stale.";

/// At most this many entries are removed from a layer per run; what is left goes in the next.
const REMOVED_PER_RUN: usize = 4096;

/// `<layer>/upper`, made when missing. The layer lies in a directory the command writes, so what
/// stands there may be a link a command planted (the mount would follow it, and fail, or layer
/// the cache over whatever it names): anything but a directory is set aside like a stale work
/// directory, and a new one made. `None` when that cannot be done: the cache stays read-only.
pub(crate) fn upper(layer: &Path) -> Option<PathBuf> {
    let upper = layer.join("upper");
    if std::fs::symlink_metadata(&upper).is_ok_and(|meta| meta.is_dir()) {
        return Some(upper);
    }
    set_aside(layer, &upper)?;
    std::fs::create_dir(&upper).ok()?;
    Some(upper)
}

/// Makes `<layer>/work` a new, empty directory, the previous one (if any) renamed aside; its
/// path. `None` when that cannot be done: the cache then stays read-only.
pub(crate) fn fresh(layer: &Path) -> Option<PathBuf> {
    let work = layer.join("work");
    set_aside(layer, &work)?;
    // Made here, so it is this run's and empty (the layer is this run's alone: see
    // `layout::take_layer`).
    std::fs::create_dir(&work).ok()?;
    Some(work)
}

/// Renames `entry` of `layer` aside, under a name nothing else set aside in this layer has
/// (the layer is locked, so only this process names one now), for [`remove_stale`]; `Some` too
/// when there is nothing there.
fn set_aside(layer: &Path, entry: &Path) -> Option<()> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    match std::fs::rename(entry, layer.join(format!("{STALE}{nanos}.{}", std::process::id()))) {
        Ok(()) => Some(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(()),
        Err(_) => None,
    }
}

/// The removal of the work directories set aside, in a thread beside the sandbox; waited for when
/// dropped.
pub(crate) struct Removal(Option<std::thread::JoinHandle<()>>);

impl Removal {
    /// Starts removing what is stale in `layers` (here and now, when no thread can be started).
    pub(crate) fn start(layers: Vec<PathBuf>) -> Removal {
        if layers.is_empty() {
            return Removal(None);
        }
        let theirs = layers.clone();
        let spawned = std::thread::Builder::new()
            .name("sixfold-stale-work".into())
            .spawn(move || theirs.iter().for_each(|layer| remove_stale(layer)));
        match spawned {
            Ok(handle) => Removal(Some(handle)),
            Err(_) => {
                layers.iter().for_each(|layer| remove_stale(layer));
                Removal(None)
            }
        }
    }
}

impl Drop for Removal {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            // A panic there (none is expected) only leaves stale directories for the next run.
            let _ = handle.join();
        }
    }
}

/// How deep a removal goes: a work directory set aside is four levels deep
/// (`stale.<n>/work/incompat/volatile/dirty`); what a command planted deeper is left, so the
/// open directories stay few.
const MAX_DEPTH: usize = 16;

/// Removes the work directories set aside in `layer`, marks and all. A command inside may write
/// in the layer while this runs (the removal overlaps the sandbox), so every step is made
/// relative to a directory already open, and nothing named is followed if it is a link: a link
/// planted anywhere is removed itself. Errors are left for the next run.
pub(crate) fn remove_stale(layer: &Path) {
    use nix::fcntl::OFlag;
    let Ok(mut dir) = nix::dir::Dir::open(
        layer,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY,
        nix::sys::stat::Mode::empty(),
    ) else {
        return;
    };
    let stale: Vec<CString> = names(&mut dir)
        .into_iter()
        .filter(|n| n.to_bytes().starts_with(STALE.as_bytes()))
        .collect();
    let mut budget = REMOVED_PER_RUN;
    for name in &stale {
        remove_at(&dir, name, &mut budget, 0);
    }
}

/// The names in `dir` but `.` and `..`.
fn names(dir: &mut nix::dir::Dir) -> Vec<CString> {
    dir.iter()
        .flatten()
        .map(|entry| entry.file_name().to_owned())
        .filter(|name| !matches!(name.to_bytes(), b"." | b".."))
        .collect()
}

/// Removes `name` in `parent` and everything under it, opening each directory the kernel made
/// mode 000.
fn remove_at(parent: &nix::dir::Dir, name: &CStr, budget: &mut usize, depth: usize) {
    use nix::errno::Errno;
    use nix::fcntl::OFlag;
    use nix::sys::stat::{fchmodat, FchmodatFlags, Mode};
    use nix::unistd::{unlinkat, UnlinkatFlags};
    let Some(left) = budget.checked_sub(1) else {
        return;
    };
    *budget = left;
    // A file, or a link (removed itself, never followed); a directory is refused.
    if unlinkat(parent, name, UnlinkatFlags::NoRemoveDir).is_ok() {
        return;
    }
    if depth < MAX_DEPTH {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW;
        let opened = match nix::dir::Dir::openat(parent, name, flags, Mode::empty()) {
            Err(Errno::EACCES) => {
                // Only this very entry: a link found here is refused, not followed.
                let _ = fchmodat(parent, name, Mode::S_IRWXU, FchmodatFlags::NoFollowSymlink);
                nix::dir::Dir::openat(parent, name, flags, Mode::empty())
            }
            other => other,
        };
        if let Ok(mut dir) = opened {
            for inner in names(&mut dir) {
                remove_at(&dir, &inner, budget, depth + 1);
            }
        }
    }
    let _ = unlinkat(parent, name, UnlinkatFlags::RemoveDir);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::{symlink, DirBuilderExt, PermissionsExt};

    #[test]
    fn each_mount_gets_an_empty_work_dir_and_the_stale_ones_go_marks_and_all() {
        let dir = tempfile::tempdir().unwrap();
        let layer = dir.path();
        let work = fresh(layer).unwrap();
        assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0);
        // What a volatile mount leaves: mode-000 directories.
        let mark = work.join("work/incompat/volatile");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&mark)
            .unwrap();
        std::fs::write(mark.join("dirty"), "").unwrap();
        for dir in [mark, work.join("work/incompat"), work.join("work")] {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o000)).unwrap();
        }
        let again = fresh(layer).unwrap();
        assert_eq!(again, work);
        assert_eq!(std::fs::read_dir(&again).unwrap().count(), 0);
        let names = |layer: &Path| {
            let mut names: Vec<String> = std::fs::read_dir(layer)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        assert_eq!(names(layer).len(), 2, "{:?}", names(layer));
        remove_stale(layer);
        assert_eq!(names(layer), ["work"]);
    }

    #[test]
    fn an_upper_dir_replaced_by_a_link_is_set_aside_and_made_again() {
        let dir = tempfile::tempdir().unwrap();
        let layer = dir.path().join("layer");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&layer).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("file"), "theirs").unwrap();
        let upper = upper(&layer).unwrap();
        std::fs::write(upper.join("cached"), "kept").unwrap();
        // A directory stays as it was.
        assert_eq!(super::upper(&layer).unwrap(), upper);
        assert_eq!(std::fs::read_to_string(upper.join("cached")).unwrap(), "kept");
        // A link does not.
        std::fs::remove_file(upper.join("cached")).unwrap();
        std::fs::remove_dir(&upper).unwrap();
        symlink(&elsewhere, &upper).unwrap();
        assert_eq!(super::upper(&layer).unwrap(), upper);
        assert!(!std::fs::symlink_metadata(&upper).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_dir(&upper).unwrap().count(), 0);
        remove_stale(&layer);
        assert_eq!(std::fs::read_to_string(elsewhere.join("file")).unwrap(), "theirs");
        assert_eq!(std::fs::read_dir(&layer).unwrap().count(), 1);
    }

    #[test]
    fn a_stale_entry_that_is_a_link_goes_and_what_it_names_stays() {
        let dir = tempfile::tempdir().unwrap();
        let layer = dir.path().join("layer");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&layer).unwrap();
        std::fs::create_dir_all(outside.join("inner")).unwrap();
        std::fs::write(outside.join("inner/file"), "precious").unwrap();
        // Planted in the layer under a name the removal takes: a link to a directory.
        symlink(&outside, layer.join(format!("{STALE}1.1"))).unwrap();
        // And beside it, a stale directory whose entries are links into that directory.
        std::fs::create_dir_all(layer.join(format!("{STALE}2.2"))).unwrap();
        symlink(outside.join("inner"), layer.join(format!("{STALE}2.2/work"))).unwrap();
        remove_stale(&layer);
        assert_eq!(std::fs::read_to_string(outside.join("inner/file")).unwrap(), "precious");
        assert_eq!(std::fs::read_dir(&layer).unwrap().count(), 0);
    }

    #[test]
    fn a_stale_tree_deeper_than_a_work_dir_is_removed_as_far_as_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let layer = dir.path();
        let mut deep = layer.join(format!("{STALE}1.1"));
        for _ in 0..MAX_DEPTH + 4 {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        // A work dir as the kernel leaves it is well within the bound.
        let work = fresh(layer).unwrap();
        std::fs::create_dir_all(work.join("work/incompat/volatile")).unwrap();
        std::fs::write(work.join("work/incompat/volatile/dirty"), "").unwrap();
        std::fs::set_permissions(work.join("work/incompat"), std::fs::Permissions::from_mode(0o000)).unwrap();
        fresh(layer).unwrap();
        remove_stale(layer);
        let left: Vec<String> = std::fs::read_dir(layer)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        // The tree past the bound is left (the directories above it with it); the work dir went
        // whole.
        assert!(left.contains(&format!("{STALE}1.1")), "{left:?}");
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(deep.exists());
    }

    #[test]
    fn a_link_planted_in_a_stale_work_dir_is_removed_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let layer = dir.path().join("layer");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&layer).unwrap();
        std::fs::create_dir_all(outside.join("keep")).unwrap();
        std::fs::write(outside.join("keep/file"), "precious").unwrap();
        std::fs::set_permissions(outside.join("keep"), std::fs::Permissions::from_mode(0o500)).unwrap();
        let work = fresh(&layer).unwrap();
        symlink(&outside, work.join("work")).unwrap();
        symlink(outside.join("keep"), work.join("incompat")).unwrap();
        fresh(&layer).unwrap();
        remove_stale(&layer);
        assert_eq!(std::fs::read_to_string(outside.join("keep/file")).unwrap(), "precious");
        let mode = std::fs::metadata(outside.join("keep")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o500, "the link's target was changed");
        assert_eq!(std::fs::read_dir(&layer).unwrap().count(), 1);
    }
}
