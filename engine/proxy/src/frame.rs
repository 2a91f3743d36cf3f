//! Frames: MCP's stdio transport is one JSON-RPC message per line, read to a bound by the core's
//! `lines` (a longer one is skipped to its end, its top-level `id` picked out on the way so the
//! request it answers or asks still gets an answer); JSON-RPC errors are built here.

use rmcp::model::ErrorCode;
use serde_json::{json, Value};
pub use sixfold_core::lines::{read_line, Line};

/// A frame larger than this is refused: 16 MiB holds any file a tool returns in one answer.
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// A JSON-RPC error answer.
pub(crate) fn error(id: Value, code: ErrorCode, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code.0, "message": message}})
}

/// A JSON-RPC result answer.
pub(crate) fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// A tool's error result (`isError`), how a refusal reaches the model.
pub(crate) fn tool_error(id: Value, text: &str) -> Value {
    result(
        id,
        json!({"content": [{"type": "text", "text": text}], "isError": true}),
    )
}

/// What kind of message a frame is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A request: a method and an id.
    Request,
    /// A notification: a method, no id.
    Notification,
    /// A response: an id with a result or an error.
    Response,
    /// None of those.
    Invalid,
}

/// Tells a parsed frame's kind.
pub(crate) fn kind(message: &Value) -> Kind {
    let Some(o) = message.as_object() else {
        return Kind::Invalid;
    };
    let id = o.get("id").is_some_and(|id| id.is_string() || id.is_number());
    match (o.get("method").and_then(Value::as_str), id) {
        (Some(_), true) => Kind::Request,
        (Some(_), false) if !o.contains_key("id") => Kind::Notification,
        (None, true) if o.contains_key("result") || o.contains_key("error") => Kind::Response,
        _ => Kind::Invalid,
    }
}

/// A message's id as a key (its JSON text: `1` and `"1"` differ, as in JSON-RPC).
pub(crate) fn key(id: &Value) -> String {
    id.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(kind(&json!({"jsonrpc":"2.0","id":1,"method":"x"})), Kind::Request);
        assert_eq!(kind(&json!({"jsonrpc":"2.0","method":"x"})), Kind::Notification);
        assert_eq!(kind(&json!({"jsonrpc":"2.0","id":"a","result":{}})), Kind::Response);
        assert_eq!(kind(&json!({"jsonrpc":"2.0","id":null,"method":"x"})), Kind::Invalid);
        assert_eq!(kind(&json!([1])), Kind::Invalid);
    }
}
