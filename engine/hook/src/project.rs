//! Which project a hook event belongs to: the nearest ancestor of its working directory holding
//! `.sixfold/`, else the git root, else the directory itself.

use std::path::{Path, PathBuf};

/// The project root for a working directory.
pub fn root(cwd: &Path) -> PathBuf {
    if let Some(found) = cwd.ancestors().find(|a| a.join(".sixfold").is_dir()) {
        return found.to_path_buf();
    }
    if let Some(found) = cwd.ancestors().find(|a| a.join(".git").exists()) {
        return found.to_path_buf();
    }
    cwd.to_path_buf()
}

/// The project's `.sixfold/` directory.
pub fn dir(root: &Path) -> PathBuf {
    root.join(".sixfold")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_sixfold_then_git_then_itself() {
        let t = tempfile::tempdir().unwrap();
        let deep = t.path().join("a/b/c");
        std::fs::create_dir_all(&deep).unwrap();
        // Only meaningful when nothing above the temp dir is a project already.
        let clean = !t
            .path()
            .ancestors()
            .any(|a| a.join(".sixfold").is_dir() || a.join(".git").exists());
        if clean {
            assert_eq!(root(&deep), deep);
        }
        std::fs::create_dir_all(t.path().join("a/.git")).unwrap();
        assert_eq!(root(&deep), t.path().join("a"));
        std::fs::create_dir_all(t.path().join("a/b/.sixfold")).unwrap();
        assert_eq!(root(&deep), t.path().join("a/b"));
    }
}
