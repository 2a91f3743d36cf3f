//! One tool call judged: the one path every entry point takes (the hooks, `sixfold judge`, the
//! MCP proxy, the governed tools).
//!
//! The layers only gather facts — the call, where it runs, the session's spawns so far and its
//! pattern, whether the project's layer is trusted, which sandbox is proven here (through
//! [`Sandboxes`], asked at most once and only for a command) — and apply the answer: the
//! judgement, the step as the record keeps it, and the tool input to run instead (the command
//! rewritten to run inside the sandbox). Every decision between the facts and the answer is
//! made here: the tool mapped (through its provider file, or an MCP map), planned edits in place
//! of the provider's broad scope, containment, the mode's judgement, the approved-ask fallback,
//! "not contained: why", the pattern's spawn limit, and the untrusted project's narrowing.
//!
//! This module orchestrates; what a step's effects are and how a mode judges them stay in
//! `provider`, `classify`, `containment`, `judge` and `bundle::acts`.

use crate::bundle::{ActView, Bundle};
use crate::containment::Containment;
use crate::decision::{DecidedBy, Decision, Judgement};
use crate::effects::EffectProfile;
use crate::environment::EnvironmentSpec;
use crate::judge::Context;
use crate::narrow;
use crate::provider::{Act, ToolEffects};
use crate::trace::{Outcome, Step, StepAct};
use crate::uri::Resource;
use serde_json::Value;
use std::cell::OnceCell;
use std::path::{Path, PathBuf};

mod explain;
mod lease;
pub use explain::{explain, Considered, Explanation, RuleTrace};
pub use lease::{counts_cents, events as lease_events, in_force, prices, unread_by, Leased};

/// The policy setting (in any policy's `[settings]`) listing the MCP servers whose tool
/// annotations are believed: `trust_annotations = ["files"]`.
pub const TRUST_SETTING: &str = "trust_annotations";

/// What the judgement needs from the sandbox layer, supplied by whoever wires it (the CLI): the
/// core never proves anything itself.
pub trait Sandboxes {
    /// Whether mode `mode`'s environment `spec`, enforced around the workspace `roots`, is
    /// proven on this machine. `Ok` carries the digest of the proof found, handed to the
    /// rewritten command (`sandbox run --proof`) so that it reads the environment from that
    /// proof instead of loading the bundle again (`None` hands nothing: the run then loads the
    /// bundle). `Err` says what is missing.
    fn proven(&self, mode: &str, spec: &EnvironmentSpec, roots: &[PathBuf]) -> Result<Option<String>, String>;
    /// The `sixfold` program that runs a command confined (`sixfold sandbox run`); `None` when
    /// it cannot be found.
    fn program(&self) -> Option<PathBuf>;
}

/// What was called.
#[derive(Debug, Clone)]
pub enum Called<'a> {
    /// A tool read through the provider file `provider` (an agent CLI's, or sixfold's governed
    /// tools'); a name `mcp__SERVER__TOOL` is an MCP server's tool, read through the bundle's
    /// MCP maps.
    Tool {
        /// The provider file's id.
        provider: &'a str,
        /// The tool's name.
        name: &'a str,
        /// The tool's input.
        input: &'a Value,
    },
    /// An MCP server's tool as the MCP proxy forwards it.
    Mcp {
        /// The server's name.
        server: &'a str,
        /// The tool's name.
        tool: &'a str,
        /// The call's arguments.
        input: &'a Value,
        /// The effects the server's annotations describe, where it sent any.
        annotations: Option<EffectProfile>,
        /// The run believes the server's annotations (else only a policy's `trust_annotations`).
        trust_annotations: bool,
        /// Further names the server's tools are mapped under (the program that runs it is
        /// known as them), tried in order where its own name has no map.
        known_as: &'a [String],
    },
    /// An MCP `resources/read`.
    Resource {
        /// The server's name.
        server: &'a str,
        /// The resource's URI.
        uri: &'a str,
    },
}

impl Called<'_> {
    /// The tool's name on the record (an MCP tool as the agents name it, `mcp__SERVER__TOOL`).
    pub fn record_name(&self) -> String {
        match self {
            Called::Tool { name, .. } => (*name).to_string(),
            Called::Mcp { server, tool, .. } => format!("mcp__{server}__{tool}"),
            Called::Resource { server, .. } => format!("mcp__{server}__resources/read"),
        }
    }
}

/// One bundle a call is judged with: the mode and the pattern it runs under.
#[derive(Debug, Clone, Copy)]
pub struct Under<'a> {
    /// The bundle.
    pub bundle: &'a Bundle,
    /// The mode.
    pub mode: &'a str,
    /// The pattern (it decides about sub-agents).
    pub pattern: &'a str,
}

/// The facts of one call.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    /// What was called.
    pub called: Called<'a>,
    /// The step's id on the record (the vendor's call id).
    pub id: &'a str,
    /// Where it runs: relative paths and commands resolve here.
    pub cwd: &'a Path,
    /// The workspace and anything else scripts read.
    pub context: &'a Context,
    /// The files the call's input says it changes, where the vendor's reader vouches for the
    /// list (a patch names them): they replace the provider file's broad scope.
    pub planned_writes: Option<Vec<String>>,
    /// How many sub-agents this session was allowed to spawn so far.
    pub spawns: u32,
    /// The session's lease facts, where the entry point charges one (`None`: there is no
    /// session to charge, e.g. `sixfold judge`).
    pub leasing: Option<Leasing<'a>>,
}

/// What a call's lease is checked against: the session's record so far, the lease a project or
/// session set, the time, and the helper the call comes from.
#[derive(Debug, Clone, Copy)]
pub struct Leasing<'a> {
    /// The session's record folded, with the usage read just now for this call folded in.
    pub so_far: &'a crate::trace::SoFar,
    /// The lease set for the project or session (`sixfold lease set`): it narrows the mode's
    /// and the pattern's.
    pub set: crate::lease::Lease,
    /// Now, in seconds since the Unix epoch.
    pub now: u64,
    /// The helper the call comes from, where the agent CLI says: its agent id and type.
    pub agent: Option<(&'a str, &'a str)>,
}

/// What the call is judged under: the bundle with the project's layer and, while that layer is
/// not trusted, the bundle without it (the stricter judgement stands).
#[derive(Debug, Clone, Copy)]
pub struct Layers<'a> {
    /// With the project's layer (or the only bundle there is).
    pub layered: Under<'a>,
    /// Without the untrusted project's layer; `None` when it is trusted, empty or not layered.
    pub without: Option<Under<'a>>,
}

/// Where a command would run: the sandbox layer, or none (`--sandbox off`, `SIXFOLD_SANDBOX=off`,
/// an entry point that cannot run a command contained).
#[derive(Clone, Copy, Default)]
pub struct Sandboxing<'a> {
    /// The sandbox layer; `None`: nothing is contained.
    pub sandboxes: Option<&'a dyn Sandboxes>,
}

impl std::fmt::Debug for Sandboxing<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandboxing")
            .field("sandboxes", &self.sandboxes.is_some())
            .finish()
    }
}

/// The answer: what the entry point applies.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The judgement that stands.
    pub judgement: Judgement,
    /// The step as the record keeps it (its effects as judged: `contained` where it runs so).
    pub step: Step,
    /// The tool input to run instead of the call's own: its command rewritten to run inside the
    /// proven sandbox. `None`: the call runs as it is.
    pub updated_input: Option<Value>,
    /// What the untrusted project's layer would have decided, where it was more permissive and
    /// so was ignored.
    pub ignored: Option<String>,
    /// Why a command was not read whole by the classifier, where it was not.
    pub opaque: Option<String>,
    /// What the lease says of the call (where the entry point charges one).
    pub leased: Option<Leased>,
}

/// A refusal because the call could not be judged.
pub fn unjudgeable(mode: &str, why: &str) -> Judgement {
    // INVARIANT (fail closed): whatever keeps a call from being judged refuses it.
    Judgement {
        decision: Decision::Refuse,
        reason: format!("could not judge this call, so it is refused: {why}"),
        rules: Vec::new(),
        mode: mode.to_string(),
        by: DecidedBy::Unjudgeable,
    }
}

/// Judges one call: the one path.
///
/// ```
/// use sixfold_core::call::{judge, Call, Called, Layers, Sandboxing, Under};
/// use sixfold_core::{Bundle, Context, Decision, Workspace};
/// let (bundle, _) = Bundle::load(&[sixfold_core::shipped::source()]);
/// let context = Context::new(Workspace::new("/w"));
/// let input = serde_json::json!({"command": "cargo build"});
/// let call = Call {
///     called: Called::Tool { provider: "claude-code", name: "Bash", input: &input },
///     id: "t1",
///     cwd: std::path::Path::new("/w"),
///     context: &context,
///     planned_writes: None,
///     spawns: 0,
///     leasing: None,
/// };
/// let under = Under { bundle: &bundle, mode: "workspace-write", pattern: "single" };
/// let layers = Layers { layered: under, without: None };
/// // No sandbox: a command the classifier cannot bound asks, and says why it is not contained.
/// let judged = judge(&call, layers, Sandboxing::default());
/// assert_eq!(judged.judgement.decision, Decision::Ask);
/// assert!(judged.judgement.reason.contains("not contained"));
/// assert!(judged.updated_input.is_none() && !judged.step.effects.contained);
/// // Input the provider file cannot read is refused, never judged by what it seems to do.
/// let broken = serde_json::json!({"command": ["rm", "-rf", "/"]});
/// let call = Call { called: Called::Tool { provider: "claude-code", name: "Bash", input: &broken }, ..call };
/// assert_eq!(judge(&call, layers, Sandboxing::default()).judgement.decision, Decision::Refuse);
/// ```
pub fn judge(call: &Call<'_>, layers: Layers<'_>, sandboxing: Sandboxing<'_>) -> Judged {
    // INVARIANT (fail closed): an untrusted project never chooses the environment: commands run
    // in the sandbox of the layers without it, and both judgements assume that one sandbox.
    let place = Place {
        under: layers.without.unwrap_or(layers.layered),
        with_project: layers.without.is_none(),
        sandboxing,
        resolved: OnceCell::new(),
    };
    // What the call does, read once where both judgements are made in one bundle (an untrusted
    // layer that leaves the shipped modes alone): the same provider file and classifier.
    let map = |under: Under<'_>| mapped(under.bundle, &call.called, call.cwd);
    let layered_map = map(layers.layered);
    let without = layers.without.map(|under| {
        let map = if std::ptr::eq(under.bundle, layers.layered.bundle) {
            layered_map.clone()
        } else {
            map(under)
        };
        judge_in(call, under, &place, map)
    });
    let layered = judge_in(call, layers.layered, &place, layered_map);
    let (layered, without) = match (layered, without) {
        (Ok(layered), None) => return layered.into_judged(None),
        (Ok(layered), Some(Ok(without))) => (layered, without),
        (Err(why), _) => return failed(call, layers.layered.mode, &why),
        (Ok(_), Some(Err(why))) => {
            let mode = layers.without.map_or(layers.layered.mode, |u| u.mode);
            return failed(call, mode, &why);
        }
    };
    let narrowed = narrow::narrowed(without.judgement, layered.judgement);
    // Either judgement that relied on the sandbox makes the command run in it (the same sandbox).
    let updated_input = without.updated_input.or(layered.updated_input);
    let leased = match (without.leased, layered.leased) {
        (Some(a), Some(b)) => Some(a.narrowed(b)),
        (a, b) => a.or(b),
    };
    Judged {
        judgement: narrowed.judgement,
        step: layered.step,
        updated_input,
        ignored: narrowed.ignored,
        opaque: layered.opaque,
        leased,
    }
}

/// The refusal of a call that could not be judged, with the step as far as it is known.
fn failed(call: &Call<'_>, mode: &str, why: &str) -> Judged {
    Judged {
        judgement: unjudgeable(mode, why),
        step: Step {
            id: call.id.to_string(),
            tool: call.called.record_name(),
            cwd: Some(call.cwd.to_string_lossy().into_owned()),
            ..Step::default()
        },
        updated_input: None,
        ignored: None,
        opaque: None,
        leased: None,
    }
}

/// The sandbox a call's command would run in, resolved once per call and only for a command.
struct Place<'a> {
    under: Under<'a>,
    with_project: bool,
    sandboxing: Sandboxing<'a>,
    resolved: OnceCell<Sandbox>,
}

impl Place<'_> {
    fn sandbox(&self, context: &Context) -> &Sandbox {
        self.resolved
            .get_or_init(|| Sandbox::resolve(self.under, self.with_project, self.sandboxing, context))
    }
}

/// Where command steps run: proven (what it guarantees, and the command prefix that runs
/// inside it), or not contained and why. Neither: the environment confines nothing.
#[derive(Debug, Clone, Default)]
struct Sandbox {
    proven: Option<(Containment, String)>,
    missing: Option<String>,
}

impl Sandbox {
    fn resolve(under: Under<'_>, with_project: bool, sandboxing: Sandboxing<'_>, context: &Context) -> Sandbox {
        let mode = under.mode;
        let not = |why: String| Sandbox {
            proven: None,
            missing: Some(why),
        };
        let Some(found) = under.bundle.mode(mode) else {
            return not(under.bundle.unknown_mode(mode).reason());
        };
        let Some(name) = &found.environment else {
            return not(format!("the mode `{mode}` names no environment"));
        };
        let missing = || not(format!("the environment `{name}` of mode `{mode}` does not exist"));
        // An environment that confines nothing contains nothing, and needs saying nothing.
        match under.bundle.environment_confines(name) {
            None => return missing(),
            Some(false) => return Sandbox::default(),
            Some(true) => {}
        }
        // Told before the spec is made: without a sandbox it is never read.
        let Some(sandboxes) = sandboxing.sandboxes else {
            return not("no sandbox is wired to this call (the sandbox is off)".to_string());
        };
        let Some(spec) = under.bundle.environment(name) else {
            return missing();
        };
        let Some(containment) = Containment::of(spec) else {
            return Sandbox::default();
        };
        let roots: Vec<PathBuf> = context.workspace.roots().iter().map(|r| r.path.clone()).collect();
        // INVARIANT (fail closed): only a proof this machine made (cached or now) contains a step.
        let proof = match sandboxes.proven(mode, spec, &roots) {
            Ok(proof) => proof,
            Err(why) => {
                return not(format!(
                    "the environment `{name}` of mode `{mode}` is not proven on this machine ({why}; see `sixfold sandbox check --mode {mode}`)"
                ))
            }
        };
        // INVARIANT (fail closed): without this very binary to run it, nothing is contained
        // (a name looked up on `$PATH` could be any program).
        let Some(program) = sandboxes.program() else {
            return not("this sixfold binary cannot be found to run the sandbox".to_string());
        };
        let mut words = vec![
            program.to_string_lossy().into_owned(),
            "sandbox".into(),
            "run".into(),
            "--mode".into(),
            mode.to_string(),
        ];
        for (i, root) in context.workspace.roots().iter().enumerate() {
            words.push("--root".into());
            if i == 0 {
                words.push(root.path.to_string_lossy().into_owned());
            } else {
                words.push(format!("{}={}", root.name, root.path.display()));
            }
        }
        if let Some(digest) = proof {
            words.push("--proof".into());
            words.push(digest);
        }
        if !with_project {
            words.push("--no-project".into());
        }
        words.push("--".into());
        let prefix = words
            .iter()
            .map(|w| crate::shell::quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        Sandbox {
            proven: Some((containment, prefix)),
            missing: None,
        }
    }
}

/// One bundle's answer, before narrowing.
struct One {
    judgement: Judgement,
    step: Step,
    updated_input: Option<Value>,
    opaque: Option<String>,
    leased: Option<Leased>,
}

impl One {
    fn into_judged(self, ignored: Option<String>) -> Judged {
        Judged {
            judgement: self.judgement,
            step: self.step,
            updated_input: self.updated_input,
            ignored,
            opaque: self.opaque,
            leased: self.leased,
        }
    }
}

/// Whether a bundle believes a server's annotations (a policy's `trust_annotations` setting).
pub fn trusts(bundle: &Bundle, server: &str) -> bool {
    bundle.policies().any(|p| {
        p.settings
            .get(TRUST_SETTING)
            .and_then(Value::as_array)
            .is_some_and(|names| names.iter().any(|n| n.as_str() == Some(server)))
    })
}

/// A resource URI read, judged by what the URI means ([`crate::uri::plain`]): a `file:` URI
/// reads its path, `http(s)` an unknown place and leaves the machine, any other scheme an unknown
/// place. A URI that cannot be made plain is the conservative profile (the proxy refuses it
/// before judging).
fn resource_effects(uri: &str) -> EffectProfile {
    let (reads, reaches) = match crate::uri::plain(uri) {
        Ok(Resource::File(path)) => (vec![path], false),
        Ok(Resource::Remote) => (vec!["*".to_string()], true),
        Ok(Resource::Other) => (vec!["*".to_string()], false),
        Err(_) => return EffectProfile::unknown(),
    };
    EffectProfile {
        reads,
        writes: Vec::new(),
        reaches,
        reversible: true,
        contained: false,
        costs: false,
    }
}

/// Whether a call's effects come from a map, a provider file or annotations the bundle
/// believes, not from the conservative profile alone (a refusal then says how to map it).
pub fn understood(bundle: &Bundle, called: &Called<'_>, cwd: &Path) -> bool {
    mapped(bundle, called, cwd).is_ok_and(|(m, _)| m.known)
}

/// What a call does as a bundle maps it, and the input field holding its command, if any; or
/// why its input cannot be read.
type Mapped = Result<(ToolEffects, Option<String>), String>;

/// A call mapped to its act and effects under one bundle, with the input field its command
/// can be rewritten in (only a provider's own tool with a command field: an MCP server's
/// `command` is the server's to read).
fn mapped(bundle: &Bundle, called: &Called<'_>, cwd: &Path) -> Mapped {
    match called {
        Called::Tool { provider, name, input } => {
            if let Some((server, tool)) = crate::provider::mcp_tool(name) {
                return Ok((bundle.mcp_effects(server, tool, input, cwd), None));
            }
            let p = bundle
                .provider(provider)
                .ok_or_else(|| bundle.unknown_provider(provider).reason())?;
            // INVARIANT (fail closed): input the provider file cannot read is unjudgeable.
            if let Some(why) = p.unreadable_input(name, input) {
                return Err(format!("the tool input cannot be read: {why}"));
            }
            let field = p.spec.tools.get(*name).and_then(|t| t.command.clone());
            Ok((p.tool_effects(name, input, cwd, bundle.classifier()), field))
        }
        Called::Mcp {
            server,
            tool,
            input,
            annotations,
            trust_annotations,
            known_as,
        } => {
            let from_map = bundle.mcp_effects(server, tool, input, cwd);
            // A server run from a known program is mapped under that program's maps too.
            let from_map = match from_map.known {
                true => from_map,
                false => known_as
                    .iter()
                    .map(|name| bundle.mcp_effects(name, tool, input, cwd))
                    .find(|m| m.known)
                    .unwrap_or(from_map),
            };
            if from_map.known {
                return Ok((from_map, None));
            }
            match annotations {
                // Annotations are the server's word: only a server the user trusts is believed.
                Some(a) if *trust_annotations || trusts(bundle, server) => Ok((
                    ToolEffects {
                        effects: a.clone(),
                        known: true,
                        ..from_map
                    },
                    None,
                )),
                // INVARIANT (fail closed): an unmapped tool of an untrusted server is the
                // conservative profile (`mcp_effects` answered it so).
                _ => Ok((from_map, None)),
            }
        }
        Called::Resource { uri, .. } => Ok((
            ToolEffects {
                act: Act {
                    kind: "url",
                    text: (*uri).to_string(),
                },
                effects: resource_effects(uri),
                spawn: None,
                classified: None,
                known: true,
            },
            None,
        )),
    }
}

/// The tool input with its command field replaced by `command`; `None` when the input has no
/// such string field (nothing to rewrite, so nothing may claim to be).
fn rewritten_input(input: &Value, field: &str, command: &str) -> Option<Value> {
    let mut input = input.clone();
    let slot = input.as_object_mut()?.get_mut(field)?;
    if !slot.is_string() {
        return None;
    }
    *slot = Value::String(command.to_string());
    Some(input)
}

/// The judgement of a call under one bundle.
fn judge_in(call: &Call<'_>, under: Under<'_>, place: &Place<'_>, map: Mapped) -> Result<One, String> {
    let Under { bundle, mode, pattern } = under;
    if bundle.mode(mode).is_none() {
        return Err(bundle.unknown_mode(mode).reason());
    }
    let (mut mapped, field) = map?;
    // A call whose input names the files it changes (a patch) writes those files, not the
    // provider file's broad scope, where the vendor's reader vouches for the list.
    if let Some(paths) = call.planned_writes.as_ref().filter(|p| !p.is_empty()) {
        if mapped.known {
            mapped.effects.writes = paths.clone();
            if mapped.act.kind != "command" {
                if let Some(first) = paths.first() {
                    mapped.act = Act {
                        kind: "path",
                        text: first.clone(),
                    };
                }
            }
        }
    }
    // Only a command that can be rewritten runs in the sandbox: nothing else needs a proof.
    let rewritable = match (&field, &mapped.classified, call.called.input()) {
        (Some(field), Some(_), Some(input)) if mapped.act.kind == "command" && !mapped.act.text.trim().is_empty() => {
            Some((field.as_str(), input))
        }
        _ => None,
    };
    let sandbox = rewritable.map(|_| place.sandbox(call.context));
    let mut effects = mapped.effects.clone();
    let mut updated_input = None;
    if let (
        Some((field, input)),
        Some(Sandbox {
            proven: Some((containment, prefix)),
            ..
        }),
        Some(classified),
    ) = (rewritable, sandbox, &mapped.classified)
    {
        let command = format!("{prefix} bash -c {}", crate::shell::quote(&mapped.act.text));
        // INVARIANT (fail closed): a step judged contained runs contained, or is judged as it is.
        if let Some(input) = rewritten_input(input, field, &command) {
            effects = containment.effects(classified, bundle.classifier());
            updated_input = Some(input);
        }
    }
    let workspace = &call.context.workspace;
    let parts = mapped.classified.as_ref().map(|c| c.parts.as_slice()).unwrap_or(&[]);
    let commands: Vec<String> = parts.iter().map(|p| p.text.clone()).collect();
    let act = ActView {
        kind: mapped.act.kind,
        text: &mapped.act.text,
        commands: &commands,
        parts,
    };
    let mut judgement = bundle.judge_step(mode, &act, &effects.resolve(workspace), call.context);
    if updated_input.is_some() && judgement.decision == Decision::Ask && effects.reaches {
        // A person decides an ask on the command as shown: a command understood to reach the
        // network (a fetch in `ask`) that asks uncontained too runs as it is once approved, so
        // the network the person approved is there. Any other ask runs contained: what the
        // sandbox keeps from it (writes outside, secrets) the mode refuses anyway.
        let plain = bundle.judge_step(mode, &act, &mapped.effects.resolve(workspace), call.context);
        if plain.decision <= Decision::Ask {
            judgement = plain;
            updated_input = None;
            effects = mapped.effects.clone();
        }
    }
    if let Some(why) = sandbox.and_then(|s| s.missing.as_deref()) {
        if judgement.decision != Decision::Allow && !effects.contained {
            judgement.reason = format!("{}; not contained: {why}", judgement.reason);
        }
    }
    if let Some(helper) = &mapped.spawn {
        judgement = judge_spawn(bundle, pattern, helper, call.spawns, judgement)?;
    }
    // The lease first: a spent one refuses whatever the mode and the pattern said.
    let leased = call
        .leasing
        .as_ref()
        .map(|leasing| lease::leased(under, leasing, mapped.spawn.is_some()));
    if let Some(refusal) = leased.as_ref().and_then(|l| l.refusal(mode)) {
        judgement = refusal;
        updated_input = None;
    }
    let step = Step {
        id: call.id.to_string(),
        tool: call.called.record_name(),
        act: StepAct {
            kind: mapped.act.kind.to_string(),
            text: mapped.act.text.clone(),
        },
        effects,
        command_rules: parts.iter().map(|p| p.rule.clone().unwrap_or_default()).collect(),
        commands,
        parts: parts.to_vec(),
        output: None,
        outcome: Outcome::default(),
        edits: Vec::new(),
        cwd: Some(call.cwd.to_string_lossy().into_owned()),
    };
    Ok(One {
        judgement,
        step,
        updated_input,
        opaque: mapped.classified.and_then(|c| c.opaque),
        leased,
    })
}

impl Called<'_> {
    /// The input a rewrite replaces a field of.
    fn input(&self) -> Option<&Value> {
        match self {
            Called::Tool { input, .. } | Called::Mcp { input, .. } => Some(input),
            Called::Resource { .. } => None,
        }
    }
}

/// The pattern decides about sub-agents: the stricter of it and the mode.
fn judge_spawn(
    bundle: &Bundle,
    pattern: &str,
    helper: &str,
    spawns: u32,
    mode: Judgement,
) -> Result<Judgement, String> {
    let found = bundle
        .pattern(pattern)
        .ok_or_else(|| bundle.unknown_pattern(pattern).reason())?;
    let helper = Some(helper).filter(|h| !h.is_empty());
    let by_pattern = found.judge_spawn(helper, spawns);
    if by_pattern.decision > mode.decision {
        Ok(Judgement {
            mode: mode.mode,
            ..by_pattern
        })
    } else {
        Ok(mode)
    }
}

#[cfg(test)]
mod tests;
