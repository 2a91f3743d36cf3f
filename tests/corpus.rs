//! The adversarial corpus: every case of every `tests/corpus/*.toml` judged through the real
//! binary (`sixfold judge --batch`, the hook's own mapping of a tool call), every failing case
//! printed with its class, command, expected and actual decision and the reason, and the test
//! failing once at the end. See docs/security.md for the format and how to add a case.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// One case as written.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    /// The class, or `allow` for a case that must stay allowed.
    class: String,
    /// A Bash command (or `tool` with `input`).
    #[serde(default)]
    command: Option<String>,
    /// A tool's name, with `input` its `tool_input`.
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    input: Option<toml::Value>,
    /// The mode; `workspace-write` when absent.
    #[serde(default)]
    mode: Option<String>,
    /// `allow`, `ask`, `refuse` or `not-allow` (ask or refuse).
    expect: String,
    /// Why.
    #[serde(default)]
    note: Option<String>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CorpusFile {
    #[serde(default)]
    case: Vec<Case>,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Every case, with the file it came from.
fn cases() -> Vec<(String, Case)> {
    let dir = repo().join("tests/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).unwrap();
        let parsed: CorpusFile = toml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        for case in parsed.case {
            out.push((name.clone(), case));
        }
    }
    out
}

/// The batch line for a case.
fn line(case: &Case) -> Value {
    let mode = case.mode.clone().unwrap_or_else(|| "workspace-write".into());
    match (&case.command, &case.tool, &case.input) {
        (Some(command), None, None) => json!({"mode": mode, "tool": "Bash", "input": {"command": command}}),
        (None, Some(tool), input) => {
            let input = input
                .as_ref()
                .map(|i| serde_json::to_value(i).unwrap())
                .unwrap_or(Value::Null);
            json!({"mode": mode, "tool": tool, "input": input})
        }
        _ => panic!("a case has either `command` or `tool` (with `input`): {case:?}"),
    }
}

fn expected(expect: &str, got: &str) -> bool {
    match expect {
        "allow" | "ask" | "refuse" => expect == got,
        "not-allow" => got == "ask" || got == "refuse",
        other => panic!("`expect = \"{other}\"` is not allow, ask, refuse or not-allow"),
    }
}

#[test]
fn the_corpus_holds() {
    let cases = cases();
    assert!(!cases.is_empty(), "no cases in tests/corpus");
    // A workspace that is a repository, outside the temp dir (a write to `/tmp` is allowed in
    // workspace-write, so a workspace or a home there would hide escapes, wherever the checkout
    // is), and a home of its own.
    let scratch = support::outside_tmp();
    let workspace = scratch.path().join("work");
    let home = scratch.path().join("home");
    std::fs::create_dir_all(workspace.join("src")).unwrap();
    // Secrets that lie in the workspace without being named: a `.env`, a key under `deploy/`,
    // credentials beside ordinary configuration (see `judge.toml`).
    std::fs::write(workspace.join("src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(workspace.join(".env"), "API_KEY=x\n").unwrap();
    std::fs::create_dir_all(workspace.join("deploy")).unwrap();
    std::fs::write(workspace.join("deploy/server.pem"), "key\n").unwrap();
    std::fs::create_dir_all(workspace.join("config")).unwrap();
    std::fs::write(workspace.join("config/app.toml"), "a = 1\n").unwrap();
    std::fs::write(workspace.join("config/credentials.json"), "{}\n").unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&workspace)
        .status();
    assert!(git.is_ok_and(|s| s.success()), "git init");
    let state = scratch.path().join("state");

    let mut child = Command::new(SIXFOLD)
        .args(["judge", "--batch", "--no-project", "--sandbox", "off", "--root"])
        .arg(&workspace)
        .current_dir(&workspace)
        .env("HOME", &home)
        .env("TMPDIR", "/tmp")
        .env("XDG_STATE_HOME", &state)
        .env("XDG_CONFIG_HOME", &state)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = cases.iter().map(|(_, c)| format!("{}\n", line(c))).collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "sixfold judge --batch: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), cases.len(), "one answer per case");

    let mut failures = 0;
    let mut counts: BTreeMap<(String, String), usize> = BTreeMap::new();
    for ((file, case), answer) in cases.iter().zip(&answers) {
        *counts.entry((file.clone(), case.class.clone())).or_default() += 1;
        let got = answer["decision"].as_str().unwrap_or("?");
        if expected(&case.expect, got) {
            continue;
        }
        failures += 1;
        let what = case
            .command
            .clone()
            .unwrap_or_else(|| format!("{} {}", case.tool.as_deref().unwrap_or("?"), line(case)["input"]));
        println!(
            "FAIL {file} class {}: `{what}` (mode {}): expected {}, got {got}\n  reason: {}\n  parts: {}\n  note: {}",
            case.class,
            case.mode.as_deref().unwrap_or("workspace-write"),
            case.expect,
            answer["reason"].as_str().unwrap_or(""),
            answer["parts"],
            case.note.as_deref().unwrap_or(""),
        );
    }
    for ((file, class), n) in &counts {
        println!("{file} class {class}: {n} cases");
    }
    assert_eq!(
        failures,
        0,
        "{failures} of {} corpus cases failed (printed above)",
        cases.len()
    );
}
