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
        self.command_under(&[], args)
    }

    /// [`Scratch::command`] run by `under` (`taskset …`), where `under` is not empty.
    fn command_under(&self, under: &[&str], args: &[&str]) -> Command {
        let sixfold = env!("CARGO_BIN_EXE_sixfold");
        let mut cmd = match under.split_first() {
            Some((program, rest)) => {
                let mut cmd = Command::new(program);
                cmd.args(rest).arg(sixfold);
                cmd
            }
            None => Command::new(sixfold),
        };
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
        self.running(mode, script).output().unwrap()
    }

    /// [`Scratch::run`], not started yet.
    fn running(&self, mode: &str, script: &str) -> Command {
        self.running_under(&[], mode, script)
    }

    /// [`Scratch::running`] run by `under` (see [`Scratch::command_under`]).
    fn running_under(&self, under: &[&str], mode: &str, script: &str) -> Command {
        self.command_under(
            under,
            &[
                "sandbox",
                "run",
                "--no-project",
                "--mode",
                mode,
                "--",
                "bash",
                "-c",
                script,
            ],
        )
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
        // A check for each class of the wall, besides the writes.
        for name in [
            "write-outside-roots",
            "secret-hidden",
            "network-cut",
            "repository-control",
            "environment-variables",
            "keyring",
            "host-sockets",
            "leftovers",
            "caches",
        ] {
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

/// The line of `/proc/self/status` that lists the CPUs a process may run on.
fn allowed_cpus(status: &str) -> String {
    status
        .lines()
        .find(|l| l.starts_with("Cpus_allowed_list:"))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn the_command_may_run_on_every_cpu_its_caller_may() {
    // The sandbox's first process is started on the caller's other CPUs; init gives the command
    // the caller's own set back, whether the caller may run anywhere or on one CPU alone.
    let s = Scratch::new();
    let script = "cat /proc/self/status";
    let out = s.run("workspace-write", script);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let own = allowed_cpus(&std::fs::read_to_string("/proc/self/status").unwrap());
    assert!(!own.is_empty());
    assert_eq!(allowed_cpus(&text(&out.stdout)), own, "{}", show(&out));

    // The first CPU this test may run on, alone.
    let first: String = own
        .trim_start_matches("Cpus_allowed_list:")
        .trim()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let pinned = s
        .running_under(&["taskset", "--cpu-list", &first], "workspace-write", script)
        .output()
        .unwrap();
    assert_eq!(pinned.status.code(), Some(0), "{}", show(&pinned));
    assert_eq!(
        allowed_cpus(&text(&pinned.stdout)),
        format!("Cpus_allowed_list:\t{first}"),
        "{}",
        show(&pinned)
    );
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
    for name in ["protected-not-creatable", "leftovers", "write-inside-root"] {
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
        .running("workspace-write", &script)
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

// ---------------------------------------------------------------------------------------------
// The wall, class by class, tried the way an agent would, with the shipped environments. Each
// attack is checked on the host afterwards (the disk, a host-side git with a marker that a
// planted program would leave), and each has a case beside it that must keep working.

/// A real repository in the scratch workspace (its `.git` made by `git init` on the host), with
/// one commit, and the path a planted program would touch.
fn repository() -> (Scratch, PathBuf) {
    let s = Scratch::new();
    std::fs::remove_dir_all(s.root.join(".git")).unwrap();
    for args in [
        &["init", "-q"][..],
        &["config", "user.email", "t@example.com"],
        &["config", "user.name", "t"],
        &["add", "-A"],
        &["commit", "-qm", "first"],
    ] {
        assert!(host_git(&s, args).status.success(), "git {args:?}");
    }
    let marker = s.outside.join("planted-program-ran");
    (s, marker)
}

/// `git ARGS…` on the host, in the workspace, with the scratch `$HOME` (no user config).
fn host_git(s: &Scratch, args: &[&str]) -> Output {
    Command::new("git")
        .args(args)
        .current_dir(&s.root)
        .env("HOME", &s.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The host's `git status`, `git commit` and `git log` all run, and none ran what the agent
/// planted.
fn host_git_runs_nothing_planted(s: &Scratch, marker: &Path) {
    for args in [
        &["status"][..],
        &["commit", "-q", "--allow-empty", "-m", "host"],
        &["log", "--oneline", "-3"],
        &["diff", "HEAD~1"],
    ] {
        let out = host_git(s, args);
        assert!(out.status.success(), "host git {args:?}: {}", show(&out));
    }
    assert!(!exists(marker), "a program the command planted ran on the host");
}

#[test]
fn the_repositorys_control_files_cannot_be_planted_and_the_hosts_git_runs_nothing() {
    let (s, marker) = repository();
    let config_before = std::fs::read(s.root.join(".git/config")).unwrap();
    let git_before = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(s.root.join(".git")).unwrap());
    let m = marker.display();
    let hook = format!("#!/bin/sh\\ntouch '{m}'\\n");
    let attacks = [
        // A rebuilt repository: renamed, removed, replaced by a file.
        format!("mv .git .git-old && mkdir -p .git/hooks && printf '{hook}' > .git/hooks/pre-commit"),
        "mkdir -p sub && mv .git sub/".to_string(),
        "rm -rf .git/hooks .git/config; printf 'gitdir: elsewhere\\n' > .git".to_string(),
        // Git's configuration and programs inside `.git`.
        format!("git config core.fsmonitor \"touch '{m}'\""),
        format!("printf '[core]\\n\\tfsmonitor = touch {m}\\n' >> .git/config"),
        format!("printf '{hook}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit"),
        "mv .git/hooks .git/hooks-old; mkdir .git/hooks".to_string(),
        format!("mkdir -p evil/hooks && printf '[core]\\n\\tfsmonitor = touch {m}\\n' > evil/config && echo ../evil > .git/commondir"),
        format!("printf '[core]\\n\\tfsmonitor = touch {m}\\n' > .git/config.worktree"),
        "mkdir -p .git/info && echo '* diff=evil' > .git/info/attributes".to_string(),
        "echo /tmp > .git/objects/info/alternates".to_string(),
        "mv .git/objects .git/objects-old".to_string(),
        "mkdir -p .git/worktrees/x && echo ../evil > .git/worktrees/x/commondir".to_string(),
        "ln -sfn \"$PWD/evil\" .git/hooks".to_string(),
    ];
    for attack in &attacks {
        let out = s.run("workspace-write", attack);
        assert_ne!(out.status.code(), Some(0), "{attack}: {}", show(&out));
        host_git_runs_nothing_planted(&s, &marker);
    }
    assert_eq!(std::fs::read(s.root.join(".git/config")).unwrap(), config_before);
    let git_after = std::fs::metadata(s.root.join(".git")).unwrap();
    assert!(git_after.is_dir());
    assert_eq!(std::os::unix::fs::MetadataExt::ino(&git_after), git_before);
    for planted in [
        ".git/commondir",
        ".git/hooks/pre-commit",
        ".git/config.worktree",
        ".git-old",
        "sub/.git",
        ".git/worktrees",
    ] {
        assert!(!exists(&s.root.join(planted)), "{planted} is on the host");
    }
    assert_eq!(
        std::fs::read_to_string(s.root.join(".git/objects/info/alternates")).ok(),
        None
    );

    // A new module's directory may be written (it is data until a submodule points at it), but
    // the `.git` file that would point at it does not stay.
    let out = s.run(
        "workspace-write",
        &format!("mkdir -p .git/modules/m m && printf '[core]\\n\\tfsmonitor = touch {m}\\n' > .git/modules/m/config && printf 'gitdir: ../.git/modules/m\\n' > m/.git"),
    );
    assert!(text(&out.stderr).contains("made a git repository at"), "{}", show(&out));
    assert!(!exists(&s.root.join("m/.git")));
    host_git_runs_nothing_planted(&s, &marker);

    // Destroying the repository's data is a write inside the workspace; its control files and
    // `.git` itself still stand, and nothing planted runs.
    let out = s.run("workspace-write", "rm -rf .git");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(s.root.join(".git").is_dir() && s.root.join(".git/hooks").is_dir());
    assert_eq!(std::fs::read(s.root.join(".git/config")).unwrap(), config_before);
    let _ = host_git(&s, &["status"]);
    assert!(!exists(&marker));
}

#[test]
fn git_add_commit_status_and_log_keep_working_inside() {
    let (s, marker) = repository();
    let out = s.run(
        "workspace-write",
        "echo hello > greeting && git add greeting && git commit -qm 'add greeting' && git status --short && git log --oneline | head -1",
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(text(&out.stdout).contains("add greeting"), "{}", show(&out));
    let log = host_git(&s, &["log", "--oneline", "-1"]);
    assert!(text(&log.stdout).contains("add greeting"), "{}", show(&log));
    host_git_runs_nothing_planted(&s, &marker);
}

#[test]
fn a_repository_the_command_builds_below_the_root_is_renamed_aside() {
    let (s, marker) = repository();
    // An existing nested repository (a vendored clone) stays one, and git works in it.
    std::fs::create_dir_all(s.root.join("vendored")).unwrap();
    assert!(Command::new("git")
        .args(["init", "-q", "vendored"])
        .current_dir(&s.root)
        .status()
        .unwrap()
        .success());
    let m = marker.display();
    let script = format!(
        "git -C vendored status --short && mkdir evil && cd evil && git init -q && git -c user.email=a@b -c user.name=a commit -q --allow-empty -m x \
         && git config core.fsmonitor \"touch '{m}'\" && cd .. && git add evil 2>/dev/null && git commit -qm 'add evil' \
         && mkdir pointer && printf 'gitdir: ../evil/.git\\n' > pointer/.git"
    );
    let out = s.run("workspace-write", &script);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("made a git repository at") && stderr.contains("evil/.git") && stderr.contains("pointer/.git"),
        "{stderr}"
    );
    assert!(exists(&s.root.join("evil/.git.sixfold-quarantined")));
    assert!(!exists(&s.root.join("evil/.git")) && !exists(&s.root.join("pointer/.git")));
    assert!(s.root.join("vendored/.git").is_dir());
    host_git_runs_nothing_planted(&s, &marker);
}

#[test]
fn the_command_gets_only_the_variables_the_environment_lets_pass() {
    let s = Scratch::new();
    let secrets = [
        ("ANTHROPIC_API_KEY", "sk-ant-canary"),
        ("OPENAI_API_KEY", "sk-openai-canary"),
        ("GITHUB_TOKEN", "ghp_canary"),
        ("AWS_SECRET_ACCESS_KEY", "aws-canary"),
        ("CARGO_REGISTRY_TOKEN", "cargo-canary"),
        ("npm_config__authToken", "npm-canary"),
        ("SSH_AUTH_SOCK", "/nonexistent/agent.sock"),
    ];
    let mut cmd = s.command(&[
        "sandbox",
        "run",
        "--no-project",
        "--mode",
        "workspace-write",
        "--",
        "env",
    ]);
    for (name, value) in secrets {
        cmd.env(name, value);
    }
    cmd.env("CARGO_HOME", "/opt/cargo").env("LC_ALL", "C");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let env = text(&out.stdout);
    for (name, value) in secrets {
        assert!(
            !env.contains(value) && !env.contains(&format!("{name}=")),
            "{name} passed:\n{env}"
        );
    }
    for passed in ["PATH=", "HOME=", "CARGO_HOME=/opt/cargo", "LC_ALL=C", "TMPDIR="] {
        assert!(env.lines().any(|l| l.starts_with(passed)), "{passed} withheld:\n{env}");
    }
}

#[test]
fn a_python_venv_is_made_and_used_inside() {
    let s = Scratch::new();
    let out = s.run(
        "workspace-write",
        "python3 -m venv .venv && .venv/bin/python -c 'print(6 * 7)'",
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(text(&out.stdout).trim(), "42");
}

/// A Unix listener on the host at `path`, nonblocking.
fn unix_listener(path: &Path) -> std::os::unix::net::UnixListener {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind(path).unwrap();
    listener.set_nonblocking(true).unwrap();
    listener
}

#[test]
fn no_host_socket_is_reachable_but_the_commands_own_are() {
    let s = Scratch::new();
    // An ssh-agent's socket outside the roots, a runtime dir's, one in the temp dir (a
    // writable root), and, where this test may write there, one in `/run`.
    let agent = s.outside.join("ssh-agent-dir/agent.sock");
    let runtime = s.outside.join("runtime/bus");
    let in_tmp = s.tmp.join("tmux-0/default");
    let mut sockets = vec![agent.clone(), runtime.clone(), in_tmp];
    let in_run = PathBuf::from(format!("/run/sixfold-test-{}.sock", std::process::id()));
    if std::fs::metadata("/run").is_ok_and(|m| !m.permissions().readonly())
        && std::os::unix::net::UnixListener::bind(&in_run).is_ok()
    {
        std::fs::remove_file(&in_run).unwrap();
        sockets.push(in_run.clone());
    }
    let listeners: Vec<_> = sockets.iter().map(|p| unix_listener(p)).collect();
    let connect = "import socket, sys\nfor p in sys.argv[1:]:\n    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect(p); print('connected', p)\n    except OSError as e:\n        print('refused', p, e)\n";
    let mut args = vec![
        "sandbox",
        "run",
        "--no-project",
        "--mode",
        "workspace-write",
        "--",
        "python3",
        "-c",
        connect,
    ];
    let paths: Vec<String> = sockets.iter().map(|p| p.display().to_string()).collect();
    args.extend(paths.iter().map(String::as_str));
    let out = s
        .command(&args)
        .env("SSH_AUTH_SOCK", &agent)
        .env("XDG_RUNTIME_DIR", runtime.parent().unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!text(&out.stdout).contains("connected"), "{}", show(&out));
    for (listener, path) in listeners.iter().zip(&sockets) {
        assert!(listener.accept().is_err(), "{} received a connection", path.display());
    }
    let _ = std::fs::remove_file(&in_run);

    // A socket the command makes itself, in the workspace, works.
    let own = "import socket, os\np = 'own.sock'\nsrv = socket.socket(socket.AF_UNIX); srv.bind(p); srv.listen(1)\nc = socket.socket(socket.AF_UNIX); c.connect(p); print('own socket ok')\n";
    let out = s.sixfold(&[
        "sandbox",
        "run",
        "--no-project",
        "--mode",
        "workspace-write",
        "--",
        "python3",
        "-c",
        own,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(text(&out.stdout).contains("own socket ok"), "{}", show(&out));
}

/// Python that adds (`add`), reads (`read ID`) or revokes (`revoke ID`) a key in the user's
/// keyring, by system call.
const KEYRING_PY: &str = "import ctypes, sys, os\nlibc = ctypes.CDLL(None, use_errno=True)\nNR_ADD_KEY, NR_KEYCTL = 248, 250\nif sys.argv[1] == 'add':\n    r = libc.syscall(NR_ADD_KEY, b'user', b'sixfold-test', b'keyring-canary', 14, ctypes.c_long(-4))\n    print(r)\nelif sys.argv[1] == 'revoke':\n    libc.syscall(NR_KEYCTL, 3, int(sys.argv[2]))\nelse:\n    buf = ctypes.create_string_buffer(64)\n    r = libc.syscall(NR_KEYCTL, 11, int(sys.argv[2]), buf, 64)\n    print(r, buf.value.decode(errors='replace'), os.strerror(ctypes.get_errno()))\n";

#[test]
fn the_callers_keyring_is_not_the_commands() {
    if std::env::consts::ARCH != "x86_64" {
        // The system call numbers in KEYRING_PY are x86_64's.
        return;
    }
    let s = Scratch::new();
    // A key in the user's keyring: it reads back outside, and the sandbox is started beside it.
    let script = format!(
        "set -e\nid=$(python3 -c \"$1\" add)\npython3 -c \"$1\" read \"$id\"\n'{}' sandbox run --no-project --mode workspace-write -- python3 -c \"$1\" read \"$id\" || true\npython3 -c \"$1\" revoke \"$id\"",
        env!("CARGO_BIN_EXE_sixfold")
    );
    let out = Command::new("bash")
        .args(["-c", &script, "keyring", KEYRING_PY])
        .current_dir(&s.root)
        .env("HOME", &s.home)
        .env("TMPDIR", &s.tmp)
        .env("XDG_CACHE_HOME", &s.cache)
        .env("XDG_STATE_HOME", s.home.join(".local/state"))
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines.len() >= 2, "{}", show(&out));
    // Outside, the key reads back; inside, the call is refused.
    assert!(lines[0].contains("keyring-canary"), "{}", show(&out));
    assert!(
        !lines[1].contains("keyring-canary") && lines[1].starts_with("-1"),
        "{}",
        show(&out)
    );
}

#[test]
fn a_command_that_fails_on_a_masked_path_is_told_which_and_why() {
    let (s, _) = repository();
    std::fs::write(s.root.join(".env"), "TOKEN=tracked-secret\n").unwrap();
    assert!(host_git(&s, &["add", "-f", ".env"]).status.success());
    assert!(host_git(&s, &["commit", "-qm", "track .env"]).status.success());
    std::fs::write(s.root.join(".env"), "TOKEN=changed\n").unwrap();
    let out = s.run("workspace-write", "git reset -q --hard");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    let stderr = text(&out.stderr);
    let named = format!("`{}` (hidden)", s.root.join(".env").display());
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("sixfold sandbox:") && l.contains(&named)),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(s.root.join(".env")).unwrap(), "TOKEN=changed\n");
    // Nothing is left behind: no placeholder, no mount point.
    for name in [".claude", ".codex", ".sixfold", ".mcp.json"] {
        assert!(exists(&s.root.join(name)), "{name} was made by Scratch");
    }
    assert!(!exists(&s.root.join(".git/commondir")) && !exists(&s.root.join(".git/worktrees")));
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(s.root.to_str().unwrap()), "{mounts}");

    // A command that fails for its own reasons is told what the sandbox held, and a command
    // that works hears nothing from the sandbox.
    let out = s.run("workspace-write", "true");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!text(&out.stderr).contains("sixfold sandbox:"), "{}", show(&out));
}

#[test]
fn a_command_that_needs_the_network_is_told_it_is_cut() {
    let s = Scratch::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = s.run("workspace-write", &format!("exec 3<>/dev/tcp/127.0.0.1/{port}"));
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        text(&out.stderr).contains("sixfold sandbox: the network is cut here"),
        "{}",
        show(&out)
    );
    assert!(listener.accept().is_err());
}

#[test]
fn an_offline_cargo_build_works_inside() {
    let s = Scratch::new();
    let krate = s.root.join("hello");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    std::fs::write(
        krate.join("Cargo.toml"),
        "[package]\nname = \"hello\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(krate.join("src/main.rs"), "fn main() { println!(\"built inside\"); }\n").unwrap();
    let real_home = std::env::var("HOME").unwrap();
    let cargo_home = std::env::var("CARGO_HOME").unwrap_or(format!("{real_home}/.cargo"));
    let rustup_home = std::env::var("RUSTUP_HOME").unwrap_or(format!("{real_home}/.rustup"));
    let out = s
        .running(
            "workspace-write",
            "cd hello && cargo build --offline -q && ./target/debug/hello && cargo test --offline -q 2>&1 | tail -1",
        )
        .env("CARGO_HOME", &cargo_home)
        .env("RUSTUP_HOME", &rustup_home)
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(text(&out.stdout).contains("built inside"), "{}", show(&out));
}

#[test]
fn a_tool_cache_is_read_as_it_is_and_written_to_the_projects_layer() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.home.join(".npm/_cacache")).unwrap();
    std::fs::write(s.home.join(".npm/_cacache/entry"), "warm\n").unwrap();
    let script = "cat ~/.npm/_cacache/entry && echo index > ~/.npm/_cacache/new && echo poisoned > ~/.npm/_cacache/entry && cat ~/.npm/_cacache/entry";
    let out = s.run("workspace-write", script);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(text(&out.stdout), "warm\npoisoned\n");
    // The host's cache is as it was; the next run in this project sees its own writes.
    assert_eq!(
        std::fs::read_to_string(s.home.join(".npm/_cacache/entry")).unwrap(),
        "warm\n"
    );
    assert!(!exists(&s.home.join(".npm/_cacache/new")));
    let out = s.run("workspace-write", "cat ~/.npm/_cacache/new");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(text(&out.stdout), "index\n");
    // The layer is the overlay's: the command writes it through the cache only, never itself,
    // so nothing a later run's mount or clean-up would follow can be planted there.
    for layer in layers(&s) {
        for script in [
            format!("ln -s / {}/stale.1.1", layer.display()),
            format!("touch {}/upper/direct", layer.display()),
            format!("rm -rf {}/work", layer.display()),
        ] {
            let out = s.run("workspace-write", &script);
            assert_ne!(out.status.code(), Some(0), "{script}: {}", show(&out));
        }
        assert!(!exists(&layer.join("upper/direct")), "{}", layer.display());
        assert_eq!(names(&layer), ["upper", "work"], "{}", layer.display());
    }
    // Beside the caches, the rest of the home directory stays read-only.
    let out = s.run("workspace-write", "touch ~/.bashrc-planted");
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!exists(&s.home.join(".bashrc-planted")));
    // The layer is mounted volatile (tearing the sandbox down does not sync the filesystem it
    // lives on). The mark that leaves in the work directory, which the kernel would refuse the
    // next mount for, goes aside with that directory when the next run makes its own, and is
    // removed by that run: a layer holds its upper and one work directory between runs.
    let npm = s.home.join(".npm");
    let script = format!("grep -F ' {} ' /proc/self/mountinfo | grep -c volatile", npm.display());
    let out = s.run("workspace-write", &script);
    assert_eq!(text(&out.stdout), "1\n", "{}", show(&out));
    let layers = layers(&s);
    assert!(!layers.is_empty());
    for layer in layers {
        assert!(exists(&layer.join("work/work/incompat")), "{}", layer.display());
        assert_eq!(names(&layer), ["upper", "work"], "{}", layer.display());
    }
}

/// The names in a directory, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The per-project layers of the scratch's tool caches.
fn layers(s: &Scratch) -> Vec<PathBuf> {
    let caches = s.home.join(".local/state/sixfold/caches");
    let mut found = Vec::new();
    for project in std::fs::read_dir(caches).into_iter().flatten().flatten() {
        found.extend(
            std::fs::read_dir(project.path())
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir()),
        );
    }
    found
}

#[test]
fn runs_that_overlap_each_layer_a_cache_of_their_own() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.home.join(".npm")).unwrap();
    // The first run proves the environment (its probe layers the cache too).
    let out = s.run("workspace-write", "true");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    // One run holds the cache's layer (a server left running) while another writes to it: two
    // overlays sharing an upper directory would be undefined behaviour.
    let mut first = s
        .running("workspace-write", "echo 1 > ~/.npm/first && sleep 2")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let holding = |name: &str| -> Vec<PathBuf> {
        layers(&s)
            .into_iter()
            .filter(|l| exists(&l.join("upper").join(name)))
            .collect()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while holding("first").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the first run never wrote its cache"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = s.run("workspace-write", "echo 2 > ~/.npm/second && cat ~/.npm/second");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(first.wait().unwrap().success());
    let (first, second) = (holding("first"), holding("second"));
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(second.len(), 1, "{second:?}");
    assert_ne!(first, second);
    // Alone again, a run takes the project's first layer, the one the first run held.
    let out = s.run("workspace-write", "cat ~/.npm/first");
    assert_eq!(text(&out.stdout), "1\n", "{}", show(&out));
}

#[test]
fn a_layer_a_dead_run_left_marked_mounts_again_and_a_planted_link_removes_nothing() {
    let s = Scratch::new();
    std::fs::create_dir_all(s.home.join(".npm")).unwrap();
    std::fs::write(s.home.join(".npm/entry"), "warm\n").unwrap();
    let out = s.run("workspace-write", "echo mine > ~/.npm/own");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let layer = layers(&s)
        .into_iter()
        .find(|l| exists(&l.join("upper/own")))
        .expect("the npm cache's layer");
    // A run killed before it cleared its mark (the kernel refuses to mount a layer holding one).
    let mark = layer.join("work/work/incompat/volatile");
    std::fs::create_dir_all(&mark).unwrap();
    std::fs::write(mark.join("dirty"), "").unwrap();
    let out = s.run("workspace-write", "cat ~/.npm/entry ~/.npm/own");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(text(&out.stdout), "warm\nmine\n");
    assert_eq!(names(&layer), ["upper", "work"]);
    // The work directory lies in a root the command writes: a link planted there (as a command
    // could) leads the removal of the work directory set aside nowhere.
    let decoy = s.outside.join("decoy");
    std::fs::create_dir_all(decoy.join("incompat/volatile")).unwrap();
    std::fs::write(decoy.join("incompat/volatile/dirty"), "kept").unwrap();
    let work = layer.join("work/work");
    std::fs::set_permissions(&work, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    std::fs::remove_dir_all(&work).unwrap();
    std::os::unix::fs::symlink(&decoy, &work).unwrap();
    let out = s.run("workspace-write", "cat ~/.npm/own");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(text(&out.stdout), "mine\n");
    assert_eq!(
        std::fs::read_to_string(decoy.join("incompat/volatile/dirty")).unwrap(),
        "kept"
    );
    // So may the upper directory be replaced by a link (the mount would follow it): it is set
    // aside and made again, empty, and what the link named is left as it was.
    let upper = layer.join("upper");
    std::fs::rename(&upper, s.outside.join("upper-moved")).unwrap();
    std::os::unix::fs::symlink(&decoy, &upper).unwrap();
    let out = s.run("workspace-write", "ls ~/.npm; echo again > ~/.npm/own");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(text(&out.stdout), "entry\n", "{}", show(&out));
    assert!(std::fs::symlink_metadata(&upper).unwrap().is_dir());
    assert_eq!(std::fs::read_to_string(upper.join("own")).unwrap(), "again\n");
    assert_eq!(
        std::fs::read_to_string(decoy.join("incompat/volatile/dirty")).unwrap(),
        "kept"
    );
    assert!(!exists(&decoy.join("own")));
}

/// The command line the hook writes for `command` in mode `mode` (`sixfold judge` answers as the
/// hook does), and the proof digest it hands to `sandbox run`.
fn rewritten(s: &Scratch, mode: &str, command: &str) -> (String, String) {
    let input = serde_json::json!({ "command": command }).to_string();
    let out = s.sixfold(&[
        "judge",
        "--no-project",
        "--mode",
        mode,
        "--tool",
        "Bash",
        "--input",
        &input,
    ]);
    let judged: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let line = judged["updated_input"]["command"]
        .as_str()
        .unwrap_or_else(|| panic!("no rewrite: {}", show(&out)))
        .to_string();
    let digest = line
        .split(' ')
        .skip_while(|w| *w != "--proof")
        .nth(1)
        .unwrap_or_else(|| panic!("no --proof in {line}"))
        .to_string();
    (line, digest)
}

/// `sixfold sandbox run --mode MODE --root ROOT --proof DIGEST -- bash -c SCRIPT`.
fn run_with_proof(s: &Scratch, mode: &str, digest: &str, script: &str) -> Output {
    let root = s.root.to_str().unwrap();
    s.sixfold(&[
        "sandbox", "run", "--mode", mode, "--root", root, "--proof", digest, "--", "bash", "-c", script,
    ])
}

#[test]
fn the_hooks_rewrite_hands_its_proof_and_runs_that_environment() {
    let s = Scratch::new();
    let outside = s.outside.join("escaped");
    let command = format!(
        "touch made; touch '{}'; cat \"$HOME/.ssh/id_ed25519\"",
        outside.display()
    );
    let (line, _) = rewritten(&s, "workspace-write", &command);
    // The line as the agent's shell runs it.
    let shell = s.command(&[]);
    let out = Command::new("bash")
        .args(["-c", &line])
        .current_dir(&s.root)
        .envs(shell.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(exists(&s.root.join("made")), "{}", show(&out));
    assert!(!exists(&outside), "{}", show(&out));
    assert!(!text(&out.stdout).contains("ssh-private-key-secret"), "{}", show(&out));
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
}

#[test]
fn a_proof_never_widens_what_the_command_line_says() {
    let s = Scratch::new();
    let (_, digest) = rewritten(&s, "workspace-write", "touch made");
    // Still allowed: the digest the hook wrote runs its environment (a write inside the root).
    let out = run_with_proof(&s, "workspace-write", &digest, "touch inside");
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(exists(&s.root.join("inside")));

    // Another mode's digest: the mode on the line decides (read-only's environment, loaded from
    // the bundle), never the proof's.
    let out = run_with_proof(&s, "read-only", &digest, "touch by-read-only");
    assert!(!exists(&s.root.join("by-read-only")), "{}", show(&out));

    // Other roots on the line: the proof is for the one root only, so the bundle's environment
    // around the roots named runs (each of them writable, as without a proof).
    let root = s.root.to_str().unwrap();
    let other = format!("other={}", s.outside.display());
    let second = s.outside.join("second-root");
    let script = format!("touch '{}'", second.display());
    let out = s.sixfold(&[
        "sandbox",
        "run",
        "--mode",
        "workspace-write",
        "--root",
        root,
        "--root",
        &other,
        "--proof",
        &digest,
        "--",
        "bash",
        "-c",
        &script,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(exists(&second), "{}", show(&out));

    // A digest that is a path, or names no proof: the long way, confined as ever.
    for bad in ["../../../../etc/passwd", &"0".repeat(64), &digest.to_uppercase(), ""] {
        let out = run_with_proof(&s, "workspace-write", bad, "cat \"$HOME/.ssh/id_ed25519\"");
        assert!(
            !text(&out.stdout).contains("ssh-private-key-secret"),
            "{bad}: {}",
            show(&out)
        );
    }

    // A proof file whose environment was widened after it was written (the secrets dropped, a
    // directory outside made a root): its key no longer matches, so it is not taken.
    let file = s.cache.join("sixfold/proofs").join(format!("{digest}.json"));
    let mut cached: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    cached["environment"]["secrets"] = serde_json::json!([]);
    cached["environment"]["tmp"] = serde_json::json!(s.outside);
    std::fs::write(&file, cached.to_string()).unwrap();
    let escaped = s.outside.join("escaped");
    let script = format!("cat \"$HOME/.ssh/id_ed25519\"; touch '{}'", escaped.display());
    let out = run_with_proof(&s, "workspace-write", &digest, &script);
    assert!(!text(&out.stdout).contains("ssh-private-key-secret"), "{}", show(&out));
    assert!(!exists(&escaped), "{}", show(&out));

    // A proof that did not hold is never taken either.
    let (_, digest) = rewritten(&s, "workspace-write", "touch made");
    let file = s.cache.join("sixfold/proofs").join(format!("{digest}.json"));
    let mut cached: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    cached["proof"]["proven"] = serde_json::json!(false);
    std::fs::write(&file, cached.to_string()).unwrap();
    let out = run_with_proof(&s, "workspace-write", &digest, "touch after-failed");
    // Proven afresh from the bundle (this machine can), then run.
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
}
