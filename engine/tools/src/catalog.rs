//! The tools offered, as the agent sees them: names, descriptions and input schemas. What each
//! does is not here but in the bundle (`providers/sixfold-tools.toml`).

use serde_json::{json, Value};

/// The tool that answers Claude Code's permission prompts (`--permission-prompt-tool`).
pub(crate) const APPROVE: &str = "approve";

/// One tool: its name, what it does for the agent, its input schema.
pub(crate) struct Offered {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    pub(crate) schema: Value,
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// The working tools.
pub(crate) fn tools() -> Vec<Offered> {
    let path = json!({"type": "string", "description": "absolute, or relative to the workspace root"});
    vec![
        Offered {
            name: "read_file",
            description: "Read a text file. Long files come in pages: pass `offset` (first line, 1-based) and `limit` (lines) to read on.",
            schema: object(
                json!({"path": path, "offset": {"type": "integer", "minimum": 1}, "limit": {"type": "integer", "minimum": 1}}),
                &["path"],
            ),
        },
        Offered {
            name: "write_file",
            description: "Create or replace a whole file with `content`.",
            schema: object(json!({"path": path, "content": {"type": "string"}}), &["path", "content"]),
        },
        Offered {
            name: "edit_file",
            description: "Replace the exact text `old_string` with `new_string` in a file; `old_string` must occur once unless `replace_all` is true.",
            schema: object(
                json!({"path": path, "old_string": {"type": "string"}, "new_string": {"type": "string"}, "replace_all": {"type": "boolean"}}),
                &["path", "old_string", "new_string"],
            ),
        },
        Offered {
            name: "list_dir",
            description: "List a directory (default: the workspace root); directories end with `/`.",
            schema: object(json!({"path": path}), &[]),
        },
        Offered {
            name: "glob",
            description: "Find files whose path under `path` (default: the workspace root) matches a glob such as `**/*.rs`.",
            schema: object(json!({"pattern": {"type": "string"}, "path": path}), &["pattern"]),
        },
        Offered {
            name: "grep",
            description: "Search files under `path` (default: the workspace root) for lines matching a regular expression; `glob` limits the file names searched. Prints `path:line:text`.",
            schema: object(
                json!({"pattern": {"type": "string"}, "path": path, "glob": {"type": "string"}}),
                &["pattern"],
            ),
        },
        Offered {
            name: "bash",
            description: "Run a shell command with bash in the workspace root, confined by the sandbox of the active mode. `timeout` in seconds (default 120, at most 600).",
            schema: object(
                json!({"command": {"type": "string"}, "timeout": {"type": "integer", "minimum": 1, "maximum": 600}}),
                &["command"],
            ),
        },
    ]
}

/// The approval tool (served alone, by a second server).
pub(crate) fn approval() -> Offered {
    Offered {
        name: APPROVE,
        description: "Answers the agent CLI's permission prompts for sixfold.",
        schema: json!({
            "type": "object",
            "properties": {"tool_name": {"type": "string"}, "input": {"type": "object"}, "tool_use_id": {"type": "string"}},
            "required": ["tool_name", "input"],
        }),
    }
}
