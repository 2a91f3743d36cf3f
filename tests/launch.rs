//! End-to-end: `sixfold launch` and `sixfold providers`, with the real Claude Code and Codex
//! driven by the scripted model server on loopback, and with stand-in vendors (small shell
//! scripts) where a test is about the launcher rather than the vendor.
//!
//! The real CLIs are found by `SIXFOLD_CLAUDE_BIN` / `SIXFOLD_CODEX_BIN`, else
//! `node_modules/.bin/` under the repository root, else PATH; when absent a test prints
//! `skipped: <reason>` and returns, unless `SIXFOLD_REQUIRE_E2E=1`, when it fails. Every server
//! listens on 127.0.0.1 and is stopped when its test ends. Every run's scratch (working copy,
//! config home, run directory) lives in the test's own temp dir (`TMPDIR` points there).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::{agent_cli, json_lines, tool_results, ModelServer};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// An API key value no output may ever show.
const SECRET: &str = "test-key-9f2c1e-never-printed";

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

/// A test's scratch: `runs/` (TMPDIR: the run directories), `home/`, `server/`, source trees.
struct Scratch {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in ["runs", "home", "server"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        Scratch { _dir: dir, root }
    }

    /// A source tree `name` with these files (parents made as needed).
    fn tree(&self, name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = self.root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        for (path, text) in files {
            let file = dir.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        dir
    }

    /// A stand-in vendor: a shell script.
    fn script(&self, name: &str, body: &str) -> PathBuf {
        let path = self.root.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        path
    }

    fn server(&self, script: Value) -> ModelServer {
        ModelServer::start(&script, &self.root, &self.root, &self.root.join("server"))
    }
}

/// A plain PATH: node (Codex is a node script) and the system's directories.
fn plain_path() -> String {
    let node = std::env::var_os("PATH")
        .and_then(|p| std::env::split_paths(&p).find(|d| d.join("node").is_file()))
        .map(|d| format!("{}:", d.display()))
        .unwrap_or_default();
    format!("{node}/usr/local/bin:/usr/bin:/bin")
}

/// One `sixfold launch … --json` and what it said.
#[derive(Debug)]
struct Launched {
    code: i32,
    report: Value,
    stdout: String,
    stderr: String,
}

impl Launched {
    fn verdicts(&self) -> BTreeMap<String, String> {
        self.report["rows"]
            .as_array()
            .unwrap_or_else(|| panic!("no rows: {}\n{}", self.stdout, self.stderr))
            .iter()
            .map(|r| {
                (
                    r["id"].as_str().unwrap().to_string(),
                    r["verdict"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn verdict(&self, id: &str) -> String {
        self.verdicts()
            .get(id)
            .cloned()
            .unwrap_or_else(|| panic!("no row {id}: {}", self.stdout))
    }

    fn evidence(&self, id: &str) -> String {
        self.report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .map(|r| r["evidence"].as_str().unwrap_or("").to_string())
            .unwrap_or_default()
    }

    fn row(&self, id: &str) -> Value {
        self.report["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .cloned()
            .unwrap()
    }

    /// The vendor's standard output (saved in the run directory under `--json`).
    fn vendor_lines(&self) -> Vec<Value> {
        let file = self.report["vendor"]["stdout_file"].as_str().expect("a stdout file");
        json_lines(&std::fs::read_to_string(file).unwrap())
    }

    fn run_dir(&self) -> PathBuf {
        PathBuf::from(self.report["run_dir"].as_str().unwrap())
    }

    fn expect(&self, code: i32) -> &Launched {
        assert_eq!(self.code, code, "exit code\n{}\n{}", self.summary(), self.stderr);
        self
    }

    fn summary(&self) -> String {
        self.report["rows"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .map(|r| {
                        format!(
                            "{} {}: {}",
                            r["id"].as_str().unwrap(),
                            r["verdict"].as_str().unwrap(),
                            r["evidence"].as_str().unwrap()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_else(|| self.stdout.clone())
    }
}

/// Runs `sixfold launch PROVIDER --json --no-project ARGS…` in the scratch, with a plain
/// environment plus `env` (the operator's world, as far as the test decides it).
fn launch(s: &Scratch, provider: &str, args: &[String], env: &[(&str, &str)]) -> Launched {
    let out = Command::new(SIXFOLD)
        .arg("launch")
        .arg(provider)
        .args(["--json", "--no-project"])
        .args(args)
        .current_dir(&s.root)
        .env_clear()
        .env("PATH", plain_path())
        .env("HOME", s.root.join("home"))
        .env("TMPDIR", s.root.join("runs"))
        .env("LANG", "C.UTF-8")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report = serde_json::from_str(stdout.trim()).unwrap_or(Value::Null);
    Launched {
        code: out.status.code().unwrap_or(-1),
        report,
        stdout,
        stderr,
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

const GATING: [&str; 10] = ["H1a", "H1b", "H3", "H4", "H5", "H7", "H8", "H9", "H10", "H11"];
const RECORD_ROWS: [&str; 7] = ["H1a", "H1b", "H4", "H5", "H7", "H9", "H10"];

/// Claude Code, hermetically, against the scripted model: `--binary`, the base URL declared.
fn claude(
    s: &Scratch,
    bin: &Path,
    server: &ModelServer,
    hermetic: &str,
    extra: &[&str],
    vendor: &[&str],
    env: &[(&str, &str)],
) -> Launched {
    let mut args = strings(&["--hermetic", hermetic, "--binary"]);
    args.push(bin.display().to_string());
    args.push("--env".into());
    args.push(format!("ANTHROPIC_BASE_URL={}", server.url()));
    args.extend(strings(extra));
    args.push("--".into());
    args.extend(strings(vendor));
    launch(s, "claude-code", &args, env)
}

/// A script that runs one Bash command and then answers in plain words (no success claim).
fn bash_then_answer(command: &str) -> Value {
    json!({ "turns": [
        [{ "text": "Let me look." }, { "tool_use": { "name": "Bash", "input": { "command": command, "description": "look" } } }],
        [{ "text": "Here is what I saw." }],
    ]})
}

fn answer_only() -> Value {
    json!({ "turns": [[{ "text": "Here is what I saw." }]] })
}

// ---------------------------------------------------------------------------------------------
// Claude Code, for real
// ---------------------------------------------------------------------------------------------

#[test]
fn claude_clean_strict_run_holds_every_gating_row() {
    let Some(bin) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let s = Scratch::new();
    let src = s.tree(
        "src",
        &[("CLAUDE.md", "# project\n"), ("a.txt", "hello from the copy\n")],
    );
    let server = s.server(bash_then_answer("cat a.txt"));
    let run = claude(
        &s,
        &bin,
        &server,
        "strict",
        &["--copy", src.to_str().unwrap(), "--api-key-env", "ANTHROPIC_API_KEY"],
        &["--allowedTools=Bash", "read a.txt"],
        &[("ANTHROPIC_API_KEY", SECRET), ("OPERATOR_ONLY", "not for the child")],
    );
    run.expect(0);
    let v = run.verdicts();
    for id in GATING.iter().chain(["H2", "H6"].iter()) {
        assert_eq!(v.get(*id).map(String::as_str), Some("ok"), "{id}\n{}", run.summary());
        assert!(!run.evidence(id).is_empty(), "{id} has no evidence");
    }
    // The twelve H rows, and G1 (governed runs, tests/governed.rs), which claims nothing here.
    assert_eq!(v.len(), 13, "{v:?}");
    assert_eq!(v.get("G1").map(String::as_str), Some("ok"));
    assert_eq!(run.row("H2")["severity"], "advisory");
    assert_eq!(run.row("H6")["severity"], "advisory");
    assert_eq!(run.row("H6")["assertion"], "effect");
    assert_eq!(
        run.row("H1a")["title"],
        "Config home is scratch — plugins are exactly the declared set"
    );
    assert!(run.evidence("H10").contains("CLAUDE.md"), "{}", run.evidence("H10"));
    assert!(run.evidence("H9").contains("2.1."), "{}", run.evidence("H9"));

    // The tool really ran, in the copy, governed by sixfold's hooks.
    let lines = run.vendor_lines();
    let results = tool_results(&lines);
    assert!(
        results
            .iter()
            .any(|(_, err, text)| !err && text.contains("hello from the copy")),
        "{results:?}"
    );
    let run_dir = run.run_dir();
    let work = run_dir.join("work");
    assert!(
        work.join(".sixfold/runs").is_dir(),
        "the hook logged the session in the copy"
    );
    assert!(!src.join(".sixfold").exists(), "the source tree is untouched");

    // The attestation: what was imposed, keys never values.
    let a = &run.report["attestation"];
    assert_eq!(a["hermetic"], "strict");
    assert_eq!(a["workdir"]["kind"], "copy");
    assert_eq!(a["cwd"], work.display().to_string());
    let keys: Vec<&str> = a["env"]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert!(
        keys.contains(&"ANTHROPIC_API_KEY") && keys.contains(&"CLAUDE_CONFIG_DIR"),
        "{keys:?}"
    );
    assert!(
        !keys.contains(&"OPERATOR_ONLY"),
        "an operator variable was inherited: {keys:?}"
    );
    let argv: Vec<&str> = a["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    for flag in [
        "--strict-mcp-config",
        "--setting-sources=user",
        "--output-format=stream-json",
        "-p",
    ] {
        assert!(argv.contains(&flag), "{flag} not in {argv:?}");
    }
    assert!(a["config_home"]["path"]
        .as_str()
        .unwrap()
        .starts_with(&run_dir.display().to_string()));
    assert_eq!(a["pin"]["declared"], false);
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("config/settings.json")).unwrap()).unwrap();
    for event in ["PreToolUse", "PostToolUse", "Stop", "SessionStart", "UserPromptSubmit"] {
        let command = settings["hooks"][event][0]["hooks"][0]["command"].as_str().unwrap();
        assert!(command.ends_with("sixfold hook claude-code"), "{event}: {command}");
    }
    // Ambient inputs and what is not claimed.
    let ambient: Vec<&str> = run.report["ambient_inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert!(ambient.contains(&"git status"), "{ambient:?}");
    let unclaimed: Vec<(&str, &str)> = run.report["unclaimed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["control"].as_str().unwrap(), x["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        unclaimed,
        [
            ("outer sandbox", "unclaimed"),
            ("network isolation", "unclaimed"),
            ("mount enforcement", "unclaimed")
        ]
    );
    // Written beside the run; no credential value anywhere.
    for file in ["attestation.json", "report.json"] {
        let text = std::fs::read_to_string(run_dir.join(file)).unwrap();
        assert!(!text.contains(SECRET), "{file} holds the key's value");
    }
    assert!(!run.stdout.contains(SECRET) && !run.stderr.contains(SECRET));
}

#[test]
fn claude_an_extra_mcp_server_is_an_h5_gap_and_a_seeded_mcp_json_is_ignored() {
    let Some(bin) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let s = Scratch::new();
    let src = s.tree(
        "src",
        &[
            (".mcp.json", r#"{"mcpServers":{"seeded":{"command":"/bin/true"}}}"#),
            ("extra-mcp.json", r#"{"mcpServers":{"extra":{"command":"/bin/true"}}}"#),
        ],
    );
    let server = s.server(answer_only());
    let copy = ["--copy", src.to_str().unwrap(), "--api-key-env", "ANTHROPIC_API_KEY"];
    let env = [("ANTHROPIC_API_KEY", SECRET)];

    // The tree's .mcp.json is not read: the MCP set is exactly the (empty) one given.
    let held = claude(&s, &bin, &server, "strict", &copy, &["hello"], &env);
    held.expect(0);
    assert_eq!(held.verdict("H5"), "ok", "{}", held.summary());

    // A server slipped in through the run's own arguments is seen in the record.
    let run = claude(
        &s,
        &bin,
        &server,
        "strict",
        &copy,
        &["--mcp-config=extra-mcp.json", "hello"],
        &env,
    );
    run.expect(1);
    assert_eq!(run.verdict("H5"), "gap", "{}", run.summary());
    let why = run.evidence("H5");
    assert!(why.contains("`extra`") && !why.contains("seeded"), "{why}");
    assert_eq!(run.verdict("H6"), "gap", "H6's evidence includes H5");
    assert_eq!(run.verdict("H1a"), "ok");
}

#[test]
fn claude_a_seeded_plugin_is_an_h1a_gap_and_a_declared_one_is_not() {
    let Some(bin) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let s = Scratch::new();
    let src = s.tree(
        "src",
        &[(
            "plug/.claude-plugin/plugin.json",
            r#"{"name":"seeded-plugin","version":"0.0.1","description":"seeded"}"#,
        )],
    );
    let server = s.server(answer_only());
    let env = [("ANTHROPIC_API_KEY", SECRET)];
    let mut copy = vec!["--copy", src.to_str().unwrap(), "--api-key-env", "ANTHROPIC_API_KEY"];

    let run = claude(
        &s,
        &bin,
        &server,
        "strict",
        &copy,
        &["--plugin-dir=plug", "hello"],
        &env,
    );
    run.expect(1);
    assert_eq!(run.verdict("H1a"), "gap", "{}", run.summary());
    assert!(run.evidence("H1a").contains("seeded-plugin"), "{}", run.evidence("H1a"));
    assert_eq!(run.verdict("H1b"), "ok", "H1a and H1b fail independently");

    let plug = src.join("plug");
    copy.extend(["--plugin", plug.to_str().unwrap()]);
    let declared = claude(&s, &bin, &server, "strict", &copy, &["hello"], &env);
    declared.expect(0);
    assert_eq!(declared.verdict("H1a"), "ok", "{}", declared.summary());
    assert!(declared.evidence("H1a").contains("seeded-plugin"));
}

#[test]
fn claude_an_undeclared_api_key_is_an_h4_gap() {
    let Some(bin) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let s = Scratch::new();
    let src = s.tree("src", &[("a.txt", "x\n")]);
    let server = s.server(answer_only());
    let key = format!("ANTHROPIC_API_KEY={SECRET}");
    let run = claude(
        &s,
        &bin,
        &server,
        "strict",
        &["--copy", src.to_str().unwrap(), "--env", &key],
        &["hello"],
        &[],
    );
    run.expect(1);
    assert_eq!(run.verdict("H4"), "gap", "{}", run.summary());
    assert!(run.evidence("H4").contains("declared none"), "{}", run.evidence("H4"));
    assert_eq!(run.verdict("H6"), "gap");
    assert_eq!(run.verdict("H3"), "ok", "passed with --env, it is a declared input");
    assert!(!run.stdout.contains(SECRET) && !run.stderr.contains(SECRET));
}

#[test]
fn claude_a_pin_that_does_not_match_is_an_h9_gap() {
    let Some(bin) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let s = Scratch::new();
    let src = s.tree("src", &[("a.txt", "x\n")]);
    let server = s.server(answer_only());
    let args = [
        "--copy",
        src.to_str().unwrap(),
        "--api-key-env",
        "ANTHROPIC_API_KEY",
        "--pin",
        "0.0.1",
    ];
    let env = [("ANTHROPIC_API_KEY", SECRET)];

    // on: the run goes ahead and the verdict says so; the exit code is the vendor's.
    let on = claude(&s, &bin, &server, "on", &args, &["hello"], &env);
    on.expect(0);
    assert_eq!(on.verdict("H9"), "gap", "{}", on.summary());
    assert!(on.evidence("H9").contains("0.0.1"));
    assert_eq!(on.report["vendor"]["started"], true);

    // strict: a run that cannot hold is not started at all.
    let strict = claude(&s, &bin, &server, "strict", &args, &["hello"], &env);
    strict.expect(1);
    assert_eq!(strict.verdict("H9"), "gap", "{}", strict.summary());
    assert_eq!(strict.report["vendor"]["started"], false);
    assert_eq!(strict.verdict("H7"), "unk", "no record: unk, never ok or gap");
}

#[test]
fn claude_a_governing_document_changed_during_the_run_is_an_h10_gap() {
    let Some(bin) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let s = Scratch::new();
    // The project lets the agent write its workspace (sixfold's hook judges the Bash step).
    let src = s.tree(
        "src",
        &[
            ("CLAUDE.md", "# rules\n"),
            (".sixfold/state.toml", "mode = \"workspace-write\"\n"),
        ],
    );
    // The operator trusts the project's bundle (a repository's own state only narrows until
    // then); the run's copy has the same content, so the hook in the run trusts it too.
    let trusted = Command::new(SIXFOLD)
        .args(["trust", src.to_str().unwrap()])
        .env_clear()
        .env("HOME", s.root.join("home"))
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{}", String::from_utf8_lossy(&trusted.stderr));
    let server = s.server(bash_then_answer("echo '# and one more rule' >> CLAUDE.md"));
    let run = claude(
        &s,
        &bin,
        &server,
        "strict",
        &["--copy", src.to_str().unwrap(), "--api-key-env", "ANTHROPIC_API_KEY"],
        &["--allowedTools=Bash", "add a rule"],
        &[("ANTHROPIC_API_KEY", SECRET)],
    );
    let results = tool_results(&run.vendor_lines());
    assert!(results.iter().any(|(_, err, _)| !err), "the Bash step ran: {results:?}");
    run.expect(1);
    assert_eq!(run.verdict("H10"), "gap", "{}", run.summary());
    assert!(
        run.evidence("H10").contains("CLAUDE.md (changed)"),
        "{}",
        run.evidence("H10")
    );
    assert_eq!(
        std::fs::read_to_string(src.join("CLAUDE.md")).unwrap(),
        "# rules\n",
        "the source is untouched"
    );
}

#[test]
fn claude_a_memory_file_above_the_working_directory_is_an_h11_gap() {
    let Some(bin) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let s = Scratch::new();
    s.tree("outer", &[("CLAUDE.md", "# from above\n"), ("inner/a.txt", "x\n")]);
    let inner = s.root.join("outer/inner");
    let server = s.server(answer_only());
    let run = claude(
        &s,
        &bin,
        &server,
        "strict",
        &["--root", inner.to_str().unwrap(), "--api-key-env", "ANTHROPIC_API_KEY"],
        &["hello"],
        &[("ANTHROPIC_API_KEY", SECRET)],
    );
    run.expect(1);
    assert_eq!(run.verdict("H11"), "gap", "{}", run.summary());
    let above = s.root.join("outer/CLAUDE.md").display().to_string();
    assert!(run.evidence("H11").contains(&above), "{}", run.evidence("H11"));
    assert_eq!(
        run.verdict("H7"),
        "ok",
        "the declared root is ours: {}",
        run.evidence("H7")
    );
    assert_eq!(run.report["attestation"]["workdir"]["kind"], "root");
}

// ---------------------------------------------------------------------------------------------
// Codex, for real: as far as its record allows
// ---------------------------------------------------------------------------------------------

fn codex(s: &Scratch, bin: &Path, server: &ModelServer, hermetic: &str, extra: &[&str], vendor: &[&str]) -> Launched {
    let mut args = strings(&["--hermetic", hermetic, "--binary"]);
    args.push(bin.display().to_string());
    args.extend(strings(&["--api-key-env", "X_KEY"]));
    args.extend(strings(extra));
    args.push("--".into());
    args.extend(strings(&["--json", "-s", "workspace-write", "-c"]));
    args.push(format!(
        "model_providers.x={{name=\"x\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"X_KEY\"}}",
        server.url()
    ));
    args.extend(strings(&["-c", "model_provider=x", "-m", "gpt-5.5"]));
    args.extend(strings(vendor));
    launch(s, "codex", &args, &[("X_KEY", SECRET)])
}

#[test]
fn codex_strict_hermetic_run_holds_every_gating_row() {
    let Some(bin) = agent_cli("SIXFOLD_CODEX_BIN", "codex") else {
        return;
    };
    let s = Scratch::new();
    let src = s.tree("src", &[("AGENTS.md", "# agents\n")]);
    let server = s.server(answer_only());
    let run = codex(
        &s,
        &bin,
        &server,
        "strict",
        &["--copy", src.to_str().unwrap()],
        &["look around"],
    );
    run.expect(0);
    for row in run.report["rows"].as_array().unwrap() {
        if row["severity"] == "gating" {
            assert_eq!(row["verdict"], "ok", "{}\n{}", row["id"], run.summary());
        }
    }
    // H1a, H4 and H5 rest on the vendor's own reports on the run's configuration, taken right
    // after it with the same CODEX_HOME, environment and `-c` overrides (#14).
    let record = &run.report["facts"]["record"];
    for (name, args) in [
        ("doctor", "doctor --json"),
        ("mcp", "mcp list --json"),
        ("plugins", "plugin list --json"),
    ] {
        let taken = &record["reports"][name];
        assert_eq!(taken["answered"], true, "{name}: {taken}");
        let argv: Vec<&str> = taken["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert!(argv.join(" ").starts_with(args), "{name}: {argv:?}");
        assert!(
            argv.contains(&"model_provider=x"),
            "the run's overrides are the report's: {argv:?}"
        );
    }
    assert_eq!(record["fields"]["mcp_servers"], json!([]), "{record}");
    assert_eq!(record["fields"]["plugins"], json!([]), "{record}");
    assert_eq!(record["fields"]["api_key_source"], "X_KEY", "{record}");
    assert!(
        run.evidence("H4").contains("`X_KEY`, which the run declared"),
        "{}",
        run.evidence("H4")
    );
    assert!(
        run.evidence("H1b").contains("has no output styles"),
        "{}",
        run.evidence("H1b")
    );
    // sixfold's hooks are in the scratch CODEX_HOME, run though nobody trusted them (#14).
    assert_eq!(run.verdict("H8"), "ok", "{}", run.evidence("H8"));
    assert!(run.evidence("H8").contains("config.toml"), "{}", run.evidence("H8"));
    assert_eq!(
        run.verdict("H2"),
        "unk",
        "advisory: Codex has no way to exclude setting sources"
    );
    assert!(run.evidence("H10").contains("AGENTS.md"));
    assert!(run.report["facts"]["record"]["source"]
        .as_str()
        .unwrap()
        .contains("rollout-"));
    assert!(!run.stdout.contains(SECRET) && !run.stderr.contains(SECRET));
}

#[test]
fn codex_an_ambient_mcp_server_in_the_operators_config_is_kept_out() {
    let Some(bin) = agent_cli("SIXFOLD_CODEX_BIN", "codex") else {
        return;
    };
    let s = Scratch::new();
    let operator_home = s.root.join("home/.codex");
    std::fs::create_dir_all(&operator_home).unwrap();
    std::fs::write(
        operator_home.join("config.toml"),
        "[mcp_servers.ambient]\ncommand = \"/bin/true\"\n",
    )
    .unwrap();
    // The same report, on the operator's own config home, names the server: it would show.
    let out = Command::new(&bin)
        .args(["mcp", "list", "--json"])
        .current_dir(&s.root)
        .env_clear()
        .env("PATH", plain_path())
        .env("HOME", s.root.join("home"))
        .env("CODEX_HOME", &operator_home)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed[0]["name"], "ambient", "{listed}");

    let src = s.tree("src", &[("a.txt", "x\n")]);
    let server = s.server(answer_only());
    let mut args = strings(&["--hermetic", "strict", "--binary"]);
    args.push(bin.display().to_string());
    args.extend(strings(&[
        "--api-key-env",
        "X_KEY",
        "--copy",
        src.to_str().unwrap(),
        "--",
    ]));
    args.extend(strings(&["--json", "-c"]));
    args.push(format!(
        "model_providers.x={{name=\"x\",base_url=\"{}/v1\",wire_api=\"responses\",env_key=\"X_KEY\"}}",
        server.url()
    ));
    args.extend(strings(&["-c", "model_provider=x", "-m", "gpt-5.5", "look around"]));
    let codex_home = operator_home.display().to_string();
    let run = launch(&s, "codex", &args, &[("X_KEY", SECRET), ("CODEX_HOME", &codex_home)]);
    run.expect(0);
    assert_eq!(run.verdict("H5"), "ok", "{}", run.summary());
    assert_eq!(run.report["facts"]["record"]["fields"]["mcp_servers"], json!([]));
    assert!(run.evidence("H5").contains("none"), "{}", run.evidence("H5"));
    assert!(!run.summary().contains("ambient"), "{}", run.summary());
}

#[test]
fn codex_a_pin_a_moved_agents_md_and_one_above_are_gaps() {
    let Some(bin) = agent_cli("SIXFOLD_CODEX_BIN", "codex") else {
        return;
    };
    let s = Scratch::new();
    s.tree(
        "outer",
        &[("AGENTS.md", "# from above\n"), ("inner/AGENTS.md", "# agents\n")],
    );
    let inner = s.root.join("outer/inner");
    // Changed behind the agent's back (by the server): the agent's own write is an ask in the
    // default mode, which the Codex hook refuses.
    let agents = inner.join("AGENTS.md").display().to_string();
    let server = s.server(json!({ "turns": [
        [{ "run": ["sh", "-c", format!("echo '# one more' >> '{agents}'")] }, { "text": "Here is what I saw." }],
    ]}));
    let run = codex(
        &s,
        &bin,
        &server,
        "on",
        &["--root", inner.to_str().unwrap(), "--pin", "0.0.1"],
        &["add a rule"],
    );
    run.expect(0);
    assert_eq!(run.verdict("H9"), "gap", "{}", run.summary());
    assert_eq!(run.verdict("H10"), "gap", "{}", run.summary());
    assert!(
        run.evidence("H10").contains("AGENTS.md (changed)"),
        "{}",
        run.evidence("H10")
    );
    assert_eq!(run.verdict("H11"), "gap", "{}", run.summary());
    assert_eq!(run.verdict("H7"), "ok", "{}", run.summary());
}

// ---------------------------------------------------------------------------------------------
// Stand-in vendors: the launcher's own mechanism, with no real CLI needed
// ---------------------------------------------------------------------------------------------

/// Answers `--version` like Claude Code, prints an init line (cwd from `FAKE_CWD`, else where it
/// runs), then its environment's keys.
const FAKE_CLAUDE: &str = r#"if [ "$1" = "--version" ]; then echo "2.1.332 (Claude Code)"; exit 0; fi
cwd=${FAKE_CWD:-$(pwd -P)}
printf '{"type":"system","subtype":"init","cwd":"%s","plugins":[],"mcp_servers":[],"apiKeySource":"none","claude_code_version":"2.1.332","output_style":"default"}\n' "$cwd"
env | cut -d= -f1 | sed 's/^/env: /'
exit "${FAKE_EXIT:-0}"
"#;

#[test]
fn a_vendor_that_exits_before_its_record_leaves_the_record_rows_unk() {
    let s = Scratch::new();
    let src = s.tree("src", &[("a.txt", "x\n")]);
    let dead = s.script("dead-vendor", "exit 1\n");
    let args = |hermetic: &str| {
        strings(&[
            "--hermetic",
            hermetic,
            "--binary",
            dead.to_str().unwrap(),
            "--copy",
            src.to_str().unwrap(),
            "--",
            "hello",
        ])
    };
    let strict = launch(&s, "claude-code", &args("strict"), &[]);
    strict.expect(3);
    assert_eq!(strict.report["vendor"]["exit"], 1);
    for id in RECORD_ROWS.iter().filter(|id| **id != "H10") {
        assert_eq!(strict.verdict(id), "unk", "{id}\n{}", strict.summary());
    }
    assert!(
        strict.evidence("H1a").contains("printed no record"),
        "{}",
        strict.evidence("H1a")
    );
    assert!(
        strict.evidence("H9").contains("no version was pinned"),
        "{}",
        strict.evidence("H9")
    );
    for id in ["H3", "H8", "H10", "H11"] {
        assert_eq!(strict.verdict(id), "ok", "{id}\n{}", strict.summary());
    }
    // on: reported, and the exit code is the vendor's own.
    launch(&s, "claude-code", &args("on"), &[]).expect(1);
}

#[test]
fn hermetic_runs_construct_the_environment_and_off_inherits_it() {
    let s = Scratch::new();
    let src = s.tree("src", &[("a.txt", "x\n")]);
    let fake = s.script("claude", FAKE_CLAUDE);
    let operator = [
        ("OPERATOR_ONLY", "1"),
        ("ANTHROPIC_API_KEY", SECRET),
        ("CLAUDE_CODE_SIMPLE", "1"),
    ];
    let base = |hermetic: &str| {
        strings(&[
            "--hermetic",
            hermetic,
            "--binary",
            fake.to_str().unwrap(),
            "--copy",
            src.to_str().unwrap(),
        ])
    };

    let mut args = base("strict");
    args.extend(strings(&["--env", "DECLARED=yes", "--", "hello"]));
    let on = launch(&s, "claude-code", &args, &operator);
    on.expect(0);
    let seen: Vec<String> = std::fs::read_to_string(on.report["vendor"]["stdout_file"].as_str().unwrap())
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("env: ").map(str::to_string))
        .collect();
    for key in ["DECLARED", "CLAUDE_CONFIG_DIR", "HOME", "PATH"] {
        assert!(seen.iter().any(|k| k == key), "{key} missing from {seen:?}");
    }
    for key in ["OPERATOR_ONLY", "ANTHROPIC_API_KEY", "CLAUDE_CODE_SIMPLE"] {
        assert!(!seen.iter().any(|k| k == key), "{key} was inherited: {seen:?}");
    }
    assert_eq!(on.verdict("H3"), "ok", "{}", on.summary());
    assert_eq!(on.verdict("H4"), "ok");
    assert_eq!(on.verdict("H8"), "ok");

    let mut args = base("off");
    args.extend(strings(&["--", "hello"]));
    let off = launch(&s, "claude-code", &args, &operator);
    off.expect(0);
    assert_eq!(off.report["rows"], json!([]), "off checks nothing");
    assert_eq!(off.report["attestation"]["hermetic"], "off");
    let text = std::fs::read_to_string(off.report["vendor"]["stdout_file"].as_str().unwrap()).unwrap();
    assert!(text.contains("env: OPERATOR_ONLY"), "off inherits the operator's world");
}

#[test]
fn a_record_from_elsewhere_or_a_skipping_flag_are_gaps() {
    let s = Scratch::new();
    let src = s.tree("src", &[("a.txt", "x\n")]);
    let fake = s.script("claude", FAKE_CLAUDE);
    let mut args = strings(&[
        "--hermetic",
        "strict",
        "--binary",
        fake.to_str().unwrap(),
        "--copy",
        src.to_str().unwrap(),
    ]);
    args.extend(strings(&[
        "--env",
        "FAKE_CWD=/somewhere/else",
        "--",
        "--bare",
        "--setting-sources=user,project",
        "hi",
    ]));
    let run = launch(&s, "claude-code", &args, &[]);
    run.expect(1);
    assert_eq!(run.verdict("H7"), "gap", "{}", run.summary());
    assert!(run.evidence("H7").contains("/somewhere/else"));
    assert_eq!(run.verdict("H8"), "gap", "{}", run.summary());
    assert!(run.evidence("H8").contains("--bare"));
    assert_eq!(run.verdict("H2"), "gap", "{}", run.summary());
}

#[test]
fn text_output_keeps_stdout_for_the_vendor_and_prints_the_table_on_stderr() {
    let s = Scratch::new();
    let src = s.tree("src", &[("a.txt", "x\n")]);
    let fake = s.script("claude", FAKE_CLAUDE);
    let out = Command::new(SIXFOLD)
        .args([
            "launch",
            "claude-code",
            "--hermetic",
            "--no-project",
            "--binary",
            fake.to_str().unwrap(),
        ])
        .args(["--copy", src.to_str().unwrap(), "--", "hi"])
        .current_dir(&s.root)
        .env_clear()
        .env("PATH", plain_path())
        .env("TMPDIR", s.root.join("runs"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.starts_with("{\"type\":\"system\",\"subtype\":\"init\""),
        "{stdout}"
    );
    assert!(
        stderr.contains("hermetic on") && stderr.contains("H11") && stderr.contains("git status"),
        "{stderr}"
    );
    assert!(stderr.contains("unclaimed") && stderr.contains("exit 0"), "{stderr}");
}

#[test]
fn launch_errors_say_what_is_wrong() {
    let s = Scratch::new();
    let nothing = launch(&s, "nope", &strings(&["--", "hi"]), &[]);
    nothing.expect(2);
    assert!(nothing.stderr.contains("no provider `nope`"), "{}", nothing.stderr);
    // A run may not undo what keeps the project's own configuration out (OpenCode's variable).
    let opencode = launch(
        &s,
        "opencode",
        &strings(&[
            "--hermetic",
            "on",
            "--binary",
            "/bin/true",
            "--env",
            "OPENCODE_DISABLE_PROJECT_CONFIG=0",
        ]),
        &[],
    );
    opencode.expect(2);
    assert!(
        opencode
            .stderr
            .contains("would undo what keeps other setting sources out"),
        "{}",
        opencode.stderr
    );
    let out = Command::new(SIXFOLD)
        .args(["launch", "codex", "--hermetic", "on", "--no-project"])
        .current_dir(&s.root)
        .env_clear()
        .env("PATH", s.root.join("home"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("codex is absent") && stderr.contains("npm install -g @openai/codex"),
        "{stderr}"
    );
    let fake = s.script("claude", FAKE_CLAUDE);
    let key = launch(
        &s,
        "claude-code",
        &strings(&[
            "--hermetic",
            "on",
            "--binary",
            fake.to_str().unwrap(),
            "--api-key-env",
            "UNSET_KEY",
            "--",
            "hi",
        ]),
        &[],
    );
    key.expect(2);
    assert!(
        key.stderr
            .contains("`--api-key-env UNSET_KEY` names a variable that is not set"),
        "{}",
        key.stderr
    );
    let home = launch(
        &s,
        "claude-code",
        &strings(&[
            "--hermetic",
            "on",
            "--binary",
            fake.to_str().unwrap(),
            "--env",
            "CLAUDE_CONFIG_DIR=/x",
            "--",
            "hi",
        ]),
        &[],
    );
    home.expect(2);
    assert!(
        home.stderr.contains("would replace the scratch config home"),
        "{}",
        home.stderr
    );
    let left: Vec<_> = std::fs::read_dir(s.root.join("runs")).unwrap().collect();
    assert!(
        left.is_empty(),
        "a launch that was not made leaves no run directory: {left:?}"
    );
}

#[test]
fn providers_gives_the_five_answers() {
    let s = Scratch::new();
    let bin = s.root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = |name: &str, body: &str| {
        let path = s.script(name, body);
        std::fs::rename(&path, bin.join(name)).unwrap();
    };
    // Signed out: `auth status` exits 1. Codex is older than the provider file supports.
    script(
        "claude",
        "case \"$1\" in --version) echo '2.1.332 (Claude Code)';; auth) exit 1;; esac\n",
    );
    script("codex", "case \"$1\" in --version) echo 'codex-cli 0.1.0';; esac\n");
    let run = |path: &Path| {
        let out = Command::new(SIXFOLD)
            .args(["providers", "--json", "--no-project"])
            .current_dir(&s.root)
            .env_clear()
            .env("PATH", path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["providers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["id"].as_str().unwrap().to_string(), p.clone()))
            .collect::<BTreeMap<String, Value>>()
    };
    let found = run(&bin);
    assert_eq!(
        found["claude-code"]["status"], "signed-out",
        "{:?}",
        found["claude-code"]
    );
    assert_eq!(found["claude-code"]["version"], "2.1.332");
    assert_eq!(found["codex"]["status"], "unsupported", "{:?}", found["codex"]);
    assert_eq!(found["opencode"]["status"], "absent");
    assert_eq!(found["opencode"]["install_hint"], "npm install -g opencode-ai");
    assert_eq!(found["opencode"]["hermetic"], true);

    // Ready; an answer nobody explains is unknown; a provider with no way to ask is unknown.
    script(
        "claude",
        "case \"$1\" in --version) echo '2.1.332 (Claude Code)';; auth) exit 0;; esac\n",
    );
    std::fs::remove_file(bin.join("codex")).unwrap();
    script(
        "codex",
        "case \"$1\" in --version) echo 'codex-cli 0.171.0';; login) exit 7;; esac\n",
    );
    script("opencode", "echo 1.0.0\n");
    let found = run(&bin);
    assert_eq!(found["claude-code"]["status"], "ready", "{:?}", found["claude-code"]);
    assert_eq!(found["codex"]["status"], "unknown", "{:?}", found["codex"]);
    assert!(found["codex"]["reason"].as_str().unwrap().contains("exited 7"));
    assert_eq!(found["opencode"]["status"], "unknown", "{:?}", found["opencode"]);

    let out = Command::new(SIXFOLD)
        .args(["providers", "--no-project"])
        .current_dir(&s.root)
        .env_clear()
        .env("PATH", &bin)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("claude-code") && text.contains("ready") && text.contains("2.1.332"),
        "{text}"
    );
}

#[test]
fn a_policy_bundle_above_the_root_is_reported_and_pinned() {
    let s = Scratch::new();
    s.tree(
        "outer",
        &[(".sixfold/policies/p.toml", "id = \"p\"\n"), ("inner/a.txt", "x\n")],
    );
    let inner = s.root.join("outer/inner");
    let fake = s.script("claude", FAKE_CLAUDE);
    let args = strings(&[
        "--hermetic",
        "strict",
        "--binary",
        fake.to_str().unwrap(),
        "--root",
        inner.to_str().unwrap(),
        "--",
        "hi",
    ]);
    let run = launch(&s, "claude-code", &args, &[]);
    run.expect(0);
    let ambient: Vec<&str> = run.report["ambient_inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert!(
        ambient.contains(&"policy bundle above the working directory"),
        "{ambient:?}"
    );
    assert_eq!(run.report["attestation"]["bundle"]["inside"], false);
    let pinned = s.root.join("outer/.sixfold/policies/p.toml").display().to_string();
    assert_eq!(run.verdict("H10"), "ok", "{}", run.summary());
    assert!(run.evidence("H10").contains(&pinned), "{}", run.evidence("H10"));

    // A copy gets a `.sixfold/` of its own, so nothing above it governs it.
    let args = strings(&[
        "--hermetic",
        "on",
        "--binary",
        fake.to_str().unwrap(),
        "--copy",
        inner.to_str().unwrap(),
        "--",
        "hi",
    ]);
    let copy = launch(&s, "claude-code", &args, &[]);
    copy.expect(0);
    assert_eq!(copy.report["attestation"]["bundle"]["inside"], true);
    assert_eq!(copy.report["attestation"]["bundle"]["made"], true);
}

// ---------------------------------------------------------------------------------------------
// The launch facts: typed, published, and what the rows' examples are checked against
// ---------------------------------------------------------------------------------------------

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn sixfold(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(SIXFOLD)
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_launch_facts_of_a_run_are_the_typed_struct_and_the_committed_schema_is_the_binarys() {
    let (code, stdout, _) = sixfold(&["schema", "launch-facts"]);
    assert_eq!(code, 0);
    let printed: Value = serde_json::from_str(&stdout).unwrap();
    let committed: Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("docs/schema/launch-facts.json")).unwrap()).unwrap();
    assert_eq!(
        printed, committed,
        "regenerate it with `sixfold schema launch-facts > docs/schema/launch-facts.json`"
    );
    let (_, all, _) = sixfold(&["schema"]);
    assert_eq!(serde_json::from_str::<Value>(&all).unwrap()["launch-facts"], printed);

    // A hermetic run's `facts.launch` reads back as the struct, whole, and fits its own check.
    let s = Scratch::new();
    let src = s.tree("src", &[("a.txt", "x\n")]);
    let fake = s.script("claude", FAKE_CLAUDE);
    let mut args = strings(&["--hermetic", "on", "--binary", fake.to_str().unwrap(), "--copy"]);
    args.extend(strings(&[src.to_str().unwrap(), "--plugin", "named", "--", "hello"]));
    let run = launch(&s, "claude-code", &args, &[]);
    run.expect(0);
    let launch_facts = &run.report["facts"]["launch"];
    let typed: sixfold_core::launch_facts::LaunchFacts = serde_json::from_value(launch_facts.clone())
        .unwrap_or_else(|e| panic!("facts.launch is not the typed struct: {e}\n{launch_facts:#}"));
    assert_eq!(typed.plugin_names, ["named"]);
    assert!(typed.config_home.scratch);
    sixfold_core::launch_facts::check_example(launch_facts).unwrap();
    assert_eq!(
        &serde_json::to_value(&typed).unwrap(),
        launch_facts,
        "nothing lost or added"
    );
}

#[test]
fn a_row_example_with_a_misspelt_launch_fact_is_reported_where_it_is() {
    let dir = repo().join("tests/fixtures/bad-bundles/misspelt-launch-fact");
    let (code, stdout, stderr) = sixfold(&["check", "--no-project", "--json", "--bundle", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    let diagnostics = report["diagnostics"].as_array().unwrap();
    assert_eq!(diagnostics.len(), 1, "{diagnostics:#?}");
    let d = &diagnostics[0];
    assert!(
        d["file"]
            .as_str()
            .unwrap()
            .ends_with("misspelt-launch-fact/policies/typo.toml"),
        "{d}"
    );
    assert_eq!(d["line"], 19, "{d}");
    assert!(d["column"].as_u64().unwrap() >= 1, "{d}");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .ends_with("`facts.launch.config_hom` is not a launch fact (did you mean `config_home`?)"),
        "{d}"
    );
    assert!(
        d["hint"].as_str().unwrap().contains("sixfold schema launch-facts"),
        "{d}"
    );
    let (code, _, stderr) = sixfold(&["check", "--no-project", "--bundle", dir.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(stderr.contains("typo.toml:19:1"), "{stderr}");
    assert!(stderr.contains("= help:"), "{stderr}");
    // The shipped rows' examples all fit.
    let (code, _, stderr) = sixfold(&["check", "--no-project"]);
    assert_eq!(code, 0, "{stderr}");
}
