//! What Codex's readers share: the provider and tool names, and reading the values Codex
//! writes (commands, statuses, change kinds, message text, `file://` URIs).

use crate::reader::text;
use serde_json::Value;
use sixfold_core::trace::{EditKind, Status, Step, StepAct, Trace};
use std::path::{Path, PathBuf};

/// The provider file both readers map tools through.
pub(super) const PROVIDER: &str = "codex";

/// The tool a shell command runs through (its `cmd` field holds the command line).
pub(super) const EXEC_TOOL: &str = "exec_command";

/// The tool that edits files with a patch.
pub(super) const PATCH_TOOL: &str = "apply_patch";

/// Replaces a patch step's writes (the provider's broad scope) with the files it names.
pub(super) fn set_writes(step: &mut Step, paths: &[String]) {
    if paths.is_empty() {
        return;
    }
    step.effects.writes = paths.to_vec();
    if step.act.kind != "command" {
        if let Some(first) = paths.first() {
            step.act = StepAct {
                kind: "path".into(),
                text: first.clone(),
            };
        }
    }
}

/// Where relative paths resolve: the recorded cwd, or unknown (`*`, which the classifier keeps
/// as an unknown place) when the record has none — the exec stream never says.
pub(super) fn cwd_of(trace: &Trace) -> PathBuf {
    PathBuf::from(trace.cwd.clone().unwrap_or_else(|| "*".into()))
}

pub(super) fn absolute(cwd: &Path, path: &str) -> PathBuf {
    if path.starts_with('/') {
        PathBuf::from(path)
    } else {
        cwd.join(path)
    }
}

/// A command as one shell line: a string as it is, an argument vector quoted and joined.
pub(super) fn command_text(command: Option<&Value>) -> String {
    match command {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(words)) => sixfold_core::shell::join(words.iter().filter_map(Value::as_str)),
        _ => String::new(),
    }
}

/// `completed`, `failed`, `declined`, `in_progress`, as a status.
pub(super) fn item_status(status: &str) -> Status {
    match status {
        "completed" | "success" => Status::Completed,
        "failed" | "error" => Status::Failed,
        "declined" | "rejected" | "denied" => Status::Refused,
        _ => Status::Unknown,
    }
}

pub(super) fn code_status(exit_code: Option<i64>) -> Status {
    match exit_code {
        Some(0) => Status::Completed,
        Some(_) => Status::Failed,
        None => Status::Unknown,
    }
}

pub(super) fn change_kind(kind: &str) -> EditKind {
    match kind {
        "add" => EditKind::Create,
        "delete" => EditKind::Delete,
        "update" => EditKind::Update,
        _ => EditKind::Unknown,
    }
}

/// A message's text: its text blocks (`output_text`, `Text`, …) joined.
pub(super) fn message_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.trim().to_string(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| text(b, "text"))
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_string(),
        _ => String::new(),
    }
}

/// `file:///tmp/a%20b` → `/tmp/a b`; anything else as it is.
pub(super) fn uri_path(uri: &str) -> String {
    let Some(rest) = uri.strip_prefix("file://") else {
        return uri.to_string();
    };
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = |j: usize| bytes.get(j).and_then(|c| (*c as char).to_digit(16));
        match (b, hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_helpers() {
        assert_eq!(uri_path("file:///tmp/a%20b/ws"), "/tmp/a b/ws");
        assert_eq!(uri_path("/plain"), "/plain");
        assert_eq!(uri_path("file:///x%2"), "/x%2");
        assert_eq!(
            command_text(Some(&serde_json::json!(["/bin/bash", "-lc", "it's"]))),
            r"/bin/bash -lc 'it'\''s'"
        );
        assert_eq!(command_text(Some(&serde_json::json!("ls -l"))), "ls -l");
        assert_eq!(command_text(None), "");
    }
}
