//! Judgement: a mode's ceiling first, then its rules, strictest wins, its default where nothing
//! matches. A rule that errors refuses: it never makes a judgement more permissive.

use crate::decision::{DecidedBy, Decision, Judgement};
use crate::effects::{EffectFields, Effects, Flags, Touch};
use crate::scope::{Place, Scopes, Workspace};
use crate::script::{to_dynamic, Script, ScriptHost};
use aho_corasick::{AhoCorasick, AhoCorasickKind};
use globset::{Candidate, Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use rhai::Dynamic;
use smallvec::SmallVec;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// What a judgement is made in: the workspace and anything else the caller knows
/// (handed to scripts as `context`).
#[derive(Debug, Clone)]
pub struct Context {
    /// The roots, temp dirs and home directory paths are judged against.
    pub workspace: Workspace,
    /// Extra facts for scripts (e.g. the session, counts).
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl Context {
    /// A context with nothing but a workspace.
    pub fn new(workspace: Workspace) -> Context {
        Context {
            workspace,
            extra: serde_json::Map::new(),
        }
    }

    /// The workspace examples are judged in: primary root `/workspace`, home `/home/user`,
    /// temp dir `/tmp`.
    pub fn example() -> Context {
        Context::new(Workspace::new("/workspace").with_home("/home/user").with_tmp("/tmp"))
    }

    fn to_dynamic(&self, mode: &str) -> rhai::Map {
        let mut map = rhai::Map::new();
        for (k, v) in &self.extra {
            map.insert(k.as_str().into(), to_dynamic(v));
        }
        map.insert("mode".into(), Dynamic::from(mode.to_string()));
        let roots: rhai::Array = self
            .workspace
            .roots()
            .iter()
            .map(|r| {
                let mut m = rhai::Map::new();
                m.insert("name".into(), Dynamic::from(r.name.clone()));
                m.insert("path".into(), Dynamic::from(r.path.to_string_lossy().into_owned()));
                Dynamic::from_map(m)
            })
            .collect();
        map.insert("roots".into(), Dynamic::from_array(roots));
        let tmp: rhai::Array = self
            .workspace
            .tmp()
            .iter()
            .map(|t| Dynamic::from(t.to_string_lossy().into_owned()))
            .collect();
        map.insert("tmp".into(), Dynamic::from_array(tmp));
        let home = self
            .workspace
            .home()
            .map(|h| Dynamic::from(h.to_string_lossy().into_owned()));
        map.insert("home".into(), home.unwrap_or(Dynamic::UNIT));
        map
    }
}

/// A named set of path globs: checked when loaded (a bad glob is reported then), read into its
/// parts ([`Built`]) only when a place a step touches may reach it, and compiled into matchers
/// only when a path first needs them (see [`Globs`]). A mode of a thousand rules on paths a step
/// does not touch builds none of them.
#[derive(Debug, Clone)]
pub(crate) struct PathSet {
    /// Its name and each glob as written, with the length of its literal start (`/some/dir` of
    /// `/some/dir/**`), read once at load for [`PathSet::may_reach`].
    written: Written,
    /// Boxed: a set left unbuilt (most of a large mode's) then holds a pointer, not the parts.
    built: OnceLock<Box<Built>>,
}

/// A path set as written: a glob in a rule, named by itself and held without a vector (a large
/// mode's rules each name one, and each allocation counts there), or a named set's globs.
#[derive(Debug, Clone)]
enum Written {
    Inline { glob: String, literal: usize },
    Named { name: String, globs: Vec<(String, usize)> },
}

impl Written {
    /// Each glob with the length of its literal start.
    fn iter(&self) -> impl Iterator<Item = (&str, usize)> {
        let (one, many) = match self {
            Written::Inline { glob, literal } => (Some((glob.as_str(), *literal)), &[][..]),
            Written::Named { globs, .. } => (None, globs.as_slice()),
        };
        one.into_iter()
            .chain(many.iter().map(|(glob, end)| (glob.as_str(), *end)))
    }
}

/// A path set's globs read into what its matching uses.
#[derive(Debug, Clone)]
struct Built {
    home: Globs,
    absolute: Globs,
    relative: Globs,
    /// Each glob's literal start, for [`PathSet::covers`].
    starts: Vec<GlobStart>,
    /// Each glob as written, split into components, for a place written as a glob.
    patterns: Vec<(Anchor, Vec<String>)>,
}

/// Where a glob is anchored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    Home,
    Absolute,
    Root,
}

/// The literal part of a glob before its first wildcard (`.git/hooks` of `.git/hooks/**`), and
/// whether what follows can match at any depth below it (`**`).
#[derive(Debug, Clone)]
struct GlobStart {
    anchor: Anchor,
    literal: std::path::PathBuf,
    deep: bool,
    /// `literal`'s bytes, compared with a resolved place's without walking components; `None`
    /// when a part is `.`, which a component walk skips and a byte comparison would not.
    bytes: Option<Vec<u8>>,
    /// The first of `bytes`, kept here: a place whose first byte differs neither holds nor is
    /// held by the start, found without reading the literal.
    first: Option<u8>,
}

impl GlobStart {
    fn of(anchor: Anchor, pattern: &str) -> GlobStart {
        // An absolute glob's start is absolute too, as the place it is compared with is: a
        // relative start never equals `/etc`, and `/etc/x/**` would be covered by no write.
        let mut literal = match anchor {
            Anchor::Absolute => std::path::PathBuf::from("/"),
            Anchor::Home | Anchor::Root => std::path::PathBuf::new(),
        };
        let mut deep = false;
        for part in pattern.split('/').filter(|p| !p.is_empty()) {
            if part.contains(['*', '?', '[', '{']) {
                // INVARIANT (fail closed): past a wildcard the glob may match below the literal
                // start (`**` at any depth; any other wildcard is taken to as well).
                deep = true;
                break;
            }
            literal.push(part);
        }
        let bytes = (!literal.components().any(|c| c == std::path::Component::CurDir)
            && !pattern.split('/').any(|p| p == "."))
        .then(|| literal.as_os_str().as_encoded_bytes().to_vec());
        let first = bytes.as_ref().and_then(|b| b.first().copied());
        GlobStart {
            anchor,
            literal,
            deep,
            bytes,
            first,
        }
    }
}

/// `Path::starts_with` on the bytes of two normalised paths (no `.`, no `//`, no trailing `/`,
/// as resolution makes them): `prefix` is `path` or names a directory above it.
fn starts_with_bytes(path: &[u8], prefix: &[u8]) -> bool {
    let Some(first) = prefix.first() else { return true };
    // The first byte settles most comparisons without a call to `memcmp`.
    path.first() == Some(first)
        && path.starts_with(prefix)
        && (prefix == b"/" || path.len() == prefix.len() || path.get(prefix.len()) == Some(&b'/'))
}

impl PathSet {
    /// Checks globs: `~/…` under the home directory, `/…` absolute, anything else relative to a
    /// workspace root (and also tried against the absolute path, so `**/…` matches anywhere).
    /// `*` does not cross `/`; `**` does.
    pub(crate) fn new(name: &str, globs: &[String]) -> Result<PathSet, String> {
        let globs = globs
            .iter()
            .map(|glob| Ok((glob.clone(), PathSet::check(glob)?)))
            .collect::<Result<_, String>>()?;
        Ok(PathSet {
            written: Written::Named {
                name: name.to_string(),
                globs,
            },
            built: OnceLock::new(),
        })
    }

    /// A set of one glob written in a rule (`when.writes = ["/some/dir/**"]`), named by it.
    pub(crate) fn inline(glob: &str) -> Result<PathSet, String> {
        Ok(PathSet {
            written: Written::Inline {
                glob: glob.to_string(),
                literal: PathSet::check(glob)?,
            },
            built: OnceLock::new(),
        })
    }

    /// Checks one glob as [`PathSet::new`] takes it; the length of its literal start.
    pub(crate) fn check(raw: &str) -> Result<usize, String> {
        let pattern = raw.strip_prefix("~/").unwrap_or(raw);
        if pattern.len() > MAX_GLOB_LEN {
            // INVARIANT (fail closed): compiled only when first needed, a glob must be one
            // that compiles: a bounded length keeps its automaton under the regex limits.
            return Err(format!(
                "`{}…` is not a valid glob: longer than {MAX_GLOB_LEN} bytes",
                raw.chars().take(40).collect::<String>()
            ));
        }
        // Only a class, an alternative or an escape can make a glob fail to parse: a glob
        // without them is not parsed here (the test `globs_without_classes_always_parse`).
        // Each ends the literal start, so the first lies after it: one pass finds both.
        let literal = literal_start(raw).len();
        if raw.bytes().skip(literal).any(|b| MAY_FAIL.contains(&b)) {
            glob(pattern).map_err(|e| format!("`{raw}` is not a valid glob: {}", e.kind()))?;
        }
        Ok(literal)
    }

    /// Its globs as written, in order.
    pub(crate) fn written(&self) -> impl Iterator<Item = &str> {
        self.written.iter().map(|(glob, _)| glob)
    }

    /// Its name: `@NAME`'s name, or an inline glob as written.
    pub(crate) fn name(&self) -> &str {
        match &self.written {
            Written::Inline { glob, .. } => glob,
            Written::Named { name, .. } => name,
        }
    }

    /// The set read into its parts, the first time a place may reach it.
    fn built(&self) -> &Built {
        self.built.get_or_init(|| Box::new(Built::of(self.written())))
    }

    /// Whether a place may be in the set or cover it, settled without building the set: a place
    /// without a path is neither, and neither is a path that is not above, at or below the
    /// literal start of any of the set's globs (`/some/dir` of `/some/dir/**`) where each glob
    /// is tried (the path itself, below the home directory, below its root or below `/`). A
    /// place written with a wildcard is left to the built set.
    fn may_reach(&self, seen: &Seen<'_>) -> bool {
        // Once built, the set answers as fast as this check would (it only ever says what the
        // built set says: `a_set_left_unbuilt_answers_as_built`).
        if self.built.get().is_some() {
            return true;
        }
        seen.may_reach(self.written.iter())
    }

    /// Each glob as written (`~/…`, `/…` or relative to a root), for the effect space's
    /// representative places.
    pub(crate) fn globs(&self) -> Vec<String> {
        self.built()
            .patterns
            .iter()
            .map(|(anchor, parts)| {
                let joined = parts.join("/");
                match anchor {
                    Anchor::Home => format!("~/{joined}"),
                    Anchor::Absolute => format!("/{joined}"),
                    Anchor::Root => joined,
                }
            })
            .collect()
    }

    /// True when a written place may hold a member of the set without naming it: the place is
    /// an ancestor of a glob's literal start (the workspace `.` holds `.git/hooks`), or an
    /// existing directory where the glob matches at any depth (`**/.sixfold` under `src/`).
    /// Such a write is judged like an unknown one: it may change what the set protects.
    #[cfg(test)]
    pub(crate) fn covers(&self, touch: &Touch, workspace: &Workspace) -> bool {
        self.covers_seen(&Seen::of(touch, workspace))
    }

    /// `PathSet::covers` of a place already read by [`Seen::of`].
    fn covers_seen(&self, seen: &Seen<'_>) -> bool {
        self.may_reach(seen) && self.covers_built(seen)
    }

    /// [`PathSet::covers_seen`] asked of the built set.
    fn covers_built(&self, seen: &Seen<'_>) -> bool {
        let Built { starts, patterns, .. } = self.built();
        let touch = seen.touch;
        let Some(path) = &touch.path else { return false };
        let home = seen.home;
        let root = seen.root.map(Path::new);
        // Looked up at most once per place, however many deep globs reach it.
        let is_dir = std::cell::OnceCell::new();
        let literal = starts.iter().any(|start| {
            let at = match start.anchor {
                Anchor::Home => home,
                Anchor::Absolute => Some(path.as_path()),
                Anchor::Root => root,
            };
            let Some(at) = at else { return false };
            let (holds, held) = match &start.bytes {
                Some(literal) => {
                    let at = at.as_os_str().as_encoded_bytes();
                    // Two different first bytes: neither starts the other (an empty place, which
                    // holds every start, has no first byte).
                    if start.first.zip(at.first()).is_some_and(|(a, b)| a != *b) {
                        return false;
                    }
                    (starts_with_bytes(literal, at), starts_with_bytes(at, literal))
                }
                None => (start.literal.starts_with(at), at.starts_with(&start.literal)),
            };
            holds || (start.deep && held && *is_dir.get_or_init(|| touch.is_directory()))
        });
        // A glob below a root (find's `{}` under `-name`) may name a member a root-anchored
        // glob names (`./**/state.toml` may be `.sixfold/state.toml`); one a `**/…` glob names
        // anywhere is left to the look at the disk, or every glob would cover it.
        // Only a glob whose last name is written out (`**/state.toml`, `**/config`): one that ends
        // in a wildcard (`**/*.txt`) is left to the look at the disk.
        let glob = seen.root_glob
            && root.is_some_and(|r| {
                let place = components(&r.to_string_lossy());
                if place.last().is_none_or(|last| crate::glob_place::is_glob(last)) {
                    return false;
                }
                let place: Vec<&str> = place.iter().map(String::as_str).collect();
                patterns.iter().any(|(anchor, pattern)| {
                    let pattern: Vec<&str> = pattern.iter().map(String::as_str).collect();
                    *anchor == Anchor::Root
                        && pattern.first().is_some_and(|p| *p != "**")
                        && crate::glob_place::may_reach(&place, &pattern)
                })
            });
        literal || glob
    }

    /// True when a touched place is in the set. `*` is never in a path set: a rule that means
    /// "or unknown" says `unknown` too.
    pub(crate) fn contains(&self, touch: &Touch, workspace: &Workspace) -> bool {
        self.contains_seen(&Seen::of(touch, workspace), workspace)
    }

    /// [`PathSet::contains`] of a place already read by [`Seen::of`].
    fn contains_seen(&self, seen: &Seen<'_>, workspace: &Workspace) -> bool {
        self.may_reach(seen) && self.contains_built(seen, workspace)
    }

    /// [`PathSet::contains_seen`] asked of the built set.
    fn contains_built(&self, seen: &Seen<'_>, workspace: &Workspace) -> bool {
        let built = self.built();
        let touch = seen.touch;
        let Some(path) = &touch.path else { return false };
        if seen.dot_wildcard {
            return self.may_contain(touch, workspace);
        }
        // Empty sets are skipped before any work: `is_match` builds a candidate even when there
        // is nothing to match.
        if !built.absolute.is_empty() && built.absolute.is_match(path, false) {
            return true;
        }
        if !built.home.is_empty() && seen.home.is_some_and(|rest| built.home.is_match(rest, false)) {
            return true;
        }
        if built.relative.is_empty() {
            return false;
        }
        let below = seen.below_root_dir;
        // The path below `/` holds the root-relative path as its end: when it holds none of the
        // text the wildcard-led globs need, neither does the root-relative path, so one scan
        // stands for both.
        let without_text = below.is_some_and(|b| built.relative.lacks_needed_text(b));
        if let Some(relative) = seen.root.filter(|r| !r.is_empty()) {
            let suffix = below.is_some_and(|b| b.as_os_str().as_encoded_bytes().ends_with(relative.as_bytes()));
            if built.relative.is_match(Path::new(relative), without_text && suffix) {
                return true;
            }
        }
        below.is_some_and(|p| built.relative.is_match(p, without_text))
    }

    /// Whether the path glob `act` (as a kept rule writes it: `~/…`, `/…` or root-relative)
    /// may match a member: each member glob is made a concrete path (`**` dropped, `*` a
    /// letter) below the act's literal start, and the act tried on it. For what `rules add`
    /// says, not for judgement.
    pub(crate) fn may_meet_glob(&self, act: &str) -> bool {
        let (anchor, rest) = if let Some(rest) = act.strip_prefix("~/") {
            (Anchor::Home, rest)
        } else if act.starts_with('/') {
            (Anchor::Absolute, act)
        } else {
            (Anchor::Root, act.trim_start_matches("./"))
        };
        let Ok(glob) = GlobBuilder::new(rest).literal_separator(true).build() else {
            return true;
        };
        let matcher = glob.compile_matcher();
        let start = GlobStart::of(anchor, rest).literal;
        self.built().patterns.iter().any(|(a, pattern)| {
            if *a != anchor && !(*a == Anchor::Root && pattern.first().is_some_and(|p| p == "**")) {
                return false;
            }
            let concrete: Vec<String> = pattern
                .iter()
                .filter(|p| p.as_str() != "**")
                .map(|p| p.replace(['*', '?'], "x"))
                .collect();
            let below = pattern.first().is_some_and(|p| p == "**");
            let path = if below {
                start.join(concrete.join("/"))
            } else {
                Path::new(&concrete.join("/")).to_path_buf()
            };
            matcher.is_match(&path) || (*a == Anchor::Absolute && matcher.is_match(Path::new("/").join(&path)))
        })
    }

    /// For a place written as a glob over dot names: whether the shell may expand it to a member
    /// (see `glob_place`), each glob tried where it is anchored.
    fn may_contain(&self, touch: &Touch, workspace: &Workspace) -> bool {
        let Some(path) = &touch.path else { return false };
        let absolute = components(&path.to_string_lossy());
        let home = workspace
            .home()
            .and_then(|h| path.strip_prefix(h).ok())
            .map(|rest| components(&rest.to_string_lossy()));
        let root = match &touch.place {
            Place::Root { relative, .. } => Some(components(relative)),
            _ => None,
        };
        let fits = |place: &[String], pattern: &[String]| {
            let place: Vec<&str> = place.iter().map(String::as_str).collect();
            let pattern: Vec<&str> = pattern.iter().map(String::as_str).collect();
            crate::glob_place::may_match(&place, &pattern)
        };
        self.built().patterns.iter().any(|(anchor, pattern)| match anchor {
            Anchor::Absolute => fits(&absolute, pattern),
            Anchor::Home => home.as_ref().is_some_and(|h| fits(h, pattern)),
            Anchor::Root => root.as_ref().is_some_and(|r| fits(r, pattern)) || fits(&absolute, pattern),
        })
    }
}

impl Built {
    /// Reads globs checked by [`PathSet::new`].
    fn of<'a>(globs: impl Iterator<Item = &'a str>) -> Built {
        let mut home = Globs::default();
        let mut absolute = Globs::default();
        let mut relative = Globs::default();
        let mut starts = Vec::new();
        let mut patterns = Vec::new();
        for raw in globs {
            let (set, pattern, anchor) = if let Some(rest) = raw.strip_prefix("~/") {
                (&mut home, rest, Anchor::Home)
            } else if raw.starts_with('/') {
                (&mut absolute, raw, Anchor::Absolute)
            } else {
                (&mut relative, raw, Anchor::Root)
            };
            starts.push(GlobStart::of(anchor, pattern));
            patterns.push((anchor, components(pattern)));
            // INVARIANT (fail closed): unreachable, `PathSet::new` parsed every glob that may
            // fail; one that did not parse matches every path, as one that does not compile does.
            if let Ok(glob) = glob(pattern).or_else(|_| glob("**")) {
                set.add(glob);
            }
        }
        Built {
            home,
            absolute,
            relative,
            starts,
            patterns,
        }
    }
}

/// The characters without which a glob always parses (classes, alternatives, escapes). ASCII,
/// so a glob's bytes are searched (a byte below 0x80 is never part of a longer character): a
/// thousand rules' globs are checked at every load, and a search by `char` decodes each one.
const MAY_FAIL: [u8; 4] = [b'[', b'{', b'}', b'\\'];

/// Whether a byte ends a glob's literal start: one of [`MAY_FAIL`] or a wildcard. Written as
/// `matches!`, a bit test per byte where a list to search would be seven compares.
fn not_literal(b: u8) -> bool {
    matches!(b, b'*' | b'?' | b'[' | b']' | b'{' | b'}' | b'\\')
}

fn glob(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern).literal_separator(true).build()
}

/// Whether `path` is above, at or below a glob's literal start ([`literal_start`]), component by
/// component: every path the glob matches where it is tried, and every place there that may
/// cover it, is.
fn along(path: &Path, literal: &str) -> bool {
    let mut place = path.components();
    for part in Path::new(literal).components() {
        match place.next() {
            Some(p) if p == part => {}
            // The place ends above the literal start: it may hold it.
            None => return true,
            Some(_) => return false,
        }
    }
    true
}

/// [`along`] for a normal path's text ([`is_normal`]) and an absolute literal start: where the
/// literal is normal too (its trailing `/`s aside), component by component is byte by byte up to
/// a `/`, without taking either apart (a project mode's rules left unread are each asked this).
fn along_text(path: &str, literal: &str) -> bool {
    let trimmed = literal.trim_end_matches('/');
    if !is_normal(if trimmed.is_empty() { "/" } else { trimmed }) {
        return along(Path::new(path), literal);
    }
    // `/` is the empty text here: a prefix of every path.
    let path = if path == "/" { "" } else { path };
    let (short, long) = if path.len() <= trimmed.len() {
        (path, trimmed)
    } else {
        (trimmed, path)
    };
    long.starts_with(short) && matches!(long.as_bytes().get(short.len()), None | Some(b'/'))
}

/// A glob's text up to its first component that holds a wildcard, a class, an alternative or
/// an escape (`/some/dir/` of `/some/dir/**`): every path it matches starts with it.
fn literal_start(glob: &str) -> &str {
    // The component holding the first such byte starts after the `/` before it.
    let end = match glob.bytes().position(not_literal) {
        None => glob.len(),
        Some(first) => glob
            .get(..first)
            // A byte search: `rfind('/')` searches by `char`, several times the cost here.
            .and_then(|before| before.bytes().rposition(|b| b == b'/'))
            .map_or(0, |slash| slash + 1),
    };
    glob.get(..end).unwrap_or(glob)
}

/// A path or glob's components, `/` and empty parts left out.
fn components(path: &str) -> Vec<String> {
    path.split('/').filter(|p| !p.is_empty()).map(str::to_owned).collect()
}

/// The longest glob a path set takes: compiled only when first needed, a glob must compile then,
/// and this bound keeps any glob's automaton far below the regex size limit.
const MAX_GLOB_LEN: usize = 1024;

/// The globs of one anchor, compiled by need. Most globs start with literal text
/// (`.git/hooks/**`, `/some/dir/**`) that every path they match starts with: such a glob is
/// compiled only once a path starts with that text, so a thousand rules on paths a step does
/// not touch cost a byte comparison each. Globs that start with a wildcard (`**/.env*`) are
/// matched as one set, compiled the first time any path is tried.
#[derive(Debug, Clone, Default)]
struct Globs {
    led: Vec<Led>,
    /// The first bytes of the led globs' literal text, one bit each: a path starting with none
    /// of them is matched by no led glob, found without comparing it with each.
    led_first: [u64; 4],
    free: Vec<Glob>,
    free_set: OnceLock<Option<GlobSet>>,
    /// Text every path a free glob matches holds somewhere (`.env` of `**/.env*`), one piece
    /// per glob: a path holding none of it is matched by none of them, found without building a
    /// candidate or running the regex set. `None` when some free glob has no such text.
    free_needs: OnceLock<Option<AhoCorasick>>,
}

/// A glob that starts with literal text.
#[derive(Debug, Clone)]
struct Led {
    /// The glob's text before its first special character: every match starts with it.
    literal: Vec<u8>,
    glob: Glob,
    matcher: OnceLock<Option<GlobSet>>,
}

impl Globs {
    fn add(&mut self, glob: Glob) {
        let text = glob.glob();
        let end = text.find(['*', '?', '[', '{', '\\']).unwrap_or(text.len());
        let literal = text.as_bytes().get(..end).unwrap_or_default().to_vec();
        if let Some(&first) = literal.first() {
            if let Some(word) = self.led_first.get_mut(usize::from(first / 64)) {
                *word |= 1 << (first % 64);
            }
        }
        if literal.is_empty() {
            self.free.push(glob);
        } else {
            self.led.push(Led {
                literal,
                glob,
                matcher: OnceLock::new(),
            });
        }
    }

    fn is_empty(&self) -> bool {
        self.led.is_empty() && self.free.is_empty()
    }

    /// Whether a led glob's literal text may start `bytes`: false settles that none matches.
    fn led_may_start(&self, bytes: &[u8]) -> bool {
        bytes.first().is_some_and(|&first| {
            self.led_first
                .get(usize::from(first / 64))
                .is_some_and(|word| word & (1 << (first % 64)) != 0)
        })
    }

    /// True when `bytes` hold none of the text every wildcard-led glob's match holds, so none of
    /// them matches `bytes` or any part of them.
    fn lacks_needed_text(&self, path: &Path) -> bool {
        !self.free.is_empty()
            && self
                .free_needs
                .get_or_init(|| needed_text(&self.free))
                .as_ref()
                .is_some_and(|needs| !needs.is_match(path.as_os_str().as_encoded_bytes()))
    }

    /// Whether a glob matches `path`; `without_text` when the caller has found that `path` lacks
    /// the wildcard-led globs' needed text (see [`Globs::lacks_needed_text`]).
    fn is_match(&self, path: &Path, without_text: bool) -> bool {
        let bytes = path.as_os_str().as_encoded_bytes();
        let mut candidate = None;
        let mut tried = |set: &Option<GlobSet>| match set {
            Some(set) => set.is_match_candidate(candidate.get_or_insert_with(|| Candidate::new(path))),
            // INVARIANT (fail closed): a glob that does not compile is taken to match (unreachable
            // for globs within `MAX_GLOB_LEN`).
            None => true,
        };
        if self.led_may_start(bytes) {
            for led in &self.led {
                if bytes.starts_with(&led.literal)
                    && tried(led.matcher.get_or_init(|| compile(std::slice::from_ref(&led.glob))))
                {
                    return true;
                }
            }
        }
        !self.free.is_empty()
            && !without_text
            && self
                .free_needs
                .get_or_init(|| needed_text(&self.free))
                .as_ref()
                .is_none_or(|needs| needs.is_match(bytes))
            && tried(self.free_set.get_or_init(|| compile(&self.free)))
    }
}

/// One piece of literal text per glob that every path the glob matches holds, in one automaton;
/// `None` when a glob has none that is certain (only wildcards, or a class, an alternative or
/// an escape, whose letters need not appear as written).
fn needed_text(globs: &[Glob]) -> Option<AhoCorasick> {
    let mut pieces = Vec::with_capacity(globs.len());
    for glob in globs {
        let text = glob.glob();
        if text.contains(['[', ']', '{', '}', '\\']) {
            return None;
        }
        // Split at the separators too: `**/` matches no directory at all, so `/.env` of
        // `**/.env*` need not appear, while `.env` must.
        let longest = text.split(['*', '?', '/']).max_by_key(|piece| piece.len())?;
        if longest.is_empty() {
            return None;
        }
        pieces.push(longest);
    }
    // A DFA without a prefilter: paths are a few dozen bytes, where the prefilter's rare-byte
    // search (`.` is common in paths) costs more than walking the bytes once.
    AhoCorasick::builder()
        .kind(Some(AhoCorasickKind::DFA))
        .prefilter(false)
        .build(pieces)
        .ok()
}

/// One set of globs; `None` when the regex engine refuses them (beyond its size limit).
fn compile(globs: &[Glob]) -> Option<GlobSet> {
    let mut builder = GlobSetBuilder::new();
    for glob in globs {
        builder.add(glob.clone());
    }
    builder.build().ok()
}

/// One entry of a `reads`/`writes` condition.
#[derive(Debug, Clone)]
pub(crate) enum PlaceMatcher {
    /// Anything at all.
    Any,
    /// Inside a workspace root.
    Workspace,
    /// The system temp dir.
    Tmp,
    /// A known path elsewhere.
    Outside,
    /// `*`.
    Unknown,
    /// A path set or an inline glob.
    Paths(Arc<PathSet>),
    /// `covers:@NAME`: a place that may hold a member of the set without naming it.
    Covers(Arc<PathSet>),
}

impl PlaceMatcher {
    pub(crate) fn matches(&self, touch: &Touch, workspace: &Workspace) -> bool {
        self.matches_seen(&Seen::of(touch, workspace), workspace)
    }

    fn matches_seen(&self, seen: &Seen<'_>, workspace: &Workspace) -> bool {
        let touch = seen.touch;
        match self {
            PlaceMatcher::Any => true,
            PlaceMatcher::Workspace => matches!(touch.place, Place::Root { .. }),
            PlaceMatcher::Tmp => touch.place == Place::Tmp,
            PlaceMatcher::Outside => touch.place == Place::Outside,
            PlaceMatcher::Unknown => touch.place == Place::Unknown,
            PlaceMatcher::Paths(set) => set.contains_seen(seen, workspace),
            PlaceMatcher::Covers(set) => set.covers_seen(seen),
        }
    }
}

/// A touched place as the path matchers read it: what every rule would otherwise work out again
/// (the path below the home directory, below `/`, below its root; whether it is written with a
/// wildcard), worked out once per judgement.
#[derive(Debug, Clone, Copy)]
struct Seen<'t> {
    touch: &'t Touch,
    /// The path below the home directory, when it lies there.
    home: Option<&'t Path>,
    /// The path without its leading `/`, where root-relative globs are also tried.
    below_root_dir: Option<&'t Path>,
    /// The path below its workspace root (empty for the root itself), when it lies in one.
    root: Option<&'t str>,
    /// A wildcard in a component that starts with `.` (see `glob_place`).
    dot_wildcard: bool,
    /// The root-relative path is written as a glob.
    root_glob: bool,
    /// The path's text, where it is normal (see [`is_normal`]).
    text: Option<&'t str>,
}

/// The home directory as places are compared with it, read once per judgement: its text where
/// it is normal (see [`is_normal`]).
#[derive(Debug, Clone, Copy)]
struct Home<'w> {
    path: &'w Path,
    text: Option<&'w str>,
}

impl<'w> Home<'w> {
    fn of(workspace: &'w Workspace) -> Option<Home<'w>> {
        workspace.home().map(|path| Home {
            path,
            text: path.to_str().filter(|h| is_normal(h)),
        })
    }
}

impl<'t> Seen<'t> {
    /// Whether this place may be matched by a glob of `globs` (each with the length of its
    /// literal start) or cover it: [`PathSet::may_reach`], asked of globs not made a set.
    fn may_reach<'g>(&self, globs: impl IntoIterator<Item = (&'g str, usize)>) -> bool {
        let Some(path) = &self.touch.path else { return false };
        if self.dot_wildcard || self.root_glob {
            return true;
        }
        globs.into_iter().any(|(glob, end)| {
            let literal = glob.get(..end).unwrap_or(glob);
            if let Some(rest) = literal.strip_prefix("~/") {
                // Below home, as its literal start is read: `~//x` starts at `x`.
                self.home.is_some_and(|home| along(home, rest.trim_start_matches('/')))
            } else if literal.starts_with('/') {
                match self.text {
                    Some(text) => along_text(text, literal),
                    None => along(path, literal),
                }
            } else {
                self.root.is_some_and(|root| along(Path::new(root), literal))
                    || self.below_root_dir.is_some_and(|below| along(below, literal))
            }
        })
    }

    fn of(touch: &'t Touch, workspace: &'t Workspace) -> Seen<'t> {
        Seen::with_home(touch, Home::of(workspace))
    }

    fn with_home(touch: &'t Touch, home: Option<Home<'t>>) -> Seen<'t> {
        let root = match &touch.place {
            Place::Root { relative, .. } => Some(relative.as_str()),
            _ => None,
        };
        let wild = |text: &[u8]| text.iter().any(|b| matches!(b, b'*' | b'?' | b'['));
        // `is_glob` and `has_dot_wildcard` look for a wildcard in some component: text with none
        // at all has none in any component.
        let root_glob = root.is_some_and(|r| wild(r.as_bytes()) && crate::glob_place::is_glob(r));
        let Some(path) = &touch.path else {
            return Seen {
                touch,
                home: None,
                below_root_dir: None,
                root,
                dot_wildcard: false,
                root_glob,
                text: None,
            };
        };
        let (wildcard, normal) = read_bytes(path.as_os_str().as_encoded_bytes());
        let dot_wildcard = wildcard && crate::glob_place::has_dot_wildcard(&path.to_string_lossy());
        // A normal path (as resolution makes them) compares as text; any other by components.
        let text = if normal { path.to_str() } else { None };
        let below_root_dir = match text {
            Some(t) => t.strip_prefix('/').map(Path::new),
            None => path.strip_prefix("/").ok(),
        };
        let home = home.and_then(|h| match (text, h.text) {
            (Some(t), Some(h)) => below_text(t, h).map(Path::new),
            _ => path.strip_prefix(h.path).ok(),
        });
        Seen {
            touch,
            home,
            below_root_dir,
            root,
            dot_wildcard,
            root_glob,
            text,
        }
    }
}

/// Whether `text` is an absolute path as resolution makes it: no empty and no `.` component,
/// no trailing `/`. Such paths compare as text the way `Path` compares their components.
fn is_normal(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes == b"/" {
        return true;
    }
    bytes.first() == Some(&b'/')
        && bytes.iter().enumerate().all(|(i, b)| {
            *b != b'/'
                || !matches!(
                    (bytes.get(i + 1), bytes.get(i + 2)),
                    (None | Some(b'/'), _) | (Some(b'.'), None | Some(b'/'))
                )
        })
}

/// A path's bytes read in one pass: whether any is a wildcard (`*`, `?`, `[`), and whether the
/// path is normal (what [`is_normal`] says).
fn read_bytes(bytes: &[u8]) -> (bool, bool) {
    let wild = |b: u8| matches!(b, b'*' | b'?' | b'[');
    let Some((&first, rest)) = bytes.split_first() else {
        return (false, false);
    };
    let mut wildcard = wild(first);
    let mut normal = first == b'/';
    // The component read so far: 0 nothing yet, 1 `.`, 2 anything else.
    let mut part = 0u8;
    for &b in rest {
        match b {
            b'/' => {
                normal &= part == 2;
                part = 0;
            }
            b'.' if part == 0 => part = 1,
            _ => {
                wildcard |= wild(b);
                part = 2;
            }
        }
    }
    // `/` alone is normal; a trailing `/` or `/.` is not.
    normal &= rest.is_empty() || part == 2;
    (wildcard, normal)
}

/// `Path::strip_prefix` on two normal paths (see [`is_normal`]), as text.
fn below_text<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    if prefix == "/" {
        return path.strip_prefix('/');
    }
    let rest = path.strip_prefix(prefix)?;
    if rest.is_empty() {
        Some(rest)
    } else {
        rest.strip_prefix('/')
    }
}

/// A rule's conditions over the six fields, compiled: `reads`/`writes` hold when some place
/// touched matches some entry, a yes/no field when the step's equals it; all must hold.
pub(crate) type When = EffectFields<PlaceMatcher>;

impl When {
    /// `Some` when every condition holds, with the first place that made a `reads`/`writes`
    /// condition hold, if any.
    #[cfg(test)]
    fn holds<'e>(&self, effects: &'e Effects, workspace: &'e Workspace) -> Option<Held<'e>> {
        let seen = Seen::all(effects, workspace);
        let (reads, writes) = seen.split_at(effects.read_places.len());
        self.holds_seen(effects, reads, writes, workspace)
    }

    /// `When::holds` on places already read by [`Seen::all`].
    fn holds_seen<'e>(
        &self,
        effects: &'e Effects,
        reads: &[Seen<'e>],
        writes: &[Seen<'e>],
        workspace: &Workspace,
    ) -> Option<Held<'e>> {
        let f = effects.flags;
        let flag_ok = |want: Option<bool>, have: bool| want.is_none_or(|w| w == have);
        if !(flag_ok(self.reaches, f.reaches)
            && flag_ok(self.reversible, f.reversible)
            && flag_ok(self.contained, f.contained)
            && flag_ok(self.costs, f.costs))
        {
            return None;
        }
        let mut evidence = None;
        for (condition, seen) in [(&self.reads, reads), (&self.writes, writes)] {
            let Some(matchers) = condition else { continue };
            let mut hits = seen
                .iter()
                .filter(|s| matchers.iter().any(|m| m.matches_seen(s, workspace)))
                .map(|s| s.touch);
            let first = hits.next()?;
            // A place the step names says more than `*`: it is the evidence where there is one.
            let hit = std::iter::once(first)
                .chain(hits)
                .find(|t| t.path.is_some())
                .unwrap_or(first);
            evidence.get_or_insert(hit);
        }
        Some(Held { place: evidence })
    }
}

impl<'t> Seen<'t> {
    /// Every read and then every written place of a step, read once for all the rules, kept on
    /// the stack for a step of a few places (split at the number of reads).
    fn all(effects: &'t Effects, workspace: &'t Workspace) -> SmallVec<[Seen<'t>; 8]> {
        let home = Home::of(workspace);
        let places = effects.read_places.iter().chain(&effects.write_places);
        places.map(|t| Seen::with_home(t, home)).collect()
    }
}

/// A step's places, read once, asked which globs not yet made path sets they may reach: a mode's
/// rules of place globs alone are read only for a step that may reach one of their globs
/// (`bundle::unread_rules`).
pub(crate) struct Places<'t>(SmallVec<[Seen<'t>; 8]>);

impl<'t> Places<'t> {
    pub(crate) fn of(effects: &'t Effects, workspace: &'t Workspace) -> Places<'t> {
        Places(Seen::all(effects, workspace))
    }

    /// Whether some place may be matched by `glob` (its literal start `literal` bytes long, as
    /// [`PathSet::check`] gives it) or cover it.
    pub(crate) fn may_reach(&self, glob: &str, literal: usize) -> bool {
        self.0.iter().any(|seen| seen.may_reach([(glob, literal)]))
    }
}

/// Conditions that held, and the place that made them hold (none when only yes/no fields were
/// asked about).
#[derive(Debug, Clone, Copy)]
struct Held<'e> {
    place: Option<&'e Touch>,
}

fn describe_touch(touch: &Touch) -> String {
    match &touch.path {
        Some(p) => format!("`{}`", p.display()),
        None => "`*`".to_string(),
    }
}

/// A rule's script: the compiled file, the function to call, and the policy's settings.
#[derive(Debug, Clone)]
pub(crate) struct RuleScript {
    /// The compiled script.
    pub(crate) script: Script,
    /// The function, called as `f(effects, context)`.
    pub(crate) function: String,
    /// The owning policy's settings, handed in as `context.settings`.
    pub(crate) settings: Dynamic,
}

/// A compiled rule.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    /// `OWNER/ID`: the mode or policy it was written in, and its id there.
    pub id: String,
    /// What it decides.
    pub decision: Decision,
    /// Why, in words.
    pub reason: String,
    /// Its data conditions.
    pub when: When,
    /// Its script, when it has one.
    pub script: Option<RuleScript>,
    /// Part of the mode's ceiling: nothing a person kept widens past it (see [`Judge::floor`]).
    pub ceiling: bool,
}

/// The widest effects a mode admits, kept as written (its scopes resolve against the workspace
/// a step is judged in); a field left out is unlimited.
pub(crate) type Ceiling = EffectFields;

impl Ceiling {
    /// What of `effects` lies beyond the ceiling, in words; empty when within it.
    pub(crate) fn exceeded(&self, effects: &Effects, workspace: &Workspace) -> Vec<String> {
        let mut beyond = Vec::new();
        let mut scopes = |name: &str, limit: &Option<Vec<String>>, have: &Scopes, places: &[Touch]| {
            let Some(limit) = limit else { return };
            let limit = workspace.resolve(limit);
            if have.le(&limit) {
                return;
            }
            let outside: Vec<String> = places
                .iter()
                .filter(|t| match &t.path {
                    Some(p) => !Scopes::from_paths([p.clone()]).le(&limit),
                    None => true,
                })
                .map(describe_touch)
                .collect();
            if limit.is_empty() {
                beyond.push(format!("{name} {}, and the mode {name} nothing", outside.join(", ")));
            } else {
                beyond.push(format!("{name} {}", outside.join(", ")));
            }
        };
        scopes("writes", &self.writes, &effects.writes, &effects.write_places);
        scopes("reads", &self.reads, &effects.reads, &effects.read_places);
        let f: Flags = effects.flags;
        if f.reaches && self.reaches == Some(false) {
            beyond.push("reaches the network".into());
        }
        if f.costs && self.costs == Some(false) {
            beyond.push("costs money".into());
        }
        if !f.reversible && self.reversible == Some(true) {
            beyond.push("cannot be undone".into());
        }
        if !f.contained && self.contained == Some(true) {
            beyond.push("is not contained".into());
        }
        beyond
    }

    /// `self ≤ other` field by field, with scopes resolved in `workspace`.
    pub(crate) fn le(&self, other: &Ceiling, workspace: &Workspace) -> Result<(), String> {
        let scopes = |name: &str, mine: &Option<Vec<String>>, theirs: &Option<Vec<String>>| match (mine, theirs) {
            (_, None) => Ok(()),
            (None, Some(_)) => Err(format!("{name} is unlimited, wider than the mode it extends")),
            (Some(a), Some(b)) if workspace.resolve(a).le(&workspace.resolve(b)) => Ok(()),
            (Some(a), Some(b)) => Err(format!("{name} {a:?} is wider than {b:?} in the mode it extends")),
        };
        // For reaches/costs a limit is `false`; for reversible/contained it is `true`.
        let allows = |name: &str, mine: Option<bool>, theirs: Option<bool>, limit: bool| {
            let widened = theirs == Some(limit) && mine != Some(limit);
            if widened {
                Err(format!("{name} is allowed, but the mode it extends does not allow it"))
            } else {
                Ok(())
            }
        };
        scopes("reads", &self.reads, &other.reads)?;
        scopes("writes", &self.writes, &other.writes)?;
        allows("reaching the network", self.reaches, other.reaches, false)?;
        allows("spending money", self.costs, other.costs, false)?;
        allows("an irreversible step", self.reversible, other.reversible, true)?;
        allows("an uncontained step", self.contained, other.contained, true)?;
        Ok(())
    }
}

/// The policy part of a mode, compiled: what judgement needs.
#[derive(Debug, Clone)]
pub(crate) struct Judge {
    /// The mode's id.
    pub(crate) mode: String,
    /// The decision where no rule matches.
    pub(crate) default: Decision,
    /// Checked first.
    pub(crate) ceiling: Ceiling,
    /// Inherited, included and own rules.
    pub(crate) rules: Vec<Arc<Rule>>,
}

impl Judge {
    /// What nothing a person kept may widen past: the ceiling, and the rules marked `ceiling`
    /// (a secret read, a protected write). `None` when neither holds.
    pub(crate) fn floor(&self, effects: &Effects, context: &Context, host: &ScriptHost) -> Option<Judgement> {
        let firm = Judge {
            mode: self.mode.clone(),
            default: Decision::Allow,
            ceiling: self.ceiling.clone(),
            rules: self.rules.iter().filter(|r| r.ceiling).cloned().collect(),
        };
        let judged = firm.judge(effects, context, host);
        (judged.decision > Decision::Allow).then_some(judged)
    }

    /// Judges resolved effects: the ceiling first, then the rules (strictest wins), else the
    /// default. A contained allow says so.
    pub(crate) fn judge(&self, effects: &Effects, context: &Context, host: &ScriptHost) -> Judgement {
        let mut judged = self.judge_uncommented(effects, context, host);
        if judged.decision == Decision::Allow && effects.flags.contained {
            judged.reason.push_str(CONTAINED);
        }
        judged
    }

    fn judge_uncommented(&self, effects: &Effects, context: &Context, host: &ScriptHost) -> Judgement {
        let mode = &self.mode;
        let beyond = self.ceiling.exceeded(effects, &context.workspace);
        if !beyond.is_empty() {
            return Judgement {
                decision: Decision::Refuse,
                reason: format!("mode `{mode}` refuses: beyond its ceiling: {}", beyond.join("; ")),
                rules: vec![format!("{mode}/ceiling")],
                mode: mode.clone(),
                by: DecidedBy::Ceiling,
            };
        }
        // Each match: its decision, the rule's id, the reason, and whether the rule failed. Put
        // in words only for the rules that decide: the others' reasons are never read.
        let mut matched: SmallVec<[(Decision, &str, Reason<'_>, bool); 4]> = SmallVec::new();
        let mut script_args: Option<(Dynamic, rhai::Map)> = None;
        let seen = Seen::all(effects, &context.workspace);
        let (reads, writes) = seen.split_at(effects.read_places.len());
        for rule in &self.rules {
            let Some(held) = rule.when.holds_seen(effects, reads, writes, &context.workspace) else {
                continue;
            };
            let mut reason = Reason::Rule(&rule.reason, held.place);
            if let Some(rs) = &rule.script {
                let (effects_value, context_map) =
                    script_args.get_or_insert_with(|| (effects_to_dynamic(effects), context.to_dynamic(mode)));
                let mut ctx = context_map.clone();
                ctx.insert("settings".into(), rs.settings.clone());
                match host.call(
                    &rs.script,
                    &rs.function,
                    vec![effects_value.clone(), Dynamic::from_map(ctx)],
                ) {
                    Ok(out) => match script_verdict(&out.value) {
                        Ok(ScriptAnswer::NoMatch) => continue,
                        Ok(ScriptAnswer::Match) => {}
                        Ok(ScriptAnswer::MatchBecause(own)) => reason = Reason::Own(own),
                        // INVARIANT (fail closed): a script answer that is not one refuses.
                        Err(what) => {
                            // INVARIANT (fail closed): a rule whose script fails refuses.
                            matched.push((
                                Decision::Refuse,
                                &rule.id,
                                Reason::Own(format!("rule `{}` failed, so it refuses: {what}", rule.id)),
                                true,
                            ));
                            continue;
                        }
                    },
                    // INVARIANT (fail closed): a script that errors or hits a limit refuses.
                    Err(err) => {
                        // INVARIANT (fail closed): a rule whose script errs or hits a limit refuses.
                        matched.push((
                            Decision::Refuse,
                            &rule.id,
                            Reason::Own(format!("rule `{}` failed, so it refuses: {err}", rule.id)),
                            true,
                        ));
                        continue;
                    }
                }
            }
            matched.push((rule.decision, &rule.id, reason, false));
        }
        let Some(strictest) = matched.iter().map(|m| m.0).max() else {
            let verb = verb(self.default);
            let mut reason = String::with_capacity(mode.len() + verb.len() + 48 + CONTAINED.len());
            for part in ["mode `", mode, "` ", verb, ": no rule matched, so its default applies"] {
                reason.push_str(part);
            }
            return Judgement {
                decision: self.default,
                reason,
                rules: Vec::new(),
                mode: mode.clone(),
                by: DecidedBy::Default,
            };
        };
        let deciding = || matched.iter().filter(|m| m.0 == strictest);
        // Failed rules alone make it unjudgeable; a working rule that decides the same makes it
        // the policy's decision.
        let by = if deciding().all(|m| m.3) {
            DecidedBy::Unjudgeable
        } else {
            DecidedBy::Rules
        };
        // Put in words once, into a string made long enough for it (and for the contained
        // allow's note): formatting it piece by piece grew it several times per judgement.
        let verb = verb(strictest);
        let words: usize = deciding().map(|m| m.2.len() + m.1.len() + 12).sum();
        let mut reason = String::with_capacity(mode.len() + verb.len() + 10 + words + CONTAINED.len());
        for part in ["mode `", mode, "` ", verb, ": "] {
            reason.push_str(part);
        }
        for (i, m) in deciding().enumerate() {
            if i > 0 {
                reason.push_str("; ");
            }
            m.2.put(&mut reason);
            for part in [" (rule `", m.1, "`)"] {
                reason.push_str(part);
            }
        }
        Judgement {
            decision: strictest,
            reason,
            rules: {
                let mut ids = Vec::with_capacity(deciding().count());
                ids.extend(deciding().map(|m| m.1.to_string()));
                ids
            },
            mode: mode.clone(),
            by,
        }
    }
}

/// A matched rule's reason, put in words only if the rule decides.
#[derive(Debug)]
enum Reason<'a> {
    /// The rule's own reason, with the place that made it hold.
    Rule(&'a str, Option<&'a Touch>),
    /// A reason in full: the script's own, or why the rule failed.
    Own(String),
}

impl Reason<'_> {
    /// About how long it is in words (exact where the place's path is UTF-8).
    fn len(&self) -> usize {
        match self {
            Reason::Rule(reason, None) => reason.len(),
            Reason::Rule(reason, Some(place)) => {
                reason.len() + 5 + place.path.as_ref().map_or(1, |p| p.as_os_str().len())
            }
            Reason::Own(own) => own.len(),
        }
    }

    /// Appends it in words: the rule's reason and `` (`PLACE`)``, or its own.
    fn put(&self, out: &mut String) {
        match self {
            Reason::Rule(reason, None) => out.push_str(reason),
            Reason::Rule(reason, Some(place)) => {
                out.push_str(reason);
                out.push_str(" (`");
                match place.path.as_deref().map(|p| (p, p.to_str())) {
                    Some((_, Some(text))) => out.push_str(text),
                    Some((path, None)) => {
                        let _ = write!(out, "{}", path.display());
                    }
                    None => out.push('*'),
                }
                out.push_str("`)");
            }
            Reason::Own(own) => out.push_str(own),
        }
    }
}

/// What a contained allow's reason ends with.
const CONTAINED: &str = "; it runs contained in the sandbox";

fn verb(d: Decision) -> &'static str {
    match d {
        Decision::Allow => "allows",
        Decision::Ask => "asks",
        Decision::Refuse => "refuses",
    }
}

/// What a rule's script said.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ScriptAnswer {
    /// `false` or `()`: the rule does not apply.
    NoMatch,
    /// `true`: the rule applies, with the rule's own reason.
    Match,
    /// A string: the rule applies, for this reason.
    MatchBecause(String),
}

fn script_verdict(value: &Dynamic) -> Result<ScriptAnswer, String> {
    if value.is_unit() {
        return Ok(ScriptAnswer::NoMatch);
    }
    if let Ok(b) = value.as_bool() {
        return Ok(if b { ScriptAnswer::Match } else { ScriptAnswer::NoMatch });
    }
    if value.is_string() {
        return Ok(ScriptAnswer::MatchBecause(
            value.clone().into_string().unwrap_or_default(),
        ));
    }
    Err(format!(
        "the script returned a `{}`; a rule script returns true, false, () or a reason string",
        value.type_name()
    ))
}

fn effects_to_dynamic(effects: &Effects) -> Dynamic {
    let places = |touches: &[Touch]| -> Dynamic {
        let items: rhai::Array = touches
            .iter()
            .map(|t| {
                let mut m = rhai::Map::new();
                let path = t
                    .path
                    .as_ref()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "*".into());
                m.insert("path".into(), Dynamic::from(path));
                m.insert("place".into(), Dynamic::from(t.place.class()));
                if let Place::Root { name, relative } = &t.place {
                    m.insert("root".into(), Dynamic::from(name.clone()));
                    m.insert("relative".into(), Dynamic::from(relative.clone()));
                }
                Dynamic::from_map(m)
            })
            .collect();
        Dynamic::from_array(items)
    };
    let mut map = rhai::Map::new();
    map.insert("reads".into(), places(&effects.read_places));
    map.insert("writes".into(), places(&effects.write_places));
    map.insert("reaches".into(), Dynamic::from_bool(effects.flags.reaches));
    map.insert("reversible".into(), Dynamic::from_bool(effects.flags.reversible));
    map.insert("contained".into(), Dynamic::from_bool(effects.flags.contained));
    map.insert("costs".into(), Dynamic::from_bool(effects.flags.costs));
    Dynamic::from_map(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every short normal path against every short absolute literal start (`/`, `.`, two
    /// names): the text comparison answers as the comparison of components does.
    #[test]
    fn along_text_answers_as_along() {
        fn all(max: usize) -> Vec<String> {
            let mut out = vec![String::new()];
            let mut last = vec![String::new()];
            for _ in 0..max {
                last = last
                    .iter()
                    .flat_map(|s| ['/', '.', 'a', 'b'].map(|c| format!("{s}{c}")))
                    .collect();
                out.extend(last.iter().cloned());
            }
            out
        }
        let texts = all(6);
        let paths: Vec<&String> = texts.iter().filter(|t| is_normal(t)).collect();
        let literals: Vec<&String> = texts.iter().filter(|t| t.starts_with('/')).collect();
        assert!(paths.len() > 100 && literals.len() > 1000);
        for path in &paths {
            for literal in &literals {
                assert_eq!(
                    along_text(path, literal),
                    along(Path::new(path.as_str()), literal),
                    "{path} along {literal}"
                );
            }
        }
    }

    /// A glob written in a rule is a set of that one glob named by it: it answers as a named set
    /// of the same glob does, and a bad one is refused alike.
    #[test]
    fn an_inline_glob_is_a_set_of_one() {
        let ws = Workspace::new("/w").with_home("/h");
        for glob in [
            "/some/glob/7/**",
            "src/**",
            "~/.ssh/id_*",
            "**/.env*",
            "/a/[b]/{c,d}/\\*",
        ] {
            let inline = PathSet::inline(glob).unwrap();
            let named = PathSet::new("n", &[glob.to_string()]).unwrap();
            assert_eq!(inline.name(), glob);
            assert_eq!(named.name(), "n");
            for path in [
                "/some/glob/7/x",
                "/w/src/lib.rs",
                "/h/.ssh/id_rsa",
                "/w/.env.local",
                "/a/b/c/*",
                "/etc/x",
            ] {
                let touch = Touch {
                    place: ws.place(std::path::Path::new(path)),
                    path: Some(path.into()),
                    directory: Some(false),
                };
                assert_eq!(
                    inline.contains(&touch, &ws),
                    named.contains(&touch, &ws),
                    "{glob} {path}"
                );
            }
        }
        assert!(PathSet::inline("/a/[b").is_err());
        assert_eq!(
            PathSet::inline("/a/[b").err(),
            PathSet::new("n", &["/a/[b".into()]).err()
        );
    }

    /// A set of absolute globs is not built for a place outside their literal starts, and
    /// answers as before for a place inside or above them; a bad glob is still reported at load.
    #[test]
    fn a_set_no_place_reaches_is_never_built() {
        let ws = Workspace::new("/w").with_home("/h");
        let set = PathSet::new("p", &["/some/glob/7/**".into(), "/etc/sixfold-*.conf".into()]).unwrap();
        let at = |path: Option<&str>, directory: bool| {
            let path = path.map(std::path::PathBuf::from);
            let place = path.as_ref().map_or(Place::Unknown, |p| ws.place(p));
            Touch {
                place,
                path,
                directory: Some(directory),
            }
        };
        // No path, a sibling whose name starts alike, another directory, the workspace: neither
        // in the set nor covering it, and the set stays unbuilt.
        for t in [
            at(None, false),
            at(Some("/some/glob/70/x"), false),
            at(Some("/some/glob/8"), true),
            at(Some("/w/src/x"), false),
            at(Some("/etcx"), true),
        ] {
            assert!(!set.contains(&t, &ws) && !set.covers(&t, &ws), "{t:?}");
        }
        assert!(set.built.get().is_none());
        // Must match: inside; an ancestor covers; the other glob, by its wildcard.
        assert!(set.contains(&at(Some("/some/glob/7/x/y"), false), &ws));
        assert!(set.built.get().is_some());
        assert!(set.covers(&at(Some("/some/glob"), true), &ws));
        assert!(set.covers(&at(Some("/"), true), &ws));
        assert!(set.contains(&at(Some("/etc/sixfold-a.conf"), false), &ws));
        // Must not, built now: a sibling, and a name past the wildcard's component.
        assert!(!set.contains(&at(Some("/some/glob/70/x"), false), &ws));
        assert!(!set.contains(&at(Some("/etc/sixfold-a.conf/x"), false), &ws));
        // An escaped letter is the letter: `/\\a/**` holds `/a/x`.
        let escaped = PathSet::new("e", &["/\\a/**".into()]).unwrap();
        assert!(escaped.contains(&at(Some("/a/x"), false), &ws));
        assert!(!escaped.contains(&at(Some("/b/x"), false), &ws));
        // A root-relative glob is tried below the root and below `/`; a home one below home.
        let rooted = PathSet::new("r", &["src/**".into(), "~/.config/x/**".into()]).unwrap();
        for t in [
            at(Some("/w/lib/x"), false),
            at(Some("/w/srcx"), false),
            at(Some("/h/.config/y"), false),
        ] {
            assert!(!rooted.contains(&t, &ws) && !rooted.covers(&t, &ws), "{t:?}");
        }
        assert!(rooted.built.get().is_none());
        assert!(rooted.contains(&at(Some("/w/src/x"), false), &ws));
        assert!(rooted.contains(&at(Some("/src/x"), false), &ws));
        assert!(rooted.contains(&at(Some("/h/.config/x/y"), false), &ws));
        assert!(rooted.covers(&at(Some("/w"), true), &ws));
        assert!(rooted.covers(&at(Some("/h"), true), &ws));
        assert!(!rooted.contains(&at(Some("/w/lib/x"), false), &ws));
        // Bad globs are still refused when loaded.
        for bad in ["/a/[", "/a/{b", "~/a}", "src/\\"] {
            assert!(PathSet::new("p", &[bad.to_string()]).is_err(), "{bad}");
        }
        assert!(PathSet::new("p", &["/a/[b]/{c,d}/\\*".to_string()]).is_ok());
    }

    /// A written place covers a set when it may hold a member without naming it: an ancestor of
    /// a glob's literal start, or an existing directory where a `**` glob reaches.
    #[test]
    fn a_place_covers_what_it_may_hold() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        let ws = Workspace::new(&root);
        let set = PathSet::new("p", &[".git/hooks/**".into(), ".mcp.json".into(), "**/.sixfold".into()]).unwrap();
        let covers = |written: &str| {
            let e = crate::effects::EffectProfile {
                writes: vec![written.to_string()],
                ..crate::effects::EffectProfile::default()
            }
            .resolve(&ws);
            e.write_places.iter().any(|t| set.covers(t, &ws))
        };
        // The workspace and `.git` hold `.git/hooks`; the root holds `.mcp.json`.
        assert!(covers("."));
        assert!(covers("./.git"));
        assert!(covers("./.git/hooks"));
        // An existing directory may hold a nested `.sixfold`; a file or a new path cannot.
        assert!(covers("./src"));
        assert!(covers("./src/deep"));
        assert!(!covers("./src/lib.rs"));
        assert!(!covers("./src/new.rs"));
        assert!(!covers("./README.md"));
        // Unknown places are the `unknown` rules' business, outside ones the boundaries'.
        assert!(!covers("*"));
        assert!(!covers("/etc"));
        // What resolution found is what counts: a link to a directory is one, a link to a file
        // or a path through `..` back to a file is not; a directory reached by `..` is.
        std::os::unix::fs::symlink(root.join("src/deep"), root.join("to-deep")).unwrap();
        std::os::unix::fs::symlink(root.join("src/lib.rs"), root.join("to-lib")).unwrap();
        assert!(covers("./to-deep"));
        assert!(!covers("./to-lib"));
        assert!(covers("./src/deep/.."));
        assert!(!covers("./src/deep/../lib.rs"));
        // A place nobody resolved (no fact) is looked at then.
        let by_hand = |p: std::path::PathBuf| Touch {
            place: ws.place(&p),
            path: Some(p),
            directory: None,
        };
        assert!(set.covers(&by_hand(root.join("src")), &ws));
        assert!(!set.covers(&by_hand(root.join("src/lib.rs")), &ws));
    }

    /// An absolute glob is covered by the places above its literal start, as a relative one is:
    /// a write to `/etc` (or `/`) may change `/etc/sixfold-test/**`; `/usr` and a sibling may not.
    #[test]
    fn an_absolute_glob_is_covered_by_what_holds_it() {
        let t = tempfile::tempdir().unwrap();
        let ws = Workspace::new(t.path().canonicalize().unwrap());
        let set = PathSet::new("p", &["/etc/sixfold-test/**".into(), "/**/sixfold-deep".into()]).unwrap();
        let by_hand = |p: &str, directory: Option<bool>| Touch {
            place: ws.place(std::path::Path::new(p)),
            path: Some(std::path::PathBuf::from(p)),
            directory,
        };
        let only = PathSet::new("q", &["/etc/sixfold-test/**".into()]).unwrap();
        for held in ["/", "/etc", "/etc/sixfold-test"] {
            assert!(
                only.covers(&by_hand(held, Some(true)), &ws),
                "{held} holds the glob's start"
            );
        }
        assert!(!set.covers(&by_hand("/etc/hosts", Some(false)), &ws));
        // `/**/sixfold-deep` may be under any directory, never under a file.
        assert!(set.covers(&by_hand("/usr", Some(true)), &ws));
        assert!(!set.covers(&by_hand("/usr/file", Some(false)), &ws));
        assert!(!only.covers(&by_hand("/usr", Some(true)), &ws));
        assert!(
            !only.covers(&by_hand("/etc/sixfold-testing", Some(true)), &ws),
            "a sibling, not a parent"
        );
        assert!(!only.covers(&by_hand("/usr/share/sixfold-test", Some(true)), &ws));
        assert!(
            only.covers(&by_hand("/etc/sixfold-test/sub", Some(true)), &ws),
            "deep below the start"
        );
    }

    /// The text a path must hold before the wildcard-led globs are run never turns away a
    /// path they match, and a path without it is matched by none of them.
    #[test]
    fn the_needed_text_never_turns_away_a_match() {
        let globs = [
            "**/.env*",
            "**/.netrc",
            "**/credentials.json",
            "**/*.pem",
            "**/id_rsa*",
            "**/.sixfold",
            "**/.sixfold/**",
            "*.rs",
            "**/gen-?.lock",
        ];
        let paths = [
            ".env",
            "a/.env.local",
            "x/.netrc",
            "credentials.json",
            "k/c.pem",
            "id_rsa",
            "a/b/id_rsa.pub",
            ".sixfold",
            "deep/.sixfold/state.toml",
            "lib.rs",
            "gen-1.lock",
            "a/gen-2.lock",
            "src/main.rs",
            "notes.md",
            ".envy",
            "env",
            "a.pe",
            "src/lib.rs",
            "workspace/.sixfold",
            "ids_rsa",
        ];
        let mut all = Globs::default();
        let built: Vec<Glob> = globs
            .iter()
            .map(|g| GlobBuilder::new(g).literal_separator(true).build().unwrap())
            .collect();
        for g in &built {
            all.add(g.clone());
        }
        let needs = needed_text(&built).expect("each glob has text it needs");
        let set = compile(&built).unwrap();
        for path in paths {
            let matched = set.is_match(path);
            assert_eq!(all.is_match(Path::new(path), false), matched, "{path}");
            if matched {
                assert!(needs.is_match(path), "{path}");
            }
        }
        // A glob with no certain text (only wildcards, a class, an alternative) turns none away.
        for g in ["**/*", "**/.[e]nv", "**/{a,b}.key", "**/x\\*"] {
            let glob = GlobBuilder::new(g).literal_separator(true).build().unwrap();
            assert!(needed_text(&[glob]).is_none(), "{g}");
        }
    }

    /// Comparing a glob's literal start with a place byte by byte says what comparing their
    /// components says.
    #[test]
    fn starts_compare_as_components_do() {
        for (path, prefix) in [
            ("a/b", "a"),
            ("a/b", "a/b"),
            ("a/bc", "a/b"),
            ("a", "a/b"),
            ("a/b", ""),
            ("", "a"),
            ("", ""),
            ("/etc/x", "etc"),
            ("/etc/x", "/etc"),
            (".git/hooks/pre-commit", ".git/hooks"),
            (".gitx", ".git"),
        ] {
            assert_eq!(
                starts_with_bytes(path.as_bytes(), prefix.as_bytes()),
                Path::new(path).starts_with(prefix),
                "{path} {prefix}"
            );
        }
    }

    fn decision() -> impl Strategy<Value = Decision> {
        prop::sample::select(vec![Decision::Allow, Decision::Ask, Decision::Refuse])
    }

    fn flag() -> impl Strategy<Value = Option<bool>> {
        prop::option::of(any::<bool>())
    }

    fn place() -> impl Strategy<Value = Option<Vec<PlaceMatcher>>> {
        let one = prop::sample::select(vec![0u8, 1, 2, 3, 4]).prop_map(|i| match i {
            0 => PlaceMatcher::Any,
            1 => PlaceMatcher::Workspace,
            2 => PlaceMatcher::Tmp,
            3 => PlaceMatcher::Outside,
            _ => PlaceMatcher::Unknown,
        });
        prop::option::of(prop::collection::vec(one, 1..3))
    }

    fn rule() -> impl Strategy<Value = Rule> {
        (decision(), place(), place(), flag(), flag(), flag(), flag()).prop_map(
            |(decision, reads, writes, reaches, reversible, contained, costs)| Rule {
                id: "r".into(),
                decision,
                reason: "r".into(),
                when: When {
                    reads,
                    writes,
                    reaches,
                    reversible,
                    contained,
                    costs,
                },
                script: None,
                ceiling: false,
            },
        )
    }

    fn effects() -> impl Strategy<Value = Effects> {
        let scope = prop::sample::select(vec![
            vec![],
            vec!["./a"],
            vec!["/etc/x"],
            vec!["/tmp/y"],
            vec!["*"],
            vec!["./a", "/etc/x"],
        ]);
        (scope.clone(), scope, any::<[bool; 4]>()).prop_map(|(reads, writes, f)| {
            let profile = crate::effects::EffectProfile {
                reads: reads.into_iter().map(String::from).collect(),
                writes: writes.into_iter().map(String::from).collect(),
                reaches: f[0],
                reversible: f[1],
                contained: f[2],
                costs: f[3],
            };
            profile.resolve(&Context::example().workspace)
        })
    }

    fn judge(default: Decision, rules: &[Rule]) -> Judge {
        Judge {
            mode: "m".into(),
            default,
            ceiling: Ceiling::default(),
            rules: rules.iter().cloned().map(Arc::new).collect(),
        }
    }

    /// A rule that matches everything and asks its script, which answers `answer`.
    fn scripted(host: &ScriptHost, decision: Decision, answer: &str) -> Rule {
        let text = format!("fn decide(effects, context) {{ {answer} }}");
        Rule {
            id: format!("p/{answer}"),
            decision,
            reason: "scripted".into(),
            when: When::default(),
            script: Some(RuleScript {
                script: host.compile("p.rhai", &text).unwrap(),
                function: "decide".into(),
                settings: Dynamic::UNIT,
            }),
            ceiling: false,
        }
    }

    #[test]
    fn a_judgement_made_only_by_failed_rules_is_unjudgeable() {
        let host = ScriptHost::default();
        let ctx = Context::example();
        let e = crate::effects::EffectProfile::default().resolve(&ctx.workspace);
        let failed = scripted(&host, Decision::Allow, "42");
        let out = judge(Decision::Allow, std::slice::from_ref(&failed)).judge(&e, &ctx, &host);
        assert_eq!((out.decision, out.by), (Decision::Refuse, DecidedBy::Unjudgeable));
        assert!(out.reason.contains("failed"), "{}", out.reason);
        // A working rule that refuses too makes it the policy's refusal.
        let refuses = scripted(&host, Decision::Refuse, "true");
        let out = judge(Decision::Allow, &[failed, refuses]).judge(&e, &ctx, &host);
        assert_eq!((out.decision, out.by), (Decision::Refuse, DecidedBy::Rules));
        assert_eq!(out.rules, ["p/42", "p/true"]);
    }

    /// Paths and globs over a small alphabet, with the parts resolution never leaves (empty and
    /// `.` components, a trailing `/`) and wildcards.
    fn written_path() -> impl Strategy<Value = String> {
        let part = prop::sample::select(vec![
            "", ".", "..", "a", "b", ".git", ".env", "id_rsa", "*", ".e*", "x.pem",
        ]);
        (any::<bool>(), prop::collection::vec(part, 0..5), any::<bool>()).prop_map(|(absolute, parts, trailing)| {
            let mut text = if absolute { "/".to_string() } else { String::new() };
            text.push_str(&parts.join("/"));
            if trailing {
                text.push('/');
            }
            text
        })
    }

    /// A glob as a rule may write it: home, absolute or root-relative, with wildcards, classes,
    /// alternatives, escapes, `**`, `.` and `..`.
    fn written_glob() -> impl Strategy<Value = String> {
        let part = prop::sample::select(vec![
            "", ".", "..", "a", "b", "some", "7", ".git", "*", "**", "?", "a*", "*.pem", "[ab]", "[!a]", "{a,b}",
            "{7,b}*", "\\a", "a\\*", ".e*",
        ]);
        // Mostly absolute: the check before building settles only absolute globs.
        let anchor = prop::sample::select(vec!["/", "/", "/", "~/", ""]);
        (anchor, prop::collection::vec(part, 0..4), any::<bool>()).prop_map(|(anchor, parts, trailing)| {
            let mut text = anchor.to_string();
            text.push_str(&parts.join("/"));
            if trailing {
                text.push('/');
            }
            text
        })
    }

    /// A place as resolution may hand it: one of the generated paths, under the home directory
    /// or a root sometimes.
    fn placed_path() -> impl Strategy<Value = String> {
        let part = prop::sample::select(vec![
            "", ".", "..", "a", "b", "some", "7", "70", ".git", ".env", "x.pem", "*", ".e*",
        ]);
        (0u8..4, prop::collection::vec(part, 0..4), any::<bool>()).prop_map(|(at, parts, trailing)| {
            let mut text = ["/", "/h/", "/w/", ""][usize::from(at)].to_string();
            text.push_str(&parts.join("/"));
            if trailing {
                text.push('/');
            }
            text
        })
    }

    proptest! {
        /// The byte search finds the literal start the component-by-component reading finds,
        /// and the check for what may fail to parse is the search by `char`.
        #[test]
        fn the_literal_start_is_found_by_bytes(glob in "[a/*?\\[\\]{}\\\\é.~]{0,12}") {
            let by_parts = glob
                .split('/')
                .scan(0, |at, part| {
                    let start = *at;
                    *at += part.len() + 1;
                    Some((start, part))
                })
                .find(|(_, part)| part.contains(['*', '?', '[', ']', '{', '}', '\\']))
                .map_or(glob.len(), |(start, _)| start);
            prop_assert_eq!(literal_start(&glob), &glob[..by_parts]);
            prop_assert_eq!(
                glob.bytes().any(|b| MAY_FAIL.contains(&b)),
                glob.contains(['[', '{', '}', '\\'])
            );
            // `PathSet::check` looks for those only past the literal start.
            prop_assert_eq!(
                glob.bytes().skip(literal_start(&glob).len()).any(|b| MAY_FAIL.contains(&b)),
                glob.contains(['[', '{', '}', '\\'])
            );
        }

        /// One pass over a place's bytes says what the wildcard scan and [`is_normal`] say.
        #[test]
        fn one_pass_reads_what_the_scans_read(path in written_path()) {
            let wildcard = path.bytes().any(|b| matches!(b, b'*' | b'?' | b'['));
            prop_assert_eq!(read_bytes(path.as_bytes()), (wildcard, is_normal(&path)));
        }

        /// A start passed over by its first byte is one that neither holds nor is held by the
        /// place: `covers` says what comparing every start in full says.
        #[test]
        fn the_first_byte_passes_over_only_what_cannot_cover(path in written_path(), directory in any::<bool>()) {
            let globs: Vec<String> = [".git/hooks/**", ".git/config", "a/**", "**/.sixfold", "/a/b", "/etc/**", "~/.ssh/**", "~/b", "./a/.", "opencode.json"]
                .iter().map(|g| g.to_string()).collect();
            let set = PathSet::new("p", &globs).unwrap();
            let ws = Workspace::new("/a").with_home("/b");
            let path = std::path::PathBuf::from(&path);
            let touch = Touch { place: ws.place(&path), path: Some(path.clone()), directory: Some(directory) };
            let seen = Seen::of(&touch, &ws);
            let in_full = set.built().starts.iter().any(|start| {
                let at = match start.anchor {
                    Anchor::Home => seen.home,
                    Anchor::Absolute => Some(path.as_path()),
                    Anchor::Root => seen.root.map(Path::new),
                };
                let Some(at) = at else { return false };
                let (holds, held) = match &start.bytes {
                    Some(literal) => {
                        let at = at.as_os_str().as_encoded_bytes();
                        (starts_with_bytes(literal, at), starts_with_bytes(at, literal))
                    }
                    None => (start.literal.starts_with(at), at.starts_with(&start.literal)),
                };
                holds || (start.deep && held && directory)
            });
            let glob_part = seen.root_glob;
            if !glob_part {
                prop_assert_eq!(set.covers_seen(&seen), in_full);
            } else {
                prop_assert!(!in_full || set.covers_seen(&seen));
            }
        }

        /// A set built only when a place may reach it answers what the built set answers, for
        /// every kind of glob and place (the check before building is exact).
        #[test]
        fn a_set_left_unbuilt_answers_as_built(
            globs in prop::collection::vec(written_glob(), 1..3),
            path in prop::option::weighted(0.9, placed_path()),
            directory in any::<bool>(),
        ) {
            let Ok(set) = PathSet::new("p", &globs) else { return Ok(()) };
            let ws = Workspace::new("/w").with_home("/h");
            // Also a path the first glob may match: its text with the special characters
            // dropped (`/\\a/{b,c}*` gives `/a/bc`), and the directory above it.
            let first = match globs[0].strip_prefix("~/") {
                Some(rest) => format!("/h/{rest}"),
                None if globs[0].starts_with('/') => globs[0].clone(),
                None => format!("/w/{}", globs[0]),
            };
            let near: String = first.chars().filter(|c| !"\\*?[]{},!".contains(*c)).collect();
            let above = Path::new(&near).parent().map(|p| p.to_string_lossy().into_owned());
            for path in [path, Some(near), above] {
                let path = path.map(std::path::PathBuf::from);
                let place = path.as_ref().map_or(Place::Unknown, |p| ws.place(p));
                let touch = Touch { place, path, directory: Some(directory) };
                let seen = Seen::of(&touch, &ws);
                let fresh = PathSet::new("p", &globs).unwrap();
                // Each question asked of a set never built: once built, a set skips the check.
                let unbuilt = set.clone();
                prop_assert!(unbuilt.built.get().is_none());
                prop_assert_eq!(unbuilt.contains_seen(&seen, &ws), fresh.contains_built(&seen, &ws), "contains {:?} {:?}", globs, touch.path);
                let unbuilt = set.clone();
                prop_assert_eq!(unbuilt.covers_seen(&seen), fresh.covers_built(&seen), "covers {:?} {:?}", globs, touch.path);
                // And asked again of the same set, built or not, the answer stands.
                prop_assert_eq!(unbuilt.covers_seen(&seen), fresh.covers_built(&seen));
                prop_assert_eq!(unbuilt.contains_seen(&seen, &ws), fresh.contains_built(&seen, &ws));
            }
        }

        /// The check at load refuses exactly the globs the glob parser refuses: a glob without a
        /// class, an alternative or an escape always parses, so it is not parsed at load.
        #[test]
        fn globs_without_classes_always_parse(
            plain in "[a-z/*?.,!^\\]-]{0,24}",
            any_glob in "[a-z/*?.,!^\\]\\[{}\\\\-]{0,24}",
        ) {
            prop_assert!(glob(&plain).is_ok(), "{}", plain);
            prop_assert!(PathSet::new("p", std::slice::from_ref(&plain)).is_ok());
            for raw in [any_glob.clone(), format!("/{any_glob}"), format!("~/{any_glob}")] {
                let pattern = raw.strip_prefix("~/").unwrap_or(&raw);
                prop_assert_eq!(PathSet::new("p", std::slice::from_ref(&raw)).is_ok(), glob(pattern).is_ok(), "{}", raw);
            }
        }

        /// What a place is read as once per judgement is what the component walks said.
        #[test]
        fn a_place_seen_once_reads_as_its_components(path in written_path(), home in written_path()) {
            let ws = Workspace::new("/w").with_home(format!("/{home}"));
            let path = std::path::PathBuf::from(&path);
            let touch = Touch { place: ws.place(&path), path: Some(path.clone()), directory: Some(false) };
            let seen = Seen::of(&touch, &ws);
            prop_assert_eq!(seen.home, ws.home().and_then(|h| path.strip_prefix(h).ok()));
            prop_assert_eq!(seen.below_root_dir, path.strip_prefix("/").ok());
            prop_assert_eq!(seen.dot_wildcard, crate::glob_place::has_dot_wildcard(&path.to_string_lossy()));
            let root_glob = match &touch.place {
                Place::Root { relative, .. } => crate::glob_place::is_glob(relative),
                _ => false,
            };
            prop_assert_eq!(seen.root_glob, root_glob);
        }

        /// Led globs passed over by their first byte, and wildcard-led ones by the text they
        /// need (scanned once on the path below `/`), match what the glob set matches.
        #[test]
        fn the_shortcuts_match_what_the_globs_match(path in written_path()) {
            let globs: Vec<String> = [".git/hooks/**", ".git/config", "a/*/b", "**/.env*", "**/id_rsa*", "**/*.pem", "b", "/a/**", "~/.env"]
                .iter().map(|g| g.to_string()).collect();
            let set = PathSet::new("p", &globs).unwrap();
            let ws = Workspace::new("/a").with_home("/b");
            let path = std::path::PathBuf::from(&path);
            let touch = Touch { place: ws.place(&path), path: Some(path.clone()), directory: Some(false) };
            let home = ws.home().and_then(|h| path.strip_prefix(h).ok());
            let relative = match &touch.place {
                Place::Root { relative, .. } if !relative.is_empty() => Some(relative.clone()),
                _ => None,
            };
            let one = |pattern: &str, at: &Path| GlobBuilder::new(pattern).literal_separator(true).build().unwrap().compile_matcher().is_match(at);
            let by_globs = if crate::glob_place::has_dot_wildcard(&path.to_string_lossy()) {
                set.may_contain(&touch, &ws)
            } else {
                globs.iter().any(|g| match g.strip_prefix("~/") {
                    Some(rest) => home.is_some_and(|h| one(rest, h)),
                    None if g.starts_with('/') => one(g, &path),
                    None => relative.as_ref().is_some_and(|r| one(g, Path::new(r)))
                        || path.strip_prefix("/").is_ok_and(|p| one(g, p)),
                })
            };
            prop_assert_eq!(set.contains(&touch, &ws), by_globs);
        }

        #[test]
        fn strictest_matching_rule_wins(default in decision(), rules in prop::collection::vec(rule(), 0..6), e in effects()) {
            let ctx = Context::example();
            let host = ScriptHost::default();
            let j = judge(default, &rules).judge(&e, &ctx, &host);
            let matched: Vec<Decision> = rules.iter().filter(|r| r.when.holds(&e, &ctx.workspace).is_some()).map(|r| r.decision).collect();
            let expected = matched.iter().copied().max().unwrap_or(default);
            prop_assert_eq!(j.decision, expected);
            prop_assert_eq!(j.rules.is_empty(), matched.is_empty());
            prop_assert_eq!(j.by, if matched.is_empty() { DecidedBy::Default } else { DecidedBy::Rules });
        }

        #[test]
        fn a_narrowing_extension_is_never_more_permissive(
            parent_default in decision(),
            parent_rules in prop::collection::vec(rule(), 0..5),
            raise in 0u8..3,
            child_rules in prop::collection::vec(rule(), 0..5),
            e in effects(),
        ) {
            // The load-time check: the child's default and new rules decide at least the parent's default.
            let child_default = parent_default.max(match raise { 0 => Decision::Allow, 1 => Decision::Ask, _ => Decision::Refuse });
            let child_new: Vec<Rule> = child_rules.into_iter().map(|mut r| { r.decision = r.decision.max(parent_default); r }).collect();
            let mut all = parent_rules.clone();
            all.extend(child_new);
            let ctx = Context::example();
            let host = ScriptHost::default();
            let parent = judge(parent_default, &parent_rules).judge(&e, &ctx, &host);
            let child = judge(child_default, &all).judge(&e, &ctx, &host);
            prop_assert!(child.decision >= parent.decision);
        }

        #[test]
        fn beyond_the_ceiling_is_always_refused(rules in prop::collection::vec(rule(), 0..5), e in effects()) {
            let ctx = Context::example();
            let mut j = judge(Decision::Allow, &rules);
            j.ceiling = Ceiling { writes: Some(vec![]), reaches: Some(false), ..Ceiling::default() };
            let out = j.judge(&e, &ctx, &ScriptHost::default());
            if !e.writes.is_empty() || e.flags.reaches {
                prop_assert_eq!(out.decision, Decision::Refuse);
                prop_assert_eq!(out.rules, vec!["m/ceiling".to_string()]);
                prop_assert_eq!(out.by, DecidedBy::Ceiling);
            }
        }
    }
}
