//! The place classes of a comparison: representative places, grouped by what every rule and
//! ceiling of the compared modes says of them.

use super::Space;
use crate::effects::{EffectProfile, Touch};
use crate::judge::{Context, Judge, PathSet, PlaceMatcher};
use crate::scope::{Place, Scopes, Workspace};
use std::collections::BTreeMap;
use std::sync::Arc;

/// The workspace the space is judged in: where its representative places lie.
const PRIMARY: &str = "/workspace";
const HOME: &str = "/home/user";
const TMP: &str = "/tmp";
/// Named roots live here; `other` is always one.
const ROOTS: &str = "/sixfold-roots";
/// A place in no root, temp dir or home.
const OUTSIDE: &str = "/sixfold-outside";
/// A file name no shipped glob names.
const FILE: &str = "sixfold-place";

/// A set of places every rule and ceiling of the compared modes treats alike.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PlaceClass {
    /// What it is, in words (`a file in the workspace`, `@secrets under the home directory`).
    pub label: String,
    /// Its representative place as a scope entry (`/home/user/.ssh`, `*`); `None` for no place.
    pub place: Option<String>,
    /// The other representative places that fell in the class.
    pub also: Vec<String>,
    /// What those other places are, where it differs from the label (`a file in the root
    /// `other``, `a directory holding @protected in the workspace`).
    pub kinds: Vec<String>,
    /// The representative place resolved and classified, as the judge sees it.
    #[serde(skip)]
    pub(crate) touch: Option<Touch>,
}

/// A place to try, before grouping.
struct Candidate {
    label: String,
    place: Option<String>,
    /// Whether the label still needs where the place lies (`in the workspace`).
    placed: bool,
}

impl Candidate {
    fn new(label: impl Into<String>, place: Option<String>) -> Candidate {
        Candidate {
            label: label.into(),
            place,
            placed: true,
        }
    }

    /// A place named by a rule: its label says where it lies once it is resolved.
    fn named(label: impl Into<String>, place: String) -> Candidate {
        Candidate {
            label: label.into(),
            place: Some(place),
            placed: false,
        }
    }
}

/// Words that are scopes in a ceiling but name no root.
const SCOPE_WORDS: [&str; 3] = ["*", "workspace", "tmp"];

fn is_root_name(entry: &str) -> bool {
    !SCOPE_WORDS.contains(&entry) && !entry.contains('/') && !entry.contains('.') && !entry.starts_with('~')
}

pub(super) fn space(judges: &[&Judge]) -> Space {
    let ceiling_entries: Vec<&String> = judges
        .iter()
        .flat_map(|j| [&j.ceiling.reads, &j.ceiling.writes])
        .flatten()
        .flatten()
        .collect();
    let mut roots: Vec<String> = vec!["other".into()];
    for entry in &ceiling_entries {
        if is_root_name(entry) && !roots.contains(entry) {
            roots.push((*entry).clone());
        }
    }
    let mut workspace = Workspace::new(PRIMARY);
    for name in &roots {
        workspace = workspace.with_root(name, format!("{ROOTS}/{name}"));
    }
    let workspace = workspace.with_home(HOME).with_tmp(TMP);

    let mut candidates = vec![
        Candidate::new("no place", None),
        Candidate::new("a file in the workspace", Some(format!("{PRIMARY}/{FILE}"))),
        Candidate::new("the workspace itself", Some(PRIMARY.into())),
    ];
    for name in &roots {
        candidates.push(Candidate::new(
            format!("a file in the root `{name}`"),
            Some(format!("{ROOTS}/{name}/{FILE}")),
        ));
    }
    candidates.extend([
        Candidate::new("a file in the temp dir", Some(format!("{TMP}/{FILE}"))),
        Candidate::new("a file under the home directory", Some(format!("{HOME}/{FILE}"))),
        Candidate::new("a file outside", Some(format!("{OUTSIDE}/{FILE}"))),
        Candidate::new("unknown (`*`)", Some("*".into())),
    ]);
    let sets = path_sets(judges);
    for set in &sets {
        candidates.extend(set_candidates(set, &roots));
    }
    candidates.extend(overlaps(&sets, &ceiling_entries));
    for entry in ceiling_entries {
        if !SCOPE_WORDS.contains(&entry.as_str()) && !is_root_name(entry) {
            let inside = format!("{}/{FILE}", entry.trim_end_matches('/'));
            candidates.push(Candidate::named(format!("inside `{entry}`"), inside));
        }
    }

    // Group by what every rule and ceiling says of the place, first seen first.
    let mut classes: Vec<PlaceClass> = Vec::new();
    let mut by_signature: BTreeMap<Vec<bool>, usize> = BTreeMap::new();
    for candidate in candidates {
        let touch = match &candidate.place {
            None => None,
            Some(place) => match touch_of(place, &workspace) {
                Some(t) => Some(t),
                None => continue,
            },
        };
        let label = match (&touch, &candidate.place) {
            (Some(t), Some(place)) if !candidate.placed => format!(
                "{} {} (`{}`)",
                candidate.label,
                where_words(t, &workspace),
                shown(place)
            ),
            _ => candidate.label.clone(),
        };
        let signature = signature(judges, touch.as_ref(), &workspace);
        match by_signature.get(&signature).and_then(|&i| classes.get_mut(i)) {
            Some(class) => {
                if class.label != label && !class.kinds.contains(&label) {
                    class.kinds.push(label);
                }
                if let Some(place) = candidate.place {
                    if class.place.as_ref() != Some(&place) && !class.also.contains(&place) {
                        class.also.push(place);
                    }
                }
            }
            None => {
                by_signature.insert(signature, classes.len());
                classes.push(PlaceClass {
                    label,
                    place: candidate.place,
                    also: Vec::new(),
                    kinds: Vec::new(),
                    touch,
                });
            }
        }
    }
    Space {
        classes,
        context: Context::new(workspace),
    }
}

/// The path sets the judges' rules name (`@NAME`, `covers:@NAME`, inline globs), each once.
fn path_sets(judges: &[&Judge]) -> Vec<Arc<PathSet>> {
    let mut seen: Vec<Arc<PathSet>> = Vec::new();
    for judge in judges {
        for rule in &judge.rules {
            for matchers in [&rule.when.reads, &rule.when.writes].into_iter().flatten() {
                for m in matchers {
                    if let PlaceMatcher::Paths(set) | PlaceMatcher::Covers(set) = m {
                        if !seen.iter().any(|s| Arc::ptr_eq(s, set) || s.name() == set.name()) {
                            seen.push(set.clone());
                        }
                    }
                }
            }
        }
    }
    seen
}

/// A glob's components made concrete: `**` dropped, other wildcards filled with a letter.
fn concrete(parts: &[&str]) -> Vec<String> {
    let parts: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    let last = parts.len().saturating_sub(1);
    parts
        .iter()
        .enumerate()
        // `**` inside a glob may be no directory at all; at its end it is at least one entry.
        .filter(|(i, p)| **p != "**" || *i == last)
        .map(|(_, p)| {
            if *p == "**" {
                FILE.to_string()
            } else {
                concrete_component(p)
            }
        })
        .collect()
}

fn concrete_component(part: &str) -> String {
    let mut out = String::new();
    let mut chars = part.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '*' | '?' => out.push('x'),
            '[' => {
                // The first member of a class; a negated class gets a letter it rarely names.
                let negated = matches!(chars.peek(), Some('!') | Some('^'));
                let mut first = None;
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                    if first.is_none() && c != '!' && c != '^' {
                        first = Some(c);
                    }
                }
                out.push(if negated { 'q' } else { first.unwrap_or('x') });
            }
            '{' => {
                // The first alternative.
                let mut depth = 1;
                let mut taking = true;
                for c in chars.by_ref() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        ',' if depth == 1 => taking = false,
                        _ if taking => out.push(c),
                        _ => {}
                    }
                }
            }
            '\\' => {
                if let Some(c) = chars.next() {
                    out.push(c);
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The literal directories above a glob's first wildcard: the places that hold what it names.
fn holders(parts: &[&str]) -> Vec<Vec<String>> {
    let literal: Vec<String> = parts
        .iter()
        .take_while(|p| !p.contains(['*', '?', '[', '{']))
        .map(|p| p.to_string())
        .collect();
    // The literal itself holds what the glob names below it (`.git/hooks` of `.git/hooks/**`).
    let deeper = parts.iter().filter(|p| !p.is_empty()).count() > literal.len();
    let upto = if deeper { literal.len() + 1 } else { literal.len() };
    (0..upto).map(|n| literal.iter().take(n).cloned().collect()).collect()
}

/// Representative places for a path set: a member of each glob where it can lie, and the
/// directories that hold one.
fn set_candidates(set: &PathSet, roots: &[String]) -> Vec<Candidate> {
    let what = set_words(set);
    let mut out = Vec::new();
    for glob in set.globs() {
        let (bases, rest): (Vec<String>, &str) = if let Some(rest) = glob.strip_prefix("~/") {
            (vec![HOME.into()], rest)
        } else if let Some(rest) = glob.strip_prefix('/') {
            (vec![String::new()], rest)
        } else {
            let mut bases = vec![PRIMARY.to_string()];
            bases.extend(roots.iter().map(|r| format!("{ROOTS}/{r}")));
            // A relative glob is tried against the absolute path too: `**/…` lies anywhere.
            if glob.starts_with("**") {
                bases.extend([TMP.to_string(), HOME.to_string(), OUTSIDE.to_string()]);
            }
            (bases, glob.as_str())
        };
        let parts: Vec<&str> = rest.split('/').collect();
        let member = concrete(&parts);
        for base in &bases {
            let join = |tail: &[String]| {
                let tail = tail.join("/");
                match (base.is_empty(), tail.is_empty()) {
                    (true, _) => format!("/{tail}"),
                    (false, true) => base.clone(),
                    (false, false) => format!("{base}/{tail}"),
                }
            };
            out.push(Candidate::named(what.clone(), join(&member)));
            for holder in holders(&parts) {
                let place = join(&holder);
                if place != "/" {
                    out.push(Candidate::named(format!("a directory holding {what}"), place));
                }
            }
        }
    }
    out
}

/// A representative place as a person reads it: `./…` in the workspace, `~/…` under home.
fn shown(place: &str) -> String {
    let under = |base: &str| place.strip_prefix(base).filter(|r| r.is_empty() || r.starts_with('/'));
    if let Some(rest) = under(PRIMARY) {
        format!(".{rest}")
    } else if let Some(rest) = under(HOME) {
        format!("~{rest}")
    } else {
        place.to_string()
    }
}

/// Places where two named places meet: what a glob that matches anywhere (`**/.env*`) names
/// inside the directory another glob or a ceiling names (`src/**`, `./src`): `./src/.envx`.
fn overlaps(sets: &[Arc<PathSet>], ceiling_entries: &[&String]) -> Vec<Candidate> {
    // Each directory as a place prefix (`/workspace/src`), with what named it.
    let mut dirs: Vec<(String, String)> = Vec::new();
    for entry in ceiling_entries {
        if SCOPE_WORDS.contains(&entry.as_str()) || is_root_name(entry) || entry.starts_with('~') {
            continue;
        }
        let trimmed = entry.trim_end_matches('/');
        let base = match trimmed.strip_prefix("./") {
            Some(rest) => format!("{PRIMARY}/{rest}"),
            None if trimmed.starts_with('/') => trimmed.to_string(),
            None => format!("{PRIMARY}/{trimmed}"),
        };
        dirs.push((format!("`{entry}`"), base));
    }
    let mut anywhere: Vec<(String, Vec<String>)> = Vec::new();
    for set in sets {
        let what = set_words(set);
        for glob in set.globs() {
            if glob.starts_with('/') || glob.starts_with("~/") {
                continue;
            }
            let parts: Vec<&str> = glob.split('/').filter(|p| !p.is_empty()).collect();
            if let Some(("**", tail)) = parts.split_first().map(|(h, t)| (*h, t)) {
                if !tail.is_empty() {
                    anywhere.push((what.clone(), concrete(tail)));
                }
            }
            let literal: Vec<String> = parts
                .iter()
                .take_while(|p| !p.contains(['*', '?', '[', '{']))
                .map(|p| p.to_string())
                .collect();
            if !literal.is_empty() && literal.len() < parts.len() {
                dirs.push((what.clone(), format!("{PRIMARY}/{}", literal.join("/"))));
            }
        }
    }
    let mut out = Vec::new();
    for (dir_what, dir) in &dirs {
        for (what, tail) in &anywhere {
            if dir_what == what {
                continue;
            }
            let place = format!("{dir}/{}", tail.join("/"));
            out.push(Candidate::named(format!("{what} inside {dir_what}"), place));
        }
    }
    out
}

/// How a path set is named in a label: `@NAME`, or an inline glob as written.
fn set_words(set: &PathSet) -> String {
    if set.name().contains(['/', '*', '.', '~']) {
        format!("`{}`", set.name())
    } else {
        format!("@{}", set.name())
    }
}

/// A place as the judge sees it: resolved and classified.
fn touch_of(place: &str, workspace: &Workspace) -> Option<Touch> {
    let profile = EffectProfile {
        reads: vec![place.to_string()],
        ..EffectProfile::default()
    };
    profile.resolve(workspace).read_places.into_iter().next()
}

/// Where a touched place lies, in words.
fn where_words(touch: &Touch, workspace: &Workspace) -> String {
    match &touch.place {
        Place::Root { name, relative } if name == "workspace" && relative.is_empty() => {
            "as the workspace itself".into()
        }
        Place::Root { name, .. } if name == "workspace" => "in the workspace".into(),
        Place::Root { name, .. } => format!("in the root `{name}`"),
        Place::Tmp => "in the temp dir".into(),
        Place::Unknown => "somewhere unknown".into(),
        Place::Outside => match (&touch.path, workspace.home()) {
            (Some(p), Some(h)) if p.starts_with(h) => "under the home directory".into(),
            _ => "outside".into(),
        },
    }
}

/// What every rule condition and ceiling of the judges says of a place: each matcher's answer,
/// then whether the place lies within each ceiling's reads and writes.
pub(super) fn signature(judges: &[&Judge], touch: Option<&Touch>, workspace: &Workspace) -> Vec<bool> {
    let mut out = Vec::new();
    for judge in judges {
        for rule in &judge.rules {
            for matchers in [&rule.when.reads, &rule.when.writes].into_iter().flatten() {
                for m in matchers {
                    out.push(touch.is_some_and(|t| m.matches(t, workspace)));
                }
            }
        }
        for limit in [&judge.ceiling.reads, &judge.ceiling.writes] {
            out.push(within(limit, touch, workspace));
        }
    }
    out
}

/// Whether a place lies within a ceiling's scope limit (no limit, or no place, always does).
pub(super) fn within(limit: &Option<Vec<String>>, touch: Option<&Touch>, workspace: &Workspace) -> bool {
    let (Some(limit), Some(touch)) = (limit, touch) else {
        return true;
    };
    let have = match &touch.path {
        Some(p) => Scopes::from_paths([p.clone()]),
        None => Scopes::Everything,
    };
    have.le(&workspace.resolve(limit))
}
