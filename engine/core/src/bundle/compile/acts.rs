//! Act rules and MCP tool maps, gathered from every policy.

use super::Compiler;
use crate::bundle::acts::{ActMatcher, ActRule};
use crate::bundle::read::Layered;
use crate::bundle::Bundle;
use crate::format::PolicyFile;
use crate::judge::PathSet;
use std::sync::Arc;

impl Compiler<'_> {
    pub(crate) fn compile_acts_and_mcp(&mut self, bundle: &mut Bundle, policies: &Layered<PolicyFile>) {
        for (doc, policy) in policies.in_load_order() {
            for (name, spec) in &policy.mcp {
                bundle.mcp.insert(name.clone(), spec.clone());
            }
            bundle.acts.reserve(policy.acts.len());
            for spanned in &policy.acts {
                let a = spanned.get_ref();
                let matcher = match (&a.command, &a.path, &a.domain) {
                    (Some(c), None, None) if !c.trim().is_empty() => ActMatcher::Command,
                    (None, Some(p), None) => match PathSet::inline(p) {
                        Ok(set) => ActMatcher::Path(Arc::new(set)),
                        Err(message) => {
                            self.diagnostics.push(doc.diag(spanned.span(), message));
                            continue;
                        }
                    },
                    (None, None, Some(d)) if !d.is_empty() && !d.contains('/') => ActMatcher::Domain(d.to_lowercase()),
                    _ => {
                        self.diagnostics.push(
                            doc.diag(
                                spanned.span(),
                                format!(
                                    "act rule `{}` needs exactly one of `command`, `path` and `domain`",
                                    a.id
                                ),
                            )
                            .with_hint(
                                "a command prefix (`cargo test`), a path glob (`src/**`) or a domain (`crates.io`)",
                            ),
                        );
                        continue;
                    }
                };
                let act = a
                    .command
                    .as_ref()
                    .or(a.path.as_ref())
                    .or(a.domain.as_ref())
                    .cloned()
                    .unwrap_or_default();
                bundle.acts.push(ActRule {
                    id: super::qualified(&policy.id, &a.id),
                    decision: a.decision,
                    modes: a.modes.clone(),
                    matcher,
                    act,
                });
            }
        }
    }
}
