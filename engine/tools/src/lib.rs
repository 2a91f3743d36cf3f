//! Governed tools: an MCP server that offers a coding agent its working tools (`read_file`,
//! `write_file`, `edit_file`, `list_dir`, `glob`, `grep`, `bash`), each call judged under the
//! active mode before it runs, run by sixfold (shell commands confined by the sandbox layer),
//! and put on the session's record with its outcome and, for edits, the exact lines removed and
//! added.
//!
//! What each tool does is data: the shipped bundle's `providers/sixfold-tools.toml` maps every
//! tool to its effects, as a provider file maps an agent CLI's tools. An `ask` parks the call as
//! a pending approval under the project's protected `.sixfold/approvals/` until a person answers
//! (`sixfold approvals answer`) or the timeout refuses it.
//!
//! This crate is a layer: it depends on the core only. What it needs from elsewhere (the mode in
//! force and the bundles to judge with, the session's record, kept rules) the CLI hands it as a
//! [`Governor`]; the sandbox it reaches by running `sixfold sandbox run` as a child.
//!
//! It is not a policy: it holds no rule about what may run.

pub mod approvals;
mod beneath;
mod call;
mod catalog;
mod edits;
mod files;
mod page;
mod server;
mod shell;

pub use server::{serve_approvals, serve_tools};

use sixfold_core::bundle::Bundle;
use sixfold_core::scope::Workspace;
use sixfold_core::trace::Event;
use std::path::PathBuf;
use std::time::Duration;

/// The provider file that maps the governed tools to their effects.
pub const PROVIDER: &str = "sixfold-tools";

/// How long an ask waits for a person when neither the mode nor `--ask-timeout` says.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// The bundles a call is judged with, and the mode each runs under.
#[derive(Debug)]
pub struct InForce {
    /// The bundle with the project's layer, and the mode in force (pinned or the project's).
    pub bundle: Bundle,
    /// The mode the call is judged under.
    pub mode: String,
    /// The pattern in force (it decides about sub-agents).
    pub pattern: String,
    /// While the project's `.sixfold/` is not trusted: the bundle without it and the mode it
    /// runs under. The stricter of the two judgements stands (`sixfold_core::narrow`).
    pub without_project: Option<(Bundle, String)>,
}

/// What the server needs from outside its layer; the CLI implements it with the hook layer's
/// project state, trust store, event log and kept rules.
pub trait Governor: Send + Sync {
    /// The bundles and mode in force now, read afresh for each call (a mode switched mid-run
    /// takes effect at the next call). An error refuses the call.
    fn in_force(&self) -> Result<InForce, String>;
    /// Appends events to the session's record in one write, after `started` for a new record
    /// and `mode_changed` when `mode` is not the one it last recorded. An error refuses the call.
    fn append(&self, mode: &str, events: &[Event]) -> Result<(), String>;
    /// The session's record folded so far and the lease set for it (`sixfold lease set`), to
    /// check and charge the lease with; `None`: no lease is charged. An error refuses the call.
    fn lease(&self) -> Result<Option<(sixfold_core::trace::SoFar, sixfold_core::lease::Lease)>, String> {
        Ok(None)
    }
}

/// How a server runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The roots: the primary one (where relative paths and `bash` resolve) and named ones.
    pub workspace: Workspace,
    /// The project whose `.sixfold/` holds the record and the approvals.
    pub project: PathBuf,
    /// The session's id, naming its record `.sixfold/runs/<session>.jsonl`.
    pub session: String,
    /// The mode pinned with `--mode`, passed on to the sandbox; `None` follows the project.
    pub pinned_mode: Option<String>,
    /// `--ask-timeout`: overrides the mode's own.
    pub ask_timeout: Option<Duration>,
    /// The sixfold binary, run as a child for `sandbox run` and `sandbox check`.
    pub sixfold: PathBuf,
    /// Whether a `bash` call is judged contained where the sandbox is proven (`false` with
    /// `SIXFOLD_SANDBOX=off`: judged as it is, so only more strictly).
    pub contain: bool,
}
