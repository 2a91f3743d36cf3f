//! Contained judgement: the effects of a command that will run inside a proven environment.
//!
//! The classifier gives what it could not read the conservative profile (reads and writes `*`,
//! reaches, irreversible). Inside a proven environment the kernel bounds part of that: a write
//! lands only where the environment lets it, a secret it hides cannot be read and, where the
//! network is cut, nothing reaches it. What the classifier *did* read is kept as read: a
//! command understood to reach (`curl`, `git push`, `npm install`) still reaches, and a named
//! secret, a protected path or a path outside is still seen by the rules, so it is refused
//! before it runs. This module only computes effects; whether an environment is proven is the
//! sandbox layer's fact, passed in by whoever calls it.

use crate::classify::{Classified, Classifier};
use crate::effects::EffectProfile;
use crate::environment::EnvironmentSpec;

/// What a proven environment guarantees about a command run inside it, as far as judging the
/// command's effects goes.
///
/// ```
/// use sixfold_core::containment::Containment;
/// use sixfold_core::environment::EnvironmentSpec;
///
/// // An environment that confines nothing contains nothing.
/// assert!(Containment::of(&EnvironmentSpec::unconfined("full")).is_none());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Containment {
    /// The network is cut: nothing inside reaches it.
    pub network_cut: bool,
    /// The environment hides secrets: what the command reads unseen cannot be one of them.
    pub secrets_hidden: bool,
}

impl Containment {
    /// What `spec` guarantees once proven; `None` when it confines nothing.
    pub fn of(spec: &EnvironmentSpec) -> Option<Containment> {
        spec.confined.then_some(Containment {
            network_cut: spec.network_cut,
            secrets_hidden: !spec.hidden.is_empty(),
        })
    }

    /// The effects to judge for `classified` run inside this environment: `contained`; where
    /// the network is cut, reaching only what the classifier understood to reach; where the
    /// secrets are hidden, the unknown reads (`*`) dropped. Every place the classifier named is
    /// kept, so an explicit refusal is still refused.
    ///
    /// ```
    /// use sixfold_core::containment::Containment;
    ///
    /// let (bundle, _) = sixfold_core::Bundle::load(&[sixfold_core::shipped::source()]);
    /// let inside = Containment { network_cut: true, secrets_hidden: true };
    /// let cwd = std::path::Path::new("/work/repo");
    ///
    /// // A program no rule knows: contained, reaching nothing, its writes still unknown.
    /// let unknown = bundle.classify("./build.sh --all", cwd);
    /// let effects = inside.effects(&unknown, bundle.classifier());
    /// assert!(effects.contained && !effects.reaches);
    /// assert_eq!(effects.writes, vec!["*".to_string()]);
    ///
    /// // What the classifier read as reaching still reaches, even inside.
    /// let fetch = bundle.classify("curl -s https://example.com", cwd);
    /// assert!(inside.effects(&fetch, bundle.classifier()).reaches);
    /// ```
    pub fn effects(&self, classified: &Classified, classifier: &Classifier) -> EffectProfile {
        let mut effects = classified.effects.clone();
        effects.contained = true;
        if self.network_cut {
            // INVARIANT (fail closed): only reaching the classifier did not understand is dropped,
            // and only because the kernel cuts it; what a rule says reaches still does.
            effects.reaches = classified
                .parts
                .iter()
                .any(|p| p.rule.as_deref().is_some_and(|rule| classifier.rule_reaches(rule)));
        } else if classified.opaque.is_some()
            || [&effects.reads, &effects.writes]
                .iter()
                .any(|s| s.iter().any(|p| p == "*"))
        {
            // INVARIANT (fail closed): the classifier does not count what it could not read as
            // reaching (outside a sandbox it asks for the unknown write instead); inside one
            // whose network is open, that unknown write is bounded but the network is not, so
            // what it could not read may reach.
            effects.reaches = true;
        }
        if self.secrets_hidden {
            // Named places stay (a named secret is still refused); only the unknown read goes.
            effects.reads.retain(|r| r != "*");
        }
        effects
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bundle::Bundle;
    use crate::decision::Decision;
    use crate::judge::Context;
    use crate::scope::Workspace;
    use std::path::Path;

    const INSIDE: Containment = Containment {
        network_cut: true,
        secrets_hidden: true,
    };

    fn judged(command: &str, containment: Option<Containment>) -> Decision {
        let bundle = shipped();
        let root = Path::new("/work/repo");
        let classified = bundle.classify(command, root);
        let effects = match containment {
            Some(c) => c.effects(&classified, bundle.classifier()),
            None => classified.effects,
        };
        let workspace = Workspace::new(root);
        let resolved = effects.resolve(&workspace);
        bundle
            .judge_effects("workspace-write", &resolved, &Context::new(workspace))
            .decision
    }

    fn shipped() -> Bundle {
        Bundle::load(&[crate::shipped::source()]).0
    }

    #[test]
    fn unknown_commands_are_allowed_in_workspace_write_only_when_contained() {
        for command in [
            "cargo test",
            "./configure && make",
            "python3 -c 'import os'",
            "echo $(./gen-id)",
        ] {
            assert_eq!(judged(command, Some(INSIDE)), Decision::Allow, "{command}");
            assert_ne!(judged(command, None), Decision::Allow, "{command}");
        }
    }

    #[test]
    fn explicit_refusals_stay_refused_inside() {
        for command in [
            "curl -s https://example.com",
            "cat .env",
            "./build.sh < .env",
            "echo x > /etc/hosts",
            "echo x > .mcp.json",
            "./build.sh > /outside/file",
        ] {
            assert_eq!(judged(command, Some(INSIDE)), Decision::Refuse, "{command}");
        }
    }

    #[test]
    fn an_open_network_keeps_the_conservative_reach() {
        let open = Containment {
            network_cut: false,
            secrets_hidden: true,
        };
        assert_eq!(judged("./build.sh", Some(open)), Decision::Refuse);
    }

    #[test]
    fn without_hidden_secrets_the_unknown_read_stays() {
        let bundle = shipped();
        let classified = bundle.classify("./build.sh", Path::new("/w"));
        let seeing = Containment {
            network_cut: true,
            secrets_hidden: false,
        };
        assert!(seeing
            .effects(&classified, bundle.classifier())
            .reads
            .contains(&"*".to_string()));
    }
}
