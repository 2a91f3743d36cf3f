//! A call's judgement explained (`sixfold judge --explain`, the role of `opa eval --explain`):
//! for each bundle the call is judged with, the effects as judged, the ceiling check, each rule
//! of the mode considered in order with whether it matched and why, the mode's judgement, and
//! what the one path made of it; then the judgement that stands.
//!
//! A separate function, so the normal path pays nothing for it: each rule is judged alone (and
//! each of its conditions alone where it did not match) by the same code that judges it there.

use super::{judge, judge_in, mapped, Call, Judged, Layers, Place, Sandboxing, Under};
use crate::decision::{DecidedBy, Decision, Judgement};
use crate::effects::{EffectProfile, Effects};
use crate::judge::{Ceiling, Context, Judge, Rule, When};
use crate::script::ScriptHost;
use serde::Serialize;
use std::cell::OnceCell;
use std::sync::Arc;

/// A call's judgement, explained.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// Each bundle the call was judged with, in the order the one path judges them.
    pub considered: Vec<Considered>,
    /// The judgement that stands (narrowed, where the project's layer is not trusted).
    pub judged: Judged,
}

/// The call judged with one bundle.
#[derive(Debug, Clone, Serialize)]
pub struct Considered {
    /// Which bundle: `layered` (with the project's layer, or the only one), `without` (without
    /// the untrusted project's layer).
    pub layer: &'static str,
    /// The mode judged under.
    pub mode: String,
    /// The effects as judged (contained where the command runs in the sandbox).
    pub effects: Option<EffectProfile>,
    /// What lies beyond the mode's ceiling, in words; empty when the step is within it.
    pub ceiling: Vec<String>,
    /// Each of the mode's rules, in order.
    pub rules: Vec<RuleTrace>,
    /// The mode's judgement of the effects: the ceiling, its rules, or its default.
    pub by_mode: Option<Judgement>,
    /// The one path's judgement with this bundle: kept rules, the approved-ask fallback, "not
    /// contained: why" and the pattern's spawn limit applied.
    pub judgement: Judgement,
}

/// One rule considered.
#[derive(Debug, Clone, Serialize)]
pub struct RuleTrace {
    /// `OWNER/ID`.
    pub id: String,
    /// What it decides when it matches.
    pub decision: Decision,
    /// Whether it matched.
    pub matched: bool,
    /// Why: its reason where it matched, else the conditions that did not hold.
    pub why: String,
}

/// Explains the judgement of `call`, as [`judge`] makes it.
///
/// ```
/// use sixfold_core::call::{explain, Call, Called, Layers, Sandboxing, Under};
/// use sixfold_core::{Bundle, Context, Decision, Workspace};
/// let (bundle, _) = Bundle::load(&[sixfold_core::shipped::source()]);
/// let context = Context::new(Workspace::new("/w"));
/// let input = serde_json::json!({"file_path": "/etc/hosts", "content": "x"});
/// let call = Call {
///     called: Called::Tool { provider: "claude-code", name: "Write", input: &input },
///     id: "t1", cwd: std::path::Path::new("/w"), context: &context, planned_writes: None, spawns: 0, leasing: None,
/// };
/// let under = Under { bundle: &bundle, mode: "read-only", pattern: "single" };
/// let explained = explain(&call, Layers { layered: under, without: None }, Sandboxing::default());
/// assert_eq!(explained.judged.judgement.decision, Decision::Refuse);
/// let considered = &explained.considered[0];
/// assert!(!considered.ceiling.is_empty(), "`read-only` writes nothing: beyond its ceiling");
/// assert!(considered.rules.iter().all(|r| !r.why.is_empty()), "each rule says why");
/// ```
pub fn explain(call: &Call<'_>, layers: Layers<'_>, sandboxing: Sandboxing<'_>) -> Explanation {
    let place = Place {
        under: layers.without.unwrap_or(layers.layered),
        with_project: layers.without.is_none(),
        sandboxing,
        resolved: OnceCell::new(),
    };
    let mut considered = Vec::new();
    if let Some(without) = layers.without {
        considered.push(consider("without", call, without, &place));
    }
    considered.insert(0, consider("layered", call, layers.layered, &place));
    Explanation {
        considered,
        judged: judge(call, layers, sandboxing),
    }
}

fn consider(layer: &'static str, call: &Call<'_>, under: Under<'_>, place: &Place<'_>) -> Considered {
    let mut out = Considered {
        layer,
        mode: under.mode.to_string(),
        effects: None,
        ceiling: Vec::new(),
        rules: Vec::new(),
        by_mode: None,
        judgement: super::unjudgeable(under.mode, ""),
    };
    let one = match judge_in(call, under, place, mapped(under.bundle, &call.called, call.cwd)) {
        Ok(one) => one,
        Err(why) => {
            out.judgement = super::unjudgeable(under.mode, &why);
            return out;
        }
    };
    let context = call.context;
    let effects = one.step.effects.resolve(&context.workspace);
    if let Some(mode) = under.bundle.mode(under.mode) {
        // Every rule, those a load left unread too (one that cannot be read makes the mode's
        // judgement below an unjudgeable refusal that says so).
        let host = under.bundle.host();
        let judge = mode.every_rule(host).unwrap_or(std::borrow::Cow::Borrowed(&mode.judge));
        out.ceiling = judge.ceiling.exceeded(&effects, &context.workspace);
        out.rules = judge
            .rules
            .iter()
            .map(|rule| trace(&judge, rule, &effects, context, host))
            .collect();
    }
    out.by_mode = Some(under.bundle.judge_effects(under.mode, &effects, context));
    out.effects = Some(one.step.effects);
    out.judgement = one.judgement;
    out
}

/// One rule judged alone (no ceiling, so only it can decide); where it did not match, each of
/// its conditions alone, to say which did not hold.
fn trace(judge: &Judge, rule: &Arc<Rule>, effects: &Effects, context: &Context, host: &ScriptHost) -> RuleTrace {
    let alone = |when: When, with_script: bool| {
        let only = Judge {
            mode: judge.mode.clone(),
            default: judge.default,
            ceiling: Ceiling::default(),
            rules: vec![Arc::new(Rule {
                id: rule.id.clone(),
                decision: rule.decision,
                reason: rule.reason.clone(),
                when,
                script: if with_script { rule.script.clone() } else { None },
                ceiling: rule.ceiling,
            })],
        };
        only.judge(effects, context, host)
    };
    let whole = alone(rule.when.clone(), true);
    let matched = whole.by != DecidedBy::Default;
    let why = if matched {
        whole.reason
    } else {
        let w = &rule.when;
        let conditions: [(&str, When); 6] = [
            (
                "no place it reads fits `reads`",
                When {
                    reads: w.reads.clone(),
                    ..When::default()
                },
            ),
            (
                "no place it writes fits `writes`",
                When {
                    writes: w.writes.clone(),
                    ..When::default()
                },
            ),
            (
                "`reaches` is not as the rule asks",
                When {
                    reaches: w.reaches,
                    ..When::default()
                },
            ),
            (
                "`reversible` is not as the rule asks",
                When {
                    reversible: w.reversible,
                    ..When::default()
                },
            ),
            (
                "`contained` is not as the rule asks",
                When {
                    contained: w.contained,
                    ..When::default()
                },
            ),
            (
                "`costs` is not as the rule asks",
                When {
                    costs: w.costs,
                    ..When::default()
                },
            ),
        ];
        let set = [
            w.reads.is_some(),
            w.writes.is_some(),
            w.reaches.is_some(),
            w.reversible.is_some(),
            w.contained.is_some(),
            w.costs.is_some(),
        ];
        let failing: Vec<&str> = conditions
            .into_iter()
            .zip(set)
            .filter(|(_, set)| *set)
            .filter(|((_, when), _)| alone(when.clone(), false).by == DecidedBy::Default)
            .map(|((words, _), _)| words)
            .collect();
        if failing.is_empty() {
            "its conditions hold, but its script said it does not apply".to_string()
        } else {
            failing.join("; ")
        }
    };
    RuleTrace {
        id: rule.id.clone(),
        decision: rule.decision,
        matched,
        why,
    }
}
