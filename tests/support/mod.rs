//! Shared pieces of the end-to-end tests: finding the real agent CLIs, the scripted model server.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The repository root.
pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The real CLI named by `env_var`, else `node_modules/.bin/<name>` in the repository, else on
/// PATH. `None` (after printing why) when absent; with `SIXFOLD_REQUIRE_E2E=1` absence fails.
pub(crate) fn agent_cli(env_var: &str, name: &str) -> Option<PathBuf> {
    let found = std::env::var_os(env_var)
        .map(PathBuf::from)
        .filter(|p| p.is_file())
        .or_else(|| Some(repo().join("node_modules/.bin").join(name)).filter(|p| p.is_file()))
        .or_else(|| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        });
    if found.is_none() {
        let why = format!("{name} is not installed (set {env_var}, or run `npm install` in the repository root)");
        if std::env::var("SIXFOLD_REQUIRE_E2E").is_ok_and(|v| v == "1") {
            panic!("SIXFOLD_REQUIRE_E2E=1 but {why}");
        }
        println!("skipped: {why}");
    }
    found
}

/// The scripted model server on loopback, stopped when dropped.
pub(crate) struct ModelServer {
    child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl ModelServer {
    /// Starts `tests/model-server/server.py` with a script, `{{workspace}}` set to `workspace`,
    /// in the directory `cwd` (where its `run` blocks run).
    pub(crate) fn start(script: &serde_json::Value, workspace: &Path, cwd: &Path, scratch: &Path) -> ModelServer {
        let script_file = scratch.join("script.json");
        std::fs::write(&script_file, serde_json::to_string_pretty(script).unwrap()).unwrap();
        let port_file = scratch.join("port");
        let log = scratch.join("requests.jsonl");
        let child = Command::new("python3")
            .arg(repo().join("tests/model-server/server.py"))
            .arg("--script")
            .arg(&script_file)
            .arg("--port-file")
            .arg(&port_file)
            .arg("--log")
            .arg(&log)
            .arg("--idle-exit")
            .arg("300")
            .arg("--var")
            .arg(format!("workspace={}", workspace.display()))
            .current_dir(cwd)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the scripted model server (python3)");
        let started = Instant::now();
        let port = loop {
            if let Ok(text) = std::fs::read_to_string(&port_file) {
                if let Ok(p) = text.trim().parse() {
                    break p;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the model server did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        ModelServer { child, port, log }
    }

    /// `http://127.0.0.1:PORT`.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines of a JSON Lines file (or output).
pub(crate) fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// `tool_result` blocks of a Claude Code stream: (tool_use_id, is_error, content text).
pub(crate) fn tool_results(stream: &[serde_json::Value]) -> Vec<(String, bool, String)> {
    let mut out = Vec::new();
    for line in stream.iter().filter(|l| l["type"] == "user") {
        for block in line["message"]["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                let content = match &block["content"] {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                out.push((
                    block["tool_use_id"].as_str().unwrap_or("").to_string(),
                    block["is_error"] == true,
                    content,
                ));
            }
        }
    }
    out
}

/// Claude Code run headless (`-p "do the task"`, stream-json) in `project` against the scripted
/// model at `model_url`, from a cleared environment with a test key and no background traffic;
/// `setup` adds the rest (`HOME`, `PATH`, `CLAUDE_CONFIG_DIR`, more arguments). Its stream-json
/// lines; panics, with what it printed, when it did not finish.
pub(crate) fn claude_stream(
    claude: &Path,
    project: &Path,
    model_url: &str,
    setup: impl FnOnce(&mut Command),
) -> Vec<serde_json::Value> {
    let mut command = Command::new(claude);
    command
        .args(["-p", "do the task", "--output-format", "stream-json", "--verbose"])
        .current_dir(project)
        .env_clear()
        .env("ANTHROPIC_BASE_URL", model_url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        // Claude Code 2.1.332 lists MCP tools by name in a message and loads them through its
        // ToolSearch tool; with search off they are in the request's `tools`, where the tests
        // (and the scripted model) read which tools were offered.
        .env("ENABLE_TOOL_SEARCH", "false")
        .stdin(Stdio::null());
    setup(&mut command);
    let out = command.output().unwrap();
    let stream = json_lines(&String::from_utf8_lossy(&out.stdout));
    assert!(
        stream.iter().any(|l| l["type"] == "result"),
        "claude did not finish: status {:?}\nstderr: {}\nstdout: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    stream
}

/// A scratch directory outside the system temp dir (writes there are "outside the workspace",
/// not "the temp dir"), wherever the repository itself was checked out.
pub(crate) fn outside_tmp() -> tempfile::TempDir {
    let tmp = [PathBuf::from("/tmp"), std::env::temp_dir()];
    let candidates = [
        PathBuf::from("/var/tmp"),
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
        std::env::current_dir().unwrap(),
    ];
    for dir in candidates {
        let Ok(real) = dir.canonicalize() else { continue };
        let in_tmp = tmp
            .iter()
            .filter_map(|t| t.canonicalize().ok())
            .any(|t| real.starts_with(t));
        if !in_tmp {
            if let Ok(d) = tempfile::Builder::new().prefix("sixfold-outside-").tempdir_in(&real) {
                return d;
            }
        }
    }
    panic!("no writable directory outside the temp dir for this test");
}

/// Runs `command` with `input` on its standard input (closed after it), its output captured.
pub(crate) fn fed(command: &mut Command, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A program may end without reading its input (a hook command that cannot start): the
    // closed pipe is its answer, not the test's failure.
    match child.stdin.take().unwrap().write_all(input) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        written => written.unwrap(),
    }
    child.wait_with_output().unwrap()
}
