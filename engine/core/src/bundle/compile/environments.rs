//! Environments: each `[environments.NAME]` compiled into an [`EnvironmentSpec`], its path sets
//! expanded into paths as written.

use super::Compiler;
use crate::bundle::read::{Layered, ModeDoc};
use crate::bundle::Bundle;
use crate::diag::Diagnostic;
use crate::environment::{written_paths, EnvironmentSpec};
use crate::format::Spanned;
use crate::format::{Access, EnvironmentFile, NetworkAccess, PolicyFile};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// An environment as compiled: checked when the bundle loads, its spec (the path sets expanded
/// into paths) made the first time it is asked for, since most calls run no command.
#[derive(Debug)]
pub(crate) struct Environment {
    /// The id of the policy that declares it; its document is kept with the bundle.
    policy: String,
    /// Whether it confines anything, known without making the spec.
    confined: bool,
    spec: OnceLock<Option<EnvironmentSpec>>,
}

impl Environment {
    pub(crate) fn confined(&self) -> bool {
        self.confined
    }
}

impl Bundle {
    /// The spec of the environment `id` (an entry of `environments`), made on first use from the
    /// document the bundle keeps. `None` only if that document no longer says what loading
    /// checked, which a bundle never lets happen.
    pub(crate) fn environment_spec<'b>(
        &'b self,
        id: &str,
        environment: &'b Environment,
    ) -> Option<&'b EnvironmentSpec> {
        environment
            .spec
            .get_or_init(|| {
                let (doc, policy) = self.documents.policies.items.get(&environment.policy)?;
                let e = policy.environments.get(id)?;
                let expand = |entries: &[Spanned<String>]| -> Option<Vec<String>> {
                    let mut globs: Vec<&str> = Vec::new();
                    for entry in entries {
                        globs.extend(self.path_sets.get(entry.get_ref().strip_prefix('@')?)?.written());
                    }
                    Some(written_paths(&globs))
                };
                Some(spec(id, &doc.display, e, expand(&e.read_only)?, expand(&e.hidden)?))
            })
            .as_ref()
    }
}

impl Compiler<'_> {
    /// Compiles every environment, later layers replacing earlier ones by name. One that names
    /// a path set that does not exist is reported and left out, so a mode naming it cannot be
    /// enforced (never enforced with less).
    pub(crate) fn compile_environments(
        &mut self,
        bundle: &mut Bundle,
        policies: &Layered<PolicyFile>,
        modes: &Layered<ModeDoc>,
    ) {
        let wanted = self.wanted_environments(policies, modes);
        for (doc, policy) in policies.in_load_order() {
            for (id, e) in &policy.environments {
                if wanted.as_ref().is_some_and(|w| !w.contains(id.as_str())) {
                    continue;
                }
                let before = self.diagnostics.len();
                let unconfining = e.roots != Access::ReadOnly
                    || e.tmp != Access::ReadOnly
                    || !e.read_only.is_empty()
                    || !e.hidden.is_empty()
                    || e.network != NetworkAccess::Cut
                    || !e.variables.pass.is_empty()
                    || !e.variables.never.is_empty()
                    || !e.placeholders.is_empty()
                    || !e.caches.is_empty();
                if !e.confined && unconfining {
                    self.diagnostics.push(
                        Diagnostic::file(
                            &doc.display,
                            format!(
                                "environment `{id}` confines nothing (`confined = false`) but says what to confine"
                            ),
                        )
                        .with_hint("remove `confined = false`, or every other key but `description`"),
                    );
                }
                self.check_path_sets(doc, id, &e.read_only);
                self.check_path_sets(doc, id, &e.hidden);
                // INVARIANT (fail closed): an environment with a path set that does not resolve is
                // left out: a mode naming it is then refused, never run with less confined.
                if self.diagnostics.len() != before {
                    bundle.environments.remove(id);
                    continue;
                }
                let environment = Environment {
                    policy: policy.id.clone(),
                    confined: e.confined,
                    spec: OnceLock::new(),
                };
                bundle.environments.insert(id.clone(), environment);
            }
        }
    }

    /// The environments one judgement's load compiles: those its modes name (a step judged under
    /// `workspace-write` is never run in `read-only`); `None` for all of them, in a whole load or
    /// where a mode names one no policy declares, so that the mode's diagnostic lists the same
    /// known environments as a whole load's.
    fn wanted_environments<'d>(
        &self,
        policies: &'d Layered<PolicyFile>,
        modes: &'d Layered<ModeDoc>,
    ) -> Option<BTreeSet<&'d str>> {
        if self.whole {
            return None;
        }
        let named: BTreeSet<&str> = modes
            .items
            .values()
            .filter_map(|(_, (mode, _))| mode.environment.as_ref())
            .map(|e| e.get_ref().as_str())
            .collect();
        let declared = |name: &str| policies.items.values().any(|(_, p)| p.environments.contains_key(name));
        named.iter().all(|name| declared(name)).then_some(named)
    }

    /// Reports each entry of `entries` that is not a path set `@NAME` (the spec expands them).
    fn check_path_sets(&mut self, doc: &crate::bundle::read::Doc, id: &str, entries: &[Spanned<String>]) {
        let missing = entries.iter().filter(|entry| {
            let name = entry.get_ref().strip_prefix('@');
            !name.is_some_and(|name| self.path_sets.contains_key(name))
        });
        let missing: Vec<&Spanned<String>> = missing.collect();
        for entry in missing {
            let mut known: Vec<String> = self.path_sets.keys().map(|k| format!("`@{k}`")).collect();
            known.sort();
            self.diagnostics.push(
                doc.diag(
                    entry.span(),
                    format!(
                        "environment `{id}` names `{}`, which is not a path set",
                        entry.get_ref()
                    ),
                )
                .with_hint(format!(
                    "name a path set declared under [paths.NAME] as `@NAME`; known: {}",
                    known.join(", ")
                )),
            );
        }
    }
}

fn spec(id: &str, file: &str, e: &EnvironmentFile, read_only: Vec<String>, hidden: Vec<String>) -> EnvironmentSpec {
    if !e.confined {
        let mut spec = EnvironmentSpec::unconfined(id);
        spec.description = e.description.clone();
        spec.file = file.to_string();
        return spec;
    }
    EnvironmentSpec {
        id: id.to_string(),
        description: e.description.clone(),
        file: file.to_string(),
        confined: true,
        roots_writable: e.roots == Access::Writable,
        tmp_writable: e.tmp == Access::Writable,
        read_only,
        hidden,
        network_cut: e.network == NetworkAccess::Cut,
        caches: e.caches.clone(),
        pass_variables: e.variables.pass.clone(),
        never_variables: e.variables.never.clone(),
        placeholders: e.placeholders.iter().map(|(p, t)| (p.clone(), t.clone())).collect(),
    }
}

#[cfg(test)]
mod tests {
    use crate::bundle::{Bundle, BundleSource, Needs};
    use crate::shipped;

    fn load(extra: &[(&str, &str)]) -> (Bundle, Vec<crate::diag::Diagnostic>) {
        let overlay = BundleSource::from_files("t", extra.iter().copied());
        Bundle::load(&[shipped::source(), overlay])
    }

    #[test]
    fn the_shipped_environments_compile_from_the_path_sets() {
        let (bundle, d) = Bundle::load(&[shipped::source()]);
        assert!(d.is_empty(), "{d:#?}");
        let ids: Vec<&str> = bundle.environments().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["full", "read-only", "workspace-write"]);
        let ww = bundle.environment("workspace-write").unwrap();
        assert!(ww.confined && ww.roots_writable && ww.tmp_writable && ww.network_cut);
        assert!(ww.read_only.iter().any(|p| p == ".mcp.json"), "{ww:?}");
        assert!(ww.read_only.iter().any(|p| p == ".git/hooks/**"), "{ww:?}");
        assert!(ww.read_only.iter().any(|p| p == ".git"), "{ww:?}");
        assert!(ww.pass_variables.iter().any(|v| v == "PATH"), "{ww:?}");
        assert!(!ww.pass_variables.iter().any(|v| v.contains("KEY")), "{ww:?}");
        assert!(ww.never_variables.iter().any(|v| v.contains("TOKEN")), "{ww:?}");
        assert!(ww.hidden.iter().any(|p| p == "~/.ssh/**"), "{ww:?}");
        let ro = bundle.environment("read-only").unwrap();
        assert!(ro.confined && !ro.roots_writable && !ro.tmp_writable && ro.network_cut);
        assert!(!bundle.environment("full").unwrap().confined);
        for mode in bundle.modes() {
            let named = mode.environment.as_deref().unwrap();
            assert!(bundle.environment(named).is_some(), "{}", mode.id);
        }
    }

    #[test]
    fn a_mode_naming_a_missing_environment_is_reported_where_it_names_it() {
        let (_, d) = load(&[(
            "modes/m.toml",
            "id = \"m\"\ndefault = \"refuse\"\nenvironment = \"nowhere\"\n",
        )]);
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!((d[0].file.as_str(), d[0].line, d[0].column), ("t/modes/m.toml", 3, 15));
        assert!(d[0].message.contains("`nowhere`, which does not exist"), "{d:#?}");
        assert!(
            d[0].hint.as_deref().unwrap_or("").contains("`workspace-write`"),
            "{d:#?}"
        );
    }

    #[test]
    fn a_mode_extending_another_inherits_its_environment() {
        let (bundle, d) = load(&[("modes/m.toml", "id = \"m\"\nextends = \"workspace-write\"\n")]);
        assert!(d.is_empty(), "{d:#?}");
        assert_eq!(
            bundle.mode("m").unwrap().environment.as_deref(),
            Some("workspace-write")
        );
    }

    #[test]
    fn an_environment_naming_a_missing_path_set_is_left_out() {
        let policy = "id = \"p\"\n[environments.boxed]\nroots = \"writable\"\nhidden = [\"@nope\"]\n";
        let (bundle, d) = load(&[("policies/p.toml", policy)]);
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!(d[0].line, 4, "{d:#?}");
        assert!(d[0].message.contains("`@nope`, which is not a path set"), "{d:#?}");
        assert!(bundle.environment("boxed").is_none());
    }

    #[test]
    fn an_unconfined_environment_says_nothing_else() {
        let policy = "id = \"p\"\n[environments.open]\nconfined = false\nnetwork = \"open\"\n";
        let (_, d) = load(&[("policies/p.toml", policy)]);
        assert_eq!(d.len(), 1, "{d:#?}");
        assert!(d[0].message.contains("confines nothing"), "{d:#?}");
    }

    #[test]
    fn loading_for_one_judgement_compiles_the_environment_its_mode_names() {
        let (bundle, d) = Bundle::load_for(&[shipped::source()], &Needs::mode("workspace-write"));
        assert!(d.is_empty(), "{d:#?}");
        let whole = Bundle::load(&[shipped::source()]).0;
        assert_eq!(
            format!("{:?}", bundle.environment("workspace-write")),
            format!("{:?}", whole.environment("workspace-write"))
        );
        assert!(bundle.environment("read-only").is_none(), "not named by the mode");
        // Its shipped policy was read with that environment alone.
        let declared: Vec<&str> = bundle
            .documents
            .policies
            .items
            .values()
            .flat_map(|(_, p)| p.environments.keys().map(String::as_str))
            .collect();
        assert_eq!(declared, ["workspace-write"]);
    }

    #[test]
    fn one_judgement_under_a_mode_that_inherits_its_environment_compiles_it() {
        let overlay = BundleSource::from_files("t", [("modes/m.toml", "id = \"m\"\nextends = \"workspace-write\"\n")]);
        let (bundle, d) = Bundle::load_for(&[shipped::source(), overlay], &Needs::mode("m"));
        assert!(d.is_empty(), "{d:#?}");
        assert_eq!(
            bundle.mode("m").unwrap().environment.as_deref(),
            Some("workspace-write")
        );
        assert!(bundle.environment("workspace-write").is_some_and(|e| e.confined));
    }

    #[test]
    fn one_judgement_naming_a_missing_environment_is_told_what_a_whole_load_is_told() {
        let overlay = BundleSource::from_files(
            "t",
            [(
                "modes/m.toml",
                "id = \"m\"\ndefault = \"refuse\"\nenvironment = \"nowhere\"\n",
            )],
        );
        let sources = [shipped::source(), overlay];
        let (_, one) = Bundle::load_for(&sources, &Needs::mode("m"));
        let (_, whole) = Bundle::load(&sources);
        assert_eq!(one.len(), 1, "{one:#?}");
        assert_eq!(format!("{one:?}"), format!("{whole:?}"));
    }
}
