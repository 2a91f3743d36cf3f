//! Effect profiles: the six fields every rule is a rule over.

use crate::scope::{Looks, Place, Scopes, Workspace};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The six fields as written in a bundle file, every one optional: a mode's ceiling (the most a
/// step may do), a rule's conditions (what a step must do to match), a tool's or a command rule's
/// effects (what it does; a field left out takes [`EffectProfile`]'s default).
///
/// `S` is what a scope entry is: the text as written, or what it compiles to (a rule's conditions
/// compile to place matchers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "EffectFields")]
pub struct EffectFields<S = String> {
    /// What it reads: named scopes (`workspace`, a root's name, `tmp`, `*`) and paths. In a
    /// condition: `any`, `workspace`, `tmp`, `outside`, `unknown`, `@NAME`, `covers:@NAME` or a
    /// path glob.
    #[serde(default = "none::<S>")]
    pub reads: Option<Vec<S>>,
    /// What it writes, with the same entries as `reads`.
    #[serde(default = "none::<S>")]
    pub writes: Option<Vec<S>>,
    /// Whether it leaves this machine.
    #[serde(default)]
    pub reaches: Option<bool>,
    /// Whether it can be undone (a step's default: true).
    #[serde(default)]
    pub reversible: Option<bool>,
    /// Whether it is inside a proven boundary.
    #[serde(default)]
    pub contained: Option<bool>,
    /// Whether it spends money.
    #[serde(default)]
    pub costs: Option<bool>,
}

// Not `#[serde(default)]` on the field: that would ask `S: Default` of every scope type.
fn none<S>() -> Option<Vec<S>> {
    None
}

impl<S> Default for EffectFields<S> {
    fn default() -> Self {
        EffectFields {
            reads: None,
            writes: None,
            reaches: None,
            reversible: None,
            contained: None,
            costs: None,
        }
    }
}

impl<S> EffectFields<S> {
    /// The same yes/no fields, with other `reads` and `writes` (e.g. compiled from these).
    pub fn with_scopes<T>(&self, reads: Option<Vec<T>>, writes: Option<Vec<T>>) -> EffectFields<T> {
        EffectFields {
            reads,
            writes,
            reaches: self.reaches,
            reversible: self.reversible,
            contained: self.contained,
            costs: self.costs,
        }
    }
}

impl<S: Clone> EffectFields<S> {
    /// Each field of `self`, or the other's where `self` leaves it out.
    pub fn or(&self, other: &EffectFields<S>) -> EffectFields<S> {
        EffectFields {
            reads: self.reads.clone().or_else(|| other.reads.clone()),
            writes: self.writes.clone().or_else(|| other.writes.clone()),
            reaches: self.reaches.or(other.reaches),
            reversible: self.reversible.or(other.reversible),
            contained: self.contained.or(other.contained),
            costs: self.costs.or(other.costs),
        }
    }
}

/// A step's effect profile: every one of the six fields set. In effects JSON and examples each
/// field is optional: one left out takes the empty/false default, except `reversible`, which
/// defaults to true.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(from = "EffectFields")]
pub struct EffectProfile {
    /// What it can see: named scopes (`workspace`, a root's name, `tmp`, `*`) and paths.
    pub reads: Vec<String>,
    /// What it can change: named scopes and paths.
    pub writes: Vec<String>,
    /// Does it leave this machine.
    pub reaches: bool,
    /// Can it be undone.
    pub reversible: bool,
    /// Is it inside a proven boundary.
    pub contained: bool,
    /// Does it spend money.
    pub costs: bool,
}

impl From<EffectFields> for EffectProfile {
    fn from(written: EffectFields) -> EffectProfile {
        EffectProfile {
            reads: written.reads.unwrap_or_default(),
            writes: written.writes.unwrap_or_default(),
            reaches: written.reaches.unwrap_or(false),
            reversible: written.reversible.unwrap_or(true),
            contained: written.contained.unwrap_or(false),
            costs: written.costs.unwrap_or(false),
        }
    }
}

impl Default for EffectProfile {
    fn default() -> Self {
        EffectProfile::from(EffectFields::default())
    }
}

impl EffectProfile {
    /// The same yes/no fields, with other `reads` and `writes` (e.g. placeholders filled in).
    pub fn with_scopes(&self, reads: Vec<String>, writes: Vec<String>) -> EffectProfile {
        EffectProfile {
            reads,
            writes,
            reaches: self.reaches,
            reversible: self.reversible,
            contained: self.contained,
            costs: self.costs,
        }
    }

    /// The conservative profile for what cannot be understood: reads and writes everything,
    /// reaches the network, cannot be undone.
    pub fn unknown() -> EffectProfile {
        EffectProfile {
            reads: vec!["*".into()],
            writes: vec!["*".into()],
            reaches: true,
            reversible: false,
            contained: false,
            costs: false,
        }
    }

    /// The profile with its scopes resolved against a workspace. The scopes are simplified (a
    /// wider place absorbs a narrower one, for the partial order and the ceiling), but the places
    /// rules match on are every place as written: `.` listed beside `.env` still shows `.env` to
    /// the secrets rule.
    pub fn resolve(&self, workspace: &Workspace) -> Effects {
        // Each place is resolved once (a resolution is an `lstat` per existing component), and
        // the scopes are made from the same resolutions the places are.
        // A component the places share (the workspace root, `/tmp`) is looked at once per step.
        let mut looks = Looks::default();
        let reads: Vec<Resolved> = self
            .reads
            .iter()
            .map(|e| Resolved::of(workspace, e, &mut looks))
            .collect();
        let writes: Vec<Resolved> = self
            .writes
            .iter()
            .map(|e| Resolved::of(workspace, e, &mut looks))
            .collect();
        Effects {
            reads: union(reads.iter().map(|r| &r.scopes)),
            writes: union(writes.iter().map(|r| &r.scopes)),
            flags: Flags {
                reaches: self.reaches,
                reversible: self.reversible,
                contained: self.contained,
                costs: self.costs,
            },
            read_places: places_as_written(workspace, &reads),
            write_places: places_as_written(workspace, &writes),
        }
    }
}

/// The four yes/no fields of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Flags {
    /// Does it leave this machine.
    pub reaches: bool,
    /// Can it be undone.
    pub reversible: bool,
    /// Is it inside a proven boundary.
    pub contained: bool,
    /// Does it spend money.
    pub costs: bool,
}

/// One place a step touches, with where it lies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touch {
    /// The resolved path; `None` for `*`.
    pub path: Option<PathBuf>,
    /// Where it lies.
    pub place: Place,
    /// Whether it is an existing directory, as resolution found it; `None` where resolution did
    /// not look (a named scope, `*`), so whoever needs to know looks at the disk.
    pub directory: Option<bool>,
}

impl Touch {
    /// Whether the place is an existing directory: what resolution found, else a look now.
    pub fn is_directory(&self) -> bool {
        match (self.directory, &self.path) {
            (Some(directory), _) => directory,
            (None, Some(path)) => path.is_dir(),
            (None, None) => false,
        }
    }
}

/// A resolved effect profile: scopes as [`Scopes`], each place classified. This is what
/// judgement and the partial order work on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effects {
    /// What it can see.
    pub reads: Scopes,
    /// What it can change.
    pub writes: Scopes,
    /// The yes/no fields.
    pub flags: Flags,
    /// Each read place, classified.
    pub read_places: Vec<Touch>,
    /// Each written place, classified.
    pub write_places: Vec<Touch>,
}

/// A resolved profile without classification: the lattice the laws are stated over.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Profile {
    /// What it can see.
    pub reads: Scopes,
    /// What it can change.
    pub writes: Scopes,
    /// The yes/no fields.
    pub flags: Flags,
}

impl Profile {
    /// `self ≤ other` in the partial order.
    pub fn le(&self, other: &Profile) -> bool {
        let (f, o) = (self.flags, other.flags);
        self.reads.le(&other.reads)
            && self.writes.le(&other.writes)
            && (!f.reaches || o.reaches)
            && (!f.costs || o.costs)
            && (f.reversible || !o.reversible)
            && (f.contained || !o.contained)
    }

    /// The least upper bound: what either can do.
    pub fn join(&self, other: &Profile) -> Profile {
        Profile {
            reads: self.reads.join(&other.reads),
            writes: self.writes.join(&other.writes),
            flags: Flags {
                reaches: self.flags.reaches || other.flags.reaches,
                costs: self.flags.costs || other.flags.costs,
                reversible: self.flags.reversible && other.flags.reversible,
                contained: self.flags.contained && other.flags.contained,
            },
        }
    }

    /// The greatest lower bound: what both can do.
    pub fn meet(&self, other: &Profile) -> Profile {
        Profile {
            reads: self.reads.meet(&other.reads),
            writes: self.writes.meet(&other.writes),
            flags: Flags {
                reaches: self.flags.reaches && other.flags.reaches,
                costs: self.flags.costs && other.flags.costs,
                reversible: self.flags.reversible || other.flags.reversible,
                contained: self.flags.contained || other.flags.contained,
            },
        }
    }
}

impl From<&Effects> for Profile {
    fn from(e: &Effects) -> Profile {
        Profile {
            reads: e.reads.clone(),
            writes: e.writes.clone(),
            flags: e.flags,
        }
    }
}

/// Each entry resolved on its own and classified, the same place once.
// INVARIANT (fail closed): no place a step names is hidden from the rules by a wider one.
/// What `Workspace::resolve` makes of the entries together, from each entry's resolution.
fn union<'a>(each: impl Iterator<Item = &'a Scopes>) -> Scopes {
    let mut paths = Vec::new();
    for scopes in each {
        match scopes {
            Scopes::Everything => return Scopes::Everything,
            Scopes::Paths(found) => paths.extend(found.iter().cloned()),
        }
    }
    Scopes::from_paths(paths)
}

/// One entry as written, resolved: its scopes, and what resolution found of each path.
struct Resolved {
    scopes: Scopes,
    found: Vec<(PathBuf, Option<bool>)>,
}

impl Resolved {
    fn of(workspace: &Workspace, written: &str, looks: &mut Looks) -> Resolved {
        match workspace.resolve_looked(written, looks) {
            Some(found) => Resolved {
                scopes: Scopes::from_paths(found.iter().map(|(path, _)| path.clone())),
                found,
            },
            None => Resolved {
                scopes: Scopes::Everything,
                found: Vec::new(),
            },
        }
    }
}

/// Every place as written, from each entry's resolution (in order).
fn places_as_written(workspace: &Workspace, resolved: &[Resolved]) -> Vec<Touch> {
    let mut seen = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for entry in resolved {
        for touch in classify(workspace, entry) {
            // A glob is also every existing place it names (resolved, so a link is followed),
            // found by a bounded look; where the look stops short, the rest is unknown.
            let expanded = match &touch.path {
                Some(glob) if crate::glob_place::is_glob(&glob.to_string_lossy()) => {
                    Some(crate::glob_place::expand(glob))
                }
                _ => None,
            };
            let glob = touch.path.clone();
            if seen.insert(touch.path.clone()) {
                out.push(touch);
            }
            let Some(expansion) = expanded else { continue };
            for found in expansion.found {
                let named = Resolved::of(workspace, &found.to_string_lossy(), &mut Looks::default());
                for more in classify(workspace, &named) {
                    if seen.insert(more.path.clone()) {
                        out.push(more);
                    }
                }
            }
            if expansion.cut {
                // INVARIANT (fail closed): what the bounded look did not see is unknown.
                out.push(Touch {
                    path: glob,
                    place: Place::Unknown,
                    directory: None,
                });
            }
        }
    }
    out
}

fn classify(workspace: &Workspace, entry: &Resolved) -> Vec<Touch> {
    match &entry.scopes {
        Scopes::Everything => vec![Touch {
            path: None,
            place: Place::Unknown,
            directory: None,
        }],
        Scopes::Paths(paths) => paths
            .iter()
            .map(|p| Touch {
                place: workspace.place(p),
                path: Some(p.clone()),
                directory: entry.found.iter().find(|(found, _)| found == p).and_then(|(_, d)| *d),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A wider place listed beside a narrower one hides nothing from the rules: every place as
    /// written is classified, while the scopes stay simplified for the partial order.
    #[test]
    fn every_place_as_written_is_seen() {
        let ws = Workspace::new("/w");
        let p = EffectProfile {
            reads: vec![".".into(), "./.env".into(), "*".into()],
            writes: vec!["./src".into(), "./src/lib.rs".into()],
            ..EffectProfile::default()
        };
        let e = p.resolve(&ws);
        let paths = |touches: &[Touch]| -> Vec<Option<PathBuf>> { touches.iter().map(|t| t.path.clone()).collect() };
        assert_eq!(
            paths(&e.read_places),
            vec![Some(PathBuf::from("/w")), Some(PathBuf::from("/w/.env")), None]
        );
        assert_eq!(e.reads, Scopes::Everything);
        assert_eq!(
            paths(&e.write_places),
            vec![Some(PathBuf::from("/w/src")), Some(PathBuf::from("/w/src/lib.rs"))]
        );
        // The same place written twice is one place.
        let twice = EffectProfile {
            writes: vec!["./a".into(), "./b/../a".into()],
            ..EffectProfile::default()
        };
        assert_eq!(twice.resolve(&ws).write_places.len(), 1);
    }

    #[test]
    fn missing_fields_default_with_reversible_true() {
        let p: EffectProfile = serde_json::from_str("{}").unwrap();
        assert_eq!(p, EffectProfile::default());
        assert!(p.reversible);
        let err = serde_json::from_str::<EffectProfile>(r#"{"writez":[]}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field `writez`"));
    }

    fn arb_path() -> impl Strategy<Value = PathBuf> {
        prop::collection::vec(prop::sample::select(vec!["a", "b"]), 0..3)
            .prop_map(|parts| PathBuf::from("/").join(parts.join("/")))
    }

    fn arb_scopes() -> impl Strategy<Value = Scopes> {
        prop_oneof![
            1 => Just(Scopes::Everything),
            5 => prop::collection::vec(arb_path(), 0..3).prop_map(Scopes::from_paths),
        ]
    }

    fn arb_profile() -> impl Strategy<Value = Profile> {
        (arb_scopes(), arb_scopes(), any::<[bool; 4]>()).prop_map(|(reads, writes, f)| Profile {
            reads,
            writes,
            flags: Flags {
                reaches: f[0],
                reversible: f[1],
                contained: f[2],
                costs: f[3],
            },
        })
    }

    proptest! {
        #[test]
        fn reflexive(a in arb_profile()) {
            prop_assert!(a.le(&a));
        }

        #[test]
        fn antisymmetric(a in arb_profile(), b in arb_profile()) {
            if a.le(&b) && b.le(&a) {
                prop_assert_eq!(a, b);
            }
        }

        #[test]
        fn transitive(a in arb_profile(), b in arb_profile(), c in arb_profile()) {
            if a.le(&b) && b.le(&c) {
                prop_assert!(a.le(&c));
            }
        }

        #[test]
        fn join_is_least_upper_bound(a in arb_profile(), b in arb_profile(), c in arb_profile()) {
            let j = a.join(&b);
            prop_assert!(a.le(&j) && b.le(&j));
            if a.le(&c) && b.le(&c) {
                prop_assert!(j.le(&c));
            }
        }

        #[test]
        fn meet_is_greatest_lower_bound(a in arb_profile(), b in arb_profile(), c in arb_profile()) {
            let m = a.meet(&b);
            prop_assert!(m.le(&a) && m.le(&b));
            if c.le(&a) && c.le(&b) {
                prop_assert!(c.le(&m));
            }
        }
    }
}
