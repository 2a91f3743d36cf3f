//! Which program a hook runs: the one place every `sixfold install` (Claude Code's, Codex's,
//! OpenCode's) decides it, so a hook written in a file a team commits never names one machine's
//! build directory.
//!
//! The `sixfold` on PATH when there is one that answers (a teammate's clone, a `cargo clean`, a
//! reinstall leave it working); else this binary's absolute path, which belongs only in a file
//! that stays on this machine. Either way the command is guarded
//! (`sixfold_core::hook_settings::guarded`): a program the shell cannot start blocks the call.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The name a hook command uses for a `sixfold` found on PATH.
pub const NAME: &str = "sixfold";

/// How long a program may take to answer `--version` before it counts as not answering.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// Which program a hook runs, and where a command naming it may be written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookProgram {
    /// What the hook command names: [`NAME`] (found on PATH) or this binary's absolute path.
    pub program: String,
    /// True when `program` is [`NAME`] on PATH: a command naming it may go in a file a team
    /// commits. False: only in a file that stays on this machine.
    pub portable: bool,
    /// What the person installing should know, one line each (for stderr).
    pub warnings: Vec<String>,
}

/// Which program a hook runs for `binary` (the running sixfold, absolute), with this process's
/// PATH.
pub fn hook_program(binary: &Path) -> HookProgram {
    hook_program_in(binary, std::env::var_os("PATH").as_deref())
}

/// [`hook_program`] with the PATH given.
pub fn hook_program_in(binary: &Path, path: Option<&OsStr>) -> HookProgram {
    let mut warnings = Vec::new();
    let found = path.and_then(|p| on_path(NAME, p));
    if let Some(found) = found {
        match version_of(&found) {
            Some(version) => {
                let same = same_file(&found, binary);
                if !same && version != own_version() {
                    warnings.push(format!(
                        "the hooks run the `{NAME}` on PATH ({}, {version}), not this binary ({}): install this one on PATH to run it",
                        found.display(),
                        own_version()
                    ));
                }
                let real = found.canonicalize().unwrap_or_else(|_| found.clone());
                if let Some(place) = build_or_temp(&real).or_else(|| build_or_temp(&found)) {
                    warnings.push(format!(
                        "the `{NAME}` on PATH ({}) lies under {place}: the hooks stop answering when it is removed; install it where it stays (`cargo install --path engine/cli`)",
                        found.display()
                    ));
                }
                return HookProgram {
                    program: NAME.into(),
                    portable: true,
                    warnings,
                };
            }
            None => warnings.push(format!(
                "the `{NAME}` on PATH ({}) does not answer `{NAME} --version`, so the hooks run this binary by its path instead",
                found.display()
            )),
        }
    }
    if let Some(place) = build_or_temp(binary) {
        warnings.push(format!(
            "this binary ({}) lies under {place}: the hooks stop answering (and refuse every call) when it is removed; install sixfold where it stays (`cargo install --path engine/cli`) and install the hooks again",
            binary.display()
        ));
    }
    HookProgram {
        program: binary.to_string_lossy().into_owned(),
        portable: false,
        warnings,
    }
}

/// The `sixfold <version>` this binary prints for `--version`.
fn own_version() -> String {
    format!("{NAME} {}", env!("CARGO_PKG_VERSION"))
}

/// The first executable regular file called `name` in a PATH value.
pub fn on_path(name: &str, path: &OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// Whether `path` is a regular file (after links) that someone may execute.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// What `program --version` says when it is a sixfold (`sixfold 0.1.0`), within the timeout.
pub fn version_of(program: &Path) -> Option<String> {
    let mut command = Command::new(program);
    command.arg("--version");
    let out = run_bounded(&mut command, b"", ANSWER_TIMEOUT).ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().next()?.trim();
    (out.status.success() && line.starts_with(&format!("{NAME} "))).then(|| line.to_string())
}

/// Where `path` lies that a build or a reboot removes: a cargo target directory, or a temporary
/// directory. `None` for a place that stays.
///
/// ```
/// use sixfold_hook::program::build_or_temp;
/// use std::path::Path;
/// assert!(build_or_temp(Path::new("/src/sixfold/target/release/sixfold")).is_some());
/// assert!(build_or_temp(Path::new("/tmp/x/sixfold")).is_some());
/// assert_eq!(build_or_temp(Path::new("/usr/local/bin/sixfold")), None);
/// assert_eq!(build_or_temp(Path::new("/home/me/.cargo/bin/sixfold")), None);
/// ```
pub fn build_or_temp(path: &Path) -> Option<String> {
    let parts: Vec<&OsStr> = path.iter().collect();
    let in_target = parts.windows(2).any(|w| match w {
        [a, b] => *a == "target" && (*b == "debug" || *b == "release" || b.to_string_lossy().contains('-')),
        _ => false,
    });
    if in_target {
        return Some("a cargo build directory (`target/`), which `cargo clean` empties".into());
    }
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from);
    if target_dir.is_some_and(|t| t.is_absolute() && path.starts_with(t)) {
        return Some("the cargo build directory (`$CARGO_TARGET_DIR`), which `cargo clean` empties".into());
    }
    let mut temps = vec![
        PathBuf::from("/tmp"),
        PathBuf::from("/var/tmp"),
        PathBuf::from("/dev/shm"),
    ];
    temps.push(std::env::temp_dir());
    let real = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    temps
        .iter()
        .find(|t| path.starts_with(t) || t.canonicalize().is_ok_and(|t| real.starts_with(t)))
        .map(|t| format!("a temporary directory (`{}`)", t.display()))
}

/// Runs `command` with `input` on its stdin, its output gathered, for at most `timeout` (then it
/// is killed and this is an error). For asking a program whether it answers.
pub fn run_bounded(command: &mut Command, input: &[u8], timeout: Duration) -> Result<Output, String> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start it: {e}"))?;
    let feed = child.stdin.take().map(|mut stdin| {
        let input = input.to_vec();
        // A program that does not read its input must not block the wait.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        })
    });
    let gather = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(1024 * 1024).read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let stdout = gather(child.stdout.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let stderr = gather(child.stderr.take().map(|p| Box::new(p) as Box<dyn Read + Send>));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < timeout => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("it did not answer within {} s", timeout.as_secs()));
            }
            Err(e) => return Err(format!("cannot wait for it: {e}")),
        }
    };
    if let Some(feed) = feed {
        let _ = feed.join();
    }
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn a_sixfold_on_path_that_answers_is_named_by_name() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        script(&bin, NAME, &format!("echo '{}'", own_version()));
        let me = Path::new("/opt/sixfold/bin/sixfold");
        let found = hook_program_in(me, Some(bin.as_os_str()));
        assert_eq!(found.program, NAME);
        assert!(found.portable);
        // It lies under a temporary directory: said.
        assert!(
            found.warnings.iter().any(|w| w.contains("temporary")),
            "{:?}",
            found.warnings
        );
    }

    #[test]
    fn a_sixfold_on_path_that_does_not_answer_is_not_used() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        script(&bin, NAME, "exit 1");
        let me = Path::new("/opt/sixfold/bin/sixfold");
        let found = hook_program_in(me, Some(bin.as_os_str()));
        assert_eq!(found.program, "/opt/sixfold/bin/sixfold");
        assert!(!found.portable);
        assert!(
            found.warnings.iter().any(|w| w.contains("does not answer")),
            "{:?}",
            found.warnings
        );
        // Another program called sixfold that prints something else does not answer either.
        script(&bin, NAME, "echo 'other 1.0'");
        assert!(!hook_program_in(me, Some(bin.as_os_str())).portable);
    }

    #[test]
    fn without_one_on_path_the_binary_is_named_by_its_path_and_a_build_dir_is_warned_of() {
        let found = hook_program_in(
            Path::new("/src/x/target/release/sixfold"),
            Some(OsStr::new("/nonexistent")),
        );
        assert_eq!(found.program, "/src/x/target/release/sixfold");
        assert!(!found.portable);
        assert!(
            found.warnings.iter().any(|w| w.contains("cargo clean")),
            "{:?}",
            found.warnings
        );
        let kept = hook_program_in(Path::new("/usr/local/bin/sixfold"), None);
        assert!(!kept.portable && kept.warnings.is_empty(), "{kept:?}");
    }

    #[test]
    fn a_program_that_hangs_is_killed_at_the_timeout() {
        let t = tempfile::tempdir().unwrap();
        let slow = script(t.path(), "slow", "sleep 30");
        let start = Instant::now();
        let err = run_bounded(&mut Command::new(slow), b"", Duration::from_millis(200)).unwrap_err();
        assert!(err.contains("did not answer"), "{err}");
        assert!(start.elapsed() < Duration::from_secs(10));
        let cat = run_bounded(&mut Command::new("cat"), b"hi", Duration::from_secs(5)).unwrap();
        assert_eq!(cat.stdout, b"hi");
    }
}
