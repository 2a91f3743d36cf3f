//! An [`Environment`] resolved against the filesystem as it is now: which directories are bound
//! writable, which existing paths are bound read-only, which protected paths are missing (each
//! gets a placeholder for the command's lifetime), and which existing paths are masked. The mechanism enforces a layout; it never reads
//! patterns itself.

use crate::environment::Environment;
use crate::error::SandboxError;
use sixfold_core::scope::resolve_path;
use std::path::{Component, Path, PathBuf};

/// At most this many directory entries are read, per root, to find the secrets written `**/…`.
/// A larger tree is refused rather than partly searched.
pub(crate) const MAX_WALK_ENTRIES: usize = 200_000;

/// What the sandbox enforces, as concrete absolute paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Directories bound read-write (the roots and the writable temp dir), parents first, none
    /// inside another.
    pub(crate) writable: Vec<PathBuf>,
    /// The workspace roots alone (not the temp dir), writable or not, resolved: where protected
    /// paths and secrets written relative to a root are looked for.
    pub(crate) roots: Vec<PathBuf>,
    /// Existing protected paths inside a writable root, bound read-only; also a file standing
    /// where a protected path's directory would be (a worktree's `.git` file), so it cannot be
    /// replaced by a directory.
    pub(crate) read_only: Vec<PathBuf>,
    /// The protected paths that do not exist yet, cut at their first missing component: each
    /// gets a placeholder that is bound read-only (see `linux/placeholder.rs`).
    pub(crate) missing: Vec<PathBuf>,
    /// Existing secrets, masked.
    pub(crate) hidden: Vec<Hidden>,
}

/// An existing secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hidden {
    /// Where it is.
    pub(crate) path: PathBuf,
    /// Whether it is a directory (masked by an empty directory) or not (an empty file).
    pub(crate) is_dir: bool,
}

/// Where a path as written starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    /// `~/p`
    Home,
    /// `/p`
    Absolute,
    /// `p`, under each writable root
    EachRoot,
    /// `**/p`, at any depth under each writable root
    AnyDepth,
}

/// A path as written, split into where it starts and the components after that.
#[derive(Debug)]
struct Written<'a> {
    base: Base,
    components: Vec<&'a str>,
}

fn parse(written: &str) -> Result<Written<'_>, SandboxError> {
    let (base, rest) = if written == "~" {
        (Base::Home, "")
    } else if let Some(rest) = written.strip_prefix("~/") {
        (Base::Home, rest)
    } else if let Some(rest) = written.strip_prefix("**/") {
        (Base::AnyDepth, rest)
    } else if let Some(rest) = written.strip_prefix('/') {
        (Base::Absolute, rest)
    } else {
        (Base::EachRoot, written)
    };
    let components: Vec<&str> = rest.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    if components.contains(&"..") || written.contains('\0') {
        return Err(invalid(format!(
            "`{written}`: `..` and NUL are not allowed in a path as written"
        )));
    }
    if components.iter().any(|c| c.contains("**")) {
        return Err(invalid(format!(
            "`{written}`: `**` is only understood at the start, as `**/name`"
        )));
    }
    if base == Base::AnyDepth && components.len() != 1 {
        return Err(invalid(format!("`{written}`: `**/` must be followed by one name")));
    }
    if components.is_empty() && base != Base::Home {
        return Err(invalid(format!("`{written}` names no path")));
    }
    Ok(Written { base, components })
}

fn invalid(what: String) -> SandboxError {
    SandboxError::Invalid { what }
}

fn has_wildcard(component: &str) -> bool {
    component.contains(['*', '?', '['])
}

impl Layout {
    /// Resolves an environment against the filesystem now.
    pub(crate) fn resolve(environment: &Environment) -> Result<Layout, SandboxError> {
        let roots = resolve_dirs(environment.roots.iter().chain(environment.read_only_roots.iter()))?;
        let writable = outermost(resolve_dirs(environment.roots.iter().chain(environment.tmp.iter()))?);
        let mut layout = Layout {
            writable,
            roots,
            ..Layout::default()
        };
        for written in &environment.protected {
            layout.protect(environment, written)?;
        }
        for written in &environment.secrets {
            layout.hide(environment, written)?;
        }
        layout.read_only.sort();
        layout.read_only.dedup();
        layout.missing.sort();
        layout.missing.dedup();
        layout.hidden.sort_by(|a, b| a.path.cmp(&b.path));
        layout.hidden.dedup_by(|a, b| a.path == b.path);
        // A mask inside another mask could not be mounted (its parent is no longer reachable)
        // and is not needed.
        let dirs: Vec<PathBuf> = layout
            .hidden
            .iter()
            .filter(|h| h.is_dir)
            .map(|h| h.path.clone())
            .collect();
        layout
            .hidden
            .retain(|h| !dirs.iter().any(|d| h.path != *d && h.path.starts_with(d)));
        Ok(layout)
    }

    /// Keeps `placeholders` (the missing protected paths, now made) read-only like existing
    /// ones: nothing is missing any more.
    pub(crate) fn hold<'p>(&mut self, placeholders: impl Iterator<Item = &'p Path>) {
        self.read_only.extend(placeholders.map(Path::to_path_buf));
        self.read_only.sort();
        self.read_only.dedup();
        self.missing.clear();
    }

    /// The writable directory a path lies in, if any.
    pub(crate) fn writable_root_of(&self, path: &Path) -> Option<&Path> {
        self.writable.iter().find(|w| path.starts_with(w)).map(PathBuf::as_path)
    }

    /// The workspace roots that are writable: only there does a protected path need keeping.
    fn writable_roots(&self) -> Vec<PathBuf> {
        self.roots
            .iter()
            .filter(|r| self.writable_root_of(r).is_some())
            .cloned()
            .collect()
    }

    fn protect(&mut self, environment: &Environment, written: &str) -> Result<(), SandboxError> {
        let parsed = parse(written)?;
        if parsed.components.iter().any(|c| has_wildcard(c)) {
            return Err(invalid(format!(
                "protected path `{written}` has a wildcard: a match that does not exist yet could be created"
            )));
        }
        let relative: PathBuf = parsed.components.iter().collect();
        let mut candidates = Vec::new();
        match parsed.base {
            Base::EachRoot => {
                for root in self.writable_roots() {
                    candidates.push((root, relative.clone()));
                }
            }
            Base::Home | Base::Absolute => {
                let start = if parsed.base == Base::Home {
                    home(environment, written)?
                } else {
                    PathBuf::from("/")
                };
                let Some(path) = resolve_path(Path::new("/"), &start.join(&relative)) else {
                    return Err(invalid(format!("protected path `{written}` cannot be resolved")));
                };
                // Outside every writable root a path is read-only already.
                if let Some(root) = self.writable_root_of(&path).map(Path::to_path_buf) {
                    let inside = path.strip_prefix(&root).map(Path::to_path_buf).unwrap_or_default();
                    candidates.push((root, inside));
                }
            }
            Base::AnyDepth => {
                // Existing matches at any depth are kept read-only; one that does not exist yet
                // is only kept from being created where it is also written without `**/` (the
                // directories it could appear in are not known in advance).
                let matcher = matcher(&relative.to_string_lossy(), written)?;
                for root in self.writable_roots() {
                    for found in find_below(&root, &matcher, written)? {
                        let inside = found.strip_prefix(&root).map(Path::to_path_buf).unwrap_or_default();
                        candidates.push((root.clone(), inside));
                    }
                }
            }
        }
        for (root, inside) in candidates {
            self.protect_under(&root, &inside, written)?;
        }
        Ok(())
    }

    /// Walks `inside` from `root` one component at a time, never through a symbolic link.
    fn protect_under(&mut self, root: &Path, inside: &Path, written: &str) -> Result<(), SandboxError> {
        let mut here = root.to_path_buf();
        let mut components = inside.components().peekable();
        if components.peek().is_none() {
            // The root itself is protected: it is simply not writable.
            self.read_only.push(here);
            return Ok(());
        }
        while let Some(component) = components.next() {
            let Component::Normal(name) = component else {
                continue;
            };
            here.push(name);
            match std::fs::symlink_metadata(&here) {
                Err(_) => {
                    // INVARIANT (fail closed): a protected path that does not exist yet cannot be
                    // created: a placeholder stands in its place, read-only, while a command runs.
                    self.missing.push(here);
                    return Ok(());
                }
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(invalid(format!(
                        "protected path `{written}` passes through the symbolic link `{}`, which cannot be kept in place",
                        here.display()
                    )));
                }
                Ok(meta) if !meta.is_dir() && components.peek().is_some() => {
                    // A file stands where the protected path's directory would be: keeping the
                    // file in place keeps the path from being created.
                    self.read_only.push(here);
                    return Ok(());
                }
                Ok(_) => {}
            }
        }
        self.read_only.push(here);
        Ok(())
    }

    fn hide(&mut self, environment: &Environment, written: &str) -> Result<(), SandboxError> {
        let parsed = parse(written)?;
        let Some((last, parents)) = parsed.components.split_last() else {
            // `~` alone: the whole home directory.
            let path = home(environment, written)?;
            self.push_hidden(&path);
            return Ok(());
        };
        if parents.iter().any(|c| has_wildcard(c)) {
            return Err(invalid(format!(
                "secret `{written}`: only the last component may have a wildcard"
            )));
        }
        let matcher = matcher(last, written)?;
        let parent: PathBuf = parents.iter().collect();
        match parsed.base {
            Base::Home => self.hide_in(&home(environment, written)?.join(parent), last, &matcher),
            Base::Absolute => self.hide_in(&Path::new("/").join(parent), last, &matcher),
            Base::EachRoot => {
                for root in self.roots.clone() {
                    self.hide_in(&root.join(&parent), last, &matcher);
                }
            }
            Base::AnyDepth => {
                for root in self.roots.clone() {
                    for found in find_below(&root, &matcher, written)? {
                        self.push_hidden(&found);
                    }
                }
            }
        }
        Ok(())
    }

    /// Hides the entries of `dir` named `last` (a literal name or a glob).
    fn hide_in(&mut self, dir: &Path, last: &str, matcher: &globset::GlobMatcher) {
        if !has_wildcard(last) {
            self.push_hidden(&dir.join(last));
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            if matcher.is_match(entry.file_name()) {
                self.push_hidden(&entry.path());
            }
        }
    }

    /// Records an existing secret, resolved (a mount follows symbolic links, so the mask lands
    /// on what the link points to).
    fn push_hidden(&mut self, path: &Path) {
        if std::fs::symlink_metadata(path).is_err() {
            return;
        }
        let Some(resolved) = resolve_path(Path::new("/"), path) else {
            return;
        };
        let Ok(meta) = std::fs::metadata(&resolved) else {
            // A dangling link: nothing to read.
            return;
        };
        self.hidden.push(Hidden {
            path: resolved,
            is_dir: meta.is_dir(),
        });
    }
}

/// A matcher for one name as written (a literal, or a glob in a secret's last component).
fn matcher(name: &str, written: &str) -> Result<globset::GlobMatcher, SandboxError> {
    Ok(globset::GlobBuilder::new(name)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| invalid(format!("`{written}`: {e}")))?
        .compile_matcher())
}

/// Every entry under `root`, at any depth, whose name matches (not looked into further).
fn find_below(root: &Path, matcher: &globset::GlobMatcher, written: &str) -> Result<Vec<PathBuf>, SandboxError> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_WALK_ENTRIES {
                // INVARIANT (fail closed): a tree too large to search is refused, not partly
                // searched.
                return Err(invalid(format!(
                    "more than {MAX_WALK_ENTRIES} entries under `{}` to search for `{written}`",
                    root.display()
                )));
            }
            if matcher.is_match(entry.file_name()) {
                found.push(entry.path());
                continue;
            }
            // Symbolic links are not followed: what they point to inside a root is walked
            // where it is.
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                pending.push(entry.path());
            }
        }
    }
    Ok(found)
}

fn home(environment: &Environment, written: &str) -> Result<PathBuf, SandboxError> {
    if !environment.home.is_absolute() {
        return Err(invalid(format!(
            "`{written}` is under `~`, but the home directory `{}` is not absolute",
            environment.home.display()
        )));
    }
    Ok(environment.home.clone())
}

/// Directories as given, resolved and checked to be directories, sorted.
fn resolve_dirs<'a>(dirs: impl Iterator<Item = &'a PathBuf>) -> Result<Vec<PathBuf>, SandboxError> {
    let mut resolved_dirs = Vec::new();
    for dir in dirs {
        if !dir.is_absolute() {
            return Err(invalid(format!(
                "writable root `{}` is not an absolute path",
                dir.display()
            )));
        }
        let Some(resolved) = resolve_path(Path::new("/"), dir) else {
            return Err(invalid(format!("writable root `{}` cannot be resolved", dir.display())));
        };
        if !resolved.is_dir() {
            return Err(invalid(format!("writable root `{}` is not a directory", dir.display())));
        }
        resolved_dirs.push(resolved);
    }
    resolved_dirs.sort();
    resolved_dirs.dedup();
    Ok(resolved_dirs)
}

/// The directories that lie inside no other one (binding the outer one covers the inner).
fn outermost(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    dirs.iter()
        .filter(|d| !dirs.iter().any(|other| other != *d && d.starts_with(other)))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::Network;

    fn environment(root: &Path) -> Environment {
        Environment {
            roots: vec![root.to_path_buf()],
            read_only_roots: Vec::new(),
            tmp: None,
            protected: vec![
                ".git/hooks".into(),
                ".git/config".into(),
                ".mcp.json".into(),
                ".claude".into(),
            ],
            secrets: vec!["**/.env*".into(), "~/.ssh".into()],
            network: Network::Cut,
            home: root.join("home"),
        }
    }

    #[test]
    fn existing_protected_paths_are_read_only_and_missing_ones_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        let layout = Layout::resolve(&environment(&root)).unwrap();
        assert_eq!(layout.writable, vec![root.clone()]);
        assert_eq!(layout.roots, vec![root.clone()]);
        assert_eq!(
            layout.read_only,
            vec![root.join(".git/config"), root.join(".git/hooks")]
        );
        assert_eq!(layout.missing, vec![root.join(".claude"), root.join(".mcp.json")]);
    }

    #[test]
    fn a_git_file_is_kept_in_place_so_its_hooks_cannot_appear() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".git"), "gitdir: /elsewhere\n").unwrap();
        let layout = Layout::resolve(&environment(&root)).unwrap();
        assert!(layout.read_only.contains(&root.join(".git")), "{layout:?}");
    }

    #[test]
    fn secrets_are_found_at_any_depth_and_in_home() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join("home/.ssh")).unwrap();
        std::fs::write(root.join("a/b/.env.local"), "K=v").unwrap();
        std::fs::write(root.join(".env"), "K=v").unwrap();
        let layout = Layout::resolve(&environment(&root)).unwrap();
        let hidden: Vec<&Path> = layout.hidden.iter().map(|h| h.path.as_path()).collect();
        assert_eq!(
            hidden,
            vec![
                root.join(".env").as_path(),
                &root.join("a/b/.env.local"),
                &root.join("home/.ssh")
            ]
        );
        assert!(layout.hidden.iter().any(|h| h.is_dir));
    }

    #[test]
    fn a_wildcard_in_a_protected_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut env = environment(dir.path());
        env.protected = vec![".claude/*".into()];
        let error = Layout::resolve(&env).unwrap_err().to_string();
        assert!(error.contains("has a wildcard"), "{error}");
    }

    #[test]
    fn a_protected_name_at_any_depth_keeps_the_existing_ones_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b/.sixfold")).unwrap();
        let mut env = environment(&root);
        env.protected = vec![".sixfold".into(), "**/.sixfold".into()];
        let layout = Layout::resolve(&env).unwrap();
        assert_eq!(layout.read_only, vec![root.join("a/b/.sixfold")]);
        assert_eq!(layout.missing, vec![root.join(".sixfold")]);
    }

    #[test]
    fn a_symlinked_protected_path_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::os::unix::fs::symlink("/nowhere", root.join(".mcp.json")).unwrap();
        let error = Layout::resolve(&environment(&root)).unwrap_err().to_string();
        assert!(error.contains("symbolic link"), "{error}");
    }

    #[test]
    fn protected_paths_are_not_looked_for_in_the_temp_dir() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("tmp")).unwrap();
        std::fs::create_dir_all(root.join("w")).unwrap();
        let mut env = environment(&root.join("w"));
        env.tmp = Some(root.join("tmp"));
        let layout = Layout::resolve(&env).unwrap();
        assert_eq!(layout.writable, vec![root.join("tmp"), root.join("w")]);
        assert_eq!(
            layout.missing,
            vec![root.join("w/.claude"), root.join("w/.git"), root.join("w/.mcp.json")]
        );
    }

    #[test]
    fn a_read_only_root_hides_its_secrets_and_protects_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".env"), "K=v").unwrap();
        let mut env = environment(&root);
        env.read_only_roots = std::mem::take(&mut env.roots);
        let layout = Layout::resolve(&env).unwrap();
        assert!(layout.writable.is_empty());
        assert!(layout.read_only.is_empty() && layout.missing.is_empty());
        assert_eq!(
            layout.hidden,
            vec![Hidden {
                path: root.join(".env"),
                is_dir: false
            }]
        );
    }

    #[test]
    fn a_relative_root_is_refused() {
        let env = Environment {
            roots: vec!["relative".into()],
            ..Environment::default()
        };
        assert!(Layout::resolve(&env).is_err());
    }

    #[test]
    fn nested_roots_fold_into_the_outer_one() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("inner")).unwrap();
        let env = Environment {
            roots: vec![root.join("inner"), root.clone()],
            ..Environment::default()
        };
        assert_eq!(Layout::resolve(&env).unwrap().writable, vec![root]);
    }
}
