//! An [`Environment`] resolved against the filesystem as it is now: which directories are bound
//! writable, which existing paths are bound read-only, which protected paths are missing (each
//! gets a placeholder for the command's lifetime), and which existing paths are masked. The mechanism enforces a layout; it never reads
//! patterns itself.

use crate::environment::Environment;
use crate::error::SandboxError;
use crate::walk::{Kind, Spec, Tree};
use sixfold_core::scope::{resolve_path_looked, Look, Looks};
use std::path::{Component, Path, PathBuf};

/// At most this many directory entries are read, per root, to find the secrets written `**/…`.
/// A larger tree is refused rather than partly searched.
pub(crate) const MAX_WALK_ENTRIES: usize = 200_000;

/// What the sandbox enforces, as concrete absolute paths.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layout {
    /// Directories bound read-write (the roots and the writable temp dir), parents first, none
    /// inside another.
    pub(crate) writable: Vec<PathBuf>,
    /// The workspace roots alone (not the temp dir), writable or not, resolved: where protected
    /// paths and secrets written relative to a root are looked for.
    pub(crate) roots: Vec<PathBuf>,
    /// Existing entries inside a writable root kept in place, sorted (parents first): protected
    /// paths (read-only, or only pinned when a directory is protected as an entry), the
    /// directories above them, and a file standing where a protected path's directory would be
    /// (a worktree's `.git` file).
    pub(crate) kept: Vec<Kept>,
    /// The protected paths that do not exist yet, cut at their first missing component: each
    /// gets a placeholder that is bound read-only (see `linux/placeholder.rs`).
    pub(crate) missing: Vec<PathBuf>,
    /// What a placeholder holds, when not empty.
    pub(crate) texts: Vec<(PathBuf, String)>,
    /// Existing secrets and host sockets, masked.
    pub(crate) hidden: Vec<Hidden>,
    /// Tool caches layered: read as they are, written to a per-project layer (whose directory
    /// is among the writable ones).
    pub(crate) caches: Vec<Cache>,
    /// The caches' layers, each held by this layout (and its copies) alone until they are
    /// dropped: see [`take_layer`].
    held: Vec<std::sync::Arc<nix::fcntl::Flock<std::fs::File>>>,
    /// What the disk said of each place this resolution looked at (the `.git` above each
    /// protected path in it, `/tmp` and `$HOME` under every path written there), so each is
    /// looked at once; emptied when the resolution is done.
    looks: Looks,
}

/// How many runs of one project may each have a tool cache's layer at once; a run past them
/// reads the cache as it is (read-only).
const LAYERS: usize = 4;

/// A layer of the cache whose first layer is `base` that no other run holds, and its lock held:
/// two overlays sharing an upper or work directory are undefined behaviour (the kernel says so
/// when it mounts the second), and a project's commands overlap (a server left running, calls
/// made in parallel). The project's first layer when it is free, else the next one free. The
/// lock file lies beside the layer, outside it and so outside every writable root.
fn take_layer(base: &Path) -> Option<(PathBuf, nix::fcntl::Flock<std::fs::File>)> {
    use nix::fcntl::{Flock, FlockArg};
    std::fs::create_dir_all(base.parent()?).ok()?;
    (0..LAYERS).find_map(|slot| {
        let suffix = |end: &str| {
            let mut named = base.as_os_str().to_owned();
            if slot > 0 {
                named.push(format!(".{slot}"));
            }
            named.push(end);
            PathBuf::from(named)
        };
        let file = crate::lock_file::open(&suffix(".lock"), true).ok()?;
        let held = Flock::lock(file, FlockArg::LockExclusiveNonblock).ok()?;
        Some((suffix(""), held))
    })
}

/// A tool cache, layered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cache {
    /// The host's cache directory (read as it is, never written).
    pub(crate) path: PathBuf,
    /// The per-project layer: `upper/` holds what the command wrote, `work/` is the kernel's.
    pub(crate) layer: PathBuf,
}

/// An existing entry kept in place: bound onto itself, so it cannot be renamed, removed or
/// replaced, and read-only when its contents are protected too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Kept {
    /// Where it is.
    pub(crate) path: PathBuf,
    /// Whether it (and everything under it) is read-only; else only pinned.
    pub(crate) read_only: bool,
    /// Its device and inode when the layout was resolved: the mount must land on this entry.
    pub(crate) identity: (u64, u64),
}

/// An existing secret or socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hidden {
    /// Where it is.
    pub(crate) path: PathBuf,
    /// Whether it is a directory (masked by an empty directory) or not (an empty file).
    pub(crate) is_dir: bool,
}

/// Where a path as written starts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Base {
    /// `~/p`
    Home,
    /// `/p`
    Absolute,
    /// `p`, under each writable root
    EachRoot,
    /// `**/p`, at any depth under each writable root
    AnyDepth,
    /// `$NAME/p`, under the path a variable of the caller holds
    Variable(String),
}

/// A path as written, split into where it starts and the components after that.
#[derive(Debug)]
struct Written<'a> {
    base: Base,
    components: Vec<&'a str>,
    /// Written with a trailing `/**`: the path and everything under it.
    subtree: bool,
}

fn parse(written: &str) -> Result<Written<'_>, SandboxError> {
    let (whole, subtree) = match written.strip_suffix("/**") {
        Some(path) => (path, true),
        None => (written, false),
    };
    let (base, rest) = if whole == "~" {
        (Base::Home, "")
    } else if let Some(rest) = whole.strip_prefix("~/") {
        (Base::Home, rest)
    } else if let Some(rest) = whole.strip_prefix("**/") {
        (Base::AnyDepth, rest)
    } else if let Some(rest) = whole.strip_prefix('/') {
        (Base::Absolute, rest)
    } else if let Some(variable) = whole.strip_prefix('$') {
        let (name, rest) = variable.split_once('/').unwrap_or((variable, ""));
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(invalid(format!(
                "`{written}`: `$` must be followed by a variable's name"
            )));
        }
        (Base::Variable(name.to_string()), rest)
    } else {
        (Base::EachRoot, whole)
    };
    let components: Vec<&str> = rest.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    // Only a variable's path may climb, and only first (`$SSH_AUTH_SOCK/..`).
    let climbs = components.iter().take_while(|c| **c == "..").count();
    let climbing_allowed = matches!(base, Base::Variable(_));
    if (climbs > 0 && !climbing_allowed) || components.iter().skip(climbs).any(|c| *c == "..") || written.contains('\0')
    {
        return Err(invalid(format!(
            "`{written}`: `..` and NUL are not allowed in a path as written (but `$NAME/..`)"
        )));
    }
    if components.iter().any(|c| c.contains("**")) {
        return Err(invalid(format!(
            "`{written}`: `**` is only understood at the start, as `**/name`, and at the end, as `name/**`"
        )));
    }
    if components.is_empty() && !matches!(base, Base::Home | Base::Variable(_)) {
        return Err(invalid(format!("`{written}` names no path")));
    }
    Ok(Written {
        base,
        components,
        subtree,
    })
}

fn invalid(what: String) -> SandboxError {
    SandboxError::Invalid { what }
}

fn has_wildcard(component: &str) -> bool {
    component.contains(['*', '?', '['])
}

/// How a protected path that does not exist is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IfMissing {
    /// A placeholder stands in its place.
    Placeholder,
    /// Nothing: only existing matches are kept.
    Skip,
}

impl Layout {
    /// Resolves an environment against the filesystem now (and keeps what the walks found
    /// for the next run).
    pub(crate) fn resolve(environment: &Environment) -> Result<Layout, SandboxError> {
        let (layout, trees) = Layout::resolve_walking(environment)?;
        trees.store();
        Ok(layout)
    }

    /// [`Layout::resolve`], with the trees walked under the roots and temp dirs (not kept yet:
    /// the caller walks the roots again after the command and keeps that).
    pub(crate) fn resolve_walking(environment: &Environment) -> Result<(Layout, Trees), SandboxError> {
        let (mut layout, mut trees) = Layout::start(environment)?;
        layout.finish(environment, &mut trees)?;
        Ok((layout, trees))
    }

    /// The part of a resolution the sandbox's first mounts need: the roots, the writable
    /// directories, the secrets, and the caches' layers (a cache is never layered over a
    /// secret). [`Layout::finish`] resolves the rest, which the sandbox needs only once its
    /// namespaces and first mounts are made, so the two can run side by side.
    pub(crate) fn start(environment: &Environment) -> Result<(Layout, Trees), SandboxError> {
        let mut looks = Looks::default();
        let roots = resolve_dirs(
            environment.roots.iter().chain(environment.read_only_roots.iter()),
            &mut looks,
        )?;
        let writable = outermost(resolve_dirs(
            environment.roots.iter().chain(environment.tmp.iter()),
            &mut looks,
        )?);
        let mut layout = Layout {
            writable,
            roots,
            looks,
            ..Layout::default()
        };
        // Each root is walked once, however many `**/` patterns are matched against it.
        let mut trees = Trees::new(environment, &layout.writable)?;
        for written in &environment.secrets {
            layout.hide(environment, written, &mut trees)?;
        }
        for written in &environment.caches {
            layout.layer(environment, written)?;
        }
        Ok((layout, trees))
    }

    /// The rest of a resolution begun by [`Layout::start`]: the protected paths (kept, or
    /// missing) and the host's sockets in the temp dirs.
    pub(crate) fn finish(&mut self, environment: &Environment, trees: &mut Trees) -> Result<(), SandboxError> {
        // After the layers: a protected path inside one is writable, so it is kept too.
        for written in &environment.protected {
            self.protect(environment, written, trees)?;
        }
        // The temp dirs hold the host's sockets whether or not they are writable.
        let mut temp_dirs = vec![
            environment.tmp.clone().unwrap_or_else(std::env::temp_dir),
            PathBuf::from("/tmp"),
        ];
        temp_dirs.dedup();
        for tmp in &temp_dirs {
            self.hide_sockets(tmp, trees)?;
        }
        self.settle();
        // A look kept longer could say what the disk no longer holds.
        self.looks = Looks::default();
        Ok(())
    }

    /// Whether a resolved path is a directory, as a mount following links would find it; `None`
    /// when nothing is there.
    fn is_dir(&mut self, resolved: &Path) -> Option<bool> {
        match self.looks.at(resolved) {
            Look::Found { directory, .. } => Some(directory),
            // Resolved, it is no link, unless one appeared since.
            Look::Link(_) => std::fs::metadata(resolved).ok().map(|m| m.is_dir()),
            Look::Missing => None,
        }
    }

    /// `path` resolved from `/` (see `resolve_path`), looking at each place once.
    fn resolved(&mut self, path: &Path) -> Option<PathBuf> {
        resolve_path_looked(Path::new("/"), path, &mut self.looks).map(|(resolved, _)| resolved)
    }

    /// Sorts and deduplicates what was found: read-only wins over pinned, and nothing is
    /// pinned again inside what is read-only already.
    fn settle(&mut self) {
        self.kept
            .sort_by(|a, b| a.path.cmp(&b.path).then(b.read_only.cmp(&a.read_only)));
        self.kept.dedup_by(|later, first| later.path == first.path);
        drop_inside(&mut self.kept, |k| &k.path, |k| k.read_only);
        let missing = self.missing.clone();
        // A directory above a placeholder is kept in place too, but the placeholder itself is
        // made later.
        self.kept.retain(|k| !missing.contains(&k.path));
        self.missing.sort();
        self.missing.dedup();
        self.texts.retain(|(path, _)| missing.contains(path));
        self.hidden.sort_by(|a, b| a.path.cmp(&b.path));
        self.hidden.dedup_by(|a, b| a.path == b.path);
        // A mask inside another mask could not be mounted (its parent is no longer reachable)
        // and is not needed.
        drop_inside(&mut self.hidden, |h| &h.path, |h| h.is_dir);
    }

    /// Keeps `placeholders` (the missing protected paths, now made) read-only like existing
    /// ones: nothing is missing any more.
    pub(crate) fn hold<'p>(&mut self, placeholders: impl Iterator<Item = (&'p Path, (u64, u64))>) {
        for (path, identity) in placeholders {
            self.kept.push(Kept {
                path: path.to_path_buf(),
                read_only: true,
                identity,
            });
        }
        self.missing.clear();
        self.settle();
    }

    /// Starts removing the work directories the caches' layers set aside (see
    /// `layer_work.rs`), beside the sandbox, once its new ones are mounted or being mounted.
    pub(crate) fn remove_stale_work(&self) -> crate::layer_work::Removal {
        crate::layer_work::Removal::start(self.caches.iter().map(|c| c.layer.clone()).collect())
    }

    /// The writable directory a path lies in, if any.
    pub(crate) fn writable_root_of(&self, path: &Path) -> Option<&Path> {
        self.writable.iter().find(|w| path.starts_with(w)).map(PathBuf::as_path)
    }

    /// The kept entries that are read-only.
    pub(crate) fn read_only(&self) -> impl Iterator<Item = &Path> {
        self.kept.iter().filter(|k| k.read_only).map(|k| k.path.as_path())
    }

    /// The kept entries that are only pinned (directories whose contents stay writable).
    pub(crate) fn pinned(&self) -> impl Iterator<Item = &Path> {
        self.kept.iter().filter(|k| !k.read_only).map(|k| k.path.as_path())
    }

    /// The workspace roots that are writable: only there does a protected path need keeping.
    fn writable_roots(&self) -> Vec<PathBuf> {
        self.roots
            .iter()
            .filter(|r| self.writable_root_of(r).is_some())
            .cloned()
            .collect()
    }

    fn protect(&mut self, environment: &Environment, written: &str, trees: &mut Trees) -> Result<(), SandboxError> {
        let parsed = parse(written)?;
        let text = environment
            .placeholders
            .iter()
            .find(|(w, _)| w == written)
            .map(|(_, t)| t.clone());
        match &parsed.base {
            Base::EachRoot => {
                for root in self.writable_roots() {
                    for inside in expand(&root, &parsed.components, written)? {
                        self.protect_under(
                            &root,
                            &inside,
                            parsed.subtree,
                            IfMissing::Placeholder,
                            text.as_deref(),
                            written,
                        )?;
                    }
                }
            }
            Base::Home | Base::Absolute | Base::Variable(_) => {
                if parsed.components.iter().any(|c| has_wildcard(c)) {
                    return Err(invalid(format!(
                        "protected path `{written}` has a wildcard outside the workspace roots"
                    )));
                }
                let Some(start) = start_of(environment, &parsed, written, &mut self.looks)? else {
                    return Ok(());
                };
                let relative: PathBuf = parsed.components.iter().skip_while(|c| **c == "..").collect();
                let Some(path) = self.resolved(&start.join(&relative)) else {
                    return Err(invalid(format!("protected path `{written}` cannot be resolved")));
                };
                // Outside every writable root a path is read-only already.
                if let Some(root) = self.writable_root_of(&path).map(Path::to_path_buf) {
                    let inside = path.strip_prefix(&root).map(Path::to_path_buf).unwrap_or_default();
                    self.protect_under(
                        &root,
                        &inside,
                        parsed.subtree,
                        IfMissing::Placeholder,
                        text.as_deref(),
                        written,
                    )?;
                }
            }
            Base::AnyDepth => {
                // Existing matches at any depth are kept; one that does not exist yet is only
                // kept from being created where it is also written without `**/` (the
                // directories it could appear in are not known in advance).
                let Some((first, rest)) = parsed.components.split_first() else {
                    return Ok(());
                };
                let matcher = matcher(first, written)?;
                for root in self.writable_roots() {
                    for found in trees.find_below(&root, &matcher, written)? {
                        // A link found on the way is not followed: what it points to inside a
                        // root is found where it is.
                        if !matches!(self.looks.at(&found), Look::Found { .. }) {
                            continue;
                        }
                        let at = found.strip_prefix(&root).map(Path::to_path_buf).unwrap_or_default();
                        for below in expand(&found, rest, written)? {
                            self.protect_under(&root, &at.join(below), parsed.subtree, IfMissing::Skip, None, written)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Walks `inside` from `root` one component at a time, never through a symbolic link,
    /// keeping the directories on the way in place.
    fn protect_under(
        &mut self,
        root: &Path,
        inside: &Path,
        subtree: bool,
        if_missing: IfMissing,
        text: Option<&str>,
        written: &str,
    ) -> Result<(), SandboxError> {
        let mut here = root.to_path_buf();
        let mut components = inside.components().peekable();
        let mut above = Vec::new();
        if components.peek().is_none() {
            // The root itself is protected: it is simply not writable.
            self.keep(here, true);
            return Ok(());
        }
        while let Some(component) = components.next() {
            let Component::Normal(name) = component else {
                continue;
            };
            here.push(name);
            match self.looks.at(&here) {
                Look::Missing => {
                    if if_missing == IfMissing::Skip {
                        return Ok(());
                    }
                    // INVARIANT (fail closed): a protected path that does not exist yet cannot be
                    // created: a placeholder stands in its place, read-only, while a command runs.
                    if components.peek().is_none() {
                        if let Some(text) = text {
                            self.texts.push((here.clone(), text.to_string()));
                        }
                    }
                    self.missing.push(here);
                    self.pin_all(above);
                    return Ok(());
                }
                Look::Link(_) => {
                    if if_missing == IfMissing::Skip {
                        return Ok(());
                    }
                    return Err(invalid(format!(
                        "protected path `{written}` passes through the symbolic link `{}`, which cannot be kept in place",
                        here.display()
                    )));
                }
                Look::Found { directory: false, .. } if components.peek().is_some() => {
                    // A file stands where the protected path's directory would be: keeping the
                    // file in place keeps the path from being created.
                    self.keep(here, true);
                    self.pin_all(above);
                    return Ok(());
                }
                Look::Found { directory, .. } => {
                    if components.peek().is_none() {
                        self.keep(here, subtree || !directory);
                        self.pin_all(above);
                        return Ok(());
                    }
                    above.push(here.clone());
                }
            }
        }
        Ok(())
    }

    /// Keeps the directories above a protected path in place: moving one would carry the
    /// protected path away and leave its name free.
    fn pin_all(&mut self, above: Vec<PathBuf>) {
        for dir in above {
            self.keep(dir, false);
        }
    }

    fn keep(&mut self, path: PathBuf, read_only: bool) {
        let identity = match self.looks.at(&path) {
            Look::Found { identity, .. } => Some(identity),
            Look::Link(_) => identity(&path),
            Look::Missing => None,
        };
        if let Some(identity) = identity {
            self.kept.push(Kept {
                path,
                read_only,
                identity,
            });
        }
    }

    fn hide(&mut self, environment: &Environment, written: &str, trees: &mut Trees) -> Result<(), SandboxError> {
        let parsed = parse(written)?;
        let climbs = parsed.components.iter().take_while(|c| **c == "..").count();
        let named: Vec<&str> = parsed.components.iter().skip(climbs).copied().collect();
        let Some((last, parents)) = named.split_last() else {
            // `~` alone (the whole home directory), or a variable's path itself.
            if let Some(path) = start_of(environment, &parsed, written, &mut self.looks)? {
                self.push_hidden(&path);
            }
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
            Base::Home | Base::Absolute | Base::Variable(_) => {
                if let Some(start) = start_of(environment, &parsed, written, &mut self.looks)? {
                    self.hide_in(&start.join(parent), last, &matcher);
                }
            }
            Base::EachRoot => {
                for root in self.roots.clone() {
                    self.hide_in(&root.join(&parent), last, &matcher);
                }
            }
            Base::AnyDepth => {
                if !parents.is_empty() {
                    return Err(invalid(format!(
                        "secret `{written}`: `**/` must be followed by one name"
                    )));
                }
                for root in self.roots.clone() {
                    for found in trees.find_below(&root, &matcher, written)? {
                        self.push_hidden(&found);
                    }
                }
            }
        }
        Ok(())
    }

    /// A tool cache outside the roots, layered for this project: one that does not exist, lies
    /// in a writable root already, is hidden, or whose path the kernel's option syntax cannot
    /// carry is left as it is (read-only).
    fn layer(&mut self, environment: &Environment, written: &str) -> Result<(), SandboxError> {
        let parsed = parse(written)?;
        if parsed.components.iter().any(|c| has_wildcard(c)) || matches!(parsed.base, Base::EachRoot | Base::AnyDepth) {
            return Err(invalid(format!(
                "cache `{written}`: a cache is one directory outside the roots (`~/p`, `/p`, `$NAME/p`)"
            )));
        }
        let Some(start) = start_of(environment, &parsed, written, &mut self.looks)? else {
            return Ok(());
        };
        let relative: PathBuf = parsed.components.iter().skip_while(|c| **c == "..").collect();
        let Some(path) = self.resolved(&start.join(relative)) else {
            return Ok(());
        };
        let plain = path.to_str().is_some_and(|p| !p.contains([',', ':', '\\']));
        if !self.is_dir(&path).unwrap_or(false)
            || !plain
            || self.writable_root_of(&path).is_some()
            || self
                .hidden
                .iter()
                .any(|h| path.starts_with(&h.path) || h.path.starts_with(&path))
        {
            return Ok(());
        }
        let Some(state) = sixfold_core::user_dirs::state_dir() else {
            return Ok(());
        };
        let base = state
            .join("caches")
            .join(fnv(self.roots.iter().map(|r| r.as_os_str())))
            .join(fnv(std::iter::once(path.as_os_str())));
        let Some((layer, held)) = take_layer(&base) else {
            return Ok(());
        };
        let made = std::fs::create_dir_all(&layer)
            .ok()
            .and_then(|()| crate::layer_work::upper(&layer))
            .and_then(|_| crate::layer_work::fresh(&layer));
        let Some(layer) = made.and_then(|_| self.resolved(&layer)) else {
            return Ok(());
        };
        if layer.to_str().is_some_and(|l| l.contains([',', ':', '\\'])) || layer.starts_with(&path) {
            return Ok(());
        }
        self.writable.push(layer.clone());
        self.writable.sort();
        self.writable = outermost(std::mem::take(&mut self.writable));
        self.caches.push(Cache { path, layer });
        self.held.push(std::sync::Arc::new(held));
        Ok(())
    }

    /// Hides every socket under a temp dir, a few levels down (ssh-agent's
    /// `/tmp/ssh-…/agent.…`, tmux's `/tmp/tmux-…/default`): a host process listens there.
    fn hide_sockets(&mut self, tmp: &Path, trees: &mut Trees) -> Result<(), SandboxError> {
        let Some(tmp) = self.resolved(tmp) else {
            return Ok(());
        };
        let Some(tree) = trees.sockets(&tmp).filter(|t| t.complete) else {
            // INVARIANT (fail closed): a temp dir too large to search is refused.
            return Err(invalid(format!(
                "more than {MAX_WALK_ENTRIES} entries under `{}` to search for sockets",
                tmp.display()
            )));
        };
        for (path, kind) in &tree.found {
            if *kind == Kind::Socket {
                self.hidden.push(Hidden {
                    path: path.clone(),
                    is_dir: false,
                });
            }
        }
        Ok(())
    }

    /// Hides the entries of `dir` named `last` (a literal name or a glob).
    fn hide_in(&mut self, dir: &Path, last: &str, matcher: &Name) {
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
        if self.looks.at(path) == Look::Missing {
            return;
        }
        let Some(resolved) = self.resolved(path) else {
            return;
        };
        // A dangling link: nothing to read.
        let Some(is_dir) = self.is_dir(&resolved) else {
            return;
        };
        self.hidden.push(Hidden { path: resolved, is_dir });
    }
}

/// A stable name for a set of paths (FNV-1a over their bytes): the same in every version.
pub(crate) fn fnv<'a>(paths: impl Iterator<Item = &'a std::ffi::OsStr>) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for path in paths {
        for byte in path.as_bytes().iter().chain(std::iter::once(&0u8)) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

/// How many levels under the temp dir sockets are looked for.
const SOCKET_DEPTH: usize = 3;

/// A path's device and inode, not following a final symbolic link.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// Where a path as written outside the roots starts: the home directory, `/`, or a variable's
/// path climbed as written (`None` when the variable is unset or not absolute).
fn start_of(
    environment: &Environment,
    parsed: &Written<'_>,
    written: &str,
    looks: &mut Looks,
) -> Result<Option<PathBuf>, SandboxError> {
    match &parsed.base {
        Base::Home => home(environment, written).map(Some),
        Base::Variable(name) => {
            let Some(value) = std::env::var_os(name).map(PathBuf::from) else {
                return Ok(None);
            };
            if !value.is_absolute() {
                return Ok(None);
            }
            let Some((mut start, _)) = resolve_path_looked(Path::new("/"), &value, looks) else {
                return Ok(None);
            };
            for _ in parsed.components.iter().take_while(|c| **c == "..") {
                start.pop();
            }
            // INVARIANT (fail closed): a variable never names `/` as a whole to hide or keep.
            Ok((start.parent().is_some()).then_some(start))
        }
        _ => Ok(Some(PathBuf::from("/"))),
    }
}

/// The relative paths under `dir` that `components` name: literal components as they are,
/// wildcard components matched against the entries that exist. A literal path is returned even
/// when it does not exist (it may get a placeholder); past a wildcard, only what exists.
fn expand(dir: &Path, components: &[&str], written: &str) -> Result<Vec<PathBuf>, SandboxError> {
    let mut found = vec![PathBuf::new()];
    for component in components {
        if !has_wildcard(component) {
            for path in &mut found {
                path.push(component);
            }
            continue;
        }
        let matcher = matcher(component, written)?;
        let mut next = Vec::new();
        for path in &found {
            let Ok(entries) = std::fs::read_dir(dir.join(path)) else {
                continue;
            };
            for entry in entries.flatten() {
                if matcher.is_match(entry.file_name()) {
                    next.push(path.join(entry.file_name()));
                }
            }
        }
        next.sort();
        found = next;
    }
    Ok(found)
}

/// One name as written, ready to match directory entries against.
#[derive(Debug)]
pub(crate) enum Name {
    /// A name without any character a glob gives a meaning to: matched as it is, with no glob
    /// compiled (most names an environment lists are such, and each glob costs a regex).
    Literal(std::ffi::OsString),
    /// `text*` (`.env*`, `id_rsa*`): a name that starts with the text, matched as its glob would
    /// be, again without compiling one.
    Prefix(Vec<u8>),
    /// `*text` (`*.pem`).
    Suffix(Vec<u8>),
    /// Any other glob (`[abc].key`).
    Glob(globset::GlobMatcher),
}

impl Name {
    /// Whether an entry's name matches.
    pub(crate) fn is_match(&self, name: impl AsRef<std::ffi::OsStr>) -> bool {
        use std::os::unix::ffi::OsStrExt;
        match self {
            Name::Literal(literal) => name.as_ref() == literal,
            Name::Prefix(text) => name.as_ref().as_bytes().starts_with(text),
            Name::Suffix(text) => name.as_ref().as_bytes().ends_with(text),
            Name::Glob(glob) => glob.is_match(name.as_ref()),
        }
    }
}

/// A matcher for one name as written (a literal, or a glob in a secret's last component).
pub(crate) fn matcher(name: &str, written: &str) -> Result<Name, SandboxError> {
    // Every character a glob (with `\` escapes and `{a,b}` alternatives) reads specially: a
    // name without them matches only itself, as its glob would.
    let special = |text: &str| text.contains(['*', '?', '[', ']', '{', '}', '\\']);
    if !special(name) && !name.is_empty() {
        return Ok(Name::Literal(name.into()));
    }
    if let Some(text) = name.strip_suffix('*').filter(|t| !special(t)) {
        return Ok(Name::Prefix(text.as_bytes().to_vec()));
    }
    if let Some(text) = name.strip_prefix('*').filter(|t| !special(t)) {
        return Ok(Name::Suffix(text.as_bytes().to_vec()));
    }
    Ok(Name::Glob(
        globset::GlobBuilder::new(name)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| invalid(format!("`{written}`: {e}")))?
            .compile_matcher(),
    ))
}

/// The trees walked for this layout: each root once for the names written `**/…` (and `.git`,
/// for the repositories a command makes), each temp dir once for sockets, each with its cache
/// (see `walk.rs`).
#[derive(Debug)]
pub(crate) struct Trees {
    names: Spec,
    sockets: Spec,
    /// The cache directory, when no command run in this layout could write it.
    cache: Option<PathBuf>,
    roots: Vec<(PathBuf, Tree)>,
    temp_dirs: Vec<(PathBuf, Tree)>,
}

impl Trees {
    fn new(environment: &Environment, writable: &[PathBuf]) -> Result<Trees, SandboxError> {
        let mut names = vec![".git".to_string()];
        for written in environment.protected.iter().chain(environment.secrets.iter()) {
            let parsed = parse(written)?;
            if let (Base::AnyDepth, Some(first)) = (&parsed.base, parsed.components.first()) {
                names.push((*first).to_string());
            }
        }
        // INVARIANT (fail closed): a cache a confined command could write is never read (it
        // could say a secret is not there): none inside a writable dir or a cache's layer.
        let layers = sixfold_core::user_dirs::state_dir().map(|s| s.join("caches"));
        let cache = crate::walk::cache_dir().filter(|dir| {
            !writable
                .iter()
                .chain(layers.iter())
                .any(|w| dir.starts_with(w) || w.starts_with(dir))
        });
        Ok(Trees {
            names: Spec::new(names, false, usize::MAX)?,
            sockets: Spec::new(Vec::new(), true, SOCKET_DEPTH)?,
            cache,
            roots: Vec::new(),
            temp_dirs: Vec::new(),
        })
    }

    fn file(&self, root: &Path, spec: &Spec) -> Option<PathBuf> {
        self.cache
            .as_deref()
            .map(|dir| crate::walk::cache_file(dir, root, spec))
    }

    /// The tree under `root`, walked the first time it is asked for.
    pub(crate) fn root(&mut self, root: &Path) -> Option<&Tree> {
        if let Some(at) = self.roots.iter().position(|(r, _)| r == root) {
            return self.roots.get(at).map(|(_, t)| t);
        }
        let cached = Tree::cached(self.file(root, &self.names).as_deref(), root, &self.names);
        let tree = Tree::walk(root, &self.names, cached);
        self.roots.push((root.to_path_buf(), tree));
        self.roots.last().map(|(_, t)| t)
    }

    /// The tree under `root`, when it was walked.
    pub(crate) fn walked(&self, root: &Path) -> Option<&Tree> {
        self.roots.iter().find(|(r, _)| r == root).map(|(_, t)| t)
    }

    /// Walks `root` again (after a command ran), reading only the directories that changed
    /// since the first walk.
    pub(crate) fn walk_again(&mut self, root: &Path) -> Option<&Tree> {
        let Some(at) = self.roots.iter().position(|(r, _)| r == root) else {
            return self.root(root);
        };
        let names = &self.names;
        let entry = self.roots.get_mut(at)?;
        entry.1 = Tree::walk(root, names, std::mem::take(&mut entry.1));
        Some(&entry.1)
    }

    fn sockets(&mut self, tmp: &Path) -> Option<&Tree> {
        if let Some(at) = self.temp_dirs.iter().position(|(t, _)| t == tmp) {
            return self.temp_dirs.get(at).map(|(_, t)| t);
        }
        let cached = Tree::cached(self.file(tmp, &self.sockets).as_deref(), tmp, &self.sockets);
        let tree = Tree::walk(tmp, &self.sockets, cached);
        self.temp_dirs.push((tmp.to_path_buf(), tree));
        self.temp_dirs.last().map(|(_, t)| t)
    }

    /// Keeps every walk for the next run.
    pub(crate) fn store(&self) {
        for (root, tree) in &self.roots {
            tree.store(self.file(root, &self.names).as_deref(), root, &self.names);
        }
        for (tmp, tree) in &self.temp_dirs {
            tree.store(self.file(tmp, &self.sockets).as_deref(), tmp, &self.sockets);
        }
    }

    /// Every entry under `root`, at any depth, whose name matches (not looked into further).
    fn find_below(&mut self, root: &Path, matcher: &Name, written: &str) -> Result<Vec<PathBuf>, SandboxError> {
        let Some(tree) = self.root(root).filter(|t| t.complete) else {
            // INVARIANT (fail closed): a tree too large to search is refused, not partly
            // searched.
            return Err(invalid(format!(
                "more than {MAX_WALK_ENTRIES} entries under `{}` to search for `{written}`",
                root.display()
            )));
        };
        let mut found: Vec<PathBuf> = Vec::new();
        for (path, _) in &tree.found {
            if found.last().is_some_and(|f| path.starts_with(f)) {
                continue;
            }
            if path.file_name().is_some_and(|n| matcher.is_match(n)) {
                found.push(path.clone());
            }
        }
        Ok(found)
    }
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
fn resolve_dirs<'a>(dirs: impl Iterator<Item = &'a PathBuf>, looks: &mut Looks) -> Result<Vec<PathBuf>, SandboxError> {
    let mut resolved_dirs = Vec::new();
    for dir in dirs {
        if !dir.is_absolute() {
            return Err(invalid(format!(
                "writable root `{}` is not an absolute path",
                dir.display()
            )));
        }
        let Some((resolved, directory)) = resolve_path_looked(Path::new("/"), dir, looks) else {
            return Err(invalid(format!("writable root `{}` cannot be resolved", dir.display())));
        };
        if !directory.unwrap_or_else(|| resolved.is_dir()) {
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

/// Drops each entry that lies strictly inside an entry `covers` (what covers it already does
/// the job, and a mount below another could not be made).
fn drop_inside<T>(list: &mut Vec<T>, path: impl Fn(&T) -> &Path, covers: impl Fn(&T) -> bool) {
    let covering: Vec<PathBuf> = list
        .iter()
        .filter(|e| covers(e))
        .map(|e| path(e).to_path_buf())
        .collect();
    list.retain(|e| {
        let p = path(e);
        !covering.iter().any(|c| p != c.as_path() && p.starts_with(c))
    });
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
                ".git".into(),
                ".git/hooks/**".into(),
                ".git/config".into(),
                ".mcp.json".into(),
                ".claude/**".into(),
            ],
            secrets: vec!["**/.env*".into(), "~/.ssh".into()],
            network: Network::Cut,
            home: root.join("home"),
            ..Environment::default()
        }
    }

    /// What is hidden under `root` (a host socket another process has under /tmp meanwhile is
    /// hidden too, and is not this test's).
    fn hidden_under(layout: &Layout, root: &Path) -> Vec<Hidden> {
        layout
            .hidden
            .iter()
            .filter(|h| h.path.starts_with(root))
            .cloned()
            .collect()
    }

    fn read_only(layout: &Layout) -> Vec<PathBuf> {
        layout.read_only().map(Path::to_path_buf).collect()
    }

    fn pinned(layout: &Layout) -> Vec<PathBuf> {
        layout.pinned().map(Path::to_path_buf).collect()
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
            read_only(&layout),
            vec![root.join(".git/config"), root.join(".git/hooks")]
        );
        // `.git` itself is kept in place; its objects, refs and index stay writable.
        assert_eq!(pinned(&layout), vec![root.join(".git")]);
        assert_eq!(layout.missing, vec![root.join(".claude"), root.join(".mcp.json")]);
    }

    #[test]
    fn the_directories_above_a_protected_path_are_kept_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/modules/sub/hooks")).unwrap();
        std::fs::create_dir_all(root.join("vendor/lib/.git")).unwrap();
        std::fs::write(root.join(".git/modules/sub/config"), "").unwrap();
        let mut env = environment(&root);
        env.protected = vec![
            ".git/modules/*/config".into(),
            ".git/modules/*/hooks/**".into(),
            "**/.git".into(),
            "**/.git/config".into(),
        ];
        let layout = Layout::resolve(&env).unwrap();
        assert_eq!(
            read_only(&layout),
            vec![
                root.join(".git/modules/sub/config"),
                root.join(".git/modules/sub/hooks")
            ]
        );
        assert_eq!(
            pinned(&layout),
            vec![
                root.join(".git"),
                root.join(".git/modules"),
                root.join(".git/modules/sub"),
                root.join("vendor"),
                root.join("vendor/lib"),
                root.join("vendor/lib/.git"),
            ]
        );
        // A nested repository's missing config is not made (only what exists at any depth).
        assert!(layout.missing.is_empty(), "{layout:?}");
    }

    #[test]
    fn a_placeholder_holds_the_text_the_environment_gives_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        let mut env = environment(&root);
        env.protected = vec![".git/commondir".into()];
        env.placeholders = vec![(".git/commondir".into(), ".\n".into())];
        let layout = Layout::resolve(&env).unwrap();
        assert_eq!(layout.missing, vec![root.join(".git/commondir")]);
        assert_eq!(layout.texts, vec![(root.join(".git/commondir"), ".\n".to_string())]);
    }

    #[test]
    fn a_variable_names_a_directory_to_hide() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("agent")).unwrap();
        let mut env = environment(&root);
        env.secrets = vec!["$SIXFOLD_TEST_UNSET_VARIABLE/..".into()];
        // An unset variable hides nothing.
        std::env::set_var("SIXFOLD_TEST_LAYOUT_SOCK", root.join("agent/sock"));
        env.secrets.push("$SIXFOLD_TEST_LAYOUT_SOCK/..".into());
        let layout = Layout::resolve(&env).unwrap();
        assert_eq!(
            hidden_under(&layout, &root),
            vec![Hidden {
                path: root.join("agent"),
                is_dir: true
            }]
        );
    }

    #[test]
    fn a_git_file_is_kept_in_place_so_its_hooks_cannot_appear() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".git"), "gitdir: /elsewhere\n").unwrap();
        let layout = Layout::resolve(&environment(&root)).unwrap();
        assert!(read_only(&layout).contains(&root.join(".git")), "{layout:?}");
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
        let hidden = hidden_under(&layout, &root);
        let hidden: Vec<&Path> = hidden.iter().map(|h| h.path.as_path()).collect();
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
    fn a_wildcard_in_a_protected_path_outside_the_roots_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut env = environment(dir.path());
        env.protected = vec!["~/.claude/*".into()];
        let error = Layout::resolve(&env).unwrap_err().to_string();
        assert!(error.contains("has a wildcard"), "{error}");
    }

    #[test]
    fn a_protected_name_at_any_depth_keeps_the_existing_ones_read_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b/.sixfold")).unwrap();
        let mut env = environment(&root);
        env.protected = vec![".sixfold/**".into(), "**/.sixfold/**".into()];
        let layout = Layout::resolve(&env).unwrap();
        assert_eq!(read_only(&layout), vec![root.join("a/b/.sixfold")]);
        assert_eq!(pinned(&layout), vec![root.join("a"), root.join("a/b")]);
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
        assert!(layout.kept.is_empty() && layout.missing.is_empty());
        assert_eq!(
            hidden_under(&layout, &root),
            vec![Hidden {
                path: root.join(".env"),
                is_dir: false
            }]
        );
    }

    #[test]
    fn a_literal_a_prefix_and_a_suffix_match_as_their_globs_would_without_compiling_one() {
        let glob = |name: &str| {
            globset::GlobBuilder::new(name)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .unwrap()
                .compile_matcher()
        };
        let entries = [
            ".ssh",
            ".SSH",
            ".ssh2",
            "x.ssh",
            ".env",
            ".env.local",
            "a.pem",
            ".pem",
            "a.pem.bak",
            "id_rsa",
            "id_rsa.pub",
            "xid_rsa",
            "",
            "a{b",
            "ab",
            "a\\b",
            "[x]",
            "x",
        ];
        for name in [
            ".ssh",
            ".git",
            "credentials.json",
            ".env*",
            "*.pem",
            "id_rsa*",
            "*",
            "*.*",
            "a*b",
            "[.]env*",
            "a{b,c}",
            "a\\b",
            "[x]",
            "x",
        ] {
            let ours = matcher(name, name).unwrap();
            assert_eq!(
                matches!(ours, Name::Literal(_)),
                !name.contains(['*', '[', '{', '\\']),
                "{name}"
            );
            assert_eq!(
                matches!(ours, Name::Prefix(_) | Name::Suffix(_)),
                [".env*", "*.pem", "id_rsa*", "*"].contains(&name),
                "{name}"
            );
            for entry in entries {
                assert_eq!(
                    ours.is_match(entry),
                    glob(name).is_match(entry),
                    "{name} against {entry}"
                );
            }
        }
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
