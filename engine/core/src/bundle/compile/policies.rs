//! Policies: their path sets, rules, rows and examples.

use super::Compiler;
use crate::bundle::examples::{Example, ExampleKind};
use crate::bundle::model::Policy;
use crate::bundle::read::{toml_table_to_json, Doc, Layered};
use crate::bundle::rows::{Row, RowCheck};
use crate::bundle::Bundle;
use crate::diag::Diagnostic;
use crate::format::PolicyFile;
use crate::judge::PathSet;
use std::sync::Arc;

impl Compiler<'_> {
    pub(crate) fn compile_path_sets(&mut self, policies: &Layered<PolicyFile>) {
        for (doc, policy) in policies.in_load_order() {
            for (name, set) in &policy.paths {
                match PathSet::new(name, &set.globs) {
                    Ok(compiled) => {
                        self.path_sets.insert(name.clone(), Arc::new(compiled));
                    }
                    Err(message) => self.diagnostics.push(
                        Diagnostic::file(&doc.display, format!("path set `{name}`: {message}"))
                            .with_hint("globs use `*`, `**`, `?`, `[…]` and `{a,b}`"),
                    ),
                }
            }
        }
    }

    pub(crate) fn compile_policies(&mut self, bundle: &mut Bundle, policies: &Layered<PolicyFile>) {
        for (id, (doc, p)) in &policies.items {
            let settings = toml_table_to_json(&p.settings);
            let rules = self.rules(id, doc, &p.rules, &settings);
            // Rows and examples are for checking runs and bundles, not for judging one step.
            let rows = if self.whole {
                self.compile_rows(bundle, id, doc, p, &settings)
            } else {
                Vec::new()
            };
            if self.whole {
                self.policy_examples(bundle, id, doc, p);
            }
            bundle.policies.insert(
                id.clone(),
                Policy {
                    id: id.clone(),
                    description: p.description.clone(),
                    file: doc.display.clone(),
                    rules,
                    rows,
                    settings,
                },
            );
        }
    }

    pub(crate) fn check_row_evidence(&mut self, bundle: &Bundle) {
        for row in bundle.rows.values() {
            if let RowCheck::Evidence(ids) = &row.check {
                for id in ids {
                    if !bundle.rows.contains_key(id) {
                        let file = bundle
                            .policies
                            .get(&row.policy)
                            .map(|p| p.file.clone())
                            .unwrap_or_default();
                        self.diagnostics.push(Diagnostic::file(
                            file,
                            format!("row `{}` names `{id}` as evidence, and there is no such row", row.id),
                        ));
                    }
                }
            }
        }
    }

    /// A policy's rows, into the bundle; their ids in file order.
    fn compile_rows(
        &mut self,
        bundle: &mut Bundle,
        id: &str,
        doc: &Doc,
        p: &PolicyFile,
        settings: &serde_json::Value,
    ) -> Vec<String> {
        let mut rows = Vec::new();
        for spanned in &p.rows {
            let span = spanned.span();
            let r = spanned.get_ref();
            let checks = usize::from(r.check.is_some())
                + usize::from(r.evidence.is_some())
                + usize::from(r.script.is_some() || r.function.is_some());
            if checks != 1 {
                self.diagnostics.push(doc.diag(
                    span,
                    format!(
                        "row `{}` needs exactly one of `check`, `evidence`, or `script` with `function`",
                        r.id
                    ),
                ));
                continue;
            }
            let check = if let Some(c) = &r.check {
                let values = |v: &Option<Vec<toml::Value>>| {
                    v.as_ref()
                        .map(|v| v.iter().map(|x| serde_json::to_value(x).unwrap_or_default()).collect())
                };
                RowCheck::Fact {
                    fact: c.fact.clone(),
                    ok: values(&c.ok),
                    gap: values(&c.gap),
                }
            } else if let Some(e) = &r.evidence {
                RowCheck::Evidence(e.clone())
            } else {
                match self.script(doc, span.clone(), &r.script, &r.function, 2) {
                    Ok(Some((script, function))) => {
                        if let Some(each) = &r.each_step {
                            if let Ok(Some((_, each))) =
                                self.script(doc, span.clone(), &r.script, &Some(each.clone()), 3)
                            {
                                RowCheck::Script {
                                    script,
                                    function,
                                    each_step: Some(each),
                                    settings: settings.clone(),
                                }
                            } else {
                                continue;
                            }
                        } else {
                            RowCheck::Script {
                                script,
                                function,
                                each_step: None,
                                settings: settings.clone(),
                            }
                        }
                    }
                    _ => continue,
                }
            };
            if let Some(existing) = bundle.rows.get(&r.id) {
                if existing.policy != *id {
                    self.diagnostics.push(doc.diag(
                        spanned.span(),
                        format!("row `{}` is also declared by policy `{}`", r.id, existing.policy),
                    ));
                    continue;
                }
            }
            rows.push(r.id.clone());
            bundle.rows.insert(
                r.id.clone(),
                Row {
                    id: r.id.clone(),
                    title: r.title.clone(),
                    assertion: r.assertion,
                    severity: r.severity,
                    policy: id.to_string(),
                    facts: r.facts,
                    remedy: r.remedy.clone(),
                    check,
                },
            );
        }
        rows
    }

    fn policy_examples(&mut self, bundle: &mut Bundle, id: &str, doc: &Doc, p: &PolicyFile) {
        for spanned in &p.examples {
            let ex = spanned.get_ref();
            bundle.examples.push(Example {
                at: Self::example(doc, spanned.span(), "judgement", &ex.note),
                kind: ExampleKind::Judgement {
                    owner: Some(id.to_string()),
                    example: ex.clone(),
                },
            });
        }
        for spanned in &p.row_examples {
            let ex = spanned.get_ref();
            let at = Self::example(doc, spanned.span(), "verdict", &ex.note);
            // The launch facts an example writes must be ones the launcher makes, so a row
            // script and the Rust that gathers its facts cannot drift apart unnoticed.
            if let Some(Err(why)) = ex
                .facts
                .get("launch")
                .map(|launch| crate::launch_facts::check_example(&serde_json::to_value(launch).unwrap_or_default()))
            {
                let mut d = at.diagnostic();
                d.message = format!("{}: {why}", d.message);
                self.diagnostics.push(d.with_hint(crate::launch_facts::EXAMPLE_HINT));
                continue;
            }
            bundle.examples.push(Example {
                at,
                kind: ExampleKind::Verdict(ex.clone()),
            });
        }
    }
}
