//! Bundles: directories of modes, policies, patterns and providers, loaded, layered and checked.
//!
//! Sources load in order, the shipped bundle first; an item (mode, policy, pattern, provider,
//! row, path set) with the id of an earlier one replaces it. Every problem found is a
//! [`Diagnostic`] and loading goes on: one bad file never hides another's errors, and the items
//! that did load stay usable.
//!
//! Loading reads the documents ([`read`](self) and, for one judgement, only those it needs), then
//! compiles each kind; rows, examples and act rules each have a file of their own.

mod acts;
mod compile;
mod digest;
mod examples;
mod index_words;
mod model;
mod parsed;
mod read;
mod rows;
mod select;
pub mod source;
mod unread_acts;
mod unread_rules;
mod written;

pub use acts::{ActRule, ActView};
pub use model::{Mode, Pattern, Policy};
pub use parsed::ParseCache;
pub use rows::{Row, MAX_WHOLE_STEPS_BYTES};
pub use select::{leaves_shipped_alone, Needs};
pub use source::{BundleSource, Origin, Text};

use crate::classify::{Classified, Classifier};
use crate::decision::Judgement;
use crate::diag::Diagnostic;
use crate::effects::{EffectProfile, Effects};
use crate::environment::EnvironmentSpec;
use crate::format::ToolFile;
use crate::judge::Context;
use crate::provider::{Provider, ToolEffects};
use crate::script::{Script, ScriptHost, ScriptLimits};
use compile::{Compiler, Deferred};
use examples::Example;
use read::Layered;
use std::collections::BTreeMap;

/// The content hash (`sha256:…`) of a bundle loaded from `sources`, in load order: what the
/// event log stamps on every line, so a decision names the policy that made it. It changes with
/// any file of any layer, and with the layers' order; a layer without files loads nothing and is
/// left out.
///
/// ```
/// use sixfold_core::bundle::{content_hash, BundleSource};
/// let shipped = sixfold_core::shipped::source();
/// let project = BundleSource::from_files("p", [("modes/mine.toml", "id = \"mine\"\n")]);
/// let both = content_hash(&[shipped.clone(), project.clone()]);
/// assert!(both.starts_with("sha256:"));
/// assert_ne!(both, content_hash(&[shipped.clone()]));
/// // Where the files were read from is no part of it.
/// let elsewhere = BundleSource::from_files("q", [("modes/mine.toml", "id = \"mine\"\n")]);
/// assert_eq!(both, content_hash(&[shipped, elsewhere]));
/// ```
pub fn content_hash(sources: &[BundleSource]) -> String {
    let layers: Vec<String> = sources
        .iter()
        .filter(|s| !s.files.is_empty())
        .map(BundleSource::content_hash)
        .collect();
    layers_hash(layers.iter().map(String::as_str))
}

/// [`content_hash`] from the layers' own hashes ([`BundleSource::content_hash`]) in load order,
/// for a writer that knows the shipped bundle's without making its source.
pub fn layers_hash<'a>(layers: impl IntoIterator<Item = &'a str>) -> String {
    digest::layers(layers)
}

/// A loaded bundle.
#[derive(Debug)]
pub struct Bundle {
    modes: BTreeMap<String, Mode>,
    policies: BTreeMap<String, Policy>,
    patterns: BTreeMap<String, Pattern>,
    providers: BTreeMap<String, Provider>,
    rows: BTreeMap<String, Row>,
    environments: BTreeMap<String, compile::environments::Environment>,
    host: ScriptHost,
    /// Row scripts read a whole run's facts, so they run under limits scaled for that.
    row_host: ScriptHost,
    /// The most a trace's steps may come to, as JSON, for a row that reads them whole.
    max_whole_steps_bytes: u64,
    examples: Vec<Example>,
    classifier: Classifier,
    mcp: BTreeMap<String, ToolFile>,
    acts: Vec<ActRule>,
    /// Kept command rules one judgement's load left in a stored layer, read by need.
    unread_acts: Vec<acts::UnreadPolicy>,
    deferred: Vec<Deferred>,
    scripts: Vec<Script>,
    /// The path sets (`[paths.NAME]`), for a layer that must tell a member from other files.
    path_sets: BTreeMap<String, std::sync::Arc<crate::judge::PathSet>>,
    /// The documents the bundle was compiled from, freed with it rather than when loading ends:
    /// the hook forgets its bundle at exit, and freeing a thousand parsed rules costs it more
    /// than a tenth of a millisecond per call.
    documents: Documents,
}

/// What loading parsed. Compiling no longer needs it, but for the policies an environment's spec
/// is made from when it is first asked for.
struct Documents {
    policies: Layered<crate::format::PolicyFile>,
    _modes: Layered<read::ModeDoc>,
    _patterns: Layered<crate::format::PatternFile>,
}

impl std::fmt::Debug for Documents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Documents")
    }
}

impl Bundle {
    /// Loads sources in order (later layers over earlier), with the default script limits.
    pub fn load(sources: &[BundleSource]) -> (Bundle, Vec<Diagnostic>) {
        Bundle::load_with(sources, ScriptLimits::default())
    }

    /// Loads sources in order with the given script limits.
    pub fn load_with(sources: &[BundleSource], limits: ScriptLimits) -> (Bundle, Vec<Diagnostic>) {
        Bundle::load_selected(sources, limits, None, None)
    }

    /// Loads only what one judgement needs: the mode with the modes it extends and the policies
    /// they include, the provider and the pattern named, and every policy that adds to the
    /// command classifier, act rules, MCP maps or path sets. Rows and examples are not compiled,
    /// and scripts are compiled only when a loaded rule names them.
    ///
    /// A broken file among those is reported as when loading everything; a broken file the
    /// judgement does not need is not read, so it is not reported (that is `sixfold check`'s job).
    pub fn load_for(sources: &[BundleSource], needs: &Needs) -> (Bundle, Vec<Diagnostic>) {
        Bundle::load_selected(sources, ScriptLimits::default(), Some(needs), None)
    }

    /// [`Bundle::load`] (with `needs`, [`Bundle::load_for`]) taking each layer's documents from
    /// `cache` where it holds them, and keeping there those parsed now: the same bundle and the
    /// same diagnostics, without parsing TOML that was parsed before.
    pub fn load_cached(
        sources: &[BundleSource],
        needs: Option<&Needs>,
        cache: &ParseCache,
    ) -> (Bundle, Vec<Diagnostic>) {
        Bundle::load_selected(sources, ScriptLimits::default(), needs, Some(cache))
    }

    fn load_selected(
        sources: &[BundleSource],
        limits: ScriptLimits,
        needs: Option<&Needs>,
        cache: Option<&ParseCache>,
    ) -> (Bundle, Vec<Diagnostic>) {
        let mut diagnostics = Vec::new();
        let host = ScriptHost::new(limits);
        let docs = read::read(sources, &host, needs, cache, &mut diagnostics);
        let mut bundle = Bundle {
            modes: BTreeMap::new(),
            policies: BTreeMap::new(),
            patterns: BTreeMap::new(),
            providers: BTreeMap::new(),
            rows: BTreeMap::new(),
            environments: BTreeMap::new(),
            host: ScriptHost::new(limits),
            row_host: ScriptHost::new(ScriptLimits::for_facts()),
            max_whole_steps_bytes: MAX_WHOLE_STEPS_BYTES,
            examples: Vec::new(),
            classifier: Classifier::default(),
            mcp: BTreeMap::new(),
            acts: Vec::new(),
            unread_acts: Vec::new(),
            deferred: Vec::new(),
            scripts: Vec::new(),
            path_sets: BTreeMap::new(),
            documents: Documents {
                policies: Layered::new(),
                _modes: Layered::new(),
                _patterns: Layered::new(),
            },
        };
        let mut compiler = Compiler::new(&host, needs.is_none(), docs.scripts, diagnostics);
        compiler.compile_path_sets(&docs.policies);
        bundle.path_sets = compiler.path_sets();
        compiler.compile_commands(&mut bundle, &docs.policies);
        compiler.compile_acts_and_mcp(&mut bundle, &docs.policies);
        compiler.compile_policies(&mut bundle, &docs.policies);
        compiler.compile_environments(&mut bundle, &docs.policies, &docs.modes);
        compiler.compile_modes(&mut bundle, &docs.modes);
        compiler.compile_patterns(&mut bundle, &docs.patterns);
        compiler.compile_providers(&mut bundle, docs.providers);
        if needs.is_none() {
            compiler.check_row_evidence(&bundle);
        }
        let (deferred, scripts, diagnostics) = compiler.finish();
        bundle.deferred = deferred;
        bundle.scripts = scripts;
        bundle.host = host;
        bundle.documents = Documents {
            policies: docs.policies,
            _modes: docs.modes,
            _patterns: docs.patterns,
        };
        (bundle, diagnostics)
    }

    /// Whether an existing file at `path` (absolute, resolved) is a member of the path set
    /// `@NAME`, as a rule naming the set would see it; an unknown set has no members. The
    /// governed tools use it to leave secrets out of what they list and search.
    pub fn in_path_set(&self, name: &str, path: &std::path::Path, workspace: &crate::scope::Workspace) -> bool {
        let Some(set) = self.path_sets.get(name) else {
            return false;
        };
        let touch = crate::effects::Touch {
            path: Some(path.to_path_buf()),
            place: workspace.place(path),
            directory: None,
        };
        set.contains(&touch, workspace)
    }

    /// The modes, by id.
    pub fn modes(&self) -> impl Iterator<Item = &Mode> {
        self.modes.values()
    }

    /// One mode.
    pub fn mode(&self, id: &str) -> Option<&Mode> {
        self.modes.get(id)
    }

    /// The environments, by name.
    pub fn environments(&self) -> impl Iterator<Item = &EnvironmentSpec> {
        self.environments
            .iter()
            .filter_map(|(id, environment)| self.environment_spec(id, environment))
    }

    /// One environment, by the name a mode gives in `environment`.
    pub fn environment(&self, id: &str) -> Option<&EnvironmentSpec> {
        self.environment_spec(id, self.environments.get(id)?)
    }

    /// Whether the environment `id` confines anything (`None`: there is none), told without
    /// making its spec.
    pub fn environment_confines(&self, id: &str) -> Option<bool> {
        self.environments.get(id).map(|e| e.confined())
    }

    /// The policies, by id.
    pub fn policies(&self) -> impl Iterator<Item = &Policy> {
        self.policies.values()
    }

    /// The patterns, by id.
    pub fn patterns(&self) -> impl Iterator<Item = &Pattern> {
        self.patterns.values()
    }

    /// One pattern.
    pub fn pattern(&self, id: &str) -> Option<&Pattern> {
        self.patterns.get(id)
    }

    /// The providers, by id.
    pub fn providers(&self) -> impl Iterator<Item = &Provider> {
        self.providers.values()
    }

    /// One provider.
    pub fn provider(&self, id: &str) -> Option<&Provider> {
        self.providers.get(id)
    }

    /// The rows, by id.
    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.values()
    }

    /// The script host rules run in (for a judgement explained rule by rule).
    pub(crate) fn host(&self) -> &ScriptHost {
        &self.host
    }

    /// The command classifier built from the bundle's command rules.
    pub fn classifier(&self) -> &Classifier {
        &self.classifier
    }

    /// Classifies shell text run in `cwd`.
    pub fn classify(&self, command: &str, cwd: &std::path::Path) -> Classified {
        self.classifier.classify(command, cwd)
    }

    /// Whether any `[mcp]` table maps the server `server` (`[mcp.SERVER]` or
    /// `[mcp."SERVER/TOOL"]`).
    pub fn maps_mcp_server(&self, server: &str) -> bool {
        let prefix = format!("{server}/");
        self.mcp.contains_key(server)
            || self
                .mcp
                .range(prefix.clone()..)
                .next()
                .is_some_and(|(k, _)| k.starts_with(&prefix))
    }

    /// What an MCP server's tool does, from the bundle's `[mcp]` tables (`SERVER/TOOL` before
    /// `SERVER`); the conservative profile when no file names it.
    pub fn mcp_effects(
        &self,
        server: &str,
        tool: &str,
        input: &serde_json::Value,
        cwd: &std::path::Path,
    ) -> ToolEffects {
        let name = format!("{server}/{tool}");
        match self.mcp.get(&name).or_else(|| self.mcp.get(server)) {
            Some(spec) => crate::provider::tool_file_effects(spec, &name, input, cwd, &self.classifier),
            None => crate::provider::unknown_tool(&name),
        }
    }

    /// Judges a step's effects (as written) under a mode. A mode that does not exist is a
    /// refusal with the reason, never an allow.
    pub fn judge(&self, mode: &str, effects: &EffectProfile, context: &Context) -> Judgement {
        self.judge_effects(mode, &effects.resolve(&context.workspace), context)
    }

    /// Judges resolved effects under a mode.
    pub fn judge_effects(&self, mode: &str, effects: &Effects, context: &Context) -> Judgement {
        match self.modes.get(mode) {
            Some(m) => match m.judge_for(effects, &context.workspace, &self.host) {
                Ok(judge) => judge.judge(effects, context, &self.host),
                // INVARIANT (fail closed): a mode's rule that cannot be read may have refused.
                Err(()) => Judgement::refuse_unjudgeable(
                    mode,
                    format!("mode `{mode}` cannot read its stored rules (run `sixfold check`)"),
                ),
            },
            // INVARIANT (fail closed): a mode that did not load (or does not exist) refuses.
            None => Judgement::refuse_unjudgeable(mode, self.unknown_mode(mode).reason()),
        }
    }
}

#[cfg(test)]
mod tests;
