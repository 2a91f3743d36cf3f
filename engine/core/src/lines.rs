//! Lines of untrusted input read to a bound: a line longer than the bound is skipped to its end
//! and never held whole. Where the line holds a JSON object (a JSON-RPC frame), its top-level
//! `id` is picked out on the way, so a request too large to read can still be answered.

use serde_json::Value;
use std::io::{BufRead, ErrorKind};

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
///
/// ```
/// use sixfold_core::lines::{read_line, Line};
/// let text = b"{\"id\":1}\n{\"params\":\"far too long\",\"id\":2}\n";
/// let mut reader = std::io::BufReader::new(&text[..]);
/// assert_eq!(read_line(&mut reader, 16), Line::Frame(b"{\"id\":1}".to_vec()));
/// assert_eq!(read_line(&mut reader, 16), Line::TooLarge(Some(serde_json::json!(2))));
/// assert_eq!(read_line(&mut reader, 16), Line::End);
/// ```
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
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
}
