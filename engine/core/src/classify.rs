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
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Part {
    /// The program, after wrappers.
    pub program: String,
    /// The simple command's words from the program on, joined by spaces (what suite patterns match).
    pub text: String,
    /// The rule that classified it; `None` when nothing did (the conservative profile).
    pub rule: Option<String>,
    /// What this simple command alone writes (paths absolute, `*` for unknown), so a row can
    /// tell which part of a line wrote (`cargo test && sed -i … f` writes `f` after the suite).
    #[serde(default)]
    pub writes: Vec<String>,
    /// The directory it runs in, after any `cd` before it (`*` when not known).
    #[serde(default)]
    pub dir: String,
    /// True when its exit status is the whole line's: nothing after it can change it (no `||`,
    /// `;`, `&`, or `|` without `pipefail` follows it).
    #[serde(default)]
    pub decides_status: bool,
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

/// Whether the exit status of the first of `rest` is the line's: every operator after it that
/// leads to another command is `&&` (a failure stops there, so a pass means it passed), a
/// grouping, or `|` under `pipefail`; nothing runs in the background; and what ends the line is
/// a plain end.
fn decides_status(rest: &[SimpleCommand], pipefail: bool) -> bool {
    let last = rest.len().saturating_sub(1);
    rest.iter().enumerate().all(|(i, command)| {
        command.after.iter().all(|op| match op.as_str() {
            "&&" | "(" | ")" | "{" | "}" => true,
            "|" => pipefail && i < last,
            ";" | "\n" => i == last,
            _ => false,
        })
    })
}

/// Whether `pipefail` is on after `set …` (`-o pipefail`, `-euo pipefail` turn it on; `+o
/// pipefail` turns it off).
fn pipefail_after(words: &[String], before: bool) -> bool {
    let mut on = before;
    for pair in words.windows(2) {
        if let [flag, name] = pair {
            if name == "pipefail" && flag.ends_with('o') {
                on = flag.starts_with('-');
            }
        }
    }
    on
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

    /// Whether the rule `id` (a part's `rule`) was understood to reach the network: a rule that
    /// is loaded, neither `unknown` nor a shell, and says `reaches`. The conservative profile's
    /// reaching is not counted here (see `containment`).
    pub(crate) fn rule_reaches(&self, id: &str) -> bool {
        self.rules
            .values()
            .flatten()
            .any(|r| r.id == id && !r.unknown && !r.shell && r.effects.reaches)
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
        let mut pipefail = false;
        for (i, command) in line.commands.iter().enumerate() {
            let (effects, mut parts) = self.classify_simple(command, &mut cwd, depth, &mut out.opaque);
            let shown = decides_status(line.commands.get(i..).unwrap_or(&[]), pipefail);
            for part in &mut parts {
                part.decides_status &= shown;
            }
            if command.words.first().is_some_and(|w| w == "set") {
                pipefail = pipefail_after(&command.words, pipefail);
            }
            join(&mut out.effects, effects);
            out.parts.append(&mut parts);
        }
        if out.parts.is_empty() && out.effects.reads.is_empty() && out.effects.writes.is_empty() {
            // Nothing ran: no effects, and nothing to claim containment of.
            out.effects.contained = false;
        }
        out
    }

    /// Classifies one simple command; each part it yields carries its own writes and directory.
    fn classify_simple(
        &self,
        command: &SimpleCommand,
        cwd: &mut PathBuf,
        depth: usize,
        opaque: &mut Option<String>,
    ) -> (EffectProfile, Vec<Part>) {
        let dir = cwd.to_string_lossy().into_owned();
        let (effects, mut parts) = self.classify_words(command, cwd, depth, opaque);
        match parts.as_mut_slice() {
            [one] if one.dir.is_empty() => {
                one.writes = if dir == "*" {
                    self.writes_below_unknown(command, depth)
                } else {
                    effects.writes.clone()
                };
                one.dir = dir;
            }
            // `bash -c '…' > f`: the inner parts keep their own writes; the outer redirections
            // are written by all of them.
            inner => {
                let redirected: Vec<String> = command
                    .redirects
                    .iter()
                    .filter(|r| r.output && !DEVICES.contains(&r.target.as_str()))
                    .map(|r| absolute(Path::new(&dir), &r.target))
                    .collect();
                for part in inner {
                    part.writes.extend(redirected.iter().cloned());
                }
            }
        }
        (effects, parts)
    }

    /// What a simple command run in a directory nobody knows writes, its relative paths kept
    /// below that directory (`*/tests/a.rs`, `*/` for the directory itself) rather than lost in
    /// `*`: where the record has no working directory, the step's own directory is the run's.
    fn writes_below_unknown(&self, command: &SimpleCommand, depth: usize) -> Vec<String> {
        // No path holds a NUL, so nothing real lies below this directory.
        const NOWHERE: &str = "/\u{0}";
        let mut at = PathBuf::from(NOWHERE);
        let mut ignored = None;
        let (effects, _) = self.classify_words(command, &mut at, depth, &mut ignored);
        effects
            .writes
            .into_iter()
            .map(|w| match w.strip_prefix(NOWHERE) {
                Some(rest) => format!("*/{}", rest.trim_start_matches('/')),
                None => w,
            })
            .collect()
    }

    fn classify_words(
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
            // `> f` alone still writes `f`: a part of its own, so rows see where in the line.
            let redirect = (!command.redirects.is_empty()).then(|| Part {
                rule: Some("redirect".into()),
                decides_status: true,
                ..Part::default()
            });
            return (effects, redirect.into_iter().collect());
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
                writes: Vec::new(),
                dir: String::new(),
                decides_status: true,
            }]
        };
        // INVARIANT (fail closed): a wrapper that changes directory (`env -C dir rm x`) moves
        // every relative path out of reach of this reading, so the command is not understood.
        let moved = command
            .words
            .get(..start)
            .unwrap_or(&[])
            .iter()
            .any(|w| w == "-C" || w.starts_with("--chdir"));
        if moved {
            join(&mut effects, EffectProfile::unknown());
            *cwd = PathBuf::from("*");
            return (effects, part(None));
        }
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

    fn rule(id: &str, program: &str, writes: &[&str]) -> CommandRule {
        CommandRule {
            id: id.into(),
            prefix: vec![vec![program.into()]],
            flags: None,
            effects: EffectProfile {
                writes: writes.iter().map(|w| w.to_string()).collect(),
                ..EffectProfile::default()
            },
            unknown: false,
            shell: false,
        }
    }

    fn classifier() -> Classifier {
        let mut c = Classifier::default();
        c.add_rule(rule("cargo", "cargo", &["."]));
        c.add_rule(rule("text", "true", &[]));
        c.add_rule(rule("text", "tail", &[]));
        c.add_rule(rule("text", "set", &[]));
        c.add_rule(rule("sed", "sed", &["{last}"]));
        c.add_rule(rule("remove", "rm", &["{args}"]));
        c.add_wrapper(
            "env",
            Wrapper {
                flags_with_value: vec!["-C".into()],
                positional: 0,
            },
        );
        let mut bash = rule("bash", "bash", &[]);
        bash.flags = Some(vec!["-*c".into()]);
        bash.shell = true;
        c.add_rule(bash);
        c
    }

    /// Whether the first part's (the suite's) exit status is the line's.
    fn decides(line: &str) -> bool {
        let parts = classifier().classify(line, Path::new("/w")).parts;
        parts.first().is_some_and(|p| p.decides_status)
    }

    #[test]
    fn a_part_decides_the_status_only_when_nothing_after_it_can_change_it() {
        for line in [
            "cargo test",
            "cargo test && true",
            "cargo test;",
            "(cargo test)",
            "bash -lc 'cargo test'",
        ] {
            assert!(decides(line), "{line}");
        }
        for line in [
            "cargo test || true",
            "cargo test; true",
            "cargo test | tail -5",
            "cargo test; exit 0",
            "cargo test &",
            "cargo test\ntrue",
            "(cargo test; true)",
            "cargo test && true || true",
            "bash -lc 'cargo test || true'",
            "bash -lc 'cargo test' || true",
        ] {
            assert!(!decides(line), "{line}");
        }
        // Under `pipefail` a pipe keeps a failure.
        let parts = classifier()
            .classify("set -o pipefail; cargo test | tail -5", Path::new("/w"))
            .parts;
        assert!(parts.get(1).is_some_and(|p| p.text == "cargo test" && p.decides_status));
        let parts = classifier()
            .classify(
                "set -o pipefail; set +o pipefail; cargo test | tail -5",
                Path::new("/w"),
            )
            .parts;
        assert!(parts
            .get(2)
            .is_some_and(|p| p.text == "cargo test" && !p.decides_status));
    }

    #[test]
    fn each_part_carries_its_own_writes_and_directory() {
        let parts = classifier()
            .classify("cargo test && sed -i s/a/b/ src/lib.rs", Path::new("/w"))
            .parts;
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].writes, ["/w"]);
        assert_eq!(parts[1].writes, ["/w/src/lib.rs"]);
        let parts = classifier()
            .classify("cd /tmp/other && cargo test", Path::new("/w"))
            .parts;
        assert_eq!(parts[1].dir, "/tmp/other");
        assert_eq!(parts[0].dir, "/w");
        // A redirection alone is a part too.
        let parts = classifier()
            .classify("cargo test && > src/lib.rs", Path::new("/w"))
            .parts;
        assert_eq!(parts[1].rule.as_deref(), Some("redirect"));
        assert_eq!(parts[1].writes, ["/w/src/lib.rs"]);
        // In a directory nobody knows, the part keeps its paths below it; the effects do not.
        let c = classifier().classify("rm tests/a.rs", Path::new("*"));
        assert_eq!(c.effects.writes, ["*"]);
        assert_eq!(c.parts[0].writes, ["*/tests/a.rs"]);
        // A wrapper that changes directory is not understood.
        let c = classifier().classify("env -C tests rm x.rs", Path::new("/w"));
        assert_eq!(c.effects.writes, ["*"]);
        assert_eq!(c.parts[0].writes, ["*"]);
    }

    #[test]
    fn assignments() {
        assert!(is_assignment("RUST_LOG=debug"));
        assert!(!is_assignment("=x"));
        assert!(!is_assignment("a/b=c"));
    }
}
