//! Judging the space's cells symbolically, and merging the cells where two modes differ into
//! regions (boxes: a set of read classes × a set of write classes × a pattern of yes/no fields).

use super::classes::within;
use super::{Cell, Space};
use crate::decision::{DecidedBy, Decision};
use crate::effects::Flags;
use crate::judge::Judge;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What a mode decides in a cell.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Outcome {
    /// The decision of the rules without scripts (the ceiling, the strictest matching rule, or
    /// the default).
    pub decision: Decision,
    /// What decided it.
    pub by: DecidedBy,
    /// The deciding rules (`MODE/ceiling` for the ceiling; none for the default).
    pub rules: Vec<String>,
    /// Rules with a script whose conditions hold here: they may decide instead (a script that
    /// fails refuses), so the cell is decided by a script unless the rest refuses already.
    pub scripts: Vec<String>,
    /// The most permissive decision the scripts leave possible.
    #[serde(skip)]
    least: Decision,
}

impl Outcome {
    /// The most permissive decision possible here.
    pub fn least(&self) -> Decision {
        self.least
    }

    /// The strictest decision possible here.
    pub fn most(&self) -> Decision {
        if self.scripted() {
            Decision::Refuse
        } else {
            self.decision
        }
    }

    /// True when a script could change the decision.
    pub fn scripted(&self) -> bool {
        !self.scripts.is_empty() && self.decision < Decision::Refuse
    }

    /// The outcome in words: `asks (rule ask/writes-workspace)`, `decided by a script (…)`.
    pub fn in_words(&self) -> String {
        let verb = match self.decision {
            Decision::Allow => "allows",
            Decision::Ask => "asks",
            Decision::Refuse => "refuses",
        };
        let why = match self.by {
            DecidedBy::Default => "its default".to_string(),
            _ => {
                let kind = if self.by == DecidedBy::Ceiling {
                    "ceiling"
                } else {
                    "rule"
                };
                let ids: Vec<String> = self.rules.iter().map(|r| format!("`{r}`")).collect();
                if kind == "ceiling" {
                    "its ceiling".to_string()
                } else {
                    format!("{kind} {}", ids.join(", "))
                }
            }
        };
        if self.scripted() {
            let ids: Vec<String> = self.scripts.iter().map(|r| format!("`{r}`")).collect();
            format!("is decided by a script ({}; else {verb}, by {why})", ids.join(", "))
        } else {
            format!("{verb} (by {why})")
        }
    }
}

/// Which of a rule's conditions each class meets.
struct RuleHits {
    reads: Option<Vec<bool>>,
    writes: Option<Vec<bool>>,
}

/// A judge with its conditions evaluated once per class: a cell's outcome is then a lookup.
pub(super) struct Symbolic<'j> {
    judge: &'j Judge,
    reads_within: Vec<bool>,
    writes_within: Vec<bool>,
    rules: Vec<RuleHits>,
}

impl<'j> Symbolic<'j> {
    pub(super) fn new(space: &Space, judge: &'j Judge) -> Symbolic<'j> {
        let ws = &space.context.workspace;
        let touches: Vec<_> = space.classes.iter().map(|c| c.touch.as_ref()).collect();
        let per_class = |matchers: &Option<Vec<crate::judge::PlaceMatcher>>| {
            matchers.as_ref().map(|ms| {
                touches
                    .iter()
                    .map(|t| t.is_some_and(|t| ms.iter().any(|m| m.matches(t, ws))))
                    .collect()
            })
        };
        Symbolic {
            judge,
            reads_within: touches.iter().map(|t| within(&judge.ceiling.reads, *t, ws)).collect(),
            writes_within: touches.iter().map(|t| within(&judge.ceiling.writes, *t, ws)).collect(),
            rules: judge
                .rules
                .iter()
                .map(|r| RuleHits {
                    reads: per_class(&r.when.reads),
                    writes: per_class(&r.when.writes),
                })
                .collect(),
        }
    }

    fn beyond_ceiling(&self, cell: Cell) -> bool {
        let c = &self.judge.ceiling;
        let f = cell.flags;
        !self.reads_within.get(cell.reads).copied().unwrap_or(false)
            || !self.writes_within.get(cell.writes).copied().unwrap_or(false)
            || (f.reaches && c.reaches == Some(false))
            || (f.costs && c.costs == Some(false))
            || (!f.reversible && c.reversible == Some(true))
            || (!f.contained && c.contained == Some(true))
    }

    /// The judge's order: the ceiling, then every rule whose conditions hold (strictest wins),
    /// else the default.
    pub(super) fn outcome(&self, cell: Cell) -> Outcome {
        let judge = self.judge;
        if self.beyond_ceiling(cell) {
            return Outcome {
                decision: Decision::Refuse,
                by: DecidedBy::Ceiling,
                rules: vec![format!("{}/ceiling", judge.mode)],
                scripts: Vec::new(),
                least: Decision::Refuse,
            };
        }
        let f = cell.flags;
        let flag_ok = |want: Option<bool>, have: bool| want.is_none_or(|w| w == have);
        let hit = |hits: &Option<Vec<bool>>, class: usize| match hits {
            None => true,
            Some(per) => per.get(class).copied().unwrap_or(false),
        };
        let mut matched = Vec::new();
        let mut scripts = Vec::new();
        for (rule, hits) in judge.rules.iter().zip(&self.rules) {
            let w = &rule.when;
            let holds = flag_ok(w.reaches, f.reaches)
                && flag_ok(w.reversible, f.reversible)
                && flag_ok(w.contained, f.contained)
                && flag_ok(w.costs, f.costs)
                && hit(&hits.reads, cell.reads)
                && hit(&hits.writes, cell.writes);
            if !holds {
                continue;
            }
            if rule.script.is_some() {
                scripts.push(rule);
            } else {
                matched.push(rule);
            }
        }
        let (decision, by, rules) = match matched.iter().map(|r| r.decision).max() {
            Some(strictest) => (
                strictest,
                DecidedBy::Rules,
                matched
                    .iter()
                    .filter(|r| r.decision == strictest)
                    .map(|r| r.id.clone())
                    .collect(),
            ),
            None => (judge.default, DecidedBy::Default, Vec::new()),
        };
        // A script that does not match leaves the rest's decision; one that matches adds its
        // rule's; one that fails refuses. With no other rule matching, a script's rule may
        // decide below the default.
        let least = match (by, scripts.iter().map(|r| r.decision).min()) {
            (DecidedBy::Default, Some(lowest)) => decision.min(lowest),
            _ => decision,
        };
        Outcome {
            decision,
            by,
            rules,
            scripts: scripts.iter().map(|r| r.id.clone()).collect(),
            least,
        }
    }
}

/// True when no rule of the judge decides more permissively than its default: then a step's
/// decision over several places is the strictest of its one-place cells.
pub(super) fn monotone(judge: &Judge) -> bool {
    judge.rules.iter().all(|r| r.decision >= judge.default)
}

/// A pattern of the yes/no fields: each set, or either (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize)]
pub struct FlagCube {
    /// `reaches`, or either.
    pub reaches: Option<bool>,
    /// `reversible`, or either.
    pub reversible: Option<bool>,
    /// `contained`, or either.
    pub contained: Option<bool>,
    /// `costs`, or either.
    pub costs: Option<bool>,
}

impl FlagCube {
    fn fields(self) -> [Option<bool>; 4] {
        [self.reaches, self.reversible, self.contained, self.costs]
    }

    fn from_fields(f: [Option<bool>; 4]) -> FlagCube {
        FlagCube {
            reaches: f[0],
            reversible: f[1],
            contained: f[2],
            costs: f[3],
        }
    }

    /// True when the cube holds the combination.
    pub fn contains(self, flags: Flags) -> bool {
        let have = [flags.reaches, flags.reversible, flags.contained, flags.costs];
        self.fields()
            .iter()
            .zip(have)
            .all(|(want, h)| want.is_none_or(|w| w == h))
    }

    /// Every cube, widest first.
    fn all() -> Vec<FlagCube> {
        let choices = [None, Some(false), Some(true)];
        let mut out = Vec::new();
        for a in choices {
            for b in choices {
                for c in choices {
                    for d in choices {
                        out.push(FlagCube::from_fields([a, b, c, d]));
                    }
                }
            }
        }
        out.sort_by_key(|c| c.fields().iter().filter(|f| f.is_some()).count());
        out
    }
}

/// A box of cells with one outcome per mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Region {
    /// The classes read (indexes into the space's classes).
    pub reads: Vec<usize>,
    /// The classes written.
    pub writes: Vec<usize>,
    /// The yes/no fields.
    pub flags: FlagCube,
    /// What the first mode decides.
    pub a: Outcome,
    /// What the second mode decides.
    pub b: Outcome,
}

impl Region {
    /// True when the cell is in the region.
    pub fn contains(&self, cell: Cell) -> bool {
        self.reads.contains(&cell.reads) && self.writes.contains(&cell.writes) && self.flags.contains(cell.flags)
    }
}

/// True when the two outcomes are not the same certain decision.
fn differs(a: &Outcome, b: &Outcome) -> bool {
    a.decision != b.decision || a.scripted() || b.scripted()
}

/// Outcomes that read the same in a region: the same decision, decided the same way, with the
/// same scripts; the deciding rules may vary from cell to cell and are gathered.
fn same_kind(x: &Outcome, y: &Outcome) -> bool {
    x.decision == y.decision && x.by == y.by && x.scripts == y.scripts && x.least == y.least
}

/// The regions where `a` and `b` differ: cells grouped by the kind of their two outcomes, the
/// yes/no fields merged into cubes for each pair of classes, then regions that differ in one
/// dimension only merged until none do.
pub(super) fn differ(space: &Space, a: &Judge, b: &Judge) -> Vec<Region> {
    let (sa, sb) = (Symbolic::new(space, a), Symbolic::new(space, b));
    // Few kinds occur, so they are kept in a list, first seen first.
    type Places = BTreeMap<(usize, usize), BTreeSet<u8>>;
    let mut groups: Vec<((Outcome, Outcome), Places)> = Vec::new();
    for cell in space.cells() {
        let (oa, ob) = (sa.outcome(cell), sb.outcome(cell));
        if !differs(&oa, &ob) {
            continue;
        }
        let at = match groups
            .iter()
            .position(|(k, _)| same_kind(&k.0, &oa) && same_kind(&k.1, &ob))
        {
            Some(i) => i,
            None => {
                groups.push(((oa, ob), Places::new()));
                groups.len() - 1
            }
        };
        if let Some((_, places)) = groups.get_mut(at) {
            places
                .entry((cell.reads, cell.writes))
                .or_default()
                .insert(bits(cell.flags));
        }
    }
    let cubes = FlagCube::all();
    let mut regions = Vec::new();
    for ((oa, ob), places) in groups {
        let mut boxes: Vec<Region> = Vec::new();
        for ((r, w), combos) in places {
            for cube in cover(&combos, &cubes) {
                boxes.push(Region {
                    reads: vec![r],
                    writes: vec![w],
                    flags: cube,
                    a: oa.clone(),
                    b: ob.clone(),
                });
            }
        }
        merge(&mut boxes);
        for region in &mut boxes {
            gather_rules(space, region, &sa, &sb);
        }
        regions.extend(boxes);
    }
    regions.sort_by(|x, y| (&x.reads, &x.writes, x.flags).cmp(&(&y.reads, &y.writes, y.flags)));
    regions
}

/// Merges boxes that agree in two dimensions and can join in the third (any two sets of
/// classes; two cubes that differ in one field only), until none can.
fn merge(boxes: &mut Vec<Region>) {
    loop {
        let mut joined = None;
        'find: for (i, x) in boxes.iter().enumerate() {
            for (j, y) in boxes.iter().enumerate().skip(i + 1) {
                let union = |p: &[usize], q: &[usize]| -> Vec<usize> {
                    p.iter()
                        .chain(q)
                        .copied()
                        .collect::<BTreeSet<usize>>()
                        .into_iter()
                        .collect()
                };
                let merged = if x.writes == y.writes && x.flags == y.flags {
                    Some((union(&x.reads, &y.reads), x.writes.clone(), x.flags))
                } else if x.reads == y.reads && x.flags == y.flags {
                    Some((x.reads.clone(), union(&x.writes, &y.writes), x.flags))
                } else if x.reads == y.reads && x.writes == y.writes {
                    join_cubes(x.flags, y.flags).map(|c| (x.reads.clone(), x.writes.clone(), c))
                } else {
                    None
                };
                if let Some(m) = merged {
                    joined = Some((i, j, m));
                    break 'find;
                }
            }
        }
        let Some((i, j, (reads, writes, flags))) = joined else {
            return;
        };
        boxes.remove(j);
        if let Some(x) = boxes.get_mut(i) {
            x.reads = reads;
            x.writes = writes;
            x.flags = flags;
        }
    }
}

/// Two cubes that differ in exactly one field, set one way in each: the cube with it either.
fn join_cubes(x: FlagCube, y: FlagCube) -> Option<FlagCube> {
    let (fx, fy) = (x.fields(), y.fields());
    let differing: Vec<usize> = (0..4).filter(|&i| fx.get(i) != fy.get(i)).collect();
    let [only] = differing.as_slice() else { return None };
    match (fx.get(*only), fy.get(*only)) {
        (Some(Some(p)), Some(Some(q))) if p != q => {
            let mut out = fx;
            if let Some(f) = out.get_mut(*only) {
                *f = None;
            }
            Some(FlagCube::from_fields(out))
        }
        _ => None,
    }
}

/// The deciding rules of every cell in the region, each once, in the order met.
fn gather_rules(space: &Space, region: &mut Region, sa: &Symbolic<'_>, sb: &Symbolic<'_>) {
    let (mut ra, mut rb): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    for cell in space.cells().filter(|c| region.contains(*c)) {
        for (rules, outcome) in [(&mut ra, sa.outcome(cell)), (&mut rb, sb.outcome(cell))] {
            for r in outcome.rules {
                if !rules.contains(&r) {
                    rules.push(r);
                }
            }
        }
    }
    region.a.rules = ra;
    region.b.rules = rb;
}

fn bits(f: Flags) -> u8 {
    u8::from(f.reaches) | (u8::from(f.reversible) << 1) | (u8::from(f.contained) << 2) | (u8::from(f.costs) << 3)
}

/// Disjoint cubes that together cover exactly `combos`: the widest cube inside what is left,
/// again until all are covered.
fn cover(combos: &BTreeSet<u8>, cubes: &[FlagCube]) -> Vec<FlagCube> {
    let flags_of = |b: u8| Flags {
        reaches: b & 1 != 0,
        reversible: b & 2 != 0,
        contained: b & 4 != 0,
        costs: b & 8 != 0,
    };
    let members = |cube: &FlagCube| -> Vec<u8> { (0u8..16).filter(|b| cube.contains(flags_of(*b))).collect() };
    let mut left = combos.clone();
    let mut out = Vec::new();
    // Widest first: `cubes` is sorted by how many fields they fix.
    while !left.is_empty() {
        // Only cubes wholly uncovered yet, so the cubes are disjoint: a cell is in one region.
        let best = cubes
            .iter()
            .filter(|c| members(c).iter().all(|b| left.contains(b)))
            .max_by_key(|c| (members(c).len(), std::cmp::Reverse(fixed(c))));
        let Some(best) = best else { break };
        for b in members(best) {
            left.remove(&b);
        }
        out.push(*best);
    }
    // INVARIANT: every combination is covered (a single combination is itself a cube).
    debug_assert!(left.is_empty());
    out
}

#[cfg(test)]
impl FlagCube {
    pub(super) fn all_for_tests() -> Vec<FlagCube> {
        FlagCube::all()
    }
}

#[cfg(test)]
pub(super) fn cover_for_tests(combos: &BTreeSet<u8>, cubes: &[FlagCube]) -> Vec<FlagCube> {
    cover(combos, cubes)
}

fn fixed(c: &FlagCube) -> usize {
    c.fields().iter().filter(|f| f.is_some()).count()
}

/// Classes in words: `anything`, `anything but X`, or the labels.
fn classes_in_words(space: &Space, chosen: &[usize]) -> String {
    let n = space.classes.len();
    let label = |i: &usize| space.classes.get(*i).map(|c| c.label.clone()).unwrap_or_default();
    if chosen.len() == n {
        return "anything (or nothing)".into();
    }
    let rest: Vec<usize> = (0..n).filter(|i| !chosen.contains(i)).collect();
    if rest.len() < chosen.len() && rest.len() <= 3 {
        let but: Vec<String> = rest.iter().map(label).collect();
        return format!("anything but {}", but.join("; "));
    }
    let named: Vec<String> = chosen.iter().map(label).collect();
    named.join("; ")
}

pub(super) fn describe(space: &Space, region: &Region) -> String {
    let mut parts = vec![
        format!("reads {}", classes_in_words(space, &region.reads)),
        format!("writes {}", classes_in_words(space, &region.writes)),
    ];
    let words = [
        (
            region.flags.reaches,
            "reaches the network",
            "does not reach the network",
        ),
        (region.flags.reversible, "reversible", "irreversible"),
        (region.flags.contained, "contained", "not contained"),
        (region.flags.costs, "costs money", "costs nothing"),
    ];
    for (field, yes, no) in words {
        if let Some(v) = field {
            parts.push(if v { yes } else { no }.to_string());
        }
    }
    parts.join(", ")
}
