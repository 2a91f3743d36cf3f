//! Command rules and wrappers: the command classifier, with each rule's examples.

use super::Compiler;
use crate::bundle::examples::{Example, ExampleKind};
use crate::bundle::read::{Layered, Located};
use crate::bundle::Bundle;
use crate::command_rule::{CommandRule, Wrapper};
use crate::format::PolicyFile;

impl Compiler<'_> {
    pub(crate) fn compile_commands(&mut self, bundle: &mut Bundle, policies: &Layered<PolicyFile>) {
        for (doc, policy) in policies.in_load_order() {
            bundle.classifier.add_inert(&policy.inert_assignments);
            for w in &policy.wrappers {
                bundle.classifier.add_wrapper(
                    &w.program,
                    Wrapper {
                        flags_with_value: w.flags_with_value.clone(),
                        positional: w.positional,
                        flags: w.flags.clone(),
                        not_with: w.not_with.clone(),
                    },
                );
            }
            if doc.unread_commands {
                bundle.classifier.add_unread(&policy.id);
            }
            for spanned in &policy.commands {
                let r = spanned.get_ref();
                let id = match CommandRule::from_file(&policy.id, r) {
                    Ok(rule) => {
                        let id = rule.id.clone();
                        bundle.classifier.add_rule(rule);
                        id
                    }
                    Err((message, hint)) => {
                        let d = doc.diag(spanned.span(), message);
                        self.diagnostics.push(match hint {
                            Some(hint) => d.with_hint(hint),
                            None => d,
                        });
                        continue;
                    }
                };
                // Examples run with the bundle's other examples (`sixfold check`), against the
                // whole classifier, so they also catch a rule shadowed by another.
                if self.whole {
                    bundle.examples.push(Example {
                        at: Located::new(doc, spanned.span(), format!("command rule `{}`", r.id)),
                        kind: ExampleKind::Command {
                            rule: id,
                            matches: r.matches.clone(),
                            not_match: r.not_match.clone(),
                        },
                    });
                }
            }
        }
    }
}
