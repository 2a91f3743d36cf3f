//! Act rules: decisions about a named act (a command prefix, a path glob, a domain) kept from a
//! person's approvals, applied on top of a mode's judgement of the effects.

use super::unread_acts::UnreadActs;
use super::Bundle;
use crate::classify::Part;
use crate::decision::{DecidedBy, Decision, Judgement};
use crate::effects::{EffectProfile, Effects, Profile};
use crate::format::ActRuleFile;
use crate::judge::{Context, PathSet};
use crate::scope::Place;
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
    /// Where it stands among every act rule: its policy's place in load order, then its own in
    /// the file (rules read later, by need, take their place among the others).
    pub(crate) order: (u32, u32),
}

impl ActRule {
    /// The kept command rule `file` of the policy `policy`, naming `command`.
    pub(crate) fn command(policy: &str, file: &ActRuleFile, command: &str, order: (u32, u32)) -> ActRule {
        ActRule {
            id: super::compile::qualified(policy, &file.id),
            decision: file.decision,
            modes: file.modes.clone(),
            matcher: ActMatcher::Command,
            act: command.to_string(),
            order,
        }
    }
}

/// A policy's kept command rules left unread, and where the policy stands.
#[derive(Debug, Clone)]
pub(crate) struct UnreadPolicy {
    pub(crate) policy: String,
    pub(crate) load: u32,
    pub(crate) acts: Arc<UnreadActs>,
    /// The policy's TOML, for rules its entry does not hold after all.
    pub(crate) text: super::source::Text,
}

#[derive(Debug, Clone)]
pub(crate) enum ActMatcher {
    /// The command prefix is the rule's act, split into words when a step is matched (a kept
    /// layer of a thousand commands is not split at every load).
    Command,
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
    /// A command line's simple commands as classified, each with its own effects: a kept
    /// command rule that widens covers only the parts it names (empty for other acts).
    pub parts: &'a [Part],
}

/// Whether a simple command's text starts with a command rule's words.
fn names(prefix: &str, text: &str) -> bool {
    // Every kept command rule is tried on every step, and most name another program: texts
    // whose first words start with different bytes differ there.
    let first = |t: &str| t.trim_start().bytes().next();
    if let (Some(p), Some(t)) = (first(prefix), first(text)) {
        if p != t {
            return false;
        }
    }
    let mut words = text.split_whitespace();
    prefix.split_whitespace().all(|p| words.next() == Some(p))
}

impl ActRule {
    fn matches(&self, act: &ActView<'_>, effects: &Effects, workspace: &Workspace) -> bool {
        match &self.matcher {
            ActMatcher::Command => act.commands.iter().any(|c| names(&self.act, c)),
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
    /// The rules marked `ceiling` (in any mode) whose path sets a kept path glob `act` may
    /// reach: a kept rule never widens past them, so `rules add` says so. Empty for an act
    /// that reaches none.
    ///
    /// ```
    /// let (bundle, _) = sixfold_core::Bundle::load(&[sixfold_core::shipped::source()]);
    /// assert!(bundle.ceiling_rules_reached("src/**").iter().any(|r| r == "secrets/reads-secret"));
    /// assert!(bundle.ceiling_rules_reached("docs/*.md").is_empty());
    /// ```
    pub fn ceiling_rules_reached(&self, act: &str) -> Vec<String> {
        let mut reached: Vec<String> = Vec::new();
        for m in self.modes.values() {
            for rule in m.judge.rules.iter().filter(|r| r.ceiling) {
                let sets = rule.when.reads.iter().chain(rule.when.writes.iter()).flatten();
                let hit = sets.into_iter().any(|matcher| match matcher {
                    crate::judge::PlaceMatcher::Paths(set) | crate::judge::PlaceMatcher::Covers(set) => {
                        set.may_meet_glob(act)
                    }
                    _ => false,
                });
                if hit && !reached.contains(&rule.id) {
                    reached.push(rule.id.clone());
                }
            }
        }
        reached
    }

    /// The act rules, in load order: all of them in a whole load; in one judgement's, not the
    /// command rules left in a stored layer (the judgement reads those by need).
    pub fn act_rules(&self) -> &[ActRule] {
        &self.acts
    }

    /// Judges a step: the mode's judgement of its effects, then the act rules that name it. An
    /// act rule stricter than the mode decides; a more permissive one decides only when the step
    /// is within the mode's ceiling (a kept `allow` never lets `read-only` write).
    pub fn judge_step(&self, mode: &str, act: &ActView<'_>, effects: &Effects, context: &Context) -> Judgement {
        let judged = self.judge_effects(mode, effects, context);
        let Some(m) = self.modes.get(mode) else { return judged };
        let Ok(read_now) = self.unread_naming(act) else {
            // INVARIANT (fail closed): a kept rule that cannot be read may have refused.
            return Judgement {
                decision: Decision::Refuse,
                reason: format!("mode `{mode}` cannot read the kept rules (run `sixfold check`)"),
                rules: Vec::new(),
                mode: mode.to_string(),
                by: DecidedBy::Unjudgeable,
            };
        };
        let acts = merged(&self.acts, &read_now);
        let matched: Vec<&ActRule> = acts
            .iter()
            .copied()
            .filter(|r| r.modes.as_ref().is_none_or(|ms| ms.iter().any(|x| x == mode)))
            .filter(|r| r.matches(act, effects, &context.workspace))
            .collect();
        let Some(decision) = matched.iter().map(|r| r.decision).max() else {
            return judged;
        };
        let deciding: Vec<&&ActRule> = matched.iter().filter(|r| r.decision == decision).collect();
        // INVARIANT (fail closed): a kept rule never widens past the mode's ceiling or a rule
        // marked `ceiling` (a secret read, a protected write): those lie outside what a person
        // can keep.
        if decision < judged.decision {
            if let Some(floor) = m.judge.floor(effects, context, &self.host) {
                if floor.decision > decision {
                    let names: Vec<String> = deciding.iter().map(|r| format!("`{}` ({})", r.act, r.id)).collect();
                    let mut kept = judged;
                    kept.reason.push_str(&format!(
                        "; the kept rule {} would {decision}, but not beyond the mode's ceiling ({}: secrets and protected paths lie outside it)",
                        names.join(", "),
                        floor.rules.join(", ")
                    ));
                    return kept;
                }
            }
        }
        // INVARIANT (fail closed): a kept command rule is about one simple command; where it
        // would widen, the line is judged part by part (`cargo test && curl …`).
        let by_command = deciding.iter().any(|r| matches!(r.matcher, ActMatcher::Command));
        if decision < judged.decision && by_command {
            return self.judge_parts(mode, act, effects, context, judged, &acts);
        }
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

    /// A command line judged part by part, for kept command rules that would widen it: a part
    /// a kept rule names takes the rule's decision when its own effects are within the mode's
    /// ceiling and its redirections stay inside the workspace (else the mode's judgement of
    /// them counts too); every other part takes the mode's judgement of its own effects. The
    /// strictest part decides, and never more permissively than the parts account for.
    fn judge_parts(
        &self,
        mode: &str,
        act: &ActView<'_>,
        effects: &Effects,
        context: &Context,
        judged: Judgement,
        acts: &[&ActRule],
    ) -> Judgement {
        let Some(m) = self.modes.get(mode) else { return judged };
        let workspace = &context.workspace;
        let kept: Vec<&ActRule> = acts
            .iter()
            .copied()
            .filter(|r| r.modes.as_ref().is_none_or(|ms| ms.iter().any(|x| x == mode)))
            .filter(|r| r.decision < judged.decision)
            .collect();
        let mut worst = Decision::Allow;
        let mut used: Vec<&ActRule> = Vec::new();
        let mut beyond: Vec<&ActRule> = Vec::new();
        let mut accounted = EffectProfile {
            contained: true,
            ..EffectProfile::default()
        };
        // The parts no kept rule covers, together: a rule about a combination (a secret read
        // and the network) still sees it.
        let mut rest = accounted.clone();
        for part in act.parts {
            join(&mut accounted, &part.effects);
            let own = part.effects.resolve(workspace);
            let alone = self.judge_effects(mode, &own, context).decision;
            let naming: Vec<&ActRule> = kept
                .iter()
                .copied()
                .filter(|r| matches!(&r.matcher, ActMatcher::Command if names(&r.act, &part.text)))
                .collect();
            let floor = m
                .judge
                .floor(&own, context, &self.host)
                .map_or(Decision::Allow, |f| f.decision);
            let decided = match naming.iter().map(|r| r.decision).max() {
                Some(d) if d < alone && d >= floor && m.judge.ceiling.exceeded(&own, workspace).is_empty() => {
                    let redirected = part.redirected.resolve(workspace);
                    let inside = redirected
                        .read_places
                        .iter()
                        .chain(&redirected.write_places)
                        .all(|t| matches!(t.place, Place::Root { .. }));
                    let redirections = self.judge_effects(mode, &redirected, context).decision;
                    used.extend(naming.iter().filter(|r| r.decision == d));
                    if inside && redirections < Decision::Refuse {
                        d
                    } else {
                        d.max(redirections).max(Decision::Ask)
                    }
                }
                Some(d) if d < alone => {
                    beyond.extend(naming.iter().filter(|r| r.decision == d));
                    join(&mut rest, &part.effects);
                    alone
                }
                _ => {
                    join(&mut rest, &part.effects);
                    alone
                }
            };
            worst = worst.max(decided);
        }
        worst = worst.max(self.judge_effects(mode, &rest.resolve(workspace), context).decision);
        // INVARIANT (fail closed): the whole line never below its floor (see `Judge::floor`).
        if let Some(floor) = m.judge.floor(effects, context, &self.host) {
            worst = worst.max(floor.decision);
        }
        // INVARIANT (fail closed): the parts must account for everything the line does.
        let whole = Profile::from(effects);
        let parts = Profile::from(&accounted.resolve(workspace));
        if act.parts.is_empty() || !whole.le(&parts) || used.is_empty() || worst >= judged.decision {
            let mut kept = judged;
            if used.is_empty() && !beyond.is_empty() {
                let names: Vec<String> = beyond.iter().map(|r| format!("`{}` ({})", r.act, r.id)).collect();
                kept.reason.push_str(&format!(
                    "; the kept rule {} would {}, but not beyond the mode's ceiling",
                    names.join(", "),
                    beyond.iter().map(|r| r.decision).min().unwrap_or(Decision::Allow)
                ));
            } else {
                kept.reason.push_str(
                    "; a kept command rule covers only the simple command it names, and the rest of the line decides",
                );
            }
            return kept;
        }
        used.dedup_by(|a, b| a.id == b.id);
        let names: Vec<String> = used.iter().map(|r| format!("`{}` ({})", r.act, r.id)).collect();
        Judgement {
            decision: worst,
            reason: format!(
                "mode `{mode}` {} by the kept rule {}, every other part of the line judged on its own (the mode alone would {})",
                match worst {
                    Decision::Allow => "allows",
                    Decision::Ask => "asks",
                    Decision::Refuse => "refuses",
                },
                names.join(", "),
                judged.decision
            ),
            rules: used.iter().map(|r| r.id.clone()).collect(),
            mode: mode.to_string(),
            by: DecidedBy::Rules,
        }
    }
}

impl Bundle {
    /// The kept command rules left unread that name a program `act` runs (see
    /// [`UnreadActs`]).
    fn unread_naming(&self, act: &ActView<'_>) -> Result<Vec<ActRule>, ()> {
        if self.unread_acts.is_empty() {
            return Ok(Vec::new());
        }
        // A command rule names a simple command by its words from the first on.
        let mut programs: Vec<&str> = act
            .commands
            .iter()
            .filter_map(|c| c.split_whitespace().next())
            .collect();
        programs.sort_unstable();
        programs.dedup();
        let mut found = Vec::new();
        for unread in &self.unread_acts {
            for (place, file, command) in unread.acts.naming(&programs, unread.text.as_ref())? {
                found.push(ActRule::command(
                    &unread.policy,
                    file.get_ref(),
                    &command,
                    (unread.load, place),
                ));
            }
        }
        Ok(found)
    }
}

/// Two lists of act rules, each in order, as one in order.
fn merged<'r>(read: &'r [ActRule], read_now: &'r [ActRule]) -> Vec<&'r ActRule> {
    let mut all: Vec<&ActRule> = read.iter().chain(read_now).collect();
    if !read_now.is_empty() {
        // Stable, and linear on two sorted runs.
        all.sort_by_key(|r| r.order);
    }
    all
}

/// Joins `other` into `into`: what either does.
fn join(into: &mut EffectProfile, other: &EffectProfile) {
    into.reads.extend(other.reads.iter().cloned());
    into.writes.extend(other.writes.iter().cloned());
    into.reaches |= other.reaches;
    into.costs |= other.costs;
    into.reversible &= other.reversible;
    into.contained &= other.contained;
}

#[cfg(test)]
mod tests {
    use super::names;

    proptest::proptest! {
        /// The first bytes' comparison only ever answers what walking the words answers.
        #[test]
        fn names_answers_as_the_words_do(prefix in "[ a-c\u{a0}é]{0,6}", text in "[ a-c\u{a0}é]{0,8}") {
            let mut words = text.split_whitespace();
            let walked = prefix.split_whitespace().all(|p| words.next() == Some(p));
            proptest::prop_assert_eq!(names(&prefix, &text), walked);
        }
    }

    /// A command rule names a simple command whose words start with the rule's, whatever the
    /// spacing; a longer word, a shorter command or another word is not named.
    #[test]
    fn a_prefix_names_a_command_word_by_word() {
        for (prefix, text) in [
            ("cargo test", "cargo test"),
            ("cargo test", "cargo  test --all"),
            ("cargo\ttest", " cargo test x"),
        ] {
            assert!(names(prefix, text), "{prefix:?} {text:?}");
        }
        for (prefix, text) in [
            ("cargo test", "cargo testx"),
            ("cargo test", "cargo"),
            ("cargo test", "cargo build test"),
            ("tool-1 run", "tool-10 run"),
        ] {
            assert!(!names(prefix, text), "{prefix:?} {text:?}");
        }
    }
}
