//! Live containment: a command step that will run inside the active mode's proven environment
//! is judged contained, and its command is rewritten to run there.
//!
//! Whether an environment is proven on this machine is the sandbox layer's fact; this crate
//! never depends on that layer, so the CLI passes it in as [`Sandboxes`]. A proof is looked up
//! (a cached proof is a file read) or made once and cached, never assumed. Where the
//! environment cannot be proven, the step is judged as it is (not contained) and the reason
//! says what is missing. Every adapter (Claude Code's, Codex's) calls [`contain`] for a step
//! and applies what it returns.

use serde_json::Value;
use sixfold_core::bundle::Bundle;
use sixfold_core::containment::Containment;
use sixfold_core::environment::EnvironmentSpec;
use sixfold_core::{Classifier, EffectProfile, ToolEffects};
use std::path::{Path, PathBuf};

/// What the adapter needs from the sandbox layer, supplied by the CLI.
pub trait Sandboxes {
    /// Whether mode `mode`'s environment `spec`, enforced around the workspace `roots`, is
    /// proven on this machine: from a cached proof, or proven now and cached. `Err` says what is
    /// missing.
    fn proven(&self, mode: &str, spec: &EnvironmentSpec, roots: &[PathBuf]) -> Result<(), String>;
    /// The `sixfold` program that runs a command confined (`sixfold sandbox run`); `None` when
    /// it cannot be found.
    fn program(&self) -> Option<PathBuf>;
}

/// Where a hook call's command steps would run: the environment of the mode the sandbox
/// enforces, and whether it is proven here. Resolved once per hook call.
#[derive(Debug, Clone, Default)]
pub struct Sandbox {
    /// Set when the environment is proven: what it guarantees, and how to run inside it.
    proven: Option<Proven>,
    /// Why steps are not contained, when the environment confines but cannot be relied on.
    missing: Option<String>,
}

#[derive(Debug, Clone)]
struct Proven {
    containment: Containment,
    /// `sixfold sandbox run --mode M --root R [--no-project] --`, quoted.
    prefix: String,
}

impl Sandbox {
    /// The sandbox of `mode` in `bundle` around `project`. `with_project` says whether
    /// `sixfold sandbox run` is to layer the project's `.sixfold/` (only when it is trusted or
    /// empty: an untrusted project never chooses the environment); `bundle` must then be the
    /// one that layered it, or the bundle without it.
    pub fn resolve(
        bundle: &Bundle,
        mode: &str,
        project: &Path,
        with_project: bool,
        sandboxes: Option<&dyn Sandboxes>,
    ) -> Sandbox {
        let not = |why: String| Sandbox {
            proven: None,
            missing: Some(why),
        };
        let Some(found) = bundle.mode(mode) else {
            return not(format!("the mode `{mode}` is not in the bundle"));
        };
        let Some(name) = &found.environment else {
            return not(format!("the mode `{mode}` names no environment"));
        };
        let Some(spec) = bundle.environment(name) else {
            return not(format!("the environment `{name}` of mode `{mode}` does not exist"));
        };
        let Some(containment) = Containment::of(spec) else {
            // An environment that confines nothing contains nothing, and needs saying nothing.
            return Sandbox::default();
        };
        let Some(sandboxes) = sandboxes else {
            return not("no sandbox layer is wired to this hook".to_string());
        };
        let roots = [project.to_path_buf()];
        // INVARIANT (fail closed): only a proof this machine made (cached or now) contains a step.
        if let Err(why) = sandboxes.proven(mode, spec, &roots) {
            return not(format!(
                "the environment `{name}` of mode `{mode}` is not proven on this machine ({why}; see `sixfold sandbox check --mode {mode}`)"
            ));
        }
        // INVARIANT (fail closed): without this very binary to run it, nothing is contained
        // (a name looked up on `$PATH` could be any program).
        let Some(program) = sandboxes.program() else {
            return not("this sixfold binary cannot be found to run the sandbox".to_string());
        };
        let mut words = vec![
            program.to_string_lossy().into_owned(),
            "sandbox".into(),
            "run".into(),
            "--mode".into(),
            mode.to_string(),
            "--root".into(),
            project.to_string_lossy().into_owned(),
        ];
        if !with_project {
            words.push("--no-project".into());
        }
        words.push("--".into());
        let prefix = words
            .iter()
            .map(|w| sixfold_core::shell::quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        Sandbox {
            proven: Some(Proven { containment, prefix }),
            missing: None,
        }
    }

    /// Why command steps are not contained here, when the environment cannot be relied on.
    pub fn missing(&self) -> Option<&str> {
        self.missing.as_deref()
    }
}

/// A step as it will run: the effects to judge and, for a command inside a proven sandbox, the
/// command that runs it there.
#[derive(Debug, Clone, PartialEq)]
pub struct Contained {
    /// The effects to judge (and to record).
    pub effects: EffectProfile,
    /// The command line to run instead of the step's own, when it runs inside the sandbox.
    pub command: Option<String>,
}

/// The one entry point: `step` (a tool call mapped through its provider) as it will run in
/// `sandbox`. A command step inside a proven sandbox is judged with the contained effects and
/// rewritten to run through `sixfold sandbox run … -- bash -c '<command>'`; any other step
/// keeps its effects and runs as it is.
pub fn contain(step: &ToolEffects, sandbox: &Sandbox, classifier: &Classifier) -> Contained {
    let as_is = Contained {
        effects: step.effects.clone(),
        command: None,
    };
    let (Some(proven), Some(classified)) = (&sandbox.proven, &step.classified) else {
        return as_is;
    };
    if step.act.kind != "command" || step.act.text.trim().is_empty() {
        return as_is;
    }
    Contained {
        effects: proven.containment.effects(classified, classifier),
        command: Some(format!(
            "{} bash -c {}",
            proven.prefix,
            sixfold_core::shell::quote(&step.act.text)
        )),
    }
}

/// The tool input with its command field (`field`, e.g. `command`) replaced by `command`; `None`
/// when the input has no such string field (nothing to rewrite, so nothing may claim to be).
pub fn rewritten_input(input: &Value, field: &str, command: &str) -> Option<Value> {
    let mut input = input.clone();
    let slot = input.as_object_mut()?.get_mut(field)?;
    if !slot.is_string() {
        return None;
    }
    *slot = Value::String(command.to_string());
    Some(input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    struct Fake {
        proven: bool,
        asked: Cell<usize>,
    }

    impl Sandboxes for Fake {
        fn proven(&self, _: &str, _: &EnvironmentSpec, roots: &[PathBuf]) -> Result<(), String> {
            self.asked.set(self.asked.get() + 1);
            assert_eq!(roots, [PathBuf::from("/w")]);
            if self.proven {
                Ok(())
            } else {
                Err("no user namespaces".into())
            }
        }
        fn program(&self) -> Option<PathBuf> {
            Some(PathBuf::from("/opt/six fold/sixfold"))
        }
    }

    fn shipped() -> Bundle {
        Bundle::load(&[sixfold_core::shipped::source()]).0
    }

    fn step(bundle: &Bundle, command: &str) -> ToolEffects {
        let provider = bundle.provider("claude-code").unwrap();
        provider.tool_effects(
            "Bash",
            &serde_json::json!({ "command": command }),
            Path::new("/w"),
            bundle.classifier(),
        )
    }

    #[test]
    fn a_command_in_a_proven_sandbox_is_contained_and_rewritten() {
        let bundle = shipped();
        let fake = Fake {
            proven: true,
            asked: Cell::new(0),
        };
        let sandbox = Sandbox::resolve(&bundle, "workspace-write", Path::new("/w"), false, Some(&fake));
        assert_eq!(fake.asked.get(), 1);
        let contained = contain(
            &step(&bundle, "cargo test; echo 'it''s'"),
            &sandbox,
            bundle.classifier(),
        );
        assert!(contained.effects.contained && !contained.effects.reaches);
        let command = contained.command.unwrap();
        assert!(
            command.starts_with(
                "'/opt/six fold/sixfold' sandbox run --mode workspace-write --root /w --no-project -- bash -c "
            ),
            "{command}"
        );
        let line = sixfold_core::shell::parse(&command);
        assert_eq!(line.commands.len(), 1, "{command}");
        assert_eq!(line.commands[0].words.last().unwrap(), "cargo test; echo 'it''s'");
    }

    #[test]
    fn an_environment_that_is_not_proven_contains_nothing_and_says_why() {
        let bundle = shipped();
        let fake = Fake {
            proven: false,
            asked: Cell::new(0),
        };
        let sandbox = Sandbox::resolve(&bundle, "workspace-write", Path::new("/w"), true, Some(&fake));
        assert!(sandbox.missing().unwrap().contains("no user namespaces"));
        let contained = contain(&step(&bundle, "cargo test"), &sandbox, bundle.classifier());
        assert!(!contained.effects.contained && contained.command.is_none());
        let none = Sandbox::resolve(&bundle, "workspace-write", Path::new("/w"), true, None);
        assert!(none.missing().is_some());
    }

    #[test]
    fn full_confines_nothing_and_asks_nobody() {
        let bundle = shipped();
        let fake = Fake {
            proven: true,
            asked: Cell::new(0),
        };
        let sandbox = Sandbox::resolve(&bundle, "full", Path::new("/w"), true, Some(&fake));
        assert_eq!(fake.asked.get(), 0);
        assert!(sandbox.missing().is_none());
        assert!(contain(&step(&bundle, "make"), &sandbox, bundle.classifier())
            .command
            .is_none());
    }

    #[test]
    fn only_a_string_command_field_is_rewritten() {
        let input = serde_json::json!({ "command": "make", "timeout": 5 });
        let out = rewritten_input(&input, "command", "x").unwrap();
        assert_eq!(out, serde_json::json!({ "command": "x", "timeout": 5 }));
        assert!(rewritten_input(&serde_json::json!({ "command": 1 }), "command", "x").is_none());
        assert!(rewritten_input(&serde_json::json!("make"), "command", "x").is_none());
    }
}
