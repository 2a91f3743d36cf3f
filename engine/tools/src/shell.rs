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
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

/// The default time a command may run.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest time a command may ask for.
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// How long the output is waited for once the command's group is gone.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
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
fn drain(stream: Option<impl Read + Send + 'static>) -> mpsc::Receiver<(Vec<u8>, bool)> {
    let (send, receive) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let Some(mut stream) = stream else {
            let _ = send.send((kept, false));
            return;
        };
        let _ = (&mut stream).take(MAX_OUTPUT_BYTES).read_to_end(&mut kept);
        let rest = std::io::copy(&mut stream, &mut std::io::sink()).unwrap_or(0);
        let _ = send.send((kept, rest > 0));
    });
    receive
}

/// What a drained stream kept; a stream something outside the group still holds open is not
/// waited for past [`DRAIN_GRACE`] (its reader thread ends when that holder does).
fn collected(receive: &mpsc::Receiver<(Vec<u8>, bool)>) -> (Vec<u8>, bool) {
    receive.recv_timeout(DRAIN_GRACE).unwrap_or_else(|_| (Vec::new(), true))
}

/// Runs `command` with bash in the mode's sandbox, in the primary root.
pub(crate) fn run(
    sixfold: &Path,
    mode: &str,
    workspace: &Workspace,
    command: &str,
    timeout: Duration,
) -> Result<Ran, String> {
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
    let (stdout, more_out) = collected(&out);
    let (stderr, more_err) = collected(&err);
    let mut text = String::from_utf8_lossy(&stdout).into_owned();
    if !stderr.is_empty() {
        text.push_str(&String::from_utf8_lossy(&stderr));
    }
    if more_out || more_err {
        text.push_str(&format!("\n[output cut at {} KiB per stream]", MAX_OUTPUT_BYTES >> 10));
    }
    let exit_code = if timed_out {
        None
    } else {
        status.and_then(|s| s.code()).map(i64::from)
    };
    if timed_out {
        text.push_str(&format!("\n[killed after {} s]", timeout.as_secs()));
    }
    Ok(Ran {
        exit_code,
        text: page::preview(&text),
        timed_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for `sixfold`: `sandbox run … -- bash -c CMD` runs CMD, unconfined.
    fn stand_in(dir: &Path) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("sixfold");
        std::fs::write(
            &path,
            "#!/bin/sh\nwhile [ \"$1\" != \"--\" ]; do shift; done\nshift\nexec \"$@\"\n",
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_command_is_bounded_in_time_and_output_and_its_group_killed() {
        let t = tempfile::tempdir().unwrap();
        let bin = stand_in(t.path());
        let ws = Workspace::new(t.path());
        let ran = run(&bin, "m", &ws, "echo hi; exit 3", Duration::from_secs(10)).unwrap();
        assert_eq!(
            (ran.exit_code, ran.text.as_str(), ran.timed_out),
            (Some(3), "hi\n", false)
        );
        let marker = t.path().join("late");
        let command = format!("(sleep 2; touch {}) & sleep 30", marker.display());
        let ran = run(&bin, "m", &ws, &command, Duration::from_millis(300)).unwrap();
        assert!(ran.timed_out && ran.exit_code.is_none(), "{ran:?}");
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!marker.exists(), "a process the command started outlived the call");
        let ran = run(
            &bin,
            "m",
            &ws,
            "head -c 1000000 /dev/zero | tr '\\0' x",
            Duration::from_secs(10),
        )
        .unwrap();
        assert!(
            ran.text.len() < 70 * 1024 && ran.text.contains("cut"),
            "{}",
            ran.text.len()
        );
    }

    #[test]
    fn a_sandbox_that_cannot_be_asked_proves_nothing() {
        let t = tempfile::tempdir().unwrap();
        let proofs = Proofs::default();
        assert!(!proofs.proven(Path::new("/nonexistent/sixfold"), "m", &Workspace::new(t.path())));
    }
}
