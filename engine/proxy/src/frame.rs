//! Frames: MCP's stdio transport is one JSON-RPC message per line. Lines are read to a bound (a
//! longer one is skipped to its end, its top-level `id` picked out on the way so the request it
//! answers or asks still gets an answer), and JSON-RPC errors are built here.

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
    /// A frame over the bound, skipped to its end, with its top-level `id` where it had one.
    TooLarge(Option<Value>),
    /// The stream ended.
    End,
}

/// Reads one line of at most `max` bytes. A read error ends the stream.
pub fn read_line(reader: &mut impl BufRead, max: usize) -> Line {
    let mut frame = Vec::new();
    let mut over = false;
    let mut scan = IdScan::default();
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
                    (true, _) => Line::TooLarge(scan.found),
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
                if !over {
                    scan.feed(&frame);
                }
                scan.feed(chunk);
                over = true;
                frame = Vec::new();
            }
            (done.is_some(), done.unwrap_or(buf.len()))
        };
        reader.consume(used);
        if done {
            return if over {
                Line::TooLarge(scan.found)
            } else {
                Line::Frame(frame)
            };
        }
    }
}

/// The most bytes a top-level `id` value may take to be picked out.
const MAX_ID_BYTES: usize = 256;

/// Picks the top-level `id` out of a JSON object read in pieces and never held whole: a small
/// tokenizer that knows only strings, nesting and the keys of the outermost object.
#[derive(Debug, Default)]
struct IdScan {
    depth: u32,
    in_string: bool,
    escape: bool,
    /// The next string at depth 1 is a key.
    want_key: bool,
    /// The key being read, and the last key read.
    key: Option<Vec<u8>>,
    last_key: Option<Vec<u8>>,
    /// The `id` value being read.
    value: Option<Vec<u8>>,
    found: Option<Value>,
    done: bool,
}

impl IdScan {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.done {
                return;
            }
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            if self.escape {
                self.escape = false;
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.in_string = false;
                if let Some(key) = self.key.take() {
                    self.last_key = Some(key);
                }
            }
            if let Some(key) = &mut self.key {
                if key.len() < 8 {
                    key.push(b);
                }
            }
            if let Some(value) = &mut self.value {
                value.push(b);
            }
            return;
        }
        if let Some(value) = &mut self.value {
            if self.depth == 1 && (b == b',' || b == b'}') {
                self.found = serde_json::from_slice(value).ok();
                self.done = true;
                return;
            }
            value.push(b);
            if value.len() > MAX_ID_BYTES {
                self.done = true;
            }
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.want_key && self.value.is_none() {
                    self.key = Some(Vec::new());
                    self.want_key = false;
                }
            }
            b'{' | b'[' => {
                self.depth += 1;
                if self.depth == 1 {
                    self.want_key = b == b'{';
                }
            }
            b'}' | b']' => self.depth = self.depth.saturating_sub(1),
            b',' if self.depth == 1 => {
                self.want_key = true;
                self.last_key = None;
            }
            // The key is used up whichever it was.
            b':' if self.depth == 1 && self.value.is_none() && self.last_key.take().as_deref() == Some(b"id") => {
                self.value = Some(Vec::new());
            }
            _ => {}
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
        assert_eq!(read_line(&mut r, 10), Line::TooLarge(None));
        assert_eq!(read_line(&mut r, 10), Line::Frame(b"{\"b\":2}".to_vec()));
        assert_eq!(read_line(&mut r, 10), Line::End);
    }

    #[test]
    fn an_oversized_frame_still_names_its_top_level_id() {
        let big = "x".repeat(200);
        let cases = [
            (
                format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"{big}\"}}"),
                Some(json!(7)),
            ),
            // The TypeScript SDK writes the id last.
            (
                format!("{{\"result\":{{\"id\":99,\"t\":\"{big}\"}},\"jsonrpc\":\"2.0\",\"id\":\"a,}}\"}}"),
                Some(json!("a,}")),
            ),
            // An `id` inside a string or a nested object is not the frame's.
            (
                format!("{{\"method\":\"x\",\"params\":{{\"id\":3,\"s\":\"\\\"id\\\":4 {big}\"}}}}"),
                None,
            ),
            (format!("{{\"s\":\"{big}\", \"id\" : 12 }}"), Some(json!(12))),
        ];
        for (text, id) in cases {
            let mut r = BufReader::with_capacity(16, text.as_bytes());
            assert_eq!(read_line(&mut r, 50), Line::TooLarge(id), "{text}");
        }
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
