//! sixfold's own event log: each line is an [`Event`], folded into the trace by the core.

use crate::reader::LineReader;
use sixfold_core::trace::{Event, Trace};

/// Reads sixfold's own event log.
pub(crate) struct Reader;

impl LineReader for Reader {
    fn line(&mut self, trace: &mut Trace, value: serde_json::Value) {
        let kind = value.get("event").and_then(|e| e.as_str()).unwrap_or("").to_string();
        match serde_json::from_value::<Event>(value) {
            Ok(event) => trace.apply(event),
            Err(e) if e.to_string().contains("unknown variant") => trace.skip(&kind),
            Err(e) => trace.malformed.push(sixfold_core::trace::Malformed {
                line: trace.lines,
                error: e.to_string(),
            }),
        }
    }
}
