//! The vendor's process: finding its CLI, starting it with the argv, environment and working
//! directory the launch composed, passing its standard output on (and to whoever watches it),
//! and how it ended.

use crate::error::LaunchError;
use crate::probe;
use crate::request::{Request, StdoutSink};
use serde::Serialize;
use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The exit code when the vendor could not be started at all.
pub const EXIT_NOT_STARTED: i32 = 127;

/// How the vendor's process went.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Vendor {
    /// Whether it was started.
    pub started: bool,
    /// Its exit code (`128 + N` when signal N ended it).
    pub exit: Option<i32>,
    /// Why it was not started, or did not end normally.
    pub reason: Option<String>,
    /// Where its standard output was written, when not forwarded.
    pub stdout_file: Option<String>,
}

impl Vendor {
    /// A vendor that was not started, and why.
    pub(crate) fn not_started(reason: String) -> Vendor {
        Vendor {
            reason: Some(reason),
            ..Vendor::default()
        }
    }

    /// sixfold's exit code from the vendor's: its own, or [`EXIT_NOT_STARTED`].
    pub(crate) fn exit_code(&self) -> i32 {
        self.exit.unwrap_or(EXIT_NOT_STARTED)
    }
}

/// The process to start: its binary, argv (binary first), environment and working directory.
#[derive(Debug)]
pub(crate) struct Spawn<'a> {
    pub(crate) binary: &'a Path,
    pub(crate) argv: &'a [String],
    /// The whole environment the child gets (nothing else is inherited).
    pub(crate) env: &'a [(String, OsString)],
    pub(crate) workdir: &'a Path,
    /// Standard input closed rather than inherited.
    pub(crate) close_stdin: bool,
    pub(crate) stdout: StdoutSink,
}

/// The provider's CLI: `--binary`, else the first of its names on `PATH`, made absolute so the
/// working directory does not change which binary runs.
pub(crate) fn resolve_binary(req: &Request) -> Result<PathBuf, LaunchError> {
    let provider = &req.provider;
    let found = match &req.binary {
        Some(b) => {
            if !probe::is_executable(b) {
                return Err(LaunchError::new(format!(
                    "`--binary {}` is not an executable file",
                    b.display()
                )));
            }
            Some(b.clone())
        }
        None => probe::find_binary(&provider.binary.names, std::env::var_os("PATH").as_deref()),
    };
    let found = found.ok_or_else(|| {
        let names: Vec<String> = provider.binary.names.iter().map(|n| format!("`{n}`")).collect();
        let hint = match &provider.binary.install_hint {
            Some(h) => format!("install it with `{h}` (sixfold never installs anything), or give `--binary PATH`"),
            None => "install it, or give `--binary PATH`".into(),
        };
        LaunchError::new(format!("{} is absent: no {} on PATH", provider.id, names.join(" or "))).hint(hint)
    })?;
    Ok(if found.is_absolute() {
        found
    } else {
        std::env::current_dir().map(|d| d.join(&found)).unwrap_or(found)
    })
}

/// Starts the vendor and waits for it, passing its standard output on and to `watch` (the
/// record scanner) as it comes.
pub(crate) fn run(spawn: &Spawn<'_>, run_dir: &Path, watch: &mut dyn FnMut(&[u8])) -> Vendor {
    let mut vendor = Vendor::default();
    let mut command = Command::new(spawn.binary);
    command
        .args(spawn.argv.iter().skip(1))
        .current_dir(spawn.workdir)
        .stdin(if spawn.close_stdin {
            Stdio::null()
        } else {
            Stdio::inherit()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        // INVARIANT (fail closed): the child gets only the environment the launch composed.
        .env_clear()
        .envs(spawn.env.iter().map(|(k, v)| (k, v)));
    let mut file = match spawn.stdout {
        StdoutSink::Forward => None,
        StdoutSink::File => {
            let path = run_dir.join("stdout.jsonl");
            vendor.stdout_file = Some(path.display().to_string());
            match std::fs::File::create(&path) {
                Ok(f) => Some(f),
                Err(e) => {
                    vendor.reason = Some(format!("not started: cannot write `{}`: {e}", path.display()));
                    return vendor;
                }
            }
        }
    };
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            vendor.reason = Some(format!("not started: cannot run `{}`: {e}", spawn.binary.display()));
            return vendor;
        }
    };
    vendor.started = true;
    let mut forward_ok = true;
    if let Some(mut out) = child.stdout.take() {
        let mut buf = vec![0u8; 64 * 1024];
        let stdout = std::io::stdout();
        loop {
            let n = match out.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let chunk = buf.get(..n).unwrap_or_default();
            watch(chunk);
            match &mut file {
                Some(f) => forward_ok &= f.write_all(chunk).is_ok(),
                None if forward_ok => {
                    let mut lock = stdout.lock();
                    forward_ok = lock.write_all(chunk).and_then(|_| lock.flush()).is_ok();
                }
                None => {}
            }
        }
    }
    match child.wait() {
        Ok(status) => {
            vendor.exit = status.code().or_else(|| signal_of(&status).map(|s| 128 + s));
            if let Some(sig) = signal_of(&status) {
                vendor.reason = Some(format!("ended by signal {sig}"));
            }
        }
        Err(e) => vendor.reason = Some(format!("cannot wait for the vendor: {e}")),
    }
    vendor
}

#[cfg(unix)]
fn signal_of(status: &std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    status.signal()
}

#[cfg(not(unix))]
fn signal_of(_: &std::process::ExitStatus) -> Option<i32> {
    None
}
