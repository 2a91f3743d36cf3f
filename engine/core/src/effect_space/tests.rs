//! The region algebra checked against the core judge: every cell of the space judged as a
//! concrete profile, compared with the symbolic outcome and with the regions.

use super::*;
use crate::bundle::{Bundle, BundleSource, Mode};
use crate::decision::{DecidedBy, Decision};

fn shipped() -> Bundle {
    let (bundle, diagnostics) = Bundle::load(&[crate::shipped::source()]);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    bundle
}

/// A bundle over the shipped one, from (path, text) files.
fn layered(files: &[(&str, &str)]) -> (Bundle, Vec<crate::diag::Diagnostic>) {
    let source = BundleSource::from_files("test", files.iter().copied());
    Bundle::load(&[crate::shipped::source(), source])
}

/// Every cell of the space the modes span together: the symbolic outcome is what the core judge
/// decides on the cell's profile (decision, what decided, the deciding rules); where a script
/// may decide, the judge's decision lies within what the scripts leave possible.
fn judge_agrees(bundle: &Bundle, ids: &[&str]) {
    let modes: Vec<&Mode> = ids.iter().map(|id| bundle.mode(id).unwrap()).collect();
    let judges: Vec<&crate::judge::Judge> = modes.iter().map(|m| &m.judge).collect();
    let space = Space::of(&judges);
    assert_eq!(space.cells().count(), space.len());
    // Each class's place resolved once (as `Bundle::judge` resolves a profile); each cell's
    // effects put together from them and judged by the core judge.
    let ws = &space.context().workspace;
    let resolved: Vec<crate::effects::Effects> = (0..space.classes().len())
        .map(|i| {
            let cell = Cell {
                reads: i,
                writes: i,
                flags: crate::effects::Flags {
                    reaches: false,
                    reversible: true,
                    contained: false,
                    costs: false,
                },
            };
            space.profile(cell).resolve(ws)
        })
        .collect();
    let symbolic: Vec<regions::Symbolic<'_>> = judges.iter().map(|j| regions::Symbolic::new(&space, j)).collect();
    for cell in space.cells() {
        let profile = space.profile(cell);
        let (r, w) = (&resolved[cell.reads], &resolved[cell.writes]);
        let effects = crate::effects::Effects {
            reads: r.reads.clone(),
            writes: w.writes.clone(),
            flags: cell.flags,
            read_places: r.read_places.clone(),
            write_places: w.write_places.clone(),
        };
        if cell.flags == resolved[0].flags {
            // Once per pair of classes: the pieces are the profile resolved whole.
            assert_eq!(effects, profile.resolve(ws), "{profile:?}");
        }
        for (mode, symbolic) in modes.iter().zip(&symbolic) {
            let symbolic = symbolic.outcome(cell);
            let judged = bundle.judge_effects(&mode.id, &effects, space.context());
            if !symbolic.scripts.is_empty() {
                assert!(
                    symbolic.least() <= judged.decision && judged.decision <= symbolic.most(),
                    "{} {profile:?}: {judged:?} outside {symbolic:?}",
                    mode.id
                );
            } else {
                assert_eq!(
                    (symbolic.decision, symbolic.by, &symbolic.rules),
                    (judged.decision, judged.by, &judged.rules),
                    "{} on {profile:?}",
                    mode.id
                );
            }
        }
    }
}

/// The regions of a diff hold exactly the cells where the two decide differently (or a script
/// may decide), each cell once, with the two outcomes.
fn regions_partition(bundle: &Bundle, a: &str, b: &str) -> Diff {
    let (ma, mb) = (bundle.mode(a).unwrap(), bundle.mode(b).unwrap());
    let d = ma.diff(mb);
    let (sa, sb) = (
        regions::Symbolic::new(&d.space, &ma.judge),
        regions::Symbolic::new(&d.space, &mb.judge),
    );
    for cell in d.space.cells() {
        let (oa, ob) = (sa.outcome(cell), sb.outcome(cell));
        let differs = oa.decision != ob.decision || oa.scripted() || ob.scripted();
        let holding: Vec<&Region> = d.regions.iter().filter(|r| r.contains(cell)).collect();
        assert_eq!(
            holding.len(),
            usize::from(differs),
            "{cell:?} in {} regions",
            holding.len()
        );
        if let Some(r) = holding.first() {
            for (region, cell_outcome) in [(&r.a, &oa), (&r.b, &ob)] {
                assert_eq!(
                    (region.decision, region.by, &region.scripts, region.least()),
                    (
                        cell_outcome.decision,
                        cell_outcome.by,
                        &cell_outcome.scripts,
                        cell_outcome.least()
                    )
                );
                assert!(cell_outcome.rules.iter().all(|id| region.rules.contains(id)));
            }
        }
    }
    d
}

fn brute_force(bundle: &Bundle, a: &str, b: &str) -> Diff {
    judge_agrees(bundle, &[a, b]);
    regions_partition(bundle, a, b)
}

#[test]
fn every_pair_of_shipped_modes_agrees_with_the_judge() {
    let bundle = shipped();
    let ids: Vec<&str> = bundle.modes().map(|m| m.id.as_str()).collect();
    judge_agrees(&bundle, &ids);
    for a in &ids {
        for b in &ids {
            let d = regions_partition(&bundle, a, b);
            assert_eq!(d.alike(), a == b, "{a} vs {b}");
            assert!(d.exact, "the shipped modes never decide below their default");
        }
    }
}

#[test]
fn read_only_narrows_ask_and_not_the_other_way() {
    let bundle = shipped();
    let d = bundle.mode("read-only").unwrap().diff(bundle.mode("ask").unwrap());
    assert!(!d.alike());
    assert!(d.a_at_most_as_permissive());
    assert!(!d.b_at_most_as_permissive());
    // A write in the workspace: read-only's ceiling refuses where ask asks.
    let write = d
        .regions
        .iter()
        .find(|r| d.describe(r).contains("writes a file in the workspace") || r.writes.contains(&1))
        .unwrap();
    assert_eq!((write.a.decision, write.a.by), (Decision::Refuse, DecidedBy::Ceiling));
    assert_eq!(write.b.decision, Decision::Ask);
    // Everything is at most as permissive as full, and full as nothing but itself.
    for id in ["read-only", "ask", "workspace-write"] {
        let d = bundle.mode(id).unwrap().diff(bundle.mode("full").unwrap());
        assert!(d.a_at_most_as_permissive(), "{id}");
        assert!(!d.b_at_most_as_permissive(), "{id}");
    }
}

#[test]
fn ask_and_workspace_write_differ_both_ways() {
    let bundle = shipped();
    let d = bundle
        .mode("ask")
        .unwrap()
        .diff(bundle.mode("workspace-write").unwrap());
    assert!(!d.a_at_most_as_permissive() && !d.b_at_most_as_permissive());
    // The network: ask asks, workspace-write refuses, whatever is read or written (but what
    // either refuses anyway).
    let reach = d
        .regions
        .iter()
        .find(|r| r.flags.reaches == Some(true) && r.a.decision == Decision::Ask && r.b.decision == Decision::Refuse);
    assert!(reach.is_some(), "{:#?}", d.regions);
}

#[test]
fn the_places_rules_name_are_classes() {
    let bundle = shipped();
    let d = bundle.mode("ask").unwrap().diff(bundle.mode("full").unwrap());
    let labels: Vec<&str> = d.space.classes().iter().map(|c| c.label.as_str()).collect();
    let has = |what: &str| labels.iter().any(|l| l.contains(what));
    assert!(has("no place"), "{labels:?}");
    assert!(has("@secrets"), "{labels:?}");
    assert!(has("@protected"), "{labels:?}");
    assert!(has("unknown"), "{labels:?}");
    assert!(has("temp dir"), "{labels:?}");
    // Places judged alike by every rule are one class: far fewer classes than globs.
    assert!(labels.len() < 30, "{labels:?}");
}

const NARROW: &str = r#"
id = "careful"
extends = "workspace-write"
[[rules]]
id = "docs"
decision = "ask"
reason = "writes the docs"
when.writes = ["docs/**"]
"#;

const GLOBS: &str = r#"
id = "globs"
default = "refuse"
[ceiling]
writes = ["./src", "extra"]
[[rules]]
id = "src"
decision = "allow"
reason = "writes sources"
when.writes = ["src/**"]
[[rules]]
id = "keys"
decision = "refuse"
reason = "reads keys"
when.reads = ["**/*.key"]
[[rules]]
id = "wide"
decision = "ask"
reason = "writes a directory holding protected paths"
when.writes = ["covers:@protected"]
when.contained = false
"#;

const SCRIPTED: &str = r#"
id = "scripted"
extends = "ask"
include = ["late"]
"#;

const LATE_POLICY: &str = r#"
id = "late"
[[rules]]
id = "hours"
decision = "refuse"
reason = "out of hours"
when.reaches = true
script = "late.rhai"
function = "late"
"#;

const LATE_SCRIPT: &str = "fn late(effects, context) { effects.costs }";

fn test_bundle() -> Bundle {
    let (bundle, diagnostics) = layered(&[
        ("modes/careful.toml", NARROW),
        ("modes/globs.toml", GLOBS),
        ("modes/scripted.toml", SCRIPTED),
        ("policies/late.toml", LATE_POLICY),
        ("policies/late.rhai", LATE_SCRIPT),
    ]);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    bundle
}

#[test]
fn a_rule_on_a_named_glob_narrows_only_there() {
    let bundle = test_bundle();
    let d = brute_force(&bundle, "careful", "workspace-write");
    let shown: Vec<String> = d
        .regions
        .iter()
        .map(|r| format!("{}: {} / {}", d.describe(r), r.a.in_words(), r.b.in_words()))
        .collect();
    assert!(
        d.a_at_most_as_permissive() && !d.b_at_most_as_permissive(),
        "{shown:#?}"
    );
    assert!(
        d.regions.iter().all(|r| d.describe(r).contains("`docs/**`")),
        "{shown:#?}"
    );
}

#[test]
fn globs_ceilings_and_roots_agree_with_the_judge() {
    let bundle = test_bundle();
    let d = brute_force(&bundle, "globs", "full");
    assert!(!d.exact, "`globs` allows below its default");
    let labels: Vec<&str> = d.space.classes().iter().map(|c| c.label.as_str()).collect();
    assert!(labels.iter().any(|l| l.contains("`src/**`")), "{labels:?}");
    assert!(labels.iter().any(|l| l.contains("`**/*.key`")), "{labels:?}");
    assert!(labels.iter().any(|l| l.contains("root `extra`")), "{labels:?}");
    assert!(d.a_at_most_as_permissive());
}

#[test]
fn regions_a_script_touches_are_decided_by_a_script() {
    let bundle = test_bundle();
    let d = brute_force(&bundle, "scripted", "ask");
    assert!(!d.regions.is_empty());
    // Only where the script's rule could apply, and only there.
    assert!(d
        .regions
        .iter()
        .all(|r| r.a.scripted() && r.flags.reaches == Some(true)));
    assert!(d.regions.iter().all(|r| r.a.in_words().contains("decided by a script")));
    // Its rule refuses, so whatever the script says it cannot widen `ask`; the other way round
    // nothing is claimed.
    assert!(d.a_at_most_as_permissive());
    assert!(!d.b_at_most_as_permissive());
}

/// A directory a ceiling names and a glob that matches anywhere meet in a place of their own
/// (`./src/.env`), even where no glob names it: a difference only there is still found.
#[test]
fn where_two_named_places_meet_is_a_class_of_its_own() {
    let env_refused = r#"
id = "env-refused"
default = "allow"
[[rules]]
id = "env"
decision = "refuse"
reason = "reads an env file"
when.reads = ["**/.env*"]
"#;
    let only_src = r#"
id = "only-src"
default = "allow"
[ceiling]
reads = ["./src"]
[[rules]]
id = "env"
decision = "ask"
reason = "reads an env file"
when.reads = ["**/.env*"]
"#;
    let (bundle, diagnostics) = layered(&[
        ("modes/env-refused.toml", env_refused),
        ("modes/only-src.toml", only_src),
    ]);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    let d = brute_force(&bundle, "env-refused", "only-src");
    // `only-src` refuses every read outside `./src`, but inside it only asks about an env
    // file, which `env-refused` refuses: so it is not the narrower one.
    assert!(!d.b_at_most_as_permissive(), "{:#?}", d.regions);
    let place = |i: &usize| d.space.classes()[*i].place.clone().unwrap_or_default();
    let widening: Vec<&Region> = d.regions.iter().filter(|r| r.b.least() < r.a.most()).collect();
    assert!(!widening.is_empty());
    for r in widening {
        assert!(
            r.reads.iter().all(|i| place(i) == "/workspace/src/.envx"),
            "{}",
            d.describe(r)
        );
    }
}

#[test]
fn a_mode_that_widens_what_it_extends_is_told_where() {
    let widening = r#"
id = "loose"
extends = "read-only"
[ceiling]
writes = ["workspace"]
"#;
    let (_, diagnostics) = layered(&[("modes/loose.toml", widening)]);
    let d = diagnostics
        .iter()
        .find(|d| d.message.contains("widens the mode it extends"))
        .unwrap_or_else(|| panic!("{diagnostics:?}"));
    let text = d.to_string();
    assert!(text.contains("it widens where a step"), "{text}");
    assert!(text.contains("writes a file in the workspace"), "{text}");
    // A mode that narrows loads, and says nothing.
    let (bundle, diagnostics) = layered(&[("modes/careful.toml", NARROW)]);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert!(bundle.mode("careful").is_some());
}

#[test]
fn flag_cubes_cover_exactly() {
    let cubes = FlagCube::all_for_tests();
    let all: std::collections::BTreeSet<u8> = (0..16).collect();
    assert_eq!(regions::cover_for_tests(&all, &cubes), vec![FlagCube::default()]);
    let reaches: std::collections::BTreeSet<u8> = (0..16).filter(|b| b & 1 != 0).collect();
    let got = regions::cover_for_tests(&reaches, &cubes);
    assert_eq!(got.len(), 1);
    assert_eq!(got.first().map(|c| c.reaches), Some(Some(true)));
    // Three combinations need two cubes; none reaches outside them.
    let three: std::collections::BTreeSet<u8> = [0u8, 1, 2].into_iter().collect();
    let got = regions::cover_for_tests(&three, &cubes);
    assert_eq!(got.len(), 2);
}
