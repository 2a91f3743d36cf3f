//! Patterns and providers.

use super::Compiler;
use crate::bundle::examples::{Example, ExampleKind};
use crate::bundle::model::Pattern;
use crate::bundle::read::{is_id, Layered};
use crate::bundle::Bundle;
use crate::diag::Diagnostic;
use crate::format::{MetaTool, PatternFile, ProviderFile};
use crate::provider::Provider;

impl Compiler<'_> {
    pub(crate) fn compile_patterns(&mut self, bundle: &mut Bundle, patterns: &Layered<PatternFile>) {
        for (id, (doc, spec)) in &patterns.items {
            if !spec.meta_tools.contains(&MetaTool::Spawn)
                && (spec.limits.spawns.unwrap_or(0) > 0 || spec.helpers.is_some())
            {
                self.diagnostics.push(
                    Diagnostic::file(
                        &doc.display,
                        format!("pattern `{id}` limits or names helpers but does not offer `spawn`"),
                    )
                    .with_hint("add `spawn` to `meta_tools`, or remove `limits.spawns` and `helpers`"),
                );
                continue;
            }
            if self.whole {
                for spanned in &spec.examples {
                    let ex = spanned.get_ref();
                    bundle.examples.push(Example {
                        at: Self::example(doc, spanned.span(), "spawn", &ex.note),
                        kind: ExampleKind::Spawn {
                            pattern: id.clone(),
                            example: ex.clone(),
                        },
                    });
                }
            }
            bundle.patterns.insert(
                id.clone(),
                Pattern {
                    spec: spec.clone(),
                    file: doc.display.clone(),
                },
            );
        }
    }

    pub(crate) fn compile_providers(&mut self, bundle: &mut Bundle, providers: Layered<ProviderFile>) {
        for (id, (doc, spec)) in providers.items {
            if !is_id(&id) {
                self.diagnostics.push(Diagnostic::file(
                    &doc.display,
                    format!("`{id}` is not a valid provider id"),
                ));
            }
            bundle.providers.insert(
                id,
                Provider {
                    spec,
                    file: doc.display,
                },
            );
        }
    }
}
