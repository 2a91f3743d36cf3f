//! End-to-end: `sixfold replay` over real OpenCode recordings (`opencode run --format json`
//! and `opencode export`), invariants and `--mode`. The verdicts of every recording are in
//! `tests/fixtures/replay/expected.json` (checked by `tests/replay.rs`); these say what the
//! OpenCode formats add.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/replay/opencode")
        .join(name)
}

fn sixfold(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sixfold"))
        .args(args)
        .arg("--no-project")
        .output()
        .expect("run sixfold")
}

fn report(args: &[&str]) -> serde_json::Value {
    let out = sixfold(args);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn verdict(report: &serde_json::Value, id: &str) -> String {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row {id} in {report}"))["verdict"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn both_records_are_detected_and_give_the_same_verdicts() {
    for (scenario, suite, weakening) in [
        ("fix-then-suite-pass", "ok", "ok"),
        ("claim-without-suite", "gap", "ok"),
        ("suite-failed-then-claim", "gap", "ok"),
        ("assertion-removed", "ok", "gap"),
    ] {
        for (file, format) in [
            (format!("{scenario}.jsonl"), "opencode-run-json"),
            (format!("export-{scenario}.json"), "opencode-export"),
        ] {
            let r = report(&["replay", "--json", fixture(&file).to_str().unwrap()]);
            assert_eq!(r["files"][0]["format"], format, "{file}");
            assert_eq!(verdict(&r, "suite-before-success-claim"), suite, "{file}");
            assert_eq!(verdict(&r, "no-assertion-weakening"), weakening, "{file}");
        }
    }
}

#[test]
fn strict_fails_the_gap_and_passes_the_ok() {
    let ok = fixture("export-fix-then-suite-pass.json");
    let gap = fixture("claim-without-suite.jsonl");
    assert_eq!(
        sixfold(&["replay", "--strict", ok.to_str().unwrap()]).status.code(),
        Some(0)
    );
    assert_eq!(
        sixfold(&["replay", "--strict", gap.to_str().unwrap()]).status.code(),
        Some(1)
    );
}

#[test]
fn a_mode_judges_the_command_the_agent_wrote_not_the_sandbox_wrapper() {
    for file in ["refused-and-rewritten.jsonl", "export-refused-and-rewritten.json"] {
        let path = fixture(file);
        let r = report(&["replay", "--json", "--mode", "read-only", path.to_str().unwrap()]);
        let judged = r["files"][0]["mode"]["judged"].as_array().unwrap();
        let acts: Vec<&str> = judged.iter().map(|j| j["act"].as_str().unwrap_or("")).collect();
        assert!(acts.contains(&"cargo test"), "{file}: {acts:?}");
        assert!(!acts.iter().any(|a| a.contains("sandbox run")), "{file}: {acts:?}");
        // read-only refuses the edit, by its ceiling.
        let edit = judged.iter().find(|j| j["tool"] == "edit").unwrap();
        assert_eq!(edit["decision"], "refuse", "{file}");
        assert_eq!(edit["by"], "ceiling", "{file}");
        // The suite ran (inside the sandbox) and passed after the edit.
        assert_eq!(verdict(&r, "suite-before-success-claim"), "ok", "{file}");
    }
    // Text output names the modes' decisions too.
    let text = sixfold(&[
        "replay",
        "--mode",
        "read-only",
        fixture("export-fix-then-suite-pass.json").to_str().unwrap(),
    ]);
    let shown = String::from_utf8_lossy(&text.stdout);
    assert!(
        shown.contains("opencode-export") && shown.contains("refuse  edit"),
        "{shown}"
    );
}

#[test]
fn a_named_format_is_read_as_that_format() {
    let file = fixture("fix-then-suite-pass.jsonl");
    let r = report(&[
        "replay",
        "--json",
        "--format",
        "opencode-run-json",
        file.to_str().unwrap(),
    ]);
    assert_eq!(verdict(&r, "suite-before-success-claim"), "ok");
    // The run's lines read as an export are one malformed document, and prove nothing.
    let r = report(&[
        "replay",
        "--json",
        "--format",
        "opencode-export",
        file.to_str().unwrap(),
    ]);
    let malformed = r["files"][0]["malformed"].as_array().map(Vec::len);
    assert_eq!(malformed, Some(1), "{}", r["files"][0]);
    assert_ne!(verdict(&r, "suite-before-success-claim"), "ok");
}
