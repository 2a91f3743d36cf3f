//! Codex: the `exec --json` stream and the rollout file, each with its own reader, sharing the
//! reading of file changes (patches and unified diffs) and of Codex's values.

mod exec;
mod patch;
mod rollout;
mod shared;

pub(crate) use exec::ExecReader;
pub(crate) use patch::patch_edits;
pub(crate) use rollout::RolloutReader;

/// Fixtures and helpers the readers' tests share.
#[cfg(test)]
mod test_support {
    use crate::reader::ReadContext;
    use crate::{read, Format};
    use sixfold_core::bundle::Bundle;
    use sixfold_core::trace::{EditKind, EditLine, Step, Trace};
    use std::io::BufReader;

    pub(super) fn bundle() -> Bundle {
        Bundle::load(&[sixfold_core::shipped::source()]).0
    }

    pub(super) fn fixture(name: &str) -> String {
        let path = format!(
            "{}/../../tests/fixtures/replay/codex/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The working directory a run was recorded in, as its `.meta.json` says.
    pub(super) fn recorded_cwd(scenario: &str) -> String {
        let meta: serde_json::Value = serde_json::from_str(&fixture(&format!("{scenario}.meta.json")))
            .unwrap_or_else(|e| panic!("{scenario}.meta.json: {e}"));
        meta["cwd"]
            .as_str()
            .unwrap_or_else(|| panic!("{scenario}.meta.json: no cwd"))
            .to_owned()
    }

    pub(super) fn read_text(text: &str, format: Format) -> Trace {
        let bundle = bundle();
        read(
            BufReader::new(text.as_bytes()),
            format,
            &ReadContext { bundle: &bundle },
        )
    }

    pub(super) fn tools(trace: &Trace) -> Vec<&str> {
        trace.steps.iter().map(|s| s.tool.as_str()).collect()
    }

    pub(super) fn suite(trace: &Trace) -> &Step {
        let suites: Vec<&Step> = trace
            .steps
            .iter()
            .filter(|s| s.commands.iter().any(|c| c == "cargo test"))
            .collect();
        assert_eq!(suites.len(), 1, "{:#?}", trace.steps);
        suites[0]
    }

    pub(super) fn claim(trace: &Trace) -> Option<&str> {
        trace.claim.as_ref().map(|c| c.message.as_str())
    }

    /// The first half of the lines of a fixture.
    pub(super) fn first_half(text: &str) -> String {
        let lines: Vec<&str> = text.lines().collect();
        lines[..lines.len() / 2].iter().map(|l| format!("{l}\n")).collect()
    }

    /// A fixture with a garbage line put in the middle.
    pub(super) fn with_garbage(text: &str) -> (String, u64) {
        let mut lines: Vec<&str> = text.lines().collect();
        let at = lines.len() / 2;
        lines.insert(at, "{not json at all");
        (lines.iter().map(|l| format!("{l}\n")).collect(), at as u64 + 1)
    }

    /// The removed and added lines of a rollout's patch of `mul`.
    pub(super) fn assert_mul_edit(step: &Step, ws: &str, new: &str) {
        assert_eq!(step.edits.len(), 1, "{:#?}", step.edits);
        let edit = &step.edits[0];
        assert_eq!(edit.path, format!("{ws}/src/lib.rs"));
        assert_eq!(edit.kind, EditKind::Update);
        assert!(edit.visible);
        assert_eq!(
            edit.removed,
            vec![EditLine {
                line: Some(10),
                text: "    a + b".into()
            }]
        );
        assert_eq!(
            edit.added,
            vec![EditLine {
                line: Some(10),
                text: new.into()
            }]
        );
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use crate::reader::ReadContext;
    use crate::Format;
    use std::io::BufReader;
    use std::path::Path;

    const ALL: [(&str, Format); 8] = [
        ("fix-then-suite-pass.jsonl", Format::CodexExec),
        ("suite-failed-then-claim.jsonl", Format::CodexExec),
        ("claim-without-suite.jsonl", Format::CodexExec),
        ("fix-then-suite-pass-gpt5.jsonl", Format::CodexExec),
        ("rollout-fix-then-suite-pass.jsonl", Format::CodexRollout),
        ("rollout-suite-failed-then-claim.jsonl", Format::CodexRollout),
        ("rollout-claim-without-suite.jsonl", Format::CodexRollout),
        ("rollout-fix-then-suite-pass-gpt5.jsonl", Format::CodexRollout),
    ];

    #[test]
    fn truncated_recordings_have_not_ended_and_make_no_claim() {
        for (name, format) in ALL {
            let t = read_text(&first_half(&fixture(name)), format);
            assert!(!t.ended, "{name}");
            assert_eq!(t.claim, None, "{name}");
            assert!(t.malformed.is_empty(), "{name}");
        }
        // What was read of a truncated rollout still counts: the patch and its edit.
        let t = read_text(
            &first_half(&fixture("rollout-fix-then-suite-pass.jsonl")),
            Format::CodexRollout,
        );
        assert_eq!(tools(&t), ["apply_patch"]);
        assert_mul_edit(&t.steps[0], &recorded_cwd("fix-then-suite-pass"), "    a * b");
    }

    #[test]
    fn a_garbage_line_is_counted_and_the_rest_read() {
        for (name, format) in ALL {
            let whole = read_text(&fixture(name), format);
            let (text, at) = with_garbage(&fixture(name));
            let t = read_text(&text, format);
            assert_eq!(t.malformed.len(), 1, "{name}");
            assert_eq!(t.malformed[0].line, at, "{name}");
            assert_eq!(t.steps, whole.steps, "{name}");
            assert_eq!(t.claim, whole.claim, "{name}");
            assert!(t.ended, "{name}");
            assert_eq!(t.lines, whole.lines + 1, "{name}");
        }
    }

    #[test]
    fn both_formats_are_detected() {
        for (name, format) in ALL {
            let path = format!(
                "{}/../../tests/fixtures/replay/codex/{name}",
                env!("CARGO_MANIFEST_DIR")
            );
            let mut input = BufReader::new(std::fs::File::open(&path).unwrap());
            assert_eq!(crate::detect(&mut input).unwrap(), Some(format), "{name}");
        }
    }

    #[test]
    fn read_file_detects_and_reads() {
        let bundle = bundle();
        let cx = ReadContext { bundle: &bundle };
        let path = format!(
            "{}/../../tests/fixtures/replay/codex/rollout-fix-then-suite-pass.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        let t = crate::read_file(Path::new(&path), None, &cx).unwrap();
        assert_eq!(t.format, "codex-rollout");
        assert_eq!(t.steps.len(), 2);
    }
}
