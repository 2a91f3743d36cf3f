//! End to end: the real Codex (pinned in `package.json`) governed live by `sixfold hook codex`,
//! against the scripted Responses server, on loopback only. Codex runs with its own sandbox off
//! (`-s danger-full-access`), so what stops a step is sixfold's hook and nothing else.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use support::{agent_cli, json_lines, outside_tmp, ModelServer};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// A scratch project (a git repository), a scratch `CODEX_HOME` with sixfold's hooks installed,
/// and a trust store of its own.
struct Run {
    _dir: tempfile::TempDir,
    root: PathBuf,
    project: PathBuf,
    codex_home: PathBuf,
    home: PathBuf,
    xdg: PathBuf,
    codex: PathBuf,
}

impl Run {
    fn new() -> Option<Run> {
        let codex = agent_cli("SIXFOLD_CODEX_BIN", "codex")?;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("project");
        let codex_home = root.join("codex-home");
        let home = root.join("home");
        let xdg = root.join("xdg");
        for d in [&project, &codex_home, &home, &xdg] {
            std::fs::create_dir_all(d).unwrap();
        }
        git_init(&project);
        std::fs::write(project.join("keep.txt"), "keep me\n").unwrap();
        let run = Run {
            _dir: dir,
            root,
            project,
            codex_home,
            home,
            xdg,
            codex,
        };
        let out = run.sixfold(&["install", "codex", "--user"]);
        assert!(out.status.success(), "install: {}", text(&out.stderr));
        Some(run)
    }

    /// The environment every process of the run shares: its own home, Codex home and trust store.
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("HOME", self.home.display().to_string()),
            ("CODEX_HOME", self.codex_home.display().to_string()),
            ("XDG_STATE_HOME", self.xdg.display().to_string()),
        ]
    }

    fn sixfold_on(&self, args: &[&str], path: &str) -> Output {
        Command::new(SIXFOLD)
            .args(args)
            .current_dir(&self.project)
            .envs(self.env())
            .env("PATH", path)
            .output()
            .unwrap()
    }

    fn sixfold(&self, args: &[&str]) -> Output {
        Command::new(SIXFOLD)
            .args(args)
            .current_dir(&self.project)
            .envs(self.env())
            .output()
            .unwrap()
    }

    fn mode(&self, mode: &str) {
        let out = self.sixfold(&["mode", "set", mode]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }

    /// A `run` block that sets the mode from the model server, between two tool calls.
    fn set_mode_block(&self, mode: &str) -> Value {
        let mut argv = vec!["env".to_string()];
        argv.extend(self.env().into_iter().map(|(k, v)| format!("{k}={v}")));
        argv.extend([SIXFOLD, "mode", "set", mode].map(String::from));
        json!({ "run": argv })
    }

    /// Runs `codex exec` against a script, running the hooks though nobody trusted them; returns
    /// the server's request log and Codex's output.
    fn codex(&self, script: Value) -> (Vec<Value>, Output) {
        self.codex_with(script, &["--dangerously-bypass-hook-trust"])
    }

    fn codex_with(&self, script: Value, extra: &[&str]) -> (Vec<Value>, Output) {
        self.codex_env(script, extra, &[])
    }

    /// As [`Run::codex_with`], with more environment (which Codex's hooks inherit).
    fn codex_env(&self, script: Value, extra: &[&str], env: &[(&str, &str)]) -> (Vec<Value>, Output) {
        let scratch = self.root.join(format!("server-{}", unique()));
        std::fs::create_dir_all(&scratch).unwrap();
        let server = ModelServer::start(&script, &self.project, &self.project, &scratch);
        let provider = format!(
            "model_providers.x={{name=\"x\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"X_KEY\"}}",
            server.url()
        );
        let node = which("node").map(|n| n.parent().unwrap().display().to_string());
        let path = [node.as_deref(), Some("/usr/local/bin:/usr/bin:/bin")]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(":");
        let out = Command::new(&self.codex)
            .arg("exec")
            .args(extra)
            .args([
                "--json",
                "-s",
                "danger-full-access",
                "-c",
                &provider,
                "-c",
                "model_provider=x",
            ])
            .args(["-m", "gpt-5.5", "do the task"])
            .current_dir(&self.project)
            .env_clear()
            .env("PATH", path)
            .env("X_KEY", "test-key")
            .envs(self.env())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            text(&out.stdout).contains("turn.completed"),
            "codex did not finish: {:?}\nstderr: {}\nstdout: {}",
            out.status,
            text(&out.stderr),
            text(&out.stdout)
        );
        let log = json_lines(&std::fs::read_to_string(&server.log).unwrap_or_default());
        (log, out)
    }

    /// sixfold's event log of the project, every session.
    fn log(&self) -> Vec<Value> {
        let mut all = Vec::new();
        let Ok(dir) = std::fs::read_dir(self.project.join(".sixfold/runs")) else {
            return all;
        };
        for entry in dir {
            all.extend(json_lines(&std::fs::read_to_string(entry.unwrap().path()).unwrap()));
        }
        all
    }

    fn config(&self) -> PathBuf {
        self.codex_home.join("config.toml")
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn unique() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn git_init(dir: &Path) {
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .status()
        .unwrap()
        .success();
    assert!(ok);
}

/// What the agent received from its tool calls, in order (the server's log).
fn tool_outputs(log: &[Value]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for request in log {
        let Some(result) = request.get("last_tool_result").filter(|r| !r.is_null()) else {
            continue;
        };
        let content = result["content"].as_str().unwrap_or_default().to_string();
        if seen.last() != Some(&content) {
            seen.push(content);
        }
    }
    seen
}

/// The judged steps of sixfold's log: (tool, decision).
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
fn a_shell_write_outside_the_workspace_is_denied_and_nothing_is_written() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    let outside = outside_tmp();
    let target = outside.path().join("escaped.txt");
    let (log, _) = run.codex(json!({ "turns": [
        [{ "exec": format!("echo pwned > {}", target.display()) }],
        [{ "exec": "echo fine > inside.txt" }],
        [{ "text": "Done." }],
    ]}));
    assert!(
        !target.exists(),
        "sixfold's hook let the write outside the workspace run"
    );
    assert!(
        run.project.join("inside.txt").exists(),
        "a write inside the workspace runs"
    );
    let outputs = tool_outputs(&log);
    assert!(
        outputs
            .first()
            .is_some_and(|o| o.contains("blocked by PreToolUse hook") && o.contains("sixfold")),
        "{outputs:?}"
    );
    assert_eq!(
        judged(&run.log()),
        [("Bash".into(), "refuse".into()), ("Bash".into(), "allow".into())]
    );
}

#[test]
fn an_ask_is_denied_with_how_to_approve_and_does_not_run() {
    let Some(run) = Run::new() else { return };
    run.mode("ask");
    let (log, _) = run.codex(json!({ "turns": [
        [{ "exec": "echo hi > asked.txt" }],
        [{ "text": "Done." }],
    ]}));
    assert!(
        !run.project.join("asked.txt").exists(),
        "Codex ran an ask without a person"
    );
    let outputs = tool_outputs(&log);
    let said = outputs.first().cloned().unwrap_or_default();
    assert!(said.contains("approval is needed"), "{said}");
    assert!(said.contains("sixfold rules add --allow"), "{said}");
    assert_eq!(judged(&run.log()), [("Bash".into(), "ask".into())]);
    // The person approves it as a kept rule: the same call now runs.
    let kept = run.sixfold(&["rules", "add", "--allow", "echo hi"]);
    assert!(kept.status.success(), "{}", text(&kept.stderr));
    run.codex(json!({ "turns": [
        [{ "exec": "echo hi > asked.txt" }],
        [{ "text": "Done." }],
    ]}));
    assert!(run.project.join("asked.txt").exists(), "the kept approval lets it run");
}

/// A hook that panics or hangs still refuses: Codex blocks a call whose hook exits 2 with the
/// reason on stderr, which is what the hook's guard answers.
#[test]
fn a_hook_that_panics_or_hangs_still_refuses_the_call() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    for (fault, file) in [("panic@PreToolUse", "panicked.txt"), ("hang@PreToolUse", "hung.txt")] {
        let (log, _) = run.codex_env(
            json!({ "turns": [[{ "exec": format!("echo x > {file}") }], [{ "text": "Done." }]] }),
            &["--dangerously-bypass-hook-trust"],
            &[("SIXFOLD_HOOK_FAULT", fault), ("SIXFOLD_HOOK_DEADLINE_MS", "500")],
        );
        assert!(!run.project.join(file).exists(), "{fault}: the call ran");
        let outputs = tool_outputs(&log);
        assert!(
            outputs.first().is_some_and(|o| o.contains("could not judge this call")),
            "{fault}: {outputs:?}"
        );
    }
}

#[test]
fn a_mode_switched_mid_run_changes_the_next_calls_judgement() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    run.codex(json!({ "turns": [
        [{ "exec": "echo 1 > first.txt" }],
        [run.set_mode_block("read-only"), { "exec": "echo 2 > second.txt" }],
        [{ "text": "Done." }],
    ]}));
    assert!(run.project.join("first.txt").exists());
    assert!(!run.project.join("second.txt").exists());
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
fn an_apply_patch_to_a_protected_path_is_denied_and_a_plain_one_runs() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    let (log, _) = run.codex(json!({ "turns": [
        [{ "patch": "*** Begin Patch\n*** Add File: .mcp.json\n+{\"mcpServers\": {}}\n*** End Patch\n" }],
        [{ "patch": "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n" }],
        [{ "text": "Done." }],
    ]}));
    assert!(!run.project.join(".mcp.json").exists(), "a protected path was written");
    assert!(run.project.join("notes.txt").exists(), "a plain patch runs");
    let outputs = tool_outputs(&log);
    assert!(
        outputs
            .first()
            .is_some_and(|o| o.contains("blocked by PreToolUse hook")),
        "{outputs:?}"
    );
    let log = run.log();
    assert_eq!(
        judged(&log),
        [
            ("apply_patch".into(), "refuse".into()),
            ("apply_patch".into(), "allow".into())
        ]
    );
    let writes: Vec<&Value> = log
        .iter()
        .filter(|e| e["event"] == "judged")
        .map(|e| &e["step"]["effects"]["writes"])
        .collect();
    assert_eq!(
        writes[0][0],
        json!(run.project.join(".mcp.json")),
        "the patch's own file"
    );
}

/// MCP tool calls are judged through the bundle's `[mcp]` maps: an unmapped one conservatively,
/// a mapped reader as what it does. Codex sends them as `mcp__<server>__<tool>`; the hook is fed
/// the event as Codex sends it.
#[test]
fn mcp_tool_calls_are_judged_through_the_bundles_maps() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    std::fs::create_dir_all(run.project.join(".sixfold/policies")).unwrap();
    std::fs::write(
        run.project.join(".sixfold/policies/docs-mcp.toml"),
        "id = \"docs-mcp\"\ndescription = \"The docs server reads the workspace.\"\n\n[mcp.\"docs/search\"]\nreads = [\"workspace\"]\n",
    )
    .unwrap();
    let out = run.sixfold(&["trust"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let call = |tool: &str| -> Value {
        let event = json!({
            "session_id": "m", "turn_id": "t", "transcript_path": null, "cwd": run.project,
            "hook_event_name": "PreToolUse", "model": "gpt-5.5", "permission_mode": "bypassPermissions",
            "tool_name": tool, "tool_input": {"query": "x"}, "tool_use_id": format!("call_{tool}"),
        });
        let mut child = Command::new(SIXFOLD)
            .args(["hook", "codex"])
            .current_dir(&run.project)
            .envs(run.env())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(event.to_string().as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let mapped = call("mcp__docs__search");
    assert_eq!(mapped["hookSpecificOutput"]["permissionDecision"], "allow", "{mapped}");
    let unmapped = call("mcp__shell__run");
    assert_eq!(
        unmapped["hookSpecificOutput"]["permissionDecision"], "deny",
        "{unmapped}"
    );
    let reason = unmapped["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap();
    assert!(
        reason.contains("reaches the network"),
        "judged conservatively: {reason}"
    );
    assert_eq!(
        judged(&run.log()),
        [
            ("mcp__docs__search".into(), "allow".into()),
            ("mcp__shell__run".into(), "refuse".into())
        ]
    );
}

/// The same with the real Codex and a real MCP server (`tests/fixtures/mcp/marker-server.py`,
/// which marks each call it receives): the mapped reader reaches the server, the unmapped tool
/// does not.
#[test]
fn codex_mcp_calls_are_judged_and_an_unmapped_one_never_reaches_the_server() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    std::fs::create_dir_all(run.project.join(".sixfold/policies")).unwrap();
    std::fs::write(
        run.project.join(".sixfold/policies/docs-mcp.toml"),
        "id = \"docs-mcp\"\ndescription = \"The docs server reads the workspace.\"\n\n[mcp.\"docs/search\"]\nreads = [\"workspace\"]\n",
    )
    .unwrap();
    let out = run.sixfold(&["trust"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let marks = run.root.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let server = support::repo().join("tests/fixtures/mcp/marker-server.py");
    let mut config = std::fs::read_to_string(run.config()).unwrap();
    config.push_str(&format!(
        "\n[mcp_servers.docs]\ncommand = \"python3\"\nargs = [\"{}\"]\nenv = {{ MARKER_DIR = \"{}\" }}\ndefault_tools_approval_mode = \"approve\"\n",
        server.display(),
        marks.display()
    ));
    std::fs::write(run.config(), config).unwrap();
    let (log, _) = run.codex(json!({ "turns": [
        [{ "function_call": { "namespace": "mcp__docs", "name": "search", "arguments": { "query": "x" } } }],
        [{ "function_call": { "namespace": "mcp__docs", "name": "wipe", "arguments": {} } }],
        [{ "text": "Done." }],
    ]}));
    assert!(
        marks.join("called-search").exists(),
        "the mapped reader ran: {:?}",
        tool_outputs(&log)
    );
    assert!(
        !marks.join("called-wipe").exists(),
        "an unmapped MCP tool reached the server"
    );
    assert_eq!(
        judged(&run.log()),
        [
            ("mcp__docs__search".into(), "allow".into()),
            ("mcp__docs__wipe".into(), "refuse".into())
        ]
    );
}

#[test]
fn the_stop_hook_blocks_a_claim_without_a_passing_suite() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    let kept = run.sixfold(&["rules", "add", "--allow", "python3 -m unittest"]);
    assert!(kept.status.success(), "{}", text(&kept.stderr));
    std::fs::write(
        run.project.join("test_calc.py"),
        "import unittest\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(1 + 1, 2)\n\nif __name__ == '__main__':\n    unittest.main()\n",
    )
    .unwrap();
    let (log, out) = run.codex(json!({ "turns": [
        [{ "patch": "*** Begin Patch\n*** Add File: calc.py\n+def add(a, b):\n+    return a + b\n*** End Patch\n" }],
        [{ "text": "Done — all tests pass." }],
        [{ "exec": "python3 -m unittest -q" }],
        [{ "text": "All tests pass." }],
    ]}));
    let events = run.log();
    let verdicts: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "verdict")
        .flat_map(|e| e["rows"].as_array().unwrap().iter())
        .filter(|r| r["id"] == "suite-before-success-claim")
        .map(|r| r["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        ["gap", "ok"],
        "the first stop is blocked, the second goes through\n{}\n{log:?}",
        text(&out.stdout)
    );
    assert!(run.project.join("calc.py").exists());
}

#[test]
fn install_and_uninstall_round_trip_a_real_config_exactly() {
    let Some(run) = Run::new() else { return };
    let out = run.sixfold(&["uninstall", "codex", "--user"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mine = "# my Codex settings\nmodel = \"gpt-5.5\"   # the model\napproval_policy = \"never\"\n\n[projects.\"/home/me/repo\"]\ntrust_level = \"trusted\"\n\n[[hooks.PreToolUse]]\nmatcher = \"^Bash$\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"other-tool check\"\n\n[mcp_servers.docs]\ncommand = \"docs-server\"\nargs = [\"--stdio\"]\n";
    std::fs::write(run.config(), mine).unwrap();
    let dry = run.sixfold(&["install", "codex", "--user", "--dry-run"]);
    assert!(dry.status.success());
    let diff = text(&dry.stdout);
    assert!(diff.contains("+ [[hooks.PreToolUse]]"), "{diff}");
    assert!(!diff.lines().any(|l| l.starts_with("- ")), "only lines added:\n{diff}");
    assert_eq!(
        std::fs::read_to_string(run.config()).unwrap(),
        mine,
        "a dry run writes nothing"
    );
    let installed = run.sixfold(&["install", "codex", "--user"]);
    let said = text(&installed.stdout);
    assert!(installed.status.success(), "{}", text(&installed.stderr));
    assert!(said.contains("/hooks") && said.contains("trust"), "{said}");
    let with = std::fs::read_to_string(run.config()).unwrap();
    let kept: Vec<&str> = with.lines().filter(|l| mine.lines().any(|m| m == *l)).collect();
    assert!(
        kept.len() >= mine.lines().count(),
        "everything of the user's stays:\n{with}"
    );
    // The user's own PreToolUse hook stays first, so its position (Codex's trust key) holds.
    let parsed: toml::Table = with.parse().unwrap();
    assert_eq!(
        parsed["hooks"]["PreToolUse"][0]["hooks"][0]["command"].as_str(),
        Some("other-tool check")
    );
    assert_eq!(
        std::fs::read_to_string(run.codex_home.join("config.toml.bak")).unwrap(),
        mine
    );
    let again = run.sixfold(&["install", "codex", "--user"]);
    assert!(
        text(&again.stdout).contains("already installed"),
        "{}",
        text(&again.stdout)
    );
    // Codex itself reads it: the run goes, with the user's hook and sixfold's.
    let (_, out) = run.codex(json!({ "turns": [[{ "text": "Nothing to do." }]] }));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let removed = run.sixfold(&["uninstall", "codex", "--user"]);
    assert!(removed.status.success(), "{}", text(&removed.stderr));
    assert_eq!(std::fs::read_to_string(run.config()).unwrap(), mine, "byte for byte");
    // In the project (the default): its `.codex/config.toml`, a file a team commits, so only
    // with a `sixfold` on PATH to name; Codex reads it only for a project it trusts, and the
    // person is told so.
    let bare = run.sixfold_on(&["install", "codex"], "/usr/bin:/bin");
    assert!(!bare.status.success(), "no sixfold on PATH: refused");
    assert!(text(&bare.stderr).contains("--user"), "{}", text(&bare.stderr));
    assert!(!run.project.join(".codex").exists(), "and nothing written");
    let bin = run.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(SIXFOLD, bin.join("sixfold")).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let here = run.sixfold_on(&["install", "codex"], &path);
    let said = text(&here.stdout);
    assert!(here.status.success(), "{}", text(&here.stderr));
    assert!(said.contains("trust_level"), "{said}");
    assert!(std::fs::read_to_string(run.project.join(".codex/config.toml"))
        .unwrap()
        .contains("\"sixfold hook codex || exit 2\""));
    let gone = run.sixfold_on(&["uninstall", "codex"], &path);
    assert!(gone.status.success(), "{}", text(&gone.stderr));
    // Nothing left behind: the file it created and its directory are gone.
    assert!(!run.project.join(".codex").exists());
}

/// Codex skips a hook nobody trusted without a word; sixfold says so, and computes the hash Codex
/// keeps for a trusted hook, so a hook trusted that way runs without the bypass flag.
#[test]
fn providers_says_whether_codex_trusts_the_hooks_and_codex_agrees() {
    let Some(run) = Run::new() else { return };
    run.mode("ask");
    let script = json!({ "turns": [[{ "exec": "echo hi > skipped.txt" }], [{ "text": "Done." }]] });
    let providers = || -> Value {
        let out = run.sixfold(&["providers", "--json"]);
        let all: Value = serde_json::from_slice(&out.stdout).unwrap();
        all["providers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == "codex")
            .unwrap()
            .clone()
    };
    let listed = providers();
    let hooks = listed["hooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 5, "{listed}");
    assert!(hooks.iter().all(|h| h["trust"] == "untrusted"), "{listed}");
    let plain = text(&run.sixfold(&["providers"]).stdout);
    assert!(plain.contains("NOT trusted"), "{plain}");
    // Untrusted, the hook is skipped and the ask runs: the silent skip the report warns of.
    run.codex_with(script.clone(), &[]);
    assert!(run.project.join("skipped.txt").exists());
    std::fs::remove_file(run.project.join("skipped.txt")).unwrap();
    // Trusted as Codex's `/hooks` would keep it: the hash sixfold computed is Codex's own.
    let mut config = std::fs::read_to_string(run.config()).unwrap();
    for h in hooks {
        config.push_str(&format!(
            "\n[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n",
            h["key"].as_str().unwrap(),
            h["hash"].as_str().unwrap()
        ));
    }
    std::fs::write(run.config(), config).unwrap();
    assert!(providers()["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["trust"] == "trusted"));
    run.codex_with(script, &[]);
    assert!(
        !run.project.join("skipped.txt").exists(),
        "the trusted hook ran and refused"
    );
}

/// A strict hermetic launch of Codex: sixfold's hooks are written in the scratch `CODEX_HOME` and
/// run (the launch passes `--dangerously-bypass-hook-trust`, having written them itself), so H8
/// is ok and the run is governed. The rows Codex's record cannot evidence (H1a, H1b, H4, H5: its
/// rollout names no plugins, output style, key source or MCP servers) are made advisory by the
/// team's own bundle, so strict passes on what can be shown.
#[test]
fn a_strict_hermetic_launch_of_codex_exits_0_with_h8_ok_and_governed() {
    let Some(codex) = agent_cli("SIXFOLD_CODEX_BIN", "codex") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let src = root.join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("AGENTS.md"), "# agents\n").unwrap();
    // The team's bundle: the four rows Codex's record cannot evidence, advisory.
    let accept = root.join("accept/policies/hermetic");
    std::fs::create_dir_all(&accept).unwrap();
    let shipped = support::repo().join("policies/hermetic");
    for row in ["h1a-plugins", "h1b-output-style", "h4-api-key", "h5-mcp"] {
        let toml = std::fs::read_to_string(shipped.join(format!("{row}.toml"))).unwrap();
        let toml = toml.replace("severity = \"gating\"", "severity = \"advisory\"");
        std::fs::write(accept.join(format!("{row}.toml")), toml).unwrap();
        std::fs::copy(shipped.join(format!("{row}.rhai")), accept.join(format!("{row}.rhai"))).unwrap();
    }
    let outside = outside_tmp();
    let target = outside.path().join("escaped.txt");
    let scratch = root.join("server");
    std::fs::create_dir_all(&scratch).unwrap();
    let server = ModelServer::start(
        &json!({ "turns": [
            [{ "exec": format!("echo pwned > {}", target.display()) }],
            [{ "text": "Here is what I saw." }],
        ]}),
        &src,
        &root,
        &scratch,
    );
    let node = which("node").map(|n| n.parent().unwrap().display().to_string());
    let path = [node.as_deref(), Some("/usr/local/bin:/usr/bin:/bin")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(":");
    let out = Command::new(SIXFOLD)
        .args([
            "launch",
            "codex",
            "--json",
            "--no-project",
            "--hermetic",
            "strict",
            "--binary",
        ])
        .arg(&codex)
        .args(["--api-key-env", "X_KEY", "--copy"])
        .arg(&src)
        .arg("--bundle")
        .arg(root.join("accept"))
        .args(["--", "--json", "-s", "danger-full-access", "-c"])
        .arg(format!(
            "model_providers.x={{name=\"x\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"X_KEY\"}}",
            server.url()
        ))
        .args(["-c", "model_provider=x", "-m", "gpt-5.5", "look around"])
        .current_dir(&root)
        .env_clear()
        .env("PATH", path)
        .env("HOME", root.join("home"))
        .env("TMPDIR", &scratch)
        .env("LANG", "C.UTF-8")
        .env("X_KEY", "test-key")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let rows = report["rows"].as_array().cloned().unwrap_or_default();
    let row = |id: &str| rows.iter().find(|r| r["id"] == id).cloned().unwrap_or(Value::Null);
    assert_eq!(
        out.status.code(),
        Some(0),
        "strict exits 0\n{}\n{rows:#?}",
        text(&out.stderr)
    );
    assert_eq!(row("H8")["verdict"], "ok", "{}", row("H8"));
    let argv = report["attestation"]["argv"].to_string();
    assert!(argv.contains("--dangerously-bypass-hook-trust"), "{argv}");
    assert!(!target.exists(), "the launched Codex was not governed");
    let work = PathBuf::from(report["run_dir"].as_str().unwrap()).join("work");
    let mut judged_there = Vec::new();
    for entry in std::fs::read_dir(work.join(".sixfold/runs")).unwrap() {
        judged_there.extend(json_lines(&std::fs::read_to_string(entry.unwrap().path()).unwrap()));
    }
    assert_eq!(judged(&judged_there), [("Bash".into(), "refuse".into())]);
}
