#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! `sixfold sandbox run|check` driven as a person would: the real binary, the shipped bundle's
//! environments, real sandboxes. Every forbidden thing is expected to fail and the disk (or the
//! test's own loopback listener) is checked afterwards. Nothing skips: a machine that cannot
//! build the sandbox fails these tests.

use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A workspace with its protected paths present (so its top level stays writable), a scratch
/// `$HOME` with a secret, a scratch `$TMPDIR`, a proof cache and a directory outside them all.
struct Scratch {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    tmp: PathBuf,
    cache: PathBuf,
    outside: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let [root, home, tmp, cache, outside] = ["root", "home", "tmp", "cache", "outside"].map(|name| base.join(name));
        for d in [&root, &home, &tmp, &cache, &outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        for d in [".git/hooks", ".sixfold", ".claude", ".codex", "src"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join(".git/config"), "[core]\n").unwrap();
        std::fs::write(root.join(".mcp.json"), "{\"mcpServers\":{}}").unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "ssh-private-key-secret\n").unwrap();
        Scratch {
            _dir: dir,
            root,
            home,
            tmp,
            cache,
            outside,
        }
    }

    /// `sixfold ARGS…` in the workspace, with the scratch `$HOME`, `$TMPDIR` and cache.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_sixfold"));
        cmd.args(args)
            .current_dir(&self.root)
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmp)
            .env("XDG_CACHE_HOME", &self.cache)
            .env("XDG_STATE_HOME", self.home.join(".local/state"))
            .stdin(Stdio::null());
        cmd
    }

    fn sixfold(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// `sixfold sandbox run --no-project --mode MODE -- bash -c SCRIPT`.
    fn run(&self, mode: &str, script: &str) -> Output {
        self.sixfold(&[
            "sandbox",
            "run",
            "--no-project",
            "--mode",
            mode,
            "--",
            "bash",
            "-c",
            script,
        ])
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn show(output: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr)
    )
}

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

#[test]
fn check_proves_workspace_write_and_read_only_here() {
    let s = Scratch::new();
    for mode in ["workspace-write", "read-only"] {
        let out = s.sixfold(&["sandbox", "check", "--no-project", "--mode", mode, "--json"]);
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", show(&out));
        let proof: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(proof["proven"], true, "{mode}: {proof:#}");
        let checks = proof["checks"].as_array().unwrap();
        assert!(checks
            .iter()
            .all(|c| c["held"] == true && c["name"].is_string() && c["detail"].is_string()));
        for name in ["write-outside-roots", "secret-hidden", "network-cut"] {
            assert!(
                checks.iter().any(|c| c["name"] == name),
                "{mode}: no {name} in {proof:#}"
            );
        }
        let inside = checks.iter().any(|c| c["name"] == "write-inside-root");
        assert_eq!(inside, mode == "workspace-write", "{mode}: {proof:#}");
    }
    let out = s.sixfold(&["sandbox", "check", "--no-project", "--mode", "workspace-write"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("proven: the environment `workspace-write` of mode `workspace-write`"),
        "{stdout}"
    );
    assert!(stdout.contains("held  protected-read-only"), "{stdout}");
}

#[test]
fn run_in_workspace_write_writes_inside_and_nowhere_else() {
    let s = Scratch::new();
    let out = s.run("workspace-write", "echo made > src/new.txt && echo made > new-top.txt");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(std::fs::read_to_string(s.root.join("src/new.txt")).unwrap(), "made\n");
    assert!(exists(&s.root.join("new-top.txt")));

    let out = s.run("workspace-write", "echo tmp > \"$TMPDIR/scratch.txt\"");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(exists(&s.tmp.join("scratch.txt")));

    let outside = s.outside.join("escaped.txt");
    let up = s.root.join("../outside/up.txt");
    let out = s.run(
        "workspace-write",
        &format!("echo x > '{}'; echo x > '{}'", outside.display(), up.display()),
    );
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        !exists(&outside) && !exists(&s.outside.join("up.txt")),
        "a write outside landed"
    );
    assert!(!exists(&s.home.join("escaped")));
    let out = s.run("workspace-write", &format!("touch '{}/escaped'", s.home.display()));
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!exists(&s.home.join("escaped")));
}

#[test]
fn run_in_workspace_write_keeps_protected_paths_and_hides_secrets() {
    let s = Scratch::new();
    let out = s.run("workspace-write", "echo '{\"mcpServers\":{\"evil\":{}}}' > .mcp.json");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(
        std::fs::read_to_string(s.root.join(".mcp.json")).unwrap(),
        "{\"mcpServers\":{}}"
    );

    let out = s.run("workspace-write", "printf '#!/bin/sh\\n' > .git/hooks/pre-commit");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!exists(&s.root.join(".git/hooks/pre-commit")));

    let out = s.run(
        "workspace-write",
        "echo x >> .git/config; echo '{}' > .claude/settings.json",
    );
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(std::fs::read_to_string(s.root.join(".git/config")).unwrap(), "[core]\n");
    assert!(!exists(&s.root.join(".claude/settings.json")));

    let out = s.run("workspace-write", "cat \"$HOME/.ssh/id_ed25519\"");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!text(&out.stdout).contains("ssh-private-key-secret"), "{}", show(&out));
}

#[test]
fn run_in_workspace_write_cuts_the_network() {
    let s = Scratch::new();
    // The only address tried is this test's own listener on the host's loopback.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = s.run(
        "workspace-write",
        &format!("echo hello > /dev/tcp/127.0.0.1/{port} && echo connected"),
    );
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!text(&out.stdout).contains("connected"), "{}", show(&out));
    assert!(listener.accept().is_err(), "the listener saw a connection from inside");
}

#[test]
fn run_passes_the_exit_status_and_stdin_through() {
    let s = Scratch::new();
    let out = s.run("workspace-write", "exit 42");
    assert_eq!(out.status.code(), Some(42), "{}", show(&out));

    let mut child = s
        .command(&[
            "sandbox",
            "run",
            "--no-project",
            "--mode",
            "workspace-write",
            "--",
            "tr",
            "a-z",
            "A-Z",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"through the sandbox\n").unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(text(&out.stdout), "THROUGH THE SANDBOX\n");
}

#[test]
fn run_in_read_only_writes_nothing() {
    let s = Scratch::new();
    let out = s.run("read-only", "echo x > src/new.txt");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!exists(&s.root.join("src/new.txt")));
    let out = s.run("read-only", "echo x > \"$TMPDIR/scratch.txt\"");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!exists(&s.tmp.join("scratch.txt")));
    let out = s.run("read-only", "cat src/../.git/config");
    assert_eq!(out.status.code(), Some(0), "reading is allowed: {}", show(&out));
}

#[test]
fn run_in_full_runs_the_command_as_it_is() {
    let s = Scratch::new();
    let outside = s.outside.join("full.txt");
    let out = s.run("full", &format!("echo x > '{}'; exit 3", outside.display()));
    assert_eq!(out.status.code(), Some(3), "{}", show(&out));
    assert!(exists(&outside));
    let out = s.sixfold(&["sandbox", "check", "--no-project", "--mode", "full", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(text(&out.stdout).contains("confines nothing"), "{}", show(&out));
}

#[test]
fn an_unknown_mode_is_a_usage_error_with_a_hint() {
    let s = Scratch::new();
    let out = s.run("no-such-mode", "true");
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("there is no mode `no-such-mode`"), "{stderr}");
    assert!(
        stderr.contains("help: the modes are") && stderr.contains("`workspace-write`"),
        "{stderr}"
    );
}

#[test]
fn an_environment_that_cannot_be_proven_runs_nothing() {
    let s = Scratch::new();
    let missing = s.root.join("no-such-dir");
    let marker = s.root.join("ran");
    let script = format!("touch '{}'", marker.display());
    let out = s.sixfold(&[
        "sandbox",
        "run",
        "--no-project",
        "--mode",
        "workspace-write",
        "--root",
        missing.to_str().unwrap(),
        "--",
        "bash",
        "-c",
        &script,
    ]);
    assert_eq!(out.status.code(), Some(126), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("cannot be proven on this machine"), "{stderr}");
    assert!(stderr.contains("is not a directory"), "{stderr}");
    assert!(!exists(&marker));
    let out = s.sixfold(&[
        "sandbox",
        "check",
        "--no-project",
        "--mode",
        "workspace-write",
        "--root",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
}

#[test]
fn a_proof_is_cached_under_the_cache_home_and_the_active_mode_is_followed() {
    let s = Scratch::new();
    let out = s.run("workspace-write", "true");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let cached: Vec<_> = std::fs::read_dir(s.cache.join("sixfold/proofs")).unwrap().collect();
    assert_eq!(cached.len(), 1, "one proof cached");
    // A cached proof that does not read (garbage, here) is proved afresh, never trusted.
    let file = cached[0].as_ref().unwrap().path();
    std::fs::write(&file, "{ not a proof").unwrap();
    let outside_again = s.outside.join("after-garbage.txt");
    let out = s.run("workspace-write", &format!("touch {}", outside_again.display()));
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!exists(&outside_again));
    assert!(
        std::fs::read_to_string(&file).unwrap().contains("\"proven\""),
        "the proof is cached again"
    );
    // Without --mode, the project's active mode (here the default, `ask`, whose environment
    // is workspace-write) confines the command.
    let outside = s.outside.join("active.txt");
    let out = s.sixfold(&["sandbox", "run", "--", "touch", outside.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!exists(&outside));
}

/// A repository's own `.sixfold/state.toml` cannot choose `full` for the sandbox: until the user
/// trusts that content, the default mode's environment confines the command.
#[test]
fn an_untrusted_project_state_does_not_choose_the_environment() {
    let s = Scratch::new();
    std::fs::write(s.root.join(".sixfold/state.toml"), "mode = \"full\"\n").unwrap();
    let outside = s.outside.join("untrusted.txt");
    let out = s.sixfold(&["sandbox", "run", "--", "touch", outside.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!exists(&outside));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not trusted"),
        "{}",
        show(&out)
    );
    // Once the user trusts exactly that content, its mode applies.
    let trusted = s.sixfold(&["trust"]);
    assert_eq!(trusted.status.code(), Some(0), "{}", show(&trusted));
    let out = s.sixfold(&["sandbox", "run", "--", "touch", outside.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(exists(&outside));
}

/// A fresh workspace: no `.git`, `.mcp.json`, `.claude/`, `.codex/` or `.sixfold/` yet.
fn fresh() -> Scratch {
    let s = Scratch::new();
    for name in [".git", ".sixfold", ".claude", ".codex"] {
        std::fs::remove_dir_all(s.root.join(name)).unwrap();
    }
    std::fs::remove_file(s.root.join(".mcp.json")).unwrap();
    s
}

const PROTECTED_NAMES: [&str; 5] = [".git", ".mcp.json", ".claude", ".codex", ".sixfold"];

/// In a fresh workspace the root stays writable (`cargo test` makes `target/`), while the
/// protected paths that do not exist yet still cannot be created; nothing is left behind.
#[test]
fn a_fresh_workspace_stays_writable_and_its_missing_protected_paths_cannot_be_created() {
    let s = fresh();
    let out = s.run("workspace-write", "mkdir target && touch target/x NEWFILE && ls -a");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(exists(&s.root.join("target/x")) && exists(&s.root.join("NEWFILE")));
    for script in [
        "echo '{\"mcpServers\":{\"evil\":{}}}' > .mcp.json",
        "rm -f .mcp.json; echo '{}' > .mcp.json",
        "mkdir -p .claude && echo '{}' > .claude/settings.json",
        "rmdir .claude; mkdir .claude && echo '{}' > .claude/settings.json",
        "mv .claude gone; mkdir .claude && echo '{}' > .claude/settings.json",
        "git init -q . && printf '#!/bin/sh\\n' > .git/hooks/pre-commit",
        "mkdir -p .sixfold && echo 'mode = \"full\"' > .sixfold/state.toml",
    ] {
        let out = s.run("workspace-write", script);
        assert_ne!(out.status.code(), Some(0), "{script}: {}", show(&out));
    }
    for name in PROTECTED_NAMES {
        assert!(!exists(&s.root.join(name)), "{name} left on the host");
    }
    assert!(!exists(&s.root.join("gone")));

    let out = s.sixfold(&[
        "sandbox",
        "check",
        "--no-project",
        "--mode",
        "workspace-write",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let proof: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for name in ["protected-not-creatable", "placeholder-removed", "write-inside-root"] {
        assert!(
            proof["checks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["name"] == name && c["held"] == true),
            "no {name} in {proof:#}"
        );
    }
    for name in PROTECTED_NAMES {
        assert!(!exists(&s.root.join(name)), "{name} left on the host by the proof");
    }
}

/// Two runs share a placeholder: the first to end leaves it to the one still running, whose
/// protected path stays uncreatable; the last one out removes it.
#[test]
fn a_placeholder_outlives_a_run_while_another_still_holds_it() {
    let s = fresh();
    let ready = s.tmp.join("ready");
    let script = format!(
        "touch '{}'; sleep 2; echo '{{}}' > .mcp.json && echo created",
        ready.display()
    );
    let long = s
        .command(&[
            "sandbox",
            "run",
            "--no-project",
            "--mode",
            "workspace-write",
            "--",
            "bash",
            "-c",
            &script,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if exists(&ready) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert!(exists(&ready), "the long run started");
    let short = s.run("workspace-write", "true");
    assert_eq!(short.status.code(), Some(0), "{}", show(&short));
    assert!(
        exists(&s.root.join(".mcp.json")),
        "the placeholder is still held by the long run"
    );
    let out = long.wait_with_output().unwrap();
    assert!(!text(&out.stdout).contains("created"), "{}", show(&out));
    assert!(!exists(&s.root.join(".mcp.json")), "the last run out removed it");
}

/// A temp dir that holds `$HOME` would make the home directory writable: not proven, nothing runs.
#[test]
fn a_temp_dir_that_holds_home_is_not_proven() {
    let s = Scratch::new();
    let parent = s.home.parent().unwrap();
    let out = s
        .command(&["sandbox", "check", "--no-project", "--mode", "workspace-write"])
        .env("TMPDIR", parent)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        text(&out.stdout).contains("is `$TMPDIR` a parent of `$HOME`?"),
        "{}",
        show(&out)
    );
    let marker = s.home.join("bashrc-changed");
    let out = s
        .command(&[
            "sandbox",
            "run",
            "--no-project",
            "--mode",
            "workspace-write",
            "--",
            "touch",
        ])
        .arg(&marker)
        .env("TMPDIR", parent)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(126), "{}", show(&out));
    assert!(!exists(&marker));
}
