//! What a selection reads of a bundle file's text: its written id, and whether it may add to
//! what every judgement uses. Pure text reading, shared with the build script, which reads the
//! shipped files with it once so a judgement does not (`shipped::facts`).

/// The top-level `id = "…"` of a TOML document (or a `.md` mode's front matter), when it can be
/// read for certain from the text; `None` when it cannot (the file is then parsed).
// INVARIANT (fail closed): `None` whenever unsure, so a file that may be needed is read.
pub(crate) fn written_id(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().peekable();
    if lines.peek().is_some_and(|l| l.trim_end() == "+++") {
        lines.next();
    }
    let mut found = None;
    for line in lines {
        let t = line.trim_start_matches([' ', '\t']);
        // A table starts: top-level keys are over. A multi-line string: lines may not be keys.
        if t.starts_with('[') || t.trim_end() == "+++" {
            break;
        }
        if t.contains("\"\"\"") || t.contains("'''") {
            return None;
        }
        if let Some(quote) = t.chars().next().filter(|c| *c == '"' || *c == '\'') {
            // A quoted key could be `id` spelt otherwise.
            let after = t
                .get(1..)
                .and_then(|r| r.split_once(quote))
                .map(|(_, rest)| rest.trim_start());
            if after.is_some_and(|a| a.starts_with('=') || a.starts_with('.')) {
                return None;
            }
            continue;
        }
        let Some(rest) = t.strip_prefix("id") else { continue };
        let rest = rest.trim_start_matches([' ', '\t']);
        if rest.starts_with('.') {
            return None;
        }
        let Some(value) = rest.strip_prefix('=') else {
            // A longer key (`identity`), or not a key at all.
            continue;
        };
        if found.is_some() {
            return None;
        }
        found = Some(string_value(value.trim())?);
    }
    found
}

/// A one-line TOML string with nothing after it but a comment: `"…"` without escapes, or `'…'`.
fn string_value(value: &str) -> Option<&str> {
    let quote = value.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let (inner, rest) = value.get(1..)?.split_once(quote)?;
    let rest = rest.trim();
    let clean = (quote == '\'' || !inner.contains('\\')) && (rest.is_empty() || rest.starts_with('#'));
    clean.then_some(inner)
}

/// True when a policy file may add to what every judgement uses whichever mode includes it:
/// command rules, wrappers, MCP tool maps, act rules, path sets or environments. True whenever
/// unsure.
// INVARIANT (fail closed): true whenever unsure, so a stricter kept rule is never left unread.
pub(crate) fn adds_to_the_whole_bundle(text: &str) -> bool {
    // An escape in a quoted key could spell any of them. (Most files have no backslash at
    // all, found by one fast search instead of two.)
    if text.contains('\\') && (text.contains("\\u") || text.contains("\\U")) {
        return true;
    }
    // Only a line that holds a key can start with it: the lines are found from the keys'
    // occurrences (a fast search), not by testing every line of a long file.
    WHOLE_BUNDLE_KEYS.iter().any(|key| {
        text.match_indices(key).any(|(at, _)| {
            let start = text.get(..at).and_then(|t| t.rfind('\n')).map_or(0, |i| i + 1);
            let end = text.get(at..).and_then(|t| t.find('\n')).map_or(text.len(), |i| at + i);
            let line = text.get(start..end).unwrap_or_default();
            starts_with_a_key(line.strip_suffix('\r').unwrap_or(line))
        })
    })
}

/// The top-level keys of a policy that add to every judgement whichever mode includes it. `acts`
/// first: a kept-rules file, the longest a project has, is found by its first rule instead of
/// by searching the whole file for each key before it.
const WHOLE_BUNDLE_KEYS: [&str; 6] = ["acts", "commands", "wrappers", "mcp", "paths", "environments"];

/// Whether a line starts with one of [`WHOLE_BUNDLE_KEYS`], as a key or a table's name.
pub(crate) fn starts_with_a_key(line: &str) -> bool {
    let t = line.trim_start_matches(['\u{feff}', ' ', '\t']);
    let t = t.strip_prefix("[[").or_else(|| t.strip_prefix('[')).unwrap_or(t);
    let t = t.trim_start_matches([' ', '\t']);
    let t = t.strip_prefix(['"', '\'']).unwrap_or(t);
    WHOLE_BUNDLE_KEYS.iter().any(|key| {
        t.strip_prefix(key).is_some_and(|rest| {
            let rest = rest.strip_prefix(['"', '\'']).unwrap_or(rest);
            let rest = rest.trim_start_matches([' ', '\t']);
            rest.is_empty() || rest.starts_with(['=', '.', ']'])
        })
    })
}
