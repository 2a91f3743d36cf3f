//! End to end: the real OpenCode (pinned in `package.json`) governed live by sixfold's plugin
//! (`sixfold install opencode`), against the scripted Chat Completions server, on loopback only.
//! Each run is hermetic: its own `HOME` and XDG directories, the model catalog fetch and the
//! update check off, and OpenCode's install of `@opencode-ai/plugin` skipped by a stub in each
//! config directory it would install into (so no registry is reached). Skips, with the reason,
//! when OpenCode is not installed, unless `SIXFOLD_REQUIRE_E2E=1`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::{agent_cli, json_lines, outside_tmp, ModelServer};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// How long one OpenCode run may take before the test fails: generous, the machine may be busy.
const RUN_LIMIT: Duration = Duration::from_secs(900);

/// A scratch project (a git repository with `.sixfold/`) with sixfold's plugin installed, and a
/// scratch home and XDG directories, all outside the temp dir (which `workspace-write` lets a
/// command write, and which must not hold `$HOME` for the sandbox to be proven).
struct Run {
    _dir: tempfile::TempDir,
    root: PathBuf,
    project: PathBuf,
    home: PathBuf,
    opencode: PathBuf,
}

/// What OpenCode's start-up install of its plugin package finds already done: a `package.json`
/// that needs `@opencode-ai/plugin`, a lock file that lists it, a `node_modules/`.
fn stub_plugin_install(dir: &Path) {
    std::fs::create_dir_all(dir.join("node_modules")).unwrap();
    let deps = json!({ "@opencode-ai/plugin": "1.18.33" });
    std::fs::write(dir.join("package.json"), json!({ "dependencies": deps }).to_string()).unwrap();
    let lock = json!({ "name": "stub", "lockfileVersion": 3, "requires": true,
        "packages": { "": { "dependencies": deps } } });
    std::fs::write(dir.join("package-lock.json"), lock.to_string()).unwrap();
}

impl Run {
    fn new() -> Option<Run> {
        let opencode = agent_cli("SIXFOLD_OPENCODE_BIN", "opencode")?;
        let dir = outside_tmp();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("project");
        let home = root.join("home");
        for d in [&project, &home, &root.join("xdg/config/opencode")] {
            std::fs::create_dir_all(d).unwrap();
        }
        assert!(Command::new("git")
            .args(["init", "-q"])
            .current_dir(&project)
            .status()
            .unwrap()
            .success());
        std::fs::create_dir_all(project.join(".sixfold")).unwrap();
        stub_plugin_install(&root.join("xdg/config/opencode"));
        stub_plugin_install(&project.join(".opencode"));
        let run = Run {
            _dir: dir,
            root,
            project,
            home,
            opencode,
        };
        run.install(SIXFOLD);
        Some(run)
    }

    /// `sixfold install opencode` in the project, by the sixfold binary at `sixfold`.
    fn install(&self, sixfold: &str) {
        let out = self.sixfold_as(sixfold, &["install", "opencode"]);
        assert!(out.status.success(), "install: {}", text(&out.stderr));
    }

    /// The environment every process of the run shares.
    fn env(&self) -> Vec<(&'static str, String)> {
        let xdg = |d: &str| self.root.join("xdg").join(d).display().to_string();
        vec![
            ("HOME", self.home.display().to_string()),
            ("XDG_CONFIG_HOME", xdg("config")),
            ("XDG_DATA_HOME", xdg("data")),
            ("XDG_CACHE_HOME", xdg("cache")),
            ("XDG_STATE_HOME", xdg("state")),
            ("PATH", "/usr/local/bin:/usr/bin:/bin".into()),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1".into()),
            ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
        ]
    }

    fn sixfold(&self, args: &[&str]) -> Output {
        self.sixfold_as(SIXFOLD, args)
    }

    fn sixfold_as(&self, sixfold: &str, args: &[&str]) -> Output {
        Command::new(sixfold)
            .args(args)
            .current_dir(&self.project)
            .env_clear()
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
        let mut argv = vec!["env".to_string(), "-i".to_string()];
        argv.extend(self.env().into_iter().map(|(k, v)| format!("{k}={v}")));
        argv.extend([SIXFOLD, "mode", "set", mode].map(String::from));
        json!({ "run": argv })
    }

    /// `opencode run --format json` against a script, with `env` over the run's; the server's
    /// request log, OpenCode's JSON lines, and its stderr. Waits while `during` runs beside it.
    fn opencode(&self, script: Value, env: &[(&str, &str)], during: impl FnOnce()) -> (Vec<Value>, Vec<Value>, String) {
        self.opencode_with(script, env, during, json!({}))
    }

    /// As [`Run::opencode`], with more of OpenCode's configuration (`extra`, its keys over the run's).
    fn opencode_with(
        &self,
        script: Value,
        env: &[(&str, &str)],
        during: impl FnOnce(),
        extra: Value,
    ) -> (Vec<Value>, Vec<Value>, String) {
        let scratch = self.root.join(format!("server-{}", unique()));
        std::fs::create_dir_all(&scratch).unwrap();
        let server = ModelServer::start(&script, &self.project, &self.project, &scratch);
        let mut config = json!({
            "provider": { "scripted": {
                "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                "options": { "baseURL": format!("{}/v1", server.url()), "apiKey": "test-key" },
                "models": { "scripted-model": { "name": "Scripted model", "tool_call": true } } } },
            "model": "scripted/scripted-model", "small_model": "scripted/scripted-model",
            "autoupdate": false, "share": "disabled"
        });
        for (key, value) in extra.as_object().unwrap() {
            config[key] = value.clone();
        }
        std::fs::write(self.root.join("xdg/config/opencode/opencode.json"), config.to_string()).unwrap();
        let mut child = Command::new(&self.opencode)
            .args(["run", "--format", "json", "do the task"])
            .current_dir(&self.project)
            .env_clear()
            .envs(self.env())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let out = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
        let err = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
        during();
        let started = Instant::now();
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if started.elapsed() > RUN_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                panic!("opencode did not finish within {RUN_LIMIT:?}: {}", err.join().unwrap());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let (out, err) = (out.join().unwrap(), err.join().unwrap());
        let requests = json_lines(&std::fs::read_to_string(&server.log).unwrap_or_default());
        (requests, json_lines(&out), err)
    }

    /// sixfold's record of the run: every `judged` event.
    fn judged(&self) -> Vec<Value> {
        self.events().into_iter().filter(|e| e["event"] == "judged").collect()
    }

    fn events(&self) -> Vec<Value> {
        let mut all = Vec::new();
        let Ok(entries) = std::fs::read_dir(self.project.join(".sixfold/runs")) else {
            return all;
        };
        for entry in entries {
            all.extend(json_lines(&std::fs::read_to_string(entry.unwrap().path()).unwrap()));
        }
        all
    }

    /// The plugin file `sixfold install opencode` wrote.
    fn plugin(&self) -> PathBuf {
        self.project.join(".opencode/plugin/sixfold.js")
    }

    /// The plugin, running `command` instead of the hook command install wrote.
    fn plugin_running(&self, command: &str) {
        let text = std::fs::read_to_string(self.plugin()).unwrap();
        let line = text.lines().find(|l| l.starts_with("const COMMAND = ")).unwrap();
        let quoted = Value::String(command.into()).to_string();
        std::fs::write(self.plugin(), text.replace(line, &format!("const COMMAND = {quoted};"))).unwrap();
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn unique() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// A turn calling one of OpenCode's tools.
fn tool(name: &str, input: Value) -> Value {
    json!([{ "tool_use": { "name": name, "input": input } }])
}

fn bash(command: &str) -> Value {
    tool("bash", json!({ "command": command, "description": "Run it" }))
}

/// OpenCode's `tool_use` lines: (tool, status, input, output or error).
fn tool_uses(lines: &[Value]) -> Vec<(String, String, Value, String)> {
    lines
        .iter()
        .filter(|l| l["type"] == "tool_use")
        .map(|l| {
            let state = &l["part"]["state"];
            let said = state["output"].as_str().or(state["error"].as_str()).unwrap_or("");
            (
                l["part"]["tool"].as_str().unwrap_or("").to_string(),
                state["status"].as_str().unwrap_or("").to_string(),
                state["input"].clone(),
                said.to_string(),
            )
        })
        .collect()
}

/// What the model was told of each tool call it made (the `tool` messages it was sent back).
fn told(requests: &[Value]) -> Vec<String> {
    requests
        .iter()
        .filter_map(|r| r["last_tool_result"]["content"].as_str().map(String::from))
        .collect()
}

/// The main requests (those offering tools): whether OpenCode offered the model any tool.
fn offered_tools(requests: &[Value]) -> bool {
    requests.iter().any(|r| r["tools"] == true)
}

#[test]
fn calls_are_judged_allowed_refused_and_rewritten_into_the_sandbox() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    let outside = outside_tmp();
    let escaped = outside.path().join("escaped.txt");
    let state = run.project.join(".sixfold/state.toml");
    // A command the classifier cannot read: allowed because it runs contained, so its write
    // outside the workspace does not land.
    let hidden = format!(
        "eval \"$(printf 'echo ran > inside.txt; echo x > %s' '{}')\"",
        escaped.display()
    );
    let script = json!({ "turns": [
        bash("echo hi > plain.txt"),
        tool("write", json!({ "filePath": state, "content": "mode = \"full\"\n" })),
        bash(&hidden),
        tool("task", json!({ "description": "Help", "prompt": "Do it", "subagent_type": "general" })),
        [{ "text": "Done." }],
    ]});
    let (requests, lines, stderr) = run.opencode(script, &[], || {});
    let uses = tool_uses(&lines);
    let judged = run.judged();
    let tools: Vec<&str> = judged.iter().map(|j| j["step"]["tool"].as_str().unwrap()).collect();
    assert_eq!(tools, ["bash", "write", "bash", "task"], "{judged:#?}\n{stderr}");

    // Allowed, and run inside the mode's sandbox: the command OpenCode ran is the rewritten one.
    assert_eq!(judged[0]["decision"], "allow", "{judged:#?}");
    assert_eq!(std::fs::read_to_string(run.project.join("plain.txt")).unwrap(), "hi\n");
    let ran = uses[0].2["command"].as_str().unwrap();
    assert!(
        ran.starts_with(SIXFOLD) && ran.contains("sandbox run") && ran.contains("--mode workspace-write"),
        "not rewritten into the sandbox: {ran}"
    );
    assert_eq!(uses[0].1, "completed", "{uses:#?}");

    // Refused: sixfold's own state is protected; the reason reached the model as the tool's error.
    assert_eq!(judged[1]["decision"], "refuse", "{judged:#?}");
    assert_eq!(std::fs::read_to_string(&state).unwrap(), "mode = \"workspace-write\"\n");
    assert_eq!(uses[1].1, "error", "{uses:#?}");
    let reason = judged[1]["reason"].as_str().unwrap();
    let said = told(&requests);
    assert!(
        said.iter().any(|t| t.contains("sixfold: ") && t.contains(reason)),
        "the model was not told why: {said:#?}"
    );

    // Contained: allowed, it ran, and nothing got out.
    assert_eq!(judged[2]["decision"], "allow", "{judged:#?}");
    assert_eq!(judged[2]["step"]["effects"]["contained"], true, "{judged:#?}");
    assert_eq!(
        std::fs::read_to_string(run.project.join("inside.txt")).unwrap(),
        "ran\n"
    );
    assert!(!escaped.exists(), "a write outside the workspace landed");

    // A sub-agent task is judged too: the pattern `single` spawns none.
    assert_eq!(judged[3]["decision"], "refuse", "{judged:#?}");
    assert!(said.iter().any(|t| t.contains("single")), "{said:#?}");
}

/// An MCP server's tools (`<server>_<tool>` to OpenCode) are judged by the bundle's MCP maps:
/// the mapped reader reaches the server, the unmapped tool never does.
#[test]
fn mcp_calls_are_judged_and_an_unmapped_one_never_reaches_the_server() {
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
    let mcp = json!({ "mcp": { "docs": { "type": "local", "enabled": true,
        "command": ["python3", server.to_str().unwrap()],
        "environment": { "MARKER_DIR": marks.to_str().unwrap() } } } });
    let script = json!({ "turns": [
        [{ "mcp_call": { "server": "docs", "tool": "search", "arguments": { "query": "x" } } }],
        [{ "mcp_call": { "server": "docs", "tool": "wipe", "arguments": {} } }],
        [{ "text": "Done." }],
    ]});
    let (requests, lines, stderr) = run.opencode_with(script, &[], || {}, mcp);
    let offered: Vec<&Value> = requests.iter().filter(|r| r["tools"] == true).collect();
    assert!(
        offered
            .iter()
            .all(|r| r["tool_names"].as_array().unwrap().iter().any(|n| n == "docs_search")),
        "the server's tools were not offered: {requests:#?}\n{stderr}"
    );
    assert!(
        marks.join("called-search").exists(),
        "the mapped reader did not run: {:#?}",
        tool_uses(&lines)
    );
    assert!(
        !marks.join("called-wipe").exists(),
        "an unmapped MCP tool reached the server"
    );
    let judged: Vec<(String, String)> = run
        .judged()
        .iter()
        .map(|j| {
            (
                j["step"]["tool"].as_str().unwrap().to_string(),
                j["decision"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        judged,
        [
            ("mcp__docs__search".to_string(), "allow".to_string()),
            ("mcp__docs__wipe".to_string(), "refuse".to_string())
        ]
    );
}

#[test]
fn a_mode_switch_mid_run_takes_effect_on_the_next_call() {
    let Some(run) = Run::new() else { return };
    run.mode("workspace-write");
    let switch = run.set_mode_block("read-only");
    let script = json!({ "turns": [
        bash("echo one > one.txt"),
        [switch, { "tool_use": { "name": "bash", "input": { "command": "echo two > two.txt", "description": "Run it" } } }],
        [{ "text": "Done." }],
    ]});
    let (_, lines, stderr) = run.opencode(script, &[], || {});
    let judged = run.judged();
    let modes: Vec<(&str, &str)> = judged
        .iter()
        .map(|j| (j["mode"].as_str().unwrap(), j["decision"].as_str().unwrap()))
        .collect();
    assert_eq!(modes.len(), 2, "{judged:#?}\n{stderr}");
    assert_eq!(modes[0], ("workspace-write", "allow"), "{judged:#?}");
    assert_eq!(modes[1].0, "read-only", "{judged:#?}");
    assert_ne!(modes[1].1, "allow", "{judged:#?}");
    assert!(run.project.join("one.txt").exists());
    assert!(!run.project.join("two.txt").exists(), "{:#?}", tool_uses(&lines));
}

#[test]
fn an_ask_waits_for_a_persons_answer_through_sixfolds_approvals() {
    let Some(run) = Run::new() else { return };
    run.mode("ask");
    let script = json!({ "turns": [
        bash("echo yes > approved.txt"),
        bash("echo no > denied.txt"),
        [{ "text": "Done." }],
    ]});
    let project = run.project.clone();
    let env = run.env();
    let answered = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = answered.clone();
    // A person at another terminal: the first ask allowed, the second denied.
    let person = move || {
        std::thread::spawn(move || {
            let started = Instant::now();
            for answer in ["allow", "deny"] {
                loop {
                    assert!(started.elapsed() < RUN_LIMIT, "no ask was parked");
                    let out = Command::new(SIXFOLD)
                        .args(["approvals", "list", "--json"])
                        .current_dir(&project)
                        .env_clear()
                        .envs(env.clone())
                        .output()
                        .unwrap();
                    let pending: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap_or_default();
                    if let Some(id) = pending.first().and_then(|p| p["id"].as_str()) {
                        let out = Command::new(SIXFOLD)
                            .args(["approvals", "answer", id, answer])
                            .current_dir(&project)
                            .env_clear()
                            .envs(env.clone())
                            .output()
                            .unwrap();
                        assert!(out.status.success(), "{}", text(&out.stderr));
                        seen.lock()
                            .unwrap()
                            .push(pending[0]["act"].as_str().unwrap_or("").to_string());
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(300));
                }
            }
        });
    };
    let (requests, _, stderr) = run.opencode(script, &[], person);
    assert_eq!(
        *answered.lock().unwrap(),
        ["echo yes > approved.txt", "echo no > denied.txt"],
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(run.project.join("approved.txt")).unwrap(),
        "yes\n"
    );
    assert!(!run.project.join("denied.txt").exists());
    let answers: Vec<String> = run
        .events()
        .into_iter()
        .filter(|e| e["event"] == "answered")
        .map(|e| e["answer"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(answers, ["allow", "deny"]);
    let said = told(&requests);
    assert!(said.iter().any(|t| t.contains("answered deny")), "{said:#?}");
}

/// A write OpenCode would make if any tool could run.
fn marker_script() -> Value {
    json!({ "turns": [bash("echo ran > marker.txt"), [{ "text": "Done." }]] })
}

#[test]
fn a_missing_plugin_leaves_every_tool_denied() {
    let Some(run) = Run::new() else { return };
    std::fs::remove_file(run.plugin()).unwrap();
    let (requests, _, stderr) = run.opencode(marker_script(), &[], || {});
    assert!(!requests.is_empty(), "OpenCode sent no request: {stderr}");
    assert!(!offered_tools(&requests), "tools were offered: {requests:#?}");
    assert!(!run.project.join("marker.txt").exists());
}

#[test]
fn a_plugin_that_fails_to_load_leaves_every_tool_denied() {
    let Some(run) = Run::new() else { return };
    std::fs::write(
        run.plugin(),
        "// sixfold's plugin for OpenCode: broken\nthrow new Error(\"broken on purpose\");\n",
    )
    .unwrap();
    let (requests, _, stderr) = run.opencode(marker_script(), &[], || {});
    assert!(!requests.is_empty(), "OpenCode sent no request: {stderr}");
    assert!(!offered_tools(&requests), "tools were offered: {requests:#?}");
    assert!(!run.project.join("marker.txt").exists());
}

/// A run whose plugin cannot get an answer from sixfold: the call is refused with `why`.
fn refused_for(run: &Run, env: &[(&str, &str)], why: &str) {
    let (requests, lines, stderr) = run.opencode(marker_script(), env, || {});
    assert!(offered_tools(&requests), "the plugin did not load: {stderr}");
    assert!(!run.project.join("marker.txt").exists(), "{:#?}", tool_uses(&lines));
    let uses = tool_uses(&lines);
    assert_eq!(uses.len(), 1, "{uses:#?}\n{stderr}");
    assert_eq!(uses[0].1, "error", "{uses:#?}");
    assert!(uses[0].3.contains(why), "`{why}` not in {uses:#?}");
    assert!(told(&requests).iter().any(|t| t.contains(why)), "{requests:#?}");
}

#[test]
fn a_missing_sixfold_binary_refuses_every_call() {
    let Some(run) = Run::new() else { return };
    let bin = run.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let copy = bin.join("sixfold");
    std::fs::copy(SIXFOLD, &copy).unwrap();
    run.install(copy.to_str().unwrap());
    assert!(std::fs::read_to_string(run.plugin())
        .unwrap()
        .contains(copy.to_str().unwrap()));
    std::fs::remove_file(&copy).unwrap();
    refused_for(&run, &[], "was not found");
}

#[test]
fn sixfold_hanging_past_the_plugins_wait_is_refused() {
    let Some(run) = Run::new() else { return };
    let hang = run.root.join("hang.sh");
    std::fs::write(&hang, "#!/bin/sh\nsleep 600\n").unwrap();
    std::fs::set_permissions(&hang, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    run.plugin_running(hang.to_str().unwrap());
    let started = Instant::now();
    refused_for(
        &run,
        &[("SIXFOLD_OPENCODE_WAIT_MS", "5000")],
        "did not answer within 5000 ms",
    );
    assert!(
        started.elapsed() < Duration::from_secs(600),
        "the plugin waited for the hang"
    );
}

#[test]
fn sixfold_failing_refuses_the_call_with_its_reason() {
    let Some(run) = Run::new() else { return };
    refused_for(
        &run,
        &[("SIXFOLD_HOOK_FAULT", "panic")],
        "could not judge this call, so it is refused",
    );
    // sixfold's own watchdog answers a hang inside it the same way.
    let run = Run::new().unwrap();
    refused_for(
        &run,
        &[("SIXFOLD_HOOK_FAULT", "hang"), ("SIXFOLD_HOOK_DEADLINE_MS", "2000")],
        "did not answer within 2000 ms",
    );
}

#[test]
fn install_and_uninstall_leave_the_users_files_as_they_were() {
    let Some(run) = Run::new() else { return };
    let dir = run.project.join(".opencode");
    let out = run.sixfold(&["uninstall", "opencode"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!dir.join("plugin").exists() && !dir.join("opencode.json").exists());
    // The stub of OpenCode's own install is the user's: it stays.
    assert!(dir.join("package.json").is_file());
    // A dry run shows the change and writes nothing.
    let dry = run.sixfold(&["install", "opencode", "--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    assert!(
        text(&dry.stdout).contains("+       \"sixfold: the plugin did not load\": \"deny\","),
        "{}",
        text(&dry.stdout)
    );
    assert!(!dir.join("plugin").exists() && !dir.join("opencode.json").exists());
    // A `*` rule in the project's own opencode.json, merged first, would keep the rule's place.
    std::fs::write(
        run.project.join("opencode.json"),
        r#"{"permission": {"*": "allow", "bash": "allow"}}"#,
    )
    .unwrap();
    let refused = run.sixfold(&["install", "opencode"]);
    assert!(!refused.status.success());
    assert!(
        text(&refused.stderr).contains("has a `*` permission rule"),
        "{}",
        text(&refused.stderr)
    );
    assert!(!dir.join("plugin").exists() && !dir.join("opencode.json").exists());
    std::fs::remove_file(run.project.join("opencode.json")).unwrap();
    let mine = "{\n  \"permission\": {\n    \"bash\": {\n      \"git *\": \"allow\",\n      \"*\": \"ask\"\n    },\n    \"edit\": \"allow\"\n  }\n}\n";
    std::fs::write(dir.join("opencode.json"), mine).unwrap();
    run.install(SIXFOLD);
    let installed = std::fs::read_to_string(dir.join("opencode.json")).unwrap();
    assert!(installed.contains("\"edit\": \"allow\",\n    \"*\": {"), "{installed}");
    let out = run.sixfold(&["uninstall", "opencode"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(dir.join("opencode.json")).unwrap(), mine);
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["node_modules", "opencode.json", "package-lock.json", "package.json"]
    );
}
