//! Command rules and wrappers: the command classifier, with each rule's examples.

use super::Compiler;
use crate::bundle::examples::{Example, ExampleKind};
use crate::bundle::read::{Layered, Located};
use crate::bundle::Bundle;
use crate::command_rule::{CommandRule, Wrapper};
use crate::effects::EffectProfile;
use crate::format::PolicyFile;

impl Compiler<'_> {
    pub(crate) fn compile_commands(&mut self, bundle: &mut Bundle, policies: &Layered<PolicyFile>) {
        for (doc, policy) in policies.in_load_order() {
            for w in &policy.wrappers {
                bundle.classifier.add_wrapper(
                    &w.program,
                    Wrapper {
                        flags_with_value: w.flags_with_value.clone(),
                        positional: w.positional,
                    },
                );
            }
            for spanned in &policy.commands {
                let r = spanned.get_ref();
                if r.prefix.is_empty() || r.prefix.iter().any(|p| p.is_empty()) {
                    self.diagnostics.push(doc.diag(
                        spanned.span(),
                        format!("command rule `{}` needs a non-empty `prefix`", r.id),
                    ));
                    continue;
                }
                if r.shell && r.flags.is_none() {
                    self.diagnostics.push(
                        doc.diag(
                            spanned.span(),
                            format!("command rule `{}` is a shell but names no flag", r.id),
                        )
                        .with_hint(
                            "`shell = true` classifies the word after the matched flag, e.g. flags = [\"-c\", \"-*c\"]",
                        ),
                    );
                    continue;
                }
                let id = format!("{}/{}", policy.id, r.id);
                bundle.classifier.add_rule(CommandRule {
                    id: id.clone(),
                    prefix: r
                        .prefix
                        .iter()
                        .map(|p| p.split('|').map(String::from).collect())
                        .collect(),
                    flags: r.flags.clone(),
                    effects: EffectProfile::from(r.effects.clone()),
                    unknown: r.unknown,
                    shell: r.shell,
                });
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
