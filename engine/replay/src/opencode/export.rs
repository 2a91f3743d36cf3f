//! `opencode export <session>`: one JSON document, `{info, messages: [{info, parts}, …]}`,
//! printed indented over many lines. It is streamed: the session's `info` is read whole (it is
//! small), then each message in turn, none longer than [`MAX_LINE_BYTES`], so memory holds one
//! message however long the session. The working directory is the session's `directory` (an
//! assistant message's `path.cwd` where that is missing). The run ended when its last message is
//! the agent's and finished for a reason other than calling tools. A document that breaks off
//! is recorded as malformed at the message where it broke, and what came before still counts.

use super::Parts;
use crate::lines::MAX_LINE_BYTES;
use crate::reader::{text, ReadContext};
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use sixfold_core::trace::{Malformed, Trace};
use std::cell::Cell;
use std::io::Read;
use std::rc::Rc;

/// Reads an export into `trace`. `trace.lines` counts the messages read.
pub(crate) fn read<R: Read>(input: R, cx: &ReadContext<'_>, trace: &mut Trace) {
    let used = Rc::new(Cell::new(0usize));
    let bounded = Bounded {
        inner: input,
        used: Rc::clone(&used),
    };
    let mut de = serde_json::Deserializer::from_reader(bounded);
    let mut session = Session {
        parts: Parts::new(cx),
        trace,
        used,
    };
    let read = (&mut session).deserialize(&mut de).and_then(|()| de.end());
    if let Err(e) = read {
        let trace = session.trace;
        // INVARIANT (fail closed): a document that broke off did not show the run's end.
        trace.ended = false;
        trace.claim = None;
        trace.malformed.push(Malformed {
            line: trace.lines + 1,
            error: e.to_string(),
        });
    }
}

/// The input, refusing to give more than [`MAX_LINE_BYTES`] to one message.
struct Bounded<R> {
    inner: R,
    used: Rc<Cell<usize>>,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let used = self.used.get().saturating_add(n);
        if used > MAX_LINE_BYTES {
            return Err(std::io::Error::other(format!(
                "a message is longer than {MAX_LINE_BYTES} bytes"
            )));
        }
        self.used.set(used);
        Ok(n)
    }
}

struct Session<'s, 'a> {
    parts: Parts<'a>,
    trace: &'s mut Trace,
    used: Rc<Cell<usize>>,
}

impl Session<'_, '_> {
    fn info(&mut self, info: Value) {
        if let Some(dir) = text(&info, "directory").filter(|d| !d.is_empty()) {
            self.trace.cwd = Some(dir.to_string());
        }
        self.trace.record = Some(info);
    }

    fn message(&mut self, message: Value) {
        self.trace.lines += 1;
        let info = message.get("info").unwrap_or(&Value::Null);
        let role = text(info, "role").unwrap_or("");
        if role == "assistant" && self.trace.cwd.is_none() {
            self.trace.cwd = info.pointer("/path/cwd").and_then(Value::as_str).map(String::from);
        }
        for part in message.get("parts").and_then(Value::as_array).into_iter().flatten() {
            self.parts.part(self.trace, part);
        }
        match role {
            "assistant" => {
                let finish = text(info, "finish");
                let failed = info.get("error").is_some_and(|e| !e.is_null());
                if failed || finish.is_some_and(|f| f != "tool-calls") {
                    self.trace.ended = true;
                    self.trace.claim = Some(self.parts.claim(failed || finish == Some("error")));
                } else {
                    self.trace.ended = false;
                    self.trace.claim = None;
                }
            }
            "user" => {
                self.trace.ended = false;
                self.trace.claim = None;
            }
            other => self
                .trace
                .skip(&format!("message/{}", if other.is_empty() { "untyped" } else { other })),
        }
    }
}

impl<'de> DeserializeSeed<'de> for &mut Session<'_, '_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for &mut Session<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an OpenCode export: {info, messages}")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "info" => {
                    let info: Value = map.next_value()?;
                    self.info(info);
                }
                "messages" => map.next_value_seed(Messages(&mut *self))?,
                other => {
                    map.next_value::<IgnoredAny>()?;
                    self.trace.skip(other);
                }
            }
        }
        Ok(())
    }
}

/// The `messages` array, one message at a time.
struct Messages<'m, 's, 'a>(&'m mut Session<'s, 'a>);

impl<'de> DeserializeSeed<'de> for Messages<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
        de.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Messages<'_, '_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        loop {
            self.0.used.set(0);
            match seq.next_element::<Value>()? {
                Some(message) => self.0.message(message),
                None => return Ok(()),
            }
        }
    }
}
