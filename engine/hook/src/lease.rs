//! The lease's I/O for a hook call: the model's usage read from the agent CLI's record since the
//! last charge (from the offset the session's checkpoint keeps, a bounded chunk per call), as a
//! `charged` event the core's fold and check take.

use sixfold_core::bounded;
use sixfold_core::lease::usage::{Cursor, UsageFile};
use sixfold_core::trace::{Event, SoFar};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The most of a record read for usage in one call; the rest is read by the next calls.
pub const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// Now, in seconds since the Unix epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The charge of one call before its step is known to run: the usage read since the last one
/// (`steps` 0; set to 1 once the step is allowed). `record` is the agent CLI's record for the
/// account charged (the transcript a hook is given, or a helper's own); `carve` the account.
pub fn charge(
    spec: Option<&UsageFile>,
    record: Option<&Path>,
    so_far: &SoFar,
    carve: Option<String>,
    agent: Option<String>,
    at: u64,
) -> Event {
    let (tokens, unread, read) = match (spec, record) {
        (None, _) => (
            Default::default(),
            Some("the agent CLI's provider file says nothing of where its record holds usage".to_string()),
            None,
        ),
        (Some(_), None) => (
            Default::default(),
            Some("the agent CLI gave no record to read usage from".to_string()),
            None,
        ),
        (Some(_), Some(path)) if not_made_yet(path, so_far, carve.as_deref()) => (Default::default(), None, None),
        (Some(spec), Some(path)) => {
            let mut cursor = so_far.cursor(&path.to_string_lossy());
            match chunk(path, &mut cursor) {
                Ok(bytes) => {
                    let found = spec.read(&mut cursor, &bytes);
                    let whole_line_missing = !bytes.is_empty()
                        && bytes.len() as u64 == MAX_READ_BYTES
                        && found.tokens.is_empty()
                        && !bytes.contains(&b'\n');
                    let unread = match whole_line_missing {
                        // INVARIANT (fail closed): a line too long to read may hold usage.
                        true => Some(format!(
                            "a line of `{}` is longer than {MAX_READ_BYTES} bytes",
                            path.display()
                        )),
                        false => found.unread,
                    };
                    (found.tokens, unread, Some(cursor))
                }
                Err(why) => (Default::default(), Some(why), None),
            }
        }
    };
    Event::Charged {
        carve,
        agent,
        at,
        steps: 0,
        tokens,
        unread,
        read,
        lease: None,
        cents: None,
    }
}

/// Whether the record is one the agent CLI has not made yet: Claude Code writes its transcript
/// after the first call's hook may run. It is so only while nothing of it was ever read and the
/// account has run no step (no tool of the account ran, so none can have removed it); the next
/// call reads it from its start, so nothing goes uncharged. Anything else that cannot be read
/// leaves the cents unknown.
fn not_made_yet(path: &Path, so_far: &SoFar, carve: Option<&str>) -> bool {
    let text = path.to_string_lossy();
    let steps = match carve {
        Some(id) => so_far.carves.iter().find(|c| c.id == id).map_or(0, |c| c.spent.steps),
        None => so_far.spent.steps,
    };
    steps == 0
        && so_far.read.iter().all(|c| c.path != text)
        // No entry at all: not a dangling link, not a file the agent could not read.
        && std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
}

/// The charge of a call whose account counts no cents: no record is read (its offset stays where
/// it was, so a cents lease set later reads the usage from there); `steps` is set once the step
/// is known to run.
pub fn steps_only(carve: Option<String>, agent: Option<String>, at: u64) -> Event {
    Event::Charged {
        carve,
        agent,
        at,
        steps: 0,
        tokens: Default::default(),
        unread: None,
        read: None,
        lease: None,
        cents: None,
    }
}

/// The record from the cursor's offset, at most [`MAX_READ_BYTES`]. A record shorter than the
/// offset was replaced: it is read again from its start (charging again rather than missing).
fn chunk(path: &Path, cursor: &mut Cursor) -> Result<Vec<u8>, String> {
    // INVARIANT (fail closed): the record is untrusted: a regular file, read to a bound.
    let mut file = bounded::open(path).map_err(|e| format!("the record `{}` cannot be read: {e}", path.display()))?;
    let len = file
        .metadata()
        .map_err(|e| format!("the record `{}` cannot be read: {e}", path.display()))?
        .len();
    if len < cursor.offset {
        *cursor = Cursor {
            path: cursor.path.clone(),
            ..Cursor::default()
        };
    }
    file.seek(SeekFrom::Start(cursor.offset))
        .map_err(|e| format!("the record `{}` cannot be read: {e}", path.display()))?;
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("the record `{}` cannot be read: {e}", path.display()))?;
    Ok(bytes)
}

/// Fills in a charge once the judgement is known: a step that runs costs one step; the lease
/// and the cents as the check saw them go on the record for replay's `within-lease` row.
pub fn settle(charge: &mut Event, runs: bool, leased: Option<&sixfold_core::call::Leased>) {
    if let Event::Charged {
        steps,
        lease,
        cents,
        carve,
        ..
    } = charge
    {
        *steps = u64::from(runs);
        if let Some(l) = leased {
            *lease = (!l.lease.is_open()).then_some(l.lease);
            *cents = l.cents;
            if carve.is_none() {
                carve.clone_from(&l.carve);
            }
        }
    }
}

/// Whether a charge is worth writing: a step, tokens, a cursor moved, or usage unread.
pub fn worth_writing(charge: &Event, so_far: &SoFar) -> bool {
    match charge {
        Event::Charged {
            steps,
            tokens,
            unread,
            read,
            ..
        } => {
            *steps > 0
                || !tokens.is_empty()
                || (unread.is_some() && so_far.spent.unread.is_none())
                || read.as_ref().is_some_and(|c| so_far.cursor(&c.path) != *c)
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use sixfold_core::lease::usage;

    #[test]
    fn the_shipped_price_table_prices_the_models_the_tests_use() {
        let (bundle, _) = sixfold_core::Bundle::load(&[sixfold_core::shipped::source()]);
        let prices = sixfold_core::call::prices(&bundle);
        assert!(prices.broken.is_none(), "{:?}", prices.broken);
        assert!(!prices.dates.is_empty());
        for model in ["claude-sonnet-4-5", "gpt-5"] {
            assert!(
                prices.cents(model, &sixfold_core::lease::Tokens::default()).is_ok(),
                "{model}"
            );
        }
    }

    /// Both shipped providers' `[usage]` read their records: Claude Code's transcript (one message
    /// on several lines, counted once) and Codex's rollout (totals so far, cached input priced apart).
    #[test]
    fn the_shipped_usage_maps_read_each_agent_clis_record_incrementally() {
        let (bundle, _) = sixfold_core::Bundle::load(&[sixfold_core::shipped::source()]);
        let spec = |id: &str| bundle.provider(id).unwrap().spec.usage.clone().unwrap();
        let claude = spec("claude-code");
        let line = |id: &str, output: u64| {
            format!(
                "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"model\":\"claude-sonnet-4-5\",\"usage\":{{\"input_tokens\":100,\"output_tokens\":{output},\"cache_read_input_tokens\":7,\"cache_creation_input_tokens\":3}}}}}}\n"
            )
        };
        let mut cursor = usage::Cursor::default();
        let first = format!("{}{}", line("a", 1), line("a", 20));
        let read = claude.read(&mut cursor, first.as_bytes());
        let t = read.tokens["claude-sonnet-4-5"];
        assert_eq!((t.input, t.output, t.cache_read, t.cache_write), (100, 20, 7, 3));
        // The next chunk starts where the last stopped; the same message again adds nothing.
        let next = format!("{}{}", line("a", 20), line("b", 5));
        let read = claude.read(&mut cursor, next.as_bytes());
        let t = read.tokens["claude-sonnet-4-5"];
        assert_eq!((t.input, t.output), (100, 5));
        assert_eq!(cursor.offset as usize, first.len() + next.len());

        let codex = spec("codex");
        let mut cursor = usage::Cursor::default();
        let rollout = concat!(
            "{\"type\":\"turn_context\",\"payload\":{\"model\":\"gpt-5\"}}\n",
            "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{\"total_token_usage\":{\"input_tokens\":1000,\"cached_input_tokens\":400,\"output_tokens\":50}}}}\n",
            "{\"type\":\"event_msg\",\"payload\":{\"type\":\"token_count\",\"info\":{\"total_token_usage\":{\"input_tokens\":1500,\"cached_input_tokens\":600,\"output_tokens\":80}}}}\n",
        );
        let read = codex.read(&mut cursor, rollout.as_bytes());
        let t = read.tokens["gpt-5"];
        // Totals: the last one counts, its cached input apart from the rest.
        assert_eq!((t.input, t.cache_read, t.output), (900, 600, 80));
        // A usage line before any model is named leaves the cents unknown.
        let mut cursor = usage::Cursor::default();
        let read = codex.read(
            &mut cursor,
            rollout.lines().nth(1).map(|l| format!("{l}\n")).unwrap().as_bytes(),
        );
        assert!(read.unread.is_some());
        assert!(read.tokens.is_empty());
    }
}
