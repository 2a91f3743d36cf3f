//! Command rules and wrappers: the command classifier, with each rule's examples.

use super::Compiler;
use crate::bundle::examples::{Example, ExampleKind};
use crate::bundle::read::{Layered, Located};
use crate::bundle::Bundle;
use crate::command_rule::{CommandRule, Options, Takes, Wrapper};
use crate::effects::EffectProfile;
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
                let options = r.options.clone().unwrap_or_default();
                // INVARIANT (fail closed): "every option understood" only where the rule's own
                // effects already hold whatever an option could do.
                let holds_any = r.unknown
                    || r.runs_code
                    || r.effects
                        .writes
                        .as_ref()
                        .is_some_and(|w| w.iter().any(|w| w == "." || w == "*"));
                if options.any && !holds_any {
                    self.diagnostics.push(
                        doc.diag(
                            spanned.span(),
                            format!(
                                "command rule `{}` understands any option but its effects do not hold them",
                                r.id
                            ),
                        )
                        .with_hint(
                            "list the options it understands; `any = true` is only for a rule that writes `.` or `*`",
                        ),
                    );
                    continue;
                }
                let listed = [
                    (&options.flags, Takes::Nothing),
                    (&options.values, Takes::Value),
                    (&options.attached, Takes::Attached),
                    (&options.reads, Takes::Read),
                    (&options.writes, Takes::Write),
                    (&options.scripts, Takes::Script),
                ]
                .into_iter()
                .flat_map(|(names, takes)| names.iter().map(move |n| (n.clone(), takes)))
                .collect();
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
                    unknown: r.unknown || r.runs_code,
                    runs_code: r.runs_code,
                    shell: r.shell,
                    options: Options {
                        listed,
                        numeric: options.numeric,
                        complete: options.complete,
                        any: options.any,
                        plus_runs: options.plus_runs,
                    },
                    reader: r.reader,
                    max_args: r.max_args,
                    min_args: r.min_args,
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
