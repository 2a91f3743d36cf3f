//! The formats CI systems read a replay in: JUnit XML, SARIF 2.1.0 and GitHub workflow-command
//! annotations. Each is a view of the same verdicts the text and JSON outputs show; which verdict
//! fails is decided once, here ([`level`]), so the formats never disagree with the exit code.

mod github;
mod junit;
mod sarif;

use sixfold_core::bundle::Bundle;
use sixfold_core::trace::Malformed;
use sixfold_core::verdict::{RowResult, Severity, Strictness, Verdict};

pub(crate) use github::render as github;
pub(crate) use junit::render as junit;
pub(crate) use sarif::render as sarif;

/// One recording's verdicts, as the CI formats read them.
#[derive(Debug)]
pub(crate) struct Recording<'a> {
    /// The recording's path as given.
    pub(crate) file: &'a str,
    /// The format it was read as; `None` when it could not be read.
    pub(crate) format: Option<&'a str>,
    /// Why it could not be read.
    pub(crate) error: Option<&'a str>,
    /// Its steps.
    pub(crate) steps: usize,
    /// Lines skipped as malformed, with their numbers.
    pub(crate) malformed: &'a [Malformed],
    /// Each row's verdict.
    pub(crate) rows: &'a [RowResult],
}

/// A whole replay: the recordings, how strictly it was judged, and the exit code that gave.
#[derive(Debug)]
pub(crate) struct Run<'a> {
    /// Each recording, in the order replayed.
    pub(crate) recordings: Vec<Recording<'a>>,
    /// `--strict` or `--on`.
    pub(crate) strictness: Strictness,
    /// The exit code the verdicts decided.
    pub(crate) exit: i32,
    /// The bundle the rows came from (for each row's remedy).
    pub(crate) bundle: &'a Bundle,
}

/// How a CI format ranks one row's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    /// The row holds.
    Pass,
    /// A gating gap, or under `--strict` a gating unk: what fails the run.
    Error,
    /// An advisory gap, or a gating unk without `--strict`.
    Warning,
    /// An advisory unk.
    Note,
}

/// The level of a row's verdict under a strictness.
pub(crate) fn level(row: &RowResult, strictness: Strictness) -> Level {
    match (row.verdict, row.severity) {
        (Verdict::Ok, _) => Level::Pass,
        (Verdict::Gap, Severity::Gating) => Level::Error,
        (Verdict::Gap, Severity::Advisory) => Level::Warning,
        (Verdict::Unk, Severity::Gating) if strictness == Strictness::Strict => Level::Error,
        (Verdict::Unk, Severity::Gating) => Level::Warning,
        (Verdict::Unk, Severity::Advisory) => Level::Note,
    }
}

impl Level {
    /// SARIF's and GitHub's word for it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Level::Pass => "none",
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// What a finding says: the row's title, then its evidence, then what to do.
pub(crate) fn message(row: &RowResult, bundle: &Bundle) -> String {
    let mut text = format!("{}: {} ({} {})", row.id, row.title, row.severity, row.verdict);
    if !row.evidence.is_empty() {
        text.push_str(&format!(": {}", row.evidence));
    }
    if let (Verdict::Gap, Some(remedy)) = (row.verdict, bundle.remedy(&row.id)) {
        text.push_str(&format!("\nremedy: {}", remedy.trim()));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use sixfold_core::verdict::Assertion;

    pub(super) fn row(id: &str, severity: Severity, verdict: Verdict, evidence: &str) -> RowResult {
        RowResult {
            id: id.into(),
            title: format!("the {id} row"),
            assertion: Assertion::Record,
            severity,
            verdict,
            evidence: evidence.into(),
        }
    }

    #[test]
    fn only_what_fails_the_run_is_an_error() {
        use Severity::*;
        use Verdict::*;
        let on = Strictness::On;
        let strict = Strictness::Strict;
        assert_eq!(level(&row("a", Gating, Ok, ""), strict), Level::Pass);
        assert_eq!(level(&row("a", Gating, Gap, ""), on), Level::Error);
        assert_eq!(level(&row("a", Gating, Unk, ""), on), Level::Warning);
        assert_eq!(level(&row("a", Gating, Unk, ""), strict), Level::Error);
        assert_eq!(level(&row("a", Advisory, Gap, ""), strict), Level::Warning);
        assert_eq!(level(&row("a", Advisory, Unk, ""), strict), Level::Note);
    }

    /// Every error under `--strict` is what makes the exit code non-zero, and the other way round.
    #[test]
    fn errors_agree_with_the_exit_code() {
        use Severity::*;
        use Verdict::*;
        for severity in [Gating, Advisory] {
            for verdict in [Ok, Gap, Unk] {
                let rows = [row("a", severity, verdict, "")];
                let failed = sixfold_core::verdict::exit_code(&rows, Strictness::Strict) != 0;
                let errors = rows.iter().any(|r| level(r, Strictness::Strict) == Level::Error);
                assert_eq!(failed, errors, "{severity} {verdict}");
            }
        }
    }
}
