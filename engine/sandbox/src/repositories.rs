//! Repositories a command made: the host's git enters a repository below the root when the
//! root's index names it (a submodule), and then runs what that repository's own config and
//! hooks say (`core.fsmonitor`, `core.hooksPath`). A command inside may write the index (it is
//! the repository's data), so a repository it builds (`git init sub`, a `.git` file pointing at
//! a directory it wrote) must not stay one: after the command has ended, every `.git` entry
//! below a root that was not there before is renamed aside, and said so.
//!
//! Repositories that existed before keep their `.git` entries and control files through the
//! run (the environment's protected paths); this file only looks for new ones.

use std::path::{Path, PathBuf};

use crate::walk::Tree;

/// The name git looks for.
const GIT: &str = ".git";

/// The `.git` entries below some roots (not the roots' own), at any depth.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Repositories {
    found: Vec<PathBuf>,
    /// Whether a root had more entries than are searched.
    pub(crate) incomplete: bool,
}

/// A repository a command made, and where its `.git` entry was moved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quarantined {
    /// Where the `.git` entry was.
    pub path: PathBuf,
    /// Where it is now.
    pub moved_to: PathBuf,
}

impl Repositories {
    /// Every `.git` entry the walks of `roots` found below them, but those inside another
    /// `.git` (a repository's own data) and the roots' own. A walk must look for `.git`.
    pub(crate) fn of<'t>(roots: impl Iterator<Item = (&'t Path, Option<&'t Tree>)>) -> Repositories {
        let mut found = Vec::new();
        let mut incomplete = false;
        for (root, tree) in roots {
            let Some(tree) = tree else {
                incomplete = true;
                continue;
            };
            incomplete |= !tree.complete;
            for (path, _) in &tree.found {
                let Ok(inside) = path.strip_prefix(root) else { continue };
                let mut names = inside.iter().rev();
                let own = names.next() == Some(std::ffi::OsStr::new(GIT));
                if own && inside != Path::new(GIT) && names.all(|n| n != std::ffi::OsStr::new(GIT)) {
                    found.push(path.clone());
                }
            }
        }
        found.sort();
        Repositories { found, incomplete }
    }

    /// Renames aside every `.git` entry of `after` that `self` (found before the command) did
    /// not have: a repository the command made is no longer one.
    pub(crate) fn quarantine_new(&self, after: &Repositories) -> Vec<Quarantined> {
        let mut moved = Vec::new();
        for path in after.found.iter().filter(|p| self.found.binary_search(p).is_err()) {
            let Some(moved_to) = free_name(path) else { continue };
            if std::fs::rename(path, &moved_to).is_ok() {
                moved.push(Quarantined {
                    path: path.clone(),
                    moved_to,
                });
            }
        }
        moved
    }
}

/// `.git.sixfold-quarantined`, or with a number when that is taken.
fn free_name(path: &Path) -> Option<PathBuf> {
    let dir = path.parent()?;
    (0..100)
        .map(|n| match n {
            0 => dir.join(".git.sixfold-quarantined"),
            n => dir.join(format!(".git.sixfold-quarantined-{n}")),
        })
        .find(|candidate| std::fs::symlink_metadata(candidate).is_err())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_repository_below_the_root_is_renamed_aside_and_an_old_one_stays() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("old/.git")).unwrap();
        std::fs::create_dir_all(root.join("old/.git/modules/m/.git")).unwrap();
        let spec = crate::walk::Spec::new(vec![GIT.into()], false, usize::MAX).unwrap();
        let find = |previous: Tree| {
            let tree = Tree::walk(&root, &spec, previous);
            (Repositories::of(std::iter::once((root.as_path(), Some(&tree)))), tree)
        };
        let (before, tree) = find(Tree::default());
        std::fs::create_dir_all(root.join("new/.git")).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.git"), "gitdir: ../elsewhere\n").unwrap();
        let (after, _) = find(tree);
        let moved = before.quarantine_new(&after);
        let paths: Vec<&Path> = moved.iter().map(|q| q.path.as_path()).collect();
        assert_eq!(paths, vec![root.join("new/.git").as_path(), &root.join("sub/.git")]);
        assert!(root.join("new/.git.sixfold-quarantined").is_dir());
        assert!(root.join("sub/.git.sixfold-quarantined").is_file());
        assert!(root.join("old/.git").is_dir() && root.join(".git").is_dir());
    }
}
