//! Act rules and MCP tool maps, gathered from every policy.

use super::Compiler;
use crate::bundle::acts::{ActMatcher, ActRule, UnreadPolicy};
use crate::bundle::read::Layered;
use crate::bundle::Bundle;
use crate::format::PolicyFile;
use crate::judge::PathSet;
use std::sync::Arc;

impl Compiler<'_> {
    pub(crate) fn compile_acts_and_mcp(&mut self, bundle: &mut Bundle, policies: &Layered<PolicyFile>) {
        for (load, (doc, policy)) in (0u32..).zip(policies.in_load_order()) {
            for (name, spec) in &policy.mcp {
                bundle.mcp.insert(name.clone(), spec.clone());
            }
            if let Some(unread) = &doc.unread_acts {
                bundle.unread_acts.push(UnreadPolicy {
                    policy: policy.id.clone(),
                    load,
                    acts: Arc::clone(unread),
                    text: doc.text.clone(),
                });
            }
            // Its place among the policy's act rules, counting those left unread.
            let place = |nth: usize| match &doc.unread_acts {
                Some(unread) => unread.place_of_read(nth),
                None => u32::try_from(nth).unwrap_or(u32::MAX),
            };
            bundle.acts.reserve(policy.acts.len());
            for (nth, spanned) in policy.acts.iter().enumerate() {
                let a = spanned.get_ref();
                let order = (load, place(nth));
                let matcher = match (&a.command, &a.path, &a.domain) {
                    (Some(c), None, None) if !c.trim().is_empty() => {
                        bundle.acts.push(ActRule::command(&policy.id, a, c, order));
                        continue;
                    }
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
                    order,
                });
            }
        }
    }
}
