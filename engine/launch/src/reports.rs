//! The vendor's own reports on the launched configuration (`codex doctor --json`, `codex mcp
//! list --json`, …): commands of its CLI that print JSON, run right after the run with the same
//! config home, environment, working directory and configuration overrides, so that what they
//! say is the vendor saying it of the run's configuration. Which commands, and where in their
//! JSON each fact is, is data (`[record.reports]` in the provider file); this is the mechanism.
//! A report is untrusted output: bounded in time and size, and one that fails, overflows or is
//! not JSON is no report (the fields read from it are missing, and their rows unk).

use crate::probe;
use serde_json::Value;
use sixfold_core::format::{RecordFile, ReportFile};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

/// How long a report may take unless the provider file says (milliseconds).
const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// The most a report may print unless the provider file says (bytes).
const DEFAULT_MAX_BYTES: usize = 1024 * 1024;

/// The run a report describes: the binary, the constructed environment, the working directory
/// and the run's own arguments, as the vendor was started with them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReportRun<'a> {
    /// The vendor's CLI.
    pub(crate) binary: &'a Path,
    /// The run's constructed environment.
    pub(crate) env: &'a [(String, OsString)],
    /// Where the run worked.
    pub(crate) workdir: &'a Path,
    /// The run's own arguments (after `--`).
    pub(crate) run_args: &'a [String],
}

/// One report taken: its JSON, or why there is none, and how it was asked for.
#[derive(Debug, Clone)]
pub(crate) struct Taken {
    /// The arguments it was run with (after the binary).
    pub(crate) args: Vec<String>,
    /// The report, or why there is none.
    pub(crate) report: Result<Value, String>,
}

/// Every report the provider file declares, taken now; `line` is the record line found.
pub(crate) fn take_all(record: &RecordFile, line: &Value, run: &ReportRun<'_>) -> BTreeMap<String, Taken> {
    record
        .reports
        .iter()
        .map(|(name, spec)| (name.clone(), take(name, spec, line, run)))
        .collect()
}

/// A report's arguments with `{record:/POINTER}` replaced by the record line's string there, or
/// the pointer the record lacks.
fn expand_args(args: &[String], line: &Value) -> Result<Vec<String>, String> {
    args.iter()
        .map(
            |arg| match arg.strip_prefix("{record:").and_then(|a| a.strip_suffix('}')) {
                Some(pointer) => line
                    .pointer(pointer)
                    .and_then(Value::as_str)
                    // INVARIANT (fail closed): a value from the vendor's output is one argument, never
                    // an option of the vendor's CLI.
                    .filter(|v| !v.is_empty() && !v.starts_with('-'))
                    .map(str::to_string)
                    .ok_or_else(|| format!("the record has no usable `{pointer}`")),
                None => Ok(arg.clone()),
            },
        )
        .collect()
}

/// One report.
fn take(name: &str, spec: &ReportFile, line: &Value, run: &ReportRun<'_>) -> Taken {
    let mut args = match expand_args(&spec.args, line) {
        Ok(args) => args,
        Err(why) => {
            return Taken {
                args: spec.args.clone(),
                report: Err(format!("the report `{name}` was not taken: {why}")),
            }
        }
    };
    let passed = match passed_args(spec, run.run_args) {
        Ok(passed) => passed,
        Err(why) => {
            return Taken {
                args,
                report: Err(format!("the report `{name}` was not taken: {why}")),
            }
        }
    };
    args.extend(passed);
    let mut env: Vec<(String, OsString)> = run
        .env
        .iter()
        .filter(|(k, _)| !spec.env_set.contains_key(k))
        .cloned()
        .collect();
    env.extend(spec.env_set.iter().map(|(k, v)| (k.clone(), OsString::from(v))));
    let timeout = Duration::from_millis(spec.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS));
    let max = spec.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
    let shown = format!("`{} {}`", run.binary.display(), spec.args.join(" "));
    let ok_exit: &[i32] = if spec.ok_exit.is_empty() { &[0] } else { &spec.ok_exit };
    // INVARIANT (fail closed): a report that fails, overflows or is not JSON is no report; its
    // fields are then missing (unk), never read from what it half said.
    let report = probe::run_capped(run.binary, &args, Some(&env), Some(run.workdir), timeout, Some(max))
        .and_then(|ran| match ran.code {
            _ if ran.truncated => Err(format!("{shown} printed more than {max} bytes")),
            Some(code) if ok_exit.contains(&code) && spec.text => text_report(&ran.stdout)
                .map(Value::String)
                .ok_or_else(|| format!("{shown} printed no text report (not UTF-8)")),
            Some(code) if ok_exit.contains(&code) => {
                serde_json::from_slice::<Value>(&ran.stdout).map_err(|e| format!("{shown} printed no JSON report: {e}"))
            }
            Some(code) => Err(format!("{shown} exited with {code}")),
            None => Err(format!("{shown} was ended by a signal")),
        })
        .map_err(|why| format!("the report `{name}` failed: {why}"));
    Taken { args, report }
}

/// A text report as one string without its terminal control sequences (colours): what a
/// field's pattern matches is the text a person would read. Not UTF-8: no report.
fn text_report(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        // CSI (`ESC [ … final`): parameters and intermediates, then one final byte.
        if chars.next_if_eq(&'[').is_some() {
            while chars.next_if(|c| matches!(c, '\u{20}'..='\u{3f}')).is_some() {}
            chars.next_if(|c| matches!(c, '\u{40}'..='\u{7e}'));
        }
    }
    Some(out)
}

/// The run's own arguments the report is given again (each flag of `pass_args` with its value),
/// or why the report cannot describe the run (it passed one of `unmatched_args`). A flag is
/// recognised however it is written: `--config KEY=V`, `--config=KEY=V`, `-c KEY=V`, `-cKEY=V`.
fn passed_args(spec: &ReportFile, run_args: &[String]) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut args = run_args.iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        // INVARIANT (fail closed): an override the report is not given would make it describe
        // another configuration, so every spelling of a flag counts, and an unmatched one
        // means no report at all.
        if let Some((flag, _)) = spec.unmatched_args.iter().find_map(|u| split_flag(arg, u)) {
            return Err(format!("the run passes `{flag}`, which the report cannot be given"));
        }
        if let Some((flag, inline)) = spec.pass_args.iter().find_map(|p| split_flag(arg, p)) {
            let value = match inline {
                Some(value) => Some(value),
                None => args.next().cloned(),
            };
            let Some(value) = value else {
                return Err(format!("the run passes `{flag}` without a value"));
            };
            out.push(flag.to_string());
            out.push(value);
        }
    }
    Ok(out)
}

/// `arg` as `flag` with its value written in it (`--flag=V`, `-fV`, `-f=V`), or alone (`None`).
fn split_flag<'f>(arg: &str, flag: &'f str) -> Option<(&'f str, Option<String>)> {
    if arg == flag {
        return Some((flag, None));
    }
    let rest = arg.strip_prefix(flag)?;
    if flag.starts_with("--") {
        return rest.strip_prefix('=').map(|v| (flag, Some(v.to_string())));
    }
    if flag.len() == 2 && flag.starts_with('-') {
        return Some((flag, Some(rest.strip_prefix('=').unwrap_or(rest).to_string())));
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]
    use super::*;

    fn spec(text: &str) -> ReportFile {
        toml::from_str(text).unwrap()
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_runs_overrides_are_passed_again_and_an_unmatched_one_refuses() {
        let s = spec(
            "args = [\"doctor\", \"--json\"]\npass_args = [\"-c\", \"--config\", \"--enable\"]\nunmatched_args = [\"--profile\", \"-p\"]\n",
        );
        let run = strings(&[
            "--json",
            "-c",
            "a=1",
            "-s",
            "x",
            "--config=b=2",
            "--enable",
            "f",
            "-m",
            "m",
            "hello",
        ]);
        assert_eq!(
            passed_args(&s, &run).unwrap(),
            strings(&["-c", "a=1", "--config", "b=2", "--enable", "f"])
        );
        let err = passed_args(&s, &strings(&["--profile=work", "hi"])).unwrap_err();
        assert!(err.contains("`--profile`"), "{err}");
        assert!(passed_args(&s, &strings(&["-p", "work"])).is_err());
        assert!(
            passed_args(&s, &strings(&["-pwork"])).is_err(),
            "a short flag with its value in it"
        );
        assert_eq!(
            passed_args(
                &s,
                &strings(&[
                    "-cmcp_servers.x.command=\"y\"",
                    "-c=a=1",
                    "--configx",
                    "--",
                    "-c",
                    "b=2"
                ])
            )
            .unwrap(),
            strings(&["-c", "mcp_servers.x.command=\"y\"", "-c", "a=1"]),
            "every spelling of a passed flag, none after `--`, and not a longer flag"
        );
        assert!(passed_args(&s, &strings(&["-c"])).is_err(), "a flag without its value");
    }

    #[cfg(unix)]
    fn script(dir: &Path, body: &str) -> std::path::PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("vendor");
        std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[cfg(unix)]
    #[test]
    fn a_report_that_fails_overflows_or_is_not_json_is_no_report() {
        let t = tempfile::tempdir().unwrap();
        let bin = script(
            t.path(),
            "case \"$1\" in\n ok) echo \"{\\\"k\\\": \\\"$K\\\", \\\"args\\\": \\\"$*\\\"}\";;\n fail) echo '{}'; exit 2;;\n text) echo 'not json';;\n colours) printf '\\033[0m\\342\\224\\214  Credentials \\033[90m~/a\\n\\342\\224\\224  0 credentials\\n';;\n big) yes '{}' | head -c 5000;;\n slow) sleep 5;;\nesac\n",
        );
        let env = vec![
            ("K".to_string(), OsString::from("run")),
            ("PATH".to_string(), OsString::from("/usr/bin:/bin")),
        ];
        let run_args = strings(&["-c", "x=1", "prompt"]);
        let run = ReportRun {
            binary: &bin,
            env: &env,
            workdir: t.path(),
            run_args: &run_args,
        };
        let record: RecordFile = toml::from_str(
            r#"
            match = { type = "x" }
            [reports.ok]
            args = ["ok"]
            pass_args = ["-c"]
            env_set = { K = "report" }
            [reports.fail]
            args = ["fail"]
            [reports.text]
            args = ["text"]
            [reports.colours]
            args = ["colours"]
            text = true
            [reports.big]
            args = ["big"]
            max_bytes = 1000
            [reports.slow]
            args = ["slow"]
            timeout_ms = 200
            [reports.session]
            args = ["ok", "{record:/session}"]
            [reports.nosession]
            args = ["ok", "{record:/missing}"]
            [reports.flag]
            args = ["ok", "{record:/flag}"]
            "#,
        )
        .unwrap();
        let line = serde_json::json!({"type": "x", "session": "ses_1", "flag": "--evil"});
        let taken = take_all(&record, &line, &run);
        assert_eq!(taken["session"].report.as_ref().unwrap()["args"], "ok ses_1");
        for name in ["nosession", "flag"] {
            let err = taken[name].report.as_ref().unwrap_err();
            assert!(err.contains("not taken"), "{name}: {err}");
        }
        let ok = taken["ok"].report.as_ref().unwrap();
        assert_eq!(ok["k"], "report", "the report's own variables win");
        assert_eq!(ok["args"], "ok -c x=1");
        assert_eq!(
            taken["colours"].report.as_ref().unwrap(),
            "┌  Credentials ~/a\n└  0 credentials\n",
            "a text report is read without its colours"
        );
        for (name, why) in [
            ("fail", "exited with 2"),
            ("text", "no JSON"),
            ("big", "more than 1000 bytes"),
            ("slow", "did not answer"),
        ] {
            let err = taken[name].report.as_ref().unwrap_err();
            assert!(err.contains(why), "{name}: {err}");
        }
    }
}
