//! Live governance: `sixfold hook`, `mode`, `rules`, `install`, `uninstall`.
//! The hook layer does the work; this wires it to the replay layer's readers of Claude Code's
//! and Codex's records (layers never depend on each other, so the CLI hands one to the other).

use crate::output::{errln, out, outln};
use sixfold_core::bundle::Bundle;
use sixfold_core::decision::Decision;
use sixfold_core::format::HooksFile;
use sixfold_core::hook_settings;
use sixfold_core::trace::{Edit, Outcome, Status, Trace};
use sixfold_hook::{guard, install, install_codex, rules, state::State, Records};
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

/// The agent CLIs sixfold has hook adapters for.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(crate) enum Agent {
    /// Claude Code.
    ClaudeCode,
    /// Codex.
    Codex,
}

impl Agent {
    /// Its provider file's id.
    fn provider(self) -> &'static str {
        match self {
            Agent::ClaudeCode => sixfold_hook::claude_code::PROVIDER,
            Agent::Codex => sixfold_hook::codex::PROVIDER,
        }
    }

    /// Its hook adapter; command steps run inside the sandbox where `sandboxes` proves it.
    fn handle(self, input: &[u8], sandboxes: Option<&dyn sixfold_core::call::Sandboxes>) -> (String, Vec<String>) {
        match self {
            Agent::ClaudeCode => sixfold_hook::claude_code::handle(input, &ClaudeRecords, sandboxes),
            Agent::Codex => sixfold_hook::codex::handle(input, &CodexRecords, sandboxes),
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
    guard::arm();
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
        // INVARIANT (fail closed): the watchdog answered deny first; that answer stands.
        return 2;
    }
    for note in notes {
        errln!("{note}");
    }
    if answer.is_empty() {
        return 0;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{answer}").and_then(|()| stdout.flush()) {
        // INVARIANT (fail closed): an answer that was lost is a block (exit 2), not exit 1,
        // which the agent would read as "run the tool".
        errln!("sixfold: could not judge this call, so it is refused: cannot write the answer: {e}");
        return 2;
    }
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
                outln!(
                    "{}",
                    serde_json::json!({"project": project, "mode": mode, "pattern": state.pattern(),
                        "bundle": crate::trust::standing_words(&project)})
                );
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
                    let known: Vec<String> = bundle.modes().map(|m| format!("`{}`", m.id)).collect();
                    return fail(
                        &format!(
                            "there is no mode `{id}`; the active mode stays `{}`",
                            state.mode_for(session.as_deref())
                        ),
                        &format!("the modes are {}", known.join(", ")),
                    );
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
                    return fail(&format!("there is no mode `{m}`"), "see `sixfold modes`");
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
                outln!("{}", serde_json::to_string(&list).unwrap_or_default());
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
            Err(e) => fail(&e, "see `sixfold rules list`"),
        }),
    }
}

/// Register sixfold as the agent CLI's hook, so every tool call is judged before it runs. Claude
/// Code: `.claude/settings.json`. Codex: `.codex/config.toml`, edited in place (everything else
/// in it stays byte for byte); Codex then skips the hooks until a person trusts them (`/hooks` in
/// its TUI), and `sixfold providers` says whether they are trusted.
#[derive(Debug, clap::Args)]
pub(crate) struct InstallArgs {
    /// Which agent CLI.
    agent: Agent,
    /// The repository's settings (the default): `.claude/settings.json`, `.codex/config.toml`.
    #[arg(long, conflicts_with = "user")]
    project: bool,
    /// The user's settings: `$CLAUDE_CONFIG_DIR/settings.json` (else `~/.claude/settings.json`),
    /// `$CODEX_HOME/config.toml` (else `~/.codex/config.toml`).
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

/// The settings file `install` edits for `agent` (the project's, or with `user` the user's).
pub(crate) fn settings_file(agent: Agent, user: bool) -> Result<PathBuf, String> {
    let project = if user { None } else { Some(project()?) };
    match agent {
        Agent::ClaudeCode => {
            install::settings_path(project.as_deref(), env_path("CLAUDE_CONFIG_DIR"), env_path("HOME"))
        }
        Agent::Codex => install_codex::config_path(project.as_deref(), env_path("CODEX_HOME"), env_path("HOME")),
    }
}

fn change(args: &InstallArgs, edit: impl Fn(&str) -> Result<String, String>, verb: &str) -> u8 {
    let path = match settings_file(args.agent, args.user) {
        Ok(p) => p,
        Err(e) => {
            return fail(
                &e,
                "pass --project inside a repository, or set CLAUDE_CONFIG_DIR or CODEX_HOME",
            )
        }
    };
    let before = match install::read_text(&path) {
        Ok(v) => v,
        Err(e) => {
            return fail(
                &e,
                "fix the file by hand first; sixfold will not overwrite what it cannot read",
            )
        }
    };
    let after = match edit(&before) {
        Ok(v) => v,
        Err(e) => return fail(&format!("`{}`: {e}", path.display()), "fix the file by hand first"),
    };
    if after == before {
        outln!("{} already {verb}", path.display());
        return 0;
    }
    if args.dry_run {
        out!(
            "--- {}\n+++ {}\n{}",
            path.display(),
            path.display(),
            install::diff(&before, &after)
        );
        return 0;
    }
    match install::write_text(&path, &after) {
        Ok(backup) => {
            let kept = backup
                .map(|b| format!(" (previous file kept as {})", b.display()))
                .unwrap_or_default();
            outln!("{verb} {}{kept}", path.display());
            if verb == "installed" && matches!(args.agent, Agent::Codex) {
                outln!("{}", install_codex::TRUST_HINT);
                if !args.user {
                    outln!("{}", install_codex::PROJECT_HINT);
                }
            }
            0
        }
        Err(e) => fail(&e, "check the permissions"),
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
    let command = hook_settings::command(&binary.to_string_lossy(), &spec);
    change(&args, |s| hook_settings::register_text(s, &spec, &command), "installed")
}

/// Remove the hook entries `sixfold install` added, wherever the binary that added them is and
/// whatever it is called: every hook whose command is one program followed by exactly the
/// provider file's hook arguments (`hook claude-code`, `hook codex`). Everything else stays as
/// it was.
#[derive(Debug, clap::Args)]
pub(crate) struct UninstallArgs {
    #[command(flatten)]
    target: InstallArgs,
}

/// `sixfold uninstall`: removes the hooks `install` registered.
pub(crate) fn uninstall_hooks(args: UninstallArgs) -> u8 {
    if args.target.mcp {
        return match project() {
            Ok(p) => crate::mcp_install::uninstall(&p, args.target.dry_run),
            Err(e) => fail(&e, "run it inside the project"),
        };
    }
    let spec = match shipped_hooks(args.target.agent) {
        Ok(spec) => spec,
        Err(e) => return fail(&e, "this is a bug in sixfold's shipped provider files"),
    };
    change(
        &args.target,
        |s| hook_settings::unregister_text(s, &spec),
        "uninstalled",
    )
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
                return fail(
                    &format!(
                        "there is no pattern `{id}`; the active pattern stays `{}`",
                        state.pattern()
                    ),
                    &format!("the patterns are {}", known.join(", ")),
                );
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
}
