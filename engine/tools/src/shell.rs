//! `bash`, run through the sandbox layer: `sixfold sandbox run --mode M --root … -- bash -c …`
//! as a child in its own process group, its output read to a bound, killed with its group at the
//! timeout. This crate cannot link the sandbox layer; the sixfold binary is the seam.
//!
//! Whether the sandbox holds on this machine is asked once per mode (`sixfold sandbox check
//! --json`); only a proven environment makes a command `contained`.

use crate::page;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use sixfold_core::scope::Workspace;
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The default time a command may run.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest time a command may ask for.
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// How much of each output stream is kept.
const MAX_OUTPUT_BYTES: u64 = 256 * 1024;

/// What a command did.
#[derive(Debug)]
pub(crate) struct Ran {
    pub(crate) exit_code: Option<i64>,
    pub(crate) text: String,
    pub(crate) timed_out: bool,
}

/// The sandbox's proofs, asked once per mode for the life of the server.
#[derive(Debug, Default)]
pub(crate) struct Proofs {
    proven: Mutex<BTreeMap<String, bool>>,
}

fn root_args(workspace: &Workspace) -> Vec<String> {
    let mut args = vec!["--root".to_string(), workspace.primary().to_string_lossy().into_owned()];
    for root in workspace.roots().iter().skip(1) {
        args.push("--root".into());
        args.push(format!("{}={}", root.name, root.path.display()));
    }
    args
}

impl Proofs {
    /// Whether the mode's environment is proven on this machine.
    pub(crate) fn proven(&self, sixfold: &Path, mode: &str, workspace: &Workspace) -> bool {
        if let Ok(known) = self.proven.lock() {
            if let Some(p) = known.get(mode) {
                return *p;
            }
        }
        let output = Command::new(sixfold)
            .args(["sandbox", "check", "--mode", mode, "--json"])
            .args(root_args(workspace))
            .current_dir(workspace.primary())
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output();
        // INVARIANT (fail closed): a check that cannot be run or read proves nothing.
        let proven = output
            .ok()
            .and_then(|o| serde_json::from_slice::<serde_json::Value>(&o.stdout).ok())
            .and_then(|v| v.get("proven").and_then(serde_json::Value::as_bool))
            .unwrap_or(false);
        if let Ok(mut known) = self.proven.lock() {
            known.insert(mode.to_string(), proven);
        }
        proven
    }
}

/// Reads at most [`MAX_OUTPUT_BYTES`] of a stream on its own thread, draining the rest so the
/// child never blocks on a full pipe.
fn drain(stream: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<(Vec<u8>, bool)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let Some(mut stream) = stream else { return (kept, false) };
        let _ = (&mut stream).take(MAX_OUTPUT_BYTES).read_to_end(&mut kept);
        let rest = std::io::copy(&mut stream, &mut std::io::sink()).unwrap_or(0);
        (kept, rest > 0)
    })
}

/// Runs `command` with bash in the mode's sandbox, in the primary root.
pub(crate) fn run(sixfold: &Path, mode: &str, workspace: &Workspace, command: &str, timeout: Duration) -> Result<Ran, String> {
    let mut child = Command::new(sixfold)
        .args(["sandbox", "run", "--mode", mode])
        .args(root_args(workspace))
        .args(["--", "bash", "-c", command])
        .current_dir(workspace.primary())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start the sandbox (`{} sandbox run`): {e}", sixfold.display()))?;
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let started = Instant::now();
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= timeout => {
                timed_out = true;
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for the command: {e}")),
        }
    };
    // The whole group goes, finished or not: nothing the command started outlives the call.
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let status = match status {
        Some(s) => Some(s),
        None => child.wait().ok(),
    };
    let (stdout, more_out) = out.join().unwrap_or_default();
    let (stderr, more_err) = err.join().unwrap_or_default();
    let mut text = String::from_utf8_lossy(&stdout).into_owned();
    if !stderr.is_empty() {
        text.push_str(&String::from_utf8_lossy(&stderr));
    }
    if more_out || more_err {
        text.push_str(&format!("\n[output cut at {} KiB per stream]", MAX_OUTPUT_BYTES >> 10));
    }
    let exit_code = if timed_out { None } else { status.and_then(|s| s.code()).map(i64::from) };
    if timed_out {
        text.push_str(&format!("\n[killed after {} s]", timeout.as_secs()));
    }
    Ok(Ran {
        exit_code,
        text: page::preview(&text),
        timed_out,
    })
}
