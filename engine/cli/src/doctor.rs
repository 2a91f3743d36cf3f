//! `sixfold doctor`: everything that would make governance silently absent or wrong here, each
//! with how to fix it. A hook the agent CLI cannot start, or one it skips, lets every tool call
//! run unjudged: that fails open, and is exit 1.

use crate::live::{hook_files, settings_file, shipped_hooks, Agent};
use crate::output::outln;
use sixfold_core::bundle::Bundle;
use sixfold_core::call::Sandboxes;
use sixfold_core::format::HooksFile;
use sixfold_core::hook_settings;
use sixfold_hook::{install, install_codex, install_opencode, program};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// How long a hook may take to answer a harmless input.
const HOOK_TIMEOUT: Duration = Duration::from_secs(20);

/// Check that governance is really in force here: each installed hook's command exists and
/// answers (run as the agent runs it, on a harmless input), the active mode and whether the
/// project's `.sixfold/` is trusted, the sandbox proof for the mode, the agent CLIs found (on PATH
/// or in the project's `node_modules/.bin`) and whether their versions are supported, and whether
/// Codex trusts sixfold's hooks. Each problem says how to fix it. Exit 1 when anything would fail
/// open (a tool call that runs unjudged), else 0.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print one JSON object: `{"fails_open", "checks": [{"id", "status", "summary", "fix"?}]}`,
    /// `status` one of `ok`, `note`, `warn`, `fails-closed`, `fails-open`.
    #[arg(long)]
    json: bool,
}

/// How bad a finding is, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
enum Status {
    /// As it should be.
    Ok,
    /// Worth knowing; nothing is wrong.
    Note,
    /// Judged, but not as the person may think (an untrusted `.sixfold/`, an unproven sandbox).
    Warn,
    /// Every call is refused: governed, but nothing gets done.
    FailsClosed,
    /// Calls run unjudged.
    FailsOpen,
}

impl Status {
    fn word(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Note => "note",
            Status::Warn => "warn",
            Status::FailsClosed => "FAILS CLOSED",
            Status::FailsOpen => "FAILS OPEN",
        }
    }
}

/// One finding.
#[derive(Debug, serde::Serialize)]
struct Check {
    /// What was checked (`hook`, `mode`, `trust`, `sandbox`, `agent`, `codex-trust`).
    id: &'static str,
    status: Status,
    summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

fn check(id: &'static str, status: Status, summary: String, fix: Option<String>) -> Check {
    Check {
        id,
        status,
        summary,
        fix,
    }
}

/// `sixfold doctor`.
pub(crate) fn run(args: Args) -> u8 {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let project = sixfold_hook::project_of(&cwd).ok();
    let mut checks = Vec::new();
    hooks(project.as_deref(), &cwd, &mut checks);
    opencode(project.is_some(), &mut checks);
    match &project {
        Some(project) => mode_and_sandbox(project, &mut checks),
        None => checks.push(check(
            "mode",
            Status::Note,
            format!("{} is in no project, so no mode applies here", cwd.display()),
            Some("run it inside the repository the agent works in".into()),
        )),
    }
    agents(project.as_deref(), &mut checks);
    let fails_open = checks.iter().filter(|c| c.status == Status::FailsOpen).count();
    if args.json {
        crate::output::json(&serde_json::json!({ "project": project, "fails_open": fails_open, "checks": checks }));
    } else {
        for c in &checks {
            outln!("{:<12} {:<11} {}", c.status.word(), c.id, c.summary);
            if let Some(fix) = &c.fix {
                outln!("{:<12} {:<11} fix: {fix}", "", "");
            }
        }
        match fails_open {
            0 => outln!("nothing here fails open"),
            n => outln!("{n} finding(s) fail open: tool calls would run unjudged"),
        }
    }
    u8::from(fails_open > 0)
}

/// A settings file that may hold sixfold's hooks, and whether a team commits it.
struct HookFile {
    agent: Agent,
    path: PathBuf,
    committed: bool,
}

/// The files sixfold's hooks may be in, here: each agent's project files and the user's.
fn hook_file_list(in_project: bool) -> Vec<HookFile> {
    let mut files = Vec::new();
    for agent in [Agent::ClaudeCode, Agent::Codex] {
        if in_project {
            if let Ok((shared, local)) = hook_files(agent, false) {
                files.push(HookFile {
                    agent,
                    path: shared,
                    committed: true,
                });
                files.extend(local.map(|path| HookFile {
                    agent,
                    path,
                    committed: false,
                }));
            }
        }
        if let Ok(path) = settings_file(agent, true) {
            if !files.iter().any(|f| f.path == path) {
                files.push(HookFile {
                    agent,
                    path,
                    committed: false,
                });
            }
        }
    }
    files
}

/// Every installed hook: where it is, whether it answers, whether Codex runs it.
fn hooks(project: Option<&Path>, cwd: &Path, checks: &mut Vec<Check>) {
    let mut any = false;
    // Which agents have hooks in a project's committed file, and which only in its local one.
    let mut committed: Vec<&'static str> = Vec::new();
    let mut local_only: Vec<(&'static str, String)> = Vec::new();
    for file in hook_file_list(project.is_some()) {
        let Ok(spec) = shipped_hooks(file.agent) else { continue };
        let text = match install::read_text(&file.path) {
            Ok(t) => t,
            Err(e) => {
                checks.push(check(
                    "hook",
                    Status::Warn,
                    e,
                    Some("fix the file by hand; an agent CLI may not read it either".into()),
                ));
                continue;
            }
        };
        let commands = install::sixfold_commands(&text, &spec);
        if commands.is_empty() {
            continue;
        }
        any = true;
        match (file.committed, file.path.ends_with(".claude/settings.local.json")) {
            (true, _) => committed.push(agent_word(file.agent)),
            (false, true) => local_only.push((agent_word(file.agent), file.path.display().to_string())),
            _ => {}
        }
        let shown = file.path.display();
        let install = format!("sixfold install {}", agent_word(file.agent));
        for command in &commands {
            let missing = hook_settings::missing_events_text(&text, &spec, command).unwrap_or_default();
            if !missing.is_empty() {
                checks.push(check(
                    "hook",
                    Status::FailsOpen,
                    format!(
                        "{shown}: `{command}` is not registered for {}, so those events run unjudged",
                        missing.join(", ")
                    ),
                    Some(format!("run `{install}` again")),
                ));
            }
            let machine_path = hook_settings::program(command).is_some_and(|p| p.starts_with('/'));
            let guarded = command.trim_end().ends_with(hook_settings::FAIL_CLOSED);
            if file.committed && machine_path {
                checks.push(check(
                    "hook",
                    if guarded { Status::FailsClosed } else { Status::FailsOpen },
                    format!(
                        "{shown}, a file a team commits, names this machine's sixfold by its path (`{command}`): in a clone it cannot start{}",
                        if guarded { ", and every call is refused" } else { ", and the agent runs every tool unjudged" }
                    ),
                    Some(format!("put sixfold on PATH and run `{install}` again (it writes `sixfold` by name)")),
                ));
            }
            let dir = project.unwrap_or(cwd);
            checks.push(answers(&file, command, guarded, dir, &install));
        }
        if matches!(file.agent, Agent::Codex) {
            codex_trust(&file, &text, &spec, checks);
        }
    }
    for (agent, path) in local_only.into_iter().filter(|(a, _)| !committed.contains(a)) {
        checks.push(check(
            "hook",
            Status::Warn,
            format!("the hooks are only in {path}, which stays on this machine: a clone of this repository is not governed"),
            Some(format!("put sixfold on PATH and run `sixfold install {agent}` again: it writes them in the file a team commits")),
        ));
    }
    if !any {
        checks.push(check(
            "hook",
            Status::Note,
            "no sixfold hook is installed for Claude Code or Codex here".into(),
            Some("`sixfold install claude-code` or `sixfold install codex` to govern a live agent".into()),
        ));
    }
}

/// OpenCode's plugin, in the project's `.opencode/` and the user's config: OpenCode runs every
/// tool when a plugin fails to load, so what holds the line is the deny-all rule the plugin lifts
/// once loaded. A plugin whose program cannot start refuses every call (fails closed).
fn opencode(in_project: bool, checks: &mut Vec<Check>) {
    let Ok(spec) = shipped_hooks(Agent::OpenCode) else {
        return;
    };
    let scopes: &[bool] = if in_project { &[false, true] } else { &[true] };
    for &user in scopes {
        let Some(dir) = settings_file(Agent::OpenCode, user)
            .ok()
            .and_then(|config| config.parent().map(Path::to_path_buf))
        else {
            continue;
        };
        let plugin = dir.join(&spec.file);
        let Ok(Some(text)) = install_opencode::read_text(&plugin) else {
            continue;
        };
        if !install_opencode::is_sixfold_plugin(&text) {
            continue;
        }
        let shown = plugin.display();
        let fix = Some(format!(
            "run `sixfold install opencode{}` again",
            if user { " --user" } else { "" }
        ));
        let config = dir.join(install_opencode::CONFIG_FILE);
        let config_text = install_opencode::read_text(&config).ok().flatten().unwrap_or_default();
        let denied = install_opencode::deny_text(&config_text).is_ok_and(|after| after == config_text);
        if !denied {
            checks.push(check(
                "hook",
                Status::FailsOpen,
                format!(
                    "{}: no deny-all rule last in `permission`, so if {shown} fails to load OpenCode runs every tool unjudged",
                    config.display()
                ),
                fix,
            ));
            continue;
        }
        // The plugin names its program on one line: `const COMMAND = "…";`.
        let command: Option<String> = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("const COMMAND = "))
            .and_then(|rest| serde_json::from_str(rest.trim_end_matches(';')).ok());
        let named = command.as_deref().and_then(hook_settings::program).unwrap_or_default();
        let starts = if named == program::NAME {
            std::env::var_os("PATH").is_some_and(|p| program::on_path(program::NAME, &p).is_some())
        } else {
            program::is_executable(Path::new(&named))
        };
        checks.push(if starts {
            check(
                "hook",
                Status::Ok,
                format!(
                    "{shown}: runs `{}`, and OpenCode denies every tool until it loads",
                    command.unwrap_or_default()
                ),
                None,
            )
        } else {
            check(
                "hook",
                Status::FailsClosed,
                format!("{shown}: `{named}` cannot start here, so the plugin refuses every call"),
                fix,
            )
        });
    }
}

fn agent_word(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode => "claude-code",
        Agent::Codex => "codex",
        Agent::OpenCode => "opencode",
    }
}

/// Runs a hook command as the agent CLI runs it (`sh -c`, in the project) on a harmless input
/// (an empty event, which sixfold answers with a refusal and records nowhere), and says what the
/// agent would make of the answer: exit 2 blocks; any other failure lets the tool run.
///
/// INVARIANT: the settings files are untrusted (a repository's are anyone's), so only a known
/// sixfold is run: `sixfold` by name (as the shell finds it on PATH), or a path to this binary or
/// to the `sixfold` on PATH. Any other program is reported, never started.
fn answers(file: &HookFile, command: &str, guarded: bool, dir: &Path, install: &str) -> Check {
    let shown = file.path.display();
    let fix = Some(format!(
        "put sixfold on PATH (`cargo install --path engine/cli`) and run `{install}` again"
    ));
    let named = hook_settings::program(command).unwrap_or_default();
    if named != program::NAME {
        let at = Path::new(&named);
        if at.is_absolute() && !at.exists() {
            return if guarded {
                check(
                    "hook",
                    Status::FailsClosed,
                    format!(
                        "{shown}: `{command}` cannot start here (`{named}` does not exist), so every call is refused"
                    ),
                    fix,
                )
            } else {
                check(
                    "hook",
                    Status::FailsOpen,
                    format!("{shown}: `{command}` cannot start: `{named}` does not exist, so the hook does not answer (exit 127) and the agent runs the tool unjudged"),
                    fix,
                )
            };
        }
        if !known_sixfold(at) {
            return check(
                "hook",
                Status::Warn,
                format!("{shown}: `{command}` names `{named}`, which is neither this sixfold nor the one on PATH, so it was not run"),
                Some(format!("if it is not yours, remove it; else run `{install}` again")),
            );
        }
    }
    let mut sh = Command::new("/bin/sh");
    sh.args(["-c", command]).current_dir(dir);
    let ran = program::run_bounded(&mut sh, b"{}", HOOK_TIMEOUT);
    match ran {
        Ok(out) => {
            let answer: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let refused = answer
                .get("hookSpecificOutput")
                .and_then(|o| o.get("permissionDecision"))
                .is_some_and(|d| d == "deny");
            match out.status.code() {
                Some(0) if refused => check("hook", Status::Ok, format!("{shown}: `{command}` answers"), None),
                Some(2) => {
                    let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
                    check(
                        "hook",
                        Status::FailsClosed,
                        format!("{shown}: `{command}` cannot start here ({said}), so every call is refused"),
                        fix,
                    )
                }
                code => check(
                    "hook",
                    Status::FailsOpen,
                    format!(
                        "{shown}: `{command}` does not answer (exit {}){}: the agent runs the tool unjudged",
                        code.map_or("by a signal".into(), |c| c.to_string()),
                        if guarded { "" } else { ", and it has no `|| exit 2`" }
                    ),
                    fix,
                ),
            }
        }
        Err(e) => check(
            "hook",
            Status::FailsOpen,
            format!("{shown}: `{command}`: {e}; the agent runs the tool unjudged when a hook times out"),
            fix,
        ),
    }
}

/// Whether `path` is this binary, or the `sixfold` on PATH.
fn known_sixfold(path: &Path) -> bool {
    let Ok(real) = path.canonicalize() else {
        return false;
    };
    let me = std::env::current_exe().and_then(|p| p.canonicalize()).ok();
    let on_path = std::env::var_os("PATH")
        .and_then(|p| program::on_path(program::NAME, &p))
        .and_then(|p| p.canonicalize().ok());
    path.is_absolute() && (me.as_ref() == Some(&real) || on_path.as_ref() == Some(&real))
}

/// Whether Codex runs sixfold's hooks in a file: it skips untrusted ones without a word. A
/// project's hooks are trusted in the user's config, where `/hooks` keeps it.
fn codex_trust(file: &HookFile, text: &str, spec: &HooksFile, checks: &mut Vec<Check>) {
    let keyed = file.path.canonicalize().unwrap_or_else(|_| file.path.clone());
    let user = settings_file(Agent::Codex, true)
        .ok()
        .and_then(|p| install::read_text(&p).ok())
        .unwrap_or_default();
    let found = install_codex::installed_trusted_in(&keyed, text, &[text, &user], spec);
    let skipped: Vec<String> = found
        .iter()
        .filter(|h| h.trust != install_codex::Trust::Trusted)
        .map(|h| format!("{} {}", h.event, h.trust.as_str()))
        .collect();
    let shown = file.path.display();
    if skipped.is_empty() {
        checks.push(check(
            "codex-trust",
            Status::Ok,
            format!("{shown}: Codex trusts all {} sixfold hooks", found.len()),
            None,
        ));
    } else {
        checks.push(check(
            "codex-trust",
            Status::FailsOpen,
            format!(
                "{shown}: Codex skips {} of {} sixfold hooks without a word ({})",
                skipped.len(),
                found.len(),
                skipped.join(", ")
            ),
            Some(
                "run `codex`, type `/hooks` and trust each sixfold hook (or run with --dangerously-bypass-hook-trust)"
                    .into(),
            ),
        ));
    }
}

/// The active mode, whether the project's `.sixfold/` is trusted, the bundle, and the sandbox
/// proof for the mode's environment.
fn mode_and_sandbox(project: &Path, checks: &mut Vec<Check>) {
    let state = match sixfold_hook::state::State::load(project) {
        Ok(s) => s,
        Err(e) => {
            checks.push(check(
                "mode",
                Status::FailsClosed,
                format!("{e}: the hook refuses every call"),
                Some("fix or remove the state file".into()),
            ));
            return;
        }
    };
    let named = state.mode_for(None);
    let (bundle, diagnostics) = sixfold_hook::load_bundle(project);
    if !diagnostics.is_empty() {
        checks.push(check(
            "mode",
            Status::FailsClosed,
            format!(
                "the bundle (shipped and {}) has {} error(s)",
                sixfold_hook::project::dir(project).display(),
                diagnostics.len()
            ),
            Some("run `sixfold check` for the full report".into()),
        ));
    }
    let standing = crate::trust::standing_words(project);
    let untrusted = standing == "not trusted";
    let default = sixfold_hook::DEFAULT_MODE;
    if bundle.mode(&named).is_none() {
        checks.push(check(
            "mode",
            Status::FailsClosed,
            format!("the active mode `{named}` is not in the bundle"),
            Some("`sixfold mode set ID` with one of `sixfold modes`".into()),
        ));
    } else {
        checks.push(check(
            "mode",
            Status::Ok,
            format!("active mode `{named}`, pattern `{}`", state.pattern()),
            None,
        ));
    }
    let dir = sixfold_hook::project::dir(project);
    match (untrusted, named == default) {
        (true, false) => checks.push(check(
            "trust",
            Status::Warn,
            format!(
                "{} is not trusted on this machine, so what applies is `{default}` narrowed by `{named}`, not `{named}`",
                dir.display()
            ),
            Some("review it, then run `sixfold trust`".into()),
        )),
        (true, true) => checks.push(check(
            "trust",
            Status::Note,
            format!("{} is not trusted on this machine: it only narrows the shipped bundle", dir.display()),
            Some("review it, then run `sixfold trust`".into()),
        )),
        (false, _) => checks.push(check("trust", Status::Ok, format!("{} {standing}", dir.display()), None)),
    }
    sandbox(&bundle, &named, project, checks);
}

/// Whether the mode's environment is proven here, as the hook asks it.
fn sandbox(bundle: &Bundle, mode: &str, project: &Path, checks: &mut Vec<Check>) {
    if crate::sandbox::for_hook().is_none() {
        checks.push(check(
            "sandbox",
            Status::Note,
            format!(
                "{}=off: no command is judged contained, so the mode asks for what it cannot read",
                crate::sandbox::SANDBOX_ENV
            ),
            None,
        ));
        return;
    }
    let Some(spec) = bundle
        .mode(mode)
        .and_then(|m| m.environment.as_ref())
        .and_then(|name| bundle.environment(name))
    else {
        checks.push(check(
            "sandbox",
            Status::Ok,
            format!("mode `{mode}` runs commands in no sandbox environment"),
            None,
        ));
        return;
    };
    match crate::sandbox::Prover.proven(mode, spec, &[project.to_path_buf()]) {
        Ok(_) => checks.push(check(
            "sandbox",
            Status::Ok,
            format!("the environment of mode `{mode}` is proven on this machine"),
            None,
        )),
        Err(why) => checks.push(check(
            "sandbox",
            Status::Warn,
            format!("the environment of mode `{mode}` is not proven here ({why}): commands it would run contained are judged as they are (stricter)"),
            Some(format!("`sixfold sandbox check --mode {mode}` says what is missing")),
        )),
    }
}

/// The agent CLIs found (on PATH, else in the project's `node_modules/.bin`) and whether their
/// versions are supported.
fn agents(project: Option<&Path>, checks: &mut Vec<Check>) {
    let (bundle, _) = Bundle::load(&[sixfold_core::shipped::source()]);
    // sixfold's own governed tools are a provider too, but not an agent CLI.
    for provider in bundle
        .providers()
        .filter(|p| !p.spec.binary.names.iter().any(|n| n == program::NAME))
    {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let on_path = provider
            .spec
            .binary
            .names
            .iter()
            .any(|n| program::on_path(n, &path).is_some());
        let local = project.and_then(|p| {
            provider
                .spec
                .binary
                .names
                .iter()
                .map(|n| p.join("node_modules/.bin").join(n))
                .find(|b| program::is_executable(b))
        });
        let found = match (on_path, &local) {
            (false, Some(local)) => sixfold_launch::probe::status(&provider.spec, Some(local)),
            _ => sixfold_launch::probe::status(&provider.spec, None),
        };
        use sixfold_launch::probe::Status as Found;
        let version = found.version.as_deref().unwrap_or("version unknown");
        let at = found
            .binary
            .as_ref()
            .map(|b| b.display().to_string())
            .unwrap_or_default();
        let (status, summary, fix) = match found.status {
            Found::Absent => (
                Status::Note,
                format!("{}: not found ({})", found.name, found.reason),
                found.install_hint.clone().map(|h| format!("install it: {h}")),
            ),
            Found::Unsupported => (
                Status::Warn,
                format!("{} {version} at {at}: {}", found.name, found.reason),
                Some(format!("update {}", found.name)),
            ),
            _ => (
                Status::Ok,
                format!("{} {version} at {at} ({})", found.name, found.status.as_str()),
                None,
            ),
        };
        checks.push(check("agent", status, summary, fix));
    }
}
