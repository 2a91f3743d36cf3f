#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]
//! End-to-end tests of the `sixfold` binary: they run the real executable, as a user would.
//!
//! Every command runs in a scratch directory with its own `HOME` and `TMPDIR`, and with
//! `--no-project` unless the test is about the project's `.sixfold/`, so nothing of the
//! developer's machine leaks in. Scratch directories live under Cargo's target tmp dir (not the
//! system temp dir), so "outside the workspace" and "the temp dir" stay distinct.

use serde_json::Value;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tempfile::TempDir;

// ---------------------------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------------------------

const MODES: [&str; 4] = ["read-only", "ask", "workspace-write", "full"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn fixture(case: &str) -> PathBuf {
    let dir = repo().join("tests/fixtures/bad-bundles").join(case);
    assert!(dir.is_dir(), "missing fixture {}", dir.display());
    dir
}

fn scratch(prefix: &str) -> TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

fn canonical(dir: &TempDir) -> PathBuf {
    dir.path().canonicalize().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What a run printed, with its exit code.
#[derive(Debug)]
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn from(output: Output) -> Run {
        Run {
            code: output.status.code().unwrap_or(-1),
            stdout: text(&output.stdout),
            stderr: text(&output.stderr),
        }
    }

    fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }

    fn expect_code(&self, code: i32) -> &Run {
        assert_eq!(
            self.code, code,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }
}

/// A place to run `sixfold` in: a workspace root, a home, a `$TMPDIR` and a working directory,
/// each its own scratch directory.
struct Sandbox {
    root: TempDir,
    home: TempDir,
    tmpdir: TempDir,
    cwd: TempDir,
}

impl Sandbox {
    fn new() -> Sandbox {
        let s = Sandbox {
            root: scratch("sixfold-root-"),
            home: scratch("sixfold-home-"),
            tmpdir: scratch("sixfold-tmpdir-"),
            cwd: scratch("sixfold-cwd-"),
        };
        std::fs::create_dir_all(s.root().join("src")).unwrap();
        std::fs::write(s.root().join("src/lib.rs"), "// lib\n").unwrap();
        std::fs::create_dir_all(s.root().join(".git/hooks")).unwrap();
        std::fs::create_dir_all(s.home().join(".ssh")).unwrap();
        std::fs::write(s.home().join(".ssh/id_rsa"), "not a key\n").unwrap();
        s
    }

    fn root(&self) -> PathBuf {
        canonical(&self.root)
    }

    fn home(&self) -> PathBuf {
        canonical(&self.home)
    }

    fn tmpdir(&self) -> PathBuf {
        canonical(&self.tmpdir)
    }

    /// `sixfold` with this sandbox's environment and working directory.
    fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sixfold"));
        cmd.current_dir(self.cwd.path())
            .env("HOME", self.home())
            .env("TMPDIR", self.tmpdir())
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, args: &[&str]) -> Run {
        Run::from(self.command().args(args).output().unwrap())
    }

    /// Runs with `input` on stdin.
    fn run_with_stdin(&self, args: &[&str], input: &str) -> Run {
        let mut child = self
            .command()
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        Run::from(child.wait_with_output().unwrap())
    }

    /// Replaces `{root}`, `{home}` and `{tmpdir}` in an effects template (JSON-escaped).
    fn fill(&self, template: &str) -> String {
        let esc = |p: PathBuf| {
            let quoted = serde_json::to_string(&p.to_string_lossy()).unwrap();
            quoted[1..quoted.len() - 1].to_string()
        };
        template
            .replace("{root}", &esc(self.root()))
            .replace("{home}", &esc(self.home()))
            .replace("{tmpdir}", &esc(self.tmpdir()))
    }

    /// `sixfold judge --no-project --mode MODE --root ROOT --effects EFFECTS [extra…]`.
    fn judge_run(&self, mode: &str, effects: &str, extra: &[&str]) -> Run {
        let root = self.root();
        let effects = self.fill(effects);
        let mut args = vec![
            "judge",
            "--no-project",
            "--mode",
            mode,
            "--root",
            root.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--effects", &effects]);
        self.run(&args)
    }

    /// Judges and checks the judgement's shape; returns it.
    fn judge(&self, mode: &str, effects: &str, extra: &[&str]) -> Judged {
        let run = self.judge_run(mode, effects, extra);
        run.expect_code(0);
        Judged::parse(&run, mode)
    }
}

/// A judgement as printed by `sixfold judge`, its shape checked.
#[derive(Debug)]
struct Judged {
    decision: String,
    reason: String,
    rules: Vec<String>,
}

impl Judged {
    fn parse(run: &Run, mode: &str) -> Judged {
        let v = run.json();
        let decision = v["decision"]
            .as_str()
            .unwrap_or_else(|| panic!("no decision in {v}"))
            .to_string();
        let reason = v["reason"]
            .as_str()
            .unwrap_or_else(|| panic!("no reason in {v}"))
            .to_string();
        let rules: Vec<String> = v["rules"]
            .as_array()
            .unwrap_or_else(|| panic!("no rules array in {v}"))
            .iter()
            .map(|r| {
                r.as_str()
                    .unwrap_or_else(|| panic!("a rule id that is not a string in {v}"))
                    .to_string()
            })
            .collect();
        assert_eq!(v["mode"], mode, "the judgement does not echo the mode: {v}");
        assert!(!reason.trim().is_empty(), "empty reason: {v}");
        assert!(
            ["allow", "ask", "refuse"].contains(&decision.as_str()),
            "odd decision: {v}"
        );
        Judged {
            decision,
            reason,
            rules,
        }
    }

    fn has_rule(&self, id: &str) -> bool {
        self.rules.iter().any(|r| r == id)
    }
}

/// A scratch directory with nothing in it, to run commands that need no sandbox.
fn plain() -> Sandbox {
    Sandbox::new()
}

// ---------------------------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------------------------

#[test]
fn check_passes_on_the_shipped_bundle() {
    let s = plain();
    let run = s.run(&["check", "--no-project"]);
    run.expect_code(0);
    assert!(run.stdout.starts_with("ok:"), "{}", run.stdout);
    assert!(run.stderr.trim().is_empty(), "stderr on a clean check: {}", run.stderr);

    let run = s.run(&["check", "--no-project", "--json"]);
    run.expect_code(0);
    let v = run.json();
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["diagnostics"], serde_json::json!([]), "{v}");
    assert_eq!(v["counts"]["modes"], 5, "{v}");
    assert!(
        v["counts"]["examples"].as_u64().unwrap() > 0,
        "the shipped bundle carries examples: {v}"
    );
    assert_eq!(v["sources"], serde_json::json!(["<shipped>"]), "{v}");
}

// ---------------------------------------------------------------------------------------------
// judge: the brief's table, cell by cell
// ---------------------------------------------------------------------------------------------

const A: &str = "allow";
const Q: &str = "ask";
const R: &str = "refuse";

/// The brief's table: a step's effects, and the decision in read-only, ask, workspace-write and
/// full. `{root}` is the workspace root, `{home}` the home directory, `{tmpdir}` `$TMPDIR`.
#[rustfmt::skip]
const TABLE: &[(&str, &str, [&str; 4])] = &[
    // step                              effects                                                [ro, ask, ww, full]
    ("no effects at all",                r#"{}"#,                                                [A, A, A, A]),
    ("reads inside (absolute)",          r#"{"reads":["{root}/src/lib.rs"]}"#,                   [A, A, A, A]),
    ("reads inside (relative)",          r#"{"reads":["./src/lib.rs"]}"#,                        [A, A, A, A]),
    ("reads the workspace by name",      r#"{"reads":["workspace"]}"#,                           [A, A, A, A]),
    ("reads outside the workspace",      r#"{"reads":["/etc/hosts"]}"#,                          [Q, Q, Q, A]),
    ("reads unknown",                    r#"{"reads":["*"]}"#,                                   [Q, Q, Q, A]),
    ("reads a secret: ~/.ssh/id_rsa",    r#"{"reads":["~/.ssh/id_rsa"]}"#,                       [R, R, R, A]),
    ("reads a secret: ~/.ssh",           r#"{"reads":["{home}/.ssh"]}"#,                         [R, R, R, A]),
    ("reads a secret: ~/.aws",           r#"{"reads":["~/.aws/credentials"]}"#,                  [R, R, R, A]),
    ("reads a secret: ~/.gnupg",         r#"{"reads":["~/.gnupg/pubring.kbx"]}"#,                [R, R, R, A]),
    ("reads a secret: .env inside",      r#"{"reads":["{root}/.env"]}"#,                         [R, R, R, A]),
    ("reads a secret: nested .env.*",    r#"{"reads":["{root}/config/.env.production"]}"#,       [R, R, R, A]),
    ("reads a secret: credential file",  r#"{"reads":["~/.git-credentials"]}"#,                  [R, R, R, A]),
    ("writes inside, reversible",        r#"{"writes":["{root}/src/lib.rs"]}"#,                  [R, Q, A, A]),
    ("writes inside, irreversible",      r#"{"writes":["{root}/target"],"reversible":false}"#,   [R, Q, A, A]),
    // Covers the protected paths without naming them: judged like an unknown write (the brief).
    ("writes the workspace by name",     r#"{"writes":["workspace"]}"#,                          [R, Q, Q, A]),
    ("writes the workspace, contained",  r#"{"writes":["workspace"],"contained":true}"#,         [R, Q, A, A]),
    ("writes .git, which holds hooks",   r#"{"writes":["{root}/.git"]}"#,                        [R, Q, Q, A]),
    ("writes to /tmp",                   r#"{"writes":["/tmp/sixfold-cli-test/scratch.txt"]}"#, [R, Q, A, A]),
    ("writes to $TMPDIR",                r#"{"writes":["{tmpdir}/scratch.txt"]}"#,               [R, Q, A, A]),
    ("writes the temp dir by name",      r#"{"writes":["tmp"]}"#,                                [R, Q, A, A]),
    ("writes protected: .git/hooks/**",  r#"{"writes":["{root}/.git/hooks/pre-commit"]}"#,       [R, R, R, A]),
    ("writes protected: .git/config",    r#"{"writes":["{root}/.git/config"]}"#,                 [R, R, R, A]),
    ("writes protected: .sixfold/**",   r#"{"writes":["{root}/.sixfold/modes/mine.toml"]}"#,   [R, R, R, A]),
    ("writes protected: .claude/**",     r#"{"writes":["{root}/.claude/settings.json"]}"#,       [R, R, R, A]),
    ("writes protected: .codex/**",      r#"{"writes":["{root}/.codex/config.toml"]}"#,          [R, R, R, A]),
    ("writes protected: .mcp.json",      r#"{"writes":["{root}/.mcp.json"]}"#,                   [R, R, R, A]),
    ("writes outside the workspace",     r#"{"writes":["/etc/hosts"]}"#,                         [R, R, R, A]),
    ("writes outside (missing dir)",     r#"{"writes":["/opt/sixfold-nowhere/file"]}"#,         [R, R, R, A]),
    ("writes unknown, contained",        r#"{"writes":["*"],"contained":true}"#,                 [R, Q, A, A]),
    ("writes unknown, not contained",    r#"{"writes":["*"]}"#,                                  [R, Q, Q, A]),
    ("reaches the network",              r#"{"reaches":true}"#,                                  [R, Q, R, A]),
    ("costs money",                      r#"{"costs":true}"#,                                    [R, Q, Q, A]),
    ("strictest: writes in + reaches",   r#"{"writes":["{root}/src/lib.rs"],"reaches":true}"#,   [R, Q, R, A]),
    ("strictest: writes in + secret",    r#"{"reads":["~/.ssh/id_rsa"],"writes":["./a.rs"]}"#,   [R, R, R, A]),
    ("strictest: reads outside + costs", r#"{"reads":["/etc/hosts"],"costs":true}"#,             [R, Q, Q, A]),
];

#[test]
fn judge_follows_the_brief_table_in_every_mode() {
    let s = Sandbox::new();
    let mut failures = Vec::new();
    for (note, effects, expected) in TABLE {
        for (mode, want) in MODES.iter().zip(expected) {
            let j = s.judge(mode, effects, &[]);
            if j.decision != *want {
                failures.push(format!(
                    "{mode:>15} | {note}: expected {want}, got {} ({})",
                    j.decision, j.reason
                ));
            }
            // Every shipped mode's default is `allow`, so anything stricter came from a rule
            // (or the ceiling), and names it.
            if j.decision != "allow" && j.rules.is_empty() {
                failures.push(format!(
                    "{mode:>15} | {note}: {} names no rule ({})",
                    j.decision, j.reason
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} cells differ from the brief:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn judge_names_the_rules_that_decided() {
    let s = Sandbox::new();
    let j = s.judge(
        "workspace-write",
        r#"{"writes":["{root}/src/lib.rs"],"reaches":true}"#,
        &[],
    );
    assert_eq!(j.decision, "refuse");
    assert_eq!(j.rules, vec!["workspace-write/reaches".to_string()], "{j:?}");
    assert!(j.reason.contains("reaches the network"), "{j:?}");

    let j = s.judge("ask", r#"{"reads":["~/.ssh/id_rsa"]}"#, &[]);
    assert!(j.has_rule("secrets/reads-secret"), "{j:?}");
    assert!(
        j.reason.contains(&s.home().join(".ssh/id_rsa").display().to_string()),
        "the reason names the path: {j:?}"
    );

    let j = s.judge("read-only", r#"{"writes":["{root}/src/lib.rs"]}"#, &[]);
    assert_eq!(j.decision, "refuse");
    assert!(j.has_rule("read-only/ceiling"), "{j:?}");

    let j = s.judge("full", r#"{"writes":["/etc/hosts"]}"#, &[]);
    assert_eq!(j.decision, "allow");
    assert!(j.rules.is_empty(), "the default decided: {j:?}");
    assert!(j.reason.contains("default"), "{j:?}");
}

// ---------------------------------------------------------------------------------------------
// judge: paths
// ---------------------------------------------------------------------------------------------

/// A path under the root that climbs out of it with `..`, past `/`, to `/etc/…`.
fn climbing_out(root: &Path) -> String {
    let ups = "../".repeat(root.components().count() + 3);
    format!("{}/src/{ups}etc/sixfold-escape", root.display())
}

#[test]
fn dotdot_out_of_the_root_is_outside() {
    let s = Sandbox::new();
    let path = climbing_out(&s.root());
    let effects = serde_json::json!({ "writes": [path] }).to_string();
    let j = s.judge("workspace-write", &effects, &[]);
    assert_eq!(j.decision, "refuse", "{j:?}");
    assert!(j.has_rule("boundaries/writes-outside"), "{j:?}");
    assert!(
        j.reason.contains("/etc/sixfold-escape"),
        "the reason names the normalised path: {j:?}"
    );

    // Relative, too.
    let rel = format!(
        "./src/{}etc/sixfold-escape",
        "../".repeat(s.root().components().count() + 3)
    );
    let effects = serde_json::json!({ "writes": [rel] }).to_string();
    assert_eq!(s.judge("workspace-write", &effects, &[]).decision, "refuse");

    // `..` that stays inside is inside.
    let j = s.judge("ask", r#"{"writes":["{root}/src/../README.md"]}"#, &[]);
    assert!(j.has_rule("ask/writes-workspace"), "{j:?}");
    assert_eq!(
        s.judge("workspace-write", r#"{"writes":["{root}/src/../README.md"]}"#, &[])
            .decision,
        "allow"
    );

    // `..` that lands on a protected path is protected.
    let j = s.judge("workspace-write", r#"{"writes":["{root}/src/../.git/config"]}"#, &[]);
    assert_eq!(j.decision, "refuse", "{j:?}");
    assert!(j.has_rule("protected/writes-protected"), "{j:?}");
}

#[cfg(unix)]
#[test]
fn symlinks_are_followed() {
    use std::os::unix::fs::symlink;
    let s = Sandbox::new();
    let root = s.root();
    symlink("/etc", root.join("etc-link")).unwrap();
    symlink(root.join("src"), root.join("src-link")).unwrap();
    symlink("src", root.join("src-relative-link")).unwrap();
    symlink(".git/hooks", root.join("hooks-link")).unwrap();

    // Inside, pointing outside: outside.
    let j = s.judge(
        "workspace-write",
        r#"{"writes":["{root}/etc-link/sixfold-escape"]}"#,
        &[],
    );
    assert_eq!(j.decision, "refuse", "{j:?}");
    assert!(j.has_rule("boundaries/writes-outside"), "{j:?}");
    let j = s.judge("ask", r#"{"reads":["{root}/etc-link/hosts"]}"#, &[]);
    assert!(
        j.has_rule("boundaries/reads-outside"),
        "a read through the link is outside too: {j:?}"
    );

    // Inside, pointing inside: inside.
    for link in ["src-link", "src-relative-link"] {
        let effects = format!(r#"{{"writes":["{{root}}/{link}/new.rs"]}}"#);
        let j = s.judge("workspace-write", &effects, &[]);
        assert_eq!(j.decision, "allow", "{link}: {j:?}");
        let j = s.judge("ask", &effects, &[]);
        assert_eq!(j.decision, "ask", "{link}: {j:?}");
        assert!(j.has_rule("ask/writes-workspace"), "{link}: {j:?}");
    }

    // Inside, pointing at a protected path: protected.
    let j = s.judge("workspace-write", r#"{"writes":["{root}/hooks-link/pre-commit"]}"#, &[]);
    assert_eq!(j.decision, "refuse", "{j:?}");
    assert!(j.has_rule("protected/writes-protected"), "{j:?}");
}

#[cfg(unix)]
#[test]
fn a_symlinked_root_is_still_the_workspace() {
    use std::os::unix::fs::symlink;
    let s = Sandbox::new();
    let alias = s.cwd.path().join("root-alias");
    symlink(s.root(), &alias).unwrap();
    let effects = serde_json::json!({ "writes": [s.root().join("src/lib.rs")] }).to_string();
    let run = s.run(&[
        "judge",
        "--no-project",
        "--mode",
        "ask",
        "--root",
        alias.to_str().unwrap(),
        "--effects",
        &effects,
    ]);
    run.expect_code(0);
    let j = Judged::parse(&run, "ask");
    assert!(j.has_rule("ask/writes-workspace"), "{j:?}");
}

#[test]
fn a_named_root_is_workspace() {
    let s = Sandbox::new();
    let docs = scratch("sixfold-docs-");
    let docs_path = canonical(&docs);
    let named = format!("docs={}", docs_path.display());
    let write = |p: &str| serde_json::json!({ "writes": [docs_path.join(p)] }).to_string();

    let j = s.judge("workspace-write", &write("guide.md"), &["--root", &named]);
    assert_eq!(j.decision, "allow", "{j:?}");
    let j = s.judge("ask", &write("guide.md"), &["--root", &named]);
    assert!(j.has_rule("ask/writes-workspace"), "{j:?}");
    let j = s.judge("read-only", &write("guide.md"), &["--root", &named]);
    assert_eq!(j.decision, "refuse", "{j:?}");

    // By its name, and as part of `workspace`.
    let j = s.judge("ask", r#"{"writes":["docs"]}"#, &["--root", &named]);
    assert!(j.has_rule("ask/writes-workspace"), "{j:?}");

    // Protected paths are relative to every root.
    let j = s.judge("workspace-write", &write(".git/config"), &["--root", &named]);
    assert_eq!(j.decision, "refuse", "{j:?}");
    assert!(j.has_rule("protected/writes-protected"), "{j:?}");

    // Without the named root the same place is not the workspace.
    let j = s.judge("ask", &write("guide.md"), &[]);
    assert!(!j.has_rule("ask/writes-workspace"), "{j:?}");
    let j = s.judge("workspace-write", &write(".git/config"), &[]);
    assert!(
        !j.has_rule("protected/writes-protected"),
        "not a root, so not protected: {j:?}"
    );
}

#[test]
fn relative_paths_resolve_against_the_current_directory_without_root() {
    let s = Sandbox::new();
    let run = s.run(&[
        "judge",
        "--no-project",
        "--mode",
        "ask",
        "--effects",
        r#"{"writes":["./notes.txt"]}"#,
    ]);
    run.expect_code(0);
    let j = Judged::parse(&run, "ask");
    assert!(
        j.has_rule("ask/writes-workspace"),
        "the current directory is the workspace: {j:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// judge: bad input
// ---------------------------------------------------------------------------------------------

fn assert_usage_error(run: &Run, needle: &str) {
    run.expect_code(2);
    assert!(
        run.stdout.trim().is_empty(),
        "nothing on stdout for an error: {}",
        run.stdout
    );
    assert!(run.stderr.contains("error:"), "{}", run.stderr);
    assert!(run.stderr.contains(needle), "expected `{needle}` in:\n{}", run.stderr);
    assert!(run.stderr.contains("help:"), "an error offers help:\n{}", run.stderr);
}

#[test]
fn effects_that_are_not_an_object_are_refused() {
    let s = plain();
    for effects in ["[1]", r#""writes""#, "42", "null", "true"] {
        let run = s.judge_run("ask", effects, &[]);
        assert_usage_error(&run, "must be a JSON object");
    }
}

#[test]
fn invalid_effects_json_names_line_and_column() {
    let s = plain();
    let run = s.judge_run("ask", "{\n  \"writes\": [\"a\",]\n}", &[]);
    assert_usage_error(&run, "not valid JSON");
    assert!(run.stderr.contains("line 2"), "{}", run.stderr);
    let run = s.judge_run("ask", "{x", &[]);
    assert_usage_error(&run, "line 1, column 2");
    let run = s.judge_run("ask", "", &[]);
    assert_usage_error(&run, "not valid JSON");
}

#[test]
fn unknown_or_mistyped_effects_fields_are_refused() {
    let s = plain();
    let run = s.judge_run("ask", r#"{"writez":["workspace"]}"#, &[]);
    assert_usage_error(&run, "unknown field `writez`");
    let run = s.judge_run("ask", r#"{"reaches":"yes"}"#, &[]);
    assert_usage_error(&run, "do not fit the effect profile");
    let run = s.judge_run("ask", r#"{"writes":"workspace"}"#, &[]);
    assert_usage_error(&run, "do not fit the effect profile");
}

#[test]
fn an_unknown_mode_lists_the_modes() {
    let s = plain();
    let run = s.judge_run("wrokspace-write", "{}", &[]);
    assert_usage_error(&run, "no mode `wrokspace-write`");
    for mode in MODES {
        assert!(
            run.stderr.contains(&format!("`{mode}`")),
            "the modes are listed:\n{}",
            run.stderr
        );
    }
}

#[test]
fn effects_come_from_stdin_when_not_given() {
    let s = Sandbox::new();
    let root = s.root();
    let args = [
        "judge",
        "--no-project",
        "--mode",
        "workspace-write",
        "--root",
        root.to_str().unwrap(),
    ];
    let run = s.run_with_stdin(&args, &s.fill(r#"{"writes":["{root}/src/lib.rs"]}"#));
    run.expect_code(0);
    assert_eq!(Judged::parse(&run, "workspace-write").decision, "allow");
    let run = s.run_with_stdin(&args, &s.fill("{\"writes\":[\"/etc/hosts\"]}\n"));
    run.expect_code(0);
    assert_eq!(Judged::parse(&run, "workspace-write").decision, "refuse");
    let run = s.run_with_stdin(&args, "not json");
    assert_usage_error(&run, "not valid JSON");
    let run = s.run_with_stdin(&args, "[]");
    assert_usage_error(&run, "must be a JSON object");
}

#[test]
fn other_usage_errors_exit_2() {
    let s = plain();
    let run = s.judge_run("ask", "{}", &["--context", "[1]"]);
    assert_usage_error(&run, "--context must be a JSON object");
    let run = s.judge_run("ask", "{}", &["--root", "/somewhere/else"]);
    assert_usage_error(&run, "second primary root");
    // No --mode: the project's active mode, here (no project layer) the default mode.
    let run = s.run(&["judge", "--no-project", "--effects", "{\"writes\":[\"workspace\"]}"]);
    run.expect_code(0);
    assert!(run.stdout.contains("\"mode\":\"ask\""), "{}", run.stdout);
    let run = s.run(&["judge", "--no-project", "--mode", "no-such-mode", "--effects", "{}"]);
    assert_usage_error(&run, "there is no mode");
    let run = s.run(&["frobnicate"]);
    run.expect_code(2);
}

// ---------------------------------------------------------------------------------------------
// bad bundles
// ---------------------------------------------------------------------------------------------

/// One diagnostic as rendered on stderr: the `-->` location, and whether a `help:` follows it.
#[derive(Debug)]
struct Rendered {
    file: String,
    line: usize,
    column: usize,
    message: String,
    help: Option<String>,
}

/// Splits `check`'s stderr into diagnostics (blocks starting with `error:`).
fn rendered(stderr: &str) -> Vec<Rendered> {
    let mut out: Vec<Rendered> = Vec::new();
    for line in stderr.lines() {
        if let Some(message) = line.strip_prefix("error: ") {
            out.push(Rendered {
                file: String::new(),
                line: 0,
                column: 0,
                message: message.to_string(),
                help: None,
            });
        } else if let Some(location) = line.trim_start().strip_prefix("--> ") {
            let Some(d) = out.last_mut() else { continue };
            let mut parts = location.rsplitn(3, ':');
            let (c, l, f) = (parts.next(), parts.next(), parts.next());
            match (c.and_then(|c| c.parse().ok()), l.and_then(|l| l.parse().ok()), f) {
                (Some(c), Some(l), Some(f)) => {
                    d.file = f.to_string();
                    d.line = l;
                    d.column = c;
                }
                _ => d.file = location.to_string(),
            }
        } else if let Some(help) = line.trim_start().strip_prefix("= help: ") {
            if let Some(d) = out.last_mut() {
                d.help = Some(help.to_string());
            }
        }
    }
    out
}

/// Runs `check` on a fixture: exit 1, and the diagnostics as rendered and as JSON.
fn check_fixture(case: &str) -> (Run, Vec<Rendered>, Vec<Value>) {
    let s = plain();
    let dir = fixture(case);
    let run = s.run(&["check", "--no-project", "--bundle", dir.to_str().unwrap()]);
    run.expect_code(1);
    let shown = rendered(&run.stderr);
    let json = s.run(&["check", "--no-project", "--json", "--bundle", dir.to_str().unwrap()]);
    json.expect_code(1);
    let v = json.json();
    assert_eq!(v["ok"], false, "{v}");
    let diagnostics = v["diagnostics"].as_array().unwrap().clone();
    (run, shown, diagnostics)
}

/// Asserts one diagnostic of `case` is at `file_suffix:line:column` (column ≥ 1), with help, and
/// its message contains `message`. Returns its help text.
fn assert_located(
    case: &str,
    shown: &[Rendered],
    json: &[Value],
    file_suffix: &str,
    line: usize,
    message: &str,
) -> String {
    let suffix = format!("{case}/{file_suffix}");
    let found = shown
        .iter()
        .find(|d| d.file.ends_with(&suffix))
        .unwrap_or_else(|| panic!("{case}: no diagnostic names {suffix}: {shown:#?}"));
    assert_eq!(found.line, line, "{case}: wrong line: {found:#?}");
    assert!(found.column >= 1, "{case}: no column: {found:#?}");
    assert!(
        found.message.contains(message),
        "{case}: expected `{message}` in {found:#?}"
    );
    let help = found
        .help
        .clone()
        .unwrap_or_else(|| panic!("{case}: no help line: {found:#?}"));
    assert!(!help.trim().is_empty());
    let in_json = json
        .iter()
        .find(|d| d["file"].as_str().is_some_and(|f| f.ends_with(&suffix)))
        .unwrap_or_else(|| panic!("{case}: --json has no diagnostic for {suffix}: {json:#?}"));
    assert_eq!(in_json["line"], line, "{case}: {in_json}");
    assert_eq!(in_json["column"], found.column, "{case}: {in_json}");
    assert!(in_json["hint"].is_string(), "{case}: {in_json}");
    help
}

/// Each bad-bundle fixture with one problem: (case, file, line, part of the message).
const BAD_BUNDLES: &[(&str, &str, usize, &str)] = &[
    ("malformed-toml", "modes/broken.toml", 4, ""),
    ("wrong-type", "modes/typed.toml", 5, ""),
    ("unknown-key", "policies/extra.toml", 8, "unknown field `whenn`"),
    ("rhai-syntax", "policies/broken.rhai", 4, "does not compile"),
    ("endless-loop", "policies/spin.toml", 13, "expected `ask`, got `refuse`"),
    (
        "endless-recursion",
        "policies/deep.toml",
        13,
        "expected `ask`, got `refuse`",
    ),
    (
        "extends-missing",
        "modes/orphan.toml",
        5,
        "`no-such-mode`, which does not exist",
    ),
    ("widens-ceiling", "modes/peek.toml", 4, "widens the mode it extends"),
    ("widens-rule", "modes/lenient.toml", 5, "widens the mode it extends"),
    (
        "failing-example",
        "modes/wrong.toml",
        12,
        "expected `allow`, got `refuse`",
    ),
];

#[test]
fn each_bad_bundle_is_reported_with_file_line_column_and_help() {
    for (case, file, line, message) in BAD_BUNDLES {
        let (run, shown, json) = check_fixture(case);
        assert_eq!(shown.len(), 1, "{case}: exactly one problem expected:\n{}", run.stderr);
        assert_eq!(json.len(), 1, "{case}: {json:#?}");
        assert_located(case, &shown, &json, file, *line, message);
        assert!(run.stderr.contains("1 problem found"), "{case}: {}", run.stderr);
    }
}

#[test]
fn a_script_that_never_returns_is_reported_by_its_failing_example() {
    for (case, limit) in [("endless-loop", None), ("endless-recursion", Some("call-depth limit"))] {
        let (_, shown, json) = check_fixture(case);
        let file = if case == "endless-loop" {
            "policies/spin.toml"
        } else {
            "policies/deep.toml"
        };
        let help = assert_located(case, &shown, &json, file, 13, "example failed");
        assert!(help.contains("failed, so it refuses"), "{case}: {help}");
        match limit {
            Some(limit) => assert!(help.contains(limit), "{case}: {help}"),
            None => assert!(help.contains("limit") || help.contains("deadline"), "{case}: {help}"),
        }
    }
}

#[test]
fn the_widened_mode_does_not_load_but_its_parent_does() {
    let s = plain();
    let dir = fixture("widens-rule");
    let run = s.run(&["modes", "--no-project", "--json", "--bundle", dir.to_str().unwrap()]);
    run.expect_code(1);
    let ids: Vec<String> = run.json()["modes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_string())
        .collect();
    assert!(ids.contains(&"careful".to_string()), "{ids:?}");
    assert!(
        !ids.contains(&"lenient".to_string()),
        "a mode that widens its parent must not load: {ids:?}"
    );
}

#[test]
fn several_errors_in_one_bundle_are_all_reported_and_good_files_still_load() {
    let case = "many-errors";
    let (run, shown, json) = check_fixture(case);
    assert_eq!(shown.len(), 4, "all four problems in one run:\n{}", run.stderr);
    assert_eq!(json.len(), 4, "{json:#?}");
    assert_located(case, &shown, &json, "modes/bad-type.toml", 3, "expected a sequence");
    assert_located(
        case,
        &shown,
        &json,
        "policies/bad-key.toml",
        3,
        "unknown field `colour`",
    );
    assert_located(case, &shown, &json, "policies/bad.rhai", 3, "does not compile");
    assert_located(
        case,
        &shown,
        &json,
        "patterns/bad.toml",
        1,
        "missing field `meta_tools`",
    );
    assert!(run.stderr.contains("4 problems found"), "{}", run.stderr);

    // The good mode beside them loads, and so does the shipped bundle.
    let s = plain();
    let dir = fixture(case);
    let run = s.run(&["modes", "--no-project", "--bundle", dir.to_str().unwrap()]);
    run.expect_code(1);
    let listed: Vec<&str> = run.stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    for id in ["good", "ask", "full", "read-only", "workspace-write"] {
        assert!(
            listed.contains(&id),
            "`{id}` is listed: {listed:?}\nstderr:\n{}",
            run.stderr
        );
    }
    assert!(
        rendered(&run.stderr).len() == 4,
        "modes reports the problems too:\n{}",
        run.stderr
    );

    // The same for a malformed file beside a good one.
    let dir = fixture("malformed-toml");
    let run = s.run(&["modes", "--no-project", "--bundle", dir.to_str().unwrap()]);
    run.expect_code(1);
    assert!(run.stdout.lines().any(|l| l.starts_with("intact ")), "{}", run.stdout);
}

#[test]
fn judge_refuses_a_step_whose_files_are_broken_and_judges_beside_them_as_the_hook() {
    let s = Sandbox::new();
    let dir = fixture("many-errors");
    // The step's own mode is broken: nothing is judged, and the problem is shown where it is.
    let run = s.judge_run("bad-type", "{}", &["--bundle", dir.to_str().unwrap()]);
    assert_usage_error(&run, "the bundle has errors");
    assert!(
        run.stderr.contains("bad-type.toml:3:"),
        "the problem is shown:\n{}",
        run.stderr
    );
    // One step reads what the hook reads for it: beside broken files it does not read, it is
    // judged as the hook judges it (`sixfold check` reports them).
    let j = s.judge("good", "{}", &["--bundle", dir.to_str().unwrap()]);
    assert_eq!(j.decision, "ask", "{j:?}");
    let check = s.run(&["check", "--no-project", "--bundle", dir.to_str().unwrap()]);
    assert_ne!(check.code, 0, "{}", check.stderr);
    assert!(check.stderr.contains("bad-key.toml:3:") || check.stdout.contains("bad-key.toml:3:"));
}

#[test]
fn a_looping_or_recursing_rule_script_makes_judge_refuse() {
    let s = Sandbox::new();
    for (case, mode, rule, said) in [
        ("endless-loop", "spinning", "spin/spins", None),
        (
            "endless-recursion",
            "recursing",
            "deep/deeper",
            Some("call-depth limit"),
        ),
    ] {
        let dir = fixture(case);
        let bundle = ["--bundle", dir.to_str().unwrap()];
        let j = s.judge(mode, r#"{"writes":["{root}/src/lib.rs"]}"#, &bundle);
        assert_eq!(j.decision, "refuse", "{case}: a rule that errors fails closed: {j:?}");
        assert_eq!(j.rules, vec![rule.to_string()], "{case}: {j:?}");
        assert!(j.reason.contains("failed, so it refuses"), "{case}: {j:?}");
        match said {
            Some(said) => assert!(j.reason.contains(said), "{case}: {j:?}"),
            None => assert!(
                j.reason.contains("limit") || j.reason.contains("deadline"),
                "{case}: {j:?}"
            ),
        }
        // A step the rule does not match never runs the script.
        let j = s.judge(mode, r#"{"reads":["{root}/src/lib.rs"]}"#, &bundle);
        assert_eq!(j.decision, "allow", "{case}: {j:?}");
    }
}

#[test]
fn a_missing_bundle_directory_is_an_error() {
    let s = plain();
    let missing = s.cwd.path().join("no-such-bundle");
    let run = s.run(&["check", "--no-project", "--bundle", missing.to_str().unwrap()]);
    run.expect_code(1);
    assert!(run.stderr.contains("does not exist"), "{}", run.stderr);
    assert!(run.stderr.contains("help:"), "{}", run.stderr);
}

// ---------------------------------------------------------------------------------------------
// Known bugs: these assert the correct behaviour (see the report that came with them).
// ---------------------------------------------------------------------------------------------

/// A TOML syntax error is not a type error: its help must not send the reader to the schema's
/// types. (core `bundle/mod.rs` `parse` picks the hint by searching the message for "expected".)
#[test]
fn a_toml_syntax_error_gets_a_syntax_hint() {
    let (_, shown, json) = check_fixture("malformed-toml");
    let help = assert_located("malformed-toml", &shown, &json, "modes/broken.toml", 4, "");
    assert!(
        help.contains("syntax"),
        "a syntax error's help should be about syntax, got: {help}"
    );
}

/// A decision of the wrong type names the values it may take and gets a type hint.
/// (Today: "wanted string or table", with the hint "check the TOML syntax near this point".)
#[test]
fn a_mistyped_decision_says_what_it_may_be() {
    let (_, shown, json) = check_fixture("wrong-type");
    let help = assert_located("wrong-type", &shown, &json, "modes/typed.toml", 5, "");
    let message = &shown[0].message;
    assert!(
        message.contains("allow") && message.contains("ask") && message.contains("refuse"),
        "the message should list the decisions, got: {message}"
    );
    assert!(
        help.contains("type"),
        "a type error's help should be about types, got: {help}"
    );
}

/// A mode's rule may name a script beside the mode file (`RuleFile::script`: "a Rhai file beside
/// this one"), but a bundle directory's `modes/*.rhai` is never read (core `bundle/source.rs`
/// `is_bundle_file`), so the rule cannot load.
#[test]
fn a_mode_rule_can_use_a_script_beside_the_mode() {
    let s = Sandbox::new();
    let bundle = scratch("sixfold-bundle-");
    let modes = bundle.path().join("modes");
    std::fs::create_dir_all(&modes).unwrap();
    std::fs::write(
        modes.join("scripted.toml"),
        "id = \"scripted\"\ndefault = \"allow\"\n\n[[rules]]\nid = \"costly\"\ndecision = \"ask\"\n\
         reason = \"the script says so\"\nscript = \"scripted.rhai\"\nfunction = \"applies\"\n",
    )
    .unwrap();
    std::fs::write(
        modes.join("scripted.rhai"),
        "fn applies(effects, context) { effects.costs }\n",
    )
    .unwrap();
    let dir = bundle.path().to_str().unwrap();
    let run = s.run(&["check", "--no-project", "--bundle", dir]);
    assert_eq!(run.code, 0, "the bundle should load:\n{}", run.stderr);
    let j = s.judge("scripted", r#"{"costs":true}"#, &["--bundle", dir]);
    assert_eq!(j.decision, "ask", "{j:?}");
}

// ---------------------------------------------------------------------------------------------
// modes, schema, the project bundle, help
// ---------------------------------------------------------------------------------------------

#[test]
fn modes_lists_the_shipped_modes() {
    let s = plain();
    let run = s.run(&["modes", "--no-project"]);
    run.expect_code(0);
    let listed: Vec<&str> = run.stdout.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(
        listed,
        vec!["ask", "full", "keep-work", "read-only", "workspace-write"],
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("(narrows `ask`)"), "{}", run.stdout);

    let run = s.run(&["modes", "--no-project", "--json"]);
    run.expect_code(0);
    let v = run.json();
    let list = v["modes"].as_array().unwrap();
    let mut ids: Vec<&str> = list.iter().map(|m| m["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, vec!["ask", "full", "keep-work", "read-only", "workspace-write"]);
    for m in list {
        assert!(m["description"].as_str().is_some_and(|d| !d.is_empty()), "{m}");
        assert!(
            m["file"].as_str().is_some_and(|f| f.starts_with("<shipped>/modes/")),
            "{m}"
        );
        assert!(m["environment"].is_string(), "{m}");
    }
    let ro = list.iter().find(|m| m["id"] == "read-only").unwrap();
    assert_eq!(ro["extends"], "ask", "{ro}");
}

const KINDS: [&str; 6] = ["mode", "policy", "pattern", "provider", "effects", "launch-facts"];

#[test]
fn schema_prints_json_schema() {
    let s = plain();
    for kind in KINDS {
        let run = s.run(&["schema", kind]);
        run.expect_code(0);
        let v = run.json();
        assert!(v.get("$schema").is_some(), "{kind}: no $schema");
    }
    let run = s.run(&["schema"]);
    run.expect_code(0);
    let all = run.json();
    for kind in KINDS {
        assert!(
            all[kind].get("$schema").is_some(),
            "{kind} missing from `sixfold schema`"
        );
    }
    let run = s.run(&["schema", "nonsense"]);
    run.expect_code(2);
}

#[test]
fn the_committed_schemas_match_the_binary() {
    let s = plain();
    let dir = repo().join("docs/schema");
    for kind in KINDS {
        let file = dir.join(format!("{kind}.json"));
        let committed = std::fs::read_to_string(&file).unwrap_or_else(|e| {
            panic!(
                "{}: {e}: write it with `sixfold schema {kind} > docs/schema/{kind}.json`",
                file.display()
            )
        });
        let committed: Value = serde_json::from_str(&committed).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let run = s.run(&["schema", kind]);
        run.expect_code(0);
        if let Some(at) = first_difference(&run.json(), &committed, String::new()) {
            panic!(
                "{} differs from `sixfold schema {kind}` at `{at}`: regenerate it with \
                 `sixfold schema {kind} > docs/schema/{kind}.json`",
                file.display()
            );
        }
    }
}

/// The JSON pointer of the first place two values differ, if any.
fn first_difference(a: &Value, b: &Value, at: String) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().find_map(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => first_difference(p, q, format!("{at}/{k}")),
                _ => Some(format!("{at}/{k}")),
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, format!("{at}/{i}"))),
        _ if a == b => None,
        _ => Some(if at.is_empty() { "/".to_string() } else { at }),
    }
}

#[test]
fn the_project_bundle_is_found_from_a_subdirectory() {
    let s = plain();
    let project = scratch("sixfold-project-");
    let modes = project.path().join(".sixfold/modes");
    std::fs::create_dir_all(&modes).unwrap();
    std::fs::write(
        modes.join("mine.toml"),
        "id = \"mine\"\ndescription = \"The project's own mode.\"\nextends = \"workspace-write\"\n\
         \n[[rules]]\nid = \"costs\"\ndecision = \"refuse\"\nreason = \"this project spends nothing\"\nwhen.costs = true\n",
    )
    .unwrap();
    let deep = project.path().join("src/deeper");
    std::fs::create_dir_all(&deep).unwrap();
    let in_project = |args: &[&str]| Run::from(s.command().current_dir(&deep).args(args).output().unwrap());

    let run = in_project(&["modes"]);
    run.expect_code(0);
    assert!(run.stdout.lines().any(|l| l.starts_with("mine ")), "{}", run.stdout);

    let run = in_project(&["check", "--json"]);
    run.expect_code(0);
    let sources = run.json()["sources"].clone();
    assert!(
        sources
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().ends_with(".sixfold")),
        "{sources}"
    );

    let run = in_project(&["judge", "--mode", "mine", "--effects", r#"{"costs":true}"#]);
    run.expect_code(0);
    let j = Judged::parse(&run, "mine");
    assert_eq!(j.decision, "refuse", "{j:?}");
    assert!(j.has_rule("mine/costs"), "{j:?}");

    let run = in_project(&["modes", "--no-project"]);
    run.expect_code(0);
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("mine ")),
        "--no-project ignores it: {}",
        run.stdout
    );
}

#[test]
fn help_explains_each_command() {
    let s = plain();
    let cases: [(&[&str], &[&str]); 5] = [
        (
            &["--help"],
            &["judged by its effects", "check", "judge", "modes", "schema"],
        ),
        (
            &["check", "--help"],
            &["validate the bundle", "run every example", "--bundle", "--json"],
        ),
        (
            &["judge", "--help"],
            &["Judge one step's effects", "--mode", "--root", "--effects", "Example:"],
        ),
        (&["modes", "--help"], &["List the modes", "--json"]),
        (
            &["schema", "--help"],
            &["JSON Schema", "mode", "policy", "pattern", "provider", "effects"],
        ),
    ];
    for (args, needles) in cases {
        let run = s.run(args);
        run.expect_code(0);
        // Help is wrapped to the terminal's width: compare with whitespace collapsed.
        let flat = run.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
        for needle in needles {
            assert!(
                flat.contains(needle),
                "`sixfold {}` should mention `{needle}`:\n{}",
                args.join(" "),
                run.stdout
            );
        }
    }
    let run = s.run(&["--version"]);
    run.expect_code(0);
    assert!(run.stdout.starts_with("sixfold "), "{}", run.stdout);
}

#[test]
fn judge_says_what_decided_it() {
    let s = Sandbox::new();
    let by = |mode: &str, effects: &str, extra: &[&str]| {
        let run = s.judge_run(mode, effects, extra);
        run.expect_code(0);
        Judged::parse(&run, mode);
        run.json()["by"].as_str().unwrap_or_default().to_string()
    };
    assert_eq!(by("read-only", r#"{"writes":["{root}/a.rs"]}"#, &[]), "ceiling");
    assert_eq!(by("workspace-write", r#"{"reads":["~/.ssh/id_rsa"]}"#, &[]), "rules");
    assert_eq!(by("workspace-write", "{}", &[]), "default");
    // A rule whose script fails refuses, and says the refusal is a failure, not the policy's.
    let dir = fixture("endless-loop");
    let bundle = ["--bundle", dir.to_str().unwrap()];
    assert_eq!(
        by("spinning", r#"{"writes":["{root}/src/lib.rs"]}"#, &bundle),
        "unjudgeable"
    );
}

/// `sixfold` alone is a usage error, as clap makes a missing subcommand: exit 2, and on stderr the
/// commands a person uses first, each of which works outside a clone (tests/cli_surface.rs runs
/// them there).
#[test]
fn no_command_prints_how_to_start() {
    let s = plain();
    let run = s.run(&[]);
    run.expect_code(2);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    for needle in [
        "sixfold replay --example all --mode workspace-write",
        "sixfold judge --mode workspace-write --effects '{\"writes\":[\"/etc/hosts\"]}'",
        "sixfold modes",
        "sixfold install claude-code",
        "`sixfold --help`",
    ] {
        assert!(run.stderr.contains(needle), "`{needle}` missing:\n{}", run.stderr);
    }
    // The judge command it shows works as shown.
    let judged = s.run(&[
        "judge",
        "--no-project",
        "--mode",
        "workspace-write",
        "--effects",
        r#"{"writes":["/etc/hosts"]}"#,
    ]);
    judged.expect_code(0);
    assert_eq!(judged.json()["decision"], "refuse");
}

/// `sixfold schema | head -0`: the reader has gone before sixfold writes; every command writes
/// through one place that ends the output quietly and keeps the exit code.
#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    let s = plain();
    let cases: [&[&str]; 4] = [
        &["schema"],
        &["modes", "--no-project"],
        &["check", "--no-project"],
        &["--help"],
    ];
    for args in cases {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = s.command().args(args).stdout(writer).output().unwrap();
        let stderr = text(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}

/// `sixfold judge` with a project `.sixfold/` the user has not trusted: what the project widens
/// (a shipped mode replaced by one that allows everything) is ignored and said on stderr; what
/// it narrows counts. Trusted, it widens; changed, it is untrusted again.
#[test]
fn judge_narrows_to_an_untrusted_project_bundle() {
    let s = Sandbox::new();
    let state = s.home().join(".local/state");
    let bundle = s.cwd.path().join(".sixfold");
    std::fs::create_dir_all(bundle.join("modes")).unwrap();
    std::fs::write(
        bundle.join("modes/workspace-write.toml"),
        "id = \"workspace-write\"\ndefault = \"allow\"\n",
    )
    .unwrap();
    let judge = |effects: &str| {
        let root = s.root();
        let mut cmd = s.command();
        cmd.env("XDG_STATE_HOME", &state).args([
            "judge",
            "--mode",
            "workspace-write",
            "--root",
            root.to_str().unwrap(),
            "--effects",
            effects,
        ]);
        let run = Run::from(cmd.output().unwrap());
        run.expect_code(0);
        let decision = run.json()["decision"].as_str().unwrap().to_string();
        (decision, run.stderr)
    };
    let network = r#"{"reaches":true}"#;
    let (decision, stderr) = judge(network);
    assert_eq!(decision, "refuse", "{stderr}");
    assert!(stderr.contains("untrusted project bundle ignored"), "{stderr}");
    let trust = |args: &[&str]| {
        let mut cmd = s.command();
        cmd.env("XDG_STATE_HOME", &state).arg("trust").args(args);
        Run::from(cmd.output().unwrap())
    };
    trust(&[]).expect_code(0);
    assert_eq!(judge(network).0, "allow", "trusted, the project's mode stands");
    std::fs::write(
        bundle.join("modes/workspace-write.toml"),
        "id = \"workspace-write\"\ndefault = \"allow\"\n# changed\n",
    )
    .unwrap();
    assert_eq!(judge(network).0, "refuse", "changed, untrusted again");
    trust(&[]).expect_code(0);
    let revoked = trust(&["--revoke"]);
    revoked.expect_code(0);
    assert!(revoked.stdout.contains("no longer trusted"), "{}", revoked.stdout);
    assert_eq!(judge(network).0, "refuse");
    // Narrowing counts untrusted: a project mode that refuses what the shipped one allows.
    std::fs::write(
        bundle.join("modes/workspace-write.toml"),
        "id = \"workspace-write\"\ndefault = \"refuse\"\n",
    )
    .unwrap();
    let (decision, stderr) = judge(r#"{"reads":["workspace"]}"#);
    assert_eq!(decision, "refuse", "{stderr}");
}
