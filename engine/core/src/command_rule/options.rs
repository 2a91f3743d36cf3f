//! A command's options read against the allow-list its rule gives: which options it
//! understands, which take a value, and whether that value is a path read, a path written or a
//! script. An option the list does not name makes the command not understood.

/// What an option's value is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Takes {
    /// No value (`-n`, `--quiet`).
    Nothing,
    /// A value that is neither a path nor code (`-k 2`, `--format=%H`).
    Value,
    /// A value only when attached (`-i.bak`, `--in-place=.bak`, `--color=auto`), never the
    /// next word.
    Attached,
    /// A path the command reads.
    Read,
    /// A path the command writes.
    Write,
    /// A script in the language the rule's reader reads (`sed -e`).
    Script,
}

/// The options a rule understands.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    /// Each option as written (`-o`, `--output`, `-name`), with what its value is.
    pub(crate) listed: Vec<(String, Takes)>,
    /// `-NUM` (`head -5`) is understood.
    pub(crate) numeric: bool,
    /// The list is every option the program has, none of them dangerous: an expansion can only
    /// turn into one of them.
    pub(crate) complete: bool,
    /// Every option is understood: for a rule whose effects already hold whatever an option
    /// could do (it writes the whole workspace, or it is not understood anyway).
    pub(crate) any: bool,
    /// A word starting with `+` runs a command of the program's (`less +!id`).
    pub(crate) plus_runs: bool,
}

/// What reading the options found.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Found {
    /// The indices of the words that are not options or their values.
    pub(crate) positional: Vec<usize>,
    /// Values of options that read a path (`None`: not known, it holds an expansion).
    pub(crate) reads: Vec<Option<String>>,
    /// Values of options that write a path.
    pub(crate) writes: Vec<Option<String>>,
    /// Values of options that hold a script.
    pub(crate) scripts: Vec<Option<String>>,
}

impl Options {
    fn takes(&self, name: &str) -> Option<Takes> {
        self.listed.iter().find(|(n, _)| n == name).map(|(_, t)| *t)
    }

    /// Reads `words` (the arguments after a rule's prefix; `expanded[i]` when word `i` holds an
    /// expansion). Long options take their value attached (`--output=f`) or as the next word;
    /// short ones may be combined (`-nr`) and take their value attached (`-o/etc/x`, `-Ic'…'`)
    /// or as the next word; `--` ends the options.
    pub(crate) fn read(&self, words: &[String], expanded: &[bool]) -> Result<Found, String> {
        let mut found = Found::default();
        // INVARIANT (fail closed): a word that holds an expansion may turn into options when it
        // runs (`sort $X f` with `X=-o/etc/x`; unquoted, `a$X` or `--key=$X` split into several
        // words): before `--`, unless every option the program has is listed and harmless, the
        // command is not understood.
        if !self.any && !self.complete {
            let options_end = words.iter().position(|w| w == "--").unwrap_or(words.len());
            if let Some(at) = (0..options_end).find(|&i| expanded.get(i) == Some(&true)) {
                let word = words.get(at).map(String::as_str).unwrap_or("");
                return Err(format!("`{word}` is expanded when run and may turn into options"));
            }
        }
        let known = |i: usize, value: &str| {
            (expanded.get(i) != Some(&true) && !super::may_glob_a_dot_name(value)).then(|| value.to_string())
        };
        let mut i = 0;
        let mut ended = false;
        while let Some(word) = words.get(i) {
            let at = i;
            i += 1;
            // INVARIANT (fail closed): `less '+!id' f` runs `id`.
            if self.plus_runs && !ended && word.starts_with('+') {
                return Err(format!("`{word}` is a command the program runs"));
            }
            if ended || word == "-" || !word.starts_with('-') {
                found.positional.push(at);
                continue;
            }
            if word == "--" {
                ended = true;
                continue;
            }
            if self.any {
                continue;
            }
            // A whole word listed as it is (`--quiet`, `-name`, `-print0`).
            let (name, attached) = match word.split_once('=').filter(|_| word.starts_with("--")) {
                Some((name, value)) => (name, Some(value)),
                None => (word.as_str(), None),
            };
            if let Some(takes) = self.takes(name) {
                let value = match (takes, attached) {
                    // A value given to an option that takes none is the program's error to report.
                    (Takes::Nothing | Takes::Attached, _) => continue,
                    (_, Some(v)) => known(at, v),
                    (_, None) => {
                        let v = words.get(i).ok_or_else(|| format!("`{name}` has no value"))?;
                        i += 1;
                        known(at + 1, v)
                    }
                };
                self.keep(&mut found, takes, value);
                continue;
            }
            if word.starts_with("--") {
                return Err(format!("`{name}` is not an option this rule understands"));
            }
            if self.numeric && word.len() > 1 && word.chars().skip(1).all(|c| c.is_ascii_digit()) {
                continue;
            }
            // Combined short options: each a flag, until one that takes a value takes the rest.
            for (offset, c) in word.char_indices().skip(1) {
                let flag = format!("-{c}");
                match self.takes(&flag) {
                    Some(Takes::Nothing) => continue,
                    Some(Takes::Attached) => break,
                    Some(takes) => {
                        let rest = word.get(offset + c.len_utf8()..).unwrap_or("");
                        let value = if rest.is_empty() {
                            let v = words.get(i).ok_or_else(|| format!("`{flag}` has no value"))?;
                            i += 1;
                            known(at + 1, v)
                        } else {
                            known(at, rest)
                        };
                        self.keep(&mut found, takes, value);
                        break;
                    }
                    None => return Err(format!("`{flag}` (in `{word}`) is not an option this rule understands")),
                }
            }
        }
        Ok(found)
    }

    fn keep(&self, found: &mut Found, takes: Takes, value: Option<String>) {
        match takes {
            Takes::Nothing | Takes::Value | Takes::Attached => {}
            Takes::Read => found.reads.push(value),
            Takes::Write => found.writes.push(value),
            Takes::Script => found.scripts.push(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sort() -> Options {
        Options {
            listed: vec![
                ("-n".into(), Takes::Nothing),
                ("-r".into(), Takes::Nothing),
                ("-k".into(), Takes::Value),
                ("-o".into(), Takes::Write),
                ("--output".into(), Takes::Write),
                ("-T".into(), Takes::Read),
            ],
            numeric: false,
            complete: false,
            any: false,
            plus_runs: false,
        }
    }

    fn read(options: &Options, line: &str) -> Result<Found, String> {
        let words: Vec<String> = line.split(' ').map(String::from).collect();
        let expanded: Vec<bool> = words.iter().map(|w| w.contains('$')).collect();
        options.read(&words, &expanded)
    }

    #[test]
    fn values_attached_or_next_and_combined_flags() {
        let o = sort();
        let f = read(&o, "-o /etc/x f").unwrap();
        assert_eq!((f.writes, f.positional), (vec![Some("/etc/x".into())], vec![2]));
        assert_eq!(read(&o, "-o/etc/x f").unwrap().writes, [Some("/etc/x".into())]);
        assert_eq!(read(&o, "-nro/etc/x f").unwrap().writes, [Some("/etc/x".into())]);
        assert_eq!(read(&o, "--output=/etc/x f").unwrap().writes, [Some("/etc/x".into())]);
        assert_eq!(read(&o, "-k 2 -n f").unwrap().positional, [3]);
        assert_eq!(read(&o, "-- -o f").unwrap().positional, [1, 2]);
        assert!(
            read(&o, "-o $OUT f").is_err(),
            "an expanded value may split into options"
        );
        assert!(
            read(&o, "-k2 a$X").is_err(),
            "so may a word that only holds an expansion"
        );
    }

    #[test]
    fn what_is_not_listed_is_not_understood() {
        let o = sort();
        assert!(
            read(&o, "--outp=/etc/x f").is_err(),
            "an abbreviation is not the option"
        );
        assert!(read(&o, "--compress-program=sh f").is_err());
        assert!(read(&o, "-nz f").is_err());
        assert!(read(&o, "-n=1 f").is_err());
        let sed = Options {
            listed: vec![("-i".into(), Takes::Attached), ("-n".into(), Takes::Nothing)],
            ..Options::default()
        };
        assert_eq!(read(&sed, "-i.bak s/a/b/ f").unwrap().positional, [1, 2]);
        assert_eq!(read(&sed, "-ni s/a/b/ f").unwrap().positional, [1, 2]);
        assert!(read(&o, "--n f").is_err());
        assert!(read(&o, "-o").is_err(), "a value that is missing");
        assert!(read(&o, "$OPT f").is_err(), "an expansion may be an option");
        let complete = Options {
            complete: true,
            ..sort()
        };
        assert!(
            read(&complete, "$OPT f").is_ok(),
            "unless every option the program has is listed"
        );
        assert!(read(&o, "-- $OPT").is_ok());
        assert!(read(&o, "-5 f").is_err());
        let numeric = Options {
            numeric: true,
            ..sort()
        };
        assert!(read(&numeric, "-5 f").is_ok());
        let any = Options {
            any: true,
            ..Options::default()
        };
        assert_eq!(read(&any, "--whatever -x f").unwrap().positional, [2]);
    }
}
