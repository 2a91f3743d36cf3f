//! Which documents one judgement needs, told apart before they are parsed.
//!
//! A hook judges one step: it needs the active mode, the modes it extends and the policies they
//! include, the provider's tool map, the active pattern, and whatever adds to the whole bundle's
//! command classifier, act rules, MCP maps and path sets. Parsing is most of the cost of a load,
//! so the rest is left unparsed. Telling a file apart reads its text line by line, and whenever
//! that reading is unsure the file is parsed: a file is skipped only when it is certainly not
//! needed.

use crate::format::ModeFile;
use std::collections::{BTreeSet, HashSet};

/// What one judgement needs from a bundle.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Needs {
    /// The mode the step is judged under (with the modes it extends and the policies they include).
    pub mode: String,
    /// The provider whose tool map applies, if any.
    pub provider: Option<String>,
    /// The pattern that judges sub-agents, if any.
    pub pattern: Option<String>,
    /// Whether the price table (`policies/prices.toml`) is left unread: only a lease with `cents`
    /// needs it, so a caller that knows none applies leaves it out. Read by default.
    pub skip_prices: bool,
}

impl Needs {
    /// What judging a step under `mode` needs: that mode and what it builds on.
    pub fn mode(mode: &str) -> Needs {
        Needs {
            mode: mode.to_string(),
            provider: None,
            pattern: None,
            skip_prices: false,
        }
    }

    /// The same, also with a provider's tool map.
    pub fn with_provider(mut self, provider: &str) -> Needs {
        self.provider = Some(provider.to_string());
        self
    }

    /// The same, also with a pattern.
    pub fn with_pattern(mut self, pattern: &str) -> Needs {
        self.pattern = Some(pattern.to_string());
        self
    }

    /// The same, with the price table read or not (by default it is).
    pub fn with_prices(mut self, prices: bool) -> Needs {
        self.skip_prices = !prices;
        self
    }
}

/// Reading proceeds in two phases: modes (again for each mode an `extends` names), then the rest
/// (only then is it known which policies the modes include).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Modes,
    Rest,
}

/// The state of a selective read: what is wanted so far, and which files were taken.
#[derive(Debug)]
pub(crate) struct Selection<'a> {
    needs: &'a Needs,
    phase: Phase,
    modes: BTreeSet<String>,
    policies: BTreeSet<String>,
    taken: HashSet<(usize, String)>,
}

impl<'a> Selection<'a> {
    pub(crate) fn new(needs: &'a Needs) -> Selection<'a> {
        Selection {
            needs,
            phase: Phase::Modes,
            modes: BTreeSet::from([needs.mode.clone()]),
            policies: BTreeSet::new(),
            taken: HashSet::new(),
        }
    }

    /// True when the file is to be read now (and marks it read).
    pub(crate) fn take(&mut self, source: usize, relative: &str, text: &str) -> bool {
        let folder = relative.split('/').next().unwrap_or("");
        let script = relative.ends_with(".rhai");
        let now = match (self.phase, folder) {
            (Phase::Modes, _) if script => false,
            (Phase::Rest, _) if script => true,
            (Phase::Modes, "modes") => written_id(text).is_none_or(|id| self.modes.contains(id)),
            (Phase::Modes, _) => false,
            (Phase::Rest, "modes") => false,
            (Phase::Rest, "policies") => {
                adds_to_the_whole_bundle(text)
                    || written_id(text).is_none_or(|id| {
                        self.policies.contains(id) || (!self.needs.skip_prices && id == crate::lease::prices::POLICY)
                    })
            }
            (Phase::Rest, "patterns") => wanted(written_id(text), self.needs.pattern.as_deref()),
            (Phase::Rest, "providers") => wanted(written_id(text), self.needs.provider.as_deref()),
            (Phase::Rest, _) => false,
        };
        now && self.taken.insert((source, relative.to_string()))
    }

    /// After a pass (`mode` finds a mode read so far): true when another pass is needed (a mode
    /// extends one not read yet, or the modes are done and the rest is to be read).
    pub(crate) fn next_round<'m>(&mut self, mode: impl Fn(&str) -> Option<&'m ModeFile>) -> bool {
        if self.phase == Phase::Rest {
            return false;
        }
        let mut chain = BTreeSet::new();
        let mut next = Some(self.needs.mode.clone());
        while let Some(id) = next.take() {
            if !chain.insert(id.clone()) {
                break;
            }
            if let Some(mode) = mode(&id) {
                self.policies.extend(mode.include.iter().map(|i| i.get_ref().clone()));
                next = mode.extends.as_ref().map(|e| e.get_ref().clone());
            }
        }
        let before = self.modes.len();
        self.modes.extend(chain);
        if self.modes.len() == before {
            self.phase = Phase::Rest;
        }
        true
    }
}

fn wanted(id: Option<&str>, want: Option<&str>) -> bool {
    match (id, want) {
        (None, _) => true,
        (Some(id), Some(want)) => id == want,
        (Some(_), None) => false,
    }
}

/// The top-level `id = "…"` of a TOML document (or a `.md` mode's front matter), when it can be
/// read for certain from the text; `None` when it cannot (the file is then parsed).
// INVARIANT (fail closed): `None` whenever unsure, so a file that may be needed is read.
fn written_id(text: &str) -> Option<&str> {
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
fn adds_to_the_whole_bundle(text: &str) -> bool {
    // An escape in a quoted key could spell any of them.
    if text.contains("\\u") || text.contains("\\U") {
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

/// The top-level keys of a policy that add to every judgement whichever mode includes it.
const WHOLE_BUNDLE_KEYS: [&str; 6] = ["commands", "wrappers", "mcp", "acts", "paths", "environments"];

/// Whether a line starts with one of [`WHOLE_BUNDLE_KEYS`], as a key or a table's name.
fn starts_with_a_key(line: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_read_only_when_certain() {
        assert_eq!(
            written_id("# c\nid = \"secrets\"\n[paths.x]\nid = \"no\""),
            Some("secrets")
        );
        assert_eq!(written_id("+++\nid = 'read-only'\n+++\nbody"), Some("read-only"));
        assert_eq!(written_id("identity = 1\nid=\"a\" # note"), Some("a"));
        assert_eq!(written_id("id = \"a\"\nid = \"b\""), None);
        assert_eq!(written_id("\"id\" = \"a\""), None);
        assert_eq!(written_id("id = \"a\\u0062\""), None);
        assert_eq!(written_id("d = \"\"\"\nid = \"a\"\n\"\"\"\nid = \"b\""), None);
        assert_eq!(written_id("id.x = \"a\""), None);
        assert_eq!(written_id("name = \"x\""), None);
        assert_eq!(written_id("include = [\n  \"secrets\",\n]\nid = \"m\""), Some("m"));
    }

    /// The line-by-line reading the key search stands for.
    fn by_every_line(text: &str) -> bool {
        text.contains("\\u") || text.contains("\\U") || text.lines().any(starts_with_a_key)
    }

    #[test]
    fn finding_the_keys_reads_as_every_line_does() {
        let mut texts: Vec<String> = crate::shipped::source().files.into_values().collect();
        texts.extend(
            [
                "paths\r\nid = \"x\"",
                "x = 1\n  'mcp' = {}",
                "id = \"p\"\n# paths are commands\ndescription = \"acts on mcp\"",
                "[rules.paths]\nx = 1",
                "\u{feff}environments.x = {}",
                "wrappers",
                "[[ acts ]]",
                "acts_x = 1",
                "",
            ]
            .map(String::from),
        );
        for text in &texts {
            assert_eq!(adds_to_the_whole_bundle(text), by_every_line(text), "{text}");
        }
    }

    #[test]
    fn whatever_may_add_to_the_whole_bundle_is_read() {
        for text in [
            "[[commands]]\nid = \"x\"",
            "[ \"acts\" ]",
            "paths.secrets.globs = []",
            "mcp = {}",
            "  [[wrappers]]",
            "[paths]",
            "\"\\u0061cts\" = []",
        ] {
            assert!(adds_to_the_whole_bundle(text), "{text}");
        }
        for text in [
            "id = \"x\"\n[[rules]]\nid = \"commands\"",
            "[[rows]]\ntitle = \"mcp servers\"",
            "pathsets = 1",
        ] {
            assert!(!adds_to_the_whole_bundle(text), "{text}");
        }
    }
}
