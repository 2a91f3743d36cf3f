//! Finding a provider's CLI, asking its version and whether it is ready: the five answers of
//! `sixfold providers`. Only exit codes of the readiness command are read; its output is never
//! read, kept or printed (it may name an account).

use serde::Serialize;
use sixfold_core::format::ProviderFile;
use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a version command may print before the rest is ignored.
const MAX_VERSION_OUTPUT: usize = 64 * 1024;

/// How long a version command may take (milliseconds).
pub const VERSION_TIMEOUT_MS: u64 = 15_000;

/// How long a readiness command may take unless its provider file says (milliseconds).
const DEFAULT_READINESS_TIMEOUT_MS: u64 = 10_000;

/// Whether a provider's CLI can run here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Present, recent enough and signed in.
    Ready,
    /// Present, and it says it is not signed in.
    SignedOut,
    /// Not found.
    Absent,
    /// Present, but older than sixfold knows how to launch and read.
    Unsupported,
    /// Present, and nobody could ask (no way to ask, no answer, or an answer nobody knows).
    Unknown,
}

impl Status {
    /// The name, as printed.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ready => "ready",
            Status::SignedOut => "signed-out",
            Status::Absent => "absent",
            Status::Unsupported => "unsupported",
            Status::Unknown => "unknown",
        }
    }
}

/// One provider as found on this machine.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderStatus {
    /// The provider's id.
    pub id: String,
    /// Its name for people.
    pub name: String,
    /// The answer.
    pub status: Status,
    /// Why, in words.
    pub reason: String,
    /// The executable found.
    pub binary: Option<PathBuf>,
    /// Its version, when it could be asked.
    pub version: Option<String>,
    /// What to run to install it (shown when it is absent; sixfold never installs anything).
    pub install_hint: Option<String>,
    /// Whether its provider file lets it be launched hermetically.
    pub hermetic: bool,
}

/// The first executable named `names` in the directories of `path` (a `PATH` value).
pub fn find_binary(names: &[String], path: Option<&OsStr>) -> Option<PathBuf> {
    let path = path?;
    for dir in std::env::split_paths(path) {
        if dir.as_os_str().is_empty() {
            continue;
        }
        for name in names {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}

/// True for a file this user may execute.
pub fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

/// How a bounded command ended.
#[derive(Debug, Clone)]
pub struct Ran {
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// What it printed on stdout (at most the bound asked for; empty unless asked).
    pub stdout: Vec<u8>,
    /// It printed more than the bound: `stdout` is cut short.
    pub truncated: bool,
}

/// The environment a probe runs with: the operator's (`None`), or a constructed one.
pub type ProbeEnv<'a> = Option<&'a [(String, OsString)]>;

/// Runs a command with no input, waiting at most `timeout`. `keep_stdout`: read what it prints
/// (bounded); otherwise its output goes nowhere, unread.
pub fn run_bounded(
    program: &Path,
    args: &[String],
    env: ProbeEnv<'_>,
    cwd: Option<&Path>,
    timeout: Duration,
    keep_stdout: bool,
) -> Result<Ran, String> {
    run_capped(
        program,
        args,
        env,
        cwd,
        timeout,
        keep_stdout.then_some(MAX_VERSION_OUTPUT),
    )
}

/// As [`run_bounded`], keeping at most `keep` bytes of what it prints (`None`: nothing, unread).
pub(crate) fn run_capped(
    program: &Path,
    args: &[String],
    env: ProbeEnv<'_>,
    cwd: Option<&Path>,
    timeout: Duration,
    keep: Option<usize>,
) -> Result<Ran, String> {
    let keep_stdout = keep.is_some();
    let cap = keep.unwrap_or(0);
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .stdout(if keep_stdout { Stdio::piped() } else { Stdio::null() });
    if let Some(env) = env {
        command.env_clear();
        command.envs(env.iter().map(|(k, v)| (k, v)));
    }
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let shown = format!("`{} {}`", program.display(), args.join(" "));
    let mut child = command.spawn().map_err(|e| format!("cannot run {shown}: {e}"))?;
    let reader = child.stdout.take().map(|mut out| {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut truncated = false;
            let mut buf = [0u8; 8192];
            loop {
                match out.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let room = cap.saturating_sub(kept.len());
                        truncated |= n > room;
                        kept.extend_from_slice(buf.get(..n.min(room)).unwrap_or_default());
                    }
                }
            }
            (kept, truncated)
        })
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{shown} did not answer within {} ms", timeout.as_millis()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("cannot wait for {shown}: {e}")),
        }
    };
    let (stdout, truncated) = reader.and_then(|r| r.join().ok()).unwrap_or_default();
    Ok(Ran {
        code: status.code(),
        stdout,
        truncated,
    })
}

/// The version in what a version command printed: the first group of `pattern` (else its whole
/// match); without a pattern, the first word that starts with a digit.
pub fn parse_version(output: &str, pattern: Option<&str>) -> Result<Option<String>, String> {
    if let Some(pattern) = pattern {
        let re = regex::RegexBuilder::new(pattern)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| format!("`version_pattern` `{pattern}` is not a valid regular expression: {e}"))?;
        return Ok(re
            .captures(output)
            .and_then(|c| c.get(1).or_else(|| c.get(0)).map(|m| m.as_str().to_string())));
    }
    Ok(output
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .map(str::to_string))
}

/// Asks a binary its version with the provider's `version_args`.
pub fn ask_version(
    provider: &ProviderFile,
    binary: &Path,
    env: ProbeEnv<'_>,
    cwd: Option<&Path>,
) -> Result<String, String> {
    let args = &provider.binary.version_args;
    if args.is_empty() {
        return Err("the provider file names no `binary.version_args`".into());
    }
    let ran = run_bounded(binary, args, env, cwd, Duration::from_millis(VERSION_TIMEOUT_MS), true)?;
    let shown = format!("`{} {}`", binary.display(), args.join(" "));
    match ran.code {
        Some(0) => {}
        Some(code) => return Err(format!("{shown} exited with {code}")),
        None => return Err(format!("{shown} was ended by a signal")),
    }
    let text = String::from_utf8_lossy(&ran.stdout);
    let pattern = provider.readiness.as_ref().and_then(|r| r.version_pattern.as_deref());
    parse_version(&text, pattern)?.ok_or_else(|| format!("{shown} printed no version"))
}

/// The numbers of a version, e.g. `2.1.332-beta` → `[2, 1, 197]`.
fn numbers(version: &str) -> Vec<u64> {
    version
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .split(|c: char| !c.is_ascii_digit())
        .take_while(|part| !part.is_empty())
        .filter_map(|part| part.parse().ok())
        .collect()
}

/// True when `version` is older than `min` (by its leading numbers).
pub fn older_than(version: &str, min: &str) -> bool {
    let (a, b) = (numbers(version), numbers(min));
    let len = a.len().max(b.len());
    let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
    for i in 0..len {
        match at(&a, i).cmp(&at(&b, i)) {
            std::cmp::Ordering::Less => return true,
            std::cmp::Ordering::Greater => return false,
            std::cmp::Ordering::Equal => {}
        }
    }
    false
}

/// Finds a provider's CLI and asks it the five answers. `binary` overrides the `PATH` search.
pub fn status(provider: &ProviderFile, binary: Option<&Path>) -> ProviderStatus {
    let mut out = ProviderStatus {
        id: provider.id.clone(),
        name: provider.name.clone().unwrap_or_else(|| provider.id.clone()),
        status: Status::Unknown,
        reason: String::new(),
        binary: None,
        version: None,
        install_hint: provider.binary.install_hint.clone(),
        hermetic: provider.hermetic.is_some(),
    };
    let path = std::env::var_os("PATH");
    let found = match binary {
        Some(b) if is_executable(b) => Some(b.to_path_buf()),
        Some(b) => {
            out.status = Status::Absent;
            out.reason = format!("`{}` is not an executable file", b.display());
            return out;
        }
        None => find_binary(&provider.binary.names, path.as_deref()),
    };
    let Some(found) = found else {
        out.status = Status::Absent;
        out.reason = format!(
            "no {} on PATH",
            provider
                .binary
                .names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        );
        return out;
    };
    out.binary = Some(found.clone());
    let mut notes = Vec::new();
    match ask_version(provider, &found, None, None) {
        Ok(v) => out.version = Some(v),
        Err(e) => notes.push(format!("version unknown: {e}")),
    }
    let readiness = provider.readiness.clone().unwrap_or_default();
    if let (Some(version), Some(min)) = (&out.version, &readiness.min_version) {
        if older_than(version, min) {
            out.status = Status::Unsupported;
            out.reason =
                format!("version {version} is older than {min}, the oldest sixfold knows how to launch and read");
            return out;
        }
    }
    if readiness.args.is_empty() {
        notes.insert(
            0,
            "the provider file gives no way to ask whether it is signed in".into(),
        );
        out.status = Status::Unknown;
        out.reason = notes.join("; ");
        return out;
    }
    let timeout = Duration::from_millis(readiness.timeout_ms.unwrap_or(DEFAULT_READINESS_TIMEOUT_MS));
    let asked = format!("`{} {}`", found.display(), readiness.args.join(" "));
    let (status, reason) = match run_bounded(&found, &readiness.args, None, None, timeout, false) {
        Ok(Ran { code: Some(code), .. }) if readiness.ready_exit.contains(&code) => {
            (Status::Ready, format!("{asked} exited {code}: signed in"))
        }
        Ok(Ran { code: Some(code), .. }) if readiness.signed_out_exit.contains(&code) => {
            (Status::SignedOut, format!("{asked} exited {code}: not signed in"))
        }
        Ok(Ran { code: Some(code), .. }) => (
            Status::Unknown,
            format!("{asked} exited {code}, which the provider file does not explain"),
        ),
        Ok(Ran { code: None, .. }) => (Status::Unknown, format!("{asked} was ended by a signal")),
        Err(e) => (Status::Unknown, e),
    };
    out.status = status;
    notes.insert(0, reason);
    out.reason = notes.join("; ");
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn versions_are_parsed_and_compared() {
        let p = Some("(\\d+\\.\\d+\\.\\d+[0-9A-Za-z.+-]*)");
        assert_eq!(
            parse_version("2.1.332 (Claude Code)\n", p).unwrap().as_deref(),
            Some("2.1.332")
        );
        assert_eq!(
            parse_version("codex-cli 0.171.0\n", p).unwrap().as_deref(),
            Some("0.171.0")
        );
        assert_eq!(parse_version("tool 1.2\n", None).unwrap().as_deref(), Some("1.2"));
        assert_eq!(parse_version("no digits", p).unwrap(), None);
        assert!(parse_version("x", Some("(")).is_err());
        assert!(older_than("2.0.9", "2.1.0"));
        assert!(!older_than("2.1.0", "2.1.0"));
        assert!(!older_than("2.10.0", "2.9.9"));
        assert!(older_than("0.99.0-beta", "0.171.0"));
        assert!(!older_than("1.0", "0.171.0"));
    }

    #[test]
    fn binaries_are_found_on_path() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().join("tool");
        std::fs::write(&bin, "#!/bin/sh\necho 1.2.3\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = std::env::join_paths([Path::new("/nonexistent"), t.path()]).unwrap();
        assert_eq!(find_binary(&["tool".into()], Some(&path)), Some(bin.clone()));
        assert_eq!(find_binary(&["other".into()], Some(&path)), None);
        let ran = run_bounded(&bin, &[], None, None, Duration::from_secs(10), true).unwrap();
        assert_eq!(ran.code, Some(0));
        assert_eq!(String::from_utf8_lossy(&ran.stdout).trim(), "1.2.3");
    }

    #[test]
    fn a_command_that_does_not_answer_times_out() {
        let err = run_bounded(
            Path::new("/bin/sleep"),
            &["5".into()],
            None,
            None,
            Duration::from_millis(100),
            false,
        )
        .unwrap_err();
        assert!(err.contains("did not answer"), "{err}");
    }
}
