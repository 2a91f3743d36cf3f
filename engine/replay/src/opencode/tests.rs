//! The OpenCode readers over the real recordings in `tests/fixtures/replay/opencode/`.

use crate::reader::ReadContext;
use crate::{read, Format};
use sixfold_core::bundle::Bundle;
use sixfold_core::trace::{EditKind, EditLine, Status, Step, Trace};
use std::io::BufReader;

const SCENARIOS: [&str; 6] = [
    "assertion-removed",
    "fix-then-suite-pass",
    "claim-without-suite",
    "suite-failed-then-claim",
    "refused-and-rewritten",
    "subagent-task",
];

fn bundle() -> Bundle {
    Bundle::load(&[sixfold_core::shipped::source()]).0
}

fn path(name: &str) -> String {
    format!(
        "{}/../../tests/fixtures/replay/opencode/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(path(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn cwd(scenario: &str) -> String {
    let meta: serde_json::Value = serde_json::from_str(&fixture(&format!("{scenario}.meta.json"))).unwrap();
    meta["cwd"].as_str().unwrap().to_owned()
}

fn read_text(text: &str, format: Format) -> Trace {
    let bundle = bundle();
    read(
        BufReader::new(text.as_bytes()),
        format,
        &ReadContext { bundle: &bundle },
    )
}

/// The run's lines and its export, read.
fn both(scenario: &str) -> [Trace; 2] {
    [
        read_text(&fixture(&format!("{scenario}.jsonl")), Format::OpenCodeRun),
        read_text(&fixture(&format!("export-{scenario}.json")), Format::OpenCodeExport),
    ]
}

fn tools(trace: &Trace) -> Vec<&str> {
    trace.steps.iter().map(|s| s.tool.as_str()).collect()
}

fn bash(trace: &Trace) -> Vec<&Step> {
    trace.steps.iter().filter(|s| s.tool == "bash").collect()
}

#[test]
fn both_formats_are_detected() {
    for scenario in SCENARIOS {
        for (name, format) in [
            (format!("{scenario}.jsonl"), Format::OpenCodeRun),
            (format!("export-{scenario}.json"), Format::OpenCodeExport),
        ] {
            let mut input = BufReader::new(std::fs::File::open(path(&name)).unwrap());
            assert_eq!(crate::detect(&mut input).unwrap(), Some(format), "{name}");
        }
    }
    // A compact export is one too; an object that starts otherwise is not.
    let mut compact = BufReader::new(&b"{\"info\":{},\"messages\":[]}"[..]);
    assert_eq!(crate::detect(&mut compact).unwrap(), Some(Format::OpenCodeExport));
    let mut other = BufReader::new(&b"{\"messages\":[],\"info\":{}}\n"[..]);
    assert_eq!(crate::detect(&mut other).unwrap(), None);
}

#[test]
fn a_fix_then_a_passing_suite_reads_the_same_from_both_records() {
    let ws = cwd("fix-then-suite-pass");
    let [run, export] = both("fix-then-suite-pass");
    for t in [&run, &export] {
        assert_eq!(tools(t), ["read", "edit", "write", "bash"], "{}", t.format);
        assert!(t.ended, "{}", t.format);
        assert!(t.malformed.is_empty(), "{}", t.format);
        assert_eq!(
            t.claim.as_ref().map(|c| c.message.as_str()),
            Some("Fixed the bug; all tests pass.")
        );
        let suite = bash(t)[0];
        assert_eq!(suite.commands, ["cargo test"]);
        assert_eq!(suite.outcome.status, Status::Completed);
        assert_eq!(suite.outcome.exit_code, Some(0));
        assert!(suite
            .output
            .as_ref()
            .is_some_and(|o| o.text.contains("test result: ok")));
        // The edit, with line numbers, from the diff OpenCode recorded.
        let edit = &t.steps[1].edits;
        assert_eq!(edit.len(), 1, "{edit:#?}");
        assert_eq!(edit[0].path, format!("{ws}/src/lib.rs"));
        assert_eq!(edit[0].kind, EditKind::Update);
        assert_eq!(
            edit[0].removed,
            [EditLine {
                line: Some(10),
                text: "    a + b".into()
            }]
        );
        assert_eq!(
            edit[0].added,
            [EditLine {
                line: Some(10),
                text: "    a * b".into()
            }]
        );
        // The written file was new.
        let write = &t.steps[2].edits;
        assert_eq!(write[0].path, format!("{ws}/NOTES.md"));
        assert_eq!(write[0].kind, EditKind::Create);
        assert_eq!(write[0].added[0].text, "# Notes");
    }
    // Only the export knows where the run was.
    assert_eq!(run.cwd, None);
    assert_eq!(export.cwd.as_deref(), Some(ws.as_str()));
    assert_eq!(
        export.record.as_ref().and_then(|r| r["version"].as_str()),
        Some("1.18.33")
    );
}

#[test]
fn a_failed_suite_fails_and_a_missing_exit_code_is_no_pass() {
    for t in both("suite-failed-then-claim") {
        let suite = bash(&t)[0];
        assert_eq!(suite.outcome.status, Status::Failed, "{}", t.format);
        assert_eq!(suite.outcome.exit_code, Some(101));
    }
    // The same line without its exit code.
    let text = fixture("suite-failed-then-claim.jsonl").replace("\"exit\":101", "\"gone\":101");
    let t = read_text(&text, Format::OpenCodeRun);
    assert_eq!(bash(&t)[0].outcome.status, Status::Unknown);
}

#[test]
fn refusals_are_refused_and_the_sandbox_wrapper_is_undone() {
    for t in both("refused-and-rewritten") {
        let calls = bash(&t);
        assert_eq!(calls.len(), 3, "{}", t.format);
        // sixfold's plugin refused the first, a permission rule the second.
        assert_eq!(calls[0].commands, ["rm -rf target"]);
        assert_eq!(calls[0].outcome.status, Status::Refused);
        assert!(calls[0].edits.is_empty());
        assert_eq!(calls[1].commands, ["git push origin main"]);
        assert_eq!(calls[1].outcome.status, Status::Refused);
        // The third ran inside the sandbox: recorded rewritten, read as the agent wrote it.
        assert_eq!(calls[2].act.text, "cargo test", "{}", t.format);
        assert_eq!(calls[2].commands, ["cargo test"]);
        assert_eq!(calls[2].outcome.status, Status::Completed);
    }
}

#[test]
fn a_sub_agent_task_is_a_step_that_spawns() {
    for t in both("subagent-task") {
        let task = t.steps.iter().find(|s| s.tool == "task").unwrap();
        assert_eq!(task.act.kind, "agent", "{}", t.format);
        assert_eq!(task.outcome.status, Status::Completed);
        assert!(t.ended);
        assert_eq!(bash(&t)[0].commands, ["cargo test"]);
    }
}

#[test]
fn a_run_cut_short_has_not_ended_and_makes_no_claim() {
    for scenario in SCENARIOS {
        let text = fixture(&format!("{scenario}.jsonl"));
        let lines: Vec<&str> = text.lines().collect();
        let half: String = lines[..lines.len() / 2].iter().map(|l| format!("{l}\n")).collect();
        let t = read_text(&half, Format::OpenCodeRun);
        assert!(!t.ended, "{scenario}");
        assert_eq!(t.claim, None, "{scenario}");
    }
}

#[test]
fn an_export_cut_short_keeps_what_came_before_and_is_malformed() {
    let text = fixture("export-fix-then-suite-pass.json");
    let whole = read_text(&text, Format::OpenCodeExport);
    let t = read_text(&text[..text.len() * 3 / 4], Format::OpenCodeExport);
    assert!(!t.ended);
    assert_eq!(t.claim, None);
    assert_eq!(t.malformed.len(), 1);
    assert!(!t.steps.is_empty() && t.steps.len() < whole.steps.len());
    assert_eq!(t.steps[..], whole.steps[..t.steps.len()]);
    // Garbage is malformed too, and nothing is made up from it.
    let t = read_text(
        "{\"info\": {\"directory\": \"/w\"}, \"messages\": [1, {",
        Format::OpenCodeExport,
    );
    assert_eq!(t.malformed.len(), 1);
    assert!(t.steps.is_empty());
}

#[test]
fn a_garbage_line_in_a_run_is_counted_and_the_rest_read() {
    let text = fixture("fix-then-suite-pass.jsonl");
    let whole = read_text(&text, Format::OpenCodeRun);
    let mut lines: Vec<&str> = text.lines().collect();
    lines.insert(3, "{not json");
    let broken: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let t = read_text(&broken, Format::OpenCodeRun);
    assert_eq!(t.malformed.len(), 1);
    assert_eq!(t.malformed[0].line, 4);
    assert_eq!(t.steps, whole.steps);
    assert_eq!(t.claim, whole.claim);
}

#[test]
fn a_tool_error_that_is_no_refusal_is_a_failure() {
    let line = |error: &str| {
        serde_json::json!({"type": "tool_use", "sessionID": "s", "part": {"type": "tool", "tool": "read",
            "callID": "c1", "state": {"status": "error", "input": {"filePath": "/w/a"}, "error": error}}})
        .to_string()
    };
    for failure in [
        "ENOENT: no such file or directory",
        "cannot read /home/u/sixfold: the directory",
    ] {
        let t = read_text(&line(failure), Format::OpenCodeRun);
        assert_eq!(t.steps[0].outcome.status, Status::Failed, "{failure}");
    }
    let t = read_text(
        &line("sixfold: mode `read-only` refuses: writes `/w/a`"),
        Format::OpenCodeRun,
    );
    assert_eq!(t.steps[0].outcome.status, Status::Refused);
    let t = read_text(
        &line("The user rejected permission to use this specific tool call."),
        Format::OpenCodeRun,
    );
    assert_eq!(t.steps[0].outcome.status, Status::Refused);
}
