//! A place written as a glob (`~/.aw?/credentials`, `./.e*`) against a path set's globs: may the
//! shell expand it to a member? Judged by what the glob can name, not by its spelling, so a
//! secret or a protected path hidden behind a wildcard is still seen.
//!
//! Only globs with a wildcard in a component that starts with `.` are read this way: bash's
//! wildcards never match a leading `.` unless that `.` is written (`dotglob` is off unless a
//! command turns it on, which the classifier does not understand), and the names a glob could
//! hide that way are the dot names most secrets and every protected path have. A wildcard over
//! plain names (`cat *`) is read as the directory reads it stands for, which the brief's table
//! judges by the places they name (see docs/security.md, what the classifier does not see).

use globset::GlobBuilder;
use std::path::{Path, PathBuf};

/// How many directory entries one look at the disk reads before it stops.
const MAX_ENTRIES: usize = 20_000;
/// How deep a `**` goes below where it starts.
const MAX_DEPTH: usize = 16;

/// What a bounded look at the disk found a glob to name.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Expansion {
    /// The paths that exist and match, as found (symlinks not followed: the caller resolves).
    pub(crate) found: Vec<PathBuf>,
    /// The look stopped at its bound: there may be more.
    pub(crate) cut: bool,
}

/// Whether a written place holds a wildcard (`*`, `?`, `[`) in some component.
pub(crate) fn is_glob(place: &str) -> bool {
    place != "*" && place.split('/').any(is_wild)
}

/// The existing paths an absolute glob names, by a bounded look at the disk: at most
/// [`MAX_ENTRIES`] entries read, `**` at most [`MAX_DEPTH`] directories deep, never into a
/// directory reached through a symlink. A glob with a `**` component is one a program expands
/// itself (find's `{}`, a tool's search), whose wildcards match names that start with `.` too;
/// in any other a wildcard matches a leading `.` only where the `.` is written, as the shell's.
pub(crate) fn expand(glob: &Path) -> Expansion {
    let text = glob.to_string_lossy();
    let dots = text.split('/').any(|p| p == "**");
    let mut frontier = vec![PathBuf::from("/")];
    let mut budget = MAX_ENTRIES;
    let mut cut = false;
    for part in text.split('/').filter(|p| !p.is_empty()) {
        let mut next = Vec::new();
        if part == "**" {
            for dir in &frontier {
                let mut stack = vec![(dir.clone(), 0usize)];
                while let Some((at, depth)) = stack.pop() {
                    next.push(at.clone());
                    if depth >= MAX_DEPTH {
                        cut = true;
                        continue;
                    }
                    // Every entry below is named (`dir/**` is each file in it); only real
                    // directories are walked into.
                    for entry in entries(&at, &mut budget, &mut cut) {
                        if entry.file_type().is_ok_and(|t| t.is_dir()) {
                            stack.push((entry.path(), depth + 1));
                        } else {
                            next.push(entry.path());
                        }
                    }
                }
            }
        } else if is_wild(part) {
            // INVARIANT (fail closed): a component that does not compile matches every name.
            let matcher = GlobBuilder::new(part)
                .literal_separator(true)
                .build()
                .map(|g| g.compile_matcher())
                .ok();
            for dir in &frontier {
                for entry in entries(dir, &mut budget, &mut cut) {
                    let name = entry.file_name();
                    let hidden = name.to_string_lossy().starts_with('.') && !part.starts_with('.');
                    if hidden && !dots {
                        continue;
                    }
                    if matcher.as_ref().is_none_or(|m| m.is_match(Path::new(&name))) {
                        next.push(entry.path());
                    }
                }
            }
        } else {
            next = frontier.iter().map(|d| d.join(part)).collect();
        }
        next.sort();
        next.dedup();
        frontier = next;
        if frontier.is_empty() || cut {
            break;
        }
    }
    let found = if cut {
        Vec::new()
    } else {
        frontier.into_iter().filter(|p| p.symlink_metadata().is_ok()).collect()
    };
    Expansion { found, cut }
}

/// A directory's entries, each charged to `budget`; `cut` once it is spent. A path that is not
/// a readable directory has none.
fn entries(dir: &Path, budget: &mut usize, cut: &mut bool) -> Vec<std::fs::DirEntry> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in read.flatten() {
        if *budget == 0 {
            *cut = true;
            break;
        }
        *budget -= 1;
        out.push(entry);
    }
    out
}

/// Whether `word` holds a wildcard in a component that starts with `.`.
pub(crate) fn has_dot_wildcard(word: &str) -> bool {
    word.split('/').any(|part| part.starts_with('.') && is_wild(part))
}

/// Whether the glob `place` (components split on `/`) may name a path that `pattern` (a path
/// set's glob, relative to the same anchor; `**` any number of components) matches. Errs on the
/// side of a match where two wildcards meet.
pub(crate) fn may_match(place: &[&str], pattern: &[&str]) -> bool {
    match (place.split_first(), pattern.split_first()) {
        (_, None) => place.is_empty(),
        // `p/**` holds `p` itself too.
        (None, Some((first, rest))) => *first == "**" && rest.is_empty(),
        (Some((_, place_rest)), Some((&"**", pattern_rest))) => {
            may_match(place, pattern_rest) || may_match(place_rest, pattern)
        }
        (Some((p, place_rest)), Some((s, pattern_rest))) => {
            component_may_match(p, s) && may_match(place_rest, pattern_rest)
        }
    }
}

/// Like [`may_match`], for a place that is a glob a program expands itself (find's `{}`, a
/// tool's pattern), where `*` and `**` match names that start with `.` too.
pub(crate) fn may_reach(place: &[&str], pattern: &[&str]) -> bool {
    match (place.split_first(), pattern.split_first()) {
        (None, None) => true,
        (Some((&"**", place_rest)), _) => {
            may_reach(place_rest, pattern) || pattern.split_first().is_some_and(|(_, rest)| may_reach(place, rest))
        }
        (_, Some((&"**", pattern_rest))) => {
            may_reach(place, pattern_rest) || place.split_first().is_some_and(|(_, rest)| may_reach(rest, pattern))
        }
        (Some((p, place_rest)), Some((s, pattern_rest))) => {
            let either = if p.starts_with('.') {
                p.to_string()
            } else {
                format!(".{p}")
            };
            (component_may_match(p, s) || (is_wild(p) && component_may_match(&either, s)))
                && may_reach(place_rest, pattern_rest)
        }
        _ => false,
    }
}

/// One component of each: may some name match both?
fn component_may_match(place: &str, pattern: &str) -> bool {
    // INVARIANT (fail closed): a component that does not compile as a glob is taken to match.
    let glob_matches = |glob: &str, name: &str| {
        GlobBuilder::new(glob)
            .literal_separator(true)
            .build()
            .map(|g| g.compile_matcher().is_match(name))
            .unwrap_or(true)
    };
    match (is_wild(place), is_wild(pattern)) {
        (false, _) => glob_matches(pattern, place),
        // A wildcard matches a leading `.` only where the `.` is written.
        (true, false) => (place.starts_with('.') || !pattern.starts_with('.')) && glob_matches(place, pattern),
        (true, true) => {
            let (a, b) = (literal_start(place), literal_start(pattern));
            (place.starts_with('.') || !pattern.starts_with('.')) && (a.starts_with(b) || b.starts_with(a))
        }
    }
}

fn is_wild(part: &str) -> bool {
    part.contains(['*', '?', '['])
}

/// What a component says before its first wildcard.
fn literal_start(part: &str) -> &str {
    let end = part.find(['*', '?', '[', '{']).unwrap_or(part.len());
    part.get(..end).unwrap_or(part)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn may(place: &str, pattern: &str) -> bool {
        let split = |s: &str| {
            s.split('/')
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        let (p, s) = (split(place), split(pattern));
        let p: Vec<&str> = p.iter().map(String::as_str).collect();
        let s: Vec<&str> = s.iter().map(String::as_str).collect();
        may_match(&p, &s)
    }

    #[test]
    fn a_wildcard_over_a_dot_name_is_seen() {
        for (place, pattern) in [
            (".aw?/credentials", ".aws/**"),
            (".ss*/id_rsa", ".ssh/**"),
            (".ss[h]", ".ssh"),
            (".e*", "**/.env*"),
            ("app/.e?v", "**/.env*"),
            (".e*.local", "**/.env*"),
            (".s*/state.toml", ".sixfold/**"),
            (".git/hoo*/pre-commit", ".git/hooks/**"),
            (".*", ".mcp.json"),
        ] {
            assert!(may(place, pattern), "{place} may name {pattern}");
        }
    }

    #[test]
    fn what_the_glob_cannot_name_is_not_a_match() {
        for (place, pattern) in [
            (".g*", "**/.env*"),
            ("*/credentials", ".aws/**"),
            (".cache/*", ".ssh/**"),
            (".aw?/credentials", ".ssh/**"),
            (".x*", ".sixfold/**"),
        ] {
            assert!(!may(place, pattern), "{place} cannot name {pattern}");
        }
    }

    #[test]
    fn a_glob_is_expanded_by_a_bounded_look() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("config/deep/er")).unwrap();
        std::fs::write(root.join("config/app.toml"), "").unwrap();
        std::fs::write(root.join("config/.env"), "").unwrap();
        std::fs::write(root.join("config/deep/er/key.pem"), "").unwrap();
        let found = |glob: &str| {
            let e = expand(&root.join(glob));
            assert!(!e.cut);
            let mut names: Vec<String> = e
                .found
                .iter()
                .map(|p| p.strip_prefix(&root).unwrap().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        // As the shell: `*` does not match a leading `.`; under a `**` (a program's own glob) it does.
        assert_eq!(found("config/*"), ["config/app.toml", "config/deep"]);
        assert_eq!(found("config/.*"), ["config/.env"]);
        assert!(found("**/*").contains(&"config/.env".to_string()));
        assert_eq!(found("config/*.toml"), ["config/app.toml"]);
        assert_eq!(found("**/*.pem"), ["config/deep/er/key.pem"]);
        assert!(found("config/**").contains(&"config/deep/er/key.pem".to_string()));
        assert!(found("nowhere/*").is_empty());
        // A symlinked directory is not walked into.
        std::os::unix::fs::symlink(root.join("config"), root.join("link")).unwrap();
        assert_eq!(
            found("link/**/*.pem"),
            ["link/deep/er/key.pem"],
            "a literal start is followed"
        );
        assert_eq!(
            found("**/*.pem"),
            ["config/deep/er/key.pem"],
            "a ** does not enter a link"
        );
        assert!(is_glob("src/*.rs") && !is_glob("*") && !is_glob("src/lib.rs"));
    }

    #[test]
    fn a_glob_a_program_expands_reaches_dot_names() {
        let split = |s: &'static str| s.split('/').filter(|p| !p.is_empty()).collect::<Vec<_>>();
        assert!(may_reach(&split("**/state.toml"), &split(".sixfold/**")));
        assert!(may_reach(&split("*"), &split(".mcp.json")));
        assert!(may_reach(&split(".git/**"), &split(".git/hooks/**")));
        assert!(!may_reach(&split("src/**/*.tmp"), &split(".sixfold/**")));
        assert!(!may_reach(&split("src/*.rs"), &split(".git/config")));
    }

    #[test]
    fn only_dot_wildcards_are_read_this_way() {
        assert!(has_dot_wildcard("~/.aw?/credentials"));
        assert!(has_dot_wildcard("./.e*"));
        assert!(!has_dot_wildcard("src/*.rs"));
        assert!(!has_dot_wildcard("/root/.ssh/id_rsa"));
    }
}
