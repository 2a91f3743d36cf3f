//! End-to-end: the real Claude Code governed by sixfold's hooks, driven by the scripted model
//! server on loopback, held to its lease: stopped by a step lease, by a cents lease (the scripted
//! model reports its token usage, read from Claude Code's transcript), and a spawned helper held
//! to its carve while its parent goes on. Skips (with the reason) when Claude Code is not
//! installed, unless `SIXFOLD_REQUIRE_E2E=1`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{agent_cli, claude_stream, json_lines, ModelServer};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// The model every run asks for: priced in `policies/prices.toml`.
const MODEL: &str = "claude-sonnet-4-5";

/// A scratch project (a git repository) and a scratch Claude config home with sixfold installed.
struct Run {
    _dir: tempfile::TempDir,
    project: PathBuf,
    config: PathBuf,
    home: PathBuf,
    scratch: PathBuf,
    claude: PathBuf,
}

impl Run {
    fn new() -> Option<Run> {
        let claude = agent_cli("SIXFOLD_CLAUDE_BIN", "claude")?;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("project");
        let config = root.join("claude-config");
        let home = root.join("home");
        let scratch = root.join("scratch");
        for d in [&project, &config, &home, &scratch] {
            std::fs::create_dir_all(d).unwrap();
        }
        Command::new("git")
            .args(["init", "-q"])
            .current_dir(&project)
            .status()
            .unwrap();
        let run = Run {
            _dir: dir,
            project,
            config,
            home,
            scratch,
            claude,
        };
        run.sixfold(&["install", "claude-code", "--user"]);
        run.sixfold(&["mode", "set", "workspace-write"]);
        Some(run)
    }

    fn sixfold(&self, args: &[&str]) -> String {
        let out = Command::new(SIXFOLD)
            .args(args)
            .current_dir(&self.project)
            .env("CLAUDE_CONFIG_DIR", &self.config)
            .env("HOME", &self.home)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "sixfold {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn claude(&self, script: Value) -> Vec<Value> {
        let server = ModelServer::start(&script, &self.project, &self.project, &self.scratch);
        let path = format!(
            "{}:{}",
            Path::new(SIXFOLD).parent().unwrap().display(),
            "/usr/local/bin:/usr/bin:/bin"
        );
        claude_stream(&self.claude, &self.project, &server.url(), |c| {
            c.args(["--model", MODEL])
                .env("HOME", &self.home)
                .env("PATH", path)
                .env("CLAUDE_CONFIG_DIR", &self.config);
        })
    }

    /// The one session's record.
    fn log(&self) -> Vec<Value> {
        let runs = self.project.join(".sixfold/runs");
        let mut all = Vec::new();
        for entry in std::fs::read_dir(&runs).unwrap() {
            all.extend(json_lines(&std::fs::read_to_string(entry.unwrap().path()).unwrap()));
        }
        all
    }

    fn session(&self) -> String {
        let log = self.log();
        log.iter()
            .find(|e| e["event"] == "started")
            .and_then(|e| e["session"].as_str())
            .unwrap()
            .to_string()
    }
}

/// Each Bash step judged: its command and the decision.
fn commands(log: &[Value]) -> Vec<(String, String)> {
    log.iter()
        .filter(|e| e["event"] == "judged" && e["step"]["tool"] == "Bash")
        .map(|e| {
            (
                e["step"]["act"]["text"].as_str().unwrap().to_string(),
                e["decision"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn exec(command: &str) -> Value {
    json!([{ "exec": command }])
}

#[test]
fn a_step_lease_stops_claude_code_at_the_step_after_it_is_spent() {
    let Some(run) = Run::new() else { return };
    run.sixfold(&["lease", "set", "--steps", "2"]);
    run.claude(json!({ "turns": [
        exec("echo one"), exec("echo two"), exec("echo three"), [{ "text": "Stopped." }],
    ]}));
    let log = run.log();
    assert_eq!(
        commands(&log),
        vec![
            ("echo one".to_string(), "allow".to_string()),
            ("echo two".into(), "allow".into()),
            ("echo three".into(), "refuse".into()),
        ],
        "{log:#?}"
    );
    let held: Vec<&Value> = log.iter().filter(|e| e["event"] == "held").collect();
    assert_eq!(held.len(), 1, "{log:#?}");
    assert_eq!(held[0]["what"], "steps");
    let refused = log
        .iter()
        .find(|e| e["event"] == "judged" && e["decision"] == "refuse")
        .unwrap();
    assert_eq!(refused["by"], "lease");
    assert!(
        refused["reason"].as_str().unwrap().contains("steps ran out (2 of 2"),
        "{refused}"
    );
    // `sixfold lease show` tells what was spent and what is left.
    let show: Value =
        serde_json::from_str(&run.sixfold(&["lease", "show", "--session", &run.session(), "--json"])).unwrap();
    assert_eq!(show["spent"]["steps"], 2, "{show}");
    assert_eq!(show["left"]["steps"], 0, "{show}");
}

#[test]
fn a_cents_lease_stops_claude_code_once_the_models_usage_costs_it() {
    let Some(run) = Run::new() else { return };
    // Each answer costs 1000 input and 500 output tokens of claude-sonnet-4-5: 1.05 cents.
    run.sixfold(&["lease", "set", "--cents", "2"]);
    run.claude(json!({
        "usage": { "input_tokens": 1000, "output_tokens": 500 },
        "turns": [
            exec("echo one"), exec("echo two"), exec("echo three"), exec("echo four"),
            [{ "text": "Stopped." }],
        ]
    }));
    let log = run.log();
    let judged = commands(&log);
    assert_eq!(judged.first().map(|(_, d)| d.as_str()), Some("allow"), "{log:#?}");
    let refused: Vec<&Value> = log
        .iter()
        .filter(|e| e["event"] == "judged" && e["decision"] == "refuse")
        .collect();
    assert!(!refused.is_empty(), "the cents lease never stopped the run: {log:#?}");
    assert!(
        refused[0]["reason"].as_str().unwrap().contains("cents ran out"),
        "{}",
        refused[0]
    );
    // No step ran once the cents were spent: every step charged saw less than the lease.
    for charged in log.iter().filter(|e| e["event"] == "charged" && e["steps"] == 1) {
        let cents = charged["cents"].as_f64().unwrap();
        assert!(cents < 2.0, "{charged}");
    }
    // The usage came from the transcript, each answer counted once.
    let input: u64 = log
        .iter()
        .filter(|e| e["event"] == "charged")
        .filter_map(|e| e["tokens"][MODEL]["input"].as_u64())
        .sum();
    assert!(input >= 2000 && input.is_multiple_of(1000), "{input} {log:#?}");
    assert!(log.iter().any(|e| e["event"] == "held" && e["what"] == "cents"));
}

#[test]
fn a_spawned_helper_is_held_to_its_carve_and_its_parent_goes_on() {
    let Some(run) = Run::new() else { return };
    // orchestrator-workers gives a helper a fifth of what is left: 2 of 10 steps.
    run.sixfold(&["pattern", "set", "orchestrator-workers"]);
    run.sixfold(&["lease", "set", "--steps", "10"]);
    run.claude(json!({
        "turns": [
            [{ "tool_use": { "name": "Agent", "input": {
                "subagent_type": "general-purpose", "description": "helper",
                "prompt": "SUBTASK: echo three times", "run_in_background": false } } }],
            exec("echo parent"),
            [{ "text": "Done." }],
        ],
        "helpers": [{ "prompt_contains": "SUBTASK", "turns": [
            exec("echo helper one"), exec("echo helper two"), exec("echo helper three"),
            [{ "text": "Helper stopped." }],
        ]}],
    }));
    let log = run.log();
    let carved: Vec<&Value> = log.iter().filter(|e| e["event"] == "carved").collect();
    assert_eq!(carved.len(), 1, "{log:#?}");
    assert_eq!(carved[0]["lease"]["steps"], 2);
    let decision = |command: &str| {
        commands(&log)
            .into_iter()
            .find(|(c, _)| c == command)
            .map(|(_, d)| d)
            .unwrap_or_else(|| panic!("`{command}` was never judged: {log:#?}"))
    };
    assert_eq!(decision("echo helper one"), "allow");
    assert_eq!(decision("echo helper two"), "allow");
    assert_eq!(decision("echo helper three"), "refuse");
    assert_eq!(decision("echo parent"), "allow", "the parent goes on with what it kept");
    let held = log.iter().find(|e| e["event"] == "held").unwrap();
    assert_eq!(held["carve"], carved[0]["id"], "{held}");
}
