//! A cache layer's directories: its upper directory as it was left (unless it is not a
//! directory any more), and a fresh, empty work directory for every mount.
//!
//! An overlay mount empties the work directory it is given (removing what it finds there) and,
//! mounted `volatile`, leaves a mark in it (`work/incompat/volatile/dirty`, the directories mode
//! 000) that makes the kernel refuse the next mount until it is removed. Each removal frees
//! inodes and directory blocks, which some filesystems pay for at once (a discard waited for).
//! So the run renames the previous work directory aside (`stale.<n>`) and makes a new one before
//! its sandbox is built, and removes what is stale while the sandbox is being built, off the
//! path to the command.

use std::os::unix::fs::PermissionsExt;
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

/// Removes the work directories set aside in `layer`, marks and all, never following a
/// symbolic link (a command inside could write in the layer, and may have planted one). Errors
/// are left for the next run.
pub(crate) fn remove_stale(layer: &Path) {
    let Ok(entries) = std::fs::read_dir(layer) else {
        return;
    };
    let mut budget = REMOVED_PER_RUN;
    for entry in entries.flatten() {
        if entry.file_name().to_str().is_some_and(|n| n.starts_with(STALE)) {
            remove(&entry.path(), &mut budget);
        }
    }
}

/// Removes `path` and everything under it, opening each directory the kernel made mode 000.
fn remove(path: &Path, budget: &mut usize) {
    let Some(left) = budget.checked_sub(1) else {
        return;
    };
    *budget = left;
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    if !meta.is_dir() {
        // A file, or a link (removed itself, never followed).
        let _ = std::fs::remove_file(path);
        return;
    }
    if meta.permissions().mode() & 0o700 != 0o700 {
        use nix::sys::stat::{fchmodat, FchmodatFlags, Mode};
        // Only this very directory: a link found here is refused, not followed.
        let _ = fchmodat(
            nix::fcntl::AT_FDCWD,
            path,
            Mode::S_IRWXU,
            FchmodatFlags::NoFollowSymlink,
        );
    }
    if let Ok(entries) = std::fs::read_dir(path) {
        for entry in entries.flatten() {
            remove(&entry.path(), budget);
        }
    }
    let _ = std::fs::remove_dir(path);
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::{symlink, DirBuilderExt};

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
