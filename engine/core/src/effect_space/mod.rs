//! The effect space: every step a mode can tell apart, as a finite product, and the regions of it
//! where two modes decide differently.
//!
//! A rule sees six fields. Here `reads` and `writes` are each drawn from a finite set of place
//! classes ([`PlaceClass`]): no place, a file in the workspace, the workspace itself, a named
//! root, the temp dir, the home directory, outside, unknown (`*`), and the places the modes'
//! rules and ceilings name (each glob of a path set, where it can lie, and the directories that
//! hold it). Places that every rule and ceiling of the compared modes treat alike are one class.
//! With `reaches`, `reversible`, `contained` and `costs` as booleans that is `classes² × 16`
//! cells, each judged symbolically (which conditions hold for the class), so two modes are
//! compared everywhere, not on examples (`Mode::diff`). A test judges every cell's representative profile with
//! the core judge and checks the two agree.
//!
//! A step that touches several places is decided by the rules its places match together; where
//! no rule decides more permissively than the mode's default (every shipped mode), that is the
//! strictest of its one-place cells, so the comparison over one place per field is exact for
//! every step. [`Diff::exact`] says when it is not.
//!
//! Rules with a Rhai script are not analysed: a cell whose decision a script could change is
//! reported as decided by a script, never guessed.
//!
//! This is not the judge: it never decides a step. The CLI prints it (`sixfold modes diff`), and
//! loading a bundle uses it to show where a mode that extends another widens it.

mod classes;
mod regions;
#[cfg(test)]
mod tests;

pub use classes::PlaceClass;
pub use regions::{FlagCube, Outcome, Region};

use crate::effects::{EffectProfile, Flags};
use crate::judge::{Context, Judge};

/// The place classes of a comparison and the workspace their places are judged in.
#[derive(Debug, Clone)]
pub struct Space {
    classes: Vec<PlaceClass>,
    context: Context,
}

/// One cell of the space: a read class, a write class (indexes into [`Space::classes`]) and the
/// four yes/no fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    /// The class read.
    pub reads: usize,
    /// The class written.
    pub writes: usize,
    /// The yes/no fields.
    pub flags: Flags,
}

/// The 16 combinations of the yes/no fields, in a fixed order.
fn all_flags() -> impl Iterator<Item = Flags> {
    (0u8..16).map(|bits| Flags {
        reaches: bits & 1 != 0,
        reversible: bits & 2 != 0,
        contained: bits & 4 != 0,
        costs: bits & 8 != 0,
    })
}

impl Space {
    /// The space in which `judges` are compared: their rules' and ceilings' places.
    pub(crate) fn of(judges: &[&Judge]) -> Space {
        classes::space(judges)
    }

    /// The place classes; index 0 is no place at all.
    pub fn classes(&self) -> &[PlaceClass] {
        &self.classes
    }

    /// The workspace the classes' places are judged in (primary root `/workspace`, a root named
    /// `other`, home `/home/user`, temp dir `/tmp`).
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Every cell, reads outermost, then writes, then the yes/no fields.
    pub fn cells(&self) -> impl Iterator<Item = Cell> + '_ {
        let n = self.classes.len();
        (0..n).flat_map(move |reads| {
            (0..n).flat_map(move |writes| all_flags().map(move |flags| Cell { reads, writes, flags }))
        })
    }

    /// The number of cells.
    pub fn len(&self) -> usize {
        self.classes.len() * self.classes.len() * 16
    }

    /// Never true: there is always the class of no place.
    pub fn is_empty(&self) -> bool {
        self.classes.is_empty()
    }

    /// A cell's representative step: the classes' places as written, the yes/no fields as set.
    pub fn profile(&self, cell: Cell) -> EffectProfile {
        let place =
            |i: usize| -> Vec<String> { self.classes.get(i).and_then(|c| c.place.clone()).into_iter().collect() };
        EffectProfile {
            reads: place(cell.reads),
            writes: place(cell.writes),
            reaches: cell.flags.reaches,
            reversible: cell.flags.reversible,
            contained: cell.flags.contained,
            costs: cell.flags.costs,
        }
    }

    /// What a judge decides in a cell, worked out from which of its conditions the classes meet
    /// (not by judging the cell's profile). Each call evaluates the conditions for every class
    /// afresh: for one cell, not for a sweep. (`Mode::outcome` is the public door.)
    pub(crate) fn outcome(&self, judge: &Judge, cell: Cell) -> Outcome {
        regions::Symbolic::new(self, judge).outcome(cell)
    }
}

/// Where two modes decide differently, over the whole effect space.
#[derive(Debug, Clone)]
pub struct Diff {
    /// The first mode's id.
    pub a: String,
    /// The second mode's id.
    pub b: String,
    /// The space compared over.
    pub space: Space,
    /// The regions where they differ (or a script may decide), each a box of cells with one
    /// outcome per mode.
    pub regions: Vec<Region>,
    /// True when comparing one place per field is exact for steps that touch several places:
    /// no rule of either mode decides more permissively than its default.
    pub exact: bool,
}

impl Diff {
    /// True when the two modes decide alike in every cell (and no script could change that).
    pub fn alike(&self) -> bool {
        self.regions.is_empty()
    }

    /// True when `a` is at most as permissive as `b` everywhere: in every cell, the most `a` may
    /// allow is at least as strict as the strictest `b` may decide.
    pub fn a_at_most_as_permissive(&self) -> bool {
        self.regions.iter().all(|r| r.a.least() >= r.b.most())
    }

    /// True when `b` is at most as permissive as `a` everywhere.
    pub fn b_at_most_as_permissive(&self) -> bool {
        self.regions.iter().all(|r| r.b.least() >= r.a.most())
    }

    /// A region in words: the classes read and written and the yes/no fields that matter.
    pub fn describe(&self, region: &Region) -> String {
        regions::describe(&self.space, region)
    }
}

/// Compares two judges over the effect space their rules span (`Mode::diff` is the public
/// door).
pub(crate) fn diff_judges(a: &Judge, b: &Judge) -> Diff {
    let space = Space::of(&[a, b]);
    let regions = regions::differ(&space, a, b);
    Diff {
        a: a.mode.clone(),
        b: b.mode.clone(),
        exact: regions::monotone(a) && regions::monotone(b),
        space,
        regions,
    }
}

/// The most regions a load-time diagnostic lists.
const NOTE_REGIONS: usize = 3;

/// Where `child` is more permissive than `parent`, in words, for the diagnostic of a mode that
/// claims to narrow the one it extends and does not; `None` when no cell widens.
pub(crate) fn widening_note(parent: &Judge, child: &Judge) -> Option<String> {
    let d = diff_judges(child, parent);
    let wider: Vec<&Region> = d.regions.iter().filter(|r| r.a.least() < r.b.most()).collect();
    if wider.is_empty() {
        return None;
    }
    let mut lines: Vec<String> = wider
        .iter()
        .take(NOTE_REGIONS)
        .map(|r| {
            format!(
                "where a step {}: `{}` {} where `{}` {}",
                d.describe(r),
                d.a,
                r.a.in_words(),
                d.b,
                r.b.in_words()
            )
        })
        .collect();
    if wider.len() > NOTE_REGIONS {
        lines.push(format!(
            "and {} more region(s) (`sixfold modes diff` lists them all)",
            wider.len() - NOTE_REGIONS
        ));
    }
    Some(format!("it widens {}", lines.join("; ")))
}
