//! Frames: MCP's stdio transport is one JSON-RPC message per line. Lines are read to a bound (a
//! longer one is skipped to its end and answered with an error), and JSON-RPC errors are built
//! here.

use rmcp::model::ErrorCode;
use serde_json::{json, Value};
use std::io::{BufRead, ErrorKind};

/// A frame larger than this is refused: 16 MiB holds any file a tool returns in one answer.
pub const MAX_FRAME_BYTES: usize = 16 * 1024 * 1024;

/// One line read.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A frame within the bound (without its newline).
    Frame(Vec<u8>),
    /// A frame over the bound, skipped to its end.
    TooLarge,
    /// The stream ended.
    End,
}

/// Reads one line of at most `max` bytes. A read error ends the stream.
pub fn read_line(reader: &mut impl BufRead, max: usize) -> Line {
    let mut frame = Vec::new();
    let mut over = false;
    loop {
        let (done, used) = {
            let buf = match reader.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return Line::End,
            };
            if buf.is_empty() {
                // End of stream: a last line without its newline still counts.
                return match (over, frame.is_empty()) {
                    (true, _) => Line::TooLarge,
                    (false, true) => Line::End,
                    (false, false) => Line::Frame(frame),
                };
            }
            let (chunk, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (buf.get(..i).unwrap_or_default(), Some(i + 1)),
                None => (buf, None),
            };
            // INVARIANT (fail closed): a frame is never held past the bound; the rest of it is
            // skipped, so an endless line cannot grow the proxy.
            if !over && frame.len() + chunk.len() <= max {
                frame.extend_from_slice(chunk);
            } else {
                over = true;
                frame = Vec::new();
            }
            (done.is_some(), done.unwrap_or(buf.len()))
        };
        reader.consume(used);
        if done {
            return if over { Line::TooLarge } else { Line::Frame(frame) };
        }
    }
}

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
    use std::io::BufReader;

    #[test]
    fn lines_are_read_to_the_bound_and_a_long_one_is_skipped() {
        let text = b"{\"a\":1}\nxxxxxxxxxxxxxxxxxxxxxxxx\n{\"b\":2}";
        let mut r = BufReader::with_capacity(4, &text[..]);
        assert_eq!(read_line(&mut r, 10), Line::Frame(b"{\"a\":1}".to_vec()));
        assert_eq!(read_line(&mut r, 10), Line::TooLarge);
        assert_eq!(read_line(&mut r, 10), Line::Frame(b"{\"b\":2}".to_vec()));
        assert_eq!(read_line(&mut r, 10), Line::End);
    }

    #[test]
    fn kinds() {
        assert_eq!(kind(&json!({"jsonrpc":"2.0","id":1,"method":"x"})), Kind::Request);
        assert_eq!(kind(&json!({"jsonrpc":"2.0","method":"x"})), Kind::Notification);
        assert_eq!(kind(&json!({"jsonrpc":"2.0","id":"a","result":{}})), Kind::Response);
        assert_eq!(kind(&json!({"jsonrpc":"2.0","id":null,"method":"x"})), Kind::Invalid);
        assert_eq!(kind(&json!([1])), Kind::Invalid);
    }
}
