//! The audit log through the real binary: every event-log line stamped (time, bundle hash,
//! decision id) by every writer, and `sixfold log export` reading it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// A scratch git repository, with a trust store of its own beside it.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(&project).unwrap();
    Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .unwrap();
    std::fs::write(project.join("a.txt"), "a\n").unwrap();
    (dir, project)
}

fn sixfold(project: &Path) -> Command {
    let mut cmd = Command::new(SIXFOLD);
    cmd.current_dir(project)
        .env("XDG_STATE_HOME", project.parent().unwrap().join("state"))
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT");
    cmd
}

/// One hook event through `sixfold hook claude-code`; its answer.
fn hook(project: &Path, event: Value) -> std::process::Output {
    let out = support::fed(
        sixfold(project).args(["hook", "claude-code"]),
        event.to_string().as_bytes(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    out
}

fn pre(project: &Path, session: &str, id: &str, tool: &str, input: Value) -> Value {
    json!({ "hook_event_name": "PreToolUse", "session_id": session, "cwd": project,
        "tool_name": tool, "tool_input": input, "tool_use_id": id })
}

/// The session's record, a JSON value a line.
fn record(project: &Path, session: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(project.join(format!(".sixfold/runs/{session}.jsonl"))).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// `2026-12-01T18:03:09.123456Z`: RFC 3339, UTC, to the microsecond.
fn is_rfc3339_utc(s: &str) -> bool {
    let b = s.as_bytes();
    s.len() == 27
        && s.ends_with('Z')
        && [4, 7].iter().all(|&i| b[i] == b'-')
        && b[10] == b'T'
        && [13, 16].iter().all(|&i| b[i] == b':')
        && b[19] == b'.'
        && s.chars().filter(char::is_ascii_digit).count() == 20
}

/// A random UUID: 8-4-4-4-12 lowercase hex, version 4.
fn is_uuid_v4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).collect::<Vec<_>>() == [8, 4, 4, 4, 12]
        && parts
            .iter()
            .all(|p| p.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()))
        && parts[2].starts_with('4')
}

/// Every line the hook writes (start, judgement, outcome, prompt, verdict, end) carries its time,
/// the bundle's hash and an id of its own; the hash follows the bundle's files, not the state.
#[test]
fn every_line_the_hook_writes_is_stamped() {
    let (_dir, project) = project();
    let s = "stamped";
    hook(
        &project,
        json!({ "hook_event_name": "SessionStart", "session_id": s, "cwd": project }),
    );
    hook(
        &project,
        json!({ "hook_event_name": "UserPromptSubmit", "session_id": s, "cwd": project, "prompt": "hi" }),
    );
    hook(
        &project,
        pre(&project, s, "1", "Read", json!({ "file_path": project.join("a.txt") })),
    );
    hook(
        &project,
        json!({ "hook_event_name": "PostToolUse", "session_id": s, "cwd": project, "tool_name": "Read",
            "tool_input": { "file_path": project.join("a.txt") }, "tool_response": {}, "tool_use_id": "1" }),
    );
    // The state (the active mode) is not the bundle: the hash stays.
    assert!(sixfold(&project)
        .args(["mode", "set", "workspace-write"])
        .status()
        .unwrap()
        .success());
    hook(&project, pre(&project, s, "2", "Bash", json!({ "command": "ls" })));
    let lines = record(&project, s);
    let kinds: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        // Each step that runs is charged to the session's lease (counted even without one).
        [
            "started",
            "prompted",
            "judged",
            "charged",
            "observed",
            "mode_changed",
            "judged",
            "charged"
        ],
        "{lines:#?}"
    );
    let mut ids = std::collections::BTreeSet::new();
    for line in &lines {
        assert!(is_rfc3339_utc(line["timestamp"].as_str().unwrap()), "{line}");
        assert!(is_uuid_v4(line["decision_id"].as_str().unwrap()), "{line}");
        assert!(ids.insert(line["decision_id"].as_str().unwrap().to_string()), "{line}");
        assert_eq!(line["bundle"], lines[0]["bundle"], "{line}");
    }
    let shipped = lines[0]["bundle"].as_str().unwrap().to_string();
    assert!(shipped.starts_with("sha256:") && shipped.len() == 71, "{shipped}");
    // The times are in the order written.
    let times: Vec<&str> = lines.iter().map(|l| l["timestamp"].as_str().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");

    // A file in the project's `.sixfold/` is part of the bundle: the hash changes with it, and
    // back when it is gone.
    let modes = project.join(".sixfold/modes");
    std::fs::create_dir_all(&modes).unwrap();
    let mine = "id = \"mine\"\ndescription = \"The project's own mode.\"\nextends = \"workspace-write\"\n";
    std::fs::write(modes.join("mine.toml"), mine).unwrap();
    hook(&project, pre(&project, s, "3", "Bash", json!({ "command": "ls" })));
    std::fs::write(modes.join("mine.toml"), format!("{mine}# a comment\n")).unwrap();
    hook(&project, pre(&project, s, "4", "Bash", json!({ "command": "ls" })));
    std::fs::remove_file(modes.join("mine.toml")).unwrap();
    hook(&project, pre(&project, s, "5", "Bash", json!({ "command": "ls" })));
    let lines = record(&project, s);
    let bundles: Vec<&str> = lines[8..]
        .iter()
        .filter(|l| l["event"] == "judged")
        .map(|l| l["bundle"].as_str().unwrap())
        .collect();
    assert_eq!(bundles.len(), 3, "{lines:#?}");
    assert_ne!(bundles[0], shipped);
    assert_ne!(bundles[1], bundles[0]);
    assert_eq!(bundles[2], shipped);
}

/// Input that is not a hook event is refused and recorded, stamped too.
#[test]
fn an_unreadable_event_is_recorded_stamped() {
    let (_dir, project) = project();
    std::fs::create_dir_all(project.join(".sixfold")).unwrap();
    let out = support::fed(sixfold(&project).args(["hook", "claude-code"]), b"not json");
    assert_eq!(out.status.code(), Some(0));
    let lines = record(&project, "unknown-session");
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["decision"], "refuse");
    assert!(is_rfc3339_utc(lines[0]["timestamp"].as_str().unwrap()));
    assert!(is_uuid_v4(lines[0]["decision_id"].as_str().unwrap()));
    assert!(lines[0]["bundle"].as_str().unwrap().starts_with("sha256:"));
}

/// A record begun before lines were stamped goes on: the old lines still count (the spawn
/// limit), replay reads both kinds, and only the new lines are stamped.
#[test]
fn a_record_with_old_unstamped_lines_goes_on() {
    let (_dir, project) = project();
    let s = "old";
    let runs = project.join(".sixfold/runs");
    std::fs::create_dir_all(&runs).unwrap();
    // What the writer before stamps wrote: each event as it serialises alone.
    use sixfold_core::decision::{DecidedBy, Decision, Judgement};
    use sixfold_core::trace::{Event, Step, StepAct};
    let old = [
        Event::Started {
            session: s.into(),
            cwd: Some(project.to_string_lossy().into_owned()),
            mode: Some("ask".into()),
            provider: Some("claude-code".into()),
            record: None,
        },
        Event::Judged {
            step: Box::new(Step {
                id: "0".into(),
                tool: "Read".into(),
                act: StepAct {
                    kind: "read".into(),
                    text: "a.txt".into(),
                },
                ..Step::default()
            }),
            judgement: Judgement {
                decision: Decision::Allow,
                reason: "reads inside the workspace".into(),
                rules: Vec::new(),
                mode: "ask".into(),
                by: DecidedBy::Default,
            },
        },
    ];
    let text: String = old
        .iter()
        .map(|e| format!("{}\n", serde_json::to_string(e).unwrap()))
        .collect();
    std::fs::write(runs.join(format!("{s}.jsonl")), text).unwrap();
    hook(
        &project,
        pre(&project, s, "1", "Read", json!({ "file_path": project.join("a.txt") })),
    );
    let lines = record(&project, s);
    // The new judgement, and the step charged to the session's lease.
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(lines[..2].iter().all(|l| l.get("timestamp").is_none()));
    assert_eq!(lines[2]["event"], "judged");
    assert!(lines[2..].iter().all(|l| l["decision_id"].is_string()));
    let out = sixfold(&project)
        .args(["replay", "--json"])
        .arg(runs.join(format!("{s}.jsonl")))
        .output()
        .unwrap();
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(report["steps"]["total"], 2, "{report:#}");
}

/// `sixfold log export …` in the project.
fn export(project: &Path, args: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    let out = sixfold(project).args(["log", "export"]).args(args).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let decisions = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    (
        out.status.code(),
        decisions,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The decisions of the project's logs come out in OPA's decision-log shape, each with the id,
/// time and bundle its line was stamped with; sessions and a time range select them.
#[test]
fn the_decisions_export_in_opa_shape() {
    let (_dir, project) = project();
    assert!(sixfold(&project)
        .args(["mode", "set", "workspace-write"])
        .status()
        .unwrap()
        .success());
    hook(
        &project,
        pre(
            &project,
            "one",
            "1",
            "Read",
            json!({ "file_path": project.join("a.txt") }),
        ),
    );
    hook(
        &project,
        pre(
            &project,
            "one",
            "2",
            "Bash",
            json!({ "command": "curl https://example.com" }),
        ),
    );
    hook(
        &project,
        json!({ "hook_event_name": "SessionEnd", "session_id": "one", "cwd": project }),
    );
    hook(&project, pre(&project, "two", "1", "Bash", json!({ "command": "ls" })));
    let logged: Vec<Value> = record(&project, "one")
        .into_iter()
        .chain(record(&project, "two"))
        .filter(|l| l["event"] == "judged")
        .collect();
    assert_eq!(logged.len(), 3);

    let (code, decisions, stderr) = export(&project, &["--format", "opa"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(decisions.len(), 3, "{decisions:#?}");
    for (d, line) in decisions.iter().zip(&logged) {
        assert_eq!(d["decision_id"], line["decision_id"]);
        assert_eq!(d["timestamp"], line["timestamp"]);
        assert_eq!(d["bundles"]["sixfold"]["revision"], line["bundle"]);
        assert_eq!(d["path"], "sixfold/modes/workspace-write");
        assert_eq!(d["result"]["decision"], line["decision"]);
        assert_eq!(d["result"]["reason"], line["reason"]);
        assert_eq!(d["input"]["step"]["tool"], line["step"]["tool"]);
        assert_eq!(d["input"]["provider"], "claude-code");
        assert_eq!(d["labels"]["app"], "sixfold");
    }
    let decided: Vec<&str> = decisions
        .iter()
        .map(|d| d["result"]["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decided, ["allow", "refuse", "allow"]);
    assert_eq!(decisions[1]["input"]["session"], "one");
    assert_eq!(decisions[2]["input"]["session"], "two");

    // One session.
    let (code, only, _) = export(&project, &["--session", "two"]);
    assert_eq!(code, Some(0));
    assert_eq!(only.len(), 1);
    assert_eq!(only[0]["decision_id"], logged[2]["decision_id"]);
    // A session never recorded is an unknown name.
    let (code, none, stderr) = export(&project, &["--session", "three"]);
    assert_eq!((code, none.len()), (Some(2), 0), "{stderr}");
    assert!(stderr.contains("three"), "{stderr}");

    // A time range: from the second decision's time on, and before it.
    let second = logged[1]["timestamp"].as_str().unwrap();
    let (_, after, _) = export(&project, &["--since", second]);
    assert_eq!(after.len(), 2);
    let (_, before, _) = export(&project, &["--until", second]);
    assert_eq!(before.len(), 1);
    let (_, later, _) = export(&project, &["--since", "2999-01-01"]);
    assert!(later.is_empty());
    let (code, _, stderr) = export(&project, &["--since", "last tuesday"]);
    assert_eq!(code, Some(2), "{stderr}");
}

/// Logs are untrusted: a line that is not an event is skipped and counted, a log written before
/// stamps exports with ids made of its place (and no time, so out of any range), a log that is
/// not a regular file is not read (no hang) and fails the export, and the others still export.
#[test]
fn an_export_reads_untrusted_logs_as_far_as_they_can_be_read() {
    let (_dir, project) = project();
    hook(
        &project,
        pre(
            &project,
            "new",
            "1",
            "Read",
            json!({ "file_path": project.join("a.txt") }),
        ),
    );
    let runs = project.join(".sixfold/runs");
    let mut text = std::fs::read_to_string(runs.join("new.jsonl")).unwrap();
    text.push_str("not json\n{\"event\":\"no_such_event\"}\n\n");
    std::fs::write(runs.join("new.jsonl"), text).unwrap();
    use sixfold_core::decision::{DecidedBy, Decision, Judgement};
    use sixfold_core::trace::{Event, Step};
    let old = Event::Judged {
        step: Box::new(Step {
            id: "0".into(),
            tool: "Read".into(),
            ..Step::default()
        }),
        judgement: Judgement {
            decision: Decision::Allow,
            reason: String::new(),
            rules: Vec::new(),
            mode: "ask".into(),
            by: DecidedBy::Default,
        },
    };
    std::fs::write(
        runs.join("old.jsonl"),
        format!("{{\"event\":\"ended\"}}\n{}\n", serde_json::to_string(&old).unwrap()),
    )
    .unwrap();
    let (code, decisions, stderr) = export(&project, &[]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(decisions.len(), 2, "{decisions:#?}");
    assert!(stderr.contains("2 line(s) skipped"), "{stderr}");
    assert!(decisions.iter().any(|d| d["input"]["session"] == "new"));
    let old = decisions.iter().find(|d| d["input"]["session"] == "old").unwrap();
    assert_eq!(old["decision_id"], "old:2");
    assert!(old.get("timestamp").is_none() && old.get("bundles").is_none());
    let (_, ranged, stderr) = export(&project, &["--since", "2000-01-01"]);
    assert_eq!(ranged.len(), 1);
    assert!(stderr.contains("1 decision(s) left out"), "{stderr}");

    // A FIFO among the logs: not opened for reading (that would hang), reported, exit 1.
    assert!(Command::new("mkfifo")
        .arg(runs.join("stuck.jsonl"))
        .status()
        .unwrap()
        .success());
    let started = std::time::Instant::now();
    let (code, decisions, stderr) = export(&project, &[]);
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(decisions.len(), 2);
    assert!(stderr.contains("stuck.jsonl") && stderr.contains("FIFO"), "{stderr}");
}
