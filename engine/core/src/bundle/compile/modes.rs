//! Modes: each compiled after the mode it extends, checked to only narrow it.

use super::Compiler;
use crate::bundle::examples::{Example, ExampleKind};
use crate::bundle::model::Mode;
use crate::bundle::read::{is_id, Doc, Layered, ModeDoc};
use crate::bundle::unread_rules::LeftRules;
use crate::bundle::Bundle;
use crate::decision::Decision;
use crate::diag::Diagnostic;
use crate::format::ModeFile;
use crate::judge::{Judge, Rule};
use crate::scope::Workspace;
use std::sync::Arc;

impl Compiler<'_> {
    pub(crate) fn compile_modes(&mut self, bundle: &mut Bundle, modes: &Layered<ModeDoc>) {
        let ids: Vec<String> = modes.items.keys().cloned().collect();
        for id in ids {
            self.compile_mode(bundle, modes, &id, &mut Vec::new());
        }
    }

    pub(crate) fn compile_mode(
        &mut self,
        bundle: &mut Bundle,
        modes: &Layered<ModeDoc>,
        id: &str,
        stack: &mut Vec<String>,
    ) -> bool {
        if bundle.modes.contains_key(id) {
            return true;
        }
        let Some((doc, (m, role))) = modes.items.get(id) else {
            return false;
        };
        if !is_id(id) {
            self.diagnostics.push(
                Diagnostic::file(&doc.display, format!("`{id}` is not a valid mode id"))
                    .with_hint("use lowercase letters, digits and `-`"),
            );
            return false;
        }
        if stack.iter().any(|s| s == id) {
            self.diagnostics.push(Diagnostic::file(
                &doc.display,
                format!("mode `{id}` extends itself through {}", stack.join(" → ")),
            ));
            return false;
        }
        let parent = match &m.extends {
            None => None,
            Some(ext) => {
                let name = ext.get_ref();
                stack.push(id.to_string());
                let loaded = self.compile_mode(bundle, modes, name, stack);
                stack.pop();
                if !loaded {
                    let exists = modes.items.contains_key(name.as_str());
                    let message = if exists {
                        format!("mode `{id}` extends `{name}`, which did not load")
                    } else {
                        format!("mode `{id}` extends `{name}`, which does not exist")
                    };
                    let known: Vec<String> = modes.items.keys().map(|k| format!("`{k}`")).collect();
                    self.diagnostics.push(
                        doc.diag(ext.span(), message)
                            .with_hint(format!("the modes are {}", known.join(", "))),
                    );
                    return false;
                }
                match bundle.modes.get(name.as_str()).map(|p| p.every_rule(self.host)) {
                    Some(Ok(judge)) => Some(judge.into_owned()),
                    // Only a forged entry leaves a rule that does not read.
                    _ => {
                        self.diagnostics.push(
                            doc.diag(
                                ext.span(),
                                format!("mode `{id}` extends `{name}`, whose stored rules do not read"),
                            )
                            .with_hint("run `sixfold check`, which parses them again"),
                        );
                        return false;
                    }
                }
            }
        };
        let own_ceiling = m.ceiling.clone();
        let mut rules: Vec<Arc<Rule>> = parent.as_ref().map(|p| p.rules.clone()).unwrap_or_default();
        let mut new_rules: Vec<Arc<Rule>> = Vec::new();
        let mut ok = true;
        for include in &m.include {
            match bundle.policies.get(include.get_ref()) {
                Some(p) => new_rules.extend(p.rules.iter().cloned()),
                None => {
                    let known: Vec<String> = bundle.policies.keys().map(|k| format!("`{k}`")).collect();
                    self.diagnostics.push(
                        doc.diag(
                            include.span(),
                            format!(
                                "mode `{id}` includes the policy `{}`, which does not exist",
                                include.get_ref()
                            ),
                        )
                        .with_hint(format!("the policies are {}", known.join(", "))),
                    );
                    ok = false;
                }
            }
        }
        let mut own = self.rules(id, doc, &m.rules, &serde_json::Value::Null);
        let mut left = doc.unread_rules.clone().map(|rules| LeftRules {
            rules,
            doc: doc.clone(),
        });
        // A rule left unread that decides below the default it inherits widens the mode: read
        // them all, so it is reported as a whole load reports it.
        let below = |l: &LeftRules| {
            parent
                .as_ref()
                .is_some_and(|p| l.rules.decisions().any(|d| d < p.default))
        };
        if let Some(all) = left.take_if(|l| below(l)) {
            match all.every_own(&own, id, self.host) {
                Ok(every) => own = every,
                Err(()) => {
                    self.diagnostics.push(
                        Diagnostic::file(&doc.display, format!("mode `{id}`: its stored rules do not read"))
                            .with_hint("run `sixfold check`, which parses them again"),
                    );
                    return false;
                }
            }
        }
        new_rules.extend(own);
        let default = m
            .default
            .or(parent.as_ref().map(|p| p.default))
            .unwrap_or(Decision::Refuse);
        let mut ceiling = own_ceiling.clone().unwrap_or_default();
        // The first diagnostic that says the mode widens the one it extends.
        let before = self.diagnostics.len();
        if let Some(p) = &parent {
            let check_ws = Workspace::new("/workspace").with_home("/home/user").with_tmp("/tmp");
            let extends_span = m.extends.as_ref().map(|e| e.span()).unwrap_or(0..0);
            if let Some(own) = &own_ceiling {
                // Fields the mode leaves out are inherited, so only the ones it sets can widen.
                if let Err(why) = own.or(&p.ceiling).le(&p.ceiling, &check_ws) {
                    self.diagnostics.push(
                        doc.diag(
                            extends_span.clone(),
                            format!("mode `{id}` widens the mode it extends: its ceiling's {why}"),
                        )
                        .with_hint("a mode that extends another may only narrow it"),
                    );
                    ok = false;
                }
            }
            if default < p.default {
                self.diagnostics.push(doc.diag(extends_span.clone(), format!("mode `{id}` widens the mode it extends: its default `{default}` is more permissive than `{}`", p.default))
                    .with_hint("a mode that extends another may only narrow it"));
                ok = false;
            }
            for rule in &new_rules {
                if rule.decision < p.default {
                    self.diagnostics.push(doc.diag(extends_span.clone(), format!(
                        "mode `{id}` widens the mode it extends: rule `{}` decides `{}`, more permissive than that mode's default `{}`",
                        rule.id, rule.decision, p.default
                    )).with_hint("a mode that extends another may only narrow it: its rules decide at least the default they inherit"));
                    ok = false;
                }
            }
            ceiling = ceiling.or(&p.ceiling);
        }
        let widened = (self.diagnostics.len() > before).then_some(before);
        rules.extend(new_rules);
        if let (Some(p), true) = (&parent, widened.is_some()) {
            // Where it widens, over the whole effect space, said with the first widening found.
            let would_be = Judge {
                mode: id.to_string(),
                default,
                ceiling: ceiling.clone(),
                rules: rules.clone(),
            };
            let note = crate::effect_space::widening_note(p, &would_be).unwrap_or_else(|| {
                "no step widens over the effect space, but the rule could decide below the default it inherits".into()
            });
            if let Some(d) = widened.and_then(|i| self.diagnostics.get_mut(i)) {
                let hint = d.hint.take().unwrap_or_default();
                d.hint = Some(format!("{hint}; {note}"));
            }
        }
        // INVARIANT (fail closed): a mode that widens the one it extends, or includes a policy that
        // is not there, does not load, so judging under it refuses.
        if !ok {
            return false;
        }
        if self.whole {
            for spanned in &m.examples {
                let mut ex = spanned.get_ref().clone();
                ex.mode.get_or_insert_with(|| id.to_string());
                bundle.examples.push(Example {
                    at: Self::example(doc, spanned.span(), "judgement", &ex.note),
                    kind: ExampleKind::Judgement {
                        owner: None,
                        example: ex,
                    },
                });
            }
        }
        let environment = self.mode_environment(bundle, doc, id, m);
        let mut behaviour = m.behaviour.clone().unwrap_or_default();
        if role.is_some() {
            behaviour.role = role.clone();
        }
        bundle.modes.insert(
            id.to_string(),
            Mode {
                id: id.to_string(),
                name: m.name.clone(),
                description: m.description.clone(),
                environment,
                behaviour,
                extends: m.extends.as_ref().map(|e| e.get_ref().clone()),
                lease: m.lease.unwrap_or_default(),
                file: doc.display.clone(),
                judge: Judge {
                    mode: id.to_string(),
                    default,
                    ceiling,
                    rules,
                },
                left,
            },
        );
        true
    }

    /// The environment a mode needs: its own, else the one of the mode it extends. One that
    /// does not exist is reported where the mode names it; the mode still loads (its judgements
    /// need no sandbox), and a sandbox asked to enforce it refuses.
    fn mode_environment(&mut self, bundle: &Bundle, doc: &Doc, id: &str, m: &ModeFile) -> Option<String> {
        let Some(named) = &m.environment else {
            let parent = m.extends.as_ref().and_then(|e| bundle.modes.get(e.get_ref().as_str()));
            return parent.and_then(|p| p.environment.clone());
        };
        if !bundle.environments.contains_key(named.get_ref().as_str()) {
            let known: Vec<String> = bundle.environments.keys().map(|k| format!("`{k}`")).collect();
            self.diagnostics.push(
                doc.diag(
                    named.span(),
                    format!(
                        "mode `{id}` needs the environment `{}`, which does not exist",
                        named.get_ref()
                    ),
                )
                .with_hint(format!(
                    "environments are declared in policy files under [environments.NAME]; known: {}",
                    known.join(", ")
                )),
            );
        }
        Some(named.get_ref().clone())
    }
}
