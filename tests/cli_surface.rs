#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! The CLI's surface, through the real binary: an unknown mode, pattern, provider or kept rule
//! is exit 2 with the close name.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::repo;
use tempfile::TempDir;

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// What a run printed, with its exit code.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn expect(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// An empty working directory and a home of its own, both outside any clone, with nothing of
/// the developer's environment that sixfold reads.
struct Place {
    cwd: TempDir,
    home: TempDir,
}

impl Place {
    fn new() -> Place {
        Place {
            cwd: tempfile::tempdir().unwrap(),
            home: tempfile::tempdir().unwrap(),
        }
    }

    fn cwd(&self) -> PathBuf {
        self.cwd.path().canonicalize().unwrap()
    }

    fn env(&self, cmd: &mut Command) {
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            if key.starts_with("XDG_") || key.starts_with("SIXFOLD_") || key.starts_with("CLAUDE") {
                cmd.env_remove(key);
            }
        }
        cmd.env("HOME", self.home.path()).current_dir(self.cwd.path());
    }

    fn run_with(&self, program: &Path, args: &[&str]) -> Run {
        let mut cmd = Command::new(program);
        cmd.args(args);
        self.env(&mut cmd);
        let out = cmd.output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    fn run(&self, args: &[&str]) -> Run {
        self.run_with(Path::new(SIXFOLD), args)
    }
}

// ---------------------------------------------------------------------------------------------
// Unknown names: exit 2, and the close name
// ---------------------------------------------------------------------------------------------

/// Checks a run given an unknown name: exit 2, the name said, and `close` offered (or, with
/// `None`, nothing offered).
fn says_unknown(run: &Run, what: &str, close: Option<&str>, case: &str) {
    assert_eq!(
        run.code, 2,
        "{case}: exit code\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
    assert!(
        run.stderr.contains(&format!("there is no {what}")),
        "{case}: {}",
        run.stderr
    );
    match close {
        Some(name) => assert!(
            run.stderr.contains(&format!("did you mean `{name}`?")),
            "{case}: no suggestion of `{name}`:\n{}",
            run.stderr
        ),
        None => assert!(!run.stderr.contains("did you mean"), "{case}: {}", run.stderr),
    }
}

/// Every command that takes a mode, with `M` where the mode goes.
fn mode_commands() -> Vec<Vec<String>> {
    let runs = repo().join("examples/runs");
    let runs = runs.to_str().unwrap();
    [
        vec!["judge", "--no-project", "--mode", "M", "--effects", "{}"],
        vec![
            "judge",
            "--mode",
            "M",
            "--tool",
            "Bash",
            "--input",
            r#"{"command":"ls"}"#,
        ],
        vec!["replay", runs, "--mode", "M"],
        vec!["whatif", "--mode", "M", runs],
        vec!["whatif", "--mode", "ask", "--to-mode", "M", runs],
        vec!["modes", "diff", "ask", "M"],
        vec!["modes", "diff", "M", "ask"],
        vec!["sandbox", "check", "--mode", "M"],
        vec!["sandbox", "run", "--mode", "M", "--", "true"],
        vec!["mode", "set", "M"],
        vec!["mode", "set", "M", "--dry-run"],
        vec!["rules", "add", "--allow", "cargo test", "--mode", "M"],
        vec!["launch", "claude-code", "--governed", "--mode", "M", "--", "hi"],
        vec!["serve-tools", "--mode", "M"],
        vec!["mcp-proxy", "--server", "files", "--mode", "M", "--", "true"],
    ]
    .iter()
    .map(|c| c.iter().map(|s| s.to_string()).collect())
    .collect()
}

#[test]
fn every_command_given_an_unknown_mode_exits_2_and_offers_the_close_one() {
    for command in mode_commands() {
        for (typed, close) in [
            ("workspace-wirte", Some("workspace-write")),
            ("readonly", Some("read-only")),
            ("zzzz", None),
        ] {
            let place = Place::new();
            let args: Vec<&str> = command
                .iter()
                .map(|a| if a == "M" { typed } else { a.as_str() })
                .collect();
            let run = place.run(&args);
            says_unknown(&run, &format!("mode `{typed}`"), close, &args.join(" "));
            // Nothing was changed, kept, launched or served.
            assert!(!place.cwd().join(".sixfold").exists(), "{}", args.join(" "));
        }
    }
}

#[test]
fn a_mode_set_to_an_unknown_name_leaves_the_mode_and_says_which_stays() {
    let place = Place::new();
    place.run(&["mode", "set", "ask"]).expect(0);
    let run = place.run(&["mode", "set", "aks"]);
    says_unknown(&run, "mode `aks`", Some("ask"), "mode set aks");
    assert!(run.stderr.contains("the active mode stays `ask`"), "{}", run.stderr);
    assert!(place.run(&["mode", "show"]).stdout.starts_with("mode ask"));
}

#[test]
fn an_unknown_pattern_exits_2_and_offers_the_close_one() {
    let place = Place::new();
    let run = place.run(&["pattern", "set", "orchestrator-worker"]);
    says_unknown(
        &run,
        "pattern `orchestrator-worker`",
        Some("orchestrator-workers"),
        "pattern set",
    );
    assert!(run.stderr.contains("the active pattern stays"), "{}", run.stderr);
    let far = place.run(&["pattern", "set", "swarm-of-bees"]);
    says_unknown(&far, "pattern `swarm-of-bees`", None, "pattern set far");
    place.run(&["pattern", "set", "orchestrator-workers"]).expect(0);
}

#[test]
fn an_unknown_provider_or_kept_rule_exits_2() {
    let place = Place::new();
    for (args, what, close) in [
        (
            vec!["launch", "claude-cod", "--", "hi"],
            "provider `claude-cod`",
            Some("claude-code"),
        ),
        (vec!["launch", "gemini-cli", "--", "hi"], "provider `gemini-cli`", None),
        (
            vec!["judge", "--provider", "codx", "--tool", "Bash", "--input", "{}"],
            "provider `codx`",
            Some("codex"),
        ),
    ] {
        says_unknown(&place.run(&args), what, close, &args.join(" "));
    }
    // A kept rule: the same status, the ids there are listed.
    place.run(&["rules", "add", "--allow", "cargo test"]).expect(0);
    let run = place.run(&["rules", "remove", "rule-7"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("there is no kept rule `rule-7`"), "{}", run.stderr);
    assert!(run.stderr.contains("`rule-1`"), "{}", run.stderr);
    place.run(&["rules", "remove", "rule-1"]).expect(0);
}

/// The judgement itself (the hook's, a batch line's) names the close mode in its reason.
#[test]
fn a_judgement_under_an_unknown_mode_refuses_and_names_the_close_one() {
    let place = Place::new();
    let mut cmd = Command::new(SIXFOLD);
    cmd.args(["judge", "--no-project", "--batch"]);
    place.env(&mut cmd);
    let out = support::fed(
        &mut cmd,
        b"{\"mode\":\"ful\",\"effects\":{}}\n{\"mode\":\"qqqq\",\"effects\":{}}\n",
    );
    assert!(out.status.success());
    let lines = support::json_lines(&String::from_utf8_lossy(&out.stdout));
    assert_eq!(lines[0]["decision"], "refuse");
    assert_eq!(lines[0]["by"], "unjudgeable");
    assert!(
        lines[0]["reason"].as_str().unwrap().contains("did you mean `full`?"),
        "{}",
        lines[0]
    );
    assert!(
        !lines[1]["reason"].as_str().unwrap().contains("did you mean"),
        "{}",
        lines[1]
    );
}
