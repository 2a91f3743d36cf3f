//! Act rules: decisions about a named act (a command prefix, a path glob, a domain) kept from a
//! person's approvals, applied on top of a mode's judgement of the effects.

use super::Bundle;
use crate::decision::{DecidedBy, Decision, Judgement};
use crate::effects::Effects;
use crate::judge::{Context, PathSet};
use crate::scope::Workspace;
use std::sync::Arc;

/// A compiled act rule.
#[derive(Debug, Clone)]
pub struct ActRule {
    /// `POLICY/ID`.
    pub id: String,
    /// What it decides.
    pub decision: Decision,
    /// The modes it applies in (`None`: all).
    pub modes: Option<Vec<String>>,
    pub(crate) matcher: ActMatcher,
    /// What it names, as written.
    pub act: String,
}

#[derive(Debug, Clone)]
pub(crate) enum ActMatcher {
    Command(Vec<String>),
    Path(Arc<PathSet>),
    Domain(String),
}

/// A step as act rules see it: what it does in words, the commands it runs, and its effects.
#[derive(Debug, Clone, Copy)]
pub struct ActView<'a> {
    /// `command`, `path`, `url`, `agent` or `tool`.
    pub kind: &'a str,
    /// The command line, path, URL, …
    pub text: &'a str,
    /// Each simple command's text, for command prefixes.
    pub commands: &'a [String],
}

impl ActRule {
    fn matches(&self, act: &ActView<'_>, effects: &Effects, workspace: &Workspace) -> bool {
        match &self.matcher {
            ActMatcher::Command(prefix) => act.commands.iter().any(|c| {
                let words: Vec<&str> = c.split_whitespace().collect();
                words.len() >= prefix.len() && prefix.iter().zip(&words).all(|(p, w)| p == w)
            }),
            ActMatcher::Path(set) => effects
                .read_places
                .iter()
                .chain(&effects.write_places)
                .any(|t| set.contains(t, workspace)),
            ActMatcher::Domain(domain) => {
                let urls = std::iter::once(act.text).chain(act.commands.iter().flat_map(|c| c.split_whitespace()));
                urls.filter_map(host_of)
                    .any(|host| host == domain.as_str() || host.ends_with(&format!(".{domain}")))
            }
        }
    }
}

/// The host of an `http(s)://` URL.
fn host_of(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("https://").or_else(|| text.strip_prefix("http://"))?;
    let end = rest.find(['/', ':', '?', '#']).unwrap_or(rest.len());
    let host = rest.get(..end)?;
    Some(host.rsplit('@').next().unwrap_or(host))
}

impl Bundle {
    /// The act rules, in load order.
    pub fn act_rules(&self) -> &[ActRule] {
        &self.acts
    }

    /// Judges a step: the mode's judgement of its effects, then the act rules that name it. An
    /// act rule stricter than the mode decides; a more permissive one decides only when the step
    /// is within the mode's ceiling (a kept `allow` never lets `read-only` write).
    pub fn judge_step(&self, mode: &str, act: &ActView<'_>, effects: &Effects, context: &Context) -> Judgement {
        let judged = self.judge_effects(mode, effects, context);
        let Some(m) = self.modes.get(mode) else { return judged };
        let matched: Vec<&ActRule> = self
            .acts
            .iter()
            .filter(|r| r.modes.as_ref().is_none_or(|ms| ms.iter().any(|x| x == mode)))
            .filter(|r| r.matches(act, effects, &context.workspace))
            .collect();
        let Some(decision) = matched.iter().map(|r| r.decision).max() else {
            return judged;
        };
        let deciding: Vec<&&ActRule> = matched.iter().filter(|r| r.decision == decision).collect();
        let names: Vec<String> = deciding.iter().map(|r| format!("`{}` ({})", r.act, r.id)).collect();
        // INVARIANT (fail closed): a kept rule widens a judgement only within the mode's ceiling.
        if decision < judged.decision && !m.judge.ceiling.exceeded(effects, &context.workspace).is_empty() {
            let mut kept = judged;
            kept.reason.push_str(&format!(
                "; the kept rule {} would {decision}, but not beyond the mode's ceiling",
                names.join(", ")
            ));
            return kept;
        }
        if decision == judged.decision {
            let mut same = judged;
            same.rules.extend(deciding.iter().map(|r| r.id.clone()));
            // A kept rule that decides the same is a working rule deciding: the ceiling stays
            // the ceiling, anything else becomes the rules'.
            if same.by != DecidedBy::Ceiling {
                same.by = DecidedBy::Rules;
            }
            return same;
        }
        Judgement {
            decision,
            reason: format!(
                "mode `{mode}` {} by the kept rule {} (the mode alone would {})",
                match decision {
                    Decision::Allow => "allows",
                    Decision::Ask => "asks",
                    Decision::Refuse => "refuses",
                },
                names.join(", "),
                judged.decision
            ),
            rules: deciding.iter().map(|r| r.id.clone()).collect(),
            mode: mode.to_string(),
            by: DecidedBy::Rules,
        }
    }
}
