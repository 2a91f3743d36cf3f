//! The loaded model: modes, policies and patterns as the rest of the engine uses them.

use crate::decision::{DecidedBy, Decision, Judgement};
use crate::format::{BehaviourFile, MetaTool, PatternFile};
use crate::judge::{Judge, Rule};
use std::sync::Arc;

/// A loaded mode.
#[derive(Debug, Clone)]
pub struct Mode {
    /// Its id.
    pub id: String,
    /// Its name for people.
    pub name: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// The environment mode it needs.
    pub environment: Option<String>,
    /// Who the agent is under it.
    pub behaviour: BehaviourFile,
    /// The mode it narrows.
    pub extends: Option<String>,
    /// Its own lease (the lease in force also takes the ones of the modes it extends).
    pub lease: crate::lease::Lease,
    /// Where it was written.
    pub file: String,
    /// Its compiled policy.
    pub(crate) judge: Judge,
    /// Its own rules of place globs alone that one judgement's load left unread, read by need.
    pub(crate) left: Option<super::unread_rules::LeftRules>,
}

impl Mode {
    /// Its compiled policy as a step of `effects` needs it: with the rules left unread that the
    /// step's places may reach read in. An error when one cannot be read (a forged entry).
    pub(crate) fn judge_for(
        &self,
        effects: &crate::effects::Effects,
        workspace: &crate::scope::Workspace,
        host: &crate::script::ScriptHost,
    ) -> Result<std::borrow::Cow<'_, Judge>, ()> {
        match &self.left {
            None => Ok(std::borrow::Cow::Borrowed(&self.judge)),
            Some(left) => left.judge_for(&self.judge, effects, workspace, host),
        }
    }

    /// Its compiled policy with every rule, as a whole load compiles it.
    pub(crate) fn every_rule(&self, host: &crate::script::ScriptHost) -> Result<std::borrow::Cow<'_, Judge>, ()> {
        match &self.left {
            None => Ok(std::borrow::Cow::Borrowed(&self.judge)),
            Some(left) => left.every(&self.judge, host).map(std::borrow::Cow::Owned),
        }
    }

    /// Where this mode and `other` (of this bundle or another) decide differently, over the
    /// whole effect space their rules span (see [`crate::effect_space`]).
    pub fn diff(&self, other: &Mode) -> crate::effect_space::Diff {
        crate::effect_space::diff_judges(&self.whole(), &other.whole())
    }

    /// What this mode decides in one cell of a space, worked out from which of its conditions
    /// the cell's classes meet (not by judging the cell's profile).
    pub fn outcome(
        &self,
        space: &crate::effect_space::Space,
        cell: crate::effect_space::Cell,
    ) -> crate::effect_space::Outcome {
        space.outcome(&self.whole(), cell)
    }

    /// Its compiled policy with every rule, for the effect space, which reads them all. The rules
    /// a one-judgement load leaves unread name no script, so no bundle's host is needed to read
    /// them; one that cannot be read leaves the policy as loaded (its judgements refuse).
    fn whole(&self) -> std::borrow::Cow<'_, Judge> {
        match &self.left {
            None => std::borrow::Cow::Borrowed(&self.judge),
            Some(_) => self
                .every_rule(&crate::script::ScriptHost::default())
                .unwrap_or(std::borrow::Cow::Borrowed(&self.judge)),
        }
    }
}

/// A loaded pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// As written.
    pub spec: PatternFile,
    /// Where it was written.
    pub file: String,
}

impl Pattern {
    /// Judges a request to spawn a sub-agent (`helper` is its name, where the agent gave one),
    /// given how many this session already spawned.
    pub fn judge_spawn(&self, helper: Option<&str>, spawned: u32) -> Judgement {
        let id = &self.spec.id;
        let refuse = |reason: String| Judgement {
            decision: Decision::Refuse,
            reason,
            rules: vec![format!("pattern/{id}")],
            mode: format!("pattern:{id}"),
            by: DecidedBy::Rules,
        };
        if !self.spec.meta_tools.contains(&MetaTool::Spawn) {
            return refuse(format!(
                "pattern `{id}` refuses: it offers no spawn meta-tool, so it cannot start sub-agents"
            ));
        }
        if let Some(helpers) = &self.spec.helpers {
            let named = helper.unwrap_or("");
            if !helpers.iter().any(|h| h == named) {
                return refuse(format!(
                    "pattern `{id}` refuses: it keeps only the helpers {}, and `{named}` is not one of them",
                    helpers.iter().map(|h| format!("`{h}`")).collect::<Vec<_>>().join(", ")
                ));
            }
        }
        if let Some(limit) = self.spec.limits.spawns {
            if spawned >= limit {
                return refuse(format!(
                    "pattern `{id}` refuses: it allows {limit} sub-agents per session and {spawned} were spawned already"
                ));
            }
        }
        Judgement {
            decision: Decision::Allow,
            reason: format!("pattern `{id}` allows spawning a sub-agent"),
            rules: vec![format!("pattern/{id}")],
            mode: format!("pattern:{id}"),
            by: DecidedBy::Rules,
        }
    }
}

/// A loaded policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Its id.
    pub id: String,
    /// What it is for.
    pub description: Option<String>,
    /// Where it was written.
    pub file: String,
    /// Its rules, applied by the modes that include it.
    pub(crate) rules: Vec<Arc<Rule>>,
    /// The ids of its rows.
    pub rows: Vec<String>,
    /// Its settings, as JSON.
    pub settings: serde_json::Value,
}
