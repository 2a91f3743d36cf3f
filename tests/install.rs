//! `sixfold install` and `uninstall` driven through the real binary in scratch projects: the hook
//! command a team commits names `sixfold` on PATH and fails closed, a machine's own path goes
//! only in its local file, and uninstall leaves no litter (and nothing of the user's goes). The
//! last test drives the real Claude Code (skipped, with the reason, when it is absent, unless
//! `SIXFOLD_REQUIRE_E2E=1`) in a clone of the project at another path.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{agent_cli, claude_stream, json_lines, tool_results, ModelServer};

const SIXFOLD: &str = env!("CARGO_BIN_EXE_sixfold");

/// A scratch project (a git repository) with its own home, Claude config, Codex home and trust
/// store, and a `bin/` that holds `sixfold` (a link to the binary under test) when asked.
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    project: PathBuf,
    bin: PathBuf,
}

impl Project {
    fn new() -> Project {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let project = root.join("project");
        let bin = root.join("bin");
        for d in [
            &project,
            &bin,
            &root.join("home"),
            &root.join("claude"),
            &root.join("codex"),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        git(&project, &["init", "-q"]);
        Project {
            _dir: dir,
            root,
            project,
            bin,
        }
    }

    /// Puts `sixfold` (the binary under test) on this project's PATH.
    fn on_path(&self) {
        std::os::unix::fs::symlink(SIXFOLD, self.bin.join("sixfold")).unwrap();
    }

    /// The PATH every command of the test gets: its `bin/` and the system's.
    fn path(&self) -> String {
        format!("{}:/usr/bin:/bin", self.bin.display())
    }

    fn run_in(&self, dir: &Path, args: &[&str]) -> Output {
        Command::new(SIXFOLD)
            .args(args)
            .current_dir(dir)
            .env("PATH", self.path())
            .env("HOME", self.root.join("home"))
            .env("CLAUDE_CONFIG_DIR", self.root.join("claude"))
            .env("CODEX_HOME", self.root.join("codex"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            .env_remove("CARGO_TARGET_DIR")
            .output()
            .unwrap()
    }

    fn sixfold(&self, args: &[&str]) -> Output {
        self.run_in(&self.project, args)
    }

    fn ok(&self, args: &[&str]) -> (String, String) {
        let out = self.sixfold(args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        (text(&out.stdout), text(&out.stderr))
    }

    fn file(&self, rel: &str) -> PathBuf {
        self.project.join(rel)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.file(rel)).unwrap()
    }

    fn write(&self, rel: &str, content: &str) {
        let path = self.file(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out.stderr));
}

/// Every hook command in a Claude Code settings file.
fn commands(settings: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(settings).unwrap();
    let mut found = Vec::new();
    for entries in v["hooks"].as_object().into_iter().flat_map(|h| h.values()) {
        for entry in entries.as_array().unwrap() {
            for hook in entry["hooks"].as_array().unwrap() {
                found.push(hook["command"].as_str().unwrap().to_string());
            }
        }
    }
    found
}

/// The user's own settings and hook, which every install and uninstall keeps.
fn theirs() -> Value {
    json!({ "model": "opus", "permissions": { "allow": ["Bash(ls)"] },
        "hooks": { "PreToolUse": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "their-linter check" }] }] } })
}

#[test]
fn with_sixfold_on_path_the_committed_file_names_it_by_name_and_fails_closed() {
    let p = Project::new();
    p.on_path();
    p.write(
        ".claude/settings.json",
        &serde_json::to_string_pretty(&theirs()).unwrap(),
    );
    let (said, _) = p.ok(&["install", "claude-code"]);
    assert!(said.contains("settings.json"), "{said}");
    let shared = p.read(".claude/settings.json");
    let mine: Vec<String> = commands(&shared)
        .into_iter()
        .filter(|c| c != "their-linter check")
        .collect();
    assert_eq!(mine.len(), 5, "{shared}");
    assert!(
        mine.iter().all(|c| c == "sixfold hook claude-code || exit 2"),
        "{mine:?}"
    );
    assert!(
        !shared.contains(&p.root.display().to_string()),
        "no machine path in the committed file"
    );
    assert!(!p.file(".claude/settings.local.json").exists());
    // Must keep: the user's settings and hook stay as they were.
    let v: Value = serde_json::from_str(&shared).unwrap();
    assert_eq!(v["model"], "opus");
    assert_eq!(v["permissions"], theirs()["permissions"]);
    assert_eq!(v["hooks"]["PreToolUse"][0], theirs()["hooks"]["PreToolUse"][0]);
    // Installing again changes nothing.
    let (again, _) = p.ok(&["install", "claude-code"]);
    assert!(again.contains("already installed"), "{again}");
    assert_eq!(p.read(".claude/settings.json"), shared);
    // The command, run as the agent runs it: answers with sixfold on PATH, blocks (exit 2)
    // without; never exit 127, which the agent would read as "run the tool".
    let run = |path: &str| {
        support::fed(
            Command::new("/bin/sh")
                .args(["-c", &mine[0]])
                .current_dir(&p.project)
                .env("PATH", path)
                .env("XDG_STATE_HOME", p.root.join("state")),
            b"{}",
        )
    };
    let answered = run(&p.path());
    assert_eq!(answered.status.code(), Some(0), "{}", text(&answered.stderr));
    let answer: Value = serde_json::from_slice(&answered.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(run("/usr/bin:/bin").status.code(), Some(2));
}

#[test]
fn without_sixfold_on_path_the_machines_path_goes_only_in_the_local_file() {
    let p = Project::new();
    p.write(
        ".claude/settings.json",
        &serde_json::to_string_pretty(&theirs()).unwrap(),
    );
    let before = p.read(".claude/settings.json");
    let (said, warned) = p.ok(&["install", "claude-code"]);
    assert!(said.contains("settings.local.json"), "{said}");
    assert!(warned.contains("has no sixfold hook"), "{warned}");
    assert_eq!(
        p.read(".claude/settings.json"),
        before,
        "the committed file is not touched"
    );
    let local = commands(&p.read(".claude/settings.local.json"));
    assert_eq!(local.len(), 5);
    let real = Path::new(SIXFOLD).canonicalize().unwrap();
    assert!(
        local
            .iter()
            .all(|c| c == &format!("{} hook claude-code || exit 2", real.display())),
        "{local:?}"
    );
    // The binary under test lies under `target/`: said; and the local file is not ignored by
    // git in this bare repository: said too.
    assert!(warned.contains("cargo clean"), "{warned}");
    assert!(warned.contains("add it to .gitignore"), "{warned}");
    p.write(".gitignore", ".claude/settings.local.json\n");
    let (_, warned) = p.ok(&["install", "claude-code"]);
    assert!(!warned.contains("add it to .gitignore"), "{warned}");
    // Once sixfold is on PATH, installing again moves the hook to the committed file, and the
    // local file it had created goes (it held nothing else).
    p.on_path();
    p.ok(&["install", "claude-code"]);
    assert!(!p.file(".claude/settings.local.json").exists());
    assert!(commands(&p.read(".claude/settings.json")).contains(&"sixfold hook claude-code || exit 2".to_string()));
}

#[test]
fn an_older_install_naming_a_build_path_in_the_committed_file_is_replaced() {
    let p = Project::new();
    p.on_path();
    let mut old = theirs();
    old["hooks"]["Stop"] =
        json!([{ "hooks": [{ "type": "command", "command": "/gone/target/release/sixfold hook claude-code" }] }]);
    p.write(".claude/settings.json", &serde_json::to_string_pretty(&old).unwrap());
    p.ok(&["install", "claude-code"]);
    let now = commands(&p.read(".claude/settings.json"));
    assert!(!now.iter().any(|c| c.contains("/gone/")), "{now:?}");
    assert!(now.contains(&"their-linter check".to_string()));
}

#[test]
fn a_sixfold_on_path_that_does_not_answer_is_not_named() {
    let p = Project::new();
    let fake = p.bin.join("sixfold");
    std::fs::write(&fake, "#!/bin/sh\nexit 0\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (_, warned) = p.ok(&["install", "claude-code"]);
    assert!(warned.contains("does not answer"), "{warned}");
    assert!(!p.file(".claude/settings.json").exists());
    assert!(p.file(".claude/settings.local.json").exists());
}

#[test]
fn uninstall_leaves_no_litter_and_keeps_everything_of_the_users() {
    // Installed into a project that had no `.claude/`: uninstall removes what install created.
    let p = Project::new();
    p.on_path();
    p.ok(&["install", "claude-code"]);
    p.ok(&["install", "claude-code", "--user"]);
    let (said, _) = p.ok(&["uninstall", "claude-code"]);
    assert!(said.contains("removed"), "{said}");
    assert!(!p.file(".claude").exists(), "no `{{}}` file, no empty directory");
    p.ok(&["uninstall", "claude-code", "--user"]);
    let user_dir = p.root.join("claude");
    assert!(user_dir.is_dir(), "the user's config directory stays");
    assert_eq!(std::fs::read_dir(&user_dir).unwrap().count(), 0, "and holds no litter");

    // Must keep: the user's settings come back byte for byte, their other files stay, and no
    // backup of sixfold's own hooks is left.
    let p = Project::new();
    p.on_path();
    let original = serde_json::to_string_pretty(&theirs()).unwrap() + "\n";
    p.write(".claude/settings.json", &original);
    p.write(".claude/agents/reviewer.md", "mine\n");
    p.write(".claude/settings.json.bak", "{\"an\": \"older backup of theirs\"}\n");
    p.ok(&["install", "claude-code"]);
    p.ok(&["uninstall", "claude-code"]);
    assert_eq!(p.read(".claude/settings.json"), original);
    assert_eq!(p.read(".claude/agents/reviewer.md"), "mine\n");
    assert!(
        !p.file(".claude/settings.json.bak").exists(),
        "the backup install kept is redundant now"
    );
    // A backup that says something else stays.
    p.ok(&["install", "claude-code"]);
    p.write(".claude/settings.json.bak", "{\"an\": \"older backup of theirs\"}\n");
    p.ok(&["uninstall", "claude-code"]);
    assert_eq!(
        p.read(".claude/settings.json.bak"),
        "{\"an\": \"older backup of theirs\"}\n"
    );
    // A `{}` the user wrote, with no sixfold hook in it, is left alone.
    let q = Project::new();
    q.write(".claude/settings.json", "{}\n");
    let (said, _) = q.ok(&["uninstall", "claude-code"]);
    assert!(said.contains("already uninstalled"), "{said}");
    assert_eq!(q.read(".claude/settings.json"), "{}\n");
}

#[test]
fn codex_in_a_project_is_written_only_with_sixfold_on_path() {
    let p = Project::new();
    let out = p.sixfold(&["install", "codex"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--user"), "{}", text(&out.stderr));
    assert!(!p.file(".codex").exists());
    // For the user only, the machine's path is fine: the file stays on this machine.
    let (_, warned) = p.ok(&["install", "codex", "--user"]);
    assert!(warned.contains("cargo clean"), "{warned}");
    let user = std::fs::read_to_string(p.root.join("codex/config.toml")).unwrap();
    assert!(user.contains("/sixfold hook codex || exit 2"), "{user}");
    p.on_path();
    p.ok(&["install", "codex"]);
    assert!(p
        .read(".codex/config.toml")
        .contains("\"sixfold hook codex || exit 2\""));
}

/// The `[hooks.state]` entries Codex's `/hooks` keeps for sixfold's hooks go with them; a trust
/// the user gave their own hook stays, byte for byte.
#[test]
fn uninstall_codex_forgets_the_trust_given_to_sixfolds_hooks_and_no_other() {
    let p = Project::new();
    p.on_path();
    let theirs = "model = \"gpt-5\"\n\n[[hooks.PreToolUse]]\nmatcher = \"^Bash$\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = \"their-linter check\"\n";
    p.write(".codex/config.toml", theirs);
    p.ok(&["install", "codex"]);
    let listed = |p: &Project| -> Vec<Value> {
        let out = p.sixfold(&["providers", "--json"]);
        let all: Value = serde_json::from_slice(&out.stdout).unwrap();
        all["providers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["id"] == "codex")
            .unwrap()["hooks"]
            .as_array()
            .unwrap()
            .clone()
    };
    let hooks = listed(&p);
    assert_eq!(hooks.len(), 5, "{hooks:?}");
    // Trusted as `/hooks` keeps it: in the user's config, keyed by the project file's path; and
    // the user's own hook trusted the same way.
    let config = p.project.join(".codex/config.toml").canonicalize().unwrap();
    let their_key = format!("{}:pre_tool_use:0:0", config.display());
    let mut user = format!("# my config\n[hooks.state.\"{their_key}\"]\ntrusted_hash = \"sha256:theirs\"\n");
    for h in &hooks {
        user.push_str(&format!(
            "[hooks.state.\"{}\"]\ntrusted_hash = \"{}\"\n",
            h["key"].as_str().unwrap(),
            h["hash"].as_str().unwrap()
        ));
    }
    let user_file = p.root.join("codex/config.toml");
    std::fs::write(&user_file, &user).unwrap();
    let trust = findings(&p, "codex-trust");
    assert_eq!(trust.len(), 1, "{trust:?}");
    assert_eq!(trust[0]["status"], "ok", "{trust:?}");
    p.ok(&["uninstall", "codex"]);
    assert_eq!(
        p.read(".codex/config.toml"),
        theirs,
        "the user's file back, byte for byte"
    );
    assert_eq!(
        std::fs::read_to_string(&user_file).unwrap(),
        format!("# my config\n[hooks.state.\"{their_key}\"]\ntrusted_hash = \"sha256:theirs\"\n"),
        "only sixfold's trust entries went"
    );
    // The user's scope: the entries are in the same file.
    p.ok(&["install", "codex", "--user"]);
    let installed = std::fs::read_to_string(&user_file).unwrap();
    let keyed = user_file.canonicalize().unwrap();
    let pre = format!("{}:pre_tool_use:0:0", keyed.display());
    let trusted = format!("{installed}\n[hooks.state.\"{pre}\"]\ntrusted_hash = \"sha256:x\"\n");
    std::fs::write(&user_file, trusted).unwrap();
    p.ok(&["uninstall", "codex", "--user"]);
    let after = std::fs::read_to_string(&user_file).unwrap();
    assert!(
        !after.contains(":pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:x\""),
        "{after}"
    );
    assert!(after.contains("sha256:theirs"), "{after}");
}

/// `sixfold doctor --json` in a project: its exit code and findings.
fn doctor(p: &Project) -> (Option<i32>, Value) {
    let out = p.sixfold(&["doctor", "--json"]);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    (out.status.code(), report)
}

/// The findings of one kind.
fn findings(p: &Project, id: &str) -> Vec<Value> {
    let (_, report) = doctor(p);
    report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == id)
        .cloned()
        .collect()
}

#[test]
fn doctor_passes_a_sound_install_and_never_runs_the_users_hooks() {
    let p = Project::new();
    p.on_path();
    // Their hook would leave a mark if doctor ran it: it must not.
    let mut settings = theirs();
    let mark = p.root.join("ran");
    settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"] = json!(format!("touch {}", mark.display()));
    p.write(
        ".claude/settings.json",
        &serde_json::to_string_pretty(&settings).unwrap(),
    );
    p.ok(&["install", "claude-code"]);
    let (code, report) = doctor(&p);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["fails_open"], 0);
    let hooks: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == "hook")
        .collect();
    assert_eq!(hooks.len(), 1, "{hooks:?}");
    assert_eq!(hooks[0]["status"], "ok");
    assert!(hooks[0]["summary"].as_str().unwrap().contains("answers"));
    assert!(!mark.exists(), "doctor ran a hook that is not sixfold's");
    let mode = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "mode")
        .unwrap();
    assert!(mode["summary"].as_str().unwrap().contains("`ask`"), "{mode}");
    // In words too, with the same exit code.
    let out = p.sixfold(&["doctor"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        text(&out.stdout).contains("nothing here fails open"),
        "{}",
        text(&out.stdout)
    );
    // A hook shaped as sixfold's but naming another program (a repository's settings are
    // anyone's) is reported, never started.
    let planted = p.root.join("planted");
    std::fs::write(&planted, format!("#!/bin/sh\ntouch {}\n", mark.display())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    let local = json!({ "hooks": { "Stop": [{ "hooks": [{ "type": "command", "command": format!("{} hook claude-code", planted.display()) }] }] } });
    p.write(".claude/settings.local.json", &local.to_string());
    let hooks = findings(&p, "hook");
    assert!(
        hooks
            .iter()
            .any(|c| c["status"] == "warn" && c["summary"].as_str().unwrap().contains("was not run")),
        "{hooks:?}"
    );
    assert!(!mark.exists(), "doctor started a program that is not a known sixfold");
}

#[test]
fn doctor_fails_on_a_hook_that_cannot_start_and_lets_the_tool_run() {
    // What an older install left after a `cargo clean`: an absolute path, no guard.
    let p = Project::new();
    let mut settings = theirs();
    settings["hooks"]["PreToolUse"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "matcher": "*", "hooks": [{ "type": "command", "command": "/gone/target/release/sixfold hook claude-code" }] }));
    p.write(
        ".claude/settings.json",
        &serde_json::to_string_pretty(&settings).unwrap(),
    );
    let (code, report) = doctor(&p);
    assert_eq!(code, Some(1), "{report}");
    let open: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["status"] == "fails-open")
        .collect();
    let said: Vec<&str> = open.iter().map(|c| c["summary"].as_str().unwrap()).collect();
    // It does not answer, it names a machine path in a committed file, and four events lack it.
    assert!(
        said.iter().any(|s| s.contains("does not answer (exit 127)")),
        "{said:?}"
    );
    assert!(said.iter().any(|s| s.contains("a file a team commits")), "{said:?}");
    assert!(said.iter().any(|s| s.contains("PostToolUse")), "{said:?}");
    assert!(open
        .iter()
        .all(|c| c["fix"].as_str().unwrap().contains("sixfold install claude-code")));
    // A program that starts and does not answer (exit 1) fails open too.
    let q = Project::new();
    let fake = q.bin.join("sixfold");
    std::fs::write(&fake, "#!/bin/sh\nexit 1\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = json!({ "hooks": { "PreToolUse": [{ "matcher": "*", "hooks": [{ "type": "command", "command": "sixfold hook claude-code || exit 2" }] }] } });
    q.write(".claude/settings.json", &spec.to_string());
    let (code, report) = doctor(&q);
    assert_eq!(code, Some(1), "{report}");
}

#[test]
fn doctor_says_a_guarded_hook_that_cannot_start_blocks_and_a_local_only_install_leaves_clones_ungoverned() {
    let p = Project::new();
    p.ok(&["install", "claude-code"]);
    let hooks = findings(&p, "hook");
    assert!(hooks.iter().any(|c| c["status"] == "ok"), "{hooks:?}");
    assert!(
        hooks
            .iter()
            .any(|c| c["status"] == "warn" && c["summary"].as_str().unwrap().contains("not governed")),
        "{hooks:?}"
    );
    // The committed file names `sixfold`, which this machine lacks: every call refused.
    let q = Project::new();
    q.on_path();
    q.ok(&["install", "claude-code"]);
    std::fs::remove_file(q.bin.join("sixfold")).unwrap();
    let (code, report) = doctor(&q);
    assert_eq!(code, Some(0), "blocking is not failing open: {report}");
    let hook = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "hook")
        .unwrap()
        .clone();
    assert_eq!(hook["status"], "fails-closed", "{hook}");
    assert!(hook["summary"].as_str().unwrap().contains("not found"), "{hook}");
}

#[test]
fn doctor_fails_while_codex_would_skip_untrusted_hooks() {
    let p = Project::new();
    p.ok(&["install", "codex", "--user"]);
    let (code, report) = doctor(&p);
    assert_eq!(code, Some(1), "{report}");
    let trust = findings(&p, "codex-trust");
    assert_eq!(trust[0]["status"], "fails-open", "{trust:?}");
    assert!(trust[0]["fix"].as_str().unwrap().contains("/hooks"));
}

#[test]
fn doctor_finds_an_agent_cli_in_the_projects_node_modules_and_its_version() {
    let Some(claude) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let p = Project::new();
    std::fs::create_dir_all(p.file("node_modules/.bin")).unwrap();
    std::os::unix::fs::symlink(&claude, p.file("node_modules/.bin/claude")).unwrap();
    let agents = findings(&p, "agent");
    let found = agents
        .iter()
        .find(|c| c["summary"].as_str().unwrap().starts_with("Claude Code"))
        .unwrap();
    assert_eq!(found["status"], "ok", "{found}");
    assert!(
        found["summary"].as_str().unwrap().contains("node_modules/.bin/claude"),
        "{found}"
    );
    assert!(found["summary"].as_str().unwrap().contains(" 2."), "{found}");
    let codex = agents
        .iter()
        .find(|c| c["summary"].as_str().unwrap().starts_with("Codex"))
        .unwrap();
    assert_eq!(codex["status"], "note", "absent is not a failure: {codex}");
}

/// The real Claude Code, in a clone of a project at another path (as a teammate has it): the
/// committed hook runs, and judges; without sixfold on PATH it refuses every tool call instead
/// of letting it run.
#[test]
fn the_committed_hook_runs_from_a_clone_at_another_path() {
    let Some(claude) = agent_cli("SIXFOLD_CLAUDE_BIN", "claude") else {
        return;
    };
    let p = Project::new();
    p.on_path();
    p.write("keep.txt", "keep me\n");
    p.ok(&["install", "claude-code"]);
    git(&p.project, &["add", "-A"]);
    git(&p.project, &["commit", "-q", "-m", "governed"]);
    let clone = p.root.join("elsewhere/teammate");
    std::fs::create_dir_all(clone.parent().unwrap()).unwrap();
    git(
        &p.root,
        &["clone", "-q", p.project.to_str().unwrap(), clone.to_str().unwrap()],
    );
    assert!(!clone.join(".claude/settings.local.json").exists());
    let out = p.run_in(&clone, &["mode", "set", "read-only"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let scratch = p.root.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let script = json!({ "turns": [
        [{ "tool_use": { "name": "Write", "input": { "file_path": "{{workspace}}/new.txt", "content": "x" } } }],
        [{ "text": "Done." }],
    ]});
    let claude_in = |path: String| {
        let server = ModelServer::start(&script, &clone, &clone, &scratch);
        let stream = claude_stream(&claude, &clone, &server.url(), |c| {
            c.env("HOME", p.root.join("home"))
                .env("PATH", path)
                .env("CLAUDE_CONFIG_DIR", p.root.join("claude"))
                .env("XDG_STATE_HOME", p.root.join("state"));
        });
        stream
    };
    // With sixfold on PATH: the hook from the committed file judged the Write, in the clone.
    let node = Path::new("/usr/local/bin:/usr/bin:/bin");
    let results = tool_results(&claude_in(format!("{}:{}", p.bin.display(), node.display())));
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].1 && results[0].2.contains("read-only"), "{results:?}");
    assert!(!clone.join("new.txt").exists());
    let runs = std::fs::read_dir(clone.join(".sixfold/runs")).unwrap();
    let logged: Vec<Value> = runs
        .flat_map(|e| json_lines(&std::fs::read_to_string(e.unwrap().path()).unwrap()))
        .collect();
    assert!(
        logged
            .iter()
            .any(|e| e["event"] == "judged" && e["decision"] == "refuse"),
        "{logged:?}"
    );
    // Without it: the hook cannot start, and exits 2, which Claude Code reads as a block: the
    // prompt itself is refused (UserPromptSubmit), and no tool runs.
    let stream = claude_in(node.display().to_string());
    let blocked = stream
        .iter()
        .filter(|l| l["subtype"] == "hook_response")
        .all(|l| l["exit_code"] == 2 && l["stderr"].as_str().unwrap_or("").contains("not found"));
    assert!(blocked, "{stream:?}");
    assert!(stream.iter().any(|l| l["subtype"] == "hook_response"), "{stream:?}");
    assert!(tool_results(&stream).iter().all(|r| r.1), "{stream:?}");
    assert!(
        !clone.join("new.txt").exists(),
        "a hook that cannot start must not let the Write run"
    );
}

/// OpenCode's plugin: doctor says it runs, that the deny-all rule is what holds while it cannot
/// load (fails open without it), and that a plugin whose program is gone refuses every call.
#[test]
fn doctor_checks_opencodes_plugin_and_the_rule_that_holds_without_it() {
    fn plugin(p: &Project) -> Vec<Value> {
        findings(p, "hook")
            .into_iter()
            .filter(|c| c["summary"].as_str().unwrap().contains("sixfold.js"))
            .collect()
    }
    let p = Project::new();
    p.on_path();
    p.ok(&["install", "opencode"]);
    let found = plugin(&p);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["status"], "ok", "{found:?}");
    let (code, report) = doctor(&p);
    assert_eq!(code, Some(0), "{report}");
    // The rule gone: a plugin that fails to load lets OpenCode run every tool.
    p.write(".opencode/opencode.json", "{}\n");
    let (code, report) = doctor(&p);
    assert_eq!(code, Some(1), "{report}");
    let found = plugin(&p);
    assert!(
        found
            .iter()
            .any(|c| c["status"] == "fails-open" && c["summary"].as_str().unwrap().contains("deny-all")),
        "{found:?}"
    );
    // The program gone: the plugin refuses every call.
    let q = Project::new();
    q.on_path();
    q.ok(&["install", "opencode"]);
    std::fs::remove_file(q.bin.join("sixfold")).unwrap();
    let found = plugin(&q);
    assert!(found.iter().any(|c| c["status"] == "fails-closed"), "{found:?}");
    let (code, report) = doctor(&q);
    assert_eq!(code, Some(0), "{report}");
}
