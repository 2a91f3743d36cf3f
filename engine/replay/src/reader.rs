//! What every format's reader shares: the context it reads in, the trait it implements, and
//! the mapping of a vendor's tool call through the bundle's provider file.

use sixfold_core::bundle::Bundle;
use sixfold_core::trace::{Edit, EditKind, Step, StepAct, Trace};
use std::path::Path;

/// What a reader needs besides the lines: the bundle (for tool maps and the classifier).
#[derive(Debug)]
pub struct ReadContext<'a> {
    /// The loaded bundle.
    pub bundle: &'a Bundle,
}

/// One format's reader: fed each parsed line in order, then finished.
pub(crate) trait LineReader {
    fn line(&mut self, trace: &mut Trace, value: serde_json::Value);
    fn finish(&mut self, _trace: &mut Trace) {}
}

/// Maps a tool call through a provider file: the act, its effects and, for a command, its parts
/// and the files it writes by name (unless the step already shows edits). Without the provider
/// file, the conservative profile.
pub(crate) fn map_tool(
    cx: &ReadContext<'_>,
    provider: &str,
    step: &mut Step,
    tool: &str,
    input: &serde_json::Value,
    cwd: &Path,
) {
    step.tool = tool.to_string();
    let Some(provider) = cx.bundle.provider(provider) else {
        step.act = StepAct {
            kind: "tool".into(),
            text: tool.to_string(),
        };
        step.effects = sixfold_core::effects::EffectProfile::unknown();
        return;
    };
    let mapped = provider.tool_effects(tool, input, cwd, cx.bundle.classifier());
    step.act = StepAct {
        kind: mapped.act.kind.to_string(),
        text: mapped.act.text,
    };
    step.effects = mapped.effects;
    if let Some(classified) = mapped.classified {
        step.commands = classified.parts.iter().map(|p| p.text.clone()).collect();
        step.command_rules = classified
            .parts
            .iter()
            .map(|p| p.rule.clone().unwrap_or_default())
            .collect();
        step.parts = classified.parts;
        if step.edits.is_empty() {
            step.edits = command_edits(&step.effects.writes, cwd);
        }
    }
}

/// Files a shell command writes by name: their content is not in the record. The working
/// directory itself (a build tool's output) and unknown places are not files.
fn command_edits(writes: &[String], cwd: &Path) -> Vec<Edit> {
    writes
        .iter()
        .filter(|w| w.as_str() != "*" && Path::new(w.as_str()) != cwd && !w.ends_with('/'))
        .map(|w| Edit::invisible(w.clone(), EditKind::Unknown))
        .collect()
}

/// The string at `key`, if it is one.
pub(crate) fn text<'v>(value: &'v serde_json::Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(|v| v.as_str())
}
