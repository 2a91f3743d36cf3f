//! End-to-end: the real Claude Code governed live by sixfold as its hook, driven by the scripted
//! model server on loopback. Skips (with the reason) when Claude Code is not installed, unless
//! `SIXFOLD_REQUIRE_E2E=1`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{agent_cli, claude_stream, json_lines, tool_results, ModelServer};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

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
        std::fs::write(project.join("keep.txt"), "keep me\n").unwrap();
        let run = Run {
            _dir: dir,
            project,
            config,
            home,
            scratch,
            claude,
        };
        let out = run.sixfold(&["install", "claude-code", "--user"]);
        assert!(
            out.status.success(),
            "install: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Some(run)
    }

    fn sixfold(&self, args: &[&str]) -> std::process::Output {
        Command::new(SIXFOLD)
            .args(args)
            .current_dir(&self.project)
            .env("CLAUDE_CONFIG_DIR", &self.config)
            .env("HOME", &self.home)
            .output()
            .unwrap()
    }

    fn mode(&self, mode: &str) {
        let out = self.sixfold(&["mode", "set", mode]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }

    /// Runs Claude Code headless against a script; returns its stream-json lines.
    fn claude(&self, script: Value) -> Vec<Value> {
        self.claude_with(script, &[])
    }

    /// Runs Claude Code headless against a script with more environment (which its hooks inherit).
    fn claude_with(&self, script: Value, env: &[(&str, &str)]) -> Vec<Value> {
        let server = ModelServer::start(&script, &self.project, &self.project, &self.scratch);
        let path = format!(
            "{}:{}",
            Path::new(SIXFOLD).parent().unwrap().display(),
            "/usr/local/bin:/usr/bin:/bin"
        );
        claude_stream(&self.claude, &self.project, &server.url(), |c| {
            c.env("HOME", &self.home)
                .env("PATH", path)
                .env("CLAUDE_CONFIG_DIR", &self.config)
                .envs(env.iter().copied());
        })
    }

    fn log(&self) -> Vec<Value> {
        let runs = self.project.join(".sixfold/runs");
        let mut all = Vec::new();
        for entry in std::fs::read_dir(&runs).unwrap() {
            all.extend(json_lines(&std::fs::read_to_string(entry.unwrap().path()).unwrap()));
        }
        all
    }

    fn log_file(&self) -> PathBuf {
        std::fs::read_dir(self.project.join(".sixfold/runs"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path()
    }
}

fn tool(name: &str, input: Value) -> Value {
    json!([{ "tool_use": { "name": name, "input": input } }])
}

fn judged(log: &[Value]) -> Vec<(String, String)> {
    log.iter()
        .filter(|e| e["event"] == "judged")
        .map(|e| {
            (
                e["step"]["tool"].as_str().unwrap().to_string(),
                e["decision"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn read_only_refuses_a_write_and_a_bash_rm_and_nothing_changes() {
    let Some(run) = Run::new() else { return };
    run.mode("read-only");
    let stream = run.claude(json!({ "turns": [
        tool("Write", json!({ "file_path": "{{workspace}}/new.txt", "content": "x" })),
        tool("Bash", json!({ "command": "rm keep.txt", "description": "remove" })),
        [{ "text": "I could not change anything." }],
    ]}));
    assert!(!run.project.join("new.txt").exists(), "the refused Write wrote nothing");
    assert!(run.project.join("keep.txt").exists(), "the refused rm removed nothing");
    let results = tool_results(&stream);
    assert_eq!(results.len(), 2, "{results:?}");
    for (_, is_error, content) in &results {
        assert!(
            *is_error && content.contains("sixfold") && content.contains("read-only"),
            "{content}"
        );
    }
    assert_eq!(
        judged(&run.log()),
        [("Write".into(), "refuse".into()), ("Bash".into(), "refuse".into())]
    );
}

#[test]
fn workspace_write_allows_inside_and_refuses_outside_and_protected() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    // Outside the workspace and outside the temp dir (writes there are allowed in workspace-write).
    let outside_dir = support::outside_tmp();
    let outside = outside_dir.path().join("outside.txt");
    let stream = run.claude(json!({ "turns": [
        tool("Write", json!({ "file_path": "{{workspace}}/inside.txt", "content": "in" })),
        tool("Write", json!({ "file_path": outside.to_str().unwrap(), "content": "out" })),
        tool("Write", json!({ "file_path": "{{workspace}}/.mcp.json", "content": "{}" })),
        [{ "text": "Wrote what I could." }],
    ]}));
    assert_eq!(std::fs::read_to_string(run.project.join("inside.txt")).unwrap(), "in");
    assert!(!outside.exists());
    assert!(!run.project.join(".mcp.json").exists());
    let results = tool_results(&stream);
    assert_eq!(
        results.iter().map(|r| r.1).collect::<Vec<_>>(),
        [false, true, true],
        "{results:?}"
    );
    assert!(
        results[1].2.contains("writes outside the workspace"),
        "{}",
        results[1].2
    );
    assert!(results[2].2.contains("protected"), "{}", results[2].2);
    let log = run.log();
    assert_eq!(
        judged(&log),
        [
            ("Write".into(), "allow".into()),
            ("Write".into(), "refuse".into()),
            ("Write".into(), "refuse".into())
        ]
    );
    // The log replays as a trace: three steps, one of them observed as completed.
    let out = Command::new(SIXFOLD)
        .args(["replay", "--json", "--no-project"])
        .arg(run.log_file())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["files"][0]["format"], "sixfold-events");
    assert_eq!(report["files"][0]["steps"], 3);
}

#[test]
fn a_mode_switched_between_two_tool_calls_changes_the_second_decision() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    let set_read_only = json!({ "run": [SIXFOLD, "mode", "set", "read-only"] });
    let stream = run.claude(json!({ "turns": [
        tool("Write", json!({ "file_path": "{{workspace}}/first.txt", "content": "1" })),
        [set_read_only, { "tool_use": { "name": "Write", "input": { "file_path": "{{workspace}}/second.txt", "content": "2" } } }],
        [{ "text": "Done." }],
    ]}));
    assert!(run.project.join("first.txt").exists());
    assert!(!run.project.join("second.txt").exists());
    let results = tool_results(&stream);
    assert!(!results[0].1 && results[1].1, "{results:?}");
    let log = run.log();
    assert!(
        log.iter()
            .any(|e| e["event"] == "mode_changed" && e["to"] == "read-only"),
        "{log:?}"
    );
    let modes: Vec<&str> = log
        .iter()
        .filter(|e| e["event"] == "judged")
        .map(|e| e["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["workspace-write", "read-only"]);
}

#[test]
fn the_stop_hook_blocks_a_claim_without_a_suite_then_lets_it_through() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    // The suite writes the workspace, which holds the protected paths, so `workspace-write` asks
    // for it outside a sandbox; the person has said yes to it once, as a kept rule.
    let kept = run.sixfold(&["rules", "add", "--allow", "python3 -m unittest"]);
    assert!(kept.status.success(), "{}", String::from_utf8_lossy(&kept.stderr));
    std::fs::write(
        run.project.join("test_calc.py"),
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(1 + 1, 2)\n\nif __name__ == '__main__':\n    unittest.main()\n",
    )
    .unwrap();
    let stream = run.claude(json!({ "turns": [
        tool("Write", json!({ "file_path": "{{workspace}}/calc.py", "content": "def add(a, b):\n    return a + b\n" })),
        [{ "text": "Done — all tests pass." }],
        tool("Bash", json!({ "command": "python3 -m unittest -q", "description": "run the suite" })),
        [{ "text": "All tests pass." }],
    ]}));
    let log = run.log();
    let verdicts: Vec<&str> = log
        .iter()
        .filter(|e| e["event"] == "verdict")
        .flat_map(|e| e["rows"].as_array().unwrap().iter())
        .filter(|r| r["id"] == "suite-before-success-claim")
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        ["gap", "ok"],
        "the first stop is blocked, the second goes through"
    );
    let bash_ran = tool_results(&stream)
        .iter()
        .any(|(_, err, content)| !err && content.contains("OK"));
    assert!(
        bash_ran || log.iter().any(|e| e["event"] == "observed"),
        "the agent ran the suite after being blocked"
    );
    let result = stream.iter().find(|l| l["type"] == "result").unwrap();
    assert_eq!(result["result"], "All tests pass.");
    // Replaying the event log gives the live run's last verdicts.
    let out = Command::new(SIXFOLD)
        .args(["replay", "--json", "--no-project"])
        .arg(run.log_file())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let replayed = report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "suite-before-success-claim")
        .unwrap();
    assert_eq!(replayed["verdict"], "ok");
}

#[test]
fn single_refuses_a_sub_agent() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    let stream = run.claude(json!({ "turns": [
        tool("Task", json!({ "subagent_type": "general-purpose", "description": "help", "prompt": "look around" })),
        [{ "text": "I will do it myself." }],
    ]}));
    let results = tool_results(&stream);
    assert!(results[0].1 && results[0].2.contains("pattern `single`"), "{results:?}");
    // Claude Code 2.1 calls its spawn tool `Agent` in hooks (`Task` in older versions); both map to spawn.
    let judged = judged(&run.log());
    assert_eq!(judged.len(), 1);
    assert!(
        ["Agent", "Task"].contains(&judged[0].0.as_str()) && judged[0].1 == "refuse",
        "{judged:?}"
    );
}

#[test]
fn install_is_idempotent_keeps_a_backup_and_uninstall_removes_exactly_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("cfg");
    std::fs::create_dir_all(&config).unwrap();
    let settings = config.join("settings.json");
    let original = json!({ "theme": "dark", "hooks": { "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "mine" }] }] } });
    std::fs::write(&settings, serde_json::to_string_pretty(&original).unwrap()).unwrap();
    let tg = |args: &[&str]| {
        Command::new(SIXFOLD)
            .args(args)
            .env("CLAUDE_CONFIG_DIR", &config)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    let dry = tg(&["install", "claude-code", "--user", "--dry-run"]);
    assert!(
        String::from_utf8_lossy(&dry.stdout).contains("+ "),
        "the dry run shows a diff"
    );
    let unchanged: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(unchanged, original, "a dry run writes nothing");
    assert!(tg(&["install", "claude-code", "--user"]).status.success());
    let once = std::fs::read_to_string(&settings).unwrap();
    assert!(once.contains("hook claude-code"));
    assert!(config.join("settings.json.bak").exists());
    assert!(tg(&["install", "claude-code", "--user"]).status.success());
    assert_eq!(
        std::fs::read_to_string(&settings).unwrap(),
        once,
        "installing twice changes nothing"
    );
    assert!(tg(&["uninstall", "claude-code", "--user"]).status.success());
    let back: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(back, original);
}

/// Runs one hook event through the binary, in a project.
fn hook_event(project: &Path, event: Value) -> Value {
    let out = hook_input(project, event.to_string().as_bytes());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A trust store of a scratch project's own (inside the scratch directory, not the user's, and
/// outside `.sixfold/`, so not part of what is trusted).
fn own_state(project: &Path) -> PathBuf {
    project.join(".git/sixfold-state")
}

/// A fresh git repository to be a project in (the directory lives as long as the guard).
fn git_project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .unwrap();
    (dir, project)
}

/// `sixfold ARGS…` in a project, with a trust store of its own.
fn sixfold_in_own_state(project: &Path, args: &[&str]) -> std::process::Output {
    Command::new(SIXFOLD)
        .args(args)
        .current_dir(project)
        .env("XDG_STATE_HOME", own_state(project))
        .output()
        .unwrap()
}

/// Runs the hook on raw input, in a project; it always answers, exit 0.
fn hook_input(project: &Path, input: &[u8]) -> std::process::Output {
    let mut child = Command::new(SIXFOLD)
        .args(["hook", "claude-code"])
        .current_dir(project)
        .env("XDG_STATE_HOME", own_state(project))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "the hook always answers");
    out
}

#[test]
fn kept_rules_are_read_at_the_next_judgement_and_appear_in_the_log() {
    let (_dir, project) = git_project();
    let tg = |args: &[&str]| sixfold_in_own_state(&project, args);
    assert!(tg(&["mode", "set", "ask"]).status.success());
    let cargo_test = json!({ "hook_event_name": "PreToolUse", "session_id": "k", "cwd": project,
        "tool_name": "Bash", "tool_input": { "command": "cargo test" }, "tool_use_id": "1" });
    assert_eq!(
        hook_event(&project, cargo_test.clone())["hookSpecificOutput"]["permissionDecision"],
        "ask"
    );
    let added = tg(&["rules", "add", "--allow", "cargo test"]);
    assert!(added.status.success(), "{}", String::from_utf8_lossy(&added.stderr));
    let answer = hook_event(&project, cargo_test);
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow", "{answer}");
    let log = std::fs::read_to_string(project.join(".sixfold/runs/k.jsonl")).unwrap();
    assert!(log.contains("kept/rule-1"), "the deciding kept rule is on the record");
    // Again, from the layer as the first call kept it parsed: its command rules are read when a
    // step names their program, and only then.
    let step = |id: &str, command: &str| {
        json!({ "hook_event_name": "PreToolUse", "session_id": "k", "cwd": project,
            "tool_name": "Bash", "tool_input": { "command": command }, "tool_use_id": id })
    };
    let answer = hook_event(&project, step("1b", "timeout 60 'cargo' test --all"));
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow", "{answer}");
    let answer = hook_event(&project, step("1c", "cargo build"));
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "ask", "{answer}");
    // A kept allow never widens past the ceiling: it says so when kept, and a secret under the
    // path it keeps is still refused in workspace-write; read-only still refuses the write.
    let kept = tg(&["rules", "add", "--allow", "src/**"]);
    assert!(kept.status.success());
    let said = String::from_utf8_lossy(&kept.stdout).into_owned();
    assert!(
        said.contains("never unlocks") && said.contains("secrets/reads-secret"),
        "{said}"
    );
    assert!(tg(&["mode", "set", "workspace-write"]).status.success());
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/.env"), "API_KEY=x\n").unwrap();
    let secret = json!({ "hook_event_name": "PreToolUse", "session_id": "k", "cwd": project,
        "tool_name": "Read", "tool_input": { "file_path": project.join("src/.env") }, "tool_use_id": "3" });
    let answer = hook_event(&project, secret);
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
    let grep = json!({ "hook_event_name": "PreToolUse", "session_id": "k", "cwd": project,
        "tool_name": "Grep", "tool_input": { "pattern": "API_KEY", "path": "src" }, "tool_use_id": "4" });
    let answer = hook_event(&project, grep);
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
    assert!(tg(&["mode", "set", "read-only"]).status.success());
    let write = json!({ "hook_event_name": "PreToolUse", "session_id": "k", "cwd": project,
        "tool_name": "Write", "tool_input": { "file_path": project.join("src/a.rs"), "content": "" }, "tool_use_id": "2" });
    assert_eq!(
        hook_event(&project, write)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    // Listing and removing; removing one that is not there is an error.
    let list = String::from_utf8_lossy(&tg(&["rules", "list"]).stdout).into_owned();
    assert!(list.contains("rule-1") && list.contains("rule-2"), "{list}");
    assert!(tg(&["rules", "remove", "rule-1"]).status.success());
    assert!(!tg(&["rules", "remove", "rule-1"]).status.success());
    // `sixfold check` validates the kept rules like any policy file.
    assert!(tg(&["check"]).status.success());
}

/// A project mode of many rules on places: from the second call on, the hook reads the mode from
/// the layer as the first call stored it, with those rules left in it, and reads one only when a
/// step's place reaches it; the judgements are the same as from the TOML.
#[test]
fn a_project_modes_place_rules_judge_the_same_when_read_by_need() {
    let (_dir, project) = git_project();
    let tg = |args: &[&str]| sixfold_in_own_state(&project, args);
    let mut mode = String::from("id = \"guard\"\nextends = \"workspace-write\"\n");
    for i in 0..200 {
        mode.push_str(&format!(
            "\n[[rules]]\nid = \"gen-{i}\"\ndecision = \"refuse\"\nreason = \"generated code\"\nwhen.writes = [\"generated/{i}/**\"]\n"
        ));
    }
    std::fs::create_dir_all(project.join(".sixfold/modes")).unwrap();
    std::fs::write(project.join(".sixfold/modes/guard.toml"), mode).unwrap();
    assert!(tg(&["trust"]).status.success());
    assert!(tg(&["mode", "set", "guard"]).status.success());
    let write = |id: &str, path: &str| {
        json!({ "hook_event_name": "PreToolUse", "session_id": "g", "cwd": project, "tool_name": "Write",
            "tool_input": { "file_path": project.join(path), "content": "x" }, "tool_use_id": id })
    };
    for round in ["parsed", "stored", "stored again"] {
        let answer = hook_event(&project, write(round, "generated/7/lib.rs"));
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"], "deny",
            "{round}: {answer}"
        );
        let reason = answer["hookSpecificOutput"]["permissionDecisionReason"].to_string();
        assert!(
            reason.contains("guard/gen-7") && !reason.contains("gen-17"),
            "{round}: {reason}"
        );
        let answer = hook_event(&project, write(round, "src/lib.rs"));
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"], "allow",
            "{round}: {answer}"
        );
    }
    // `--explain` considers every rule, those left in the stored layer too.
    let explained = tg(&[
        "judge",
        "--tool",
        "Write",
        "--input",
        r#"{"file_path":"src/lib.rs","content":"x"}"#,
        "--explain",
    ]);
    let text = String::from_utf8_lossy(&explained.stdout).into_owned();
    assert!(text.contains("guard/gen-0") && text.contains("guard/gen-199"), "{text}");
}

#[test]
fn a_mode_that_does_not_exist_leaves_the_active_mode_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path();
    let tg = |args: &[&str]| sixfold_in_own_state(project, args);
    assert!(tg(&["mode", "set", "workspace-write"]).status.success());
    let bad = tg(&["mode", "set", "yolo"]);
    // An unknown name is a usage error, as for every command.
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("stays `workspace-write`"));
    let shown = String::from_utf8_lossy(&tg(&["mode", "show"]).stdout).into_owned();
    assert!(shown.starts_with("mode workspace-write"), "{shown}");
    assert!(!tg(&["pattern", "set", "swarm"]).status.success());
    assert!(tg(&["pattern", "set", "keeps-helpers"]).status.success());
}

#[test]
fn uninstall_finds_the_hooks_a_binary_under_another_name_installed() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("cfg");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    let renamed = bin.join("governor");
    std::fs::copy(SIXFOLD, &renamed).unwrap();
    let settings = config.join("settings.json");
    let original =
        json!({ "theme": "dark", "hooks": { "Stop": [{ "hooks": [{ "type": "command", "command": "mine" }] }] } });
    std::fs::write(&settings, serde_json::to_string_pretty(&original).unwrap()).unwrap();
    let run = |program: &Path, args: &[&str]| {
        let out = Command::new(program)
            .args(args)
            .env("CLAUDE_CONFIG_DIR", &config)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    run(&renamed, &["install", "claude-code", "--user"]);
    let installed = std::fs::read_to_string(&settings).unwrap();
    assert!(installed.contains("governor hook claude-code"), "{installed}");
    // Uninstalled by the binary under its own name: what install wrote is found all the same.
    let said = run(Path::new(SIXFOLD), &["uninstall", "claude-code", "--user"]);
    assert!(!said.contains("already"), "{said}");
    let back: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(back, original, "every entry install wrote is gone, and nothing else");
    let again = run(&renamed, &["uninstall", "claude-code", "--user"]);
    assert!(again.contains("already uninstalled"), "{again}");
}

#[test]
fn the_log_says_what_decided_each_call_and_tells_a_failure_from_a_refusal() {
    let (_dir, project) = git_project();
    let tg = |args: &[&str]| sixfold_in_own_state(&project, args);
    assert!(tg(&["mode", "set", "workspace-write"]).status.success());
    let pre = |id: &str, tool: &str, input: Value| {
        json!({ "hook_event_name": "PreToolUse", "session_id": "b", "cwd": project,
            "tool_name": tool, "tool_input": input, "tool_use_id": id })
    };
    let decision = |answer: Value| answer["hookSpecificOutput"]["permissionDecision"].clone();
    // A secret read: the policy's refusal, decided by its rules.
    let secret = pre("1", "Read", json!({ "file_path": project.join(".env") }));
    assert_eq!(decision(hook_event(&project, secret)), "deny");
    // No rule matches a read inside the workspace: the default.
    let read = pre("2", "Read", json!({ "file_path": project.join("src/a.rs") }));
    assert_eq!(decision(hook_event(&project, read)), "allow");
    // Beyond read-only's ceiling.
    assert!(tg(&["mode", "set", "read-only"]).status.success());
    let write = pre(
        "3",
        "Write",
        json!({ "file_path": project.join("a.rs"), "content": "" }),
    );
    assert_eq!(decision(hook_event(&project, write)), "deny");
    // An active mode that is gone: a failure, refused all the same.
    std::fs::write(project.join(".sixfold/state.toml"), "mode = \"vanished\"\n").unwrap();
    let gone = pre("4", "Read", json!({ "file_path": project.join("src/a.rs") }));
    assert_eq!(decision(hook_event(&project, gone)), "deny");
    let log = json_lines(&std::fs::read_to_string(project.join(".sixfold/runs/b.jsonl")).unwrap());
    let by: Vec<(&str, &str, &str)> = log
        .iter()
        .filter(|e| e["event"] == "judged")
        .map(|e| {
            (
                e["step"]["id"].as_str().unwrap(),
                e["decision"].as_str().unwrap(),
                e["by"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        by,
        [
            ("1", "refuse", "rules"),
            ("2", "allow", "default"),
            ("3", "refuse", "ceiling"),
            ("4", "refuse", "unjudgeable")
        ]
    );
    // Hook input that is not JSON: refused, and on the record as unjudgeable.
    let out = hook_input(&project, b"{ not json");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(decision(answer), "deny");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unjudgeable"));
    let unknown = json_lines(&std::fs::read_to_string(project.join(".sixfold/runs/unknown-session.jsonl")).unwrap());
    assert_eq!(unknown.len(), 1, "{unknown:?}");
    assert_eq!(
        (unknown[0]["decision"].as_str(), unknown[0]["by"].as_str()),
        (Some("refuse"), Some("unjudgeable"))
    );
}

/// The trust store the scratch projects of these tests use: beside the project, never the user's.
fn xdg_of(project: &Path) -> PathBuf {
    project.parent().unwrap().join("xdg")
}

/// Runs `sixfold` in a scratch project, with its own trust store.
fn sixfold_in(project: &Path, args: &[&str]) -> std::process::Output {
    Command::new(SIXFOLD)
        .args(args)
        .current_dir(project)
        .env("XDG_STATE_HOME", xdg_of(project))
        .output()
        .unwrap()
}

/// Trusts a scratch project's `.sixfold/` as it is now (the user set its state).
fn trust(project: &Path) {
    let out = sixfold_in(project, &["trust"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Runs the hook on an event with more environment; returns its output whatever its exit code.
fn hook_with(project: &Path, event: &Value, env: &[(&str, &str)]) -> std::process::Output {
    let mut child = Command::new(SIXFOLD)
        .args(["hook", "claude-code"])
        .current_dir(project)
        .env("XDG_STATE_HOME", xdg_of(project))
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(event.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A scratch project (a git repository with `.sixfold/`) in mode `workspace-write`, trusted.
fn governed_project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join(".sixfold")).unwrap();
    std::fs::write(project.join(".sixfold/state.toml"), "mode = \"workspace-write\"\n").unwrap();
    trust(&project);
    (dir, project)
}

/// A call the mode allows: writing a file inside the workspace.
fn allowed_write(project: &Path) -> Value {
    json!({ "hook_event_name": "PreToolUse", "session_id": "g", "cwd": project, "tool_name": "Write",
        "tool_input": { "file_path": project.join("a.txt"), "content": "x" }, "tool_use_id": "w1" })
}

/// Asserts the hook blocked the call in the form Claude Code reads whatever else happened:
/// exit 2 with the reason on stderr (stdout is not read on exit 2).
fn assert_blocked(out: &std::process::Output, says: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    assert!(stderr.contains("refused") && stderr.contains(says), "{stderr}");
}

#[test]
fn a_hook_that_panics_or_hangs_denies_the_call() {
    let (_dir, project) = governed_project();
    let event = allowed_write(&project);
    let out = hook_with(&project, &event, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"allow\""));

    assert_blocked(
        &hook_with(&project, &event, &[("SIXFOLD_HOOK_FAULT", "panic")]),
        "panic",
    );

    let started = std::time::Instant::now();
    let out = hook_with(
        &project,
        &event,
        &[("SIXFOLD_HOOK_FAULT", "hang"), ("SIXFOLD_HOOK_DEADLINE_MS", "300")],
    );
    assert_blocked(&out, "did not answer within 300 ms");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    // Every event, not only PreToolUse: a failure there blocks too.
    let post = json!({ "hook_event_name": "PostToolUse", "session_id": "g", "cwd": project,
        "tool_name": "Write", "tool_input": {}, "tool_response": {}, "tool_use_id": "w1" });
    assert_blocked(&hook_with(&project, &post, &[("SIXFOLD_HOOK_FAULT", "panic")]), "panic");
}

#[test]
fn a_failing_stop_hook_blocks_once_then_lets_the_stop_through() {
    let (_dir, project) = governed_project();
    let stop = |active: bool| json!({ "hook_event_name": "Stop", "session_id": "g", "cwd": project, "stop_hook_active": active });
    let fault = [("SIXFOLD_HOOK_FAULT", "panic")];
    assert_blocked(&hook_with(&project, &stop(false), &fault), "panic");
    let again = hook_with(&project, &stop(true), &fault);
    assert_eq!(again.status.code(), Some(0), "blocking again could loop forever");
    assert!(String::from_utf8_lossy(&again.stderr).contains("let through"));
    // The same when the deadline passes instead (the kernel's timer, not a panic).
    let hang = [("SIXFOLD_HOOK_FAULT", "hang"), ("SIXFOLD_HOOK_DEADLINE_MS", "300")];
    assert_blocked(
        &hook_with(&project, &stop(false), &hang),
        "did not answer within 300 ms",
    );
    let again = hook_with(&project, &stop(true), &hang);
    assert_eq!(again.status.code(), Some(0), "blocking again could loop forever");
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(
        said.contains("did not answer within 300 ms") && said.contains("let through"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "one answer: {said}");
}

#[test]
fn claude_code_does_not_run_a_tool_whose_hook_panics_or_hangs() {
    for (fault, file) in [("panic", "panicked.txt"), ("hang", "hung.txt")] {
        // A fresh run each: the model server's port file is per scratch directory.
        let Some(run) = Run::new() else { return };
        run.mode("workspace-write");
        let stream = run.claude_with(
            json!({ "turns": [
                tool("Write", json!({ "file_path": format!("{{{{workspace}}}}/{file}"), "content": "x" })),
                [{ "text": "The hook refused it." }],
            ]}),
            &[
                ("SIXFOLD_HOOK_FAULT", &format!("{fault}@PreToolUse")),
                ("SIXFOLD_HOOK_DEADLINE_MS", "500"),
            ],
        );
        assert!(!run.project.join(file).exists(), "{fault}: the tool ran");
        let results = tool_results(&stream);
        assert_eq!(results.len(), 1, "{results:?}");
        assert!(results[0].1 && results[0].2.contains("sixfold"), "{fault}: {results:?}");
    }
}

/// Whatever is on disk where the hook reads (state, a mode file, a script, kept rules, the
/// session log), the call is answered in bounded time and memory: refused with the reason when
/// the file is not a small regular file, never a hang and never the default mode.
#[cfg(unix)]
#[test]
fn files_that_are_not_small_regular_files_refuse_the_call_at_once() {
    type Plant = fn(&Path);
    let fifo: fn(&Path) = |p| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
    };
    let zero: fn(&Path) = |p| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink("/dev/zero", p).unwrap();
    };
    let huge: fn(&Path) = |p| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let file = std::fs::File::create(p).unwrap();
        // Sparse: 64 GiB on record, nothing on disk.
        file.set_len(64 << 30).unwrap();
    };
    let cases: &[(&str, Plant, &str)] = &[
        ("state.toml", zero, "not a regular file"),
        ("state.toml", fifo, "FIFO"),
        ("state.toml", huge, "larger than"),
        ("modes/evil.toml", zero, "not a regular file"),
        ("modes/evil.toml", fifo, "FIFO"),
        ("modes/evil.toml", huge, "more than"),
        ("policies/evil.rhai", fifo, "FIFO"),
        ("policies/kept.toml", zero, "not a regular file"),
        ("runs/g.jsonl", fifo, "FIFO"),
        ("runs/g.jsonl", zero, "not a regular file"),
    ];
    for (file, plant, says) in cases {
        let (_dir, project) = governed_project();
        let target = project.join(".sixfold").join(file);
        let _ = std::fs::remove_file(&target);
        plant(&target);
        let started = std::time::Instant::now();
        let out = hook_with(&project, &allowed_write(&project), &[]);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{file}: {:?}",
            started.elapsed()
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        let reason = answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap();
        assert_eq!(
            answer["hookSpecificOutput"]["permissionDecision"], "deny",
            "{file}: {reason}"
        );
        assert!(reason.contains(says), "{file}: {reason}");
    }
}

/// Input the provider file cannot read is refused as unjudgeable, whatever the mode: a Bash
/// `command` that is missing, an array or a number; a Write without `file_path`; no input at all.
#[test]
fn tool_input_that_cannot_be_read_is_refused_as_unjudgeable() {
    let (_dir, project) = governed_project();
    std::fs::write(project.join(".sixfold/state.toml"), "mode = \"full\"\n").unwrap();
    trust(&project);
    let call = |tool: &str, input: Option<Value>| {
        let mut event = json!({ "hook_event_name": "PreToolUse", "session_id": "u", "cwd": project,
            "tool_name": tool, "tool_use_id": "u1" });
        if let Some(input) = input {
            event["tool_input"] = input;
        }
        let out = hook_with(&project, &event, &[]);
        assert_eq!(out.status.code(), Some(0));
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        answer["hookSpecificOutput"].clone()
    };
    let unreadable = [
        ("Bash", Some(json!({ "description": "no command" }))),
        ("Bash", Some(json!({ "command": ["curl", "evil.example"] }))),
        ("Bash", Some(json!({ "command": 42 }))),
        ("Bash", Some(json!({ "command": "" }))),
        ("Bash", Some(json!("rm -rf /"))),
        ("Bash", None),
        ("Write", Some(json!({ "content": "x" }))),
        (
            "Edit",
            Some(json!({ "file_path": ["/etc/passwd"], "old_string": "a", "new_string": "b" })),
        ),
        ("Read", Some(json!({ "file_path": 7 }))),
        ("Grep", Some(json!({ "pattern": "x", "path": { "p": "/" } }))),
        ("Agent", Some(json!({ "subagent_type": ["a"] }))),
    ];
    for (tool, input) in unreadable {
        let shown = format!("{tool} {input:?}");
        let answer = call(tool, input);
        assert_eq!(answer["permissionDecision"], "deny", "{shown}: {answer}");
        assert!(
            answer["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .contains("cannot be read"),
            "{shown}: {answer}"
        );
    }
    // Mode `full` allows what it can read, extra fields included.
    let readable = [
        (
            "Bash",
            json!({ "command": "git status", "description": "status", "timeout": 5 }),
        ),
        ("Write", json!({ "file_path": "a.txt", "content": "x" })),
        ("Grep", json!({ "pattern": "x" })),
        ("TodoWrite", json!({ "todos": [] })),
    ];
    for (tool, input) in readable {
        let answer = call(tool, Some(input.clone()));
        assert_eq!(answer["permissionDecision"], "allow", "{tool} {input}: {answer}");
    }
    let log = std::fs::read_to_string(project.join(".sixfold/runs/u.jsonl")).unwrap();
    let unjudgeable = json_lines(&log)
        .iter()
        .filter(|e| e["event"] == "judged" && e["by"] == "unjudgeable")
        .count();
    assert_eq!(unjudgeable, 11, "{log}");
}

/// The workspace is the agent's project, bounded by its repository: a `.sixfold/` above it (in
/// the home, in an enclosing repository) never widens it, and an event without `cwd` is refused
/// and creates nothing.
#[test]
fn the_project_is_the_events_repository_never_a_directory_above_it() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let home = base.join("home");
    let repo = home.join("code/fresh");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    // Bundles above the repository that would allow everything.
    for above in [home.clone(), home.join("code")] {
        std::fs::create_dir_all(above.join(".sixfold")).unwrap();
        std::fs::write(above.join(".sixfold/state.toml"), "mode = \"full\"\n").unwrap();
    }
    std::fs::create_dir_all(home.join("code/.git")).unwrap();
    let env = [("HOME", home.to_str().unwrap())];
    let write = |cwd: &Path, path: &Path| {
        json!({ "hook_event_name": "PreToolUse", "session_id": "p", "cwd": cwd, "tool_name": "Write",
            "tool_input": { "file_path": path, "content": "x" }, "tool_use_id": "p1" })
    };
    let decide = |event: &Value, from: &Path| {
        let out = hook_with(from, event, &env);
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            answer["hookSpecificOutput"]["permissionDecision"]
                .as_str()
                .unwrap()
                .to_string(),
            answer["hookSpecificOutput"]["permissionDecisionReason"]
                .as_str()
                .unwrap()
                .to_string(),
        )
    };
    for cwd in [repo.clone(), repo.join("src/deep")] {
        std::fs::create_dir_all(&cwd).unwrap();
        // Not in `full`: the default mode of the repository's own project (ask) holds.
        let (decision, reason) = decide(&write(&cwd, Path::new("/etc/sixfold-x")), &cwd);
        assert_eq!(decision, "deny", "{reason}");
        assert!(reason.contains("outside the workspace"), "{reason}");
        let (decision, _) = decide(&write(&cwd, &repo.join("in.txt")), &cwd);
        assert_eq!(decision, "ask");
    }
    assert!(
        repo.join(".sixfold/runs/p.jsonl").exists(),
        "the record is the repository's own"
    );
    // `/` and the directories above the home are no project: refused, nothing created there.
    let slash_had_bundle = Path::new("/.sixfold").exists();
    for cwd in [Path::new("/"), base.as_path()] {
        let (decision, reason) = decide(&write(cwd, &cwd.join("x.txt")), &repo);
        assert_eq!(decision, "deny", "{cwd:?}");
        assert!(reason.contains("no project"), "{reason}");
    }
    assert_eq!(Path::new("/.sixfold").exists(), slash_had_bundle);
    assert!(!base.join(".sixfold").exists());
    // No `cwd`, or a relative one: refused, with the reason, and nothing created anywhere.
    let loose = base.join("loose");
    std::fs::create_dir_all(&loose).unwrap();
    for cwd in [None, Some("relative/dir")] {
        let mut event = write(&loose, &loose.join("a.txt"));
        match cwd {
            Some(c) => event["cwd"] = json!(c),
            None => {
                event.as_object_mut().unwrap().remove("cwd");
            }
        }
        let (decision, reason) = decide(&event, &loose);
        assert_eq!(decision, "deny");
        assert!(reason.contains("`cwd`"), "{reason}");
        assert_eq!(std::fs::read_dir(&loose).unwrap().count(), 0, "nothing created");
    }
}

/// Every `sixfold` command that changes state, run by the agent, is a write to a protected path
/// (refused in `workspace-write`), whatever the subcommand, including ones sixfold does not have;
/// only the commands that read are allowed.
#[test]
fn sixfolds_own_commands_that_change_state_are_refused() {
    let (_dir, project) = governed_project();
    let bash = |command: &str| {
        let event = json!({ "hook_event_name": "PreToolUse", "session_id": "c", "cwd": project,
            "tool_name": "Bash", "tool_input": { "command": command }, "tool_use_id": "c1" });
        let out = hook_with(&project, &event, &[]);
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        answer["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap()
            .to_string()
    };
    for command in [
        "sixfold mode set full",
        "sixfold mode set full --session other",
        "sixfold pattern set orchestrator-workers",
        "sixfold rules add --allow 'curl'",
        "sixfold rules remove rule-1",
        "sixfold trust",
        "sixfold trust .",
        "sixfold install claude-code --project",
        "sixfold uninstall claude-code",
        "sixfold hook claude-code",
        "sixfold launch claude-code",
        "sixfold a-command-added-later",
        "env sixfold pattern set keeps-helpers",
        "timeout 5 sixfold pattern set keeps-helpers",
        "true && sixfold pattern set keeps-helpers",
    ] {
        assert_eq!(bash(command), "deny", "{command}");
    }
    for command in [
        "sixfold check",
        "sixfold modes",
        "sixfold mode show",
        "sixfold pattern show",
        "sixfold rules list",
        "sixfold --version",
    ] {
        assert_eq!(bash(command), "allow", "{command}");
    }
}

/// A repository's own `.sixfold/` narrows at once, and widens only once the user trusts its
/// exact content: a state that selects `full`, a shipped mode replaced by a wider one, an
/// emptied secrets list, a kept `allow`, a provider that maps Bash to nothing. Until trusted the
/// call is judged as without the project layer, and the reason says what was ignored.
#[test]
fn an_untrusted_project_bundle_only_narrows() {
    let provider = "id = \"claude-code\"\nname = \"Claude Code\"\n[binary]\nnames = [\"claude\"]\n[tools.Bash]\n[tools.Read]\n[tools.Write]\n";
    let widening: &[(&str, &[(&str, &str)])] = &[
        ("state selects full", &[("state.toml", "mode = \"full\"\n")]),
        (
            "ask replaced",
            &[("modes/ask.toml", "id = \"ask\"\ndefault = \"allow\"\n")],
        ),
        (
            "secrets emptied",
            &[(
                "policies/secrets.toml",
                "id = \"secrets\"\n[paths.secrets]\nglobs = []\n",
            )],
        ),
        ("provider maps nothing", &[("providers/claude-code.toml", provider)]),
    ];
    let calls = [
        ("Bash", json!({ "command": "curl https://example.com" })),
        ("Write", json!({ "file_path": "/etc/sixfold-x", "content": "x" })),
        ("Read", json!({ "file_path": ".env" })),
    ];
    let decide = |project: &Path, tool: &str, input: &Value| {
        let event = json!({ "hook_event_name": "PreToolUse", "session_id": "t", "cwd": project,
            "tool_name": tool, "tool_input": input, "tool_use_id": "t1" });
        let out = hook_with(project, &event, &[]);
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        let answer = &answer["hookSpecificOutput"];
        (
            answer["permissionDecision"].as_str().unwrap().to_string(),
            answer["permissionDecisionReason"].as_str().unwrap().to_string(),
        )
    };
    for (what, files) in widening {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        for (file, text) in *files {
            let path = project.join(".sixfold").join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let mut widened = false;
        for (tool, input) in &calls {
            let (decision, reason) = decide(&project, tool, input);
            assert_ne!(decision, "allow", "{what}: {tool} {input}: {reason}");
            widened |= reason.contains("not trusted");
        }
        assert!(widened, "{what}: the reason says what was ignored");
        // Trusted, the same bundle widens: at least one of the calls is allowed now.
        trust(&project);
        let allowed = calls
            .iter()
            .filter(|(tool, input)| decide(&project, tool, input).0 == "allow")
            .count();
        assert!(allowed > 0, "{what}: trusted, it widens");
        // Any change makes it untrusted again.
        std::fs::create_dir_all(project.join(".sixfold/policies")).unwrap();
        std::fs::write(project.join(".sixfold/policies/extra.toml"), "id = \"extra\"\n").unwrap();
        for (tool, input) in &calls {
            assert_ne!(decide(&project, tool, input).0, "allow", "{what}: changed: {tool}");
        }
    }

    // Narrowing counts untrusted: a kept refusal and a narrower active mode.
    let (_dir, project) = governed_project();
    assert_eq!(decide(&project, "Bash", &json!({ "command": "git status" })).0, "allow");
    let out = sixfold_in(&project, &["rules", "add", "--refuse", "git status"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The user's own kept rule keeps the bundle trusted.
    let shown = String::from_utf8_lossy(&sixfold_in(&project, &["mode", "show"]).stdout).into_owned();
    assert!(shown.contains(".sixfold/ trusted"), "{shown}");
    assert!(sixfold_in(&project, &["trust", "--revoke"]).status.success());
    assert_eq!(decide(&project, "Bash", &json!({ "command": "git status" })).0, "deny");
    std::fs::write(project.join(".sixfold/state.toml"), "mode = \"read-only\"\n").unwrap();
    assert_eq!(
        decide(&project, "Write", &json!({ "file_path": "a.txt", "content": "x" })).0,
        "deny"
    );
    // A kept `allow` written into an untrusted bundle does not widen.
    let out = sixfold_in(&project, &["rules", "add", "--allow", "curl"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not trusted"));
    std::fs::write(project.join(".sixfold/state.toml"), "mode = \"workspace-write\"\n").unwrap();
    assert_ne!(
        decide(&project, "Bash", &json!({ "command": "curl https://example.com" })).0,
        "allow"
    );
}

/// Writes that reach a protected path or a secret without naming it alone: a wider place listed
/// beside it, or the whole workspace that holds it. Refused or asked in `workspace-write`; the
/// plain cases beside them stay allowed.
#[test]
fn a_wider_place_does_not_hide_a_protected_path_or_a_secret() {
    let (_dir, project) = git_project();
    std::fs::create_dir_all(project.join("src")).unwrap();
    assert!(sixfold_in_own_state(&project, &["mode", "set", "workspace-write"])
        .status
        .success());
    // `sandbox`: whether Bash runs inside the mode's proven sandbox (`SIXFOLD_SANDBOX=off`: never).
    let decide = |command: &str, sandbox: &str| {
        let event = json!({ "hook_event_name": "PreToolUse", "session_id": "w", "cwd": project,
            "tool_name": "Bash", "tool_input": { "command": command }, "tool_use_id": "1" });
        let state = own_state(&project);
        let env = [
            ("SIXFOLD_SANDBOX", sandbox),
            ("XDG_STATE_HOME", state.to_str().unwrap()),
        ];
        let out = hook_with(&project, &event, &env);
        let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
        answer["hookSpecificOutput"]["permissionDecision"]
            .as_str()
            .unwrap()
            .to_string()
    };
    // Not contained, a wider place asks; contained by a proven sandbox that keeps the protected
    // paths read-only, it is allowed. A named secret or protected path is refused either way.
    for (command, uncontained, contained) in [
        ("cat . .env", "deny", "deny"),
        ("cat src ./.env.local", "deny", "deny"),
        ("touch . .sixfold/state.toml", "deny", "deny"),
        // It reads the temp dir, which workspace-write reads and writes freely.
        ("cp -r /tmp/x/. .", "ask", "allow"),
        ("cp -r build/. .", "ask", "allow"),
        ("python3 build.py", "ask", "allow"),
        ("touch .git", "ask", "allow"),
        ("touch src/new.rs", "allow", "allow"),
        ("git status", "allow", "allow"),
        ("cat src/lib.rs README.md", "allow", "allow"),
    ] {
        assert_eq!(decide(command, "off"), uncontained, "`{command}`, not contained");
        assert_eq!(decide(command, "on"), contained, "`{command}`, contained");
    }
}
