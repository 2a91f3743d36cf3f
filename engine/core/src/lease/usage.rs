//! A model's token usage read from the agent CLI's own record (the transcript a hook is given,
//! a rollout), a chunk at a time from where the last read stopped: which fields hold it is data,
//! a provider file's `[usage]` table of JSON pointers into one line of the record.

use super::Tokens;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Where a record's lines hold the model and its token usage: JSON pointers (RFC 6901) into
/// one line. A line where `input` points at a number is a usage line; a line where `model`
/// points at a string names the model for it and the lines after it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UsageFile {
    /// The model id.
    pub model: String,
    /// The message's id, where one message's usage is written on several lines (the largest
    /// counts once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Input tokens.
    pub input: String,
    /// Output tokens.
    pub output: String,
    /// Input tokens read from the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<String>,
    /// Input tokens written to the cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<String>,
    /// The usage lines hold the run's totals so far, not one message's own.
    #[serde(default)]
    pub totals: bool,
    /// `input` counts the tokens read from the cache too (they are priced apart).
    #[serde(default)]
    pub input_includes_cache_read: bool,
    /// Where a helper's own record is, from the parent's: `{dir}` the parent record's path
    /// without its extension, `{agent}` the helper's agent id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub helper_record: Option<String>,
}

/// How far a record was read, and what the read needs to go on from there.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cursor {
    /// The record's path.
    pub path: String,
    /// Bytes read (whole lines only).
    pub offset: u64,
    /// The model the record named last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The last message counted, where messages have ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// What was counted for it (or the totals last seen).
    #[serde(default)]
    pub last: Tokens,
}

/// What one read found: the tokens per model, and why usage could not be read where it could not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Read {
    /// Tokens, per model.
    pub tokens: BTreeMap<String, Tokens>,
    /// Why some usage could not be read.
    pub unread: Option<String>,
}

impl UsageFile {
    /// Reads the whole lines of `chunk` (the record from `cursor.offset`; a last line without
    /// its newline is left for the next read), advancing `cursor`.
    ///
    /// ```
    /// use sixfold_core::lease::usage::{Cursor, UsageFile};
    /// let spec = UsageFile {
    ///     model: "/m".into(), id: Some("/id".into()), input: "/u/in".into(), output: "/u/out".into(),
    ///     ..UsageFile::default()
    /// };
    /// let mut cursor = Cursor::default();
    /// // One message written on two lines counts once; a half-written line waits.
    /// let chunk = b"{\"m\":\"x\",\"id\":\"a\",\"u\":{\"in\":10,\"out\":1}}\n{\"m\":\"x\",\"id\":\"a\",\"u\":{\"in\":10,\"out\":5}}\n{\"m\"";
    /// let read = spec.read(&mut cursor, chunk);
    /// assert_eq!(read.tokens["x"].input, 10);
    /// assert_eq!(read.tokens["x"].output, 5);
    /// assert_eq!(cursor.offset as usize, chunk.len() - 4);
    /// ```
    pub fn read(&self, cursor: &mut Cursor, chunk: &[u8]) -> Read {
        let mut read = Read::default();
        let mut used = 0usize;
        for line in chunk.split_inclusive(|b| *b == b'\n') {
            if line.last() != Some(&b'\n') {
                break;
            }
            used += line.len();
            let Ok(value) = serde_json::from_slice::<Value>(line) else {
                continue;
            };
            if let Some(model) = value.pointer(&self.model).and_then(Value::as_str) {
                cursor.model = Some(model.to_string());
            }
            let Some(tokens) = self.tokens(&value) else {
                continue;
            };
            let Some(model) = cursor.model.clone() else {
                read.unread = Some("a usage line of the record names no model".into());
                continue;
            };
            let id = self
                .id
                .as_ref()
                .and_then(|p| value.pointer(p))
                .and_then(Value::as_str)
                .map(str::to_string);
            let same = self.totals || (id.is_some() && id == cursor.id);
            let new = if same { tokens.beyond(&cursor.last) } else { tokens };
            if same {
                cursor.last = max(&cursor.last, &tokens);
            } else {
                cursor.last = tokens;
                cursor.id = id;
            }
            if !new.is_zero() {
                let slot = read.tokens.entry(model).or_default();
                *slot = slot.plus(&new);
            }
        }
        cursor.offset = cursor.offset.saturating_add(used as u64);
        read
    }

    fn tokens(&self, line: &Value) -> Option<Tokens> {
        let count = |p: &str| line.pointer(p).and_then(Value::as_u64);
        let input = count(&self.input)?;
        let optional = |p: &Option<String>| p.as_deref().and_then(count).unwrap_or(0);
        let cache_read = optional(&self.cache_read);
        Some(Tokens {
            input: match self.input_includes_cache_read {
                true => input.saturating_sub(cache_read),
                false => input,
            },
            output: count(&self.output).unwrap_or(0),
            cache_read,
            cache_write: optional(&self.cache_write),
        })
    }

    /// A helper's own record, from the parent's path and the helper's agent id; `None` where
    /// the provider says nothing of one, or the id could step out of its folder.
    pub fn helper_record(&self, parent: &str, agent: &str) -> Option<String> {
        let template = self.helper_record.as_ref()?;
        // INVARIANT (fail closed): an agent id is a name, never a path.
        if agent.is_empty() || !agent.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return None;
        }
        let dir = parent.strip_suffix(".jsonl").unwrap_or(parent);
        Some(template.replace("{dir}", dir).replace("{agent}", agent))
    }
}

fn max(a: &Tokens, b: &Tokens) -> Tokens {
    Tokens {
        input: a.input.max(b.input),
        output: a.output.max(b.output),
        cache_read: a.cache_read.max(b.cache_read),
        cache_write: a.cache_write.max(b.cache_write),
    }
}
