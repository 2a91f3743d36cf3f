//! OpenCode's asks, answered through sixfold's approvals while its plugin waits.
//!
//! `opencode run` rejects every ask of its own, so a call sixfold judges `ask` is not left to it:
//! the hook answers the plugin `ask` with how long a person has (`wait_secs`, the mode's ask
//! timeout), and the plugin asks again with the event `approval`. That second hook process finds
//! the ask on the session's record (the record is the authority, not the plugin's word), parks
//! it in `.sixfold/approvals/` as `sixfold serve-tools` does, and waits until a person answers
//! with `sixfold approvals answer` or the timeout refuses it; the answer goes on the record. The
//! hook layer judges; the approvals are the tools layer's, so the CLI joins the two here.

use serde_json::json;
use sixfold_core::call::Sandboxes;
use sixfold_core::decision::Decision;
use sixfold_core::trace::{Event, Outcome, Status};
use sixfold_hook::log::Log;
use sixfold_hook::opencode::{self, plugin_answer, PluginEvent};
use sixfold_hook::Records;
use sixfold_tools::approvals::{Answer, Pending};
use std::time::Duration;

/// How often a waiting ask looks for its answer.
const POLL: Duration = Duration::from_millis(200);

/// Handles one event of sixfold's OpenCode plugin: the text to print on stdout, and notes.
pub(crate) fn handle(input: &[u8], records: &dyn Records, sandboxes: Option<&dyn Sandboxes>) -> (String, Vec<String>) {
    let event: Option<PluginEvent> = serde_json::from_slice(input).ok();
    if let Some(event) = event.as_ref().filter(|e| e.hook_event_name == opencode::APPROVAL) {
        return match approval(event) {
            Ok(answer) => (answer, Vec::new()),
            Err(why) => {
                let reason = format!("sixfold: could not wait for a person's answer, so the call is refused: {why}");
                (plugin_answer("deny", &reason, None), vec![reason])
            }
        };
    }
    let (answer, notes) = opencode::handle(input, records, sandboxes);
    let asked = serde_json::from_str::<serde_json::Value>(&answer)
        .ok()
        .filter(|a| a.get("decision").and_then(serde_json::Value::as_str) == Some("ask"));
    let (Some(mut asked), Some(event)) = (asked, event) else {
        return (answer, notes);
    };
    // How long a person has: the mode's ask timeout, as for a governed run's asks.
    match ask_timeout(&event) {
        Ok(timeout) => {
            if let Some(map) = asked.as_object_mut() {
                map.insert("wait_secs".into(), json!(timeout.as_secs()));
            }
            (asked.to_string(), notes)
        }
        Err(why) => {
            let reason = format!("sixfold: could not wait for a person's answer, so the call is refused: {why}");
            (plugin_answer("deny", &reason, None), vec![reason])
        }
    }
}

/// The project and the session of a plugin event.
fn placed(event: &PluginEvent) -> Result<(std::path::PathBuf, String), String> {
    let cwd = event.cwd().ok_or("the event names no directory")?;
    if !cwd.is_absolute() {
        return Err(format!("the event's directory `{}` is not absolute", cwd.display()));
    }
    let project = sixfold_core::project::place(&cwd)?;
    let session = event.session_id.clone().ok_or("the event names no session")?;
    Ok((project, session))
}

/// The ask timeout of the session's mode (the mode's `ask_timeout_secs`, else the governed
/// tools' default).
fn ask_timeout(event: &PluginEvent) -> Result<Duration, String> {
    let (project, session) = placed(event)?;
    let state = sixfold_hook::state::State::load(&project)?;
    let mode = state.mode_for(Some(&session));
    let (bundle, _) = sixfold_hook::load_bundle(&project);
    Ok(bundle
        .mode(&mode)
        .and_then(|m| m.behaviour.ask_timeout_secs)
        .map(Duration::from_secs)
        .unwrap_or(sixfold_tools::DEFAULT_ASK_TIMEOUT))
}

/// Parks the call the session's record says was asked, waits for a person, and answers.
fn approval(event: &PluginEvent) -> Result<String, String> {
    let (project, session) = placed(event)?;
    let call = event.call_id.clone().ok_or("the event names no call")?;
    let log = Log::new(&project, &session);
    let events = log.events();
    // INVARIANT (fail closed): only a call whose last judgement on the record is `ask`, and that
    // nobody answered yet, waits for a person; anything else is refused.
    let judged = events.iter().rev().find_map(|e| match e {
        Event::Judged { step, judgement } if step.id == call => Some((step, judgement)),
        _ => None,
    });
    let Some((step, judgement)) = judged.filter(|(_, j)| j.decision == Decision::Ask) else {
        return Err(format!("the session's record has no ask for call `{call}`"));
    };
    if events
        .iter()
        .any(|e| matches!(e, Event::Answered { id, .. } if *id == call))
    {
        return Err(format!("call `{call}` was answered already"));
    }
    let timeout = ask_timeout(event)?;
    let asked_at = sixfold_tools::approvals::now();
    let pending = Pending {
        id: Pending::new_id(),
        session,
        tool: step.tool.clone(),
        arguments: event.args.clone().unwrap_or_default(),
        act: step.act.text.clone(),
        effects: step.effects.clone(),
        rules: judgement.rules.clone(),
        reason: judgement.reason.clone(),
        mode: judgement.mode.clone(),
        asked_at,
        expires_at: asked_at + timeout.as_secs(),
    };
    pending.park(&project)?;
    // The judgement is done: the hook now waits as long as a person may take, and no longer.
    crate::hook_deadline::wait_for_a_person(timeout + Duration::from_secs(5));
    let answered = pending.wait(&project, timeout, POLL);
    let (word, by) = match &answered {
        Some(a) => (a.answer.word().to_string(), a.user.clone()),
        None => ("timeout".to_string(), String::new()),
    };
    let allowed = matches!(
        answered.as_ref().map(|a| a.answer),
        Some(Answer::Allow | Answer::AllowAndKeep)
    );
    let mut record = vec![Event::Answered {
        id: call.clone(),
        approval: pending.id,
        answer: word,
        by: by.clone(),
        kept: answered.as_ref().and_then(|a| a.kept.clone()),
    }];
    if !allowed {
        record.push(Event::Observed {
            id: call.clone(),
            outcome: Outcome {
                status: Status::Refused,
                exit_code: None,
            },
            edits: Vec::new(),
            output: None,
        });
    }
    // INVARIANT (fail closed): an answer that cannot be put on the record does not run the call.
    log.append(&record)?;
    let reason = &judgement.reason;
    Ok(match answered {
        Some(_) if allowed => plugin_answer("allow", &format!("sixfold: {by} answered allow ({reason})"), None),
        Some(_) => plugin_answer("deny", &format!("sixfold refused this call: {by} answered deny ({reason})"), None),
        None => plugin_answer(
            "deny",
            &format!(
                "sixfold refused this call: it asks ({reason}) and nobody answered within {} s (`sixfold approvals answer`)",
                timeout.as_secs()
            ),
            None,
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// How many asks a project has pending.
    fn pending_in(project: &Path) -> usize {
        sixfold_tools::approvals::list(project).map(|l| l.len()).unwrap_or(0)
    }

    #[test]
    fn an_approval_for_a_call_never_asked_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".sixfold")).unwrap();
        let event = json!({"hook_event_name": "approval", "session_id": "ses_1", "call_id": "call_9",
            "tool": "bash", "args": {"command": "ls"}, "directory": root});
        let (out, _) = handle(event.to_string().as_bytes(), &NoRecords, None);
        let answer: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(answer["decision"], "deny", "{answer}");
        assert!(
            answer["reason"].as_str().unwrap().contains("no ask for call `call_9`"),
            "{answer}"
        );
        assert_eq!(pending_in(&root), 0, "nothing was parked");
    }

    struct NoRecords;
    impl Records for NoRecords {
        fn edits(&self, _: &str, _: &serde_json::Value, _: &serde_json::Value) -> Vec<sixfold_core::trace::Edit> {
            Vec::new()
        }
        fn transcript(&self, _: &Path, _: &sixfold_core::bundle::Bundle) -> Option<sixfold_core::trace::Trace> {
            None
        }
    }
}
