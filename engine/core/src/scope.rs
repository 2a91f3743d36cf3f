//! Scope sets and their resolution against the workspace roots.
//!
//! A scope set as written holds named scopes (`workspace`, a root's name, `tmp`, `*`) and paths.
//! Resolution turns it into [`Scopes`]: either everything (`*`) or a set of absolute paths with
//! `..` normalised and existing symlinks followed, ordered by containment. That order, with its
//! join and meet, is what the effect profile's partial order is built from.

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one path may pass through before it is treated as unknown (as `realpath` does).
const MAX_SYMLINK_HOPS: usize = 40;

/// A scope set after resolution: everything, or an antichain of absolute paths
/// (no path in it lies inside another).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scopes {
    /// `*`: unknown, so possibly everything.
    Everything,
    /// These paths and everything below them.
    Paths(BTreeSet<PathBuf>),
}

impl Default for Scopes {
    fn default() -> Self {
        Scopes::Paths(BTreeSet::new())
    }
}

impl Scopes {
    /// The empty scope set: touches nothing.
    pub fn none() -> Scopes {
        Scopes::default()
    }

    /// A scope set from paths, normalised so that no path lies inside another.
    pub fn from_paths<I: IntoIterator<Item = PathBuf>>(paths: I) -> Scopes {
        let mut sorted: Vec<PathBuf> = paths.into_iter().collect();
        sorted.sort();
        sorted.dedup();
        let mut kept: BTreeSet<PathBuf> = BTreeSet::new();
        // Sorted order puts an ancestor before its descendants.
        for path in sorted {
            if !kept.iter().any(|k| path.starts_with(k)) {
                kept.insert(path);
            }
        }
        Scopes::Paths(kept)
    }

    /// True when this set touches nothing.
    pub fn is_empty(&self) -> bool {
        matches!(self, Scopes::Paths(p) if p.is_empty())
    }

    /// The partial order: every place in `self` lies inside a place in `other`.
    pub fn le(&self, other: &Scopes) -> bool {
        match (self, other) {
            (_, Scopes::Everything) => true,
            (Scopes::Everything, Scopes::Paths(_)) => false,
            (Scopes::Paths(mine), Scopes::Paths(theirs)) => {
                mine.iter().all(|path| theirs.iter().any(|t| path.starts_with(t)))
            }
        }
    }

    /// The least upper bound: the union.
    pub fn join(&self, other: &Scopes) -> Scopes {
        match (self, other) {
            (Scopes::Everything, _) | (_, Scopes::Everything) => Scopes::Everything,
            (Scopes::Paths(a), Scopes::Paths(b)) => Scopes::from_paths(a.iter().chain(b).cloned()),
        }
    }

    /// The greatest lower bound: the places that lie inside both.
    pub fn meet(&self, other: &Scopes) -> Scopes {
        match (self, other) {
            (Scopes::Everything, x) | (x, Scopes::Everything) => x.clone(),
            (Scopes::Paths(a), Scopes::Paths(b)) => {
                let mut inside = Vec::new();
                for x in a {
                    for y in b {
                        if x.starts_with(y) {
                            inside.push(x.clone());
                        } else if y.starts_with(x) {
                            inside.push(y.clone());
                        }
                    }
                }
                Scopes::from_paths(inside)
            }
        }
    }
}

/// A workspace root: a name and a resolved absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The root's name (the primary root is called `workspace` unless named).
    pub name: String,
    /// The resolved absolute path.
    pub path: PathBuf,
}

/// Where a resolved place lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// Inside a workspace root; `relative` is the path below the root (empty for the root itself).
    Root {
        /// The root's name.
        name: String,
        /// The path below the root, `/`-separated.
        relative: String,
    },
    /// Inside the system temp dir (and in no root).
    Tmp,
    /// A known path in no root and not in the temp dir.
    Outside,
    /// `*`: nobody knows where.
    Unknown,
}

impl Place {
    /// The name used for this class of place in rules and output.
    pub fn class(&self) -> &'static str {
        match self {
            Place::Root { .. } => "workspace",
            Place::Tmp => "tmp",
            Place::Outside => "outside",
            Place::Unknown => "unknown",
        }
    }
}

/// The roots a step's paths are judged against, with the temp dirs and the home directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    roots: Vec<Root>,
    tmp: Vec<PathBuf>,
    home: Option<PathBuf>,
}

impl Workspace {
    /// A workspace with one primary root, named `workspace`, no temp dir and no home.
    /// The path is resolved (made absolute against `/`, `..` normalised, symlinks followed).
    pub fn new(primary: impl AsRef<Path>) -> Workspace {
        let path = resolve_path(Path::new("/"), primary.as_ref()).unwrap_or_else(|| primary.as_ref().to_path_buf());
        Workspace {
            roots: vec![Root {
                name: "workspace".to_string(),
                path,
            }],
            tmp: Vec::new(),
            home: None,
        }
    }

    /// The workspace with the temp dirs and home directory of this process's environment:
    /// `/tmp` and `$TMPDIR` where set, `$HOME` where set.
    pub fn with_process_environment(mut self) -> Workspace {
        let mut tmp = vec![PathBuf::from("/tmp")];
        if let Some(dir) = std::env::var_os("TMPDIR").filter(|d| !d.is_empty()) {
            tmp.push(PathBuf::from(dir));
        }
        for dir in tmp {
            self = self.with_tmp(dir);
        }
        if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            self = self.with_home(PathBuf::from(home));
        }
        self
    }

    /// Adds a named root. A root named like an existing one replaces it.
    pub fn with_root(mut self, name: &str, path: impl AsRef<Path>) -> Workspace {
        let path = resolve_path(self.primary(), path.as_ref()).unwrap_or_else(|| path.as_ref().to_path_buf());
        self.roots.retain(|r| r.name != name);
        self.roots.push(Root {
            name: name.to_string(),
            path,
        });
        self
    }

    /// Adds a temp dir.
    pub fn with_tmp(mut self, dir: impl AsRef<Path>) -> Workspace {
        if let Some(path) = resolve_path(Path::new("/"), dir.as_ref()) {
            if !self.tmp.contains(&path) {
                self.tmp.push(path);
            }
        }
        self
    }

    /// Sets the home directory (where `~` points).
    pub fn with_home(mut self, dir: impl AsRef<Path>) -> Workspace {
        self.home = resolve_path(Path::new("/"), dir.as_ref());
        self
    }

    /// The primary root's path, where relative paths resolve.
    pub fn primary(&self) -> &Path {
        self.roots.first().map(|r| r.path.as_path()).unwrap_or(Path::new("/"))
    }

    /// The roots, primary first.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// The home directory, when known.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// The temp dirs.
    pub fn tmp(&self) -> &[PathBuf] {
        &self.tmp
    }

    /// Resolves a scope set as written: `*` is everything; `workspace` is every root; a root's
    /// name is that root; `tmp` is the temp dirs; anything with a `/`, a `.` or a leading `~` is
    /// a path (relative paths resolve against the primary root). A bare word that names no scope
    /// is unknown, so it resolves to everything: a typo never narrows what a step touches.
    pub fn resolve(&self, written: &[String]) -> Scopes {
        let mut paths = Vec::new();
        for scope in written {
            match self.resolve_one(scope) {
                Some(mut found) => paths.append(&mut found),
                None => return Scopes::Everything,
            }
        }
        Scopes::from_paths(paths)
    }

    /// One scope entry resolved, each path with whether resolution found it an existing
    /// directory (`None`: not looked at, as for the roots and temp dirs a name stands for).
    /// `None` for everything (`*`, a bare word that names no scope).
    pub(crate) fn resolve_found(&self, scope: &str) -> Option<Vec<(PathBuf, Option<bool>)>> {
        self.resolve_looked(scope, &mut Looks::default())
    }

    /// [`Workspace::resolve_found`], with the looks of the step's other places.
    pub(crate) fn resolve_looked(&self, scope: &str, looks: &mut Looks) -> Option<Vec<(PathBuf, Option<bool>)>> {
        let named = |paths: &mut dyn Iterator<Item = &PathBuf>| Some(paths.map(|p| (p.clone(), None)).collect());
        match scope {
            "*" => None,
            "workspace" => named(&mut self.roots.iter().map(|r| &r.path)),
            "tmp" => named(&mut self.tmp.iter()),
            _ => {
                if let Some(root) = self.roots.iter().find(|r| r.name == scope) {
                    return named(&mut std::iter::once(&root.path));
                }
                let looks_like_path = scope.contains('/') || scope.contains('.') || scope.starts_with('~');
                if !looks_like_path || scope.contains('\0') {
                    return None;
                }
                let expanded = self.expand_home(scope)?;
                resolve_path_looked(self.primary(), &expanded, looks).map(|found| vec![found])
            }
        }
    }

    fn resolve_one(&self, scope: &str) -> Option<Vec<PathBuf>> {
        self.resolve_found(scope)
            .map(|found| found.into_iter().map(|(path, _)| path).collect())
    }

    fn expand_home(&self, scope: &str) -> Option<PathBuf> {
        if scope == "~" {
            return self.home.clone();
        }
        match scope.strip_prefix("~/") {
            Some(rest) => self.home.as_ref().map(|h| h.join(rest)),
            None => Some(PathBuf::from(scope)),
        }
    }

    /// Where a resolved path lies. Inside a root wins over the temp dir, so a workspace that
    /// itself lives under `/tmp` is still the workspace.
    pub fn place(&self, path: &Path) -> Place {
        // The longest matching root decides, so a named root inside the primary one is itself.
        let mut best: Option<&Root> = None;
        for root in &self.roots {
            if path.starts_with(&root.path)
                && best.is_none_or(|b| root.path.as_os_str().len() > b.path.as_os_str().len())
            {
                best = Some(root);
            }
        }
        if let Some(root) = best {
            let relative = path
                .strip_prefix(&root.path)
                .map(|r| r.to_string_lossy().into_owned())
                .unwrap_or_default();
            return Place::Root {
                name: root.name.clone(),
                relative,
            };
        }
        if self.tmp.iter().any(|t| path.starts_with(t)) {
            Place::Tmp
        } else {
            Place::Outside
        }
    }
}

/// Resolves `path` the way `realpath -m` does: relative to `base`, `.` dropped, existing symlinks
/// followed (relative targets from the link's directory), `..` applied to what the path has
/// become. Components that do not exist are taken as written. `None` when the path passes through
/// more than `MAX_SYMLINK_HOPS` (40) symlinks or a link cannot be read.
pub fn resolve_path(base: &Path, path: &Path) -> Option<PathBuf> {
    resolve_path_found(base, path).map(|(resolved, _)| resolved)
}

/// [`resolve_path`], with what its last look at the disk said of the resolved path: whether it
/// is an existing directory, `None` where the last step was no look at it (a trailing `..`, the
/// root), so a caller that needs to know looks itself.
pub(crate) fn resolve_path_found(base: &Path, path: &Path) -> Option<(PathBuf, Option<bool>)> {
    resolve_path_looked(base, path, &mut Looks::default())
}

/// What the disk said of the places one resolution looked at, so a component several of its
/// places share (the workspace root, `/tmp`) is looked at once. Kept for one step (or one
/// sandbox layout) only: a look kept longer could say what the disk no longer holds.
#[derive(Debug, Default, Clone)]
pub struct Looks {
    seen: HashMap<PathBuf, Look>,
}

/// One `lstat` (and, for a link, its `readlink`), as resolution reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Look {
    /// A symlink, with its target; `None` when the target could not be read.
    Link(Option<PathBuf>),
    /// Exists.
    Found {
        /// Whether it is a directory.
        directory: bool,
        /// Its device and inode.
        identity: (u64, u64),
    },
    /// Could not be looked at (missing, no permission, below a file).
    Missing,
}

impl Looks {
    /// The look at `path`: the one already made, else a new one.
    pub fn at(&mut self, path: &Path) -> Look {
        if let Some(look) = self.seen.get(path) {
            return look.clone();
        }
        let look = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => Look::Link(std::fs::read_link(path).ok()),
            Ok(meta) => Look::Found {
                directory: meta.is_dir(),
                identity: (meta.dev(), meta.ino()),
            },
            Err(_) => Look::Missing,
        };
        self.seen.insert(path.to_path_buf(), look.clone());
        look
    }
}

/// [`resolve_path`], with the looks of the step's other places (or of one sandbox layout), and
/// what the last look said of the resolved path: whether it is an existing directory, `None`
/// where the last step was no look at it (a trailing `..`, the root).
pub fn resolve_path_looked(base: &Path, path: &Path, looks: &mut Looks) -> Option<(PathBuf, Option<bool>)> {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut pending: Vec<OsString> = Vec::new();
    push_components(&mut pending, &joined);
    let mut resolved = PathBuf::from("/");
    let mut hops = 0;
    // Once a component is missing nothing below it can be a symlink, so no more syscalls.
    let mut exists = true;
    // Whether `resolved` is an existing directory, as the last look said (`None`: not looked at).
    let mut directory = None;
    while let Some(part) = pending.pop() {
        if part == ".." {
            resolved.pop();
            // Back in a directory that may exist: what follows must be looked up again, or
            // `missing/../link` would skip the link.
            exists = true;
            directory = None;
            continue;
        }
        resolved.push(&part);
        if exists {
            match looks.at(&resolved) {
                Look::Link(target) => {
                    hops += 1;
                    if hops > MAX_SYMLINK_HOPS {
                        return None;
                    }
                    let target = target?;
                    resolved.pop();
                    if target.is_absolute() {
                        resolved = PathBuf::from("/");
                    }
                    directory = None;
                    push_components(&mut pending, &target);
                    continue;
                }
                Look::Found { directory: d, .. } => directory = Some(d),
                Look::Missing => exists = false,
            }
        }
        // Below a component that could not be looked at nothing can be looked at either (not
        // found, not a directory, no permission): not a directory, as `Path::is_dir` would say.
        if !exists {
            directory = Some(false);
        }
    }
    Some((resolved, directory))
}

/// Pushes the normal and `..` components of `path` onto a stack so that the first is on top.
fn push_components(stack: &mut Vec<OsString>, path: &Path) {
    let parts: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect();
    stack.extend(parts.into_iter().rev());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What resolution says of a place being a directory is what a look at the disk says:
    /// through links, `..`, missing parts and files; where it did not look, it says so.
    #[test]
    fn resolution_knows_what_a_place_is() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("d/e")).unwrap();
        std::fs::write(root.join("d/f.rs"), "").unwrap();
        std::os::unix::fs::symlink(root.join("d"), root.join("to-dir")).unwrap();
        std::os::unix::fs::symlink(root.join("d/f.rs"), root.join("to-file")).unwrap();
        std::os::unix::fs::symlink("d/e", root.join("rel-dir")).unwrap();
        let ws = Workspace::new(&root);
        for written in [
            "./d",
            "./d/e",
            "./d/f.rs",
            "./to-dir",
            "./to-file",
            "./rel-dir",
            "./to-dir/e",
            "./d/f.rs/x",
            "./missing",
            "./missing/deeper",
            "./d/e/..",
            "./d/missing/..",
            "./to-dir/..",
            ".",
        ] {
            let found = ws.resolve_found(written).unwrap();
            let [(path, directory)] = found.as_slice() else {
                panic!("{written}: {found:?}")
            };
            assert_eq!(
                Some(path.clone()),
                ws.resolve_one(written).and_then(|p| p.first().cloned()),
                "{written}"
            );
            // A place resolution did look at agrees with the disk; one it did not is left to the caller.
            if let Some(directory) = directory {
                assert_eq!(*directory, path.is_dir(), "{written}");
            }
        }
        // Looked at where the last part is looked at: a directory, a file, through a link, missing.
        let directory = |w: &str| ws.resolve_found(w).unwrap()[0].1;
        assert_eq!(directory("./d"), Some(true));
        assert_eq!(directory("./to-dir"), Some(true));
        assert_eq!(directory("./rel-dir"), Some(true));
        assert_eq!(directory("./to-file"), Some(false));
        assert_eq!(directory("./missing/deeper"), Some(false));
        // A trailing `..` and the names of scopes are not looked at.
        assert_eq!(directory("./d/e/.."), None);
        assert_eq!(ws.resolve_found("workspace").unwrap()[0].1, None);
        assert!(ws.resolve_found("*").is_none());
    }

    /// A step's places resolved with the looks they share say what each resolved alone says:
    /// through links (relative and absolute), `..`, missing parts, files and a loop.
    #[test]
    fn shared_looks_resolve_as_each_alone() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("d/e")).unwrap();
        std::fs::write(root.join("d/f.rs"), "").unwrap();
        std::os::unix::fs::symlink(root.join("d"), root.join("to-dir")).unwrap();
        std::os::unix::fs::symlink("d/e", root.join("rel-dir")).unwrap();
        std::os::unix::fs::symlink(root.join("b"), root.join("a")).unwrap();
        std::os::unix::fs::symlink(root.join("a"), root.join("b")).unwrap();
        let ws = Workspace::new(&root);
        let written = [
            "./d/e",
            "./to-dir/e",
            "./rel-dir/..",
            "./d/f.rs/x",
            "./missing/../to-dir",
            "./a/x",
            "./to-dir/f.rs",
            "./rel-dir",
            "/tmp",
            ".",
        ];
        let mut looks = Looks::default();
        for w in written.iter().chain(written.iter().rev()) {
            assert_eq!(ws.resolve_looked(w, &mut looks), ws.resolve_found(w), "{w}");
        }
    }

    fn paths(list: &[&str]) -> Scopes {
        Scopes::from_paths(list.iter().map(PathBuf::from))
    }

    #[test]
    fn dot_dot_is_normalised() {
        let ws = Workspace::new("/nonexistent-root/ws");
        assert_eq!(
            ws.resolve(&["../other/x".into()]),
            paths(&["/nonexistent-root/other/x"])
        );
        assert_eq!(ws.place(Path::new("/nonexistent-root/other/x")), Place::Outside);
        assert_eq!(ws.resolve(&["./a/../b".into()]), paths(&["/nonexistent-root/ws/b"]));
    }

    #[test]
    fn a_symlink_out_of_the_workspace_is_followed() {
        let outside = tempfile::tempdir().unwrap();
        let ws_dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), ws_dir.path().join("escape")).unwrap();
        let ws = Workspace::new(ws_dir.path());
        let resolved = ws.resolve(&["escape/secret.txt".into()]);
        let Scopes::Paths(set) = &resolved else {
            panic!("expected paths")
        };
        let only = set.iter().next().unwrap();
        assert!(only.starts_with(outside.path().canonicalize().unwrap()));
        assert_eq!(ws.place(only), Place::Outside);
    }

    #[test]
    fn a_missing_component_then_dot_dot_still_follows_symlinks() {
        let outside = tempfile::tempdir().unwrap();
        let ws_dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), ws_dir.path().join("link")).unwrap();
        let ws = Workspace::new(ws_dir.path());
        let via_missing = ws.resolve(&["./nope/../link/hosts".into()]);
        assert_eq!(via_missing, ws.resolve(&["./link/hosts".into()]));
        let Scopes::Paths(set) = via_missing else {
            panic!("expected paths")
        };
        assert_eq!(ws.place(set.iter().next().unwrap()), Place::Outside);
    }

    #[test]
    fn a_symlink_loop_is_unknown() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path().join("b"), dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("a"), dir.path().join("b")).unwrap();
        let ws = Workspace::new(dir.path());
        assert_eq!(ws.resolve(&["a/x".into()]), Scopes::Everything);
    }

    #[test]
    fn named_scopes_and_unknown_words() {
        let ws = Workspace::new("/w")
            .with_root("docs", "/d")
            .with_tmp("/t")
            .with_home("/h");
        assert_eq!(ws.resolve(&["workspace".into()]), paths(&["/w", "/d"]));
        assert_eq!(ws.resolve(&["docs".into()]), paths(&["/d"]));
        assert_eq!(ws.resolve(&["tmp".into()]), paths(&["/t"]));
        assert_eq!(ws.resolve(&["~/.ssh/id_rsa".into()]), paths(&["/h/.ssh/id_rsa"]));
        assert_eq!(ws.resolve(&["*".into()]), Scopes::Everything);
        assert_eq!(ws.resolve(&["wrokspace".into()]), Scopes::Everything);
        assert_eq!(ws.resolve(&[]), Scopes::none());
    }

    #[test]
    fn the_deepest_root_decides_and_roots_beat_tmp() {
        let ws = Workspace::new("/tmp/w")
            .with_root("inner", "/tmp/w/sub")
            .with_tmp("/tmp");
        assert_eq!(
            ws.place(Path::new("/tmp/w/sub/f")),
            Place::Root {
                name: "inner".into(),
                relative: "f".into()
            }
        );
        assert_eq!(ws.place(Path::new("/tmp/w/g")).class(), "workspace");
        assert_eq!(ws.place(Path::new("/tmp/x")), Place::Tmp);
    }

    fn arb_path() -> impl Strategy<Value = PathBuf> {
        prop::collection::vec(prop::sample::select(vec!["a", "b", "c"]), 0..4)
            .prop_map(|parts| PathBuf::from("/").join(parts.join("/")))
    }

    fn arb_scopes() -> impl Strategy<Value = Scopes> {
        prop_oneof![
            1 => Just(Scopes::Everything),
            6 => prop::collection::vec(arb_path(), 0..4).prop_map(Scopes::from_paths),
        ]
    }

    proptest! {
        #[test]
        fn order_is_reflexive(a in arb_scopes()) {
            prop_assert!(a.le(&a));
        }

        #[test]
        fn order_is_antisymmetric(a in arb_scopes(), b in arb_scopes()) {
            if a.le(&b) && b.le(&a) {
                prop_assert_eq!(a, b);
            }
        }

        #[test]
        fn order_is_transitive(a in arb_scopes(), b in arb_scopes(), c in arb_scopes()) {
            if a.le(&b) && b.le(&c) {
                prop_assert!(a.le(&c));
            }
        }

        #[test]
        fn join_is_the_least_upper_bound(a in arb_scopes(), b in arb_scopes(), c in arb_scopes()) {
            let j = a.join(&b);
            prop_assert!(a.le(&j) && b.le(&j));
            if a.le(&c) && b.le(&c) {
                prop_assert!(j.le(&c));
            }
        }

        #[test]
        fn meet_is_the_greatest_lower_bound(a in arb_scopes(), b in arb_scopes(), c in arb_scopes()) {
            let m = a.meet(&b);
            prop_assert!(m.le(&a) && m.le(&b));
            if c.le(&a) && c.le(&b) {
                prop_assert!(c.le(&m));
            }
        }
    }
}
