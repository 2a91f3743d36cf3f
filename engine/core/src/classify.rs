//! The command classifier: shell text in, an effect profile out, by rules that are data.
//!
//! Compound commands are split and their effects joined; wrappers are stripped; redirections
//! are writes (or reads) of their targets; what cannot be understood — a substitution, `eval`, a
//! program no rule knows — gets the conservative profile: writes `*`, reaches, irreversible.

use crate::effects::EffectProfile;
use crate::shell::{self, SimpleCommand};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How deep `bash -c '…'` may nest before the text counts as not understood.
const MAX_SHELL_DEPTH: usize = 4;

/// Redirection targets that are not files.
const DEVICES: [&str; 5] = ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"];

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

/// What one simple command was classified as.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Part {
    /// The program, after wrappers.
    pub program: String,
    /// The simple command's words from the program on, joined by spaces (what suite patterns match).
    pub text: String,
    /// The rule that classified it; `None` when nothing did (the conservative profile).
    pub rule: Option<String>,
}

/// The classification of a command line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Classified {
    /// The joined effects, paths absolute.
    pub effects: EffectProfile,
    /// Each simple command's program and rule.
    pub parts: Vec<Part>,
    /// Why the text (or part of it) was not understood.
    pub opaque: Option<String>,
}

/// The rules, indexed by program.
#[derive(Debug, Clone, Default)]
pub struct Classifier {
    rules: HashMap<String, Vec<std::sync::Arc<CommandRule>>>,
    wrappers: HashMap<String, Wrapper>,
}

impl Classifier {
    /// Adds a rule (later rules with the same prefix and flags win ties).
    pub(crate) fn add_rule(&mut self, rule: CommandRule) {
        let programs = rule.prefix.first().cloned().unwrap_or_default();
        let rule = std::sync::Arc::new(rule);
        for program in programs {
            self.rules.entry(program).or_default().push(rule.clone());
        }
    }

    /// Adds a wrapper.
    pub(crate) fn add_wrapper(&mut self, program: &str, wrapper: Wrapper) {
        self.wrappers.insert(program.to_string(), wrapper);
    }

    /// Classifies shell text run in `cwd` (absolute). `home` expands a leading `~`.
    pub fn classify(&self, text: &str, cwd: &Path) -> Classified {
        self.classify_at(text, cwd, 0)
    }

    fn classify_at(&self, text: &str, cwd: &Path, depth: usize) -> Classified {
        let line = shell::parse(text);
        let mut out = Classified {
            effects: nothing(),
            parts: Vec::new(),
            opaque: line.opaque.clone(),
        };
        if depth > MAX_SHELL_DEPTH {
            out.opaque = Some("commands nest too deeply".into());
        }
        if out.opaque.is_some() {
            out.effects = EffectProfile::unknown();
            return out;
        }
        let mut cwd = cwd.to_path_buf();
        for command in &line.commands {
            let (effects, mut parts) = self.classify_simple(command, &mut cwd, depth, &mut out.opaque);
            join(&mut out.effects, effects);
            out.parts.append(&mut parts);
        }
        if out.parts.is_empty() && out.effects.reads.is_empty() && out.effects.writes.is_empty() {
            // Nothing ran: no effects, and nothing to claim containment of.
            out.effects.contained = false;
        }
        out
    }

    fn classify_simple(
        &self,
        command: &SimpleCommand,
        cwd: &mut PathBuf,
        depth: usize,
        opaque: &mut Option<String>,
    ) -> (EffectProfile, Vec<Part>) {
        let mut effects = nothing();
        for r in &command.redirects {
            if DEVICES.contains(&r.target.as_str()) {
                continue;
            }
            let path = absolute(cwd, &r.target);
            if r.output {
                effects.writes.push(path);
            } else {
                effects.reads.push(path);
            }
        }
        let start = self.skip_wrappers(&command.words);
        let words = command.words.get(start..).unwrap_or(&[]);
        let expanded: Vec<bool> = (0..command.words.len())
            .map(|i| command.expanded.contains(&i))
            .collect();
        let expanded = expanded.get(start..).unwrap_or(&[]);
        let Some(first) = words.first() else {
            return (effects, Vec::new());
        };
        let program = first.rsplit('/').next().unwrap_or(first).to_string();
        let text = std::iter::once(program.as_str())
            .chain(words.iter().skip(1).map(String::as_str))
            .collect::<Vec<_>>()
            .join(" ");
        let part = |rule: Option<String>| {
            vec![Part {
                program: program.clone(),
                text: text.clone(),
                rule,
            }]
        };
        if expanded.first() == Some(&true) {
            opaque.get_or_insert_with(|| "the program is a variable".into());
            join(&mut effects, EffectProfile::unknown());
            return (effects, part(None));
        }
        if program == "cd" || program == "pushd" {
            match words.get(1) {
                Some(dir) if expanded.get(1) != Some(&true) => *cwd = PathBuf::from(absolute(cwd, dir)),
                Some(_) => *cwd = PathBuf::from("*"),
                None => {}
            }
            return (effects, part(Some("cd".into())));
        }
        // INVARIANT (fail closed): a program no rule knows gets the conservative profile.
        let Some(rule) = self.select(&program, words) else {
            join(&mut effects, EffectProfile::unknown());
            return (effects, part(None));
        };
        let mut parts = part(Some(rule.id.clone()));
        if rule.unknown {
            join(&mut effects, EffectProfile::unknown());
            return (effects, parts);
        }
        let skip = rule.prefix.len();
        let args = Args::new(words.get(skip..).unwrap_or(&[]), expanded.get(skip..).unwrap_or(&[]));
        if rule.shell {
            let script = rule.flags.as_ref().and_then(|flags| args.after_flag(flags));
            match script {
                Some(script) => {
                    let inner = self.classify_at(&script, cwd, depth + 1);
                    if inner.opaque.is_some() {
                        opaque.get_or_insert_with(|| inner.opaque.clone().unwrap_or_default());
                    }
                    join(&mut effects, inner.effects);
                    // The shell itself did nothing; what it ran is what counts.
                    parts = inner.parts;
                }
                None => join(&mut effects, EffectProfile::unknown()),
            }
            return (effects, parts);
        }
        let expand = |scopes: &[String]| -> Vec<String> {
            let mut out = Vec::new();
            for scope in scopes {
                match args.placeholder(scope) {
                    Some(values) => out.extend(
                        values
                            .into_iter()
                            .map(|v| v.map(|v| absolute(cwd, &v)).unwrap_or_else(|| "*".into())),
                    ),
                    None if scope == "." => out.push(cwd.to_string_lossy().into_owned()),
                    None => out.push(scope.clone()),
                }
            }
            out
        };
        join(
            &mut effects,
            rule.effects
                .with_scopes(expand(&rule.effects.reads), expand(&rule.effects.writes)),
        );
        (effects, parts)
    }

    /// The index of the first word after wrappers and `VAR=value` assignments.
    fn skip_wrappers(&self, words: &[String]) -> usize {
        let mut i = 0;
        loop {
            while words.get(i).is_some_and(|w| is_assignment(w)) {
                i += 1;
            }
            let Some(word) = words.get(i) else { return i };
            let program = word.rsplit('/').next().unwrap_or(word);
            let Some(wrapper) = self.wrappers.get(program) else {
                return i;
            };
            i += 1;
            while let Some(w) = words.get(i) {
                if w == "--" {
                    i += 1;
                    break;
                }
                if !w.starts_with('-') || w == "-" {
                    break;
                }
                i += if wrapper.flags_with_value.contains(w) { 2 } else { 1 };
            }
            for _ in 0..wrapper.positional {
                if words.get(i).is_some_and(|w| !is_assignment(w)) {
                    i += 1;
                }
            }
        }
    }

    /// The rule for a command: the longest matching prefix; with equal prefixes, one whose flag
    /// is present wins over one without flags; later rules win remaining ties.
    pub(crate) fn select(&self, program: &str, words: &[String]) -> Option<&CommandRule> {
        let candidates = self.rules.get(program)?;
        let mut best: Option<(&std::sync::Arc<CommandRule>, (usize, bool))> = None;
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
}

fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

fn flag_matches(pattern: &str, word: &str) -> bool {
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

fn absolute(cwd: &Path, word: &str) -> String {
    if word.starts_with('/') || word.starts_with('~') || word == "*" {
        word.to_string()
    } else if cwd.as_os_str() == "*" {
        "*".to_string()
    } else {
        cwd.join(word).to_string_lossy().into_owned()
    }
}

/// What joining starts from: no effects, and contained until a part is not.
fn nothing() -> EffectProfile {
    EffectProfile {
        contained: true,
        ..EffectProfile::default()
    }
}

/// Joins `other` into `into`: what either does.
fn join(into: &mut EffectProfile, other: EffectProfile) {
    into.reads.extend(other.reads);
    into.writes.extend(other.writes);
    into.reaches |= other.reaches;
    into.costs |= other.costs;
    into.reversible &= other.reversible;
    into.contained &= other.contained;
}

/// A command's arguments after the rule's prefix.
struct Args<'a> {
    words: &'a [String],
    expanded: &'a [bool],
}

impl<'a> Args<'a> {
    fn new(words: &'a [String], expanded: &'a [bool]) -> Args<'a> {
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

    fn placeholder(&self, scope: &str) -> Option<Vec<Option<String>>> {
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
    fn after_flag(&self, flags: &[String]) -> Option<String> {
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

    #[test]
    fn assignments() {
        assert!(is_assignment("RUST_LOG=debug"));
        assert!(!is_assignment("=x"));
        assert!(!is_assignment("a/b=c"));
    }
}
