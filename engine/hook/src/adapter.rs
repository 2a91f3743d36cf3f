//! The judgement path every hook adapter shares: one event as JSON on stdin, one answer as JSON
//! on stdout, for any agent CLI whose hooks take Claude Code's shape (Claude Code, Codex).
//!
//! PreToolUse is judged under the active mode (and the active pattern for sub-agents) and
//! answered allow, ask or deny with the reason; PostToolUse records the outcome; Stop evaluates
//! the live invariants over the session and blocks a gap once (never twice in a row, so it
//! cannot loop); SessionStart and UserPromptSubmit are recorded. Every failure answers deny.
//!
//! What differs between agent CLIs is data: the provider file (`providers/<id>.toml`) maps its
//! tools and says, in its `[hooks]` table, whether the CLI can ask a person (where it cannot, an
//! ask is answered as a deny that says how to approve); reading its records (the transcript, a
//! call's outcome and edits) is the [`Records`] the CLI passes in.

use crate::answer::{answer, Answering};
use crate::log::Log;
use crate::state::State;
use crate::trust::{Standing, TrustStore};
use crate::{load_over, ProjectLayer, Records};
use serde::Deserialize;
use serde_json::{json, Value};
use sixfold_core::bundle::{Bundle, Needs};
use sixfold_core::call::{Call, Called, Layers, Sandboxes, Sandboxing, Under};
use sixfold_core::decision::Judgement;
use sixfold_core::format::FactsKind;
use sixfold_core::judge::Context;
use sixfold_core::scope::Workspace;
use sixfold_core::trace::{Claim, Event, SoFar, Status, Step};
use sixfold_core::verdict::{RowResult, Severity, Verdict};
use std::path::PathBuf;

/// The fields of a hook event the adapter reads; the rest is ignored.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct HookInput {
    /// Which hook.
    pub hook_event_name: String,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The session's transcript file.
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    /// The working directory.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The tool (PreToolUse, PostToolUse).
    #[serde(default)]
    pub tool_name: Option<String>,
    /// The tool's input.
    #[serde(default)]
    pub tool_input: Option<Value>,
    /// The tool's response (PostToolUse).
    #[serde(default)]
    pub tool_response: Option<Value>,
    /// The call's id.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// True when the agent is continuing because a Stop hook blocked it.
    #[serde(default)]
    pub stop_hook_active: bool,
    /// The prompt (UserPromptSubmit).
    #[serde(default)]
    pub prompt: Option<String>,
    /// The last assistant message, where the CLI sends it (Stop).
    #[serde(default)]
    pub last_assistant_message: Option<String>,
    /// The error of a failed tool call (PostToolUseFailure).
    #[serde(default)]
    pub error: Option<Value>,
    /// The sub-agent a call comes from, where the agent CLI says (Claude Code's `agent_id`).
    #[serde(default)]
    pub agent_id: Option<String>,
    /// That sub-agent's type (Claude Code's `agent_type`).
    #[serde(default)]
    pub agent_type: Option<String>,
}

/// Handles one hook event of the agent CLI whose provider file is `provider`: the text to print
/// on stdout, and notes for stderr. Project bundles are trusted as `store` says (`None`: none is);
/// command steps run inside the active mode's environment where `sandboxes` proves it (`None`:
/// never contained).
pub fn handle(
    provider: &str,
    input: &[u8],
    records: &dyn Records,
    store: Option<&TrustStore>,
    sandboxes: Option<&dyn Sandboxes>,
) -> (String, Vec<String>) {
    let event: HookInput = match serde_json::from_slice(input) {
        Ok(e) => e,
        Err(e) => return unreadable(&e.to_string()),
    };
    if event.stop_hook_active && matches!(event.hook_event_name.as_str(), "Stop" | "SubagentStop") {
        crate::guard::let_through_on_failure();
    }
    crate::guard::fault_on_purpose(&event.hook_event_name);
    // PreToolUse answers every failure itself (a refusal); the others only note it.
    match handle_event(provider, &event, records, store, sandboxes) {
        Ok(answer) => answer,
        Err(why) => (String::new(), vec![format!("sixfold: {why}")]),
    }
}

/// A refusal because the call could not be judged: the bundle, the state or the input could not
/// be read.
fn unjudgeable(mode: &str, why: &str) -> Judgement {
    sixfold_core::call::unjudgeable(mode, why)
}

/// Input that is not a hook event is refused. No session is known, so it goes on the record of
/// the working directory's project as session `unknown-session`, where sixfold is in use there
/// (the project has `.sixfold/`).
fn unreadable(error: &str) -> (String, Vec<String>) {
    let judgement = unjudgeable("", &format!("the hook input is not a hook event ({error})"));
    let mut notes = vec![format!("sixfold: unjudgeable: unreadable hook input: {error}")];
    if let Ok(cwd) = std::env::current_dir() {
        let project = crate::project::root(&cwd);
        if crate::project::dir(&project).is_dir() {
            let bundle = ProjectLayer::read(&project).bundle_hash();
            let log = Log::new(&project, "unknown-session").with_bundle(bundle);
            let step = Step {
                cwd: Some(cwd.to_string_lossy().into_owned()),
                ..Step::default()
            };
            let judged = Event::Judged {
                step: Box::new(step),
                judgement: judgement.clone(),
            };
            if let Err(e) = log.append(&[judged]) {
                notes.push(format!("sixfold: {e}"));
            }
        }
    }
    (answer(&judgement, &Answering::default()), notes)
}

struct Session {
    provider: String,
    project: PathBuf,
    cwd: PathBuf,
    id: String,
    log: Log,
    state: State,
    /// The project's `.sixfold/`, read once: for the bundle, its standing and the log's stamp.
    layer: ProjectLayer,
}

fn session(provider: &str, event: &HookInput) -> Result<Session, String> {
    // INVARIANT (fail closed): an event that cannot be placed is refused, and nothing is created
    // for it: the hook's own working directory is not the agent's project.
    let cwd = match &event.cwd {
        Some(c) if c.is_absolute() => c.clone(),
        Some(c) => return Err(format!("the hook event's `cwd` `{}` is not absolute", c.display())),
        None => return Err("the hook event has no `cwd`, so its project is unknown".into()),
    };
    let project = crate::project::place(&cwd)?;
    let id = event.session_id.clone().unwrap_or_else(|| "unknown-session".into());
    let layer = ProjectLayer::read(&project);
    let state = State::of(&project, &layer)?;
    let log = Log::new(&project, &id).with_bundle(layer.bundle_hash());
    Ok(Session {
        provider: provider.to_string(),
        project,
        cwd,
        id,
        log,
        state,
        layer,
    })
}

/// The shipped bundle with the project's layer over it (`project`), or without it (`None`).
fn loaded(layer: Option<&ProjectLayer>, needs: Option<&Needs>) -> Result<Bundle, String> {
    let (bundle, diagnostics) = load_over(layer, needs);
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

fn handle_event(
    provider: &str,
    event: &HookInput,
    records: &dyn Records,
    store: Option<&TrustStore>,
    sandboxes: Option<&dyn Sandboxes>,
) -> Result<(String, Vec<String>), String> {
    match event.hook_event_name.as_str() {
        "PreToolUse" => Ok(pre_tool_use(provider, event, records, store, sandboxes)),
        "PostToolUse" | "PostToolUseFailure" => post_tool_use(provider, event, records),
        "Stop" | "SubagentStop" => stop(provider, event, records, store),
        "SessionStart" | "UserPromptSubmit" | "SessionEnd" => record(provider, event),
        other => Ok((
            String::new(),
            vec![format!(
                "sixfold: hook event `{other}` is not one it handles; nothing done"
            )],
        )),
    }
}

/// Events to write before this call's own (see `sixfold_core::trace::preamble`).
fn preamble(session: &Session, so_far: &SoFar, mode: &str) -> Vec<Event> {
    let cwd = session.cwd.to_string_lossy();
    let start = sixfold_core::trace::SessionStart {
        session: &session.id,
        cwd: &cwd,
        provider: &session.provider,
    };
    sixfold_core::trace::preamble(so_far, start, mode)
}

fn workspace(session: &Session) -> Workspace {
    Workspace::new(&session.project).with_process_environment()
}

/// Judges a tool call and puts the judgement on the session's record. A call that cannot be
/// judged is refused, and on the record as `unjudgeable` once the session is known.
fn pre_tool_use(
    provider: &str,
    event: &HookInput,
    records: &dyn Records,
    store: Option<&TrustStore>,
    sandboxes: Option<&dyn Sandboxes>,
) -> (String, Vec<String>) {
    let refused = Answering::default();
    let session = match session(provider, event) {
        Ok(s) => s,
        Err(why) => {
            let judgement = unjudgeable("", &why);
            return (
                answer(&judgement, &refused),
                vec![format!("sixfold: unjudgeable: {why}")],
            );
        }
    };
    let mode = session.state.mode_for(Some(&session.id));
    // The record is held from before the judgement until its line is written, so parallel calls
    // of one session are judged one at a time, each knowing the spawns allowed before it.
    let held = match session.log.hold() {
        Ok(held) => held,
        Err(why) => {
            // INVARIANT (fail closed): a call whose record cannot be kept is refused.
            let judgement = unjudgeable(&mode, &why);
            return (
                answer(&judgement, &refused),
                vec![format!("sixfold: unjudgeable: {why}")],
            );
        }
    };
    let judged = judge_narrowed(event, &session, &mode, held.so_far(), records, store, sandboxes);
    let (judgement, step, how, mut notes, leased) = match judged {
        Ok((judgement, step, how, notes, leased)) => (judgement, step, how, notes, leased),
        Err(why) => {
            let step = Step {
                id: event.tool_use_id.clone().unwrap_or_default(),
                tool: event.tool_name.clone().unwrap_or_default(),
                cwd: Some(session.cwd.to_string_lossy().into_owned()),
                ..Step::default()
            };
            let notes = vec![format!("sixfold: unjudgeable: {why}")];
            (unjudgeable(&mode, &why), step, refused.clone(), notes, Vec::new())
        }
    };
    let mut out = preamble(&session, held.so_far(), &mode);
    out.push(Event::Judged {
        step: Box::new(step),
        judgement: judgement.clone(),
    });
    out.extend(leased);
    if let Err(why) = held.append(&out) {
        // INVARIANT (fail closed): a judgement that cannot be put on the record is refused.
        let judgement = unjudgeable(&mode, &why);
        notes.push(format!("sixfold: unjudgeable: {why}"));
        return (answer(&judgement, &refused), notes);
    }
    (answer(&judgement, &how), notes)
}

/// The rows of the layered bundle, each replaced by the shipped bundle's row of the same id where
/// that one holds less (a gap, an unk, gating), and the shipped rows the project layer dropped.
fn stricter_rows(layered: Vec<RowResult>, shipped: Vec<RowResult>) -> Vec<RowResult> {
    let mut out = layered;
    for row in shipped {
        match out.iter_mut().find(|r| r.id == row.id) {
            Some(mine) => {
                let rank = |v: Verdict| match v {
                    Verdict::Ok => 0,
                    Verdict::Unk => 1,
                    Verdict::Gap => 2,
                };
                let gating = |r: &RowResult| r.severity == Severity::Gating;
                if rank(row.verdict) > rank(mine.verdict) || (gating(&row) && !gating(mine)) {
                    *mine = row;
                }
            }
            None => out.push(row),
        }
    }
    out
}

/// A call decided: the judgement, the step as recorded, how the agent CLI is answered, notes, and
/// the lease's events for the record (`charged`, `held`, `carved`).
type Decided = (Judgement, Step, Answering, Vec<String>, Vec<Event>);

/// The judgement of a call (the core's one path, `sixfold_core::call`): this gathers its facts —
/// the project's layer and its standing, the state's mode and pattern, the spawns so far, the
/// planned edits the vendor's reader vouches for, the sandbox layer — and how the agent CLI is
/// answered; with notes saying what an untrusted project layer had no say in.
fn judge_narrowed(
    event: &HookInput,
    session: &Session,
    mode: &str,
    so_far: &SoFar,
    records: &dyn Records,
    store: Option<&TrustStore>,
    sandboxes: Option<&dyn Sandboxes>,
) -> Result<Decided, String> {
    // The project's `.sixfold/` is read once: for its standing and for the judgement.
    let layer = &session.layer;
    let standing = crate::trust::standing(store, layer);
    let provider_id = session.provider.as_str();
    let pattern = session.state.pattern();
    let set = session.state.lease_for(&session.id);
    let agent = event
        .agent_id
        .as_deref()
        .map(|a| (a, event.agent_type.as_deref().unwrap_or("")));
    let carved = agent.and_then(|(a, t)| so_far.carve_of(a, t));
    // The price table is read only where a lease with `cents` may apply: set for the project or
    // session, or a helper's carve, both known before loading; a mode's or pattern's own is known
    // once loaded (then the bundle is loaded again with it, which only such a lease pays for).
    let prices = set.cents.is_some() || carved.is_some_and(|c| c.lease.cents.is_some());
    let tool = event.tool_name.clone().ok_or("the event names no tool")?;
    // Without the project layer, its state is not read either: the default mode and pattern.
    let default = (crate::DEFAULT_MODE, crate::DEFAULT_PATTERN);
    // An untrusted layer that leaves the shipped modes alone is judged without it in the same
    // bundle, under the default mode: the one load serves both judgements.
    let shared = standing == Standing::Untrusted
        && layer
            .source
            .as_ref()
            .is_some_and(sixfold_core::bundle::leaves_shipped_alone);
    // Only what judging this step needs is loaded: the hook runs before every tool call. `also`:
    // the judgement without the layer, served by the same load.
    let load = |layer: Option<&ProjectLayer>, (mode, pattern): (&str, &str), also: Option<(&str, &str)>| {
        let mut needs = Needs::mode(mode)
            .with_provider(provider_id)
            .with_pattern(pattern)
            .with_tool(&tool);
        if let Some((mode, pattern)) = also {
            needs = needs.also(mode, pattern);
        }
        let bundle = loaded(layer, Some(&needs.clone().with_prices(prices)))?;
        let cents = std::iter::once((mode, pattern))
            .chain(also)
            .any(|(mode, pattern)| sixfold_core::call::in_force(&bundle, mode, pattern).cents.is_some());
        match prices || !cents {
            true => Ok(bundle),
            false => loaded(layer, Some(&needs)),
        }
    };
    let bundle = load(Some(layer), (mode, &pattern), shared.then_some(default))?;
    let without = match standing {
        Standing::Untrusted if !shared => Some(load(None, default, None)?),
        _ => None,
    };
    let input = event.tool_input.clone().unwrap_or(Value::Null);
    let planned_writes = records
        .planned_edits(&tool, &input, &session.cwd)
        .map(|edits| edits.into_iter().map(|e| e.path).collect());
    let context = Context::new(workspace(session));
    let id = event.tool_use_id.clone().unwrap_or_default();
    let layered = Under {
        bundle: &bundle,
        mode,
        pattern: &pattern,
    };
    // The bundle the step is judged in without the project layer, when it is untrusted.
    let unlayered = if shared { Some(&bundle) } else { without.as_ref() };
    let bare = unlayered.map(|bundle| Under {
        bundle,
        mode: default.0,
        pattern: default.1,
    });
    let now = crate::lease::now();
    // The lease: the usage read since the last charge, charged to the helper's carve where the
    // call comes from a helper that has one, else to the session; checked with it folded in.
    // The agent CLI's record is read only where the account's lease counts cents.
    let before = sixfold_core::call::Leasing {
        so_far,
        set,
        now,
        agent,
    };
    let counts_cents = [Some(layered), bare]
        .into_iter()
        .flatten()
        .any(|under| sixfold_core::call::counts_cents(under, &before));
    // INVARIANT (fail closed): an untrusted project does not say where its usage is.
    let usage = unlayered
        .unwrap_or(&bundle)
        .provider(provider_id)
        .and_then(|p| p.spec.usage.clone());
    let carve = carved.map(|c| c.id.clone());
    let transcript = event.transcript_path.as_ref().map(|p| p.to_string_lossy().into_owned());
    let record = match (agent, &usage, &transcript) {
        (Some((a, _)), Some(spec), Some(t)) => spec.helper_record(t, a),
        (None, _, t) => t.clone(),
        _ => None,
    };
    let mut charge = match counts_cents {
        true => crate::lease::charge(
            usage.as_ref(),
            record.as_deref().map(std::path::Path::new),
            so_far,
            carve,
            event.agent_id.clone(),
            now,
        ),
        false => crate::lease::steps_only(carve, event.agent_id.clone(), now),
    };
    let mut so_far_now = so_far.clone();
    so_far_now.apply(&charge);
    let leasing = sixfold_core::call::Leasing {
        so_far: &so_far_now,
        ..before
    };
    let call = Call {
        called: Called::Tool {
            provider: provider_id,
            name: &tool,
            input: &input,
        },
        id: &id,
        cwd: &session.cwd,
        context: &context,
        planned_writes,
        spawns: so_far.spawns,
        leasing: Some(leasing),
    };
    let layers = Layers { layered, without: bare };
    let judged = sixfold_core::call::judge(&call, layers, Sandboxing { sandboxes });
    // INVARIANT (fail closed): an untrusted project cannot say its agent CLI can ask a person.
    let cannot_ask = |b: &Bundle| {
        b.provider(provider_id)
            .and_then(|p| p.spec.hooks.as_ref())
            .is_some_and(|h| !h.can_ask)
    };
    let how = Answering {
        cannot_ask: cannot_ask(&bundle) || unlayered.is_some_and(cannot_ask),
        agent: bundle
            .provider(provider_id)
            .and_then(|p| p.spec.name.clone())
            .unwrap_or_else(|| provider_id.to_string()),
        act: Some((judged.step.act.kind.clone(), judged.step.act.text.clone())),
        updated_input: judged.updated_input,
    };
    // A step runs when allowed, or when it asks a person who may approve it: an ask answered as
    // a refusal (the agent CLI cannot ask) costs nothing.
    let runs = match judged.judgement.decision {
        sixfold_core::decision::Decision::Allow => true,
        sixfold_core::decision::Decision::Ask => !how.cannot_ask,
        sixfold_core::decision::Decision::Refuse => false,
    };
    crate::lease::settle(&mut charge, runs, judged.leased.as_ref());
    let mut leased = Vec::new();
    if crate::lease::worth_writing(&charge, so_far) {
        leased.push(charge);
    }
    if let Some(l) = &judged.leased {
        if let (Some(held), sixfold_core::decision::DecidedBy::Lease) = (&l.held, judged.judgement.by) {
            leased.push(Event::Held {
                id: id.clone(),
                what: held.what.clone(),
                reason: held.reason.clone(),
                carve: l.carve.clone(),
            });
        }
        if let (Some(gives), true, "agent") = (l.gives, runs, judged.step.act.kind.as_str()) {
            leased.push(Event::Carved {
                id: id.clone(),
                helper: judged.step.act.text.clone(),
                lease: gives,
            });
        }
    }
    let notes = judged
        .ignored
        .map(|why| format!("sixfold: untrusted project bundle ignored: {why}"))
        .into_iter()
        .collect();
    // The hook process ends right after answering: freeing the bundles is wasted latency.
    std::mem::forget(bundle);
    std::mem::forget(without);
    Ok((judged.judgement, judged.step, how, notes, leased))
}

fn post_tool_use(provider: &str, event: &HookInput, records: &dyn Records) -> Result<(String, Vec<String>), String> {
    let session = session(provider, event)?;
    let id = event.tool_use_id.clone().unwrap_or_default();
    let failed = event.hook_event_name == "PostToolUseFailure";
    let tool = event.tool_name.clone().unwrap_or_default();
    let response = event.tool_response.clone().unwrap_or(Value::Null);
    let input = event.tool_input.clone().unwrap_or(Value::Null);
    let outcome = records.outcome(&tool, &response, failed);
    let edits = if failed {
        Vec::new()
    } else {
        records.edits(&tool, &input, &response)
    };
    session.log.append(&[Event::Observed {
        id,
        outcome,
        edits,
        output: None,
    }])?;
    Ok((String::new(), Vec::new()))
}

fn record(provider: &str, event: &HookInput) -> Result<(String, Vec<String>), String> {
    let session = session(provider, event)?;
    let held = session.log.hold()?;
    let mode = session.state.mode_for(Some(&session.id));
    let mut out = preamble(&session, held.so_far(), &mode);
    match event.hook_event_name.as_str() {
        "UserPromptSubmit" => {
            let prompt: String = event.prompt.clone().unwrap_or_default().chars().take(2000).collect();
            out.push(Event::Prompted { prompt });
        }
        "SessionEnd" => out.push(Event::Ended {}),
        _ => {}
    }
    held.append(&out)?;
    Ok((String::new(), Vec::new()))
}

/// Brings the log up to date from the vendor's transcript (outcomes a PostToolUse did not
/// report, the final message), evaluates the trace rows, and blocks a gating gap once.
fn stop(
    provider: &str,
    event: &HookInput,
    records: &dyn Records,
    store: Option<&TrustStore>,
) -> Result<(String, Vec<String>), String> {
    let session = session(provider, event)?;
    let layer = &session.layer;
    let bundle = loaded(Some(layer), None)?;
    // The whole record is read here (a line at a time), under its lock until the verdict is on it.
    let held = session.log.hold()?;
    let mut trace = held.trace()?;
    let mode = session.state.mode_for(Some(&session.id));
    let mut out = preamble(&session, held.so_far(), &mode);
    let logged = &trace;
    let transcript = event
        .transcript_path
        .as_deref()
        .and_then(|p| records.transcript(p, &bundle));
    if let Some(t) = &transcript {
        for step in &t.steps {
            let Some(known) = logged.steps.iter().rev().find(|s| s.id == step.id) else {
                continue;
            };
            let unknown = known.outcome.status == Status::Unknown && step.outcome.status != Status::Unknown;
            let missing_edits = known.edits.is_empty() && !step.edits.is_empty();
            // A command's output (a runner's count of tests run) is only in the transcript.
            let missing_output = known.output.is_none() && step.output.is_some();
            if unknown || missing_edits || missing_output {
                let outcome = if unknown {
                    step.outcome.clone()
                } else {
                    known.outcome.clone()
                };
                out.push(Event::Observed {
                    id: step.id.clone(),
                    outcome,
                    edits: step.edits.clone(),
                    output: step.output.clone(),
                });
            }
        }
    }
    let message = event
        .last_assistant_message
        .clone()
        .or_else(|| {
            transcript
                .as_ref()
                .and_then(|t| t.claim.as_ref().map(|c| c.message.clone()))
        })
        .unwrap_or_default();
    out.push(Event::Claimed {
        claim: Claim {
            message,
            result: None,
            is_error: false,
        },
    });
    for event in &out {
        trace.apply(event.clone());
    }
    let rows = bundle.rows_about(FactsKind::Trace);
    let mut results = bundle.evaluate_trace_rows(&rows, &trace, &workspace(&session), &serde_json::Map::new());
    if crate::trust::standing(store, layer) == Standing::Untrusted {
        // An untrusted project may add rows (they only block more) but not weaken the others.
        let without = loaded(None, None)?;
        let rows = without.rows_about(FactsKind::Trace);
        let shipped = without.evaluate_trace_rows(&rows, &trace, &workspace(&session), &serde_json::Map::new());
        results = stricter_rows(results, shipped);
    }
    out.push(Event::Verdict { rows: results.clone() });
    held.append(&out)?;
    let gaps: Vec<String> = results
        .iter()
        .filter(|r| r.severity == Severity::Gating && r.verdict == Verdict::Gap)
        .map(|r| {
            let remedy = bundle.remedy(&r.id).map(|m| format!(" {m}")).unwrap_or_default();
            format!("{}: {}.{remedy}", r.id, r.evidence)
        })
        .collect();
    if gaps.is_empty() {
        return Ok((String::new(), Vec::new()));
    }
    if event.stop_hook_active {
        // Blocking again could loop forever: let the stop through, on the record as a verdict.
        return Ok((
            String::new(),
            vec![format!(
                "sixfold: still not holding, stop let through: {}",
                gaps.join(" ")
            )],
        ));
    }
    let reason = format!("sixfold: {}", gaps.join(" "));
    Ok((json!({ "decision": "block", "reason": reason }).to_string(), Vec::new()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sixfold_core::decision::{DecidedBy, Decision};
    use std::path::Path;

    struct NoRecords;

    impl Records for NoRecords {
        fn edits(&self, _: &str, _: &Value, _: &Value) -> Vec<sixfold_core::trace::Edit> {
            Vec::new()
        }
        fn transcript(&self, _: &Path, _: &Bundle) -> Option<sixfold_core::trace::Trace> {
            None
        }
    }

    /// A call in a project whose `.sixfold/` the user trusts as it is now (as `sixfold mode set`
    /// leaves it).
    fn pre(project: &Path, tool: &str, input: Value) -> Value {
        let event = json!({
            "hook_event_name": "PreToolUse", "session_id": "s", "cwd": project,
            "tool_name": tool, "tool_input": input, "tool_use_id": "t1",
        });
        let store = TrustStore::at(project.join("trust.json"));
        let _ = store.record(project);
        let (out, _) = handle(
            "claude-code",
            event.to_string().as_bytes(),
            &NoRecords,
            Some(&store),
            None,
        );
        serde_json::from_str(&out).unwrap()
    }

    /// A call of `provider`'s, in a project whose `.sixfold/` is trusted or not.
    fn pre_as(provider: &str, project: &Path, tool: &str, input: Value, trusted: bool) -> Value {
        let event = json!({
            "hook_event_name": "PreToolUse", "session_id": "s", "cwd": project,
            "tool_name": tool, "tool_input": input, "tool_use_id": "t1",
        });
        let store = TrustStore::at(project.join("trust.json"));
        if trusted {
            store.record(project).unwrap();
        }
        let (out, _) = handle(provider, event.to_string().as_bytes(), &NoRecords, Some(&store), None);
        serde_json::from_str(&out).unwrap()
    }

    fn reason(answer: &Value) -> &str {
        answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
    }

    #[test]
    fn where_the_agent_cannot_ask_an_ask_is_a_deny_that_says_how_to_approve() {
        let t = project();
        let write = json!({"command": "echo hi > a.txt"});
        let codex = pre_as("codex", t.path(), "Bash", write.clone(), true);
        assert_eq!(decision(&codex), "deny", "{codex}");
        assert!(reason(&codex).contains("approval is needed"), "{codex}");
        assert!(
            reason(&codex).contains("sixfold rules add --allow 'echo hi > a.txt'"),
            "{codex}"
        );
        assert_eq!(decision(&pre_as("claude-code", t.path(), "Bash", write, true)), "ask");
        // What is allowed or refused is answered as it is.
        let read = json!({"command": "ls"});
        assert_eq!(decision(&pre_as("codex", t.path(), "Bash", read, true)), "allow");
    }

    /// A project's own provider file saying Codex can ask widens: not while it is untrusted.
    #[test]
    fn an_untrusted_project_cannot_say_its_agent_can_ask() {
        let t = project();
        std::fs::create_dir_all(t.path().join(".sixfold/providers")).unwrap();
        std::fs::write(
            t.path().join(".sixfold/providers/codex.toml"),
            "id = \"codex\"\n[binary]\nnames = [\"codex\"]\n[tools.Bash]\ncommand = \"command\"\n[hooks]\nformat = \"config-toml\"\nfile = \"config.toml\"\nevents = [\"PreToolUse\"]\nargs = [\"hook\", \"codex\"]\ncan_ask = true\n",
        )
        .unwrap();
        let write = json!({"command": "echo hi > a.txt"});
        assert_eq!(
            decision(&pre_as("codex", t.path(), "Bash", write.clone(), false)),
            "deny"
        );
        let trusted = pre_as("codex", t.path(), "Bash", write, true);
        assert_eq!(decision(&trusted), "ask", "{trusted}");
    }

    fn decision(answer: &Value) -> &str {
        answer["hookSpecificOutput"]["permissionDecision"].as_str().unwrap()
    }

    fn project() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join(".sixfold")).unwrap();
        t
    }

    /// Without a lease that counts cents, no record is read and no cents are noted, but each step
    /// that runs is still charged; a cents lease set later reads the record from where it stood,
    /// so the usage of the whole run is counted.
    #[test]
    fn the_record_is_read_only_under_a_cents_lease_and_then_from_where_it_stood() {
        let t = project();
        let transcript = t.path().join("transcript.jsonl");
        let line = |id: &str| {
            format!("{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"model\":\"claude-sonnet-4-5\",\"usage\":{{\"input_tokens\":100,\"output_tokens\":10}}}}}}\n")
        };
        std::fs::write(&transcript, format!("{}{}", line("a"), line("b"))).unwrap();
        let store = TrustStore::at(t.path().join("trust.json"));
        let call = |n: u32| {
            let event = json!({
                "hook_event_name": "PreToolUse", "session_id": "s", "cwd": t.path(),
                "transcript_path": transcript, "tool_name": "Bash",
                "tool_input": {"command": "ls"}, "tool_use_id": format!("t{n}"),
            });
            store.record(t.path()).unwrap();
            let (out, _) = handle(
                "claude-code",
                event.to_string().as_bytes(),
                &NoRecords,
                Some(&store),
                None,
            );
            let answer: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(decision(&answer), "allow", "{out}");
        };
        let so_far = || Log::new(t.path(), "s").hold().unwrap().so_far().clone();
        let mut state = State {
            mode: Some("workspace-write".into()),
            lease: Some(sixfold_core::lease::Lease {
                steps: Some(100),
                ..Default::default()
            }),
            ..State::default()
        };
        state.save(t.path()).unwrap();
        call(1);
        let before = so_far();
        assert_eq!(before.spent.steps, 1);
        assert!(before.read.is_empty() && before.spent.tokens.is_empty(), "{before:?}");
        let charged = Log::new(t.path(), "s").events();
        assert!(
            charged.iter().any(|e| matches!(
                e,
                Event::Charged {
                    steps: 1,
                    cents: None,
                    read: None,
                    ..
                }
            )),
            "{charged:?}"
        );
        // A cents lease from now on: the record is read from its start, both messages counted.
        state.lease = Some(sixfold_core::lease::Lease {
            steps: Some(100),
            cents: Some(1_000),
            ..Default::default()
        });
        state.save(t.path()).unwrap();
        call(2);
        let after = so_far();
        assert_eq!(after.spent.steps, 2);
        let tokens = after.spent.tokens["claude-sonnet-4-5"];
        assert_eq!((tokens.input, tokens.output), (200, 20), "{after:?}");
        assert_eq!(after.read.len(), 1);
    }

    #[test]
    fn unreadable_input_is_denied_with_the_reason() {
        for input in [&b"not json"[..], b"{}", b"[1,2]", b"{\"hook_event_name\": 3}"] {
            let (out, notes) = handle("claude-code", input, &NoRecords, None, None);
            let answer: Value = serde_json::from_str(&out).unwrap();
            assert_eq!(decision(&answer), "deny", "{out}");
            assert!(!notes.is_empty());
        }
    }

    #[test]
    fn a_broken_bundle_denies() {
        let t = project();
        std::fs::create_dir_all(t.path().join(".sixfold/modes")).unwrap();
        std::fs::write(t.path().join(".sixfold/modes/bad.toml"), "id = [").unwrap();
        let answer = pre(t.path(), "Read", json!({"file_path": "a"}));
        assert_eq!(decision(&answer), "deny");
        assert!(answer["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("bad.toml"));
    }

    #[test]
    fn an_active_mode_that_is_gone_denies() {
        let t = project();
        std::fs::write(t.path().join(".sixfold/state.toml"), "mode = \"vanished\"\n").unwrap();
        assert_eq!(decision(&pre(t.path(), "Read", json!({"file_path": "a"}))), "deny");
    }

    #[test]
    fn a_tool_nobody_describes_is_judged_conservatively() {
        let t = project();
        std::fs::write(t.path().join(".sixfold/state.toml"), "mode = \"workspace-write\"\n").unwrap();
        assert_eq!(decision(&pre(t.path(), "BrandNewTool", json!({}))), "deny");
        assert_eq!(decision(&pre(t.path(), "mcp__docs__search", json!({}))), "deny");
        assert_eq!(
            decision(&pre(t.path(), "Read", json!({"file_path": "src/a.rs"}))),
            "allow"
        );
    }

    #[test]
    fn sixfolds_own_commands_and_files_are_protected() {
        let t = project();
        std::fs::write(t.path().join(".sixfold/state.toml"), "mode = \"workspace-write\"\n").unwrap();
        assert_eq!(
            decision(&pre(t.path(), "Bash", json!({"command": "sixfold mode set full"}))),
            "deny"
        );
        let state = t.path().join(".sixfold/state.toml");
        assert_eq!(
            decision(&pre(
                t.path(),
                "Write",
                json!({"file_path": state, "content": "mode = \"full\""})
            )),
            "deny"
        );
    }

    #[test]
    fn patterns_limit_spawns_per_session() {
        let t = project();
        std::fs::write(
            t.path().join(".sixfold/state.toml"),
            "mode = \"workspace-write\"\npattern = \"keeps-helpers\"\n",
        )
        .unwrap();
        assert_eq!(
            decision(&pre(t.path(), "Task", json!({"subagent_type": "Explore"}))),
            "allow"
        );
        assert_eq!(
            decision(&pre(t.path(), "Task", json!({"subagent_type": "general-purpose"}))),
            "deny"
        );
        std::fs::write(
            t.path().join(".sixfold/state.toml"),
            "mode = \"workspace-write\"\npattern = \"plan-and-execute\"\n",
        )
        .unwrap();
        // One spawn was allowed in this session already (Explore, above); plan-and-execute allows one.
        assert_eq!(
            decision(&pre(t.path(), "Task", json!({"subagent_type": "executor"}))),
            "deny"
        );
    }

    /// Session `s` of the project at `root` has an allowed edit of `a.rs` on its record, and no
    /// suite run after it.
    fn log_an_allowed_edit(root: &Path) {
        Log::new(root, "s")
            .append(&[Event::Judged {
                step: Box::new(Step {
                    id: "e".into(),
                    tool: "Write".into(),
                    effects: sixfold_core::effects::EffectProfile {
                        writes: vec![root.join("a.rs").to_string_lossy().into_owned()],
                        ..Default::default()
                    },
                    ..Step::default()
                }),
                judgement: Judgement {
                    decision: Decision::Allow,
                    reason: String::new(),
                    rules: vec![],
                    mode: "workspace-write".into(),
                    by: DecidedBy::Rules,
                },
            }])
            .unwrap();
    }

    #[test]
    fn stop_does_not_block_twice() {
        let t = project();
        log_an_allowed_edit(t.path());
        let stop = |active: bool| {
            let event = json!({"hook_event_name": "Stop", "session_id": "s", "cwd": t.path(),
                "stop_hook_active": active, "last_assistant_message": "Done, all tests pass."});
            handle("claude-code", event.to_string().as_bytes(), &NoRecords, None, None).0
        };
        let first: Value = serde_json::from_str(&stop(false)).unwrap();
        assert_eq!(first["decision"], "block");
        assert!(
            first["reason"].as_str().unwrap().contains("Run the test suite"),
            "{first}"
        );
        assert_eq!(stop(true), "", "a stop that was already blocked goes through");
    }

    /// An untrusted project that drops a shipped row (its policy redefined without it) still
    /// has the claim blocked; trusted, its redefinition stands.
    #[test]
    fn an_untrusted_project_cannot_drop_the_stop_hooks_rows() {
        let t = project();
        std::fs::create_dir_all(t.path().join(".sixfold/policies/invariants")).unwrap();
        std::fs::write(
            t.path()
                .join(".sixfold/policies/invariants/suite-before-success-claim.toml"),
            "id = \"suite-before-success-claim\"\n",
        )
        .unwrap();
        log_an_allowed_edit(t.path());
        let store = TrustStore::at(t.path().join("trust.json"));
        let stop = || {
            let event = json!({"hook_event_name": "Stop", "session_id": "s", "cwd": t.path(),
                "stop_hook_active": false, "last_assistant_message": "Done, all tests pass."});
            handle(
                "claude-code",
                event.to_string().as_bytes(),
                &NoRecords,
                Some(&store),
                None,
            )
            .0
        };
        let untrusted: Value = serde_json::from_str(&stop()).unwrap();
        assert_eq!(untrusted["decision"], "block", "{untrusted}");
        store.record(t.path()).unwrap();
        assert_eq!(stop(), "", "trusted, the project's redefinition stands");
    }

    /// A PreToolUse of session `s`, with more fields of the hook input.
    fn call(project: &Path, id: &str, tool: &str, input: Value, more: Value) -> Value {
        let mut event = json!({
            "hook_event_name": "PreToolUse", "session_id": "s", "cwd": project,
            "tool_name": tool, "tool_input": input, "tool_use_id": id,
        });
        if let (Some(e), Some(m)) = (event.as_object_mut(), more.as_object()) {
            e.extend(m.clone());
        }
        // The project's `.sixfold/` trusted as it is (as `sixfold lease set` leaves it).
        let store = TrustStore::at(project.join("trust.json"));
        let _ = store.record(project);
        let (out, _) = handle(
            "claude-code",
            event.to_string().as_bytes(),
            &NoRecords,
            Some(&store),
            None,
        );
        serde_json::from_str(&out).unwrap()
    }

    fn leased_project(state: &str) -> tempfile::TempDir {
        let t = project();
        std::fs::write(t.path().join(".sixfold/state.toml"), state).unwrap();
        t
    }

    fn read(project: &Path, id: &str, more: Value) -> Value {
        call(project, id, "Read", json!({"file_path": project.join("a.rs")}), more)
    }

    fn events(project: &Path) -> Vec<Value> {
        std::fs::read_to_string(project.join(".sixfold/runs/s.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_step_lease_refuses_the_step_after_it_is_spent_and_names_what_ran_out() {
        let t = leased_project("mode = \"workspace-write\"\n[lease]\nsteps = 2\n");
        assert_eq!(decision(&read(t.path(), "t1", json!({}))), "allow");
        assert_eq!(decision(&read(t.path(), "t2", json!({}))), "allow");
        let third = read(t.path(), "t3", json!({}));
        assert_eq!(decision(&third), "deny");
        assert!(reason(&third).contains("steps ran out (2 of 2"), "{third}");
        let log = events(t.path());
        let held: Vec<&Value> = log.iter().filter(|e| e["event"] == "held").collect();
        assert_eq!(held.len(), 1);
        assert_eq!(held[0]["what"], "steps");
        // A refused step costs nothing: still two steps charged.
        let steps: u64 = log
            .iter()
            .filter(|e| e["event"] == "charged")
            .map(|e| e["steps"].as_u64().unwrap())
            .sum();
        assert_eq!(steps, 2);
    }

    #[test]
    fn a_step_refused_by_the_mode_costs_no_step() {
        let t = leased_project("mode = \"read-only\"\n[lease]\nsteps = 1\n");
        let write = json!({"file_path": t.path().join("a.rs"), "content": "x"});
        assert_eq!(decision(&call(t.path(), "w", "Write", write, json!({}))), "deny");
        // The one step the lease gives is still there.
        assert_eq!(decision(&read(t.path(), "r", json!({}))), "allow");
        assert_eq!(decision(&read(t.path(), "r2", json!({}))), "deny");
    }

    /// A transcript as Claude Code writes it: one message's usage on each of its lines.
    fn transcript(path: &Path, messages: &[(&str, &str, u64, u64)]) {
        let mut text = String::new();
        for (id, model, input, output) in messages {
            for _ in 0..2 {
                text.push_str(
                    &json!({"type": "assistant", "message": {"id": id, "model": model,
                    "usage": {"input_tokens": input, "output_tokens": output,
                    "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}})
                    .to_string(),
                );
                text.push('\n');
            }
        }
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_cents_lease_is_charged_from_the_transcript_and_refuses_unknown_cents() {
        let t = leased_project("mode = \"workspace-write\"\n[lease]\ncents = 2\n");
        let record = t.path().join("transcript.jsonl");
        let more = json!({"transcript_path": record});
        // 1000 input and 500 output tokens of claude-sonnet-4-5: 1.05 cents (each message once,
        // though written twice).
        transcript(&record, &[("m1", "claude-sonnet-4-5", 1000, 500)]);
        assert_eq!(decision(&read(t.path(), "t1", more.clone())), "allow");
        // Nothing new: still 1.05 cents, below the lease.
        assert_eq!(decision(&read(t.path(), "t2", more.clone())), "allow");
        transcript(
            &record,
            &[
                ("m1", "claude-sonnet-4-5", 1000, 500),
                ("m2", "claude-sonnet-4-5", 1000, 500),
            ],
        );
        let over = read(t.path(), "t3", more);
        assert_eq!(decision(&over), "deny", "{over}");
        assert!(reason(&over).contains("cents ran out (2.10 of 2"), "{over}");
        // The record was read from where it stopped, never twice.
        let charged: Vec<Value> = events(t.path())
            .into_iter()
            .filter(|e| e["event"] == "charged")
            .collect();
        let input: u64 = charged
            .iter()
            .filter_map(|e| e["tokens"]["claude-sonnet-4-5"]["input"].as_u64())
            .sum();
        assert_eq!(input, 2000);

        // A model with no price, or no transcript at all: the cents are unknown, so refused.
        let t = leased_project("mode = \"workspace-write\"\n[lease]\ncents = 2\n");
        let record = t.path().join("transcript.jsonl");
        transcript(&record, &[("m1", "some-model", 1, 1)]);
        let unpriced = read(t.path(), "t1", json!({"transcript_path": record}));
        assert_eq!(decision(&unpriced), "deny");
        assert!(reason(&unpriced).contains("no price"), "{unpriced}");
        let t = leased_project("mode = \"workspace-write\"\n[lease]\ncents = 2\n");
        assert_eq!(decision(&read(t.path(), "t1", json!({}))), "deny");
        // A transcript not made yet (Claude Code writes it after the first call's hook may run):
        // nothing to charge before any step ran; once it appears it is read from its start.
        let t = leased_project("mode = \"workspace-write\"\n[lease]\ncents = 2\n");
        let record = t.path().join("later.jsonl");
        let more = json!({"transcript_path": record});
        assert_eq!(decision(&read(t.path(), "t1", more.clone())), "allow");
        transcript(
            &record,
            &[
                ("m1", "claude-sonnet-4-5", 1000, 500),
                ("m2", "claude-sonnet-4-5", 1000, 500),
            ],
        );
        let over = read(t.path(), "t2", more);
        assert!(reason(&over).contains("cents ran out (2.10 of 2"), "{over}");
        // Once a step ran, a record that is not there is one removed: the cents are unknown.
        let t = leased_project("mode = \"workspace-write\"\n[lease]\ncents = 2\n");
        let record = t.path().join("later.jsonl");
        let more = json!({"transcript_path": record});
        assert_eq!(decision(&read(t.path(), "t1", more.clone())), "allow");
        let gone = read(t.path(), "t2", more);
        assert_eq!(decision(&gone), "deny", "{gone}");
        assert!(reason(&gone).contains("cannot be counted"), "{gone}");
        // A link to nowhere where the record should be is not a record not made yet.
        let t = leased_project("mode = \"workspace-write\"\n[lease]\ncents = 2\n");
        let record = t.path().join("linked.jsonl");
        std::os::unix::fs::symlink(t.path().join("nowhere"), &record).unwrap();
        assert_eq!(
            decision(&read(t.path(), "t1", json!({"transcript_path": record}))),
            "deny"
        );
        // Without a cents bound, an unreadable transcript does not matter.
        let t = leased_project("mode = \"workspace-write\"\n[lease]\nsteps = 5\n");
        assert_eq!(decision(&read(t.path(), "t1", json!({}))), "allow");
    }

    #[test]
    fn a_helper_is_held_to_its_carve_and_its_parent_goes_on() {
        // orchestrator-workers carves a fifth of what is left: 2 of 11 steps.
        let t = leased_project("mode = \"workspace-write\"\npattern = \"orchestrator-workers\"\n[lease]\nsteps = 11\n");
        let spawn = call(
            t.path(),
            "spawn",
            "Agent",
            json!({"subagent_type": "general-purpose", "prompt": "x"}),
            json!({}),
        );
        assert_eq!(decision(&spawn), "allow", "{spawn}");
        let carved: Vec<Value> = events(t.path())
            .into_iter()
            .filter(|e| e["event"] == "carved")
            .collect();
        assert_eq!(carved.len(), 1);
        assert_eq!(carved[0]["lease"]["steps"], 2);
        let helper = json!({"agent_id": "a1", "agent_type": "general-purpose"});
        assert_eq!(decision(&read(t.path(), "h1", helper.clone())), "allow");
        assert_eq!(decision(&read(t.path(), "h2", helper.clone())), "allow");
        let spent = read(t.path(), "h3", helper);
        assert_eq!(decision(&spent), "deny");
        assert!(
            reason(&spent).contains("carve of the helper spawned by `spawn`"),
            "{spent}"
        );
        // The parent's own calls are charged to it.
        assert_eq!(decision(&read(t.path(), "p1", json!({}))), "allow");
        // The parent had 11 - 1 (the spawn) - 2 (carved) = 8 steps left after the spawn.
        for i in 0..7 {
            assert_eq!(decision(&read(t.path(), &format!("p{}", i + 2), json!({}))), "allow");
        }
        assert_eq!(decision(&read(t.path(), "p9", json!({}))), "deny");
    }
}
