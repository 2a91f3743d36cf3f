//! A provider's tool map applied: a tool call (name and input) becomes an act and its effects.
//! Which tools exist and what they do is data in `providers/*.toml`; this is only the mechanism.

use crate::classify::{Classified, Classifier};
use crate::effects::EffectProfile;
use crate::format::{ProviderFile, ToolFile};
use serde::Serialize;
use std::path::Path;

/// A loaded provider.
#[derive(Debug, Clone)]
pub struct Provider {
    /// As written.
    pub spec: ProviderFile,
    /// Where it was written.
    pub file: String,
}

/// What a step does, in the terms a person reads: a command, a path, a URL, a sub-agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Act {
    /// `command`, `path`, `url`, `agent` or `tool`.
    pub kind: &'static str,
    /// The command line, path, URL, sub-agent name or tool name.
    pub text: String,
}

/// A tool call mapped through a provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolEffects {
    /// The act.
    pub act: Act,
    /// Its effects (paths absolute where the input gave them relative).
    pub effects: EffectProfile,
    /// For the spawn meta-tool: the sub-agent asked for (empty when unnamed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spawn: Option<String>,
    /// For a command: how it was classified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classified: Option<Classified>,
    /// False when the provider file does not know the tool (the conservative profile applied).
    pub known: bool,
}

impl Provider {
    /// Maps a tool call to its effects. `cwd` is where relative paths and commands resolve.
    pub fn tool_effects(
        &self,
        tool: &str,
        input: &serde_json::Value,
        cwd: &Path,
        classifier: &Classifier,
    ) -> ToolEffects {
        match self.spec.tools.get(tool) {
            Some(spec) => tool_file_effects(spec, tool, input, cwd, classifier),
            // INVARIANT (fail closed): a tool no provider file describes gets the conservative profile.
            None => unknown_tool(tool),
        }
    }
}

/// The conservative answer for a tool no file describes.
pub(crate) fn unknown_tool(tool: &str) -> ToolEffects {
    ToolEffects {
        act: Act {
            kind: "tool",
            text: tool.to_string(),
        },
        effects: EffectProfile::unknown(),
        spawn: None,
        classified: None,
        known: false,
    }
}

/// Applies one tool's description to a call.
pub(crate) fn tool_file_effects(
    spec: &ToolFile,
    tool: &str,
    input: &serde_json::Value,
    cwd: &Path,
    classifier: &Classifier,
) -> ToolEffects {
    if let Some(field) = &spec.command {
        let command = input.get(field).and_then(|v| v.as_str()).unwrap_or("");
        let classified = classifier.classify(command, cwd);
        return ToolEffects {
            act: Act {
                kind: "command",
                text: command.to_string(),
            },
            effects: classified.effects.clone(),
            spawn: None,
            classified: Some(classified),
            known: true,
        };
    }
    let expand = |scopes: &[String]| -> Vec<String> { scopes.iter().map(|s| expand(s, input, cwd)).collect() };
    let written = EffectProfile::from(spec.effects.clone());
    let effects = written.with_scopes(expand(&written.reads), expand(&written.writes));
    let spawn = spec
        .spawn
        .as_ref()
        .map(|field| input.get(field).and_then(|v| v.as_str()).unwrap_or("").to_string());
    let act = if let Some(name) = &spawn {
        Act {
            kind: "agent",
            text: name.clone(),
        }
    } else if let Some(url) = input.get("url").and_then(|v| v.as_str()) {
        Act {
            kind: "url",
            text: url.to_string(),
        }
    } else if let Some(path) = effects.writes.first().or(effects.reads.first()) {
        Act {
            kind: "path",
            text: path.clone(),
        }
    } else {
        Act {
            kind: "tool",
            text: tool.to_string(),
        }
    };
    ToolEffects {
        act,
        effects,
        spawn,
        classified: None,
        known: true,
    }
}

/// Replaces `{field}` or `{field|default}` with that field of the input, made absolute against
/// `cwd`. A missing field without a default, or a value that is not a string, is unknown (`*`).
fn expand(scope: &str, input: &serde_json::Value, cwd: &Path) -> String {
    let Some(inner) = scope.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
        return scope.to_string();
    };
    let (field, default) = match inner.split_once('|') {
        Some((f, d)) => (f, Some(d)),
        None => (inner, None),
    };
    // INVARIANT (fail closed): a field that is missing (without a default) or not a string is `*`.
    let value = match input.get(field) {
        Some(serde_json::Value::String(s)) if !s.is_empty() => s.as_str(),
        None | Some(serde_json::Value::Null) => match default {
            Some(d) => d,
            None => return "*".into(),
        },
        Some(_) => return "*".into(),
    };
    if value.starts_with('/') || value.starts_with('~') || value == "*" {
        value.to_string()
    } else if value == "." {
        cwd.to_string_lossy().into_owned()
    } else {
        cwd.join(value).to_string_lossy().into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_take_input_fields() {
        let input = serde_json::json!({"file_path": "src/a.rs", "n": 3});
        let cwd = Path::new("/w");
        assert_eq!(expand("{file_path}", &input, cwd), "/w/src/a.rs");
        assert_eq!(expand("{path|.}", &input, cwd), "/w");
        assert_eq!(expand("{path}", &input, cwd), "*");
        assert_eq!(expand("{n}", &input, cwd), "*");
        assert_eq!(expand("workspace", &input, cwd), "workspace");
    }
}
