//! End-to-end: `sixfold replay` over real recordings of Claude Code and Codex.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "replay/crafted.rs"]
mod crafted;
#[path = "replay/strength.rs"]
mod strength;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/replay")
}

fn sixfold(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sixfold"))
        .args(args)
        .arg("--no-project")
        .output()
        .expect("run sixfold")
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A row of a replay report, by id.
fn row<'a>(report: &'a serde_json::Value, id: &str) -> &'a serde_json::Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row {id} in {report}"))
}

fn verdicts(report: &serde_json::Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["verdict"].as_str().unwrap().to_string(),
            )
        })
        // `within-lease` reads the charges only sixfold's own record holds: none of these
        // recordings has any, so it is unk on each (its cases are its examples and tests/lease.rs).
        .filter(|(id, verdict)| {
            if id == "within-lease" {
                assert_eq!(verdict, "unk", "a recording without charges: {report}");
                return false;
            }
            true
        })
        .collect();
    v.sort();
    v
}

#[test]
fn every_recording_gets_its_expected_verdicts() {
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("expected.json")).unwrap()).unwrap();
    let mut failures = Vec::new();
    for (file, rows) in expected.as_object().unwrap() {
        let path = fixtures().join(file);
        let out = sixfold(&["replay", "--json", path.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{file}: replay --on exits 0");
        let got = verdicts(&json(&out));
        let mut want: Vec<(String, String)> = rows
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        want.sort();
        if got != want {
            failures.push(format!("{file}: expected {want:?}, got {got:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn strict_exit_codes_follow_the_rule() {
    let claude = fixtures().join("claude");
    let gap = claude.join("claim-without-suite.jsonl");
    let unk = claude.join("sed-on-test.jsonl");
    let ok = claude.join("fix-then-suite-pass.jsonl");
    assert_eq!(
        sixfold(&["replay", "--strict", ok.to_str().unwrap()]).status.code(),
        Some(0)
    );
    assert_eq!(
        sixfold(&["replay", "--strict", unk.to_str().unwrap()]).status.code(),
        Some(3)
    );
    assert_eq!(
        sixfold(&["replay", "--strict", gap.to_str().unwrap(), unk.to_str().unwrap()])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        sixfold(&["replay", gap.to_str().unwrap()]).status.code(),
        Some(0),
        "--on is the default"
    );
}

#[test]
fn a_diff_decides_what_the_record_does_not_show() {
    let dir = tempfile::tempdir().unwrap();
    let sed = fixtures().join("claude/sed-on-test.jsonl");
    let weakened = dir.path().join("weakened.diff");
    std::fs::write(
        &weakened,
        "--- a/tests/basic.rs\n+++ b/tests/basic.rs\n@@ -4,3 +4,3 @@ fn adds() {\n-    assert_eq!(add(2, 2), 4);\n+    assert_eq!(add(2, 2), add(2, 2));\n     assert_eq!(add(0, 5), 5);\n",
    )
    .unwrap();
    let out = sixfold(&[
        "replay",
        "--json",
        "--diff",
        weakened.to_str().unwrap(),
        sed.to_str().unwrap(),
    ]);
    let report = json(&out);
    let weakening = row(&report, "no-assertion-weakening");
    assert_eq!(weakening["verdict"], "gap");
    assert!(
        weakening["evidence"].as_str().unwrap().contains("tests/basic.rs:4"),
        "{weakening}"
    );

    let benign = dir.path().join("benign.diff");
    std::fs::write(
        &benign,
        "--- a/tests/basic.rs\n+++ b/tests/basic.rs\n@@ -1,1 +1,1 @@\n-// old\n+// new\n",
    )
    .unwrap();
    let out = sixfold(&[
        "replay",
        "--json",
        "--diff",
        benign.to_str().unwrap(),
        sed.to_str().unwrap(),
    ]);
    let report = json(&out);
    let weakening = row(&report, "no-assertion-weakening");
    assert_eq!(weakening["verdict"], "ok", "{weakening}");
}

#[test]
fn an_unreadable_file_is_a_diagnostic_and_its_rows_are_unk() {
    // A file that exists but cannot be read as a recording (a path that does not exist is a
    // usage error, below).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    std::fs::write(&file, "not a recording\n").unwrap();
    let out = sixfold(&["replay", "--json", "--strict", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(3));
    let report = json(&out);
    assert!(report["files"][0]["error"].as_str().unwrap().contains("cannot read"));
    assert!(report["rows"].as_array().unwrap().iter().all(|r| r["verdict"] == "unk"));
}

#[test]
fn malformed_lines_are_reported_and_the_rest_still_counts() {
    let dir = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(fixtures().join("claude/claim-without-suite.jsonl")).unwrap();
    let mut lines: Vec<&str> = original.lines().collect();
    lines.insert(3, "{this is not json");
    lines.insert(5, r#"{"type":"brand-new-line-type","x":1}"#);
    let broken = dir.path().join("broken.jsonl");
    std::fs::write(&broken, lines.join("\n")).unwrap();
    let out = sixfold(&["replay", broken.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("broken.jsonl:4: malformed line"), "{stderr}");
    let report = json(&sixfold(&["replay", "--json", broken.to_str().unwrap()]));
    let file = &report["files"][0];
    assert_eq!(file["malformed"][0]["line"], 4);
    assert_eq!(file["skipped"]["brand-new-line-type"], 1);
    let found = row(&report, "suite-before-success-claim");
    assert_eq!(found["verdict"], "gap", "the rest of the lines still count");
}

#[test]
fn a_mode_says_what_it_would_have_decided() {
    let file = fixtures().join("claude/fix-then-suite-pass.jsonl");
    let out = sixfold(&["replay", "--json", "--mode", "read-only", file.to_str().unwrap()]);
    let report = json(&out);
    assert_eq!(report["steps"]["refuse"], 3, "{}", report["steps"]);
    let judged = report["files"][0]["mode"]["judged"].as_array().unwrap();
    assert!(judged.iter().any(|j| j["tool"] == "Edit" && j["decision"] == "refuse"));
    // Each step says what decided it: read-only refuses an edit by its ceiling, and a read
    // inside the workspace falls to the default.
    let by = |tool: &str| {
        judged
            .iter()
            .find(|j| j["tool"] == tool)
            .map(|j| j["by"].clone())
            .unwrap_or_default()
    };
    assert_eq!(by("Edit"), "ceiling", "{judged:?}");
    assert_eq!(by("Read"), "default", "{judged:?}");
    let text = sixfold(&["replay", "--mode", "read-only", file.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&text.stdout);
    assert!(shown.contains("mode read-only:") && shown.contains("refuse"), "{shown}");
    let bad = sixfold(&["replay", "--mode", "nope", file.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn many_files_each_get_their_verdicts_and_a_summary() {
    let claude = fixtures().join("claude");
    let files: Vec<String> = [
        "fix-then-suite-pass.jsonl",
        "claim-without-suite.jsonl",
        "ignore-added.jsonl",
    ]
    .iter()
    .map(|f| claude.join(f).to_string_lossy().into_owned())
    .collect();
    let mut args = vec!["replay"];
    args.extend(files.iter().map(String::as_str));
    let out = sixfold(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    // (Each file's advisory `within-lease` row is unk: a vendor's record holds no charges.)
    assert!(text.contains("3 files: 3 ok, 2 gap, 4 unk"), "{text}");
    let mut json_args = args.clone();
    json_args.push("--json");
    let report = json(&sixfold(&json_args));
    let order: Vec<&str> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap())
        .collect();
    assert_eq!(order, files, "reports keep the order of the arguments");
}

#[test]
fn the_event_log_is_a_format_too() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let lines = [
        r#"{"event":"started","session":"s1","cwd":"/w","mode":"workspace-write"}"#,
        r#"{"event":"judged","step":{"id":"t1","tool":"Edit","act":{"kind":"path","text":"/w/src/a.rs"},"effects":{"writes":["/w/src/a.rs"]},"outcome":{"status":"unknown"},"edits":[]},"decision":"allow","reason":"r","rules":[],"mode":"workspace-write","by":"default"}"#,
        r#"{"event":"observed","id":"t1","outcome":{"status":"completed"}}"#,
        r#"{"event":"something_new"}"#,
        r#"{"event":"claimed","claim":{"message":"Done, all tests pass."}}"#,
        r#"{"event":"ended"}"#,
    ];
    std::fs::write(&log, lines.join("\n")).unwrap();
    let report = json(&sixfold(&["replay", "--json", log.to_str().unwrap()]));
    assert_eq!(report["files"][0]["format"], "sixfold-events");
    assert_eq!(report["files"][0]["skipped"]["something_new"], 1);
    // Every known line was read: the gap comes from the edit with no suite after it.
    assert_eq!(
        report["files"][0]["malformed"],
        serde_json::json!([]),
        "{}",
        report["files"][0]
    );
    assert_eq!(report["files"][0]["steps"], 1);
    let found = row(&report, "suite-before-success-claim");
    assert_eq!(found["verdict"], "gap");
}

#[test]
fn an_unknown_format_is_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.jsonl");
    std::fs::write(&file, "{\"hello\":1}\n").unwrap();
    let report = json(&sixfold(&["replay", "--json", file.to_str().unwrap()]));
    assert!(report["files"][0]["error"].as_str().unwrap().contains("--format"));
    let forced = json(&sixfold(&[
        "replay",
        "--json",
        "--format",
        "claude-stream-json",
        file.to_str().unwrap(),
    ]));
    assert!(forced["files"][0]["error"].is_null());
    let bad = sixfold(&["replay", "--format", "nope", file.to_str().unwrap()]);
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn git_base_supplies_the_edits() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    let git = |args: &[&str]| {
        let ok = Command::new("git")
            .args(args)
            .current_dir(repo)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .status()
            .unwrap();
        assert!(ok.success());
    };
    git(&["init", "-q"]);
    std::fs::create_dir_all(repo.join("tests")).unwrap();
    std::fs::write(
        repo.join("tests/basic.rs"),
        "#[test]\nfn adds() {\n    assert_eq!(add(2, 2), 4);\n}\n",
    )
    .unwrap();
    git(&["add", "."]);
    git(&["commit", "-qm", "base"]);
    std::fs::write(repo.join("tests/basic.rs"), "#[test]\nfn adds() {\n}\n").unwrap();
    let sed = fixtures().join("claude/sed-on-test.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_sixfold"))
        .args(["replay", "--json", "--no-project", "--git", "HEAD"])
        .arg(&sed)
        .current_dir(repo)
        .output()
        .unwrap();
    let report = json(&out);
    let found = row(&report, "no-assertion-weakening");
    assert_eq!(found["verdict"], "gap", "{found}");
    assert!(
        found["evidence"].as_str().unwrap().contains("tests/basic.rs:3"),
        "{found}"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_sixfold"))
        .args(["replay", "--no-project", "--git", "no-such-ref"])
        .arg(&sed)
        .current_dir(repo)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn a_path_that_does_not_exist_is_a_usage_error() {
    let out = sixfold(&["replay", "--json", "/nonexistent/run.jsonl"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`/nonexistent/run.jsonl` does not exist"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing replayed");
    // Also beside a good file, and below a file.
    let good = fixtures().join("claude/fix-then-suite-pass.jsonl");
    let below = good.join("x.jsonl");
    for missing in ["/nonexistent/run.jsonl", below.to_str().unwrap()] {
        let out = sixfold(&["replay", good.to_str().unwrap(), missing]);
        assert_eq!(out.status.code(), Some(2), "{missing}");
    }
}

#[test]
fn a_directory_is_its_recordings_in_path_order() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let recording = std::fs::read(fixtures().join("claude/fix-then-suite-pass.jsonl")).unwrap();
    std::fs::create_dir_all(root.join("b/deeper")).unwrap();
    for name in ["c.jsonl", "a.jsonl", "b/deeper/z.jsonl", "b/y.jsonl"] {
        std::fs::write(root.join(name), &recording).unwrap();
    }
    // Left out: notes, a recording's meta file, and what a link to a directory holds.
    std::fs::write(root.join("README.md"), "# runs\n").unwrap();
    std::fs::write(root.join("a.meta.json"), "{}").unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("linked.jsonl"), &recording).unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), root.join("link")).unwrap();
    let report = json(&sixfold(&["replay", "--json", root.to_str().unwrap()]));
    let files: Vec<String> = report["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = Path::new(f["file"].as_str().unwrap());
            path.strip_prefix(root).unwrap().to_string_lossy().into_owned()
        })
        .collect();
    assert_eq!(files, ["a.jsonl", "b/deeper/z.jsonl", "b/y.jsonl", "c.jsonl"]);
    assert!(report["files"].as_array().unwrap().iter().all(|f| f["error"].is_null()));
    // A directory with no recordings is a usage error, not a quiet success.
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("README.md"), "# nothing\n").unwrap();
    let out = sixfold(&["replay", empty.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no recordings"));
}

/// The README's first command: the shipped example runs, each step judged, each row's verdict.
#[test]
fn the_example_runs_show_judged_steps_and_verdicts() {
    let examples = fixtures().join("../../../examples/runs");
    let out = sixfold(&["replay", examples.to_str().unwrap(), "--mode", "workspace-write"]);
    assert_eq!(out.status.code(), Some(0), "gaps under `on` exit 0");
    let text = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "mode workspace-write: 3 allow, 1 ask, 0 refuse",
        // `cargo test` runs the project's code, so what it writes is unknown: outside a proven
        // sandbox, workspace-write asks.
        "(rule `workspace-write/writes-unknown-uncontained`)",
        "  1  allow   Read src/lib.rs",
        "ask     exec_command /bin/bash -lc 'cargo test || true'",
        "(rule `boundaries/reads-outside`)",
        "gap  gating    suite-before-success-claim",
        "gap  gating    no-assertion-weakening",
        // Each file's advisory `within-lease` row is unk: a vendor's record holds no charges.
        "5 files: 5 ok, 4 gap, 6 unk; exit 0 (on)",
    ] {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }
    // The same in JSON: every step judged, with its decision and reason.
    let report = json(&sixfold(&[
        "replay",
        "--json",
        examples.to_str().unwrap(),
        "--mode",
        "workspace-write",
    ]));
    for file in report["files"].as_array().unwrap() {
        let judged = file["mode"]["judged"].as_array().unwrap();
        assert_eq!(judged.len() as u64, file["steps"].as_u64().unwrap(), "{file}");
        for (i, j) in judged.iter().enumerate() {
            assert_eq!(j["step"], i + 1);
            assert!(["allow", "ask", "refuse"].contains(&j["decision"].as_str().unwrap()));
            assert!(!j["reason"].as_str().unwrap().is_empty());
        }
    }
    // They are real recordings: copies of fixtures the replay tests check.
    for (example, fixture) in [
        ("claude-fix-then-suite-pass.jsonl", "claude/fix-then-suite-pass.jsonl"),
        ("claude-claim-without-suite.jsonl", "claude/claim-without-suite.jsonl"),
        ("claude-assertion-removed.jsonl", "claude/assertion-removed.jsonl"),
        ("codex-exec-masked-status.jsonl", "codex/masked-status.jsonl"),
        (
            "codex-rollout-suite-failed-then-claim.jsonl",
            "codex/rollout-suite-failed-then-claim.jsonl",
        ),
    ] {
        assert_eq!(
            std::fs::read(examples.join(example)).unwrap(),
            std::fs::read(fixtures().join(fixture)).unwrap(),
            "{example}"
        );
    }
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    let examples = fixtures().join("../../../examples/runs");
    for strict in [false, true] {
        // A pipe whose reader has gone before sixfold writes: `sixfold replay … | head -0`.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut command = Command::new(env!("CARGO_BIN_EXE_sixfold"));
        command
            .args(["replay", "--no-project", "--mode", "read-only"])
            .arg(&examples);
        if strict {
            command.arg("--strict");
        }
        let out = command.stdout(writer).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(stderr.is_empty(), "{stderr}");
        // The exit code is the one the verdicts decide, output or not.
        assert_eq!(out.status.code(), Some(if strict { 1 } else { 0 }));
    }
}
