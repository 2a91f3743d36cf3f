//! Which project a working directory belongs to (a hook event's, a launched run's, a command's):
//! the agent's own project, bounded by its repository.
//!
//! The project is the nearest directory from the working directory up to its repository root (the
//! nearest ancestor holding `.git`) that holds `.sixfold/`, else that repository root, else the
//! working directory itself. The search never goes above the repository, and never reaches `/`,
//! the user's home or a directory above it (unless the agent runs there itself): a `.sixfold/` in
//! `/`, in `$HOME` or in an enclosing repository does not capture the repositories below it.

use std::path::{Path, PathBuf};

/// The project root for a working directory, bounded by the user's home from `$HOME`.
pub fn root(cwd: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    root_within(cwd, home.as_deref())
}

/// The project root for a working directory, never above its repository, never `/`, `home` or
/// an ancestor of `home` unless `cwd` is that directory.
pub fn root_within(cwd: &Path, home: Option<&Path>) -> PathBuf {
    // INVARIANT (fail closed): the places searched stop at the first one that is too wide, so a
    // bundle or a repository there never widens the workspace of the projects below it.
    let too_wide = |dir: &Path| dir.parent().is_none() || home.is_some_and(|h| h.starts_with(dir));
    let mut searched = Vec::new();
    for dir in cwd.ancestors() {
        if dir != cwd && too_wide(dir) {
            break;
        }
        searched.push(dir);
        if dir.join(".git").exists() {
            break;
        }
    }
    if let Some(found) = searched.iter().find(|d| d.join(".sixfold").is_dir()) {
        return found.to_path_buf();
    }
    match searched.last() {
        Some(last) if last.join(".git").exists() => last.to_path_buf(),
        _ => cwd.to_path_buf(),
    }
}

/// The project an agent working in `cwd` works in, or why there is none: `/` and the directories
/// above the user's home are nobody's project (a bundle or a log there would govern every
/// repository below), so an event from there is refused and nothing is created for it.
pub fn place(cwd: &Path) -> Result<PathBuf, String> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    place_within(cwd, home.as_deref())
}

/// [`place`] with the user's home given.
pub fn place_within(cwd: &Path, home: Option<&Path>) -> Result<PathBuf, String> {
    let above_home = home.is_some_and(|h| h.starts_with(cwd) && h != cwd);
    // INVARIANT (fail closed): no project at `/` or above the home, so nothing is judged as
    // inside a workspace that holds every repository.
    if cwd.parent().is_none() || above_home {
        return Err(format!(
            "the working directory `{}` is `/` or above the user's home, which is no project",
            cwd.display()
        ));
    }
    Ok(root_within(cwd, home))
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

    /// A `.sixfold/` or a `.git` above the repository, in the user's home, or in `/` never
    /// captures the directories below it.
    #[test]
    fn the_project_is_never_found_too_far_up() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path();
        let home = base.join("home/me");
        let repo = home.join("code/repo");
        let deep = repo.join("src/x");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        // An enclosing repository (a monorepo root) with its own bundle.
        std::fs::create_dir_all(home.join("code/.git")).unwrap();
        std::fs::create_dir_all(home.join("code/.sixfold")).unwrap();
        // A bundle in the home and above it.
        std::fs::create_dir_all(home.join(".sixfold")).unwrap();
        std::fs::create_dir_all(base.join("home/.sixfold")).unwrap();
        assert_eq!(root_within(&deep, Some(&home)), repo, "bounded by its own repository");
        // Not a repository: the working directory, not the home's bundle.
        let loose = home.join("notes/today");
        std::fs::create_dir_all(&loose).unwrap();
        assert_eq!(root_within(&loose, Some(&home)), loose);
        // A dotfiles repository in the home does not capture what is below it either.
        std::fs::create_dir_all(home.join(".git")).unwrap();
        assert_eq!(root_within(&loose, Some(&home)), loose);
        // The agent running in the home itself: the home is its project.
        assert_eq!(root_within(&home, Some(&home)), home);
        // `/` is never searched from below.
        assert_eq!(root_within(Path::new("/"), None), Path::new("/"));
        // `/` and the directories above the home are no project.
        assert!(place_within(Path::new("/"), Some(&home)).is_err());
        assert!(place_within(&base.join("home"), Some(&home)).is_err());
        assert_eq!(place_within(&home, Some(&home)).unwrap(), home);
        assert_eq!(place_within(&deep, Some(&home)).unwrap(), repo);
        // Inside the repository, a nearer bundle still wins.
        std::fs::create_dir_all(repo.join("src/.sixfold")).unwrap();
        assert_eq!(root_within(&deep, Some(&home)), repo.join("src"));
    }
}
