//! Examples: the effects-in, decision-out (and facts-in, verdict-out) cases bundle files carry,
//! run by `sixfold check`.

use super::read::{toml_table_to_json, Located};
use super::Bundle;
use crate::decision::{Decision, Judgement};
use crate::diag::Diagnostic;
use crate::effects::EffectProfile;
use crate::format::{JudgementExample, SpawnExample, VerdictExample};
use crate::judge::{Ceiling, Context, Judge};

#[derive(Debug, Clone)]
pub(crate) enum ExampleKind {
    Judgement {
        owner: Option<String>,
        example: JudgementExample,
    },
    Verdict(VerdictExample),
    Spawn {
        pattern: String,
        example: SpawnExample,
    },
    Command {
        rule: String,
        matches: Vec<String>,
        not_match: Vec<String>,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Example {
    pub(crate) at: Located,
    pub(crate) kind: ExampleKind,
}

impl Bundle {
    /// How many examples the bundle's files carry.
    pub fn example_count(&self) -> usize {
        self.examples.len()
    }

    /// Runs every example in the bundle; each one that fails is a diagnostic at its location.
    /// Scripts compiled on first use are compiled here first, and the functions rules and rows
    /// name in them checked.
    pub fn run_examples(&self) -> Vec<Diagnostic> {
        let mut failures: Vec<Diagnostic> = self.scripts.iter().filter_map(|s| self.host.check(s)).collect();
        for d in &self.deferred {
            if self.host.check(&d.script).is_none() && d.script.has_function(&d.function, d.arity) == Some(false) {
                failures.push(d.at.diagnostic());
            }
        }
        for example in &self.examples {
            let (expected, got, reason) = match &example.kind {
                ExampleKind::Judgement { owner, example: ex } => {
                    let mut context = Context::example();
                    if let serde_json::Value::Object(extra) = toml_table_to_json(&ex.context) {
                        context.extra = extra;
                    }
                    let judgement = match (ex.mode.as_deref(), owner) {
                        (Some(mode), _) => self.judge(mode, &ex.effects, &context),
                        (None, Some(policy)) => self.judge_with_policy(policy, &ex.effects, &context),
                        (None, None) => Judgement::refuse_unjudgeable("", "the example names no mode"),
                    };
                    (
                        ex.decision.to_string(),
                        judgement.decision.to_string(),
                        judgement.reason,
                    )
                }
                ExampleKind::Verdict(ex) => {
                    let facts = toml_table_to_json(&ex.facts);
                    let result = self.evaluate_rows(&[ex.row.as_str()], &facts);
                    let (verdict, evidence) = result
                        .first()
                        .map(|r| (r.verdict.to_string(), r.evidence.clone()))
                        .unwrap_or_default();
                    (ex.verdict.to_string(), verdict, evidence)
                }
                ExampleKind::Command {
                    rule,
                    matches,
                    not_match,
                } => {
                    let selected = |command: &str| -> Option<String> {
                        let line = crate::shell::parse(command);
                        let words = &line.commands.first()?.words;
                        let program = words.first()?.rsplit('/').next()?.to_string();
                        self.classifier.select(&program, words).map(|r| r.id.clone())
                    };
                    for command in matches {
                        // A command a rule claims must also be understood by it: its options listed,
                        // its script read.
                        let opaque = self.classifier.classify(command, std::path::Path::new("/w")).opaque;
                        if let Some(why) = opaque {
                            let mut d = example.at.diagnostic();
                            d.message = format!("{}: `{command}` should be understood, but {why}", d.message);
                            failures.push(d.with_hint("list the option in the rule's `options`, or fix the example"));
                        }
                        let got = selected(command);
                        if got.as_deref() != Some(rule.as_str()) {
                            let mut d = example.at.diagnostic();
                            d.message = format!(
                                "{}: `{command}` should match it, but {}",
                                d.message,
                                got.map(|g| format!("rule `{g}` classifies it"))
                                    .unwrap_or_else(|| "no rule classifies it".into())
                            );
                            failures.push(d.with_hint("fix the rule's `prefix`/`flags`, or the example"));
                        }
                    }
                    for command in not_match {
                        if selected(command).as_deref() == Some(rule.as_str()) {
                            let mut d = example.at.diagnostic();
                            d.message = format!("{}: `{command}` should not match it, but does", d.message);
                            failures.push(d.with_hint("fix the rule's `prefix`/`flags`, or the example"));
                        }
                    }
                    continue;
                }
                ExampleKind::Spawn { pattern, example: ex } => {
                    let judgement = match self.patterns.get(pattern) {
                        Some(p) => p.judge_spawn(ex.helper.as_deref(), ex.spawned),
                        None => Judgement::refuse_unjudgeable(pattern, "the pattern did not load"),
                    };
                    (
                        ex.decision.to_string(),
                        judgement.decision.to_string(),
                        judgement.reason,
                    )
                }
            };
            if expected != got {
                let mut d = example.at.diagnostic();
                d.message = format!("{}: expected `{expected}`, got `{got}`", d.message);
                failures.push(d.with_hint(format!("what was said: {reason}")));
            }
        }
        failures
    }

    /// Judges with one policy's rules alone, `allow` where none matches.
    fn judge_with_policy(&self, policy: &str, effects: &EffectProfile, context: &Context) -> Judgement {
        let Some(p) = self.policies.get(policy) else {
            return Judgement::refuse_unjudgeable(policy, "the policy did not load");
        };
        let judge = Judge {
            mode: format!("policy:{policy}"),
            default: Decision::Allow,
            ceiling: Ceiling::default(),
            rules: p.rules.clone(),
        };
        judge.judge(&effects.resolve(&context.workspace), context, &self.host)
    }
}
