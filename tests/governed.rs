#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! Governed runs, end to end: the real Claude Code and the real Codex, driven by the scripted
//! model server, launched with `sixfold launch … --governed`, so their own file and shell tools
//! are off and every file and shell effect goes through `sixfold serve-tools`: judged, run
//! (`bash` confined by the sandbox), and recorded with its content. An ask parks the call until a
//! second process answers it with `sixfold approvals answer` (allow, deny) or the timeout refuses
//! it. Skipped with the reason when a CLI is absent; `SIXFOLD_REQUIRE_E2E=1` makes that a failure.

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{agent_cli, json_lines, outside_tmp, tool_results, ModelServer};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// The test file the scripted agent weakens, and the suite that checks it.
const TEST_FILE: &str = "import unittest\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n";

/// A project: a git repository with `.sixfold/`, a module, its test, and a script that tries to
/// write outside the workspace (to `outside`) when run.
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    scratch: PathBuf,
    outside: tempfile::TempDir,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("ws");
        let scratch = base.join("scratch");
        for d in [
            root.join(".sixfold"),
            root.join("tests"),
            scratch.join("home"),
            scratch.join("config"),
            scratch.join("tmp"),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        let outside = outside_tmp();
        std::fs::write(root.join("calc.py"), "def add(a, b):\n    return a + b\n").unwrap();
        std::fs::write(root.join("tests/test_calc.py"), TEST_FILE).unwrap();
        std::fs::write(root.join("tests/__init__.py"), "").unwrap();
        std::fs::write(
            root.join("escape.py"),
            format!(
                "try:\n    open({:?}, 'w').write('escaped')\n    print('wrote outside')\nexcept OSError as e:\n    print('blocked:', e)\n",
                outside.path().join("escaped.txt").display().to_string()
            ),
        )
        .unwrap();
        let git = Command::new("git")
            .args(["init", "-q"])
            .current_dir(&root)
            .status()
            .unwrap();
        assert!(git.success());
        Project {
            _dir: dir,
            root,
            scratch,
            outside,
        }
    }

    fn server(&self, script: Value) -> ModelServer {
        ModelServer::start(&script, &self.root, &self.root, &self.scratch)
    }

    /// The session's event log, as JSON lines.
    fn events(&self, session: &str) -> Vec<Value> {
        let log = self.root.join(format!(".sixfold/runs/{session}.jsonl"));
        json_lines(&std::fs::read_to_string(&log).unwrap_or_default())
    }

    fn escaped(&self) -> bool {
        self.outside.path().join("escaped.txt").exists()
    }
}

/// A PATH with node (Claude Code's launcher needs it) and the system, nothing else.
fn plain_path() -> String {
    let node = std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).find(|d| d.join("node").is_file()))
        .map(|d| format!("{}:", d.display()))
        .unwrap_or_default();
    format!("{node}/usr/local/bin:/usr/bin:/bin")
}

/// `sixfold launch PROVIDER --governed …` in the project, with a plain environment.
fn launch(p: &Project, provider: &str, args: &[String], env: &[(&str, String)]) -> std::process::Output {
    Command::new(SIXFOLD)
        .args(["launch", provider, "--governed"])
        .args(args)
        .current_dir(&p.root)
        .env_clear()
        .env("PATH", plain_path())
        .env("HOME", p.scratch.join("home"))
        // Beside `$HOME`, not above it: a temp dir holding the home is not proven (the sandbox
        // would let a command write the home).
        .env("TMPDIR", p.scratch.join("tmp"))
        .env("LANG", "C.UTF-8")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// Claude Code, governed, against the scripted model; its stream-json lines.
fn claude(p: &Project, bin: &Path, server: &ModelServer, sixfold_args: &[&str]) -> (i32, Vec<Value>, String) {
    let mut args = strings(&["--binary", bin.to_str().unwrap(), "--root", p.root.to_str().unwrap()]);
    args.extend(strings(sixfold_args));
    args.extend(strings(&[
        "--",
        "--output-format",
        "stream-json",
        "--verbose",
        "do the task",
    ]));
    let out = launch(
        p,
        "claude-code",
        &args,
        &[
            ("ANTHROPIC_BASE_URL", server.url()),
            ("ANTHROPIC_API_KEY", "sk-test".into()),
            ("CLAUDE_CONFIG_DIR", p.scratch.join("config").display().to_string()),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), json_lines(&stdout), stderr)
}

/// Codex, governed, against the scripted model; its `exec --json` lines.
fn codex(p: &Project, bin: &Path, server: &ModelServer, sixfold_args: &[&str]) -> (i32, Vec<Value>, String) {
    let mut args = strings(&["--binary", bin.to_str().unwrap(), "--root", p.root.to_str().unwrap()]);
    args.extend(strings(sixfold_args));
    args.extend(strings(&["--", "--json", "--skip-git-repo-check", "-c"]));
    args.push(format!(
        "model_providers.x={{name=\"x\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"X_KEY\"}}",
        server.url()
    ));
    args.extend(strings(&["-c", "model_provider=x", "-m", "gpt-5.5", "do the task"]));
    let out = launch(
        p,
        "codex",
        &args,
        &[
            ("X_KEY", "sk-test".into()),
            ("CODEX_HOME", p.scratch.join("config").display().to_string()),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), json_lines(&stdout), stderr)
}

/// The replay of the session's event log: each row's verdict and evidence.
fn replay(p: &Project, session: &str) -> Value {
    let log = p.root.join(format!(".sixfold/runs/{session}.jsonl"));
    let out = Command::new(SIXFOLD)
        .args(["replay", "--json", "--no-project"])
        .arg(&log)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)))
}

fn row<'a>(report: &'a Value, id: &str) -> &'a Value {
    report["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("no row {id}: {report}"))
}

/// What the agent did, as the scripted model asks it, with the tool named as the CLI offers it.
fn work_script(call: &dyn Fn(&str, Value) -> Value, outside: &Path) -> Value {
    json!({ "turns": [
        [call("read_file", json!({"path": "tests/test_calc.py"}))],
        [call("edit_file", json!({"path": "tests/test_calc.py", "old_string": "self.assertEqual(add(1, 2), 3)", "new_string": "self.assertTrue(True)"}))],
        [call("bash", json!({"command": "python3 -m unittest -q"}))],
        [call("write_file", json!({"path": outside.join("direct.txt").display().to_string(), "content": "x"}))],
        [call("bash", json!({"command": "python3 escape.py"}))],
        [{"text": "Done."}],
    ]})
}

/// The checks every governed run of `work_script` must pass, whichever CLI ran it.
fn check_work(p: &Project, session: &str, results: &[(bool, String)]) {
    // The edit happened, through sixfold's tool, and the suite ran through the sandbox.
    let test = std::fs::read_to_string(p.root.join("tests/test_calc.py")).unwrap();
    assert!(test.contains("self.assertTrue(True)"), "{test}");
    assert!(
        results.iter().any(|(err, text)| !err && text.contains("OK")),
        "the suite's result reached the agent: {results:?}"
    );
    // A write outside the workspace: refused, with the reason, as a tool error.
    assert!(
        results.iter().any(|(err, text)| *err
            && text.contains("sixfold refused this call")
            && text.contains("outside the workspace")),
        "{results:?}"
    );
    assert!(!p.outside.path().join("direct.txt").exists());
    // A command that tries to write outside ran confined and wrote nothing there.
    assert!(!p.escaped(), "the sandboxed command wrote outside the workspace");
    // The record: every call judged and observed; the edit with its exact lines.
    let events = p.events(session);
    assert_eq!(events[0]["event"], "started", "{events:?}");
    assert_eq!(events.last().unwrap()["event"], "ended", "{events:?}");
    let edit = events
        .iter()
        .filter(|e| e["event"] == "observed")
        .flat_map(|e| e["edits"].as_array().cloned().unwrap_or_default())
        .find(|e| e["path"].as_str().unwrap_or("").ends_with("tests/test_calc.py"))
        .expect("the edit is on the record");
    assert_eq!(edit["removed"][0]["text"], "        self.assertEqual(add(1, 2), 3)");
    assert_eq!(edit["added"][0]["text"], "        self.assertTrue(True)");
    assert_eq!(edit["visible"], true);
    let refused = events
        .iter()
        .filter(|e| e["event"] == "judged" && e["decision"] == "refuse")
        .count();
    assert_eq!(refused, 1, "{events:?}");
    // Replay decides from the recorded content: the weakened assertion is a gap, not an unk.
    let report = replay(p, session);
    let row = row(&report, "no-assertion-weakening");
    assert_eq!(row["verdict"], "gap", "{row}");
}

#[test]
fn claude_governed_edits_runs_the_suite_and_is_refused_outside() {
    let Some(bin) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let p = Project::new();
    let call =
        |tool: &str, input: Value| json!({"tool_use": {"name": format!("mcp__sixfold__{tool}"), "input": input}});
    let server = p.server(work_script(&call, p.outside.path()));
    let (code, lines, stderr) = claude(
        &p,
        &bin,
        &server,
        &["--mode", "workspace-write", "--session", "cc-work"],
    );
    assert_eq!(code, 0, "{stderr}");
    // The vendor's own record: no built-in tool offered, sixfold's servers connected.
    let init = lines.iter().find(|l| l["subtype"] == "init").expect("the init line");
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(
        !tools.is_empty() && tools.iter().all(|t| t.starts_with("mcp__sixfold__")),
        "{tools:?}"
    );
    let servers: Vec<&str> = init["mcp_servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        servers.contains(&"sixfold") && servers.contains(&"sixfold-approvals"),
        "{servers:?}"
    );
    let results: Vec<(bool, String)> = tool_results(&lines).into_iter().map(|(_, e, t)| (e, t)).collect();
    check_work(&p, "cc-work", &results);
}

#[test]
fn codex_governed_edits_runs_the_suite_and_is_refused_outside() {
    let Some(bin) = agent_cli("SIXFOLD_CODEX_BIN", "codex") else {
        return;
    };
    let p = Project::new();
    let call = |tool: &str, args: Value| json!({"function_call": {"name": tool, "namespace": "mcp__sixfold", "arguments": args}});
    let server = p.server(work_script(&call, p.outside.path()));
    let (code, lines, stderr) = codex(
        &p,
        &bin,
        &server,
        &["--mode", "workspace-write", "--session", "cx-work"],
    );
    assert_eq!(code, 0, "{stderr}");
    // What Codex offered the model: none of its own file or shell tools.
    let log = json_lines(&std::fs::read_to_string(&server.log).unwrap());
    let offered: Vec<String> = log
        .iter()
        .filter(|l| l["main"] == true)
        .flat_map(|l| l["tool_names"].as_array().cloned().unwrap_or_default())
        .map(|t| t.as_str().unwrap_or("").to_string())
        .collect();
    assert!(offered.iter().any(|t| t == "mcp__sixfold"), "{offered:?}");
    for builtin in ["exec_command", "write_stdin", "apply_patch", "shell", "web_search"] {
        assert!(!offered.iter().any(|t| t == builtin), "{builtin} offered: {offered:?}");
    }
    // Its own record shows only MCP calls: no command it ran, no file it changed itself.
    let items: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "item.completed")
        .map(|l| &l["item"])
        .collect();
    assert!(
        items
            .iter()
            .all(|i| i["type"] != "command_execution" && i["type"] != "file_change"),
        "{items:?}"
    );
    let results = codex_results(&lines);
    check_work(&p, "cx-work", &results);
}

/// Answers the next pending ask in the project from a second process, as a person would.
fn answer_next(root: &Path, answer: &str) -> Value {
    let started = Instant::now();
    loop {
        let out = Command::new(SIXFOLD)
            .args(["approvals", "list", "--json"])
            .current_dir(root)
            .output()
            .unwrap();
        let listed: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let pending: Vec<Value> = serde_json::from_value(listed["asks"].clone()).unwrap_or_default();
        if let Some(first) = pending.first() {
            let id = first["id"].as_str().unwrap();
            let answered = Command::new(SIXFOLD)
                .args(["approvals", "answer", id, answer])
                .current_dir(root)
                .output()
                .unwrap();
            assert!(
                answered.status.success(),
                "{}",
                String::from_utf8_lossy(&answered.stderr)
            );
            return first.clone();
        }
        assert!(started.elapsed() < Duration::from_secs(90), "no ask became pending");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The ask script: three writes, each of which `ask` parks.
fn ask_script(call: &dyn Fn(&str, Value) -> Value) -> Value {
    json!({ "turns": [
        [call("write_file", json!({"path": "allowed.txt", "content": "yes\n"}))],
        [call("write_file", json!({"path": "denied.txt", "content": "no\n"}))],
        [call("write_file", json!({"path": "late.txt", "content": "late\n"}))],
        [{"text": "Done."}],
    ]})
}

/// Runs the ask script with a person answering from a second process: allow the first ask, deny
/// the second, leave the third to time out; then checks the files, the replies and the record.
fn asks_wait_for_a_person(p: &Project, session: &str, run: &dyn Fn() -> Vec<(bool, String)>) {
    let root = p.root.clone();
    let person = std::thread::spawn(move || {
        let first = answer_next(&root, "allow");
        let second = answer_next(&root, "deny");
        (first, second)
    });
    let results = run();
    let (first, second) = person.join().unwrap();
    // What `approvals list --json` showed: the tool, its arguments, its effects, the rule.
    assert_eq!(first["tool"], "write_file");
    // The path as it will be written: resolved once, before the judgement.
    assert_eq!(first["arguments"]["path"], json!(p.root.join("allowed.txt")));
    assert_eq!(first["rules"], json!(["ask/writes-workspace"]), "{first}");
    assert!(
        first["effects"]["writes"][0].as_str().unwrap().ends_with("allowed.txt"),
        "{first}"
    );
    assert_eq!(second["arguments"]["path"], json!(p.root.join("denied.txt")));

    assert_eq!(std::fs::read_to_string(p.root.join("allowed.txt")).unwrap(), "yes\n");
    assert!(!p.root.join("denied.txt").exists());
    assert!(!p.root.join("late.txt").exists());
    assert!(
        results.iter().any(|(e, t)| !e && t.contains("wrote 4 bytes")),
        "{results:?}"
    );
    assert!(
        results.iter().any(|(e, t)| *e && t.contains("answered deny")),
        "{results:?}"
    );
    assert!(
        results
            .iter()
            .any(|(e, t)| *e && t.contains("nobody answered within 4 s")),
        "{results:?}"
    );

    // The answers and who gave them are on the record.
    let answered: Vec<Value> = p
        .events(session)
        .into_iter()
        .filter(|e| e["event"] == "answered")
        .collect();
    let words: Vec<&str> = answered.iter().map(|e| e["answer"].as_str().unwrap()).collect();
    assert_eq!(words, ["allow", "deny", "timeout"], "{answered:?}");
    assert!(!answered[0]["by"].as_str().unwrap().is_empty());
    assert_eq!(answered[0]["by"], answered[1]["by"]);
    // Nothing is left pending.
    let left = Command::new(SIXFOLD)
        .args(["approvals", "list", "--json"])
        .current_dir(&p.root)
        .output()
        .unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&left.stdout).unwrap()["asks"],
        json!([])
    );
}

/// Codex's MCP results in its `exec --json` lines: (is an error, text).
fn codex_results(lines: &[Value]) -> Vec<(bool, String)> {
    lines
        .iter()
        .filter(|l| l["type"] == "item.completed" && l["item"]["type"] == "mcp_tool_call")
        .map(|l| {
            let item = &l["item"];
            let text = item["result"]["content"][0]["text"].as_str().unwrap_or("").to_string();
            (item["status"] == "failed" || text.starts_with("sixfold refused"), text)
        })
        .collect()
}

#[test]
fn claude_governed_asks_wait_for_an_answer_allow_deny_and_timeout() {
    let Some(bin) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let p = Project::new();
    let call =
        |tool: &str, input: Value| json!({"tool_use": {"name": format!("mcp__sixfold__{tool}"), "input": input}});
    let server = p.server(ask_script(&call));
    asks_wait_for_a_person(&p, "cc-ask", &|| {
        let (code, lines, stderr) = claude(
            &p,
            &bin,
            &server,
            &["--mode", "ask", "--ask-timeout", "4", "--session", "cc-ask"],
        );
        assert_eq!(code, 0, "{stderr}");
        tool_results(&lines).into_iter().map(|(_, e, t)| (e, t)).collect()
    });
}

#[test]
fn codex_governed_asks_wait_for_an_answer_allow_deny_and_timeout() {
    let Some(bin) = agent_cli("SIXFOLD_CODEX_BIN", "codex") else {
        return;
    };
    let p = Project::new();
    let call = |tool: &str, args: Value| json!({"function_call": {"name": tool, "namespace": "mcp__sixfold", "arguments": args}});
    let server = p.server(ask_script(&call));
    asks_wait_for_a_person(&p, "cx-ask", &|| {
        let (code, lines, stderr) = codex(
            &p,
            &bin,
            &server,
            &["--mode", "ask", "--ask-timeout", "4", "--session", "cx-ask"],
        );
        assert_eq!(code, 0, "{stderr}");
        codex_results(&lines)
    });
}

#[test]
fn claude_governed_and_hermetic_holds_the_governed_row() {
    let Some(bin) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let p = Project::new();
    let server = p.server(json!({ "turns": [
        [{"tool_use": {"name": "mcp__sixfold__write_file", "input": {"path": "note.txt", "content": "hermetic\n"}}}],
        [{"text": "Done."}],
    ]}));
    let mut args = strings(&["--binary", bin.to_str().unwrap(), "--root", p.root.to_str().unwrap()]);
    args.extend(strings(&[
        "--hermetic",
        "on",
        "--json",
        "--mode",
        "workspace-write",
        "--session",
        "cc-herm",
    ]));
    args.push("--env".into());
    args.push(format!("ANTHROPIC_BASE_URL={}", server.url()));
    args.extend(strings(&[
        "--api-key-env",
        "ANTHROPIC_API_KEY",
        "--",
        "--allowedTools=mcp__sixfold__write_file",
        "write a note",
    ]));
    let out = launch(&p, "claude-code", &args, &[("ANTHROPIC_API_KEY", "sk-test".into())]);
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let verdict = |id: &str| row(&report, id)["verdict"].as_str().unwrap().to_string();
    assert_eq!(verdict("G1"), "ok", "{}", row(&report, "G1"));
    assert_eq!(verdict("H5"), "ok", "{}", row(&report, "H5"));
    let governed = &report["attestation"]["governed"];
    assert_eq!(governed["imposed"], true);
    assert_eq!(governed["servers"], json!(["sixfold", "sixfold-approvals"]));
    assert!(governed["args"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a == "--permission-prompt-tool"));
    assert_eq!(std::fs::read_to_string(p.root.join("note.txt")).unwrap(), "hermetic\n");
}

/// One JSON-RPC conversation with `sixfold serve-tools` over its stdio: each request's answer.
fn converse(p: &Project, requests: &[Value]) -> Vec<Value> {
    use std::io::{BufRead, BufReader, Write};
    let mut child = Command::new(SIXFOLD)
        .args(["serve-tools", "--mode", "workspace-write", "--session", "rpc", "--root"])
        .arg(&p.root)
        .current_dir(&p.root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut answers = Vec::new();
    for request in requests {
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        if request.get("id").is_none() {
            continue;
        }
        let answer = loop {
            let line: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
            if line.get("id") == request.get("id") {
                break line;
            }
        };
        answers.push(answer);
    }
    drop(stdin);
    let _ = child.wait();
    answers
}

fn initialize(version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}})
}

/// Both `initialize` generations the CLIs send (Codex 2025-06-18, Claude Code 2025-11-25) are
/// answered in kind; a `server/discover` at 2026-07-28 (tried first by Claude Code) is answered
/// "unsupported protocol version" with the versions it has, which stop at 2025-11-25, so the
/// client falls back to `initialize`. A refusal is a tool error.
#[test]
fn serve_tools_speaks_both_initialize_generations() {
    let p = Project::new();
    for version in ["2025-06-18", "2025-11-25"] {
        let answers = converse(
            &p,
            &[
                initialize(version),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}),
                json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "write_file", "arguments": {"path": "/etc/sixfold-never", "content": "x"}}}),
            ],
        );
        assert_eq!(answers[0]["result"]["protocolVersion"], version, "{answers:?}");
        let names: Vec<&str> = answers[1]["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "read_file",
                "write_file",
                "edit_file",
                "list_dir",
                "glob",
                "grep",
                "bash"
            ]
        );
        assert_eq!(answers[2]["result"]["isError"], true, "{answers:?}");
        let text = answers[2]["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("outside the workspace"), "{text}");
    }
    assert!(!Path::new("/etc/sixfold-never").exists());
    let discovered = converse(
        &p,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}}),
        ],
    );
    // "Unsupported protocol version", naming the ones it has: the client falls back to them.
    let supported = &discovered[0]["error"]["data"]["supported"];
    assert!(
        supported.as_array().unwrap().contains(&json!("2025-11-25")),
        "{discovered:?}"
    );
    assert!(
        !supported.as_array().unwrap().contains(&json!("2026-07-28")),
        "{discovered:?}"
    );
    // The record of the session: the refusal, then the end.
    let events = p.events("rpc");
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "judged" && e["decision"] == "refuse"),
        "{events:?}"
    );
    assert_eq!(events.last().unwrap()["event"], "ended");
}

fn call_tool(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
}

fn text_of(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn handshake() -> Vec<Value> {
    vec![
        initialize("2025-06-18"),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ]
}

/// The agent's own shell swaps a parent directory for a symlink to the outside, in a loop
/// (`ln -sfn OUT d && mv -T`), while 300 `write_file` calls run: every file operation is opened
/// beneath its root with no symlink followed, so nothing lands outside; the writes that land,
/// land inside.
#[test]
fn a_racing_swapper_cannot_land_a_write_outside() {
    let p = Project::new();
    std::fs::create_dir_all(p.root.join("d")).unwrap();
    let outside = p.outside.path().canonicalize().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let swapper = {
        let (root, outside, stop) = (p.root.clone(), outside.clone(), stop.clone());
        std::thread::spawn(move || {
            let (d, real, link) = (root.join("d"), root.join("real"), root.join("link"));
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // `ln -sfn OUT link && mv -T d real && mv -T link d`, then back.
                let _ = std::fs::remove_file(&link);
                let _ = std::os::unix::fs::symlink(&outside, &link);
                if std::fs::rename(&d, &real).is_err() {
                    continue;
                }
                let _ = std::fs::rename(&link, &d);
                std::thread::sleep(Duration::from_micros(500));
                if std::fs::remove_file(&d).is_err() {
                    // A write made a fresh `d` while it was missing: it goes.
                    let _ = std::fs::remove_dir_all(&d);
                }
                let _ = std::fs::rename(&real, &d);
            }
        })
    };
    let mut requests = handshake();
    for n in 0..300u64 {
        requests.push(call_tool(
            10 + n,
            "write_file",
            json!({"path": format!("d/f{n}"), "content": "x"}),
        ));
    }
    let answers = converse(&p, &requests);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    swapper.join().unwrap();
    assert_eq!(answers.len(), 301, "every call was answered");
    let landed_outside: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        landed_outside.is_empty(),
        "{} writes landed outside: {landed_outside:?}",
        landed_outside.len()
    );
    // Must keep working: with nobody swapping, a write through the same path lands.
    let calm = converse(
        &p,
        &[
            handshake(),
            vec![call_tool(2, "write_file", json!({"path": "d/calm", "content": "x"}))],
        ]
        .concat(),
    );
    assert_eq!(calm[1]["result"]["isError"], false, "{calm:?}");
    assert!(p.root.join("d/calm").exists());
}

/// `grep`, `glob` and `list_dir` never return a secret: they skip it and say how many they
/// skipped; the same search still finds what is not a secret.
#[test]
fn listings_and_searches_never_show_a_secret() {
    let p = Project::new();
    std::fs::write(p.root.join(".env"), "API_TOKEN=sk-live-4711\n").unwrap();
    std::fs::create_dir_all(p.root.join("conf")).unwrap();
    std::fs::write(p.root.join("conf/.env.production"), "API_TOKEN=sk-prod-4712\n").unwrap();
    std::fs::write(p.root.join("conf/app.toml"), "API_TOKEN_NAME = \"plain-4713\"\n").unwrap();
    let mut requests = handshake();
    requests.extend([
        call_tool(2, "grep", json!({"pattern": "API_TOKEN"})),
        // Named, a secret is judged: a read of it, refused.
        call_tool(3, "grep", json!({"pattern": "TOKEN", "path": ".env"})),
        call_tool(4, "glob", json!({"pattern": "**/.env*"})),
        call_tool(5, "list_dir", json!({"path": "conf"})),
        call_tool(6, "read_file", json!({"path": ".env"})),
        call_tool(7, "glob", json!({"pattern": "**/*.toml"})),
    ]);
    let answers = converse(&p, &requests);
    for a in &answers[1..] {
        assert!(
            !a.to_string().contains("sk-live") && !a.to_string().contains("sk-prod"),
            "{a}"
        );
    }
    let grep = text_of(&answers[1]);
    assert!(grep.contains("plain-4713"), "must keep working: {grep}");
    assert!(grep.contains("2 secret(s) skipped"), "{grep}");
    assert!(text_of(&answers[2]).contains("reads a secret"), "{:?}", answers[2]);
    // A glob that can match a secret is judged as reading it (its pattern names what it may
    // match); one that cannot still lists, and never a secret.
    assert!(text_of(&answers[3]).contains("reads a secret"), "{:?}", answers[3]);
    let globbed = text_of(&answers[6]);
    assert!(
        globbed.contains("app.toml") && !globbed.contains(".env"),
        "must keep working: {globbed}"
    );
    let listed = text_of(&answers[4]);
    assert!(
        listed.starts_with("app.toml") && listed.contains("1 secret(s) skipped"),
        "{listed}"
    );
    assert_eq!(
        answers[5]["result"]["isError"], true,
        "read_file of a secret is judged and refused"
    );
}

/// A `write_file` over the size limit (17 MB) gets an answer, an error, never silence; a large
/// one within it still writes.
#[test]
fn an_oversized_write_file_is_answered_with_an_error() {
    let p = Project::new();
    let mut requests = handshake();
    requests.push(call_tool(
        2,
        "write_file",
        json!({"path": "big.txt", "content": "x".repeat(17 * 1024 * 1024)}),
    ));
    requests.push(call_tool(
        3,
        "write_file",
        json!({"path": "ok.txt", "content": "y".repeat(1024 * 1024)}),
    ));
    // Over the frame bound (96 MiB): not read, still answered under its id.
    requests.push(call_tool(
        4,
        "write_file",
        json!({"path": "huge.txt", "content": "z".repeat(97 * 1024 * 1024)}),
    ));
    requests.push(call_tool(5, "read_file", json!({"path": "ok.txt", "limit": 1})));
    let answers = converse(&p, &requests);
    assert_eq!(answers[3]["result"]["isError"], true, "{}", answers[3]);
    assert!(text_of(&answers[3]).contains("was not read"), "{}", answers[3]);
    assert!(!p.root.join("huge.txt").exists());
    assert!(
        text_of(&answers[4]).starts_with("yyy"),
        "the session goes on: {}",
        answers[4]
    );
    assert_eq!(answers[1]["result"]["isError"], true, "{}", answers[1]);
    assert!(text_of(&answers[1]).contains("larger than"), "{}", answers[1]);
    assert!(!p.root.join("big.txt").exists());
    assert_eq!(answers[2]["result"]["isError"], false, "{}", answers[2]);
    assert_eq!(std::fs::metadata(p.root.join("ok.txt")).unwrap().len(), 1024 * 1024);
}
