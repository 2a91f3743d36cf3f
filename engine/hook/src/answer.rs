//! The PreToolUse answer: the one place a judgement becomes the agent CLI's answer, for every
//! adapter alike, so a rewrite of the call (`updatedInput`, to run it inside the sandbox) reaches
//! every agent CLI the same way.
//!
//! The answer is Claude Code's shape, which Codex reads too: `hookSpecificOutput` with
//! `permissionDecision` (`allow`, `ask`, `deny`) and its reason. Where the agent CLI cannot ask a
//! person (its provider file's `[hooks] can_ask = false`: Codex would run the call), an ask is
//! answered `deny`, with a reason that says a person's approval is needed and how to give it.

use serde_json::{json, Value};
use sixfold_core::decision::{Decision, Judgement};

/// How a judgement is answered, beside the judgement itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct Answering {
    /// True where the agent CLI cannot ask a person (its provider file's `[hooks] can_ask` is
    /// false): an ask is answered as a deny that says how to approve.
    pub(crate) cannot_ask: bool,
    /// The agent CLI's name, for the approval hint.
    pub(crate) agent: String,
    /// The act (its kind and text), for the approval hint (`sixfold rules add --allow …`).
    pub(crate) act: Option<(String, String)>,
    /// The tool input to run instead (`updatedInput`), where the call is rewritten (to run inside
    /// the sandbox); `None` runs it as the agent asked. A deny runs nothing, so it carries none;
    /// an allow or an ask does (a call a person approves runs rewritten too).
    pub(crate) updated_input: Option<Value>,
}

/// The PreToolUse answer for a judgement.
pub(crate) fn answer(judgement: &Judgement, how: &Answering) -> String {
    let (word, reason) = match judgement.decision {
        Decision::Allow => ("allow", judgement.reason.clone()),
        // INVARIANT (fail closed): where the agent CLI would run an `ask` without a person (Codex
        // runs it), an ask is a deny that says how a person approves.
        Decision::Ask if how.cannot_ask => ("deny", approval_hint(judgement, how)),
        Decision::Ask => ("ask", judgement.reason.clone()),
        Decision::Refuse => ("deny", judgement.reason.clone()),
    };
    let mut out = serde_json::Map::new();
    out.insert("hookEventName".into(), "PreToolUse".into());
    out.insert("permissionDecision".into(), word.into());
    out.insert("permissionDecisionReason".into(), format!("sixfold: {reason}").into());
    if let (Some(updated), "allow" | "ask") = (&how.updated_input, word) {
        out.insert("updatedInput".into(), updated.clone());
    }
    json!({ "hookSpecificOutput": out }).to_string()
}

/// The reason of an ask answered as a deny: a person's approval is needed, and how to give it.
/// A kept rule is offered for the acts kept rules name (a command prefix, a path glob).
fn approval_hint(judgement: &Judgement, how: &Answering) -> String {
    let agent = if how.agent.is_empty() {
        "this agent CLI"
    } else {
        how.agent.as_str()
    };
    let keep = match &how.act {
        Some((kind, text)) if matches!(kind.as_str(), "command" | "path") && !text.is_empty() => format!(
            " keep an approval with `sixfold rules add --allow {}` (add `--mode {}` for this mode only), or",
            sixfold_core::shell::quote(text),
            judgement.mode
        ),
        _ => String::new(),
    };
    let why = judgement.reason.trim_end_matches('.');
    format!(
        "{why}. A person's approval is needed, and {agent} cannot ask for it, so the call is refused. To approve it:{keep} run the agent governed by sixfold, where a person is asked"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use sixfold_core::decision::DecidedBy;

    fn judged(decision: Decision) -> Judgement {
        Judgement {
            decision,
            reason: "mode `ask` asks: writes inside the workspace".into(),
            rules: vec!["ask/writes-workspace".into()],
            mode: "ask".into(),
            by: DecidedBy::Rules,
        }
    }

    fn parsed(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn an_ask_is_a_deny_with_how_to_approve_where_the_agent_cannot_ask() {
        let how = Answering {
            cannot_ask: true,
            agent: "Codex".into(),
            act: Some(("command".into(), "echo hi > a.txt".into())),
            updated_input: None,
        };
        let out = parsed(&answer(&judged(Decision::Ask), &how));
        let said = &out["hookSpecificOutput"];
        assert_eq!(said["permissionDecision"], "deny");
        let reason = said["permissionDecisionReason"].as_str().unwrap();
        assert!(
            reason.starts_with("sixfold: mode `ask` asks: writes inside the workspace. A person"),
            "{reason}"
        );
        assert!(reason.contains("Codex cannot ask"), "{reason}");
        assert!(
            reason.contains("`sixfold rules add --allow 'echo hi > a.txt'` (add `--mode ask`"),
            "{reason}"
        );
        let can = Answering {
            cannot_ask: false,
            ..how
        };
        let out = parsed(&answer(&judged(Decision::Ask), &can));
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "ask");
    }

    #[test]
    fn a_kept_rule_is_offered_only_for_acts_kept_rules_name() {
        let how = Answering {
            cannot_ask: true,
            act: Some(("tool".into(), "docs/search".into())),
            ..Answering::default()
        };
        let reason = parsed(&answer(&judged(Decision::Ask), &how))["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(!reason.contains("rules add"), "{reason}");
        assert!(reason.contains("this agent CLI cannot ask"), "{reason}");
    }

    #[test]
    fn a_deny_carries_no_rewritten_input() {
        let how = Answering {
            updated_input: Some(json!({"command": "sixfold sandbox run -- ls"})),
            ..Answering::default()
        };
        for decision in [Decision::Allow, Decision::Ask] {
            let out = parsed(&answer(&judged(decision), &how));
            assert_eq!(
                out["hookSpecificOutput"]["updatedInput"]["command"], "sixfold sandbox run -- ls",
                "{out}"
            );
        }
        let cannot_ask = Answering {
            cannot_ask: true,
            ..how.clone()
        };
        for (decision, how) in [(Decision::Refuse, &how), (Decision::Ask, &cannot_ask)] {
            let out = parsed(&answer(&judged(decision), how));
            assert!(out["hookSpecificOutput"].get("updatedInput").is_none(), "{out}");
        }
    }
}
