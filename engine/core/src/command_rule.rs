//! Command rules: a prefix of words mapped to effects, how a rule is selected for a command, and
//! how a command's arguments are read (the options the rule understands, the scripts its reader
//! reads) and fill the rule's placeholders. A rule that claims to understand a command lists every
//! option it understands; any other option, or a script its reader does not understand, makes the
//! command not understood.

mod awk;
mod find;
mod options;
mod sed;

use crate::effects::EffectProfile;
use crate::format::CommandRuleFile;
pub(crate) use crate::format::ScriptReader;
pub(crate) use options::{Options, Takes};
use std::sync::Arc;

/// The profile of a command the classifier does not understand: it may read and write anything
/// and cannot be undone, and nothing proves it contained. It is not taken to reach the network:
/// an unknown write already asks in `workspace-write` (a person decides) and is allowed there
/// only inside a proven sandbox, whose environment cuts the network; what is known to reach
/// (`curl`, `git push`, `pip install`) says so in its rule.
pub(crate) fn not_understood() -> EffectProfile {
    EffectProfile {
        reaches: false,
        ..EffectProfile::unknown()
    }
}

/// A compiled command rule.
#[derive(Debug, Clone)]
pub(crate) struct CommandRule {
    /// `POLICY/ID`.
    pub(crate) id: String,
    /// Each word's alternatives, as written (`build|b|test`): split when matched, not when
    /// compiled, since a step compiles every rule of its program and matches few words.
    pub(crate) prefix: Vec<String>,
    /// Flag patterns, when the rule needs one.
    pub(crate) flags: Option<Vec<String>>,
    /// What a command it classifies does; scopes hold placeholders.
    pub(crate) effects: EffectProfile,
    /// Not understood: the conservative profile.
    pub(crate) unknown: bool,
    /// It runs the project's code (also `unknown`): what it names is not taken as places.
    pub(crate) runs_code: bool,
    /// Classify the word after the matched flag as a command line.
    pub(crate) shell: bool,
    /// The options it understands.
    pub(crate) options: Options,
    /// The script language its arguments hold, read by one of the core's readers.
    pub(crate) reader: Option<ScriptReader>,
    /// At most this many arguments that are not options.
    pub(crate) max_args: Option<usize>,
    /// Selected only with at least this many words after the prefix that are not options.
    pub(crate) min_args: Option<usize>,
}

/// A wrapper program to strip.
#[derive(Debug, Clone)]
pub(crate) struct Wrapper {
    /// Options that take a value.
    pub(crate) flags_with_value: Vec<String>,
    /// Positional arguments before the command.
    pub(crate) positional: usize,
    /// Options that take no value; any option in neither list ends the stripping.
    pub(crate) flags: Vec<String>,
    /// Options with which it is a command of its own, not a wrapper.
    pub(crate) not_with: Vec<String>,
}

impl Wrapper {
    /// Whether the wrapper understands option `word` (so stripping goes on past it).
    pub(crate) fn knows(&self, word: &str) -> bool {
        self.flags.iter().chain(&self.flags_with_value).any(|f| f == word)
    }
}

impl CommandRule {
    /// A command rule of the policy `policy` as the classifier holds it, or why it is left out (a
    /// message, and a hint).
    pub(crate) fn from_file(policy: &str, r: &CommandRuleFile) -> Result<CommandRule, (String, Option<&'static str>)> {
        if r.prefix.is_empty() || r.prefix.iter().any(|p| p.is_empty()) {
            return Err((format!("command rule `{}` needs a non-empty `prefix`", r.id), None));
        }
        if r.shell && r.flags.is_none() {
            return Err((
                format!("command rule `{}` is a shell but names no flag", r.id),
                Some("`shell = true` classifies the word after the matched flag, e.g. flags = [\"-c\", \"-*c\"]"),
            ));
        }
        let options = r.options.clone().unwrap_or_default();
        // INVARIANT (fail closed): "every option understood" only where the rule's own
        // effects already hold whatever an option could do.
        let holds_any = r.unknown
            || r.runs_code
            || r.effects
                .writes
                .as_ref()
                .is_some_and(|w| w.iter().any(|w| w == "." || w == "*"));
        if options.any && !holds_any {
            return Err((
                format!(
                    "command rule `{}` understands any option but its effects do not hold them",
                    r.id
                ),
                Some("list the options it understands; `any = true` is only for a rule that writes `.` or `*`"),
            ));
        }
        let listed = [
            (&options.flags, Takes::Nothing),
            (&options.values, Takes::Value),
            (&options.attached, Takes::Attached),
            (&options.reads, Takes::Read),
            (&options.writes, Takes::Write),
            (&options.scripts, Takes::Script),
        ]
        .into_iter()
        .flat_map(|(names, takes)| names.iter().map(move |n| (n.clone(), takes)))
        .collect();
        Ok(CommandRule {
            id: format!("{policy}/{}", r.id),
            prefix: r.prefix.clone(),
            flags: r.flags.clone(),
            effects: EffectProfile::from(r.effects.clone()),
            unknown: r.unknown || r.runs_code,
            runs_code: r.runs_code,
            shell: r.shell,
            options: Options {
                listed,
                numeric: options.numeric,
                complete: options.complete,
                any: options.any,
                plus_runs: options.plus_runs,
            },
            reader: r.reader,
            max_args: r.max_args,
            min_args: r.min_args,
        })
    }
}

/// The rule for a command among `candidates` (the rules of its program): the longest matching prefix; with equal prefixes, one whose flag
/// is present wins over one without flags; later rules win remaining ties.
pub(crate) fn select<'r>(
    candidates: impl IntoIterator<Item = &'r Arc<CommandRule>>,
    words: &[String],
) -> Option<&'r CommandRule> {
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
            .all(|(alts, word)| alts.split('|').any(|a| a == word));
        if !prefix_ok {
            continue;
        }
        let rest = words.get(rule.prefix.len()..).unwrap_or(&[]);
        if rule
            .min_args
            .is_some_and(|min| rest.iter().filter(|w| !w.starts_with('-')).count() < min)
        {
            continue;
        }
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

/// A command's arguments after the rule's prefix, read as its rule understands them.
pub(crate) struct Args {
    words: Vec<String>,
    expanded: Vec<bool>,
    /// The indices of the arguments that are not options, their values or a script.
    positional: Vec<usize>,
    /// Paths the understood options read (`None`: not known).
    pub(crate) option_reads: Vec<Option<String>>,
    /// Paths the understood options write.
    pub(crate) option_writes: Vec<Option<String>>,
}

impl Args {
    /// The arguments as words: every word that does not start with `-` is an argument (for a
    /// rule that reads its arguments no further, such as a shell's).
    pub(crate) fn new(words: &[String], expanded: &[bool]) -> Args {
        let (words, expanded) = home_spelled(words, expanded);
        let mut positional = Vec::new();
        let mut ended = false;
        for (i, w) in words.iter().enumerate() {
            if !ended && w == "--" {
                ended = true;
            } else if ended || !w.starts_with('-') || w == "-" {
                positional.push(i);
            }
        }
        Args {
            words,
            expanded,
            positional,
            option_reads: Vec::new(),
            option_writes: Vec::new(),
        }
    }

    /// The arguments as `rule` understands them, or why it does not: an option it does not
    /// list, too many arguments, or a script its reader does not understand.
    pub(crate) fn read(rule: &CommandRule, words: &[String], expanded: &[bool]) -> Result<Args, String> {
        let (words, expanded) = home_spelled(words, expanded);
        if rule.reader == Some(ScriptReader::Find) {
            let positional = find::read(&words, &expanded)?;
            return Ok(Args {
                words,
                expanded,
                positional,
                option_reads: Vec::new(),
                option_writes: Vec::new(),
            });
        }
        let found = rule.options.read(&words, &expanded)?;
        let mut positional = found.positional;
        let mut scripts = found.scripts;
        if let Some(reader) = rule.reader {
            // Without a script option, the first argument is the script (`sed -n 1p f`).
            if scripts.is_empty() && !positional.is_empty() {
                let at = positional.remove(0);
                let known = expanded.get(at) != Some(&true);
                scripts.push(words.get(at).filter(|_| known).cloned());
            }
            for script in &scripts {
                // INVARIANT (fail closed): a script not known when read is not understood.
                let script = script.as_deref().ok_or("the script is expanded when run")?;
                match reader {
                    ScriptReader::Sed => sed::understood(script)?,
                    ScriptReader::Awk => awk::understood(script)?,
                    ScriptReader::Find => {}
                }
            }
        } else if !scripts.is_empty() {
            return Err("an option holds a script, and this rule names no reader for it".into());
        }
        if let Some(max) = rule.max_args {
            if positional.len() > max {
                return Err(format!("more than {max} argument(s)"));
            }
        }
        Ok(Args {
            words,
            expanded,
            positional,
            option_reads: found.reads,
            option_writes: found.writes,
        })
    }

    /// Arguments that are not options; `None` for one whose place is not known (it holds an
    /// expansion, or a glob that may match a dot name).
    fn positional(&self) -> Vec<Option<String>> {
        self.positional
            .iter()
            .map(|&i| match self.expanded.get(i) {
                Some(true) => None,
                _ => self.words.get(i).filter(|w| !may_glob_a_dot_name(w)).cloned(),
            })
            .collect()
    }

    /// For each argument that is not an option, the word as written where it is a glob that may
    /// name a dot name (its place is then also `None` in [`Args::positional`]).
    fn positional_globs(&self) -> Vec<Option<String>> {
        self.positional
            .iter()
            .map(|&i| match self.expanded.get(i) {
                Some(true) => None,
                _ => self.words.get(i).filter(|w| may_glob_a_dot_name(w)).cloned(),
            })
            .collect()
    }

    pub(crate) fn placeholder(&self, scope: &str) -> Option<Vec<Option<String>>> {
        let inner = scope.strip_prefix('{')?.strip_suffix('}')?;
        // Each argument with the glob it is written as, where it may name a dot name.
        let positional: Vec<(Option<String>, Option<String>)> =
            self.positional().into_iter().zip(self.positional_globs()).collect();
        // A glob that may name a dot name is both a place nobody knows (`*`) and the glob as
        // written, which the path sets read for what it may name (`glob_place`).
        let places = |chosen: Vec<(Option<String>, Option<String>)>| -> Vec<Option<String>> {
            chosen
                .into_iter()
                .flat_map(|(word, glob)| std::iter::once(word).chain(glob.map(Some)))
                .collect()
        };
        Some(match inner {
            "args" => places(positional),
            "first" => places(positional.into_iter().take(1).collect()),
            "last" => places(positional.into_iter().last().into_iter().collect()),
            "rev_paths" => self.rev_paths(),
            "but_last" => {
                let mut all = positional;
                all.pop();
                places(all)
            }
            _ => match inner.strip_prefix("opt:") {
                Some(name) => self.option(name),
                None => vec![None],
            },
        })
    }

    /// The paths named in `REV:PATH` arguments (`HEAD:.env`, `:.env`, `:0:.env`), relative to the
    /// working directory; a URL or `:/MESSAGE` (a commit by its message) names none.
    fn rev_paths(&self) -> Vec<Option<String>> {
        let mut paths = Vec::new();
        for (i, word) in self.words.iter().enumerate() {
            if word.starts_with('-') || word.contains("://") {
                continue;
            }
            let Some((_, path)) = word.split_once(':') else {
                continue;
            };
            let path = match path.split_once(':') {
                Some((stage, rest)) if matches!(stage, "0" | "1" | "2" | "3") && word.starts_with(':') => rest,
                _ => path,
            };
            if path.is_empty() || path.starts_with('/') {
                continue;
            }
            let known = self.expanded.get(i) != Some(&true);
            paths.push(known.then(|| path.trim_start_matches("./").to_string()));
        }
        paths
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

/// Whether `word`, as a path, has a component that starts with `.` and holds a glob character:
/// the shell expands it to names it cannot be told from (`.e*` may be `.env`, `.s*` may be
/// `.sixfold`), so its place is not known. A component starting with anything else cannot match
/// a name starting with `.` (bash's `dotglob` is off unless a command turns it on, which is not
/// understood), and every secret or protected name a glob could hide that way starts with `.`.
pub(crate) fn may_glob_a_dot_name(word: &str) -> bool {
    word.split('/')
        .any(|part| part.starts_with('.') && part.contains(['*', '?', '[']))
}

/// The words with `$HOME/…` and `${HOME}/…` spelled `~/…` (no longer an expansion), so a path
/// under the home is seen as the place it is: `cat $HOME/.ssh/id_rsa` reads a secret.
fn home_spelled(words: &[String], expanded: &[bool]) -> (Vec<String>, Vec<bool>) {
    let mut words = words.to_vec();
    let mut expanded = expanded.to_vec();
    for (i, word) in words.iter_mut().enumerate() {
        let rest = word.strip_prefix("$HOME").or_else(|| word.strip_prefix("${HOME}"));
        if let Some(rest) = rest.filter(|r| (r.is_empty() || r.starts_with('/')) && !r.contains('$')) {
            *word = format!("~{rest}");
            if let Some(e) = expanded.get_mut(i) {
                *e = false;
            }
        }
    }
    (words, expanded)
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

    fn words(line: &str) -> (Vec<String>, Vec<bool>) {
        let words: Vec<String> = line.split(' ').map(String::from).collect();
        let expanded = words.iter().map(|w| w.contains('$')).collect();
        (words, expanded)
    }

    fn rule(reader: Option<ScriptReader>, max_args: Option<usize>, options: Options) -> CommandRule {
        CommandRule {
            id: "r".into(),
            prefix: vec!["p".into()],
            flags: None,
            effects: EffectProfile::default(),
            unknown: false,
            runs_code: false,
            shell: false,
            options,
            reader,
            max_args,
            min_args: None,
        }
    }

    fn read(rule: &CommandRule, line: &str) -> Result<Args, String> {
        let (w, e) = words(line);
        Args::read(rule, &w, &e)
    }

    #[test]
    fn a_reader_reads_the_first_argument_or_the_script_options() {
        let sed = rule(
            Some(ScriptReader::Sed),
            None,
            Options {
                listed: vec![("-n".into(), Takes::Nothing), ("-e".into(), Takes::Script)],
                ..Options::default()
            },
        );
        let args = read(&sed, "-n 1,10p f").unwrap();
        assert_eq!(args.positional(), [Some("f".to_string())], "the script is not a file");
        assert!(read(&sed, "-n 1w/etc/x f").is_err());
        assert_eq!(
            read(&sed, "-e p -e s/a/b/ f").unwrap().positional(),
            [Some("f".to_string())]
        );
        assert!(read(&sed, "-e p -e 1e/bin/id f").is_err());
        assert!(
            read(&sed, "-f x.sed f").is_err(),
            "a script file is an option it does not list"
        );
    }

    #[test]
    fn more_arguments_than_allowed_are_not_understood() {
        let config = rule(None, Some(1), Options::default());
        assert!(read(&config, "user.name").is_ok());
        assert!(read(&config, "core.hooksPath /tmp/h").is_err());
    }

    #[test]
    fn a_glob_that_may_match_a_dot_name_is_not_a_known_place() {
        for word in [
            ".e*",
            "config/.env.?",
            "~/.aw?/credentials",
            ".[a-z]*",
            ".*/hooks",
            "./.s*",
        ] {
            assert!(may_glob_a_dot_name(word), "{word}");
        }
        for word in ["*.rs", "src/*.rs", "build/*", "./*", ".env", "~/.aws/credentials", "?x"] {
            assert!(!may_glob_a_dot_name(word), "{word}");
        }
    }

    #[test]
    fn the_home_spelled_as_a_variable_is_the_home() {
        let (w, e) = words("$HOME/.ssh/id_rsa ${HOME}/x $HOMEX/y");
        let (w, e) = home_spelled(&w, &e);
        assert_eq!(w, ["~/.ssh/id_rsa", "~/x", "$HOMEX/y"]);
        assert_eq!(e, [false, false, true]);
    }
}
