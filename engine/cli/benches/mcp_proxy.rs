//! The latency `sixfold mcp-proxy` adds to one MCP tool call: the same calls made to the real
//! `@modelcontextprotocol/server-filesystem` directly, and through the proxy in front of it, in
//! one process each (many calls after one handshake): first all direct calls, then all proxied
//! ones, or (`SIXFOLD_BENCH_ALTERNATE=1`) the two alternating call by call. Each call is one frame written and its
//! answer read back; the proxy judges it (the project's state and `.sixfold/` looked at, the
//! effects mapped and judged), records it in the event log, forwards it and records its outcome.
//! A refused call (never forwarded) is timed too.
//!
//! Run with `cargo bench -p sixfold-cli --bench mcp_proxy` (`SIXFOLD_BENCH_CALLS=N`, 2000 by
//! default) after `npm ci` in the repository root. Speed is measured here, never asserted; the
//! figures are in `docs/performance.md`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Client {
    fn start(program: &Path, args: &[String], dir: &Path, state: &Path) -> Option<Client> {
        let mut child = Command::new(program)
            .args(args)
            .current_dir(dir)
            .env("XDG_STATE_HOME", state)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let stdin = child.stdin.take()?;
        let stdout = BufReader::new(child.stdout.take()?);
        let mut c = Client {
            child,
            stdin,
            stdout,
            line: String::new(),
        };
        c.round(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#)?;
        c.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
        Some(c)
    }

    fn send(&mut self, frame: &str) -> Option<()> {
        self.stdin.write_all(frame.as_bytes()).ok()?;
        self.stdin.write_all(b"\n").ok()?;
        self.stdin.flush().ok()
    }

    /// Sends a request and reads lines until its answer (a notification may come first).
    fn round(&mut self, frame: &str) -> Option<()> {
        self.send(frame)?;
        loop {
            self.line.clear();
            if self.stdout.read_line(&mut self.line).ok()? == 0 {
                return None;
            }
            if self.line.contains("\"id\"") {
                return Some(());
            }
        }
    }

    /// Times one call.
    fn once(&mut self, frame: &str) -> Option<Duration> {
        let started = Instant::now();
        self.round(frame)?;
        Some(started.elapsed())
    }

    fn time(&mut self, frame: &str, calls: usize) -> Option<Vec<Duration>> {
        for _ in 0..calls / 10 {
            self.round(frame)?;
        }
        let mut times = Vec::with_capacity(calls);
        for _ in 0..calls {
            let started = Instant::now();
            self.round(frame)?;
            times.push(started.elapsed());
        }
        times.sort();
        Some(times)
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The same call made `calls` times to each client in turn (after a tenth as many to warm up),
/// each client's times sorted.
fn alternate(a: &mut Client, b: &mut Client, frame: &str, calls: usize) -> Option<(Vec<Duration>, Vec<Duration>)> {
    for _ in 0..calls / 10 {
        a.round(frame)?;
        b.round(frame)?;
    }
    let mut times = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for _ in 0..calls {
        times.0.push(a.once(frame)?);
        times.1.push(b.once(frame)?);
    }
    times.0.sort();
    times.1.sort();
    Some(times)
}

fn at(times: &[Duration], q: f64) -> Duration {
    let i = ((times.len() as f64 - 1.0) * q).round() as usize;
    times.get(i).copied().unwrap_or_default()
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() -> ExitCode {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let server = repo.join("node_modules/.bin/mcp-server-filesystem");
    if !server.is_file() {
        println!("skipped: {} is absent (run `npm ci`)", server.display());
        return ExitCode::SUCCESS;
    }
    let calls: usize = std::env::var("SIXFOLD_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let Ok(dir) = tempfile_dir() else {
        println!("cannot make a scratch directory");
        return ExitCode::FAILURE;
    };
    let project = dir.join("project");
    let state = dir.join("state");
    let _ = std::fs::create_dir_all(project.join(".sixfold/policies"));
    let _ = std::fs::create_dir_all(&state);
    let _ = std::fs::write(project.join("a.txt"), "hello\n");
    let _ = std::fs::write(
        project.join(".sixfold/policies/mcp.toml"),
        "id = \"mcp-files\"\n[mcp.\"files/read_text_file\"]\nreads = [\"{path}\"]\n",
    );
    for args in [&["mode", "set", "workspace-write"][..], &["trust"][..]] {
        let _ = Command::new(SIXFOLD)
            .args(args)
            .current_dir(&project)
            .env("XDG_STATE_HOME", &state)
            .output();
    }
    let read = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"read_text_file","arguments":{{"path":"{}"}}}}}}"#,
        project.join("a.txt").display()
    );
    let refused = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"/etc/sixfold-bench","content":"x"}}}"#;
    let root = project.display().to_string();
    let mut direct_client = Client::start(&server, std::slice::from_ref(&root), &project, &state);
    let proxy_args = vec![
        "mcp-proxy".into(),
        "--server".into(),
        "files".into(),
        "--".into(),
        server.display().to_string(),
        root,
    ];
    let mut proxied_client = Client::start(Path::new(SIXFOLD), &proxy_args, &project, &state);
    // With SIXFOLD_BENCH_ALTERNATE=1, direct and proxied calls alternate, so both see the same
    // load on a shared machine (and each process idles between its calls, as with a real agent).
    let alternating = std::env::var_os("SIXFOLD_BENCH_ALTERNATE").is_some_and(|v| v == "1");
    let (direct, proxied) = match (direct_client.as_mut(), proxied_client.as_mut()) {
        (Some(d), Some(p)) if alternating => alternate(d, p, &read, calls).unzip(),
        (Some(d), Some(p)) => (d.time(&read, calls), p.time(&read, calls)),
        _ => (None, None),
    };
    let refusals = proxied_client.as_mut().and_then(|c| c.time(refused, calls));
    let (Some(direct), Some(proxied), Some(refusals)) = (direct, proxied, refusals) else {
        println!("a client failed");
        return ExitCode::FAILURE;
    };
    println!("{calls} calls each (read_text_file of a 6-byte file), microseconds:");
    println!("{:<34} {:>10} {:>10}", "", "median", "p99");
    for (label, t) in [
        ("direct to the server", &direct),
        ("through sixfold mcp-proxy", &proxied),
        ("refused by the proxy (not sent)", &refusals),
    ] {
        println!("{label:<34} {:>10.1} {:>10.1}", micros(at(t, 0.5)), micros(at(t, 0.99)));
    }
    println!(
        "{:<34} {:>10.1} {:>10.1}",
        "added by the proxy",
        micros(at(&proxied, 0.5)) - micros(at(&direct, 0.5)),
        micros(at(&proxied, 0.99)) - micros(at(&direct, 0.99))
    );
    let _ = std::fs::remove_dir_all(&dir);
    ExitCode::SUCCESS
}

/// A scratch directory (benches have no tempfile crate of their own here).
fn tempfile_dir() -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("sixfold-bench-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    dir.canonicalize()
}
