//! Rows, verdicts and strictness: how a run is checked.
//!
//! `unk` is not a softer gap: absence of evidence is never ok, and under `strict` a gating unk
//! fails the run too (exit 3), after gating gaps (exit 1).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Where a row's evidence comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Assertion {
    /// Read from the vendor's own record.
    Record,
    /// A value held before spawning.
    Launch,
    /// Evidenced only by other rows.
    Effect,
}

/// Whether a row counts in the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Counts under `strict`.
    Gating,
    /// Evaluated and printed, never counted.
    Advisory,
}

/// What was found of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The row held.
    Ok,
    /// The row did not hold.
    Gap,
    /// Nobody found out.
    Unk,
}

impl Verdict {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Gap => "gap",
            Verdict::Unk => "unk",
        }
    }

    /// Parses the lowercase name.
    pub fn parse(text: &str) -> Option<Verdict> {
        match text {
            "ok" => Some(Verdict::Ok),
            "gap" => Some(Verdict::Gap),
            "unk" => Some(Verdict::Unk),
            _ => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Gating => "gating",
            Severity::Advisory => "advisory",
        })
    }
}

impl fmt::Display for Assertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Assertion::Record => "record",
            Assertion::Launch => "launch",
            Assertion::Effect => "effect",
        })
    }
}

/// How much the rows matter to the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Strictness {
    /// Nothing imposed.
    Off,
    /// Imposed and reported.
    #[default]
    On,
    /// A gating row that is not ok fails the run.
    Strict,
}

/// One row's outcome, with its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowResult {
    /// The row's id.
    pub id: String,
    /// What must hold.
    pub title: String,
    /// Where the evidence comes from.
    pub assertion: Assertion,
    /// Whether it counts.
    pub severity: Severity,
    /// What was found.
    pub verdict: Verdict,
    /// Why, in words: what was seen, or what was missing.
    pub evidence: String,
}

/// The exit code of a checked run: under `strict`, any gating gap → 1, else any gating unk → 3,
/// else 0. Under `off` and `on`, 0. Advisory rows never count.
pub fn exit_code(rows: &[RowResult], strictness: Strictness) -> i32 {
    if strictness != Strictness::Strict {
        return 0;
    }
    let gating = || rows.iter().filter(|r| r.severity == Severity::Gating);
    if gating().any(|r| r.verdict == Verdict::Gap) {
        1
    } else if gating().any(|r| r.verdict == Verdict::Unk) {
        3
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn row(severity: Severity, verdict: Verdict) -> RowResult {
        RowResult {
            id: "r".into(),
            title: "t".into(),
            assertion: Assertion::Record,
            severity,
            verdict,
            evidence: String::new(),
        }
    }

    #[test]
    fn the_exit_code_rule() {
        use Severity::*;
        use Verdict::*;
        let s = Strictness::Strict;
        assert_eq!(exit_code(&[], s), 0);
        assert_eq!(exit_code(&[row(Gating, Ok)], s), 0);
        assert_eq!(exit_code(&[row(Gating, Unk)], s), 3);
        assert_eq!(exit_code(&[row(Gating, Unk), row(Gating, Gap)], s), 1);
        assert_eq!(exit_code(&[row(Advisory, Gap), row(Advisory, Unk)], s), 0);
        assert_eq!(exit_code(&[row(Gating, Gap)], Strictness::On), 0);
        assert_eq!(exit_code(&[row(Gating, Gap)], Strictness::Off), 0);
    }

    fn arb_row() -> impl Strategy<Value = RowResult> {
        (
            prop::sample::select(vec![Severity::Gating, Severity::Advisory]),
            prop::sample::select(vec![Verdict::Ok, Verdict::Gap, Verdict::Unk]),
        )
            .prop_map(|(s, v)| row(s, v))
    }

    proptest! {
        #[test]
        fn advisory_rows_never_count(rows in prop::collection::vec(arb_row(), 0..8), extra in prop::collection::vec(arb_row(), 0..4)) {
            let advisory: Vec<RowResult> = extra.into_iter().map(|mut r| { r.severity = Severity::Advisory; r }).collect();
            let mut with = rows.clone();
            with.extend(advisory);
            prop_assert_eq!(exit_code(&rows, Strictness::Strict), exit_code(&with, Strictness::Strict));
        }

        #[test]
        fn a_gating_gap_always_fails_with_1(rows in prop::collection::vec(arb_row(), 0..8)) {
            let mut rows = rows;
            rows.push(row(Severity::Gating, Verdict::Gap));
            prop_assert_eq!(exit_code(&rows, Strictness::Strict), 1);
        }
    }
}
