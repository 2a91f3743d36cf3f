//! GitHub Actions workflow commands (`::error file=…,line=…,title=…::message`): each gap and unk
//! an annotation on the recording, each malformed line a warning on its line.
//!
//! Every value is escaped as the runner unescapes it: a message's `%`, CR and LF, and in a
//! property also `:` and `,`. Evidence can hold text the agent wrote, and an unescaped newline
//! would let it start a workflow command of its own (`::add-mask::`, `::stop-commands::`).

use super::{level, message, Level, Run};

/// The annotations, one per line, then a summary line.
pub(crate) fn render(run: &Run<'_>) -> String {
    let mut out = String::new();
    for rec in &run.recordings {
        if let Some(error) = rec.error {
            out.push_str(&command("error", rec.file, None, "unreadable recording", error));
        }
        for m in rec.malformed {
            let text = format!("malformed line skipped: {}", m.error);
            out.push_str(&command("warning", rec.file, Some(m.line), "malformed line", &text));
        }
        for row in rec.rows {
            let level = level(row, run.strictness);
            if level == Level::Pass {
                continue;
            }
            let title = format!("sixfold {} {}", row.id, row.verdict);
            // GitHub's word for a note is `notice`.
            let kind = if level == Level::Note { "notice" } else { level.word() };
            out.push_str(&command(kind, rec.file, None, &title, &message(row, run.bundle)));
        }
    }
    let count = |level: Level| {
        run.recordings
            .iter()
            .flat_map(|r| r.rows.iter())
            .filter(|r| super::level(r, run.strictness) == level)
            .count()
    };
    out.push_str(&format!(
        "sixfold replay: {} file{}, {} error, {} warning, {} note; exit {}\n",
        run.recordings.len(),
        if run.recordings.len() == 1 { "" } else { "s" },
        count(Level::Error),
        count(Level::Warning),
        count(Level::Note),
        run.exit
    ));
    out
}

/// One workflow command line.
fn command(kind: &str, file: &str, line: Option<u64>, title: &str, text: &str) -> String {
    let mut properties = format!("file={}", property(file));
    if let Some(line) = line {
        properties.push_str(&format!(",line={line}"));
    }
    properties.push_str(&format!(",title={}", property(title)));
    format!("::{kind} {properties}::{}\n", data(text))
}

/// A message, escaped as the runner reads it back.
fn data(text: &str) -> String {
    text.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A property's value: a message's escapes, and `:` and `,` which end a property.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::super::tests::row;
    use super::*;
    use sixfold_core::trace::Malformed;
    use sixfold_core::verdict::{Severity, Strictness, Verdict};

    fn bundle() -> sixfold_core::bundle::Bundle {
        sixfold_core::bundle::Bundle::load(&[sixfold_core::shipped::source()]).0
    }

    /// What the agent wrote cannot start a workflow command: every line of the output is one of
    /// ours, and the message comes back as it was.
    #[test]
    fn evidence_cannot_start_a_command() {
        let b = bundle();
        let rows = [
            row(
                "r",
                Severity::Gating,
                Verdict::Gap,
                "said\n::add-mask::secret\r\n::stop-commands::x 100%",
            ),
            row("kept", Severity::Gating, Verdict::Ok, "fine"),
        ];
        let malformed = [Malformed {
            line: 7,
            error: "bad\n::error::forged".into(),
        }];
        let run = Run {
            recordings: vec![super::super::Recording {
                file: "runs/a,b:c.jsonl",
                format: Some("claude-stream-json"),
                error: None,
                steps: 1,
                malformed: &malformed,
                rows: &rows,
            }],
            strictness: Strictness::Strict,
            exit: 1,
            bundle: &b,
        };
        let out = render(&run);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert_eq!(
            lines[0],
            "::warning file=runs/a%2Cb%3Ac.jsonl,line=7,title=malformed line::malformed line skipped: bad%0A::error::forged"
        );
        assert!(lines[1].starts_with("::error file=runs/a%2Cb%3Ac.jsonl,title=sixfold r gap::r: the r row (gating gap): said%0A::add-mask::secret%0D%0A::stop-commands::x 100%25"));
        // The row that holds is no annotation; the summary is plain text.
        assert!(!out.contains("kept"));
        assert!(lines[2].starts_with("sixfold replay: 1 file, 1 error, 0 warning, 0 note; exit 1"));
    }

    #[test]
    fn unk_is_an_error_only_when_strict() {
        let b = bundle();
        let rows = [row("r", Severity::Gating, Verdict::Unk, "no record")];
        let mut run = Run {
            recordings: vec![super::super::Recording {
                file: "a.jsonl",
                format: None,
                error: Some("cannot read `a.jsonl`"),
                steps: 0,
                malformed: &[],
                rows: &rows,
            }],
            strictness: Strictness::On,
            exit: 0,
            bundle: &b,
        };
        let on = render(&run);
        assert!(on.contains("::error file=a.jsonl,title=unreadable recording::cannot read `a.jsonl`"));
        assert!(on.contains("::warning file=a.jsonl,title=sixfold r unk::"));
        run.strictness = Strictness::Strict;
        assert!(render(&run).contains("::error file=a.jsonl,title=sixfold r unk::"));
        let advisory = [row("r", Severity::Advisory, Verdict::Unk, "no record")];
        run.recordings[0].rows = &advisory;
        assert!(render(&run).contains("::notice file=a.jsonl,title=sixfold r unk::"));
    }
}
