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

/// An agent CLI's name for an MCP server's tool (`mcp__SERVER__TOOL`): the server and the tool.
/// Only such a call reads the bundle's `[mcp]` maps (`call`), so one judgement's load of any
/// other tool leaves them unread (`bundle::Needs::with_tool`).
pub(crate) fn mcp_tool(name: &str) -> Option<(&str, &str)> {
    name.strip_prefix("mcp__").and_then(|rest| rest.split_once("__"))
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

    /// Why a call's input cannot be read as its tool's description needs it, if it cannot: the
    /// input is not an object, or a field the description reads (the command field, a `{field}`
    /// scope without a default) is missing, empty or not a string, or an optional one (`{field|.}`,
    /// the spawn field) is there but not a string. `None` for a tool no file describes: it gets
    /// the conservative profile instead.
    ///
    /// A call whose input cannot be read is not judged by what it seems to do: the adapter
    /// refuses it with this reason.
    ///
    /// ```
    /// use sixfold_core::bundle::Bundle;
    /// use serde_json::json;
    /// let (bundle, _) = Bundle::load(&[sixfold_core::shipped::source()]);
    /// let claude = bundle.provider("claude-code").unwrap();
    /// assert_eq!(claude.unreadable_input("Bash", &json!({"command": "ls"})), None);
    /// assert!(claude.unreadable_input("Bash", &json!({"command": ["rm", "-rf", "/"]})).is_some());
    /// assert!(claude.unreadable_input("Write", &json!({"content": "x"})).is_some());
    /// ```
    pub fn unreadable_input(&self, tool: &str, input: &serde_json::Value) -> Option<String> {
        let spec = self.spec.tools.get(tool)?;
        let Some(fields) = input.as_object() else {
            return Some(format!("the input of `{tool}` is not an object"));
        };
        let mut required: Vec<&str> = spec.command.iter().map(String::as_str).collect();
        let mut optional: Vec<&str> = spec.spawn.iter().map(String::as_str).collect();
        let scopes = spec.effects.reads.iter().chain(spec.effects.writes.iter()).flatten();
        for scope in scopes {
            // Each `{field}` or `{field|default}` in it (a scope may join several).
            for piece in scope.split('{').skip(1) {
                let Some((inner, _)) = piece.split_once('}') else {
                    continue;
                };
                match inner.split_once('|') {
                    Some((field, _)) => optional.push(field),
                    None => required.push(inner),
                }
            }
        }
        // INVARIANT (fail closed): a field the judgement reads that is not a plain string makes
        // the call unreadable, so it is refused rather than judged as if the field said nothing.
        for field in required {
            match fields.get(field) {
                Some(serde_json::Value::String(s)) if !s.trim().is_empty() => {}
                Some(serde_json::Value::String(_)) => return Some(format!("`{tool}` has an empty `{field}`")),
                None | Some(serde_json::Value::Null) => return Some(format!("`{tool}` has no `{field}`")),
                Some(other) => return Some(format!("`{tool}`'s `{field}` is {}, not a string", kind(other))),
            }
        }
        for field in optional {
            match fields.get(field) {
                None | Some(serde_json::Value::Null | serde_json::Value::String(_)) => {}
                Some(other) => return Some(format!("`{tool}`'s `{field}` is {}, not a string", kind(other))),
            }
        }
        None
    }
}

/// A JSON value's kind, in words.
fn kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
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
/// A scope may join several (`{path|.}/{pattern}`, a glob below a directory): a value that is
/// absolute (`/etc/*`, `~/…`) starts the place afresh, as the tool reads it.
fn expand(scope: &str, input: &serde_json::Value, cwd: &Path) -> String {
    let whole = scope.starts_with('{') && scope.ends_with('}') && scope.matches('{').count() == 1;
    if !whole && scope.contains('{') {
        return expand_joined(scope, input, cwd);
    }
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

/// A scope of several placeholders joined by `/`, each expanded with [`expand`]; the last one
/// that is absolute starts the place.
fn expand_joined(scope: &str, input: &serde_json::Value, cwd: &Path) -> String {
    let mut place = cwd.to_string_lossy().into_owned();
    for part in scope.split('/').filter(|p| !p.is_empty()) {
        if !part.starts_with('{') {
            place = format!("{}/{part}", place.trim_end_matches('/'));
            continue;
        }
        let raw = {
            let inner = part.trim_start_matches('{').trim_end_matches('}');
            let (field, default) = inner.split_once('|').map_or((inner, None), |(f, d)| (f, Some(d)));
            match input.get(field) {
                Some(serde_json::Value::String(s)) if !s.is_empty() => s.clone(),
                None | Some(serde_json::Value::Null) => match default {
                    Some(d) => d.to_string(),
                    // INVARIANT (fail closed): a missing field without a default is unknown.
                    None => return "*".into(),
                },
                Some(_) => return "*".into(),
            }
        };
        if raw == "*" && part == scope {
            return raw;
        }
        place = if raw.starts_with('/') || raw.starts_with('~') {
            raw
        } else if raw == "." {
            place
        } else {
            format!("{}/{raw}", place.trim_end_matches('/'))
        };
    }
    place
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_the_description_cannot_read_is_told_apart() {
        let spec: crate::format::ProviderFile = toml::from_str(
            r#"
            id = "p"
            name = "P"
            description = "d"
            [binary]
            names = ["p"]
            [tools.Shell]
            command = "command"
            [tools.Write]
            writes = ["{file_path}"]
            [tools.Grep]
            reads = ["{path|.}"]
            [tools.Task]
            spawn = "subagent_type"
            "#,
        )
        .unwrap();
        let p = Provider {
            spec,
            file: "p.toml".into(),
        };
        let unreadable = [
            ("Shell", serde_json::json!({})),
            ("Shell", serde_json::json!({"command": ["rm", "-rf", "/"]})),
            ("Shell", serde_json::json!({"command": 3})),
            ("Shell", serde_json::json!({"command": null})),
            ("Shell", serde_json::json!({"command": "  "})),
            ("Shell", serde_json::json!("ls")),
            ("Shell", serde_json::Value::Null),
            ("Write", serde_json::json!({"content": "x"})),
            ("Write", serde_json::json!({"file_path": {"p": "/etc/x"}})),
            ("Grep", serde_json::json!({"path": ["/root"]})),
            ("Task", serde_json::json!({"subagent_type": 1})),
        ];
        for (tool, input) in unreadable {
            assert!(p.unreadable_input(tool, &input).is_some(), "{tool} {input}");
        }
        let readable = [
            ("Shell", serde_json::json!({"command": "git status", "description": 3})),
            ("Write", serde_json::json!({"file_path": "a", "content": "x"})),
            ("Grep", serde_json::json!({"pattern": "x"})),
            ("Grep", serde_json::json!({"pattern": "x", "path": "src"})),
            ("Task", serde_json::json!({"prompt": "p"})),
            ("Unknown", serde_json::json!(3)),
        ];
        for (tool, input) in readable {
            assert_eq!(p.unreadable_input(tool, &input), None, "{tool} {input}");
        }
    }

    #[test]
    fn placeholders_take_input_fields() {
        let input = serde_json::json!({"file_path": "src/a.rs", "n": 3});
        let cwd = Path::new("/w");
        assert_eq!(expand("{file_path}", &input, cwd), "/w/src/a.rs");
        assert_eq!(expand("{path|.}", &input, cwd), "/w");
        assert_eq!(expand("{path}", &input, cwd), "*");
        assert_eq!(expand("{n}", &input, cwd), "*");
        assert_eq!(expand("workspace", &input, cwd), "workspace");
        // Joined: a glob below a directory; an absolute pattern starts afresh.
        let glob = serde_json::json!({"pattern": "**/*.rs", "path": "src"});
        assert_eq!(expand("{path|.}/{pattern}", &glob, cwd), "/w/src/**/*.rs");
        let out = serde_json::json!({"pattern": "/etc/*"});
        assert_eq!(expand("{path|.}/{pattern}", &out, cwd), "/etc/*");
        let up = serde_json::json!({"pattern": "../*"});
        assert_eq!(expand("{path|.}/{pattern}", &up, cwd), "/w/../*");
        assert_eq!(expand("{path|.}/**/{glob|*}", &serde_json::json!({}), cwd), "/w/**/*");
    }
}
