//! The command classifier: shell text in, an effect profile out, by rules that are data.
//!
//! Compound commands are split and their effects joined; wrappers are stripped; redirections
//! are writes (or reads) of their targets; what cannot be understood — a substitution, `eval`, a
//! program no rule knows — gets the conservative profile: writes `*`, reaches, irreversible.

use crate::command_rule::{not_understood, select, Args, CommandRule, Wrapper};
use crate::effects::EffectProfile;
use crate::line_state::{absolute, is_assignment, unknown_dir, Dirs, Links, Names};
use crate::shell::{self, CommandLine, SimpleCommand};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
pub(crate) use unread::shipped_cut as shipped_commands_cut;
use unread::Unread;

mod unread;

/// How deep `bash -c '…'` may nest before the text counts as not understood.
const MAX_SHELL_DEPTH: usize = 4;

/// Redirection targets that are not files.
const DEVICES: [&str; 5] = ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"];

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
    /// What this simple command alone does (its rule's effects and its redirections'), paths
    /// absolute: what judging a line part by part reads (a kept rule covers one part). Not
    /// recorded.
    #[serde(skip)]
    pub effects: EffectProfile,
    /// What its redirections alone do (a kept rule never covers them). Not recorded.
    #[serde(skip)]
    pub redirected: EffectProfile,
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
    /// The shipped rules left as text until a command names their program; they come before
    /// [`Self::rules`] in load order.
    unread: Option<Unread>,
    wrappers: HashMap<String, Wrapper>,
    inert: Vec<String>,
}

impl Classifier {
    /// Adds a rule (later rules with the same prefix and flags win ties).
    pub(crate) fn add_rule(&mut self, rule: CommandRule) {
        let rule = std::sync::Arc::new(rule);
        let programs = rule.prefix.first().map(|p| p.split('|')).into_iter().flatten();
        for program in programs {
            self.rules.entry(program.to_string()).or_default().push(rule.clone());
        }
    }

    /// The rule for a command (see [`select`]).
    pub(crate) fn select(&self, program: &str, words: &[String]) -> Option<&CommandRule> {
        let unread = match &self.unread {
            Some(unread) => unread.rules(program)?,
            None => Vec::new(),
        };
        select(
            unread.into_iter().chain(self.rules.get(program).into_iter().flatten()),
            words,
        )
    }

    /// Adds the shipped command rules of the policy `policy`, left unread until a command needs
    /// them (compiled now when rules were added before them, so the load order holds).
    pub(crate) fn add_unread(&mut self, policy: &str) {
        let Some(unread) = Unread::shipped(policy) else { return };
        if self.rules.is_empty() && self.unread.is_none() {
            self.unread = Some(unread);
            return;
        }
        for rule in unread.all().flatten() {
            self.add_rule(CommandRule::clone(rule));
        }
    }

    /// Whether the rule `id` (a part's `rule`) was understood to reach the network: a rule that
    /// is loaded, neither `unknown` nor a shell, and says `reaches`. The conservative profile's
    /// reaching is not counted here (see `containment`).
    pub(crate) fn rule_reaches(&self, id: &str) -> bool {
        let reaches = |r: &CommandRule| r.id == id && !r.unknown && !r.shell && r.effects.reaches;
        self.rules.values().flatten().any(|r| reaches(r))
            || self
                .unread
                .as_ref()
                .is_some_and(|u| u.with_id(id).flatten().any(|r| reaches(r)))
    }

    /// Adds a wrapper.
    pub(crate) fn add_wrapper(&mut self, program: &str, wrapper: Wrapper) {
        self.wrappers.insert(program.to_string(), wrapper);
    }

    /// Adds assignments that do not change what a command runs (see [`inert`]).
    pub(crate) fn add_inert(&mut self, names: &[String]) {
        self.inert.extend(names.iter().cloned());
    }

    /// Classifies shell text run in `cwd` (absolute).
    pub fn classify(&self, text: &str, cwd: &Path) -> Classified {
        self.classify_at(text, &[cwd.to_path_buf()], 0, &Names::default())
    }

    fn classify_at(&self, text: &str, cwd: &[PathBuf], depth: usize, names: &Names) -> Classified {
        let mut classified = self.classify_line(&shell::parse(text), cwd, depth, names);
        // Text not understood that names bash's network devices may open a socket.
        if classified.opaque.is_some() && (text.contains("/dev/tcp/") || text.contains("/dev/udp/")) {
            classified.effects.reaches = true;
        }
        classified
    }

    /// Classifies a parsed line run in one of `cwd`; `names` says what the text around it
    /// already changed.
    fn classify_line(&self, line: &CommandLine, cwd: &[PathBuf], depth: usize, names: &Names) -> Classified {
        let mut out = Classified {
            effects: nothing(),
            parts: Vec::new(),
            opaque: line.opaque.clone(),
        };
        if depth > MAX_SHELL_DEPTH {
            out.opaque = Some("commands nest too deeply".into());
        }
        if out.opaque.is_some() {
            out.effects = not_understood();
            return out;
        }
        let mut names = names.clone().with_functions(&line.functions);
        let mut dirs = Dirs::new(cwd);
        let mut links = Links::default();
        let mut pipefail = false;
        let changes_dir = |c: &SimpleCommand| {
            let start = self.skip_wrappers(&c.words, &Names::default());
            c.words
                .get(start)
                .is_some_and(|w| matches!(w.as_str(), "cd" | "pushd" | "popd"))
        };
        for (i, command) in line.commands.iter().enumerate() {
            dirs.enter(&line.commands, i, changes_dir);
            // Substitutions run first, each in a subshell: their parts never decide the status.
            for substitution in &command.substitutions {
                let inner = self.classify_line(substitution, &dirs.now, depth + 1, &names);
                if let Some(why) = inner.opaque {
                    out.opaque.get_or_insert(why);
                }
                join(&mut out.effects, inner.effects);
                out.parts.extend(inner.parts.into_iter().map(|p| Part {
                    decides_status: false,
                    ..p
                }));
            }
            names.note(command);
            let start = self.skip_wrappers(&command.words, &names);
            let linked =
                command.words.get(start).is_some_and(|w| w == "ln") && !command.expanded.iter().any(|&i| i > start);
            let made_in = dirs.now.clone();
            // `… | xargs CMD` runs CMD on what the command before it printed.
            let before = i.checked_sub(1).and_then(|j| line.commands.get(j));
            let command = &xargs_run(command, start, before, &names).unwrap_or_else(|| command.clone());
            let (mut effects, mut parts) = self.classify_simple(command, &mut dirs, depth, &names, &mut out.opaque);
            // INVARIANT (fail closed): text run as commands (`eval`, `source`) or a function of
            // the line may change directory where the reader cannot see.
            let start = self.skip_wrappers(&command.words, &Names::default());
            if let Some(program) = command.words.get(start) {
                if matches!(program.as_str(), "eval" | "source" | ".") || names.redefines(program) {
                    dirs.lose();
                }
            }
            // INVARIANT (fail closed): a link an earlier command made is followed by this one
            // (`ln -sf /etc/passwd p && echo x > p` writes `/etc/passwd`).
            links.follow(&mut effects.reads);
            links.follow(&mut effects.writes);
            for part in &mut parts {
                links.follow(&mut part.writes);
                links.follow(&mut part.effects.reads);
                links.follow(&mut part.effects.writes);
                links.follow(&mut part.redirected.reads);
                links.follow(&mut part.redirected.writes);
            }
            if linked {
                for dir in &made_in {
                    links.note(command.words.get(start + 1..).unwrap_or(&[]), dir);
                }
            }
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

    /// Classifies one simple command in every directory it may run in; each part it yields
    /// carries its own writes and directory. A `cd` moves `dirs`.
    fn classify_simple(
        &self,
        command: &SimpleCommand,
        dirs: &mut Dirs,
        depth: usize,
        names: &Names,
        opaque: &mut Option<String>,
    ) -> (EffectProfile, Vec<Part>) {
        let dir = dirs.one();
        let start = self.skip_wrappers(&command.words, names);
        let words = command.words.get(start..).unwrap_or(&[]);
        if let Some(program @ ("cd" | "pushd" | "popd")) = words.first().map(String::as_str) {
            let expanded: Vec<bool> = (start..command.words.len())
                .map(|i| command.expanded.contains(&i))
                .collect();
            let mut effects = nothing();
            for cwd in dirs.now.clone() {
                join(&mut effects, self.redirections(command, &cwd));
            }
            dirs.change(command, words, &expanded, names.cdpath);
            let part = Part {
                program: program.to_string(),
                text: words.join(" "),
                rule: Some("cd".into()),
                writes: effects.writes.clone(),
                dir: dir.to_string_lossy().into_owned(),
                decides_status: true,
                effects: effects.clone(),
                redirected: effects.clone(),
            };
            return (effects, vec![part]);
        }
        let mut effects = nothing();
        let mut redirected = nothing();
        let mut parts = Vec::new();
        for cwd in dirs.now.clone() {
            let (more, these) = self.classify_words(command, &cwd, depth, names, opaque);
            join(&mut effects, more);
            join(&mut redirected, self.redirections(command, &cwd));
            if parts.is_empty() {
                parts = these;
            }
        }
        match parts.as_mut_slice() {
            [one] if one.dir.is_empty() => {
                one.writes = if dir.as_os_str() == "*" && dirs.now.len() == 1 {
                    self.writes_below_unknown(command, depth, names)
                } else {
                    effects.writes.clone()
                };
                one.dir = dir.to_string_lossy().into_owned();
                one.effects = effects.clone();
                one.redirected = redirected;
            }
            // `bash -c '…' > f`: the inner parts keep their own writes; the outer redirections
            // are written by all of them.
            inner => {
                for part in inner {
                    part.writes.extend(redirected.writes.iter().cloned());
                    join(&mut part.effects, redirected.clone());
                    join(&mut part.redirected, redirected.clone());
                }
            }
        }
        (effects, parts)
    }

    /// What a simple command run in a directory nobody knows writes, its relative paths kept
    /// below that directory (`*/tests/a.rs`, `*/` for the directory itself) rather than lost in
    /// `*`: where the record has no working directory, the step's own directory is the run's.
    fn writes_below_unknown(&self, command: &SimpleCommand, depth: usize, names: &Names) -> Vec<String> {
        // No path holds a NUL, so nothing real lies below this directory.
        const NOWHERE: &str = "/\u{0}";
        let mut ignored = None;
        let (effects, _) = self.classify_words(command, Path::new(NOWHERE), depth, names, &mut ignored);
        effects
            .writes
            .into_iter()
            .map(|w| match w.strip_prefix(NOWHERE) {
                Some(rest) => format!("*/{}", rest.trim_start_matches('/')),
                None => w,
            })
            .collect()
    }

    /// What a command's redirections read and write, run in `cwd`.
    fn redirections(&self, command: &SimpleCommand, cwd: &Path) -> EffectProfile {
        let mut effects = nothing();
        for r in &command.redirects {
            if DEVICES.contains(&r.target.as_str()) {
                continue;
            }
            let path = absolute(cwd, &r.target);
            // Bash opens a socket for a redirection to `/dev/tcp/HOST/PORT` or `/dev/udp/…`.
            if path.starts_with("/dev/tcp/") || path.starts_with("/dev/udp/") {
                effects.reaches = true;
            }
            if r.output {
                effects.writes.push(path);
            } else {
                effects.reads.push(path);
            }
        }
        effects
    }

    fn classify_words(
        &self,
        command: &SimpleCommand,
        cwd: &Path,
        depth: usize,
        names: &Names,
        opaque: &mut Option<String>,
    ) -> (EffectProfile, Vec<Part>) {
        let mut effects = self.redirections(command, cwd);
        let start = self.skip_wrappers(&command.words, names);
        let words = command.words.get(start..).unwrap_or(&[]);
        let expanded: Vec<bool> = (0..command.words.len())
            .map(|i| command.expanded.contains(&i))
            .collect();
        let wrapped = expanded.get(..start).unwrap_or(&[]);
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
                decides_status: true,
                ..Part::default()
            }]
        };
        if expanded.first() == Some(&true) {
            opaque.get_or_insert_with(|| "the program is a variable".into());
            join(&mut effects, not_understood());
            return (effects, part(None));
        }
        // INVARIANT (fail closed): a program named by a path outside the system's directories,
        // or after the line changed what names mean, is not the program the rules know.
        let run: Vec<String> = command
            .words
            .get(..=start)
            .unwrap_or(&[])
            .iter()
            .enumerate()
            .filter(|(i, w)| {
                *i == start || is_assignment(w) || self.wrappers.contains_key(w.rsplit('/').next().unwrap_or(w))
            })
            .map(|(_, w)| w.clone())
            .collect();
        if let Some(why) = names.foreign_in(&run) {
            opaque.get_or_insert(why);
            join(&mut effects, not_understood());
            return (effects, part(None));
        }
        // INVARIANT (fail closed): an assignment before the program that is not listed as inert
        // (`LD_PRELOAD=…`, `GIT_PAGER=sh`, `PYTHONSTARTUP=…`) may change what it runs: the
        // command is not understood, joined to what its rule says it does.
        let assigned = command.words.get(..start).unwrap_or(&[]);
        if let Some(word) = assigned.iter().find(|w| is_assignment(w) && !inert(&self.inert, w)) {
            opaque.get_or_insert_with(|| format!("the assignment `{word}` may change what `{program}` runs"));
            join(&mut effects, not_understood());
        }
        // A wrapper that changes directory (`env -C dir rm x`) runs the command there.
        if let Some(dir) = chdir(command.words.get(..start).unwrap_or(&[]), wrapped) {
            let there = PathBuf::from(absolute(cwd, &dir));
            let mut inner = command.clone();
            inner.words = words.to_vec();
            inner.expanded = expanded
                .iter()
                .enumerate()
                .filter(|(_, e)| **e)
                .map(|(i, _)| i)
                .collect();
            inner.redirects.clear();
            let (more, parts) = self.classify_words(&inner, &there, depth, names, opaque);
            join(&mut effects, more);
            return (effects, parts);
        }
        // `find … -exec CMD {} ;` runs CMD: a part of its own, on paths below the roots.
        if program == "find" {
            if let Some((find, runs)) = find_exec(words, expanded) {
                let mut plain = command.clone();
                (plain.words, plain.expanded) = find;
                let (more, mut parts) = self.classify_words(&plain, cwd, depth, names, opaque);
                for part in &mut parts {
                    part.dir = cwd.to_string_lossy().into_owned();
                    part.writes = more.writes.clone();
                    part.effects = more.clone();
                }
                join(&mut effects, more);
                for (run, in_place) in runs {
                    let mut inner = SimpleCommand::default();
                    (inner.words, inner.expanded) = run;
                    // `-execdir` runs in each found file's directory: not one the text fixes.
                    let at = if in_place { cwd.to_path_buf() } else { unknown_dir() };
                    let (more, these) = self.classify_words(&inner, &at, depth, names, opaque);
                    parts.extend(these.into_iter().map(|p| Part {
                        decides_status: false,
                        dir: at.to_string_lossy().into_owned(),
                        writes: more.writes.clone(),
                        effects: more.clone(),
                        ..p
                    }));
                    join(&mut effects, more);
                }
                return (effects, parts);
            }
        }
        // INVARIANT (fail closed): a program no rule knows gets the conservative profile, and
        // every place it names is kept (`dd of=/etc/x` writes `/etc/x`).
        let Some(rule) = self.select(&program, words) else {
            join(&mut effects, not_understood());
            join(&mut effects, named_places(words, expanded, cwd));
            return (effects, part(None));
        };
        let mut parts = part(Some(rule.id.clone()));
        if rule.unknown {
            join(&mut effects, not_understood());
            if !rule.runs_code {
                join(&mut effects, named_places(words, expanded, cwd));
            }
            return (effects, parts);
        }
        let skip = rule.prefix.len();
        let (rest, rest_expanded) = (words.get(skip..).unwrap_or(&[]), expanded.get(skip..).unwrap_or(&[]));
        // INVARIANT (fail closed): an option the rule does not list, or a script its reader does
        // not understand, makes the command not understood: the conservative profile, joined to
        // what the rule knows it does at least (`sixfold mode set full --x` still writes
        // `.sixfold/`).
        let (args, understood) = match rule.shell {
            true => (Args::new(rest, rest_expanded), Ok(())),
            false => match Args::read(rule, rest, rest_expanded) {
                Ok(args) => (args, Ok(())),
                Err(why) => (Args::new(rest, rest_expanded), Err(why)),
            },
        };
        if rule.shell {
            let script = rule.flags.as_ref().and_then(|flags| args.after_flag(flags));
            match script {
                Some(script) => {
                    let inner = self.classify_at(&script, &[cwd.to_path_buf()], depth + 1, names);
                    if inner.opaque.is_some() {
                        opaque.get_or_insert_with(|| inner.opaque.clone().unwrap_or_default());
                    }
                    join(&mut effects, inner.effects);
                    // The shell itself did nothing; what it ran is what counts.
                    parts = inner.parts;
                }
                None => join(&mut effects, not_understood()),
            }
            return (effects, parts);
        }
        let expand = |scopes: &[String]| -> Vec<String> {
            let mut out = Vec::new();
            for scope in scopes {
                match args.placeholder(scope) {
                    // A word `*` as written is the glob of the directory's names, not unknown.
                    Some(values) => out.extend(values.into_iter().map(|v| match v {
                        Some(v) if v == "*" => absolute(cwd, "./*"),
                        Some(v) => absolute(cwd, &v),
                        None => "*".into(),
                    })),
                    None if scope == "." => out.push(cwd.to_string_lossy().into_owned()),
                    None => out.push(scope.clone()),
                }
            }
            out
        };
        let mut own = rule
            .effects
            .with_scopes(expand(&rule.effects.reads), expand(&rule.effects.writes));
        let place = |v: &Option<String>| v.as_ref().map(|v| absolute(cwd, v)).unwrap_or_else(|| "*".into());
        own.reads.extend(args.option_reads.iter().map(place));
        own.writes.extend(args.option_writes.iter().map(place));
        join(&mut effects, own);
        if let Err(why) = understood {
            opaque.get_or_insert_with(|| format!("`{program}` is not understood: {why}"));
            join(&mut effects, not_understood());
            join(&mut effects, named_places(words, expanded, cwd));
        }
        (effects, parts)
    }

    /// The index of the first word after wrappers and `VAR=value` assignments.
    fn skip_wrappers(&self, words: &[String], names: &Names) -> usize {
        let mut i = 0;
        loop {
            while words.get(i).is_some_and(|w| is_assignment(w)) {
                i += 1;
            }
            let Some(word) = words.get(i) else { return i };
            let program = word.rsplit('/').next().unwrap_or(word);
            // A wrapper named by a path of its own, or redefined, is the program: not stripped.
            let Some(wrapper) = self.wrappers.get(program).filter(|_| names.foreign(word).is_none()) else {
                return i;
            };
            if words.get(i + 1).is_some_and(|w| wrapper.not_with.contains(w)) {
                return i;
            }
            i += 1;
            while let Some(w) = words.get(i) {
                if w == "--" {
                    i += 1;
                    break;
                }
                if !w.starts_with('-') || w == "-" {
                    break;
                }
                // INVARIANT (fail closed): an option the wrapper does not know (`env -S'…'`)
                // ends the stripping: the command is then not understood.
                // `--chdir=DIR`: a listed option with its value attached.
                let attached = w.starts_with("--")
                    && w.split_once('=')
                        .is_some_and(|(name, _)| wrapper.flags_with_value.iter().any(|f| f == name));
                if attached {
                    i += 1;
                    continue;
                }
                if !wrapper.knows(w) {
                    return i;
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
}

type Words = (Vec<String>, Vec<usize>);

/// What find's `{}` may stand for below `root`: every file it may select, `ROOT/**/NAME` where
/// the expression before the first command is only tests joined by "and" and one is `-name
/// NAME`, else the root itself (and everything below it).
fn selected(words: &[String], expanded: &[bool], roots_end: usize, root: &str) -> String {
    let first_run = words
        .iter()
        .position(|w| matches!(w.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir"))
        .unwrap_or(words.len());
    let test = words.get(roots_end..first_run).unwrap_or(&[]);
    let alternatives = test
        .iter()
        .any(|w| matches!(w.as_str(), "-o" | "-or" | "!" | "-not" | ","));
    let name = test.iter().position(|w| w == "-name").and_then(|i| {
        let at = roots_end + i + 1;
        (expanded.get(at) != Some(&true)).then(|| words.get(at)).flatten()
    });
    match name {
        Some(name) if !alternatives && !name.contains('/') => format!("{}/**/{name}", root.trim_end_matches('/')),
        _ => root.to_string(),
    }
}

/// `find ROOTS… EXPR` split into the find without its `-exec`/`-execdir`/`-ok`/`-okdir`
/// clauses and the commands those run (with `{}` every file find may select below each root,
/// see [`selected`]; `true` when the command runs in find's own directory, `-exec`/`-ok`);
/// `None` when it runs nothing or a clause has no end (`;` or `{} +`), which the find rule then
/// does not understand.
fn find_exec(words: &[String], expanded: &[bool]) -> Option<(Words, Vec<(Words, bool)>)> {
    let roots_end = words
        .iter()
        .skip(1)
        .position(|w| w.starts_with('-') || w == "(" || w == "!")
        .map_or(words.len(), |p| p + 1);
    let roots: Vec<Option<&String>> = match words.get(1..roots_end) {
        Some([]) | None => vec![None],
        Some(rs) => rs
            .iter()
            .enumerate()
            .map(|(i, r)| (expanded.get(i + 1) != Some(&true)).then_some(r))
            .collect(),
    };
    let mut find: Words = (Vec::new(), Vec::new());
    let mut runs = Vec::new();
    let mut i = 0;
    while let Some(word) = words.get(i) {
        let in_place = matches!(word.as_str(), "-exec" | "-ok");
        if !(in_place || matches!(word.as_str(), "-execdir" | "-okdir")) {
            if expanded.get(i) == Some(&true) {
                find.1.push(find.0.len());
            }
            find.0.push(word.clone());
            i += 1;
            continue;
        }
        let start = i + 1;
        let end = (start..words.len()).find(|&j| {
            words
                .get(j)
                .is_some_and(|w| w == ";" || (w == "+" && j > start && words.get(j - 1).is_some_and(|p| p == "{}")))
        })?;
        for root in &roots {
            let mut run: Words = (Vec::new(), Vec::new());
            for j in start..end {
                let w = words.get(j)?;
                let unknown = expanded.get(j) == Some(&true) || (w.contains("{}") && root.is_none() && !in_place);
                // `{}` is every file find may select: the root and all below it.
                let value = match (w.as_str(), w.contains("{}"), root, in_place) {
                    ("{}", _, Some(root), true) => selected(words, expanded, roots_end, root),
                    ("{}", _, None, true) => selected(words, expanded, roots_end, "."),
                    (_, true, Some(root), true) => w.replace("{}", &format!("{root}/{{}}")),
                    (_, true, None, true) => w.replace("{}", "./{}"),
                    _ => w.clone(),
                };
                if unknown
                    || (w.contains("{}") && root.is_none() && words.get(1..roots_end).is_some_and(|r| !r.is_empty()))
                {
                    run.1.push(run.0.len());
                }
                run.0.push(value);
            }
            runs.push((run, in_place));
        }
        i = end + 1;
    }
    (!runs.is_empty()).then_some((find, runs))
}

/// `xargs [OPTIONS] CMD ARGS…` (the program at `start`) as the command it runs: CMD ARGS and the
/// words it reads from its input, which are the files below the roots where a pipe feeds it a
/// plain `find` (no `-printf`, `-ls`, actions), else unknown. With `-I STR`, each STR is that.
/// `None` where xargs is not read so (an option it does not know): its rule then applies.
fn xargs_run(
    command: &SimpleCommand,
    start: usize,
    before: Option<&SimpleCommand>,
    names: &Names,
) -> Option<SimpleCommand> {
    const FLAGS: [&str; 9] = [
        "-0",
        "--null",
        "-r",
        "--no-run-if-empty",
        "-t",
        "--verbose",
        "-x",
        "--exit",
        "--open-tty",
    ];
    const VALUES: [&str; 10] = [
        "-n",
        "--max-args",
        "-P",
        "--max-procs",
        "-L",
        "--max-lines",
        "-s",
        "--max-chars",
        "-d",
        "--delimiter",
    ];
    if command.words.get(start).map(String::as_str) != Some("xargs") || names.foreign("xargs").is_some() {
        return None;
    }
    let mut i = start + 1;
    let mut replace: Option<String> = None;
    while let Some(word) = command.words.get(i) {
        if command.expanded.contains(&i) {
            return None;
        }
        if !word.starts_with('-') {
            break;
        }
        if word == "--" {
            i += 1;
            break;
        }
        if FLAGS.contains(&word.as_str()) {
            i += 1;
        } else if VALUES.contains(&word.as_str()) {
            i += 2;
        } else if let Some(v) = word.strip_prefix("-I").or_else(|| word.strip_prefix("--replace=")) {
            replace = Some(if v.is_empty() {
                i += 1;
                command.words.get(i)?.clone()
            } else {
                v.to_string()
            });
            i += 1;
        } else if VALUES.iter().any(|v| v.len() == 2 && word.starts_with(v)) {
            i += 1;
        } else {
            return None;
        }
    }
    // What the command before printed: the files below a plain find's roots (narrowed by its
    // `-name`, see `selected`), else unknown.
    let listed: Option<Vec<String>> = before
        .filter(|b| command.fed && b.after.last().is_some_and(|op| op == "|"))
        .filter(|b| b.words.first().is_some_and(|w| w == "find") && b.expanded.is_empty() && b.redirects.is_empty())
        .filter(|b| {
            !b.words.iter().any(|w| {
                w.starts_with("-fprint")
                    || w.starts_with("-printf")
                    || w.ends_with("ls") && w.starts_with('-')
                    || w.starts_with("-exec")
                    || w.starts_with("-ok")
                    || w == "-delete"
            })
        })
        .map(|b| {
            let roots: Vec<String> = b
                .words
                .iter()
                .skip(1)
                .take_while(|w| !w.starts_with('-') && *w != "(" && *w != "!")
                .cloned()
                .collect();
            let roots_end = roots.len() + 1;
            let roots = if roots.is_empty() { vec![".".to_string()] } else { roots };
            let no_expansions = vec![false; b.words.len()];
            roots
                .iter()
                .map(|r| match selected(&b.words, &no_expansions, roots_end, r) {
                    narrowed if narrowed.contains("/**/") => narrowed,
                    _ => format!("{}/**", r.trim_end_matches('/')),
                })
                .collect()
        });
    let mut run = command.clone();
    let mut words: Vec<String> = command.words.get(..start).unwrap_or(&[]).to_vec();
    let mut expanded: Vec<usize> = command.expanded.iter().copied().filter(|&e| e < start).collect();
    let inner: Vec<String> = command.words.get(i..).unwrap_or(&[]).to_vec();
    let inner = if inner.is_empty() {
        vec!["echo".to_string()]
    } else {
        inner
    };
    let mut push = |word: String, unknown: bool, words: &mut Vec<String>| {
        if unknown {
            expanded.push(words.len());
        }
        words.push(word);
    };
    for (k, word) in inner.iter().enumerate() {
        let replaced = replace.as_ref().is_some_and(|r| word.contains(r.as_str()));
        match (&listed, replaced) {
            (Some(places), true) => {
                for place in places {
                    let r = replace.as_deref().unwrap_or_default();
                    push(word.replace(r, place), false, &mut words);
                }
            }
            (None, true) => push(word.clone(), true, &mut words),
            _ => push(word.clone(), command.expanded.contains(&(i + k)), &mut words),
        }
    }
    if replace.is_none() {
        match &listed {
            Some(places) => places.iter().for_each(|p| push(p.clone(), false, &mut words)),
            None => push("*".to_string(), true, &mut words),
        }
    }
    run.words = words;
    run.expanded = expanded;
    Some(run)
}

/// Devices a command names that are no place it reads or writes.
const NOT_PLACES: [&str; 9] = [
    "/dev/null",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/tty",
    "-",
];

/// The places a command that is not understood names (`words` from the program on): each
/// argument, and each value of `--opt=VALUE` or `key=VALUE` (`dd of=/etc/x`), read and written,
/// so a named place outside, a secret or a protected path is still seen. Expanded words and
/// URLs name none.
fn named_places(words: &[String], expanded: &[bool], cwd: &Path) -> EffectProfile {
    let mut effects = nothing();
    for (i, word) in words.iter().enumerate().skip(1) {
        if expanded.get(i) == Some(&true) || word.contains("://") {
            continue;
        }
        let value = match word.split_once('=') {
            Some((key, value))
                if key
                    .trim_start_matches('-')
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
            {
                value
            }
            _ if word.starts_with('-') => continue,
            _ => word.as_str(),
        };
        if value.is_empty() || NOT_PLACES.contains(&value) {
            continue;
        }
        let place = absolute(cwd, value);
        effects.reads.push(place.clone());
        effects.writes.push(place);
    }
    effects
}

/// Whether the assignment `word` (`NAME=VALUE`) is listed as inert: by its name, a name prefix
/// (`LC_*`), or the whole assignment (`GIT_PAGER=cat`).
fn inert(listed: &[String], word: &str) -> bool {
    let name = word.split_once('=').map_or(word, |(n, _)| n);
    listed.iter().any(|entry| match entry.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None if entry.contains('=') => entry == word,
        None => entry == name,
    })
}

/// The directory a wrapper moves to (`env -C DIR`, `--chdir=DIR`, `-CDIR`), `*` when its value
/// is not known; `None` when none moves.
fn chdir(wrappers: &[String], expanded: &[bool]) -> Option<String> {
    let mut moved: Option<String> = None;
    for (i, w) in wrappers.iter().enumerate() {
        let known = |j: usize, v: &str| {
            if expanded.get(j) == Some(&true) {
                "*".to_string()
            } else {
                v.to_string()
            }
        };
        let value = if w == "-C" || w == "--chdir" {
            Some(wrappers.get(i + 1).map_or_else(|| "*".to_string(), |v| known(i + 1, v)))
        } else if let Some(v) = w.strip_prefix("--chdir=") {
            Some(known(i, v))
        } else {
            w.strip_prefix("-C")
                .filter(|v| !v.is_empty() && !w.starts_with("--"))
                .map(|v| known(i, v))
        };
        if let Some(value) = value {
            // A second move is relative to the first; kept simple: unknown.
            moved = Some(if moved.is_some() { "*".to_string() } else { value });
        }
    }
    moved
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command_rule::Options;

    fn rule(id: &str, program: &str, writes: &[&str]) -> CommandRule {
        CommandRule {
            id: id.into(),
            prefix: vec![program.into()],
            flags: None,
            effects: EffectProfile {
                writes: writes.iter().map(|w| w.to_string()).collect(),
                ..EffectProfile::default()
            },
            unknown: false,
            runs_code: false,
            shell: false,
            options: Options {
                any: true,
                ..Options::default()
            },
            reader: None,
            max_args: None,
            min_args: None,
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
                flags: Vec::new(),
                not_with: Vec::new(),
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
        // A wrapper that changes directory runs the command there.
        let c = classifier().classify("env -C tests rm x.rs", Path::new("/w"));
        assert_eq!(c.effects.writes, ["/w/tests/x.rs"]);
        let c = classifier().classify("env -C \"$D\" rm x.rs", Path::new("/w"));
        assert_eq!(c.effects.writes, ["*"]);
    }

    fn writes(line: &str) -> Vec<String> {
        let mut w = classifier().classify(line, Path::new("/w")).effects.writes;
        w.sort();
        w.dedup();
        w
    }

    #[test]
    fn directories_are_the_few_a_command_may_run_in() {
        // Gated by `&&`: only the new directory.
        assert_eq!(writes("cd /etc && rm passwd"), ["/etc/passwd"]);
        // After `;` the cd may have failed: both.
        assert_eq!(writes("cd /etc; rm passwd"), ["/etc/passwd", "/w/passwd"]);
        assert_eq!(writes("true && cd /etc; rm x"), ["/etc/x", "/w/x"]);
        assert_eq!(writes("true || cd /etc && rm x"), ["/etc/x", "/w/x"]);
        // A subshell does not leak; a pipeline's element neither.
        assert_eq!(writes("(cd /etc && true); rm x"), ["/w/x"]);
        assert_eq!(writes("cd /etc | true; rm x"), ["/w/x"]);
        // A branch may have run; a loop that moves runs anywhere.
        assert_eq!(writes("if true; then cd /etc; fi; rm x"), ["/etc/x", "/w/x"]);
        assert_eq!(writes("for d in a; do cd /etc; rm x; done"), ["*"]);
        // Unknown targets.
        assert_eq!(writes("cd - && rm x"), ["*"]);
        assert_eq!(writes("cd \"$D\" && rm x"), ["*"]);
        assert_eq!(writes("CDPATH=/etc cd x && rm y"), ["*"]);
        assert_eq!(writes("cd && rm x"), ["~/x"]);
        assert_eq!(writes("pushd /etc && popd && rm x"), ["/w/x"]);
        // Text run as commands may have moved.
        // (`eval`'s words are kept as the places it may name.)
        assert_eq!(writes("eval cd /etc; rm x"), ["*", "/etc", "/w/cd"]);
        assert_eq!(writes("f() { cd /etc; }; f; rm x"), ["*"]);
        // The grammar's `(a && b 2>&1) | c` is bash's `a && (b 2>&1 | c)`.
        assert_eq!(writes("cd /etc && true 2>&1 | rm x"), ["/etc/x"]);
    }

    #[test]
    fn substitutions_are_parts_of_their_own() {
        let c = classifier().classify("true $(rm a) `rm b` <(rm c) > \"$(rm d)\"", Path::new("/w"));
        let texts: Vec<&str> = c.parts.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts[..4], ["rm a", "rm b", "rm c", "rm d"]);
        assert!(c.parts[..4].iter().all(|p| !p.decides_status));
        let mut w = c.effects.writes.clone();
        w.sort();
        assert_eq!(w, ["*", "/w/a", "/w/b", "/w/c", "/w/d"]);
        // A substitution's cd stays in it.
        assert_eq!(writes("true $(cd /etc) && rm x"), ["/w/x"]);
    }

    #[test]
    fn a_program_by_path_or_renamed_is_not_the_known_one() {
        for line in [
            "./rm x",
            "bin/rm x",
            "PATH=. rm x",
            "env PATH=. rm x",
            "rm() { true; }; rm x",
            "./env rm x",
        ] {
            let c = classifier().classify(line, Path::new("/w"));
            assert!(c.parts.iter().any(|p| p.rule.is_none()), "{line}");
            assert_eq!(c.effects.writes, ["*"], "{line}");
        }
        let c = classifier().classify("/bin/rm x", Path::new("/w"));
        assert_eq!(c.effects.writes, ["/w/x"]);
    }

    #[test]
    fn assignments() {
        assert!(is_assignment("RUST_LOG=debug"));
        assert!(!is_assignment("=x"));
        assert!(!is_assignment("a/b=c"));
    }
}
