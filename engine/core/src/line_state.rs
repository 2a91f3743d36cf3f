//! What the commands of a line change for the commands after them: the directory they run in
//! (tracked as the few directories it may be, since a `cd` may fail or be skipped) and whether a
//! program name still names the known program (`PATH=`, a function, an alias, `hash -p`).

use crate::shell::{Scope, ScopeKind, SimpleCommand};
use std::path::{Path, PathBuf};

/// At most this many directories a command may run in before its directory is unknown.
const MAX_DIRS: usize = 4;

/// Directories whose programs are the system's own: `/usr/bin/cat` is `cat`, `./cat` is not.
const SYSTEM_DIRS: [&str; 6] = [
    "/usr/bin",
    "/bin",
    "/usr/sbin",
    "/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
];

/// Variables that change which program or which code a command runs: the search path, the
/// dynamic loader's, and the shell's startup file.
const PROGRAM_VARIABLES: [&str; 6] = ["PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "BASH_ENV", "ENV"];

/// Builtins whose arguments assign or export variables.
const DECLARES: [&str; 7] = ["export", "declare", "typeset", "readonly", "local", "unset", "set"];

/// The unknown directory.
pub(crate) fn unknown_dir() -> PathBuf {
    PathBuf::from("*")
}

/// Which program names still name the programs the rules know.
#[derive(Debug, Clone, Default)]
pub(crate) struct Names {
    /// The search path (or the loader's, or a startup file) was changed in the line.
    changed: bool,
    /// Names redefined in the line: functions, aliases, `hash -p`.
    redefined: Vec<String>,
    /// `CDPATH` was set in the line: `cd x` may go anywhere.
    pub(crate) cdpath: bool,
}

impl Names {
    /// Names the line's functions redefine, wherever in the line they are defined.
    pub(crate) fn with_functions(mut self, functions: &[String]) -> Names {
        self.redefined.extend(functions.iter().cloned());
        self
    }

    /// Notes what `command` changes; prefix assignments (`PATH=. cat x`) count for the command
    /// itself, so call this before classifying it.
    pub(crate) fn note(&mut self, command: &SimpleCommand) {
        let words = &command.words;
        let program_at = words.iter().position(|w| !is_assignment(w)).unwrap_or(words.len());
        let program = words.get(program_at).map(String::as_str).unwrap_or("");
        let declares = DECLARES.contains(&program);
        for (i, word) in words.iter().enumerate() {
            let assigned = i < program_at || declares;
            if !assigned {
                continue;
            }
            let name = word.split(['=', '+']).next().unwrap_or("");
            if PROGRAM_VARIABLES.contains(&name) {
                self.changed = true;
            }
            if name == "CDPATH" {
                self.cdpath = true;
            }
        }
        let args = words.get(program_at + 1..).unwrap_or(&[]);
        match program {
            "alias" => {
                for arg in args {
                    if let Some((name, _)) = arg.split_once('=') {
                        self.redefined.push(name.to_string());
                    }
                }
            }
            "hash" if args.iter().any(|a| a.starts_with('-') && a.contains('p')) => {
                self.redefined.extend(args.last().cloned());
            }
            // Builtins turned off or loaded run something else under a builtin's name.
            "enable" => self.changed = true,
            _ => {}
        }
    }

    /// Whether the line redefines `name` (a function, an alias, `hash -p`).
    pub(crate) fn redefines(&self, name: &str) -> bool {
        self.redefined.iter().any(|r| r == name)
    }

    /// Why the program of a simple command is not the one its name says, given `run`, its
    /// words up to and including the program (wrappers and their assignments: `env PATH=. cat`).
    pub(crate) fn foreign_in(&self, run: &[String]) -> Option<String> {
        let assigned = run.iter().filter(|w| is_assignment(w)).find(|w| {
            let name = w.split(['=', '+']).next().unwrap_or("");
            PROGRAM_VARIABLES.contains(&name)
        });
        if let Some(assigned) = assigned {
            return Some(format!("`{assigned}` changes which program runs"));
        }
        run.iter().filter(|w| !is_assignment(w)).find_map(|w| self.foreign(w))
    }

    /// Why `word`, run as a program (or a wrapper) in the line, is not the program its name
    /// says; `None` when it is.
    pub(crate) fn foreign(&self, word: &str) -> Option<String> {
        let name = word.rsplit('/').next().unwrap_or(word);
        if word.contains('/') {
            let dir = word.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
            if !SYSTEM_DIRS.contains(&dir) {
                return Some(format!("`{word}` names a program by its path, not the known `{name}`"));
            }
        }
        if self.changed {
            return Some(format!(
                "the line changes where programs are found, so `{name}` is not the known `{name}`"
            ));
        }
        if self.redefined.iter().any(|r| r == name) {
            return Some(format!(
                "the line redefines `{name}` (a function, an alias or `hash -p`)"
            ));
        }
        None
    }
}

/// The directories the next command may run in.
#[derive(Debug, Clone)]
pub(crate) struct Dirs {
    /// Where the next command may run (one directory when known; `*` when not).
    pub(crate) now: Vec<PathBuf>,
    /// Where commands run once the and-or list a `cd` gated ends (the `cd` may have failed or
    /// been skipped): the list's id and the directories.
    fallback: Option<(usize, Vec<PathBuf>, usize)>,
    /// The regions open, each with the directories at its entry.
    open: Vec<(Scope, Vec<PathBuf>)>,
    /// `cd -`'s directory, when a `cd` in the line made it known.
    previous: Option<Vec<PathBuf>>,
    /// `pushd`'s stack.
    stack: Vec<Vec<PathBuf>>,
}

impl Dirs {
    /// A line starting in `cwd`.
    pub(crate) fn new(cwd: &[PathBuf]) -> Dirs {
        Dirs {
            now: cwd.to_vec(),
            fallback: None,
            open: Vec::new(),
            previous: None,
            stack: Vec::new(),
        }
    }

    /// Moves to where `commands[at]` runs: regions it left are closed (a subshell's changes
    /// undone, a branch's or a loop's joined with the entry's), regions it enters opened (a
    /// loop that changes directory anywhere runs in an unknown one), and a `cd`'s and-or list
    /// that ended falls back.
    pub(crate) fn enter(&mut self, commands: &[SimpleCommand], at: usize, changes: impl Fn(&SimpleCommand) -> bool) {
        let Some(command) = commands.get(at) else { return };
        while let Some((scope, entry)) = self.open.last().cloned() {
            if command.scopes.contains(&scope) {
                break;
            }
            self.open.pop();
            // A fallback from inside the closed region goes with it.
            if self
                .fallback
                .as_ref()
                .is_some_and(|(_, _, depth)| *depth > self.open.len())
            {
                self.fallback = None;
            }
            self.now = match scope.kind {
                ScopeKind::Subshell => entry,
                ScopeKind::Branch | ScopeKind::Loop => union(&entry, &self.now),
            };
        }
        if let Some((chain, dirs, depth)) = self.fallback.take() {
            if command.chain == chain && command.gated {
                self.fallback = Some((chain, dirs, depth));
            } else {
                self.now = dirs;
            }
        }
        for scope in command.scopes.iter().skip(self.open.len()) {
            self.open.push((*scope, self.now.clone()));
            // INVARIANT (fail closed): a body that changes directory and may run again runs
            // its second time somewhere else.
            let loops_and_moves = scope.kind == ScopeKind::Loop
                && commands.iter().skip(at).any(|c| c.scopes.contains(scope) && changes(c));
            if loops_and_moves {
                self.now = vec![unknown_dir()];
            }
        }
    }

    /// A `cd`, `pushd` or `popd` with `words` (from the program on), run by `command`, `cdpath`
    /// when CDPATH is set.
    pub(crate) fn change(&mut self, command: &SimpleCommand, words: &[String], expanded: &[bool], cdpath: bool) {
        let program = words.first().map(String::as_str).unwrap_or("");
        let args: Vec<(usize, &String)> = words
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, w)| !matches!(w.as_str(), "-L" | "-P" | "-e" | "-@" | "--"))
            .collect();
        let old = self.now.clone();
        let target = |i: usize, dir: &str| -> Vec<PathBuf> {
            // INVARIANT (fail closed): a target the text does not fix, or one CDPATH may send
            // elsewhere, is an unknown directory.
            // CDPATH is not searched for `/…`, `~…`, or a first component `.` or `..` (`.ssh` is
            // searched).
            let first = dir.split('/').next().unwrap_or("");
            let relative_to_cdpath = !(dir.starts_with('/') || matches!(first, "." | "..") || dir.starts_with('~'));
            if expanded.get(i) == Some(&true) || (cdpath && relative_to_cdpath) {
                return vec![unknown_dir()];
            }
            old.iter().map(|c| PathBuf::from(absolute(c, dir))).collect()
        };
        let new = match (program, args.as_slice()) {
            ("cd", []) => vec![PathBuf::from("~")],
            ("cd", [(_, dash)]) if dash.as_str() == "-" => self.previous.clone().unwrap_or_else(|| vec![unknown_dir()]),
            ("cd" | "pushd", [(i, dir)]) if !dir.starts_with(['+', '-']) => {
                if program == "pushd" {
                    self.stack.push(old.clone());
                }
                target(*i, dir)
            }
            ("popd", []) => self.stack.pop().unwrap_or_else(|| vec![unknown_dir()]),
            _ => vec![unknown_dir()],
        };
        self.previous = Some(old.clone());
        if command.gated {
            // What follows in its and-or list runs only if it ran and succeeded.
            let base = self.fallback.take().map(|(_, d, _)| d).unwrap_or_else(|| old.clone());
            self.fallback = Some((command.chain, union(&base, &new), self.open.len()));
            self.now = bounded(new);
        } else {
            self.now = union(&old, &new);
        }
    }

    /// After a command that may have changed directory in ways the text does not show (`eval`,
    /// `source`, a function the line defines): an unknown directory.
    pub(crate) fn lose(&mut self) {
        self.now = vec![unknown_dir()];
        self.fallback = None;
    }

    /// The one directory the next command runs in, or `*`.
    pub(crate) fn one(&self) -> PathBuf {
        match self.now.as_slice() {
            [one] => one.clone(),
            _ => unknown_dir(),
        }
    }
}

fn bounded(dirs: Vec<PathBuf>) -> Vec<PathBuf> {
    if dirs.len() > MAX_DIRS || dirs.iter().any(|d| d.as_os_str() == "*") {
        vec![unknown_dir()]
    } else {
        dirs
    }
}

fn union(a: &[PathBuf], b: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = a.to_vec();
    for d in b {
        if !out.contains(d) {
            out.push(d.clone());
        }
    }
    bounded(out)
}

/// `word` made absolute against `cwd` (`*` stays unknown; `~…` stays for the scopes).
pub(crate) fn absolute(cwd: &Path, word: &str) -> String {
    if word.starts_with('/') || word.starts_with('~') || word == "*" {
        word.to_string()
    } else if cwd.as_os_str() == "*" {
        "*".to_string()
    } else {
        cwd.join(word).to_string_lossy().into_owned()
    }
}

/// `NAME=value` or `NAME+=value`.
pub(crate) fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            let name = name.strip_suffix('+').unwrap_or(name);
            !name.is_empty()
                && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::parse;

    #[test]
    fn program_names() {
        let names = Names::default();
        assert!(names.foreign("cat").is_none());
        assert!(names.foreign("/usr/bin/cat").is_none());
        assert!(names.foreign("./cat").is_some());
        assert!(names.foreign("/tmp/x/cat").is_some());
        let mut names = Names::default();
        names.note(&parse("PATH=.:$PATH cat x").commands[0]);
        assert!(names.foreign("cat").is_some());
        let mut names = Names::default();
        names.note(&parse("export PATH+=:/tmp").commands[0]);
        assert!(names.foreign("ls").is_some());
        let mut names = Names::default();
        names.note(&parse("hash -p /tmp/x cat").commands[0]);
        assert!(names.foreign("cat").is_some() && names.foreign("ls").is_none());
        let mut names = Names::default();
        names.note(&parse("alias ls='rm -rf /'").commands[0]);
        assert!(names.foreign("ls").is_some());
        let names = Names::default().with_functions(&["git".into()]);
        assert!(names.foreign("git").is_some());
        let mut names = Names::default();
        names.note(&parse("CDPATH=/root cd .ssh").commands[0]);
        assert!(names.cdpath);
    }
}

/// Links a line makes (`ln -s TARGET NAME`, `ln TARGET NAME`): a later command that reads or
/// writes the name touches the target, so each place below a name is also the place below its
/// target.
#[derive(Debug, Clone, Default)]
pub(crate) struct Links {
    /// Each link's name and what it may point at, absolute.
    made: Vec<(String, String)>,
}

impl Links {
    /// Notes the links `words` (an `ln` command's arguments after `ln`, none expanded) make in
    /// `cwd`. A symbolic link's relative target is relative to the link's directory, a hard
    /// link's to `cwd`.
    pub(crate) fn note(&mut self, words: &[String], cwd: &Path) {
        let symbolic = words
            .iter()
            .any(|w| w == "--symbolic" || (w.starts_with('-') && !w.starts_with("--") && w.contains('s')));
        let args: Vec<&String> = words.iter().filter(|w| !w.starts_with('-')).collect();
        let (name, targets) = match args.split_last() {
            Some((last, rest)) if !rest.is_empty() => (absolute(cwd, last), rest.to_vec()),
            // `ln -s TARGET`: the link is the target's name, here.
            Some((only, _)) => (absolute(cwd, only.rsplit('/').next().unwrap_or(only)), vec![*only]),
            None => return,
        };
        for target in targets {
            let base = target.rsplit('/').next().unwrap_or(target);
            // `ln -s T DIR` makes `DIR/T`: the name may be either.
            for name in [name.clone(), format!("{}/{base}", name.trim_end_matches('/'))] {
                let parent = Path::new(&name).parent().map(Path::to_path_buf).unwrap_or_default();
                let from = if symbolic { parent.as_path() } else { cwd };
                self.made.push((name, absolute(from, target)));
            }
        }
    }

    /// `places` with, for each one at or below a link's name, the same place below its target.
    pub(crate) fn follow(&self, places: &mut Vec<String>) {
        if self.made.is_empty() {
            return;
        }
        let mut more = Vec::new();
        for place in places.iter() {
            for (name, target) in &self.made {
                if let Some(rest) = place.strip_prefix(name.as_str()) {
                    if rest.is_empty() || rest.starts_with('/') {
                        more.push(format!("{target}{rest}"));
                    }
                }
            }
        }
        for m in more {
            if !places.contains(&m) {
                places.push(m);
            }
        }
    }
}
