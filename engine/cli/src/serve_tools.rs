//! `sixfold serve-tools`: the governed tool server (the tools layer) on stdio, wired to the hook
//! layer's project state, trust store and event log, which it reaches only through
//! this file (layers never depend on each other).

use crate::output::errln;
use sixfold_core::bundle::{Bundle, Needs};
use sixfold_core::trace::Event;
use sixfold_hook::log::Log;
use sixfold_hook::state::State;
use sixfold_hook::trust::{Standing, TrustStore};
use sixfold_hook::{load_over, ProjectLayer};
use sixfold_tools::{Config, Governor, InForce};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// Serve sixfold's governed tools to an agent over MCP (stdio): `read_file`, `write_file`,
/// `edit_file`, `list_dir`, `glob`, `grep` and `bash`. Every call is judged under the active mode
/// before it runs (a refusal is a tool error with the reason), `bash` runs in the mode's sandbox,
/// and each call goes on the session's record `.sixfold/runs/<session>.jsonl` with its outcome and,
/// for edits, the exact lines removed and added. A call that asks waits for a person's answer
/// (`sixfold approvals list`, `sixfold approvals answer`) until the timeout refuses it.
///
/// Started by an agent CLI from its MCP config, usually by `sixfold launch … --governed`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Example (an MCP server entry):\n  {\"command\": \"sixfold\", \"args\": [\"serve-tools\", \"--root\", \"/work/repo\"]}"
)]
pub(crate) struct Args {
    /// Pin the mode (see `sixfold modes`); without it, the project's active mode is followed at
    /// every call (`sixfold mode set` takes effect at the next one).
    #[arg(long, value_name = "ID")]
    mode: Option<String>,
    /// A workspace root: `DIR` for the primary one (where relative paths and `bash` resolve), or
    /// `NAME=DIR` (repeatable). Defaults to the current directory.
    #[arg(long = "root", value_name = "[NAME=]DIR")]
    roots: Vec<String>,
    /// How long a call that asks waits for an answer before it is refused; overrides the mode's
    /// `behaviour.ask_timeout_secs` (default 300).
    #[arg(long, value_name = "SECONDS")]
    ask_timeout: Option<u64>,
    /// The session's id, naming its record (default: `$SIXFOLD_SESSION`, else one made up).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// Serve only the approval tool `approve`, which answers the agent CLI's permission prompts
    /// (Claude Code's `--permission-prompt-tool`): the governed server's own tools pass (they are
    /// judged when they run), anything else is refused.
    #[arg(long)]
    approvals_only: bool,
    /// With `--approvals-only`: the governed tool server's name in the agent's MCP config.
    #[arg(long, value_name = "NAME", default_value = "sixfold")]
    governed_server: String,
}

/// The hook layer's project state, trust and record, as the tools layer needs them.
struct ProjectGovernor {
    project: PathBuf,
    session: String,
    pinned: Option<String>,
    log: Log,
    store: Option<TrustStore>,
    /// The content hash of the bundle the last call was judged under, stamped on its lines.
    bundle: Mutex<Option<String>>,
}

/// The shipped bundle with the project's layer over it (or without it), or the first error.
fn loaded(layer: Option<&ProjectLayer>, needs: &Needs) -> Result<Bundle, String> {
    let (bundle, diagnostics) = load_over(layer, Some(needs));
    match diagnostics.first() {
        None => Ok(bundle),
        // INVARIANT (fail closed): a broken bundle may have held a stricter rule; nothing is judged.
        Some(d) => Err(format!(
            "the bundle has {} error(s), the first: {} at {} (run `sixfold check`)",
            diagnostics.len(),
            d.message,
            d.location()
        )),
    }
}

impl Governor for ProjectGovernor {
    fn in_force(&self) -> Result<InForce, String> {
        let layer = ProjectLayer::read(&self.project);
        if let Ok(mut bundle) = self.bundle.lock() {
            *bundle = Some(layer.bundle_hash());
        }
        // The project layer (and a mode it pins) only narrows until it is trusted.
        let standing = sixfold_hook::trust::standing(self.store.as_ref(), &layer);
        // A pinned mode needs no state but the pattern: an unreadable state is then the default.
        let state = match (&self.pinned, State::load(&self.project)) {
            (Some(_), Err(_)) => State::default(),
            (_, read) => read?,
        };
        let mode = match &self.pinned {
            Some(m) => m.clone(),
            None => state.mode_for(Some(&self.session)),
        };
        let needs = Needs::mode(&mode).with_provider(sixfold_tools::PROVIDER);
        let bundle = loaded(Some(&layer), &needs)?;
        let without_project = if standing == Standing::Untrusted {
            // Without the project's layer its state is not read either: the pinned mode (the
            // user's own choice) or the default.
            let base = self
                .pinned
                .clone()
                .unwrap_or_else(|| sixfold_hook::DEFAULT_MODE.to_string());
            let needs = Needs::mode(&base).with_provider(sixfold_tools::PROVIDER);
            Some((loaded(None, &needs)?, base))
        } else {
            None
        };
        Ok(InForce {
            bundle,
            mode,
            pattern: state.pattern(),
            without_project,
        })
    }

    fn lease(&self) -> Result<Option<(sixfold_core::trace::SoFar, sixfold_core::lease::Lease)>, String> {
        // The session's own record (`--session`, `$SIXFOLD_SESSION`): the same checkpoint the
        // hooks keep when they share the session id.
        let state = State::load(&self.project)?;
        let so_far = self.log.hold()?.so_far().clone();
        Ok(Some((so_far, state.lease_for(&self.session))))
    }

    fn append(&self, mode: &str, events: &[Event]) -> Result<(), String> {
        let bundle = match self.bundle.lock().ok().and_then(|b| b.clone()) {
            Some(bundle) => bundle,
            None => ProjectLayer::read(&self.project).bundle_hash(),
        };
        // The checkpoint beside the record: an append costs the same at any length of it.
        let held = self.log.clone().with_bundle(bundle).hold()?;
        let cwd = self.project.to_string_lossy();
        let start = sixfold_core::trace::SessionStart {
            session: &self.session,
            cwd: &cwd,
            provider: sixfold_tools::PROVIDER,
        };
        let mut out = sixfold_core::trace::preamble(held.so_far(), start, mode);
        out.extend(events.iter().cloned());
        held.append(&out)
    }
}

fn made_up_session() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!("governed-{secs}-{}", std::process::id())
}

/// `sixfold serve-tools`.
pub(crate) fn run(args: Args) -> u8 {
    let workspace = match crate::judge::workspace(&args.roots) {
        Ok(ws) => ws,
        Err(message) => {
            errln!("error: {message}\n  = help: --root DIR for the primary root, --root NAME=DIR for others");
            return 2;
        }
    };
    let project = match sixfold_core::project::place(workspace.primary()) {
        Ok(p) => p,
        Err(message) => {
            errln!("error: {message}\n  = help: serve the tools for a directory inside a project");
            return 2;
        }
    };
    if let Err(code) = crate::names::check_pinned_mode(&project, args.mode.as_deref()) {
        return code;
    }
    let sixfold = match std::env::current_exe().and_then(|p| p.canonicalize()) {
        Ok(p) => p,
        Err(e) => {
            errln!("error: cannot tell where the sixfold binary is ({e}), so `bash` could not be sandboxed");
            return 2;
        }
    };
    let session = args
        .session
        .or_else(|| std::env::var("SIXFOLD_SESSION").ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(made_up_session);
    let governor = ProjectGovernor {
        log: Log::new(&project, &session),
        project: project.clone(),
        session: session.clone(),
        pinned: args.mode.clone(),
        store: TrustStore::from_env(),
        bundle: Mutex::new(None),
    };
    let config = Config {
        workspace,
        project,
        session,
        pinned_mode: args.mode,
        ask_timeout: args.ask_timeout.map(Duration::from_secs),
        sixfold,
        contain: crate::sandbox::for_hook().is_some(),
    };
    let served = if args.approvals_only {
        sixfold_tools::serve_approvals(config, Box::new(governor), &args.governed_server)
    } else {
        sixfold_tools::serve_tools(config, Box::new(governor))
    };
    match served {
        Ok(()) => 0,
        Err(message) => {
            errln!("error: {message}");
            1
        }
    }
}
