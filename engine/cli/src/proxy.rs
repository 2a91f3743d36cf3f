//! `sixfold mcp-proxy`: an MCP server run behind sixfold. The proxy layer does the work; this
//! hands it the hook layer's state file, trust store and event log (layers never depend on each
//! other), so a proxied call is judged under the same mode and recorded in the same log as a
//! hooked one.

use crate::output::errln;
use sixfold_core::bundle::Bundle;
use sixfold_core::scope::Workspace;
use sixfold_core::trace::Event;
use sixfold_hook::log::{Appender, Log};
use sixfold_hook::state::State;
use sixfold_hook::trust::{Standing, TrustStore};
use sixfold_hook::{load_over, ProjectLayer};
use sixfold_proxy::{Governor, Judging, Options};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Run an MCP server behind sixfold: speaks MCP on stdio to the agent, runs the server (`CMD
/// ARGS…` after `--`) as its child or reaches it at `--upstream-url`, and judges every `tools/call` and `resources/read` by its
/// effects before forwarding it. Refusals reach the agent as tool errors; `tools/list` shows only
/// what the mode may allow; every call is recorded in `.sixfold/runs/<session>.jsonl`.
///
/// Example: `sixfold mcp-proxy --server files -- npx @modelcontextprotocol/server-filesystem .`
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Judge under this mode for the whole run (default: the project's active mode, followed
    /// live as `sixfold mode set` changes it).
    #[arg(long, value_name = "ID")]
    mode: Option<String>,
    /// A further root of the workspace, named (`docs=../docs`) or not (named after its folder).
    #[arg(long = "root", value_name = "[NAME=]DIR")]
    roots: Vec<String>,
    /// The server's name, as the agent's MCP config names it: tools are `SERVER/TOOL` in the
    /// bundle's `[mcp]` maps and `mcp__SERVER__TOOL` on the record.
    #[arg(long, value_name = "NAME", default_value = "mcp")]
    server: String,
    /// Believe the server's tool annotations (`readOnlyHint`, …) for tools the bundle does not
    /// map. Without it, only servers a policy lists in `settings.trust_annotations` are believed.
    #[arg(long)]
    trust_annotations: bool,
    /// How long a forwarded request waits for the server before it is answered with an error and
    /// cancelled upstream, in seconds (default: the bundle's `mcp_call_timeout_secs` setting,
    /// else 300).
    #[arg(long, value_name = "SECS")]
    call_timeout: Option<u64>,
    /// Reach a streamable-HTTP server instead of running one (`http://` only: no TLS is built in).
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    upstream_url: Option<String>,
    /// The server's command and arguments.
    #[arg(last = true, value_name = "CMD ARGS")]
    command: Vec<String>,
}

/// How long a look at the whole of `.sixfold/` stands: calls closer together than this are judged
/// under the bundle the last look found. The state file (the active mode) is looked at before
/// every call, so the next call after `sixfold mode set` is judged under the new mode, however
/// soon it comes.
const LOOK_EVERY: Duration = Duration::from_millis(10);

/// The state file as one stat sees it: its inode (a `mode set` writes a new file), size and
/// modification time.
type StateStamp = Option<(u64, u64, Option<SystemTime>)>;

fn state_stamp(project: &Path) -> StateStamp {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(sixfold_hook::state::path(project)).ok()?;
    Some((meta.ino(), meta.len(), meta.modified().ok()))
}

/// What `.sixfold/` holds now, cheaply: a change means the bundle or the state is read afresh.
type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

fn fingerprint(project: &Path) -> Fingerprint {
    let mut out = Vec::new();
    let mut dirs = vec![sixfold_core::project::dir(project)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            // The event log and its checkpoints change at every call and are no part of the bundle.
            if path.file_name().is_some_and(|n| n == "runs" || n == "checkpoints") {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if meta.is_dir() {
                dirs.push(path);
            } else {
                out.push((path, meta.len(), meta.modified().ok()));
            }
        }
    }
    out.sort();
    out
}

/// The CLI's governor: the project of the working directory, its state, trust and record.
struct ProjectGovernor {
    project: PathBuf,
    cwd: PathBuf,
    pinned: Option<String>,
    roots: Vec<(String, PathBuf)>,
    session: String,
    log: Appender,
    store: Option<TrustStore>,
    cached: Option<(Fingerprint, Judging)>,
    /// When `.sixfold/` was last looked at.
    looked: Option<Instant>,
    /// The state file as the last look saw it.
    state_seen: StateStamp,
    /// The mode the record last said.
    recorded: Option<String>,
}

impl ProjectGovernor {
    fn workspace(&self) -> Workspace {
        let mut ws = Workspace::new(&self.project).with_process_environment();
        for (name, dir) in &self.roots {
            ws = ws.with_root(name, dir);
        }
        ws
    }

    /// The bundle and mode in force, and the bundle's content hash.
    fn load(&self) -> Result<(Judging, String), String> {
        let state = State::load(&self.project)?;
        let mode = self.pinned.clone().unwrap_or_else(|| state.mode_for(None));
        let layer = ProjectLayer::read(&self.project);
        let bundle = loaded(Some(&layer))?;
        if bundle.mode(&mode).is_none() {
            return Err(format!("{} (see `sixfold modes`)", bundle.unknown_mode(&mode).reason()));
        }
        // The project layer (and a mode it pins) only narrows until it is trusted.
        let standing = sixfold_hook::trust::standing(self.store.as_ref(), &layer);
        let without = if standing == Standing::Untrusted {
            Some((loaded(None)?, sixfold_hook::DEFAULT_MODE.to_string()))
        } else {
            None
        };
        let judging = Judging {
            mode,
            pattern: state.pattern(),
            bundle,
            without,
            workspace: self.workspace(),
            cwd: self.cwd.clone(),
        };
        Ok((judging, layer.bundle_hash()))
    }

    /// Looks at `.sixfold/` and reads the bundle and state afresh when anything there changed.
    fn look(&mut self) -> Result<(), String> {
        let now = fingerprint(&self.project);
        self.looked = Some(Instant::now());
        self.state_seen = state_stamp(&self.project);
        let fresh = matches!(&self.cached, Some((seen, _)) if *seen == now);
        if !fresh {
            self.cached = None;
            let (judging, bundle) = match self.load() {
                Ok(loaded) => loaded,
                Err(why) => {
                    // The refusal goes on the record stamped with the bundle that failed to load.
                    self.log.set_bundle(ProjectLayer::read(&self.project).bundle_hash());
                    return Err(why);
                }
            };
            self.log.set_bundle(bundle);
            self.cached = Some((now, judging));
        }
        Ok(())
    }
}

fn loaded(layer: Option<&ProjectLayer>) -> Result<Bundle, String> {
    let (bundle, diagnostics) = load_over(layer, None);
    match diagnostics.first() {
        None => Ok(bundle),
        Some(d) => Err(format!(
            "the bundle has {} error(s), the first: {} at {} (run `sixfold check`)",
            diagnostics.len(),
            d.message,
            d.location()
        )),
    }
}

impl Governor for ProjectGovernor {
    fn judging(&mut self) -> Result<&Judging, String> {
        // INVARIANT (fail closed): a changed state file (a mode switch) is always read afresh.
        let recent =
            self.looked.is_some_and(|at| at.elapsed() < LOOK_EVERY) && state_stamp(&self.project) == self.state_seen;
        if !(recent && self.cached.is_some()) {
            self.look()?;
        }
        match &self.cached {
            Some((_, judging)) => Ok(judging),
            None => Err("the bundle could not be loaded".into()),
        }
    }

    fn mode(&mut self) -> Result<String, String> {
        match &self.pinned {
            Some(m) => Ok(m.clone()),
            None => {
                let mode = State::load(&self.project)?.mode_for(None);
                // A mode seen to change is judged under at the next call, however soon.
                if self.cached.as_ref().is_some_and(|(_, j)| j.mode != mode) {
                    self.looked = None;
                }
                Ok(mode)
            }
        }
    }

    fn lease(&mut self) -> Result<Option<(sixfold_core::trace::SoFar, sixfold_core::lease::Lease)>, String> {
        // The proxy's own session (`mcp-SERVER-…`, one per run), kept in the checkpoint beside its
        // record as the hooks keep theirs; the project's lease applies to it.
        let state = State::load(&self.project)?;
        let so_far = sixfold_hook::log::Log::new(&self.project, &self.session)
            .hold()?
            .so_far()
            .clone();
        Ok(Some((so_far, state.lease_for(&self.session))))
    }

    fn record(&mut self, events: &[Event]) -> Result<(), String> {
        let mode = self.cached.as_ref().map(|(_, j)| j.mode.clone());
        let mut out = Vec::new();
        match (&self.recorded, &mode) {
            (None, _) => out.push(Event::Started {
                session: self.session.clone(),
                cwd: Some(self.cwd.to_string_lossy().into_owned()),
                mode: mode.clone(),
                provider: Some("mcp-proxy".into()),
                record: None,
            }),
            (Some(last), Some(now)) if last != now => out.push(Event::ModeChanged {
                from: Some(last.clone()).filter(|l| !l.is_empty()),
                to: now.clone(),
            }),
            _ => {}
        }
        out.extend(events.iter().cloned());
        self.log.append(&out)?;
        self.recorded = mode.or_else(|| self.recorded.clone()).or(Some(String::new()));
        Ok(())
    }
}

fn fail(message: &str, hint: &str) -> u8 {
    errln!("error: {message}\n  = help: {hint}");
    1
}

/// A `--root` value: `NAME=DIR`, or `DIR` named after its last component.
fn root(value: &str) -> (String, PathBuf) {
    match value.split_once('=') {
        Some((name, dir)) if !name.is_empty() && !name.contains('/') => (name.to_string(), PathBuf::from(dir)),
        _ => {
            let dir = PathBuf::from(value);
            let name = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "root".into());
            (name, dir)
        }
    }
}

/// `sixfold mcp-proxy`: runs until the agent closes its input.
pub(crate) fn run(args: Args) -> u8 {
    if args.command.is_empty() && args.upstream_url.is_none() {
        return fail(
            "no MCP server to run",
            "put its command after `--` (sixfold mcp-proxy --server NAME -- CMD ARGS…), or give --upstream-url",
        );
    }
    let cwd = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => {
            return fail(
                &format!("cannot read the current directory: {e}"),
                "run it in the project",
            )
        }
    };
    let project = match sixfold_core::project::place(&cwd) {
        Ok(p) => p,
        Err(e) => return fail(&e, "run it inside the project"),
    };
    if let Err(code) = crate::names::check_pinned_mode(&project, args.mode.as_deref()) {
        return code;
    }
    let started = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let session = format!(
        "mcp-{}-{started}-{}",
        sixfold_hook::log::file_name(&args.server),
        std::process::id()
    );
    let mut governor = ProjectGovernor {
        log: Appender::new(Log::new(&project, &session)),
        project,
        cwd: cwd.clone(),
        pinned: args.mode,
        roots: args
            .roots
            .iter()
            .map(|r| root(r))
            .map(|(n, d)| (n, cwd.join(d)))
            .collect(),
        session,
        store: TrustStore::from_env(),
        cached: None,
        looked: None,
        state_seen: None,
        recorded: None,
    };
    let options = Options {
        server: args.server,
        command: args.command,
        url: args.upstream_url,
        trust_annotations: args.trust_annotations,
        watch_ms: 250,
        call_timeout: args.call_timeout.map(Duration::from_secs),
    };
    let stdout = std::io::stdout();
    match sixfold_proxy::run(options, &mut governor, Box::new(std::io::stdin()), stdout.lock()) {
        Ok(()) => 0,
        Err(e) => fail(&e, "check the server's command or URL"),
    }
}
