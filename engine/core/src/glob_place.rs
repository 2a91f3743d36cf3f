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
    fn only_dot_wildcards_are_read_this_way() {
        assert!(has_dot_wildcard("~/.aw?/credentials"));
        assert!(has_dot_wildcard("./.e*"));
        assert!(!has_dot_wildcard("src/*.rs"));
        assert!(!has_dot_wildcard("/root/.ssh/id_rsa"));
    }
}
