//! Command rules: a prefix of words mapped to effects, how a rule is selected for a command, and
//! how a command's arguments fill the rule's placeholders.

use crate::effects::EffectProfile;
use std::sync::Arc;

/// A compiled command rule.
#[derive(Debug, Clone)]
pub(crate) struct CommandRule {
    /// `POLICY/ID`.
    pub(crate) id: String,
    /// Each word's alternatives.
    pub(crate) prefix: Vec<Vec<String>>,
    /// Flag patterns, when the rule needs one.
    pub(crate) flags: Option<Vec<String>>,
    /// What a command it classifies does; scopes hold placeholders.
    pub(crate) effects: EffectProfile,
    /// Not understood: the conservative profile.
    pub(crate) unknown: bool,
    /// Classify the word after the matched flag as a command line.
    pub(crate) shell: bool,
}

/// A wrapper program to strip.
#[derive(Debug, Clone)]
pub(crate) struct Wrapper {
    /// Options that take a value.
    pub(crate) flags_with_value: Vec<String>,
    /// Positional arguments before the command.
    pub(crate) positional: usize,
}

/// The rule for a command among `candidates` (the rules of its program): the longest matching prefix; with equal prefixes, one whose flag
/// is present wins over one without flags; later rules win remaining ties.
pub(crate) fn select<'r>(candidates: &'r [Arc<CommandRule>], words: &[String]) -> Option<&'r CommandRule> {
    let mut best: Option<(&Arc<CommandRule>, (usize, bool))> = None;
    for rule in candidates {
        if rule.prefix.len() > words.len() {
            continue;
        }
        let prefix_ok = rule
            .prefix
            .iter()
            .zip(words)
            .skip(1)
            .all(|(alts, word)| alts.iter().any(|a| a == word));
        if !prefix_ok {
            continue;
        }
        let rest = words.get(rule.prefix.len()..).unwrap_or(&[]);
        let flagged = match &rule.flags {
            None => false,
            Some(flags) => {
                if !rest.iter().any(|w| flags.iter().any(|f| flag_matches(f, w))) {
                    continue;
                }
                true
            }
        };
        let rank = (rule.prefix.len(), flagged);
        if best.is_none_or(|(_, r)| rank >= r) {
            best = Some((rule, rank));
        }
    }
    best.map(|(rule, _)| rule.as_ref())
}

pub(crate) fn flag_matches(pattern: &str, word: &str) -> bool {
    match pattern.split_once('*') {
        // `-i*`: a prefix (`-i`, `-i.bak`).
        Some((head, "")) => word.starts_with(head),
        // `-*c`: a bundle of short flags ending in `c` (`-c`, `-lc`), never a long option.
        Some((head, tail)) => {
            word.starts_with(head) && word.ends_with(tail) && word.len() > head.len() && !word.starts_with("--")
        }
        None => word == pattern,
    }
}

/// A command's arguments after the rule's prefix.
pub(crate) struct Args<'a> {
    words: &'a [String],
    expanded: &'a [bool],
}

impl<'a> Args<'a> {
    pub(crate) fn new(words: &'a [String], expanded: &'a [bool]) -> Args<'a> {
        Args { words, expanded }
    }

    /// Non-flag arguments; `None` for one holding an expansion (unknown).
    fn positional(&self) -> Vec<Option<String>> {
        let mut out = Vec::new();
        let mut all_positional = false;
        for (i, w) in self.words.iter().enumerate() {
            if !all_positional && w == "--" {
                all_positional = true;
                continue;
            }
            if !all_positional && w.starts_with('-') && w != "-" {
                continue;
            }
            out.push(if self.expanded.get(i) == Some(&true) {
                None
            } else {
                Some(w.clone())
            });
        }
        out
    }

    pub(crate) fn placeholder(&self, scope: &str) -> Option<Vec<Option<String>>> {
        let inner = scope.strip_prefix('{')?.strip_suffix('}')?;
        let positional = self.positional();
        Some(match inner {
            "args" => positional,
            "first" => positional.into_iter().take(1).collect(),
            "last" => positional.into_iter().last().into_iter().collect(),
            _ => match inner.strip_prefix("opt:") {
                Some(name) => self.option(name),
                None => vec![None],
            },
        })
    }

    /// The value of option `name` as the placeholder `{opt:NAME}` lists it: empty when the
    /// option is not given, else one entry, `None` where the value is not known (expanded).
    fn option(&self, name: &str) -> Vec<Option<String>> {
        for (i, w) in self.words.iter().enumerate() {
            let unknown = |j: usize| self.expanded.get(j) == Some(&true);
            if w == name {
                return self
                    .words
                    .get(i + 1)
                    .map(|v| if unknown(i + 1) { None } else { Some(v.clone()) })
                    .into_iter()
                    .collect();
            }
            if let Some(v) = w.strip_prefix(&format!("{name}=")) {
                return vec![if unknown(i) { None } else { Some(v.to_string()) }];
            }
            if !name.starts_with("--") {
                if let Some(v) = w.strip_prefix(name).filter(|v| !v.is_empty()) {
                    return vec![if unknown(i) { None } else { Some(v.to_string()) }];
                }
            }
        }
        Vec::new()
    }

    /// The word after the first flag matching one of `flags`.
    pub(crate) fn after_flag(&self, flags: &[String]) -> Option<String> {
        let at = self
            .words
            .iter()
            .position(|w| flags.iter().any(|f| flag_matches(f, w)))?;
        if self.expanded.get(at + 1) == Some(&true) {
            return None;
        }
        self.words.get(at + 1).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_patterns() {
        assert!(flag_matches("-i*", "-i"));
        assert!(flag_matches("-i*", "-i.bak"));
        assert!(!flag_matches("-i*", "-n"));
        assert!(flag_matches("-*c", "-lc"));
        assert!(flag_matches("-*c", "-c"));
        assert!(!flag_matches("-*c", "--rcfile"));
        assert!(flag_matches("--in-place", "--in-place"));
    }
}
