//! Live governance: `sixfold hook`, `mode`, `rules`, `install`, `uninstall`.
//! The hook layer does the work; this wires it to the replay layer's readers of Claude Code's
//! and Codex's records (layers never depend on each other, so the CLI hands one to the other),
//! and OpenCode's asks to sixfold's approvals (`crate::opencode_ask`).

use crate::output::{errln, out, outln};
use sixfold_core::bundle::Bundle;
use sixfold_core::decision::Decision;
use sixfold_core::format::HooksFile;
use sixfold_core::hook_settings;
use sixfold_core::trace::{Edit, Outcome, Status, Trace};
use sixfold_hook::{guard, install, install_codex, install_opencode, rules, state::State, Records};
use sixfold_replay::{Format, ReadContext};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Claude Code's records, read by the replay layer.
struct ClaudeRecords;

impl Records for ClaudeRecords {
    fn edits(&self, tool: &str, input: &serde_json::Value, response: &serde_json::Value) -> Vec<Edit> {
        sixfold_replay::claude_call_edits(tool, input, response)
    }

    fn transcript(&self, path: &Path, bundle: &Bundle) -> Option<Trace> {
        // INVARIANT (fail closed): the path comes from the hook event, so it is untrusted:
        // `read_file` reads a regular file only, and no further than its size when opened (a
        // FIFO or `/dev/zero` is an error at once); without a transcript the Stop hook judges
        // the run from its own log.
        sixfold_replay::read_file(path, Some(Format::ClaudeSession), &ReadContext { bundle }).ok()
    }
}

/// Codex's records, read by the replay layer: the rollout file is its transcript.
struct CodexRecords;

/// The lines of an `apply_patch` patch that start a part of it; a patch with any other line
/// that looks like one is not read (its files are not listed).
const PATCH_HEADERS: [&str; 7] = [
    "*** Begin Patch",
    "*** End Patch",
    "*** Add File: ",
    "*** Update File: ",
    "*** Delete File: ",
    "*** Move to: ",
    "*** End of File",
];

impl Records for CodexRecords {
    fn edits(&self, _tool: &str, _input: &serde_json::Value, _response: &serde_json::Value) -> Vec<Edit> {
        // Codex's response does not say what a patch changed; the Stop hook reads the edits
        // from the rollout, which does.
        Vec::new()
    }

    fn transcript(&self, path: &Path, bundle: &Bundle) -> Option<Trace> {
        // INVARIANT (fail closed): the path comes from the hook event, so it is untrusted:
        // `read_file` reads a regular file only, bounded; without it the Stop hook judges the
        // run from its own log.
        sixfold_replay::read_file(path, Some(Format::CodexRollout), &ReadContext { bundle }).ok()
    }

    fn outcome(&self, _tool: &str, response: &serde_json::Value, failed: bool) -> Outcome {
        // Codex answers with text (`Exit code: 0\nWall time: …` for a patch, often nothing for a
        // command): an exit code it does not state stays unknown, for the Stop hook to read from
        // the rollout, never assumed 0.
        let exit_code = response.as_str().and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("Exit code: "))
                .and_then(|n| n.trim().parse::<i64>().ok())
        });
        let status = match (failed, exit_code) {
            (true, _) => Status::Failed,
            (false, Some(0)) => Status::Completed,
            (false, Some(_)) => Status::Failed,
            (false, None) => Status::Unknown,
        };
        Outcome { status, exit_code }
    }

    fn planned_edits(&self, tool: &str, input: &serde_json::Value, cwd: &Path) -> Option<Vec<Edit>> {
        if tool != "apply_patch" {
            return None;
        }
        let patch = input.get("command").and_then(serde_json::Value::as_str)?;
        // INVARIANT (fail closed): a patch read any other way than Codex reads it could hide a
        // file; one that does not start as a patch, or has a header line this reader does not
        // know (indented, misspelt), keeps the provider file's broad scope.
        if !patch.trim_start().starts_with("*** Begin Patch") {
            return None;
        }
        let odd = patch.lines().any(|line| {
            let trimmed = line.trim_start();
            trimmed.starts_with("***") && !PATCH_HEADERS.iter().any(|h| line.starts_with(h.trim_end()))
        });
        if odd {
            return None;
        }
        let edits = sixfold_replay::codex_patch_edits(patch, cwd);
        (!edits.is_empty()).then_some(edits)
    }
}

/// OpenCode's records: what its plugin sends after a call ran (`{title, metadata}`). Its
/// session store is not read live.
struct OpenCodeRecords;

impl Records for OpenCodeRecords {
    fn edits(&self, _tool: &str, _input: &serde_json::Value, _response: &serde_json::Value) -> Vec<Edit> {
        Vec::new()
    }

    fn transcript(&self, _path: &Path, _bundle: &Bundle) -> Option<Trace> {
        None
    }

    fn outcome(&self, tool: &str, response: &serde_json::Value, failed: bool) -> Outcome {
        // The shell tool's exit code is `metadata.exit`; the other tools ran when this is sent.
        let exit_code = response
            .get("metadata")
            .and_then(|m| m.get("exit"))
            .and_then(serde_json::Value::as_i64);
        let status = match (failed, exit_code) {
            (true, _) | (false, Some(1..)) | (false, Some(..0)) => Status::Failed,
            (false, Some(0)) => Status::Completed,
            (false, None) if tool == "bash" => Status::Unknown,
            (false, None) => Status::Completed,
        };
        Outcome { status, exit_code }
    }
}

/// The agent CLIs sixfold has hook adapters for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Agent {
    /// Claude Code.
    ClaudeCode,
    /// Codex.
    Codex,
    /// OpenCode (through sixfold's plugin).
    #[value(name = "opencode")]
    OpenCode,
}

impl Agent {
    /// The agent a name on the command line names, as clap reads it (a test holds the two
    /// together), without clap: `sixfold hook AGENT` runs before every tool call, and clap's
    /// `ValueEnum::from_str` builds every variant's possible value and touches its code pages.
    pub(crate) fn named(name: &str) -> Option<Agent> {
        match name {
            "claude-code" => Some(Agent::ClaudeCode),
            "codex" => Some(Agent::Codex),
            "opencode" => Some(Agent::OpenCode),
            _ => None,
        }
    }

    /// Its provider file's id.
    fn provider(self) -> &'static str {
        match self {
            Agent::ClaudeCode => sixfold_hook::claude_code::PROVIDER,
            Agent::Codex => sixfold_hook::codex::PROVIDER,
            Agent::OpenCode => sixfold_hook::opencode::PROVIDER,
        }
    }

    /// Its hook adapter; command steps run inside the sandbox where `sandboxes` proves it.
    fn handle(self, input: &[u8], sandboxes: Option<&dyn sixfold_core::call::Sandboxes>) -> (String, Vec<String>) {
        match self {
            Agent::ClaudeCode => sixfold_hook::claude_code::handle(input, &ClaudeRecords, sandboxes),
            Agent::Codex => sixfold_hook::codex::handle(input, &CodexRecords, sandboxes),
            Agent::OpenCode => crate::opencode_ask::handle(input, &OpenCodeRecords, sandboxes),
        }
    }
}

/// Answer one hook event: reads the event as JSON on stdin, prints the answer on stdout in the
/// agent's hook format. Registered by `sixfold install`; not usually run by hand.
#[derive(Debug, clap::Args)]
pub(crate) struct HookArgs {
    /// Which agent CLI is asking.
    pub(crate) agent: Agent,
}

/// `sixfold hook`: answers one hook event. A judgement is answered on stdout with exit 0 (a
/// failure it could handle is answered as a refusal); a panic, a hang past the deadline or an
/// answer that cannot be written is a refusal on stderr with exit 2, which the agent reads as a
/// block (see `sixfold_hook::guard`).
pub(crate) fn hook(args: HookArgs) -> u8 {
    let agent = args.agent;
    crate::hook_deadline::arm();
    let judged = std::panic::catch_unwind(|| {
        let mut input = Vec::new();
        let read = std::io::stdin()
            .take(sixfold_hook::MAX_INPUT_BYTES + 1)
            .read_to_end(&mut input);
        match read {
            Ok(n) if n as u64 > sixfold_hook::MAX_INPUT_BYTES => agent.handle(b"oversized", None),
            Ok(_) => agent.handle(&input, crate::sandbox::for_hook()),
            Err(e) => agent.handle(format!("unreadable: {e}").as_bytes(), None),
        }
    });
    let (answer, notes) = match judged {
        Ok(found) => found,
        // The panic hook has answered already; this is only reached if it was replaced.
        Err(_) => guard::fail("the hook failed"),
    };
    if !guard::claim() {
        // INVARIANT (fail closed): the deadline answered deny first; that answer stands.
        return 2;
    }
    for note in notes {
        errln!("{note}");
    }
    if answer.is_empty() {
        guard::settle();
        return 0;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{answer}").and_then(|()| stdout.flush()) {
        // INVARIANT (fail closed): an answer that was lost is a block (exit 2), not exit 1,
        // which the agent would read as "run the tool".
        errln!("sixfold: could not judge this call, so it is refused: cannot write the answer: {e}");
        return 2;
    }
    guard::settle();
    0
}

fn project() -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    sixfold_hook::project_of(&cwd)
}

fn fail(message: &str, hint: &str) -> u8 {
    errln!("error: {message}\n  = help: {hint}");
    1
}

/// Show or set the active mode of this project (or of one session). The next hook call uses it.
#[derive(Debug, clap::Args)]
pub(crate) struct ModeArgs {
    #[command(subcommand)]
    command: ModeCommand,
}

#[derive(Debug, clap::Subcommand)]
enum ModeCommand {
    /// Set the active mode; a mode that does not exist is an error and changes nothing.
    Set {
        /// The mode (see `sixfold modes`).
        id: String,
        /// Only for this session.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Change nothing: show what the session's run so far (its event log) would have met
        /// under the mode, step by step (as `sixfold whatif --to-mode`).
        #[arg(long)]
        dry_run: bool,
    },
    /// Show the active mode and pattern.
    Show {
        /// For this session.
        #[arg(long, value_name = "ID")]
        session: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// The project of the current directory and its state; the exit code when either cannot be had.
fn project_state() -> Result<(PathBuf, State), u8> {
    let project = project().map_err(|e| fail(&e, "run it inside the project"))?;
    let state = State::load(&project).map_err(|e| fail(&e, "fix or remove the state file"))?;
    Ok((project, state))
}

/// `sixfold mode`: shows or sets the active mode.
pub(crate) fn mode(args: ModeArgs) -> u8 {
    let (project, mut state) = match project_state() {
        Ok(found) => found,
        Err(code) => return code,
    };
    match args.command {
        ModeCommand::Show { session, json } => {
            let mode = state.mode_for(session.as_deref());
            if json {
                crate::output::json(&serde_json::json!({"project": project, "mode": mode,
                    "pattern": state.pattern(), "bundle": crate::trust::standing_words(&project)}));
            } else {
                outln!(
                    "mode {mode}, pattern {} (project {}, its .sixfold/ {})",
                    state.pattern(),
                    project.display(),
                    crate::trust::standing_words(&project)
                );
            }
            0
        }
        ModeCommand::Set {
            id,
            session,
            dry_run: true,
        } => {
            let (bundle, diagnostics) = sixfold_hook::load_bundle(&project);
            if !diagnostics.is_empty() {
                crate::bundles::report(&diagnostics);
                return fail("the bundle has errors, so nothing was compared", "run `sixfold check`");
            }
            let from = state.mode_for(session.as_deref());
            crate::whatif::dry_run(&project, session.as_deref(), &from, &id, &bundle)
        }
        ModeCommand::Set { id, session, .. } => {
            // An untrusted `.sixfold/` stays untrusted after the change (see `keeping_trust`).
            let untrusted = crate::trust::standing_words(&project) == "not trusted";
            crate::trust::keeping_trust(&project, || {
                let (bundle, diagnostics) = sixfold_hook::load_bundle(&project);
                if !diagnostics.is_empty() {
                    crate::bundles::report(&diagnostics);
                    return fail(
                        "the bundle has errors, so the mode was not changed",
                        "run `sixfold check`",
                    );
                }
                if bundle.mode(&id).is_none() {
                    let stays = format!("the active mode stays `{}`", state.mode_for(session.as_deref()));
                    return crate::names::report_then(&bundle.unknown_mode(&id), &stays);
                }
                match &session {
                    Some(s) => state.sessions.entry(s.clone()).or_default().mode = Some(id.clone()),
                    None => state.mode = Some(id.clone()),
                }
                if let Err(e) = state.save(&project) {
                    return fail(&e, "check the permissions of .sixfold/");
                }
                let scope = session.map(|s| format!(" for session {s}")).unwrap_or_default();
                let default = sixfold_hook::DEFAULT_MODE;
                if untrusted && id != default {
                    // The hook judges each step with and without the untrusted project layer (its
                    // state included), under the default mode without it: the stricter stands.
                    outln!(
                    "mode {id}{scope} is set, but {} is not trusted on this machine, so the mode that really applies is `{default}` narrowed by `{id}`: each step is judged under both and the stricter stands (`{id}` cannot widen `{default}`); review it and run `sixfold trust` for `{id}` to apply as it is",
                    sixfold_hook::project::dir(&project).display()
                );
                } else {
                    outln!("mode {id}{scope} (the next tool call is judged by it)");
                }
                0
            })
        }
    }
}

/// Keep approvals as rules in the project's `.sixfold/policies/kept.toml`: a command prefix, a
/// path glob or a domain, decided allow, ask or refuse. A kept rule narrows anything but widens
/// only within the mode's ceiling.
#[derive(Debug, clap::Args)]
pub(crate) struct RulesArgs {
    #[command(subcommand)]
    command: RulesCommand,
}

#[derive(Debug, clap::Subcommand)]
enum RulesCommand {
    /// Keep a rule about an act.
    Add {
        /// Allow the act.
        #[arg(long, group = "decision")]
        allow: bool,
        /// Ask about the act.
        #[arg(long, group = "decision")]
        ask: bool,
        /// Refuse the act.
        #[arg(long, group = "decision")]
        refuse: bool,
        /// The act: a command prefix (`cargo test`), a path glob (`docs/**`) or a domain (`crates.io`).
        act: String,
        /// Only in this mode.
        #[arg(long, value_name = "ID")]
        mode: Option<String>,
    },
    /// List the kept rules.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a kept rule by its id.
    Remove {
        /// The id (`rule-3` or `kept/rule-3`).
        id: String,
    },
}

/// `sixfold rules`: keeps, lists and removes kept rules.
pub(crate) fn rules(args: RulesArgs) -> u8 {
    let project = match project() {
        Ok(p) => p,
        Err(e) => return fail(&e, "run it inside the project"),
    };
    match args.command {
        RulesCommand::Add {
            allow,
            ask,
            refuse,
            act,
            mode,
        } => {
            let decision = match (allow, ask, refuse) {
                (true, _, _) => Decision::Allow,
                (_, true, _) => Decision::Ask,
                (_, _, true) => Decision::Refuse,
                _ => return fail("say what the rule decides", "pass --allow, --ask or --refuse"),
            };
            let (bundle, _) = sixfold_hook::load_bundle(&project);
            if let Some(m) = &mode {
                if bundle.mode(m).is_none() {
                    return crate::names::report_then(&bundle.unknown_mode(m), "no rule was kept");
                }
            }
            // Secrets and protected paths lie outside what a kept rule can widen: say so.
            let beyond = match (decision, rules::classify_act(&act)) {
                (Decision::Refuse, _) | (_, "command" | "domain") => Vec::new(),
                _ => bundle.ceiling_rules_reached(act.trim()),
            };
            // Kept rules are the user's own approvals: written by this command, they stay trusted.
            crate::trust::keeping_trust(&project, || {
                match rules::add(&project, decision, &act, mode.as_deref()) {
                    Ok(id) => {
                        outln!("kept {id}: {decision} {} `{act}`", rules::classify_act(&act));
                        if !beyond.is_empty() {
                            outln!(
                                "note: `{act}` may cover secrets or protected paths; the rule never unlocks them (they lie outside every mode's ceiling but `full`'s: {})",
                                beyond.join(", ")
                            );
                        }
                        0
                    }
                    Err(e) => fail(&e, "check .sixfold/policies/kept.toml"),
                }
            })
        }
        RulesCommand::List { json } => match rules::list(&project) {
            Ok(list) if json => {
                crate::output::json(&serde_json::json!({ "rules": list }));
                0
            }
            Ok(list) => {
                for r in list {
                    let act = r.command.or(r.path).or(r.domain).unwrap_or_default();
                    let modes = r
                        .modes
                        .map(|m| format!(" (modes: {})", m.join(", ")))
                        .unwrap_or_default();
                    outln!("{}  {}  {act}{modes}", r.id, r.decision);
                }
                0
            }
            Err(e) => fail(&e, "check .sixfold/policies/kept.toml"),
        },
        RulesCommand::Remove { id } => crate::trust::keeping_trust(&project, || match rules::remove(&project, &id) {
            Ok(()) => {
                outln!("removed {id}");
                0
            }
            Err(rules::NotRemoved::Unknown(unknown)) => crate::names::report(&unknown),
            Err(rules::NotRemoved::Failed(e)) => fail(&e, "see `sixfold rules list`"),
        }),
    }
}

/// Register sixfold as the agent CLI's hook, so every tool call is judged before it runs.
///
/// The hook runs the `sixfold` on PATH when one answers there, written in the file a team
/// commits (Claude Code's `.claude/settings.json`, Codex's `.codex/config.toml`), so a clone, a
/// `cargo clean` or a reinstall keeps it working. Without one, Claude Code's hook names this
/// binary by its path in `.claude/settings.local.json`, which stays on this machine, and Codex's
/// project install is refused (Codex has no such file: put sixfold on PATH, or pass `--user`).
/// Every hook command ends in `|| exit 2`: a program that cannot start blocks the call instead of
/// letting it run. Codex then skips the hooks until a person trusts them (`/hooks` in its TUI);
/// `sixfold doctor` says whether they are trusted and whether each hook answers. OpenCode:
/// sixfold's plugin, `.opencode/plugin/sixfold.js`, and in `.opencode/opencode.json` a rule
/// denying every tool until the plugin has loaded; the plugin refuses every call when the
/// program cannot start, so a machine path there fails closed.
#[derive(Debug, clap::Args)]
pub(crate) struct InstallArgs {
    /// Which agent CLI.
    agent: Agent,
    /// The repository's settings (the default): `.claude/settings.json` (or
    /// `.claude/settings.local.json`), `.codex/config.toml`, `.opencode/`.
    #[arg(long, conflicts_with = "user")]
    project: bool,
    /// The user's settings: `$CLAUDE_CONFIG_DIR/settings.json` (else `~/.claude/settings.json`),
    /// `$CODEX_HOME/config.toml` (else `~/.codex/config.toml`), `$XDG_CONFIG_HOME/opencode/`
    /// (else `~/.config/opencode/`).
    #[arg(long)]
    user: bool,
    /// Show the change as a diff and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Instead of the hooks: run each server of the project's `.mcp.json` behind
    /// `sixfold mcp-proxy` (the original kept beside it; `uninstall --mcp` restores it).
    #[arg(long, conflicts_with = "user")]
    mcp: bool,
}

/// A variable of the environment, where it is set and not empty.
fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// The settings file `install` edits for `agent` (the project's shared one, or with `user` the
/// user's).
pub(crate) fn settings_file(agent: Agent, user: bool) -> Result<PathBuf, String> {
    let project = if user { None } else { Some(project()?) };
    match agent {
        Agent::ClaudeCode => {
            install::settings_path(project.as_deref(), env_path("CLAUDE_CONFIG_DIR"), env_path("HOME"))
        }
        Agent::Codex => install_codex::config_path(project.as_deref(), env_path("CODEX_HOME"), env_path("HOME")),
        Agent::OpenCode => {
            install_opencode::config_dir(project.as_deref(), env_path("XDG_CONFIG_HOME"), env_path("HOME"))
                .map(|dir| dir.join(install_opencode::CONFIG_FILE))
        }
    }
}

/// The config files OpenCode merges before the one `install opencode` writes: for a project's
/// `.opencode/`, the user's config and the project's own `opencode.json(c)`; for the user's,
/// none.
fn opencode_merged_before(user: bool) -> Vec<PathBuf> {
    if user {
        return Vec::new();
    }
    let mut files = Vec::new();
    if let Ok(dir) = install_opencode::config_dir(None, env_path("XDG_CONFIG_HOME"), env_path("HOME")) {
        files.extend(["opencode.jsonc", "opencode.json"].map(|name| dir.join(name)));
    }
    if let Ok(root) = project() {
        files.extend(["opencode.jsonc", "opencode.json"].map(|name| root.join(name)));
    }
    files
}

/// Applies OpenCode's install or uninstall (`changes`, or why there are none): a plugin and the
/// config beside it, no backup kept (nothing of the user's is changed but sixfold's own rule).
fn opencode_change(args: &InstallArgs, changes: Result<Vec<install_opencode::Change>, String>, verb: &str) -> u8 {
    let dir = match settings_file(args.agent, args.user) {
        Ok(config) => config.parent().map(Path::to_path_buf).unwrap_or_default(),
        Err(e) => return fail(&e, "pass --project inside a repository, or set XDG_CONFIG_HOME or HOME"),
    };
    let changes = match changes {
        Ok(c) => c,
        Err(e) => return fail(&e, "fix the file by hand first"),
    };
    let changed: Vec<&install_opencode::Change> = changes.iter().filter(|c| c.before != c.after).collect();
    if changed.is_empty() {
        outln!("{} already {verb}", dir.display());
        return 0;
    }
    if args.dry_run {
        for c in &changed {
            let (before, after) = (
                c.before.as_deref().unwrap_or_default(),
                c.after.as_deref().unwrap_or_default(),
            );
            out!(
                "--- {}\n+++ {}\n{}",
                c.path.display(),
                c.path.display(),
                install::diff(before, after)
            );
        }
        return 0;
    }
    if let Err(e) = install_opencode::apply(&dir, &changes) {
        return fail(&e, "check the permissions");
    }
    for c in changed {
        let what = match (&c.before, &c.after) {
            (_, None) => "removed",
            (None, Some(_)) => "created",
            (Some(_), Some(_)) => "changed",
        };
        outln!("{verb}: {what} {}", c.path.display());
    }
    if verb == "installed" {
        outln!("OpenCode now offers no tool until sixfold's plugin has loaded, and runs each call only when sixfold allows it; an ask waits for `sixfold approvals answer` (see docs/live.md).");
    }
    0
}

/// The files sixfold's hooks for `agent` may be in: the shared (or user's) settings file, and for
/// a Claude Code project its local settings too.
pub(crate) fn hook_files(agent: Agent, user: bool) -> Result<(PathBuf, Option<PathBuf>), String> {
    let shared = settings_file(agent, user)?;
    let local = match (agent, user) {
        (Agent::ClaudeCode, false) => Some(install::local_settings_path(&project()?)),
        _ => None,
    };
    Ok((shared, local))
}

/// A change to a settings file's text.
type TextEdit<'a> = dyn Fn(&str) -> Result<String, String> + 'a;

/// One settings file's change, shown (dry run) or written; `Err` holds the exit code. Uninstall
/// (`strip` given) writes without litter (see [`install::write_without_litter`]).
fn apply(
    path: &Path,
    dry_run: bool,
    edit: &TextEdit<'_>,
    strip: Option<&TextEdit<'_>>,
    tidy_dir: bool,
) -> Result<bool, u8> {
    let before = install::read_text(path).map_err(|e| {
        fail(
            &e,
            "fix the file by hand first; sixfold will not overwrite what it cannot read",
        )
    })?;
    let after = edit(&before).map_err(|e| fail(&format!("`{}`: {e}", path.display()), "fix the file by hand first"))?;
    if after == before || install::same_content(&after, &before) {
        return Ok(false);
    }
    if dry_run {
        out!(
            "--- {}\n+++ {}\n{}",
            path.display(),
            path.display(),
            install::diff(&before, &after)
        );
        return Ok(true);
    }
    match strip {
        Some(strip) => match install::write_without_litter(path, &after, strip, tidy_dir) {
            Ok(tidied) => {
                let mut gone: Vec<String> = Vec::new();
                gone.extend(tidied.backup.map(|b| b.display().to_string()));
                gone.extend(tidied.dir.map(|d| format!("{}/", d.display())));
                let removed = match (tidied.file, gone.is_empty()) {
                    (true, _) => " (it held nothing else, so it is removed".to_string(),
                    (false, false) => " (removed".to_string(),
                    (false, true) => String::new(),
                };
                let also = if gone.is_empty() {
                    String::new()
                } else {
                    format!("{} {}", if tidied.file { ", with" } else { "" }, gone.join(" and "))
                };
                let close = if removed.is_empty() { "" } else { ")" };
                outln!("uninstalled {}{removed}{also}{close}", path.display());
                Ok(true)
            }
            Err(e) => Err(fail(&e, "check the permissions")),
        },
        None => match install::write_text(path, &after) {
            Ok(backup) => {
                let kept = backup
                    .map(|b| format!(" (previous file kept as {})", b.display()))
                    .unwrap_or_default();
                outln!("installed {}{kept}", path.display());
                Ok(true)
            }
            Err(e) => Err(fail(&e, "check the permissions")),
        },
    }
}

/// The shipped provider file's `[hooks]` table for an agent. Only the shipped bundle's: a
/// repository's own `.sixfold/` must not choose what runs as its hook.
pub(crate) fn shipped_hooks(agent: Agent) -> Result<HooksFile, String> {
    let (bundle, _) = Bundle::load(&[sixfold_core::shipped::source()]);
    install::spec(&bundle, agent.provider()).cloned()
}

/// `sixfold install`: registers sixfold's hooks in the agent's settings.
pub(crate) fn install_hooks(args: InstallArgs) -> u8 {
    let binary = match std::env::current_exe().and_then(|p| p.canonicalize()) {
        Ok(p) => p,
        Err(e) => {
            return fail(
                &format!("cannot tell where this sixfold binary is: {e}"),
                "run it by its path",
            )
        }
    };
    if args.mcp {
        return match project() {
            Ok(p) => crate::mcp_install::install(&p, &binary, args.dry_run),
            Err(e) => fail(&e, "run it inside the project"),
        };
    }
    let spec = match shipped_hooks(args.agent) {
        Ok(spec) => spec,
        Err(e) => return fail(&e, "this is a bug in sixfold's shipped provider files"),
    };
    let (shared, local) = match hook_files(args.agent, args.user) {
        Ok(found) => found,
        Err(e) => {
            return fail(
                &e,
                "pass --project inside a repository, or set CLAUDE_CONFIG_DIR or CODEX_HOME",
            )
        }
    };
    let chosen = sixfold_hook::program::hook_program(&binary);
    for warning in &chosen.warnings {
        errln!("warning: {warning}");
    }
    if let Agent::OpenCode = args.agent {
        // The plugin refuses every call when its program cannot start, so a machine path in a
        // committed plugin fails closed: it is written there, after the warnings above.
        let command = hook_settings::command(&chosen.program, &spec);
        let changes = settings_file(args.agent, args.user).and_then(|config| {
            let dir = config.parent().map(Path::to_path_buf).unwrap_or_default();
            install_opencode::install(&dir, &spec.file, &command, &opencode_merged_before(args.user))
        });
        return opencode_change(&args, changes, "installed");
    }
    let command = hook_settings::guarded(&chosen.program, &spec);
    // A file a team commits gets only a command naming `sixfold` on PATH; this machine's path
    // goes in its local file, and where there is none (a Codex project), nowhere.
    let shared_is_committed = !args.user;
    let (target, other) = match (chosen.portable || !shared_is_committed, local) {
        (true, local) => (shared, local),
        (false, Some(local)) => (local, Some(shared)),
        (false, None) => {
            return fail(
                &format!(
                    "there is no `sixfold` on PATH, so the hook would name this binary by its path ({}) in {}, a file a team commits, where a clone or a `cargo clean` leaves a hook that cannot start",
                    chosen.program,
                    shared.display()
                ),
                "put sixfold on PATH (`cargo install --path engine/cli`, or a link in ~/.local/bin) and install again, or install for this user only with `--user`",
            )
        }
    };
    // Any other sixfold hook (an older install's, by another path) goes: one hook per event.
    let fresh = |s: &str| -> Result<String, String> {
        let cleared = hook_settings::unregister_text(s, &spec)?;
        hook_settings::register_text(&cleared, &spec, &command)
    };
    let strip = |s: &str| hook_settings::unregister_text(s, &spec);
    let mut changed = false;
    if let Some(other) = &other {
        match apply(other, args.dry_run, &strip, Some(&strip), false) {
            Ok(c) => changed |= c,
            Err(code) => return code,
        }
    }
    match apply(&target, args.dry_run, &fresh, None, false) {
        Ok(c) => changed |= c,
        Err(code) => return code,
    }
    if !changed {
        outln!("{} already installed", target.display());
    }
    if !chosen.portable && shared_is_committed {
        if let Some(shared) = &other {
            errln!(
                "warning: the hooks are in {}, which stays on this machine; {}, the file a team commits, has no sixfold hook, so a clone of this repository is not governed until sixfold is on PATH there and `sixfold install claude-code` runs; put sixfold on PATH and install again to write one",
                target.display(),
                shared.display()
            );
            if !ignored_by_git(&target) {
                errln!(
                    "warning: git does not ignore {}, which names this machine's path: add it to .gitignore",
                    target.display()
                );
            }
        }
    }
    if matches!(args.agent, Agent::Codex) && !args.dry_run {
        outln!("{}", install_codex::TRUST_HINT);
        if !args.user {
            outln!("{}", install_codex::PROJECT_HINT);
        }
    }
    0
}

/// Whether git ignores `path` (true too where git cannot say: no git, no repository).
fn ignored_by_git(path: &Path) -> bool {
    let Some(dir) = path.parent().filter(|d| d.is_dir()) else {
        return true;
    };
    let asked = std::process::Command::new("git")
        .args(["check-ignore", "-q", "--"])
        .arg(path)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    // `check-ignore` exits 0 when ignored, 1 when not, 128 outside a repository.
    !matches!(asked.map(|s| s.code()), Ok(Some(1)))
}

/// Remove the hook entries `sixfold install` added, wherever the binary that added them is and
/// whatever it is called: every hook whose command is one program followed by exactly the
/// provider file's hook arguments (`hook claude-code`, `hook codex`), alone or followed by
/// `|| exit 2`; from a Claude Code project's local settings too. Everything else stays as it
/// was, and nothing is left behind: no settings file that holds nothing, no backup of sixfold's
/// own hooks, no directory left empty, and for Codex no `[hooks.state]` entry keeping the trust
/// a person gave sixfold's hooks.
#[derive(Debug, clap::Args)]
pub(crate) struct UninstallArgs {
    #[command(flatten)]
    target: InstallArgs,
}

/// `sixfold uninstall`: removes the hooks `install` registered.
pub(crate) fn uninstall_hooks(args: UninstallArgs) -> u8 {
    let args = args.target;
    if args.mcp {
        return match project() {
            Ok(p) => crate::mcp_install::uninstall(&p, args.dry_run),
            Err(e) => fail(&e, "run it inside the project"),
        };
    }
    let spec = match shipped_hooks(args.agent) {
        Ok(spec) => spec,
        Err(e) => return fail(&e, "this is a bug in sixfold's shipped provider files"),
    };
    if let Agent::OpenCode = args.agent {
        let changes = settings_file(args.agent, args.user).and_then(|config| {
            let dir = config.parent().map(Path::to_path_buf).unwrap_or_default();
            install_opencode::uninstall(&dir, &spec.file)
        });
        return opencode_change(&args, changes, "uninstalled");
    }
    let (shared, local) = match hook_files(args.agent, args.user) {
        Ok(found) => found,
        Err(e) => {
            return fail(
                &e,
                "pass --project inside a repository, or set CLAUDE_CONFIG_DIR or CODEX_HOME",
            )
        }
    };
    let strip = |s: &str| hook_settings::unregister_text(s, &spec);
    // Codex keeps the trust a person gave each hook by the hook's position in its file; the
    // positions of sixfold's are read before they go.
    let trust_keys: Vec<String> = match args.agent {
        Agent::Codex => {
            let text = install::read_text(&shared).unwrap_or_default();
            let keyed = shared.canonicalize().unwrap_or_else(|_| shared.clone());
            install_codex::installed(&keyed, &text, &spec)
                .into_iter()
                .map(|h| h.key)
                .collect()
        }
        Agent::ClaudeCode | Agent::OpenCode => Vec::new(),
    };
    let forget = |s: &str| -> Result<String, String> {
        let stripped = strip(s)?;
        if trust_keys.is_empty() || stripped.trim().is_empty() {
            return Ok(stripped);
        }
        sixfold_core::hook_toml::forget_trust(&stripped, &trust_keys)
    };
    let mut changed = false;
    let tidy_dir = !args.user;
    for file in std::iter::once(&shared).chain(local.as_ref()) {
        match apply(file, args.dry_run, &forget, Some(&strip), tidy_dir) {
            Ok(c) => changed |= c,
            Err(code) => return code,
        }
    }
    // A project's hooks are trusted in the user's config, where `/hooks` keeps it.
    if let (Agent::Codex, false, false) = (args.agent, args.user, trust_keys.is_empty()) {
        if let Ok(user) = settings_file(Agent::Codex, true) {
            let forget_only = |s: &str| -> Result<String, String> {
                if s.trim().is_empty() {
                    return Ok(s.to_string());
                }
                sixfold_core::hook_toml::forget_trust(s, &trust_keys)
            };
            let keep = |s: &str| Ok(s.to_string());
            match apply(&user, args.dry_run, &forget_only, Some(&keep), false) {
                Ok(c) => changed |= c,
                Err(code) => return code,
            }
        }
    }
    if !changed {
        outln!("{} already uninstalled", shared.display());
    }
    0
}

/// Show or set the active pattern (the agent architecture the hooks enforce for sub-agents).
#[derive(Debug, clap::Args)]
pub(crate) struct PatternArgs {
    #[command(subcommand)]
    command: PatternCommand,
}

#[derive(Debug, clap::Subcommand)]
enum PatternCommand {
    /// Set the active pattern; one that does not exist is an error and changes nothing.
    Set {
        /// The pattern (`single`, `keeps-helpers`, `orchestrator-workers`, …).
        id: String,
    },
    /// Show the active pattern and the ones the bundle has.
    Show,
}

/// `sixfold pattern`: shows or sets the active pattern.
pub(crate) fn pattern(args: PatternArgs) -> u8 {
    let (project, mut state) = match project_state() {
        Ok(found) => found,
        Err(code) => return code,
    };
    let (bundle, diagnostics) = sixfold_hook::load_bundle(&project);
    let known: Vec<String> = bundle.patterns().map(|p| p.spec.id.clone()).collect();
    match args.command {
        PatternCommand::Show => {
            outln!("pattern {} (the bundle has: {})", state.pattern(), known.join(", "));
            0
        }
        PatternCommand::Set { id } => crate::trust::keeping_trust(&project, || {
            if !diagnostics.is_empty() {
                crate::bundles::report(&diagnostics);
                return fail(
                    "the bundle has errors, so the pattern was not changed",
                    "run `sixfold check`",
                );
            }
            if bundle.pattern(&id).is_none() {
                let stays = format!("the active pattern stays `{}`", state.pattern());
                return crate::names::report_then(&bundle.unknown_pattern(&id), &stays);
            }
            state.pattern = Some(id.clone());
            if let Err(e) = state.save(&project) {
                return fail(&e, "check the permissions of .sixfold/");
            }
            outln!("pattern {id}");
            0
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn planned(patch: &str) -> Option<Vec<String>> {
        CodexRecords
            .planned_edits("apply_patch", &json!({ "command": patch }), Path::new("/w"))
            .map(|edits| edits.into_iter().map(|e| e.path).collect())
    }

    #[test]
    fn a_patch_writes_the_files_it_names_when_it_reads_as_codex_reads_it() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: /etc/b\n@@\n-y\n+z\n*** Delete File: ../c\n*** End Patch\n";
        assert_eq!(planned(patch).unwrap(), ["/w/a.txt", "/etc/b", "/w/../c"]);
        let moved = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: .mcp.json\n@@\n-y\n+z\n*** End Patch\n";
        assert_eq!(planned(moved).unwrap(), ["/w/a.txt", "/w/.mcp.json"]);
        // Anything read another way keeps the provider file's broad scope.
        for odd in [
            "*** Begin Patch\n  *** Add File: .mcp.json\n+x\n*** Add File: a.txt\n+x\n*** End Patch\n",
            "*** Begin Patch\n*** Add file: .mcp.json\n+x\n*** End Patch\n",
            "*** Add File: a.txt\n+x\n",
            "*** Begin Patch\n*** End Patch\n",
        ] {
            assert_eq!(planned(odd), None, "{odd}");
        }
        assert!(CodexRecords
            .planned_edits("Bash", &json!({ "command": "*** Begin Patch" }), Path::new("/w"))
            .is_none());
    }

    #[test]
    fn an_exit_code_codex_does_not_state_stays_unknown() {
        let said = |response: serde_json::Value, failed: bool| CodexRecords.outcome("Bash", &response, failed);
        let ok = said(json!("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess."), false);
        assert_eq!((ok.status, ok.exit_code), (Status::Completed, Some(0)));
        let failed = said(json!("Exit code: 3\nOutput:\n"), false);
        assert_eq!((failed.status, failed.exit_code), (Status::Failed, Some(3)));
        let silent = said(json!(""), false);
        assert_eq!((silent.status, silent.exit_code), (Status::Unknown, None));
        assert_eq!(said(json!(""), true).status, Status::Failed);
    }

    #[test]
    fn the_hooks_fast_path_reads_agent_names_as_clap_does() {
        use clap::ValueEnum;
        for agent in Agent::value_variants() {
            let name = agent
                .to_possible_value()
                .map(|v| v.get_name().to_string())
                .unwrap_or_default();
            assert_eq!(Agent::named(&name), Some(*agent), "{name}");
            assert_eq!(Agent::from_str(&name, false).ok(), Some(*agent), "{name}");
        }
        // What clap refuses, the fast path refuses too (and leaves to clap's error).
        for name in ["Claude-Code", "claude_code", "claudecode", "open-code", "", " codex"] {
            assert_eq!(Agent::named(name), None, "{name:?}");
            assert!(Agent::from_str(name, false).is_err(), "{name:?}");
        }
    }
}
