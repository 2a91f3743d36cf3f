//! Hook adapters: a live agent CLI asks sixfold about each tool call before it runs.
//!
//! The adapter gathers facts (the hook event, the project's state, the session's event log) and
//! applies the core's outputs (a judgement, a verdict). It holds no policy: which tool does what
//! is the bundle's provider file, what is allowed is the active mode. Anything that goes wrong
//! answers a refusal with the reason: the hook fails closed.

pub mod adapter;
mod answer;
pub mod checkpoint;
pub mod claude_code;
pub mod codex;
pub mod guard;
pub mod install;
pub mod install_codex;
pub mod install_opencode;
pub mod lease;
pub mod log;
pub mod opencode;
pub mod program;
/// Which project a working directory belongs to: the core's rule, shared by every layer.
pub use sixfold_core::project;
pub mod rules;
pub mod state;
pub mod trust;

use sixfold_core::bundle::{Bundle, BundleSource, Needs};
use sixfold_core::diag::Diagnostic;
use sixfold_core::trace::{Edit, Outcome, Status, Trace};
use std::path::Path;

/// Hook input larger than this is refused: it is untrusted.
pub const MAX_INPUT_BYTES: u64 = 16 * 1024 * 1024;

/// The mode a project runs in until `sixfold mode set` says otherwise.
pub const DEFAULT_MODE: &str = "ask";

/// The pattern a project runs in until its state says otherwise.
pub const DEFAULT_PATTERN: &str = "single";

/// What the adapter needs from outside its layer: reading the vendor's own records. The CLI
/// supplies it (from the replay layer), so layers never depend on each other.
pub trait Records {
    /// The edits a finished tool call made, from the vendor's response.
    fn edits(&self, tool: &str, input: &serde_json::Value, response: &serde_json::Value) -> Vec<Edit>;
    /// The session so far, from the vendor's transcript file.
    fn transcript(&self, path: &Path, bundle: &Bundle) -> Option<Trace>;
    /// The outcome of a finished tool call, from the vendor's response. By default: failed when
    /// the CLI reported a failure, else completed, with the response's `exit_code` where it
    /// has one (and 0 or 1 for a shell command, `Bash`, whose response has none).
    fn outcome(&self, tool: &str, response: &serde_json::Value, failed: bool) -> Outcome {
        let exit_code = response
            .get("exit_code")
            .and_then(serde_json::Value::as_i64)
            .or((tool == "Bash").then_some(i64::from(failed)));
        Outcome {
            status: if failed { Status::Failed } else { Status::Completed },
            exit_code,
        }
    }
    /// The files a call's input says it will change, before it runs (a patch names them), where
    /// the vendor's format says so unambiguously; `None` keeps the provider file's scope.
    fn planned_edits(&self, _tool: &str, _input: &serde_json::Value, _cwd: &Path) -> Option<Vec<Edit>> {
        None
    }
}

/// The project a working directory belongs to (for the CLI's commands), or why there is none.
pub fn project_of(cwd: &Path) -> Result<std::path::PathBuf, String> {
    project::place(cwd)
}

/// Loads the shipped bundle and the project's `.sixfold/` over it.
pub fn load_bundle(project: &Path) -> (Bundle, Vec<Diagnostic>) {
    load_bundle_for(project, None)
}

/// Loads the shipped bundle and the project's `.sixfold/` over it; with `needs`, only what one
/// judgement needs (a broken file it does not need is not read, so it cannot refuse the step).
pub fn load_bundle_for(project: &Path, needs: Option<&Needs>) -> (Bundle, Vec<Diagnostic>) {
    load_layers(Some(project), needs)
}

/// Loads the shipped bundle, and over it the project's `.sixfold/` when `project` is given.
pub fn load_layers(project: Option<&Path>, needs: Option<&Needs>) -> (Bundle, Vec<Diagnostic>) {
    let layer = project.map(ProjectLayer::read);
    load_over(layer.as_ref(), needs)
}

/// A project's `.sixfold/` read once, for both what it says (loading) and whether it is trusted
/// (its content hash): a hook call reads the directory one time, its state file included.
#[derive(Debug, Clone)]
pub struct ProjectLayer {
    /// Its files; `None` where the project has no `.sixfold/`.
    pub source: Option<BundleSource>,
    /// Files that could not be read.
    pub diagnostics: Vec<Diagnostic>,
    /// The text of its `state.toml` (`None`: there is none), or why it cannot be read.
    pub state: Result<Option<String>, String>,
    /// The hash trust is recorded by ([`trust::content_hash_of`]), made with the layer's own
    /// hash when it was read; whoever changes the files or the state after that sets it to `None`.
    known_trust_hash: Option<String>,
}

impl Default for ProjectLayer {
    fn default() -> ProjectLayer {
        ProjectLayer {
            source: None,
            diagnostics: Vec::new(),
            state: Ok(None),
            known_trust_hash: None,
        }
    }
}

impl ProjectLayer {
    /// Reads the project's `.sixfold/`, if it has one.
    pub fn read(project: &Path) -> ProjectLayer {
        let dir = project::dir(project);
        if !dir.is_dir() {
            return ProjectLayer::default();
        }
        let (mut source, diagnostics) = BundleSource::read_dir(&dir);
        let state = state::read_text(project);
        // Hashed once, in one pass: for the log's stamp, the parsed layer's name and trust alike.
        let then = match &state {
            Ok(Some(text)) => Some((trust::STATE_NAME, text.as_str())),
            _ => None,
        };
        let (layer, with_state) = source.content_hashes(then);
        source.known_hash = Some(layer.into());
        ProjectLayer {
            source: Some(source),
            diagnostics,
            state,
            known_trust_hash: Some(with_state),
        }
    }

    /// The content hash of the bundle [`load_over`] loads with this layer: the shipped bundle's
    /// (made when it was embedded) and this layer's files over it. What the event log stamps on
    /// each line.
    pub fn bundle_hash(&self) -> String {
        let project = self
            .source
            .as_ref()
            .filter(|s| !s.files.is_empty())
            .map(BundleSource::content_hash);
        let layers = [Some(sixfold_core::shipped::content_hash().to_string()), project];
        sixfold_core::bundle::layers_hash(layers.iter().flatten().map(String::as_str))
    }
}

/// Loads the shipped bundle, and over it a project layer already read.
pub fn load_over(layer: Option<&ProjectLayer>, needs: Option<&Needs>) -> (Bundle, Vec<Diagnostic>) {
    let mut sources = vec![sixfold_core::shipped::source()];
    let mut diagnostics = Vec::new();
    if let Some(layer) = layer {
        diagnostics.extend(layer.diagnostics.iter().cloned());
        sources.extend(layer.source.iter().cloned());
    }
    // Layers parsed before are taken from the user's cache (the same bundle, without the TOML).
    let (bundle, mut found) = match (sixfold_core::bundle::ParseCache::user(), needs) {
        (Some(cache), needs) => Bundle::load_cached(&sources, needs, &cache),
        (None, Some(needs)) => Bundle::load_for(&sources, needs),
        (None, None) => Bundle::load(&sources),
    };
    diagnostics.append(&mut found);
    (bundle, diagnostics)
}
